"""The top of the core: :func:`next_step`, which dispatches a record to its flow, then fences and shadows.

Imports every flow (:mod:`~replyonce.core.arrival`,
:mod:`~replyonce.core.outcome`) and the rules around them
(:mod:`~replyonce.core.region`, :mod:`~replyonce.core.shadow`); nothing in
the core imports it.
"""

from typing import assert_never

from replyonce.core.arrival import message_arrived
from replyonce.core.outcome import reconcile_due, send_reported
from replyonce.core.region import fence
from replyonce.core.shadow import in_shadow
from replyonce.core.situation import Attempt, Situation, Step, TakeLease
from replyonce.policy import Policy
from replyonce.subjects import MessageArrived, ReconcileDue, SendReported


def may_start(time_left: float, policy: Policy) -> bool:
    """Whether a record may start: it needs a whole lease's work before the invocation ends."""
    return time_left >= policy.lease_seconds


def next_step(s: Situation) -> Step:
    """The one thing to do next for the record ``s.subject``, given everything in ``s``."""
    step = _flow_step(s)
    if isinstance(step, TakeLease | Attempt):
        step = fence(s, step)
    # The fence first: a passive Region does nothing at all; shadow mode then keeps sends from going out.
    return in_shadow(s, step) if s.policy.shadow_mode else step


def _flow_step(s: Situation) -> Step:
    """The step of the flow the record's subject belongs to."""
    match s.subject:
        case MessageArrived() as arrived:
            return message_arrived(s, arrived)
        case SendReported() as reported:
            return send_reported(s, reported)
        case ReconcileDue() as due:
            return reconcile_due(s, due)
        case unknown:
            assert_never(unknown)
