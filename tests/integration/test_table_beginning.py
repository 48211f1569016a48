"""When the state table began, as each thread item learns it (``replyonce.store`` on moto).

A thread item created within ``mailbox_settle_seconds`` of the table's beginning may stand for one a lost
table held, whose reply may still be queued or in flight at Nylas: its bursts wait
(``replyonce.core.arrival.state_settles_in``). So each new thread item takes the table's beginning (the
``table#began`` item, written by the first lease of a table without one), and a table emptied begins again.
"""

import boto3
import pytest

from devstack.template import put_in_service
from replyonce.state import TABLE_BEGAN_KEY, thread_key
from replyonce.store import DynamoDBStateStore
from tests.fakes import Clock


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(aws, clock):
    return DynamoDBStateStore(
        aws.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=3600, clock=clock
    )


def since_of(store, thread_id: str) -> int:
    lease = store.take_lease(thread_key("g1", thread_id), 1000)
    store.release(lease)
    return lease.state.since_ms


def test_a_new_table_begins_at_its_first_lease_and_every_later_thread_shares_that_beginning(store, clock):
    began = int(clock() * 1000)
    assert since_of(store, "t1") == began
    clock.advance(1000)
    assert since_of(store, "t2") == began  # a new thread, a table long begun
    assert since_of(store, "t1") == began  # an existing thread keeps it


def test_a_table_in_service_gives_a_new_thread_its_old_beginning(aws, store, clock):
    put_in_service(aws)
    item = boto3.client("dynamodb").get_item(
        TableName=aws.tables["StateTable"], Key={"pk": {"S": TABLE_BEGAN_KEY}}, ConsistentRead=True
    )["Item"]
    assert since_of(store, "t1") == int(item["since"]["N"])
    assert since_of(store, "t2") == int(item["since"]["N"])


def test_a_table_emptied_begins_again(aws, store, clock):
    put_in_service(aws)
    since_of(store, "t1")
    dynamodb = boto3.client("dynamodb")
    for item in dynamodb.scan(TableName=aws.tables["StateTable"])["Items"]:
        dynamodb.delete_item(TableName=aws.tables["StateTable"], Key={"pk": item["pk"]})
    clock.advance(60)
    assert since_of(store, "t1") == int(clock() * 1000)


def began_of(store, thread_id: str) -> int:
    lease = store.take_lease(thread_key("g1", thread_id), 1000)
    store.release(lease)
    return lease.state.began_ms


def created_of(store, thread_id: str) -> int:
    lease = store.take_lease(thread_key("g1", thread_id), 1000)
    store.release(lease)
    return lease.state.created_ms


def test_a_thread_item_created_in_a_table_in_service_is_as_old_as_its_table(aws, store, clock):
    # A thread no lease has seen gets an item of its own, and the state is as old as the table: its first
    # burst waits for nothing (a restore while mail flows is left to the runbook's stop). The item keeps
    # its own creation (``created_ms``), which does not move while it lives and starts again when it was
    # deleted by hand.
    put_in_service(aws)
    began = began_of(store, "t1")
    created = created_of(store, "t1")
    assert created == int(clock() * 1000)
    assert began < created
    clock.advance(60)
    assert (began_of(store, "t1"), created_of(store, "t1")) == (began, created)
    dynamodb = boto3.client("dynamodb")
    dynamodb.delete_item(TableName=aws.tables["StateTable"], Key={"pk": {"S": thread_key("g1", "t1")}})
    clock.advance(60)
    assert (began_of(store, "t1"), created_of(store, "t1")) == (began, int(clock() * 1000))
