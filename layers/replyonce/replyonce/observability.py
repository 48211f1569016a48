"""The one Logger and Metrics of each function.

Why module-level singletons: Powertools expects one instance per function so
the handler decorators (``inject_lambda_context``, ``log_metrics``) and the
domain code share state (correlation id, metric buffer). The service name and
namespace come from the template through ``POWERTOOLS_SERVICE_NAME`` and
``POWERTOOLS_METRICS_NAMESPACE``.

Why no Tracer: Powertools' ``Tracer`` is built on the X-Ray SDK for Python,
whose support ends on 2027-02-25. Both functions are traced by the Lambda
service instead (``Tracing: Active`` in ``template.yaml``): Lambda records each
invocation's segment and sets ``_X_AMZN_TRACE_ID``, which botocore forwards to
SQS, so the replier's segment joins the webhook's trace. What that gives up is
a subsegment per call inside a function (each Nylas, DynamoDB and SQS call's
own timing); a failed call still reaches the log as the record's deferral, with
its reason and the call's detail, and ``docs/operations.md`` ("Tracing") says
where to look for a slow one.
"""

import contextlib
from collections.abc import Iterator
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

from replyonce.reasons import SkipReason

logger = Logger()
metrics = Metrics()
# Every skip is counted here, with its reason as the dimension (invariant 5).
SKIP_METRIC = "NotificationSkipped"


@contextlib.contextmanager
def _one_writer() -> Iterator[None]:
    """Hold the Logger's handler lock while Powertools Metrics prints an EMF line.

    Why: the threads of one batch write to the same stdout. The Logger writes
    each line under its handler's lock; ``print`` writes a line and its newline
    in two calls, so another thread's log line could land between them — one
    CloudWatch event holding two JSON objects, the log line and the metrics
    both lost. Holding the same lock makes every line one whole write. The
    metric buffer is shared too, and Powertools flushes it from ``add_metric``
    when it holds 100 metrics.
    """
    handler = logger.registered_handler
    handler.acquire()
    try:
        yield
    finally:
        handler.release()


def count(name: str, value: float = 1) -> None:
    """Add ``value`` to the count metric ``name`` in this invocation's buffer."""
    with _one_writer():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def count_by(name: str, dimension: str, value: str) -> None:
    """Emit one count metric with its own dimension (e.g. ``reason``).

    Why a separate metric: the shared buffer has one set of dimensions per
    invocation, while a reason differs per notification.
    """
    with (
        _one_writer(),
        single_metric(
            name=name,
            unit=MetricUnit.Count,
            value=1,
            namespace=metrics.namespace,
            default_dimensions=metrics.default_dimensions,
        ) as metric,
    ):
        metric.add_dimension(name=dimension, value=value)


def skipped(reason: SkipReason, message: str = "notification skipped", **detail: Any) -> dict[str, Any]:
    """Log a skip with its reason and count it (``NotificationSkipped``, dimension ``reason``): invariant 5.

    The one place a skip is logged and counted, so no skip can be silent or
    uncounted; returns the outcome Powertools idempotency stores for the
    notification.

    Why the count travels in the log line (CloudWatch extracts EMF from any JSON
    log line): one write is the log and the metric, so a container that dies
    mid-batch — another of the batch's threads crashing it — cannot leave a skip
    logged and uncounted.
    """
    skip_count = AmazonCloudWatchEMFProvider(namespace=metrics.namespace)
    skip_count.add_metric(name=SKIP_METRIC, unit=MetricUnit.Count, value=1)
    for name, value in {**metrics.default_dimensions, "reason": reason.value}.items():
        skip_count.add_dimension(name=name, value=value)
    logger.info(message, extra={**detail, **skip_count.serialize_metric_set()})
    return {"outcome": "skipped", "reason": reason.value}
