"""Where a record stands: its phases, and the one table of how :func:`replyonce.core.learn` moves it on.

Everything that decides which phase a record is in lives here (``h11``'s
``_state.py`` is the model): the phase values, each holding only its own
data, and :data:`TRANSITIONS`, the steps whose results move a record from
one phase to another. :func:`replyonce.core.next_step` dispatches on the
phase; :func:`replyonce.core.learn` returns the situation in its next phase
and goes through :func:`moved`, which refuses a move the table does not name.
``docs/design.md`` ("The record's phases") prints :func:`phase_table`; a test holds
the two to each other.

A record starts :class:`Arrived`: what the payload shows, the agents' and the
grant's look-ups, the ledger, the message by id — nothing held. The thread's
lease makes it :class:`Leased`. A new message's thread read that reaches its
trigger makes it :class:`Planned`: the thread screened and planned once, the
plan carried by every later round and decided again only when a new read
(another page, the message by id, the emails' claims, an intent stored)
changes what it was decided from. The agent's answer to the planned burst makes it
:class:`Answered`. A settlement written makes it
:class:`Settled`; a lease freed before the record's end (a skip, a deferral,
the lease lost) makes it :class:`Released`.

Above :mod:`replyonce.core.steps` only.
"""

from dataclasses import dataclass, field

from replyonce.agent import Outcome
from replyonce.core.steps import (
    AgentFailed,
    AskAgent,
    Defer,
    ReadThread,
    ReleaseLease,
    Settle,
    Skip,
    Step,
    Store,
    TakeLease,
    WaitForLease,
)
from replyonce.ports import Message
from replyonce.rules.plan import Burst
from replyonce.state import Lease, ThreadState


@dataclass(frozen=True)
class Plan:
    """A new message's thread read, screened and planned once (``replyonce.core.planning.decide``).

    Attributes
    ----------
    decision:
        The burst one reply answers; or the step the read decides instead (the next page, the trigger by
        id, a rule's skip, a deferral).
    messages:
        The thread's messages as read (the trigger among them); ``()`` when ``decision`` is a step.
    now:
        Nylas' time of the read: what every rule of the plan was decided at.
    read_from:
        What the plan was decided from (the thread state, the listing, the message by id, the claims,
        the look-ups, the policy), by identity: a round that changed none of them carries the plan.
    """

    decision: Step | Burst
    messages: tuple[Message, ...]
    now: int
    read_from: tuple[object, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Arrived:
    """Nothing held yet: what the payload shows, the look-ups, the ledger, the message by id."""


@dataclass(frozen=True)
class Leased:
    """The thread's lease is held, with the thread state it returned (kept up to date as intents are
    stored under it)."""

    lease: Lease
    state: ThreadState


@dataclass(frozen=True)
class Planned:
    """The lease is held, and a new message's thread read is screened and planned once: later rounds
    carry the plan (the burst, or the step the read decides)."""

    lease: Lease
    state: ThreadState
    plan: Plan


@dataclass(frozen=True)
class Answered:
    """The lease is held, the thread planned, and the agent answered the burst: its reply is looked past
    once more for a person's answer, then stored (or the burst settled: declined, handed off, refused)."""

    lease: Lease
    state: ThreadState
    plan: Plan
    outcome: Outcome | AgentFailed


@dataclass(frozen=True)
class Settled:
    """The settlement is written, and the lease freed with it: a hand-off is filed, then the record ends."""

    settle: Settle


@dataclass(frozen=True)
class Released:
    """The lease is no longer ours (freed, or found lost) before the record's end: a skip or a deferral,
    decided while it was held."""

    then: Skip | Defer


Phase = Arrived | Leased | Planned | Answered | Settled | Released
"""Where a record stands."""


TRANSITIONS: dict[type[Phase], dict[type[Step], tuple[type[Phase], ...]]] = {
    Arrived: {
        TakeLease: (Leased,),
        WaitForLease: (Leased,),
    },
    Leased: {
        ReadThread: (Planned,),
        Settle: (Settled, Released),
        ReleaseLease: (Released,),
    },
    Planned: {
        AskAgent: (Answered,),
        Store: (Leased,),
        Settle: (Settled, Released),
        ReleaseLease: (Released,),
    },
    Answered: {
        Store: (Leased,),
        Settle: (Settled, Released),
        ReleaseLease: (Released,),
    },
    Settled: {},
    Released: {},
}
"""Phase → the steps whose results move a record on → the phases they may move it to. A step not named
for a phase leaves the record where it is (a read, an attempt, the agent's answer); a :class:`Leased`
or :class:`Planned` record stays so when the step's read or write changes only its data."""

_MEANING: dict[type[Step], str] = {
    TakeLease: "the lease granted",
    WaitForLease: "the lease granted after a wait",
    ReadThread: "a new message's thread read reaches its trigger",
    AskAgent: "the agent's outcome (a reply, a decline, a hand-off, a refusal)",
    Store: "an intent that covers the trigger stored",
    Settle: "the settlement written (or the lease found lost)",
    ReleaseLease: "the lease freed before a skip or a deferral",
}


class PhaseError(Exception):
    """A step's result would move a record where :data:`TRANSITIONS` says it cannot go (a bug in the core)."""


def moved(before: Phase, step: Step, after: Phase) -> Phase:
    """``after``, once :data:`TRANSITIONS` allows the move from ``before`` on ``step``'s result.

    Raises
    ------
    PhaseError
        The table does not name the move: the core would have lost track of where the record stands.
    """
    if type(after) is type(before) or type(after) in TRANSITIONS[type(before)].get(type(step), ()):
        return after
    raise PhaseError(f"{type(step).__name__} cannot move a record from {_name(before)} to {_name(after)}")


def holding(phase: Phase, step: Step) -> Leased | Planned | Answered:
    """The phase that holds the lease ``step`` is written under.

    Raises
    ------
    PhaseError
        ``step`` needs the lease and the record does not hold it (a bug in the core).
    """
    match phase:
        case Leased() | Planned() | Answered():
            return phase
        case _:
            raise PhaseError(f"{type(step).__name__} needs the thread's lease; the record is {_name(phase)}")


def lease_of(phase: Phase) -> Lease | None:
    """The lease the record holds, if its phase holds one."""
    match phase:
        case Leased(lease=lease) | Planned(lease=lease) | Answered(lease=lease):
            return lease
        case _:
            return None


def answered(phase: Phase, step: Step, outcome: Outcome | AgentFailed) -> Answered:
    """The planned record once the agent answered its burst with ``outcome``.

    Raises
    ------
    PhaseError
        The record asked the agent without a plan (a bug in the core).
    """
    match phase:
        case Planned(lease=lease, state=state, plan=plan) | Answered(lease=lease, state=state, plan=plan):
            return Answered(lease, state, plan, outcome)
        case _:
            raise PhaseError(f"{type(step).__name__} needs a planned burst; the record is {_name(phase)}")


def answer_of(phase: Phase) -> Outcome | AgentFailed | None:
    """What the agent answered the burst, if the record is past asking it."""
    return phase.outcome if isinstance(phase, Answered) else None


def _name(phase: Phase | type[Phase]) -> str:
    return (phase if isinstance(phase, type) else type(phase)).__name__


def phase_table() -> str:
    """The phases and :data:`TRANSITIONS`, as the two Markdown tables ``docs/design.md`` shows."""
    phases = ["| phase | holds | where the record stands |", "| --- | --- | --- |"]
    moves = ["| phase | on the result of | moves to |", "| --- | --- | --- |"]
    for phase, steps in TRANSITIONS.items():
        holds = ", ".join(f"`{name}`" for name in phase.__dataclass_fields__) or "nothing"
        meaning = " ".join((phase.__doc__ or "").split())
        phases.append(f"| `{phase.__name__}` | {holds} | {meaning} |")
        for step, targets in steps.items():
            to = " or ".join(f"`{t.__name__}`" for t in targets)
            moves.append(f"| `{phase.__name__}` | `{step.__name__}`: {_MEANING[step]} | {to} |")
    return "\n".join([*phases, "", *moves])
