"""Mutants: the product with one guard disabled, to prove the harness can see each break.

A checker that catches no mutant proves nothing. Each mutant is a small
function that patches the product's own names (``replyonce.decisions``,
``replyonce.lease``, ``replyonce.ledger``, ``replyonce.outbox``,
``replyonce.state``, ``replyonce.filters``) inside a chaos worker process
(``chaos/worker.py``, ``CHAOS_MUTANT``); nothing here is a product setting.
``make chaos ARGS="--mutant NAME"`` runs one; ``tests/test_chaos.py`` runs each
in a small configuration and fails when one survives (its invariant unbroken).

A mutant whose target the product does not have raises :class:`MutantPending`
when applied: the worker then refuses to start, and the harness says so.
"""

import dataclasses
import importlib
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The function timeout of every mutant's small run (tests/test_chaos.py, ``make chaos ARGS="--mutant NAME"``).
MUTANT_TIMEOUT_SECONDS = 5.0


class MutantPending(RuntimeError):
    """The product has no name this mutant patches (yet)."""


@dataclass(frozen=True)
class Mutant:
    """One disabled guard.

    Attributes
    ----------
    name:
        ``--mutant`` value.
    guards:
        Invariant numbers the guard protects: the mutant is caught when one of them is violated.
    disable:
        Patches the product in the worker process.
    faults:
        The fault kinds of the small run that give the break a chance (``None``: every kind).
    knobs:
        Workload knobs of the small run (``WorkloadSettings`` field → value), over the CI defaults.
    workers, clock_skew_seconds, notifications, seed:
        The small run (some breaks need concurrency, a stale holder, or simply more chances).
    """

    name: str
    guards: tuple[int, ...]
    disable: Callable[[], None]
    what: str
    faults: frozenset[str] | None = frozenset()
    knobs: Mapping[str, Any] = field(default_factory=dict)
    workers: int = 2
    clock_skew_seconds: float = 0.0
    notifications: int = 70
    seed: int = 5


def _module(name: str) -> Any:
    try:
        return importlib.import_module(f"replyonce.{name}")
    except ImportError as missing:
        raise MutantPending(f"replyonce.{name} does not exist") from missing


def _attribute(owner: Any, name: str) -> Any:
    if not hasattr(owner, name):
        raise MutantPending(f"{getattr(owner, '__name__', owner)} has no {name}")
    return getattr(owner, name)


# ---- a DynamoDB client that ignores the lease ------------------------------------------------------


def _strip_owner_condition(request: dict[str, Any], owner_attribute: str) -> dict[str, Any]:
    """The same write without a condition that names the lease owner (and its unused values)."""
    condition = request.get("ConditionExpression", "")
    if owner_attribute not in condition:
        return request
    request = {k: v for k, v in request.items() if k not in ("ConditionExpression",)}
    request.pop("ReturnValuesOnConditionCheckFailure", None)
    used = " ".join(str(request.get(k, "")) for k in ("UpdateExpression", "ProjectionExpression"))
    values = {k: v for k, v in request.get("ExpressionAttributeValues", {}).items() if k in used}
    if values:
        request["ExpressionAttributeValues"] = values
    else:
        request.pop("ExpressionAttributeValues", None)
    names = {k: v for k, v in request.get("ExpressionAttributeNames", {}).items() if k in used}
    if names:
        request["ExpressionAttributeNames"] = names
    else:
        request.pop("ExpressionAttributeNames", None)
    return request


class _OwnerBlind:
    """Wraps the product's DynamoDB client: writes conditioned on the lease owner lose the condition."""

    def __init__(self, client: Any, owner_attribute: str, *, transactions_only: bool = False) -> None:
        self._client = client
        self._owner = owner_attribute
        self._transactions_only = transactions_only

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def update_item(self, **request: Any) -> Any:
        if not self._transactions_only:
            request = _strip_owner_condition(request, self._owner)
        return self._client.update_item(**request)

    def transact_write_items(self, **request: Any) -> Any:
        items = []
        for item in request.get("TransactItems", []):
            if "Update" in item:
                item = {**item, "Update": _strip_owner_condition(item["Update"], self._owner)}
            items.append(item)
        return self._client.transact_write_items(**{**request, "TransactItems": items})


def _blind(cls: Any, owner_attribute: str, *, transactions_only: bool = False) -> None:
    """Every instance of ``cls`` gets an owner-blind client (its ``_dynamodb``)."""
    original = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._dynamodb = _OwnerBlind(self._dynamodb, owner_attribute, transactions_only=transactions_only)

    cls.__init__ = __init__


def _forget_on_read(state: Any, **blank: Any) -> None:
    """Every ``ThreadState`` read from the table comes back with the ``blank`` fields."""
    thread_state = _attribute(state, "ThreadState")
    original = thread_state.from_item.__func__

    def from_item(cls: Any, item: Mapping[str, Any]) -> Any:
        return dataclasses.replace(original(cls, item), **blank)

    thread_state.from_item = classmethod(from_item)


# ---- the mutants --------------------------------------------------------------------------------


def no_lease() -> None:
    """Any worker takes any thread at any time, and every write under the lease goes through."""
    state = _module("state")
    owner = _attribute(state, "LEASE_OWNER")
    for module, cls in (("lease", "ThreadLeases"), ("outbox", "Outbox"), ("ledger", "ReplyLedger")):
        _blind(_attribute(_module(module), cls), owner)


def no_ledger_check() -> None:
    """Nothing remembers which messages were answered: the ledger and the thread's covered ids read empty."""
    ledger = _module("ledger")
    state = _module("state")
    _attribute(ledger.ReplyLedger, "entry")
    ledger.ReplyLedger.entry = lambda self, grant_id, message_id: None
    _forget_on_read(state, answered={})


def fixed_key() -> None:
    """One ``Idempotency-Key`` per target whatever the generation (the key before generations)."""
    decisions = _module("decisions")
    original = _attribute(decisions, "idempotency_key")
    decisions.idempotency_key = lambda grant_id, target_id, generation=0: original(grant_id, target_id, 0)


def date_coverage() -> None:
    """Coverage by date: a message dated before the agent's latest reply counts as answered, and
    the newest message is the one with the latest ``date`` (the sender's clock)."""
    decisions = _module("decisions")
    filters = _module("filters")
    original = _attribute(decisions, "plan_reply")

    def date(message: Mapping[str, Any]) -> int:
        try:
            return int(message.get("date") or 0)
        except (TypeError, ValueError):
            return 0

    def plan_reply(trigger_id: str, messages: Any, answered: Any, own_addresses: Any, *args: Any) -> Any:
        own = {filters.address(a) if not isinstance(a, str) else a.lower() for a in own_addresses}
        last_reply = max((date(m) for m in messages if filters.sender_email(m) in own), default=0)
        by_date = sorted(messages, key=date, reverse=True)
        older = {str(m.get("id")) for m in messages if date(m) <= last_reply}
        return original(trigger_id, by_date, {*answered, *older}, own_addresses, *args)

    decisions.plan_reply = plan_reply


def no_automaton_filter() -> None:
    """Machines are answered: no check on headers or machine-looking addresses (own mail still skipped)."""
    filters = _module("filters")
    _attribute(filters, "header_skip_reason")
    sender_check = _attribute(filters, "sender_skip_reason")
    own_outbound = _attribute(filters, "OWN_OUTBOUND")
    filters.header_skip_reason = lambda message: None

    def sender_skip_reason(message: Any, own_addresses: Any, trusted_senders: Any = ()) -> str | None:
        reason = sender_check(message, own_addresses, trusted_senders)
        return reason if reason in (own_outbound, _attribute(filters, "NO_SENDER")) else None

    filters.sender_skip_reason = sender_skip_reason


def no_loop_guard() -> None:
    """No reply budget per thread."""
    decisions = _module("decisions")
    _attribute(decisions, "loop_guard_exhausted")
    decisions.loop_guard_exhausted = lambda *args, **kwargs: False


def no_ledger_owner_check() -> None:
    """The writes a lease holder makes to the thread state (the outbox intent and the ledger
    transaction) go through without checking that it still owns the lease; taking the lease
    still checks. (Blinding only the ledger transaction survives: see docs/reliability.md.)"""
    state = _module("state")
    owner = _attribute(state, "LEASE_OWNER")
    _blind(_attribute(_module("outbox"), "Outbox"), owner)
    _blind(_attribute(_module("ledger"), "ReplyLedger"), owner, transactions_only=True)


def no_outbox() -> None:
    """Nothing stored survives an attempt: every holder drafts anew, and never looks for an earlier send."""
    _attribute(_module("outbox"), "Outbox")
    _forget_on_read(_module("state"), intent=None)


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "no_lease",
            (1, 3),
            no_lease,
            "two workers draft for one thread at once; one's intent outlives the other's reply",
            workers=3,
            knobs={
                "burst_probability": 0.8,
                "concurrent_probability": 0.9,
                "slow_send_probability": 0.6,
                "follow_up_probability": 0.6,
            },
        ),
        Mutant(
            "no_ledger_check",
            (1, 3),
            no_ledger_check,
            "a burst's later notifications answer it again",
            knobs={"burst_probability": 0.7},
        ),
        Mutant(
            "fixed_key",
            (2,),
            fixed_key,
            "a provider error cached under the key blocks every retry for the key's hour",
            knobs={"provider_error_probability": 0.15, "redrive_threads": 0},
        ),
        Mutant(
            "date_coverage",
            (2, 3),
            date_coverage,
            "back-dated and mid-send messages are taken for answered",
            knobs={"date_skew_probability": 0.5, "slow_send_probability": 0.5, "follow_up_probability": 0.6},
        ),
        Mutant(
            "no_automaton_filter",
            (4,),
            no_automaton_filter,
            "out-of-office, newsletters and mailer-daemons get answers",
            knobs={"disguised_automaton_probability": 0.15, "automated_probability": 0.1},
        ),
        Mutant(
            "no_loop_guard",
            (4,),
            no_loop_guard,
            "a bot and the agent answer each other",
            knobs={"bot_threads": 3},
        ),
        Mutant(
            "no_ledger_owner_check",
            (1, 2, 3, 4),
            no_ledger_owner_check,
            "a holder whose lease was taken (its clock is behind) records over the new holder's state",
            faults=frozenset({"clock_skew"}),
            knobs={
                "burst_probability": 0.8,
                "concurrent_probability": 0.9,
                "slow_send_probability": 0.6,
                "follow_up_probability": 0.6,
                # A drafter that takes its time, as a model does: the break needs a second holder
                # between the stale one's thread read and its intent store, a moment that is
                # microseconds wide with the instant template drafter (0 of 5 seeds caught without).
                "draft_seconds": 1.0,
            },
            workers=3,
            clock_skew_seconds=20.0,
            # Seed 5 with 70 notifications had no takeover at the wrong moment: it survived there.
            notifications=100,
            seed=6,
        ),
        Mutant(
            "no_outbox",
            (1, 3),
            no_outbox,
            "a retry after a crash or a lost answer drafts a second, different email",
            faults=frozenset({"kill_after_send", "nylas_lost_response"}),
            knobs={"redrive_threads": 2},
        ),
    )
}


def apply(name: str) -> None:
    """Disable one guard in this process (the worker calls this before its first invocation)."""
    if name not in MUTANTS:
        raise SystemExit(f"unknown mutant {name!r}; known: {', '.join(MUTANTS)}")
    MUTANTS[name].disable()


def nonce_drafter() -> None:
    """The drafter's output differs between calls, as a language model's does (a workload knob)."""
    drafter = _module("drafter")
    template = _attribute(drafter, "TemplateDrafter")
    original = template.draft

    def draft(self: Any, message: Any, agent_name: str) -> Any:
        result = original(self, message, agent_name)
        nonce = uuid.uuid4().hex[:12]
        return dataclasses.replace(result, body=f"{result.body}<!-- draft {nonce} -->")

    template.draft = draft


def slow_drafter(seconds: float) -> None:
    """Each draft takes 20-100 % of ``seconds``, as a language model's does (a workload setting)."""
    drafter = _module("drafter")
    template = _attribute(drafter, "TemplateDrafter")
    original = template.draft

    def draft(self: Any, message: Any, agent_name: str) -> Any:
        time.sleep(random.uniform(0.2, 1.0) * seconds)
        return original(self, message, agent_name)

    template.draft = draft
