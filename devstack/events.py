"""Lambda events as AWS sends them: REST API proxy requests and SQS batches.

One builder serves three users: the files in ``events/`` (for ``sam local
invoke -e`` and the tests), the API Gateway stand-in of the local stack, and
the SQS poller. The shapes follow ``sam local generate-event apigateway
aws-proxy`` and ``sam local generate-event sqs receive-message``.
"""

import base64
import gzip
import hashlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

from devstack.template import LOCAL_PREVIOUS_WEBHOOK_SECRET, LOCAL_WEBHOOK_SECRET
from replyonce.rules.signature import sign

EVENTS_DIR = Path(__file__).resolve().parent.parent / "events"
WEBHOOK_PATH = "/webhook"
STAGE = "v1"

# The sample messages' date: fixed, so events/ is reproducible byte for byte. Their notifications are
# therefore older than the webhook's replay bound (MAX_NOTIFICATION_AGE_SECONDS, 96 h in template.yaml)
# and would be refused as replays; the one override they need ships beside them in SAM's --env-vars
# format (events/env.json), for `sam local invoke --env-vars` and `make invoke`. Notifications built
# for now (every other caller) meet the template's bound as it is.
SAMPLE_MESSAGE_DATE = 1737500930
ENV_VARS_FILE = EVENTS_DIR / "env.json"
SAMPLE_EVENTS_ENV_VARS: dict[str, dict[str, str]] = {"WebhookFunction": {"MAX_NOTIFICATION_AGE_SECONDS": "0"}}

# The sample mailbox of the events and the local stack.
AGENT_GRANT_ID = "grant-agent-0001"
AGENT_EMAIL = "support@replyonce.example"
CUSTOMER_EMAIL = "customer@example.com"
# A grant in the same application that the agent does not answer for.
HUMAN_GRANT_ID = "grant-human-0002"
HUMAN_EMAIL = "alice@replyonce.example"


def proxy_event(
    method: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    base64_encoded: bool = False,
    path: str = WEBHOOK_PATH,
) -> dict[str, Any]:
    """A REST API (v1) Lambda proxy event for one request.

    ``base64_encoded`` is what API Gateway does for a binary media type (the
    template sets ``*/*``); a text body is passed as UTF-8 text.
    """
    headers = {
        "Host": "abcdef1234.execute-api.us-east-1.amazonaws.com",
        "X-Forwarded-Proto": "https",
        **(headers or {}),
    }
    if body is None:
        encoded_body = None
    elif base64_encoded:
        encoded_body = base64.b64encode(body).decode()
    else:
        encoded_body = body.decode()
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": query or None,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} if query else None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": method,
            "path": f"/{STAGE}{path}",
            "stage": STAGE,
            "requestId": str(uuid.uuid4()),
            "requestTimeEpoch": int(time.time() * 1000),
            "accountId": "123456789012",
            "apiId": "abcdef1234",
            "protocol": "HTTP/1.1",
            "identity": {"sourceIp": "127.0.0.1", "userAgent": headers.get("User-Agent", "")},
        },
        "body": encoded_body,
        "isBase64Encoded": base64_encoded,
    }


def signed_post(
    body: bytes,
    *,
    secret: str = LOCAL_WEBHOOK_SECRET,
    gzip_body: bool = False,
    base64_encoded: bool = False,
    signature: str | None = None,
) -> dict[str, Any]:
    """A POST as Nylas sends it: JSON (or gzip of it when compressed delivery is on), signed."""
    headers = {"Content-Type": "application/json", "User-Agent": "Nylas-Webhooks"}
    if gzip_body:
        body = gzip.compress(body, mtime=0)
        headers["Content-Encoding"] = "gzip"
        base64_encoded = True  # API Gateway always hands binary bodies over as base64
    headers["X-Nylas-Signature"] = signature if signature is not None else sign(body, secret)
    return proxy_event("POST", body=body, headers=headers, base64_encoded=base64_encoded)


def message_created(
    *,
    notification_id: str = "5da3ec1e-eb01-4634-a7b7-d44291e3cba6",
    message_id: str = "msg-inbound-0001",
    thread_id: str = "thread-0001",
    grant_id: str = AGENT_GRANT_ID,
    sender: str = CUSTOMER_EMAIL,
    subject: str = "Can you resend my invoice?",
    body: str | None = "<p>Hi, could you resend invoice 1042? Thanks!</p>",
    notification_type: str = "message.created",
    date: int | None = None,
    attempt: int = 1,
    headers: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A ``message.created`` envelope (or a variant) as Nylas documents it.

    ``date`` is the message's (default: now); the notification's ``time`` is five seconds later, as
    Nylas notifies shortly after a message arrives.
    """
    date = int(time.time()) - 5 if date is None else date
    message: dict[str, Any] = {
        "id": message_id,
        "grant_id": grant_id,
        "object": "message",
        "thread_id": thread_id,
        "subject": subject,
        "from": [{"name": sender.split("@")[0].title(), "email": sender}],
        "to": [{"name": "Support", "email": AGENT_EMAIL}],
        "date": date,
        "folders": ["inbox"],
        "snippet": (body or "")[:40],
    }
    if body is not None:
        message["body"] = body
    if headers is not None:
        message["headers"] = headers
    return {
        "specversion": "1.0",
        "type": notification_type,
        "source": "/nylas/emails/realtime",
        "id": notification_id,
        "time": date + 5,
        "webhook_delivery_attempt": attempt,
        "data": {"application_id": "app-replyonce-local", "object": message},
    }


def envelope(
    message: dict[str, Any],
    *,
    notification_type: str = "message.created",
    notification_id: str | None = None,
    attempt: int = 1,
) -> dict[str, Any]:
    """Wrap a Nylas message object in a notification, as Nylas does for ``message.*`` triggers.

    ``.truncated`` variants drop the body, as Nylas does for payloads over 1 MB.
    """
    obj = dict(message)
    if "truncated" in notification_type.split(".")[2:]:
        obj.pop("body", None)
    return {
        "specversion": "1.0",
        "type": notification_type,
        "source": "/nylas/emails/realtime",
        "id": notification_id or str(uuid.uuid4()),
        "time": int(time.time()),
        "webhook_delivery_attempt": attempt,
        "data": {"application_id": "app-replyonce-local", "object": obj},
    }


def notification_envelope(trigger: str, data: dict[str, Any]) -> dict[str, Any]:
    """Wrap a notification's ``data`` (any trigger: ``message.delivered``, ``message.send_failed``, ...).

    A grant's notification comes from ``/nylas/system`` (https://developer.nylas.com/docs/reference/notifications/grants/).
    """
    return {
        "specversion": "1.0",
        "type": trigger,
        "source": "/nylas/system" if trigger.startswith("grant.") else "/nylas/send",
        "id": str(uuid.uuid4()),
        "time": int(time.time()),
        "webhook_delivery_attempt": 1,
        "data": data,
    }


def encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def sqs_event(
    notifications: list[dict[str, Any]],
    *,
    queue_arn: str = "arn:aws:sqs:us-east-1:123456789012:replyonce-NotificationQueue",
    receive_count: int = 1,
) -> dict[str, Any]:
    """An SQS batch as the event source mapping delivers it to the replier."""
    records = []
    for payload in notifications:
        body = json.dumps(payload, separators=(",", ":"))
        records.append(
            sqs_record(
                body,
                queue_arn=queue_arn,
                receive_count=receive_count,
                attributes={
                    "notification_id": payload["id"],
                    "notification_type": payload["type"],
                    "body_omitted": "false",
                },
            )
        )
    return {"Records": records}


def sqs_record(
    body: str,
    *,
    queue_arn: str,
    receive_count: int = 1,
    message_id: str | None = None,
    receipt_handle: str | None = None,
    attributes: dict[str, str] | None = None,
    message_group_id: str | None = None,
) -> dict[str, Any]:
    """One SQS record of a Lambda event (``message_group_id``: its fair-queue tenant, if sent with one)."""
    group = {"MessageGroupId": message_group_id} if message_group_id else {}
    return {
        "messageId": message_id or str(uuid.uuid4()),
        "receiptHandle": receipt_handle or base64.b64encode(uuid.uuid4().bytes).decode(),
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": str(int(time.time() * 1000)),
            "SenderId": "AROAEXAMPLE:replyonce-webhook",
            "ApproximateFirstReceiveTimestamp": str(int(time.time() * 1000)),
            **group,
        },
        "messageAttributes": {
            name: {"stringValue": value, "stringListValues": [], "binaryListValues": [], "dataType": "String"}
            for name, value in (attributes or {}).items()
        },
        "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": queue_arn.split(":")[3],
    }


def sqs_event_from_messages(messages: list[dict[str, Any]], queue_arn: str) -> dict[str, Any]:
    """The Lambda event for messages received from SQS (``ReceiveMessage`` with all attributes)."""
    records = []
    for message in messages:
        attributes = {
            name: value["StringValue"]
            for name, value in message.get("MessageAttributes", {}).items()
            if "StringValue" in value
        }
        record = sqs_record(
            message["Body"],
            queue_arn=queue_arn,
            receive_count=int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1")),
            message_id=message["MessageId"],
            receipt_handle=message["ReceiptHandle"],
            attributes=attributes,
            message_group_id=message.get("Attributes", {}).get("MessageGroupId"),
        )
        records.append(record)
    return {"Records": records}


# The truncated sample's message starts a thread of its own (``devstack.sample_mailbox``).
SAMPLE_SECOND_THREAD = "thread-0002"


def sample_message_created(**changes: Any) -> dict[str, Any]:
    """:func:`message_created` for the sample mailbox: dated :data:`SAMPLE_MESSAGE_DATE`."""
    return message_created(**{"date": SAMPLE_MESSAGE_DATE, **changes})


def sample_grant_notification(trigger: str = "grant.expired", **changes: Any) -> dict[str, Any]:
    """A grant's lifecycle notification of the sample mailbox's grant, as the reference shows it
    (https://developer.nylas.com/docs/reference/notifications/grants/grant-expired/)."""
    obj: dict[str, Any] = {
        "code": 25009,
        "grant_id": AGENT_GRANT_ID,
        "integration_id": "integration-local",
        "provider": "nylas",
        "email": AGENT_EMAIL,
        "grant_updated_at": SAMPLE_MESSAGE_DATE - 86_400,
        **changes,
    }
    return {
        "specversion": "1.0",
        "type": trigger,
        "source": "/nylas/system",
        "id": "6f1e0c2a-0000-4000-8000-00000000e001",
        "time": SAMPLE_MESSAGE_DATE,
        "webhook_delivery_attempt": 1,
        "data": {"application_id": "app-replyonce-local", "object": obj},
    }


def sample_events() -> dict[str, dict[str, Any]]:
    """Every event file of ``events/``, by file name."""
    created = encode(sample_message_created())
    truncated = encode(
        sample_message_created(
            notification_id="b7e1c0de-0000-4000-8000-000000000002",
            message_id="msg-inbound-0002",
            thread_id=SAMPLE_SECOND_THREAD,
            notification_type="message.created.truncated",
            body=None,
        )
    )
    return {
        "webhook-challenge.json": proxy_event(
            "GET", query={"challenge": "bc609b38-c81f-47fb-a275-1d9bd61a968b"}
        ),
        "webhook-message-created.json": signed_post(created),
        "webhook-base64.json": signed_post(created, base64_encoded=True),
        "webhook-gzip.json": signed_post(created, gzip_body=True),
        "webhook-truncated.json": signed_post(truncated),
        "webhook-previous-secret.json": signed_post(created, secret=LOCAL_PREVIOUS_WEBHOOK_SECRET),
        "webhook-forged-signature.json": signed_post(created, secret="not-the-webhook-secret"),  # noqa: S106 - the forgery
        "webhook-missing-signature.json": proxy_event(
            "POST", body=created, headers={"Content-Type": "application/json", "User-Agent": "Nylas-Webhooks"}
        ),
        "replier-message-created.json": sqs_event([sample_message_created()]),
        "replier-truncated.json": sqs_event([json.loads(truncated)]),
        "replier-duplicate-batch.json": sqs_event(
            [sample_message_created(), sample_message_created(attempt=2)]
        ),
        # A grant's life (issue 42): the sample grant expired, signed as Nylas delivers it, and queued.
        "webhook-grant-expired.json": signed_post(encode(sample_grant_notification())),
        "replier-grant-expired.json": sqs_event([sample_grant_notification()]),
    }


def _stable(name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Fix the random ids and times of an event so ``events/`` is reproducible byte for byte."""
    seed = uuid.uuid5(uuid.NAMESPACE_URL, f"replyonce/events/{name}")
    if "requestContext" in event:
        event["requestContext"]["requestId"] = str(seed)
        event["requestContext"]["requestTimeEpoch"] = 1737500935000
    for index, record in enumerate(event.get("Records", [])):
        record_seed = uuid.uuid5(seed, str(index))
        record["messageId"] = str(record_seed)
        record["receiptHandle"] = base64.b64encode(record_seed.bytes).decode()
        record["attributes"]["SentTimestamp"] = record["attributes"]["ApproximateFirstReceiveTimestamp"] = (
            "1737500936000"
        )
    return event


def stable_sample_events() -> dict[str, dict[str, Any]]:
    """:func:`sample_events` with fixed ids and times: the exact content of ``events/``."""
    return {name: _stable(name, event) for name, event in sample_events().items()}


def event_files() -> dict[str, dict[str, Any]]:
    """The exact content of ``events/``: :func:`stable_sample_events` and the ``--env-vars`` file."""
    return {**stable_sample_events(), ENV_VARS_FILE.name: SAMPLE_EVENTS_ENV_VARS}


def write_events(directory: Path = EVENTS_DIR) -> list[Path]:
    """Write :func:`event_files` to ``events/`` (``make events``)."""
    directory.mkdir(exist_ok=True)
    written = []
    for name, content in event_files().items():
        path = directory / name
        path.write_text(json.dumps(content, indent=2) + "\n")
        written.append(path)
    return written


def load_event(name: str) -> dict[str, Any]:
    """One file of ``events/``, as the tests and ``make invoke`` read it."""
    return json.loads((EVENTS_DIR / name).read_text())


def event_file_names() -> list[str]:
    """The Lambda events of ``events/`` (every file but the ``--env-vars`` file), sorted."""
    return sorted(p.name for p in EVENTS_DIR.glob("*.json") if p != ENV_VARS_FILE)


if __name__ == "__main__":
    for path in write_events():
        print(path.relative_to(EVENTS_DIR.parent))
