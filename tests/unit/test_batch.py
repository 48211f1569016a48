"""A batch split by conversation thread (``replyonce.shell.batch``): who runs beside whom, and in what
order."""

import json

import pytest

from replyonce.adapters.queue import ATTR_TASK, RECONCILE_TASK
from replyonce.shell.batch import thread_groups, thread_of


def created(message_id: str, thread_id: str = "t1", grant_id: str = "g1", sqs_id: str = "") -> dict:
    body = {
        "id": f"n-{message_id}",
        "type": "message.created",
        "data": {"object": {"id": message_id, "grant_id": grant_id, "thread_id": thread_id}},
    }
    return {"messageId": sqs_id or f"sqs-{message_id}", "body": json.dumps(body), "messageAttributes": {}}


def reconcile(thread_id: str, grant_id: str = "g1") -> dict:
    body = {"task": RECONCILE_TASK, "grant_id": grant_id, "thread_id": thread_id, "intent_id": "i1"}
    attributes = {ATTR_TASK: {"dataType": "String", "stringValue": RECONCILE_TASK}}
    return {"messageId": f"sqs-r-{thread_id}", "body": json.dumps(body), "messageAttributes": attributes}


def delivered(thread_id: str) -> dict:
    body = {
        "id": "n-d",
        "type": "message.delivered",
        "data": {
            "grant_id": "g1",
            "object": {"message": {"id": "r1", "metadata": {"replyonce_thread": thread_id}}},
        },
    }
    return {"messageId": "sqs-d", "body": json.dumps(body), "messageAttributes": {}}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (created("m1"), ("thread", "g1", "t1")),
        # The same thread id of another grant is another mailbox's thread.
        (created("m1", grant_id="g2"), ("thread", "g2", "t1")),
        # No thread id: the message is its own conversation.
        (created("m1", thread_id=""), ("message", "g1", "m1")),
        # Our own reconcile of a queued reply goes with the thread it checks.
        (reconcile("t1"), ("thread", "g1", "t1")),
        # Nothing readable: a group of its own (its failure touches nothing else).
        ({"messageId": "sqs-x", "body": "not json", "messageAttributes": {}}, ("record", "sqs-x")),
        ({"messageId": "sqs-y", "body": json.dumps({"id": "n", "type": "x"})}, ("record", "sqs-y")),
        # A task that is not one (a sender cannot set the attribute; still, never grouped).
        (
            {"messageId": "sqs-z", "body": "{}", "messageAttributes": {ATTR_TASK: {"stringValue": "x"}}},
            ("record", "sqs-z"),
        ),
        # A type the replier skips, naming no grant: alone.
        (
            {
                "messageId": "sqs-g",
                "body": json.dumps({"id": "n", "type": "grant.expired", "data": {"object": {}}}),
            },
            ("record", "sqs-g"),
        ),
    ],
)
def test_the_conversation_a_record_belongs_to(record, expected):
    assert thread_of(record) == expected


def test_a_send_report_goes_with_the_thread_its_reply_names():
    assert thread_of(delivered("t1")) == thread_of(created("m9"))


def test_threads_are_grouped_in_order_of_first_appearance_and_keep_queue_order_inside():
    records = [
        created("a1", "ta"),
        created("b1", "tb"),
        created("a2", "ta"),
        reconcile("tb"),
        created("c1", ""),
    ]
    groups = thread_groups(records)
    assert [[r["messageId"] for r in group] for group in groups] == [
        ["sqs-a1", "sqs-a2"],
        ["sqs-b1", "sqs-r-tb"],
        ["sqs-c1"],
    ]


def test_every_record_is_in_exactly_one_group():
    records = [created(f"m{i}", f"t{i % 3}") for i in range(10)] + [{"messageId": "bad", "body": ""}]
    grouped = [r["messageId"] for group in thread_groups(records) for r in group]
    assert sorted(grouped) == sorted(r["messageId"] for r in records)


def test_an_empty_batch_has_no_groups():
    assert thread_groups([]) == []
