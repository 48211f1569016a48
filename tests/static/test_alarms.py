"""Alarms that mean something, and the template's protections and policies, read from template.yaml.

Why each test: an alarm that pages for what a retry absorbs teaches people to ignore pages, and a
missing one leaves a failure unseen. Each test states what one alarm must count and over which
window, or what one resource must survive; ``tests/static/test_template_security.py`` checks what every
alarm shares (the topic, a runbook section, metrics the code emits, the dashboard).
"""

import json
import re
from typing import Any

import pytest

from ops.template import TEMPLATE_PATH, load_template
from replyonce.adapters.nylas import RETRYABLE_STATUSES
from replyonce.answers import Answer, Proof, proof_of
from replyonce.reasons import DeferReason, RejectReason

ROOT = TEMPLATE_PATH.parent
CONSUMER = ROOT / "layers" / "replyonce" / "replyonce" / "shell" / "consumer.py"


def _resources() -> dict[str, Any]:
    return load_template()["Resources"]


def _alarms() -> dict[str, dict[str, Any]]:
    return {n: r["Properties"] for n, r in _resources().items() if r["Type"] == "AWS::CloudWatch::Alarm"}


def _metrics(alarm: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["Id"]: m for m in alarm.get("Metrics", [])}


def _stat(alarm: dict[str, Any], metric_id: str) -> tuple[str, str, dict[str, Any]]:
    """(namespace, metric name, dimensions) of one ``MetricStat`` of a metric-math alarm."""
    metric = _metrics(alarm)[metric_id]["MetricStat"]["Metric"]
    return metric["Namespace"], metric["MetricName"], {d["Name"]: d["Value"] for d in metric["Dimensions"]}


def _returned(alarm: dict[str, Any]) -> str:
    [expression] = [m["Expression"] for m in alarm["Metrics"] if m.get("ReturnData")]
    return expression


def _window_seconds(alarm: dict[str, Any]) -> int:
    """How long a condition must hold (or be counted over) before the alarm fires."""
    period = alarm.get("Period") or max(
        m.get("Period") or m.get("MetricStat", {}).get("Period", 0) for m in alarm["Metrics"]
    )
    datapoints = alarm.get("DatapointsToAlarm", alarm["EvaluationPeriods"])
    if isinstance(datapoints, dict):  # a parameter (SilenceAlarmHours): its default
        datapoints = load_template()["Parameters"][datapoints["Ref"]]["Default"]
    return int(period) * int(datapoints)


def _python(expression: str) -> str:
    """A CloudWatch metric-math expression as Python: ``IF(c, a, b)`` lazily, ``FILL``, ``AND``, ``OR``."""
    out, i = [], 0
    while i < len(expression):
        if expression.startswith("IF(", i):
            depth, j, args, start = 1, i + 3, [], i + 3
            while depth:
                if expression[j] == "(":
                    depth += 1
                elif expression[j] == ")":
                    depth -= 1
                elif expression[j] == "," and depth == 1:
                    args.append(expression[start:j])
                    start = j + 1
                j += 1
            condition, then, otherwise = [*args, expression[start : j - 1]]
            out.append(f"(({_python(then)}) if ({_python(condition)}) else ({_python(otherwise)}))")
            i = j
        else:
            out.append(expression[i])
            i += 1
    return "".join(out).replace("FILL(", "_fill(").replace(" AND ", " and ").replace(" OR ", " or ")


def _evaluate(alarm: dict[str, Any], observed: dict[str, float]) -> float:
    """What an alarm's returned expression gives for one period's metrics (an id left out: no data)."""
    metrics = _metrics(alarm)

    def value(metric_id: str) -> float | None:
        metric = metrics[metric_id]
        if "MetricStat" in metric:
            return observed.get(metric_id)
        expression = metric["Expression"]
        names = {i: value(i) for i in metrics if re.search(rf"\b{i}\b", expression)}
        scope = {"_fill": lambda v, default: default if v is None else v, **names}
        return eval(_python(expression), {"__builtins__": {}}, scope)  # noqa: S307 - the template's own math

    [returned] = [i for i, m in metrics.items() if m.get("ReturnData")]
    result = value(returned)
    assert result is not None
    return result


def _threshold(alarm: dict[str, Any]) -> float:
    threshold = alarm["Threshold"]
    if isinstance(threshold, dict):  # a parameter: its default
        threshold = load_template()["Parameters"][threshold["Ref"]]["Default"]
    return float(threshold)


# Alarms on which one 5-minute datapoint is news, and why. Every other alarm needs its condition over
# at least 10 minutes: a retry absorbs anything shorter.
ONE_DATAPOINT_IS_NEWS = {
    "DeadLetterQueueAlarm": "letters are waiting: a state, not an event",
    "DeadLetterArrivalsAlarm": "a notification no retry will answer arrived",
    "WebhookSecretMismatchAlarm": "every delivery fails its signature: dropped, never retried by Nylas",
    "OldestMessageAlarm": "its threshold is itself a wait of 30 minutes",
    "WebhookServerErrorAlarm": "a rate over at least 5 requests; Nylas' retries end in 10-20 minutes",
    "AlertsUndeliveredAlarm": "an alarm reached nobody",
    "AgentCallCapReachedAlarm": "counted once per grant and day, when its mail starts going to people",
    "GrantExpiredAlarm": "a grant's mail waits until its owner re-authenticates it: no retry ends it",
}


def test_alarms_fire_on_a_condition_that_lasts_not_on_one_retried_event():
    for name, alarm in _alarms().items():
        if name in ONE_DATAPOINT_IS_NEWS:
            continue
        assert _window_seconds(alarm) >= 600, f"{name}: {_window_seconds(alarm)} s is one retried event"


def test_replier_errors_are_a_rate_of_unexpected_failures_over_15_minutes():
    alarm = _alarms()["ReplierErrorsAlarm"]
    assert _stat(alarm, "crashed")[:2] == ("AWS/Lambda", "Errors")
    assert _stat(alarm, "failed") == (
        "ReplyOnce",
        "RecordDeferred",
        {"reason": DeferReason.UNEXPECTED.value, "service": "replyonce-replier"},
    )
    # Deferrals by design (a busy thread, Nylas 429/5xx, a send that may have gone out) are other
    # reasons of the same metric: the alarm counts exactly one.
    deferred = [
        i for i, m in _metrics(alarm).items() if "MetricStat" in m and _stat(alarm, i)[1] == "RecordDeferred"
    ]
    assert deferred == ["failed"]
    assert _window_seconds(alarm) == 900
    assert alarm["Threshold"] == {"Ref": "ReplierErrorAlarmPercent"}


def test_replier_errors_are_a_share_of_records_whatever_the_batch_fill():
    alarm = _alarms()["ReplierErrorsAlarm"]
    threshold = _threshold(alarm)
    batch_size = _resources()["ReplierFunction"]["Properties"]["Events"]["Notifications"]["Properties"][
        "BatchSize"
    ]
    # 2% of records failing unexpectedly is below the 5% threshold in batches of ten as in batches of
    # one (divided by invocations, batches of ten read it as 20% and paged).
    for per_invocation in (1, batch_size):
        invocations = 1000 // per_invocation
        period = {"records": 1000, "invocations": invocations, "crashed": 0, "failed": 20}
        assert _evaluate(alarm, period) == pytest.approx(2.0)
        assert _evaluate(alarm, period) < threshold
        # 10% of records is above it, at either fill.
        assert _evaluate(alarm, {**period, "failed": 100}) > threshold
    # A crashed invocation fails every record of its batch: 3 crashed batches of ten are 10% of 300.
    crashed = {"records": 300, "invocations": 30, "crashed": 3}
    assert _evaluate(alarm, crashed) == pytest.approx(10.0)
    # A quiet period: one failure among four records is not a rate; no traffic, no datapoint to page.
    assert _evaluate(alarm, {"records": 4, "invocations": 4, "failed": 1}) == 0
    assert _evaluate(alarm, {}) == 0
    # Records are what SQS handed the replier, counted by SQS even for an invocation that timed out.
    assert _stat(alarm, "records") == (
        "AWS/SQS",
        "NumberOfMessagesReceived",
        {"QueueName": {"Fn::GetAtt": ["NotificationQueue", "QueueName"]}},
    )


def _statuses(alarm: dict[str, Any]) -> set[str]:
    return {
        dims["status"]
        for i, m in _metrics(alarm).items()
        if "MetricStat" in m
        for _, metric, dims in [_stat(alarm, i)]
        if metric == "ReplyFailed"
    }


def test_nylas_4xx_on_send_page_by_type():
    alarms = _alarms()
    refused, rejected = _statuses(alarms["RepliesRefusedAlarm"]), _statuses(alarms["RepliesRejectedAlarm"])
    # The grant's own refusals repeat for every reply; a message's are that message's. A 403 (and
    # any account error) is not a refusal of the reply: it waits, counted as AccountLimited.
    assert refused == {"404"}
    assert _stat(alarms["RepliesRefusedAlarm"], "limited")[1] == "AccountLimited"
    assert proof_of(Answer(status=403, error_type="forbidden")) is Proof.ACCOUNT_LIMITED
    assert rejected == {"400", "402", "413", "422", "agent"}
    assert not refused & rejected
    # Every one of them is a final answer in the product (retried statuses are other alarms).
    assert not {int(s) for s in refused | rejected if s.isdigit()} & set(RETRYABLE_STATUSES)
    assert alarms["RepliesRefusedAlarm"]["Threshold"] == 2
    # Rejections of single messages page only as a share of the hour's replies, at least three.
    assert "ReplySent" in {_stat(alarms["RepliesRejectedAlarm"], "sent")[1]}
    assert "rejected >= 3" in _returned(alarms["RepliesRejectedAlarm"])
    # The retried statuses that still mean "every call fails": a bad API key, a rate above the plan.
    for name, reason in (
        ("NylasUnauthorizedAlarm", DeferReason.UNAUTHORIZED),
        ("NylasThrottlingAlarm", DeferReason.RATE_LIMITED),
    ):
        alarm = alarms[name]
        assert (alarm["MetricName"], alarm["Dimensions"][0]["Value"]) == ("RecordDeferred", reason.value)
    assert {401, 429} <= set(RETRYABLE_STATUSES)


def test_a_failing_agent_pages_as_a_share_of_its_calls():
    alarm = _alarms()["AgentFailingAlarm"]
    # The replier counts every call of the agent, and defers each one that fails (Bedrock throttled,
    # a 5xx, a call slower than AgentTimeoutSeconds) under one reason.
    assert _stat(alarm, "asked") == ("ReplyOnce", "AgentAsked", {"service": "replyonce-replier"})
    assert _stat(alarm, "failed") == (
        "ReplyOnce",
        "RecordDeferred",
        {"reason": DeferReason.AGENT_FAILED.value, "service": "replyonce-replier"},
    )
    assert (
        'count("AgentAsked")'
        in (ROOT / "layers" / "replyonce" / "replyonce" / "shell" / "replier.py").read_text()
    )
    threshold = _threshold(alarm)
    # A throttled model: a fifth of the calls retried for a quarter of an hour pages; one in twenty does not.
    assert _evaluate(alarm, {"asked": 100, "failed": 20}) > threshold
    assert _evaluate(alarm, {"asked": 100, "failed": 5}) < threshold
    # Two failures of three calls at night are retried, not a rate.
    assert _evaluate(alarm, {"asked": 3, "failed": 2}) == 0
    assert _window_seconds(alarm) == 900


def test_a_lost_thread_lease_opens_a_ticket_not_a_page():
    alarm = _alarms()["LeaseLostAlarm"]
    # Both ways a holder learns its lease was taken over: the fence refused its release or settlement
    # (LeaseLost), or its intent write (a deferral of its own reason).
    assert _stat(alarm, "lost") == ("ReplyOnce", "LeaseLost", {"service": "replyonce-replier"})
    assert _stat(alarm, "refused") == (
        "ReplyOnce",
        "RecordDeferred",
        {"reason": DeferReason.LEASE_LOST.value, "service": "replyonce-replier"},
    )
    # Both are the core's: what a release or a settlement answered (core.learn), and the deferral of a
    # write the lease no longer covered (core.failure).
    core = ROOT / "layers" / "replyonce" / "replyonce" / "core"
    assert (core / "learn.py").read_text().count('metric="LeaseLost"') == 2
    assert "DeferReason.LEASE_LOST" in (core / "failure.py").read_text()
    # One in an hour is worth a look (the lease is meant to outlast every record); none is silence.
    assert _evaluate(alarm, {"lost": 1}) > alarm["Threshold"]
    assert _evaluate(alarm, {"refused": 1}) > alarm["Threshold"]
    assert _evaluate(alarm, {}) <= alarm["Threshold"]
    # A ticket: counted over the hour, said so, and no "OK" notification when an hour passes without one.
    assert _window_seconds(alarm) == 3600
    assert alarm["AlarmDescription"].startswith("Ticket, not a page")
    assert "OKActions" not in alarm


def test_a_secret_out_of_step_and_a_forged_burst_page_apart():
    alarms = _alarms()
    mismatch, forged = alarms["WebhookSecretMismatchAlarm"], alarms["ForgedSignaturesAlarm"]
    webhook = {"service": "replyonce-webhook"}
    for alarm in (mismatch, forged):
        assert _stat(alarm, "invalid") == (
            "ReplyOnce",
            "NotificationRejected",
            {"reason": RejectReason.SIGNATURE_INVALID.value, **webhook},
        )
        assert _stat(alarm, "accepted") == ("ReplyOnce", "NotificationAccepted", webhook)
    assert _stat(forged, "missing")[2]["reason"] == RejectReason.SIGNATURE_MISSING.value

    def pages(alarm: dict[str, Any], period: dict[str, float]) -> bool:
        return _evaluate(alarm, period) > _threshold(alarm)

    # The secret out of step: every delivery of the period fails, none is accepted.
    out_of_step = {"invalid": 12, "accepted": 0}
    assert pages(mismatch, out_of_step)
    assert not pages(forged, out_of_step)
    # A forged burst: hundreds of bad signatures while Nylas' deliveries are still accepted.
    burst = {"invalid": 400, "missing": 150, "accepted": 300}
    assert pages(forged, burst)
    assert not pages(mismatch, burst)
    # A scanner's probe or two in a quiet night is neither.
    for alarm in (mismatch, forged):
        assert not pages(alarm, {"invalid": 1, "missing": 2, "accepted": 0})
        assert not pages(alarm, {"invalid": 2, "accepted": 40})
    # Nothing forged is lost, so a burst is judged over 15 minutes; a mismatch drops every delivery.
    assert _window_seconds(forged) == 900
    assert _window_seconds(mismatch) == 300
    assert "SignatureRejectedAlarm" not in alarms  # one alarm for both causes, replaced


def test_throttles_are_a_share_of_each_functions_invocations():
    alarms = _alarms()
    for name, function in (
        ("WebhookThrottlesAlarm", "WebhookFunction"),
        ("ReplierThrottlesAlarm", "ReplierFunction"),
    ):
        alarm = alarms[name]
        for metric_id, metric in (("invocations", "Invocations"), ("throttles", "Throttles")):
            assert _stat(alarm, metric_id) == ("AWS/Lambda", metric, {"FunctionName": {"Ref": function}})
        assert "100 * FILL(throttles, 0) /" in _returned(alarm)
        assert alarm["Threshold"] > 0
    assert "LambdaThrottlesAlarm" not in alarms  # one alarm at threshold 0 for both, replaced


def test_4xx_api_gateway_answers_itself_on_the_webhook_have_an_alarm_named_for_them():
    alarms = _alarms()
    # API Gateway has no metric of 429s alone: what is counted is every 4xx it answered before the
    # function (the stage throttle's 429, a body over 10 MB, a WAF block), and the name says so.
    assert "WebhookThrottledAlarm" not in alarms
    alarm = alarms["WebhookGatewayRejectedAlarm"]
    assert alarm["AlarmName"] == {"Fn::Sub": "${AWS::StackName}-webhook-gateway-4xx"}
    assert "docs/operations.md#webhook-gateway-4xx" in alarm["AlarmDescription"]
    # Per-method metrics exist only with detailed metrics on the stage.
    [setting] = _resources()["WebhookApi"]["Properties"]["MethodSettings"]
    assert setting["MetricsEnabled"] is True
    for metric_id, method in (("post", "POST"), ("post_4xx", "POST"), ("get_4xx", "GET")):
        namespace, _, dims = _stat(alarm, metric_id)
        assert namespace == "AWS/ApiGateway"
        assert (dims["Resource"], dims["Method"], dims["Stage"]) == ("/webhook", method, "v1")
    # Minus the 4xx the function answered itself: what is left API Gateway answered.
    assert _stat(alarm, "rejected")[:2] == ("ReplyOnce", "RequestRejected")
    threshold = _threshold(alarm)
    # 30 of 1,000 POSTs throttled while the function itself refused 100 forged ones: 3%, pages.
    period = {"post": 1000, "post_4xx": 130, "get_4xx": 0, "rejected": 100}
    assert _evaluate(alarm, period) == pytest.approx(3.0)
    assert _evaluate(alarm, period) > threshold
    # Only the function's own 401s: nothing API Gateway answered.
    assert _evaluate(alarm, {**period, "post_4xx": 100}) == 0


def test_dynamodb_throttles_and_system_errors_cover_both_tables():
    alarms = _alarms()
    throttles = alarms["DynamoDbThrottlesAlarm"]
    seen = {
        (_stat(throttles, i)[1], _stat(throttles, i)[2]["TableName"]["Ref"])
        for i, m in _metrics(throttles).items()
        if "MetricStat" in m
    }
    assert seen == {
        (metric, table)
        for metric in ("ReadThrottleEvents", "WriteThrottleEvents")
        for table in ("IdempotencyTable", "StateTable")
    }
    [query] = alarms["DynamoDbSystemErrorsAlarm"]["Metrics"]
    sql = query["Expression"]["Fn::Sub"]
    # SystemErrors is per operation: one Metrics Insights query sums every operation of both tables.
    assert sql.startswith('SELECT SUM(SystemErrors) FROM SCHEMA("AWS/DynamoDB", Operation, TableName)')
    assert "'${IdempotencyTable}'" in sql
    assert "'${StateTable}'" in sql
    assert query["Period"] == 300


def test_replier_duration_alarms_at_80_percent_of_its_timeout():
    alarm = _alarms()["ReplierDurationAlarm"]
    timeout = _resources()["ReplierFunction"]["Properties"]["Timeout"]
    assert (alarm["Namespace"], alarm["MetricName"], alarm["ExtendedStatistic"]) == (
        "AWS/Lambda",
        "Duration",
        "p99",
    )
    assert alarm["Threshold"] == 0.8 * timeout * 1000  # Duration is in milliseconds


def test_an_alert_subscription_nobody_confirmed_is_detected_from_what_sns_delivered():
    alarm = _alarms()["AlertsUndeliveredAlarm"]
    topic = {"Fn::GetAtt": ["AlertTopic", "TopicName"]}
    for metric_id, metric in (
        ("published", "NumberOfMessagesPublished"),
        ("delivered", "NumberOfNotificationsDelivered"),
        ("failed", "NumberOfNotificationsFailed"),
    ):
        assert _stat(alarm, metric_id) == ("AWS/SNS", metric, {"TopicName": topic})
    # SNS delivers nothing to a pending subscription: published with none delivered is nobody told.
    assert "FILL(published, 0) > 0 AND FILL(delivered, 0) == 0" in _returned(alarm)


def _rule_body() -> dict[str, Any]:
    body = _resources()["RecordsRetriedRule"]["Properties"]["RuleBody"]["Fn::Sub"]
    return json.loads(body.replace("${ReplierLogGroup}", "/replyonce/stack/replier"))


def test_a_record_that_keeps_failing_is_seen_where_the_oldest_message_age_is_blind():
    body = _rule_body()
    assert body["LogGroupNames"] == ["/replyonce/stack/replier"]
    assert body["Contribution"]["Keys"] == ["$.notification_id"]
    line_filter, reason_filter = body["Contribution"]["Filters"]
    assert line_filter["Match"] == "$.message"
    consumer = CONSUMER.read_text()
    # The rule matches the consumer's one deferral line: renaming it silently blinds the alarm.
    assert line_filter["In"] == ["record deferred; it will be retried"]
    assert '"record deferred; it will be retried"' in consumer
    assert "notification_id=notification.id" in consumer  # the key every one of those lines carries
    # Left out: waits by design that may last longer than a record's failures would (a holder keeps
    # a thread for a record's budget; a duplicate waits for its original's hold, up to the function's
    # Timeout, spread over its receives; a send that may have gone out waits for the mailbox; an
    # account out of quota waits for hours; a full reply budget waits for Nylas' queue to send or
    # fail its replies; a person's draft holds the thread for a bounded wait). Every other reason counts.
    assert reason_filter["Match"] == "$.reason"
    left_out = {DeferReason(value) for value in reason_filter["NotIn"]}
    assert left_out == {
        DeferReason.THREAD_BUSY,
        DeferReason.NOTIFICATION_IN_PROGRESS,
        DeferReason.SEND_UNCERTAIN,
        DeferReason.ACCOUNT_LIMITED,
        DeferReason.REPLY_PENDING,
        DeferReason.PERSON_DRAFTING,
    }
    alarm = _alarms()["RecordRetriedRepeatedlyAlarm"]
    [query] = alarm["Metrics"]
    assert query["Expression"]["Fn::Sub"] == (
        "INSIGHT_RULE_METRIC('${RecordsRetriedRule.RuleName}', 'MaxContributorValue')"
    )
    # Fewer than maxReceiveCount (8): it fires before the record is dead-lettered.
    max_receives = _resources()["NotificationQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"]
    assert 3 < alarm["Threshold"] < max_receives


# ---- protections and policies --------------------------------------------------------------------


def test_tables_use_the_free_aws_owned_key_and_pitr_only_where_a_restore_restores_something():
    resources = _resources()
    for table in ("IdempotencyTable", "StateTable"):
        assert resources[table]["Properties"]["SSESpecification"] == {"SSEEnabled": False}, table
    # The ledger and thread state are what a restore brings back; 24 h of idempotency records are not.
    assert "PointInTimeRecoverySpecification" not in resources["IdempotencyTable"]["Properties"]
    recovery = resources["StateTable"]["Properties"]["PointInTimeRecoverySpecification"]
    assert recovery == {"PointInTimeRecoveryEnabled": True}
    assert resources["StateTable"]["Properties"]["DeletionProtectionEnabled"] is True


def test_queue_log_groups_and_key_have_deliberate_deletion_and_replacement_policies():
    resources = _resources()
    assert (
        resources["NotificationQueue"]["DeletionPolicy"],
        resources["NotificationQueue"]["UpdateReplacePolicy"],
    ) == (
        "Retain",
        "Retain",
    )
    for name, resource in resources.items():
        if resource["Type"] != "AWS::Logs::LogGroup":
            continue
        # Named after the stack: retained, it would block the next deploy of the same stack name.
        assert "${AWS::StackName}" in resource["Properties"]["LogGroupName"]["Fn::Sub"], name
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Delete", "Retain"), name
    key = resources["AlertsKey"]
    # It encrypts alarm messages in flight, nothing at rest: deleted, after the shortest window.
    assert (key["DeletionPolicy"], key["UpdateReplacePolicy"]) == ("Delete", "Delete")
    assert key["Properties"]["PendingWindowInDays"] == 7


def test_every_stateful_resource_states_its_deletion_policy():
    stateful = {
        "AWS::SQS::Queue",
        "AWS::DynamoDB::Table",
        "AWS::Logs::LogGroup",
        "AWS::KMS::Key",
        "AWS::SecretsManager::Secret",
    }
    for name, resource in _resources().items():
        if resource["Type"] in stateful:
            assert resource.get("DeletionPolicy") in ("Retain", "Delete"), name
            assert resource.get("UpdateReplacePolicy") in ("Retain", "Delete"), name


def test_traces_are_sampled_by_a_rule_of_the_stack_and_both_functions_are_traced_by_lambda():
    resources = _resources()
    rule = resources["TraceSamplingRule"]["Properties"]["SamplingRule"]
    # API Gateway decides; the webhook and (through SQS) the replier follow its decision.
    assert (rule["ServiceType"], rule["ServiceName"]) == (
        "AWS::ApiGateway::Stage",
        {"Fn::Sub": "${AWS::StackName}/v1"},
    )
    assert rule["FixedRate"] <= 0.05  # below the default rule's 5%
    assert rule["ReservoirSize"] >= 1  # still a trace every second when traffic is low
    # "replyonce-" + the first 8 hex digits of the stack's id: within X-Ray's 32 characters.
    assert len("replyonce-") + 8 <= 32
    # Both functions are traced by the Lambda service (its segment, the trace id on to SQS); no
    # setting of the X-Ray SDK's remains, since no function imports it (tests/integration/test_budgets.py).
    assert load_template()["Globals"]["Function"]["Tracing"] == "Active"
    for function in ("WebhookFunction", "ReplierFunction"):
        variables = resources[function]["Properties"]["Environment"]["Variables"]
        assert not [name for name in variables if name.startswith("POWERTOOLS_TRACE")], function


def test_the_runbook_has_a_section_for_every_alarm_added_here():
    runbook = (ROOT / "docs" / "operations.md").read_text()
    headings = {
        re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", runbook, re.M)
    }
    for name, alarm in _alarms().items():
        anchor = re.search(r"docs/operations\.md#([\w-]+)", alarm["AlarmDescription"])
        assert anchor, name
        assert anchor.group(1) in headings, name
    # Alarm names are the stack's: each one distinct.
    names = [a["AlarmName"]["Fn::Sub"] for a in _alarms().values()]
    assert len(set(names)) == len(names)


def test_a_fenced_region_that_cannot_read_its_record_pages_and_a_standby_does_not():
    resource = _resources()["RegionIsolatedAlarm"]
    # Only where the fence is deployed: without ActiveRegionTableName nothing reads the record.
    assert resource["Condition"] == "HasActiveRegionFence"
    alarm = resource["Properties"]
    assert _stat(alarm, "isolated") == (
        "ReplyOnce",
        "RecordDeferred",
        {"reason": DeferReason.REGION_ISOLATED.value, "service": "replyonce-replier"},
    )
    # The standby's region_passive deferrals are the design working, never this alarm's count.
    watched = {_stat(alarm, i)[2].get("reason") for i, m in _metrics(alarm).items() if "MetricStat" in m}
    assert watched == {DeferReason.REGION_ISOLATED.value}
    # A Region that fails closed for a quarter of an hour sends nothing: a page, with its recovery.
    assert _evaluate(alarm, {"isolated": 1}) > _threshold(alarm)
    assert _evaluate(alarm, {}) <= _threshold(alarm)
    assert _window_seconds(alarm) == 900
    assert alarm["OKActions"] == [{"Ref": "AlertTopic"}]


def test_the_agent_call_cap_alarm_counts_each_grant_crossing_its_cap_once_and_is_a_ticket():
    alarm = _alarms()["AgentCallCapReachedAlarm"]
    # The metric the core earns once per grant and UTC day (its first refused burst: replyonce.core.learn).
    assert (alarm["Namespace"], alarm["MetricName"]) == ("ReplyOnce", "AgentCallCapReached")
    assert (alarm["Statistic"], alarm["Threshold"], alarm["ComparisonOperator"]) == (
        "Sum",
        0,
        "GreaterThanThreshold",
    )
    assert "OKActions" not in alarm  # a ticket: the grant's day ends at 00:00 UTC, not when a period does


def test_an_expired_grant_pages_once_per_expiry_counted_by_the_replier():
    # One grant.expired is news: its mail waits until a person re-authenticates the grant (issue 42).
    alarm = _alarms()["GrantExpiredAlarm"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("ReplyOnce", "GrantExpired")
    assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == {"service": "replyonce-replier"}
    assert alarm["Statistic"] == "Sum"
    assert alarm["Threshold"] == 0
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["TreatMissingData"] == "notBreaching"
