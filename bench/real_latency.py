"""Time to reply, batching and the replier's billed time at real latencies, beside their floor.

The same seeded mix as ``bench.time_to_reply`` (singles, bursts, duplicates,
busy threads, cold containers), but Nylas and the agent take the seconds they
take in production (``bench.latency``: a proxy in front of the emulator,
``bench.slow_agent``: the draft), run once per batching option with the same
latency draws:

- **before**: the event source and the consumer as they were (``BatchSize: 5``,
  ``MaximumBatchingWindowInSeconds: 1``), the batch's records one after another
  (``bench.event_source``'s ``serial`` stand-in);
- **(a)**: batches of one, no window;
- **(b)**: the template: batches of ten, no window, the consumer running a
  batch's conversation threads at once.

The floor is paired: every message of the mix invoked directly, alone, on a
warm container, with exactly the latencies it met in the mix (the draws are
keyed by the message). A row's p99 is judged against the p99 of its own
messages' floors.

The saturation rounds queue first replies on threads of their own before
the event source starts, at the template's ``ReplierMaximumConcurrency``,
and count what Lambda would bill: each invocation's duration, rounded up to
the millisecond, and how many ran at once. That is where batching options
differ in cost and in the concurrency a volume needs.
"""

import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import boto3

from bench import slow_agent
from bench.baseline import BaselineContainers, echo_ms
from bench.event_source import BatchingEventSource, BatchingSettings, billed_ms, peak_concurrency
from bench.latency import LatencyModel, LatencyProxy, through
from bench.paths import item_size
from bench.stack import clear_tables, parts, require_empty_queue
from bench.stats import p
from bench.time_to_reply import (
    CONTENDED_ROWS,
    ROW_SINGLE,
    Batching,
    MessageTime,
    Mix,
    MixResult,
    Planned,
    run_mix,
    schedule,
    subject_of,
)
from devstack.counting import function_timeout
from devstack.events import AGENT_GRANT_ID, envelope, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.stack import LocalStack
from ops.template import load_template, sqs_event_source
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.state_items import OUTBOX
from replyonce.rules.notification import Notification

# The options of docs/performance.md, "Batch concurrency" (None: the template's value).
BEFORE, OPTION_A, OPTION_B = "before", "(a)", "(b)"
# The template's batch size: option (b) is the template.
B_BATCH_SIZE = sqs_event_source(load_template())["BatchSize"]


@dataclass(frozen=True)
class Option:
    name: str
    label: str
    batching: Batching


def options(concurrency: int) -> tuple[Option, ...]:
    """The three configurations measured, all at the same ``MaximumConcurrency``."""
    return (
        Option(
            BEFORE,
            "before: `BatchSize: 5`, window 1 s, a batch's records one after another",
            Batching(batch_size=5, window_seconds=1.0, maximum_concurrency=concurrency, serial=True),
        ),
        Option(
            OPTION_A,
            "(a) batches of one, no window",
            Batching(batch_size=1, window_seconds=0.0, maximum_concurrency=concurrency),
        ),
        Option(
            OPTION_B,
            f"(b) the template: batches of {B_BATCH_SIZE}, no window, a batch's threads at once",
            Batching(maximum_concurrency=concurrency),
        ),
    )


@dataclass(frozen=True)
class Saturation:
    """First replies queued, then drained: what Lambda bills and how many ran at once."""

    option: str
    notifications: int
    maximum_concurrency: int
    seconds: float
    billed_ms: tuple[int, ...]  # per invocation
    records_per_invocation: float
    peak_concurrency: int
    replies: int

    @property
    def billed_ms_per_notification(self) -> float:
        return sum(self.billed_ms) / self.notifications

    @property
    def replies_per_second(self) -> float:
        return self.replies / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class RealLatencyResult:
    model: LatencyModel
    concurrency: int
    runs: dict[str, MixResult]  # option name -> the mix through that option
    labels: dict[str, str]
    floor: dict[str, float]  # message key -> seconds, invoked directly with the same latencies
    floor_workers: int
    saturation: list[Saturation]
    # Bytes of the thread item while the send intent is stored (each send, measured at Nylas).
    intent_item_bytes: tuple[int, ...]
    sends_held: int
    mean_send_seconds: float
    mean_read_seconds: float
    # The pipeline without exactly once (``bench.baseline``): the same mix through (b)'s batching, its
    # saturation round, and its billed ms for an echo (a reply's own ``message.created``, skipped).
    baseline: MixResult | None = None
    baseline_saturation: Saturation | None = None
    baseline_echo_ms: float = 0.0
    # The idempotency table's name: ``bench.per_reply`` tells its writes from the state table's.
    idempotency_table: str = ""

    def floor_of(self, keys: list[str]) -> list[float]:
        return [self.floor[k] for k in keys if k in self.floor]


# ---- the pieces ----------------------------------------------------------------------------------------


def _intent_sizes(stack: LocalStack, into: dict[tuple[str, str], int]) -> Callable[[], None]:
    """Measure every thread item that holds a send intent now: (key, intent id) -> its largest size.

    Called as a send reaches the proxy, when the sender's intent is stored; a scan rather than a lookup
    by thread, so nothing needs to know which thread the send is for.
    """
    resources, _ = parts(stack)
    dynamodb = boto3.client("dynamodb")
    table = resources.tables["StateTable"]
    lock = threading.Lock()

    def measure() -> None:
        pages = dynamodb.get_paginator("scan").paginate(
            TableName=table, FilterExpression="attribute_exists(#o)", ExpressionAttributeNames={"#o": OUTBOX}
        )
        for page in pages:
            for item in page["Items"]:
                intent = str(item[OUTBOX].get("M", {}).get("intent_id", {}).get("S", ""))
                with lock:
                    slot = (item["pk"]["S"], intent)
                    into[slot] = max(into.get(slot, 0), item_size(item))

    return measure


def paired_floor(
    stack: LocalStack,
    planned: list[Planned],
    model: LatencyModel,
    *,
    workers: int,
    progress: Callable[[str], None] | None = None,
) -> dict[str, float]:
    """Each planned message alone, invoked directly on a warm container, with the latencies it met.

    The same subject key and thread key as in the mix, so every draw is the
    same; a new thread, so nothing holds it. ``workers`` containers run side
    by side: their time is the injected waits, which do not compete.
    """
    resources, nylas = parts(stack)
    queue_arn = resources.queue_arns["NotificationQueue"]
    timeout = function_timeout("ReplierFunction")
    run_id = time.time_ns()
    containers: list[Any] = []
    lock = threading.Lock()
    local = threading.local()
    recorder = slow_agent.recorder(model)

    def handler() -> Any:
        if getattr(local, "handler", None) is None:
            _, local.handler = recorder.container()
            with lock:
                containers.append(local.handler)
            warm = nylas.deliver_inbound(
                AGENT_GRANT_ID,
                from_email="floor-warmup@example.com",
                subject=f"Warm-up #warm{len(containers)}",
                body="<p>Hello</p>",
                thread_id=f"bench-floor-{run_id}-warm{len(containers)}~warm{len(containers)}",
            )
            local.handler(sqs_event([envelope(warm)], queue_arn=queue_arn), _context(timeout))
        return local.handler

    def one(p: Planned) -> tuple[str, float]:
        invoke = handler()
        message = nylas.deliver_inbound(
            p.grant_id,
            from_email=f"floor{p.episode}@example.com",
            subject=subject_of(p),
            body=f"<p>Message {p.position + 1} about order {1000 + p.episode}.</p>",
            thread_id=f"bench-floor-{run_id}-{p.key}~{p.thread_key}",
        )
        called = time.time()
        invoke(sqs_event([envelope(message)], queue_arn=queue_arn), _context(timeout))
        sent = [t for t, m in nylas.mailbox() if m.get("in_reply_to") == message["id"]]
        if not sent:
            raise AssertionError(f"the floor's reply to {p.key} did not reach the emulator")
        return p.key, sent[0] - called

    if progress:
        progress(f"real latency: paired floor, {len(planned)} direct invocations on {workers} containers")
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bench-floor") as pool:
        return dict(pool.map(one, planned))


def _context(timeout: float) -> LocalLambdaContext:
    return LocalLambdaContext("ReplierFunction", timeout_seconds=timeout)


def saturate(
    stack: LocalStack,
    option: Option,
    model: LatencyModel,
    *,
    notifications: int,
    pollers: int,
    timeout_seconds: float = 300.0,
    make_container: Callable[[], tuple[int, Any]] | None = None,
) -> Saturation:
    """Queue ``notifications`` first replies (threads of their own), then drain them through ``option``
    (ReplyOnce's replier, or ``make_container``'s function: the baseline's)."""
    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    batching = option.batching
    # The template's own concurrency: what a default deployment has.
    settings = Batching(batch_size=batching.batch_size, window_seconds=batching.window_seconds).applied(
        BatchingSettings.from_template(resources)
    )
    queue = NotificationQueue(resources.queues["NotificationQueue"], 1_048_576, boto3.client("sqs"))
    run_id = time.time_ns()
    ids = []
    for index in range(notifications):
        message = nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=f"saturation{index}@example.com",
            subject=f"Order {7000 + index} #sat{index}",
            body="<p>Where is my order?</p>",
            thread_id=f"bench-saturation-{run_id}-{index}~sat{index}",
        )
        ids.append(message["id"])
        queue.enqueue(Notification(envelope(message)))
    source = BatchingEventSource(
        resources,
        settings,
        make_container or slow_agent.recorder(model).container,
        pollers=pollers,
        serial=batching.serial,
    )
    started = time.monotonic()
    source.start()
    wanted = set(ids)
    try:
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            answered = {m.get("in_reply_to") for _, m in nylas.mailbox() if "sent" in m.get("folders", [])}
            if wanted <= answered:
                break
            time.sleep(0.1)
        seconds = time.monotonic() - started
    finally:
        source.stop()
    answered = {m.get("in_reply_to") for _, m in nylas.mailbox() if "sent" in m.get("folders", [])}
    invocations = source.invocations
    records = sum(len(i.notification_ids) for i in invocations)
    return Saturation(
        option=option.name,
        notifications=notifications,
        maximum_concurrency=settings.maximum_concurrency,
        seconds=seconds,
        billed_ms=tuple(billed_ms(i) for i in invocations),
        records_per_invocation=records / len(invocations) if invocations else 0.0,
        peak_concurrency=peak_concurrency(invocations),
        replies=len(wanted & answered),
    )


def measure(
    stack: LocalStack,
    *,
    seed: int,
    pollers: int,
    mix: Mix,
    model: LatencyModel,
    concurrency: int,
    floor_workers: int,
    saturation_notifications: int,
    progress: Callable[[str], None] | None = None,
) -> RealLatencyResult:
    """Every option through the mix, the paired floor, and the saturation rounds of (a) and (b)."""
    _, nylas = parts(stack)
    intents: dict[tuple[str, str], int] = {}
    proxy = LatencyProxy(nylas.url, model, on_send=_intent_sizes(stack, intents)).start()
    runs: dict[str, MixResult] = {}
    labels: dict[str, str] = {}
    try:
        with through(proxy):
            for option in options(concurrency):
                if progress:
                    progress(f"real latency: {option.label}, seeded mix over {mix.seconds:.0f} s")
                proxy.sends_started.clear()  # the same keys again: a follower waits for this run's send
                runs[option.name] = run_mix(
                    stack,
                    mix,
                    seed=seed,
                    pollers=pollers,
                    batching_override=option.batching,
                    latency=proxy,
                    recorder=slow_agent.recorder(model),
                    reply_wait_seconds=240.0,
                )
                labels[option.name] = option.label
            if progress:
                progress("real latency: the baseline pipeline (no state, no lease), the same mix")
            proxy.sends_started.clear()
            baseline = run_mix(
                stack,
                mix,
                seed=seed,
                pollers=pollers,
                batching_override=options(concurrency)[-1].batching,
                latency=proxy,
                recorder=BaselineContainers(model),
                reply_wait_seconds=240.0,
            )
            floor = paired_floor(stack, schedule(mix, seed), model, workers=floor_workers, progress=progress)
            saturation = []
            for option in options(concurrency)[1:]:
                if progress:
                    progress(
                        f"real latency: saturation, {saturation_notifications} first replies, {option.label}"
                    )
                saturation.append(
                    saturate(stack, option, model, notifications=saturation_notifications, pollers=pollers)
                )
            if progress:
                progress(f"real latency: saturation, {saturation_notifications} first replies, the baseline")
            baseline_saturation = saturate(
                stack,
                options(concurrency)[-1],
                model,
                notifications=saturation_notifications,
                pollers=pollers,
                make_container=BaselineContainers(model).container,
            )
            baseline_echo = echo_ms(stack, BaselineContainers(model))
    finally:
        proxy.stop()
    return RealLatencyResult(
        model=model,
        concurrency=concurrency,
        runs=runs,
        labels=labels,
        floor=floor,
        floor_workers=floor_workers,
        saturation=saturation,
        intent_item_bytes=tuple(intents.values()),
        sends_held=sum(1 for kind, _, _ in proxy.drawn if kind == "send"),
        mean_send_seconds=proxy.mean_drawn("send"),
        mean_read_seconds=proxy.mean_drawn("read"),
        baseline=baseline,
        baseline_saturation=baseline_saturation,
        baseline_echo_ms=baseline_echo,
        idempotency_table=parts(stack)[0].tables["IdempotencyTable"],
    )


# ---- judging -------------------------------------------------------------------------------------------


def single_ratio(result: RealLatencyResult, option: str) -> tuple[float, float, float]:
    """(p99 of the singles, p99 of their floors, the ratio) for one option's run."""
    row = result.runs[option].row(ROW_SINGLE)
    answered = [t.seconds for t in row.times if t.seconds is not None]
    floors = result.floor_of([t.key for t in row.times])
    mine, floor_p99 = p(answered, 0.99), p(floors, 0.99)
    return mine, floor_p99, mine / floor_p99


def own_work(result: RealLatencyResult, t: MessageTime) -> float:
    """The answering reply's own work when it came after the holder's: the floor of the reply's target.

    A reply by the record that held the thread at the message's acknowledgement is the holder's
    remaining work already. Any other reply (the message's own behind the holder, or a burst's second
    reply) read, drafted and sent after the holder released the thread: its waits are those of its
    target message alone (every draw is keyed by the target), which is that message's floor.
    """
    if t.answered_by_holder:
        return 0.0
    return result.floor.get(t.target_key, result.floor.get(t.key, 0.0))


def contended_excess(result: RealLatencyResult, option: str) -> list[float]:
    """Time to reply beyond the holder's remaining work and the answering reply's own (:func:`own_work`)."""
    excess = []
    for name in CONTENDED_ROWS:
        for t in result.runs[option].row(name).times:
            if t.seconds is not None:
                excess.append(t.seconds - t.holder_remaining - own_work(result, t))
    return excess


def other_thread_waits(result: RealLatencyResult, option: str) -> list[float]:
    """Per answered message: seconds its replying record waited behind other threads' records."""
    return [
        t.other_thread_wait for row in result.runs[option].rows for t in row.times if t.seconds is not None
    ]


def unanswered(result: RealLatencyResult, option: str) -> int:
    return sum(row.unanswered for row in result.runs[option].rows)


def mean_floor(result: RealLatencyResult) -> float:
    return statistics.mean(result.floor.values()) if result.floor else float("nan")
