"""Shadow mode's rules (``REPLY_MODE=shadow``): nothing attempted, each decision recorded once.

Above :mod:`replyonce.core.situation` only. :func:`in_shadow` wraps every
step :func:`replyonce.core.next_step` returns; :func:`shadow_settle` is the
settlement of a burst the agent answered in shadow mode (the arrival flow
calls it).
"""

from typing import assert_never

from replyonce.agent import Handoff, NoReply, Outcome, Reply
from replyonce.core.phases import answer_of
from replyonce.core.situation import (
    Situation,
    fetched_thread,
)
from replyonce.core.steps import (
    AgentFailed,
    Attempt,
    Defer,
    RecordShadow,
    Settle,
    Skip,
    Step,
    Store,
)
from replyonce.jobs import MessageArrived
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.plan import Burst, message_id
from replyonce.state import Settlement, ShadowOutcome, ShadowRecord, Status, skipped_record_id

SHADOW_RECORDED_SKIPS = frozenset(
    {
        SkipReason.NO_SENDER,
        SkipReason.AUTOMATED_SENDER,
        SkipReason.AUTO_SUBMITTED,
        SkipReason.BULK_MAIL,
        SkipReason.JUNK_OR_TRASH,
        SkipReason.MESSAGE_GONE,
        SkipReason.ANSWERED_BY_OTHER_AGENT,
        SkipReason.ANSWERED_BY_PERSON,
        SkipReason.PERSON_HOLD,
        SkipReason.REPLY_BUDGET_EXHAUSTED,
        SkipReason.RECIPIENT_BUDGET_EXHAUSTED,
        SkipReason.EXCHANGE_LIMIT,
        SkipReason.SENDER_NOT_REACHED,
        SkipReason.NO_RECIPIENT,
        SkipReason.RELAY_UNVERIFIED,
        SkipReason.ANSWERED_BY_PERSON_UNCONFIRMED,
        SkipReason.AGENT_CALL_CAP,
    }
)
"""The skips shadow mode records: a rule's decision about a customer's message. The others say the
message was decided before (``already_*``, a ledger status), is not the agent's (``grant_not_agent``,
``own_outbound``: a person's own message), or is no message (``no_message_id``, a send outcome)."""


def in_shadow(s: Situation, step: Step) -> Step:
    """Shadow mode's guard: nothing is attempted, and each decision is recorded before the record ends.

    Why here, around the whole core: every rule before it runs as in ``send`` mode (the dedup, the
    lease, the plan, the conversation, every skip), and this one function is what makes the mode
    send nothing — a reply stored before the switch waits (``shadow_mode``) rather than going out —
    and records each rule's skip (a burst's record goes with its settlement: :func:`shadow_settle`).
    """
    if isinstance(step, Store | Attempt):
        return Defer(DeferReason.SHADOW_MODE, None, {"intent_id": step.intent.id})
    if isinstance(step, Skip) and step.reason in SHADOW_RECORDED_SKIPS and s.shadow_recorded is None:
        assert isinstance(s.job, MessageArrived)
        arrived = s.job
        outcome = answer_of(s.phase)
        text = outcome.text or "" if isinstance(outcome, Reply) else ""
        at = (s.listing.read_at if s.listing else None) or s.now or arrived.payload.date
        record = ShadowRecord(
            grant_id=arrived.grant_id,
            record_id=skipped_record_id(arrived.message_id),
            thread_id=str(step.detail.get("thread_id") or arrived.thread_id or fetched_thread(s)),
            trigger_id=arrived.message_id,
            covered=(arrived.message_id,),
            outcome=ShadowOutcome.SKIPPED,
            reason=step.reason.value,
            text=text,
            at=at,
        )
        return RecordShadow(record)
    return step


def shadow_settle(
    s: Situation, outcome: Outcome | AgentFailed, burst: Burst, intent_id: str, thread_id: str, now: int
) -> Step:
    """Shadow mode, the agent answered: settle the burst as ``shadowed`` with its record, in one write.

    The record goes in the settlement's transaction (conditioned on the lease), keyed by the burst's
    intent id: recorded exactly when the burst is settled — a redelivery finds the ledger's
    ``shadowed`` (``already_shadowed``), a crash before it leaves neither, a holder that lost the
    lease writes neither (the new holder records the thread). No folder move, no reservation, no
    loop-guard count.
    """
    kind, reason, text, skip = _what_the_agent_would_do(outcome)
    covered = burst.covered
    record = ShadowRecord(
        grant_id=s.job.grant_id,
        record_id=intent_id,
        thread_id=thread_id,
        trigger_id=message_id(burst.target),
        covered=covered,
        outcome=kind,
        reason=reason[:500],
        text=text,
        at=now,
    )
    settlement = Settlement(Status.SHADOWED, covered, now, reason=(reason or kind.value)[:500], shadow=record)
    return Settle(settlement, skip=skip, metric="ShadowRecorded")


def _what_the_agent_would_do(
    outcome: Outcome | AgentFailed,
) -> tuple[ShadowOutcome, str, str, SkipReason | None]:
    """The shadow record's outcome, reason and text for what the agent returned, and the record's skip."""
    match outcome:
        case NoReply(reason=reason):
            return ShadowOutcome.DECLINED, reason, "", SkipReason.AGENT_DECLINED
        case Handoff(reason=reason):
            return ShadowOutcome.HANDED_OFF, reason, "", SkipReason.HANDED_OFF
        case AgentFailed(detail=detail):
            return ShadowOutcome.REJECTED, f"agent: {detail}", "", SkipReason.AGENT_REJECTED
        case Reply(text=text):
            return ShadowOutcome.REPLY, "", text or "", None
        case unknown:
            assert_never(unknown)
