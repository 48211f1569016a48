"""The template's security and operations contract: cfn-lint, checkov, least privilege, alarms and dashboard.

Why these are tests rather than a CI step beside them: `make test` is what CI runs, and each of these
fails for a reason a reviewer would otherwise have to spot by eye — a new checkov finding, a skip
without a justification, a wildcard in a role, an alarm on a metric the code no longer emits, a
runbook section that an alarm points at but that does not exist.

checkov runs from its own virtualenv (``.venv/checkov``, made by ``make venv`` from
requirements-checkov.txt): it pins boto3 1.35 and packaging < 24, which cannot share an environment
with aws-sam-cli (boto3 1.43) and pytest 9.
It runs offline: ``--skip-download``, no update check, and any HTTP(S) request it might still make
goes to a closed loopback port.
"""

import ast
import fnmatch
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cfnlint.api import ManualArgs, lint_file

from ops.template import TEMPLATE_PATH, load_template
from replyonce.observability import SKIP_METRIC

ROOT = TEMPLATE_PATH.parent
LAYER = ROOT / "layers" / "replyonce" / "replyonce"
RUNBOOK = ROOT / "docs" / "operations.md"

# ---- checkov in its own environment --------------------------------------------------------------------

CHECKOV_REQUIREMENTS = ROOT / "requirements-checkov.txt"
CHECKOV_VENV = ROOT / ".venv" / "checkov"  # inside .venv: `make clean` removes it too

# Each skip is justified inline in template.yaml (Metadata: checkov: skip: comment); this list makes
# a new skip a visible change to review rather than a silent one.
EXPECTED_SKIPS = {
    ("CKV_AWS_76", "AWS::Serverless::Api.WebhookApi"),
    ("CKV_AWS_120", "AWS::Serverless::Api.WebhookApi"),
    ("CKV_AWS_116", "AWS::Serverless::Function.WebhookFunction"),
    ("CKV_AWS_117", "AWS::Serverless::Function.WebhookFunction"),
    ("CKV_AWS_173", "AWS::Serverless::Function.WebhookFunction"),
    ("CKV_AWS_115", "AWS::Serverless::Function.ReplierFunction"),
    ("CKV_AWS_116", "AWS::Serverless::Function.ReplierFunction"),
    ("CKV_AWS_117", "AWS::Serverless::Function.ReplierFunction"),
    ("CKV_AWS_173", "AWS::Serverless::Function.ReplierFunction"),
    ("CKV_AWS_27", "AWS::SQS::Queue.NotificationQueue"),
    ("CKV_AWS_27", "AWS::SQS::Queue.NotificationDeadLetterQueue"),
    ("CKV_AWS_119", "AWS::DynamoDB::Table.IdempotencyTable"),
    ("CKV_AWS_28", "AWS::DynamoDB::Table.IdempotencyTable"),
    ("CKV_AWS_119", "AWS::DynamoDB::Table.StateTable"),
    ("CKV_AWS_119", "AWS::DynamoDB::Table.GrantRegistryTable"),
    ("CKV_AWS_149", "AWS::SecretsManager::Secret.NylasSecrets"),
    ("CKV_AWS_149", "AWS::SecretsManager::Secret.NylasApiKeySecret"),
    ("CKV_AWS_158", "AWS::Logs::LogGroup.WebhookLogGroup"),
    ("CKV_AWS_158", "AWS::Logs::LogGroup.ReplierLogGroup"),
    ("CKV_AWS_18", "AWS::S3::Bucket.ReplyFilesBucket"),
    ("CKV_AWS_21", "AWS::S3::Bucket.ReplyFilesBucket"),
}


def _checkov() -> Path:
    """The checkov of ``.venv/checkov``, which ``make venv`` installs from requirements-checkov.txt."""
    override = os.environ.get("CHECKOV")
    if override:
        return Path(override)
    executable = CHECKOV_VENV / "bin" / "checkov"
    assert executable.exists(), f"{executable} is missing: `make venv` installs {CHECKOV_REQUIREMENTS.name}"
    return executable


@pytest.fixture(scope="module")
def checkov_report() -> dict[str, Any]:
    closed = "http://127.0.0.1:9"  # nothing listens: a request checkov still tries fails locally
    environment = {
        **os.environ,
        "BC_SKIP_MAPPING": "TRUE",
        "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true",
        "HTTP_PROXY": closed,
        "HTTPS_PROXY": closed,
        "NO_PROXY": "",
    }
    command = [str(_checkov()), "--file", str(TEMPLATE_PATH), "--framework", "cloudformation"]
    result = subprocess.run(  # noqa: S603
        [*command, "--skip-download", "--output", "json"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        check=False,
    )
    assert result.stdout.strip(), f"checkov printed nothing: {result.stderr[-2000:]}"
    return json.loads(result.stdout)


def test_checkov_finds_nothing_failing(checkov_report):
    summary = checkov_report["summary"]
    failed = [
        f"{c['check_id']} {c['resource']}: {c['check_name']}"
        for c in checkov_report["results"]["failed_checks"]
    ]
    assert failed == []
    assert summary["parsing_errors"] == 0
    # The scan really ran: every resource was parsed and checks passed.
    assert summary["resource_count"] >= 25
    assert summary["passed"] >= 25


def test_every_checkov_skip_is_expected_and_justified(checkov_report):
    skipped = checkov_report["results"]["skipped_checks"]
    assert {(c["check_id"], c["resource"]) for c in skipped} == EXPECTED_SKIPS
    for check in skipped:
        comment = " ".join(check["check_result"].get("suppress_comment", "").split())
        assert len(comment) >= 80, f"{check['check_id']} on {check['resource']} needs a real justification"


def test_checkov_passes_the_checks_this_template_exists_to_satisfy(checkov_report):
    passed = {(c["check_id"], c["resource"]) for c in checkov_report["results"]["passed_checks"]}
    for expected in (
        ("CKV_AWS_26", "AWS::SNS::Topic.AlertTopic"),  # alerts topic encrypted
        ("CKV_AWS_7", "AWS::KMS::Key.AlertsKey"),  # key rotation
        ("CKV_AWS_73", "AWS::Serverless::Api.WebhookApi"),  # X-Ray on the API
        ("CKV_AWS_115", "AWS::Serverless::Function.WebhookFunction"),  # reserved concurrency wired
        ("CKV_AWS_111", "AWS::IAM::Role.WebhookFunctionRole"),  # no unconstrained writes
        ("CKV_AWS_111", "AWS::IAM::Role.ReplierFunctionRole"),
        ("CKV_AWS_66", "AWS::Logs::LogGroup.ReplierLogGroup"),  # log retention
    ):
        assert expected in passed


# ---- cfn-lint ------------------------------------------------------------------------------------------


def test_cfn_lint_finds_nothing():
    # The regions ReplyOnce is deployed next to Nylas' US and EU API hosts.
    matches = lint_file(TEMPLATE_PATH, ManualArgs(regions=["us-east-1", "us-west-2", "eu-west-1"]))
    assert [str(m) for m in matches] == []


# ---- least privilege -----------------------------------------------------------------------------------

ROLE_OF = {"WebhookFunction": "WebhookFunctionRole", "ReplierFunction": "ReplierFunctionRole"}
# What each function's role may name: its own resources and nothing else.
OWN_RESOURCES = {
    "WebhookFunctionRole": {"NotificationQueue", "NylasSecrets", "WebhookLogGroup"},
    "ReplierFunctionRole": {
        "NotificationQueue",
        "IdempotencyTable",
        "StateTable",
        "NylasApiKeySecret",
        "ReplierLogGroup",
        # Each grant's settings (issue 42): read only (test_the_replier_only_reads_the_grant_registry).
        "GrantRegistryTable",
        # A reply's files, encrypted with the stack's key (issue 44).
        "ReplyFilesBucket",
        "AlertsKey",
    },
}
# The only actions AWS offers no resource-level permission for (the X-Ray daemon's writes).
RESOURCE_WILDCARD_ALLOWED = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}


def _listify(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _statements(role: dict[str, Any]) -> list[dict[str, Any]]:
    statements = []
    for policy in role["Properties"]["Policies"]:
        if "Fn::If" in policy:  # the conditional Bedrock policy: check its "true" branch
            policy = policy["Fn::If"][1]
        statements += policy["PolicyDocument"]["Statement"]
    return statements


def _referenced(value: Any) -> set[str]:
    """Logical ids (and parameters) an intrinsic refers to."""
    if isinstance(value, dict):
        if "Ref" in value:
            return {value["Ref"]}
        if "Fn::GetAtt" in value:
            return {value["Fn::GetAtt"][0]}
        if "Fn::Sub" in value:
            text = value["Fn::Sub"] if isinstance(value["Fn::Sub"], str) else value["Fn::Sub"][0]
            return {name.split(".")[0] for name in re.findall(r"\$\{([^}]+)\}", text)}
    return set()


def test_functions_use_their_own_explicit_role_and_no_policy_templates():
    resources = load_template()["Resources"]
    for function, role in ROLE_OF.items():
        properties = resources[function]["Properties"]
        assert properties["Role"] == {"Fn::GetAtt": [role, "Arn"]}
        assert "Policies" not in properties  # SAM policy templates add wildcards (sqs:SendMessage*, index/*)
        assert "ManagedPolicyArns" not in resources[role]["Properties"]


def test_roles_have_no_wildcard_actions_and_touch_only_their_own_resources():
    resources = load_template()["Resources"]
    for role_name, own in OWN_RESOURCES.items():
        for statement in _statements(resources[role_name]):
            actions = _listify(statement["Action"])
            assert not any("*" in action for action in actions), statement
            for resource in _listify(statement["Resource"]):
                if resource == "*":
                    assert set(actions) <= RESOURCE_WILDCARD_ALLOWED, statement
                    continue
                names = _referenced(resource) - {"AWS::Partition", "AWS::Region", "AWS::AccountId"}
                if statement.get("Sid") == "DraftWithBedrock":
                    assert names == {"BedrockModelId"}  # one model or profile, chosen by parameter
                elif statement.get("Sid") == "ReadActiveRegion":
                    # The one item of the active-Region table the parameter names (this stack's, or the
                    # other Region's stack's replica in this Region): read, never written.
                    assert names == {"ActiveRegionTableName"}
                    assert actions == ["dynamodb:GetItem"], statement
                elif statement.get("Sid") == "HandOverToTheActiveRegion":
                    # The same stack's notification queue in another Region (the failover's hand-over),
                    # by the name CloudFormation gives it: queued to, nothing else.
                    assert names == {"AWS::StackName"}
                    assert resource["Fn::Sub"].endswith(":${AWS::StackName}-NotificationQueue-*")
                    assert actions == ["sqs:SendMessage"], statement
                elif statement.get("Sid") == "DraftThroughTheInferenceProfile":
                    # Any region's copy of a model, but only when reached through our one profile.
                    profile = statement["Condition"]["StringEquals"]["bedrock:InferenceProfileArn"]
                    assert _referenced(profile) >= {"BedrockModelId"}
                else:
                    assert names, f"{role_name}: literal resource {resource!r}"
                    assert names <= own, f"{role_name} reaches beyond its own resources: {names - own}"


def test_sam_adds_no_role_or_managed_policy_of_its_own(monkeypatch):
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    class NoManagedPolicies:
        def load(self) -> dict[str, str]:
            raise AssertionError("SAM wanted a managed policy: a function lost its explicit Role")

    template = yaml_parse(TEMPLATE_PATH.read_text())
    for resource in template["Resources"].values():
        for key in ("CodeUri", "ContentUri"):  # as sam package would leave them
            if key in resource.get("Properties", {}):
                resource["Properties"][key] = "s3://bucket/key"
    translated = transform(template, {}, NoManagedPolicies())
    roles = {name for name, r in translated["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    assert roles == set(OWN_RESOURCES)


# ---- alarms, dashboard and the metrics the code emits --------------------------------------------------

SERVICE_OF_MODULE = {
    "webhook": "replyonce-webhook",
    "consumer": "replyonce-replier",
    "replier": "replyonce-replier",
    # The one place a skip is counted (only the replier skips), and the core's steps name the
    # metric the shell counts when it carries them out (``metric="HandedOff"``).
    "observability": "replyonce-replier",
    "core": "replyonce-replier",
    # A customer's files read, a reply's sent as multipart and paced (issue 44): the replier's.
    "attachments": "replyonce-replier",
    "nylas": "replyonce-replier",
    "pacing": "replyonce-replier",
    # Each grant's settings chosen per record (issue 42): shell/grants.py, the replier's.
    "grants": "replyonce-replier",
    # A grant's lifecycle notification carried out (issue 42): shell/grant_life.py, the replier's.
    "grant_life": "replyonce-replier",
}


def _metric_calls(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(metric, extra dimensions) of every ``count``, ``count_by`` and ``skipped`` call in one module.

    Every string constant in the name argument counts: ``count("A" if x else "B")`` emits both; so
    does a step's ``metric="A"``, which the shell counts when it carries the step out (by
    ``status`` when the step also names a ``metric_status``).
    """
    calls = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            by_status = any(k.arg == "metric_status" for k in node.keywords)
            calls += [
                (k.value.value, ("status",) if by_status else ())
                for k in node.keywords
                if k.arg == "metric" and isinstance(k.value, ast.Constant) and k.value.value
            ]
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
            continue
        names = [
            c.value
            for c in ast.walk(node.args[0])
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
        if node.func.id == "skipped":
            # observability.skipped counts the skip in its own log line, dimension ``reason``.
            calls.append((SKIP_METRIC, ("reason",)))
        if node.func.id == "count":
            calls += [(name, ()) for name in names]
        elif node.func.id == "count_by" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            calls += [(name, (str(node.args[1].value),)) for name in names]
    return calls


def emitted_metrics() -> dict[tuple[str, str], tuple[str, ...]]:
    """(service, metric) -> its extra dimension(s), from every count()/count_by() call in the layer."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for path in sorted(LAYER.rglob("*.py")):
        # The core's modules are one module of the layer; a rule, an adapter or the shell's module is
        # named by its file.
        module = "core" if path.parent.name == "core" else path.stem
        calls = _metric_calls(path)
        if calls:
            assert module in SERVICE_OF_MODULE, f"{path.name} emits metrics: map it to its function"
        for metric, dimensions in calls:
            found[(SERVICE_OF_MODULE[module], metric)] = dimensions
    return found


def test_service_names_match_the_template():
    resources = load_template()["Resources"]
    services = {
        resources[f]["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] for f in ROLE_OF
    }
    assert services == set(SERVICE_OF_MODULE.values())


def _dashboard() -> dict[str, Any]:
    body = load_template()["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    # What CloudFormation substitutes: a number for the one numeric parameter, names for the rest.
    text = re.sub(r"\$\{OldestMessageAlarmSeconds\}", "1800", body)
    return json.loads(re.sub(r"\$\{([^}]+)\}", lambda m: m.group(1).replace(":", "_"), text))


def dashboard_metrics() -> list[tuple[str, str, tuple[str, ...]]]:
    """(service, metric, extra dimensions) of every ReplyOnce metric the dashboard plots."""
    used = []
    for widget in _dashboard()["widgets"]:
        for entry in widget["properties"].get("metrics", []):
            if isinstance(entry[0], dict):
                search = re.fullmatch(
                    r"SEARCH\('\{ReplyOnce,(\w+),service\} "
                    r"MetricName=\"(\w+)\" service=\"([\w-]+)\"', 'Sum', 300\)",
                    entry[0]["expression"],
                )
                assert search, entry
                used.append((search.group(3), search.group(2), (search.group(1),)))
            elif entry[0] == "ReplyOnce":
                assert entry[2] == "service", entry
                used.append((entry[3], entry[1], ()))
    return used


def test_dashboard_is_valid_json_and_plots_only_metrics_the_code_emits():
    emitted = emitted_metrics()
    plotted = dashboard_metrics()
    assert len(plotted) >= 15
    for service, metric, dimensions in plotted:
        assert (service, metric) in emitted, f"{metric} ({service}) is not emitted by the layer"
        assert emitted[(service, metric)] == dimensions, f"{metric}: dimensions differ from the code"
    # The issue's panels: deliveries, duplicates, replies, skips and deferrals by reason.
    names = {metric for _, metric, _ in plotted}
    assert {
        "NotificationAccepted",
        "DuplicateAbsorbed",
        "ReplySent",
        "NotificationSkipped",
        "RecordDeferred",
    } <= names


def _alarms() -> dict[str, dict[str, Any]]:
    resources = load_template()["Resources"]
    return {name: r["Properties"] for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}


def test_alarms_on_replyonce_metrics_match_the_emitted_dimensions():
    emitted = emitted_metrics()
    for name, alarm in _alarms().items():
        metrics = [alarm] + [m["MetricStat"]["Metric"] for m in alarm.get("Metrics", []) if "MetricStat" in m]
        for metric in metrics:
            if metric.get("Namespace") != "ReplyOnce":
                continue
            dimensions = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
            key = (dimensions.pop("service"), metric["MetricName"])
            assert key in emitted, f"{name}: {key} is not emitted"
            assert tuple(dimensions) == emitted[key], f"{name}: dimensions differ from the code"


SILENCE_ALARM = "NoDeliveriesAlarm"
# Missing data is "nothing happened" (notBreaching), except where its absence says something: the
# silence alarm's subject is silence, and the dead-letter state alarm keeps its state while SQS has
# paused an idle queue's metrics (tests/static/test_alarms.py says why).
MISSING_DATA = {SILENCE_ALARM: "breaching", "DeadLetterQueueAlarm": "ignore"}


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", heading.strip().lower()).replace(" ", "-")


def test_every_alarm_notifies_the_topic_and_has_a_runbook_section():
    runbook = RUNBOOK.read_text()
    anchors = {_slug(line.lstrip("#")) for line in runbook.splitlines() if line.startswith("#")}
    alarms = _alarms()
    assert len(alarms) >= 7
    for name, alarm in alarms.items():
        assert alarm["AlarmActions"] == [{"Ref": "AlertTopic"}], name
        assert alarm["TreatMissingData"] == MISSING_DATA.get(name, "notBreaching"), name
        anchor = re.search(r"docs/operations\.md#([\w-]+)", alarm["AlarmDescription"])
        assert anchor, f"{name} names no runbook section"
        assert anchor.group(1) in anchors, f"{name}: docs/operations.md has no section #{anchor.group(1)}"
    shown = set(next(w for w in _dashboard()["widgets"] if w["type"] == "alarm")["properties"]["alarms"])
    # A conditional alarm cannot be named in the dashboard body (it may not exist).
    conditional = {n for n, r in load_template()["Resources"].items() if "Condition" in r}
    assert shown == {f"{name}.Arn" for name in alarms if name not in conditional}


def test_the_alert_email_receives_alarms_and_is_required():
    template = load_template()
    assert "Default" not in template["Parameters"]["AlertEmail"]
    subscription = template["Resources"]["AlertEmailSubscription"]["Properties"]
    assert subscription == {
        "TopicArn": {"Ref": "AlertTopic"},
        "Protocol": "email",
        "Endpoint": {"Ref": "AlertEmail"},
    }


def test_tracing_is_on_from_the_api_through_both_functions():
    template = load_template()
    assert template["Globals"]["Function"]["Tracing"] == "Active"
    assert template["Resources"]["WebhookApi"]["Properties"]["TracingEnabled"] is True


# ---- secrets: split by function, never written by CloudFormation, kept on delete -----------------------


def _secret_resources(role: dict[str, Any]) -> set[str]:
    return {
        name
        for statement in _statements(role)
        if "secretsmanager:GetSecretValue" in _listify(statement["Action"])
        for resource in _listify(statement["Resource"])
        for name in _referenced(resource)
    }


def test_each_function_reads_only_its_own_secret():
    template = load_template()
    resources = template["Resources"]
    # The internet-facing webhook can read the signing secrets and never the API key, which can
    # read and send mail for every grant; the replier reads the API key only.
    assert _secret_resources(resources["WebhookFunctionRole"]) == {"NylasSecrets"}
    assert _secret_resources(resources["ReplierFunctionRole"]) == {"NylasApiKeySecret"}
    assert "NYLAS_SECRETS_ID" not in template["Globals"]["Function"]["Environment"]["Variables"]
    webhook = resources["WebhookFunction"]["Properties"]["Environment"]["Variables"]
    replier = resources["ReplierFunction"]["Properties"]["Environment"]["Variables"]
    assert webhook["NYLAS_SECRETS_ID"] == {"Ref": "NylasSecrets"}
    assert "NYLAS_API_KEY_SECRET_ID" not in webhook
    assert replier["NYLAS_API_KEY_SECRET_ID"] == {"Ref": "NylasApiKeySecret"}
    assert "NYLAS_SECRETS_ID" not in replier


def test_no_secret_value_is_written_by_cloudformation():
    # A GenerateSecretString (or SecretString) is written again whenever that block changes, wiping
    # the API key and webhook secret the operator stored; the secrets are created empty instead.
    secrets = {
        n: r for n, r in load_template()["Resources"].items() if r["Type"] == "AWS::SecretsManager::Secret"
    }
    assert set(secrets) == {"NylasSecrets", "NylasApiKeySecret"}
    for name, secret in secrets.items():
        assert "GenerateSecretString" not in secret["Properties"], name
        assert "SecretString" not in secret["Properties"], name


# ---- data that survives a delete, exposure, operations (issue 15) --------------------------------------


def test_data_that_must_outlive_the_stack_is_retained():
    resources = load_template()["Resources"]
    # The reply ledger (30-day memory against double replies), notifications not answered yet (the
    # queue) or never (the dead-letter queue), and the secrets (the one Nylas signs with exists nowhere
    # else) survive `sam delete` and replacement.
    for name in (
        "StateTable",
        "GrantRegistryTable",
        "NotificationQueue",
        "NotificationDeadLetterQueue",
        "NylasSecrets",
        "NylasApiKeySecret",
    ):
        assert resources[name].get("DeletionPolicy") == "Retain", name
        assert resources[name].get("UpdateReplacePolicy") == "Retain", name
    # And the ledger cannot be deleted by hand either, while the stack lives; nor the grants' settings
    # (without them a grant in shadow would answer with the parameters' mode).
    assert resources["StateTable"]["Properties"]["DeletionProtectionEnabled"] is True
    assert resources["GrantRegistryTable"]["Properties"]["DeletionProtectionEnabled"] is True
    registry_recovery = resources["GrantRegistryTable"]["Properties"]["PointInTimeRecoverySpecification"]
    assert registry_recovery["PointInTimeRecoveryEnabled"] is True
    assert resources["GrantRegistryTable"]["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
    # A deliberate decision, not an omission: 24 h of dedup records a new stack starts without.
    assert resources["IdempotencyTable"]["DeletionPolicy"] == "Delete"
    recovery = resources["StateTable"]["Properties"]["PointInTimeRecoverySpecification"]
    assert recovery["PointInTimeRecoveryEnabled"] is True


@pytest.mark.parametrize(
    ("model_id", "valid"),
    [
        ("anthropic.claude-3-haiku-20240307-v1:0", True),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", True),
        ("eu.anthropic.claude-3-7-sonnet-20250219-v1:0", True),
        ("global.anthropic.claude-sonnet-4-20250514-v1:0", True),
        ("amazon.nova-pro-v1:0", True),
        ("claude", False),
        ("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0", False),
        ("", False),
    ],
)
def test_bedrock_model_id_is_validated_by_the_parameter(model_id, valid):
    parameter = load_template()["Parameters"]["BedrockModelId"]
    pattern = parameter["AllowedPattern"]
    assert bool(re.fullmatch(pattern, model_id)) is valid
    assert re.fullmatch(pattern, parameter["Default"])


def test_bedrock_policy_allows_an_inference_profile_and_its_models():
    # Current Claude models are invoked through inference profiles (us.anthropic...): with the
    # foundation model alone every reply is AccessDenied, retried and dead-lettered.
    role = load_template()["Resources"]["ReplierFunctionRole"]
    bedrock = {s["Sid"]: s for s in _statements(role) if s["Sid"].startswith("Draft")}
    direct = [r["Fn::Sub"] for r in _listify(bedrock["DraftWithBedrock"]["Resource"])]
    assert any(":inference-profile/${BedrockModelId}" in arn for arn in direct)
    assert any("::foundation-model/${BedrockModelId}" in arn for arn in direct)
    routed = bedrock["DraftThroughTheInferenceProfile"]
    assert routed["Resource"]["Fn::Sub"].endswith(":bedrock:*::foundation-model/*")
    profile = routed["Condition"]["StringEquals"]["bedrock:InferenceProfileArn"]["Fn::Sub"]
    assert profile.endswith(":inference-profile/${BedrockModelId}")


def test_dashboard_name_differs_between_regions():
    # Dashboards are global to an account: two regions' stacks of one name must not share (or
    # delete) one dashboard.
    name = load_template()["Resources"]["Dashboard"]["Properties"]["DashboardName"]["Fn::Sub"]
    assert "${AWS::Region}" in name
    assert "${AWS::StackName}" in name


def _insecure_transport_denied(policy: dict[str, Any]) -> set[str]:
    denied = set()
    for statement in policy["PolicyDocument"]["Statement"]:
        condition = statement.get("Condition", {}).get("Bool", {})
        if (
            statement["Effect"] == "Deny"
            and statement["Principal"] == "*"
            and condition.get("aws:SecureTransport") in ("false", False)
        ):
            denied |= {name for resource in _listify(statement["Resource"]) for name in _referenced(resource)}
    return denied


def test_queues_and_topic_refuse_requests_without_tls():
    resources = load_template()["Resources"]
    queues = {n for n, r in resources.items() if r["Type"] == "AWS::SQS::Queue"}
    covered: set[str] = set()
    for resource in resources.values():
        if resource["Type"] in ("AWS::SQS::QueuePolicy", "AWS::SNS::TopicPolicy"):
            covered |= _insecure_transport_denied(resource["Properties"])
    assert queues | {"AlertTopic"} <= covered


def test_cloudwatch_may_use_the_alerts_key_only_for_this_account():
    key_policy = load_template()["Resources"]["AlertsKey"]["Properties"]["KeyPolicy"]
    [statement] = [
        s
        for s in key_policy["Statement"]
        if s.get("Principal", {}).get("Service") == "cloudwatch.amazonaws.com"
    ]
    assert statement["Condition"]["StringEquals"]["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}


TAGGED_TYPES = {
    "AWS::Lambda::Function",
    "AWS::ApiGateway::Stage",
    "AWS::SQS::Queue",
    "AWS::DynamoDB::Table",
    "AWS::SecretsManager::Secret",
    "AWS::Logs::LogGroup",
    "AWS::KMS::Key",
    "AWS::SNS::Topic",
    "AWS::IAM::Role",
}


def _translated() -> dict[str, Any]:
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    class NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    template = yaml_parse(TEMPLATE_PATH.read_text())
    for resource in template["Resources"].values():
        for key in ("CodeUri", "ContentUri"):
            if key in resource.get("Properties", {}):
                resource["Properties"][key] = "s3://bucket/key"
    return transform(template, {}, NoManagedPolicies())


def test_every_taggable_resource_carries_the_application_tag():
    resources = _translated()["Resources"]
    checked = 0
    for name, resource in resources.items():
        if resource["Type"] not in TAGGED_TYPES:
            continue
        tags = resource["Properties"].get("Tags", [])
        pairs = tags.items() if isinstance(tags, dict) else ((t["Key"], t["Value"]) for t in tags)
        assert ("application", "replyonce") in set(pairs), name
        checked += 1
    assert checked >= 14


def test_api_is_regional_and_functions_log_json():
    resources = _translated()["Resources"]
    [api] = [r for r in resources.values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    assert api["Properties"]["EndpointConfiguration"]["Types"] == ["REGIONAL"]
    for function in ROLE_OF:
        logging = resources[function]["Properties"]["LoggingConfig"]
        assert logging["LogFormat"] == "JSON", function  # START/END/REPORT as JSON too
        assert logging["ApplicationLogLevel"] == {
            "Fn::FindInMap": ["LambdaLogLevel", {"Ref": "LogLevel"}, "Level"]
        }


def test_every_log_level_maps_to_a_lambda_level():
    template = load_template()
    levels = template["Mappings"]["LambdaLogLevel"]
    assert set(levels) == set(template["Parameters"]["LogLevel"]["AllowedValues"])
    assert {v["Level"] for v in levels.values()} <= {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}


def _metric_ids(alarm: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["Id"]: m for m in alarm.get("Metrics", [])}


def test_dead_letter_alarms_say_letters_wait_and_notify_on_every_new_arrival():
    alarms = _alarms()
    dead_letter = {"Fn::GetAtt": ["NotificationDeadLetterQueue", "QueueName"]}
    # The state: letters are waiting, OK once drained; a paused metric keeps the state (ignore).
    waiting = alarms["DeadLetterQueueAlarm"]
    assert waiting["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert waiting["Dimensions"][0]["Value"] == dead_letter
    assert (waiting["Threshold"], waiting["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert waiting["OKActions"] == [{"Ref": "AlertTopic"}]
    # Every new arrival: the rise in depth, a gap bridged with the last value, never with 0 (which
    # turned metrics that paused and resumed into a burst of "arrivals").
    arrivals = alarms["DeadLetterArrivalsAlarm"]
    metrics = _metric_ids(arrivals)
    [returned] = [m for m in metrics.values() if m.get("ReturnData")]
    assert returned["Expression"] == "DIFF(FILL(depth, REPEAT))"
    depth = metrics["depth"]["MetricStat"]["Metric"]
    assert depth["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert depth["Dimensions"][0]["Value"] == dead_letter
    assert "OKActions" not in arrivals  # "nothing new this period" is not news


def test_silence_alarm_watches_accepted_deliveries():
    alarm = _alarms()[SILENCE_ALARM]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("ReplyOnce", "NotificationAccepted")
    assert alarm["ComparisonOperator"] == "LessThanThreshold"
    assert alarm["Period"] * 1 == 3600
    assert alarm["EvaluationPeriods"] == {"Ref": "SilenceAlarmHours"}


def test_webhook_rate_alarms_count_only_what_they_mean():
    alarms = _alarms()
    server = _metric_ids(alarms["WebhookServerErrorAlarm"])
    # Rotation's deliberate 503s are subtracted from API Gateway's 5xx.
    assert server["deferred"]["MetricStat"]["Metric"]["MetricName"] == "NotificationDeferred"
    assert "FILL(deferred, 0)" in server["rate"]["Expression"]
    client = _metric_ids(alarms["WebhookClientErrorAlarm"])
    # Only our function's own 4xx, never API Gateway's answers to scanners on other paths.
    names = {m["MetricStat"]["Metric"]["MetricName"] for m in client.values() if "MetricStat" in m}
    assert "RequestRejected" in names
    assert "4XXError" not in names


def test_replier_concurrency_leaves_room_for_the_webhook_on_a_new_account():
    # New accounts can have a Lambda concurrency quota of 10; `make deploy` checks the real one.
    default = load_template()["Parameters"]["ReplierMaximumConcurrency"]["Default"]
    assert default <= 10 // 2


# ---- who may queue a notification, and the optional WAF (issue 32) -------------------------------------


def _send_exemptions(queue: str = "NotificationQueue") -> list[Any]:
    """The principals ``queue``'s policy leaves out of its Deny of ``sqs:SendMessage``."""
    resources = load_template()["Resources"]
    [statement] = [
        s
        for r in resources.values()
        if r["Type"] == "AWS::SQS::QueuePolicy"
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny"
        and "sqs:SendMessage" in _listify(s["Action"])
        and s["Resource"] == {"Fn::GetAtt": [queue, "Arn"]}
    ]
    assert statement["Principal"] == "*"
    return statement["Condition"]["ArnNotLike"]["aws:PrincipalArn"]


def _may_send(
    principal: str, operator_role: str, queue: str = "NotificationQueue", *, across_regions: bool = False
) -> bool:
    """Whether `queue`'s policy lets `principal` send, `OperatorRoleArn` set to `operator_role`, in a
    stack named ``stack`` (``across_regions``: with the active-Region fence, ``ActiveRegionTableName``)."""
    arns = {
        "WebhookFunctionRole": "arn:aws:iam::111122223333:role/stack-WebhookFunctionRole-A1",
        "ReplierFunctionRole": "arn:aws:iam::111122223333:role/stack-ReplierFunctionRole-B2",
    }
    exempt = []
    for entry in _send_exemptions(queue):
        if "Fn::GetAtt" in entry:
            exempt.append(arns[entry["Fn::GetAtt"][0]])
        else:
            condition, then, _ = entry["Fn::If"]
            if condition == "HasActiveRegionFence":  # the other Region's replier, by its role's name
                if across_regions:
                    exempt.append(
                        then["Fn::Sub"]
                        .replace("${AWS::Partition}", "aws")
                        .replace("${AWS::AccountId}", "111122223333")
                        .replace("${AWS::StackName}", "stack")
                    )
                continue
            # The operator's role, only when the parameter is set.
            assert condition == "HasOperatorRole"
            assert then == {"Ref": "OperatorRoleArn"}
            if operator_role:
                exempt.append(operator_role)
    # ArnNotLike: the Deny applies unless the caller's role matches one of them (wildcards allowed).
    return any(fnmatch.fnmatchcase(principal, pattern) for pattern in exempt)


def test_only_the_redrive_and_the_operator_fill_the_dead_letter_queue():
    # `make redrive` moves the dead-letter queue back into the notification queue as the operator,
    # and the replier then takes what it moved as verified: a message sent to the dead-letter queue
    # directly (an administrator role, a compromised function of the account) would reach the
    # agent as a notification nobody signed.
    dead_letters = "NotificationDeadLetterQueue"
    webhook = "arn:aws:iam::111122223333:role/stack-WebhookFunctionRole-A1"
    replier = "arn:aws:iam::111122223333:role/stack-ReplierFunctionRole-B2"
    admin = "arn:aws:iam::111122223333:role/any-role-allowed-sqs-on-star"
    operator = "arn:aws:iam::111122223333:role/replyonce-operator"
    # The replier's role: SQS moves a record to the dead-letter queue on the receive of the
    # notification queue's consumer.
    assert _may_send(replier, "", dead_letters)
    assert not _may_send(webhook, "", dead_letters)
    assert not _may_send(admin, "", dead_letters)
    assert not _may_send(operator, "", dead_letters)
    assert _may_send(operator, operator, dead_letters)
    assert not _may_send(admin, operator, dead_letters)
    # No role of the template is given sqs:SendMessage on the dead-letter queue at all.
    resources = load_template()["Resources"]
    assert not [
        role
        for role in ROLE_OF.values()
        for statement in _statements(resources[role])
        if "sqs:SendMessage" in _listify(statement["Action"])
        and statement["Resource"] == {"Fn::GetAtt": [dead_letters, "Arn"]}
    ]


def test_only_the_webhook_the_replier_and_the_operators_role_may_queue_a_notification():
    admin = "arn:aws:iam::111122223333:role/any-role-allowed-sqs-on-star"
    webhook = "arn:aws:iam::111122223333:role/stack-WebhookFunctionRole-A1"
    replier = "arn:aws:iam::111122223333:role/stack-ReplierFunctionRole-B2"
    sso = "arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Operator_0a1b"
    # Without an operator role, the two functions only: a principal of the account whose identity
    # policy allows sqs:SendMessage on "*" can no longer queue a "verified" notification.
    assert _may_send(webhook, "")
    assert _may_send(replier, "")
    assert not _may_send(admin, "")
    assert not _may_send(sso, "")
    # The operator's role (make redrive, make backfill --apply), an SSO role's generated name by pattern.
    pattern = "arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Operator_*"
    assert _may_send(sso, pattern)
    assert not _may_send(admin, pattern)
    parameter = load_template()["Parameters"]["OperatorRoleArn"]
    assert parameter["Default"] == ""
    for value, valid in ((pattern, True), ("", True), (admin, True), ("*", False), ("operator", False)):
        assert bool(re.fullmatch(parameter["AllowedPattern"], value)) is valid, value
    # Every role the template lets send to the queue is exempt, or the Deny would break it: the
    # webhook's notifications, the replier's reconcile tasks.
    senders = {
        role
        for role in ROLE_OF.values()
        for statement in _statements(load_template()["Resources"][role])
        if "sqs:SendMessage" in _listify(statement["Action"])
        and statement["Resource"] == {"Fn::GetAtt": ["NotificationQueue", "Arn"]}
    }
    assert senders == {e["Fn::GetAtt"][0] for e in _send_exemptions() if "Fn::GetAtt" in e}
    # Across Regions, the other Region's replier (the same stack's, by name) hands over what it held at
    # a failover; another stack's replier may not, nor may it in a stack of one Region.
    other_region = "arn:aws:iam::111122223333:role/stack-ReplierFunctionRole-C3"
    other_stack = "arn:aws:iam::111122223333:role/other-ReplierFunctionRole-D4"
    assert _may_send(other_region, "", across_regions=True)
    assert not _may_send(other_stack, "", across_regions=True)
    assert not _may_send(other_region, "")


def test_the_waf_is_off_by_default_counts_per_source_ip_first_and_guards_the_webhook_stage():
    template = load_template()
    assert template["Parameters"]["WebhookWaf"]["Default"] == "Disabled"
    assert template["Conditions"]["HasWebhookWaf"] == {"Fn::Equals": [{"Ref": "WebhookWaf"}, "Enabled"]}
    resources = template["Resources"]
    acl, association = resources["WebhookWebAcl"], resources["WebhookWebAclAssociation"]
    assert acl["Condition"] == association["Condition"] == "HasWebhookWaf"
    properties = acl["Properties"]
    assert (properties["Scope"], properties["DefaultAction"]) == ("REGIONAL", {"Allow": {}})
    [rule] = properties["Rules"]
    # Counted, not blocked: WAF blocks with a 403, which Nylas never retries.
    assert rule["Action"] == {"Count": {}}
    rate = rule["Statement"]["RateBasedStatement"]
    assert (rate["AggregateKeyType"], rate["Limit"]) == ("IP", {"Ref": "WebhookWafRatePerIp"})
    # Far above one Nylas IP's real rate by default: its deliveries come from a few addresses.
    assert template["Parameters"]["WebhookWafRatePerIp"]["Default"] >= 1000
    # On the API's one stage, which SAM names WebhookApiv1Stage.
    assert association["Properties"]["WebACLArn"] == {"Fn::GetAtt": ["WebhookWebAcl", "Arn"]}
    assert association["Properties"]["ResourceArn"]["Fn::Sub"].endswith("::/restapis/${WebhookApi}/stages/v1")
    assert association["DependsOn"] == "WebhookApiv1Stage"
    assert resources["WebhookApi"]["Properties"]["StageName"] == "v1"
    stages = [n for n, r in _translated()["Resources"].items() if r["Type"] == "AWS::ApiGateway::Stage"]
    assert stages == ["WebhookApiv1Stage"]


def test_the_replier_writes_only_what_nylas_grant_notifications_ask_of_the_grant_registry():
    # The operator writes the records (`make grants`); the replier reads them (one Query of a partition
    # per cache period), reads one grant's life strongly consistent (GetItem) and writes lives, change
    # items and a new grant's first record (TransactWriteItems, authorised per item as PutItem), each
    # conditioned in replyonce/adapters/grant_registry.py; and checks a grant's life in the transaction
    # that stores an intent right before its send (ConditionCheckItem, which writes nothing: issue 46).
    # No UpdateItem, no DeleteItem: it cannot remove or edit a record in place.
    statements = _statements(load_template()["Resources"]["ReplierFunctionRole"])
    reaching = [s for s in statements if "GrantRegistryTable" in _referenced(s["Resource"])]
    assert [_listify(s["Action"]) for s in reaching] == [
        ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"]
    ]
