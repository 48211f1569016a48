"""The bill at the batch fill the template really gets: a mixed stream at saturation, and long threads.

Two measurements at real latency (``bench.latency``'s proxy in front of the
emulator, ``bench.slow_agent``'s agent), beside the real-latency mix (which
gives the fill below capacity, ``bench.real_latency``):

- **mixed at saturation**: first replies on threads of their own, bursts
  (several messages on one thread, queued one after another) and own
  outbound notifications (the ``message.created`` each reply brings back,
  about one per reply, as the scale model has it), shuffled with a seed and
  all queued before the event source starts, then drained through the
  template's batching at the template's ``ReplierMaximumConcurrency``: what
  Lambda bills per notification of that stream, and how full its batches are;
- **a long thread**: one thread whose earlier replies covered many messages
  (two bursts of ``burst`` messages, each answered by one reply), then a
  follow-up on it: its requests counted, the thread item measured while the
  follow-up's send intent is stored (as Nylas receives the send) and after
  the reply is recorded, so its write units are those of its real size.
"""

import math
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import boto3

from bench import memory_size, slow_agent
from bench.event_source import BatchingEventSource, BatchingSettings, billed_ms, peak_concurrency
from bench.latency import LatencyModel, LatencyProxy, through
from bench.paths import item_size
from bench.stack import clear_tables, parts, require_empty_queue
from bench.time_to_reply import Batching
from devstack.counting import ReplierHarness, Tally
from devstack.events import AGENT_GRANT_ID, envelope
from devstack.stack import LocalStack
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.state_items import OUTBOX
from replyonce.rules.notification import Notification
from replyonce.state import thread_key

FIRST, BURST, OUTBOUND = "first reply", "burst", "own outbound"


# ---- write units -------------------------------------------------------------------------------------


def units(size_bytes: float) -> int:
    """Write units of one item write: a unit per KB (rounded up) of the larger of its two images."""
    return max(1, math.ceil(size_bytes / 1024))


@dataclass(frozen=True)
class ReplyWrites:
    """The items a reply writes, at their measured sizes (bytes), and what the tally counted."""

    idempotency: float
    email_claim: float
    thread_before: float  # the thread item the lease updates (before the lease)
    thread_with_intent: float  # the thread item while the send intent is stored (its request by digest)
    thread_after: float  # the thread item the settlement leaves
    recipient: float
    ledger_entry: float
    ledger_entries: int  # entries the settlement writes (covered messages, and the reply's own)
    request_body: float = 0.0  # the intent's request, compressed in its body item (0: not measured)
    grant_life: float = 300.0  # the grant's life item the intent's transaction checks (a small JSON text)

    def wru(self) -> int:
        """A first reply's write units, as ``tests/integration/test_budgets.py`` counts its writes.

        The idempotency record put and completed, the email's claim, the lease (an update of the thread
        item), the recipient's hour, the intent stored right before the send: one transaction (each item
        twice) of the thread item (it names the body by its digest), the request's body item (a request
        under 1 KB compressed when not measured; over 1 KB it is put by itself first, its units once) and
        the check of the grant's life (issue 46); the ledger entries (one ``BatchWriteItem`` of plain
        puts, no transaction since issue 46) and the thread's update conditioned on the lease (the larger
        of its image with the intent and after). A new thread writes nothing more: ``table#began`` is
        read with the ledger, and the holder's next write dates the item.
        """
        body = units(max(self.request_body, 1))
        body_writes = 2 * body if body == 1 else body
        return (
            2 * units(self.idempotency)
            + units(self.email_claim)
            + units(max(self.thread_before, 1))
            + units(self.recipient)
            + body_writes
            + 2 * units(self.thread_with_intent)
            + 2 * units(self.grant_life)
            + self.ledger_entries * units(self.ledger_entry)
            + units(max(self.thread_with_intent, self.thread_after))
        )


# ---- mixed at saturation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MixedSaturation:
    """A mixed stream drained through the template's batching: what Lambda bills and how full batches are."""

    counts: dict[str, int]  # notifications of each kind
    maximum_concurrency: int
    batch_size: int
    seconds: float
    billed_ms: tuple[int, ...]  # per invocation
    records: tuple[int, ...]  # per invocation
    replies: int
    threads_answered: int
    threads: int
    peak_concurrency: int

    @property
    def notifications(self) -> int:
        return sum(self.counts.values())

    @property
    def records_per_invocation(self) -> float:
        return sum(self.records) / len(self.records) if self.records else 0.0

    @property
    def billed_ms_per_notification(self) -> float:
        return sum(self.billed_ms) / self.notifications if self.notifications else 0.0

    def first_reply_ms(self, outbound_ms: float) -> float:
        """Billed ms per inbound notification, own outbound charged their own measured time each."""
        inbound = self.counts.get(FIRST, 0) + self.counts.get(BURST, 0)
        rest = sum(self.billed_ms) - self.counts.get(OUTBOUND, 0) * outbound_ms
        return max(0.0, rest) / inbound if inbound else 0.0


def _shuffled_units(singles: int, bursts: int, burst_size: int, outbound: int, seed: int) -> list[list[str]]:
    """The stream's queueing units, shuffled: a single, a burst's messages in order, an outbound."""
    plan = (
        [[f"{FIRST}:x{i}"] for i in range(singles)]
        + [[f"{BURST}:y{j}p{k}" for k in range(burst_size)] for j in range(bursts)]
        + [[f"{OUTBOUND}:z{n}"] for n in range(outbound)]
    )
    random.Random(seed).shuffle(plan)  # noqa: S311 - a reproducible workload
    return plan


def _own_replies(stack: LocalStack, count: int, run_id: int) -> list[dict]:
    """``count`` real replies of ours (each a first reply on a thread of its own, on loopback): their
    ``message.created`` is the own outbound notification the stream carries."""
    resources, nylas = parts(stack)
    harness = ReplierHarness(resources, nylas)
    replies = []
    for n in range(count):
        thread_id = f"bench-mixed-{run_id}-z{n}~mixz{n}"
        message = nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=f"mixed-z{n}@example.com",
            subject=f"Order z{n} #mixz{n}",
            body="<p>Where is my order?</p>",
            thread_id=thread_id,
            notify=False,
        )
        if harness.process(envelope(message)).failed:
            raise RuntimeError("an own reply for the mixed stream failed")
        replies.append(nylas.sent_messages(thread_id=thread_id)[-1])
    return replies


def mixed_saturation(
    stack: LocalStack,
    proxy: LatencyProxy,
    model: LatencyModel,
    *,
    singles: int,
    bursts: int,
    burst_size: int,
    pollers: int,
    seed: int,
    timeout_seconds: float = 400.0,
) -> MixedSaturation:
    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    settings = Batching().applied(BatchingSettings.from_template(resources))
    queue = NotificationQueue(resources.queues["NotificationQueue"], 1_048_576, boto3.client("sqs"))
    run_id = time.time_ns()
    counts = {FIRST: 0, BURST: 0, OUTBOUND: 0}
    threads: dict[str, str] = {}  # thread id -> kind, for the inbound threads
    own = iter(_own_replies(stack, singles + bursts, run_id))  # about one own outbound per reply
    for group in _shuffled_units(singles, bursts, burst_size, singles + bursts, seed):
        for entry in group:
            kind, key = entry.split(":")
            if kind == OUTBOUND:
                message = next(own)
            else:
                thread = key.split("p")[0]
                thread_id = f"bench-mixed-{run_id}-{thread}~mix{thread}"
                message = nylas.deliver_inbound(
                    AGENT_GRANT_ID,
                    from_email=f"mixed-{thread}@example.com",
                    subject=f"Order {thread} #mix{key}",
                    body="<p>Where is my order?</p>",
                    thread_id=thread_id,
                    notify=False,
                )
                threads[thread_id] = kind
            counts[kind] += 1
            queue.enqueue(Notification(envelope(message)))
    with through(proxy):
        return _drain(stack, model, settings, counts, threads, pollers, timeout_seconds)


def _drain(
    stack: LocalStack,
    model: LatencyModel,
    settings: BatchingSettings,
    counts: dict[str, int],
    threads: dict[str, str],
    pollers: int,
    timeout_seconds: float,
) -> MixedSaturation:
    resources, nylas = parts(stack)
    source = BatchingEventSource(resources, settings, slow_agent.recorder(model).container, pollers=pollers)
    started = time.monotonic()
    source.start()

    def answered() -> set[str]:
        return {
            str(m.get("thread_id"))
            for _, m in nylas.mailbox()
            if "sent" in m.get("folders", []) and m.get("in_reply_to")
        }

    try:
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline and not set(threads) <= answered():
            time.sleep(0.1)
        # A burst's later messages may get a reply of their own: drain to the last record.
        quiet = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - quiet < 2.0:
            visible, in_flight, _ = stack.queue_depth()
            if visible or in_flight or source.busy():
                quiet = time.monotonic()
            time.sleep(0.1)
        seconds = time.monotonic() - started
    finally:
        source.stop()
    print("[bench] mixed drained:", stack.queue_depth(), file=sys.stderr)
    invocations = list(source.invocations)
    sent = [m for _, m in nylas.mailbox() if "sent" in m.get("folders", []) and m.get("thread_id") in threads]
    return MixedSaturation(
        counts=counts,
        maximum_concurrency=settings.maximum_concurrency,
        batch_size=settings.batch_size,
        seconds=seconds,
        billed_ms=tuple(billed_ms(i) for i in invocations),
        records=tuple(len(i.notification_ids) for i in invocations),
        replies=len([m for m in sent if m.get("in_reply_to")]),
        threads_answered=len(set(threads) & answered()),
        threads=len(threads),
        peak_concurrency=peak_concurrency(invocations),
    )


# ---- a long thread -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LongThread:
    """A follow-up on a thread whose earlier replies covered ``covered_before`` messages."""

    messages_before: int
    covered_before: int  # entries of the thread item's ``covered`` before the follow-up
    tally: Tally  # the follow-up's requests
    writes: ReplyWrites
    fresh: ReplyWrites  # the first reply of the same thread, for comparison
    billed_ms: int  # the follow-up's invocation, alone, at real latency
    replied: bool

    @property
    def wru(self) -> int:
        return self.writes.wru()


def _items(table: str, prefix: str) -> list[dict]:
    dynamodb = boto3.client("dynamodb")
    items: list[dict] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=table):
        items += [i for i in page["Items"] if str(i.get("pk", {}).get("S", "")).startswith(prefix)]
    return items


def long_thread(stack: LocalStack, proxy: LatencyProxy, model: LatencyModel, *, burst: int) -> LongThread:
    """Two bursts of ``burst`` messages on one thread, each answered, then a follow-up: its writes."""
    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    state, idempotency = resources.tables["StateTable"], resources.tables["IdempotencyTable"]
    run_id = time.time_ns()
    thread_id = f"bench-long-{run_id}~long"
    key = thread_key(AGENT_GRANT_ID, thread_id)
    dynamodb = boto3.client("dynamodb")
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def measure_intent() -> None:
        item = dynamodb.get_item(TableName=state, Key={"pk": {"S": key}}).get("Item", {})
        if item.get(OUTBOX, {}).get("M"):
            with lock:
                seen["with_intent"] = max(seen.get("with_intent", 0), item_size(item))

    def thread_item() -> dict:
        return dynamodb.get_item(TableName=state, Key={"pk": {"S": key}}).get("Item", {})

    with through(proxy):
        harness = ReplierHarness(resources, nylas)
        slow_agent.install(harness.consumer, model)
    proxy.on_send = measure_intent
    steps = []
    sizes = []
    try:
        for round_number, count in enumerate((burst, burst, 1)):
            before = item_size(thread_item()) if thread_item() else 0
            seen.clear()
            last = None
            time.sleep(1.1)  # Nylas dates are seconds: each round's messages come after the last reply
            for index in range(count):
                last = nylas.deliver_inbound(
                    AGENT_GRANT_ID,
                    # A conversation of several people on the customer's side: each round's sender is new
                    # to the loop guard's count of automatic exchanges (max_automatic_exchanges).
                    from_email=f"long-thread-{round_number}@example.com",
                    subject=f"Order 5150 #long{round_number}m{index}",
                    body=f"<p>Message {index + 1} of round {round_number + 1} about order 5150.</p>",
                    thread_id=thread_id,
                    notify=False,
                )
            assert last is not None
            step = harness.process(envelope(last))
            time.sleep(0.3)  # the intent's measurement, on the proxy's thread
            after = thread_item()
            ledger = _items(state, "message#")
            sizes.append(
                {
                    "before": before,
                    "with_intent": seen.get("with_intent", 0),
                    "after": item_size(after),
                    "covered": len(after.get("covered", {}).get("M", {})),
                    "ledger": max((item_size(i) for i in ledger), default=0),
                }
            )
            steps.append(step)
    finally:
        proxy.on_send = None
    idem = max((item_size(i) for i in _items(idempotency, "")), default=300)
    email = max((item_size(i) for i in _items(state, "email#")), default=100)
    recipient = max((item_size(i) for i in _items(state, "recipient#")), default=400)
    body = max((item_size(i) for i in _items(state, "body#")), default=0)

    def writes(at: int, entries: int) -> ReplyWrites:
        s = sizes[at]
        return ReplyWrites(
            idempotency=idem,
            email_claim=email,
            thread_before=s["before"],
            thread_with_intent=s["with_intent"] or s["after"],
            thread_after=s["after"],
            recipient=recipient,
            ledger_entry=s["ledger"],
            ledger_entries=entries,
            request_body=body,
        )

    follow_up = steps[-1]
    sent = [m for m in nylas.sent_messages() if m.get("thread_id") == thread_id]
    return LongThread(
        messages_before=2 * burst,
        covered_before=sizes[1]["covered"],
        tally=follow_up.tally,
        # The follow-up's transaction: its message's entry and the reply's own.
        writes=writes(2, 2),
        fresh=writes(0, burst + 1),
        billed_ms=math.ceil(follow_up.seconds * 1000),
        replied=len(sent) >= 3,
    )


# ---- the part ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BillResult:
    mixed: MixedSaturation | None
    long: LongThread | None
    memory: memory_size.MemoryResult
    load_before: str = ""
    load_after: str = ""
    model: LatencyModel = field(default_factory=LatencyModel)


def measure(
    stack: LocalStack,
    model: LatencyModel,
    *,
    singles: int = 24,
    bursts: int = 4,
    burst_size: int = 3,
    pollers: int = 2,
    seed: int = 14,
    long_burst: int = 25,
    memory_batches: int = 2,
    memory_singles: int = 4,
    progress: Callable[[str], None] | None = None,
) -> BillResult:
    from bench.machine import Machine

    _, nylas = parts(stack)
    load_before = Machine.load_now()
    proxy = LatencyProxy(nylas.url, model).start()
    try:
        if progress:
            progress(
                f"bill: mixed stream at saturation, {singles} first replies, {bursts} bursts of "
                f"{burst_size}, {singles + bursts} own outbound"
            )
        mixed = mixed_saturation(
            stack,
            proxy,
            model,
            singles=singles,
            bursts=bursts,
            burst_size=burst_size,
            pollers=pollers,
            seed=seed,
        )
        if progress:
            progress(f"bill: a long thread, two bursts of {long_burst} answered, then a follow-up")
        long = long_thread(stack, proxy, model, burst=long_burst)
        memory = memory_size.measure(
            stack, proxy, model, batches=memory_batches, singles=memory_singles, progress=progress
        )
    finally:
        proxy.stop()
    clear_tables(stack)
    return BillResult(
        mixed=mixed,
        long=long,
        memory=memory,
        load_before=load_before,
        load_after=Machine.load_now(),
        model=model,
    )
