"""Mutants: the product with one guard disabled, to prove the harnesses can see each break.

A checker that catches no mutant proves nothing. Each mutant patches the
product's own names (``replyonce.adapters.store``, ``replyonce.core``,
``replyonce.rules.plan``, ``replyonce.rules.screening``, ``replyonce.keys``,
``replyonce.rules.coverage``, ``replyonce.state``, ``replyonce.adapters.state_items``); nothing here is a
product setting. Two harnesses use them:

- the interleaving scheduler (``tests/interleavings.py``) applies one in its
  own process with :func:`applied` (undone afterwards) and must find a
  schedule of the mutant's scenario that breaks the invariant (deterministic,
  ``tests/integration/test_interleavings.py``);
- the chaos harness applies one in each worker process (``CHAOS_MUTANT``,
  ``make chaos ARGS="--mutant NAME"``) over a random workload.

A mutant whose target the product does not have raises :class:`MutantPending`.
"""

import contextlib
import dataclasses
import html
import importlib
import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from chaos import written

# The function timeout of every mutant's small chaos run (``make chaos ARGS="--mutant NAME"``).
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
        Patches the product (through the :class:`_Patches` it is given, so it can be undone).
    what:
        The break, in a sentence.
    scenario:
        The interleaving scenario (``tests/interleavings.py``) that must catch it.
    in_the_store:
        It patches the DynamoDB store (or the items it reads): the scheduler then runs the product's
        adapter on moto, not the in-memory fake.
    faults, knobs, workers, clock_skew_seconds, notifications, seed:
        Its small chaos run (``make chaos ARGS="--mutant NAME"``).
    """

    name: str
    guards: tuple[int, ...]
    disable: Callable[["_Patches"], None]
    what: str
    scenario: str
    in_the_store: bool = False
    faults: frozenset[str] | None = frozenset()
    knobs: Mapping[str, Any] = field(default_factory=dict)
    workers: int = 2
    clock_skew_seconds: float = 0.0
    notifications: int = 70
    seed: int = 5


class _Patches:
    """Attribute replacements that can all be undone, in reverse order."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        if not hasattr(owner, name):
            raise MutantPending(f"{getattr(owner, '__name__', owner)} has no {name}")
        self._undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def undo(self) -> None:
        while self._undo:
            owner, name, value = self._undo.pop()
            setattr(owner, name, value)


def _module(name: str) -> Any:
    try:
        return importlib.import_module(f"replyonce.{name}")
    except ImportError as missing:
        raise MutantPending(f"replyonce.{name} does not exist") from missing


# ---- a DynamoDB client that ignores the lease ------------------------------------------------------


def _strip_owner_condition(request: dict[str, Any], owner_attribute: str) -> dict[str, Any]:
    """The same write without a condition that names the lease owner (and its unused values)."""
    condition = request.get("ConditionExpression", "")
    if owner_attribute not in condition:
        return request
    request = {k: v for k, v in request.items() if k != "ConditionExpression"}
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
    """Wraps the store's DynamoDB client: the chosen writes lose their lease-owner condition."""

    def __init__(self, client: Any, owner_attribute: str, *, take_too: bool) -> None:
        self._client = client
        self._owner = owner_attribute
        self._take_too = take_too

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def update_item(self, **request: Any) -> Any:
        taking = request.get("ReturnValues") == "ALL_NEW"
        if self._take_too or not taking:
            request = _strip_owner_condition(request, self._owner)
        return self._client.update_item(**request)

    def transact_write_items(self, **request: Any) -> Any:
        items = []
        for item in request.get("TransactItems", []):
            if "Update" in item:
                item = {**item, "Update": _strip_owner_condition(item["Update"], self._owner)}
            items.append(item)
        return self._client.transact_write_items(**{**request, "TransactItems": items})


def _blind_store(patches: _Patches, *, take_too: bool) -> None:
    store = _module("adapters.store").DynamoDBStateStore
    owner = _module("adapters.state_items").LEASE_OWNER
    original = store.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._dynamodb = _OwnerBlind(self._dynamodb, owner, take_too=take_too)

    patches.set(store, "__init__", __init__)


# ---- the mutants --------------------------------------------------------------------------------


def no_lease(patches: _Patches) -> None:
    """Any worker takes any thread at any time, and every write under the lease goes through."""
    _blind_store(patches, take_too=True)


def no_ledger_owner_check(patches: _Patches) -> None:
    """Taking the lease still checks; the writes a holder makes (its intents, its settlement) do not."""
    _blind_store(patches, take_too=False)


def no_ledger_check(patches: _Patches) -> None:
    """Our state forgets what was settled: the ledger and the thread's covered ids and outbox read empty."""
    store = _module("adapters.store")
    patches.set(store, "ledger_entry_of", lambda message_id, item: None)  # every ledger read finds nothing
    original = _module("adapters.state_items").thread_state_of

    def thread_state_of(item: Mapping[str, Any]) -> Any:
        return dataclasses.replace(original(item), covered={}, replies={})

    patches.set(store, "thread_state_of", thread_state_of)


def no_mailbox_record(patches: _Patches) -> None:
    """Replies' metadata in the mailbox are ignored: only our own tables say what was answered."""
    coverage = _module("rules.coverage")
    planning = _module("core.planning")
    empty = (frozenset(), frozenset())
    patches.set(coverage, "covered_in_mailbox", lambda messages: empty)
    patches.set(planning, "covered_in_mailbox", lambda messages: empty)


def read_stops_before_the_trigger(patches: _Patches) -> None:
    """The thread read stops at the burst's end, before it reached the trigger; the trigger is fetched by
    id and planned without the pages behind (the read before issue 32)."""
    patches.set(_module("core.planning"), "reached", lambda messages_read, trigger_id: True)


def no_new_state_wait(patches: _Patches) -> None:
    """A burst on a thread state just begun (the tables lost) covers more than its trigger at once."""
    patches.set(_module("core.arrival"), "state_settles_in", lambda *args, **kwargs: 0)


def never_attempted_sent_blind(patches: _Patches) -> None:
    """A stored intent with no attempt counted is sent after its key's hour without asking the mailbox."""
    patches.set(_module("core.delivery"), "fate_unknown", lambda intent, now, policy: False)


def fixed_key(patches: _Patches) -> None:
    """One ``Idempotency-Key`` per target whatever the generation (the key before generations)."""
    keys = _module("keys")
    replier = _module("shell.replier")
    original = keys.idempotency_key

    def idempotency_key(grant_id: str, target_id: str, generation: int, scheme: int = 2) -> str:
        return original(grant_id, target_id, 0, scheme)

    patches.set(keys, "idempotency_key", idempotency_key)
    patches.set(replier, "idempotency_key", idempotency_key)


def date_coverage(patches: _Patches) -> None:
    """Coverage by date: a message dated before the agent's latest reply counts as answered, and the
    newest message is the one with the latest ``date`` (the sender's clock)."""
    plan = _module("rules.plan")
    planning = _module("core.planning")
    screening = _module("rules.screening")
    original = plan.plan_burst

    def date(message: Any) -> int:
        return int(message.date)

    def plan_burst(
        trigger_id: str, messages: Any, *, is_covered: Any, own_addresses: Any, **rest: Any
    ) -> Any:
        own = set(own_addresses)
        last_reply = max((date(m) for m in messages if screening.sender_email(m) in own), default=0)
        older = {m.id for m in messages if date(m) <= last_reply}
        by_date = sorted(messages, key=date, reverse=True)
        return original(
            trigger_id,
            by_date,
            is_covered=lambda mid: mid in older or is_covered(mid),
            own_addresses=own_addresses,
            **rest,
        )

    patches.set(plan, "plan_burst", plan_burst)
    patches.set(planning, "plan_burst", plan_burst)


def no_automaton_filter(patches: _Patches) -> None:
    """Machines are answered: no header check, no machine-address check (own mail still skipped)."""
    screening = _module("rules.screening")
    patches.set(screening, "header_reason", lambda message, trusted_lists=(): None)
    patches.set(screening, "is_machine_address", lambda email: False)


def no_loop_guard(patches: _Patches) -> None:
    """No reply budget per thread."""
    plan = _module("rules.plan")
    planning = _module("core.planning")
    patches.set(plan, "loop_guard_exhausted", lambda *args, **kwargs: False)
    patches.set(planning, "loop_guard_exhausted", lambda *args, **kwargs: False)


def in_flight_uncounted(patches: _Patches) -> None:
    """The loop guard counts only replies recorded, queued or visible: not one still being sent."""
    planning = _module("core.planning")
    state_module = _module("state")
    original = planning.unsettled_replies

    def queued_only(state: Any, now: int) -> dict[str, int]:
        queued = {i.id for i in state.outbox.values() if i.state is state_module.IntentState.QUEUED}
        return {rid: t for rid, t in original(state, now).items() if rid in queued}

    patches.set(planning, "unsettled_replies", queued_only)


def people_ignored(patches: _Patches) -> None:
    """A colleague's answer from the mailbox is not counted: only ReplyOnce's own replies cover."""
    plan = _module("rules.plan")
    patches.set(plan, "people_in_thread", lambda messages, own, sent=(): plan.PeopleInThread(frozenset(), {}))


def one_recipient(patches: _Patches) -> None:
    """A reply covers every sender's message but goes to the newest sender alone."""
    plan = _module("rules.plan")

    def to_the_newest(burst: Any, target: Any, first: Any, messages: Any, **kwargs: Any) -> Any:
        return tuple(burst), (first,)

    patches.set(plan, "reach_everyone", to_the_newest)


def exchanges_uncounted(patches: _Patches) -> None:
    """Automatic exchanges are not counted: an agent whose marks are lost is answered until the budget."""
    plan = _module("rules.plan")
    patches.set(plan, "automatic_exchanges", lambda *args, **kwargs: 0)


def budget_by_spelling(patches: _Patches) -> None:
    """The per-recipient budget is kept per spelling (lower case only): one inbox, many budgets."""
    state_items = _module("adapters.state_items")
    patches.set(state_items, "mailbox_key", lambda email: email.strip().lower())


def quote_cut(patches: _Patches) -> None:
    """The agent reads only what stands above the first quoted line or attribution (the old reader)."""
    text = _module("rules.text")
    conversation = _module("rules.conversation")

    def above_the_quote(body: str, subject: str | None = None) -> str:  # new_text's signature
        kept: list[str] = []
        for line in text.html_to_text(body).splitlines():
            if line.lstrip().startswith(">") or line.rstrip().endswith(("wrote:", "schrieb:", "a écrit :")):
                break
            kept.append(line)
        return "\n".join(kept).strip()

    patches.set(text, "new_text", above_the_quote)
    patches.set(conversation, "new_text", above_the_quote)


def no_outbox(patches: _Patches) -> None:
    """Nothing stored survives an attempt: each holder asks the agent anew, never finishing an intent."""
    store = _module("adapters.store")
    original = _module("adapters.state_items").thread_state_of

    def thread_state_of(item: Mapping[str, Any]) -> Any:
        return dataclasses.replace(original(item), outbox={})

    patches.set(store, "thread_state_of", thread_state_of)


def shadow_sends(patches: _Patches) -> None:
    """Shadow mode stores and sends the agent's reply as ``send`` mode does (only its declines are kept)."""
    arrival = _module("core.arrival")
    original = arrival._agent_answered

    def agent_answered(s: Any, *args: Any, **kwargs: Any) -> Any:
        if type(getattr(s.phase, "outcome", None)).__name__ == "Reply":
            s = dataclasses.replace(s, policy=dataclasses.replace(s.policy, shadow_mode=False))
        return original(s, *args, **kwargs)

    patches.set(arrival, "_agent_answered", agent_answered)
    patches.set(_module("core.dispatch"), "in_shadow", lambda s, step: step)


def shadow_lease_ignored(patches: _Patches) -> None:
    """A shadow settlement is written without the lease, as a reply's is: a stale holder records too."""
    state = _module("state")
    patches.set(state.Settlement, "writes_without_lease", property(lambda self: True))


def skip_without_handoff(patches: _Patches) -> None:
    """A rule's no to a person's message is a plain skip again: logged, and nobody is told (the rule before
    invariant 7)."""
    patches.set(_module("core.arrival"), "no_silent_no", lambda s, arrived, step, now: step)


def fence_off(patches: _Patches) -> None:
    """Every Region takes leases and sends whatever the active-Region record says."""
    patches.set(_module("core.dispatch"), "fence", lambda s, step: step)


def handover_without_the_queue(patches: _Patches) -> None:
    """The handover a lease and the settle only (before issue 48): a reply the old Region's send left in
    the Agent Account queue is listed after the new Region has read the thread without it."""
    policy = _module("policy").Policy
    patches.set(policy, "handover_seconds", property(lambda self: self.lease_seconds + self.settle_seconds))


def no_driver_for_a_lost_intent(patches: _Patches) -> None:
    """An intent whose record is gone is driven by nobody (before issue 48): its message is never answered."""
    patches.set(_module("core.dispatch"), "drive_undriven", lambda s: None)


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "no_lease",
            (1, 3),
            no_lease,
            "two workers plan one thread at once: a message is answered by both",
            "burst_race",
            in_the_store=True,
            workers=3,
            knobs={"burst_probability": 0.8, "concurrent_probability": 0.9, "slow_send_probability": 0.6},
        ),
        Mutant(
            "no_ledger_owner_check",
            (1, 3),
            no_ledger_owner_check,
            "a holder whose lease expired stores and sends over the new holder's reply",
            "skewed_holder",
            in_the_store=True,
            faults=frozenset({"clock_skew"}),
            knobs={"burst_probability": 0.8, "concurrent_probability": 0.9, "draft_seconds": 1.0},
            workers=3,
            clock_skew_seconds=20.0,
            notifications=100,
            seed=6,
        ),
        Mutant(
            "no_ledger_check",
            (1,),
            no_ledger_check,
            "a follow-up before the thread lists the first reply: the burst answers the first message again",
            "follow_up_before_the_reply_is_listed",
            in_the_store=True,
            knobs={"burst_probability": 0.7},
        ),
        Mutant(
            "read_stops_before_the_trigger",
            (1,),
            read_stops_before_the_trigger,
            "after the tables are lost, an old message's reply on a page not read: it is answered again",
            "state_loss_on_a_long_thread",
            knobs={"burst_probability": 0.7},
        ),
        Mutant(
            "no_new_state_wait",
            (1,),
            no_new_state_wait,
            "a reply queued when the tables are lost, and a follow-up's burst covers its message again",
            "queued_reply_then_state_lost",
        ),
        Mutant(
            "handover_without_the_queue",
            (1,),
            handover_without_the_queue,
            "a failover during a slow queued send: the new Region answers the first message again",
            "failover_during_a_slow_queued_send",
        ),
        Mutant(
            "no_driver_for_a_lost_intent",
            (2,),
            no_driver_for_a_lost_intent,
            "a reply whose record's dead letter was lost is never sent: its message never answered",
            "dead_letter_lost_then_follow_up",
        ),
        Mutant(
            "never_attempted_sent_blind",
            (1,),
            never_attempted_sent_blind,
            "a restored intent with no attempt counted is sent after its key's hour: its email was out",
            "restored_between_store_and_attempt",
        ),
        Mutant(
            "no_mailbox_record",
            (1,),
            no_mailbox_record,
            "after our tables are lost, a redelivered message is answered again",
            "state_loss",
        ),
        Mutant(
            "fixed_key",
            (2,),
            fixed_key,
            "an error cached under the key blocks every later attempt: the reply never goes out",
            "provider_error_not_sent",
            knobs={"provider_error_probability": 0.15, "redrive_threads": 0},
        ),
        Mutant(
            "date_coverage",
            (2, 3),
            date_coverage,
            "a back-dated follow-up is taken for answered",
            "back_dated_follow_up",
            knobs={"date_skew_probability": 0.5, "follow_up_probability": 0.6},
        ),
        Mutant(
            "no_automaton_filter",
            (4,),
            no_automaton_filter,
            "an out-of-office reply gets an answer",
            "out_of_office",
            knobs={"disguised_automaton_probability": 0.15, "automated_probability": 0.1},
        ),
        Mutant(
            "no_loop_guard",
            (4,),
            no_loop_guard,
            "a bot and the agent answer each other past the budget",
            "bot_ping_pong",
            knobs={"bot_threads": 3},
        ),
        Mutant(
            "in_flight_uncounted",
            (4,),
            in_flight_uncounted,
            "a follow-up is answered while the thread's last reply is still being sent: one over the budget",
            "reply_in_flight_then_follow_up",
            faults=frozenset({"nylas_timeout", "nylas_lost_response"}),
            knobs={"follow_up_probability": 0.8, "slow_send_probability": 0.5},
        ),
        Mutant(
            "people_ignored",
            (1,),
            people_ignored,
            "a question a colleague answered from the shared mailbox is answered again by the agent",
            "colleague_answered_first",
            knobs={"teammate_probability": 0.3, "follow_up_probability": 0.8},
        ),
        Mutant(
            "one_recipient",
            (2,),
            one_recipient,
            "a customer whose Cc'd colleague answered all first is recorded answered, and gets nothing",
            "cc_reply_all",
            knobs={"cc_chain_probability": 0.3},
        ),
        Mutant(
            "skip_without_handoff",
            (7,),
            skip_without_handoff,
            "a customer's third quick question meets the exchange limit and is skipped, and nobody is told",
            "third_question_at_robot_speed",
            knobs={"relay_verification_probability": 0.3},
        ),
        Mutant(
            "exchanges_uncounted",
            (4,),
            exchanges_uncounted,
            "another company's agent, its marks lost, and ours answer each other until the hourly budget",
            "agents_answer_each_other",
            knobs={"peer_deployment_probability": 0.3, "peer_marks_lost_fraction": 1.0},
        ),
        Mutant(
            "budget_by_spelling",
            (4,),
            budget_by_spelling,
            "one Gmail inbox writing from six spellings gets six replies against a budget of four",
            "one_inbox_many_spellings",
            knobs={"spelled_mailbox_probability": 0.2},
        ),
        Mutant(
            "quote_cut",
            (2,),
            quote_cut,
            "a customer who answers below the quote is answered without what they wrote",
            "bottom_posted_answer",
            knobs={"written_reply_probability": 1.0, "follow_up_probability": 0.8},
        ),
        Mutant(
            "no_outbox",
            (1, 3),
            no_outbox,
            "a retry after a lost answer asks the agent again and a second, different email goes out",
            "lost_answer_then_follow_up",
            in_the_store=True,
            faults=frozenset({"kill_after_send", "nylas_lost_response"}),
            knobs={"redrive_threads": 2},
        ),
        # Shadow mode's guards: the chaos harness runs no shadow workload, so their small chaos runs
        # only exercise the product; the interleaving scenario is what catches them.
        Mutant(
            "shadow_sends",
            (1,),
            shadow_sends,
            "in shadow mode the agent's reply goes out to the customer",
            "shadow_burst",
        ),
        Mutant(
            "shadow_lease_ignored",
            (1,),
            shadow_lease_ignored,
            "in shadow mode a holder whose lease ran out still records its burst beside the new holder's",
            "shadow_stale_holder",
            in_the_store=True,
        ),
        Mutant(
            "fence_off",
            (1, 3),
            fence_off,
            "after a failover the old Region keeps sending: the new one, whose replica lags, answers again",
            # Not failover_mid_reply since issue 48: there the new Region's replica lacks the thread, and
            # its new thread item's wait alone lists the old Region's reply first.
            "failover_during_a_slow_queued_send",
        ),
    )
}


# ---- issue 42: a grant's life, caught by the chaos run's per-grant checks (chaos/grant_checks.py) ----------


def _grant_directory() -> Any:
    return _module("shell.grants").GrantDirectory


def deletion_unchecked_at_send(patches: _Patches) -> None:
    """No deletion check before a send: the grant's life read (``GrantDirectory.refuse_if_deleted``) lets
    everything through, so an intent whose transaction's check found the grant deleted is stored without
    the check and sent; only the registry's cache stops a deleted grant, and a record begun on a cache
    that does not know yet sends after the deletion."""
    patches.set(_grant_directory(), "refuse_if_deleted", lambda self, grant_id: None)


def paused_skipped(patches: _Patches) -> None:
    """A paused (or expired) grant's record is skipped as no agent grant's instead of deferred: its mail
    is dropped, not kept waiting."""
    directory = _grant_directory()
    original = directory.choose
    exceptions, reasons = _module("exceptions"), _module("reasons")
    chosen = _module("shell.grants").Chosen

    def choose(self: Any, grant_id: str) -> Any:
        try:
            return original(self, grant_id)
        except exceptions.Deferred as deferred:
            if deferred.reason != reasons.DeferReason.GRANT_PAUSED:
                raise
            # Not an agent grant for this record: the core skips it (grant_not_agent), nothing waits.
            return chosen(None, tuple(g for g in self.agent_grant_ids() if g != grant_id))

    patches.set(directory, "choose", choose)


def registry_shadow_ignored(patches: _Patches) -> None:
    """A grant's record saying ``shadow`` (the operator's, or the one ``grant.created`` writes) is read as
    ``send``: the stack's parameter alone can put a grant in shadow."""
    shell = _module("shell.grants")
    original = shell.overlay

    def overlay(defaults: Any, record: Any) -> Any:
        settings = original(defaults, record)
        if settings.reply_mode == "shadow":
            return dataclasses.replace(settings, reply_mode="send")
        return settings

    patches.set(shell, "overlay", overlay)


# A small multi-grant run each (chaos/grants.py): 10 grants, one of each life.
_FLEET = {"grant_fleet": 10, "grant_share": 0.8, "draft_seconds": 1.0}

GRANT_MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "deletion_unchecked_at_send",
            (8,),
            deletion_unchecked_at_send,
            "a grant Nylas deleted still sends from records begun before every cache knew",
            "",
            knobs=_FLEET,
            notifications=200,
            seed=42,
        ),
        Mutant(
            "paused_skipped",
            (11, 2, 7),
            paused_skipped,
            "a paused grant's mail is skipped instead of kept waiting: lost across the pause",
            "",
            knobs=_FLEET,
            notifications=200,
            seed=42,
        ),
        Mutant(
            "registry_shadow_ignored",
            (9,),
            registry_shadow_ignored,
            "a grant its record puts in shadow (set by the operator, or created by Nylas) sends",
            "",
            knobs=_FLEET,
            notifications=200,
            seed=42,
        ),
    )
}
"""Mutants of a grant's life: no interleaving scenario (``scenario`` empty); the chaos run catches them."""

ALL_MUTANTS: dict[str, Mutant] = {**MUTANTS, **GRANT_MUTANTS}


@contextlib.contextmanager
def applied(name: str) -> Iterator[Mutant]:
    """The product with mutant ``name`` in this process, for the duration of the block."""
    mutant = ALL_MUTANTS[name]
    patches = _Patches()
    try:
        mutant.disable(patches)
        yield mutant
    finally:
        patches.undo()


def apply(name: str) -> None:
    """Disable one guard in this process for good (a chaos worker, before its first invocation)."""
    if name not in ALL_MUTANTS:
        raise SystemExit(f"unknown mutant {name!r}; known: {', '.join(ALL_MUTANTS)}")
    ALL_MUTANTS[name].disable(_Patches())


def nonce_agent() -> None:
    """The template agent's text differs between calls, as a language model's does (a workload knob)."""
    agents = _module("adapters.agents")
    original = agents.template_agent

    def template_agent(conversation: Any) -> Any:
        reply = original(conversation)
        return dataclasses.replace(reply, text=f"{reply.text}\n\n(draft {uuid.uuid4().hex[:12]})")

    _Patches().set(agents, "template_agent", template_agent)


def echo_agent() -> None:
    """The template agent also says back what it was given as each message's text, and attaches the
    inline image a customer asks for (a workload knob: ``chaos/written.py``).

    Why: the email on the wire then shows what the agent read, so the checker can hold the product to
    the customer's words (``devstack.invariants``, invariant 2) and to replies of any size.
    """
    agents = _module("adapters.agents")
    original = agents.template_agent

    def template_agent(conversation: Any) -> Any:
        reply = original(conversation)
        said = "\n\n".join(f"You wrote: {m.text}" for m in conversation.to_answer)
        text = f"{reply.text}\n\n{said}"
        asked = [size for request, size in written.INLINE_IMAGE_BYTES.items() if request in said]
        if not asked:
            return dataclasses.replace(reply, text=text)
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n"))
        return dataclasses.replace(reply, text=text, html=paragraphs + written.inline_image(max(asked)))

    _Patches().set(agents, "template_agent", template_agent)


def slow_agent(seconds: float) -> None:
    """Each answer of the template agent takes 20-100 % of ``seconds``, as a model's does (a knob)."""
    agents = _module("adapters.agents")
    original = agents.template_agent

    def template_agent(conversation: Any) -> Any:
        time.sleep(random.uniform(0.2, 1.0) * seconds)
        return original(conversation)

    _Patches().set(agents, "template_agent", template_agent)
