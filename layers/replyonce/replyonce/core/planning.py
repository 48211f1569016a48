"""A new message's thread read, screened and planned: once per read, carried by every later round.

The core applies the rules of invariants 1 to 4 to the thread here: each
message screened (``replyonce.rules.screening``), the thread read back to the
trigger, the loop guard, the exchange limit, the burst (``replyonce.rules.plan``).
:func:`decide` does it; :func:`replanned`, called by
:func:`replyonce.core.learn` after each result, does it again only when a new
read changed what the plan was decided from, and the record carries the
:class:`~replyonce.core.phases.Plan` in its phase
(:class:`~replyonce.core.phases.Planned`) until then.

Above :mod:`replyonce.core.delivery` (the intents still being sent count
against the thread's budgets), :mod:`replyonce.core.phases` and
:mod:`replyonce.core.situation`.
"""

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from replyonce.core.delivery import last_touched
from replyonce.core.phases import Answered, Leased, Phase, Plan, Planned
from replyonce.core.situation import GONE, UNREAD, Situation, fetched_thread
from replyonce.core.steps import Defer, FetchMessage, ReadThread, Skip, Step
from replyonce.jobs import MessageArrived
from replyonce.policy import Policy
from replyonce.ports import Listing, Message
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.coverage import (
    INTENT_KEY,
    carries_intent_id,
    covered_in_mailbox,
    is_covered,
    metadata_of,
)
from replyonce.rules.coverage import THREAD_KEY as THREAD_METADATA_KEY
from replyonce.rules.plan import (
    Burst,
    loop_guard_exhausted,
    message_id,
    needs_another_page,
    plan_burst,
    reached,
)
from replyonce.rules.recipients import mailbox_key
from replyonce.rules.screening import Agents, header_values, machine_sign, reason_not_to_answer, sender_email
from replyonce.state import REPLY_BUDGET_WINDOW_SECONDS, IntentKind, IntentState, ThreadState


@dataclass(frozen=True)
class _Read:
    """What a plan is decided from besides the policy: the trigger, its thread, the lease's state, the
    agents and the thread read."""

    arrived: MessageArrived
    thread_id: str
    state: ThreadState
    agents: Agents
    listing: Listing


def read_from(s: Situation, state: ThreadState) -> tuple[object, ...]:
    """What a plan of ``s`` is decided from: a plan decided from the very same values is still the plan."""
    return (
        s.job,
        s.policy,
        state,
        s.listing,
        s.fetched,
        s.claims,
        s.agents,
        s.closed_folders,
        s.sent_folders,
    )


def carried(plan: Plan, s: Situation, state: ThreadState) -> bool:
    """Whether ``plan`` was decided from what ``s`` knows now (nothing read since changed it)."""
    then = plan.read_from
    now = read_from(s, state)
    return len(then) == len(now) and all(a is b for a, b in zip(then, now, strict=True))


def decide(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    state: ThreadState,
    agents: Agents,
    listing: Listing,
) -> Plan:
    """The plan of the thread read ``listing`` for the trigger ``arrived`` (invariants 1 to 4)."""
    read = _Read(arrived, thread_id, state, agents, listing)
    screen = _screen(s, read)
    messages = _thread_read(s, read, screen)
    now = listing.read_at or 0
    if not isinstance(messages, tuple):
        return Plan(messages, (), now, read_from(s, state))
    return Plan(_planned(s, read, messages, screen, now), messages, now, read_from(s, state))


def replanned(s: Situation, step: Step) -> Phase:
    """``s``'s phase once ``step``'s result is folded in: a new message's thread read is planned when it
    is read (:class:`~replyonce.core.phases.Planned`), and planned again only when a later result changed
    what the plan was decided from (another page, the message by id, the claims, an intent stored)."""
    match s.phase:
        case Planned(lease=lease, state=state, plan=plan) | Answered(lease=lease, state=state, plan=plan) if (
            carried(plan, s, state)
        ):
            return s.phase
        case Planned(lease=lease, state=state) | Answered(lease=lease, state=state):
            pass
        case Leased(lease=lease, state=state) if isinstance(step, ReadThread):
            pass
        case _:
            return s.phase
    arrived, listing, agents = s.job, s.listing, s.agents
    if not isinstance(arrived, MessageArrived) or listing is None or not listing.pages or agents is None:
        return Leased(lease, state)
    if state.intent_covering(arrived.message_id) is not None or arrived.message_id in state.covered:
        # A stored intent covers the trigger (it is driven out), or a reply did: nothing left to plan.
        return Leased(lease, state)
    thread_id = arrived.thread_id or fetched_thread(s)
    plan = decide(s, arrived, thread_id, state, agents, listing)
    if isinstance(s.phase, Answered):
        return Answered(lease, state, plan, s.phase.outcome)
    return Planned(lease, state, plan)


@dataclass(frozen=True)
class _Screen:
    """The two questions the plan asks of each message of the thread read (invariants 1 and 4)."""

    covered: Callable[[str], bool]
    """Whether a reply covers the message already: our state's settled ids, or a reply in the mailbox."""
    not_to_answer: Callable[[Message], SkipReason | None]
    """Why the message is never answered (a machine, junk, our own, another grant's email), or ``None``."""


def _screen(s: Situation, read: _Read) -> _Screen:
    """The plan's questions, over what this lease read: the thread state, the listing, the claims."""
    policy, arrived, agents = s.policy, read.arrived, read.agents
    settled = read.state.settled_ids()
    record = covered_in_mailbox(read.listing.messages)

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


def _thread_read(s: Situation, read: _Read, screen: _Screen) -> Step | tuple[Message, ...]:
    """The thread's messages once the read has reached the trigger (``docs/design.md``, "Read back to the
    message"), or the step that reads on: the next page, the trigger by id, a deferral, a skip."""
    listing, policy, arrived, thread_id = read.listing, s.policy, read.arrived, read.thread_id
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
    s: Situation, read: _Read, messages: tuple[Message, ...], screen: _Screen, now: int
) -> Step | Burst:
    """The burst one reply answers, or why none goes now: the loop guard, the exchange limit, a rule's
    skip of the trigger (``replyonce.rules.plan.plan_burst``)."""
    policy, arrived, agents, state, thread_id = (
        s.policy,
        read.arrived,
        read.agents,
        read.state,
        read.thread_id,
    )
    pending = pending_reply_recipients(state, messages, now)

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
            whole_thread=read.listing.next_cursor is None,
        )

    planned = plan(pending)
    if planned is SkipReason.EXCHANGE_LIMIT and pending and plan(()) is not SkipReason.EXCHANGE_LIMIT:
        # Full only with replies not settled yet: wait for them (one Nylas fails was never an
        # exchange, and a hand-off would be for good), as the loop guard does.
        return Defer(
            DeferReason.REPLY_PENDING,
            _settles_in(state, unsettled_replies(state, now), now, policy),
            {"thread_id": thread_id},
        )
    if isinstance(planned, SkipReason):
        trigger = next((m for m in messages if message_id(m) == arrived.message_id), {})
        return Skip(planned, {"thread_id": thread_id, **sign_detail(planned, trigger, policy)})
    # The loop guard after the plan: only a message the plan would answer is one it holds back.
    return _reply_budget_step(s, state, messages, thread_id, now) or planned


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


def pending_reply_recipients(state: ThreadState, messages: Any, now: int) -> tuple[tuple[str, ...], ...]:
    """The ``to`` addresses of each unsettled reply (:func:`unsettled_replies`) the thread read does not
    show yet: the exchange limit counts them (``replyonce.rules.plan.automatic_exchanges``)."""
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


def _reply_budget_step(
    s: Situation, state: ThreadState, messages: Any, thread_id: str, now: int
) -> Step | None:
    """The loop guard (invariant 4): skip, wait for unsettled replies, or ``None`` to go on.

    Full with the recorded replies and the unsettled ones, but not without the
    unsettled ones: wait until they settle, since a reply that never goes out
    was never a reply and a skip would be for good (invariant 2).
    """
    policy = s.policy
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
    ``pending_confirm_seconds``; one being sent within a lease of its last attempt — after which, if its
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


def sign_detail(reason: SkipReason, message: Message, policy: Policy) -> dict[str, str]:
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
