"""The bill per reply sent, its echo included, beside the pipeline without exactly once (issue 46).

The unit is a reply sent: every bill line of a run's traffic (the webhook's
requests, every invocation's billed time, every record's writes) over the
replies it sent, plus the echo each reply brings back (Agent Accounts fire
``message.created`` for sent mail: one more notification through the
webhook, the queue and the function, per reply). The per-notification figure
stands beside it.

Write units are counted per path of the mix, from each record attempt's own
requests (``bench.timeline`` spans them at the wire): a reply (a first
reply's writes at the sizes ``bench.capacity_report.bill_inputs`` measured,
and each write beyond a first reply's own: the lease polled while another
record held the thread), a duplicate (the refused idempotency put), a
message covered by another record's reply or skipped, and an attempt that
failed and came back (a busy thread, a deferral); each write of the last
three at one unit per KB of the largest item of the table it wrote.

The baseline (``bench.baseline``) ran the same mix and the same saturation
round; its bill has no DynamoDB and its function logs nothing of its own.
Its own lines are the webhook's (the same webhook in front) and Lambda's
platform lines.
"""

import math
from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from bench import costs
from bench.event_source import billed_ms
from bench.markdown import table, usd
from bench.real_latency import OPTION_B

if TYPE_CHECKING:
    from bench.run import Run
    from bench.time_to_reply import MixResult

BASELINE = "baseline"
REPLY, DUPLICATE, COVERED, RETRIED = "reply", "duplicate", "covered or skipped", "failed, came back"
PATHS = (REPLY, DUPLICATE, COVERED, RETRIED)
GOAL_RATIO = 1.15  # issue 46: ReplyOnce's bill per reply at most 1.15x the baseline's below capacity
# The prices a reply's bill uses (``bench.costs.PRICES``).
_PRICED = ("api_rest", "lambda_request", "lambda_gb_s", "sqs_request", "ddb_wru", "ddb_rru", "logs_ingest")
_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem")
LEDGER_READ_KEYS = 2
"""The replier's one BatchGetItem reads two small items, strongly consistent: a read unit each."""


# ---- counting, while the run has its stack -----------------------------------------------------------


@dataclass(frozen=True)
class AttemptPaths:
    """A mix's record attempts by path, with what each path's attempts requested (counted at the wire)."""

    attempts: dict[str, int]
    # path -> "idempotency" / "state" -> write requests of that path's attempts to that table
    writes: dict[str, dict[str, int]]
    reads: dict[str, int]  # path -> read units: a GetItem or Query 1, a BatchGetItem 1 per key it reads
    sqs: dict[str, int]  # path -> the function's own SQS requests (visibility changes)


def _path(attempt: Any) -> str:
    sent = [s for s in attempt.spans if s.operation == "send" and not s.error]
    # ReplyOnce's attempts are spanned: a duplicate returns the first attempt's "replied" and sends nothing.
    # The baseline's are not: its "replied" is its send.
    if sent or (not attempt.spans and attempt.outcome == "replied"):
        return REPLY
    if attempt.error:
        return RETRIED
    dynamodb = [s for s in attempt.spans if s.service == "DynamoDB"]
    if dynamodb and dynamodb[0].operation == "PutItem" and dynamodb[0].error and len(dynamodb) == 1:
        return DUPLICATE
    return COVERED


def attempt_paths(mix: "MixResult", idempotency: str) -> AttemptPaths:
    """Classify every attempt of ``mix`` (``idempotency``: the idempotency table's name)."""
    attempts: Counter[str] = Counter()
    writes: dict[str, Counter[str]] = {p: Counter() for p in PATHS}
    reads: Counter[str] = Counter()
    sqs: Counter[str] = Counter()
    for attempt in mix.attempts:
        path = _path(attempt)
        attempts[path] += 1
        for span in attempt.spans:
            if span.service == "DynamoDB" and span.operation in _WRITES:
                writes[path]["idempotency" if idempotency in span.table.split(",") else "state"] += 1
            elif span.service == "DynamoDB" and span.operation in ("GetItem", "Query"):
                reads[path] += 1
            elif span.service == "DynamoDB" and span.operation == "BatchGetItem":
                reads[path] += LEDGER_READ_KEYS  # the ledger entry and the table's beginning (issue 46)
            elif span.service == "sqs":
                sqs[path] += 1
    return AttemptPaths(
        attempts={p: attempts[p] for p in PATHS},
        writes={p: dict(writes[p]) for p in PATHS},
        reads={p: reads[p] for p in PATHS},
        sqs={p: sqs[p] for p in PATHS},
    )


# ---- the traffic each fill carried, and its bill -----------------------------------------------------


@dataclass(frozen=True)
class Traffic:
    """What one pipeline's run at one fill carried and requested, the inputs of its bill."""

    notifications: int  # webhook requests (redeliveries included; echoes apart)
    replies: int  # replies sent
    invocations: int  # the function's
    billed_ms: float  # every invocation's billed ms, summed
    wru: float
    rru: float
    function_sqs: float  # the function's own SQS requests (the event source's are 2 per invocation)
    log_bytes: float  # application and EMF lines of both functions, with CloudWatch's per-event overhead
    echo_ms: float  # an echo's billed ms in the function
    echo_wru: float
    echo_log_bytes: float


def lines(traffic: Traffic, *, webhook_ms: float, memory: dict[str, int]) -> dict[str, float]:
    """USD per million replies sent, by bill line (the echo a line of its own)."""
    t, price = traffic, costs.price
    per_reply = 1e6 / t.replies
    gb_s = price("lambda_gb_s")
    webhook_gb_s = math.ceil(webhook_ms) / 1000 * memory["webhook"] / 1024 * gb_s
    invocations = t.notifications + t.invocations
    fill = t.notifications / t.invocations  # records per invocation, for the echo's share
    echo = (
        price("api_rest") / 1e6
        + (1 + 1 / fill) * price("lambda_request") / 1e6
        + webhook_gb_s
        + t.echo_ms / 1000 * memory["function"] / 1024 * gb_s
        + (1 + 2 / fill) * price("sqs_request") / 1e6
        + t.echo_wru * price("ddb_wru") / 1e6
        + (t.echo_log_bytes + (1 + 1 / fill) * costs.platform_bytes()) / 1e9 * price("logs_ingest")
    )
    return {
        "API Gateway (REST)": t.notifications * price("api_rest") / 1e6 * per_reply,
        "Lambda requests": invocations * price("lambda_request") / 1e6 * per_reply,
        "Lambda GB-s, webhook": t.notifications * webhook_gb_s * per_reply,
        "Lambda GB-s, function": t.billed_ms / 1000 * memory["function"] / 1024 * gb_s * per_reply,
        "SQS": (t.notifications + 2 * t.invocations + t.function_sqs)
        * price("sqs_request")
        / 1e6
        * per_reply,
        "DynamoDB writes": t.wru * price("ddb_wru") / 1e6 * per_reply,
        "DynamoDB reads": t.rru * price("ddb_rru") / 1e6 * per_reply,
        "CloudWatch Logs ingestion": (t.log_bytes + invocations * costs.platform_bytes())
        / 1e9
        * price("logs_ingest")
        * per_reply,
        "the echo (its message.created, skipped)": echo * 1e6,
    }


def per_notification(traffic: Traffic, bill: dict[str, float]) -> float:
    """USD per million notifications: the same bill without the echo, over the notifications."""
    return (
        (sum(bill.values()) - bill["the echo (its message.created, skipped)"])
        * traffic.replies
        / (traffic.notifications)
    )


def _units(size: float) -> int:
    return max(1, math.ceil(size / 1024))


def _table_units(run: "Run") -> dict[str, int]:
    """Write units of one write to each table: a unit per KB of the largest item it held in the run."""
    sizes = run.paths.largest_item_bytes
    return {
        "idempotency": _units(sizes.get("IdempotencyTable", 300)),
        "state": _units(sizes.get("StateTable", 300)),
    }


def _reply_writes(run: "Run") -> int:
    """Write requests of a first reply, as the counted path has them (tests/integration/test_budgets.py)."""
    [first] = [p for p in run.paths.replier if p.name == "first reply"]
    return sum(n for (service, op), n in first.tally.aws.items() if service == "dynamodb" and op in _WRITES)


def _mix_traffic(run: "Run", inputs: dict[str, Any]) -> dict[str, Traffic]:
    """ReplyOnce's (b) and the baseline through the real-latency mix: each path's attempts charged."""
    result = run.real_latency
    assert result is not None
    first, outbound = inputs["paths"]["first reply"], inputs["paths"]["own outbound message"]
    table_units = _table_units(run)
    webhook_log, reply_log, skip_log = inputs["log_parts"]
    traffic = {}
    for name, mix in ((OPTION_B, result.runs[OPTION_B]), (BASELINE, result.baseline)):
        if mix is None:
            continue
        counted = attempt_paths(mix, result.idempotency_table)
        ours = name == OPTION_B
        wru = rru = 0.0
        logs = mix.notifications * webhook_log
        if ours:
            for path in PATHS:
                n = counted.attempts[path]
                if path == REPLY:
                    # A first reply's units each, and every write beyond a first reply's own (the lease
                    # polled while another record held the thread: refused writes are billed too).
                    extra = sum(counted.writes[path].values()) - n * _reply_writes(run)
                    wru += n * first.wru + max(0, extra) * table_units["state"]
                    rru += n * first.rru
                    logs += n * reply_log
                else:
                    wru += sum(k * table_units[t] for t, k in counted.writes[path].items())
                    rru += counted.reads[path]
                    logs += n * skip_log
        traffic[name] = Traffic(
            notifications=mix.notifications,
            replies=mix.sends,
            invocations=len(mix.invocations),
            billed_ms=float(sum(billed_ms(i) for i in mix.invocations)),
            wru=wru,
            rru=rru,
            function_sqs=float(sum(counted.sqs.values())),
            log_bytes=logs,
            echo_ms=outbound.replier_ms if ours else result.baseline_echo_ms,
            echo_wru=outbound.wru if ours else 0.0,
            echo_log_bytes=(webhook_log + skip_log) if ours else webhook_log,
        )
    return traffic


def _saturated_traffic(run: "Run", inputs: dict[str, Any]) -> dict[str, Traffic]:
    """Full batches of first replies (threads of their own), ReplyOnce's (b) and the baseline."""
    result = run.real_latency
    assert result is not None
    first, outbound = inputs["paths"]["first reply"], inputs["paths"]["own outbound message"]
    webhook_log, reply_log, skip_log = inputs["log_parts"]
    first_sqs = first.sqs_requests - 1 - inputs["esm_sqs_per_notification"]
    rounds = {s.option: s for s in result.saturation}
    traffic = {}
    for name, sat in ((OPTION_B, rounds.get(OPTION_B)), (BASELINE, result.baseline_saturation)):
        if sat is None or not sat.replies:
            continue
        n, ours = sat.notifications, name == OPTION_B
        traffic[name] = Traffic(
            notifications=n,
            replies=sat.replies,
            invocations=len(sat.billed_ms),
            billed_ms=float(sum(sat.billed_ms)),
            wru=n * first.wru if ours else 0.0,
            rru=n * first.rru if ours else 0.0,
            function_sqs=n * first_sqs if ours else 0.0,
            log_bytes=n * (webhook_log + (reply_log if ours else 0.0)),
            echo_ms=outbound.replier_ms if ours else result.baseline_echo_ms,
            echo_wru=outbound.wru if ours else 0.0,
            echo_log_bytes=(webhook_log + skip_log) if ours else webhook_log,
        )
    return traffic


# Where a record attempt's time goes, as the timeline spans it (``bench.timeline``): each part's span
# operations, and what no span covers (the sleeps between the looks at another worker's lease, and the
# process's own CPU).
TIME_PARTS = (
    "agent",
    "Nylas send",
    "Nylas thread reads",
    "Nylas look-ups",
    "DynamoDB",
    "other AWS",
    "unspanned",
)


def _time_part(span: Any) -> str:
    if span.service == "agent":
        return "agent"
    if span.service == "Nylas":
        return {"send": "Nylas send", "thread read": "Nylas thread reads"}.get(
            span.operation, "Nylas look-ups"
        )
    return "DynamoDB" if span.service == "DynamoDB" else "other AWS"


def time_paths(mix: "MixResult") -> dict[str, Any]:
    """Seconds of ReplyOnce's record attempts by path and part, and the looks at a busy lease (a
    ``GetItem`` of the state table each, ``LEASE_POLL_SECONDS`` apart): what the function bills."""
    seconds: dict[str, Counter[str]] = {p: Counter() for p in PATHS}
    looks: Counter[str] = Counter()
    for attempt in mix.attempts:
        path = _path(attempt)
        spanned = 0.0
        for span in attempt.spans:
            seconds[path][_time_part(span)] += span.ended - span.started
            spanned += span.ended - span.started
        seconds[path]["unspanned"] += max(0.0, (attempt.ended - attempt.started) - spanned)
        looks[path] += sum(1 for s in attempt.spans if s.service == "DynamoDB" and s.operation == "GetItem")
    return {
        "notifications": mix.notifications,
        "seconds": {p: {part: round(seconds[p][part], 3) for part in TIME_PARTS} for p in PATHS},
        "state_reads": {p: looks[p] for p in PATHS},
    }


def _time_table(timed: dict[str, Any], counted: dict[str, Any], below: dict[str, Any]) -> str:
    """Where ReplyOnce's function bills its seconds per notification, by path and part, beside the
    baseline's (whose attempts are its agent's draft and its send, nothing else)."""
    n = timed["notifications"]
    rows = []
    for p in PATHS:
        parts = timed["seconds"][p]
        rows.append(
            (
                p,
                counted["attempts"][p],
                *(f"{parts[part] / n:.2f}" for part in TIME_PARTS),
                f"**{sum(parts.values()) / n:.2f}**",
            )
        )
    totals = {part: sum(timed["seconds"][p][part] for p in PATHS) for part in TIME_PARTS}
    rows.append(
        (
            "**all**",
            sum(counted["attempts"].values()),
            *(f"{totals[part] / n:.2f}" for part in TIME_PARTS),
            f"**{sum(totals.values()) / n:.2f}**",
        )
    )
    theirs = below["baseline"]["traffic"]
    rows.append(
        (
            "baseline: every attempt",
            theirs["invocations"],
            *("" for _ in TIME_PARTS[:-1]),
            f"{theirs['billed_ms'] / theirs['notifications'] / 1000:.2f}",
            f"**{theirs['billed_ms'] / theirs['notifications'] / 1000:.2f}**",
        )
    )
    covered, retried = timed["seconds"][COVERED], timed["seconds"][RETRIED]
    waited = (covered["unspanned"] + retried["unspanned"]) / n
    looks = timed["state_reads"][COVERED] + timed["state_reads"][RETRIED]
    requests = sum(timed["seconds"][p][k] for p in PATHS for k in _REQUEST_PARTS) / n
    ours = below["replyonce"]["traffic"]
    ours_s, theirs_s = ours["billed_ms"] / ours["notifications"] / 1000, _billed_s(theirs)
    return (
        "Where the function bills its seconds, per notification of the mix (seconds of ReplyOnce's record "
        "attempts by path, as the run's timeline spans each request; `unspanned` is what no request "
        "covers: the sleeps between the looks at a lease another worker holds, and the process's own "
        "CPU):\n\n"
        + table(("path", "attempts", *TIME_PARTS, "total"), rows)
        + f"\n\nThe function bills {ours_s:.2f} s per notification against the baseline's {theirs_s:.2f} s "
        "(a batch holds about one record below capacity, so a record's attempt is its invocation). "
        f"{'Most of the difference is' if waited >= (ours_s - theirs_s) / 2 else 'Part of it is'} "
        f"waiting: the {counted['attempts'][COVERED]} covered or skipped attempts and "
        f"the {counted['attempts'][RETRIED]} that failed and came back spent {waited:.2f} s per "
        f"notification unspanned, looking at a busy lease {looks} times: a burst's later message waits "
        "in-process (`lease_wait_seconds`) while the lease's holder asks the agent and sends, then finds "
        "itself covered by that reply. The baseline asks the agent and sends for each of those messages "
        "instead, about as long, and sends a reply each. The thread reads, the look-ups of a cold "
        f"container and every AWS request together are {requests:.2f} s per notification. Not cut here: "
        "a record that meets a held lease could give its record back at once instead of waiting (billed "
        "nothing meanwhile), at the cost of the time to reply of a later message the holder's reply does "
        "not cover (it comes back when the lease can have expired): the lease's protocol, measured, not "
        "changed."
    )


_REQUEST_PARTS = ("Nylas thread reads", "Nylas look-ups", "DynamoDB", "other AWS")


def _billed_s(traffic: dict[str, Any]) -> float:
    return traffic["billed_ms"] / traffic["notifications"] / 1000


FILLS = {
    "below_capacity": "(i) below capacity: the real-latency mix",
    "full_batches": "full batches of first replies (the saturation round)",
}


def block(run: "Run", inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs and results of the lead, as the page's JSON block records them."""
    memory = {"webhook": costs.memory_mb("WebhookFunction"), "function": costs.memory_mb("ReplierFunction")}
    webhook_ms = inputs["paths"]["first reply"].webhook_ms
    fills: dict[str, Any] = {}
    for key, traffic in (
        ("below_capacity", _mix_traffic(run, inputs)),
        ("full_batches", _saturated_traffic(run, inputs)),
    ):
        if OPTION_B not in traffic or BASELINE not in traffic:
            continue
        row: dict[str, Any] = {}
        for name, label in ((OPTION_B, "replyonce"), (BASELINE, "baseline")):
            bill = lines(traffic[name], webhook_ms=webhook_ms, memory=memory)
            row[label] = {
                "traffic": asdict(traffic[name]),
                "lines": bill,
                "usd_per_million_replies": sum(bill.values()),
                "usd_per_million_notifications": per_notification(traffic[name], bill),
            }
        row["ratio"] = (
            row["replyonce"]["usd_per_million_replies"] / row["baseline"]["usd_per_million_replies"]
        )
        row["ratio_per_notification"] = (
            row["replyonce"]["usd_per_million_notifications"]
            / row["baseline"]["usd_per_million_notifications"]
        )
        row["floor"] = floor(row["baseline"], traffic[OPTION_B])
        fills[key] = row
    result = run.real_latency
    counted = attempt_paths(result.runs[OPTION_B], result.idempotency_table) if result else None
    timed = time_paths(result.runs[OPTION_B]) if result else None
    return {
        "prices": {name: costs.price(name) for name in _PRICED},
        "memory_mb": memory,
        "webhook_ms": webhook_ms,
        "platform_bytes_per_invocation": costs.platform_bytes(),
        "goal_ratio": GOAL_RATIO,
        # What a mix's write units are counted from: a reply's writes (and reads) at measured sizes, and
        # the units of one write to each table for every other attempt's writes.
        "units": {
            "reply_wru": inputs["paths"]["first reply"].wru,
            "reply_write_requests": _reply_writes(run),
            "reply_rru": inputs["paths"]["first reply"].rru,
            "per_write": _table_units(run),
        },
        "mix_paths": asdict(counted) if counted else {},
        "time_paths": timed or {},
        "fills": fills,
    }


ECHO = "the echo (its message.created, skipped)"
FUNCTION = "Lambda GB-s, function"


def floor(baseline: dict[str, Any], ours: Traffic) -> dict[str, float]:
    """The least a pipeline that answered as ReplyOnce did can bill per million replies, its state free.

    Why: per reply sent, ReplyOnce's ratio is not only the price of its state. It answers a
    redelivery and a burst once, so its every notification's webhook request, queue messages and
    invocation are spread over fewer replies than the baseline's, and that part no design of exactly
    once removes. This pipeline pays the baseline's own costs: per notification the baseline's bill
    without its function's time and its echoes, per reply the baseline's function time per attempt
    (the agent's draft and the send) and an echo. What ReplyOnce bills above it is what its state,
    lease and waits cost.
    """
    lines_, t = baseline["lines"], baseline["traffic"]
    per_attempt = t["replies"] / t["notifications"]  # a baseline line per reply, as one per notification
    fixed = sum(v for n, v in lines_.items() if n not in (ECHO, FUNCTION)) * per_attempt
    work = lines_[FUNCTION] * per_attempt
    usd = fixed * ours.notifications / ours.replies + work + lines_[ECHO]
    return {
        "usd_per_million_replies": usd,
        "ratio": usd / baseline["usd_per_million_replies"],
        "goal_leaves_usd": GOAL_RATIO * baseline["usd_per_million_replies"] - usd,
    }


# ---- the lead section ------------------------------------------------------------------------------


def section(run: "Run", inputs: dict[str, Any]) -> str:
    """The page's first section: the bill per reply sent, and its ratio to the baseline at each fill."""
    import json

    data = block(run, inputs)
    fills = data["fills"]
    if not fills:
        return (
            "## The bill per reply sent, beside a pipeline without exactly once\n\nNot measured in this run."
        )
    rows = []
    for key, row in fills.items():
        ours, theirs = row["replyonce"], row["baseline"]
        rows.append(
            (
                FILLS[key],
                f"**{row['ratio']:.2f}x**",
                f"{row['ratio_per_notification']:.2f}x",
                f"**{usd(ours['usd_per_million_replies'])}**",
                usd(ours["usd_per_million_notifications"]),
                f"{ours['traffic']['replies']} of {ours['traffic']['notifications']}",
                usd(theirs["usd_per_million_replies"]),
                usd(theirs["usd_per_million_notifications"]),
                f"{theirs['traffic']['replies']} of {theirs['traffic']['notifications']}",
            )
        )
    lead = table(
        (
            "fill",
            "ReplyOnce / baseline, per reply sent",
            "per notification",
            "ReplyOnce: USD / million replies sent (echo included)",
            "USD / million notifications",
            "replies sent of notifications",
            "baseline: USD / million replies sent (echo included)",
            "USD / million notifications",
            "replies sent of notifications",
        ),
        rows,
    )
    parts = [
        "## The bill per reply sent, beside a pipeline without exactly once",
        "What exactly once costs: ReplyOnce's bill per reply sent as a ratio of the bill of a plain "
        "webhook → queue → function → send pipeline (`bench/baseline.py`: no state, no lease, no thread "
        "read; it sends twice when Nylas delivers twice, and answers every message of a burst), both "
        "run in this run with the same agent's time, the same injected Nylas latencies and the same "
        "batching, behind the same webhook. Every line is over the replies each pipeline sent, plus the "
        "echo each reply brings back (its own `message.created`, skipped); the per-notification figure "
        "(the echo left out) is beside it. Prices and the cost model are those of Cost: the bill as it "
        "will be; the JSON block below holds every input, and "
        "`tests/static/test_performance_per_reply.py` re-derives each figure from it on its own.",
        lead,
    ]
    below = fills.get("below_capacity")
    if below:
        ratio = below["ratio"]
        verdict = "met" if ratio <= GOAL_RATIO else "not met"
        parts.append(f"**The {GOAL_RATIO:g}x goal below capacity: {verdict}** ({ratio:.2f}x). " + _why(below))
        parts.append(_floor_text(below, data["units"], data["prices"]))
        names = list(below["replyonce"]["lines"])
        parts.append(
            "Bill lines per million replies sent, below capacity:\n\n"
            + table(
                ("line", "ReplyOnce", "baseline"),
                [(n, usd(below["replyonce"]["lines"][n]), usd(below["baseline"]["lines"][n])) for n in names]
                + [
                    (
                        "**total**",
                        f"**{usd(below['replyonce']['usd_per_million_replies'])}**",
                        f"**{usd(below['baseline']['usd_per_million_replies'])}**",
                    )
                ],
            )
        )
    counted = data["mix_paths"]
    if counted:
        parts.append(
            "ReplyOnce's record attempts in the mix by path, their requests counted at the wire (a reply's "
            "write units are a first reply's, at the sizes measured under Cost, and its writes beyond a "
            "first reply's own; every other write one unit per KB of the largest item of its table in "
            "Requests per notification: a lower bound, where an item written was larger than the "
            "table's largest one there):\n\n"
            + table(
                ("path", "attempts", "writes (idempotency, state)", "reads", "own SQS requests"),
                [
                    (
                        p,
                        counted["attempts"][p],
                        ", ".join(str(counted["writes"][p].get(t, 0)) for t in ("idempotency", "state")),
                        counted["reads"][p],
                        counted["sqs"][p],
                    )
                    for p in PATHS
                ],
            )
        )
    if counted and counted["attempts"][COVERED]:
        parts.append(
            f"The {counted['attempts'][COVERED]} covered or skipped attempts wrote "
            f"{sum(counted['writes'][COVERED].values())} times (their idempotency records, put and "
            "completed, and under the thread's lease the lease taken and released and the skip settled) "
            f"and read {counted['reads'][COVERED]} times: a record that meets another worker's lease looks "
            "at it with a read until the holder is done, and takes it with a conditional write only once it "
            "looks free (issue 46: until then each look was a refused conditional write, which DynamoDB "
            "bills as a write)."
        )
    if counted and data["time_paths"] and below:
        parts.append(_time_table(data["time_paths"], counted, below))
    parts.append("```json\n" + json.dumps(data, indent=1, sort_keys=True) + "\n```")
    return "\n\n".join(parts)


def _why(row: dict[str, Any]) -> str:
    ours, theirs = row["replyonce"], row["baseline"]
    t, b = ours["traffic"], theirs["traffic"]
    gap = sorted(((ours["lines"][n] - theirs["lines"][n], n) for n in ours["lines"]), reverse=True)
    named = ", ".join(f"{n} {usd(d)}" for d, n in gap[:3] if d > 0)
    return (
        f"ReplyOnce sent {t['replies']} replies for {t['notifications']} notifications (a redelivery "
        f"and a burst answered once), the baseline {b['replies']}; for the same notifications ReplyOnce's "
        f"bill is {row['ratio_per_notification']:.2f}x the baseline's. Per reply sent it costs "
        f"{usd(ours['usd_per_million_replies'] - theirs['usd_per_million_replies'])} more per million, "
        f"most of it: {named}. The function bills {t['billed_ms'] / t['notifications'] / 1000:.2f} s per "
        f"notification against the baseline's {b['billed_ms'] / b['notifications'] / 1000:.2f} s: where, "
        "in seconds, the table after the attempts by path says; on a loaded machine (The run's load "
        "average) it also holds the CPU ReplyOnce's records spend in the one process, which the "
        "baseline's barely do and a Lambda fleet spends on CPUs of its own."
    )


def _floor_text(row: dict[str, Any], units: dict[str, Any], prices: dict[str, float]) -> str:
    """What the goal leaves for exactly once, against the least a pipeline answering as ReplyOnce can bill."""
    f, ours = row["floor"], row["replyonce"]
    reply_writes = units["reply_wru"] * prices["ddb_wru"]
    return (
        "**What the goal leaves for exactly once.** A pipeline that answered the mix as ReplyOnce did "
        f"({ours['traffic']['replies']} replies for {ours['traffic']['notifications']} notifications) with "
        "its state free would still bill "
        f"**{usd(f['usd_per_million_replies'])}** per million replies sent, **{f['ratio']:.2f}x** the "
        "baseline: the baseline's own costs per notification (webhook, queue, invocation, logs) spread over "
        "fewer replies, and per reply the baseline's draft-and-send time and an echo (`bench.per_reply."
        f"floor`). The {GOAL_RATIO:g}x goal leaves {usd(f['goal_leaves_usd'])} per million replies above "
        "that for every cost of exactly once: the state, the lease, the waits. A first reply's "
        f"{units['reply_wru']:g} DynamoDB write units alone are {usd(reply_writes)}; ReplyOnce bills "
        f"{usd(ours['usd_per_million_replies'] - f['usd_per_million_replies'])} above it."
    )
