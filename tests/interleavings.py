"""A deterministic scheduler over real replier workers: every interleaving of their port calls, checked.

Races scripted, not raced. Each worker is the real shell and core
(``replyonce.shell.replier.Replier``) of one Lambda container, with the real
DynamoDB store (on the session's moto server) and an in-memory mailbox
(``tests/fakes.py``), and every call it makes through a port is a pause
point the scheduler owns: a worker runs only when chosen, one call at a
time. The scheduler walks the orderings of the workers' calls (and of the
scenario's world events — a message arriving, time passing) depth first,
with at most ``preemptions`` switches away from a worker that could have gone
on, re-running the scenario from scratch for each. After each schedule it
checks the invariants against what the world saw, knowing nothing of the
product: the emails that went out, what each says it answers (the harness's
agent writes the ids it was asked to answer into the reply, as a customer
reads them), the scenario's ground truth.

A schedule is a tuple of choices; one that breaks an invariant is reported
with its steps, and replays the same way every time.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import boto3
from moto import mock_aws

from replyonce.adapters.state_items import table_began_item
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.agent import Conversation, Reply
from replyonce.exceptions import Deferred
from replyonce.jobs import Job, MessageArrived
from replyonce.policy import Policy
from replyonce.shell.replier import Replier
from replyonce.state import ShadowOutcome
from tests.fakes import Clock, FakeMailbox, FakeRegionFence, FakeStateStore

GRANT = "grant-agent-0001"
AGENT_EMAIL = "support@acme.example"
ANSWERS_PREFIX = "answers:"


def agent(conversation: Conversation) -> Reply:
    """The scenario's agent: it says back what it read of each message, then, in the reply a customer
    reads, which messages it answers."""
    wrote = " ".join(f"wrote: {m.text}" for m in conversation.to_answer)
    return Reply(text=f"{wrote}\n\n{ANSWERS_PREFIX} {' '.join(m.id for m in conversation.to_answer)}")


class Crash(BaseException):
    """The worker's container died at this call (a ``BaseException``: nothing of the product catches it)."""


# ---- the pause points ----------------------------------------------------------------------------------


class _Gate:
    """One worker's pause points: it parks before each call until the scheduler lets it run."""

    def __init__(self, name: str, scheduler: Schedule) -> None:
        self.name = name
        self._scheduler = scheduler
        self._go = threading.Semaphore(0)
        self.waiting_for = ""

    def pause(self, label: str) -> None:
        self.waiting_for = label
        self._scheduler.parked(self)
        self._go.acquire()

    def release(self) -> None:
        self._go.release()


class _Gated:
    """A port whose every call first waits at the worker's gate."""

    def __init__(
        self, inner: Any, gate: _Gate, prefix: str, *, ungated: frozenset[str] = frozenset()
    ) -> None:
        self._inner = inner
        self._gate = gate
        self._prefix = prefix
        self._ungated = ungated

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target) or name in self._ungated:
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self._gate.pause(f"{self._prefix}.{name}")
            return target(*args, **kwargs)

        return call


# ---- the state store: the DynamoDB adapter, or the fake tests/contract/test_recipient_budget.py holds to it


IN_SERVICE_SECONDS = 86_400
"""Each scenario's table has been in service this long (``table#began``); ``forget_state`` makes it new."""


class SharedStore:
    """One state table for a schedule; each container gets its own client (adapter) on it."""

    def container(self, clock: Callable[[], float]) -> Any:
        """The container's adapter, reading ``clock`` (the container's own, perhaps skewed)."""
        raise NotImplementedError

    def forget(self) -> None:
        raise NotImplementedError

    def shadow_records(self) -> list[Any]:
        """Every shadow record of the table (``REPLY_MODE=shadow`` scenarios)."""
        raise NotImplementedError

    def fake(self) -> FakeStateStore:
        """The in-memory table, for a scenario that snapshots and restores it (in memory only)."""
        raise NotImplementedError(f"{type(self).__name__} has no snapshots")


class InMemory(SharedStore):
    """``tests/fakes.FakeStateStore`` (microseconds: thousands of schedules)."""

    def __init__(self, clock: Clock) -> None:
        self._store = FakeStateStore(clock)
        self._store.began_ms = int((clock() - IN_SERVICE_SECONDS) * 1000)

    def container(self, clock: Callable[[], float]) -> Any:
        # One fake for every container, on the world's clock: a skewed container needs OnDynamoDB,
        # whose adapter reads its container's clock for the lease's conditions.
        return self._store

    def forget(self) -> None:
        self._store.forget_everything()

    def shadow_records(self) -> list[Any]:
        return list(self._store.shadow.values())

    def fake(self) -> FakeStateStore:
        return self._store


class OnDynamoDB(SharedStore):
    """``replyonce.adapters.store.DynamoDBStateStore`` on moto's DynamoDB in this process (the guards of the
    lease)."""

    def __init__(self, clock: Clock, dynamodb: Any, table: str) -> None:
        self._dynamodb, self._table = dynamodb, table
        _empty(dynamodb, table)
        dynamodb.put_item(TableName=table, Item=table_began_item(int((clock() - IN_SERVICE_SECONDS) * 1000)))

    def container(self, clock: Callable[[], float]) -> Any:
        return DynamoDBStateStore(self._table, self._dynamodb, ttl_seconds=86_400, clock=clock)

    def forget(self) -> None:
        _empty(self._dynamodb, self._table)

    def shadow_records(self) -> list[Any]:
        return DynamoDBStateStore(self._table, self._dynamodb, ttl_seconds=86_400).shadow_records()


StoreFactory = Callable[[Clock], SharedStore]


# ---- one run of a scenario under one schedule ----------------------------------------------------------


@dataclass
class Record:
    """A record on the queue: what a worker will be given, and when it may be received."""

    job: Job
    due: float = 0.0
    runs: int = 0
    label: str = ""
    clock_lag: float = 0.0  # the container's clock runs this far behind the world's (clock skew)
    region: str = ""  # a Region of a deployment across Regions (World.in_regions): its own state table
    max_runs: int | None = None  # received at most this often (the scenario's ``max_runs`` if None)


@dataclass
class Event:
    """A world event the scheduler may fire at any point: a message arriving, time passing."""

    name: str
    fire: Callable[[World], list[Record]]
    ready: Callable[[World], bool] = lambda world: True  # it can happen only once this holds


@dataclass
class World:
    """What the scenario sets up and the checker reads: the mailbox, the clock, the ground truth."""

    clock: Clock
    mailbox: FakeMailbox
    stores: SharedStore
    policy: Policy
    must_answer: set[str] = field(default_factory=set)
    must_not_answer: set[str] = field(default_factory=set)
    answered_by_person: set[str] = field(default_factory=set)  # a colleague answered from the mailbox
    # Messages a person wrote (ground truth): each ends answered by an email, by a person, or in the
    # mailbox's hand-off folder (invariant 7: no silent no).
    people: set[str] = field(default_factory=set)
    senders: dict[str, str] = field(default_factory=dict)  # inbound message id -> its sender
    budget_per_hour: int | None = None
    # Emails to one correspondent on the thread that it answered at robot speed, at most, before the next
    # (no person writes in these scenarios).
    max_exchanges: int | None = None
    # Emails to one inbox, at most, and which spellings reach which inbox (ground truth).
    recipient_budget: int | None = None
    inboxes: dict[str, str] = field(default_factory=dict)
    words: dict[str, tuple[str, ...]] = field(default_factory=dict)  # message id -> what its sender wrote
    # REPLY_MODE=shadow: nothing may go out, and each message of must_answer is recorded by one burst.
    shadow: bool = False
    # Active-passive across Regions: each Region's own state table (none replicated: the worst lag),
    # one active-Region record all of them read (``in_regions``).
    regions: dict[str, SharedStore] = field(default_factory=dict)
    fence: FakeRegionFence | None = None
    # A grant's daily agent-call cap (issue 42): the bursts (conversation keys) the agent was asked about,
    # at most this many (ground truth: the scenario's agent records each call it gets).
    agent_call_cap: int | None = None
    asked: set[str] = field(default_factory=set)

    def in_regions(self, *names: str) -> None:
        """The deployment spans these Regions, the first one active; records name theirs."""
        self.regions = {name: InMemory(self.clock) for name in names}
        self.fence = FakeRegionFence(self.clock, names[0])

    def arrive(self, **kwargs: Any) -> dict[str, Any]:
        message = self.mailbox.deliver(GRANT, **kwargs)
        self.senders[message["id"]] = str(kwargs.get("sender", "")).lower()
        return message

    def record(self, message: dict[str, Any], label: str = "", region: str = "") -> Record:
        return Record(
            MessageArrived(GRANT, message["id"], message["thread_id"], {"from": message["from"]}),
            label=label,
            region=region,
        )

    def forget_state(self) -> None:
        """Our tables are gone (a point-in-time restore from before the replies, a recreated table)."""
        self.stores.forget()


@dataclass(frozen=True)
class Scenario:
    """A small world, its records and events, and what must (not) be answered."""

    name: str
    setup: Callable[[World], tuple[list[Record], list[Event]]]
    policy: Policy = field(default_factory=lambda: Policy(agent_grant_ids=(GRANT,)))
    max_runs: int = 6
    agent_seconds: float = 0.0  # how long the agent takes to answer, on the world's clock


@dataclass
class Outcome:
    """One schedule: its choices, its steps as run, the violations found."""

    choices: tuple[int, ...]
    steps: list[str]
    violations: list[str]
    options: list[int]  # how many actors could have gone at each choice
    defaults: list[int]  # the choice that switches nothing: the same worker, else the first actor

    @property
    def preemptions(self) -> int:
        return preemptions(self.choices, self.defaults)


class Schedule:
    """Runs one scenario under one sequence of choices (and the default beyond it)."""

    def __init__(self, scenario: Scenario, choices: Sequence[int], stores: StoreFactory) -> None:
        self._scenario = scenario
        self._choices = list(choices)
        self._lock = threading.Condition()
        self._parked: set[_Gate] = set()
        self._running: set[str] = set()
        self._stores = stores

    def parked(self, gate: _Gate) -> None:
        with self._lock:
            self._running.discard(gate.name)
            self._parked.add(gate)
            self._lock.notify_all()

    def _finished(self, name: str) -> None:
        with self._lock:
            self._running.discard(name)
            self._lock.notify_all()

    def _quiet(self) -> None:
        with self._lock:
            if not self._lock.wait_for(lambda: not self._running, timeout=30):
                raise RuntimeError(f"workers did not park: {sorted(self._running)}")

    def run(self) -> Outcome:
        clock = Clock()
        mailbox = FakeMailbox(clock)
        mailbox.add_grant(GRANT, AGENT_EMAIL, "Acme Support")
        shared = self._stores(clock)
        world = World(clock, mailbox, shared, self._scenario.policy)
        records, events = self._scenario.setup(world)
        pending: list[Record] = list(records)
        workers: dict[str, tuple[_Gate, threading.Thread]] = {}
        steps: list[str] = []
        unexpected: list[str] = []
        options: list[int] = []
        defaults: list[int] = []
        made: list[int] = []
        last = ""
        counter = itertools.count()

        def slow_agent(conversation: Conversation) -> Reply:
            world.asked.add(conversation.key)
            clock.advance(self._scenario.agent_seconds)
            return agent(conversation)

        def start(record: Record) -> None:
            record.runs += 1
            name = f"w{next(counter)}:{record.label or getattr(record.job, 'message_id', 'r')}"
            gate = _Gate(name, self)
            lag = record.clock_lag
            own_clock = (lambda: clock.now - lag) if lag else clock
            store = shared.container(own_clock)
            policy, fence = self._scenario.policy, None
            if record.region:
                # A Region's worker: its Region's table, fenced by the one record every Region reads.
                store = world.regions[record.region].container(own_clock)
                policy = replace(policy, fence_region=record.region)
                fence = _Gated(world.fence, gate, "fence")
            replier = Replier(
                policy,
                _Gated(store, gate, "store"),
                _Gated(mailbox, gate, "mailbox", ungated=frozenset({"grant", "folders"})),
                slow_agent,
                reconcile_later=lambda due, seconds: None,
                lease_wait_seconds=0.0,
                clock=own_clock,
                fence=fence,
                monotonic=own_clock,
                sleep=lambda seconds: None,
            )

            def body() -> None:
                try:
                    replier.handle(record.job, remaining_seconds=lambda: 900.0)
                except Deferred as deferred:
                    if record.runs < (record.max_runs or self._scenario.max_runs):
                        record.due = clock.now + (deferred.seconds if deferred.seconds is not None else 10)
                        pending.append(record)
                    steps.append(f"{name} deferred ({deferred.reason.value})")
                except Crash:
                    if record.runs < (record.max_runs or self._scenario.max_runs):
                        record.due = clock.now + self._scenario.policy.lease_seconds + 1
                        pending.append(record)
                    steps.append(f"{name} crashed")
                except Exception as failure:  # no fault is injected here: any other failure is a bug
                    unexpected.append(f"{name}: {type(failure).__name__}: {failure}")
                    steps.append(f"{name} failed unexpectedly")
                finally:
                    self._finished(name)

            with self._lock:
                self._running.add(name)
            thread = threading.Thread(target=body, name=name, daemon=True)
            workers[name] = (gate, thread)
            thread.start()

        for record in list(pending):
            pending.remove(record)
            start(record)
        for _ in range(400):
            self._quiet()
            with self._lock:
                parked = sorted(self._parked, key=lambda g: g.name)
            actors: list[tuple[str, Any]] = [(g.name, g) for g in parked] + [
                (e.name, e) for e in events if e.ready(world)
            ]
            if not actors:
                if not pending:
                    break
                # Nothing can run now: the next record comes back when it is due.
                record = min(pending, key=lambda r: r.due)
                pending.remove(record)
                clock.now = max(clock.now, record.due)
                start(record)
                continue
            index = len(made)
            names = [name for name, _ in actors]
            default = names.index(last) if last in names else 0
            choice = self._choices[index] if index < len(self._choices) else default
            choice = min(choice, len(actors) - 1)
            made.append(choice)
            options.append(len(actors))
            defaults.append(default)
            name, actor = actors[choice]
            last = name
            if isinstance(actor, Event):
                events.remove(actor)
                steps.append(f"event {name}")
                for record in actor.fire(world):
                    start(record)
                continue
            steps.append(f"{name} {actor.waiting_for}")
            with self._lock:
                self._parked.discard(actor)
                self._running.add(name)
            actor.release()
        else:
            raise RuntimeError(f"scenario {self._scenario.name} did not end within 400 steps")
        for _gate, thread in workers.values():
            thread.join(timeout=10)
        mailbox.release_queued()
        violations = [f"bug: {failure}" for failure in unexpected] + check(world)
        return Outcome(tuple(made), steps, violations, options, defaults)


# ---- the world-only checker ----------------------------------------------------------------------------


def answered_by(email_body: str) -> list[str]:
    """The message ids an email says it answers (the harness agent writes them; a customer reads them)."""
    text = _plain(email_body)
    if ANSWERS_PREFIX not in text:
        return []
    return text.split(ANSWERS_PREFIX, 1)[1].split()


def _plain(email_body: str) -> str:
    return email_body.replace("<p>", " ").replace("</p>", " ").replace("<br>", " ")


def check_shadow(world: World) -> list[str]:
    """Shadow mode's invariants: no email and no draft (1: at most once is at most zero); each message
    the agent was asked about recorded by one burst's shadow record (1), none left unrecorded (2)."""
    found = [f"1: an email went out in shadow mode ({email.message['id']})" for email in world.mailbox.sent]
    found += [f"1: a draft was made in shadow mode ({draft.get('id')})" for draft in world.mailbox.drafts]
    recorded = Counter(
        m for r in world.stores.shadow_records() if r.outcome is not ShadowOutcome.SKIPPED for m in r.covered
    )
    for message_id, count in sorted(recorded.items()):
        if count > 1:
            found.append(f"1: {message_id} recorded by {count} shadow records")
    for message_id in sorted(world.must_answer - set(recorded)):
        found.append(f"2: {message_id} never recorded")
    return found


def check(world: World) -> list[str]:
    """The invariants that the world can see, from the emails that went out and the ground truth."""
    if world.shadow:
        return check_shadow(world)
    found: list[str] = []
    answered: dict[str, int] = {}
    for email in world.mailbox.sent:
        ids = answered_by(str(email.request.get("body", "")))
        for message_id in ids:
            answered[message_id] = answered.get(message_id, 0) + 1
            if message_id in world.must_not_answer:
                found.append(f"4: {message_id} must not be answered, and was")
            if message_id in world.answered_by_person:
                found.append(f"1: {message_id} was answered by a person, and again by the agent")
        recipients = [r.get("email") for r in email.request.get("to", [])]
        if AGENT_EMAIL in recipients:
            found.append(f"4: an email went to the agent's own address ({email.message['id']})")
        # Every message an email says it answers must have its sender among the email's recipients.
        for message_id in ids:
            sender = world.senders.get(message_id)
            if sender and sender not in recipients:
                found.append(f"2: {message_id} answered by an email its sender ({sender}) never got")
            missing = [
                w for w in world.words.get(message_id, ()) if w not in _plain(str(email.request.get("body")))
            ]
            if missing:
                found.append(f"2: {message_id} answered without what its sender wrote ({', '.join(missing)})")
    if world.max_exchanges is not None:
        found += _exchanges_past_the_limit(world)
    if world.agent_call_cap is not None and len(world.asked) > world.agent_call_cap:
        # The cap is no invariant of the seven: it is the grant's spend (issue 42), named "cap".
        found.append(f"cap: the agent was asked about {len(world.asked)} bursts (cap {world.agent_call_cap})")
    found += _people_left_in_silence(world, answered)
    if world.recipient_budget is not None:
        per_inbox = Counter(
            world.inboxes.get(str(r.get("email")).lower(), str(r.get("email")).lower())
            for email in world.mailbox.sent
            for r in email.request.get("to", [])
        )
        for inbox, count in sorted(per_inbox.items()):
            if count > world.recipient_budget:
                found.append(
                    f"4: {count} emails to the inbox {inbox} in an hour (at most {world.recipient_budget})"
                )
    for message_id, count in sorted(answered.items()):
        if count > 1:
            found.append(f"1: {message_id} answered by {count} emails")
    for message_id in sorted(world.must_answer - set(answered)):
        found.append(f"2: {message_id} never answered")
    if world.budget_per_hour is not None:
        times = sorted(email.at for email in world.mailbox.sent)
        for first, last in zip(times, times[world.budget_per_hour :], strict=False):
            if last - first < 3600:
                found.append(f"4: more than {world.budget_per_hour} emails on one thread within an hour")
                break
    return found


# ---- exploring -----------------------------------------------------------------------------------------


def preemptions(choices: Sequence[int], defaults: Sequence[int]) -> int:
    """Choices that switched away from the default (a worker that could have gone on)."""
    return sum(1 for c, d in zip(choices, defaults, strict=False) if c != d)


@dataclass
class Exploration:
    """What exploring a scenario found: every schedule run, and the first that broke something."""

    schedules: int
    failing: Outcome | None


@contextlib.contextmanager
def _embedded_dynamodb() -> Iterator[tuple[Any, str]]:
    """Moto's DynamoDB in this process (no HTTP hop: thousands of schedules), with the template's state table.

    The product's adapter talks to it through an ordinary boto3 client: only the transport differs
    from the moto server the other tests use.
    """
    with mock_aws():
        client = boto3.client(
            "dynamodb", region_name="us-east-1", endpoint_url="https://dynamodb.us-east-1.amazonaws.com"
        )
        yield client, _fresh_table(client)


def _empty(dynamodb: Any, table: str) -> None:
    for item in dynamodb.scan(TableName=table, ConsistentRead=True).get("Items", []):
        dynamodb.delete_item(TableName=table, Key={"pk": item["pk"]})


@contextlib.contextmanager
def store_factory(on_dynamodb: bool) -> Iterator[StoreFactory]:
    """How each schedule gets its state store: the fake, or the product's adapter on moto."""
    if not on_dynamodb:
        yield InMemory
        return
    with _embedded_dynamodb() as (dynamodb, table):
        yield lambda clock: OnDynamoDB(clock, dynamodb, table)


def explore(
    scenario: Scenario, *, on_dynamodb: bool = False, max_preemptions: int = 2, limit: int = 5000
) -> Exploration:
    """Every schedule of ``scenario`` with at most ``max_preemptions`` non-default choices, depth first.

    Stops at the first schedule that breaks an invariant (returned), or when all were run.
    """
    frontier: list[tuple[int, ...]] = [()]
    schedules = 0
    with store_factory(on_dynamodb) as stores:
        while frontier and schedules < limit:
            prefix = frontier.pop()
            outcome = Schedule(scenario, prefix, stores).run()
            schedules += 1
            if outcome.violations:
                return Exploration(schedules, outcome)
            # Branch at every choice after the prefix: each other option, within the preemption bound.
            for position in range(len(outcome.choices) - 1, len(prefix) - 1, -1):
                head = outcome.choices[:position]
                if preemptions(head, outcome.defaults) >= max_preemptions:
                    continue
                for alternative in range(outcome.options[position]):
                    if alternative != outcome.defaults[position]:
                        frontier.append((*head, alternative))
    return Exploration(schedules, None)


def replay(scenario: Scenario, choices: Sequence[int], *, on_dynamodb: bool = False) -> Outcome:
    """Run ``scenario`` under exactly ``choices`` (the schedule a test names)."""
    with store_factory(on_dynamodb) as stores:
        return Schedule(scenario, choices, stores).run()


def _fresh_table(dynamodb: Any) -> str:
    """A state table of the template's shape (key ``pk``), new for each schedule."""
    from ops.template import load_template

    properties = load_template()["Resources"]["StateTable"]["Properties"]
    name = f"state-{uuid.uuid4().hex[:10]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=properties["KeySchema"],
        AttributeDefinitions=properties["AttributeDefinitions"],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def describe(outcome: Outcome) -> str:
    """A schedule as a reader follows it: the steps, in order."""
    return "; ".join(outcome.steps)


def _exchanges_past_the_limit(world: World) -> list[str]:
    """Invariant 4's exchange limit, from the world's mailbox: an email sent to a correspondent when
    ``max_exchanges`` earlier emails to them on the thread had each been answered by them (a message of
    theirs arriving after it, before the next email, within ``automatic_exchange_seconds``). "After" is
    the mailbox's order of arrival, never a date; the window is the mailbox's clock."""
    window = world.policy.automatic_exchange_seconds
    arrived = world.mailbox._arrived  # the mailbox's own arrival times: ground truth, never a date
    order = {m["id"]: index for index, m in enumerate(world.mailbox.messages)}
    found = []
    emails: dict[tuple[str, str], list[str]] = {}
    for email in world.mailbox.sent:
        for r in email.request.get("to", []):
            key = (email.message["thread_id"], str(r.get("email")).lower())
            emails.setdefault(key, []).append(email.message["id"])
    for (thread, who), sent in sorted(emails.items()):
        theirs = [
            m["id"]
            for m in world.mailbox.messages
            if m["thread_id"] == thread and world.senders.get(m["id"]) == who
        ]
        sent.sort(key=lambda mid: order.get(mid, len(order)))
        for k in range(len(sent)):
            answered = 0
            for i, ours in enumerate(sent[:k]):
                after, before = order.get(ours, 0), order.get(sent[i + 1], len(order))
                answered += any(
                    after < order[t] < before and arrived.get(t, 0) - arrived.get(ours, 0) <= window
                    for t in theirs
                )
            if answered >= world.max_exchanges:
                found.append(
                    f"4: an email to {who} on {thread} after {answered} answered automatic exchanges "
                    f"(at most {world.max_exchanges})"
                )
                break
    return found


def _people_left_in_silence(world: World, answered: dict[str, int]) -> list[str]:
    """Invariant 7 from the world: a message a person wrote that no email answered, no person of the
    mailbox answered, and that is not in the hand-off folder the mailbox shows."""
    folders = {m["id"]: m.get("folders") or [] for m in world.mailbox.messages}
    handoff = {f.id for f in world.mailbox.folders(GRANT) if f.name == world.policy.handoff_folder}
    return [
        f"7: {message_id} a person wrote got no answer and no hand-off"
        for message_id in sorted(world.people)
        if message_id not in answered
        and message_id not in world.answered_by_person
        and not handoff & set(folders.get(message_id, []))
    ]
