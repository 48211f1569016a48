"""What is known: the :class:`Situation`, everything known about one record at one moment.

The shell asks :func:`replyonce.core.next_step` about it and folds each
step's result into it with :func:`replyonce.core.learn`. Where the record
stands is its ``phase`` (:mod:`replyonce.core.phases`); the rest is what was
read. Above :mod:`replyonce.core.phases` and :mod:`replyonce.core.steps`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from replyonce.answers import Answer
from replyonce.core.phases import Arrived, Phase
from replyonce.core.results import ThreadBusy
from replyonce.core.steps import Failure, Notice
from replyonce.jobs import Job
from replyonce.policy import Policy
from replyonce.ports import ActiveRegion, FenceUnreadable, Listing, Message, SearchResult, ThreadPage
from replyonce.reasons import SkipReason
from replyonce.rules.screening import Agents
from replyonce.state import AgentCalls, LedgerEntry, Status

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
class Situation:
    """Everything known about one record at one moment.

    Attributes
    ----------
    job, policy:
        What the record asks for (:data:`replyonce.jobs.Job`), and the configuration.
    agents:
        The agent grants' addresses (looked up once per container); ``None`` until then.
    closed_folders:
        The receiving grant's junk and trash folder ids; ``None`` until looked up.
    sent_folders:
        The receiving grant's Sent folder ids (looked up with the others): a person's answer sits there.
    ledger:
        The message's ledger entry, ``None`` (none), or :data:`UNREAD`.
    table_began_ms:
        When the state table began, read with the ledger (``0``: not read, or not begun): the lease dates
        a thread item it creates by it.
    fetched:
        The message fetched by id, :data:`GONE`, or :data:`UNREAD`.
    phase:
        Where the record stands (:mod:`replyonce.core.phases`): arrived, holding the thread's lease (with
        the thread state it returned, and once read, the thread's plan), settled, or released.
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
    agent_calls:
        The grant's daily agent-call count's answer for the burst (``None``: not asked yet, or the
        grant has no cap).
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

    job: Job
    policy: Policy
    agents: Agents | None = None
    closed_folders: frozenset[str] | None = None
    sent_folders: frozenset[str] = frozenset()
    phase: Phase = field(default_factory=Arrived)
    ledger: LedgerEntry | None = UNREAD
    table_began_ms: int = 0
    fetched: Message | None = UNREAD
    listing: Listing | None = None
    searches: Mapping[str, SearchResult] = field(default_factory=dict)
    answers: Mapping[str, Answer] = field(default_factory=dict)
    attempting: frozenset[str] = frozenset()
    reserved: bool | None = None
    agent_calls: AgentCalls | None = None
    looked_before_send: ThreadPage | None = None
    claims: Mapping[str, str] | None = None
    drafts: tuple[Message, ...] | None = None
    shadow_recorded: bool | None = None
    active_region: ActiveRegion | FenceUnreadable = UNREAD
    now: int | None = None
    time_left: float = float("inf")
    clock: float = 0.0
    lease_refused: ThreadBusy | None = None
    lease_wait_ends: float | None = None
    handoff_folder_id: str | None = None
    folder_listings: int = 0
    failure: Failure | None = None
    filed: bool = False
    notices: tuple[Notice, ...] = ()
    receives: int = 1
    first_received_at: int = 0


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
