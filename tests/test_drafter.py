"""The drafters (Bedrock through Converse, the template), Bedrock's failures, and the redaction
of addresses from error texts.

Bedrock is a botocore client with a Stubber (every request checked against the service model);
Nylas is the emulator on loopback.
"""

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from devstack.events import AGENT_GRANT_ID
from devstack.nylas import Fault
from devstack.template import LOCAL_API_KEY
from replyonce.drafter import BedrockDrafter, TemplateDrafter
from replyonce.exceptions import DraftRejectedError, NylasPermanentError
from replyonce.nylas import NylasClient
from replyonce.redaction import redact_addresses

PROFILE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
MESSAGE = {"subject": "Invoice", "body": "<p>Please resend it.</p>", "from": [{"email": "c@example.com"}]}


@pytest.fixture
def bedrock():
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stub:
        yield client, stub


@pytest.mark.parametrize(
    ("code", "status"),
    [("AccessDeniedException", 403), ("ValidationException", 400), ("ResourceNotFoundException", 404)],
)
def test_a_bedrock_refusal_is_permanent_and_logged_clearly(bedrock, log_records, code, status):
    # Without model access (or with a wrong model id) every retry fails the same way: eight
    # retries and the dead-letter queue helped nobody.
    client, stub = bedrock
    stub.add_client_error(
        "converse",
        service_error_code=code,
        service_message="denied for ops@example.com",
        http_status_code=status,
    )

    with pytest.raises(DraftRejectedError) as raised:
        BedrockDrafter(PROFILE, client).draft(MESSAGE, "Acme")

    assert (raised.value.code, raised.value.status) == (code, status)
    [line] = [r for r in log_records() if r.get("reason") == "draft_rejected"]
    assert line["level"] == "ERROR"
    assert line["error_code"] == code
    assert line["model_id"] == PROFILE
    assert "ops@example.com" not in str(raised.value) + line["detail"]


@pytest.mark.parametrize(
    ("code", "status"),
    [("ThrottlingException", 429), ("ModelTimeoutException", 408), ("InternalServerException", 500)],
)
def test_throttling_and_server_errors_stay_retryable(bedrock, code, status):
    client, stub = bedrock
    stub.add_client_error("converse", service_error_code=code, http_status_code=status)

    with pytest.raises(ClientError) as raised:
        BedrockDrafter(PROFILE, client).draft(MESSAGE, "Acme")

    assert not isinstance(raised.value, DraftRejectedError)
    assert raised.value.response["Error"]["Code"] == code


@pytest.mark.parametrize("model_id", ["model-x", PROFILE], ids=["model", "inference_profile"])
def test_a_draft_through_the_converse_api(bedrock, model_id):
    # The configured id goes to Converse as it is: a model id or a cross-region inference profile.
    client, stub = bedrock
    stub.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "We have resent it."}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
            "metrics": {"latencyMs": 100},
        },
        {
            "modelId": model_id,
            "system": [{"text": BedrockDrafter.SYSTEM_PROMPT}],
            "messages": [{"role": "user", "content": [{"text": "Subject: Invoice\n\nPlease resend it."}]}],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0},
        },
    )

    draft = BedrockDrafter(model_id, client).draft(MESSAGE, "Acme")

    stub.assert_no_pending_responses()
    assert draft.subject == "Re: Invoice"
    assert "We have resent it." in draft.body


def test_the_template_drafter_quotes_the_subject_and_escapes_it():
    draft = TemplateDrafter().draft(
        {"subject": "<script>x</script> refund", "from": [{"name": "Ann", "email": "ann@example.com"}]},
        "Acme",
    )
    assert draft.subject == "Re: <script>x</script> refund"
    assert "&lt;script&gt;x&lt;/script&gt; refund" in draft.body
    assert "<script>" not in draft.body
    assert draft == TemplateDrafter().draft(
        {"subject": "<script>x</script> refund", "from": [{"name": "Ann", "email": "ann@example.com"}]},
        "Acme",
    )


@pytest.mark.parametrize(
    "text",
    [
        "invalid recipient customer@example.com",
        "bounce from First.Last+tag@mail.example.co.uk; retry",
        "o'brien@example.ie is not allowed",
    ],
)
def test_addresses_are_redacted(text):
    cleaned = redact_addresses(text)
    assert "@" not in cleaned
    assert "<email>" in cleaned


def test_nylas_error_texts_reach_no_log_with_an_address(nylas):
    # Nylas quotes recipients in its error messages; the replier logs exception texts as `detail`.
    nylas.inject(
        "GET",
        rf"^/v3/grants/{AGENT_GRANT_ID}/messages/",
        Fault.status(
            400,
            body={
                "request_id": "r1",
                "error": {"type": "invalid_request_error", "message": "bad address jane@example.org"},
            },
        ),
    )
    client = NylasClient(nylas.url, lambda: LOCAL_API_KEY)

    with pytest.raises(NylasPermanentError) as raised:
        client.message(AGENT_GRANT_ID, "msg-1")

    assert "jane@example.org" not in str(raised.value)
    assert "bad address <email>" in str(raised.value)
