"""What is known and what to do next: the :class:`Situation` and the step types, the core's bottom layer.

Every other module of the core reads these; this one reads none of them. A
step is a value the shell carries out through one port call
(``replyonce.replier``); the situation is everything known about one record
at one moment, which the shell asks :func:`replyonce.core.next_step` about.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from replyonce.agent import Conversation, Outcome
from replyonce.answers import Answer
from replyonce.plan import Burst
from replyonce.policy import Policy
from replyonce.ports import ActiveRegion, FenceUnreadable, Listing, Message, SearchResult, ThreadPage
from replyonce.reasons import DeferReason, SkipReason
from replyonce.screening import Agents
from replyonce.state import (
    Intent,
    LedgerEntry,
    Reservation,
    Settlement,
    ShadowRecord,
    Status,
    ThreadState,
)
from replyonce.subjects import Subject

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


def settled_reason(status: Status) -> SkipReason:
    """The skip reason of a redelivery for a message settled with ``status``."""
    match status:
        case Status.REPLIED | Status.QUEUED:
            return SkipReason.ALREADY_REPLIED
        case Status.DRAFTED:
            return SkipReason.ALREADY_DRAFTED
        case Status.DECLINED:
            return SkipReason.AGENT_DECLINED
        case Status.HANDED_OFF:
            return SkipReason.HANDED_OFF
        case Status.FAILED:
            return SkipReason.REPLY_PREVIOUSLY_FAILED
        case Status.OWN_REPLY:
            return SkipReason.OWN_OUTBOUND
        case Status.SHADOWED:
            return SkipReason.ALREADY_SHADOWED
        case unknown:
            assert_never(unknown)


def fetched_thread(s: Situation) -> str:
    """The thread id of the message fetched by id (``""``: not fetched, gone, or none)."""
    if s.fetched is UNREAD or s.fetched is GONE or s.fetched is None:
        return ""
    return str(s.fetched.get("thread_id") or s.fetched.get("id") or "")


def as_int(value: Any) -> int:
    """A payload's number (a date), ``0`` when it is missing or malformed."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
