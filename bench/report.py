"""Render one run as ``docs/performance.md``: the hand-written intro, then the measured tables."""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from bench import budgets, costs, scale
from bench.artifacts import UNZIPPED_LIMIT_BYTES, Artifact
from bench.batches import BatchResult
from bench.coldstart import TRACING_OPTIONS, TRACING_PARTS, ColdStartResult
from bench.machine import Machine
from bench.markdown import table
from bench.paths import PathResult, PathsResult
from bench.stats import Spread, ratio
from bench.throughput import ThroughputResult
from bench.time_to_reply import (
    BUSY_SEND_SECONDS,
    CONTENDED_ROWS,
    PARTS,
    ROW_SINGLE,
    Floor,
    MixResult,
    TimeToReplyResult,
    p,
)
from bench.warm_path import WarmPathResult
from devstack.cold_start import PROFILES, TARGETS
from devstack.counting import GRANT_LOOKUP, MESSAGE_FETCH, SEND, THREAD_READ, Tally


@dataclass(frozen=True)
class Run:
    """Everything one ``python -m bench`` measured."""

    command: str
    machine: Machine
    load_at_end: str
    seconds: float
    warm_path: WarmPathResult
    cold_start: ColdStartResult
    paths: PathsResult
    throughput: list[ThroughputResult]
    batches: list[BatchResult]
    artifacts: list[Artifact] | None
    message_bytes: int
    time_to_reply: TimeToReplyResult


INTRO = """\
# Performance

ReplyOnce answers a webhook that Nylas gives 10 s, and slow acks are what make
Nylas deliver twice. This page measures ReplyOnce against the least the work
needs, side by side in one run: a customer's time to reply (webhook 200 to the
reply reaching Nylas) beside the same work invoked directly, the webhook's
handler beside an HMAC plus one raw SQS `SendMessage`, each function's cold
start beside `import boto3` and one client, and every request a notification
costs on each path — and, from those counts, what 1 M and 10 M notifications a
day cost and need.

How to read it:

- **Counts are deterministic.** They are counted at the wire (botocore
  `before-send` hooks on the session the real consumer and endpoint are built
  from; the Nylas emulator's request log), repeated, and must agree. The same
  budgets are asserted in `tests/test_budgets.py`, so CI fails when a path
  gains a request.
- **Times are benchmarks.** They come from this machine, against the local
  stack (moto and the Nylas emulator on 127.0.0.1, in the same process), and
  are given as *median (min..max)* over repeated rounds. Loopback HTTP to moto
  dominates every request's time here; the ratios carry over to AWS, the
  milliseconds do not. Nothing time-based is asserted in tests.
- **The Nylas budget of a first reply is "1 send + 1 thread read".** Inside
  the thread lease the replier reads the thread once, with headers, to
  decide the burst, its newest message and whether the agent already
  answered. That read is part of the design, counted and reported, not an
  overhead to remove.

Regenerate with `make bench` (all of it takes a few minutes on 2 cores);
`make bench ARGS="--help"` lists the options.
"""


def _ms(spread: Spread) -> str:
    return spread.render(2 if spread.median < 10 else 1)


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.1 else f"${value:,.4f}"


def _mib(size: int) -> str:
    return f"{size / 1024 / 1024:.2f} MiB" if size >= 100_000 else f"{size:,} B"


def _machine(run: Run) -> str:
    m = run.machine
    rows = [
        ("date", m.date),
        ("command", f"`{run.command}`"),
        ("CPU", f"{m.cpu_model}, {m.cpus} CPUs (`nproc`)"),
        ("Python", m.python),
        ("OS", m.platform),
        ("load average (1/5/15 min)", f"{m.load_at_start} at start, {run.load_at_end} at end"),
        ("duration of the run", f"{run.seconds:.0f} s"),
    ]
    return "## The run\n\n" + table(("", ""), rows)


def budgets_section(verdicts: Sequence[budgets.Verdict]) -> str:
    rows = [(v.budget, v.measured, v.mark) for v in verdicts]
    notes = [f"- Missed: {v.budget}. {v.when_missed}" for v in verdicts if not v.met and v.when_missed]
    sections = ["## Budgets", table(("budget", "measured", "result"), rows)]
    if notes:
        sections.append("\n".join(notes))
    return "\n\n".join(sections)


def _budgets(run: Run) -> str:
    verdicts = [
        budgets.warm_path(run.warm_path),
        *budgets.cold_starts(run.cold_start),
        *budgets.time_to_reply(run.time_to_reply),
        *budgets.counts(run.paths),
    ]
    return budgets_section(verdicts)


def _warm_path(result: WarmPathResult) -> str:
    rows = [
        (
            "ReplyOnce `lambda_handler` (Powertools decorators included)",
            _ms(result.handler_p50),
            _ms(result.handler_p99),
            f"{ratio(result.handler_p50, result.baseline_p50):.2f}x",
            f"{ratio(result.handler_p99, result.baseline_p99):.2f}x",
        ),
        (
            "ReplyOnce `WebhookEndpoint.handle` only",
            _ms(result.handle_p50),
            _ms(result.handle_p99),
            f"{ratio(result.handle_p50, result.baseline_p50):.2f}x",
            f"{ratio(result.handle_p99, result.baseline_p99):.2f}x",
        ),
        (
            "baseline: HMAC + raw boto3 `send_message`",
            _ms(result.baseline_p50),
            _ms(result.baseline_p99),
            "1",
            "1",
        ),
    ]
    return (
        "## Webhook warm path\n\n"
        f"A signed {result.body_bytes}-byte `message.created` (base64, as API Gateway passes it), "
        f"{result.iterations} requests per round after warm-up, {result.rounds} rounds, contenders "
        "interleaved request by request against the same moto server. Times in ms.\n\n"
        + table(("contender", "p50", "p99", "p50 ratio", "p99 ratio"), rows)
        + "\n\nBoth sides are dominated by the loopback HTTP round trip to moto; in AWS the SQS call "
        "(single-digit ms) dominates the same way, so the ratio is the figure to watch."
    )


def _cold_start(result: ColdStartResult) -> str:
    rows = []
    for profile in PROFILES:
        times = result.times[profile.name]
        for target in TARGETS:
            rows.append(
                (
                    profile.name,
                    target,
                    _ms(times[target]),
                    f"{ratio(times[target], times['baseline']):.2f}x",
                    f"{times[target].low / times['baseline'].low:.2f}x",
                )
            )
    heaviest = ", ".join(f"`{name}` {ms} ms" for name, ms in result.heaviest_imports)
    baseline = result.times[PROFILES[1].name]["baseline"]
    option_rows = [
        (
            option.name,
            _ms(result.options[option.name]),
            f"{ratio(result.options[option.name], baseline):.3f}x",
            option.sqs_call_traced,
            option.gives_up,
        )
        for option in TRACING_OPTIONS
        if option.name in result.options
    ]
    outside, traced = (result.times[p.name]["webhook"].median for p in PROFILES)
    return (
        "## Cold start\n\n"
        f"Each sample is a fresh interpreter ({result.runs} runs per target after one discarded warm-up, "
        "environments and targets interleaved) timing import and initialisation in-process, interpreter "
        "start-up excluded: `import boto3; boto3.client('sqs')` for the baseline, "
        "`import app; app.endpoint()` / `app.consumer()` for the functions (what a container builds "
        "before its first answer). "
        "The Lambda profile sets `LAMBDA_TASK_ROOT` as Lambda does, so Powertools' Tracer is on "
        "(`Tracing: Active`): the X-Ray SDK is imported and patches botocore. Times in ms; the budget is "
        "judged on medians, and the ratio of minimums — the runs least disturbed by other load — is "
        "shown beside it.\n\n"
        + table(("environment", "target", "import + init", "vs baseline (medians)", "(minimums)"), rows)
        + "\n\nTracing — the X-Ray SDK's import and its botocore patch — is what differs between the two "
        f"environments: {traced - outside:+.0f} ms on the webhook's median here.\n\n"
        "Tracing options for the webhook (Lambda, `Tracing: Active` on the function in every row; "
        "same runs, same baseline). The lazy row is what the first response waits for: init plus the "
        "first request building the Tracer.\n\n"
        + table(
            ("option", "ms", "vs baseline (medians)", "the webhook's SQS call in X-Ray", "a user gives up"),
            option_rows,
        )
        + _tracing_parts(result)
        + '\n\nThe service-only option needs one template change: `POWERTOOLS_TRACE_DISABLED: "true"` in '
        "WebhookFunction's `Environment.Variables`, with `Tracing: Active` kept so Lambda still records "
        "the function's segment and sets `_X_AMZN_TRACE_ID`, which botocore forwards to SQS.\n\n"
        "What the webhook imports beyond the baseline, heaviest first (Lambda profile, self time "
        f"under `-X importtime`, which inflates it — for ranking only): {heaviest}.\n\n"
        "The webhook imports no `requests`, no Powertools idempotency or batch utilities, and "
        "outside Lambda no X-Ray SDK (a test in `tests/test_budgets.py` keeps it so). The replier has no "
        "budget: it runs off the ack path, and its import path (Powertools idempotency and batch, "
        "`requests`) is what its work needs."
    )


def _tracing_parts(result: ColdStartResult) -> str:
    """The X-Ray SDK's cost taken apart, as milliseconds over the Lambda profile's baseline."""
    if len(result.tracing_parts) < len(TRACING_PARTS):
        return ""
    baseline = result.times[PROFILES[1].name]["baseline"]
    asyncio, sdk, patched = (result.tracing_parts[name].median - baseline.median for name, _ in TRACING_PARTS)
    low_asyncio, low_sdk, low_patched = (
        result.tracing_parts[name].low - baseline.low for name, _ in TRACING_PARTS
    )
    return (
        "\n\nThe tracing cost taken apart (Lambda profile, the baseline's work plus one part, same runs; "
        f"medians, then minimums): importing the X-Ray SDK adds {sdk:+.1f} ms ({low_sdk:+.1f}), asyncio "
        f"alone {asyncio:+.1f} ms ({low_asyncio:+.1f}) of it, and patching botocore "
        f"{patched - sdk:+.1f} ms ({low_patched - low_sdk:+.1f}) more. `aws_xray_sdk.core` makes its "
        "module-level recorder an `AsyncAWSXRayRecorder`, so importing the SDK imports asyncio even for a "
        "synchronous function; no setting of ours removes that import while the SDK records the "
        "SendMessage subsegment. Parts of a few milliseconds are below this machine's run-to-run spread "
        f"(the baseline alone ranges {baseline.low:.0f}..{baseline.high:.0f} ms over the runs): read "
        "them as an order of magnitude, not as a measurement of each part."
    )


def _ops(tally: Tally, service: str) -> str:
    operations = tally.operations(service)
    if not operations:
        return "0"
    detail = ", ".join(f"{op} {n}" if n > 1 else op for op, n in operations.items())
    return f"{sum(operations.values())} ({detail})"


def _nylas(tally: Tally) -> str:
    if not tally.nylas_total:
        return "0"
    order = (SEND, THREAD_READ, MESSAGE_FETCH, GRANT_LOOKUP)
    parts = [f"{tally.nylas[kind]} {kind}" for kind in order if tally.nylas[kind]]
    return " + ".join(parts)


def _path_rows(results: Sequence[PathResult]) -> list[tuple[object, ...]]:
    return [
        (
            p.name + (" *(record fails, retried)*" if p.failed else ""),
            _ops(p.tally, "dynamodb"),
            _ops(p.tally, "sqs"),
            _ops(p.tally, "secrets-manager"),
            _nylas(p.tally),
            f"{p.median_ms:.1f}",
        )
        for p in results
    ]


def _paths(result: PathsResult) -> str:
    header = ("path", "DynamoDB", "SQS (function)", "Secrets Manager", "Nylas", "handler ms")
    return (
        "## Requests per notification\n\n"
        f"Each path run {result.repeats} times; the counts were identical every time. The replier is one "
        "container warmed by one reply (grant address and API key cached) unless the path says cold; "
        "its handler time is the real `lambda_handler` with a batch of one (median). The event source "
        "mapping's own SQS requests are in the batch-size table below.\n\n"
        "### Replier\n\n"
        + table(header, _path_rows(result.replier))
        + "\n\nA first reply's six DynamoDB requests: the idempotency record (conditional `PutItem`), the "
        "reply ledger (`GetItem`), the thread lease (`UpdateItem` returning the thread state), the send "
        "intent stored in the thread item before the send (the outbox, `UpdateItem`), the ledger and "
        "thread recorded together (`TransactWriteItems`) and the idempotency record completed "
        "(`UpdateItem`). A truncated notification costs the same: the thread read inside the lease "
        "carries the message's body and headers, so nothing is fetched. "
        "A duplicate stops at the first: the failed conditional put returns the stored "
        "record (`ReturnValuesOnConditionCheckFailure`), so no read follows.\n\n"
        "### Webhook\n\n"
        + table(header, _path_rows(result.webhook))
        + "\n\nA container reads the secret on its first request and then every "
        f"{costs.secrets_max_age_seconds()} s (Powertools Parameters cache); a forged signature triggers "
        "at most one fresh read per 5 s per container, so forged traffic cannot become Secrets Manager "
        "traffic."
    )


def _throughput(results: Sequence[ThroughputResult]) -> str:
    rows = [
        (
            r.pollers,
            r.notifications,
            r.replies_per_second.render(1),
            _ms(r.seconds),
            f"{r.dynamodb_per_reply:.2f}",
        )
        for r in results
    ]
    return (
        "## Replier throughput (local stack)\n\n"
        "First replies, each on its own thread, queued before the pollers start; one replier container "
        "per poller (the real handler, batch size from the template); timed until the emulator has "
        "seen every reply.\n\n"
        + table(
            ("pollers", "notifications", "replies/s", "seconds to drain", "DynamoDB requests/reply"), rows
        )
        + "\n\nmoto, the Nylas emulator and the pollers share one Python process (one GIL) on this "
        "machine, and every request is a loopback HTTP round trip, so more pollers cannot add CPU: the "
        "figures show the per-record work and its contention, not Lambda's scaling, which runs one "
        "container per concurrent batch up to `ReplierMaximumConcurrency`. A DynamoDB count above 5 "
        "per reply would mean requests were retried (moto fails some concurrent transactions)."
    )


def _batches(results: Sequence[BatchResult]) -> str:
    rows = [
        (
            r.batch_size,
            f"{r.invocations_per_notification:.2f}",
            f"{r.esm_sqs_per_notification:.2f}",
            f"{r.function_requests.get('dynamodb', 0):.1f}",
            f"{r.nylas_per_notification:.1f}",
            f"{r.billed_ms_per_invocation:.1f}",
            f"{r.billed_ms_per_notification:.1f}",
        )
        for r in results
    ]
    header = (
        "batch size",
        "invocations / notification",
        "event source SQS / notification",
        "DynamoDB / notification",
        "Nylas / notification",
        "billed ms / invocation",
        "billed ms / notification",
    )
    return (
        "## Cost against batch size\n\n"
        f"{results[0].notifications} first replies drained by one warm container at each batch size "
        "(`ReceiveMessage` + `DeleteMessageBatch` counted on the event source's client, the final "
        "empty receive left out). Times: median over rounds.\n\n"
        + table(header, rows)
        + "\n\nBatching divides Lambda invocations and the event source's SQS requests by the batch size; "
        "DynamoDB and Nylas requests are per record and do not shrink. Billed time per notification "
        "stays roughly flat here because each record's time is loopback round trips; what batching saves "
        "is the per-invocation overhead and requests."
    )


def _artifacts(artifacts: Sequence[Artifact] | None) -> str:
    if artifacts is None:
        return "## Artifact sizes\n\nNot measured in this run (`--skip-build`)."
    rows = [
        (
            a.name,
            a.files,
            _mib(a.bytes),
            _mib(a.zipped_bytes),
            ", ".join(f"{name} {_mib(size)}" for name, size in a.largest_parts[:4]),
        )
        for a in artifacts
    ]
    total = sum(a.bytes for a in artifacts if a.name != "ReplierFunction")
    return (
        "## Artifact sizes (`sam build`)\n\n"
        + table(("artifact", "files", "unzipped", "zipped (deflate)", "largest parts"), rows)
        + f"\n\nThe webhook with its layer unpacks to {_mib(total)} of Lambda's "
        f"{UNZIPPED_LIMIT_BYTES // 1024 // 1024} MB limit. The layer ships its own boto3/botocore "
        "(pinned with aws-xray-sdk, see `layers/replyonce/requirements.txt`); botocore is most of it."
    )


def _template_batch(run: Run) -> BatchResult:
    """The measured batch size the template uses (the largest measured if it uses another)."""
    size = costs.batch_size()
    return next(
        (b for b in run.batches if b.batch_size == size), max(run.batches, key=lambda b: b.batch_size)
    )


def _cost_inputs(run: Run, at_template: BatchResult) -> costs.Inputs:
    return costs.Inputs(
        webhook_ms=run.warm_path.handler_p50.median,
        replier_ms={p.name: p.median_ms for p in run.paths.replier},
        replier_tallies={p.name: p.tally for p in run.paths.replier},
        invocations_per_notification=at_template.invocations_per_notification,
        esm_sqs_per_notification=at_template.esm_sqs_per_notification,
        largest_item_bytes=max(run.paths.largest_item_bytes.values()),
        message_bytes=run.message_bytes,
    )


COST_PATHS = (
    "first reply",
    "first reply, truncated notification",
    "duplicate delivery",
    "ignored type (message.updated)",
    "own outbound message",
)


def _prices() -> str:
    p = costs.PRICES
    rows = [
        ("API Gateway REST API", f"${p.api_gateway_rest_per_million:.2f} per million requests"),
        (
            "Lambda arm64",
            f"${p.lambda_arm64_per_gb_second:.10f}".rstrip("0")
            + f" per GB-s, ${p.lambda_per_million_requests:.2f} per million requests",
        ),
        ("SQS standard", f"${p.sqs_standard_per_million:.2f} per million requests (each 64 KB chunk)"),
        (
            "DynamoDB on-demand",
            f"${p.dynamodb_per_million_wru} per million WRU, ${p.dynamodb_per_million_rru} per million RRU",
        ),
        (
            "Secrets Manager",
            f"${p.secrets_manager_per_10k_calls:.2f} per 10,000 calls "
            f"(+ ${p.secrets_manager_per_secret_month:.2f} per secret-month)",
        ),
    ]
    return table(("service", "price"), rows)


def _costs(run: Run) -> str:
    at_template = _template_batch(run)
    inputs = _cost_inputs(run, at_template)
    results = [costs.path_cost(inputs, name) for name in COST_PATHS]
    first = results[0]
    summary = [(c.path, _usd(c.total)) for c in results]
    breakdown = [(line, _usd(value)) for line, value in first.lines.items() if value]
    batch = at_template.batch_size
    outbox = costs.outbox_per_million(inputs)
    return (
        "## Cost per million notifications\n\n"
        f"AWS list prices, us-east-1, as of {costs.PRICES.as_of}, free tiers left out — re-check them on "
        "the pricing pages ("
        + ", ".join(costs.PRICES.sources)
        + ") before relying on the figures.\n\n"
        + _prices()
        + "\n\nComputed from the counts above and the measured times: the webhook's warm p50 "
        f"({run.warm_path.handler_p50.median:.1f} ms, billed rounded up), each replier path's handler "
        f"time, {costs.memory_gb() * 1024:.0f} MB (template), the template's batch size ({batch}) for "
        "invocations and the event source's SQS requests, 1 WRU per write per KB (failed conditional "
        "writes included), 2 WRU per transaction item per KB, 1 RRU per strongly consistent read "
        f"(largest item measured: {max(run.paths.largest_item_bytes.values())} B).\n\n"
        + table(("every notification takes the webhook, then", "USD per million"), summary)
        + "\n\nWhere a first reply's money goes:\n\n"
        + table(("line", "USD per million"), breakdown)
        + "\n\nThe send outbox (the intent stored in the thread item before the send) is one of a first "
        f"reply's writes: {_usd(outbox)} per million first replies at the item size measured. The intent "
        "holds the drafted reply while the send is in flight and is cleared when the reply is recorded, so "
        "the largest item measured after the run does not show it: a draft that takes the thread item "
        "over 1 KB makes that write, and the thread's writes until the record, cost 1 WRU more per KB."
        + "\n\nNot per notification:\n\n"
        f"- Secrets Manager: one read per warm container per {costs.secrets_max_age_seconds()} s. With "
        "one warm container per function at 1 M notifications a month that is "
        f"{_usd(costs.secrets_per_million())} per million, plus the secret's monthly fee.\n"
        "- Cold starts, CloudWatch Logs and metrics (EMF lines), X-Ray traces, and the event source "
        "mapping's idle long polls (about $0.26 a month per queue) are not included.\n"
        "- Real latency costs money in the replier: Lambda bills the time a record waits on Nylas and "
        f"DynamoDB. Each 100 ms of waiting per notification adds {_usd(costs.per_100ms_of_waiting())} per "
        "million; a Nylas send that takes 2 s adds about "
        f"{_usd(20 * costs.per_100ms_of_waiting())}. The local times above have no such waits, so the "
        "replier's GB-s line is a floor."
    )


def _scale(run: Run) -> str:
    replier = {p.name: p for p in run.paths.replier}
    return scale.render(
        replier["first reply"].tally,
        replier["own outbound message"].tally,
        _cost_inputs(run, _template_batch(run)),
        webhook_ms=run.warm_path.handler_p50.median,
        replier_ms=replier["first reply"].median_ms,
    )


def render(run: Run) -> str:
    sections = [
        INTRO,
        _machine(run),
        _budgets(run),
        time_to_reply(run.time_to_reply, run.batches),
        _warm_path(run.warm_path),
        _cold_start(run.cold_start),
        _paths(run.paths),
        _throughput(run.throughput),
        _batches(run.batches),
        _artifacts(run.artifacts),
        _costs(run),
        _scale(run),
    ]
    return "\n\n".join(sections).rstrip() + "\n"


def _s(values: Sequence[float], fraction: float) -> str:
    return f"{p(list(values), fraction):.3f}" if values else "-"


def _ttr_rows(mix: MixResult, floor_p99: float, label: str = "") -> list[tuple[object, ...]]:
    rows = []
    for row in mix.rows:
        if not row.times:
            continue
        answered = row.answered
        rows.append(
            (
                row.name + label,
                len(row.times),
                row.unanswered or "0",
                _s(answered, 0.5),
                _s(answered, 0.9),
                _s(answered, 0.99),
                f"{p(answered, 0.99) / floor_p99:.1f}x" if answered else "-",
                f"{p(row.excess, 0.99):+.3f}" if row.name in CONTENDED_ROWS and answered else "",
            )
        )
    return rows


def _floor_row(name: str, floor: Floor, floor_p99: float) -> tuple[object, ...]:
    values = floor.seconds
    return (
        name,
        len(values),
        "0",
        _s(values, 0.5),
        _s(values, 0.9),
        _s(values, 0.99),
        f"{p(values, 0.99) / floor_p99:.1f}x",
        "",
    )


def _window_cost(batches: Sequence[BatchResult]) -> str:
    """What a window of 0 would cost at worst: every batch a single record (batch size 1 measured)."""
    size = costs.batch_size()
    at_template = next((b for b in batches if b.batch_size == size), None)
    single = next((b for b in batches if b.batch_size == 1), None)
    if at_template is None or single is None:
        return ""
    prices = costs.PRICES
    extra = (single.invocations_per_notification - at_template.invocations_per_notification) * (
        prices.lambda_per_million_requests
    ) + (
        single.esm_sqs_per_notification - at_template.esm_sqs_per_notification
    ) * prices.sqs_standard_per_million
    return (
        " Without the window every batch could be a single record: at worst (batch size 1, measured under "
        f"Cost against batch size) that costs {_usd(extra)} more per million notifications in Lambda "
        "requests and the event source's SQS requests; batches still fill when traffic does."
    )


def time_to_reply(result: TimeToReplyResult, batches: Sequence[BatchResult] = ()) -> str:
    """The time-to-reply section: the table against the floor, and where the time goes."""
    mix = result.mix
    floor_p99 = p(result.floor_warm.seconds, 0.99)
    rows = _ttr_rows(mix, floor_p99)
    rows.append(
        _floor_row("**floor**: the same work invoked directly, warm container", result.floor_warm, floor_p99)
    )
    rows.append(_floor_row("floor, new container", result.floor_cold, floor_p99))
    if result.what_if is not None:
        window = result.what_if.batching.window_seconds
        rows += [
            r
            for r in _ttr_rows(result.what_if, floor_p99, f" — what-if: window {window:g} s")
            if r[0].startswith(ROW_SINGLE)
        ]
    header = (
        "messages",
        "n",
        "unanswered",
        "p50 s",
        "p90 s",
        "p99 s",
        "p99 / floor p99",
        "p99 beyond the holder's work, s",
    )
    parts_rows = [
        (row.name, *(f"{row.part_median_ms(part):.0f}" for part in PARTS)) for row in mix.rows if row.answered
    ]
    slowest_rows = []
    for row in mix.rows:
        slowest = row.p99_message()
        if slowest is not None and slowest.seconds is not None:
            slowest_rows.append(
                (
                    row.name,
                    f"{slowest.seconds:.3f}",
                    *(f"{slowest.parts.get(part, 0.0) * 1000:.0f}" for part in PARTS),
                )
            )
    unanswered = [
        f"- {row.name}: {row.unanswered} unanswered; their records ended "
        + ", ".join(f"{outcome} x{n}" for outcome, n in sorted(row.unanswered_outcomes().items()))
        for row in mix.rows
        if row.unanswered
    ]
    requests_share = statistics.median(result.floor_warm.requests_seconds) / statistics.median(
        result.floor_warm.seconds
    )
    b = mix.batching
    return (
        "## Time to reply\n\n"
        "What a customer waits for: from the webhook's 200 to the reply reaching Nylas (the emulator's "
        "own timestamp of the email going out), for each inbound message of a seeded mix delivered "
        "through the local stack — signed notification over HTTP to the webhook, SQS (moto), an event "
        f"source stand-in with the template's batching (`BatchSize: {b.batch_size}`, "
        f"`MaximumBatchingWindowInSeconds: {b.window_seconds:g}`, up to {b.maximum_concurrency} "
        f"concurrent invocations, {mix.pollers} pollers), the real replier handler, the Nylas emulator. "
        "A reply answers a message when it went to that message or to a later one on the same thread "
        "(the only replies whose draft could have seen it). "
        f"Seed {mix.seed}: {mix.messages} messages, {mix.notifications} notifications (duplicates "
        f"included), {mix.sends} replies sent, {mix.answered_twice} messages answered twice, "
        f"{mix.webhook_refusals} notifications the webhook did not answer 200, "
        f"{mix.seconds:.0f} s; `BUSY_RETRY_SECONDS` {mix.busy_retry_seconds} (template).\n\n"
        "The mix: single messages on their own thread; bursts of 2-5 on one thread within a second; "
        "duplicates (the notification delivered again 0.1-3 s later); busy threads (a second message "
        "lands while the first one's reply is being sent and Nylas takes "
        f"{BUSY_SEND_SECONDS:g} s over it); cold replier containers (idle containers retired, so the "
        "next batches start new ones — in-process, so a Lambda cold start's interpreter and imports, "
        "see Cold start, come on top). The floor is the same work with nothing in between: the replier "
        "handler invoked directly with the record, no queue, no poller, nothing else running — its "
        "DynamoDB and Nylas requests back to back, "
        f"{requests_share:.0%} of the floor's median — timed to the reply reaching the emulator, in the "
        "same run. The contended rows (a burst's last message, a message landing on a busy thread) are "
        "also judged against the lease holder's remaining work: how long the worker holding the thread "
        "when the message was acknowledged still took to finish its record (0 when nobody held it); the "
        "last column is the p99 of the time to reply beyond it.\n\n"
        + table(header, rows)
        + "\n\nThe what-if row is the same kind of single messages with `MaximumBatchingWindowInSeconds: 0`, "
        "run right after in the same process: the window is what separates a single message from its "
        "floor."
        + _window_cost(batches)
        + "\n\nWhere the time goes (median ms per message, from the timeline of the record that sent "
        "its reply): *queue* until that record's batch was invoked (the pollers' receive and the "
        "batching window), *container init* (a new container's clients), *batch* (records ahead of it "
        "in its invocation), *lease wait* (attempts refused because another worker held the thread, the "
        "time back in SQS between them, and in-process waits for the lease), *retry backoff* (other "
        "failed attempts), then the replying attempt's DynamoDB and Nylas requests and the handler's "
        "own work.\n\n"
        + table(("messages", *PARTS), parts_rows)
        + "\n\nThe p99 message of each row, its parts (ms):\n\n"
        + table(("messages", "seconds", *PARTS), slowest_rows)
        + (
            "\n\nUnanswered (no reply went to the message or to a later one on its thread):\n\n"
            + "\n".join(unanswered)
            if unanswered
            else ""
        )
    )
