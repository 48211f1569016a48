"""The one Logger, Metrics and Tracer of each function.

Why module-level singletons: Powertools expects one instance per function so
the handler decorators (``inject_lambda_context``, ``log_metrics``,
``capture_lambda_handler``) and the domain code share state (correlation id,
metric buffer). The service name and namespace come from the template through
``POWERTOOLS_SERVICE_NAME`` and ``POWERTOOLS_METRICS_NAMESPACE``.

Why each function builds its tracer with ``build_tracer`` rather than this
module making one at import: building a Powertools
``Tracer`` imports the X-Ray SDK and patches libraries. The webhook imports
this module for its logger and wants a tracer that patches botocore only, and
where tracing is off (tests, the local stack, ``POWERTOOLS_TRACE_DISABLED``)
the SDK is not needed at all — yet outside Lambda importing it builds an X-Ray
client for centralized sampling, ~110 ms of every cold start (``make bench``).
"""

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

from replyonce.reasons import SkipReason

logger = Logger()
metrics = Metrics()
# Every skip is counted here, with its reason as the dimension (invariant 5).
SKIP_METRIC = "NotificationSkipped"


class Untraced:
    """Stands in for ``Tracer`` where Powertools would not trace: the same decorator, no X-Ray SDK."""

    def capture_lambda_handler(
        self,
        lambda_handler: Callable[..., Any] | None = None,
        capture_response: bool | None = None,
        capture_error: bool | None = None,
    ) -> Callable[..., Any]:
        """Return the handler unchanged (a disabled ``Tracer`` would only add dummy subsegments)."""
        if lambda_handler is None:
            return lambda handler: handler
        return lambda_handler


_TRUE = frozenset({"1", "y", "yes", "t", "true", "on"})


def tracing_enabled(env: Mapping[str, str] = os.environ) -> bool:
    """Whether to trace: in Lambda (``LAMBDA_TASK_ROOT``), not SAM local, ``POWERTOOLS_TRACE_DISABLED`` off.

    Powertools' ``Tracer`` decides the same way (``tests/unit/test_observability.py``
    holds the two together for every combination); deciding it here, from the
    environment alone, keeps the X-Ray SDK out of a cold start that will not
    trace.
    """
    if env.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() in _TRUE:
        return False
    in_lambda = bool(env.get("LAMBDA_TASK_ROOT"))
    emulated = bool(env.get("AWS_SAM_LOCAL")) or bool(env.get("AWS_CHALICE_CLI_MODE"))
    return in_lambda and not emulated


def build_tracer(patch_modules: Sequence[str] | None = None) -> Tracer | Untraced:
    """A Powertools ``Tracer`` patching ``patch_modules`` (all it supports when ``None``), if tracing is on.

    Parameters
    ----------
    patch_modules:
        The libraries the function calls through, e.g. ``("botocore",)``.
        Patching every supported library imports each of them (requests,
        httplib, sqlite3, ...) during the cold start, used or not.
    """
    if not tracing_enabled():
        return Untraced()
    return Tracer(patch_modules=patch_modules)


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
