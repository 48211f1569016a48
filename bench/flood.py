"""``make bench-flood``: one grant flooding beside many quiet ones, against the same run without the flood.

Issue 42, "Fair to every mailbox": a newsletter loop, a migration's backlog or a customer's import
in one mailbox must not delay the others. The run, on the local stack (moto with the fair-queue
model of ``devstack.fair_queue``, the Nylas emulator, the real webhook over HTTP and the real
replier in containers of its own):

- ``--grants`` grants (1,000) are registered in the grant registry (``GrantRegistryTable``, one record
  each, written as ``make grants set`` writes it) and in the emulator;
- each quiet grant receives ``--per-grant`` messages at seeded random times over ``--seconds``;
- the flooding grant receives ``--flood-factor`` (50) times as many, all at once a fifth of the way in
  (an import or a loop's backlog);
- the replier's event source is the template's (``BatchSize`` 10, no window, ``ReplierMaximumConcurrency``
  5: up to 50 records in flight), and every record's agent takes ``--agent-seconds``
  (``bench.flood_agent``), so what a flood takes from the quiet grants is the replier's concurrency,
  not this machine's CPU.

Three runs over the same quiet arrivals: *calm* (the flooding grant sends like the others), *flood*
(fair delivery, as the deployed queue does it) and *flood without fair queues* (moto's oldest-first
order: the queue as it was before ``MessageGroupId``). A quiet message's time to reply is from the
webhook's 200 to its reply in the emulator's mailbox; the figures are the quiet grants' p50 and p99
in each flood run as a ratio of the calm run's (goal: p99 within 1.25x).

Beside it, the registry's cost per record: the requests and milliseconds of a refresh of the whole
registry (one ``Query``, paged) and of a cached read, at the hit rate the flood run's containers had.
"""

import os

# Before Powertools is imported: the template's metric namespace, as in Lambda, and no X-Ray outside
# Lambda (as ``bench/__main__.py`` does).
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "ReplyOnce")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

import argparse
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.stats import percentile

DEFAULT_PAGE = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
GOAL_P99_RATIO = 1.25
"""The issue's bar: the quiet grants' p99 time to reply with the flood, over the calm run's."""
FLOOD_GRANT = 0
"""The flooding grant's index; the quiet grants are 1..grants-1."""


@dataclass(frozen=True)
class FloodPlan:
    """What a run delivers: how many grants, messages and when."""

    grants: int = 1000
    per_grant: int = 1
    flood_factor: int = 50
    seconds: float = 300.0
    flood_at_fraction: float = 0.2
    flood_seconds: float = 1.0
    seed: int = 42
    agent_seconds: float = 1.0
    concurrency: int | None = None  # ReplierMaximumConcurrency for a what-if run (None: the template's)

    @property
    def flood_messages(self) -> int:
        return self.flood_factor * self.per_grant


@dataclass(frozen=True)
class Arrival:
    """One inbound message: when (seconds after the start), to which grant, its number for that grant."""

    at: float
    grant: int
    number: int

    @property
    def quiet(self) -> bool:
        return self.grant != FLOOD_GRANT


def schedule(plan: FloodPlan, *, flood: bool) -> list[Arrival]:
    """The seeded arrivals, in time order: the quiet grants' are the same with and without the flood.

    Without the flood the flooding grant receives ``per_grant`` messages like every other grant; with
    it, ``flood_factor`` times as many within ``flood_seconds``, a ``flood_at_fraction`` of the way in.
    """
    quiet_rng = random.Random(plan.seed)  # noqa: S311 - a reproducible workload, not a secret
    arrivals = [
        Arrival(quiet_rng.uniform(0.0, plan.seconds), grant, number)
        for grant in range(1, plan.grants)
        for number in range(plan.per_grant)
    ]
    flood_rng = random.Random(plan.seed + 1)  # noqa: S311
    if flood:
        start = plan.flood_at_fraction * plan.seconds
        arrivals += [
            Arrival(start + flood_rng.uniform(0.0, plan.flood_seconds), FLOOD_GRANT, number)
            for number in range(plan.flood_messages)
        ]
    else:
        arrivals += [
            Arrival(flood_rng.uniform(0.0, plan.seconds), FLOOD_GRANT, number)
            for number in range(plan.per_grant)
        ]
    return sorted(arrivals, key=lambda a: (a.at, a.grant, a.number))


@dataclass(frozen=True)
class Times:
    """Times to reply (seconds) of one run, quiet grants and the flooding grant apart."""

    quiet: list[float]
    flooding: list[float]
    unanswered_quiet: int
    unanswered_flooding: int

    def quiet_p(self, fraction: float) -> float:
        return percentile(self.quiet, fraction)


@dataclass(frozen=True)
class Ratios:
    """A flood run's quiet p50 and p99 over the calm run's."""

    p50: float
    p99: float

    @property
    def met(self) -> bool:
        return self.p99 <= GOAL_P99_RATIO


def ratios(flood: Times, calm: Times) -> Ratios:
    """The quiet grants' percentiles with the flood over those without (nearest rank, as every p here)."""
    return Ratios(flood.quiet_p(0.5) / calm.quiet_p(0.5), flood.quiet_p(0.99) / calm.quiet_p(0.99))


@dataclass(frozen=True)
class RegistryCost:
    """What the replier's read of the registry costs, per refresh and per record."""

    grants: int
    item_bytes: int  # the largest record item, as DynamoDB sizes it (names and values)
    refresh_requests: int  # Query pages of one refresh of the whole registry
    refresh_read_units: float  # eventually consistent: 4 KB per half unit, per page
    refresh_ms: float  # median of a refresh (a cache miss), this machine, moto on loopback
    hit_ms: float  # median of a cached read
    records: int  # records the flood run's containers handled
    refreshes: int  # registry Queries the flood run's containers made (pages)

    @property
    def hit_rate(self) -> float:
        refreshes = self.refreshes / max(1, self.refresh_requests)
        return 1.0 - refreshes / self.records if self.records else 0.0

    @property
    def requests_per_record(self) -> float:
        return self.refreshes / self.records if self.records else 0.0

    @property
    def ms_per_record(self) -> float:
        """The mean time a record spends reading the registry, at this run's hit rate."""
        miss = 1.0 - self.hit_rate
        return miss * self.refresh_ms + self.hit_rate * self.hit_ms


def page_read_units(item_sizes: Sequence[int], page_bytes: int = 1_048_576) -> tuple[int, float]:
    """(pages, read units) of one eventually consistent ``Query`` over items of these sizes.

    DynamoDB returns at most 1 MB a page and bills a Query by the bytes it read, rounded up to 4 KB,
    at half a unit per 4 KB when eventually consistent (Powertools' provider does not ask for
    consistent reads).
    """
    pages, units, page = 1, 0.0, 0
    for size in item_sizes:
        if page + size > page_bytes:
            units += -(-page // 4096) * 0.5
            pages, page = pages + 1, 0
        page += size
    units += -(-page // 4096) * 0.5
    return pages, units


def item_bytes(item: dict[str, dict[str, str]]) -> int:
    """An item's size as DynamoDB counts it: each attribute's name and its string value, in UTF-8."""
    return sum(len(name.encode()) + len(next(iter(value.values())).encode()) for name, value in item.items())


# ---- the runs (the local stack) --------------------------------------------------------------------


@dataclass
class Run:
    name: str
    fair: bool
    flood: bool
    times: Times | None = None
    seconds: float = 0.0
    notifications: int = 0
    sends: int = 0
    answered_twice: int = 0
    webhook_refusals: int = 0
    records: int = 0
    registry_queries: int = 0
    containers: int = 0
    concurrency: int = 0
    batch_size: int = 0
    load: str = ""
    notes: list[str] = field(default_factory=list)


def grant_id(index: int) -> str:
    return "grant-flooding" if index == FLOOD_GRANT else f"grant-quiet-{index:04d}"


def _record_of_grant() -> dict[str, Any]:
    """A grant's record as an operator would set it (``make grants set``): mode, agent, budgets, a cap."""
    return {
        "reply_mode": "send",
        "agent": "bench.flood_agent:reply",
        "reply_budget_per_hour": 3,
        "daily_agent_call_cap": 500,
        "handoff_folder": "Needs a person",
    }


def _register(table: str, grants: int) -> None:
    """Every grant's record in the registry, written as ``make grants set`` writes it (with its change)."""
    import boto3

    from replyonce.adapters.grant_registry import Change, write_change

    client = boto3.client("dynamodb")
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for index in range(grants):
        change = Change(grant_id(index), at, "set", "bench-flood", None, _record_of_grant())
        write_change(client, table, change, None)


def measure_registry(table: str, grants: int, repeats: int = 7) -> tuple[int, int, int, float, float, float]:
    """(largest record item bytes, largest change item bytes, Query pages, read units, refresh ms,
    cached-read ms) of the registry as it is."""
    import boto3

    from bench.timeline import container_session
    from replyonce.adapters.grant_registry import GRANTS_PARTITION, GrantRegistry

    client = boto3.client("dynamodb")
    items = [
        item
        for page in client.get_paginator("query").paginate(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": GRANTS_PARTITION}},
        )
        for item in page["Items"]
    ]
    if len(items) != grants:
        raise RuntimeError(f"the registry holds {len(items)} records, not {grants}")
    sizes = [item_bytes(item) for item in items]
    pages, units = page_read_units(sizes)
    changes = client.scan(
        TableName=table,
        FilterExpression="pk <> :pk",
        ExpressionAttributeValues={":pk": {"S": GRANTS_PARTITION}},
    )["Items"]
    change_size = max((item_bytes(item) for item in changes), default=0)
    refreshes, hits = [], []
    for _ in range(repeats):
        registry = GrantRegistry(table, session=container_session(), max_age_seconds=60)
        started = time.perf_counter()
        records = registry.records()
        refreshes.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        registry.records()
        hits.append((time.perf_counter() - started) * 1000)
        if len(records) != grants:
            raise RuntimeError(f"a refresh read {len(records)} records, not {grants}")
    return max(sizes), change_size, pages, units, statistics.median(refreshes), statistics.median(hits)


def run_once(stack: Any, plan: FloodPlan, run: Run, progress: Callable[[str], None]) -> Run:
    """Deliver the run's arrivals through the webhook and time every reply (see the module docstring)."""
    from bench.event_source import BatchingEventSource, BatchingSettings
    from bench.stack import clear_tables, parts, require_empty_queue
    from bench.timeline import container_session
    from devstack.events import envelope
    from devstack.fair_queue import arrival_order
    from replyonce.shell.consumer import NotificationConsumer

    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    registry_table = resources.tables["GrantRegistryTable"]
    _register(registry_table, plan.grants)
    os.environ["REPLY_AGENT"] = "bench.flood_agent:reply"
    arrivals = schedule(plan, flood=run.flood)
    counts = {"queries": 0, "records": 0}
    lock = threading.Lock()

    def count_query(params: dict[str, Any], **_: Any) -> None:
        if params.get("TableName") == registry_table:
            with lock:
                counts["queries"] += 1

    numbers = iter(range(1, 1_000_000))

    def make_container() -> tuple[int, Any]:
        session = container_session()
        session.events.register("before-parameter-build.dynamodb.Query", count_query)
        consumer = NotificationConsumer.from_environment(aws=session)

        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            with lock:
                counts["records"] += len(event.get("Records") or [])
            return consumer.handle_batch(event, context)

        return next(numbers), handler

    settings = BatchingSettings.from_template(resources)
    if plan.concurrency is not None:
        settings.maximum_concurrency = plan.concurrency
    run.concurrency, run.batch_size = settings.maximum_concurrency, settings.batch_size
    sender = stack.sender()
    acked: dict[str, tuple[float, int, int | None]] = {}  # message id -> (200 time, grant, status)
    run_id = time.time_ns()
    order = arrival_order() if not run.fair else _nothing()
    with order:
        pollers = settings.maximum_concurrency
        source = BatchingEventSource(resources, settings, make_container, pollers=pollers).start()
        started = time.monotonic()
        wall = time.time()

        def deliver(arrival: Arrival) -> None:
            message = nylas.deliver_inbound(
                grant_id(arrival.grant),
                from_email=f"customer{arrival.grant}x{arrival.number}@example.com",
                subject=f"Order {arrival.grant}-{arrival.number}",
                body=f"<p>Where is order {arrival.grant}-{arrival.number}?</p>",
                thread_id=f"flood-{run_id}-{arrival.grant}-{arrival.number}",
            )
            status = sender.deliver(envelope(message))
            with lock:
                acked[message["id"]] = (time.time(), arrival.grant, status)

        pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="bench-flood-nylas")
        try:
            futures = []
            for arrival in arrivals:
                time.sleep(max(0.0, started + arrival.at - time.monotonic()))
                futures.append(pool.submit(deliver, arrival))
            for future in futures:
                future.result()
            progress(f"{run.name}: {len(arrivals)} messages delivered; waiting for the replies")
            _wait(stack, source, nylas, acked, timeout_seconds=max(120.0, plan.seconds))
        finally:
            pool.shutdown(wait=True)
            source.stop()
            _purge(stack)
    run.seconds = time.time() - wall
    replies: dict[str, list[float]] = {}
    for grant in {a.grant for a in arrivals}:
        for arrived, message in nylas.mailbox(grant_id(grant)):
            if "sent" in message.get("folders", []) and message.get("in_reply_to") in acked:
                replies.setdefault(message["in_reply_to"], []).append(arrived)
    quiet, flooding, unanswered = [], [], {True: 0, False: 0}
    for message_id, (at, grant, _) in acked.items():
        if message_id not in replies:
            unanswered[grant != FLOOD_GRANT] += 1
            continue
        (quiet if grant != FLOOD_GRANT else flooding).append(min(replies[message_id]) - at)
    run.times = Times(quiet, flooding, unanswered[True], unanswered[False])
    run.notifications = len(acked)
    run.sends = sum(len(r) for r in replies.values())
    run.answered_twice = sum(1 for r in replies.values() if len(r) > 1)
    run.webhook_refusals = sum(1 for _, _, status in acked.values() if status != 200)
    run.records = counts["records"]
    run.registry_queries = counts["queries"]
    run.containers = next(numbers) - 1
    from bench.machine import Machine

    run.load = Machine.load_now()
    return run


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def _wait(stack: Any, source: Any, nylas: Any, acked: dict[str, Any], timeout_seconds: float) -> None:
    """Until every message has its reply, or nothing is queued or running for a second.

    Why not until the queue is empty: a duplicate delivery of a notification (the sender retrying a
    slow answer) waits out the original's in-progress record, minutes, after the reply is out.
    """
    deadline = time.monotonic() + timeout_seconds
    quiet_since: float | None = None
    checked = 0.0
    while time.monotonic() < deadline:
        if time.monotonic() - checked > 2.0:
            checked = time.monotonic()
            answered = {m.get("in_reply_to") for m in nylas.sent_messages()}
            if all(message_id in answered for message_id in list(acked)):
                return
        visible, in_flight, _ = stack.queue_depth()
        if visible or in_flight or source.busy():
            quiet_since = None
        else:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 1.0:
                return
        time.sleep(0.25)


def _purge(stack: Any) -> None:
    import boto3

    from bench.stack import parts

    resources, _ = parts(stack)
    visible, in_flight, _ = stack.queue_depth()
    if visible or in_flight:
        boto3.client("sqs").purge_queue(QueueUrl=resources.queues["NotificationQueue"])


# ---- the report ------------------------------------------------------------------------------------

SECTION_BEGIN = "<!-- make bench-flood: from here to its end mark; make bench keeps it as it is -->"
SECTION_END = "<!-- make bench-flood: end -->"
ITEM_OVERHEAD_BYTES = 100
"""DynamoDB bills 100 bytes of storage per item beyond its names and values (the on-demand pricing page)."""
REFRESHES_PER_MONTH = 30 * 24 * 60
"""A container that handles records all month refreshes the registry once per ``registry_max_age_seconds``
(60 s)."""
FIRST_REPLY_DYNAMODB_REQUESTS = 9
FIRST_REPLY_WRITE_UNITS = 14
"""A first reply's DynamoDB requests and write units (``docs/performance.md``, Budgets and Cost)."""


@dataclass(frozen=True)
class GrantCost:
    """What one registered grant costs, in USD."""

    at_rest_per_month: float  # its record and one change item, stored with PITR
    refresh_per_container_month: float  # its share of a busy container's registry refreshes
    registry_per_million_replies: float  # the registry reads of a million records, at the run's hit rate


def grant_cost(cost: RegistryCost, change_item_bytes: int) -> GrantCost:
    """A grant's cost from the registry's measured sizes and reads (``bench.costs`` prices)."""
    from bench.costs import price

    stored_gb = (cost.item_bytes + change_item_bytes + 2 * ITEM_OVERHEAD_BYTES) / 1e9
    units_per_page = cost.refresh_read_units / max(1, cost.refresh_requests)
    return GrantCost(
        at_rest_per_month=stored_gb * (price("ddb_storage") + price("ddb_pitr")),
        refresh_per_container_month=REFRESHES_PER_MONTH
        * cost.refresh_read_units
        * price("ddb_rru")
        / 1e6
        / max(1, cost.grants),
        registry_per_million_replies=cost.requests_per_record * units_per_page * price("ddb_rru"),
    )


def with_section(page: str, section: str) -> str:
    """``page`` with its ``make bench-flood`` block replaced by ``section`` (appended when it has none)."""
    block = f"{SECTION_BEGIN}\n\n{section.strip()}\n\n{SECTION_END}\n"
    if SECTION_BEGIN in page and SECTION_END in page:
        before, rest = page.split(SECTION_BEGIN, 1)
        after = rest.split(SECTION_END, 1)[1].lstrip("\n")
        return before + block + (("\n" + after) if after else "")
    return page.rstrip() + "\n\n" + block


def carry_over(old_page: str, new_page: str) -> str:
    """``make bench``'s new page with the ``make bench-flood`` block of the old one kept (a separate run)."""
    if SECTION_BEGIN not in old_page or SECTION_END not in old_page:
        return new_page
    kept = old_page.split(SECTION_BEGIN, 1)[1].split(SECTION_END, 1)[0]
    return with_section(new_page, kept)


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _usd(value: float) -> str:
    return f"${value:.2g}" if value < 0.01 else f"${value:,.2f}"


def report(
    plan: FloodPlan,
    runs: list[Run],
    cost: RegistryCost,
    change_item_bytes: int,
    command: str,
    commit: str,
    machine: Any,
) -> str:
    """The ``make bench-flood`` section of ``docs/performance.md`` for this run."""
    calm = next(r for r in runs if not r.flood)
    assert calm.times is not None
    rows = [
        "| run | quiet messages | p50 | p99 | p50 / calm | p99 / calm | the flooding grant's p50, p99 "
        "| unanswered (quiet, flooding) | replies sent | answered twice | took | load at end |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        assert run.times is not None
        t = run.times
        r = ratios(t, calm.times)
        flooding = (
            f"{_s(percentile(t.flooding, 0.5))}, {_s(percentile(t.flooding, 0.99))}" if t.flooding else "-"
        )
        rows.append(
            f"| {run.name} | {len(t.quiet)} | {_s(t.quiet_p(0.5))} | {_s(t.quiet_p(0.99))} "
            f"| {r.p50:.2f}x | **{r.p99:.2f}x** | {flooding} | {t.unanswered_quiet}, {t.unanswered_flooding} "
            f"| {run.sends} | {run.answered_twice} | {run.seconds:.0f} s | {run.load} |"
        )
    fair = next(r for r in runs if r.flood and r.fair)
    assert fair.times is not None
    verdict = ratios(fair.times, calm.times)
    unfair = next((r for r in runs if r.flood and not r.fair), None)
    unfair_words = ""
    if unfair is not None and unfair.times is not None:
        plain = ratios(unfair.times, calm.times)
        unfair_words = (
            f" The same flood without fair queues (moto's oldest-first order, as the queue was before "
            f"`MessageGroupId`): quiet p50 {plain.p50:.2f}x, p99 {plain.p99:.2f}x."
        )
        if plain.p99 <= verdict.p99:
            unfair_words += (
                " So at p99 this run cannot tell the two apart: the quiet grants' slowest 1% waited "
                f"{_s(calm.times.quiet_p(0.99))} or more without any flood too (p50 "
                f"{_s(calm.times.quiet_p(0.5))}), a tail of this shared machine's one process, not of the "
                "flood, which delays a few percent of the quiet messages by seconds. Where the flood shows "
                f"is the median ({plain.p50:.2f}x without fair queues, {verdict.p50:.2f}x with) and the "
                "flooding grant's own times (served first without fair queues, last with them)."
            )
        else:
            unfair_words += " That difference is what the fair-queue model (and, deployed, SQS) buys."
    g = grant_cost(cost, change_item_bytes)
    per_page = cost.refresh_read_units / max(1, cost.refresh_requests)
    wru_usd = 2 * 0.625
    lines = [
        "## Fair to every mailbox: one grant's flood beside many quiet ones",
        "",
        f"Issue 42: a newsletter loop, a migration's backlog or a customer's import in one mailbox must not "
        f"delay the others. `make bench-flood` registers {plan.grants:,} grants (a record each in the grant "
        f"registry, written as `make grants set` writes it, and a mailbox each in the emulator); each quiet "
        f"grant receives {plan.per_grant} message(s) at seeded random times over {plan.seconds:g} s, and the "
        f"flooding grant {plan.flood_factor} times as many ({plan.flood_messages}) within "
        f"{plan.flood_seconds:g} s, "
        f"{plan.flood_at_fraction:.0%} of the way in. Every message goes through the real webhook over HTTP "
        "(its send carries `MessageGroupId` = the grant) to the replier in containers of its own, with the "
        f"template's event source (`BatchSize` {calm.batch_size}, no window, `ReplierMaximumConcurrency` "
        f"{calm.concurrency}{'' if plan.concurrency is None else ', set for this run'}: up to "
        f"{calm.batch_size * calm.concurrency} records in flight); every draft takes "
        f"{plan.agent_seconds:g} s (`bench/flood_agent.py`), so what the flood "
        "takes from the others is the replier's concurrency, as in Lambda, more than this machine's CPU. A "
        "message's time to reply runs from the webhook's 200 to its reply in the emulator's mailbox. The "
        "runs share the quiet grants' arrivals; the ratios are each flood run's quiet p50 and p99 over the "
        "calm run's (nearest rank).",
        "",
        *rows,
        "",
        f"**The goal (the quiet grants' p99 within {GOAL_P99_RATIO}x of the run without the flood): "
        f"{'met' if verdict.met else 'not met'}** ({verdict.p99:.2f}x with fair queues, "
        f"p50 {verdict.p50:.2f}x)." + unfair_words,
        "",
        "How to read it: the embedded AWS has no fair queues; the local stack models them "
        "(`devstack/fair_queue.py`: a grant with more than 10% of the in-flight records and at least 30 of "
        "them is noisy, and while it is the quiet grants' records are handed out first, AWS's rules). The "
        "processing-time share AWS also watches is not modelled, so locally a flood is only detected once "
        "30 of its records are in flight. Everything runs in one Python process on a shared machine "
        "(load in the table), so the flood's own CPU work slows every record a little here, which Lambda's "
        "separate containers would not.",
        "",
        "### A grant's share of the replier",
        "",
        "- **Across containers, the fair queue is the bound.** While any other grant's record waits, SQS "
        "hands it out before a noisy grant's; the noisy grant is served from the concurrency nobody else is "
        "waiting for, and its own records wait (its p99 in the table). It costs no request: the group is a "
        "parameter of the webhook's one `SendMessage`. A hard cap per grant beyond it would need a counter "
        f"per grant in DynamoDB (a conditional write to take a slot and one to give it back): +2 write "
        f"requests per record, ${wru_usd:.2f} per million records, +20% on a first reply's "
        f"{FIRST_REPLY_WRITE_UNITS} write units and {FIRST_REPLY_DYNAMODB_REQUESTS} to "
        f"{FIRST_REPLY_DYNAMODB_REQUESTS + 2} DynamoDB requests per first reply; a slot a crashed invocation "
        "held needs an expiry; and a record over the cap goes back to the queue, one receive more toward "
        "`maxReceiveCount` (8), which a 5,000-message import would reach. It would also cap a grant when "
        "nobody else is waiting. "
        + (
            "Not added: the table above meets the goal without it."
            if verdict.met
            else "Not added: the table above misses the goal, and this is the next thing to weigh."
        ),
        "- **Within a batch, a grant's records already take no one's turn.** The consumer runs a batch's "
        "thread groups at once (up to 10, the batch size): a quiet grant's record in a batch full of a "
        "flood's runs beside them, not after. A per-grant cap there costs no request but would serialize "
        "the flood's groups: the invocation (one of the `ReplierMaximumConcurrency` slots) would last "
        "several records' time instead of one, taking concurrency from everyone. Not added.",
        "- **Nylas' limits are kept per grant.** A `429` of a rate limit holds that grant's next sends (or "
        "reads) in the container until its `Retry-After` is up (the next second without one, at most 300 s): "
        "they ask Nylas nothing and are deferred for the time left; every other grant's requests go at "
        "once (`replyonce/adapters/pacing.py`, `GrantHolds`; counted in "
        "`tests/integration/test_grant_throttling.py`: the throttled grant's later records make 0 send "
        "requests, the other grant's send their replies in the same batches). Multipart sends stay paced "
        "at 10 a second per grant. The Agent Account send pool (5/s per environment) is shared by every "
        "grant: a grant's flood fills it for all, and its `429`s hold each grant that meets them.",
        "",
        "### The registry's cost per record",
        "",
        "| | figure |",
        "| --- | --- |",
        f"| registered grants | {cost.grants:,} |",
        f"| a grant's record item | {cost.item_bytes} bytes (largest), its change item "
        f"{change_item_bytes} bytes |",
        f"| one refresh of the whole registry (a cache miss) | {cost.refresh_requests} `Query` page(s), "
        f"{cost.refresh_read_units:g} read units (eventually consistent), {cost.refresh_ms:.1f} ms here "
        "(median of 7; moto builds and serialises every item in Python on this loaded machine: DynamoDB "
        "answers such a page in tens of ms) |",
        f"| a cached read | {cost.hit_ms:.3f} ms (median of 7) |",
        f"| the flood run's containers: records, registry `Query` pages | {cost.records:,}, "
        f"{cost.refreshes} |",
        f"| cache hit rate | {cost.hit_rate:.2%} |",
        f"| per record | {cost.requests_per_record:.4f} requests, {cost.ms_per_record:.2f} ms |",
        "",
        "One refresh per container a minute, whatever its threads: Powertools' cache has no lock, and "
        "before the registry took one each of a batch's threads read the whole registry when the cache "
        "expired. At 1,000 grants that stalled this bench's flood run (quiet p50 126 s: moto answers "
        "one DynamoDB request at a time); deployed, it would have been up to 10 times the read units.",
        "",
        "### What a grant costs",
        "",
        f"- **At rest** (no mail): its record and a change item in `GrantRegistryTable` with PITR, "
        f"{_usd(g.at_rest_per_month)} a month. Its share of the registry refreshes: every container that "
        f"handles records reads all {cost.grants:,} records once a minute ({cost.refresh_read_units:g} read "
        f"units), {_usd(g.refresh_per_container_month)} per grant per container busy all month "
        f"({_usd(5 * g.refresh_per_container_month)} at the default 5 containers). No metric has a grant "
        "dimension, so a grant adds no CloudWatch metric.",
        "- **Per reply**: the registry's reads at the run's hit rate, "
        f"{_usd(g.registry_per_million_replies)} "
        f"per million records ({per_page:g} read units a page); `MessageGroupId` adds no request. The first "
        "record of a grant in each container also looks the grant and its folders up at Nylas (2 requests, "
        "no AWS bill; Nylas' Grants API allows 50 a second per application). Everything else a reply costs "
        "is as in the bill above, whichever grant it is for.",
        "",
        "| run facts | |",
        "| --- | --- |",
        f"| command | `{command}` |",
        f"| commit | `{commit}` |",
        f"| date | {machine.date} |",
        f"| CPU | {machine.cpu_model}, {machine.cpus} CPUs, shared with other work (the load average) |",
        f"| Python | {machine.python} |",
        f"| load average (1/5/15 min) at start | {machine.load_at_start} |",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make bench-flood", description=__doc__.split("\n\n")[0])
    parser.add_argument("--grants", type=int, default=FloodPlan.grants)
    parser.add_argument("--per-grant", type=int, default=FloodPlan.per_grant)
    parser.add_argument("--flood-factor", type=int, default=FloodPlan.flood_factor)
    parser.add_argument("--seconds", type=float, default=FloodPlan.seconds, help="the quiet arrivals' spread")
    parser.add_argument(
        "--agent-seconds", type=float, default=FloodPlan.agent_seconds, help="each draft's time"
    )
    parser.add_argument("--seed", type=int, default=FloodPlan.seed)
    parser.add_argument(
        "--concurrency",
        type=int,
        help="ReplierMaximumConcurrency for a what-if run (default: the template's)",
    )
    parser.add_argument("--skip-unfair", action="store_true", help="no run without fair queues")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_PAGE,
        help="the page whose bench-flood section is written (its other sections are left as they are)",
    )
    parser.add_argument("--print", action="store_true", help="print the section instead of writing the page")
    args = parser.parse_args(argv)

    import subprocess

    import bench.flood_agent
    from bench.machine import Machine
    from bench.stack import local_stack, parts

    bench.flood_agent.SECONDS = args.agent_seconds
    plan = FloodPlan(
        args.grants,
        args.per_grant,
        args.flood_factor,
        args.seconds,
        seed=args.seed,
        agent_seconds=args.agent_seconds,
        concurrency=args.concurrency,
    )
    machine = Machine.here()
    # The code this run measures: the checkout as it starts (a commit made while it runs is not in it).
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],  # noqa: S607 - the checkout's own git, for the report
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()

    def progress(text: str) -> None:
        print(f"[bench-flood {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    runs = [Run("calm (no flood)", fair=True, flood=False), Run("flood, fair queues", fair=True, flood=True)]
    if not args.skip_unfair:
        runs.append(Run("flood, without fair queues (moto's order)", fair=False, flood=True))
    with local_stack() as stack:
        resources, nylas = parts(stack)
        for index in range(plan.grants):
            nylas.add_grant(grant_id(index), f"{grant_id(index)}@replyonce.example", name=f"Brand {index}")
        for run in runs:
            progress(f"{run.name}: starting")
            run_once(stack, plan, run, progress)
            assert run.times is not None
            progress(
                f"{run.name}: quiet p50 {run.times.quiet_p(0.5):.2f} s, p99 {run.times.quiet_p(0.99):.2f} s, "
                f"{run.seconds:.0f} s; {run.records} records for {run.notifications} notifications, "
                f"{run.registry_queries} registry Query pages, {run.containers} containers"
            )
        fair = next(r for r in runs if r.flood and r.fair)
        size, change_size, pages, units, refresh_ms, hit_ms = measure_registry(
            resources.tables["GrantRegistryTable"], plan.grants
        )
        cost = RegistryCost(
            plan.grants, size, pages, units, refresh_ms, hit_ms, fair.records, fair.registry_queries
        )
    given = " ".join(argv if argv is not None else sys.argv[1:])
    command = "make bench-flood" + (f" ARGS='{given}'" if given else "")
    text = report(plan, runs, cost, change_size, command, commit, machine)
    if args.print:
        print(text)
    else:
        args.output.write_text(with_section(args.output.read_text(), text))
        progress(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
