"""The notification queue as an SQS fair queue: every record about a grant is sent with that grant as its
``MessageGroupId`` (issue 42, "Fair to every mailbox"), on the template's standard queue in moto.

What is asserted is what SQS is sent, read back from the queue (``ReceiveMessage`` returns the group as a
system attribute): the webhook's send, the replier's own reconcile task and the hand-over to another
Region's queue. That SQS then prefers quiet groups is AWS's; the local stack's model of it is tested in
``tests/harness/test_fair_queue.py``.
"""

import json
import time

import pytest

from devstack.events import message_created, signed_post
from devstack.lambda_context import LocalLambdaContext
from functions.webhook import app
from replyonce.adapters.queue import ReconcileQueue, hand_over
from replyonce.jobs import ReconcileDue

GRANTS = ("grant-quiet-1", "grant-flooding", "grant-quiet-2")


@pytest.fixture
def webhook(aws, monkeypatch):
    for name, value in aws.function_environment("WebhookFunction").items():
        monkeypatch.setenv(name, value)
    app.endpoint.cache_clear()
    yield lambda event: app.lambda_handler(event, LocalLambdaContext("WebhookFunction", timeout_seconds=8))
    app.endpoint.cache_clear()


def _received(sqs, queue_url: str) -> list[dict]:
    messages = []
    while batch := sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    ).get("Messages", []):
        for message in batch:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
        messages += batch
    return messages


def _post(grant_id: str, number: int) -> dict:
    payload = message_created(
        notification_id=f"fair-{grant_id}-{number}", message_id=f"msg-{grant_id}-{number}", grant_id=grant_id
    )
    payload["time"] = int(time.time())
    return signed_post(json.dumps(payload).encode())


def test_the_webhook_sends_each_notification_with_its_grant_as_message_group(webhook, sqs, aws):
    for number in range(2):
        for grant_id in GRANTS:
            assert webhook(_post(grant_id, number))["statusCode"] == 200
    messages = _received(sqs, aws.queues["NotificationQueue"])
    assert len(messages) == 6
    for message in messages:
        grant_id = json.loads(message["Body"])["data"]["object"]["grant_id"]
        assert message["Attributes"]["MessageGroupId"] == grant_id
    assert sorted(m["Attributes"]["MessageGroupId"] for m in messages) == sorted(GRANTS * 2)


def test_the_replier_s_own_records_keep_the_grant_as_their_group(sqs, aws):
    queue_url = aws.queues["NotificationQueue"]
    ReconcileQueue(queue_url, sqs)(ReconcileDue("grant-flooding", "thread-1", "intent-1"), 0)
    [task] = _received(sqs, queue_url)
    assert task["Attributes"]["MessageGroupId"] == "grant-flooding"


def test_a_handed_over_record_keeps_its_group_in_the_other_queue(sqs, aws, webhook):
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    from devstack.events import sqs_event_from_messages

    assert webhook(_post("grant-quiet-2", 7))["statusCode"] == 200
    [message] = _received(sqs, aws.queues["NotificationQueue"])
    [record] = sqs_event_from_messages([message], aws.queue_arns["NotificationQueue"])["Records"]
    other = sqs.create_queue(QueueName="replyonce-other-region-queue")["QueueUrl"]
    hand_over(sqs, other, SQSRecord(record), epoch=3)
    [moved] = _received(sqs, other)
    assert moved["Attributes"]["MessageGroupId"] == "grant-quiet-2"
    assert moved["Body"] == message["Body"]
