"""A new message: the arrival flow up to the lease, and the plan of the burst's reply inside it.

The core applies the rules of invariants 2 to 4 here (:func:`_plan`): each
message screened (``replyonce.screening``), the loop guard, the exchange
limit, the burst (``replyonce.plan``), the recipients' budgets, the agent.
Above :mod:`replyonce.core.delivery` (a stored intent that covers the
message is driven there), :mod:`replyonce.core.shadow` and
:mod:`replyonce.core.situation`.
"""

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, assert_never

from replyonce.agent import AgentIdentity, Handoff, NoReply, Reply
from replyonce.conversation import conversation_for
from replyonce.core.delivery import attempt, drive, last_touched
from replyonce.core.shadow import shadow_settle
from replyonce.core.situation import (
    GONE,
    UNREAD,
    AgentFailed,
    AskAgent,
    ClaimEmails,
    Defer,
    FetchMessage,
    FileHandedOff,
    LookBeforeSend,
    LookUpAgents,
    LookUpFolders,
    ReadDrafts,
    ReadLedger,
    ReadThread,
    Reserve,
    Settle,
    Situation,
    Skip,
    Step,
    TakeLease,
    fetched_thread,
    settled_reason,
)
from replyonce.coverage import (
    INTENT_KEY,
    MAX_COVERED_IDS,
    carries_intent_id,
    covered_in_mailbox,
    is_covered,
    metadata_of,
)
from replyonce.coverage import THREAD_KEY as THREAD_METADATA_KEY
from replyonce.keys import conversation_key
from replyonce.outbox import new_intent, too_large, too_large_reason
from replyonce.plan import (
    Burst,
    from_a_person,
    loop_guard_exhausted,
    message_id,
    needs_another_page,
    plan_burst,
    reached,
)
from replyonce.policy import Policy
from replyonce.ports import Listing, Message
from replyonce.reasons import DeferReason, SkipReason
from replyonce.recipients import mailbox_key
from replyonce.screening import (
    Agents,
    header_values,
    in_closed_folder,
    machine_sign,
    reason_not_to_answer,
    recipients_of,
    sender_email,
    sender_reason,
)
from replyonce.state import (
    REPLY_BUDGET_WINDOW_SECONDS,
    IntentKind,
    IntentState,
    LedgerEntry,
    Reservation,
    Settlement,
    Status,
    ThreadState,
    thread_key,
)
from replyonce.subjects import MessageArrived

MAX_BURST = MAX_COVERED_IDS
"""The largest burst one reply answers (its metadata must name every covered message)."""


def message_arrived(s: Situation, arrived: MessageArrived) -> Step:
    """A new message: what the payload shows, the ledger, the thread's lease, then under it the plan."""
    shown = _what_the_payload_shows(s, arrived)
    if shown is not None:
        return shown
    if s.ledger is UNREAD:
        return ReadLedger(arrived.grant_id, arrived.message_id)
    if s.ledger is not None:
        if (
            s.ledger.status is Status.HANDED_OFF
            and s.handoff_folder_id
            and not s.filed
            and not s.policy.shadow_mode
        ):
            # Settled handed off (or failed for good: a hand-off too), perhaps never filed (a crash between
            # the two, a move that failed for now): filed again, since a hand-off the mailbox does not show
            # is a silent "no" (invariant 7).
            return FileHandedOff(arrived.grant_id, (arrived.message_id,), s.handoff_folder_id)
        return Skip(_settled_as(s.ledger), {"reply_message_id": s.ledger.reply_message_id})
    thread_id = arrived.thread_id or fetched_thread(s)
    if not thread_id:
        if s.fetched is UNREAD:
            return FetchMessage(arrived.grant_id, arrived.message_id)
        return Skip(SkipReason.MESSAGE_GONE)
    if s.state is None:
        return TakeLease(thread_key(arrived.grant_id, thread_id), s.policy.lease_seconds)
    return _under_the_lease(s, arrived, thread_id)


def _settled_as(entry: LedgerEntry) -> SkipReason:
    """A redelivery's skip reason: what settled the message, and for a rule's hand-off the rule's own reason
    (``exchange_limit``...), so the log says why a person was told whichever record got to log it."""
    if entry.status is Status.HANDED_OFF and entry.reason in {r.value for r in HANDED_OFF_SKIPS}:
        return SkipReason(entry.reason)
    return settled_reason(entry.status)


def _what_the_payload_shows(s: Situation, arrived: MessageArrived) -> Step | None:
    """What is decided before any read of the message's own: whose it is, its sender, our own reply, its
    folder — or what must be looked up first (the agents, the grant's folders). ``None``: go on."""
    policy = s.policy
    if arrived.grant_id not in policy.agent_grant_ids:
        return Skip(SkipReason.GRANT_NOT_AGENT)
    if not arrived.message_id:
        return Skip(SkipReason.NO_MESSAGE_ID)
    if s.agents is None:
        return LookUpAgents()
    if arrived.grant_id not in s.agents.emails:
        # Nylas did not tell us the grant's address (a refused look-up): its own sent replies would not be
        # recognised, so nothing of its mail is answered until it does (looked up again next record).
        unknown = {"grant_id": arrived.grant_id, "detail": "grant unknown"}
        return Defer(DeferReason.CONFIGURATION, None, unknown)
    if s.closed_folders is None:
        return LookUpFolders(arrived.grant_id)
    # What the payload alone shows (its sender, its folder): no lease, no read. Headers come with the read.
    reason = (
        sender_reason(arrived.payload, s.agents, policy.trusted_senders) if arrived.payload.from_ else None
    )
    if reason is not None:
        return Skip(reason, _sign_detail(reason, arrived.payload, policy))
    if is_our_reply(arrived.payload):
        # Our reply by its metadata, whatever its ``from`` (the ledger also knows it by the id the send
        # returned: ``Status.OWN_REPLY``).
        return Skip(SkipReason.OWN_OUTBOUND, {"by": "metadata"})
    if in_closed_folder(arrived.payload, s.closed_folders):
        return Skip(SkipReason.JUNK_OR_TRASH)
    return None


def _under_the_lease(s: Situation, arrived: MessageArrived, thread_id: str) -> Step:
    """Holding the thread: a stored intent that covers the message is driven out; else the plan."""
    assert s.state is not None
    intent = s.state.intent_covering(arrived.message_id)
    if intent is not None:
        if intent.state is IntentState.QUEUED:
            return Skip(SkipReason.ALREADY_REPLIED, {"queued": True, "intent_id": intent.id})
        return drive(s, arrived.grant_id, intent)
    if arrived.message_id in s.state.covered:
        return Skip(SkipReason.ALREADY_REPLIED, {"thread_id": thread_id})
    return _plan(s, arrived, thread_id)


def _plan(s: Situation, arrived: MessageArrived, thread_id: str) -> Step:
    """Inside the lease, no intent covers the message: read the thread and plan the burst's reply."""
    if s.listing is None or not s.listing.pages:
        return ReadThread(arrived.grant_id, thread_id, s.policy.thread_page_size, None)
    screen = _screen(s, arrived)
    read = _thread_read(s, arrived, thread_id, screen)
    if not isinstance(read, tuple):
        return read
    now = s.listing.read_at or 0
    planned = _planned(s, arrived, thread_id, read, screen, now)
    if not isinstance(planned, Burst):
        return no_silent_no(s, arrived, planned, now)
    return no_silent_no(s, arrived, _before_the_agent(s, arrived, thread_id, read, planned, now), now)


HANDED_OFF_SKIPS = frozenset(
    {
        SkipReason.ANSWERED_BY_PERSON_UNCONFIRMED,
        SkipReason.PERSON_HOLD,
        SkipReason.EXCHANGE_LIMIT,
        SkipReason.REPLY_BUDGET_EXHAUSTED,
        SkipReason.RECIPIENT_BUDGET_EXHAUSTED,
        SkipReason.NO_RECIPIENT,
        SkipReason.SENDER_NOT_REACHED,
        SkipReason.RELAY_UNVERIFIED,
        SkipReason.PERSON_DRAFTING,
    }
)
"""The rules' "no" to a person's message: each is handed to a person (invariant 7). Every other skip of the
plan is about mail no person is owed an answer for (a machine's, our own, junk, another agent's) or one a
person or a reply already answered."""


def no_silent_no(s: Situation, arrived: MessageArrived, step: Step, now: int) -> Step:
    """Invariant 7, decided here and only here: a rule's "no" to a person's message is a hand-off.

    Why: a skip alone is a log line, and in a mailbox nobody reads (an
    Agent Account) the customer's third question would never be answered
    and nobody told. Handed off, the message is settled ``handed_off`` (a
    redelivery finds it so), counted in ``HandedOff``, logged with the
    rule's reason, and moved to ``HANDOFF_FOLDER``, which the mailbox shows.
    Shadow mode moves nothing: its record of the skip is what it shows.
    """
    if not isinstance(step, Skip) or step.reason not in HANDED_OFF_SKIPS or s.policy.shadow_mode:
        return step
    settlement = Settlement(Status.HANDED_OFF, (arrived.message_id,), now, reason=step.reason.value)
    return Settle(settlement, skip=step.reason, move_to=s.policy.handoff_folder, metric="HandedOff")


@dataclass(frozen=True)
class _Screen:
    """The two questions the plan asks of each message of the thread read (invariants 1 and 4)."""

    covered: Callable[[str], bool]
    """Whether a reply covers the message already: our state's settled ids, or a reply in the mailbox."""
    not_to_answer: Callable[[Message], SkipReason | None]
    """Why the message is never answered (a machine, junk, our own, another grant's email), or ``None``."""


def _screen(s: Situation, arrived: MessageArrived) -> _Screen:
    """The plan's questions, over what this lease read: the thread state, the listing, the claims."""
    policy, state, agents = s.policy, s.state, s.agents
    assert state is not None
    assert agents is not None
    assert s.listing is not None
    settled = state.settled_ids()
    record = covered_in_mailbox(s.listing.messages)

    def covered(mid: str) -> bool:
        return mid in settled or is_covered(mid, record)

    def not_to_answer(message: Message) -> SkipReason | None:
        reason = reason_not_to_answer(
            message,
            grant_id=arrived.grant_id,
            agents=agents,
            trusted_senders=policy.trusted_senders,
            closed_folder_ids=s.closed_folders or frozenset(),
            trusted_lists=policy.trusted_list_ids,
        )
        if reason is None and claimed_by_another(message, s.claims, arrived.grant_id):
            return SkipReason.ANSWERED_BY_OTHER_AGENT
        return reason

    return _Screen(covered, not_to_answer)


def _thread_read(
    s: Situation, arrived: MessageArrived, thread_id: str, screen: _Screen
) -> Step | tuple[Message, ...]:
    """The thread's messages once the read has reached the trigger (``docs/design.md``, "Read back to the
    message"), or the step that reads on: the next page, the trigger by id, a deferral, a skip."""
    listing, policy = s.listing, s.policy
    assert listing is not None
    seen = reached(listing.messages, arrived.message_id)
    if (
        listing.next_cursor
        and len(listing.pages) < policy.max_thread_pages
        and needs_another_page(
            listing.pages[-1].messages,
            is_covered=screen.covered,
            reason_not_to_answer=screen.not_to_answer,
            trigger_seen=seen,
        )
    ):
        return ReadThread(arrived.grant_id, thread_id, policy.thread_page_size, listing.next_cursor)
    messages = listing.messages
    if not seen and listing.next_cursor:
        # The bound came before the trigger: its cover, if any, is on a page not read. Neither answered
        # blind nor skipped (it may be unanswered): it waits, and dead-letters for an operator.
        return Defer(
            DeferReason.TRIGGER_NOT_REACHED, None, {"thread_id": thread_id, "pages": len(listing.pages)}
        )
    if arrived.message_id in {message_id(m) for m in messages}:
        return messages
    # The whole thread was read and does not list it yet (a listing's lag): every cover was seen.
    if s.fetched is UNREAD:
        return FetchMessage(arrived.grant_id, arrived.message_id)
    if s.fetched is GONE or s.fetched is None:
        return Skip(SkipReason.MESSAGE_GONE)
    return (*messages, s.fetched)


def _planned(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    messages: tuple[Message, ...],
    screen: _Screen,
    now: int,
) -> Step | Burst:
    """The burst one reply answers, or why none goes now: the loop guard, the exchange limit, a rule's
    skip of the trigger (``replyonce.plan.plan_burst``)."""
    policy, agents = s.policy, s.agents
    assert s.state is not None
    assert agents is not None
    pending = pending_reply_recipients(s.state, messages, now)

    def plan(pending_replies: tuple[tuple[str, ...], ...]) -> Burst | SkipReason:
        return plan_burst(
            arrived.message_id,
            messages,
            is_covered=screen.covered,
            reason_not_to_answer=screen.not_to_answer,
            own_addresses=agents.addresses,
            sent_folders=s.sent_folders,
            trusted_senders=policy.trusted_senders,
            trusted_lists=policy.trusted_lists,
            authserv_ids=policy.receiving_authserv_ids,
            now=now,
            person_hold_seconds=policy.person_hold_seconds,
            max_recipients=policy.max_recipients,
            max_automatic_exchanges=policy.max_automatic_exchanges,
            automatic_exchange_seconds=policy.automatic_exchange_seconds,
            pending_replies=pending_replies,
            whole_thread=s.listing is not None and s.listing.next_cursor is None,
        )

    planned = plan(pending)
    if planned is SkipReason.EXCHANGE_LIMIT and pending and plan(()) is not SkipReason.EXCHANGE_LIMIT:
        # Full only with replies not settled yet: wait for them (one Nylas fails was never an
        # exchange, and a hand-off would be for good), as the loop guard does.
        return Defer(
            DeferReason.REPLY_PENDING,
            _settles_in(s.state, unsettled_replies(s.state, now), now, policy),
            {"thread_id": thread_id},
        )
    if isinstance(planned, SkipReason):
        trigger = next((m for m in messages if message_id(m) == arrived.message_id), {})
        return Skip(planned, {"thread_id": thread_id, **_sign_detail(planned, trigger, policy)})
    # The loop guard after the plan: only a message the plan would answer is one it holds back.
    return _reply_budget_step(s, messages, thread_id, now) or planned


def _before_the_agent(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    messages: tuple[Message, ...],
    planned: Burst,
    now: int,
) -> Step:
    """The burst is planned: what it waits for before the agent is asked (a new state, a person's draft,
    the emails' claims, the recipients' budgets), then the agent, then what its answer leads to."""
    policy, state, agents = s.policy, s.state, s.agents
    assert state is not None
    assert agents is not None
    new_state_wait = state_settles_in(state, planned, arrived.message_id, now, policy.pending_confirm_seconds)
    if new_state_wait:
        return Defer(DeferReason.STATE_NEW, new_state_wait, {"thread_id": thread_id})
    held = _drafting_step(s, arrived, thread_id, now) or _claim_step(s, arrived, planned)
    if held is not None:
        return held
    burst = _bounded(planned)
    intent_id = conversation_key(arrived.grant_id, thread_id, burst.covered).replace("-", "")
    # Shadow mode takes no recipient's slot: a slot held for a reply never sent would refuse a live reply
    # to that customer for an hour after the switch (docs/operations.md).
    if s.reserved is None and not policy.shadow_mode:
        # Each recipient is charged to its own budget; the reply goes only if every one has room.
        reservations = tuple(
            Reservation(email=recipient["email"], at=now, budget=policy.recipient_budget_per_hour)
            for recipient in burst.recipients
        )
        return Reserve(reservations, intent_id)
    if s.reserved is False:
        return Skip(SkipReason.RECIPIENT_BUDGET_EXHAUSTED, {"thread_id": thread_id})
    grant = _grant(arrived.grant_id, agents)
    if s.agent_outcome is None:
        if s.time_left < policy.lease_seconds - policy.margin_seconds:
            return Defer(DeferReason.DEADLINE, 0)
        # A newcomer's burst is answered alone: the agent sees only their messages, never the customer's.
        shown = (
            burst.to_answer
            if burst.alone
            else tuple(m for m in messages if message_id(m) not in burst.hidden)
        )
        conversation = conversation_for(
            shown,
            burst,
            agent=grant,
            agent_addresses=agents.addresses,
            thread_id=thread_id,
            mode=policy.mode,
        )
        return AskAgent(conversation, burst)
    return _agent_answered(s, arrived, thread_id, burst, intent_id, grant, now)


def _drafting_step(s: Situation, arrived: MessageArrived, thread_id: str, now: int) -> Step | None:
    """In a mailbox people share, a person's draft in the thread: read the drafts, then wait for it."""
    agents = s.agents
    assert agents is not None
    if not agents.shared_by_people(arrived.grant_id):
        return None
    if s.drafts is None:
        return ReadDrafts(arrived.grant_id, thread_id)
    wait = person_drafting_for(s.drafts, now, s.policy.person_draft_wait_seconds, s.first_received_at)
    if not wait:
        return None
    if s.receives >= s.policy.max_receive_count:
        # The draft outlasted the record's receives: the message is the person's (handed off), never a
        # dead letter nobody hears of.
        return Skip(SkipReason.PERSON_DRAFTING, {"thread_id": thread_id})
    return Defer(DeferReason.PERSON_DRAFTING, wait, {"thread_id": thread_id})


def _claim_step(s: Situation, arrived: MessageArrived, planned: Burst) -> Step | None:
    """Claim the burst's emails for this grant (one grant answers an email), once per lease."""
    if s.claims is not None:
        return None
    emails = tuple(dict.fromkeys(e for m in planned.to_answer if (e := email_identity(m))))
    return ClaimEmails(arrived.grant_id, emails) if emails else None


def state_settles_in(state: ThreadState, burst: Burst, trigger_id: str, now: int, wait_seconds: int) -> int:
    """Seconds a burst that covers more than its trigger waits for a new thread state (``0``: none).

    Why: a reply sent or queued (``202``) just before the thread's state was
    lost is in no listing yet — the Agent Account queue sends it up to 90 s
    later, and the mailbox lists it up to ``MAILBOX_SETTLE_SECONDS`` after
    that — and our state no longer knows it. A burst that then covers its
    message besides a newer one threads on the newer one: a new target, a
    new ``Idempotency-Key``, and both emails go out (found by the stateful
    property tests; issue 48 for a restore and a Region's replica). A burst
    of the trigger alone keeps the key any lost attempt for it used
    (generation 0 of the same target), so Nylas replays it; a burst of more
    waits until the thread's state is ``wait_seconds`` old —
    ``PENDING_CONFIRM_SECONDS``, which the configuration requires to cover
    the queue and the settle, as the failover's handover does — when
    anything sent or queued before it began is listed and covers what it
    answered. (The settle alone, the rule before issue 48, let a reply
    queued just before a restore be listed after the follow-up's burst was
    sent: ``queued_reply_then_restored_from_an_older_backup`` with the
    mailbox's lag at the settle.)

    The state began when its table began (``ThreadState.began_ms``, on the
    worker's clock, as the lease's; ``now`` is Nylas' time): an emptied or
    recreated table, and a Region's replica (the failover's handover waits
    as long). Not when the thread's item was created: a thread no lease has
    seen and one whose item a restore or a hand deletion took away read the
    same (two messages seconds old, no reply of ours), and waiting for both
    held every new thread's first burst for ``wait_seconds`` — a customer
    who writes twice seconds apart waited ten minutes. A restore while mail
    flows is left to the runbook's stop (``docs/operations.md``).
    """
    if not state.began_ms or not any(mid != trigger_id for mid in burst.covered):
        return 0
    return max(0, -(-(state.began_ms + wait_seconds * 1000 - now * 1000) // 1000))


def unsettled_replies(state: ThreadState, now: int) -> dict[str, int]:
    """The thread's replies that may be out, or will be, and are not settled yet: intent id → Nylas time.

    Every reply intent of the outbox is one: a queued reply (``202``) counted
    from when Nylas accepted it, and one still being sent (stored, attempted,
    perhaps delivered by a send whose answer never came, perhaps only
    attempted by its own record later) counted from its last attempt (its
    store, if none) — never later than ``now``. Why the latter counts: its
    email is not in the thread yet and our state has no reply for it, yet a
    record will send it. Counting only what was recorded and what the
    listing shows let a thread with one reply in flight get a fourth within
    the hour (the small chaos run, seed 5). Not for ever: an intent no record
    touched for a lease is driven to its settlement by the thread's next
    record first (``core.delivery.drive_undriven``, issue 48), so what this
    counts is at most a lease old. Review drafts are no emails and do not count.
    """
    return {
        intent.id: state.replies.get(intent.id, now)
        if intent.state is IntentState.QUEUED
        else min(now, last_touched(intent) or now)
        for intent in state.outbox.values()
        if intent.kind is IntentKind.SEND
    }


def pending_reply_recipients(
    state: ThreadState | None, messages: Any, now: int
) -> tuple[tuple[str, ...], ...]:
    """The ``to`` addresses of each unsettled reply (:func:`unsettled_replies`) the thread read does not
    show yet: the exchange limit counts them (``replyonce.plan.automatic_exchanges``)."""
    if state is None:
        return ()
    listed = {metadata_of(m).get(INTENT_KEY) for m in messages}
    return tuple(
        _addressed_to(state.outbox[intent_id].request)
        for intent_id in unsettled_replies(state, now)
        if intent_id not in listed
    )


def _addressed_to(request: str) -> tuple[str, ...]:
    """The ``to`` addresses of a stored send request (its exact JSON body)."""
    try:
        to = json.loads(request).get("to") or []
    except (ValueError, AttributeError):
        return ()
    return tuple(str(p.get("email", "")) for p in to if isinstance(p, dict))


def _reply_budget_step(s: Situation, messages: Any, thread_id: str, now: int) -> Step | None:
    """The loop guard (invariant 4): skip, wait for unsettled replies, or ``None`` to go on.

    Full with the recorded replies and the unsettled ones, but not without the
    unsettled ones: wait until they settle, since a reply that never goes out
    was never a reply and a skip would be for good (invariant 2).
    """
    policy, state, agents = s.policy, s.state, s.agents
    assert state is not None
    assert agents is not None
    # Our replies by their metadata: a message that only shows the mailbox's address in From (a forged one
    # in the inbox) is no reply of ours, and spends nothing of the thread's budget.
    agent_dates = [m.date for m in messages if is_our_reply(m)]
    unsettled = unsettled_replies(state, now)

    def exhausted(replies: Mapping[str, int]) -> bool:
        return loop_guard_exhausted(
            replies.values(),
            agent_dates,
            now=now,
            window=REPLY_BUDGET_WINDOW_SECONDS,
            budget=policy.reply_budget_per_hour,
        )

    if not exhausted({**state.replies, **unsettled}):
        return None
    settled = {rid: t for rid, t in state.replies.items() if rid not in unsettled}
    if unsettled and not exhausted(settled):
        return Defer(
            DeferReason.REPLY_PENDING, _settles_in(state, unsettled, now, policy), {"thread_id": thread_id}
        )
    return Skip(SkipReason.REPLY_BUDGET_EXHAUSTED, {"thread_id": thread_id})


def _settles_in(state: ThreadState, unsettled: Mapping[str, int], now: int, policy: Policy) -> int:
    """Seconds until the first unsettled reply must have settled: a queued one once Nylas has had
    ``PENDING_CONFIRM_SECONDS``; one being sent within a lease of its last attempt — after which, if its
    own record has not settled it, the waiting record drives it (``core.delivery.drive_undriven``)."""
    moments = []
    for intent_id in unsettled:
        intent = state.outbox[intent_id]
        if intent.state is IntentState.QUEUED:
            moments.append(intent.accepted_at + policy.pending_confirm_seconds - now)
        else:
            moments.append(int(last_touched(intent) + policy.lease_seconds - now) + 1)
    return max(1, min(moments))


def is_our_reply(message: Message) -> bool:
    """Whether the message carries the metadata every reply of ReplyOnce is sent with (intent id and
    thread): only the API can set metadata, so no inbound mail can carry it."""
    return carries_intent_id(message) and THREAD_METADATA_KEY in metadata_of(message)


def person_drafting_for(drafts: Any, now: int, wait_seconds: int, first_seen: int = 0) -> int:
    """Seconds the agent still waits for a person's draft in the thread (``0``: none, or waited enough).

    A draft is a person's when it carries no ReplyOnce intent id (our review drafts do). The wait is
    bounded from the draft's date: then the person has sent it (the thread shows their answer, and
    the people rule skips what it answered) or left it, and the agent answers. A draft without a
    ``date`` (the API's draft object has none; the SDKs model one) waits from ``first_seen``, when the
    record first reached the replier (never from 0, which would be no wait at all); a ``date`` later
    than now counts from now.
    """
    waits = [
        min(d.date or first_seen or now, now) + wait_seconds - now for d in drafts if not carries_intent_id(d)
    ]
    return max(0, max(waits, default=0))


def _sign_detail(reason: SkipReason, message: Message, policy: Policy) -> dict[str, str]:
    """The machine sign behind a machine skip (``{"sign": ...}``): the log line says which mark refused it."""
    sign = machine_sign(message, policy.trusted_senders, policy.trusted_list_ids)
    return {"sign": sign.value} if sign is not None and sign.reason is reason else {}


def email_identity(message: Message) -> str:
    """What makes two messages in two mailboxes one email: its ``Message-ID``, its sender's inbox and its
    subject (``""`` without a ``Message-ID``, read with the thread's headers).

    Why more than the ``Message-ID``: anyone can write any ``Message-ID``, and
    a customer's is known from a Cc or a list archive; an email claimed by
    that id alone let an attacker's own copy to another grant, processed
    first, silence the customer's (``answered_by_another_agent``), as a mailer
    that reuses ids does without malice. The sender's inbox and the subject
    are the same in every copy of one email; a copy that differs in them is
    another email, and never loses to the first. Digested: the claim's key
    holds no address.
    """
    values = header_values(message, "message-id")
    if not values:
        return ""
    subject = " ".join(message.subject.split()).lower()
    sender = mailbox_key(sender_email(message))
    return "email-" + hashlib.sha256("\n".join((values[0], sender, subject)).encode()).hexdigest()[:40]


def claimed_by_another(message: Message, claims: Mapping[str, str] | None, grant_id: str) -> bool:
    """Whether another agent grant of the deployment claimed this email first (invariant 1: one email,
    in however many mailboxes it arrived — a group, an alias, Bcc — is answered by one grant)."""
    email = email_identity(message)
    return bool(claims and email and claims.get(email, grant_id) != grant_id)


PRESEND_LOOK_LIMIT = 5
"""Messages read by the look before a send: the newest few, where a person's answer since the thread read
would be (a cheap read of one small page)."""


def person_wrote_meanwhile(
    newest: Any, listing: Listing | None, agents: Agents | None, sent_folders: frozenset[str], burst: Burst
) -> str:
    """The id of a person's answer to the burst (``replyonce.plan.from_a_person``: in the mailbox's Sent
    folder, not ReplyOnce's, addressed to one of the burst's recipients) among ``newest`` that the thread
    read the burst was planned from did not hold, or ``""``. A colleague's forward elsewhere is none."""
    if agents is None:
        return ""
    planned_from = {message_id(m) for m in (listing.messages if listing else ())}
    recipients = {mailbox_key(r["email"]) for r in burst.recipients}
    for message in newest:
        if (
            from_a_person(message, agents.addresses, sent_folders)
            and message_id(message) not in planned_from
            and recipients & {mailbox_key(a) for a in recipients_of(message)}
        ):
            return message_id(message)
    return ""


def _bounded(burst: Burst) -> Burst:
    """At most :data:`MAX_BURST` messages, the newest (the rest are answered by the next reply)."""
    if len(burst.to_answer) <= MAX_BURST:
        return burst
    return replace(burst, to_answer=burst.to_answer[:MAX_BURST])


def _grant(grant_id: str, agents: Agents) -> AgentIdentity:
    return AgentIdentity(grant_id, agents.emails.get(grant_id, ""), agents.names.get(grant_id, ""))


def _agent_answered(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    burst: Burst,
    intent_id: str,
    grant: AgentIdentity,
    now: int,
) -> Step:
    """The agent answered the burst: settle it (decline, hand-off, refusal, too large) or store its reply."""
    outcome, policy, covered = s.agent_outcome, s.policy, burst.covered
    assert outcome is not None
    if policy.shadow_mode and not isinstance(outcome, Reply):
        return shadow_settle(s, burst, intent_id, thread_id, now)
    match outcome:
        case NoReply(reason=reason):
            settlement = Settlement(Status.DECLINED, covered, now, reason=reason[:500])
            return Settle(settlement, skip=SkipReason.AGENT_DECLINED)
        case Handoff(reason=reason):
            settlement = Settlement(Status.HANDED_OFF, covered, now, reason=reason[:500])
            return Settle(
                settlement, skip=SkipReason.HANDED_OFF, move_to=policy.handoff_folder, metric="HandedOff"
            )
        case AgentFailed(detail=detail):
            settlement = Settlement(Status.FAILED, covered, now, reason=f"agent: {detail}"[:500])
            # The agent refused for good: a person answers instead (invariant 7).
            return Settle(
                settlement,
                skip=SkipReason.AGENT_REJECTED,
                move_to=policy.handoff_folder,
                metric="ReplyFailed",
                metric_status="agent",
            )
        case Reply():
            return _agent_replied(s, arrived, thread_id, burst, intent_id, outcome, now)
        case unknown:
            assert_never(unknown)


def _agent_replied(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    burst: Burst,
    intent_id: str,
    outcome: Reply,
    now: int,
) -> Step:
    """The agent's reply: looked past once more for a person's answer, then stored (or too large)."""
    policy, covered = s.policy, burst.covered
    if s.looked_before_send is None:
        return LookBeforeSend(arrived.grant_id, thread_id, PRESEND_LOOK_LIMIT)
    meanwhile = person_wrote_meanwhile(
        s.looked_before_send.messages, s.listing, s.agents, s.sent_folders, burst
    )
    if meanwhile:
        # A person answered while the agent drafted: theirs is the answer (the agent's is DEBUG-logged).
        return Skip(SkipReason.ANSWERED_BY_PERSON, {"thread_id": thread_id, "person_message_id": meanwhile})
    if policy.shadow_mode:
        return shadow_settle(s, burst, intent_id, thread_id, now)
    intent = new_intent(
        intent_id=intent_id,
        thread_id=thread_id,
        target=burst.target,
        covered=covered,
        recipients=burst.recipients,
        reply=outcome,
        review=policy.review_mode or outcome.review,
        now=s.now if s.now is not None else now,
    )
    if too_large(intent):
        # Nylas refuses it for good however often it is tried: a person answers instead, as for a Handoff.
        reason = too_large_reason(intent)
        return Settle(
            Settlement(Status.HANDED_OFF, covered, now, reason=reason),
            skip=SkipReason.REPLY_TOO_LARGE,
            move_to=policy.handoff_folder,
            metric="HandedOff",
        )
    return attempt(s, intent, stored=False)
