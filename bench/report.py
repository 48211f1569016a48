"""Render one run as ``docs/performance.md``: the hand-written intro, then the measured tables."""

import math
import statistics
from collections.abc import Sequence

from bench import budgets, capacity_report, costs, per_reply
from bench.artifacts import UNZIPPED_LIMIT_BYTES, Artifact
from bench.batches import BatchResult
from bench.coldstart import ColdStartResult
from bench.markdown import table
from bench.paths import PathResult, PathsResult
from bench.run import Run
from bench.stats import Spread, p, ratio
from bench.throughput import ThroughputResult
from bench.time_to_reply import (
    BUSY_SEND_SECONDS,
    CONTENDED_ROWS,
    PARTS,
    ROW_SINGLE,
    Floor,
    MixResult,
    TimeToReplyResult,
)
from bench.warm_path import WarmPathResult
from devstack.cold_start import PROFILES, TARGETS
from devstack.counting import FOLDERS_LOOKUP, GRANT_LOOKUP, MESSAGE_FETCH, SEND, THREAD_READ, Tally

INTRO = """\
# Performance

ReplyOnce answers a webhook that Nylas gives 10 s, and slow acks are what make
Nylas deliver twice. The page leads with what exactly once costs: ReplyOnce's
bill per reply sent (the `message.created` each reply brings back included) as
a ratio of the bill of a plain webhook → queue → function → send pipeline
without state or lease (`bench/baseline.py`), both run in the same `make bench`
with the same agent and the same injected latencies. It then measures
ReplyOnce against the least the work needs, side by side in one run: a
customer's time to reply (webhook 200 to the reply reaching Nylas) beside the
same work invoked directly — at real latencies (Nylas sends and the agent's
draft taking seconds) and on loopback —, the
batching options that decide it, the webhook's handler beside an HMAC plus one
raw SQS `SendMessage`, each function's cold start beside `import boto3` and one
client, each container's memory and log volume, and every request a
notification costs on each path — and, from those, the bill as it will be and
what 1 M and 10 M notifications a day need within an account's default quotas.

How to read it:

- **Counts are deterministic.** They are counted at the wire (botocore
  `before-send` hooks on the session the real consumer and endpoint are built
  from; the Nylas emulator's request log), repeated, and must agree. The same
  budgets are asserted in `tests/integration/test_budgets.py`, so CI fails when a path
  gains a request.
- **Times are benchmarks.** They come from this machine, against the local
  stack (moto and the Nylas emulator on 127.0.0.1, in the same process), and
  are given as *median (min..max)* over repeated rounds. Loopback HTTP to moto
  dominates every request's time here; the ratios carry over to AWS, the
  milliseconds do not. At real latency the waits are injected (a seeded,
  documented distribution), and each time is set against a floor that met the
  same waits in the same run. Nothing time-based is asserted in tests.
- **The Nylas budget of a first reply is "1 send + 1 thread read + the
  look before the send".** Inside the thread lease the replier reads the
  thread once, with headers, to decide the burst, its newest message and
  whether the agent (or a person) already answered; after the agent answered
  it reads the newest few messages again (one small page), so a person who
  answered meanwhile is not answered over. Both reads are part of the design,
  counted and reported, not an overhead to remove.
- **A burst waits for a queued reply only on new state (issue 48).** A
  burst that covers more than its own message waits (`state_new`) while its
  thread's state is younger than `pending_confirm_seconds` (600 s: the
  Agent Account queue's 90 s and the settle): after the state table began
  (emptied or recreated) or a `make restore-state`, when a reply the lost
  state had sent or queued may not be listed yet. A new thread in a table
  in service waits nothing (its state is as old as the table, so this
  mix's bursts do not wait); no request is added (`docs/design.md`, "After
  the state table is lost").

Regenerate with `make bench` (all of it takes about half an hour on 2 cores,
most of it the real-latency runs waiting); `make bench ARGS="--help"` lists
the options. Every figure of a page
comes from the one run its command under The run names.
"""


def _ms(spread: Spread) -> str:
    return spread.render(2 if spread.median < 10 else 1)


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
        *(budgets.real_latency(run.real_latency) if run.real_latency is not None else []),
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
    outside, traced = (result.times[p.name]["replier"].median for p in PROFILES)
    return (
        "## Cold start\n\n"
        f"Each sample is a fresh interpreter ({result.runs} runs per target after one discarded warm-up, "
        "environments and targets interleaved) timing import and initialisation in-process, interpreter "
        "start-up excluded: `import boto3; boto3.client('sqs')` for the baseline, "
        "`import app; app.endpoint()` / `app.consumer()` for the functions (what a container builds "
        "before its first answer). "
        "The Lambda profile sets `LAMBDA_TASK_ROOT` as Lambda does. Both functions are traced by the "
        "Lambda service (`Tracing: Active`) and neither imports the X-Ray SDK, whose support ends on "
        "2027-02-25, so an import path is the same in both environments. Times in ms; the budget is "
        "judged on medians, and the ratio of minimums — the runs least disturbed by other load — is "
        "shown beside it.\n\n"
        + table(("environment", "target", "import + init", "vs baseline (medians)", "(minimums)"), rows)
        + "\n\nThe two environments differ for the replier by "
        f"{traced - outside:+.0f} ms on its median here, with no tracing SDK imported in either: "
        "only what Powertools reads from `LAMBDA_TASK_ROOT` differs. Tracing is Lambda's: it records "
        "each invocation's segment and sets `_X_AMZN_TRACE_ID`, which botocore forwards to SQS, so "
        "the replier's segment joins the webhook's trace and the SQS hop stays in it. What that gives "
        "up is a subsegment per call inside a function (each Nylas, DynamoDB and SQS call's own "
        "timing in X-Ray).\n\n"
        "What the webhook imports beyond the baseline, heaviest first (Lambda profile, self time "
        f"under `-X importtime`, which inflates it — for ranking only): {heaviest}.\n\n"
        "The webhook imports no `requests` and no Powertools idempotency or batch utilities, and "
        "neither function imports the X-Ray SDK (tests in `tests/integration/test_budgets.py` keep it "
        "so). The replier has no budget: it runs off the ack path, and its import path (Powertools "
        "idempotency and batch, `requests`) is what its work needs."
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
    order = (SEND, THREAD_READ, MESSAGE_FETCH, GRANT_LOOKUP, FOLDERS_LOOKUP)
    # Anything else counted is shown too: a new kind of call must not vanish from the table.
    order += tuple(sorted(kind for kind in tally.nylas if kind not in order))
    parts = [f"{tally.nylas[kind]} {kind}" for kind in order if tally.nylas[kind]]
    return " + ".join(parts)


def _polls(p: PathResult) -> str:
    """The counts that are a timed wait's polls, as they ranged over the repeats."""
    ranged = [f"{op} {low}-{high}" for (_, op), (low, high) in getattr(p, "polls", {}).items() if low != high]
    return f" *(over the repeats: {', '.join(ranged)}, the lease wait's timed polls)*" if ranged else ""


def _path_rows(results: Sequence[PathResult]) -> list[tuple[object, ...]]:
    return [
        (
            p.name + (" *(record fails, retried)*" if p.failed else "") + _polls(p),
            _ops(p.tally, "dynamodb"),
            _ops(p.tally, "sqs"),
            _ops(p.tally, "secrets-manager"),
            _nylas(p.tally),
            f"{p.median_ms:.1f}",
        )
        for p in results
    ]


def _first_reply(result: PathsResult) -> PathResult:
    return next(p for p in result.replier if p.name == "first reply")


def _paths(result: PathsResult) -> str:
    header = ("path", "DynamoDB", "SQS (function)", "Secrets Manager", "Nylas", "handler ms")
    return (
        "## Requests per notification\n\n"
        f"Each path run {result.repeats} times; the counts were identical every time but for the polls "
        "of a timed wait, where the row says so. The replier is one "
        "container warmed by one reply (grant address and API key cached) unless the path says cold; "
        "its handler time is the real `lambda_handler` with a batch of one (median). The event source "
        "mapping's own SQS requests are in the batch-size table below.\n\n"
        "### Replier\n\n"
        + table(header, _path_rows(result.replier))
        + f"\n\nA first reply's {_first_reply(result).tally.service('dynamodb')} DynamoDB requests: the "
        "idempotency record (conditional `PutItem`), the reply ledger with the table's beginning "
        "(`table#began`, which dates a thread item the lease creates) in one strongly consistent "
        "`BatchGetItem`, the thread lease (`UpdateItem` returning the thread state), the email's claim (a "
        "conditional `PutItem` on its Message-ID), the reply reserved in the recipient's hour (the "
        "per-recipient budget, a conditional `UpdateItem`), the send intent stored before the send in one "
        "`TransactWriteItems` (the outbox entry in the thread item, conditioned on the lease; the intent's "
        "request compressed in its body item, within 1 KB; and a `ConditionCheck` that the grant's life "
        "does not say Nylas deleted it, issue 42's check before the send), the ledger entries (one "
        "`BatchWriteItem` of plain puts), the thread item written under the lease (`UpdateItem`) and the "
        "idempotency record completed (`UpdateItem`): as many on a new thread as on one the table already "
        "knows (issue 46: 12 and 11 before, the ledger, `table#began`, the body item and the grant's life "
        "each a request of their own; 14 write units for 10, a transaction billing each item twice). "
        "Its one SQS request: before the lease, the record's visibility is "
        "set to what the lease may last (`ChangeMessageVisibility`), so a worker that dies holding the "
        "thread gives its record back when "
        "the lease can have expired. A truncated notification costs the same: the thread read inside the "
        "lease carries the message's body and headers, so nothing is fetched. "
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
        "container per concurrent batch up to `ReplierMaximumConcurrency`. A DynamoDB count above a first "
        "reply's (Requests per notification) would mean requests were retried (moto fails some concurrent "
        "transactions)."
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


# (files, their bytes together, later records that send the stored reply per reply): the reply files rows.
REPLY_FILE_CASES = ((1, 200_000, 0.0), (1, 200_000, 0.05), (3, 2_000_000, 0.05), (1, 20_000_000, 0.05))


def reply_files_section() -> str:
    """The S3 lines a reply's files add to the bill (issue 44): counted requests times list prices.

    Not measured in the run: the requests are the counts ``tests/integration/test_budgets.py`` asserts
    (a PutObject per file, a GetObject per file only for a later record), the storage the lifecycle
    expiry of template.yaml.
    """
    rows = []
    for files, total, later in REPLY_FILE_CASES:
        lines = costs.reply_file_lines(files, total, later_records=later)
        rows.append(
            (
                files,
                f"{total:,}",
                f"{later:.0%}",
                *(f"${lines[k]:,.2f}" for k in ("S3 PUT", "S3 GET", "S3 storage")),
                f"**${sum(lines.values()):,.2f}**",
            )
        )
    days = costs.reply_files_retention_days()
    body = 430_000
    dynamodb = math.ceil(body / 1024) * costs.price("ddb_wru")
    s3 = sum(costs.reply_file_lines(1, body, later_records=0.0).values())
    return "\n\n".join(
        [
            "### A reply's files: S3 in the bill",
            "USD per million replies that carry files, beside the bill above (which has none). Requests "
            "are the counted ones (`tests/integration/test_budgets.py`: one `PutObject` per file before "
            "the intent is stored; no `GetObject` when the same record sends; one per file for each later "
            "record that sends the stored reply, after a crash or a `503`); storage is every object for "
            f"the bucket's lifecycle expiry, {days} days (`ReplyFilesBucket`), whether the reply went out "
            "at once or not; KMS is left out (the bucket's S3 Bucket Key asks KMS for a data key per key "
            "lifetime, not per object). The customer's files the agent reads cost no AWS request (Nylas "
            "downloads), only the replier's time. Reproduce: `PYTHONPATH=layers/replyonce .venv/bin/python "
            '-c "from bench.report import reply_files_section; print(reply_files_section())"`.',
            table(
                ("files", "bytes together", "later records", "S3 PUT", "S3 GET", "S3 storage", "total"), rows
            ),
            f"Storage dominates from a few MB: the {days}-day expiry outlives a record's stay in the "
            "queues (SQS keeps a dead-lettered message 14 days from its first enqueue); a shorter one "
            "would cut storage in proportion and turn more late redrives of a reply with files into a "
            "failed record (`ReplyFileLost`). The bodies of large replies stay in the state table's "
            "body items: a 430 KB "
            f"body that does not compress takes {math.ceil(body / 1024)} write units there, "
            f"${dynamodb:,.2f} per million replies written once, against ${s3:,.2f} in S3 (a PUT and "
            f"{days} days of storage). A PUT costs what 8 write units do, so S3 would be cheaper for every "
            "body kept in items (over 16 KB compressed); they are rare and tested, and the intent storage "
            "is being reworked elsewhere: left as they are, for that change to take up.",
        ]
    )


def render(run: Run) -> str:
    real = run.real_latency
    sections = [
        INTRO,
        *(
            [per_reply.section(run, capacity_report.bill_inputs(run)), capacity_report.lead_section(run)]
            if run.containers and real
            else []
        ),
        _machine(run),
        _budgets(run),
        *(
            [capacity_report.real_latency_section(real), capacity_report.batch_concurrency_section(real)]
            if real
            else []
        ),
        time_to_reply(run.time_to_reply, run.batches),
        _warm_path(run.warm_path),
        _cold_start(run.cold_start),
        *([capacity_report.memory_section(run.containers)] if run.containers else []),
        _paths(run.paths),
        _throughput(run.throughput),
        _batches(run.batches),
        _artifacts(run.artifacts),
        *(
            [capacity_report.cost_section(run), reply_files_section(), capacity_report.scale_section(run)]
            if run.containers
            else []
        ),
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
        "## Time to reply on loopback\n\n"
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
        f"{mix.seconds:.0f} s; `busy_retry_seconds` {mix.busy_retry_seconds} (replyonce/config.py).\n\n"
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
        + "\n\nOn loopback the floor is tens of milliseconds of moto round trips, so these ratios measure "
        "the event source stand-in's polling and moto's one-second visibility granularity as much as the "
        "replier: the budgets are judged at real latency (Time to reply at real latency), where the floor "
        "is the work a customer waits for."
        + "\n\nWhere the time goes (median ms per message, from the timeline of the record that sent "
        "its reply): *queue* until that record's batch was invoked (the pollers' receive and the "
        "batching window), *container init* (a new container's clients and caches; its botocore "
        "models come from a loader every container of the run shares, since a fresh process's imports "
        "and models are measured in fresh processes, under Cold start), *batch* (records ahead of it "
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
