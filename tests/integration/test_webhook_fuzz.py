"""Property-based fuzzing of the webhook endpoint (hypothesis): bad input never breaks the rules.

For any method, headers, body, encoding and signature: the handler returns a proxy response
(no exception escapes), never 500, and nothing reaches the queue unless the body is signed
with the webhook secret and is a notification.
"""

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devstack.containers import tuned_endpoint
from devstack.events import message_created, proxy_event
from devstack.lambda_context import LocalLambdaContext
from devstack.template import LOCAL_WEBHOOK_SECRET
from functions.webhook import app
from replyonce.rules.signature import sign
from tests.conftest import drain

ALLOWED = {200, 400, 401, 405, 413, 415, 503}
header_names = st.sampled_from(
    ["X-Nylas-Signature", "x-nylas-signature", "Content-Encoding", "Content-Type", "X-Other"]
)
header_values = st.text(st.characters(codec="latin-1", exclude_categories=("Cc",)), max_size=80)
bodies = st.one_of(
    st.binary(max_size=6000),  # past max_body_bytes (4096 here): the size rule is exercised too
    st.builds(
        lambda n: json.dumps(n).encode(),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda children: (
                st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
            ),
            max_leaves=12,
        ),
    ),
    st.builds(
        lambda i: json.dumps(message_created(notification_id=i)).encode(), st.text(min_size=1, max_size=40)
    ),
)


@pytest.fixture
def webhook(aws, monkeypatch):
    for name, value in aws.function_environment("WebhookFunction").items():
        monkeypatch.setenv(name, value)
    # max_body_bytes 4096: so the size rule is reachable by the fuzzer.
    monkeypatch.setattr(app, "endpoint", tuned_endpoint({"max_body_bytes": 4096}))
    return aws


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
    body=bodies,
    headers=st.dictionaries(header_names, header_values, max_size=4),
    signing=st.sampled_from(["none", "valid", "wrong-secret", "keep-fuzzed"]),
    compress=st.booleans(),
    base64_encoded=st.booleans(),
    query=st.one_of(
        st.none(), st.dictionaries(st.sampled_from(["challenge", "x"]), st.text(max_size=30), max_size=2)
    ),
)
def test_bad_input_never_breaks_the_status_rules(
    webhook, sqs, method, body, headers, signing, compress, base64_encoded, query
):
    if compress:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    signed_validly = False
    if signing == "valid":
        headers["X-Nylas-Signature"] = sign(body, LOCAL_WEBHOOK_SECRET)
        headers.pop("x-nylas-signature", None)
        signed_validly = True
    elif signing == "wrong-secret":
        headers["X-Nylas-Signature"] = sign(body, "another-secret")
        headers.pop("x-nylas-signature", None)
    elif signing == "none":
        headers.pop("X-Nylas-Signature", None)
        headers.pop("x-nylas-signature", None)
    try:
        text_body = body.decode()
    except UnicodeDecodeError:
        base64_encoded = True
        text_body = None
    event = proxy_event(
        method, body=body, headers=headers, query=query or None, base64_encoded=base64_encoded
    )
    if not base64_encoded:
        event["body"] = text_body

    response = app.lambda_handler(event, LocalLambdaContext("WebhookFunction", timeout_seconds=8))

    assert response["statusCode"] in ALLOWED
    queued = drain(sqs, webhook.queues["NotificationQueue"])
    if not signed_validly or method != "POST":
        assert queued == []
    if queued:
        assert response["statusCode"] == 200
        assert len(queued) == 1


def test_base64_flag_on_text_that_is_not_base64_is_400(webhook, sqs):
    body = json.dumps(message_created()).encode()
    event = proxy_event("POST", body=body, headers={"X-Nylas-Signature": sign(body, LOCAL_WEBHOOK_SECRET)})
    event["isBase64Encoded"] = True  # but the body is plain text with characters base64 does not use
    event["body"] = body.decode() + "!"
    assert app.lambda_handler(event, LocalLambdaContext("WebhookFunction"))["statusCode"] == 400
    assert drain(sqs, webhook.queues["NotificationQueue"]) == []
