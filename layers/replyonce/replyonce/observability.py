"""The one Logger, Metrics and Tracer of each function.

Why module-level singletons: Powertools expects one instance per function so
the handler decorators (``inject_lambda_context``, ``log_metrics``,
``capture_lambda_handler``) and the domain code share state (correlation id,
metric buffer). The service name and namespace come from the template through
``POWERTOOLS_SERVICE_NAME`` and ``POWERTOOLS_METRICS_NAMESPACE``.
"""

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric

logger = Logger()
metrics = Metrics()
tracer = Tracer()


def count(name: str, value: float = 1) -> None:
    """Add ``value`` to the count metric ``name`` in this invocation's buffer."""
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def count_by(name: str, dimension: str, value: str) -> None:
    """Emit one count metric with its own dimension (e.g. ``reason``).

    Why a separate metric: the shared buffer has one set of dimensions per
    invocation, while a reason differs per notification.
    """
    with single_metric(
        name=name,
        unit=MetricUnit.Count,
        value=1,
        namespace=metrics.namespace,
        default_dimensions=metrics.default_dimensions,
    ) as metric:
        metric.add_dimension(name=dimension, value=value)
