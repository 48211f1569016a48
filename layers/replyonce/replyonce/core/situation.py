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
from replyonce.core.results import NylasUnavailable, StoreContended, ThreadBusy
from replyonce.plan import Burst
from replyonce.policy import Policy
from replyonce.ports import ActiveRegion, FenceUnreadable, Listing, Message, SearchResult, ThreadPage
from replyonce.reasons import DeferReason, SkipReason
from replyonce.screening import Agents
from replyonce.state import (
    Intent,
    Lease,
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
    sent_folders:
        The receiving grant's Sent folder ids (looked up with the others): a person's answer sits there.
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
    clock:
        The worker's monotonic clock at this turn (seconds): how long a wait for the lease has lasted.
    lease:
        The thread's lease as the store returned it: the shell's handle for the writes under it (the
        core reads ``state``, never this).
    lease_refused, lease_wait_ends:
        The latest refusal of the thread's lease (another worker holds it), and the ``clock`` at which
        the in-process wait for it ends (set at the first refusal).
    handoff_folder_id:
        The grant's ``HANDOFF_FOLDER`` id (``""``: none); ``None`` until its folders were listed.
    folder_listings:
        How often the grant's folders were asked for in this record (a refused listing is asked again
        once, for a hand-off's move).
    failure:
        A port call failed, or the lease was lost: what defers the record (:mod:`replyonce.core.failure`).
    settled:
        The settlement written (:class:`Settle`, carried out), with the lease or without it.
    lease_freed:
        The lease is no longer ours to free: a settlement freed it, or it was released.
    ending:
        The skip or deferral the record ends with, decided before its lease was released.
    filed:
        The hand-off's messages were filed in ``HANDOFF_FOLDER`` (or tried).
    notices:
        What the last result earned in metrics and warnings (an intent stored under a new key, a message
        fetched, a lease found lost): the shell counts and logs them as they are.
    receives:
        How often the queue has delivered this record (SQS ``ApproximateReceiveCount``): a record a
        person's draft holds back is handed off on its last receive, never dead-lettered in silence.
    first_received_at:
        When the queue first delivered the record (epoch seconds; ``0``: unknown): a person's draft that
        carries no ``date`` waits from then, when the replier first saw the thread.
    """

    subject: Subject
    policy: Policy
    agents: Agents | None = None
    closed_folders: frozenset[str] | None = None
    sent_folders: frozenset[str] = frozenset()
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
    clock: float = 0.0
    lease: Lease | None = None
    lease_refused: ThreadBusy | None = None
    lease_wait_ends: float | None = None
    handoff_folder_id: str | None = None
    folder_listings: int = 0
    failure: "Failure | None" = None
    settled: "Settle | None" = None
    lease_freed: bool = False
    ending: "Skip | Defer | None" = None
    filed: bool = False
    notices: tuple["Notice", ...] = ()
    receives: int = 1
    first_received_at: int = 0


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
    """End the record with a skip (logged and counted with its reason).

    ``unsent_reply``: the agent's reply the skip drops (a person answered meanwhile), for a
    developer's DEBUG line only (no part of what the skip is: two skips compare equal without it).
    """

    reason: SkipReason
    detail: Mapping[str, Any] = field(default_factory=dict)
    unsent_reply: str = field(default="", compare=False)


@dataclass(frozen=True)
class Defer:
    """Give the record back to the queue; ``seconds`` ``None``: the standard backoff by receives."""

    reason: DeferReason
    seconds: int | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WaitForLease:
    """Wait ``seconds`` for the busy thread, then take its lease again (the in-process wait, bounded by
    :func:`replyonce.core.lease.lease_wait`)."""

    thread_key: str
    duration_seconds: float
    seconds: float


@dataclass(frozen=True)
class FileHandedOff:
    """File the handed-off messages in ``HANDOFF_FOLDER``: best effort, once the hand-off is settled."""

    grant_id: str
    message_ids: tuple[str, ...]
    folder_id: str


@dataclass(frozen=True)
class ReleaseLease:
    """Free the thread's lease before the record ends without a settlement, with ``then`` (a skip, a
    deferral): decided while the lease was held, it stays the record's end once the lease is freed."""

    thread_key: str
    then: "Skip | Defer"


@dataclass(frozen=True)
class Finish:
    """The settlement of a reply (sent, queued, drafted, shadowed) is written: count it, say ``said``,
    and end the record with it as its outcome."""

    settle: Settle
    said: str = ""
    notices: tuple["Notice", ...] = ()


@dataclass(frozen=True)
class FinishSkipped:
    """A settlement that is a skip (declined, handed off, failed) is written: count it, and end the record
    with the skip (logged and counted with its reason)."""

    settle: Settle
    reason: SkipReason
    notices: tuple["Notice", ...] = ()


@dataclass(frozen=True)
class Notice:
    """What the shell counts and logs for what the core learnt or settled: ``metric`` (``""``: none),
    counted ``value`` times, or once by its ``status`` dimension when ``metric_status`` is set (as a
    :class:`Settle`'s); and ``message`` with ``fields`` at ``level`` (``""``: no line)."""

    metric: str = ""
    message: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)
    level: str = "warning"
    metric_status: str = ""
    value: int = 1


@dataclass(frozen=True)
class LeaseLost:
    """A write conditioned on the lease found it another worker's (an intent, a shadow settlement)."""

    thread_key: str


@dataclass(frozen=True)
class AgentTrouble:
    """The agent failed in a way worth a retry: it raised, outlived its timeout, or returned no outcome."""

    detail: str


Failure = NylasUnavailable | StoreContended | LeaseLost | AgentTrouble
"""Why a record cannot go on now, whatever its flow: deferred (:func:`replyonce.core.failure.deferral`)."""


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
    | WaitForLease
    | FileHandedOff
    | ReleaseLease
    | Finish
    | FinishSkipped
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
    return s.fetched.thread_id or s.fetched.id
