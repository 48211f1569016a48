"""The state-loss drill: the state table emptied or restored to an earlier point, then every notification
redelivered, the window backfilled and the dead letters redriven — and no message is answered twice or left
unanswered, on a thread longer than any page.

Real parts: the unchanged replier handler behind the event source stand-in, moto (the template's tables and
queues), the Nylas emulator (its thread listed page by page, ``thread_window`` small here), the backfill
and redrive of ``ops/``. moto has no point-in-time restore: a restore is the table's items as they were at
that moment (scanned then), put back after every item was deleted. The idempotency table is emptied in every
drill: it has no PITR (``template.yaml``), so a restore never brings its records back.
"""

import time
from collections import Counter

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from ops import backfill, redrive
from ops.nylas_admin import NylasAdmin
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.state_items import LEASE_EXPIRES_AT
from replyonce.adapters.store import DynamoDBStateStore

THREAD = "thread-drill"
MESSAGES = 5
DRILLED = 3  # the message whose intent the restore points are around (0-based): two replies before it
HOUR = 3600


def _items(table: str) -> list[dict]:
    dynamodb = boto3.client("dynamodb")
    pages = dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    return [item for page in pages for item in page["Items"]]


def _leases_end(items: list[dict]) -> float:
    """When the last lease among ``items`` ends (Unix seconds; 0 without one)."""
    return max(
        (int(item[LEASE_EXPIRES_AT]["N"]) / 1000 for item in items if LEASE_EXPIRES_AT in item), default=0
    )


def _restore(table: str, key: str, items: list[dict]) -> None:
    """The table as it was when ``items`` were scanned: every item deleted, then those put back."""
    dynamodb = boto3.client("dynamodb")
    for item in _items(table):
        dynamodb.delete_item(TableName=table, Key={key: item[key]})
    for item in items:
        dynamodb.put_item(TableName=table, Item=item)


@pytest.fixture
def drill_env(replier_env, monkeypatch, tuning):
    # Pages of two messages: the thread (five messages, five replies) is five pages long.
    tuning["thread_window"] = 2
    tuning["max_thread_pages"] = 10
    # One customer asking five questions in a row: neither the exchange limit nor the thread's budget stops
    # the agent (the drill counts replies, not guards).
    tuning["max_automatic_exchanges"] = 0
    monkeypatch.setenv("REPLY_BUDGET_PER_HOUR", "20")
    # A lease of 5 s (agent 2 + send 2 + margin 1): a restore to a moment mid-record brings back the lease
    # its worker held, and a real restore comes long after such a lease ended; the drill waits it out.
    monkeypatch.setenv("AGENT_TIMEOUT_SECONDS", "2")
    tuning["nylas_send_timeout_seconds"] = 2
    tuning["record_margin_seconds"] = 1
    from functions.replier import app

    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


@pytest.fixture
def drill_pipeline(drill_env, sqs):
    from tests.replier_harness import Pipeline

    return Pipeline(drill_env, sqs)


def _thread(nylas, pipeline, state_table: str) -> tuple[list[dict], list[dict], dict[str, list[dict]]]:
    """Five customer messages on one thread, each answered in turn; the table's items at each restore
    point around the fourth message's reply."""
    snapshots: dict[str, list[dict]] = {}

    def in_flight(grant_id, payload):
        if len(messages) > DRILLED and payload.get("reply_to_message_id") == messages[DRILLED]["id"]:
            snapshots["in_flight"] = _items(state_table)  # the intent stored, its attempt counted

    nylas.on_send_started = in_flight
    messages, notifications = [], []
    for index in range(MESSAGES):
        message = nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=CUSTOMER_EMAIL,
            subject="Order 1042",
            body=f"Question {index}?",
            thread_id=THREAD,
        )
        messages.append(message)
        if index == DRILLED:
            snapshots["before_intent"] = _items(state_table)
        notifications.append(envelope(message))
        pipeline.deliver(notifications[-1])
        pipeline.drain()
    nylas.on_send_started = None
    snapshots["after_sent"] = _items(state_table)
    return messages, notifications, snapshots


def _replies_by_message(nylas) -> Counter:
    return Counter(send.payload.get("reply_to_message_id") for send in nylas.sends)


@pytest.mark.parametrize(
    "later",
    [0, 2 * HOUR],
    ids=["within-the-keys-hour", "after-the-keys-hour"],  # after it, Nylas' key no longer fences a resend
)
@pytest.mark.parametrize(
    "restore_point",
    [
        "empty",  # a table recreated, or every item deleted
        "before_intent",  # restored to before the fourth message's intent
        "in_flight",  # its intent stored and attempted, not settled
        "after_sent",
    ],
)
def test_a_restore_then_every_redelivery_backfill_and_redrive_answers_each_message_once(
    drill_pipeline, drill_env, nylas, sqs, restore_point, later
):
    state_table = drill_env.tables["StateTable"]
    messages, notifications, snapshots = _thread(nylas, drill_pipeline, state_table)
    assert _replies_by_message(nylas) == Counter(m["id"] for m in messages)

    restored = [] if restore_point == "empty" else snapshots[restore_point]
    while time.time() <= _leases_end(restored):  # a restore comes after the leases it holds ended
        time.sleep(0.1)
    _restore(state_table, "pk", restored)
    _restore(drill_env.tables["IdempotencyTable"], "id", [])
    nylas.advance_clock(later)

    for notification in notifications:  # Nylas (or an operator's replay) delivers everything again
        drill_pipeline.deliver(notification)
    drill_pipeline.drain()
    window = backfill.Window(int(time.time()) - HOUR, int(time.time()) + 3 * HOUR)
    plan = backfill.plan_backfill(
        NylasAdmin(nylas.url, nylas.api_key),
        DynamoDBStateStore(state_table, boto3.client("dynamodb"), ttl_seconds=0),
        [AGENT_GRANT_ID],
        window,
    )
    backfill.apply_backfill(plan, NotificationQueue(drill_env.queues["NotificationQueue"], 1_048_576, sqs))
    drill_pipeline.drain()
    queues = redrive.resolve_queues(
        sqs, drill_env.queues["NotificationDeadLetterQueue"], drill_env.queues["NotificationQueue"]
    )
    redrive.copy_messages(sqs, queues, say=lambda line: None)
    drill_pipeline.drain()

    # Each message answered by exactly one email: none twice, none left unanswered.
    assert _replies_by_message(nylas) == Counter(m["id"] for m in messages)
    assert drill_pipeline.dead_letters() == []
