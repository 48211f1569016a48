"""What the replier remembers of a thread, a message, a recipient and a shadow run: the values the core reads.

:class:`ThreadState` (the thread's lease, its replies, what is settled, the
outbox of :class:`Intent` s), :class:`LedgerEntry` (how one inbound message
was settled), :class:`Reservation` (a reply counted against a recipient's
hour), :class:`ShadowRecord` and :class:`Settlement` (what one transaction
writes). Plain values: how the state table keeps them — keys, attribute
names, DynamoDB's attribute-value form — is ``replyonce.adapters.state_items``, the
one owner of the item layout (as Powertools keeps ``DataRecord`` apart from
its DynamoDB persistence layer).
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from replyonce.keys import KEY_SCHEME

THREAD_PREFIX = "thread#"
COVERED_MEMORY = 50
"""How many recently settled message ids the thread item remembers."""
REPLY_BUDGET_WINDOW_SECONDS = 3600
"""The loop guard's window (``REPLY_BUDGET_PER_HOUR``) and the per-recipient budget's hour."""


class Status(StrEnum):
    """How an inbound message was settled (the ledger's ``status``)."""

    REPLIED = "replied"
    """A reply covering it went out (a ``200``, the reply found in the mailbox, or ``message.delivered``)."""
    QUEUED = "queued"
    """Nylas accepted a reply covering it (``202``) and has not confirmed it went out."""
    DRAFTED = "drafted"
    """A draft covering it waits in the mailbox for a person (review mode)."""
    DECLINED = "declined"
    """The agent chose not to answer (``NoReply``)."""
    HANDED_OFF = "handed_off"
    """The agent left it for a person (``Handoff``)."""
    FAILED = "failed"
    """Its reply was refused for good (by Nylas or by the agent)."""
    SHADOWED = "shadowed"
    """Shadow mode decided it (a reply, a decline, a hand-off, a refusal) and recorded that, sending
    nothing (``REPLY_MODE=shadow``): never offered to the agent again, in shadow mode or after the switch."""
    OWN_REPLY = "own_reply"
    """It *is* one of our replies (the id the send returned): its own notification is never answered,
    whatever its ``from`` says (a provider's rewrite, a send-as alias)."""


class IntentKind(StrEnum):
    SEND = "send"
    """``POST /messages/send`` with an ``Idempotency-Key``."""
    DRAFT = "draft"
    """``POST /drafts`` (review mode): no key exists, so only the mailbox can tell a draft was made."""


class IntentState(StrEnum):
    SENDING = "sending"
    """Being sent: no answer has settled it."""
    QUEUED = "queued"
    """Nylas answered ``202``: waiting for ``message.delivered``, ``message.send_failed`` or the reconcile."""


def thread_key(grant_id: str, thread_id: str) -> str:
    return f"{THREAD_PREFIX}{grant_id}#{thread_id}"


def _is_x_header(header: Any) -> bool:
    return isinstance(header, Mapping) and str(header.get("name", "")).lower().startswith("x-")


@dataclass(frozen=True)
class Intent:
    """A reply decided and stored before its first attempt: one entry of the outbox.

    Every attempt — by this worker, another one, after a crash, a timeout or a
    DLQ redrive hours later — sends ``request`` byte for byte, so an agent
    that answers differently each time can never produce a second, different
    email. What the attempts so far may have done is kept with it, so a later
    worker decides as the first one would have.

    Attributes
    ----------
    id:
        The intent's id, sent in the reply's metadata (``key1``).
    thread_id, target_id:
        The thread, and the message replied to (``reply_to_message_id``).
    covered:
        Every message id the reply answers (the burst the agent saw).
    request:
        The exact JSON body of ``POST /messages/send`` (or ``POST /drafts``), whatever its size: the
        store keeps it apart from the thread item when large
        (``replyonce.adapters.state_items.stored_request``)
        and reads it back, checked against its digest, before an intent is ever built from the item.
    kind:
        A send or a draft.
    generation, key_scheme:
        The ``Idempotency-Key``'s parts besides grant and target.
    created_at:
        Nylas time the intent was stored.
    attempts, first_attempt_at, last_attempt_at:
        Attempts made under this generation (each stored *before* it is made),
        and their Nylas times: the key lives one hour from the first; "may
        have sent" dates from the last.
    state, accepted_at, reply_message_id:
        ``queued`` after a ``202`` (when and which message Nylas queued).
    reopened:
        How often a ``message.send_failed`` re-opened it (it is sent again once).
    key_stuck:
        The key can only replay an answer that may have sent (a replayed error, a ``409
        invalid_idempotent_request``): only the mailbox can tell, after the settle time.
    drop_headers:
        Nylas refused a request with ``custom_headers``: the next generation goes without them.
    """

    id: str
    thread_id: str
    target_id: str
    covered: tuple[str, ...]
    request: str
    kind: IntentKind = IntentKind.SEND
    generation: int = 0
    key_scheme: int = KEY_SCHEME
    created_at: int = 0
    attempts: int = 0
    first_attempt_at: int = 0
    last_attempt_at: int = 0
    state: IntentState = IntentState.SENDING
    accepted_at: int = 0
    reply_message_id: str = ""
    reopened: int = 0
    key_stuck: bool = False
    drop_headers: bool = False

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.request)

    @property
    def has_custom_headers(self) -> bool:
        """Whether the request carries a custom header a provider may refuse: one without the ``X-``
        prefix (Microsoft Graph accepts only ``X-`` names); ``X-`` headers are kept on every retry."""
        return any(not _is_x_header(h) for h in self.payload.get("custom_headers") or [])

    def attempting(self, now: int) -> "Intent":
        """This intent with one more attempt about to be made at Nylas time ``now``."""
        return replace(
            self,
            attempts=self.attempts + 1,
            first_attempt_at=self.first_attempt_at or now,
            last_attempt_at=now,
        )

    def stuck(self, *, drop_headers: bool = False) -> "Intent":
        """This intent once its key can only replay: the next generation waits for the mailbox's word."""
        return replace(self, key_stuck=True, drop_headers=self.drop_headers or drop_headers)

    def next_generation(self, *, without_custom_headers: bool = False) -> "Intent":
        """The same reply under the next key, nothing attempted yet (only once nothing can be out)."""
        request = self.request
        if without_custom_headers or self.drop_headers:
            # Only the headers a provider may refuse go: the X- marks stay, so other robots still see
            # an automatic reply (Exchange's X-Auto-Response-Suppress, ReplyOnce's own X-ReplyOnce).
            payload = self.payload
            kept = [h for h in payload.pop("custom_headers", None) or [] if _is_x_header(h)]
            if kept:
                payload["custom_headers"] = kept
            request = json.dumps(payload, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        return replace(
            self,
            request=request,
            generation=self.generation + 1,
            attempts=0,
            first_attempt_at=0,
            last_attempt_at=0,
            state=IntentState.SENDING,
            accepted_at=0,
            reply_message_id="",
            key_stuck=False,
            drop_headers=False,
        )

    def queued(self, accepted_at: int, reply_message_id: str) -> "Intent":
        """This intent after a ``202``: accepted by Nylas' queue, not sent."""
        return replace(
            self, state=IntentState.QUEUED, accepted_at=accepted_at, reply_message_id=reply_message_id
        )

    def reopen(self) -> "Intent":
        """Sent again after Nylas said the queued reply failed (``message.send_failed``)."""
        return replace(self.next_generation(), reopened=self.reopened + 1)


@dataclass(frozen=True)
class ThreadState:
    """What a ``thread#`` item says (read in the same request that took the lease)."""

    replies: Mapping[str, int] = field(default_factory=dict)
    covered: Mapping[str, int] = field(default_factory=dict)
    outbox: Mapping[str, Intent] = field(default_factory=dict)
    lease_owner: str = ""
    lease_expires_at_ms: int = 0
    since_ms: int = 0
    """When the state table this item was created in began (``table#began`` as the item's first lease
    found it; ms, the worker's clock, as the lease's); ``0`` for an item older than the attribute. A table
    emptied or recreated begins again: what it knew before is only in the mailbox, or still on its way."""
    created_ms: int = 0
    """When this item was created (ms, the worker's clock): by the lease that found no item — a new
    thread, or one whose item a restore, a hand deletion or a replica that lacks it took away. ``0`` for
    an item older than the attribute (or created in a table that began with it: ``since_ms`` says it)."""

    @property
    def began_ms(self) -> int:
        """Since when the thread's state is known to be whole: its table's beginning. Before it, a reply of
        the thread may be known only to a state that is gone.

        Why not the item's own creation (issue 48 built that, and took it back before it shipped): a
        thread no lease has seen and one whose item a restore took away read the same, so every new
        thread's first burst of two messages, a customer writing twice seconds apart, waited
        ``pending_confirm_seconds`` (600 s) for its reply, and ``make demo`` could not answer its
        bursts. A restore while mail flows, or items deleted by hand, is left to the runbook's stop
        (``docs/operations.md``); ``created_ms`` is kept on the item for the day a restore can be told
        apart from a new thread.
        """
        return self.since_ms

    def intent_covering(self, message_id: str) -> Intent | None:
        """The stored intent whose reply answers ``message_id``, if any."""
        return next((i for i in self.outbox.values() if message_id in i.covered), None)

    def settled_ids(self) -> frozenset[str]:
        """Every message id our state says is settled or about to be: covered, or in a stored intent."""
        pending = {m for intent in self.outbox.values() for m in intent.covered}
        return frozenset(self.covered) | pending


@dataclass(frozen=True)
class LedgerEntry:
    """What a ``message#`` item says: how the agent settled one inbound message."""

    message_id: str
    status: Status
    reply_message_id: str = ""
    replied_to: str = ""
    intent_id: str = ""
    reason: str = ""
    recorded_at: int = 0


@dataclass(frozen=True)
class LedgerRead:
    """The ledger read of a new message's record: its entry (``None``: none), and when the table began
    (``table#began``'s ``since``, ms; ``0``: the table has not begun), read in the same request.

    Why together (issue 46): a new thread item is dated by the table's beginning
    (``core.arrival.state_settles_in``); read here, in the ledger's request, the lease that creates the
    item needs no request of its own for it.
    """

    entry: LedgerEntry | None
    table_began_ms: int = 0


@dataclass
class Lease:
    """A held thread lease: the token proves ownership in every later write.

    ``state`` is the thread item as the lease acquisition returned it, kept up
    to date by the shell as it stores intents. ``bodies`` names (by their
    first item's key) the request bodies read with the lease or written under
    it: they stay in the table far longer than any lease, so storing their
    intent again (its attempt, its queued state) writes no body item again.
    """

    key: str
    token: str
    expires_at_ms: int
    state: ThreadState = field(default_factory=ThreadState)
    released: bool = False
    bodies: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Reservation:
    """A reply to ``email`` at Nylas time ``at``, counted against ``budget`` replies in the hour before it."""

    email: str
    at: int
    budget: int

    @property
    def since(self) -> int:
        """Replies before this moment no longer count (the sliding hour)."""
        return self.at - REPLY_BUDGET_WINDOW_SECONDS


@dataclass(frozen=True)
class AgentCalls:
    """The answer of a grant's daily agent-call count to one burst (``StateStore.count_agent_call``).

    Attributes
    ----------
    intent_id:
        The burst it answers (its intent id: what the count is idempotent on).
    allowed:
        ``True``: counted now, or counted already today for this burst (a retry): the agent is asked.
        ``False``: the grant's cap is reached today; the burst is handed to a person.
    first_refusal:
        A refusal, and the grant's first of its (UTC) day: the one log line and metric that say the
        grant crossed its cap (``AgentCallCapReached``).
    """

    intent_id: str
    allowed: bool
    first_refusal: bool = False


class ShadowOutcome(StrEnum):
    """What the agent would have done with a burst or a message, in shadow mode."""

    REPLY = "reply"
    """It would have sent (or drafted) this reply."""
    DECLINED = "declined"
    """The agent returned ``NoReply``."""
    HANDED_OFF = "handed_off"
    """The agent returned ``Handoff`` (or a reply too large for Nylas)."""
    REJECTED = "rejected"
    """The agent refused the burst for good (``AgentRejected``)."""
    SKIPPED = "skipped"
    """A rule skipped the message before or instead of the agent (``reason``: the skip reason)."""


def skipped_record_id(message_id: str) -> str:
    """The record id of a message a rule skipped: one record per message, however often it is delivered."""
    return f"message:{message_id}"


@dataclass(frozen=True)
class ShadowRecord:
    """What shadow mode recorded for one burst (``record_id``: its intent id) or one skipped message.

    Attributes
    ----------
    grant_id, thread_id:
        Where.
    record_id:
        The burst's intent id, or :func:`skipped_record_id` of the skipped message.
    trigger_id:
        The message the reply would have answered (the burst's newest), or the skipped message.
    covered:
        The messages the reply would have answered (the skipped message alone for a skip).
    outcome, reason:
        What the agent or the rules decided, and why (a skip reason, the agent's own reason).
    text:
        The agent's reply (also for a reply dropped because a person answered while it drafted).
    at:
        Nylas' time of the decision (the thread read), else the message's ``date``: the report's period.
    """

    grant_id: str
    record_id: str
    thread_id: str
    trigger_id: str
    covered: tuple[str, ...]
    outcome: ShadowOutcome
    reason: str = ""
    text: str = ""
    at: int = 0


@dataclass(frozen=True)
class Settlement:
    """How a burst (or a stored intent) ends: what the store writes in one transaction.

    Attributes
    ----------
    status:
        The ledger status of every ``covered`` message.
    covered:
        The messages settled.
    at:
        Nylas time (the thread item's ``covered`` map, and the loop guard when ``counts_as_reply``).
    intent:
        The intent this settles: removed from the outbox, or kept (``keep``) as it now is.
    keep:
        Keep ``intent`` in the outbox (a queued reply waits for its confirmation).
    counts_as_reply:
        Counted by the loop guard (a reply sent or queued).
    reply_message_id, replied_to, reason:
        For the ledger entries.
    shadow:
        Shadow mode: the burst's :class:`ShadowRecord`, written in the same transaction as the ledger
        entries, so a burst is recorded exactly when it is settled.
    """

    status: Status
    covered: tuple[str, ...]
    at: int
    intent: Intent | None = None
    keep: bool = False
    counts_as_reply: bool = False
    reply_message_id: str = ""
    replied_to: str = ""
    reason: str = ""
    shadow: ShadowRecord | None = None

    @property
    def writes_without_lease(self) -> bool:
        """Whether a holder that lost the lease still writes this settlement (by key, without the lease).

        A reply's yes: what happened at Nylas happened either way. A shadow settlement's no: nothing
        happened at Nylas, and the new holder plans the thread again and records what it decides; a
        stale holder's record beside it would record the burst's messages twice.
        """
        return self.shadow is None

    def ledger_entries(self, recorded_at: int) -> list[LedgerEntry]:
        """The covered messages' entries, and one for the reply itself when the send returned its id."""
        intent_id = self.intent.id if self.intent is not None else ""
        entries = [
            LedgerEntry(
                m, self.status, self.reply_message_id, self.replied_to, intent_id, self.reason, recorded_at
            )
            for m in dict.fromkeys(self.covered)
        ]
        if self.reply_message_id and self.status in (Status.REPLIED, Status.QUEUED):
            entries.append(
                LedgerEntry(self.reply_message_id, Status.OWN_REPLY, "", "", intent_id, "", recorded_at)
            )
        return entries

    def thread_after(self, state: ThreadState) -> ThreadState:
        """The thread state this settlement leaves (lease fields untouched)."""
        replies = dict(state.replies)
        if self.counts_as_reply and self.intent is not None:
            since = self.at - REPLY_BUDGET_WINDOW_SECONDS
            replies = {rid: t for rid, t in replies.items() if t >= since and rid != self.intent.id}
            replies[self.intent.id] = self.at
        elif self.intent is not None:
            # It never went out (a queued reply Nylas failed twice, a final refusal): not a reply.
            replies.pop(self.intent.id, None)
        covered = dict(state.covered) | dict.fromkeys(self.covered, self.at)
        newest = dict(sorted(covered.items(), key=lambda pair: pair[1])[-COVERED_MEMORY:])
        outbox = dict(state.outbox)
        if self.intent is not None:
            outbox.pop(self.intent.id, None)
            if self.keep:
                outbox[self.intent.id] = self.intent
        return replace(state, replies=replies, covered=newest, outbox=outbox)
