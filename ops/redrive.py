"""``redrive``: send the dead-letter queue's notifications back through the replier.

Replay is safe because the replier's guards outlive anything the dead-letter queue can hold
(``docs/operations.md``, "Replaying the dead-letter queue"): the reply ledger (30 days) and the
thread check make a message that was already answered a logged skip, and the dead-letter queue
keeps a message 14 days at most.

Two methods:

- ``move-task`` (default): SQS ``StartMessageMoveTask``, done by SQS itself at a chosen rate;
  the command follows it with ``ListMessageMoveTasks`` until it ends.
- ``copy``: receive, send to the notification queue, delete, message by message, attributes kept.
  For an endpoint without the move-task API (moto, some emulators) or to move only ``--max``
  messages. A crash between send and delete leaves a copy in both queues; the idempotency guards
  absorb the duplicate.
"""

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3
import requests
from botocore.exceptions import ClientError

from ops.errors import OpsError
from replyonce.adapters.queue import ATTR_GRANT_ID, ATTR_NOTIFICATION_ID, ATTR_NOTIFICATION_TYPE, fair_group

_TERMINAL_STATUSES = frozenset({"COMPLETED", "CANCELLED", "FAILED"})
# Messages are hidden this long while the copy moves them; one that is not deleted comes back.
_COPY_VISIBILITY_SECONDS = 60


@dataclass(frozen=True)
class Queues:
    """The dead-letter queue and the notification queue it drains back into."""

    dead_letter_url: str
    dead_letter_arn: str
    notification_url: str
    notification_arn: str


@dataclass(frozen=True)
class DeadLetter:
    """What support needs to know about one dead-lettered notification (no body content)."""

    sqs_message_id: str
    notification_id: str
    notification_type: str
    grant_id: str
    sent_at_ms: int
    body_bytes: int


# `make serve`'s port unless told (`--local http://127.0.0.1:3001`).
DEFAULT_LOCAL_URL = "http://127.0.0.1:3000"


def local_aws(url: str) -> tuple[boto3.session.Session, dict[str, str]]:
    """A session on a running ``make serve``'s embedded AWS, and what the stack says of itself.

    Why the same commands rather than local ones: what an operator learns (``--peek``, the copy, the
    shadow report) is what a developer uses, on the resources ``make serve`` created from the same
    template. The stack answers ``GET /_local/aws`` with its endpoint and resource names; the
    credentials are the stack's fake ones.
    """
    base = url.rstrip("/")
    try:
        answer = requests.get(f"{base}/_local/aws", timeout=10)
    except requests.RequestException:
        port = base.rsplit(":", 1)[-1]
        raise OpsError(
            f"no local stack answers at {base}: start `make serve` first (or pass its URL, "
            f"--local http://127.0.0.1:{port if port.isdigit() else 'PORT'})"
        ) from None
    if answer.status_code != 200:
        raise OpsError(f"{base} is not a `make serve` sharing its embedded AWS (status {answer.status_code})")
    aws = answer.json()
    session = boto3.session.Session(
        aws_access_key_id="local",
        aws_secret_access_key="local",  # noqa: S106 - the embedded AWS's fake credentials
        aws_session_token="local",  # noqa: S106
        region_name=aws["region"],
    )
    return session, aws


def local_stack(url: str, environ: Mapping[str, str] | None = None) -> tuple[Any, Queues]:
    """An SQS client of a running ``make serve``'s embedded AWS and its two queues."""
    session, aws = local_aws(url)
    sqs = session.client("sqs", endpoint_url=aws["endpoint_url"])
    return sqs, resolve_queues(sqs, aws["dead_letter_queue_url"], aws["notification_queue_url"])


def resolve_queues(sqs: Any, dead_letter_url: str, notification_url: str) -> Queues:
    """Both queues' ARNs (``StartMessageMoveTask`` takes ARNs, the stack outputs URLs)."""

    def arn(url: str) -> str:
        return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    return Queues(dead_letter_url, arn(dead_letter_url), notification_url, arn(notification_url))


def waiting(sqs: Any, queue_url: str) -> int:
    """Approximate number of messages visible on ``queue_url``."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def peek(sqs: Any, queue_url: str, limit: int = 10, *, grant: str | None = None) -> list[DeadLetter]:
    """Up to ``limit`` dead-lettered notifications (of ``grant`` only, when given), left on the queue
    (visibility timeout 0)."""
    seen: dict[str, DeadLetter] = {}
    for _ in range(limit // 10 + 3):  # receives sample the queue: a few more than strictly needed
        batch = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=min(10, limit),
            VisibilityTimeout=0,
            WaitTimeSeconds=1,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["SentTimestamp"],
        ).get("Messages", [])
        for message in batch:
            letter = _summary(message)
            if grant is None or letter.grant_id == grant:
                seen.setdefault(message["MessageId"], letter)
        if not batch or len(seen) >= limit:
            break
    return list(seen.values())[:limit]


def _summary(message: dict[str, Any]) -> DeadLetter:
    attributes = message.get("MessageAttributes", {})

    def attribute(name: str) -> str:
        return str(attributes.get(name, {}).get("StringValue", ""))

    return DeadLetter(
        sqs_message_id=message["MessageId"],
        notification_id=attribute(ATTR_NOTIFICATION_ID),
        notification_type=attribute(ATTR_NOTIFICATION_TYPE),
        grant_id=attribute(ATTR_GRANT_ID),
        sent_at_ms=int(message.get("Attributes", {}).get("SentTimestamp", 0)),
        body_bytes=len(message.get("Body", "").encode()),
    )


def start_move_task(sqs: Any, queues: Queues, max_per_second: int | None = None) -> str:
    """Start ``StartMessageMoveTask`` from the dead-letter queue to the notification queue; its handle."""
    request: dict[str, Any] = {"SourceArn": queues.dead_letter_arn, "DestinationArn": queues.notification_arn}
    if max_per_second:
        request["MaxNumberOfMessagesPerSecond"] = max_per_second
    try:
        return str(sqs.start_message_move_task(**request)["TaskHandle"])
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise OpsError(
            f"SQS refused StartMessageMoveTask ({error.get('Code', '')}: {error.get('Message', '')}). "
            "If a move task is already running, wait for it; if this endpoint lacks the API, "
            "`--method copy` moves the messages one by one."
        ) from None


def wait_for_move_task(
    sqs: Any,
    queues: Queues,
    *,
    poll_seconds: float = 5.0,
    timeout_seconds: float = 3600.0,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Follow the newest move task of the dead-letter queue until it ends; its last description."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        tasks = sqs.list_message_move_tasks(SourceArn=queues.dead_letter_arn, MaxResults=1)["Results"]
        if not tasks:
            raise OpsError("the move task disappeared from ListMessageMoveTasks")
        task = tasks[0]
        moved = task.get("ApproximateNumberOfMessagesMoved", 0)
        total = task.get("ApproximateNumberOfMessagesToMove", "?")
        say(f"move task {task['Status']}: {moved} of {total} moved")
        if task["Status"] in _TERMINAL_STATUSES:
            if task["Status"] == "FAILED":
                raise OpsError(f"the move task failed: {task.get('FailureReason', 'no reason given')}")
            return task
        if time.monotonic() > deadline:
            raise OpsError(
                "the move task is still running; follow it in the SQS console (Dead-letter redrive)"
            )
        sleep(poll_seconds)


def copy_messages(
    sqs: Any,
    queues: Queues,
    *,
    max_messages: int | None = None,
    say: Callable[[str], None] = print,
    grant: str | None = None,
) -> int:
    """Move messages one by one (send, then delete); the number moved.

    ``grant``: only the letters of that grant (their ``grant_id`` attribute, as the webhook queued them).
    Another grant's letter is left hidden while the copy runs, so each receive brings new ones, and made
    visible again at the end: it stays on the dead-letter queue as it was (its receive count aside).
    """
    moved = 0
    left: dict[str, str] = {}  # another grant's letters: message id -> its latest receipt handle
    while max_messages is None or moved < max_messages:
        wanted = 10 if max_messages is None else min(10, max_messages - moved)
        batch = sqs.receive_message(
            QueueUrl=queues.dead_letter_url,
            MaxNumberOfMessages=wanted,
            VisibilityTimeout=_COPY_VISIBILITY_SECONDS,
            WaitTimeSeconds=1,
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            break
        for message in batch:
            if grant is not None and _summary(message).grant_id != grant:
                left[message["MessageId"]] = message["ReceiptHandle"]
                continue
            attributes = {
                name: {k: v for k, v in value.items() if k in ("DataType", "StringValue", "BinaryValue")}
                for name, value in message.get("MessageAttributes", {}).items()
            }
            request: dict[str, Any] = {
                "QueueUrl": queues.notification_url,
                "MessageBody": message["Body"],
                # Back in its grant's group of the fair queue, as the webhook sent it (issue 42).
                **fair_group(_summary(message).grant_id),
            }
            if attributes:
                request["MessageAttributes"] = attributes
            sqs.send_message(**request)
            # Deleted only once the copy is queued: a failure here leaves a duplicate, never a loss.
            sqs.delete_message(QueueUrl=queues.dead_letter_url, ReceiptHandle=message["ReceiptHandle"])
            moved += 1
    for handle in left.values():
        # Back at once for the next redrive (or the next grant's), not after the copy's visibility.
        sqs.change_message_visibility(
            QueueUrl=queues.dead_letter_url, ReceiptHandle=handle, VisibilityTimeout=0
        )
    say(
        f"moved {moved} message(s) to the notification queue"
        + (f"; {len(left)} of other grants left" if left else "")
    )
    return moved
