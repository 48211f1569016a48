"""The replier's functional core: from what is known to the next thing to do, as one pure function.

:func:`next_step` takes a :class:`Situation` — the record (a new message, a
send outcome Nylas reported, a reconcile we scheduled), the deployment's
policy, where the record stands (its :data:`Phase`: arrived, holding the
thread's lease with the state it returned, planned, settled, released) and
everything read so far: the ledger, the thread listing, mailbox searches, the
answers of attempts made in this lease, the agent's outcome, Nylas' time —
and returns one :class:`Step`: read this, take the lease, ask the agent,
store this intent, attempt it, settle, skip with a reason, or defer. The
shell (``replyonce.shell.replier``) carries the step out through a port, folds what
it learned in with :func:`learn` (which returns the record's next phase), and
asks again. No I/O here, no clock: every rule is a table-driven test
(``tests/unit/test_core.py``), and a scheduler can interleave workers at each
step (``tests/integration/test_interleavings.py``).

One concern per module, each importing only those below it
(``docs/design.md``, "The functional core"):

- ``results``, ``steps``: what a port call answered, as values; the step types — at the bottom;
- ``phases``: where a record stands, each phase with its own data, and the one transition table;
- ``situation``: what is known (:class:`Situation`): the record's phase and what was read;
- ``failure``: what a failure means (the one place it, and a Nylas status, becomes a deferral);
- ``shadow``, ``region``, ``lease``: shadow mode's rules, the active-Region fence, the wait for a
  busy thread's lease;
- ``delivery``: getting a stored intent out exactly once (invariant 1);
- ``planning``: a new message's thread read, screened and planned once per read (invariants 1 to 4);
- ``arrival``: a new message, up to the lease, and what its plan leads to (the budgets, the agent);
- ``outcome``: a send outcome Nylas reported, and our own reconcile of a queued reply;
- ``learn``: :func:`learn`, what a step's result teaches, and the record's next phase;
- ``dispatch``: :func:`next_step`, on top.

This package's ``__init__`` only names the public surface: what the rest of
the repository reads from ``replyonce.core``.
"""

from replyonce.core.arrival import HANDED_OFF_SKIPS, PRESEND_LOOK_LIMIT, is_our_echo
from replyonce.core.dispatch import before_start, next_step
from replyonce.core.learn import handoff_folder_id, learn
from replyonce.core.lease import LEASE_POLL_SECONDS
from replyonce.core.phases import (
    TRANSITIONS,
    Answered,
    Arrived,
    Leased,
    Phase,
    PhaseError,
    Plan,
    Planned,
    Released,
    Settled,
    answer_of,
    holding,
    lease_of,
    moved,
    phase_table,
)
from replyonce.core.planning import claimed_by_another, email_identity
from replyonce.core.region import fence
from replyonce.core.results import (
    AgentOutlived,
    AgentRaised,
    AgentReturned,
    FoldersListed,
    FoldersRefused,
    GrantsDescribed,
    NylasUnavailable,
    Searched,
    StoreContended,
    ThreadBusy,
)
from replyonce.core.situation import (
    GONE,
    UNREAD,
    Situation,
    settled_reason,
)
from replyonce.core.steps import (
    AgentFailed,
    AskAgent,
    Attempt,
    ClaimEmails,
    CountAgentCall,
    Defer,
    FetchMessage,
    FileHandedOff,
    Finish,
    FinishSkipped,
    LookBeforeSend,
    LookUpAgents,
    LookUpFolders,
    Notice,
    ReadActiveRegion,
    ReadDrafts,
    ReadLedger,
    ReadThread,
    RecordShadow,
    ReleaseLease,
    Reserve,
    Search,
    Settle,
    Skip,
    Step,
    Store,
    TakeLease,
    WaitForLease,
)

__all__ = [
    "GONE",
    "HANDED_OFF_SKIPS",
    "LEASE_POLL_SECONDS",
    "PRESEND_LOOK_LIMIT",
    "TRANSITIONS",
    "UNREAD",
    "AgentFailed",
    "AgentOutlived",
    "AgentRaised",
    "AgentReturned",
    "Answered",
    "Arrived",
    "AskAgent",
    "Attempt",
    "ClaimEmails",
    "CountAgentCall",
    "Defer",
    "FetchMessage",
    "FileHandedOff",
    "Finish",
    "FinishSkipped",
    "FoldersListed",
    "FoldersRefused",
    "GrantsDescribed",
    "Leased",
    "LookBeforeSend",
    "LookUpAgents",
    "LookUpFolders",
    "Notice",
    "NylasUnavailable",
    "Phase",
    "PhaseError",
    "Plan",
    "Planned",
    "ReadActiveRegion",
    "ReadDrafts",
    "ReadLedger",
    "ReadThread",
    "RecordShadow",
    "ReleaseLease",
    "Released",
    "Reserve",
    "Search",
    "Searched",
    "Settle",
    "Settled",
    "Situation",
    "Skip",
    "Step",
    "Store",
    "StoreContended",
    "TakeLease",
    "ThreadBusy",
    "WaitForLease",
    "answer_of",
    "before_start",
    "claimed_by_another",
    "email_identity",
    "fence",
    "handoff_folder_id",
    "holding",
    "is_our_echo",
    "learn",
    "lease_of",
    "moved",
    "next_step",
    "phase_table",
    "settled_reason",
]
