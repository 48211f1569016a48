"""The replier's functional core: from what is known to the next thing to do, as one pure function.

:func:`next_step` takes a :class:`Situation` — the record (a new message, a
send outcome Nylas reported, a reconcile we scheduled), the deployment's
policy, and everything read so far: the ledger, the thread state the lease
returned, the thread listing, mailbox searches, the answers of attempts made
in this lease, the agent's outcome, Nylas' time — and returns one
:class:`Step`: read this, take the lease, ask the agent, store this intent,
attempt it, settle, skip with a reason, or defer. The shell
(``replyonce.replier``) carries the step out through a port, adds what it
learned to the situation, and asks again. No I/O here, no clock: every rule
is a table-driven test (``tests/unit/test_core.py``), and a scheduler can
interleave workers at each step (``tests/test_interleavings.py``).

Where each invariant is decided, and tested: the table of ``docs/design.md``
("The six invariants, and where each is decided"); the core decides invariant
1 (:func:`_drive`) and applies the rules of 2 to 4 (:func:`_plan`).
"""

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replyonce.agent import AgentIdentity, Conversation, Handoff, NoReply, Outcome, Reply
from replyonce.answers import Answer, Proof, proof_of, proves_generation_unsent
from replyonce.conversation import conversation_for
from replyonce.coverage import (
    INTENT_KEY,
    MAX_COVERED_IDS,
    carries_intent_id,
    covered_in_mailbox,
    is_covered,
    is_reply_of,
    metadata_of,
)
from replyonce.coverage import THREAD_KEY as THREAD_METADATA_KEY
from replyonce.keys import conversation_key
from replyonce.outbox import MAX_REQUEST_BYTES, new_intent, request_bytes, too_large
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
from replyonce.ports import ActiveRegion, FenceUnreadable, Listing, Message, SearchResult, ThreadPage
from replyonce.reasons import DeferReason, SkipReason
from replyonce.screening import (
    Agents,
    header_values,
    in_closed_folder,
    machine_sign,
    reason_not_to_answer,
    sender_email,
    sender_reason,
)
from replyonce.state import (
    REPLY_BUDGET_WINDOW_SECONDS,
    Intent,
    IntentKind,
    IntentState,
    LedgerEntry,
    Reservation,
    Settlement,
    ShadowOutcome,
    ShadowRecord,
    Status,
    ThreadState,
    skipped_record_id,
    thread_key,
)
from replyonce.subjects import MessageArrived, ReconcileDue, SendReported, Subject

KEY_LIFETIME_SECONDS = 3600
"""Nylas keeps an ``Idempotency-Key``'s answer for one hour from the first request."""
MAX_BURST = MAX_COVERED_IDS
"""The largest burst one reply answers (its metadata must name every covered message)."""


# ---- what is known -----------------------------------------------------------------------------------


class _Marker:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


UNREAD: Any = _Marker("UNREAD")
"""Not read yet."""
GONE: Any = _Marker("GONE")
"""Read: Nylas no longer has it."""


@dataclass(frozen=True)
class AgentFailed:
    """The agent refused the burst for good (``AgentRejected``, or a model's final refusal)."""

    detail: str


@dataclass(frozen=True)
class Situation:
    """Everything known about one record at one moment.

    Attributes
    ----------
    subject, policy:
        The record, and the configuration.
    agents:
        The agent grants' addresses (looked up once per container); ``None`` until then.
    closed_folders:
        The receiving grant's junk and trash folder ids; ``None`` until looked up.
    ledger:
        The message's ledger entry, ``None`` (none), or :data:`UNREAD`.
    fetched:
        The message fetched by id, :data:`GONE`, or :data:`UNREAD`.
    state:
        The thread state while we hold its lease; ``None`` without the lease.
    listing:
        The thread pages read in this lease.
    searches:
        Intent id → the latest ``metadata_pair`` search for it.
    answers:
        Intent id → the answer of the attempt made in this lease.
    attempting:
        Intents stored with an attempt counted in this lease, not attempted yet.
    reserved:
        The per-recipient budget's answer for the burst (``None``: not asked yet).
    agent_outcome:
        What the agent returned for the burst.
    drafts:
        The thread's drafts, read for a grant people share (not an Agent Account); ``None`` until read.
    claims:
        ``Message-ID`` → the agent grant that answers that email (the first to claim it), for the
        burst's messages; ``None`` until claimed.
    looked_before_send:
        The thread's newest messages, read again after the agent answered and before its reply is
        stored (a person may have answered while the agent drafted).
    shadow_recorded:
        Shadow mode, a rule's skip: whether its :class:`ShadowRecord` was written now (``True``) or was
        there already (``False``, a redelivery); ``None`` until written.
    active_region:
        The active-Region record, read for the step about to be taken (a lease or a send), or
        :data:`UNREAD`; the shell forgets it once that step is taken, so each is fenced by its own read.
    now:
        Nylas' time, from the latest answer that carried it; ``None`` before any.
    time_left:
        Seconds left before the lease or the invocation ends, whichever is first.
    """

    subject: Subject
    policy: Policy
    agents: Agents | None = None
    closed_folders: frozenset[str] | None = None
    ledger: LedgerEntry | None = UNREAD
    fetched: Message | None = UNREAD
    state: ThreadState | None = None
    listing: Listing | None = None
    searches: Mapping[str, SearchResult] = field(default_factory=dict)
    answers: Mapping[str, Answer] = field(default_factory=dict)
    attempting: frozenset[str] = frozenset()
    reserved: bool | None = None
    agent_outcome: Outcome | AgentFailed | None = None
    looked_before_send: ThreadPage | None = None
    claims: Mapping[str, str] | None = None
    drafts: tuple[Message, ...] | None = None
    shadow_recorded: bool | None = None
    active_region: ActiveRegion | FenceUnreadable = UNREAD
    now: int | None = None
    time_left: float = float("inf")


# ---- what to do next ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookUpAgents:
    """Look up every agent grant's address (once per container)."""


@dataclass(frozen=True)
class LookUpFolders:
    """Look up the receiving grant's folders (once per container)."""

    grant_id: str


@dataclass(frozen=True)
class ReadActiveRegion:
    """Read the active-Region record, strongly consistently, for the lease or the send that follows."""


@dataclass(frozen=True)
class ReadLedger:
    grant_id: str
    message_id: str


@dataclass(frozen=True)
class FetchMessage:
    grant_id: str
    message_id: str


@dataclass(frozen=True)
class TakeLease:
    thread_key: str
    duration_seconds: float


@dataclass(frozen=True)
class ReadThread:
    """Read a page of the thread; ``page_token`` ``None`` starts a fresh listing."""

    grant_id: str
    thread_id: str
    limit: int
    page_token: str | None


@dataclass(frozen=True)
class ReadDrafts:
    """Read the thread's drafts: in a mailbox people share, a person's draft means a person is on it."""

    grant_id: str
    thread_id: str


@dataclass(frozen=True)
class ClaimEmails:
    """Claim each email of the burst (by its ``Message-ID``) for this grant: one grant answers an email."""

    grant_id: str
    email_ids: tuple[str, ...]


@dataclass(frozen=True)
class LookBeforeSend:
    """Read the thread's newest messages once more, after the agent answered, before its reply is kept."""

    grant_id: str
    thread_id: str
    limit: int


@dataclass(frozen=True)
class Search:
    """Look for the intent's reply by its id (``metadata_pair=key1:<id>``) in messages or drafts."""

    grant_id: str
    kind: str
    intent_id: str


@dataclass(frozen=True)
class Reserve:
    """Count the burst's reply against each recipient's budget (idempotent per intent id)."""

    reservations: tuple[Reservation, ...]
    intent_id: str


@dataclass(frozen=True)
class AskAgent:
    conversation: Conversation
    burst: Burst


@dataclass(frozen=True)
class Store:
    """Put ``intent`` in the outbox (``attempt``: an attempt is counted in it and follows)."""

    intent: Intent
    attempt: bool = True
    metric: str = ""


@dataclass(frozen=True)
class RecordShadow:
    """Shadow mode: write that a rule skipped the message, once (a conditional put keyed by the message),
    before the record skips. A burst's record goes with its settlement (``Settlement.shadow``)."""

    record: ShadowRecord


@dataclass(frozen=True)
class Attempt:
    """Send the stored intent (or create its draft), byte for byte."""

    grant_id: str
    intent: Intent


@dataclass(frozen=True)
class Settle:
    """Write the settlement and free the lease; the record ends.

    ``skip`` makes the record's outcome a skip with that reason (logged and
    counted); ``reconcile_after`` schedules our own check of a queued reply
    (before the settlement is written); ``move_to`` files the covered
    messages in a folder afterwards (a hand-off). ``metric`` is counted, by
    ``metric_status`` when set (a refusal's Nylas status, or ``agent``): the
    alarms tell a grant that cannot send from one message that cannot be sent.
    """

    settlement: Settlement
    skip: SkipReason | None = None
    reconcile_after: int | None = None
    move_to: str = ""
    metric: str = ""
    metric_status: str = ""


@dataclass(frozen=True)
class Skip:
    reason: SkipReason
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Defer:
    """Give the record back to the queue; ``seconds`` ``None``: the standard backoff by receives."""

    reason: DeferReason
    seconds: int | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


Step = (
    LookUpAgents
    | LookUpFolders
    | ReadActiveRegion
    | ReadLedger
    | FetchMessage
    | TakeLease
    | ReadThread
    | ReadDrafts
    | ClaimEmails
    | LookBeforeSend
    | Search
    | Reserve
    | AskAgent
    | Store
    | RecordShadow
    | Attempt
    | Settle
    | Skip
    | Defer
)

_SETTLED_REASON = {
    Status.REPLIED: SkipReason.ALREADY_REPLIED,
    Status.QUEUED: SkipReason.ALREADY_REPLIED,
    Status.DRAFTED: SkipReason.ALREADY_DRAFTED,
    Status.DECLINED: SkipReason.AGENT_DECLINED,
    Status.HANDED_OFF: SkipReason.HANDED_OFF,
    Status.FAILED: SkipReason.REPLY_PREVIOUSLY_FAILED,
    Status.OWN_REPLY: SkipReason.OWN_OUTBOUND,
    Status.SHADOWED: SkipReason.ALREADY_SHADOWED,
}


def settled_reason(status: Status) -> SkipReason:
    """The skip reason of a redelivery for a message settled with ``status``."""
    return _SETTLED_REASON[status]


def may_start(time_left: float, policy: Policy) -> bool:
    """Whether a record may start: it needs a whole lease's work before the invocation ends."""
    return time_left >= policy.lease_seconds


def next_step(s: Situation) -> Step:
    """The one thing to do next for the record ``s.subject``, given everything in ``s``."""
    subject = s.subject
    if isinstance(subject, MessageArrived):
        step = _message_arrived(s, subject)
    elif isinstance(subject, SendReported):
        step = _send_reported(s, subject)
    else:
        step = _reconcile_due(s, subject)
    if isinstance(step, TakeLease | Attempt):
        step = fence(s, step)
    # The fence first: a passive Region does nothing at all; shadow mode then keeps sends from going out.
    return in_shadow(s, step) if s.policy.shadow_mode else step


# ---- shadow mode -------------------------------------------------------------------------------------

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
    and records each rule's skip (a burst's record goes with its settlement: :func:`_shadow_settle`).
    """
    if isinstance(step, Store | Attempt):
        return Defer(DeferReason.SHADOW_MODE, None, {"intent_id": step.intent.id})
    if isinstance(step, Skip) and step.reason in SHADOW_RECORDED_SKIPS and s.shadow_recorded is None:
        assert isinstance(s.subject, MessageArrived)
        arrived = s.subject
        text = s.agent_outcome.text or "" if isinstance(s.agent_outcome, Reply) else ""
        at = (s.listing.read_at if s.listing else None) or s.now or _int(arrived.payload.get("date"))
        record = ShadowRecord(
            grant_id=arrived.grant_id,
            record_id=skipped_record_id(arrived.message_id),
            thread_id=str(step.detail.get("thread_id") or arrived.thread_id or _fetched_thread(s)),
            trigger_id=arrived.message_id,
            covered=(arrived.message_id,),
            outcome=ShadowOutcome.SKIPPED,
            reason=step.reason.value,
            text=text,
            at=at,
        )
        return RecordShadow(record)
    return step


def _shadow_settle(s: Situation, burst: Burst, intent_id: str, thread_id: str, now: int) -> Step:
    """Shadow mode, the agent answered: settle the burst as ``shadowed`` with its record, in one write.

    The record goes in the settlement's transaction (conditioned on the lease), keyed by the burst's
    intent id: recorded exactly when the burst is settled — a redelivery finds the ledger's
    ``shadowed`` (``already_shadowed``), a crash before it leaves neither, a holder that lost the
    lease writes neither (the new holder records the thread). No folder move, no reservation, no
    loop-guard count.
    """
    outcome, covered = s.agent_outcome, burst.covered
    skip: SkipReason | None = None
    reason, text = "", ""
    if isinstance(outcome, NoReply):
        kind, reason, skip = ShadowOutcome.DECLINED, outcome.reason, SkipReason.AGENT_DECLINED
    elif isinstance(outcome, Handoff):
        kind, reason, skip = ShadowOutcome.HANDED_OFF, outcome.reason, SkipReason.HANDED_OFF
    elif isinstance(outcome, AgentFailed):
        kind, reason, skip = ShadowOutcome.REJECTED, f"agent: {outcome.detail}", SkipReason.AGENT_REJECTED
    else:
        assert isinstance(outcome, Reply)
        kind, text = ShadowOutcome.REPLY, outcome.text or ""
    record = ShadowRecord(
        grant_id=s.subject.grant_id,
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


# ---- only the active Region ----------------------------------------------------------------------------


def fence(s: Situation, step: TakeLease | Attempt) -> Step:
    """``step`` (a lease or a send), if this Region is the active one; else why not.

    Off (``policy.fence_region`` empty: one Region) it is ``step`` itself. On,
    every lease and every send (or draft) needs its own read of the
    active-Region record (:class:`ReadActiveRegion`, strongly consistent
    across Regions), and goes ahead only when the record names this Region
    and the handover is over. Fails closed: a record that cannot be read
    (an isolated Region) or names another Region defers the record — the
    passive Region sends nothing, whatever its replica of the state says.

    Why the lease is fenced too: a passive Region that took leases and stored
    intents would write into the state the active Region reads (a global
    table replicates both ways). Why the handover
    (``policy.handover_seconds``): a send the old Region started just before
    the failover may still land; the new Region sends only after it would show
    in the mailbox, which the new Region reads before any reply (its replica
    of the state may lag).
    """
    region = s.policy.fence_region
    if not region:
        return step
    record = s.active_region
    if record is UNREAD:
        return ReadActiveRegion()
    if isinstance(record, FenceUnreadable):
        return Defer(DeferReason.REGION_ISOLATED, None, {"region": region, "detail": record.detail})
    if record.region != region:
        passive = {"region": region, "active_region": record.region or "(none)", "epoch": record.epoch}
        return Defer(DeferReason.REGION_PASSIVE, None, passive)
    handover_ends = record.since + s.policy.handover_seconds
    if record.read_at < handover_ends:
        waiting = {"region": region, "epoch": record.epoch}
        return Defer(DeferReason.REGION_HANDOVER, math.ceil(handover_ends - record.read_at), waiting)
    return step


# ---- a new message -----------------------------------------------------------------------------------


def _message_arrived(s: Situation, arrived: MessageArrived) -> Step:
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
    if arrived.payload.get("from"):
        reason = sender_reason(arrived.payload, s.agents, policy.trusted_senders)
        if reason is not None:
            return Skip(reason, _sign_detail(reason, arrived.payload, policy))
    if is_our_reply(arrived.payload):
        # Our reply by its metadata, whatever its ``from`` (the ledger also knows it by the id the send
        # returned: ``Status.OWN_REPLY``).
        return Skip(SkipReason.OWN_OUTBOUND, {"by": "metadata"})
    if in_closed_folder(arrived.payload, s.closed_folders):
        return Skip(SkipReason.JUNK_OR_TRASH)
    if s.ledger is UNREAD:
        return ReadLedger(arrived.grant_id, arrived.message_id)
    if s.ledger is not None:
        return Skip(settled_reason(s.ledger.status), {"reply_message_id": s.ledger.reply_message_id})
    thread_id = arrived.thread_id or _fetched_thread(s)
    if not thread_id:
        if s.fetched is UNREAD:
            return FetchMessage(arrived.grant_id, arrived.message_id)
        return Skip(SkipReason.MESSAGE_GONE)
    if s.state is None:
        return TakeLease(thread_key(arrived.grant_id, thread_id), policy.lease_seconds)
    intent = s.state.intent_covering(arrived.message_id)
    if intent is not None:
        if intent.state is IntentState.QUEUED:
            return Skip(SkipReason.ALREADY_REPLIED, {"queued": True, "intent_id": intent.id})
        return _drive(s, arrived.grant_id, intent)
    if arrived.message_id in s.state.covered:
        return Skip(SkipReason.ALREADY_REPLIED, {"thread_id": thread_id})
    return _plan(s, arrived, thread_id)


def _fetched_thread(s: Situation) -> str:
    if s.fetched is UNREAD or s.fetched is GONE or s.fetched is None:
        return ""
    return str(s.fetched.get("thread_id") or s.fetched.get("id") or "")


def _plan(s: Situation, arrived: MessageArrived, thread_id: str) -> Step:
    """Inside the lease, no intent covers the message: read the thread and plan the burst's reply."""
    policy, state, agents = s.policy, s.state, s.agents
    assert state is not None
    assert agents is not None
    window = policy.thread_page_size
    if s.listing is None or not s.listing.pages:
        return ReadThread(arrived.grant_id, thread_id, window, None)
    listing = s.listing
    settled = state.settled_ids()
    record = covered_in_mailbox(listing.messages, agents.addresses)

    def covered(mid: str) -> bool:
        return mid in settled or is_covered(mid, record)

    def not_to_answer(message: Message) -> SkipReason | None:
        reason = reason_not_to_answer(
            message,
            grant_id=arrived.grant_id,
            agents=agents,
            trusted_senders=policy.trusted_senders,
            closed_folder_ids=s.closed_folders or frozenset(),
            trusted_lists=policy.trusted_lists,
        )
        if reason is None and claimed_by_another(message, s.claims, arrived.grant_id):
            return SkipReason.ANSWERED_BY_OTHER_AGENT
        return reason

    last_page = listing.pages[-1]
    seen = reached(listing.messages, arrived.message_id)
    if (
        listing.next_cursor
        and len(listing.pages) < policy.max_thread_pages
        and needs_another_page(
            last_page.messages, is_covered=covered, reason_not_to_answer=not_to_answer, trigger_seen=seen
        )
    ):
        return ReadThread(arrived.grant_id, thread_id, window, listing.next_cursor)
    messages = listing.messages
    if not seen and listing.next_cursor:
        # The bound came before the trigger: its cover, if any, is on a page not read. Neither answered
        # blind nor skipped (it may be unanswered): it waits, and dead-letters for an operator.
        return Defer(
            DeferReason.TRIGGER_NOT_REACHED, None, {"thread_id": thread_id, "pages": len(listing.pages)}
        )
    if arrived.message_id not in {message_id(m) for m in messages}:
        # The whole thread was read and does not list it yet (a listing's lag): every cover was seen.
        if s.fetched is UNREAD:
            return FetchMessage(arrived.grant_id, arrived.message_id)
        if s.fetched is GONE or s.fetched is None:
            return Skip(SkipReason.MESSAGE_GONE)
        messages = (*messages, s.fetched)
    now = listing.read_at or 0
    budget_step = _reply_budget_step(s, messages, thread_id, now)
    if budget_step is not None:
        return budget_step
    pending = pending_reply_recipients(s.state, messages, now)

    def plan(pending_replies: tuple[tuple[str, ...], ...]) -> Burst | SkipReason:
        return plan_burst(
            arrived.message_id,
            messages,
            is_covered=covered,
            reason_not_to_answer=not_to_answer,
            own_addresses=agents.addresses,
            trusted_senders=policy.trusted_senders,
            trusted_lists=policy.trusted_lists,
            now=now,
            person_hold_seconds=policy.person_hold_seconds,
            max_recipients=policy.max_recipients,
            max_automatic_exchanges=policy.max_automatic_exchanges,
            pending_replies=pending_replies,
        )

    planned = plan(pending)
    if planned is SkipReason.EXCHANGE_LIMIT and pending and plan(()) is not SkipReason.EXCHANGE_LIMIT:
        # Full only with replies not settled yet: wait for them (one Nylas fails was never an
        # exchange, and a skip would be for good), as the loop guard does.
        return Defer(
            DeferReason.REPLY_PENDING,
            _settles_in(s.state, unsettled_replies(s.state, now), now, policy),
            {"thread_id": thread_id},
        )
    if isinstance(planned, SkipReason):
        trigger = next((m for m in messages if message_id(m) == arrived.message_id), {})
        return Skip(planned, {"thread_id": thread_id, **_sign_detail(planned, trigger, policy)})
    new_state_wait = state_settles_in(state, planned, arrived.message_id, now, policy.settle_seconds)
    if new_state_wait:
        return Defer(DeferReason.STATE_NEW, new_state_wait, {"thread_id": thread_id})
    if agents.shared_by_people(arrived.grant_id):
        if s.drafts is None:
            return ReadDrafts(arrived.grant_id, thread_id)
        wait = person_drafting_for(s.drafts, agents, now, policy.person_draft_wait_seconds)
        if wait:
            return Defer(DeferReason.PERSON_DRAFTING, wait, {"thread_id": thread_id})
    if s.claims is None:
        emails = tuple(dict.fromkeys(e for m in planned.to_answer if (e := email_id(m))))
        if emails:
            return ClaimEmails(arrived.grant_id, emails)
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
        conversation = conversation_for(
            messages, burst, agent=grant, agent_addresses=agents.addresses, thread_id=thread_id
        )
        return AskAgent(conversation, burst)
    return _agent_answered(s, arrived, thread_id, burst, intent_id, grant, now)


def state_settles_in(state: ThreadState, burst: Burst, trigger_id: str, now: int, settle_seconds: int) -> int:
    """Seconds a burst that covers more than its trigger waits for a new thread state (``0``: none).

    Why: a reply sent or queued (``202``) just before the state table was
    emptied is in no listing yet — the Agent Account queue lists it only once
    it leaves, within 90 s — and our state no longer knows it. A burst that
    then covers its message besides a newer one threads on the newer one: a
    new target, a new ``Idempotency-Key``, and both emails go out (found by
    the stateful property tests). A burst of the trigger alone keeps the
    key any lost attempt for it used (generation 0 of the same target), so
    Nylas replays it; a burst of more waits until the table is
    ``MAILBOX_SETTLE_SECONDS`` old, when anything sent before it began is
    listed and covers what it answered. ``state.since_ms`` is when the table
    the thread item was created in began (``table#began``, on the worker's
    clock, as the lease's); ``now`` is Nylas' time. The cost: bursts in an
    emptied table's first five minutes wait; a table in service never.
    """
    if not state.since_ms or not any(mid != trigger_id for mid in burst.covered):
        return 0
    return max(0, -(-(state.since_ms + settle_seconds * 1000 - now * 1000) // 1000))


def unsettled_replies(state: ThreadState, now: int) -> dict[str, int]:
    """The thread's replies that may be out, or will be, and are not settled yet: intent id → Nylas time.

    Every reply intent of the outbox is one: a queued reply (``202``) counted
    from when Nylas accepted it, and one still being sent (stored, attempted,
    perhaps delivered by a send whose answer never came, perhaps only
    attempted by its own record later) counted *now*, the latest moment it can
    go out. Why the latter counts: its email is not in the thread yet and our
    state has no reply for it, yet its record will send it. Counting only
    what was recorded and what the listing shows let a thread with one reply
    in flight get a fourth within the hour (the small chaos run, seed 5).
    Review drafts are no emails and do not count.
    """
    return {
        intent.id: state.replies.get(intent.id, now) if intent.state is IntentState.QUEUED else now
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
    agent_dates = [_int(m.get("date")) for m in messages if sender_email(m) in agents.addresses]
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
    ``PENDING_CONFIRM_SECONDS``; one being sent within its record's lease."""
    moments = []
    for intent_id in unsettled:
        intent = state.outbox[intent_id]
        if intent.state is IntentState.QUEUED:
            moments.append(intent.accepted_at + policy.pending_confirm_seconds - now)
        else:
            moments.append(int(policy.lease_seconds))
    return max(1, min(moments))


def is_our_reply(message: Message) -> bool:
    """Whether the message carries the metadata every reply of ReplyOnce is sent with (intent id and
    thread): only the API can set metadata, so no inbound mail can carry it."""
    return carries_intent_id(message) and isinstance(metadata_of(message).get(THREAD_METADATA_KEY), str)


def person_drafting_for(drafts: Any, agents: Agents, now: int, wait_seconds: int) -> int:
    """Seconds the agent still waits for a person's draft in the thread (``0``: none, or waited enough).

    A draft is a person's when it carries no ReplyOnce intent id (our review drafts do). The wait is
    bounded from the draft's date: then the person has sent it (the thread shows their answer, and
    the people rule skips what it answered) or left it, and the agent answers.
    """
    waits = [_int(d.get("date")) + wait_seconds - now for d in drafts if not carries_intent_id(d)]
    return max(0, max(waits, default=0))


def _sign_detail(reason: SkipReason, message: Message, policy: Policy) -> dict[str, str]:
    """The machine sign behind a machine skip (``{"sign": ...}``): the log line says which mark refused it."""
    sign = machine_sign(message, policy.trusted_senders, policy.trusted_lists)
    return {"sign": sign.value} if sign is not None and sign.reason is reason else {}


def email_id(message: Message) -> str:
    """The ``Message-ID`` header of the message (read with the thread), or ``""``."""
    values = header_values(message, "message-id")
    return values[0] if values else ""


def claimed_by_another(message: Message, claims: Mapping[str, str] | None, grant_id: str) -> bool:
    """Whether another agent grant of the deployment claimed this email first (invariant 1: one email,
    in however many mailboxes it arrived — a group, an alias, Bcc — is answered by one grant)."""
    email = email_id(message)
    return bool(claims and email and claims.get(email, grant_id) != grant_id)


PRESEND_LOOK_LIMIT = 5
"""Messages read by the look before a send: the newest few, where a person's answer since the thread read
would be (a cheap read of one small page)."""


def person_wrote_meanwhile(newest: Any, listing: Listing | None, agents: Agents | None) -> str:
    """The id of a person's message (from the mailbox, not ReplyOnce's) among ``newest`` that the thread
    read the burst was planned from did not hold, or ``""``."""
    if agents is None:
        return ""
    planned_from = {message_id(m) for m in (listing.messages if listing else ())}
    for message in newest:
        if from_a_person(message, agents.addresses) and message_id(message) not in planned_from:
            return message_id(message)
    return ""


def _bounded(burst: Burst) -> Burst:
    """At most :data:`MAX_BURST` messages, the newest (the rest are answered by the next reply)."""
    if len(burst.to_answer) <= MAX_BURST:
        return burst
    return Burst(burst.to_answer[:MAX_BURST], burst.target, burst.recipients)


def _grant(grant_id: str, agents: Agents) -> AgentIdentity:
    return AgentIdentity(grant_id, agents.emails.get(grant_id, ""), agents.names.get(grant_id, ""))


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


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
    if policy.shadow_mode and not isinstance(outcome, Reply):
        return _shadow_settle(s, burst, intent_id, thread_id, now)
    if isinstance(outcome, NoReply):
        settlement = Settlement(Status.DECLINED, covered, now, reason=outcome.reason[:500])
        return Settle(settlement, skip=SkipReason.AGENT_DECLINED)
    if isinstance(outcome, Handoff):
        settlement = Settlement(Status.HANDED_OFF, covered, now, reason=outcome.reason[:500])
        return Settle(
            settlement, skip=SkipReason.HANDED_OFF, move_to=policy.handoff_folder, metric="HandedOff"
        )
    if isinstance(outcome, AgentFailed):
        settlement = Settlement(Status.FAILED, covered, now, reason=f"agent: {outcome.detail}"[:500])
        return Settle(settlement, skip=SkipReason.AGENT_REJECTED, metric="ReplyFailed", metric_status="agent")
    assert isinstance(outcome, Reply)
    if s.looked_before_send is None:
        return LookBeforeSend(arrived.grant_id, thread_id, PRESEND_LOOK_LIMIT)
    meanwhile = person_wrote_meanwhile(s.looked_before_send.messages, s.listing, s.agents)
    if meanwhile:
        # A person answered while the agent drafted: theirs is the answer (the agent's is DEBUG-logged).
        return Skip(SkipReason.ANSWERED_BY_PERSON, {"thread_id": thread_id, "person_message_id": meanwhile})
    if policy.shadow_mode:
        return _shadow_settle(s, burst, intent_id, thread_id, now)
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
        reason = f"reply_too_large: {request_bytes(intent)} bytes, Nylas takes {MAX_REQUEST_BYTES}"
        return Settle(
            Settlement(Status.HANDED_OFF, covered, now, reason=reason),
            skip=SkipReason.REPLY_TOO_LARGE,
            move_to=policy.handoff_folder,
            metric="HandedOff",
        )
    return _attempt(s, intent, stored=False)


# ---- getting a stored intent out exactly once --------------------------------------------------------


def _drive(s: Situation, grant_id: str, intent: Intent) -> Step:
    """The next step for a stored intent: attempt it, learn what an attempt did, or ask the mailbox.

    Invariant 1 is decided here. An attempt is made only when nothing can
    be out yet, or under the same ``Idempotency-Key`` while it lives (Nylas
    then replays the first answer instead of sending). Anything else that
    may have sent — no answer, a 5xx, a replay, a 409, a crash mid-attempt,
    the key's hour gone — is settled by the mailbox alone: the reply found
    (thread listing or ``metadata_pair``), or absent from both *after the
    settle time*, and only then the next key.
    """
    answer = s.answers.get(intent.id)
    if answer is not None:
        return _after_answer(s, grant_id, intent, answer)
    if intent.id in s.attempting:
        # Checked again, not only before the attempt was stored: the write itself can take long
        # (a slow or paused store). A send that starts with less than a whole send left may land
        # after the lease ends, when the next holder has read the thread without it (invariant 3).
        # The counted attempt is then what a crash before the send leaves: the same key, later.
        if not _send_fits(s):
            return Defer(DeferReason.DEADLINE, 0)
        return Attempt(grant_id, intent)
    found = _evidence(s, intent)
    if found is not None:
        return _found(s, intent, found)
    if intent.attempts == 0:
        if not fate_unknown(intent, s.now, s.policy):
            return _attempt(s, intent)
        if s.now is None:
            # Whether its key's hour is over is Nylas' time; the read also shows the thread as it is.
            return ReadThread(grant_id, intent.thread_id, s.policy.thread_page_size, None)
        return _after_settle(
            s,
            grant_id,
            intent,
            wait_until=intent.created_at + s.policy.settle_seconds,
            on_absent=lambda: _attempt(s, intent),
        )
    if s.now is None:
        # Nylas' time decides whether the key still lives; the read also shows the thread as it is.
        return ReadThread(grant_id, intent.thread_id, s.policy.thread_page_size, None)
    if intent.kind is IntentKind.SEND and not intent.key_stuck and _key_alive(intent, s.now, s.policy):
        return _attempt(s, intent)
    return _after_settle(
        s,
        grant_id,
        intent,
        wait_until=intent.last_attempt_at + s.policy.settle_seconds,
        on_absent=lambda: _attempt(s, intent.next_generation(), metric="KeyGenerationAdvanced"),
    )


def fate_unknown(intent: Intent, now: int | None, policy: Policy) -> bool:
    """Whether an intent stored with no attempt counted must be looked for in the mailbox before a send
    (``now`` ``None``: Nylas' time not known yet, so it may be past its key's hour).

    Why: a table restored to a moment between the intent's store and its
    attempt (routine when the agent takes the ~20 s that leave no time for a
    send in the same lease) brings it back with no attempt, while the state
    that was lost may have sent it. Within its key's hour — counted from its
    store, the earliest any lost attempt could be — the same key only
    replays what such an attempt did; after it, only the mailbox can tell.
    """
    if intent.attempts or not intent.created_at:
        return False
    return now is None or not _key_alive(intent, now, policy, intent.created_at)


def _key_alive(intent: Intent, now: int, policy: Policy, first_request_at: int | None = None) -> bool:
    """Whether the key still fences: Nylas forgets it an hour after its first request (a margin earlier).

    ``first_request_at`` defaults to the intent's first counted attempt; for an intent with none, its
    storing is the earliest any lost attempt of it could have been made.
    """
    first = intent.first_attempt_at if first_request_at is None else first_request_at
    return now < first + KEY_LIFETIME_SECONDS - policy.key_margin_seconds


def _send_fits(s: Situation) -> bool:
    """Whether a whole send (its timeout and the margin) ends before the lease or the invocation does."""
    return s.time_left >= s.policy.send_timeout_seconds + s.policy.margin_seconds


def _attempt(s: Situation, intent: Intent, *, stored: bool = True, metric: str = "") -> Step:
    """Store ``intent`` with one more attempt counted, if a whole attempt fits in the time left."""
    if not _send_fits(s):
        if not stored:
            return Store(intent, attempt=False, metric=metric)
        return Defer(DeferReason.DEADLINE, 0)
    now = s.now if s.now is not None else intent.created_at
    return Store(intent.attempting(now), metric=metric)


def _after_answer(s: Situation, grant_id: str, intent: Intent, answer: Answer) -> Step:
    """What the answer to this lease's attempt proves, and the step it leads to (``replyonce.answers``)."""
    policy = s.policy
    now = answer.nylas_time or s.now or intent.last_attempt_at
    proof = proof_of(answer, had_custom_headers=intent.has_custom_headers)
    detail = {
        "status": answer.status,
        "error_type": answer.error_type,
        "replayed": answer.replayed,
        "generation": intent.generation,
        "intent_id": intent.id,
    }
    if proof is Proof.SENT:
        status = Status.DRAFTED if intent.kind is IntentKind.DRAFT else Status.REPLIED
        return Settle(_sent(intent, status, now, answer.message_id))
    if proof is Proof.QUEUED:
        settlement = Settlement(
            Status.QUEUED,
            intent.covered,
            now,
            intent.queued(now, answer.message_id),
            keep=True,
            counts_as_reply=True,
            reply_message_id=answer.message_id,
            replied_to=intent.target_id,
        )
        return Settle(settlement, reconcile_after=policy.pending_confirm_seconds, metric="ReplyQueued")
    if proof is Proof.MAY_HAVE_SENT and intent.kind is IntentKind.SEND:
        return Defer(DeferReason.SEND_RETRY, answer.retry_after_seconds, detail)
    if proof.may_have_sent:
        # The key can only replay this answer (or a draft has no key at all): only the mailbox can tell.
        return Store(intent.stuck(), attempt=False)
    refused_headers = proof is Proof.HEADERS_REFUSED
    metric = "CustomHeadersRefused" if refused_headers else "KeyGenerationAdvanced"
    if (
        proof is not Proof.REJECTED
        and proves_generation_unsent(answer, intent.attempts)
        and (refused_headers or answer.replayed)
    ):
        # Nothing went out under this key, and it would replay the refusal for its hour (a rate limit or
        # an account limit the operator may have cleared since; headers it will refuse again): the next key.
        next_intent = intent.next_generation(without_custom_headers=refused_headers)
        return _attempt(s, next_intent, metric=metric)
    if refused_headers:
        # Refused, but an earlier attempt under this key may have sent: the mailbox first.
        return Store(intent.stuck(drop_headers=True), attempt=False, metric=metric)
    if proof is Proof.NOT_SENT:
        reason = DeferReason.UNAUTHORIZED if answer.status == 401 else DeferReason.RATE_LIMITED
        return Defer(reason, answer.retry_after_seconds, detail)
    if proof is Proof.REJECTED:
        reason = f"{answer.status} {answer.error_type}".strip()
        settlement = Settlement(Status.FAILED, intent.covered, now, intent, reason=reason)
        return Settle(
            settlement,
            skip=SkipReason.SEND_REJECTED,
            metric="ReplyFailed",
            metric_status=str(answer.status),
        )
    return Defer(DeferReason.ACCOUNT_LIMITED, policy.account_retry_seconds, detail)


def _sent(intent: Intent, status: Status, at: int, reply_message_id: str) -> Settlement:
    return Settlement(
        status,
        intent.covered,
        at,
        intent,
        counts_as_reply=status is Status.REPLIED,
        reply_message_id=reply_message_id,
        replied_to=intent.target_id,
    )


def _evidence(s: Situation, intent: Intent) -> Message | None:
    """The intent's reply (or draft) as the mailbox shows it: in the listing, or found by its id."""
    if s.agents is None:
        return None
    addresses = s.agents.addresses
    candidates = list(s.listing.messages if s.listing else ())
    search = s.searches.get(intent.id)
    if search is not None:
        candidates.extend(search.found)
    return next((m for m in candidates if is_reply_of(m, intent.id, addresses)), None)


def _found(s: Situation, intent: Intent, message: Message) -> Step:
    """The reply is in the mailbox: settle it as what the mailbox shows (a draft, or a sent reply)."""
    at = _int(message.get("date")) or s.now or intent.last_attempt_at
    is_draft = message.get("object") == "draft"
    status = Status.DRAFTED if is_draft else Status.REPLIED
    return Settle(_sent(intent, status, at, message_id(message)), metric="ReplyFoundInMailbox")


def _after_settle(s: Situation, grant_id: str, intent: Intent, *, wait_until: int, on_absent: Any) -> Step:
    """Whether the reply is out, asked of the mailbox once it could show it (Nylas documents no index delay).

    Absence counts only when both the thread listing and the
    ``metadata_pair`` search were read after ``wait_until``; a failed search
    is *unknown* and defers this intent only.
    """
    assert s.now is not None
    if s.now < wait_until:
        return Defer(DeferReason.SEND_UNCERTAIN, wait_until - s.now, {"intent_id": intent.id})
    if s.listing is None or (s.listing.read_at or 0) < wait_until:
        return ReadThread(grant_id, intent.thread_id, s.policy.thread_page_size, None)
    search = s.searches.get(intent.id)
    if search is None or (not search.failed and (search.nylas_time or 0) < wait_until):
        kind = "drafts" if intent.kind is IntentKind.DRAFT else "messages"
        return Search(grant_id, kind, intent.id)
    if search.failed:
        return Defer(DeferReason.SEARCH_FAILED, None, {"intent_id": intent.id, "detail": search.failed})
    return on_absent()


# ---- a send outcome Nylas reported, and our own reconcile --------------------------------------------


def _outcome_intent(s: Situation, grant_id: str, thread_id: str, intent_id: str) -> Step | Intent:
    """The stored intent a send outcome is about, or the step needed first (agents, lease, a skip)."""
    if grant_id not in s.policy.agent_grant_ids:
        return Skip(SkipReason.GRANT_NOT_AGENT)
    if not intent_id or not thread_id:
        return Skip(SkipReason.NOT_OUR_REPLY)
    if s.agents is None:
        return LookUpAgents()
    if s.state is None:
        return TakeLease(thread_key(grant_id, thread_id), s.policy.lease_seconds)
    intent = s.state.outbox.get(intent_id)
    if intent is None:
        return Skip(SkipReason.NOT_OUR_REPLY, {"intent_id": intent_id})
    return intent


def _send_reported(s: Situation, reported: SendReported) -> Step:
    """``message.delivered`` confirms a queued reply; ``message.send_failed`` re-opens it, once."""
    found = _outcome_intent(s, reported.grant_id, reported.thread_id, reported.intent_id)
    if not isinstance(found, Intent):
        return found
    intent = found
    if intent.id in s.attempting or intent.id in s.answers:
        return _drive(s, reported.grant_id, intent)
    at = s.now or intent.accepted_at or intent.last_attempt_at
    if reported.delivered:
        message = reported.reply_message_id or intent.reply_message_id
        return Settle(_sent(intent, Status.REPLIED, at, message), metric="QueuedReplyDelivered")
    stale = (
        reported.reply_message_id
        and intent.reply_message_id
        and reported.reply_message_id != intent.reply_message_id
    )
    if intent.state is not IntentState.QUEUED or stale:
        return Skip(SkipReason.NOT_OUR_REPLY, {"intent_id": intent.id, "state": intent.state.value})
    if intent.reopened >= 1:
        settlement = Settlement(Status.FAILED, intent.covered, at, intent, reason="send_failed twice")
        return Settle(settlement, skip=SkipReason.SEND_REJECTED, metric="QueuedReplyFailed")
    if s.now is None:
        return ReadThread(reported.grant_id, intent.thread_id, s.policy.thread_page_size, None)
    return _attempt(s, intent.reopen(), metric="QueuedReplyReopened")


def _reconcile_due(s: Situation, due: ReconcileDue) -> Step:
    """A queued reply nothing confirmed in ``PENDING_CONFIRM_SECONDS``: the mailbox decides."""
    found = _outcome_intent(s, due.grant_id, due.thread_id, due.intent_id)
    if not isinstance(found, Intent):
        if isinstance(found, Skip) and found.reason is SkipReason.NOT_OUR_REPLY:
            # Settled meanwhile (delivered, failed, or found): nothing left to reconcile.
            return Skip(SkipReason.ALREADY_REPLIED, {"reconcile": True, "intent_id": due.intent_id})
        return found
    intent = found
    if intent.state is not IntentState.QUEUED or intent.id in s.attempting or intent.id in s.answers:
        return _drive(s, due.grant_id, intent)
    if s.now is None:
        return ReadThread(due.grant_id, intent.thread_id, s.policy.thread_page_size, None)
    evidence = _evidence(s, intent)
    if evidence is not None:
        return _found(s, intent, evidence)

    def reopen() -> Step:
        if intent.reopened >= 1:
            settlement = Settlement(Status.FAILED, intent.covered, s.now or 0, intent, reason="never sent")
            return Settle(settlement, skip=SkipReason.SEND_REJECTED, metric="QueuedReplyFailed")
        return _attempt(s, intent.reopen(), metric="QueuedReplyReopened")

    return _after_settle(
        s,
        due.grant_id,
        intent,
        wait_until=intent.accepted_at + s.policy.pending_confirm_seconds,
        on_absent=reopen,
    )


# ---- when a deferred record comes back ---------------------------------------------------------------

_MAX_VISIBILITY_SECONDS = 12 * 3600  # SQS ChangeMessageVisibility's limit
_CONTENDED = frozenset({DeferReason.THREAD_BUSY, DeferReason.NOTIFICATION_IN_PROGRESS})


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
    backs off from ``BUSY_RETRY_SECONDS``, doubling per receive, but never
    waits longer than the hold it waits for can last (``hint_seconds``: the
    holder's lease, or the in-progress record's expiry) — and never less than
    that hold spread over the receives left before ``max_receives``
    (``MAX_RECEIVE_COUNT``, the queue's ``maxReceiveCount``). Why the floor:
    the doubling alone adds up to 1 + 2 + ... + 64 = 127 s over 8 receives,
    while a lease lasts up to 220 s and an in-progress record up to the
    function's 260 s; a record waiting on a crashed holder was dead-lettered
    before the hold ended. With each delay at least ``hold / receives left``,
    the delays from any receive on add up to at least the hold (by induction:
    what is left of the hold after one delay is spread over one receive
    fewer), so the last receive comes after the hold has ended, whatever the
    in-process wait did.

    Other failures back off from ``RETRY_BASE_SECONDS``, capped; a deferral
    that knows its time (``Retry-After``, the settle time, an account limit's
    wait, a deadline) uses it. None waits longer than ``RETRY_MAX_SECONDS``:
    a record that comes back early finds the same reason and defers again,
    while one that waits too long is late.
    """
    doubling = 2 ** min(max(receives, 1) - 1, 16)
    if reason in _CONTENDED:
        delay = busy_base_seconds * doubling
        if hint_seconds is not None:
            hold = max(0, int(hint_seconds))
            receives_left = max(1, max_receives - max(receives, 1))
            delay = min(hold, max(delay, -(-hold // receives_left)))
    elif hint_seconds is not None:
        delay = int(hint_seconds)
    else:
        delay = retry_base_seconds * doubling
    return max(0, min(delay, retry_max_seconds, _MAX_VISIBILITY_SECONDS))


__all__ = [
    "GONE",
    "PRESEND_LOOK_LIMIT",
    "UNREAD",
    "AgentFailed",
    "AskAgent",
    "Attempt",
    "ClaimEmails",
    "Defer",
    "FetchMessage",
    "LookBeforeSend",
    "LookUpAgents",
    "LookUpFolders",
    "ReadActiveRegion",
    "ReadDrafts",
    "ReadLedger",
    "ReadThread",
    "RecordShadow",
    "Reserve",
    "Search",
    "Settle",
    "Situation",
    "Skip",
    "Step",
    "Store",
    "TakeLease",
    "fence",
    "may_start",
    "next_step",
    "retry_delay",
    "settled_reason",
]
