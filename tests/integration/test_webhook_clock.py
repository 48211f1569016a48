"""The webhook's clock checks, and the secret it cannot re-read: what Nylas is answered.

A notification's ``time`` is Unix seconds (the envelope schema); some Nylas
examples show milliseconds, and a ``time`` far ahead would extend the replay
bound. A signature that fails while a fresh read of the secret is refused by
its rate limit may be genuine (signed with a secret stored since the last
read): it is answered 503, which Nylas retries, never the 401 it drops.
"""

import json
import time

import pytest

from devstack.events import message_created, signed_post
from devstack.lambda_context import LocalLambdaContext
from devstack.template import LOCAL_WEBHOOK_SECRET
from functions.webhook import app
from ops.template import load_template
from replyonce.config import WebhookSettings
from tests.conftest import drain

VARIABLES = load_template()["Resources"]["WebhookFunction"]["Properties"]["Environment"]["Variables"]
MAX_AGE = int(VARIABLES["MAX_NOTIFICATION_AGE_SECONDS"])
MAX_AHEAD = WebhookSettings.max_notification_future_seconds


@pytest.fixture
def webhook(aws, monkeypatch):
    """The webhook handler with the template's environment, its replay bounds on."""
    for name, value in aws.function_environment("WebhookFunction").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MAX_NOTIFICATION_AGE_SECONDS", str(MAX_AGE))
    app.endpoint.cache_clear()

    def invoke(payload: dict, secret: str = LOCAL_WEBHOOK_SECRET) -> int:
        event = signed_post(json.dumps(payload).encode(), secret=secret)
        return app.lambda_handler(event, LocalLambdaContext("WebhookFunction", timeout_seconds=8))[
            "statusCode"
        ]

    yield invoke
    app.endpoint.cache_clear()


def notification_at(moment: float, name: str) -> dict:
    payload = message_created(notification_id=name)
    payload["time"] = moment
    return payload


def reasons(log_records) -> list[str]:
    return [r["reason"] for r in log_records() if r.get("message") == "request rejected"]


def test_a_time_in_milliseconds_is_read_as_milliseconds(webhook, sqs, aws, log_records):
    now = time.time()
    assert webhook(notification_at(int(now * 1000), "fresh-in-ms")) == 200
    # Before, a millisecond time gave a negative age and switched the bound off.
    assert webhook(notification_at(int((now - MAX_AGE - 60) * 1000), "replayed-in-ms")) == 401
    queued = [json.loads(m["Body"])["id"] for m in drain(sqs, aws.queues["NotificationQueue"])]
    assert queued == ["fresh-in-ms"]
    assert reasons(log_records) == ["notification_too_old"]


def test_a_time_further_ahead_than_clock_skew_is_refused_like_a_replay(webhook, sqs, aws, log_records):
    now = time.time()
    assert webhook(notification_at(now + 60, "a-minute-ahead")) == 200
    assert webhook(notification_at(now + 365 * 86400, "a-year-ahead")) == 401
    assert webhook(notification_at(now + MAX_AHEAD + 60, "just-past-the-bound")) == 401
    queued = [json.loads(m["Body"])["id"] for m in drain(sqs, aws.queues["NotificationQueue"])]
    assert queued == ["a-minute-ahead"]
    assert reasons(log_records) == ["notification_from_the_future"] * 2


def test_a_signature_unverifiable_while_the_secret_cannot_be_re_read_is_503_flag_or_no_flag(
    webhook, sqs, aws, secretsmanager, log_records
):
    now = time.time()
    assert webhook(notification_at(now, "forged"), secret="wrong") == 401  # the fresh read happened
    # The operator stores a new secret (no rotation flag) and Nylas signs with it at once.
    secretsmanager.put_secret_value(
        SecretId=aws.secrets["NylasSecrets"], SecretString=json.dumps({"webhook_secret": "new-secret"})
    )
    assert webhook(notification_at(now, "signed-with-the-new-secret"), secret="new-secret") == 503
    assert reasons(log_records) == ["signature_invalid", "signature_unverified_secret_stale"]
    assert drain(sqs, aws.queues["NotificationQueue"]) == []


def test_a_malformed_rotation_flag_is_read_as_a_rotation_and_said_so(
    webhook, sqs, aws, secretsmanager, log_records
):
    secretsmanager.put_secret_value(
        SecretId=aws.secrets["NylasSecrets"],
        SecretString=json.dumps({"webhook_secret": LOCAL_WEBHOOK_SECRET, "rotating_until": "soon"}),
    )
    app.endpoint.cache_clear()
    assert webhook(notification_at(time.time(), "during-a-rotation"), secret="issued-not-stored") == 503
    assert [r["reason"] for r in log_records() if r.get("message", "").startswith("rotating_until")] == [
        "rotating_until_malformed"
    ]
