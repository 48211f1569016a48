"""When the state table began, as each thread item learns it (``replyonce.adapters.store`` on moto).

A thread item created within ``mailbox_settle_seconds`` of the table's beginning may stand for one a lost
table held, whose reply may still be queued or in flight at Nylas: its bursts wait
(``replyonce.core.arrival.state_settles_in``). So each new thread item takes the table's beginning (the
``table#began`` item, written by the first lease of a table without one), and a table emptied begins again.
"""

import boto3
import pytest

from devstack.template import create_restored_state_table, put_in_service
from ops import restore_state
from replyonce.adapters.state_items import TABLE_BEGAN_KEY
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.state import thread_key
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


# ---- make restore-state: a restore while mail flows begins every thread again (issue 48) -------------


def _copy_of(aws, name: str) -> str:
    """The state table as it is now, restored to a table of its own (``restore-table-to-point-in-time``)."""
    dynamodb = boto3.client("dynamodb")
    items = dynamodb.scan(TableName=aws.tables["StateTable"], ConsistentRead=True)["Items"]
    return create_restored_state_table(dynamodb, name, items)


def test_a_restore_from_an_older_backup_makes_every_thread_state_new_at_the_restore(aws, store, clock):
    # The backup holds t1 from a table in service for a day: put back as it was, t1's follow-up burst
    # would read a state as old as the table and wait for nothing, while the reply the lost state had
    # queued is not listed yet (the first message answered twice). Put back by the command, t1 begins
    # at the restore, as does t2 (in the live table, not in the backup) and any thread created later.
    put_in_service(aws)
    old = began_of(store, "t1")
    ledger = {"pk": {"S": "message#g1#m1"}, "status": {"S": "replied"}}
    boto3.client("dynamodb").put_item(TableName=aws.tables["StateTable"], Item=ledger)
    backup = _copy_of(aws, "state-restored")
    clock.advance(3600)
    began_of(store, "t2")
    clock.advance(60)
    result = restore_state.restore_state(
        boto3.client("dynamodb"), source=backup, target=aws.tables["StateTable"], clock=clock
    )
    restored_at = int(clock() * 1000)
    assert result.began_ms == restored_at > old
    assert result.threads_begun_again == 2
    assert began_of(store, "t1") == restored_at
    assert began_of(store, "t2") == restored_at
    clock.advance(5)
    assert began_of(store, "t3") == restored_at  # created after the restore: the table's new beginning
    copied = boto3.client("dynamodb").get_item(
        TableName=aws.tables["StateTable"], Key={"pk": ledger["pk"]}, ConsistentRead=True
    )["Item"]
    assert copied == ledger  # a ledger entry comes back as it was


def test_items_deleted_by_hand_then_marked_come_back_as_new_state(aws, store, clock):
    put_in_service(aws)
    began_of(store, "t1")
    dynamodb = boto3.client("dynamodb")
    dynamodb.delete_item(TableName=aws.tables["StateTable"], Key={"pk": {"S": thread_key("g1", "t1")}})
    clock.advance(60)
    result = restore_state.restore_state(dynamodb, source=None, target=aws.tables["StateTable"], clock=clock)
    assert (result.copied, result.threads_begun_again) == (0, 0)  # the deleted item is not made again
    clock.advance(1)
    assert began_of(store, "t1") == result.began_ms


def test_a_thread_that_began_after_the_stamp_keeps_its_later_beginning(aws, store, clock):
    # The stamp only raises a beginning: a table emptied and begun again later than the stamp's clock
    # (an operator's clock behind the workers') keeps the later one.
    began = began_of(store, "t1")
    result = restore_state.restore_state(
        boto3.client("dynamodb"),
        source=None,
        target=aws.tables["StateTable"],
        clock=lambda: began / 1000 - 60,
    )
    assert result.threads_begun_again == 0
    clock.advance(1)
    assert began_of(store, "t1") == began
    clock.advance(1)
    assert began_of(store, "t2") == began  # nor is the table's own beginning lowered
