"""The budgets of issue 6, judged against one run's results.

Count budgets are also asserted in ``tests/test_budgets.py`` (CI); time
budgets are judged here only, on medians, and reported with the machine —
never asserted, because a loaded machine would fail them.
"""

from dataclasses import dataclass

from bench.coldstart import ColdStartResult
from bench.paths import PathResult, PathsResult
from bench.stats import ratio
from bench.warm_path import WarmPathResult
from devstack.cold_start import PROFILES
from devstack.counting import GRANT_LOOKUP, MESSAGE_FETCH, SEND, THREAD_READ

WARM_PATH_RATIO = 1.2
WEBHOOK_COLD_START_RATIO = 1.15
FIRST_REPLY_DYNAMODB = 5


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
        verdicts.append(
            Verdict(
                f"webhook cold start ≤ {WEBHOOK_COLD_START_RATIO}x `import boto3` + client ({profile.name})",
                # Three decimals: a 1.153 shown as "1.15" beside "missed" would read as a contradiction.
                f"{value:.3f}x (minimums: {at_best:.3f}x)",
                value <= WEBHOOK_COLD_START_RATIO,
                when_missed=(
                    "With `Tracing: Active` the webhook loads the X-Ray SDK (wrapt, asyncio) and patches "
                    "botocore; the gap to the outside-Lambda row is that cost (see Cold start). Kept on "
                    "purpose: the stack traces API Gateway, both functions and the Nylas calls (X-Ray), and "
                    "the endpoint parses its event with Powertools' `APIGatewayProxyEvent` (about 9 ms: "
                    "the data classes package loads every event class) rather than a hand-written copy. "
                    "The cost is paid once per container, never on the warm path, which is within 1.05x. "
                    "Turning SDK tracing off for the webhook alone (`POWERTOOLS_TRACE_DISABLED`) would "
                    "bring it near the outside-Lambda row."
                    if profile.in_lambda
                    else "See the heaviest imports under Cold start."
                ),
            )
        )
    return verdicts


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
            "first reply: 1 send + 1 thread read (the re-read inside the lease, issue 3)",
            f"{first.nylas[SEND]} send + {first.nylas[THREAD_READ]} thread read, {first.nylas_total} in all",
            first.nylas[SEND] == 1 and first.nylas[THREAD_READ] == 1 and first.nylas_total == 2,
        ),
        Verdict(
            "truncated: + 1 message GET; cold container: + 1 grant lookup",
            f"+{truncated.nylas_total - first.nylas_total} ({MESSAGE_FETCH}), "
            f"+{cold.nylas_total - first.nylas_total} ({GRANT_LOOKUP})",
            truncated.nylas[MESSAGE_FETCH] == 1
            and truncated.nylas_total == first.nylas_total + 1
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
