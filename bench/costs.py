"""The bill as it will be: every line with its price and source, from what the run counted and measured.

Nothing here is measured: it multiplies the run's counts (requests per
notification), measured durations (the replier's billed time at real
latency), measured sizes (DynamoDB items, log bytes) and the template's
settings by AWS list prices. Prices are us-east-1 (arm64 for Lambda) as of
``AS_OF``, free tiers left out; each carries the page it is from. The inputs
and the results are also written into ``docs/performance.md`` as one JSON
block, which ``tests/static/test_performance_costs.py`` re-derives on its own.

The traffic model is the scale section's: each reply brings one
"own outbound" notification back (Agent Accounts fire ``message.created`` for
sent mail), so half the notifications are first replies and half own outbound.
"""

import math
from dataclasses import dataclass, replace

from ops.template import load_template, sqs_event_source
from replyonce.config import SecretsSettings

AS_OF = "2026-12-01"
MONTH_SECONDS = 30 * 24 * 3600
SQS_CHUNK_BYTES = 64 * 1024
# CloudWatch Logs counts each event's bytes plus 26 bytes (PutLogEvents); the model bills the same.
LOG_EVENT_OVERHEAD_BYTES = 26
# Lambda's own lines per invocation in JSON log format (SystemLogLevel INFO): platform.start and
# platform.report, as Lambda writes them, with an X-Ray trace id (a traced invocation's is longer).
PLATFORM_LINES = (
    '{"time":"2026-12-01T09:50:00.000Z","type":"platform.start","record":{"requestId":'
    '"6d68ca91-49c9-448d-89b8-7ca3e6dc66aa","version":"$LATEST"}}',
    '{"time":"2026-12-01T09:50:06.512Z","type":"platform.report","record":{"requestId":'
    '"6d68ca91-49c9-448d-89b8-7ca3e6dc66aa","metrics":{"durationMs":6511.834,"billedDurationMs":6512,'
    '"memorySizeMB":256,"maxMemoryUsedMB":125},"tracing":{"spanId":"4a3d2c1b0f9e8d7c","type":'
    '"X-Amzn-Trace-Id","value":"Root=1-6748a4c0-0123456789abcdef01234567;Parent=4a3d2c1b0f9e8d7c;'
    'Sampled=1"},"status":"success"}}',
)
# A Secrets Manager read per warm container per cache age (SecretsSettings.max_age_seconds).
SECRETS = 2


@dataclass(frozen=True)
class Price:
    usd: float
    unit: str
    source: str


_LAMBDA = "https://aws.amazon.com/lambda/pricing/"
_CLOUDWATCH = "https://aws.amazon.com/cloudwatch/pricing/"
_DYNAMODB = "https://aws.amazon.com/dynamodb/pricing/on-demand/"
_STEP_FUNCTIONS = "https://aws.amazon.com/step-functions/pricing/"

PRICES: dict[str, Price] = {
    "api_rest": Price(
        3.50,
        "per million REST API requests (first 333 M a month)",
        "https://aws.amazon.com/api-gateway/pricing/",
    ),
    "lambda_request": Price(0.20, "per million Lambda requests", _LAMBDA),
    "lambda_gb_s": Price(0.0000133334, "per GB-second, arm64 (first 7.5 B GB-s a month)", _LAMBDA),
    "sqs_request": Price(
        0.40, "per million SQS standard requests (each 64 KB chunk)", "https://aws.amazon.com/sqs/pricing/"
    ),
    "ddb_wru": Price(0.625, "per million on-demand write request units", _DYNAMODB),
    "ddb_rru": Price(0.125, "per million on-demand read request units", _DYNAMODB),
    "ddb_storage": Price(0.25, "per GB-month of table storage", _DYNAMODB),
    "ddb_pitr": Price(0.20, "per GB-month of point-in-time recovery", _DYNAMODB),
    "secrets_calls": Price(0.05, "per 10,000 API calls", "https://aws.amazon.com/secrets-manager/pricing/"),
    "secret_month": Price(0.40, "per secret-month", "https://aws.amazon.com/secrets-manager/pricing/"),
    "logs_ingest": Price(0.50, "per GB ingested (Lambda logs, first 10 TB)", _CLOUDWATCH),
    "logs_storage": Price(0.03, "per GB-month stored", _CLOUDWATCH),
    "metric_month": Price(0.30, "per custom or detailed metric-month (first 10,000)", _CLOUDWATCH),
    "alarm_metric_month": Price(0.10, "per standard-resolution alarm metric-month", _CLOUDWATCH),
    "dashboard_month": Price(3.00, "per dashboard-month (beyond the first 3)", _CLOUDWATCH),
    "insight_rule_month": Price(0.50, "per Contributor Insights rule-month", _CLOUDWATCH),
    "xray_trace": Price(5.00, "per million traces recorded", "https://aws.amazon.com/xray/pricing/"),
    "kms_key_month": Price(1.00, "per customer managed key-month", "https://aws.amazon.com/kms/pricing/"),
    "sfn_standard_transition": Price(0.025, "per 1,000 Standard state transitions", _STEP_FUNCTIONS),
    "sfn_express_request": Price(1.00, "per million Express requests", _STEP_FUNCTIONS),
    "sfn_express_gb_s": Price(
        0.00001667, "per Express GB-second (64 MB steps, 100 ms; first 1,000 h)", _STEP_FUNCTIONS
    ),
    "durable_operation": Price(8.00, "per million durable operations (steps, waits, callbacks)", _LAMBDA),
    "durable_data_written": Price(0.25, "per GB of durable checkpoint data written", _LAMBDA),
    "s3_put": Price(0.005, "per 1,000 S3 Standard PUT requests", "https://aws.amazon.com/s3/pricing/"),
    "s3_get": Price(0.0004, "per 1,000 S3 Standard GET requests", "https://aws.amazon.com/s3/pricing/"),
    "s3_storage": Price(
        0.023, "per GB-month of S3 Standard storage (first 50 TB)", "https://aws.amazon.com/s3/pricing/"
    ),
    "pipes_request": Price(
        0.40,
        "per million EventBridge Pipes requests (SQS to Step Functions)",
        "https://aws.amazon.com/eventbridge/pricing/",
    ),
}


def price(name: str) -> float:
    return PRICES[name].usd


# ---- the template ------------------------------------------------------------------------------------


def memory_mb(function: str) -> int:
    """The function's ``MemorySize`` (its own, else the Globals')."""
    template = load_template()
    own = template["Resources"][function]["Properties"].get("MemorySize")
    return int(own or template["Globals"]["Function"]["MemorySize"])


def batch_size() -> int:
    """The replier's SQS event source ``BatchSize`` from template.yaml."""
    return int(sqs_event_source(load_template())["BatchSize"])


def secrets_max_age_seconds() -> int:
    """Powertools Parameters' cache age for a secret (replyonce/config.py)."""
    return SecretsSettings.max_age_seconds


def log_retention_days() -> int:
    return int(load_template()["Parameters"]["LogRetentionDays"]["Default"])


def sampling() -> tuple[float, float]:
    """(reservoir per second, fixed rate) of the stack's X-Ray sampling rule."""
    rule = load_template()["Resources"]["TraceSamplingRule"]["Properties"]["SamplingRule"]
    return float(rule["ReservoirSize"]), float(rule["FixedRate"])


def alarm_metrics() -> int:
    """Metrics the template's alarms watch (CloudWatch bills alarms per metric).

    A Metrics Insights query is counted as the series it sums: SystemErrors of five operations on
    two tables.
    """
    count = 0
    for resource in load_template()["Resources"].values():
        if resource["Type"] != "AWS::CloudWatch::Alarm":
            continue
        queries = resource["Properties"].get("Metrics")
        if queries is None:
            count += 1
            continue
        for query in queries:
            expression = str(query.get("Expression", ""))
            if "MetricStat" in query:
                count += 1
            elif "SELECT" in expression or "SELECT" in str(query.get("Expression", {})):
                count += 10
            elif "INSIGHT_RULE_METRIC" in str(query.get("Expression", "")):
                count += 1
    return count


def platform_bytes() -> int:
    """Bytes of Lambda's own log lines per invocation (``PLATFORM_LINES``), with CloudWatch's overhead."""
    return sum(len(line) + 1 + LOG_EVENT_OVERHEAD_BYTES for line in PLATFORM_LINES)


# ---- one notification --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PathInputs:
    """One notification's path, as counted and measured in the run."""

    name: str
    webhook_ms: float  # the webhook's billed time per request
    replier_ms: float  # the replier's billed time per notification, every invocation of it, at its latency
    replier_invocations: float  # per notification (1 / records per invocation)
    sqs_requests: float  # SendMessage chunks + the event source's receive/delete + the function's own
    wru: float
    rru: float
    log_bytes: float  # both functions' application and EMF lines, with CloudWatch's per-event overhead


def path_lines(path: PathInputs, *, webhook_mb: int, replier_mb: int) -> dict[str, float]:
    """USD per million notifications taking ``path``, by bill line."""
    invocations = 1 + path.replier_invocations
    logs = path.log_bytes + invocations * platform_bytes()
    return {
        "API Gateway (REST)": price("api_rest"),
        "Lambda requests": invocations * price("lambda_request"),
        "Lambda GB-s, webhook": math.ceil(path.webhook_ms)
        / 1000
        * webhook_mb
        / 1024
        * price("lambda_gb_s")
        * 1e6,
        "Lambda GB-s, replier": path.replier_ms / 1000 * replier_mb / 1024 * price("lambda_gb_s") * 1e6,
        "SQS": path.sqs_requests * price("sqs_request"),
        "DynamoDB writes": path.wru * price("ddb_wru"),
        "DynamoDB reads": path.rru * price("ddb_rru"),
        "CloudWatch Logs ingestion": logs / 1e9 * price("logs_ingest") * 1e6,
    }


def at_fill(
    path: PathInputs, *, replier_ms: float, records_per_invocation: float, wru: float | None = None
) -> PathInputs:
    """``path`` at another batch fill: its billed time, its invocations, and the event source's receive
    and delete (one each per invocation, shared by its records) at ``records_per_invocation``.

    ``path.sqs_requests`` holds the webhook's ``SendMessage`` and the function's own requests beside the
    event source's share at the template's full batches; only that share changes with the fill.
    """
    invocations = 1 / records_per_invocation
    esm_share = 2 * path.replier_invocations
    return replace(
        path,
        replier_ms=replier_ms,
        replier_invocations=invocations,
        sqs_requests=path.sqs_requests - esm_share + 2 * invocations,
        wru=path.wru if wru is None else wru,
    )


def total(path: PathInputs, *, webhook_mb: int, replier_mb: int) -> float:
    """USD per million notifications taking ``path``: the sum of its bill lines."""
    return sum(path_lines(path, webhook_mb=webhook_mb, replier_mb=replier_mb).values())


# ---- a month at a volume -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MonthInputs:
    """What a month costs beside the notifications themselves."""

    traces_per_sampled_notification: float  # X-Ray bills traces; the replier's may be a trace of its own
    webhook_seconds: float  # per notification, for the average number of warm containers
    replier_seconds: float  # per notification (the mix of paths), likewise
    state_bytes_per_reply: float  # ledger entry + thread item, kept LEDGER_TTL (30 days)
    idempotency_bytes: float  # per notification, kept 24 h
    log_bytes_per_notification: float
    custom_metrics: int
    alarm_metrics: int


def month_lines(per_day: float, month: MonthInputs) -> dict[str, float]:
    """USD per month at ``per_day`` notifications, the lines that are not per notification."""
    notifications = per_day * 30
    per_second = per_day / 86_400
    reservoir, rate = sampling()
    reservoir_traces = min(notifications, reservoir * MONTH_SECONDS)
    sampled = reservoir_traces + rate * (notifications - reservoir_traces)
    containers = max(1.0, per_second * month.webhook_seconds) + max(1.0, per_second * month.replier_seconds)
    secret_reads = containers * MONTH_SECONDS / secrets_max_age_seconds()
    replies_month = notifications / 2
    state_gb = replies_month * month.state_bytes_per_reply / 1e9  # 30 days kept: one month's replies
    idempotency_gb = per_day * month.idempotency_bytes / 1e9
    log_gb = notifications * month.log_bytes_per_notification / 1e9
    retention_months = log_retention_days() / 30
    return {
        "X-Ray traces": sampled * month.traces_per_sampled_notification / 1e6 * price("xray_trace"),
        "Secrets Manager": secret_reads / 10_000 * price("secrets_calls") + SECRETS * price("secret_month"),
        "DynamoDB storage and PITR": state_gb * (price("ddb_storage") + price("ddb_pitr"))
        + idempotency_gb * price("ddb_storage"),
        "CloudWatch Logs storage (uncompressed, an upper bound)": log_gb
        * retention_months
        * price("logs_storage"),
        "CloudWatch metrics, alarms, dashboard, Contributor Insights": month.custom_metrics
        * price("metric_month")
        + month.alarm_metrics * price("alarm_metric_month")
        + price("dashboard_month")
        + price("insight_rule_month"),
        "KMS key (alerts topic)": price("kms_key_month"),
    }


def monthly(per_day: float, first: dict[str, float], outbound: dict[str, float], month: MonthInputs) -> float:
    """USD per month: half first replies, half own outbound, and the month's own lines."""
    per_notification = (sum(first.values()) + sum(outbound.values())) / 2
    return per_day * 30 / 1e6 * per_notification + sum(month_lines(per_day, month).values())


# ---- the same work elsewhere -------------------------------------------------------------------------


@dataclass(frozen=True)
class Alternative:
    name: str
    usd_per_million: float
    how: str


def alternatives(
    first: PathInputs,
    first_lines: dict[str, float],
    *,
    replier_mb: int,
    batch_size: int,
    a_replier_ms: float,
    a_invocations: float,
    operations: int,
    checkpoint_bytes: float,
    transitions: int,
) -> list[Alternative]:
    """The first reply's replier side on other services, everything else (webhook, tables) the same.

    ``first`` is the template's option (b): a batch's threads at once. The waits are the same
    everywhere: a thread read, a draft and a send take what they take. What differs is what the
    waiting is billed as; a service that runs one record per execution waits for one record's calls,
    which is what (a), batches of one, bills (``a_replier_ms``).
    """
    shared = (
        sum(first_lines.values())
        - first_lines["Lambda GB-s, replier"]
        - first.replier_invocations * price("lambda_request")
    )
    seconds = a_replier_ms / 1000  # one record's waits
    express_gb_s = math.ceil(seconds * 10) / 10 * 64 / 1024 * price("sfn_express_gb_s") * 1e6
    return [
        Alternative(
            f"Lambda, (b) the template: batches of {batch_size}, a batch's threads at once "
            f"({first.replier_ms / 1000:.2f} s billed per notification at full batches, measured)",
            sum(first_lines.values()),
            f"one invocation waits for up to {batch_size} threads' calls at once, at {replier_mb} MB",
        ),
        Alternative(
            f"Lambda, (a) batches of one ({a_replier_ms / 1000:.2f} s billed per notification, measured)",
            shared
            + a_replier_ms / 1000 * replier_mb / 1024 * price("lambda_gb_s") * 1e6
            + a_invocations * price("lambda_request"),
            f"every record holds an invocation for its whole wait, at {replier_mb} MB",
        ),
        Alternative(
            "Lambda durable functions",
            sum(first_lines.values())
            + operations * price("durable_operation")
            + checkpoint_bytes / 1e9 * price("durable_data_written") * 1e6,
            f"the template's compute and {operations} steps checkpointed per reply, "
            f"{checkpoint_bytes / 1000:.0f} KB written; an HTTP call inside a step is still billed "
            "compute: only waits and callbacks suspend it",
        ),
        Alternative(
            "Step Functions Standard",
            shared + transitions * price("sfn_standard_transition") / 1000 * 1e6 + price("pipes_request"),
            f"{transitions} state transitions per reply (HTTP Tasks to Nylas, Bedrock and DynamoDB "
            "integrations: no compute while waiting), started from SQS by EventBridge Pipes",
        ),
        Alternative(
            "Step Functions Express",
            shared + price("sfn_express_request") + express_gb_s + price("pipes_request"),
            f"one execution per record: its {seconds:.1f} s of waits billed at 64 MB in 100 ms steps, plus a "
            "request; started by EventBridge Pipes; at-least-once, at most 5 minutes",
        ),
    ]


# ---- a reply's files (issue 44) ----------------------------------------------------------------------


def reply_files_retention_days() -> int:
    """The reply files bucket's lifecycle expiry (template.yaml, ``ReplyFilesBucket``)."""
    bucket = load_template()["Resources"]["ReplyFilesBucket"]["Properties"]
    [rule] = [r for r in bucket["LifecycleConfiguration"]["Rules"] if r["Id"] == "ExpireReplyFiles"]
    return int(rule["ExpirationInDays"])


def reply_file_lines(files: int, total_bytes: int, *, later_records: float) -> dict[str, float]:
    """USD per million replies carrying ``files`` files of ``total_bytes`` together.

    Counted (tests/integration/test_budgets.py): one PutObject per file before the intent is stored, no
    GetObject when the same record sends, one GetObject per file for each later record that sends the
    stored reply (``later_records``: such records per reply). Stored: every object until the
    lifecycle expires it (S3 bills the whole time, whether the reply went out at once or not). KMS: the
    bucket's S3 Bucket Key asks KMS for a data key per key lifetime, not per object: left out.
    """
    months = reply_files_retention_days() * 24 * 3600 / MONTH_SECONDS
    return {
        "S3 PUT": files * price("s3_put") * 1_000,
        "S3 GET": files * later_records * price("s3_get") * 1_000,
        "S3 storage": total_bytes / 1e9 * months * price("s3_storage") * 1_000_000,
    }
