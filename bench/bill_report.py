"""The section ``docs/performance.md`` leads with: the bill at the batch fill the template really gets.

Every figure is this run's, through the cost model (``bench.costs``): the
fill below capacity (the real-latency mix through the template's option),
a mixed stream at saturation and a long thread (``bench.bill``), the
saturated floor (full batches of first replies), and the replier at each
memory size (``bench.memory_size``). The inputs and the totals also go into
the page's JSON block (:func:`block`), which ``tests/static/test_performance_costs.py``
re-derives on its own.
"""

import math
from dataclasses import asdict, dataclass
from typing import Any

from bench import costs, scale
from bench.bill import BillResult
from bench.event_source import billed_ms
from bench.markdown import in_seconds, table, usd
from bench.memory_size import HEAVY_BODY_BYTES, HEAVY_MESSAGES_PER_THREAD, SizeRun
from bench.real_latency import OPTION_B, RealLatencyResult
from bench.stats import p

GOAL_USD = 25.0  # issue 32: per million first replies at real latency below capacity
HEADROOM = 1.25  # ReplierMaximumConcurrency: the peak's need and a quarter more
# The memory size is chosen as the smallest that keeps a quarter of itself above the full batch's peak,
# was never killed, answered everything, answered as many long emails on the first try as the largest
# size, and whose time to reply stays within this of the largest size's.
ROOM = 0.25
TIME_TO_REPLY_SLACK = 1.10


@dataclass(frozen=True)
class Fill:
    """One batch fill: where it was measured, and the first reply's path at it."""

    key: str
    name: str
    measured: str
    records_per_invocation: float
    path: costs.PathInputs
    replier_mb: int


def _sparse(result: RealLatencyResult) -> tuple[float, float]:
    """(records per invocation, billed ms per notification) of (b) in the real-latency mix."""

    mix = result.runs[OPTION_B]
    records = sum(len(i.notification_ids) for i in mix.invocations)
    return records / max(1, len(mix.invocations)), sum(billed_ms(i) for i in mix.invocations) / max(
        1, mix.notifications
    )


def fills(inputs: dict[str, Any], result: RealLatencyResult, bill: BillResult, replier_mb: int) -> list[Fill]:
    """The first reply's path at each fill the run measured (the template's memory size)."""
    first: costs.PathInputs = inputs["paths"]["first reply"]
    outbound: costs.PathInputs = inputs["paths"]["own outbound message"]
    sparse_records, sparse_ms = _sparse(result)
    rows = [
        Fill(
            "below_capacity",
            "(i) below capacity: the real-latency mix",
            f"the mix of Time to reply at real latency through (b): {len(result.runs[OPTION_B].invocations)} "
            "invocations; billed time over its notifications",
            sparse_records,
            costs.at_fill(first, replier_ms=sparse_ms, records_per_invocation=sparse_records),
            replier_mb,
        )
    ]
    mixed = bill.mixed
    if mixed is not None and mixed.records:
        counts = mixed.counts
        rows.append(
            Fill(
                "mixed_saturation",
                "(ii) mixed at saturation",
                f"{counts['first reply']} first replies, {counts['burst']} burst messages, "
                f"{counts['own outbound']} own outbound, queued then drained at `MaximumConcurrency` "
                f"{mixed.maximum_concurrency}: {len(mixed.records)} invocations; billed time less the own "
                f"outbound's {outbound.replier_ms:.0f} ms each, over the inbound notifications",
                mixed.records_per_invocation,
                costs.at_fill(
                    first,
                    replier_ms=mixed.first_reply_ms(outbound.replier_ms),
                    records_per_invocation=mixed.records_per_invocation,
                ),
                replier_mb,
            )
        )
    long = bill.long
    if long is not None:
        rows.append(
            Fill(
                "long_thread",
                "(iii) a follow-up on a long thread, at (i)'s fill",
                f"a thread of {long.messages_before} messages, {long.covered_before} of them covered in its "
                f"item; the follow-up's thread item {long.writes.thread_with_intent:,.0f} B with its intent: "
                f"{long.wru} WRU",
                sparse_records,
                costs.at_fill(
                    first, replier_ms=sparse_ms, records_per_invocation=sparse_records, wru=long.wru
                ),
                replier_mb,
            )
        )
    rows.append(
        Fill(
            "full_batches",
            "for comparison: full batches of first replies (the saturated floor)",
            "Saturation of (b), under Batch concurrency",
            inputs["b_records"],
            first,
            replier_mb,
        )
    )
    return rows


# ---- the memory size ----------------------------------------------------------------------------------


def _answered(run: SizeRun, kind: str) -> list[float]:
    return [s for i in run.of(kind) for s in i.reply_seconds]


def size_figures(run: SizeRun) -> dict[str, float]:
    """What a size's runs come to: billed ms, time to reply, peak memory (NaN where nothing ran)."""
    batches, singles = run.of("batch"), run.of("single")
    batch_ms = [i.billed_ms for i in batches]
    batch_records = sum(i.records for i in batches)
    single_ms = [i.billed_ms for i in singles]
    return {
        "batch_ms_per_invocation": sum(batch_ms) / len(batch_ms) if batch_ms else math.nan,
        "batch_ms_per_notification": sum(batch_ms) / batch_records if batch_records else math.nan,
        "single_ms": sum(single_ms) / len(single_ms) if single_ms else math.nan,
        "batch_p50": p(_answered(run, "batch"), 0.5),
        "batch_p99": p(_answered(run, "batch"), 0.99),
        "single_p50": p(_answered(run, "single"), 0.5),
        "single_p99": p(_answered(run, "single"), 0.99),
        "peak_mb": run.batch_hwm_mb,
        "unanswered": float(sum(i.unanswered for i in batches + singles)),
        "heavy_peak_mb": run.heavy_hwm_mb,
        "heavy_failed": float(sum(i.failed for i in run.of("heavy"))),
        "heavy_records": float(sum(i.records for i in run.of("heavy"))),
        "heavy_ms": float(sum(i.billed_ms for i in run.of("heavy"))),
    }


def choose(runs: list[SizeRun]) -> tuple[int | None, dict[int, str]]:
    """The smallest size fit for the template's batch, and what rules each smaller one out."""
    figures = {r.memory_mb: size_figures(r) for r in runs}
    largest = max(figures) if figures else None
    verdicts: dict[int, str] = {}
    chosen = None
    for r in sorted(runs, key=lambda r: r.memory_mb):
        f = figures[r.memory_mb]
        reasons = []
        if r.oom:
            reasons.append("killed for memory (OOM)")
        if r.returncode not in (0,) and not r.oom:
            reasons.append(f"the container failed (exit {r.returncode})")
        if f["unanswered"]:
            reasons.append(f"{f['unanswered']:.0f} records unanswered")
        if not math.isnan(f["peak_mb"]) and f["peak_mb"] > (1 - ROOM) * r.memory_mb:
            reasons.append(
                f"the full batch's peak {f['peak_mb']:.0f} MB leaves less than {ROOM:.0%} of {r.memory_mb} MB"
            )
        notes = []
        heavy_tight = not math.isnan(f["heavy_peak_mb"]) and f["heavy_peak_mb"] > (1 - ROOM) * r.memory_mb
        if heavy_tight:
            reasons.append(
                f"the batch of long emails peaks at {f['heavy_peak_mb']:.0f} MB, "
                f"{f['heavy_peak_mb'] / r.memory_mb:.0%} of the size ({f['heavy_failed']:.0f} of "
                f"{f['heavy_records']:.0f} records back to the queue after {f['heavy_ms'] / 1000:.1f} s)"
            )
        elif f["heavy_failed"]:
            # Records that fail with a quarter of the memory free did not fail for the memory size.
            notes.append(
                f"the batch of long emails sent {f['heavy_failed']:.0f} of {f['heavy_records']:.0f} records "
                "back to the queue (retried from it) with its peak at "
                f"{f['heavy_peak_mb'] / r.memory_mb:.0%} of the size: not for want of memory"
            )
        if largest is not None and r.memory_mb != largest:
            top = figures[largest]
            # Long emails are CPU: a smaller size's share of a vCPU reads a batch of them slower, and a
            # record whose thread read leaves less than a lease defers (`deadline`) and comes back. A size
            # that answers fewer of them on the first try than the largest stretches their time to reply.
            answered, best = (
                f["heavy_records"] - f["heavy_failed"],
                top["heavy_records"] - top["heavy_failed"],
            )
            if answered < best:
                reasons.append(
                    f"the batch of long emails answered {answered:.0f} of {f['heavy_records']:.0f} on the "
                    f"first try against {best:.0f} at {largest} MB (the rest deferred for want of CPU)"
                )
            for key, what in (("batch_p99", "a full batch's p99"), ("single_p50", "a single record's p50")):
                if f[key] > TIME_TO_REPLY_SLACK * top[key]:
                    reasons.append(
                        f"time to reply stretches: {what} {f[key]:.2f} s against {top[key]:.2f} s at "
                        f"{largest} MB ({f[key] / top[key]:.2f}x)"
                    )
        verdicts[r.memory_mb] = "; ".join(reasons) or "; ".join(["fits", *notes])
        if not reasons and chosen is None:
            chosen = r.memory_mb
    return chosen, verdicts


def size_usd(inputs: dict[str, Any], run: SizeRun, records_per_invocation: float) -> dict[str, float]:
    """USD per million first replies at this size: one record per invocation, and full batches."""
    first: costs.PathInputs = inputs["paths"]["first reply"]
    f = size_figures(run)
    webhook_mb = costs.memory_mb("WebhookFunction")
    out = {}
    for name, ms, records in (
        ("single", f["single_ms"], 1.0),
        ("batch", f["batch_ms_per_notification"], records_per_invocation),
    ):
        if math.isnan(ms):
            out[name] = math.nan
            continue
        path = costs.at_fill(first, replier_ms=ms, records_per_invocation=records)
        out[name] = costs.total(path, webhook_mb=webhook_mb, replier_mb=run.memory_mb)
    return out


def _sizes_against_goal(inputs: dict[str, Any], bill: BillResult) -> str:
    """Whether any memory size meets the goal at one record per invocation, in words."""
    singles = {r.memory_mb: size_usd(inputs, r, bill.memory.batch_size)["single"] for r in bill.memory.sizes}
    singles = {mb: v for mb, v in singles.items() if not math.isnan(v)}
    if not singles:
        return "No memory size was measured here."
    cheapest = min(singles, key=lambda mb: singles[mb])
    if singles[cheapest] <= GOAL_USD:
        return (
            f"At {cheapest} MB one record per invocation comes to {usd(singles[cheapest])}: that size "
            "would meet it (Memory size by measurement says what else it costs)."
        )
    return (
        f"No memory size gets there: at one record per invocation the cheapest, {cheapest} MB, comes to "
        f"{usd(singles[cheapest])} (Memory size by measurement)."
    )


# ---- concurrency ---------------------------------------------------------------------------------------


def advised_concurrency(per_day: float, billed_seconds_per_notification: float) -> int:
    """``ReplierMaximumConcurrency`` for ``per_day`` notifications: the peak hour's need, and a quarter."""
    peak = per_day / scale.DAY_SECONDS * scale.PEAK_FACTOR
    return math.ceil(peak * billed_seconds_per_notification * HEADROOM)


# ---- the page ------------------------------------------------------------------------------------------


def block(inputs: dict[str, Any], result: RealLatencyResult, bill: BillResult) -> dict[str, Any]:
    """The JSON of these figures: each fill's path, each memory size's, the advised concurrency."""
    webhook_mb, replier_mb = costs.memory_mb("WebhookFunction"), costs.memory_mb("ReplierFunction")
    out: dict[str, Any] = {"goal_usd_per_million": GOAL_USD, "fills": {}, "memory_sizes": {}}
    for fill in fills(inputs, result, bill, replier_mb):
        out["fills"][fill.key] = {
            "path": asdict(fill.path),
            "replier_mb": fill.replier_mb,
            "records_per_invocation": round(fill.records_per_invocation, 4),
            "usd_per_million": round(
                costs.total(fill.path, webhook_mb=webhook_mb, replier_mb=fill.replier_mb), 4
            ),
        }
    first: costs.PathInputs = inputs["paths"]["first reply"]
    for run in bill.memory.sizes:
        f = size_figures(run)
        for name, ms, records in (
            ("single", f["single_ms"], 1.0),
            ("batch", f["batch_ms_per_notification"], bill.memory.batch_size),
        ):
            if math.isnan(ms):
                continue
            path = costs.at_fill(first, replier_ms=ms, records_per_invocation=records)
            out["memory_sizes"][f"{run.memory_mb} {name}"] = {
                "path": asdict(path),
                "replier_mb": run.memory_mb,
                "usd_per_million": round(
                    costs.total(path, webhook_mb=webhook_mb, replier_mb=run.memory_mb), 4
                ),
            }
    mixed = bill.mixed
    if mixed is not None and mixed.notifications:
        seconds = mixed.billed_ms_per_notification / 1000
        out["concurrency"] = {
            "per_day": scale.VOLUMES[-1],
            "peak_factor": scale.PEAK_FACTOR,
            "headroom": HEADROOM,
            "billed_seconds_per_notification": round(seconds, 4),
            "advised": advised_concurrency(scale.VOLUMES[-1], seconds),
        }
    return out


def section(inputs: dict[str, Any], result: RealLatencyResult | None, bill: BillResult | None) -> str:
    """``## The bill at real batch fill``: the section after the page's intro."""
    if result is None or bill is None:
        return (
            "## The bill at real batch fill\n\nNot measured in this run (`--skip-bill`, or no real-latency "
            "run): the cost below is the saturated floor only."
        )
    webhook_mb, replier_mb = costs.memory_mb("WebhookFunction"), costs.memory_mb("ReplierFunction")
    rows = []
    all_fills = fills(inputs, result, bill, replier_mb)
    totals = {}
    for fill in all_fills:
        total = costs.total(fill.path, webhook_mb=webhook_mb, replier_mb=fill.replier_mb)
        totals[fill.key] = total
        lines = costs.path_lines(fill.path, webhook_mb=webhook_mb, replier_mb=fill.replier_mb)
        rows.append(
            (
                fill.name,
                f"{fill.records_per_invocation:.2f}",
                f"{fill.path.replier_ms / 1000:.2f}",
                f"{fill.path.wru:g}",
                usd(lines["Lambda GB-s, replier"]),
                f"**{usd(total)}**",
                fill.measured,
            )
        )
    below = totals["below_capacity"]
    first: costs.PathInputs = inputs["paths"]["first reply"]
    sparse_records, sparse_ms = _sparse(result)
    # What the first reply costs beside the replier's GB-s, at (i)'s fill.
    below_path = all_fills[0].path
    beside = (
        below
        - costs.path_lines(below_path, webhook_mb=webhook_mb, replier_mb=replier_mb)["Lambda GB-s, replier"]
    )
    memory = bill.memory
    size_rows, size_text = [], ""
    chosen, verdicts = choose(list(memory.sizes))
    for run in memory.sizes:
        f = size_figures(run)
        size_total = size_usd(inputs, run, memory.batch_size)
        size_rows.append(
            (
                f"{run.memory_mb}" + (" (template)" if run.memory_mb == replier_mb else ""),
                f"{run.quota_us / 1000:.1f} ms / 100 ms",
                in_seconds(run.init_seconds),
                f"{f['batch_ms_per_invocation']:,.0f}",
                f"{f['batch_ms_per_notification']:,.0f}",
                f"{in_seconds(f['batch_p50'])} / {in_seconds(f['batch_p99'])}",
                f"{f['single_ms']:,.0f}",
                f"{in_seconds(f['single_p50'])} / {in_seconds(f['single_p99'])}",
                f"{f['peak_mb']:.0f} ({f['peak_mb'] / run.memory_mb:.0%})",
                f"{f['heavy_peak_mb']:.0f} MB, {f['heavy_ms'] / 1000:.1f} s, "
                f"{f['heavy_records'] - f['heavy_failed']:.0f} of {f['heavy_records']:.0f} done",
                "yes" if run.oom else "no",
                usd(size_total["single"]),
                usd(size_total["batch"]),
                verdicts[run.memory_mb],
            )
        )
    if memory.skipped:
        size_text = (
            f"**Not measured in this run: {memory.skipped}.** The memory size stays the template's "
            f"{replier_mb} MB, chosen by the earlier argument under Memory size and log volume."
        )
    else:
        n_batch = sum(len(_answered(r, "batch")) for r in memory.sizes[:1])
        n_single = sum(len(_answered(r, "single")) for r in memory.sizes[:1])
        floors = []
        for run in memory.sizes:
            ms = size_figures(run)["single_ms"]
            gb_s = ms / 1000 * run.memory_mb / 1024 * costs.price("lambda_gb_s") * 1e6
            floors.append(f"{run.memory_mb} MB {usd(gb_s)}")
        decision = (
            f"**Chosen: {chosen} MB.**"
            if chosen is not None
            else "**No size passed every test; the template's size stays.**"
        )
        if chosen is not None and chosen != replier_mb:
            decision += f" **The template has {replier_mb} MB: set `MemorySize: {chosen}`.**"
        smaller = [
            f"{r.memory_mb} MB: {verdicts[r.memory_mb]}"
            for r in memory.sizes
            if chosen is not None and r.memory_mb < chosen
        ]
        size_text = (
            f"Each size ran the same invocations (the same latency draws): a warm-up record, "
            f"full batches of {memory.batch_size} threads at once: {len(memory.sizes[0].of('batch'))} "
            f"({n_batch} replies); records alone: {len(memory.sizes[0].of('single'))} ({n_single} replies); "
            f"then a batch of {memory.batch_size} threads of long emails "
            f"({HEAVY_MESSAGES_PER_THREAD} messages of {HEAVY_BODY_BYTES // 1000} KB of HTML each, the "
            "notification truncated so the bodies come through the thread read), "
            "in a process of its own capped by cgroup v1 at the size's share of a vCPU (1,769 MB = one vCPU) "
            "and at the size's memory (`bench/memory_size.py`); load average "
            f"{memory.load_before} before, {memory.load_after} after (the cap is a ceiling: other load on "
            "the machine's 2 CPUs can only slow a size further). Init is the capped process's imports and "
            "clients (Lambda's init phase). Time to reply is the invocation's start to the reply reaching "
            "the emulator; with this few records a p99 is the slowest one. Peak is `VmHWM` once the full "
            "batches have run. USD per million first replies: the template's bill with the replier's "
            "billed time and memory of this size, one record per invocation (about (i)'s fill) and full "
            "batches.\n\n"
            + table(
                (
                    "MemorySize MB",
                    "CPU",
                    "init s",
                    "full batch: billed ms / invocation",
                    "billed ms / notification",
                    "time to reply p50 / p99 s",
                    "one record: billed ms",
                    "time to reply p50 / p99 s",
                    "peak MB (of the size)",
                    "long emails: peak, billed, records done",
                    "OOM",
                    "USD / million, one record per invocation",
                    "USD / million, full batches",
                    "verdict",
                ),
                size_rows,
            )
            + f"\n\n{decision} The rule: the smallest size that keeps {ROOM:.0%} of its memory "
            "above the peak of a full batch and of the batch of long emails, with no OOM and nothing "
            "unanswered, that answers as many of the long emails on the first try as the largest size "
            "(a smaller share of a vCPU reads them slower), and whose "
            "time to reply (a full batch's "
            f"p99, a single record's p50) stays within {TIME_TO_REPLY_SLACK - 1:.0%} of the largest size's. "
            + ("".join(f"{line}. " for line in smaller))
            + "What the replier's waiting costs at about one record per invocation, its GB-s alone per "
            f"million first replies: {', '.join(floors)}."
        )
    goal_met = below <= GOAL_USD
    need_gb_s = GOAL_USD - beside
    per_gb_s = replier_mb / 1024 * costs.price("lambda_gb_s") * 1e6
    need_ms = need_gb_s / per_gb_s * 1000 if need_gb_s > 0 else 0.0
    per_invocation_ms = sparse_ms * sparse_records
    needed_fill = per_invocation_ms / need_ms if need_ms > 0 else math.inf
    mixed = bill.mixed
    concurrency = ""
    if mixed is not None and mixed.notifications:
        seconds = mixed.billed_ms_per_notification / 1000
        advised = advised_concurrency(scale.VOLUMES[-1], seconds)
        best = advised_concurrency(
            scale.VOLUMES[-1], (first.replier_ms + inputs["paths"]["own outbound message"].replier_ms) / 2000
        )
        concurrency = (
            f"\n\n**`ReplierMaximumConcurrency` for 10 M notifications a day: {advised}**, from the mixed "
            f"stream: {seconds:.2f} s billed per notification of it (every kind, {mixed.notifications} "
            f"notifications in {len(mixed.records)} invocations of {mixed.records_per_invocation:.2f} "
            f"records; {mixed.threads_answered} of {mixed.threads} threads answered, {mixed.replies} "
            "replies), times the "
            f"peak hour's {scale.VOLUMES[-1] / scale.DAY_SECONDS * scale.PEAK_FACTOR:.0f} notifications/s "
            f"(Scale on paper's model), and a quarter more. The best case (full batches of first replies, "
            f"half the stream own outbound) would advise {best}"
            + (
                ": a mixed batch waits for its slowest first reply whatever else it carries, so it bills "
                "more per notification than full batches of first replies share out."
                if advised > best
                else ": here the mixed stream bills less per notification than that, its own outbound "
                "records riding in the first replies' invocations."
            )
        )
    goal = (
        f"**The $25 goal, against (i): {'met' if goal_met else 'not met'}** ({usd(below)} per million first "
        f"replies at the {sparse_records:.2f} records per invocation the real-latency mix got, "
        f"{replier_mb} MB)."
    )
    if not goal_met:
        goal += (
            f" Why: at about one record per invocation the replier bills each record's whole wait on the "
            f"agent and Nylas ({sparse_ms / 1000:.2f} s per notification); everything else a first reply "
            f"costs comes to {usd(beside)} (API Gateway {usd(costs.price('api_rest'))}, DynamoDB's "
            f"{below_path.wru:g} write units {usd(below_path.wru * costs.price('ddb_wru'))}, logs, SQS, "
            f"requests), which leaves {usd(max(0.0, need_gb_s))} for the replier's GB-s: "
            f"{need_ms / 1000:.2f} s billed per notification at {replier_mb} MB, so its invocations would "
            f"have to carry {needed_fill:.1f} records each where they carried {sparse_records:.2f}. "
            "Below capacity records do not wait for each other. "
            + _sizes_against_goal(inputs, bill)
            + " The template has no "
            "batching window, which would fill batches only by holding every lone record for the window "
            "(a customer's time to reply grows by up to the window, and at low traffic a window fills "
            "nothing; not measured here). What would change it: more traffic per poller (batches fill as "
            "records queue, (ii)), or a replier that does not hold an invocation while it waits (the "
            "alternatives under Cost)."
        )
    return (
        "## The bill at real batch fill\n\n"
        + "USD per million first replies at the batch fill the template really gets, each from this run's "
        "measurements through the cost model of Cost: the bill as it will be (the same lines and prices; "
        f"the replier at {replier_mb} MB; the event source's receive and delete per invocation at the fill). "
        "Billed s is the replier's billed time per notification, every invocation of it.\n\n"
        + table(
            (
                "fill",
                "records / invocation",
                "billed s / notification",
                "WRU / first reply",
                "replier GB-s",
                "USD / million first replies",
                "measured",
            ),
            rows,
        )
        + "\n\n"
        + goal
        + concurrency
        + "\n\n### Memory size by measurement\n\n"
        + size_text
    )
