"""The sections of ``docs/performance.md`` that issue 23 added: real latency, batching, memory, cost, scale.

``bench.report`` renders the page; these sections read the real-latency run
(``bench.real_latency``), the container measurements (``bench.container``)
and the counted paths, and put the decisions they support next to the figures.
"""

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from bench import bill_report, costs, scale
from bench.bill import ReplyWrites
from bench.container import ContainerResult
from bench.event_source import billed_ms, peak_concurrency
from bench.markdown import in_seconds, table, usd
from bench.per_reply import LEDGER_READ_KEYS
from bench.real_latency import (
    BEFORE,
    OPTION_A,
    OPTION_B,
    RealLatencyResult,
    contended_excess,
    other_thread_waits,
    own_work,
    single_ratio,
    unanswered,
)
from bench.run import Run
from bench.stats import p
from bench.time_to_reply import CONTENDED_ROWS, PARTS
from bench.timeline import AGENT
from ops.template import load_template, sqs_event_source
from replyonce.config import ReplierSettings

# Modelled (not measured) inputs of the alternatives: a durable replier's steps and what they write,
# a Step Functions replier's state transitions.
DURABLE_OPERATIONS = 8  # idempotency, ledger, lease, thread read, draft, store intent, send, record
DURABLE_CHECKPOINT_BYTES = 4_000  # the plan, the draft, the send's answer (not the whole thread listing)
STANDARD_TRANSITIONS = 14  # the tasks above, their choices, and the release
# The email's claim (``email#`` digest, the grant, a TTL): well under one write unit.
EMAIL_CLAIM_BYTES = 100


def _price(value: float) -> str:
    """A list price as AWS writes it: enough digits for $0.0000133334."""
    return "$" + (
        f"{value:.10f}".rstrip("0").rstrip(".") if value < 0.01 else f"{value:,.3f}".rstrip("0").rstrip(".")
    )


# ---- time to reply at real latency ---------------------------------------------------------------------


def real_latency_section(result: RealLatencyResult) -> str:
    mix = result.runs[OPTION_B]  # the template's option
    rows = []
    for row in mix.rows:
        if not row.times:
            continue
        answered = row.answered
        floors = result.floor_of([t.key for t in row.times])
        mine, floor_p99 = p(answered, 0.99), p(floors, 0.99)
        excess = ""
        if row.name in CONTENDED_ROWS and answered:
            values = [
                t.seconds - t.holder_remaining - own_work(result, t)
                for t in row.times
                if t.seconds is not None
            ]
            excess = f"{p(values, 0.99):+.2f}"
        rows.append(
            (
                row.name,
                len(row.times),
                row.unanswered or "0",
                in_seconds(p(answered, 0.5)),
                in_seconds(p(answered, 0.9)),
                in_seconds(mine),
                in_seconds(floor_p99),
                f"{mine / floor_p99:.2f}x" if answered and floors else "-",
                excess,
            )
        )
    floor_values = list(result.floor.values())
    rows.append(
        (
            "**floor**: every message of the mix alone, invoked directly",
            len(floor_values),
            "0",
            in_seconds(p(floor_values, 0.5)),
            in_seconds(p(floor_values, 0.9)),
            in_seconds(p(floor_values, 0.99)),
            "",
            "",
            "",
        )
    )
    parts_rows = [
        (row.name, *(f"{row.part_median_ms(part) / 1000:.2f}" for part in PARTS))
        for row in mix.rows
        if row.answered
    ]
    b = mix.batching
    return (
        "## Time to reply at real latency\n\n"
        "The time-to-reply mix again (seed "
        f"{mix.seed}: {mix.messages} messages, {mix.notifications} notifications, {mix.sends} replies, "
        f"{mix.answered_twice} messages answered twice, {mix.webhook_refusals} notifications refused), with "
        "Nylas and the agent taking the time they take in production. The replier reaches the emulator "
        "through a proxy that holds each request for a time drawn from this distribution, and its agent "
        "takes the agent's time (`bench/latency.py`, `bench/slow_agent.py`; the emulator is unchanged). "
        "Each draw is keyed by the message (or thread) it is about, so a retry takes as long and the floor "
        "meets exactly the same latencies:\n\n"
        + result.model.markdown()
        + f"\n\nHeld this run: {result.sends_held} sends, {result.mean_send_seconds:.2f} s on average (busy "
        f"threads' holders 3 s more on purpose), other requests {result.mean_read_seconds:.2f} s. The rows "
        f"below are the template's option, {result.labels[OPTION_B]} (`BatchSize: {b.batch_size}`, "
        f"`MaximumBatchingWindowInSeconds: {b.window_seconds:g}`); every option ran at `MaximumConcurrency` "
        f"{b.maximum_concurrency} (a deployment sets `ReplierMaximumConcurrency` to its traffic: twice this "
        f"mix's peak of records in flight), {mix.pollers} pollers, `busy_retry_seconds` "
        f"{mix.busy_retry_seconds}; Batch concurrency, below, sets the options side by side. The floor is "
        "paired: "
        f"each message of the mix alone on a new thread, its handler invoked directly on a warm container "
        f"({result.floor_workers} side by side: their time is the injected waits), timed to its reply "
        "reaching the emulator; a row's floor p99 is the p99 of its own messages' floors. The contended "
        "rows' "
        "last column is the p99 of the time beyond the lease holder's remaining work and, when the reply "
        "that "
        "answered it was not the holder's (its own behind the holder, or a burst's second reply), beyond "
        "that reply's own work: the floor of its target, whose draws are the same.\n\n"
        + table(
            (
                "messages",
                "n",
                "unanswered",
                "p50 s",
                "p90 s",
                "p99 s",
                "floor p99 s",
                "p99 / floor p99",
                "p99 beyond the holder's (and its own) work, s",
            ),
            rows,
        )
        + "\n\nWhere the time goes (median seconds per message, as on loopback):\n\n"
        + table(("messages", *PARTS), parts_rows)
        + _agent_unfiled(result)
    )


def _agent_unfiled(result: RealLatencyResult) -> str:
    """A note when no record filed the agent's draft: its seconds are then in the handler's column."""
    spans = [s for a in result.runs[OPTION_B].attempts for s in a.spans if s.service == AGENT]
    if spans:
        return ""
    return (
        "\n\n*The agent's column is empty in this run:* no record filed its draft's span (the replier "
        "hands its agent a copy of the conversation, which `bench/slow_agent.py` then keyed by object; "
        "fixed since, by the target message), so the draft's seconds are in the handler's column."
    )


# ---- batch concurrency ---------------------------------------------------------------------------------


def _mix_billed_ms(result: RealLatencyResult, option: str) -> float:
    mix = result.runs[option]
    return sum(billed_ms(i) for i in mix.invocations) / max(1, mix.notifications)


def batch_concurrency_section(result: RealLatencyResult) -> str:
    rows = []
    for option in (BEFORE, OPTION_A, OPTION_B):
        mix = result.runs[option]
        mine, _, ratio = single_ratio(result, option)
        excess = contended_excess(result, option)
        waits = other_thread_waits(result, option)
        waited = [w for w in waits if w > 0.05]
        records = sum(len(i.notification_ids) for i in mix.invocations)
        rows.append(
            (
                result.labels[option],
                f"{ratio:.2f}x ({mine:.2f} s)",
                f"{p(excess, 0.99):+.2f} s" if excess else "-",
                f"{len(waited)} (most {max(waits, default=0.0):.2f} s)",
                unanswered(result, option),
                mix.sends,
                len(mix.invocations),
                f"{records / max(1, len(mix.invocations)):.2f}",
                f"{_mix_billed_ms(result, option) / 1000:.2f}",
                peak_concurrency(mix.invocations),
            )
        )
    replier_mb = costs.memory_mb("ReplierFunction")
    sat_rows = []
    by_option = {s.option: s for s in result.saturation}
    for s in result.saturation:
        gb_s = s.billed_ms_per_notification / 1000 * replier_mb / 1024
        sat_rows.append(
            (
                result.labels[s.option],
                s.notifications,
                s.maximum_concurrency,
                f"{s.seconds:.1f}",
                f"{s.replies_per_second:.2f}",
                f"{s.records_per_invocation:.1f}",
                f"{s.billed_ms_per_notification / 1000:.2f}",
                f"{gb_s * costs.price('lambda_gb_s') * 1e6:.2f}",
                s.peak_concurrency,
            )
        )
    a, b = by_option[OPTION_A], by_option[OPTION_B]
    gain = a.billed_ms_per_notification / b.billed_ms_per_notification
    template = load_template()
    replier = template["Resources"]["ReplierFunction"]["Properties"]
    source = sqs_event_source(template)
    variables = replier["Environment"]["Variables"]
    parameters = template["Parameters"]

    def seconds(name: str) -> float:
        """A variable's seconds; one set from a parameter at the parameter's ``MaxValue``, as the test; a
        setting no variable sets (lower case) at its default (``replyonce.config.ReplierSettings``)."""
        if name.islower():
            return float(getattr(ReplierSettings, name))
        value = variables[name]
        if isinstance(value, dict):
            parameter = parameters[value["Ref"]]
            return float(parameter.get("MaxValue", parameter["Default"]))
        return float(value)

    budget = sum(
        seconds(name)
        for name in (
            "nylas_send_timeout_seconds",
            "record_margin_seconds",
            "lease_wait_seconds",
            "AGENT_TIMEOUT_SECONDS",
        )
    )
    visibility = template["Resources"]["NotificationQueue"]["Properties"]["VisibilityTimeout"]
    a_ratio, b_ratio = single_ratio(result, OPTION_A)[2], single_ratio(result, OPTION_B)[2]
    before_ratio = single_ratio(result, BEFORE)[2]
    return (
        "## Batch concurrency: the decision\n\n"
        "Each option ran the same mix with the same latency draws (Time to reply at real latency), at the "
        "same `MaximumConcurrency`. *Singles* is the single messages' p99 against their paired floor's; "
        "*contended* the burst's last message and busy-thread row's p99 beyond the holder's (and their own) "
        "work; *waited* the answered messages whose replying record ran after other threads' records in its "
        "invocation; *billed s* the mix's invocations' durations (rounded up to the millisecond, as Lambda "
        "bills) per notification.\n\n"
        + table(
            (
                "option",
                "singles p99 / floor",
                "contended p99",
                "waited on another thread",
                "unanswered",
                "replies sent",
                "invocations",
                "records / invocation",
                "billed s / notification",
                "peak concurrency",
            ),
            rows,
        )
        + "\n\nSaturation: first replies on threads of their own, all queued before the event source starts, "
        "at the template's `ReplierMaximumConcurrency`; drained to the last reply. What Lambda bills per "
        f"notification, at the replier's {replier_mb} MB:\n\n"
        + table(
            (
                "option",
                "notifications",
                "`MaximumConcurrency`",
                "seconds to drain",
                "replies/s",
                "records / invocation",
                "billed s / notification",
                "USD / million (replier GB-s)",
                "peak concurrency",
            ),
            sat_rows,
        )
        + "\n\n"
        "- **Time to reply**: before, the batch's records ran one after another behind a 1 s window: "
        f"singles at {before_ratio:.2f}x their floor. Without the window and without a record run behind "
        f"another thread's, singles are at {a_ratio:.2f}x their floor with (a) batches of one and "
        f"{b_ratio:.2f}x with (b); {_waited_text(result)}. Without the window a burst's later messages no "
        "longer wait for its first one's batch: a message that reaches the thread after the first reply's "
        "read gets a reply of its own, as `docs/design.md` (invariant 3) has it, so a burst can get two "
        "replies where the window gave one (*replies sent*); the loop guard (`ReplyBudgetPerHour`) still "
        "bounds a thread.\n"
        "- **Cost and concurrency**: with (a) batches of one every record holds an invocation for its whole "
        "wait on Nylas and the agent. With (b) one invocation waits for a batch's threads at once: at full "
        f"batches it bills {gain:.1f}x less per notification than (a) and drains "
        f"{b.replies_per_second / a.replies_per_second:.1f}x faster on the same concurrency. Scale on paper "
        "sets both against a default account's concurrency at 1 M and 10 M notifications a day.\n"
        "- **Decision: (b), in the consumer.** (b) is what the product does. "
        "`replyonce/shell/batch.py` groups a batch's records by conversation thread — the grant and thread "
        "of the parsed notification, the "
        "grant and message when it names no thread, the SQS message id alone for a record that does not "
        "parse — keeping queue order inside each group; `replyonce/shell/consumer.py` runs each group "
        "through its own Powertools `BatchProcessor` on a thread pool kept per container "
        "(`MAX_THREADS_AT_ONCE`, "
        f"{max_threads_at_once()} workers) and returns the union of their `batchItemFailures`. The "
        f"template's event source is `BatchSize: {source['BatchSize']}`, `MaximumBatchingWindowInSeconds: "
        f"{source['MaximumBatchingWindowInSeconds']:g}` (a window would hold every lone record). "
        "`tests/integration/test_batch_concurrency.py` holds the behaviour (a slow send on one thread does "
        "not hold "
        "another thread's reply; one thread's records run in queue order and get one reply; each record's "
        "log lines carry its own ids), `tests/unit/test_batch.py` the grouping, and "
        "`tests/static/test_capacity.py` keeps `BatchSize` within the pool and the window at 0. "
        "The *before* row "
        "is the serial consumer (b) replaced, replayed by the bench's event source "
        "(`bench/event_source.py`, `serial`); (a) is measured as the alternative: what the template "
        "would need without the consumer's concurrency.\n\n"
        "### Timeout and visibility from one record's budget\n\n"
        "A record is started only when the invocation still has its whole budget left (the deadline rule). "
        "One record's budget is `nylas_send_timeout_seconds` + `record_margin_seconds` + "
        f"`lease_wait_seconds` + `AGENT_TIMEOUT_SECONDS` = {budget:g} s (the agent's timeout at "
        "`AgentTimeoutSeconds`' `MaxValue`: the longest an operator may deploy). A batch's threads run at "
        "once, each thread's first record with the whole budget ahead of it, so the function's "
        "`Timeout` needs one budget, not one per record of the batch, plus 10 s for the invocation's own "
        "work: "
        f"`Timeout: {replier['Timeout']}`. A thread's later record in the same batch (a burst) starts only "
        "if a whole budget is still left, else it goes back to the queue at once (deferred, counted in the "
        "(b) row as a retry). AWS's guidance for SQS event sources is a visibility timeout of at least six "
        "times the function's timeout plus the batching window, so that a batch Lambda retries after a "
        "throttle is not redelivered while still in flight: "
        f"`VisibilityTimeout: {visibility}` = 6 x {replier['Timeout']} + "
        f"{source['MaximumBatchingWindowInSeconds']:g}. Failed records do not wait for it (the replier sets "
        "their visibility to its retry delay); only a record whose invocation crashed or timed out comes "
        f"back after {visibility / 60:.0f} minutes. `tests/static/test_capacity.py` derives both from "
        "`Policy.record_budget_seconds`, so a change to what a record needs (the agent's "
        "timeout, the send timeout, the lease wait) asks for its `Timeout` by failing."
    )


def _waited_text(result: RealLatencyResult) -> str:
    """Whether a record of (a) or (b) waited behind another thread's work, in words."""
    counts = {}
    for option in (OPTION_A, OPTION_B):
        counts[option] = sum(1 for w in other_thread_waits(result, option) if w > 0.05)
    if not any(counts.values()):
        return "in neither does a record wait for another thread's work"
    return ", ".join(
        f"{n} answered message{'s' if n != 1 else ''} waited on another thread's work with {option}"
        for option, n in counts.items()
    )


def max_threads_at_once() -> int:
    from replyonce.shell.consumer import MAX_THREADS_AT_ONCE

    return MAX_THREADS_AT_ONCE


# ---- memory --------------------------------------------------------------------------------------------


def memory_section(results: Sequence[ContainerResult]) -> str:
    rows = [
        (
            r.function,
            r.path,
            r.memory_size_mb,
            f"{r.init_rss_mb:.0f}",
            f"{r.peak_rss_mb:.0f}",
            f"{r.cpu_ms:.1f}",
            f"{r.cpu_ms * 1769 / r.memory_size_mb:.0f}",
            f"{r.log_bytes:.0f}",
            f"{r.log_lines:.0f}",
        )
        for r in results
    ]
    replier = next(r for r in results if r.function == "ReplierFunction")
    webhook = next(r for r in results if r.function == "WebhookFunction")
    return (
        "## Memory size and log volume\n\n"
        f"Each function in a fresh interpreter with its template environment as in Lambda, one warm-up "
        "notification, then "
        f"{replier.events} more (`bench/container.py`). Peak memory is the process's high-water mark "
        "(`VmHWM`, what Lambda's REPORT line calls Max Memory Used); CPU is user + system time per "
        "notification on this machine, and beside it what that CPU time becomes at the configured size, "
        "where Lambda gives a function its memory's share of a vCPU (1,769 MB = one vCPU); logs are what "
        "the handler wrote to "
        "stdout per notification — Powertools' JSON lines and the EMF metric lines, which CloudWatch Logs "
        "ingests — at the template's log level (INFO).\n\n"
        + table(
            (
                "function",
                "path",
                "MemorySize MB",
                "after init MB",
                "peak MB",
                "CPU ms",
                "CPU ms at MemorySize",
                "log bytes",
                "log lines",
            ),
            rows,
        )
        + f"\n\n- **{replier.memory_size_mb} MB for the replier**, chosen by measurement: the replier capped "
        "at 128, 256 and 512 MB of CPU and memory through the real-latency workload, a full batch of threads "
        "at once and one record alone (The bill at real batch fill, Memory size by measurement). Here, one "
        f"record at a time, its peak is {replier.peak_rss_mb:.0f} MB "
        f"({replier.peak_rss_mb / replier.memory_size_mb:.0%} of it) and its CPU, stretched to its share of "
        f"a vCPU, {replier.cpu_ms * 1769 / replier.memory_size_mb:.0f} ms per first reply: its time is "
        "waiting, which every halving of the size halves the GB-s of. "
        "The webhook keeps 512 MB: its CPU is on "
        "the ack path Nylas waits for, and its GB-s are a rounding error of the bill.\n"
        "- **Log levels.** INFO stays: every skip's reason is logged at INFO (invariant 5 of "
        f"`docs/design.md`), and a first reply writes {webhook.log_lines:.0f} lines in the webhook and "
        f"{replier.log_lines:.0f} in the replier (Powertools' JSON lines and EMF metric lines). "
        "Lambda adds its own `platform.start` and `platform.report` lines per invocation "
        f"({costs.platform_bytes()} B with CloudWatch's per-event overhead, modelled from Lambda's JSON "
        "format); `SystemLogLevel: WARN` would drop them, and with them the REPORT line's Max Memory Used "
        f"that confirms the {replier.memory_size_mb} MB in production: kept at INFO, their cost is a line of "
        "the bill below."
    )


# ---- the bill ------------------------------------------------------------------------------------------


def _custom_metric_series() -> int:
    """EMF metric series the layer emits: each count() one, each count_by() family ~10 dimension values."""
    import ast

    from ops.template import TEMPLATE_PATH

    layer = TEMPLATE_PATH.parent / "layers" / "replyonce" / "replyonce"
    plain, families = set(), set()
    # The core's steps name a metric the shell counts; the count() calls are outside it.
    for path in (found for found in layer.rglob("*.py") if found.parent.name != "core"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
                names = {
                    c.value
                    for c in ast.walk(node.args[0])
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                }
                if node.func.id == "count":
                    plain |= names
                elif node.func.id == "count_by":
                    families |= names
    # Per-method API Gateway metrics (MethodSettings.MetricsEnabled): 2 methods x 7 metrics.
    return len(plain) + 10 * len(families) + 14


def bill_inputs(run: Run) -> dict[str, Any]:
    """Everything the bill is computed from, as the JSON block of the page records it."""
    result = run.real_latency
    replier_paths = {p.name: p for p in run.paths.replier}
    containers = {(c.function, c.path): c for c in run.containers}
    webhook_log = containers[("WebhookFunction", "accepted notification")]
    first_log = containers[("ReplierFunction", "first reply")]
    outbound_log = containers[("ReplierFunction", "own outbound message")]
    batch = next(b for b in run.batches if b.batch_size == costs.batch_size())
    sizes = run.paths.largest_item_bytes
    idem = sizes.get("IdempotencyTable", 300)
    state = sizes.get("StateTable", 300)
    intent = statistics.median(result.intent_item_bytes) if result and result.intent_item_bytes else state
    kb = lambda n: max(1, math.ceil(n / 1024))  # noqa: E731 - write units per KB of the larger image
    # A first reply's writes (tests/integration/test_budgets.py counts them; ReplyWrites.wru says which):
    # the thread item names its request by digest, so its writes pay for the lease's attributes, not
    # the reply; the request's body item, under 1 KB compressed at the bench's replies, one unit.
    first_writes = ReplyWrites(
        idempotency=idem,
        email_claim=EMAIL_CLAIM_BYTES,
        thread_before=state,
        thread_with_intent=intent,
        thread_after=state,
        recipient=recipient_item_bytes(),
        ledger_entry=state,
        ledger_entries=2,
    )
    first_wru = first_writes.wru()
    if result is not None:
        sat = {s.option: s for s in result.saturation}
        # The template's option, (b), is the bill; (a), batches of one, the alternative beside it.
        first_ms, b_records = sat[OPTION_B].billed_ms_per_notification, sat[OPTION_B].records_per_invocation
        a_ms, a_records = sat[OPTION_A].billed_ms_per_notification, sat[OPTION_A].records_per_invocation
    else:  # without the real-latency run: the loopback time plus the model's mean waits
        model = scale_model_means()
        a_ms, a_records = replier_paths["first reply"].median_ms + 1000 * model, 1.0
        first_ms, b_records = a_ms / 4, 4.0
    # Both paths share the queue, so the template's batches: invocations per notification from (b)'s
    # records per invocation; the event source's receive and delete at the template's batch size.
    invocations = 1 / b_records
    # The function's own SQS requests on a first reply (the record's visibility set before the lease).
    first_sqs = replier_paths["first reply"].tally.service("sqs")
    webhook_ms = run.warm_path.handler_p50.median
    overhead = costs.LOG_EVENT_OVERHEAD_BYTES
    paths = {
        "first reply": costs.PathInputs(
            name="first reply",
            webhook_ms=webhook_ms,
            replier_ms=first_ms,
            replier_invocations=invocations,
            sqs_requests=1 + batch.esm_sqs_per_notification + first_sqs,
            wru=first_wru,
            rru=LEDGER_READ_KEYS,  # the ledger and table#began, one BatchGetItem (the life: a check)
            log_bytes=webhook_log.log_bytes
            + first_log.log_bytes
            + overhead * (webhook_log.log_lines + first_log.log_lines),
        ),
        "own outbound message": costs.PathInputs(
            name="own outbound message",
            webhook_ms=webhook_ms,
            replier_ms=math.ceil(replier_paths["own outbound message"].median_ms),
            replier_invocations=invocations,
            sqs_requests=1 + batch.esm_sqs_per_notification,
            # Our echo is skipped by its payload before any idempotency record (issue 46): what it counted.
            wru=2 * kb(idem) if replier_paths["own outbound message"].tally.service("dynamodb") else 0,
            rru=0,
            log_bytes=webhook_log.log_bytes
            + outbound_log.log_bytes
            + overhead * (webhook_log.log_lines + outbound_log.log_lines),
        ),
    }
    month = costs.MonthInputs(
        traces_per_sampled_notification=2,
        webhook_seconds=webhook_ms / 1000,
        replier_seconds=(first_ms + paths["own outbound message"].replier_ms) / 2000,
        state_bytes_per_reply=2 * state,
        idempotency_bytes=idem,
        log_bytes_per_notification=(paths["first reply"].log_bytes + paths["own outbound message"].log_bytes)
        / 2
        + 2 * costs.platform_bytes(),
        custom_metrics=_custom_metric_series(),
        alarm_metrics=costs.alarm_metrics(),
    )
    return {
        "paths": paths,
        "month": month,
        "a_ms": a_ms,
        "a_invocations": 1 / a_records,
        "b_records": b_records,
        "intent_bytes": intent,
        "first_writes": first_writes,
        # Log bytes with CloudWatch's overhead: per webhook request, per reply's record, per skipped one.
        "log_parts": (
            webhook_log.log_bytes + overhead * webhook_log.log_lines,
            first_log.log_bytes + overhead * first_log.log_lines,
            outbound_log.log_bytes + overhead * outbound_log.log_lines,
        ),
        "esm_sqs_per_notification": batch.esm_sqs_per_notification,
    }


def recipient_item_bytes() -> int:
    """A recipient's item at its full budget: what the per-recipient reservation writes at most."""
    from bench.paths import item_size
    from replyonce.adapters.state_items import TTL, recipient_key, recipient_slot

    budget = int(load_template()["Parameters"]["ReplyBudgetPerRecipientPerHour"]["Default"])
    slot = {"M": {"i": {"S": "0" * 32}, "t": {"N": str(1_800_000_000)}}}
    return item_size(
        {
            "pk": {"S": recipient_key("someone@example.com")},
            **{recipient_slot(k): slot for k in range(budget)},
            TTL: {"N": str(1_800_000_000)},
        }
    )


def scale_model_means() -> float:
    from bench.latency import DRAFT, READ, SEND, LatencyModel

    model = LatencyModel()
    return model.mean_seconds(READ) + model.mean_seconds(DRAFT) + model.mean_seconds(SEND)


def cost_section(run: Run) -> str:
    inputs = bill_inputs(run)
    paths: dict[str, costs.PathInputs] = inputs["paths"]
    month: costs.MonthInputs = inputs["month"]
    webhook_mb, replier_mb = costs.memory_mb("WebhookFunction"), costs.memory_mb("ReplierFunction")
    lines = {
        name: costs.path_lines(path, webhook_mb=webhook_mb, replier_mb=replier_mb)
        for name, path in paths.items()
    }
    first, outbound = lines["first reply"], lines["own outbound message"]
    volumes = scale.VOLUMES
    monthly = {v: costs.monthly(v, first, outbound, month) for v in volumes}
    price_rows = [(name, _price(pr.usd), pr.unit, pr.source) for name, pr in costs.PRICES.items()]
    line_rows = [
        (line, usd(first[line]), usd(outbound[line]), usd((first[line] + outbound[line]) / 2))
        for line in first
    ]
    line_rows.append(
        (
            "**total per million**",
            f"**{usd(sum(first.values()))}**",
            f"**{usd(sum(outbound.values()))}**",
            f"**{usd((sum(first.values()) + sum(outbound.values())) / 2)}**",
        )
    )
    month_rows = []
    for v in volumes:
        variable = v * 30 / 1e6 * (sum(first.values()) + sum(outbound.values())) / 2
        month_rows.append((f"{v / 1e6:g} M/day", "notifications (the lines above)", usd(variable)))
        for line, amount in costs.month_lines(v, month).items():
            month_rows.append(("", line, usd(amount)))
        month_rows.append(("", "**total per month**", f"**{usd(monthly[v])}**"))
    alternatives = costs.alternatives(
        paths["first reply"],
        first,
        replier_mb=replier_mb,
        batch_size=costs.batch_size(),
        a_replier_ms=inputs["a_ms"],
        a_invocations=inputs["a_invocations"],
        operations=DURABLE_OPERATIONS,
        checkpoint_bytes=DURABLE_CHECKPOINT_BYTES,
        transitions=STANDARD_TRANSITIONS,
    )
    alternative_rows = [(a.name, usd(a.usd_per_million), a.how) for a in alternatives]
    template, option_a, express = alternatives[0], alternatives[1], alternatives[-1]
    transitions_usd = STANDARD_TRANSITIONS * costs.price("sfn_standard_transition") / 1000 * 1e6
    waiting_usd = first["Lambda GB-s, replier"]
    block = {
        "as_of": costs.AS_OF,
        "prices": {name: pr.usd for name, pr in costs.PRICES.items()},
        "memory_mb": {"webhook": webhook_mb, "replier": replier_mb},
        "platform_bytes_per_invocation": costs.platform_bytes(),
        "sampling": dict(zip(("reservoir_per_second", "fixed_rate"), costs.sampling(), strict=True)),
        "secrets_max_age_seconds": costs.secrets_max_age_seconds(),
        "log_retention_days": costs.log_retention_days(),
        "paths": {name: asdict(path) for name, path in paths.items()},
        "month": asdict(month),
        "results": {
            "per_million_first_replies": round(sum(first.values()), 4),
            "per_million_own_outbound": round(sum(outbound.values()), 4),
            "monthly": {str(v): round(monthly[v], 2) for v in volumes},
        },
    }
    if run.bill is not None and run.real_latency is not None:
        block["at_fill"] = bill_report.block(inputs, run.real_latency, run.bill)
    first_path = paths["first reply"]
    return (
        "## Cost: the bill as it will be\n\n"
        f"AWS list prices, us-east-1, arm64, as of {costs.AS_OF} (from the pricing pages listed; re-check "
        "them before relying on the figures), free tiers left out:\n\n"
        + table(("line", "price", "unit", "source"), price_rows)
        + "\n\nPer million notifications of each path. Inputs, all from this run: the webhook's warm p50 "
        f"({first_path.webhook_ms:.1f} ms, rounded up, {webhook_mb} MB); the replier's billed time per first "
        f"reply at real latency ({first_path.replier_ms / 1000:.2f} s per notification with the template's "
        f"(b) at full batches, Saturation — the saturated floor: below capacity a batch holds about one "
        "record and bills about what (a) does, and the page's first section, The bill at real batch fill, "
        "gives the bill at the fills the template really gets; "
        f"{inputs['a_ms'] / 1000:.2f} s with (a) batches of one) and per "
        f"own outbound notification ({paths['own outbound message'].replier_ms:.0f} ms, no Nylas call), "
        f"{replier_mb} MB; invocations per notification from (b)'s {inputs['b_records']:.1f} records per "
        "invocation (Saturation) and the event source's receive and delete at the template's batch size "
        "(Cost against batch size), with the function's own SQS request of a first reply (Requests per "
        "notification); DynamoDB write units from the counted requests and the measured items (the "
        f"recipient's hour item at its full budget {recipient_item_bytes()} B) — the thread item while the "
        f"send intent is stored is {inputs['intent_bytes']:.0f} B "
        "(median over every send of the real-latency run, the draft a model reply's length; its request "
        "is in a body item of its own, named by digest), so the intent's write and the settlement's "
        "thread update take "
        f"{max(1, math.ceil(inputs['intent_bytes'] / 1024))} units each: "
        f"{first_path.wru:g} WRU and {first_path.rru:g} RRU a first reply; CloudWatch Logs from the bytes "
        "each function wrote (Memory size and log volume), 26 bytes per event and Lambda's two platform "
        "lines per invocation.\n\n"
        + table(("line", "first reply", "own outbound", "a notification on average"), line_rows)
        + "\n\nA month, at the model of Scale on paper (half first replies, half own outbound), with what is "
        "not per notification: X-Ray at the stack's sampling rule (the first request each second and "
        f"{costs.sampling()[1]:.0%} of the rest; each sampled notification counted as "
        f"{month.traces_per_sampled_notification:g} traces, the replier's segment possibly a linked trace of "
        "its own: an upper bound), Secrets Manager reads per warm container every "
        f"{costs.secrets_max_age_seconds()} s and the two secrets, DynamoDB storage (the ledger and thread "
        "state kept 30 days, with PITR; idempotency records a day), log storage at the template's retention "
        f"({costs.log_retention_days()} days, uncompressed: an upper bound), {month.custom_metrics} custom "
        f"and per-method metrics, {month.alarm_metrics} alarm metrics, the dashboard and the Contributor "
        "Insights rule, the alerts key:\n\n"
        + table(("volume", "line", "USD"), month_rows)
        + "\n\nThe same work elsewhere: a first reply's USD per million with the replier's part replaced, "
        "everything before it (API Gateway, the webhook, SQS, DynamoDB, logs) as above. Modelled, not "
        f"measured: a durable replier's {DURABLE_OPERATIONS} steps and ~{DURABLE_CHECKPOINT_BYTES // 1000} "
        "KB of "
        f"checkpoints, a Standard workflow's {STANDARD_TRANSITIONS} transitions; the waits are this "
        "run's.\n\n"
        + table(
            ("the replier as", "USD per million first replies", "how the waiting is billed"), alternative_rows
        )
        + "\n\n- **Durable functions** add their operations to the same compute: a step that calls Nylas or "
        "a "
        "model is billed while it waits, and this work has no long waits to suspend (a busy thread's retry "
        "is "
        "seconds). They would pay where ReplyOnce waits for a person (review mode) or a callback "
        "(`message.delivered` for a queued send).\n"
        "- **Step Functions Standard** bills no compute while an HTTP Task waits, but its "
        f"{STANDARD_TRANSITIONS} transitions cost {usd(transitions_usd)} per million, "
        f"{'more' if transitions_usd > waiting_usd else 'less'} than the template's waiting does at "
        f"{replier_mb} MB ({usd(waiting_usd)}).\n"
        f"- **Step Functions Express** bills a record's waits at 64 MB: {usd(express.usd_per_million)} per "
        f"million, against {usd(option_a.usd_per_million)} for (a) batches of one and "
        f"{usd(template.usd_per_million)} for the template's (b) — at the price of rewriting the replier's "
        "exactly-once logic (leases, outbox, key generations) as a state machine, with at-least-once "
        "executions, and a custom agent (`REPLY_AGENT`) still a Lambda function whose own waits are billed "
        f"there. (b) keeps the code and {_compared(template.usd_per_million, express.usd_per_million)}.\n\n"
        "The inputs and results of this section, for `tests/static/test_performance_costs.py` (which "
        "re-derives the "
        "totals from them on its own, within 20 %):\n\n"
        "```json\n" + json.dumps(block, indent=1, sort_keys=True) + "\n```"
    )


def lead_section(run: Run) -> str:
    """The page's first section: the bill at the batch fill the template really gets."""
    return bill_report.section(bill_inputs(run), run.real_latency, run.bill)


def _compared(ours: float, theirs: float) -> str:
    """How the template's bill stands beside another's, in words."""
    if ours <= 0.9 * theirs:
        return "costs less"
    if ours <= 1.1 * theirs:
        return "costs about the same"
    return f"costs {usd(ours - theirs)} more per million"


def scale_section(run: Run) -> str:
    inputs = bill_inputs(run)
    paths: dict[str, costs.PathInputs] = inputs["paths"]
    first, outbound = paths["first reply"], paths["own outbound message"]
    return scale.render(
        scale.Measured(
            first_reply_a=inputs["a_ms"] / 1000,
            first_reply_b=first.replier_ms / 1000,
            own_outbound=outbound.replier_ms / 1000,
            webhook=first.webhook_ms / 1000,
            wru_per_notification=(first.wru + outbound.wru) / 2,
            **_sparse_b(run.real_latency),
            **(
                {"mixed_b": run.bill.mixed.billed_ms_per_notification / 1000}
                if run.bill is not None and run.bill.mixed is not None and run.bill.mixed.notifications
                else {}
            ),
        )
    )


def _sparse_b(result: RealLatencyResult | None) -> dict[str, float]:
    """(b) in the real-latency mix (sparse traffic): records per invocation, billed s per notification."""
    if result is None or not result.runs[OPTION_B].invocations:
        return {}
    invocations = result.runs[OPTION_B].invocations
    return {
        "sparse_records_b": sum(len(i.notification_ids) for i in invocations) / len(invocations),
        "sparse_first_reply_b": _mix_billed_ms(result, OPTION_B) / 1000,
    }
