"""Time to reply: from the webhook's 200 to the reply reaching Nylas, over a seeded mix, beside its floor.

What a customer waits for is measured end to end on the local stack: each
inbound message is put in the Nylas emulator's mailbox and its notification
delivered, signed, to the webhook over HTTP (the API Gateway stand-in); the
clock starts when the 200 comes back. The webhook queues it in SQS (moto);
``bench.event_source`` pollers with the template's ``BatchSize`` and
``MaximumBatchingWindowInSeconds`` hand batches to replier containers (the
real handler); the clock stops when the reply that answers the message is in
the emulator's mailbox (the emulator's own timestamp). A reply answers a
message when it went to that message or to one that arrived after it on the
same thread — the only replies whose draft could have seen it.

The mix (seeded): single messages on their own thread; bursts of 2-5 on one
thread within a second; duplicates (the same notification delivered again,
as Nylas' at-least-once delivery does); busy threads (a second message lands
while the first one's reply is being sent, slowly: Nylas taking
``BUSY_SEND_SECONDS``, injected on a grant of its own so no other send meets
the delay); cold
replier containers (every poller's next batch on a new container).

The floor is the same work with nothing in between: a warm (or new)
container's handler invoked directly with the record, no queue, no poller,
nothing else running — its DynamoDB and Nylas requests back to back — timed
from the call to the reply reaching the emulator, in the same run.

Where the time goes is read from the timeline of the record that sent the
reply (``bench.timeline``): queue (until its batch was invoked: the pollers'
receive and the batching window), batch (records ahead of it in its
invocation), lease wait (attempts refused because another worker held the
thread, the time back in SQS between them, and in-process waits for the
lease), DynamoDB, Nylas, and the handler's own work.
"""

import math
import os
import random
import statistics
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import boto3

from bench.event_source import BatchingEventSource, BatchingSettings, Invocation
from bench.latency import LatencyProxy
from bench.stack import clear_tables, parts, require_empty_queue
from bench.timeline import AGENT, DYNAMODB, NYLAS, Attempt, Recorder
from devstack.counting import function_timeout
from devstack.events import AGENT_GRANT_ID, envelope, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault, NylasEmulator
from devstack.stack import LocalStack
from replyonce.config import ReplierSettings

SINGLE, BURST, DUPLICATE, BUSY, COLD = "single", "burst", "duplicate", "busy", "cold"
# The busy-thread episodes' grant: its sends are the slow ones.
SLOW_GRANT_ID = "grant-agent-slow"
SLOW_GRANT_EMAIL = "slow-support@replyonce.example"
BUSY_SEND_SECONDS = 3.0
# The second message of a busy episode lands this long after the holder's send reached Nylas.
BUSY_FOLLOW_UP_SECONDS = 0.5

QUEUE, INIT, BATCH, LEASE, RETRY, HANDLER = (
    "queue",
    "container init",
    "batch",
    "lease wait",
    "retry backoff",
    "handler",
)
PARTS = (QUEUE, INIT, BATCH, LEASE, RETRY, DYNAMODB, NYLAS, AGENT, HANDLER)

# Rows of the report, in order.
ROW_SINGLE = "single message, own thread"
ROW_DUPLICATE = "duplicate delivery (the message's reply)"
ROW_BURST_EARLIER = "burst of 2-5: earlier messages"
ROW_BURST_LAST = "burst of 2-5: last message"
ROW_BUSY_HOLDER = "busy thread: the holder's message (slow send)"
ROW_BUSY_FOLLOWER = "busy thread: message landing while the holder sends"
ROW_COLD = "cold replier (a container's first batch)"
ROWS = (
    ROW_SINGLE,
    ROW_DUPLICATE,
    ROW_BURST_EARLIER,
    ROW_BURST_LAST,
    ROW_BUSY_HOLDER,
    ROW_BUSY_FOLLOWER,
    ROW_COLD,
)
# Judged against the holder's remaining work: the messages that meet a thread already being answered.
CONTENDED_ROWS = (ROW_BURST_LAST, ROW_BUSY_FOLLOWER)
_BUSY_ERRORS = ("ThreadBusyError",)


@dataclass(frozen=True)
class Mix:
    """How many episodes of each kind, spread over ``seconds``."""

    seconds: float = 60.0
    singles: int = 24
    bursts: int = 8
    duplicates: int = 6
    busy: int = 4
    cold: int = 3

    def scaled(self, factor: float) -> "Mix":
        return Mix(
            self.seconds * factor,
            *(
                max(1, round(n * factor))
                for n in (self.singles, self.bursts, self.duplicates, self.busy, self.cold)
            ),
        )


@dataclass(frozen=True)
class Planned:
    """One inbound message of the schedule."""

    at: float  # seconds after the start
    kind: str
    episode: int  # one thread per episode
    position: int
    size: int
    redeliver_after: float | None = None  # duplicates: the same notification again after this long

    @property
    def grant_id(self) -> str:
        return SLOW_GRANT_ID if self.kind == BUSY else AGENT_GRANT_ID

    @property
    def last(self) -> bool:
        return self.position == self.size - 1

    @property
    def key(self) -> str:
        """The message's latency key (``bench.latency``): its subject ends in ``#key``."""
        return f"e{self.episode}p{self.position}"

    @property
    def thread_key(self) -> str:
        """The thread's latency key: its id ends in ``~key``."""
        return f"e{self.episode}"


def schedule(mix: Mix, seed: int) -> list[Planned]:
    """The seeded mix, in delivery order."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible workload, not a secret
    plan: list[Planned] = []
    episode = iter(range(1, 1_000_000))

    def start() -> float:
        return rng.uniform(0.0, mix.seconds)

    for _ in range(mix.singles):
        plan.append(Planned(start(), SINGLE, next(episode), 0, 1))
    for _ in range(mix.duplicates):
        plan.append(Planned(start(), DUPLICATE, next(episode), 0, 1, redeliver_after=rng.uniform(0.1, 3.0)))
    for _ in range(mix.cold):
        plan.append(Planned(start(), COLD, next(episode), 0, 1))
    for _ in range(mix.bursts):
        at, size, number = start(), rng.randint(2, 5), next(episode)
        offsets = sorted(rng.uniform(0.0, 1.0) for _ in range(size - 1))
        plan += [Planned(at + offset, BURST, number, i, size) for i, offset in enumerate([0.0, *offsets])]
    # Busy episodes share the slow grant: spaced so that one's slow send never meets another's.
    spacing = mix.seconds / max(1, mix.busy)
    for index in range(mix.busy):
        at, number = index * spacing + rng.uniform(0.0, 2.0), next(episode)
        plan.append(Planned(at, BUSY, number, 0, 2))
        plan.append(Planned(at + 0.01, BUSY, number, 1, 2))  # waits for the holder's send (``run_mix``)
    return sorted(plan, key=lambda p: p.at)


@dataclass
class Delivered:
    planned: Planned
    message_id: str
    thread_id: str
    notification_id: str
    acked: float  # time.time() when the webhook's 200 came back
    status: int | None


def subject_of(planned: Planned) -> str:
    """A message's subject: the order it is about, and its latency key."""
    return f"Order {1000 + planned.episode} #{planned.key}"


@dataclass
class MessageTime:
    """One message's time to reply and its parts (seconds)."""

    seconds: float | None  # None: no reply answered it
    holder_remaining: float  # the lease holder's remaining work when the message was acknowledged
    parts: dict[str, float] = field(default_factory=dict)
    # Unanswered: how its own record's attempts ended (skip reasons, exceptions).
    outcomes: tuple[str, ...] = ()
    key: str = ""  # the message's latency key (its paired floor has the same)
    own_reply: bool = False  # answered by its own record's send, not by another record's reply
    # The reply that answered it was sent by a record that held the thread when the message was
    # acknowledged: its remaining work is the holder's. Otherwise that reply's whole work (its thread
    # read, draft and send: the floor of its target) came after the holder's.
    answered_by_holder: bool = False
    target_key: str = ""  # the latency key of the message the answering reply went to
    # Time its replying attempt spent queued behind records of other threads in its invocation.
    other_thread_wait: float = 0.0


@dataclass(frozen=True)
class Row:
    name: str
    times: list[MessageTime]

    @property
    def answered(self) -> list[float]:
        return [t.seconds for t in self.times if t.seconds is not None]

    @property
    def unanswered(self) -> int:
        return sum(1 for t in self.times if t.seconds is None)

    @property
    def excess(self) -> list[float]:
        """Time to reply beyond the holder's remaining work."""
        return [t.seconds - t.holder_remaining for t in self.times if t.seconds is not None]

    def part_median_ms(self, name: str) -> float:
        values = [t.parts.get(name, 0.0) for t in self.times if t.seconds is not None]
        return statistics.median(values) * 1000 if values else 0.0

    def p99_message(self) -> MessageTime | None:
        """The message whose time is the row's p99 (nearest rank), for its parts."""
        answered = sorted((t for t in self.times if t.seconds is not None), key=lambda t: t.seconds or 0.0)
        if not answered:
            return None
        return answered[max(1, math.ceil(0.99 * len(answered))) - 1]

    def unanswered_outcomes(self) -> dict[str, int]:
        """How the records of unanswered messages ended, counted."""
        counted: dict[str, int] = defaultdict(int)
        for t in self.times:
            if t.seconds is None:
                for outcome in t.outcomes or ("never processed",):
                    counted[outcome] += 1
        return dict(counted)


@dataclass(frozen=True)
class Floor:
    """The same work invoked directly: seconds from the call to the reply in the mailbox."""

    seconds: list[float]
    requests_seconds: list[float]  # of which DynamoDB + Nylas requests


@dataclass(frozen=True)
class MixResult:
    seed: int
    pollers: int
    batching: BatchingSettings
    busy_retry_seconds: str
    seconds: float  # wall time of the run
    messages: int
    notifications: int
    sends: int
    answered_twice: int  # messages that two replies went to
    webhook_refusals: int  # notifications the webhook never answered 200 (after Nylas' retries)
    rows: list[Row]
    serial: bool = False  # the consumer before: a batch's records one after another
    invocations: tuple[Invocation, ...] = ()
    attempts: tuple[Attempt, ...] = ()

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)


@dataclass(frozen=True)
class TimeToReplyResult:
    mix: MixResult
    floor_warm: Floor
    floor_cold: Floor
    what_if: MixResult | None  # singles only, no batching window


# ---- running -------------------------------------------------------------------------------------


def _prepare(stack: LocalStack) -> tuple[Any, NylasEmulator]:
    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    if SLOW_GRANT_ID not in os.environ.get("AGENT_GRANT_IDS", "").split(","):
        nylas.add_grant(SLOW_GRANT_ID, SLOW_GRANT_EMAIL, name="Acme Support (slow)")
        os.environ["AGENT_GRANT_IDS"] = f"{os.environ['AGENT_GRANT_IDS']},{SLOW_GRANT_ID}"
    return resources, nylas


def _purge(stack: LocalStack) -> None:
    """Records still queued must not reach the next step (SQS allows one purge a minute: only if needed)."""
    resources, _ = parts(stack)
    visible, in_flight, _ = stack.queue_depth()
    if visible or in_flight:
        boto3.client("sqs").purge_queue(QueueUrl=resources.queues["NotificationQueue"])


@dataclass(frozen=True)
class Batching:
    """What a run changes in the template's SQS event source (``None``: the template's value)."""

    batch_size: int | None = None
    window_seconds: float | None = None
    maximum_concurrency: int | None = None
    serial: bool = False  # the consumer before: a batch's records one after another (``bench.event_source``)

    def applied(self, settings: BatchingSettings) -> BatchingSettings:
        if self.batch_size is not None:
            settings.batch_size = self.batch_size
        if self.window_seconds is not None:
            settings.window_seconds = self.window_seconds
        if self.maximum_concurrency is not None:
            settings.maximum_concurrency = self.maximum_concurrency
        return settings


def run_mix(
    stack: LocalStack,
    mix: Mix,
    *,
    seed: int,
    pollers: int,
    window_seconds: float | None = None,
    batching_override: Batching | None = None,
    latency: LatencyProxy | None = None,
    recorder: Recorder | None = None,
    reply_wait_seconds: float = 60.0,
    progress: Callable[[str], None] | None = None,
) -> MixResult:
    """Deliver the seeded mix through the webhook, let the pollers reply, and time every message.

    With ``latency`` the replier reaches Nylas through that proxy (``NYLAS_API_URI`` must point at
    it when ``recorder`` builds its containers), and a busy thread's holder is made slow there
    instead of in the emulator.
    """
    resources, nylas = _prepare(stack)
    override = batching_override or Batching(window_seconds=window_seconds)
    batching = override.applied(BatchingSettings.from_template(resources))
    plan = schedule(mix, seed)
    recorder = recorder or Recorder()
    source = BatchingEventSource(
        resources, batching, recorder.container, pollers=pollers, serial=override.serial
    ).start()
    sender = stack.sender()
    delivered: list[Delivered] = []
    lock = threading.Lock()
    run_id = time.time_ns()
    threads = {p.episode: f"bench-thread-{seed}-{run_id}~{p.thread_key}" for p in plan}
    holders = {p.episode: p.key for p in plan if p.kind == BUSY and p.position == 0}

    slow_sends = f"/v3/grants/{SLOW_GRANT_ID}/messages/send"
    holder_sending: dict[int, int] = {}  # busy episode -> slow sends before its holder's

    def deliver(planned: Planned) -> None:
        if planned.kind == BUSY and planned.position:
            # Land while the holder's send is in flight, whenever its batch ran.
            if latency is not None:
                latency.wait_for_send(holders[planned.episode], reply_wait_seconds)
            else:
                deadline = time.monotonic() + 15.0
                while nylas.count("POST", slow_sends) <= holder_sending[planned.episode]:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
            time.sleep(BUSY_FOLLOW_UP_SECONDS)
        message = nylas.deliver_inbound(
            planned.grant_id,
            from_email=f"customer{planned.episode}@example.com",
            subject=subject_of(planned),
            body=f"<p>Message {planned.position + 1} about order {1000 + planned.episode}.</p>",
            thread_id=threads[planned.episode],
        )
        payload = envelope(message)
        status = sender.deliver(payload)
        acked = time.time()
        with lock:
            delivered.append(
                Delivered(planned, message["id"], message["thread_id"], payload["id"], acked, status)
            )
        if planned.redeliver_after is not None:
            time.sleep(planned.redeliver_after)
            sender.deliver(payload)

    started_wall = time.time()
    started = time.monotonic()
    deliveries = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bench-nylas")
    try:
        futures = []
        for planned in plan:
            time.sleep(max(0.0, started + planned.at - time.monotonic()))
            if planned.kind == COLD:
                source.retire_idle_containers()
            if planned.kind == BUSY and planned.position == 0:
                # Before the holder is delivered, so its follower can wait for exactly this send.
                if latency is not None:
                    latency.extra[planned.key] = BUSY_SEND_SECONDS
                else:
                    holder_sending[planned.episode] = nylas.count("POST", slow_sends)
                    nylas.inject("POST", f"{slow_sends}$", Fault.delay(BUSY_SEND_SECONDS))
            futures.append(deliveries.submit(deliver, planned))
        for future in futures:
            future.result()
        if progress:
            progress(f"time to reply: {len(plan)} messages delivered; waiting for the replies")
        # Until every message is answered, or nothing is left to answer it (retried records included).
        _wait_for_replies(stack, source, delivered, timeout_seconds=reply_wait_seconds)
    finally:
        deliveries.shutdown(wait=True)
        source.stop()
        _purge(stack)
    seconds = time.time() - started_wall
    mailbox = nylas.mailbox()
    rows = _rows(delivered, mailbox, recorder.attempts, source.invocations, resources.tables["StateTable"])
    ids = {d.message_id for d in delivered}
    replies = [m for _, m in mailbox if "sent" in m.get("folders", []) and m.get("in_reply_to") in ids]
    targets = Counter(m["in_reply_to"] for m in replies)
    return MixResult(
        seed=seed,
        pollers=pollers,
        batching=batching,
        busy_retry_seconds=str(ReplierSettings.busy_retry_seconds),
        seconds=seconds,
        messages=len(delivered),
        notifications=len(delivered) + sum(1 for d in delivered if d.planned.redeliver_after is not None),
        sends=len(replies),
        answered_twice=sum(1 for count in targets.values() if count > 1),
        webhook_refusals=sum(1 for d in delivered if d.status != 200),
        rows=rows,
        serial=override.serial,
        invocations=tuple(source.invocations),
        attempts=tuple(recorder.attempts),
    )


def _wait_for_replies(
    stack: LocalStack, source: BatchingEventSource, delivered: list[Delivered], timeout_seconds: float
) -> None:
    _, nylas = parts(stack)
    deadline = time.monotonic() + timeout_seconds
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        visible, in_flight, _ = stack.queue_depth()
        if visible or in_flight or source.busy():
            quiet_since = None
        else:
            replies = _replies_by_message(nylas.mailbox(), delivered)
            if all(d.message_id in replies for d in delivered):
                return
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 1.0:
                return  # nothing queued, nothing running: the unanswered stay unanswered
        time.sleep(0.2)


def _replies_by_message(
    mailbox: list[tuple[float, dict[str, Any]]], delivered: list[Delivered]
) -> dict[str, tuple[float, str]]:
    """message id -> (time, target) of the first reply that answers it (to it or to a later message)."""
    order: dict[str, int] = {}
    by_thread: dict[str, list[tuple[float, dict[str, Any]]]] = defaultdict(list)
    for position, (arrived, message) in enumerate(mailbox):
        order[message["id"]] = position
        by_thread[message["thread_id"]].append((arrived, message))
    answered: dict[str, tuple[float, str]] = {}
    for d in delivered:
        for arrived, message in by_thread.get(d.thread_id, []):
            target = message.get("in_reply_to")
            if (
                "sent" in message.get("folders", [])
                and target in order
                and order[target] >= order[d.message_id]
            ):
                answered[d.message_id] = (arrived, str(target))
                break
    return answered


# ---- where the time went ---------------------------------------------------------------------------


def _overlap(a: float, b: float, lo: float, hi: float) -> float:
    return max(0.0, min(b, hi) - max(a, lo))


def _row_of(d: Delivered, cold: bool) -> str:
    kind = d.planned.kind
    if kind == COLD or (cold and kind == SINGLE):
        return ROW_COLD
    if kind == DUPLICATE:
        return ROW_DUPLICATE
    if kind == BURST:
        return ROW_BURST_LAST if d.planned.last else ROW_BURST_EARLIER
    if kind == BUSY:
        return ROW_BUSY_FOLLOWER if d.planned.position else ROW_BUSY_HOLDER
    return ROW_SINGLE


def _rows(
    delivered: list[Delivered],
    mailbox: list[tuple[float, dict[str, Any]]],
    attempts: list[Attempt],
    invocations: list[Invocation],
    state_table: str,
) -> list[Row]:
    replies = _replies_by_message(mailbox, delivered)
    by_notification: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in sorted(attempts, key=lambda a: a.started):
        by_notification[attempt.notification_id].append(attempt)
    thread_of = {d.notification_id: d.thread_id for d in delivered}
    key_of = {d.message_id: d.planned.key for d in delivered}
    times: dict[str, list[MessageTime]] = {name: [] for name in ROWS}
    for d in delivered:
        reply = replies.get(d.message_id)
        if reply is None:
            outcomes = tuple(a.outcome or a.error for a in by_notification[d.notification_id])
            times[_row_of(d, cold=False)].append(MessageTime(None, 0.0, {}, outcomes, key=d.planned.key))
            continue
        sent_at, target = reply
        chain = _replying_chain(attempts, by_notification, sent_at, target)
        invoked = [_invocation_of(a, invocations) for a in chain]
        cold = bool(invoked) and invoked[-1] is not None and invoked[-1].cold
        row = _row_of(d, cold)
        remaining, holders = _holder_remaining(d, attempts, thread_of, state_table)
        seconds = max(0.0, sent_at - d.acked)
        parts_ = _parts(d.acked, sent_at, chain, invoked, state_table) if chain else {}
        waited = _other_thread_wait(chain[-1], invoked[-1], attempts, thread_of) if chain else 0.0
        own = bool(chain) and chain[-1].notification_id == d.notification_id
        measured = MessageTime(seconds, remaining, parts_, key=d.planned.key, own_reply=own)
        measured.other_thread_wait = waited
        measured.answered_by_holder = bool(chain) and chain[-1].notification_id in holders
        measured.target_key = key_of.get(target, "")
        times[row].append(measured)
    return [Row(name, times[name]) for name in ROWS]


def _other_thread_wait(
    attempt: Attempt, invocation: Invocation | None, attempts: list[Attempt], thread_of: dict[str, str]
) -> float:
    """How long ``attempt`` waited, in its invocation, for records of other threads run before it."""
    if invocation is None:
        return 0.0
    thread = thread_of.get(attempt.notification_id)
    waited = 0.0
    for other in attempts:
        if (
            other is attempt
            or other.container != attempt.container
            or other.notification_id not in invocation.notification_ids
            or not invocation.started <= other.started <= invocation.ended
            or thread_of.get(other.notification_id, other.notification_id) == thread
        ):
            continue
        waited += _overlap(other.started, other.ended, invocation.ready, attempt.started)
    return waited


def _replying_chain(
    attempts: list[Attempt], by_notification: dict[str, list[Attempt]], sent_at: float, target: str
) -> list[Attempt]:
    """The attempts of the record whose send put the reply in the mailbox, oldest first."""
    for attempt in attempts:
        for span in attempt.spans:
            if (
                span.operation == "send"
                and span.reply_to == target
                and span.started <= sent_at <= span.ended + 0.05
            ):
                return [a for a in by_notification[attempt.notification_id] if a.started <= attempt.started]
    return []


def _invocation_of(attempt: Attempt, invocations: list[Invocation]) -> Invocation | None:
    for invocation in invocations:
        if attempt.notification_id in invocation.notification_ids and (
            invocation.started <= attempt.started <= invocation.ended
        ):
            return invocation
    return None


def _holder_remaining(
    d: Delivered, attempts: list[Attempt], thread_of: dict[str, str], state_table: str
) -> tuple[float, set[str]]:
    """How long the worker holding ``d``'s thread at its acknowledgement still had to go (0 if none).

    Also the notification ids of the records that held it then (those not waiting for the lease).
    """
    remaining = 0.0
    holders: set[str] = set()
    for attempt in attempts:
        if (
            thread_of.get(attempt.notification_id) != d.thread_id
            or attempt.notification_id == d.notification_id
        ):
            continue
        if not attempt.started <= d.acked < attempt.ended:
            continue
        refused_before = any(s.started <= d.acked for s in attempt.lease_refusals(state_table))
        if attempt.error in _BUSY_ERRORS or refused_before:
            continue
        remaining = max(remaining, attempt.ended - d.acked)
        holders.add(attempt.notification_id)
    return remaining, holders


def _parts(
    acked: float, sent_at: float, chain: list[Attempt], invoked: list[Invocation | None], state_table: str
) -> dict[str, float]:
    """Split [acked, sent_at] by what the replying record was doing."""
    totals: dict[str, float] = defaultdict(float)

    def add(name: str, a: float, b: float) -> None:
        totals[name] += _overlap(a, b, acked, sent_at)

    first_invoked = invoked[0].started if invoked[0] is not None else chain[0].started
    add(QUEUE, acked, first_invoked)
    for index, attempt in enumerate(chain):
        invocation = invoked[index]
        if invocation is not None:
            add(INIT, invocation.started, invocation.ready)
            add(BATCH, invocation.ready, attempt.started)
        if index + 1 < len(chain):
            waited = LEASE if attempt.error in _BUSY_ERRORS or attempt.lease_refusals(state_table) else RETRY
            add(waited, attempt.started, attempt.ended)
            following = invoked[index + 1]
            add(
                waited,
                attempt.ended,
                following.started if following is not None else chain[index + 1].started,
            )
            continue
        # The attempt that sent the reply: its requests, in-process lease waits, and its own work.
        lo, hi = max(attempt.started, acked), min(attempt.ended, sent_at)
        if hi <= lo:
            continue
        refusals = attempt.lease_refusals(state_table)
        lease_lo = lease_hi = lo
        if refusals:
            later = [s for s in attempt.spans if s.started > refusals[-1].started and s.service == DYNAMODB]
            lease_lo = max(lo, refusals[0].started)
            lease_hi = min(hi, later[0].started if later else refusals[-1].ended)
        lease = max(0.0, lease_hi - lease_lo)
        totals[LEASE] += lease
        in_requests = 0.0
        for span in attempt.spans:
            inside = _overlap(span.started, span.ended, lo, hi) - _overlap(
                span.started, span.ended, lease_lo, max(lease_lo, lease_hi)
            )
            totals[span.service if span.service in (DYNAMODB, NYLAS, AGENT) else HANDLER] += inside
            in_requests += inside
        totals[HANDLER] += max(0.0, hi - lo - lease - in_requests)
    return dict(totals)


# ---- the floor -----------------------------------------------------------------------------------


def floor(stack: LocalStack, samples: int, *, cold: bool) -> Floor:
    """The same work invoked directly on an idle stack: no queue, no poller, nothing else running."""
    resources, nylas = _prepare(stack)
    recorder = Recorder()
    timeout = function_timeout("ReplierFunction")
    queue_arn = resources.queue_arns["NotificationQueue"]
    handler = None
    seconds: list[float] = []
    requests_seconds: list[float] = []
    for index in range(samples + (0 if cold else 1)):
        if handler is None or cold:
            _, handler = recorder.container()
        message = nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=f"floor{index}@example.com",
            subject=f"Order {5000 + index}",
            body="<p>Where is my order?</p>",
            thread_id=f"bench-floor-{index}-{time.time_ns()}",
        )
        event = sqs_event([envelope(message)], queue_arn=queue_arn)
        before = len(recorder.attempts)
        called = time.time()
        handler(event, LocalLambdaContext("ReplierFunction", timeout_seconds=timeout))
        sent = [t for t, m in nylas.mailbox() if m.get("in_reply_to") == message["id"]]
        if not sent:
            raise AssertionError("the floor's reply did not reach the emulator")
        if not cold and index == 0:
            continue  # the warm-up: the container's first reply reads the secret and the grant
        seconds.append(sent[0] - called)
        spans = [s for a in recorder.attempts[before:] for s in a.spans if s.service in (DYNAMODB, NYLAS)]
        requests_seconds.append(sum(max(0.0, min(s.ended, sent[0]) - s.started) for s in spans))
    return Floor(seconds, requests_seconds)


def measure(
    stack: LocalStack,
    *,
    seed: int,
    pollers: int,
    mix: Mix,
    floor_samples: int,
    what_if: bool = True,
    progress: Callable[[str], None] | None = None,
) -> TimeToReplyResult:
    """The mix with the template's batching, the floor, and a singles-only run without the window."""
    if progress:
        progress(f"time to reply: seeded mix (seed {seed}) over {mix.seconds:.0f} s, {pollers} pollers")
    mixed = run_mix(stack, mix, seed=seed, pollers=pollers, progress=progress)
    if progress:
        progress(f"time to reply: floor, {floor_samples} direct invocations warm and cold")
    warm = floor(stack, floor_samples, cold=False)
    cold = floor(stack, max(3, floor_samples // 4), cold=True)
    without_window = None
    if what_if:
        if progress:
            progress("time to reply: singles with MaximumBatchingWindowInSeconds 0 (what-if)")
        singles = Mix(
            seconds=max(8.0, mix.seconds / 6),
            singles=max(10, mix.singles),
            bursts=0,
            duplicates=0,
            busy=0,
            cold=0,
        )
        without_window = run_mix(stack, singles, seed=seed + 1, pollers=pollers, window_seconds=0.0)
    return TimeToReplyResult(mixed, warm, cold, without_window)
