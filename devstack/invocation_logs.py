"""Each local invocation logs under its own function name, service and request id.

Why this exists: in Lambda every container is its own process, so the one
Powertools ``Logger`` of ``replyonce.observability`` serves one function and
one invocation at a time. The local stack runs both functions and several
replier "containers" in one process: ``replyonce.observability`` is imported
once, so they all share one Logger, and ``inject_lambda_context`` stores the
function name, request id and correlation id in that Logger's formatter
(``log_format``), shared by every thread. A replier line written while the
gateway thread was inside the webhook carried the webhook's function name and
request id; every line carried ``service_undefined`` because the two
functions' ``POWERTOOLS_SERVICE_NAME`` cannot both be in one process's
environment.

The same holds for the one Powertools ``Metrics``: its buffer (metrics,
dimensions, metadata) is shared, so an invocation's EMF line could carry
another's metrics, and none carried a ``service`` dimension.

The fix here, not in the product: the per-invocation state — the Logger's
default keys, its formatter's ``log_format`` and the ``keys_combined`` it is
reset to, the Metrics provider's buffer and service — is made per
invocation, held in a context variable that :func:`invocation_scope` binds
afresh for each invocation. A thread runs one invocation at a time, as a
Lambda process does, so every line is stamped by the invocation that wrote
it; the replier's consumer runs a batch's threads with a copy of the
invocation's context (``contextvars.copy_context``), so their lines and
metrics are the invocation's too, as they are in Lambda's one process.
"""

import contextlib
import contextvars
import copy
import threading
from collections.abc import Iterator
from typing import Any

_install_lock = threading.Lock()


class _PerInvocation:
    """A data descriptor whose value is per invocation, starting from a copy of the value at install.

    The values live in a dict held by a context variable: :func:`invocation_scope` binds a new dict
    for each invocation, and a thread running with a copy of that context (the consumer's thread
    pool) sees the same dict — the same buffer, as in one Lambda process.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._initial: dict[Any, Any] = {}

    def __get__(self, formatter: Any, owner: type | None = None) -> Any:
        if formatter is None:
            return self
        values = _bound()
        key = (self._name, id(formatter))
        if key not in values:
            values[key] = copy.copy(self._initial[id(formatter)])
        return values[key]

    def __set__(self, formatter: Any, value: Any) -> None:
        _bound()[(self._name, id(formatter))] = value

    def adopt(self, formatter: Any) -> None:
        """Take the formatter's current value as every invocation's starting value."""
        self._initial[id(formatter)] = copy.copy(formatter.__dict__.pop(self._name))


_INVOCATION: contextvars.ContextVar[dict[Any, Any]] = contextvars.ContextVar("local_invocation_state")


def _bound() -> dict[Any, Any]:
    """This invocation's values (a thread outside any invocation gets its own, on first use)."""
    try:
        return _INVOCATION.get()
    except LookupError:
        values: dict[Any, Any] = {}
        _INVOCATION.set(values)
        return values


def _per_invocation(instance: Any, attributes: tuple[str, ...]) -> None:
    """Make ``attributes`` of ``instance`` per invocation by giving it a subclass with descriptors."""
    if getattr(type(instance), "_isolated_invocations", False):
        return
    descriptors = {name: _PerInvocation(name) for name in attributes}
    isolated = type(
        f"PerInvocation{type(instance).__name__}",
        (type(instance),),
        {**descriptors, "_isolated_invocations": True},
    )
    for descriptor in descriptors.values():
        descriptor.adopt(instance)
    instance.__class__ = isolated


_METRIC_BUFFER = ("metric_set", "dimension_set", "metadata_set", "dimension_sets", "service", "timestamp")


def isolate_invocations(logger: Any, metrics: Any) -> None:
    """Make the shared Logger's and Metrics' per-invocation state per invocation (idempotent).

    Parameters
    ----------
    logger:
        The Powertools ``Logger`` of ``replyonce.observability``: its default
        keys (the service) and its formatter's current and reset keys.
    metrics:
        The Powertools ``Metrics`` of ``replyonce.observability``: its
        provider's buffer and service.
    """
    if getattr(type(metrics.provider), "_isolated_invocations", False):
        return  # installed: every invocation passes here, so no lock on this path
    with _install_lock:
        # What an earlier caller left in the buffer (a test that ran a handler without its flush) must
        # not become every invocation's starting buffer.
        metrics.clear_metrics()
        _per_invocation(logger, ("_default_log_keys",))
        _per_invocation(logger.registered_formatter, ("log_format", "keys_combined"))
        _per_invocation(metrics.provider, _METRIC_BUFFER)


@contextlib.contextmanager
def invocation_scope(service: str | None) -> Iterator[None]:
    """Run one invocation on this thread with ``service`` as the Logger's service name.

    ``inject_lambda_context(clear_state=True)`` rebuilds the keys from the
    Logger's default keys, so the service set here survives it, and the
    function name and request id it adds belong to this thread only.
    """
    from replyonce.observability import logger, metrics

    isolate_invocations(logger, metrics)
    _INVOCATION.set({})
    if service:
        metrics.provider.service = service
        logger._default_log_keys = {**logger._default_log_keys, "service": service}
        formatter = logger.registered_formatter
        formatter.keys_combined = {**formatter.keys_combined, "service": service}
        formatter.log_format = {**formatter.log_format, "service": service}
    yield
