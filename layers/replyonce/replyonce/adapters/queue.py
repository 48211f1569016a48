"""The notification queue: verified notifications on SQS, never lost for size."""

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from replyonce.exceptions import EnqueueError, InvalidNotificationError
from replyonce.jobs import ReconcileDue
from replyonce.rules.notification import Notification

if TYPE_CHECKING:
    # The webhook imports this module: the replier's record type stays off its cold start.
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

# Attribute names: what the replier, the dead-letter queue and an operator can
# read without parsing the body.
ATTR_NOTIFICATION_ID = "notification_id"
ATTR_NOTIFICATION_TYPE = "notification_type"
ATTR_GRANT_ID = "grant_id"
ATTR_BODY_OMITTED = "body_omitted"


_GROUP_ID = re.compile(r"^[!-~]{1,128}$")
"""What SQS takes as a ``MessageGroupId``: 1 to 128 printable ASCII characters (no spaces)."""


def fair_group(grant_id: str) -> dict[str, str]:
    """The ``MessageGroupId`` of a record about ``grant_id``: the grant is the queue's tenant.

    Why: the notification queue is a standard queue used as an SQS fair queue (AWS, July 2025:
    "Amazon SQS fair queues"): a message group on a standard queue names its tenant, and when one
    tenant holds a disproportionate share of the in-flight records SQS hands the others' records to
    consumers first. So one grant's flood waits behind the rest, not the rest behind it. No order
    is implied on a standard queue (that is FIFO's meaning of the same field). A record that names no
    grant gets no group: SQS counts each such record as a tenant of its own. A grant id SQS would refuse
    as a group (longer than 128 characters, or not printable ASCII: Nylas' are UUIDs) is named by its
    SHA-256 instead, so the notification is still queued and the grant is still one tenant.
    """
    if not grant_id:
        return {}
    if _GROUP_ID.match(grant_id):
        return {"MessageGroupId": grant_id}
    return {"MessageGroupId": "grant-sha256-" + hashlib.sha256(grant_id.encode()).hexdigest()}


# Nylas waits 10 s for the webhook's 200: fail fast enough to answer 503 in time. ``total_max_attempts``
# counts the first try (botocore's ``max_attempts`` counts retries only: 3 of them were 4 tries, 12 s of
# reads against a queue that accepts and never answers, past the webhook's 8 s timeout).
SQS_SEND_ATTEMPTS = 2
SQS_CLIENT_CONFIG = Config(
    connect_timeout=1,
    read_timeout=2,
    retries={"mode": "standard", "total_max_attempts": SQS_SEND_ATTEMPTS},
)


@dataclass(frozen=True)
class Enqueued:
    """What was put on the queue."""

    message_id: str
    body_omitted: bool


def _attributes(notification: Notification, body_omitted: bool) -> dict[str, dict[str, str]]:
    values = {
        ATTR_NOTIFICATION_ID: notification.id,
        ATTR_NOTIFICATION_TYPE: notification.type,
        ATTR_GRANT_ID: notification.grant_id,
        ATTR_BODY_OMITTED: "true" if body_omitted else "false",
    }
    # SQS rejects empty attribute values.
    return {name: {"DataType": "String", "StringValue": value} for name, value in values.items() if value}


def _size(body: str, attributes: dict[str, dict[str, Any]]) -> int:
    """Bytes SQS counts against MaximumMessageSize: body plus attribute names, types and values."""
    size = len(body.encode())
    for name, attribute in attributes.items():
        size += (
            len(name.encode()) + len(attribute["DataType"].encode()) + len(attribute["StringValue"].encode())
        )
    return size


class NotificationQueue:
    """Puts notifications on the SQS queue named by ``QUEUE_URL``.

    Parameters
    ----------
    queue_url:
        The queue.
    max_message_bytes:
        The queue's ``MaximumMessageSize``.
    sqs_client:
        Injectable boto3 SQS client; by default one that honours
        ``AWS_ENDPOINT_URL`` like every boto3 client.
    """

    def __init__(self, queue_url: str, max_message_bytes: int, sqs_client: Any | None = None) -> None:
        self._queue_url = queue_url
        self._max_message_bytes = max_message_bytes
        self._sqs = sqs_client or boto3.client("sqs", config=SQS_CLIENT_CONFIG)

    def enqueue(self, notification: Notification) -> Enqueued:
        """Send one notification; shrink it rather than lose it when it is too large.

        Raises
        ------
        EnqueueError
            When SQS did not accept the message (the caller answers 503).
        """
        body_omitted = False
        body = notification.to_json()
        attributes = _attributes(notification, body_omitted)
        for smaller in (notification.without_body, notification.skeleton):
            if _size(body, attributes) <= self._max_message_bytes:
                break
            body_omitted = True
            body = smaller().to_json()
            attributes = _attributes(notification, body_omitted)
        if _size(body, attributes) > self._max_message_bytes:
            raise EnqueueError(
                f"notification {notification.id} does not fit a queue message even without its body"
            )
        try:
            response = self._sqs.send_message(
                QueueUrl=self._queue_url,
                MessageBody=body,
                MessageAttributes=attributes,
                **fair_group(notification.grant_id),
            )
        except (BotoCoreError, ClientError) as exc:
            raise EnqueueError(f"SQS did not accept notification {notification.id}: {exc}") from exc
        return Enqueued(message_id=response["MessageId"], body_omitted=body_omitted)


ATTR_HANDED_OVER_AT_EPOCH = "handed_over_at_epoch"
"""On a record a passive Region moved to the active Region's queue: the failover epoch it moved at."""


def hand_over(sqs_client: Any, queue_url: str, record: "SQSRecord", epoch: int) -> str:
    """Put ``record`` on the active Region's queue as it was queued here; the new message's id.

    Its body and attributes go as they are (the notification, or a task of the replier's), so the
    active Region handles it as if its own webhook had queued it: the notification's id keys its
    idempotency record there too. ``epoch`` is marked on it (:data:`ATTR_HANDED_OVER_AT_EPOCH`): a record
    moves at most once per failover, so two Regions can never pass one back and forth.

    Raises
    ------
    botocore errors
        The queue did not take it; the caller keeps the record where it is.
    """
    attributes = {
        name: {"DataType": value.data_type, "StringValue": value.string_value}
        for name, value in record.message_attributes.items()
        if value.string_value is not None
    }
    attributes[ATTR_HANDED_OVER_AT_EPOCH] = {"DataType": "Number", "StringValue": str(epoch)}
    # Its tenant there as here: the group it was sent with (SQS gives it back as a system attribute).
    group = record.attributes.message_group_id or ""
    return sqs_client.send_message(
        QueueUrl=queue_url, MessageBody=record.body, MessageAttributes=attributes, **fair_group(group)
    )["MessageId"]


_AWS_QUEUE_HOST = re.compile(
    r"^https://(?:sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?|([a-z0-9-]+)\.queue\.amazonaws\.com)/"
)


def queue_region(queue_url: str) -> str:
    """The Region an SQS queue URL names (``https://sqs.us-west-2.amazonaws.com/...``); ``""`` for a URL
    that names none (an endpoint override: the local stack, where every queue is on one endpoint)."""
    found = _AWS_QUEUE_HOST.match(queue_url)
    return next((region for region in found.groups() if region), "") if found else ""


def handed_over_at(record: "SQSRecord") -> int:
    """The epoch ``record`` was last handed over at (0: never)."""
    # Indexed, not .get(): Powertools wraps an attribute only in __getitem__ (None when absent).
    value = record.message_attributes[ATTR_HANDED_OVER_AT_EPOCH]
    try:
        return int(value.string_value) if value is not None and value.string_value else 0
    except ValueError:
        return 0


ATTR_TASK = "replyonce_task"
"""Marks a record the replier put on the queue itself; the webhook never sets it (nor can a sender)."""
RECONCILE_TASK = "reconcile"
# SQS's longest DelaySeconds; a check due later defers itself again when it arrives.
_MAX_DELAY_SECONDS = 900


class ReconcileQueue:
    """Schedules the replier's own check of a queued (``202``) reply, as a delayed message on the queue.

    Why the queue and not the notification's own record: a duplicate of the
    notification may complete its idempotency record first, and the check
    would then be absorbed as a duplicate; a task message of its own cannot be.
    """

    def __init__(
        self, queue_url: str, sqs_client: Any, *, max_delay_seconds: int = _MAX_DELAY_SECONDS
    ) -> None:
        self._queue_url = queue_url
        self._sqs = sqs_client
        # retry_max_seconds: a check that arrives early defers itself until it is due.
        self._max_delay = min(max_delay_seconds, _MAX_DELAY_SECONDS)

    def __call__(self, due: ReconcileDue, seconds: int) -> None:
        body = {
            "task": RECONCILE_TASK,
            "grant_id": due.grant_id,
            "thread_id": due.thread_id,
            "intent_id": due.intent_id,
        }
        self._sqs.send_message(
            QueueUrl=self._queue_url,
            MessageBody=json.dumps(body, separators=(",", ":")),
            DelaySeconds=max(0, min(seconds, self._max_delay)),
            MessageAttributes={ATTR_TASK: {"DataType": "String", "StringValue": RECONCILE_TASK}},
            **fair_group(due.grant_id),
        )


def reconcile_task(body: str) -> ReconcileDue:
    """The reconcile a task record carries.

    Raises
    ------
    InvalidNotificationError
        The body is not a reconcile task (it can never be processed).
    """
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise InvalidNotificationError(f"task record is not JSON: {exc}") from None
    fields = [
        value.get(k) if isinstance(value, dict) else None for k in ("grant_id", "thread_id", "intent_id")
    ]
    if not all(isinstance(f, str) and f for f in fields) or value.get("task") != RECONCILE_TASK:
        raise InvalidNotificationError("task record is not a reconcile task")
    return ReconcileDue(*fields)
