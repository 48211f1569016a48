"""The operator commands (``python -m ops``) end to end: moto for AWS, the Nylas emulator for Nylas.

What is real here: the CloudFormation lookup (a moto stack whose outputs point at this test's
resources, as ``make deploy`` leaves them), the Secrets Manager secret, the queues, the state table,
the Nylas HTTP API, and the webhook endpoint: the unchanged WebhookFunction behind the API Gateway
stand-in, so when the emulator sends its challenge our endpoint answers it, and a notification
signed with the secret Nylas issued is accepted (or not) by the same code as in Lambda. What is
not: ``sam`` itself (the deploy wrapper is tested by the commands it would run) and SQS's
``StartMessageMoveTask``, which moto lacks (its requests are checked against botocore's model
with a Stubber; the ``copy`` method moves real messages).
"""

import io
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import boto3
import pytest
import requests
from botocore.stub import Stubber

from devstack.containers import load_handler, tune_container
from devstack.events import AGENT_GRANT_ID, encode, message_created
from devstack.gateway import ApiGatewayStandIn
from devstack.nylas import Fault
from devstack.template import LOCAL_API_KEY, LOCAL_PREVIOUS_WEBHOOK_SECRET, LOCAL_WEBHOOK_SECRET
from ops import deploy, redrive
from ops.cli import Runtime, main
from ops.errors import ConfigurationError, NylasApiError, OpsError
from ops.nylas_admin import NylasAdmin
from ops.samconfig import DEFAULT_SAMCONFIG, load_samconfig, parse_parameter_overrides
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.rules.signature import sign
from replyonce.state import Intent, Settlement, Status, thread_key
from tests.conftest import drain, register_stack

STACK = "replyonce-ops-test"
REGION = "us-east-1"
ALERT_EMAIL = "alerts@replyonce.example"
# A stack needs one resource; moto creates a queue quickly and it touches nothing the tests read.
NOTHING = {"Placeholder": {"Type": "AWS::SQS::Queue"}}


# ---- fixtures ------------------------------------------------------------------------------------------


@pytest.fixture
def gateway(aws, monkeypatch):
    """WebhookFunction behind the API Gateway stand-in, configured as the template configures it."""
    for name, value in aws.function_environment("WebhookFunction").items():
        monkeypatch.setenv(name, value)
    stand_in = ApiGatewayStandIn(load_handler("WebhookFunction"), timeout_seconds=8).start()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def fresh_reads(gateway):
    """The webhook re-reads its secret on every failed signature (no rate limit); list it after `gateway`.

    Why: these tests deliver several signatures within seconds, each to be judged against the
    secret as stored at that moment; with the rate limit a delivery right after a refused read is
    answered by the flag still cached (503, retried), which the settle test checks on its own.
    """
    handler = load_handler("WebhookFunction")
    tune_container(handler, {"secrets": {"refresh_min_interval_seconds": 0}})
    gateway.replace_handler(handler)


@pytest.fixture
def make_stack(aws, nylas):
    """Create the moto stack the commands look up; its outputs are this test's resources."""

    def create(webhook_url: str = "http://127.0.0.1:9/v1/webhook", alert_email: str = ALERT_EMAIL) -> str:
        outputs = {
            "WebhookUrl": webhook_url,
            "NotificationQueueUrl": aws.queues["NotificationQueue"],
            "DeadLetterQueueUrl": aws.queues["NotificationDeadLetterQueue"],
            "NylasSecretsArn": aws.secrets["NylasSecrets"],
            "NylasApiKeySecretArn": aws.secrets["NylasApiKeySecret"],
            "StateTableName": aws.tables["StateTable"],
        }
        return register_stack(STACK, outputs, {"NylasApiUri": nylas.url, "AlertEmail": alert_email})

    return create


@pytest.fixture
def stack(make_stack, gateway):
    """The stack of a deployed ReplyOnce: its WebhookUrl is the running webhook endpoint."""
    return make_stack(webhook_url=gateway.url)


class Run:
    """The result of one ``python -m ops`` invocation."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def text(self) -> str:
        return self.out + self.err


def ops(*argv: str, stack_name: str = STACK, **runtime_fields) -> Run:
    """Run ``python -m ops`` in-process against moto (``AWS_ENDPOINT_URL``) and the emulator."""
    out, err = io.StringIO(), io.StringIO()
    runtime_fields.setdefault("environ", {})  # never the developer's own NYLAS_API_KEY
    # The rotation commands wait settle_seconds() between raising the flag and calling Nylas; the
    # one test about that wait passes the real sleep.
    runtime_fields.setdefault("sleep", lambda seconds: None)
    runtime = Runtime(out=out, err=err, interactive=lambda: False, **runtime_fields)
    command, *rest = argv
    code = main([command, "--stack-name", stack_name, "--region", REGION, *rest], runtime)
    return Run(code, out.getvalue(), err.getvalue())


def stored_secret(aws, name: str = "NylasSecrets") -> dict:
    """The webhook's secret (or, by logical id, another of the template's secrets) as stored."""
    value = boto3.client("secretsmanager").get_secret_value(SecretId=aws.secrets[name])
    return json.loads(value["SecretString"])


def stored_api_key(aws) -> str:
    return stored_secret(aws, "NylasApiKeySecret")["api_key"]


def put_secret(aws, name: str = "NylasSecrets", **fields: str) -> None:
    boto3.client("secretsmanager").put_secret_value(
        SecretId=aws.secrets[name], SecretString=json.dumps(fields)
    )


def deliver(gateway, secret: str, notification_id: str) -> int:
    """POST a notification signed with ``secret`` to the endpoint, as Nylas would."""
    body = encode(message_created(notification_id=notification_id))
    headers = {"Content-Type": "application/json", "X-Nylas-Signature": sign(body, secret)}
    return requests.post(gateway.url, data=body, headers=headers, timeout=10).status_code


def assert_no_secret_in(run: Run, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in run.text


# ---- register-webhook ----------------------------------------------------------------------------------


def test_register_webhook_answers_the_challenge_and_stores_the_issued_secret(aws, nylas, gateway, stack, sqs):
    run = ops("register-webhook")

    assert run.code == 0, run.err
    [webhook] = nylas.webhooks()
    # What Nylas was asked for.
    assert webhook["webhook_url"] == gateway.url
    # New mail, the outcome of a send Nylas queued (Agent Accounts) and the grants' lives (issue 42).
    assert webhook["trigger_types"] == [
        "message.created",
        "message.send_failed",
        "message.delivered",
        "grant.created",
        "grant.updated",
        "grant.expired",
        "grant.deleted",
    ]
    assert webhook["notification_email_addresses"] == [ALERT_EMAIL]
    # Nylas' challenge reached our endpoint and was answered with the bare value.
    [challenge] = nylas.challenges
    assert challenge["url"].startswith(gateway.url + "?challenge=")
    assert challenge["verified"] is True
    # The issued secret is in the stack's secret, nowhere in the output.
    secret = stored_secret(aws)
    assert secret["webhook_secret"] == webhook["webhook_secret"]
    assert secret["webhook_id"] == webhook["id"]
    assert secret["previous_webhook_secret"] == ""
    assert "rotating_until" not in secret  # the registration is over
    # The webhook's secret never holds the API key: the replier's own secret does.
    assert "api_key" not in secret
    assert stored_api_key(aws) == LOCAL_API_KEY
    assert_no_secret_in(run, webhook["webhook_secret"], LOCAL_API_KEY)
    assert webhook["id"] in run.out
    # Deliveries signed with it are accepted and queued; the stack's original secret no longer is.
    assert deliver(gateway, webhook["webhook_secret"], "ops-registered-0001") == 200
    assert deliver(gateway, LOCAL_WEBHOOK_SECRET, "ops-registered-0002") == 401
    assert len(drain(sqs, aws.queues["NotificationQueue"])) == 1


def test_register_webhook_twice_creates_one_webhook(nylas, stack):
    assert ops("register-webhook").code == 0
    again = ops("register-webhook")

    assert again.code == 0
    assert "already registered" in again.out
    assert len(nylas.webhooks()) == 1
    assert nylas.count("POST", "/v3/webhooks") == 1


def test_register_webhook_names_the_triggers_an_older_webhook_lacks(aws, nylas, gateway, stack):
    api = NylasAdmin(nylas.url, LOCAL_API_KEY)
    older = api.create_webhook(gateway.url, ["message.created"], "ReplyOnce", [ALERT_EMAIL])
    put_secret(aws, webhook_secret=older.secret, webhook_id=older.id)

    run = ops("register-webhook")

    assert run.code == 0, run.err
    assert "already registered" in run.out
    assert (
        "it lacks the triggers message.send_failed, message.delivered, grant.created, grant.updated, "
        "grant.expired, grant.deleted" in run.out
    )
    assert len(nylas.webhooks()) == 1


def test_a_deleted_webhook_is_gone_and_deleting_it_again_is_nylas_404(nylas, gateway):
    api = NylasAdmin(nylas.url, LOCAL_API_KEY)
    created = api.create_webhook(gateway.url, ["message.created"], "ReplyOnce", [])

    api.delete_webhook(created.id)

    assert nylas.webhooks() == []
    with pytest.raises(NylasApiError) as refused:
        api.delete_webhook(created.id)
    assert refused.value.status == 404


def test_register_webhook_reports_a_failed_challenge_in_nylas_words(aws, nylas, gateway, make_stack):
    # A URL our API does not serve: the stand-in answers 403 like API Gateway, Nylas refuses the webhook.
    make_stack(webhook_url=gateway.url.replace("/webhook", "/not-the-webhook"))
    before = stored_secret(aws)

    run = ops("register-webhook")

    assert run.code == 1
    assert "Nylas answered 400" in run.err
    assert "unable.verify.webhook_url : status is not ok, got 403" in run.err
    assert nylas.webhooks() == []
    assert stored_secret(aws) == before


def test_register_webhook_without_api_key_stops_before_nylas(aws, nylas, stack):
    put_secret(aws, "NylasApiKeySecret", api_key="")

    run = ops("register-webhook")

    assert run.code == 1
    assert "has no api_key" in run.err
    assert "run `make set-api-key`" in run.err  # what works outside the venv
    assert nylas.requests == []


def test_register_webhook_takes_a_missing_api_key_from_the_environment(aws, nylas, stack):
    put_secret(aws, "NylasApiKeySecret", api_key="")

    run = ops("register-webhook", environ={"NYLAS_API_KEY": LOCAL_API_KEY})

    assert run.code == 0, run.err
    assert stored_api_key(aws) == LOCAL_API_KEY
    assert len(nylas.webhooks()) == 1
    assert_no_secret_in(run, LOCAL_API_KEY)


def test_register_webhook_refuses_when_the_secret_names_a_webhook_for_another_url(aws, nylas, gateway, stack):
    assert ops("register-webhook").code == 0
    boto3.client("cloudformation").delete_stack(StackName=STACK)
    other = "replyonce-ops-test-moved"
    # The API was recreated: same secret, new URL.
    register_stack(
        other,
        {
            "WebhookUrl": gateway.url + "-moved",
            "NylasSecretsArn": aws.secrets["NylasSecrets"],
            "NylasApiKeySecretArn": aws.secrets["NylasApiKeySecret"],
        },
    )

    run = ops(
        "register-webhook",
        "--nylas-api-uri",
        nylas.url,
        "--notification-email",
        ALERT_EMAIL,
        stack_name=other,
    )

    assert run.code == 2
    assert "--force" in run.err
    assert len(nylas.webhooks()) == 1


def test_unknown_stack_is_a_clear_error(aws):
    run = ops("register-webhook", stack_name="no-such-stack")

    assert run.code == 2
    assert "stack 'no-such-stack' not found in region us-east-1" in run.err


def test_stack_without_the_outputs_is_a_clear_error(aws):
    boto3.client("cloudformation").create_stack(
        StackName="not-replyonce",
        TemplateBody=json.dumps({"Resources": NOTHING}),
    )

    run = ops("redrive", stack_name="not-replyonce")

    assert run.code == 2
    assert "has no output 'DeadLetterQueueUrl'" in run.err


# ---- rotate-secret -------------------------------------------------------------------------------------


def test_rotate_secret_keeps_old_and_new_accepted_during_the_switch(aws, nylas, gateway, fresh_reads, stack):
    assert ops("register-webhook").code == 0
    first = nylas.webhooks()[0]["webhook_secret"]
    # A warm container that has cached the first secret, as in production.
    assert deliver(gateway, first, "ops-rotate-0001") == 200

    run = ops("rotate-secret")

    assert run.code == 0, run.err
    second = nylas.webhooks()[0]["webhook_secret"]
    assert second != first
    secret = stored_secret(aws)
    assert secret["webhook_secret"] == second
    assert secret["previous_webhook_secret"] == first
    assert stored_api_key(aws) == LOCAL_API_KEY
    assert "rotating_until" not in secret  # the rotation is over
    assert nylas.count("POST", f"/v3/webhooks/rotate-secret/{secret['webhook_id']}") == 1
    assert_no_secret_in(run, first, second, LOCAL_API_KEY)
    # Nylas signs with the new secret at once; a retry of an older notification may carry the old one.
    assert deliver(gateway, second, "ops-rotate-0002") == 200
    assert deliver(gateway, first, "ops-rotate-0003") == 200
    assert deliver(gateway, "a-forged-secret", "ops-rotate-0004") == 401


def assert_the_next_run_finishes_the_rotation(aws, nylas, gateway, first: str, notification_id: str) -> None:
    """A later ``rotate-secret`` says the earlier run did not finish, stores the secret Nylas now
    signs with (the one before it kept as previous), lowers the flag, and deliveries verify again."""
    run = ops("rotate-secret")

    assert run.code == 0, run.err
    assert "did not finish" in run.out
    secret = stored_secret(aws)
    assert secret["webhook_secret"] == nylas.webhooks()[0]["webhook_secret"]
    assert secret["previous_webhook_secret"] == first
    assert "rotating_until" not in secret
    assert deliver(gateway, secret["webhook_secret"], notification_id) == 200


def deliver_once_the_flag_is_up(aws, gateway, notification_id: str) -> tuple[threading.Thread, dict]:
    """A watcher thread: once the stored secret carries ``rotating_until``, it records the secret and
    the status of a delivery signed with a secret Nylas is issuing right now (not stored yet).

    Polls rather than guesses when the command gets there: its start-up time depends on the machine.
    """
    seen: dict = {}

    def look() -> None:
        deadline = time.monotonic() + 10
        while "rotating_until" not in stored_secret(aws) and time.monotonic() < deadline:
            time.sleep(0.05)
        seen["secret"] = stored_secret(aws)
        seen["status"] = deliver(gateway, "the-secret-nylas-is-issuing", notification_id)

    watcher = threading.Thread(target=look)
    watcher.start()
    return watcher, seen


def test_rotation_is_announced_in_the_secret_while_nylas_issues_the_new_one(aws, nylas, gateway, stack):
    # Between Nylas' answer and our store, deliveries carry a secret we cannot know yet: while the
    # secret says a rotation is under way, the webhook answers those 503 (retried), not 401 (dropped).
    assert ops("register-webhook").code == 0
    nylas.inject("POST", r"^/v3/webhooks/rotate-secret/", Fault.delay(1.5))
    watcher, seen = deliver_once_the_flag_is_up(aws, gateway, "ops-rotate-during")
    assert ops("rotate-secret").code == 0
    watcher.join(timeout=10)
    assert float(seen["secret"]["rotating_until"]) > time.time()
    assert seen["status"] == 503


@pytest.mark.parametrize(
    "fault",
    [Fault.lose_response(), Fault.status(502)],
    ids=["answer-lost-after-rotating", "gateway-5xx"],
)
def test_rotation_with_an_unknown_outcome_keeps_both_secrets_and_the_flag(
    aws, nylas, gateway, fresh_reads, stack, fault
):
    # Nylas may have rotated without us learning the new secret. Writing the old secret back and
    # clearing the flag would answer every delivery 401, which Nylas never retries.
    assert ops("register-webhook").code == 0
    first = stored_secret(aws)["webhook_secret"]
    nylas.inject("POST", r"^/v3/webhooks/rotate-secret/", fault)

    run = ops("rotate-secret")

    assert run.code == 1
    assert "`make rotate-secret` again" in run.err
    secret = stored_secret(aws)
    assert secret["webhook_secret"] == first
    assert float(secret["rotating_until"]) > time.time()
    # Whatever Nylas now signs with is retried (503), not dropped.
    issued = nylas.webhooks()[0]["webhook_secret"]
    assert deliver(gateway, issued if issued != first else "unknown-new-secret", "ops-unknown-0001") == 503

    assert_the_next_run_finishes_the_rotation(aws, nylas, gateway, first, "ops-unknown-0002")


def test_a_forged_request_just_before_a_rotation_cannot_turn_the_new_secret_into_401s(
    aws, nylas, gateway, stack
):
    # A forged request forces a fresh secret read, and the next one is refused by the rate limit
    # for secrets_refresh_min_interval_seconds. Were Nylas to issue the new secret inside that
    # interval, the webhook would judge a genuine delivery against a read without the flag: 401,
    # dropped. The command raises the flag, waits out the interval, then asks Nylas.
    assert ops("register-webhook").code == 0
    assert deliver(gateway, stored_secret(aws)["webhook_secret"], "ops-settle-0001") == 200
    nylas.inject("POST", r"^/v3/webhooks/rotate-secret/", Fault.lose_response())
    assert deliver(gateway, "a-forged-secret", "ops-settle-forged-1") == 401  # forces a fresh read

    assert ops("rotate-secret", sleep=time.sleep).code == 1  # Nylas rotated; the answer was lost

    issued = nylas.webhooks()[0]["webhook_secret"]
    assert deliver(gateway, issued, "ops-settle-0002") == 503
    # And while a fresh read is refused (the one above was just now), the cached flag still says 503.
    assert deliver(gateway, "another-forged-secret", "ops-settle-forged-2") == 503
    assert deliver(gateway, issued, "ops-settle-0003") == 503


def test_rotation_refused_by_nylas_restores_the_secret_as_it_was(aws, nylas, stack):
    assert ops("register-webhook").code == 0
    before = stored_secret(aws)
    nylas.inject("POST", r"^/v3/webhooks/rotate-secret/", Fault.status(429))

    run = ops("rotate-secret")

    assert run.code == 1
    assert "Nylas answered 429" in run.err
    assert stored_secret(aws) == before


def test_a_rotation_killed_mid_run_is_finished_by_the_next_run(aws, nylas, gateway, fresh_reads, stack):
    assert ops("register-webhook").code == 0
    first = stored_secret(aws)["webhook_secret"]
    nylas.inject("POST", r"^/v3/webhooks/rotate-secret/", Fault.delay(2))
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "ops", "rotate-secret", "--stack-name", STACK, "--region", REGION]
    environment = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'layers' / 'replyonce'}"}
    process = subprocess.Popen(command, cwd=root, env=environment)  # noqa: S603 - our own module
    try:
        deadline = time.monotonic() + 20
        while "rotating_until" not in stored_secret(aws) and time.monotonic() < deadline:
            time.sleep(0.05)
        while nylas.count("POST", "/v3/webhooks/rotate-secret/") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.kill()  # dies while Nylas is rotating: the new secret never reaches the store
        process.wait(timeout=10)
    while nylas.webhooks()[0]["webhook_secret"] == first and time.monotonic() < deadline:
        time.sleep(0.05)
    lost = nylas.webhooks()[0]["webhook_secret"]
    assert lost != first
    assert stored_secret(aws)["webhook_secret"] == first
    # Nylas signs with a secret nobody stored: retried, not dropped, until an operator re-runs.
    assert deliver(gateway, lost, "ops-killed-0001") == 503

    assert_the_next_run_finishes_the_rotation(aws, nylas, gateway, first, "ops-killed-0002")


def test_register_webhook_raises_the_flag_before_nylas_creates_the_webhook(aws, nylas, gateway, stack):
    # Nylas may deliver as soon as the webhook exists, signed with a secret not stored yet.
    nylas.inject("POST", r"^/v3/webhooks$", Fault.delay(1.5))
    watcher, seen = deliver_once_the_flag_is_up(aws, gateway, "ops-register-during")
    assert ops("register-webhook").code == 0
    watcher.join(timeout=10)
    assert float(seen["secret"]["rotating_until"]) > time.time()
    assert seen["status"] == 503
    assert "rotating_until" not in stored_secret(aws)


def test_register_webhook_refused_by_nylas_lowers_the_flag(aws, nylas, gateway, make_stack):
    make_stack(webhook_url=gateway.url.replace("/webhook", "/not-the-webhook"))

    assert ops("register-webhook").code == 1

    assert "rotating_until" not in stored_secret(aws)


def test_clear_previous_drops_only_the_previous_secret(aws, nylas, stack):
    assert ops("register-webhook").code == 0
    assert ops("rotate-secret").code == 0
    current = stored_secret(aws)

    run = ops("rotate-secret", "--clear-previous")

    assert run.code == 0
    assert stored_secret(aws) == {**current, "previous_webhook_secret": ""}
    assert nylas.count("POST", "/v3/webhooks/rotate-secret/") == 1  # no second rotation


def test_rotate_secret_needs_a_webhook_id(aws, nylas, stack):
    run = ops("rotate-secret")

    assert run.code == 2
    assert "no webhook_id" in run.err
    assert "register-webhook" in run.err
    assert nylas.requests == []


def test_rotate_secret_of_an_unknown_webhook_keeps_the_secret(aws, nylas, stack):
    before = stored_secret(aws)

    run = ops("rotate-secret", "--webhook-id", "deleted-in-the-dashboard")

    assert run.code == 1
    assert "Nylas answered 404" in run.err
    assert stored_secret(aws) == before


# ---- set-api-key ---------------------------------------------------------------------------------------


def test_set_api_key_reads_the_environment_and_keeps_the_other_fields(aws, stack):
    run = ops("set-api-key", environ={"NYLAS_API_KEY": "nyk-new-key"})

    assert run.code == 0
    assert stored_api_key(aws) == "nyk-new-key"
    assert stored_secret(aws) == {
        "webhook_secret": LOCAL_WEBHOOK_SECRET,
        "previous_webhook_secret": LOCAL_PREVIOUS_WEBHOOK_SECRET,
    }
    assert_no_secret_in(run, "nyk-new-key")


def test_set_api_key_moves_a_key_left_in_the_webhook_secret_by_an_older_stack(aws, stack):
    # Before the split one secret held both: the internet-facing webhook could read the API key.
    put_secret(aws, webhook_secret=LOCAL_WEBHOOK_SECRET, api_key="nyk-from-before-the-split")
    put_secret(aws, "NylasApiKeySecret")

    run = ops("set-api-key", environ={})

    assert run.code == 0, run.err
    assert stored_api_key(aws) == "nyk-from-before-the-split"
    assert stored_secret(aws) == {"webhook_secret": LOCAL_WEBHOOK_SECRET, "previous_webhook_secret": ""}
    assert_no_secret_in(run, "nyk-from-before-the-split")


def test_set_api_key_prompts_without_echo_when_interactive(aws, stack):
    prompts = []

    def prompt(text: str) -> str:
        prompts.append(text)
        return "nyk-typed-key\n"

    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, environ={}, prompt_secret=prompt, interactive=lambda: True)
    code = main(["set-api-key", "--stack-name", STACK, "--region", REGION], runtime)

    assert code == 0
    assert len(prompts) == 1
    assert stored_api_key(aws) == "nyk-typed-key"


def test_set_api_key_without_a_key_or_a_terminal_fails(aws, stack):
    run = ops("set-api-key", environ={})

    assert run.code == 2
    assert "NYLAS_API_KEY" in run.err
    assert stored_api_key(aws) == LOCAL_API_KEY


# ---- redrive -------------------------------------------------------------------------------------------


def dead_letter(aws, sqs, count: int) -> list[dict]:
    """Put ``count`` notifications on the dead-letter queue as the queue's redrive policy leaves them."""
    sent = []
    for index in range(count):
        body = json.dumps({"id": f"dead-{index}", "type": "message.created", "data": {"object": {}}})
        attributes = {
            "notification_id": {"DataType": "String", "StringValue": f"dead-{index}"},
            "notification_type": {"DataType": "String", "StringValue": "message.created"},
            "grant_id": {"DataType": "String", "StringValue": AGENT_GRANT_ID},
        }
        sqs.send_message(
            QueueUrl=aws.queues["NotificationDeadLetterQueue"], MessageBody=body, MessageAttributes=attributes
        )
        sent.append({"body": body, "attributes": attributes})
    return sent


def test_redrive_copy_moves_every_message_back_with_its_attributes(aws, sqs, make_stack):
    make_stack()
    sent = dead_letter(aws, sqs, 3)

    run = ops("redrive", "--method", "copy")

    assert run.code == 0, run.err
    assert "3 message(s) on the dead-letter queue" in run.out
    assert drain(sqs, aws.queues["NotificationDeadLetterQueue"]) == []
    moved = sqs.receive_message(
        QueueUrl=aws.queues["NotificationQueue"],
        MaxNumberOfMessages=10,
        MessageAttributeNames=["All"],
        MessageSystemAttributeNames=["MessageGroupId"],
    )["Messages"]
    # Each back in its grant's group of the fair queue, as the webhook sent it.
    assert [m["Attributes"]["MessageGroupId"] for m in moved] == [AGENT_GRANT_ID] * 3
    assert sorted(m["Body"] for m in moved) == sorted(s["body"] for s in sent)
    for message in moved:
        notification_id = json.loads(message["Body"])["id"]
        assert message["MessageAttributes"]["notification_id"]["StringValue"] == notification_id
        assert message["MessageAttributes"]["grant_id"]["StringValue"] == AGENT_GRANT_ID


def test_redrive_copy_moves_at_most_max(aws, sqs, make_stack):
    make_stack()
    dead_letter(aws, sqs, 3)

    assert ops("redrive", "--method", "copy", "--max", "2").code == 0

    assert len(drain(sqs, aws.queues["NotificationQueue"])) == 2
    assert len(drain(sqs, aws.queues["NotificationDeadLetterQueue"])) == 1


def test_redrive_peek_shows_notifications_and_moves_nothing(aws, sqs, make_stack):
    make_stack()
    dead_letter(aws, sqs, 2)

    run = ops("redrive", "--peek", "5")

    assert run.code == 0
    for expected in ("dead-0", "dead-1", AGENT_GRANT_ID):
        assert expected in run.out
    assert len(drain(sqs, aws.queues["NotificationDeadLetterQueue"])) == 2
    assert drain(sqs, aws.queues["NotificationQueue"]) == []


def test_redrive_of_an_empty_dead_letter_queue_does_nothing(aws, make_stack):
    make_stack()

    run = ops("redrive")

    assert run.code == 0
    assert "empty" in run.out


QUEUES = redrive.Queues(
    dead_letter_url="https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
    dead_letter_arn="arn:aws:sqs:us-east-1:123456789012:dlq",
    notification_url="https://sqs.us-east-1.amazonaws.com/123456789012/queue",
    notification_arn="arn:aws:sqs:us-east-1:123456789012:queue",
)


def test_move_task_is_started_from_the_dead_letter_queue_and_followed_to_completion():
    sqs = boto3.client("sqs", region_name=REGION)
    slept = []
    with Stubber(sqs) as stub:
        # The Stubber checks every request against the SQS API model: names, types, required fields.
        stub.add_response(
            "start_message_move_task",
            {"TaskHandle": "handle-1"},
            {
                "SourceArn": QUEUES.dead_letter_arn,
                "DestinationArn": QUEUES.notification_arn,
                "MaxNumberOfMessagesPerSecond": 5,
            },
        )
        for status, moved in (("RUNNING", 1), ("COMPLETED", 3)):
            stub.add_response(
                "list_message_move_tasks",
                {
                    "Results": [
                        {
                            "Status": status,
                            "SourceArn": QUEUES.dead_letter_arn,
                            "ApproximateNumberOfMessagesMoved": moved,
                            "ApproximateNumberOfMessagesToMove": 3,
                        }
                    ]
                },
                {"SourceArn": QUEUES.dead_letter_arn, "MaxResults": 1},
            )
        said = []
        assert redrive.start_move_task(sqs, QUEUES, max_per_second=5) == "handle-1"
        task = redrive.wait_for_move_task(sqs, QUEUES, sleep=slept.append, say=said.append)
        stub.assert_no_pending_responses()

    assert task["Status"] == "COMPLETED"
    assert slept == [5.0]
    assert said[-1] == "move task COMPLETED: 3 of 3 moved"


def test_move_task_failures_are_reported():
    sqs = boto3.client("sqs", region_name=REGION)
    with Stubber(sqs) as stub:
        stub.add_client_error("start_message_move_task", "UnsupportedOperation", "a task is already running")
        stub.add_response(
            "list_message_move_tasks",
            {"Results": [{"Status": "FAILED", "FailureReason": "AccessDenied on the destination"}]},
        )
        with pytest.raises(OpsError, match="--method copy"):
            redrive.start_move_task(sqs, QUEUES)
        with pytest.raises(OpsError, match="AccessDenied on the destination"):
            redrive.wait_for_move_task(sqs, QUEUES, sleep=lambda _: None, say=lambda _: None)


# ---- thread-state --------------------------------------------------------------------------------------


def write_thread_history(aws, thread_id: str, *, hold_lease: bool) -> None:
    """Leave the state the replier leaves, written by the replier's own store."""
    store = DynamoDBStateStore(aws.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=3600)
    key = thread_key(AGENT_GRANT_ID, thread_id)
    now = int(time.time())
    lease = store.take_lease(key, 60_000)
    intent = Intent("intent-1", thread_id, "msg-burst", ("msg-first", "msg-burst"), "{}", created_at=now)
    store.store_intent(lease, intent)
    store.settle(
        lease,
        Settlement(
            Status.REPLIED,
            intent.covered,
            now,
            intent,
            counts_as_reply=True,
            reply_message_id="msg-agent-reply",
            replied_to="msg-burst",
        ),
        AGENT_GRANT_ID,
    )
    refused = store.take_lease(thread_key(AGENT_GRANT_ID, "thread-refused"), 60_000)
    store.settle(
        refused,
        Settlement(Status.FAILED, ("msg-refused",), now, reason="403 insufficient_scopes"),
        AGENT_GRANT_ID,
    )
    if hold_lease:
        store.take_lease(key, 120_000)


def test_thread_state_shows_lease_replies_and_ledger(aws, make_stack):
    make_stack()
    write_thread_history(aws, "thread-support", hold_lease=True)

    run = ops(
        "thread-state",
        "--grant",
        AGENT_GRANT_ID,
        "--thread",
        "thread-support",
        "--message",
        "msg-refused",
        "--json",
    )

    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["found"] is True
    assert report["lease_held"] is True
    assert report["lease_owner"]
    assert report["answered"] == ["msg-first", "msg-burst"]
    assert len(report["reply_times"]) == 1
    ledger = {entry["message_id"]: entry for entry in report["ledger"]}
    assert ledger["msg-first"]["status"] == "replied"
    assert ledger["msg-first"]["reply_message_id"] == "msg-agent-reply"
    assert ledger["msg-first"]["replied_to"] == "msg-burst"
    assert ledger["msg-refused"] == {
        **ledger["msg-refused"],
        "status": "failed",
        "reason": "403 insufficient_scopes",
    }

    text = ops("thread-state", "--grant", AGENT_GRANT_ID, "--thread", "thread-support")
    assert "HELD by" in text.out
    assert "msg-agent-reply" in text.out


def test_thread_state_lists_the_threads_messages_from_nylas(aws, nylas, make_stack):
    make_stack()
    nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email="customer@example.com",
        subject="Hi",
        body="?",
        thread_id="thread-nylas",
        message_id="msg-first",
    )
    nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email="customer@example.com",
        subject="Hi",
        body="??",
        thread_id="thread-nylas",
        message_id="msg-unanswered",
    )
    write_thread_history(aws, "thread-nylas", hold_lease=False)

    run = ops("thread-state", "--grant", AGENT_GRANT_ID, "--thread", "thread-nylas", "--nylas", "--json")

    assert run.code == 0, run.err
    messages = {m["id"]: m for m in json.loads(run.out)["messages"]}
    assert messages["msg-first"]["ledger_status"] == "replied"
    assert messages["msg-unanswered"]["ledger_status"] == ""
    assert messages["msg-unanswered"]["sender"] == "customer@example.com"
    assert nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}/messages") == 1


def test_thread_state_of_an_unknown_thread(aws, make_stack):
    make_stack()

    run = ops("thread-state", "--grant", AGENT_GRANT_ID, "--thread", "never-seen")

    assert run.code == 0
    assert "no state item" in run.out
    assert "no entries" in run.out


# ---- deploy --------------------------------------------------------------------------------------------

COMPLETE_SAMCONFIG = """
version = 0.1
[default.global.parameters]
stack_name = "replyonce-prod"
[default.deploy.parameters]
region = "eu-west-1"
capabilities = "CAPABILITY_IAM"
parameter_overrides = 'AgentGrantIds="g-1,g-2" ReplyDrafter="template" AlertEmail="ops@example.com"'
"""


class Recorder:
    """Stands in for ``subprocess.run``: records each command, answers with the next exit code."""

    def __init__(self, *codes: int) -> None:
        self.codes = list(codes)
        self.calls: list[dict] = []

    def __call__(self, command, **kwargs) -> subprocess.CompletedProcess:
        self.calls.append({"command": command, **kwargs})
        return subprocess.CompletedProcess(command, self.codes.pop(0) if self.codes else 0)


def test_a_fresh_clone_deploys_guided():
    config = load_samconfig(DEFAULT_SAMCONFIG)
    assert config.stack_name == "replyonce"
    assert config.parameters("deploy")["capabilities"] == "CAPABILITY_IAM"

    plan = deploy.plan_deploy(config, sam="sam")

    assert plan.guided
    assert "no region" in plan.reasons
    assert "no AlertEmail in parameter_overrides" in plan.reasons
    assert plan.commands[-1][:2] == ("sam", "deploy")
    assert "--guided" in plan.commands[-1]


def test_a_configured_clone_builds_then_deploys_unguided(tmp_path):
    path = tmp_path / "samconfig.toml"
    path.write_text(COMPLETE_SAMCONFIG)
    config = load_samconfig(path)

    plan = deploy.plan_deploy(
        config, sam="/venv/bin/sam", environ={"PATH": "/usr/bin"}, python_bin=Path("/venv/bin")
    )

    common = ("--config-file", str(path), "--config-env", "default")
    assert plan.commands == (
        ("/venv/bin/sam", "build", "--template", "template.yaml", *common),
        ("/venv/bin/sam", "deploy", *common),
    )
    assert not plan.guided
    # sam build finds the venv's Python 3.13 first, as `make build` arranges.
    assert plan.environment["PATH"] == "/venv/bin:/usr/bin"
    assert plan.environment["SAM_CLI_TELEMETRY"] == "0"


def test_deploy_refuses_unguided_when_answers_are_missing(tmp_path):
    config = load_samconfig(tmp_path / "missing.toml")

    with pytest.raises(ConfigurationError, match="no region"):
        deploy.plan_deploy(config, sam="sam", guided=False)


def test_deploy_stops_when_the_build_fails(tmp_path):
    path = tmp_path / "samconfig.toml"
    path.write_text(COMPLETE_SAMCONFIG)
    runner = Recorder(1)

    with pytest.raises(OpsError, match="sam build"):
        deploy.run_plan(deploy.plan_deploy(load_samconfig(path), sam="sam"), runner, say=lambda _: None)

    assert [call["command"][1] for call in runner.calls] == ["build"]


def test_deploy_command_passes_arguments_after_double_dash_to_sam_deploy(tmp_path):
    path = tmp_path / "samconfig.toml"
    path.write_text(COMPLETE_SAMCONFIG)
    runner = Recorder(0, 0)
    out = io.StringIO()

    code = main(
        ["deploy", "--config-file", str(path), "--", "--no-confirm-changeset"],
        Runtime(
            out=out,
            err=io.StringIO(),
            run_process=runner,
            environ={"PATH": "/usr/bin"},
            session_factory=StubbedAws(),
        ),
    )

    assert code == 0
    build, deploy_call = (call["command"] for call in runner.calls)
    assert build[1:3] == ["build", "--template"]
    assert deploy_call[1] == "deploy"
    assert deploy_call[-1] == "--no-confirm-changeset"
    assert "--guided" not in deploy_call
    assert runner.calls[0]["cwd"] == DEFAULT_SAMCONFIG.parent  # the repository root, where template.yaml is
    assert "register-webhook" in out.getvalue()


def test_deploy_dry_run_prints_the_plan_and_runs_nothing():
    runner = Recorder()
    out = io.StringIO()

    code = main(["deploy", "--dry-run"], Runtime(out=out, err=io.StringIO(), run_process=runner))

    assert code == 0
    assert runner.calls == []
    assert "guided: True" in out.getvalue()
    assert " deploy --config-file " in out.getvalue()


def test_parameter_overrides_are_parsed_like_sam_writes_them():
    assert parse_parameter_overrides('AgentGrantIds="g-1,g-2" AlertEmail="a@b.example" Empty=""') == {
        "AgentGrantIds": "g-1,g-2",
        "AlertEmail": "a@b.example",
        "Empty": "",
    }
    assert parse_parameter_overrides(["A=1", "B=two words"]) == {"A": "1", "B": "two words"}
    with pytest.raises(ConfigurationError):
        parse_parameter_overrides("NoEqualsSign")


# ---- deploy checks first; every AWS error gets a hint --------------------------------------------------


class StubbedAws:
    """A boto3 session (and its factory) whose STS and Lambda clients answer from botocore Stubbers.

    Why Stubbers: moto has no ``GetAccountSettings``; a Stubber still checks every request and
    answer against the services' models.
    """

    def __init__(
        self, region: str | None = "eu-west-1", *, unreserved: int = 1000, credentials_error: str = ""
    ):
        self.region_name = region
        self.clients = {name: boto3.client(name, region_name=region or REGION) for name in ("sts", "lambda")}
        sts, lambda_ = (Stubber(self.clients[name]) for name in ("sts", "lambda"))
        if credentials_error:
            sts.add_client_error("get_caller_identity", credentials_error, "token expired", 403)
        else:
            identity = {
                "UserId": "AIDAEXAMPLE",
                "Account": "123456789012",
                "Arn": "arn:aws:iam::123456789012:user/ops",
            }
            sts.add_response("get_caller_identity", identity)
        lambda_.add_response(
            "get_account_settings",
            {
                "AccountLimit": {
                    "ConcurrentExecutions": unreserved,
                    "UnreservedConcurrentExecutions": unreserved,
                }
            },
        )
        sts.activate()
        lambda_.activate()

    def __call__(self, **kwargs) -> "StubbedAws":
        return self

    def client(self, service: str):
        return self.clients[service]


def deploy_with(tmp_path, aws: StubbedAws, samconfig: str = COMPLETE_SAMCONFIG) -> tuple[Run, Recorder]:
    path = tmp_path / "samconfig.toml"
    path.write_text(samconfig)
    runner = Recorder(0, 0)
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, run_process=runner, environ={"PATH": "/usr/bin"}, session_factory=aws)
    code = main(["deploy", "--config-file", str(path)], runtime)
    return Run(code, out.getvalue(), err.getvalue()), runner


# A new account with a concurrency quota of 10 can reserve nothing (Lambda keeps 100 unreserved).
NO_WEBHOOK_RESERVATION = 'AlertEmail="ops@example.com" WebhookReservedConcurrency="0"'


def test_deploy_refuses_a_replier_concurrency_that_could_starve_the_webhook_before_building(tmp_path):
    # Quota 10, the webhook sharing the pool: a replier allowed 10 takes everything.
    samconfig = COMPLETE_SAMCONFIG.replace(
        'AlertEmail="ops@example.com"', f'{NO_WEBHOOK_RESERVATION} ReplierMaximumConcurrency="10"'
    )

    run, runner = deploy_with(tmp_path, StubbedAws(unreserved=10), samconfig)

    assert run.code == 2
    assert "ReplierMaximumConcurrency=10" in run.err
    assert "ReplierMaximumConcurrency=5" in run.err  # what to set instead
    assert runner.calls == []  # nothing built, nothing asked


def test_deploy_refuses_the_default_webhook_reservation_on_a_quota_of_10_and_says_what_to_set(tmp_path):
    run, runner = deploy_with(tmp_path, StubbedAws(unreserved=10))

    assert run.code == 2
    assert "WebhookReservedConcurrency=50 needs 150" in run.err
    assert "WebhookReservedConcurrency=0" in run.err  # what to set instead
    assert runner.calls == []


def test_deploy_accepts_the_default_replier_concurrency_on_a_quota_of_10_without_a_reservation(tmp_path):
    samconfig = COMPLETE_SAMCONFIG.replace('AlertEmail="ops@example.com"', NO_WEBHOOK_RESERVATION)

    run, runner = deploy_with(tmp_path, StubbedAws(unreserved=10), samconfig)

    assert run.code == 0, run.err
    assert "arn:aws:iam::123456789012:user/ops in eu-west-1" in run.out
    assert [call["command"][1] for call in runner.calls] == ["build", "deploy"]


def test_deploy_with_refused_credentials_stops_before_building_with_a_hint(tmp_path):
    run, runner = deploy_with(tmp_path, StubbedAws(credentials_error="ExpiredToken"))

    assert run.code == 1
    assert "ExpiredToken" in run.err
    assert "hint:" in run.err
    assert "aws sso login" in run.err
    assert runner.calls == []


def test_a_first_deploy_without_a_region_checks_what_needs_none_then_lets_sam_ask(tmp_path):
    run, runner = deploy_with(
        tmp_path, StubbedAws(region=None), samconfig=COMPLETE_SAMCONFIG.replace('region = "eu-west-1"\n', "")
    )

    assert run.code == 0, run.err
    assert "checked: arn:aws:iam::123456789012:user/ops; Python 3.13. No region yet" in run.out
    build, deploy_command = (call["command"] for call in runner.calls)
    assert "--region" not in build
    assert "--region" not in deploy_command  # sam deploy --guided asks for it and saves it
    assert "--guided" in deploy_command


def test_deploy_goes_to_the_region_it_checked(tmp_path):
    # samconfig.toml names no region yet (a fresh clone): the region from the AWS default is checked,
    # and the deploy is told to use that one, not whatever the guided prompt would default to.
    run, runner = deploy_with(
        tmp_path,
        StubbedAws(region="ap-southeast-2"),
        samconfig=COMPLETE_SAMCONFIG.replace('region = "eu-west-1"\n', ""),
    )

    assert run.code == 0, run.err
    deploy_command = runner.calls[-1]["command"]
    assert deploy_command[deploy_command.index("--region") + 1] == "ap-southeast-2"


class NoAwsNeeded:
    """A session factory for runs that must not need AWS: making a session fails the test."""

    def __call__(self, **kwargs):
        raise AssertionError(f"an AWS session was made: {kwargs}")


def dry_run(tmp_path, argv: list[str], environ: dict[str, str], session_factory=None) -> list[list[str]]:
    """The ``$ sam ...`` lines ``deploy --dry-run`` prints, each split as a shell would."""
    path = tmp_path / "samconfig.toml"
    if not path.exists():
        path.write_text(COMPLETE_SAMCONFIG.replace('region = "eu-west-1"\n', ""))
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(
        out=out,
        err=err,
        run_process=Recorder(),
        environ={"PATH": "/usr/bin", **environ},
        session_factory=session_factory or NoAwsNeeded(),
    )
    code = main(["deploy", "--config-file", str(path), *argv, "--dry-run"], runtime)
    assert code == 0, err.getvalue()
    commands = [shlex.split(line[2:]) for line in out.getvalue().splitlines() if line.startswith("$ ")]
    assert [command[1] for command in commands] == ["build", "deploy"]
    return commands


def aws_options(command: list[str]) -> dict[str, str]:
    return {flag: command[command.index(flag) + 1] for flag in ("--region", "--profile") if flag in command}


def test_deploy_dry_run_carries_region_and_profile_to_every_sam_command(tmp_path):
    commands = dry_run(tmp_path, ["--region", "eu-west-1", "--profile", "prod"], environ={})

    build, deploy_command = commands
    assert build[2:4] == ["--template", "template.yaml"]
    for command in commands:
        assert aws_options(command) == {"--region": "eu-west-1", "--profile": "prod"}
    # samconfig.toml holds every other answer and --region gives the missing one: nothing to ask.
    assert "--guided" not in deploy_command


@pytest.mark.parametrize("variable", ["AWS_REGION", "AWS_DEFAULT_REGION"])
def test_deploy_takes_the_region_from_the_environment(tmp_path, variable):
    for command in dry_run(tmp_path, [], environ={variable: "eu-west-1"}):
        assert aws_options(command) == {"--region": "eu-west-1"}


def test_deploy_takes_the_profiles_region_from_the_aws_config_file(tmp_path, monkeypatch):
    config = tmp_path / "aws-config"
    config.write_text("[profile prod]\nregion = ap-south-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)

    commands = dry_run(tmp_path, ["--profile", "prod"], environ={}, session_factory=boto3.session.Session)

    for command in commands:
        assert aws_options(command) == {"--region": "ap-south-1", "--profile": "prod"}


def test_deploy_region_precedence_is_flag_then_samconfig_then_environment(tmp_path):
    (tmp_path / "samconfig.toml").write_text(COMPLETE_SAMCONFIG)  # region = "eu-west-1"
    environ = {"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "ap-south-1"}
    assert aws_options(dry_run(tmp_path, [], environ)[1]) == {"--region": "eu-west-1"}
    assert aws_options(dry_run(tmp_path, ["--region", "ca-central-1"], environ)[1]) == {
        "--region": "ca-central-1"
    }


def test_deploy_checks_and_deploys_as_the_profile_it_was_given(tmp_path):
    path = tmp_path / "samconfig.toml"
    path.write_text(COMPLETE_SAMCONFIG)
    runner, aws = Recorder(0, 0), StubbedAws()
    sessions = []

    def factory(**kwargs):
        sessions.append(kwargs)
        return aws

    out = io.StringIO()
    runtime = Runtime(out=out, err=io.StringIO(), run_process=runner, environ={"PATH": "/usr/bin"})
    runtime.session_factory = factory
    assert main(["deploy", "--config-file", str(path), "--profile", "prod"], runtime) == 0

    assert sessions == [{"region_name": "eu-west-1", "profile_name": "prod"}]  # the checks ran as prod
    for call in runner.calls:
        assert aws_options(call["command"]) == {"--region": "eu-west-1", "--profile": "prod"}
    assert "`make set-api-key`, then `make register-webhook`" in out.getvalue()


def test_every_command_takes_the_region_from_aws_region(aws, make_stack, monkeypatch):
    make_stack()
    monkeypatch.delenv("AWS_DEFAULT_REGION")  # botocore alone would find no region now
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["thread-state", "--stack-name", STACK, "--grant", AGENT_GRANT_ID, "--thread", "thread-x"],
        Runtime(out=out, err=err, environ={"AWS_REGION": REGION}),
    )
    assert code == 0, err.getvalue()
    assert "no state item" in out.getvalue()


def test_deploy_needs_python_313_on_the_build_path(tmp_path):
    from ops import preflight

    with pytest.raises(ConfigurationError, match=r"python3\.13"):
        preflight.run_preflight(
            load_samconfig(DEFAULT_SAMCONFIG),
            "eu-west-1",
            StubbedAws().client,
            environ={"PATH": str(tmp_path)},
        )


@pytest.fixture
def no_aws_configuration(monkeypatch, tmp_path):
    """No region and no credentials anywhere boto3 looks (environment, files, instance metadata)."""
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


@pytest.mark.parametrize("command", [["redrive"], ["thread-state", "--grant", "g", "--thread", "t"]])
def test_ops_without_a_region_say_how_to_give_one(no_aws_configuration, command):
    out, err = io.StringIO(), io.StringIO()
    samconfig = no_aws_configuration / "samconfig.toml"
    code = main([*command, "--stack-name", STACK, "--config-file", str(samconfig)], Runtime(out=out, err=err))

    assert code == 1
    assert "You must specify a region" in err.getvalue()
    assert "hint: no AWS region: pass --region" in err.getvalue()


def test_backfill_checks_its_window_before_asking_aws_for_anything(no_aws_configuration):
    out, err = io.StringIO(), io.StringIO()
    samconfig = no_aws_configuration / "samconfig.toml"
    code = main(
        ["backfill", "--since", "yesterday", "--stack-name", STACK, "--config-file", str(samconfig)],
        Runtime(out=out, err=err, environ={}),
    )

    assert code == 2
    assert err.getvalue().strip() == (
        "error: not a time: 'yesterday' (Unix seconds or ISO 8601, e.g. 2026-11-30T10:00Z)"
    )


def test_ops_without_credentials_say_how_to_get_them(no_aws_configuration):
    out, err = io.StringIO(), io.StringIO()
    samconfig = no_aws_configuration / "samconfig.toml"
    code = main(
        ["redrive", "--stack-name", STACK, "--region", REGION, "--config-file", str(samconfig)],
        Runtime(out=out, err=err),
    )

    assert code == 1
    assert "Unable to locate credentials" in err.getvalue()
    assert "hint: no usable AWS credentials" in err.getvalue()
    assert "--profile" in err.getvalue()


@pytest.mark.parametrize(
    ("argv", "environ", "named"),
    [
        (["--region", "mars-north-9"], {}, "--region 'mars-north-9'"),
        ([], {"AWS_REGION": "eu-wst-1"}, "AWS_REGION 'eu-wst-1'"),
        ([], {"AWS_DEFAULT_REGION": "us-east-12"}, "AWS_DEFAULT_REGION 'us-east-12'"),
    ],
)
def test_a_region_aws_does_not_have_is_refused_before_anything_is_planned(tmp_path, argv, environ, named):
    # Checked against every partition's list in botocore's endpoint data, offline: no session is made.
    path = tmp_path / "samconfig.toml"
    path.write_text(COMPLETE_SAMCONFIG.replace('region = "eu-west-1"\n', ""))
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(
        out=out, err=err, run_process=Recorder(), environ=environ, session_factory=NoAwsNeeded()
    )
    code = main(["deploy", "--config-file", str(path), *argv, "--dry-run"], runtime)
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue().startswith(f"error: {named} is not an AWS Region (botocore "), err.getvalue()


@pytest.mark.parametrize(
    "region", ["us-east-1", "eu-central-2", "cn-north-1", "us-gov-west-1", "il-central-1"]
)
def test_every_partitions_regions_are_accepted(tmp_path, region):
    commands = dry_run(tmp_path, ["--region", region], environ={})
    assert all(aws_options(command)["--region"] == region for command in commands)


def dead_letter_of(aws, sqs, grant_id: str, notification_id: str) -> None:
    """One notification of ``grant_id`` on the dead-letter queue, as the queue's redrive policy leaves it."""
    body = json.dumps({"id": notification_id, "type": "message.created", "data": {"object": {}}})
    attributes = {
        "notification_id": {"DataType": "String", "StringValue": notification_id},
        "notification_type": {"DataType": "String", "StringValue": "message.created"},
        "grant_id": {"DataType": "String", "StringValue": grant_id},
    }
    sqs.send_message(
        QueueUrl=aws.queues["NotificationDeadLetterQueue"], MessageBody=body, MessageAttributes=attributes
    )


def test_redrive_grant_moves_only_that_grants_letters_and_leaves_the_others_visible(aws, sqs, make_stack):
    make_stack()
    for n in range(3):
        dead_letter_of(aws, sqs, AGENT_GRANT_ID, f"ours-{n}")
    for n in range(2):
        dead_letter_of(aws, sqs, "grant-other-0002", f"theirs-{n}")

    peeked = ops("redrive", "--peek", "10", "--grant", "grant-other-0002")
    assert peeked.code == 0, peeked.err
    assert "2 dead-lettered notification(s) of grant grant-other-0002 shown" in peeked.out
    assert "ours-" not in peeked.out

    # A move task cannot choose: the grant's letters are moved one by one, said so.
    run = ops("redrive", "--grant", AGENT_GRANT_ID)
    assert run.code == 0, run.err
    assert f"--grant {AGENT_GRANT_ID}: moving its letters one by one (--method copy)" in run.out
    assert "moved 3 message(s) to the notification queue; 2 of other grants left" in run.out
    moved = drain(sqs, aws.queues["NotificationQueue"])
    assert sorted(json.loads(m["Body"])["id"] for m in moved) == ["ours-0", "ours-1", "ours-2"]
    # The other grant's are back on the dead-letter queue at once, not after the copy's visibility.
    left = drain(sqs, aws.queues["NotificationDeadLetterQueue"])
    assert sorted(json.loads(m["Body"])["id"] for m in left) == ["theirs-0", "theirs-1"]
