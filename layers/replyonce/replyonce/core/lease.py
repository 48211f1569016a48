"""The thread's lease while another worker holds it: wait in-process, within a bound, then defer.

Above :mod:`replyonce.core.situation` only. Why wait at all rather than
only send the record back: a burst's later notifications meet the holder of
the first one, whose reply usually covers them seconds later. The wait ends
at ``lease_wait_seconds``, or sooner when the time left beyond a lease is
shorter (a record late in its invocation waits 0 s); then the record is
deferred until the holder's lease can have ended.
"""

from replyonce.core.situation import (
    Situation,
)
from replyonce.core.steps import (
    Defer,
    Step,
    TakeLease,
    WaitForLease,
)
from replyonce.policy import Policy
from replyonce.reasons import DeferReason

LEASE_POLL_SECONDS = 0.5
"""While another worker holds the thread, look again this often (one consistent read of the lease each; the
conditional write that takes it only once the read shows it free)."""


def wait_bound(time_left: float, policy: Policy) -> float:
    """How long a record may wait for a busy thread: ``lease_wait_seconds``, within the time beyond a
    lease."""
    return max(0.0, min(policy.lease_wait_seconds, time_left - policy.lease_seconds))


def lease_wait(s: Situation, step: TakeLease) -> Step:
    """``step`` itself until the lease was refused; then wait and take it again, or defer once the wait is
    over (``s.lease_wait_ends``, set at the first refusal)."""
    refused, ends = s.lease_refused, s.lease_wait_ends
    if refused is None or ends is None:
        return step
    if s.clock + LEASE_POLL_SECONDS > ends:
        return Defer(DeferReason.THREAD_BUSY, refused.held_for_seconds + 1, {"thread_key": step.thread_key})
    return WaitForLease(step.thread_key, step.duration_seconds, LEASE_POLL_SECONDS, step.table_began_ms)
