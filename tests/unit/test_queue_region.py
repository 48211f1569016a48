"""Which Region a queue URL names: where the hand-over to the active Region sends (adapters.queue)."""

import pytest

from replyonce.adapters.queue import queue_region


@pytest.mark.parametrize(
    ("queue_url", "region"),
    [
        # What CloudFormation's NotificationQueueUrl output is, and SQS's legacy form.
        ("https://sqs.us-west-2.amazonaws.com/111122223333/replyonce-NotificationQueue-A1", "us-west-2"),
        ("https://us-east-1.queue.amazonaws.com/111122223333/replyonce-NotificationQueue-A1", "us-east-1"),
        ("https://sqs.cn-north-1.amazonaws.com.cn/111122223333/q", "cn-north-1"),
        # An endpoint override (the local stack, moto): no Region in it, so the client's own is used.
        ("http://127.0.0.1:5000/123456789012/replyonce-NotificationQueue", ""),
        # A look-alike host names no Region of SQS's.
        ("https://sqs.us-west-2.amazonaws.com.evil.example/1/q", ""),
        ("", ""),
    ],
)
def test_the_region_of_a_queue_url(queue_url, region):
    assert queue_region(queue_url) == region
