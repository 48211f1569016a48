"""When a deferred record comes back: its visibility, by why it waits and how often it was received.

Beside its one caller, the consumer (``replyonce.shell.consumer``), which sets a
deferred record's visibility to :func:`retry_delay`. Pure: no clock, no
queue; tested in ``tests/unit/test_redelivery.py`` and, against the
template's bounds, in ``tests/integration/test_lease_budget.py``.
"""

from replyonce.reasons import DeferReason

_MAX_VISIBILITY_SECONDS = 12 * 3600  # SQS ChangeMessageVisibility's limit
_CONTENDED = frozenset({DeferReason.THREAD_BUSY, DeferReason.NOTIFICATION_IN_PROGRESS})
_WAITS_OUT = frozenset({DeferReason.REGION_HANDOVER, DeferReason.STATE_NEW, DeferReason.GRANT_PAUSED})
"""Waits that end at a known time whatever happens meanwhile (the failover's handover, a new thread
state's wait), or that an operator ends (a paused grant, looked at again every ``paused_retry_seconds``):
a record waiting one out comes back when it ends, one receive spent on it."""


def retry_delay(
    reason: DeferReason,
    hint_seconds: int | None,
    receives: int,
    *,
    busy_base_seconds: int,
    retry_base_seconds: int,
    retry_max_seconds: int,
    max_receives: int,
) -> int:
    """When a deferred record should be received again (its visibility, in seconds).

    A contended record (a busy thread, a notification in progress elsewhere)
    backs off from ``busy_retry_seconds``, doubling per receive, but never
    waits longer than the hold it waits for can last (``hint_seconds``: the
    holder's lease, or the in-progress record's expiry) — and never less than
    that hold spread over the receives left before ``max_receives``
    (``max_receive_count``, the queue's ``maxReceiveCount``). Why the floor:
    the doubling alone adds up to 1 + 2 + ... + 64 = 127 s over 8 receives,
    while a lease lasts up to 220 s and an in-progress record up to the
    function's 260 s; a record waiting on a crashed holder was dead-lettered
    before the hold ended. With each delay at least ``hold / receives left``,
    the delays from any receive on add up to at least the hold (by induction:
    what is left of the hold after one delay is spread over one receive
    fewer), so the last receive comes after the hold has ended, whatever the
    in-process wait did.

    Other failures back off from ``retry_base_seconds``, capped; a deferral
    that knows its time (``Retry-After``, the settle time, an account limit's
    wait, a deadline) uses it. None waits longer than ``retry_max_seconds``:
    a record that comes back early finds the same reason and defers again,
    while one that waits too long is late — except a wait that ends at a
    known time (the handover after a failover, a new thread state's wait:
    ``_WAITS_OUT``), which comes back once, when it ends, even past
    ``retry_max_seconds``: neither early nor late, and one receive spent.
    Why: coming back every ``retry_max_seconds``, a record waiting out the
    handover (lease + ``pending_confirm_seconds``: 790 s at the template's
    timings, where ``retry_max_seconds`` is 900; 99 s at the chaos run's,
    where it is 14) spent seven of its eight receives on it, and the
    failover drill dead-lettered the records that then met anything else —
    a busy thread, an outage, a new thread's wait (issue 48).
    """
    doubling = 2 ** min(max(receives, 1) - 1, 16)
    if reason in _CONTENDED:
        delay = busy_base_seconds * doubling
        if hint_seconds is not None:
            hold = max(0, int(hint_seconds))
            receives_left = max(1, max_receives - max(receives, 1))
            delay = min(hold, max(delay, -(-hold // receives_left)))
    elif reason in _WAITS_OUT and hint_seconds is not None:
        return min(max(0, int(hint_seconds)), _MAX_VISIBILITY_SECONDS)
    elif hint_seconds is not None:
        delay = int(hint_seconds)
    else:
        delay = retry_base_seconds * doubling
    return max(0, min(delay, retry_max_seconds, _MAX_VISIBILITY_SECONDS))
