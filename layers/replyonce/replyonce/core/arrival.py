"""A new message: the arrival flow up to the lease, and what the burst's plan leads to inside it.

The thread is screened and planned in :mod:`replyonce.core.planning`, once
per read; here the plan (:func:`_plan`) meets what follows it: a new state's
wait, a person's draft, the emails' claims, the recipients' budgets, the
agent, and what its answer leads to. Above :mod:`replyonce.core.planning`,
:mod:`replyonce.core.delivery` (a stored intent that covers the message is
driven there), :mod:`replyonce.core.shadow` and :mod:`replyonce.core.situation`.
"""

from dataclasses import replace
from typing import Any, assert_never

from replyonce.agent import AgentIdentity, Handoff, NoReply, Outcome, Reply
from replyonce.core.delivery import attempt, drive
from replyonce.core.phases import Answered, Leased, Planned, answer_of
from replyonce.core.planning import carried, decide, email_identity, is_our_reply, sign_detail
from replyonce.core.shadow import shadow_settle
from replyonce.core.situation import (
    UNREAD,
    Situation,
    fetched_thread,
    settled_reason,
)
from replyonce.core.steps import (
    AgentFailed,
    AskAgent,
    ClaimEmails,
    CountAgentCall,
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
    Skip,
    Step,
    TakeLease,
)
from replyonce.jobs import MessageArrived
from replyonce.keys import conversation_key
from replyonce.ports import Listing, Message
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.agent_calls import AgentCallDecision, agent_call_decision, call_day
from replyonce.rules.conversation import conversation_for
from replyonce.rules.coverage import (
    MAX_COVERED_IDS,
    carries_intent_id,
)
from replyonce.rules.outbox import new_intent, too_large, too_large_reason
from replyonce.rules.plan import (
    Burst,
    from_a_person,
    message_id,
)
from replyonce.rules.recipients import mailbox_key
from replyonce.rules.screening import (
    Agents,
    in_closed_folder,
    recipients_of,
    sender_reason,
)
from replyonce.state import (
    IntentState,
    LedgerEntry,
    Reservation,
    Settlement,
    Status,
    ThreadState,
    thread_key,
)

MAX_BURST = MAX_COVERED_IDS
"""The largest burst one reply answers (its metadata must name every covered message)."""


def message_arrived(s: Situation, arrived: MessageArrived) -> Step:
    """A new message: what the payload shows, the ledger, the thread's lease, then under it the plan."""
    agents = _what_the_payload_shows(s, arrived)
    if not isinstance(agents, Agents):
        return agents
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
    match s.phase:
        case Leased(state=state) | Planned(state=state) | Answered(state=state):
            return _under_the_lease(s, arrived, thread_id, state, agents)
        case _:
            return TakeLease(
                thread_key(arrived.grant_id, thread_id), s.policy.lease_seconds, s.table_began_ms
            )


def is_our_echo(subject: object) -> bool:
    """Whether a record is the ``message.created`` of a reply we sent (its echo), by its payload alone.

    By the metadata our sends carry (``planning.is_our_reply``: only the API sets metadata, so no inbound
    mail has it), never by its ``from``, which any sender types. Such a record is skipped
    (``own_outbound``) whatever else is known, with no side effect: the consumer runs it without an
    idempotency record (issue 46: two writes for a record no side effect needs).
    """
    return isinstance(subject, MessageArrived) and is_our_reply(subject.payload)


def _settled_as(entry: LedgerEntry) -> SkipReason:
    """A redelivery's skip reason: what settled the message, and for a rule's hand-off the rule's own reason
    (``exchange_limit``...), so the log says why a person was told whichever record got to log it."""
    if entry.status is Status.HANDED_OFF and entry.reason in {r.value for r in HANDED_OFF_SKIPS}:
        return SkipReason(entry.reason)
    return settled_reason(entry.status)


def _what_the_payload_shows(s: Situation, arrived: MessageArrived) -> Step | Agents:
    """What is decided before any read of the message's own: whose it is, its sender, our own reply, its
    folder — or what must be looked up first (the agents, the grant's folders). The agents: go on."""
    policy = s.policy
    if arrived.grant_id not in policy.agent_grant_ids:
        return Skip(SkipReason.GRANT_NOT_AGENT)
    if not arrived.message_id:
        return Skip(SkipReason.NO_MESSAGE_ID)
    agents = s.agents
    if agents is None:
        return LookUpAgents()
    if arrived.grant_id not in agents.emails:
        # Nylas did not tell us the grant's address (a refused look-up): its own sent replies would not be
        # recognised, so nothing of its mail is answered until it does (looked up again next record).
        unknown = {"grant_id": arrived.grant_id, "detail": "grant unknown"}
        return Defer(DeferReason.CONFIGURATION, None, unknown)
    if s.closed_folders is None:
        return LookUpFolders(arrived.grant_id)
    # What the payload alone shows (its sender, its folder): no lease, no read. Headers come with the read,
    # and so does the decision on a sender with no address (sender_reason leaves it to them).
    reason = sender_reason(arrived.payload, agents, policy.trusted_senders)
    if reason is not None:
        return Skip(reason, sign_detail(reason, arrived.payload, policy))
    if is_our_reply(arrived.payload):
        # Our reply by its metadata, whatever its ``from`` (the ledger also knows it by the id the send
        # returned: ``Status.OWN_REPLY``).
        return Skip(SkipReason.OWN_OUTBOUND, {"by": "metadata"})
    if in_closed_folder(arrived.payload, s.closed_folders):
        return Skip(SkipReason.JUNK_OR_TRASH)
    return agents


def _under_the_lease(
    s: Situation, arrived: MessageArrived, thread_id: str, state: ThreadState, agents: Agents
) -> Step:
    """Holding the thread: a stored intent that covers the message is driven out; else the plan."""
    intent = state.intent_covering(arrived.message_id)
    if intent is not None:
        if intent.state is IntentState.QUEUED:
            return Skip(SkipReason.ALREADY_REPLIED, {"queued": True, "intent_id": intent.id})
        return drive(s, arrived.grant_id, intent)
    if arrived.message_id in state.covered:
        return Skip(SkipReason.ALREADY_REPLIED, {"thread_id": thread_id})
    return _plan(s, arrived, thread_id, state, agents)


def _plan(s: Situation, arrived: MessageArrived, thread_id: str, state: ThreadState, agents: Agents) -> Step:
    """Inside the lease, no intent covers the message: read the thread, then what its plan leads to.

    The plan is the one the record carries (:class:`~replyonce.core.phases.Planned`, decided when the
    thread was read), or decided now from what is known (``replyonce.core.planning.decide``).
    """
    listing = s.listing
    if listing is None or not listing.pages:
        return ReadThread(arrived.grant_id, thread_id, s.policy.thread_page_size, None)
    match s.phase:
        case Planned(plan=plan) | Answered(plan=plan) if carried(plan, s, state):
            pass
        case _:
            plan = decide(s, arrived, thread_id, state, agents, listing)
    planned, now = plan.decision, plan.now
    if not isinstance(planned, Burst):
        return no_silent_no(s, arrived, planned, now)
    ahead = _before_the_agent(s, arrived, thread_id, (state, agents), plan.messages, planned, now)
    return no_silent_no(s, arrived, ahead, now)


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
        SkipReason.AGENT_CALL_CAP,
        SkipReason.BULK_UNCONFIRMED,
        SkipReason.NO_SENDER,
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


def _before_the_agent(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    held: tuple[ThreadState, Agents],
    messages: tuple[Message, ...],
    planned: Burst,
    now: int,
) -> Step:
    """The burst is planned: what it waits for before the agent is asked (a new state, a person's draft,
    the emails' claims, the recipients' budgets), then the agent, then what its answer leads to."""
    policy, (state, agents) = s.policy, held
    new_state_wait = state_settles_in(state, planned, arrived.message_id, now, policy.pending_confirm_seconds)
    if new_state_wait:
        return Defer(DeferReason.STATE_NEW, new_state_wait, {"thread_id": thread_id})
    waits = _drafting_step(s, arrived, thread_id, agents, now) or _claim_step(s, arrived, planned)
    if waits is not None:
        return waits
    burst = _bounded(planned)
    intent_id = conversation_key(arrived.grant_id, thread_id, burst.covered).replace("-", "")
    # The grant's daily cap before the recipients' budgets: a burst over the cap is a person's, and takes
    # no recipient's slot for a reply the agent never writes (replyonce.rules.agent_calls).
    spend = agent_call_decision(policy.daily_agent_call_cap, intent_id, s.agent_calls)
    if spend is AgentCallDecision.COUNT:
        return CountAgentCall(arrived.grant_id, call_day(now), intent_id, policy.daily_agent_call_cap)
    if spend is AgentCallDecision.HAND_OFF:
        # Over the grant's cap today: a person answers (no_silent_no files it in the hand-off folder).
        detail = {"thread_id": thread_id, "daily_agent_call_cap": policy.daily_agent_call_cap}
        return Skip(SkipReason.AGENT_CALL_CAP, detail)
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
    outcome = answer_of(s.phase)
    if outcome is None:
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
    return _agent_answered(s, arrived, thread_id, burst, intent_id, (grant, agents, outcome), now)


def _drafting_step(
    s: Situation, arrived: MessageArrived, thread_id: str, agents: Agents, now: int
) -> Step | None:
    """In a mailbox people share, a person's draft in the thread: read the drafts, then wait for it."""
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
    later, and the mailbox lists it up to ``mailbox_settle_seconds`` after
    that — and our state no longer knows it. A burst that then covers its
    message besides a newer one threads on the newer one: a new target, a
    new ``Idempotency-Key``, and both emails go out (found by the stateful
    property tests; issue 48 for a restore and a Region's replica). A burst
    of the trigger alone keeps the key any lost attempt for it used
    (generation 0 of the same target), so Nylas replays it; a burst of more
    waits until the thread's state is ``wait_seconds`` old —
    ``pending_confirm_seconds``, which the configuration requires to cover
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


PRESEND_LOOK_LIMIT = 5
"""Messages read by the look before a send: the newest few, where a person's answer since the thread read
would be (a cheap read of one small page)."""


def person_wrote_meanwhile(
    newest: Any, listing: Listing | None, agents: Agents, sent_folders: frozenset[str], burst: Burst
) -> str:
    """The id of a person's answer to the burst (``replyonce.rules.plan.from_a_person``: in the mailbox's Sent
    folder, not ReplyOnce's, addressed to one of the burst's recipients) among ``newest`` that the thread
    read the burst was planned from did not hold, or ``""``. A colleague's forward elsewhere is none."""
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
    answered: tuple[AgentIdentity, Agents, Outcome | AgentFailed],
    now: int,
) -> Step:
    """The agent (``answered``: the grant it answered as, the agents, its outcome) answered the burst:
    settle it (decline, hand-off, refusal, too large) or store its reply."""
    (_, agents, outcome), policy, covered = answered, s.policy, burst.covered
    if policy.shadow_mode and not isinstance(outcome, Reply):
        return shadow_settle(s, outcome, burst, intent_id, thread_id, now)
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
            return _agent_replied(s, arrived, thread_id, burst, intent_id, (agents, outcome), now)
        case unknown:
            assert_never(unknown)


def _agent_replied(
    s: Situation,
    arrived: MessageArrived,
    thread_id: str,
    burst: Burst,
    intent_id: str,
    replied: tuple[Agents, Reply],
    now: int,
) -> Step:
    """The agent's reply: looked past once more for a person's answer, then stored (or too large)."""
    policy, covered, (agents, outcome) = s.policy, burst.covered, replied
    if s.looked_before_send is None:
        return LookBeforeSend(arrived.grant_id, thread_id, PRESEND_LOOK_LIMIT)
    meanwhile = person_wrote_meanwhile(
        s.looked_before_send.messages, s.listing, agents, s.sent_folders, burst
    )
    if meanwhile:
        # A person answered while the agent drafted: theirs is the answer (the agent's is DEBUG-logged).
        return Skip(SkipReason.ANSWERED_BY_PERSON, {"thread_id": thread_id, "person_message_id": meanwhile})
    if policy.shadow_mode:
        return shadow_settle(s, outcome, burst, intent_id, thread_id, now)
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
