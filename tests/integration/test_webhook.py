"""WebhookFunction: every status rule of docs/design.md invariant 6, on the files of events/.

Each test invokes the real handler against moto with resources built from
template.yaml, and asserts what Nylas would be answered and what is (or is
not) on the queue.
"""

import base64
import contextlib
import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator

import boto3
import pytest
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from botocore.exceptions import ClientError

from devstack.containers import tuned_endpoint
from devstack.events import (
    AGENT_GRANT_ID,
    SAMPLE_EVENTS_ENV_VARS,
    event_files,
    load_event,
    message_created,
    proxy_event,
    sample_message_created,
    signed_post,
)
from devstack.lambda_context import LocalLambdaContext
from devstack.template import LOCAL_WEBHOOK_SECRET
from functions.webhook import app
from ops.template import load_template
from replyonce.adapters.queue import SQS_CLIENT_CONFIG, SQS_SEND_ATTEMPTS
from replyonce.adapters.secrets import SECRETS_CLIENT_CONFIG, SECRETS_READ_ATTEMPTS
from replyonce.shell.webhook import WebhookEndpoint
from tests.conftest import drain

RETRIED_BY_NYLAS = {408, 429, 502, 503, 504, 507}


@pytest.fixture
def webhook(aws, monkeypatch):
    """The webhook handler wired to this test's resources, as the template wires it."""
    # The files of events/ are dated 2025: the override they ship with (events/env.json) lifts the
    # replay bound, as for `sam local invoke --env-vars`; the bound's own tests put it back.
    environment = {**aws.function_environment("WebhookFunction"), **SAMPLE_EVENTS_ENV_VARS["WebhookFunction"]}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    app.endpoint.cache_clear()

    def invoke(event: dict) -> dict:
        return app.lambda_handler(event, LocalLambdaContext("WebhookFunction", timeout_seconds=8))

    yield invoke
    app.endpoint.cache_clear()


@pytest.fixture
def queue_url(aws):
    return aws.queues["NotificationQueue"]


def queued(sqs, queue_url) -> list[dict]:
    return drain(sqs, queue_url)


def test_events_directory_matches_the_generator():
    # The files sam local invoke uses are the ones the tests exercise, signed with the documented secret.
    for name, content in event_files().items():
        assert load_event(name) == content, f"events/{name} is stale: run `make events`"


def test_challenge_is_echoed_as_the_bare_value(webhook, sqs, queue_url):
    event = load_event("webhook-challenge.json")
    response = webhook(event)
    assert response["statusCode"] == 200
    assert response["body"] == event["queryStringParameters"]["challenge"]
    assert response["headers"]["Content-Type"] == "text/plain"
    assert response["isBase64Encoded"] is False
    assert queued(sqs, queue_url) == []


def test_get_without_challenge_is_400(webhook):
    assert webhook(proxy_event("GET"))["statusCode"] == 400


@pytest.mark.parametrize(
    "event_file",
    [
        "webhook-message-created.json",
        "webhook-base64.json",
        "webhook-gzip.json",
        "webhook-previous-secret.json",
    ],
)
def test_signed_notification_is_queued_then_answered_200(webhook, sqs, queue_url, event_file):
    response = webhook(load_event(event_file))
    assert response["statusCode"] == 200
    messages = queued(sqs, queue_url)
    assert len(messages) == 1
    body = json.loads(messages[0]["Body"])
    assert body == sample_message_created()
    attributes = messages[0]["MessageAttributes"]
    assert attributes["notification_id"]["StringValue"] == body["id"]
    assert attributes["notification_type"]["StringValue"] == "message.created"
    assert attributes["grant_id"]["StringValue"] == body["data"]["object"]["grant_id"]
    assert attributes["body_omitted"]["StringValue"] == "false"


def test_truncated_notification_is_queued_with_its_type(webhook, sqs, queue_url):
    assert webhook(load_event("webhook-truncated.json"))["statusCode"] == 200
    [message] = queued(sqs, queue_url)
    assert json.loads(message["Body"])["type"] == "message.created.truncated"
    assert "body" not in json.loads(message["Body"])["data"]["object"]


@pytest.mark.parametrize("event_file", ["webhook-forged-signature.json", "webhook-missing-signature.json"])
def test_forged_or_unsigned_request_is_401_and_not_queued(webhook, sqs, queue_url, event_file):
    response = webhook(load_event(event_file))
    assert response["statusCode"] == 401
    assert queued(sqs, queue_url) == []


def test_signature_header_name_and_hex_case_do_not_matter(webhook, sqs, queue_url):
    event = load_event("webhook-message-created.json")
    signature = event["headers"].pop("X-Nylas-Signature")
    event["headers"]["x-NYLAS-signature"] = signature.upper()
    assert webhook(event)["statusCode"] == 200
    assert len(queued(sqs, queue_url)) == 1


def test_signature_is_checked_over_the_exact_bytes(webhook, sqs, queue_url):
    # Re-serialising the JSON (here: adding a space) must break the signature.
    event = load_event("webhook-message-created.json")
    event["body"] = json.dumps(json.loads(event["body"]))
    assert webhook(event)["statusCode"] == 401
    assert queued(sqs, queue_url) == []


def test_gzip_signature_covers_the_compressed_bytes(webhook, sqs, queue_url):
    # Signing the decompressed JSON (the wrong bytes) must be rejected.
    event = load_event("webhook-gzip.json")
    compressed = base64.b64decode(event["body"])
    from replyonce.rules.signature import sign

    event["headers"]["X-Nylas-Signature"] = sign(gzip.decompress(compressed), LOCAL_WEBHOOK_SECRET)
    assert webhook(event)["statusCode"] == 401
    assert queued(sqs, queue_url) == []


def test_rotated_secret_takes_effect_without_waiting_for_the_cache(
    webhook, sqs, queue_url, aws, secretsmanager
):
    # Warm the cache with the old secret, rotate, then send a request signed with the new one.
    assert webhook(load_event("webhook-message-created.json"))["statusCode"] == 200
    secret_id = aws.secrets["NylasSecrets"]
    secretsmanager.put_secret_value(
        SecretId=secret_id,
        SecretString=json.dumps(
            {
                "webhook_secret": "rotated-secret",
                "previous_webhook_secret": LOCAL_WEBHOOK_SECRET,
            }
        ),
    )
    body = json.dumps(message_created(notification_id="after-rotation")).encode()
    assert webhook(signed_post(body, secret="rotated-secret"))["statusCode"] == 200
    assert [json.loads(m["Body"])["id"] for m in queued(sqs, queue_url)] == [
        message_created()["id"],
        "after-rotation",
    ]


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "array"),
        (json.dumps({"type": "message.created", "data": {"object": {}}}).encode(), "no id"),
        (json.dumps({"id": "n1", "data": {"object": {}}}).encode(), "no type"),
        (json.dumps({"id": "n1", "type": "message.created", "data": {}}).encode(), "no data.object"),
    ],
)
def test_signed_body_that_is_not_a_notification_is_400(webhook, sqs, queue_url, payload, reason):
    response = webhook(signed_post(payload))
    assert response["statusCode"] == 400, reason
    assert queued(sqs, queue_url) == []


def test_body_over_the_cap_is_413(webhook, sqs, queue_url, monkeypatch):
    monkeypatch.setattr(app, "endpoint", tuned_endpoint({"max_body_bytes": 2048}))
    big = json.dumps(message_created(body="x" * 4096)).encode()
    assert webhook(signed_post(big))["statusCode"] == 413
    assert webhook(signed_post(big, base64_encoded=True))["statusCode"] == 413
    assert queued(sqs, queue_url) == []


def test_gzip_bomb_is_413_not_inflated(webhook, sqs, queue_url, monkeypatch):
    monkeypatch.setattr(app, "endpoint", tuned_endpoint({"max_body_bytes": 65536}))
    # 10 MB of spaces compresses to ~10 KB: small on the wire, over the cap inflated.
    bomb = json.dumps(message_created(body=" " * 10_000_000)).encode()
    event = signed_post(bomb, gzip_body=True)
    assert len(base64.b64decode(event["body"])) < 65536
    assert webhook(event)["statusCode"] == 413
    assert queued(sqs, queue_url) == []


def test_invalid_gzip_is_400(webhook, sqs, queue_url):
    event = signed_post(b"\x1f\x8b definitely not gzip", base64_encoded=True)
    event["headers"]["Content-Encoding"] = "gzip"
    assert webhook(event)["statusCode"] == 400
    assert queued(sqs, queue_url) == []


def test_oversized_notification_is_queued_without_its_body(webhook, sqs, queue_url, monkeypatch):
    monkeypatch.setattr(app, "endpoint", tuned_endpoint({"queue_max_message_bytes": 4096}))
    payload = message_created(body="y" * 8000)
    assert webhook(signed_post(json.dumps(payload).encode()))["statusCode"] == 200
    [message] = queued(sqs, queue_url)
    body = json.loads(message["Body"])
    assert body["id"] == payload["id"]
    assert body["data"]["object"]["id"] == payload["data"]["object"]["id"]
    assert "body" not in body["data"]["object"]
    assert message["MessageAttributes"]["body_omitted"]["StringValue"] == "true"


def test_unverifiable_signature_during_a_rotation_is_503_not_401(
    webhook, sqs, queue_url, aws, secretsmanager
):
    # rotate-secret announces itself (rotating_until) before Nylas issues the new secret.
    secretsmanager.put_secret_value(
        SecretId=aws.secrets["NylasSecrets"],
        SecretString=json.dumps(
            {
                "webhook_secret": LOCAL_WEBHOOK_SECRET,
                "rotating_until": str(int(time.time()) + 60),
            }
        ),
    )
    body = json.dumps(message_created(notification_id="during-rotation")).encode()
    assert webhook(signed_post(body, secret="issued-but-not-stored-yet"))["statusCode"] == 503
    assert webhook(load_event("webhook-message-created.json"))["statusCode"] == 200
    assert [json.loads(m["Body"])["id"] for m in queued(sqs, queue_url)] == [message_created()["id"]]


def test_after_the_rotation_window_a_bad_signature_is_401_again(webhook, aws, secretsmanager):
    secretsmanager.put_secret_value(
        SecretId=aws.secrets["NylasSecrets"],
        SecretString=json.dumps(
            {
                "webhook_secret": LOCAL_WEBHOOK_SECRET,
                "rotating_until": str(int(time.time()) - 1),
            }
        ),
    )
    assert webhook(load_event("webhook-forged-signature.json"))["statusCode"] == 401


def test_sqs_failure_is_503_so_nylas_retries(webhook, sqs, queue_url):
    sqs.delete_queue(QueueUrl=queue_url)
    response = webhook(load_event("webhook-message-created.json"))
    assert response["statusCode"] == 503
    assert response["statusCode"] in RETRIED_BY_NYLAS


def test_secrets_manager_failure_is_503(webhook, aws, secretsmanager):
    secretsmanager.delete_secret(SecretId=aws.secrets["NylasSecrets"], ForceDeleteWithoutRecovery=True)
    assert webhook(load_event("webhook-message-created.json"))["statusCode"] == 503


@contextlib.contextmanager
def silent_endpoint() -> Iterator[tuple[str, list[socket.socket]]]:
    """A loopback endpoint that accepts every connection and never answers (a brownout).

    Yields its URL and the connections it accepted so far.
    """
    accepted: list[socket.socket] = []
    stopped = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as silent:
        silent.settimeout(0.2)

        def accept_and_say_nothing():
            while not stopped.is_set():
                try:
                    accepted.append(silent.accept()[0])
                except TimeoutError:
                    continue

        listener = threading.Thread(target=accept_and_say_nothing, daemon=True)
        listener.start()
        try:
            yield f"http://127.0.0.1:{silent.getsockname()[1]}", accepted
        finally:
            stopped.set()
            listener.join(timeout=5)
            for connection in accepted:
                connection.close()


@pytest.mark.parametrize(
    ("endpoint_variable", "client_config", "attempts"),
    [
        # The secret read, before the signature can be checked.
        ("AWS_ENDPOINT_URL_SECRETS_MANAGER", SECRETS_CLIENT_CONFIG, SECRETS_READ_ATTEMPTS),
        # The signature checks out (Secrets Manager answers); SendMessage meets the brownout.
        ("AWS_ENDPOINT_URL_SQS", SQS_CLIENT_CONFIG, SQS_SEND_ATTEMPTS),
    ],
    ids=["secrets-manager", "sqs"],
)
def test_a_dependency_that_never_answers_is_given_up_in_time_for_a_503(
    webhook, monkeypatch, endpoint_variable, client_config, attempts
):
    # botocore's defaults would wait 60 s per attempt, past the function's timeout and Nylas' 10 s:
    # the webhook gives up after its bounded attempts and answers a status Nylas retries.
    with silent_endpoint() as (url, connections):
        monkeypatch.setenv(endpoint_variable, url)
        app.endpoint.cache_clear()
        response = webhook(load_event("webhook-message-created.json"))
    assert response["statusCode"] == 503
    assert len(connections) == attempts
    # Each attempt is bounded, and all of them fit in the template's webhook timeout.
    per_attempt = client_config.connect_timeout + client_config.read_timeout
    assert (
        len(connections) * per_attempt
        < load_template()["Resources"]["WebhookFunction"]["Properties"]["Timeout"]
    )


def test_unexpected_exception_is_503_not_500(webhook, sqs, queue_url):
    # A bug of ours (here: an exception no AWS client raises, thrown inside SendMessage) is still answered
    # with a status Nylas retries. Injected through the endpoint's own seam, the boto3 session its
    # clients come from; botocore runs the hook in the real client's call.
    aws = boto3.session.Session()

    def a_bug_of_ours(**_):
        raise RuntimeError("a bug of ours")

    aws.events.register("before-call.sqs.SendMessage", a_bug_of_ours)
    endpoint = WebhookEndpoint.from_environment(aws)
    response = endpoint.handle(APIGatewayProxyEvent(load_event("webhook-message-created.json")))
    assert response.status == 503
    assert queued(sqs, queue_url) == []


def test_other_methods_are_405(webhook):
    response = webhook(proxy_event("PUT", body=b"{}"))
    assert response["statusCode"] == 405
    assert response["headers"]["Allow"] == "GET, POST"


def test_logs_carry_the_notification_id_and_no_body_or_secret(webhook, log_records):
    event = load_event("webhook-message-created.json")
    webhook(event)
    webhook(load_event("webhook-forged-signature.json"))
    logs = log_records()
    queued_line = next(line for line in logs if line.get("message") == "notification queued")
    assert queued_line["correlation_id"] == message_created()["id"]
    text = json.dumps(logs)
    assert "invoice 1042" not in text  # message body
    assert "customer@example.com" not in text  # address
    assert LOCAL_WEBHOOK_SECRET not in text
    assert event["headers"]["X-Nylas-Signature"] not in text
    rejected = next(line for line in logs if line.get("message") == "request rejected")
    assert rejected["reason"] == "signature_invalid"


def test_metrics_count_accepted_rejected_and_challenges(webhook, capsys):
    webhook(load_event("webhook-message-created.json"))
    webhook(load_event("webhook-forged-signature.json"))
    webhook(load_event("webhook-challenge.json"))
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    names = [
        (metric["Name"], blob.get("reason"))
        for blob in emitted
        for directive in blob["_aws"]["CloudWatchMetrics"]
        for metric in directive["Metrics"]
    ]
    assert ("NotificationAccepted", None) in names
    assert ("NotificationRejected", "signature_invalid") in names
    assert ("ChallengeAnswered", None) in names


def test_queue_never_gets_a_forged_request_even_after_a_valid_one(webhook, sqs, queue_url):
    webhook(load_event("webhook-message-created.json"))
    webhook(load_event("webhook-forged-signature.json"))
    assert [json.loads(m["Body"])["id"] for m in queued(sqs, queue_url)] == [message_created()["id"]]


def test_secret_refresh_is_rate_limited(aws, moto_endpoint):
    # Forged requests force a fresh read at most once per interval.
    from replyonce.adapters.secrets import WebhookSecrets
    from replyonce.config import SecretsSettings

    reads = []

    class CountingProvider:
        def get(self, name, **kwargs):
            reads.append(kwargs["force_fetch"])
            return {"webhook_secret": "s"}

    now = [100.0]
    secrets = WebhookSecrets(
        SecretsSettings(aws.secrets["NylasSecrets"], refresh_min_interval_seconds=5),
        provider=CountingProvider(),
        clock=lambda: now[0],
    )
    assert secrets.refreshed_webhook_secrets() == ("s",)
    assert secrets.refreshed_webhook_secrets() is None
    now[0] += 5
    assert secrets.refreshed_webhook_secrets() == ("s",)
    assert reads == [True, True]


def test_missing_configuration_names_the_variable(monkeypatch):
    from replyonce.config import WebhookSettings
    from replyonce.exceptions import ConfigurationError

    monkeypatch.delenv("QUEUE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="QUEUE_URL"):
        WebhookSettings.from_environment({"NYLAS_SECRETS_ID": "x"})


def test_sqs_error_is_a_client_error_not_a_crash(aws, sqs):
    # The queue module turns boto errors into EnqueueError; a raw ClientError never reaches the handler.
    from replyonce.adapters.queue import NotificationQueue
    from replyonce.exceptions import EnqueueError
    from replyonce.rules.notification import Notification

    queue = NotificationQueue(aws.queues["NotificationQueue"] + "-missing", 1_048_576, sqs)
    with pytest.raises(EnqueueError) as raised:
        queue.enqueue(Notification(message_created()))
    assert isinstance(raised.value.__cause__, ClientError)


# ---- a function that cannot start, a secret that changed, replays, headers -----------------------------


def test_webhook_that_cannot_start_answers_503_with_one_clear_line(
    webhook, monkeypatch, log_records, sqs, queue_url
):
    # The README's promise: every failure of ours is a status Nylas retries, even at cold start.
    monkeypatch.delenv("NYLAS_SECRETS_ID")
    app.endpoint.cache_clear()

    response = webhook(load_event("webhook-message-created.json"))

    assert response["statusCode"] == 503
    [line] = [r for r in log_records() if r.get("reason") == "configuration_error"]
    assert line["message"].startswith("webhook cannot start")
    assert "NYLAS_SECRETS_ID" in line["detail"]
    assert queued(sqs, queue_url) == []


def _guarded(monkeypatch) -> int:
    """Turn the replay bound on with the template's value (the sample events' override lifts it)."""
    from ops.template import load_template

    variables = load_template()["Resources"]["WebhookFunction"]["Properties"]["Environment"]["Variables"]
    bound = int(variables["MAX_NOTIFICATION_AGE_SECONDS"])
    monkeypatch.setenv("MAX_NOTIFICATION_AGE_SECONDS", str(bound))
    app.endpoint.cache_clear()
    return bound


def test_a_replayed_notification_older_than_the_bound_is_refused(
    webhook, monkeypatch, log_records, sqs, queue_url
):
    bound = _guarded(monkeypatch)
    # Nylas retries for up to 72 h: the bound must not drop a genuine late retry.
    assert bound >= 72 * 3600
    now = int(time.time())
    replayed = message_created(notification_id="captured-long-ago", date=now - bound - 60)
    late_retry = message_created(notification_id="retried-after-71-hours", date=now - 71 * 3600)

    assert webhook(signed_post(json.dumps(replayed).encode()))["statusCode"] == 401
    assert webhook(signed_post(json.dumps(late_retry).encode()))["statusCode"] == 200

    assert [json.loads(m["Body"])["id"] for m in queued(sqs, queue_url)] == ["retried-after-71-hours"]
    rejected = [r for r in log_records() if r.get("message") == "request rejected"]
    assert [r["reason"] for r in rejected] == ["notification_too_old"]


def test_challenge_answer_is_not_sniffed_as_html(webhook):
    # The challenge is text of the caller's choosing echoed back: a browser must not render it.
    event = proxy_event("GET", query={"challenge": "<script>alert(1)</script>"})
    response = webhook(event)
    assert response["statusCode"] == 200
    assert response["headers"]["X-Content-Type-Options"] == "nosniff"
    assert response["headers"]["Content-Type"] == "text/plain"


def test_metrics_separate_our_rejections_and_deliberate_retries(webhook, aws, secretsmanager, capsys):
    # The 4xx alarm counts RequestRejected (our path only) and the 5xx alarm subtracts
    # NotificationDeferred (rotation 503s): both must be emitted for exactly those answers.
    webhook(load_event("webhook-forged-signature.json"))
    secretsmanager.put_secret_value(
        SecretId=aws.secrets["NylasSecrets"],
        SecretString=json.dumps(
            {"webhook_secret": LOCAL_WEBHOOK_SECRET, "rotating_until": str(int(time.time()) + 60)}
        ),
    )
    app.endpoint.cache_clear()
    webhook(signed_post(json.dumps(message_created()).encode(), secret="issued-not-stored"))
    webhook(load_event("webhook-message-created.json"))
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    counts: dict[str, float] = {}
    for blob in emitted:
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                counts[metric["Name"]] = counts.get(metric["Name"], 0) + sum(_listify(blob[metric["Name"]]))
    assert counts["RequestRejected"] == 1
    assert counts["NotificationDeferred"] == 1
    assert counts["NotificationAccepted"] == 1


def _listify(value):
    return value if isinstance(value, list) else [value]


def test_a_grants_lifecycle_notification_is_verified_and_queued_like_any_other(webhook, sqs, queue_url):
    # Issue 42: grant.expired (and .created, .updated, .deleted) reach the replier, signed and queued as
    # every notification is; the replier decides what they do (tests/integration/test_grant_life.py).
    response = webhook(load_event("webhook-grant-expired.json"))
    assert response["statusCode"] == 200
    [message] = queued(sqs, queue_url)
    body = json.loads(message["Body"])
    assert (body["type"], body["data"]["object"]["grant_id"]) == ("grant.expired", AGENT_GRANT_ID)
    assert message["MessageAttributes"]["notification_type"]["StringValue"] == "grant.expired"
    forged = load_event("webhook-grant-expired.json")
    forged["body"] = forged["body"].replace("grant.expired", "grant.deleted")
    assert webhook(forged)["statusCode"] == 401
    assert queued(sqs, queue_url) == []
