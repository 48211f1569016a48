"""What a failure means for the record: the one place a port's failure (and a Nylas status) becomes a
deferral.

Above :mod:`replyonce.core.situation` and :mod:`replyonce.core.results`. A
Nylas ``401`` is our key (rotated or revoked), a ``429`` a throttle: the
alarms count them apart from Nylas being unavailable, for a read and for a
send's answer alike (:func:`nylas_deferral`). Every other failure of a port
call — a contended write, a lost lease, an agent that failed — is deferred
here too (:func:`deferral`), so "not now" is decided in the core alone.
"""

from typing import assert_never

from replyonce.core.results import NylasUnavailable, StoreContended
from replyonce.core.steps import (
    AgentTrouble,
    Defer,
    Failure,
    LeaseLost,
)
from replyonce.reasons import DeferReason

_BY_STATUS = {401: DeferReason.UNAUTHORIZED, 429: DeferReason.RATE_LIMITED}


def nylas_deferral(status: int | None, otherwise: DeferReason) -> DeferReason:
    """The deferral reason of a Nylas call that failed with ``status`` (``otherwise`` for any other)."""
    return _BY_STATUS.get(status or 0, otherwise)


def deferral(failure: Failure) -> Defer:
    """The record's deferral for ``failure`` (its log fields as the consumer logs them)."""
    match failure:
        case NylasUnavailable(status=status, error_type=error_type, retry_after_seconds=after, detail=detail):
            reason = nylas_deferral(status, DeferReason.NYLAS_UNAVAILABLE)
            return Defer(reason, after, {"status": status, "error_type": error_type, "detail": detail})
        case StoreContended(kind=kind, detail=detail):
            # A thread item so hot that every in-place retry met another write: back as a busy thread is.
            return Defer(DeferReason.THREAD_BUSY, None, {"detail": detail, "contention": kind})
        case LeaseLost(thread_key=key):
            # Nothing was written: the record comes back and finds the thread as the new holder left it.
            return Defer(DeferReason.LEASE_LOST, 0, {"thread_key": key})
        case AgentTrouble(detail=detail):
            return Defer(DeferReason.AGENT_FAILED, None, {"detail": detail})
        case unknown:
            assert_never(unknown)
