"""The budgets of issues 6 and 14, judged against one run's results.

Count budgets are also asserted in ``tests/test_budgets.py`` (CI); time
budgets are judged here only, on medians, and reported with the machine —
never asserted, because a loaded machine would fail them.
"""

from dataclasses import dataclass

from bench.coldstart import ColdStartResult
from bench.paths import PathResult, PathsResult
from bench.stats import ratio
from bench.time_to_reply import CONTENDED_ROWS, ROW_SINGLE, TimeToReplyResult, p
from bench.warm_path import WarmPathResult
from devstack.cold_start import PROFILES
from devstack.counting import GRANT_LOOKUP, MESSAGE_FETCH, SEND, THREAD_READ

WARM_PATH_RATIO = 1.2
WEBHOOK_COLD_START_RATIO = 1.15
# The outbox stores the send intent before the send: one write more than before it (5).
FIRST_REPLY_DYNAMODB = 6


@dataclass(frozen=True)
class Verdict:
    budget: str
    measured: str
    met: bool
    # Printed under the table when the budget is missed: where the time or the request goes.
    when_missed: str = ""

    @property
    def mark(self) -> str:
        return "met" if self.met else "**missed**"


def _path(paths: PathsResult, name: str) -> PathResult:
    return next(p for p in [*paths.replier, *paths.webhook] if p.name == name)


def warm_path(result: WarmPathResult) -> Verdict:
    value = ratio(result.handler_p50, result.baseline_p50)
    return Verdict(
        f"webhook warm path p50 ≤ {WARM_PATH_RATIO}x HMAC + raw SendMessage",
        f"{value:.3f}x",
        value <= WARM_PATH_RATIO,
    )


def cold_starts(result: ColdStartResult) -> list[Verdict]:
    verdicts = []
    for profile in PROFILES:
        times = result.times[profile.name]
        value = ratio(times["webhook"], times["baseline"])
        at_best = times["webhook"].low / times["baseline"].low
        traced = " with the SQS call traced" if profile.in_lambda else ""
        verdicts.append(
            Verdict(
                f"webhook cold start ≤ {WEBHOOK_COLD_START_RATIO}x `import boto3` + client "
                f"({profile.name}{traced})",
                # Three decimals: a 1.153 shown as "1.15" beside "missed" would read as a contradiction.
                f"{value:.3f}x (minimums: {at_best:.3f}x)",
                value <= WEBHOOK_COLD_START_RATIO,
                when_missed=_traced_cold_start_note(result)
                if profile.in_lambda
                else "See the heaviest imports under Cold start.",
            )
        )
    return verdicts


def _traced_cold_start_note(result: ColdStartResult) -> str:
    baseline = result.times[PROFILES[1].name]["baseline"]
    outside = result.times[PROFILES[0].name]
    sdk = ratio(result.times[PROFILES[1].name]["webhook"], baseline) - ratio(
        outside["webhook"], outside["baseline"]
    )
    measured = "; ".join(f"{name}: {ratio(spread, baseline):.3f}x" for name, spread in result.options.items())
    return (
        "With `Tracing: Active` Powertools' Tracer imports the X-Ray SDK (which loads asyncio and wrapt "
        "whatever is patched; see the parts under Cold start) and patches botocore, the one library "
        "the webhook calls through: "
        f"{sdk:+.3f}x of the baseline over the same handler untraced. The SDK is what records the "
        "SendMessage subsegment, so with that subsegment kept the cold start cannot drop by that much "
        "while the rest of the import path (Powertools' event data classes, Parameters, Logger, "
        "Metrics — the outside-Lambda row) already takes most of the 1.15x. Each option measured "
        f"(Cold start, tracing options): {measured}. Tracing through the Lambda service only meets the "
        "budget and keeps the trace linked through SQS, but loses the SendMessage subsegment; building "
        "the Tracer lazily moves the X-Ray SDK's import to the first request, which Nylas waits for "
        "just the same (the lazy row times init and that first build together; its gap to today's row "
        "is within this machine's run-to-run spread). Paid once per container, never on the warm path "
        "(within 1.05x)."
    )


def counts(paths: PathsResult) -> list[Verdict]:
    duplicate = _path(paths, "duplicate delivery").tally
    first = _path(paths, "first reply").tally
    cold = _path(paths, "first reply, cold container").tally
    truncated = _path(paths, "first reply, truncated notification").tally
    accepted = _path(paths, "accepted, warm container").tally
    return [
        Verdict(
            "duplicate delivery: 1 DynamoDB request, 0 Nylas calls",
            f"{duplicate.service('dynamodb')} DynamoDB, {duplicate.nylas_total} Nylas",
            duplicate.service("dynamodb") == 1 and duplicate.nylas_total == 0,
        ),
        Verdict(
            f"first reply: ≤ {FIRST_REPLY_DYNAMODB} DynamoDB requests",
            f"{first.service('dynamodb')}",
            first.service("dynamodb") <= FIRST_REPLY_DYNAMODB,
        ),
        Verdict(
            "first reply: 1 send + 1 thread read (inside the lease)",
            f"{first.nylas[SEND]} send + {first.nylas[THREAD_READ]} thread read, {first.nylas_total} in all",
            first.nylas[SEND] == 1 and first.nylas[THREAD_READ] == 1 and first.nylas_total == 2,
        ),
        Verdict(
            "truncated: nothing more (the in-lease thread read carries the body); cold container: "
            "+ 1 grant lookup",
            f"+{truncated.nylas_total - first.nylas_total} ({MESSAGE_FETCH}), "
            f"+{cold.nylas_total - first.nylas_total} ({GRANT_LOOKUP})",
            truncated.nylas == first.nylas
            and truncated.aws == first.aws
            and cold.nylas[GRANT_LOOKUP] == 1
            and cold.nylas_total == first.nylas_total + 1,
        ),
        Verdict(
            "webhook, warm: 1 SQS SendMessage, 0 Secrets Manager calls per notification",
            ", ".join(f"{n} {op}" for op, n in accepted.operations("sqs").items())
            + f", {accepted.service('secrets-manager')} Secrets Manager",
            accepted.operations("sqs") == {"SendMessage": 1} and accepted.service("secrets-manager") == 0,
        ),
    ]


# ---- time to reply (issue 14) ---------------------------------------------------------------------

TIME_TO_REPLY_FLOOR_RATIO = 1.5
CONTENDED_SLACK_SECONDS = 2.0


def time_to_reply(result: TimeToReplyResult) -> list[Verdict]:
    """p99 of an uncontended message against the floor's p99; a contended one against its holder's work."""
    single = result.mix.row(ROW_SINGLE)
    floor_p99 = p(result.floor_warm.seconds, 0.99)
    single_p99 = p(single.answered, 0.99)
    value = single_p99 / floor_p99
    window = result.mix.batching.window_seconds
    what_if = ""
    if result.what_if is not None:
        alone = result.what_if.row(ROW_SINGLE).answered
        what_if = (
            f" The same singles with the window at 0 (a what-if run in the same process): p99 "
            f"{p(alone, 0.99):.3f} s, {p(alone, 0.99) / floor_p99:.2f}x the floor."
        )
    slowest = single.p99_message()
    largest = ""
    if slowest is not None and slowest.parts:
        part, seconds = max(slowest.parts.items(), key=lambda item: item[1])
        largest = (
            f" The p99 single message spent most of its {slowest.seconds:.3f} s in {part} ({seconds:.3f} s)."
        )
    verdicts = [
        Verdict(
            f"time to reply, single message: p99 ≤ {TIME_TO_REPLY_FLOOR_RATIO}x the floor's p99",
            f"{single_p99:.3f} s vs {floor_p99:.3f} s: {value:.1f}x"
            + (f", {single.unanswered} unanswered" if single.unanswered else ""),
            value <= TIME_TO_REPLY_FLOOR_RATIO and not single.unanswered,
            when_missed=(
                f"The event source's batching window (`MaximumBatchingWindowInSeconds: {window:g}` in "
                "template.yaml) holds a lone record for the whole window before the replier is invoked: it "
                "is the queue part of every single message's time (see Time to reply), while the floor is "
                f"tens of milliseconds on loopback.{largest}{what_if} A record queued in a batch behind "
                "a slow send waits for it too (the batch column): the batch's records run one after "
                "another. Against a real Nylas, whose send takes seconds, the window is a smaller share."
            ),
        )
    ]
    contended = [result.mix.row(name) for name in CONTENDED_ROWS]
    excess = [e for row in contended for e in row.excess]
    unanswered = sum(row.unanswered for row in contended)
    worst = p(excess, 0.99) if excess else float("nan")
    verdicts.append(
        Verdict(
            "time to reply, burst's last message and busy thread: p99 ≤ the lease holder's remaining "
            f"work + {CONTENDED_SLACK_SECONDS:g} s",
            f"+{worst:.3f} s over the holder's work ({len(excess)} messages)"
            + (f", **{unanswered} never answered**" if unanswered else ""),
            bool(excess) and worst <= CONTENDED_SLACK_SECONDS and not unanswered,
            when_missed=_contended_note(result),
        )
    )
    return verdicts


def _contended_note(result: TimeToReplyResult) -> str:
    outcomes: dict[str, int] = {}
    worst = None
    for name in CONTENDED_ROWS:
        row = result.mix.row(name)
        for outcome, n in row.unanswered_outcomes().items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
        for t in row.times:
            if t.seconds is not None and (worst is None or t.seconds - t.holder_remaining > worst[0]):
                worst = (t.seconds - t.holder_remaining, name, t)
    note = (
        "A message that meets a busy thread and is not covered by the holder's reply waits for the lease "
        "(in-process up to `LEASE_WAIT_SECONDS`, then back through SQS after `BUSY_RETRY_SECONDS`), and "
        "every message waits for its batch (window, records ahead of it, a new container's init)."
    )
    if worst is not None and worst[2].parts:
        excess, name, t = worst
        part, seconds = max(t.parts.items(), key=lambda item: item[1])
        note += (
            f" The worst one ({name}) took {t.seconds:.3f} s, {excess:.3f} s beyond its holder's work; "
            f"its largest part was {part} ({seconds:.3f} s) — see the p99 table under Time to reply."
        )
    if outcomes:
        note += " The unanswered messages' records ended: " + ", ".join(
            f"{outcome} x{n}" for outcome, n in sorted(outcomes.items())
        )
        note += "."
    if "burst_already_answered" in outcomes:
        note += (
            " `burst_already_answered`: the retried record found an agent reply dated after the "
            "message (coverage judged by `date`), but that reply was drafted from a thread read made "
            "before the message arrived, so it never answered it."
        )
    return note
