"""What to do next: the step types, one port call each, at the core's bottom.

A step is a value the shell carries out through one port call
(``replyonce.shell.replier``); :func:`replyonce.core.next_step` returns one,
:func:`replyonce.core.learn` folds what it answered into the situation. This
module reads only :mod:`replyonce.core.results`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replyonce.agent import Conversation
from replyonce.core.results import NylasUnavailable, StoreContended
from replyonce.ports import ActiveRegion
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.plan import Burst
from replyonce.state import Intent, Reservation, Settlement, ShadowRecord

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
    """Take the thread's lease; ``table_began_ms``: the table's beginning the record read with its ledger
    (``0``: not read), which dates a thread item the lease creates."""

    thread_key: str
    duration_seconds: float
    table_began_ms: int = 0


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
class CountAgentCall:
    """Count the burst's agent call against its grant's daily cap (a conditional write below ``cap``;
    idempotent per intent id, ``replyonce.rules.agent_calls``). Only for a grant with a cap."""

    grant_id: str
    day: str
    intent_id: str
    cap: int


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
    """Give the record back to the queue; ``seconds`` ``None``: the standard backoff by receives.

    ``hand_over``: the active Region's record, when this Region is passive and the record names the
    active Region's queue — the consumer then moves the record there instead of keeping it
    (:func:`replyonce.core.region.fence`).
    """

    reason: DeferReason
    seconds: int | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    hand_over: ActiveRegion | None = None


@dataclass(frozen=True)
class WaitForLease:
    """Wait ``seconds`` for the busy thread, then take its lease again (the in-process wait, bounded by
    :func:`replyonce.core.lease.lease_wait`)."""

    thread_key: str
    duration_seconds: float
    seconds: float
    table_began_ms: int = 0


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
    then: Skip | Defer


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
class AgentFailed:
    """The agent refused the burst for good (``AgentRejected``, or a model's final refusal)."""

    detail: str


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
    | CountAgentCall
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
