"""The top of the core: :func:`next_step`, which dispatches a record to its flow, then fences and shadows.

Imports every flow (:mod:`~replyonce.core.arrival`,
:mod:`~replyonce.core.outcome`) and the rules around them
(:mod:`~replyonce.core.failure`, :mod:`~replyonce.core.region`,
:mod:`~replyonce.core.shadow`, :mod:`~replyonce.core.lease`); nothing in the
core imports it.
"""

from dataclasses import replace
from typing import assert_never

from replyonce.agent import Reply
from replyonce.core.arrival import message_arrived
from replyonce.core.delivery import drive_undriven
from replyonce.core.failure import deferral
from replyonce.core.lease import lease_wait
from replyonce.core.outcome import after_settlement, reconcile_due, send_reported
from replyonce.core.phases import Answered, Arrived, Leased, Planned, Released, Settled, answer_of, lease_of
from replyonce.core.region import fence
from replyonce.core.shadow import in_shadow
from replyonce.core.situation import (
    Situation,
)
from replyonce.core.steps import (
    Attempt,
    Defer,
    ReleaseLease,
    Skip,
    Step,
    TakeLease,
)
from replyonce.jobs import MessageArrived, ReconcileDue, SendReported
from replyonce.policy import Policy
from replyonce.reasons import DeferReason


def before_start(time_left: float, policy: Policy) -> Defer | None:
    """Why a record may not start now (``None``: it may): it needs a whole lease's work before the
    invocation ends; not started, it is back at once."""
    if time_left >= policy.lease_seconds:
        return None
    return Defer(DeferReason.DEADLINE, 0, {"remaining_seconds": round(time_left, 1)})


def next_step(s: Situation) -> Step:
    """The one thing to do next for the record ``s.job``, given everything in ``s``."""
    step = _decided(s)
    outcome = answer_of(s.phase)
    if isinstance(step, Skip) and isinstance(outcome, Reply):
        # Dropped after the agent answered (a person answered meanwhile): its text, for a developer only.
        step = replace(step, unsent_reply=outcome.text or "")
    lease = lease_of(s.phase)
    if isinstance(step, Skip | Defer) and lease is not None:
        # The record ends without a settlement: its lease is freed first, for the next holder.
        return ReleaseLease(lease.key, step)
    return step


def _decided(s: Situation) -> Step:
    """The step the record's phase, its flow, the fence, shadow mode and the lease's wait decide."""
    if s.failure is not None:
        return deferral(s.failure)
    match s.phase:
        case Released(then=then):
            return then
        case Settled(settle=settle):
            return after_settlement(s, settle)
        case Arrived() | Leased() | Planned() | Answered():
            return _going_on(s)
        case unknown:
            assert_never(unknown)


def _going_on(s: Situation) -> Step:
    """The step of a record not settled nor released: its flow's, fenced, in shadow, or a wait."""
    # An intent nobody drives any more is driven first by the thread's next record (issue 48).
    step = drive_undriven(s) or _flow_step(s)
    if isinstance(step, TakeLease | Attempt):
        step = fence(s, step)
    # The fence first: a passive Region does nothing at all; shadow mode then keeps sends from going out.
    if s.policy.shadow_mode:
        step = in_shadow(s, step)
    # A lease another worker holds is waited for here, whichever flow asked for it.
    return lease_wait(s, step) if isinstance(step, TakeLease) else step


def _flow_step(s: Situation) -> Step:
    """The step of the flow the record's job belongs to."""
    match s.job:
        case MessageArrived() as arrived:
            return message_arrived(s, arrived)
        case SendReported() as reported:
            return send_reported(s, reported)
        case ReconcileDue() as due:
            return reconcile_due(s, due)
        case unknown:
            assert_never(unknown)
