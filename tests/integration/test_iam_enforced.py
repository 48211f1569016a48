"""Least privilege, enforced: each handler runs as a principal holding exactly its role from template.yaml.

How it works, and why each step:

1. ``template.yaml`` is rendered by the SAM translator (``samtranslator``, what
   ``sam deploy`` submits), not read by hand: a SAM policy template or managed
   policy a function gains is in the rendered role, as it would be in AWS.
2. Each function's role policy is resolved against the local resources
   (queue, table and secret ARNs in moto's account ``123456789012``).
3. A moto server of its own is started; after the resources are created its
   IAM enforcement is switched on (``/moto-api/reset-auth``, the runtime form of
   ``INITIAL_NO_AUTH_ACTION_COUNT``) and its request recorder too.
4. One IAM user per function gets that policy; the real handlers run with its
   keys: the webhook answers signed POSTs, the replier (and the event source
   stand-in, which acts for Lambda's SQS poller with the same role) answers a
   batch with a reply, a duplicate, a busy thread, a skip and a Nylas failure.

Where moto differs from AWS, the TEST translates, the role never changes:

* moto authorises DynamoDB and Secrets Manager calls against resource ``*``
  (only SQS, IAM and STS requests name their resource), so a statement scoped
  to a table ARN would never match. The principal gets those statements with
  ``Resource: "*"``, and resource-level enforcement is done here instead: every
  recorded request's (action, resource ARN) is evaluated against the exact
  rendered role policy with moto's own policy evaluator.
* AWS has no ``dynamodb:TransactWriteItems`` permission (a transaction is
  authorised per item as PutItem / UpdateItem / DeleteItem / ConditionCheckItem
  on its table), nor ``sqs:*Batch`` ones (authorised as the single action); moto
  asks for them. The principal gets each such action only if the role grants
  the action AWS checks, and the recorded transaction is checked item by item.

A permission the code needs and the role lacks fails the test (moto answers
AccessDenied, or the recorded request is not allowed by the role). A permission
the role has and no request used is reported, and must be in
``USED_OUTSIDE_THE_CODE`` with the reason, or the test fails.
"""

import base64
import copy
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
import requests
from aws_lambda_powertools.utilities import parameters
from moto.iam.access_control import IAMPolicy, PermissionResult
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

from devstack.containers import load_handler, tune_container
from devstack.events import (
    AGENT_EMAIL,
    AGENT_GRANT_ID,
    CUSTOMER_EMAIL,
    encode,
    envelope,
    notification_envelope,
    proxy_event,
    signed_post,
)
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault
from devstack.poller import EventSourcePoller
from devstack.template import LOCAL_WEBHOOK_SECRET, LocalResources, create_resources
from ops.template import TEMPLATE_PATH
from replyonce.adapters.agents import template_agent
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.state_items import message_key
from replyonce.agent import Conversation, Reply, ReplyAttachment
from replyonce.rules.notification import Notification
from replyonce.state import Status, thread_key

ACCOUNT = "123456789012"
STACK_NAME = "replyonce"
ROOT = Path(__file__).resolve().parents[2]

# Managed policies a role may attach, by name: their statements as AWS publishes them.
KNOWN_MANAGED_POLICIES: dict[str, list[dict[str, Any]]] = {
    "AWSLambdaBasicExecutionRole": [
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": "*",
        }
    ],
    "AWSXRayDaemonWriteAccess": [
        {
            "Effect": "Allow",
            "Action": [
                "xray:PutTraceSegments",
                "xray:PutTelemetryRecords",
                "xray:GetSamplingRules",
                "xray:GetSamplingTargets",
                "xray:GetSamplingStatisticSummaries",
            ],
            "Resource": "*",
        }
    ],
    "AWSLambdaSQSQueueExecutionRole": [
        {
            "Effect": "Allow",
            "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
            "Resource": "*",
        },
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": "*",
        },
    ],
}

# Actions moto asks for that AWS does not have: AWS authorises them as these actions.
AUTHORISED_AS: dict[str, tuple[str, ...]] = {
    "dynamodb:TransactWriteItems": (
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
    ),
    "dynamodb:TransactGetItems": ("dynamodb:GetItem",),
    "dynamodb:BatchGetItem": ("dynamodb:GetItem",),
    "sqs:SendMessageBatch": ("sqs:SendMessage",),
    "sqs:DeleteMessageBatch": ("sqs:DeleteMessage",),
    "sqs:ChangeMessageVisibilityBatch": ("sqs:ChangeMessageVisibility",),
}
# moto names the resource of these services' requests; for every other service it checks "*".
RESOURCE_CHECKED_BY_MOTO = {"sqs", "iam", "sts"}

# Permissions the roles must have although no request of the code uses them, with the reason.
# (function, statement Sid, action) -> why. A permission unused and not listed here fails the test.
USED_OUTSIDE_THE_CODE: dict[tuple[str, str, str], str] = {
    **{
        (function, "WriteOwnLogs", action): "the Lambda service writes the function's stdout to "
        "its log group with the execution role; the code itself only prints"
        for function in ("WebhookFunction", "ReplierFunction")
        for action in ("logs:CreateLogStream", "logs:PutLogEvents")
    },
    **{
        (function, "WriteTraces", action): "Lambda's X-Ray integration (Tracing: Active) sends "
        "the invocation's segments with the execution role; the code sends none (no X-Ray SDK)"
        for function in ("WebhookFunction", "ReplierFunction")
        for action in ("xray:PutTraceSegments", "xray:PutTelemetryRecords")
    },
    ("ReplierFunction", "PollNotificationQueue", "sqs:GetQueueAttributes"): "Lambda's SQS event "
    "source mapping reads the queue's attributes with the function's role (AWS documents it as "
    "required); the stand-in poller does not need to",
    **{
        ("ReplierFunction", "EncryptReplyFilesThroughS3", action): "S3 asks KMS for the bucket's data "
        "key with the caller's permissions (SSE-KMS, kms:ViaService s3); the local bucket has no key, "
        "and the code never calls KMS itself"
        for action in ("kms:GenerateDataKey", "kms:Decrypt")
    },
    ("ReplierFunction", "IdempotencyRecords", "dynamodb:GetItem"): "Powertools idempotency reads "
    "the record with GetItem when a failed conditional put returns no item "
    "(ReturnValuesOnConditionCheckFailure); DynamoDB and moto return it, so the path is a fallback",
}


# ---- the rendered template -----------------------------------------------------------------------------


def rendered_template() -> dict[str, Any]:
    """template.yaml as the SAM translator renders it for CloudFormation (parameter defaults)."""
    template = yaml_parse(TEMPLATE_PATH.read_text())
    # The translator wants S3 URIs where `sam build`/`sam package` would put them.
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://replyonce-artifacts/{properties[key]}"
    parameters_needed = {
        name: "alerts@example.com" if "email" in name.lower() else "required"
        for name, definition in template.get("Parameters", {}).items()
        if "Default" not in definition
    }

    class _NoManagedPolicyLookups:
        # Managed policies are named by ARN in this template; nothing to look up in IAM.
        def load(self) -> dict[str, str]:
            return {}

    return transform(template, parameters_needed, _NoManagedPolicyLookups())


class Resolver:
    """Resolves the rendered template's intrinsics against the local resources."""

    def __init__(self, cfn: dict[str, Any], resources: LocalResources, region: str) -> None:
        self.cfn = cfn
        self.resources = resources
        self.region = region
        self.parameters = {
            name: str(definition.get("Default", "alerts@example.com"))
            for name, definition in cfn.get("Parameters", {}).items()
        }
        self.pseudo = {
            "AWS::Region": region,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": STACK_NAME,
        }

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.cfn["Conditions"][name]))

    def ref(self, name: str) -> str:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        for mapping in (
            self.resources.tables,
            self.resources.queues,
            self.resources.secrets,
            self.resources.buckets,
        ):
            if name in mapping:
                return mapping[name]
        resource = self.cfn["Resources"].get(name, {})
        if resource.get("Type") == "AWS::Logs::LogGroup":
            return str(self.resolve(resource["Properties"]["LogGroupName"]))
        raise KeyError(f"cannot resolve Ref {name} locally")

    def get_att(self, name: str, attribute: str) -> str:
        if attribute == "Arn":
            if name in self.resources.queue_arns:
                return self.resources.queue_arns[name]
            if name in self.resources.tables:
                return f"arn:aws:dynamodb:{self.region}:{ACCOUNT}:table/{self.resources.tables[name]}"
            if name in self.resources.buckets:
                return f"arn:aws:s3:::{self.resources.buckets[name]}"
            kind = self.cfn["Resources"][name]["Type"]
            if kind == "AWS::Logs::LogGroup":
                return f"arn:aws:logs:{self.region}:{ACCOUNT}:log-group:{self.ref(name)}:*"
            if kind == "AWS::KMS::Key":
                return f"arn:aws:kms:{self.region}:{ACCOUNT}:key/{name.lower()}"
        raise KeyError(f"cannot resolve GetAtt {name}.{attribute} locally")

    def sub(self, text: str, variables: dict[str, Any]) -> str:
        out, rest = [], text
        while "${" in rest:
            before, _, after = rest.partition("${")
            name, _, rest = after.partition("}")
            out.append(before)
            if name in variables:
                out.append(str(self.resolve(variables[name])))
            elif "." in name and not name.startswith("AWS::"):
                out.append(self.get_att(*name.split(".", 1)))
            else:
                out.append(self.ref(name))
        return "".join(out) + rest

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in (self.resolve(item) for item in value) if v is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return _NO_VALUE if argument == "AWS::NoValue" else self.ref(argument)
            if key == "Fn::GetAtt":
                name, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
                return self.get_att(name, attribute)
            if key == "Fn::Sub":
                text, variables = (argument, {}) if isinstance(argument, str) else argument
                return self.sub(text, variables)
            if key == "Fn::If":
                name, when_true, when_false = argument
                return self.resolve(when_true if self.condition(name) else when_false)
            if key == "Fn::Equals":
                left, right = (self.resolve(v) for v in argument)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self.resolve(argument[0])
            if key == "Fn::And":
                return all(self.resolve(v) for v in argument)
            if key == "Fn::Or":
                return any(self.resolve(v) for v in argument)
            if key == "Condition":
                return self.condition(argument)
            if key == "Fn::Join":
                separator, items = argument
                return separator.join(str(v) for v in self.resolve(items))
        return {k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not _NO_VALUE}


_NO_VALUE = object()


def role_statements(cfn: dict[str, Any], function: str, resolver: Resolver) -> list[dict[str, Any]]:
    """Every statement the function's execution role grants, resolved; Actions/Resources as lists."""
    role_ref = cfn["Resources"][function]["Properties"]["Role"]
    role_name = role_ref["Fn::GetAtt"][0]
    role = cfn["Resources"][role_name]["Properties"]
    statements: list[dict[str, Any]] = []
    for policy in resolver.resolve(role.get("Policies", [])):
        statements.extend(_as_list(policy["PolicyDocument"]["Statement"]))
    for arn in resolver.resolve(role.get("ManagedPolicyArns", [])):
        name = arn.rsplit("/", 1)[-1]
        assert name in KNOWN_MANAGED_POLICIES, f"{role_name} attaches {arn}: add its statements to the test"
        statements.extend(copy.deepcopy(KNOWN_MANAGED_POLICIES[name]))
    for resource in cfn["Resources"].values():
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            roles = resource["Properties"].get("Roles", [])
            if {"Ref": role_name} in roles:
                document = resolver.resolve(resource["Properties"]["PolicyDocument"])
                statements.extend(_as_list(document["Statement"]))
    for statement in statements:
        if "Condition" in statement and all(a.startswith("kms:") for a in _as_list(statement["Action"])):
            # kms:ViaService narrows the key to the calls S3 makes for the caller; the code makes none of
            # its own (USED_OUTSIDE_THE_CODE), so evaluating without it can only allow more, never hide
            # a permission the code needs.
            statement.pop("Condition")
        unsupported = {"Condition", "NotAction", "NotResource"} & statement.keys()
        assert not unsupported, f"{role_name}: the test does not evaluate {unsupported} yet: {statement}"
        statement["Action"] = _as_list(statement["Action"])
        statement["Resource"] = _as_list(statement["Resource"])
    return statements


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def moto_policy(statements: list[dict[str, Any]]) -> dict[str, Any]:
    """The test principal's policy: the role, in the form moto's action-level check can read."""
    moto_statements = []
    for statement in statements:
        moto_statements.append(
            {
                "Effect": statement["Effect"],
                "Action": statement["Action"],
                "Resource": statement["Resource"]
                if all(a.split(":")[0] in RESOURCE_CHECKED_BY_MOTO for a in statement["Action"])
                else "*",
            }
        )
    granted = {a for s in statements if s["Effect"] == "Allow" for a in s["Action"]}
    extra = sorted(name for name, underlying in AUTHORISED_AS.items() if granted & set(underlying))
    if extra:
        moto_statements.append({"Effect": "Allow", "Action": extra, "Resource": "*"})
    return {"Version": "2012-10-17", "Statement": moto_statements}


# ---- the recorded requests -----------------------------------------------------------------------------


@dataclass(frozen=True)
class AwsCall:
    """One authorisation AWS would make for a recorded request: action on resource."""

    action: str
    resource: str
    request: str  # the API operation, e.g. dynamodb:TransactWriteItems


def authorisations(entry: dict[str, Any], resources: LocalResources, region: str) -> list[AwsCall]:
    """What AWS authorises for one request of moto's recording."""
    headers = {k.lower(): v for k, v in entry["headers"].items()}
    service = headers["authorization"].split("Credential=", 1)[1].split("/")[3]
    if service == "s3":
        # REST, not JSON: the object is the path (path-style addressing, as moto is reached locally).
        path = urlsplit(entry["url"]).path.lstrip("/")
        action = {"PUT": "s3:PutObject", "GET": "s3:GetObject"}.get(entry["method"], f"s3:{entry['method']}")
        return [AwsCall(action, f"arn:aws:s3:::{path}", f"s3:{entry['method']} {path}")]
    operation = headers.get("x-amz-target", "").rsplit(".", 1)[-1]
    body = entry.get("body") or ""
    raw = base64.b64decode(body) if entry.get("body_encoded") else body.encode()
    payload = json.loads(raw or b"{}")
    request = f"{service}:{operation}"

    def table(name: str) -> str:
        return f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{name}"

    if service == "dynamodb" and operation == "TransactWriteItems":
        kinds = {
            "Put": "PutItem",
            "Update": "UpdateItem",
            "Delete": "DeleteItem",
            "ConditionCheck": "ConditionCheckItem",
        }
        return [
            AwsCall(f"dynamodb:{kinds[kind]}", table(spec["TableName"]), request)
            for item in payload["TransactItems"]
            for kind, spec in item.items()
        ]
    if service == "dynamodb":
        if operation in ("BatchWriteItem", "BatchGetItem"):
            return [AwsCall(request, table(name), request) for name in payload["RequestItems"]]
        return [AwsCall(request, table(payload["TableName"]), request)]
    if service == "sqs":
        name = payload["QueueUrl"].rsplit("/", 1)[-1]
        arn = f"arn:aws:sqs:{region}:{ACCOUNT}:{name}"
        action = AUTHORISED_AS.get(request, (request,))[0]
        return [AwsCall(action, arn, request)]
    if service == "secretsmanager":
        secret = payload["SecretId"]
        by_name = {arn.split(":")[-1].rsplit("-", 1)[0]: arn for arn in resources.secrets.values()}
        return [AwsCall(request, by_name.get(secret, secret), request)]
    return [AwsCall(request, "*", request)]


def allowed(statements: list[dict[str, Any]], call: AwsCall) -> bool:
    """AWS's answer for one action on one resource under these statements (moto's evaluator)."""
    policy = IAMPolicy(json.dumps({"Version": "2012-10-17", "Statement": statements}))
    return policy.is_action_permitted(call.action, call.resource) == PermissionResult.PERMITTED


def unused(statements: list[dict[str, Any]], calls: list[AwsCall]) -> set[tuple[str, str]]:
    """(statement Sid, action) pairs of the role that no call used."""
    left = set()
    for number, statement in enumerate(statements):
        if statement["Effect"] != "Allow":
            continue
        for action in statement["Action"]:
            narrowed = {**statement, "Action": [action]}
            if not any(allowed([narrowed], c) for c in calls):
                left.add((statement.get("Sid", f"statement {number}"), action))
    return left


# ---- the enforcing moto server -------------------------------------------------------------------------


@dataclass
class EnforcingAws:
    endpoint: str
    region: str
    resources: LocalResources
    cfn: dict[str, Any]
    admin: boto3.session.Session
    # access key id -> the function whose principal holds it
    keys: dict[str, str] = field(default_factory=dict)

    def principal(self, function: str, statements: list[dict[str, Any]]) -> dict[str, str]:
        """An IAM user holding exactly ``statements`` (moto's form); returns its environment."""
        iam = self.admin.client("iam")
        name = f"{function}-{len(self.keys)}"
        iam.create_user(UserName=name)
        iam.put_user_policy(
            UserName=name, PolicyName="role", PolicyDocument=json.dumps(moto_policy(statements))
        )
        key = iam.create_access_key(UserName=name)["AccessKey"]
        self.keys[key["AccessKeyId"]] = function
        return {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}

    def enforce(self) -> None:
        requests.post(f"{self.endpoint}/moto-api/reset-auth", data=b"0", timeout=10).raise_for_status()
        requests.post(f"{self.endpoint}/moto-api/recorder/start-recording", timeout=10).raise_for_status()

    def calls(self) -> dict[str, list[AwsCall]]:
        """What each function's principal did, as AWS would authorise it."""
        text = requests.get(f"{self.endpoint}/moto-api/recorder/download-recording", timeout=10).text
        by_function: dict[str, list[AwsCall]] = {}
        for line in text.splitlines():
            entry = json.loads(line)
            authorization = {k.lower(): v for k, v in entry["headers"].items()}.get("authorization", "")
            key_id = authorization.split("Credential=", 1)[-1].split("/")[0]
            if key_id in self.keys:
                function = self.keys[key_id]
                by_function.setdefault(function, []).extend(
                    authorisations(entry, self.resources, self.region)
                )
        return by_function


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def enforcing_aws(tmp_path, monkeypatch) -> Iterator[EnforcingAws]:
    """A moto server of its own (enforcement must not reach the session's), the template's resources."""
    port = _free_port()
    recording = tmp_path / "moto-recording.jsonl"
    env = {**os.environ, "MOTO_RECORDER_FILEPATH": str(recording)}
    env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)  # off while the resources are created
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "devstack.embedded_aws", "-H", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{endpoint}/moto-api/", timeout=1)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "moto server did not start"
                time.sleep(0.1)
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
        region = os.environ["AWS_REGION"]
        bootstrap = boto3.session.Session(aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
        iam = bootstrap.client("iam")
        iam.create_user(UserName="test-admin")
        iam.put_user_policy(
            UserName="test-admin",
            PolicyName="admin",
            PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
            ),
        )
        admin_key = iam.create_access_key(UserName="test-admin")["AccessKey"]
        admin = boto3.session.Session(
            aws_access_key_id=admin_key["AccessKeyId"], aws_secret_access_key=admin_key["SecretAccessKey"]
        )
        resources = create_resources(prefix=STACK_NAME, session=admin)
        parameters.clear_caches()
        parameters.base.DEFAULT_PROVIDERS.clear()
        yield EnforcingAws(endpoint, region, resources, rendered_template(), admin)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- the scenarios -------------------------------------------------------------------------------------


def function_env(aws: EnforcingAws, function: str, monkeypatch, credentials: dict[str, str]) -> None:
    for name, value in aws.resources.function_environment(function).items():
        monkeypatch.setenv(name, value)
    for name, value in credentials.items():
        monkeypatch.setenv(name, value)


def post(handler: Any, notification: dict[str, Any], secret: str = LOCAL_WEBHOOK_SECRET) -> int:
    event = signed_post(encode(notification), secret=secret)
    return handler(event, LocalLambdaContext("WebhookFunction", timeout_seconds=8))["statusCode"]


def queued(aws: EnforcingAws) -> int:
    attributes = aws.admin.client("sqs").get_queue_attributes(
        QueueUrl=aws.resources.queues["NotificationQueue"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return sum(int(v) for v in attributes.values())


def run_webhook(aws: EnforcingAws, nylas, monkeypatch, statements) -> list[int]:
    """The webhook's real requests: a challenge, two signed deliveries of one notification, a forgery."""
    function_env(aws, "WebhookFunction", monkeypatch, aws.principal("WebhookFunction", statements))
    handler = load_handler("WebhookFunction")
    first = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Where is my order?", body="Order 1042?"
    )
    notification = envelope(first)

    challenge = handler(
        proxy_event("GET", query={"challenge": "abc"}),
        LocalLambdaContext("WebhookFunction", timeout_seconds=8),
    )["statusCode"]
    return [
        challenge,
        post(handler, notification),
        post(handler, notification),  # Nylas' duplicate delivery
        post(handler, envelope(first), secret="forged"),
    ]


def test_each_function_works_with_exactly_its_template_role(enforcing_aws, nylas, monkeypatch):
    aws = enforcing_aws
    policies = {
        f: role_statements(aws.cfn, f, Resolver(aws.cfn, aws.resources, aws.region))
        for f in (
            "WebhookFunction",
            "ReplierFunction",
        )
    }
    aws.enforce()

    statuses = run_webhook(aws, nylas, monkeypatch, policies["WebhookFunction"])
    assert statuses == [200, 200, 200, 401]
    assert queued(aws) == 2

    # The replier: the two copies (one reply, one duplicate), a busy thread, a skip, a Nylas failure.
    function_env(
        aws, "ReplierFunction", monkeypatch, aws.principal("ReplierFunction", policies["ReplierFunction"])
    )
    monkeypatch.setenv("NYLAS_API_URI", nylas.url)
    monkeypatch.setenv("AGENT_GRANT_IDS", AGENT_GRANT_ID)
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:answers_an_invoice_with_a_file")
    # The event source mapping polls with the function's role (a fresh session reads these credentials).
    sqs = boto3.session.Session().client("sqs")
    replier = load_handler("ReplierFunction")
    # The busy thread: deferred, not waited for in process; every retry at once.
    tune_container(replier, {"busy_retry_seconds": 0, "retry_base_seconds": 0, "lease_wait_seconds": 0})
    poller = EventSourcePoller(replier, aws.resources, sqs_client=sqs)
    poller.drain()
    assert len(nylas.sends) == 1

    webhook_queue = NotificationQueue(
        aws.resources.queues["NotificationQueue"], 1_048_576, aws.admin.client("sqs")
    )
    busy = nylas.deliver_inbound(AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Refund", body="Please.")
    aws.admin.client("dynamodb").put_item(
        TableName=aws.resources.tables["StateTable"],
        Item={
            "pk": {"S": thread_key(AGENT_GRANT_ID, busy["thread_id"])},
            "lease_owner": {"S": "another-worker"},
            # Held for 4 s: long enough that the first receive meets it however slowly the machine
            # runs, short enough that the record comes back after its hold spread over its receives
            # left, ceil(4 / 7) = 1 s (redelivery.retry_delay), which this test waits for.
            "lease_expires_at": {"N": str(int(time.time() * 1000) + 4_000)},
        },
    )
    webhook_queue.enqueue(Notification(envelope(busy)))
    assert poller.poll_once().failed == 1  # thread busy: retried, visibility shortened
    aws.admin.client("dynamodb").delete_item(
        TableName=aws.resources.tables["StateTable"],
        Key={"pk": {"S": thread_key(AGENT_GRANT_ID, busy["thread_id"])}},
    )
    # The busy record comes back after its hold spread over its receives left: 1 s.
    time.sleep(1.5)
    own = nylas.deliver_inbound(AGENT_GRANT_ID, from_email=AGENT_EMAIL, subject="Note", body="internal")
    webhook_queue.enqueue(Notification(envelope(own)))
    failing = nylas.deliver_inbound(AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Hello", body="Hi")
    nylas.inject("POST", rf"^/v3/grants/{AGENT_GRANT_ID}/messages/send$", Fault.status(503), times=1)
    webhook_queue.enqueue(Notification(envelope(failing)))
    poller.drain()
    replied_to = sorted(s.payload["reply_to_message_id"] for s in nylas.sends)
    assert replied_to == sorted([aws_first_id(nylas, "Where is my order?"), busy["id"], failing["id"]])

    # A send Nylas refuses for good: the ledger records the failure instead of retrying forever.
    refused = nylas.deliver_inbound(AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Bad", body="Hi")
    # (Refused twice: a 400 is first tried again without our custom headers.)
    nylas.inject("POST", rf"^/v3/grants/{AGENT_GRANT_ID}/messages/send$", Fault.status(400), times=2)
    webhook_queue.enqueue(Notification(envelope(refused)))
    poller.drain()
    ledger = aws.admin.client("dynamodb").get_item(
        TableName=aws.resources.tables["StateTable"],
        Key={"pk": {"S": message_key(AGENT_GRANT_ID, refused["id"])}},
    )
    assert ledger["Item"]["status"]["S"] == Status.FAILED

    # A send Nylas queues (202): the replier schedules its own reconcile on the queue (SendMessage).
    nylas.modes.send_queue = True
    queued_reply = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Queued", body="Hi"
    )
    webhook_queue.enqueue(Notification(envelope(queued_reply)))
    poller.poll_once()
    nylas.modes.send_queue = False

    # A reply with a file: kept in the bucket before its intent (PutObject), and read back by the
    # record that sends it after a 503 (GetObject).
    invoice = nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email=CUSTOMER_EMAIL,
        subject="Invoice",
        body="Please correct it.",
        attachments=[{"filename": "scan.pdf", "content_type": "application/pdf", "content": b"%PDF-1.4 s"}],
    )
    nylas.inject("POST", rf"^/v3/grants/{AGENT_GRANT_ID}/messages/send$", Fault.status(503), times=1)
    webhook_queue.enqueue(Notification(envelope(invoice)))
    poller.drain()
    [with_file] = [s for s in nylas.sends if s.payload["reply_to_message_id"] == invoice["id"]]
    assert [base64.b64decode(a["content"]) for a in with_file.payload["attachments"]] == [CORRECTED_INVOICE]

    # A grant's life (issue 42), each notification as the emulator fires it: created (its first record
    # and change item, one transaction of Puts), expired and re-authenticated (its life read strongly
    # consistent and written; the backfill listed at Nylas and queued), deleted (its state swept from
    # the state table: Scan, BatchWriteItem).
    nylas.on_notification = lambda trigger, data: webhook_queue.enqueue(
        Notification(notification_envelope(trigger, data))
    )
    nylas.create_grant("grant-life-0009", "life@replyonce.example")
    poller.drain()
    for change in (nylas.expire_grant, nylas.reauthenticate_grant, nylas.delete_grant):
        change(AGENT_GRANT_ID)
        poller.drain()
    nylas.on_notification = None
    swept = aws.admin.client("dynamodb").get_item(
        TableName=aws.resources.tables["StateTable"],
        Key={"pk": {"S": message_key(AGENT_GRANT_ID, refused["id"])}},
    )
    assert "Item" not in swept

    report_and_check(aws, policies)


CORRECTED_INVOICE = b"%PDF-1.7 corrected"


def answers_an_invoice_with_a_file(conversation: Conversation) -> Reply:
    """The template's acknowledgement; for an invoice, with the corrected one attached."""
    reply = template_agent(conversation)
    if conversation.target.subject != "Invoice":
        return reply
    [scan] = conversation.target.attachments
    assert scan.read().startswith(b"%PDF")
    file = ReplyAttachment(CORRECTED_INVOICE, "invoice.pdf", "application/pdf")
    return Reply(text=reply.text, attachments=(file,))


def aws_first_id(nylas, subject: str) -> str:
    return next(m["id"] for _, m in nylas.mailbox(AGENT_GRANT_ID) if m.get("subject") == subject)


def report_and_check(aws: EnforcingAws, policies: dict[str, list[dict[str, Any]]]) -> None:
    calls = aws.calls()
    denied = [
        f"{function} needs {c.action} on {c.resource} ({c.request}); its role does not grant it"
        for function, statements in policies.items()
        for c in calls.get(function, [])
        if not allowed(statements, c)
    ]
    assert not denied, "\n".join(denied)
    report = []
    undocumented = []
    for function, statements in policies.items():
        for sid, action in sorted(unused(statements, calls.get(function, []))):
            reason = USED_OUTSIDE_THE_CODE.get((function, sid, action))
            report.append(f"  {function} {sid}: {action} - {reason or 'NO DOCUMENTED REASON'}")
            if reason is None:
                undocumented.append(f"{function} {sid}: {action}")
    print("permissions the roles grant and the handlers never used:\n" + "\n".join(report))
    assert not undocumented, (
        "the role grants permissions no request used; remove them from template.yaml or document "
        "why in USED_OUTSIDE_THE_CODE: " + ", ".join(undocumented)
    )


def test_a_permission_the_role_lacks_fails_the_request(enforcing_aws, nylas, monkeypatch):
    """The harness can fail: without the queue statement the webhook is refused and answers 503."""
    aws = enforcing_aws
    statements = role_statements(aws.cfn, "WebhookFunction", Resolver(aws.cfn, aws.resources, aws.region))
    without_queue = [s for s in statements if "sqs:SendMessage" not in s["Action"]]
    assert len(without_queue) == len(statements) - 1
    aws.enforce()
    statuses = run_webhook(aws, nylas, monkeypatch, without_queue)
    # Refused by IAM: a failure of ours, which Nylas retries; nothing was queued.
    assert statuses == [200, 503, 503, 401]
    assert queued(aws) == 0
