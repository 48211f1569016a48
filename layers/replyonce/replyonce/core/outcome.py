"""Settlement's end, a send outcome Nylas reported (``message.delivered``, ``message.send_failed``) and
our own reconcile of a queued reply: settling what a ``202`` left open.

Above :mod:`replyonce.core.delivery` (a stored intent still being sent is
driven there) and :mod:`replyonce.core.situation`.
"""

from typing import assert_never

from replyonce.core.delivery import (
    after_settle,
    attempt,
    drive,
    evidence,
    found_in_mailbox,
    sent,
    settled_for_another,
)
from replyonce.core.phases import Answered, Leased, Planned
from replyonce.core.situation import (
    Situation,
)
from replyonce.core.steps import (
    Defer,
    FileHandedOff,
    Finish,
    FinishSkipped,
    LookUpAgents,
    LookUpFolders,
    Notice,
    ReadThread,
    Settle,
    Skip,
    Step,
    TakeLease,
)
from replyonce.jobs import ReconcileDue, SendReported
from replyonce.reasons import DeferReason, SkipReason
from replyonce.state import Intent, IntentState, Settlement, Status, thread_key


def _outcome_intent(s: Situation, grant_id: str, thread_id: str, intent_id: str) -> Step | Intent:
    """The stored intent a send outcome is about, or the step needed first (agents, lease, a skip)."""
    if grant_id not in s.policy.agent_grant_ids:
        return Skip(SkipReason.GRANT_NOT_AGENT)
    if not intent_id or not thread_id:
        return Skip(SkipReason.NOT_OUR_REPLY)
    if s.agents is None:
        return LookUpAgents()
    match s.phase:
        case Leased(state=state) | Planned(state=state) | Answered(state=state):
            pass
        case _:
            return TakeLease(thread_key(grant_id, thread_id), s.policy.lease_seconds)
    intent = state.outbox.get(intent_id)
    if intent is None:
        return Skip(SkipReason.NOT_OUR_REPLY, {"intent_id": intent_id})
    return intent


def send_reported(s: Situation, reported: SendReported) -> Step:
    """``message.delivered`` confirms a queued reply; ``message.send_failed`` re-opens it, once."""
    found = _outcome_intent(s, reported.grant_id, reported.thread_id, reported.intent_id)
    if not isinstance(found, Intent):
        return found
    intent = found
    if intent.id in s.attempting or intent.id in s.answers:
        return drive(s, reported.grant_id, intent)
    at = s.now or intent.accepted_at or intent.last_attempt_at
    if reported.delivered:
        message = reported.reply_message_id or intent.reply_message_id
        return Settle(sent(intent, Status.REPLIED, at, message), metric="QueuedReplyDelivered")
    stale = (
        reported.reply_message_id
        and intent.reply_message_id
        and reported.reply_message_id != intent.reply_message_id
    )
    if intent.state is not IntentState.QUEUED or stale:
        return Skip(SkipReason.NOT_OUR_REPLY, {"intent_id": intent.id, "state": intent.state.value})
    if intent.reopened >= 1:
        settlement = Settlement(Status.FAILED, intent.covered, at, intent, reason="send_failed twice")
        return Settle(
            settlement,
            skip=SkipReason.SEND_REJECTED,
            move_to=s.policy.handoff_folder,
            metric="QueuedReplyFailed",
        )
    if s.now is None:
        return ReadThread(reported.grant_id, intent.thread_id, s.policy.thread_page_size, None)
    return attempt(s, intent.reopen(), metric="QueuedReplyReopened")


def reconcile_due(s: Situation, due: ReconcileDue) -> Step:
    """A queued reply nothing confirmed in ``pending_confirm_seconds``: the mailbox decides."""
    found = _outcome_intent(s, due.grant_id, due.thread_id, due.intent_id)
    if not isinstance(found, Intent):
        if isinstance(found, Skip) and found.reason is SkipReason.NOT_OUR_REPLY:
            # Settled meanwhile (delivered, failed, or found): nothing left to reconcile.
            return Skip(SkipReason.ALREADY_REPLIED, {"reconcile": True, "intent_id": due.intent_id})
        return found
    intent = found
    if intent.state is not IntentState.QUEUED or intent.id in s.attempting or intent.id in s.answers:
        return drive(s, due.grant_id, intent)
    if s.now is None:
        return ReadThread(due.grant_id, intent.thread_id, s.policy.thread_page_size, None)
    shown = evidence(s, intent)
    if shown is not None:
        return found_in_mailbox(s, intent, shown)

    def reopen() -> Step:
        if intent.reopened >= 1:
            settlement = Settlement(Status.FAILED, intent.covered, s.now or 0, intent, reason="never sent")
            return Settle(
                settlement,
                skip=SkipReason.SEND_REJECTED,
                move_to=s.policy.handoff_folder,
                metric="QueuedReplyFailed",
            )
        return attempt(s, intent.reopen(), metric="QueuedReplyReopened")

    return after_settle(
        s,
        due.grant_id,
        intent,
        now=s.now,
        wait_until=intent.accepted_at + s.policy.pending_confirm_seconds,
        on_absent=reopen,
    )


def after_settlement(s: Situation, settle: Settle) -> Step:
    """The settlement is written: file a hand-off's messages in ``HANDOFF_FOLDER`` (best effort), then
    finish the record — or, when it settled an intent nobody drove (issue 48), come back for its own.

    The hand-off's folder is the one the grant's listing named; a listing refused earlier in the record
    is asked once more, and without it the messages stay where they are.
    """
    grant_id = s.job.grant_id
    # Filed first, whoever's intent it is: an intent nobody drove that is refused for good is a hand-off
    # of its own messages, whose records may never come back (a lost dead letter) to file them.
    if settle.move_to and not s.filed:
        if s.handoff_folder_id is None and s.folder_listings < 2:
            return LookUpFolders(grant_id)
        if s.handoff_folder_id:
            return FileHandedOff(grant_id, settle.settlement.covered, s.handoff_folder_id)
    another = settled_for_another(s, settle.settlement)
    if another is not None:
        # An intent nobody drove is settled (issue 48): the record's own message is still to be answered.
        return Defer(DeferReason.REPLY_PENDING, 0, {"settled_intent_id": another.id})
    return finish(settle)


def finish(settle: Settle) -> Finish | FinishSkipped:
    """The record's end once ``settle`` is written: its metrics, and what it says or skips with."""
    settlement = settle.settlement
    notices: list[Notice] = []
    if settle.metric:
        notices.append(Notice(metric=settle.metric, metric_status=settle.metric_status))
    if settle.move_to and settle.metric != "HandedOff":
        # A reply that can never go out (refused for good, the agent's refusal) is a hand-off too.
        notices.append(Notice(metric="HandedOff"))
    if len(settlement.covered) > 1 and settlement.status in (Status.REPLIED, Status.QUEUED):
        notices.append(Notice(metric="BurstCoalesced", value=len(settlement.covered) - 1))
    if settle.skip is not None:
        return FinishSkipped(settle, settle.skip, tuple(notices))
    said = _said(settlement.status)
    if settlement.status is Status.REPLIED:
        notices.append(Notice(metric="ReplySent"))
    return Finish(settle, said, tuple(notices))


def _said(status: Status) -> str:
    """The INFO line of a reply's settlement (a skip's says its reason instead)."""
    match status:
        case Status.REPLIED:
            return "reply sent"
        case Status.QUEUED:
            return "reply queued by Nylas"
        case Status.DRAFTED:
            return "reply drafted for review"
        case Status.SHADOWED:
            return "shadow mode: reply recorded, nothing sent"
        case Status.DECLINED | Status.HANDED_OFF | Status.FAILED | Status.OWN_REPLY:
            # Settled with a skip (its reason is the line), or never a settlement (our own reply).
            raise AssertionError(f"a {status.value} settlement is a skip")
        case unknown:
            assert_never(unknown)
