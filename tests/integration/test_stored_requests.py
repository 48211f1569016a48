"""A stored intent's request comes back byte for byte, whatever its size (``replyonce.adapters.store`` on
moto).

The thread item holds at most 400 KB (DynamoDB's item limit, which the
embedded AWS enforces on updates as DynamoDB does), and each of its writes is
billed a unit per KB, so every request is kept compressed in ``body#`` items
of its own (issue 46), written before the intent that names them and read
back, consistently and checked against their digest, when the lease is taken.
"""

import base64
import random

import boto3
import pytest

from replyonce.adapters.state_items import BODY_PREFIX, BODY_TTL_GRACE_SECONDS
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.exceptions import StoredRequestLost
from replyonce.rules.outbox import MAX_REQUEST_BYTES
from replyonce.state import Intent, IntentState, Settlement, Status, thread_key

TTL_SECONDS = 3600
KEY = thread_key("grant-1", "thread-1")
ITEM_LIMIT = 350_000
"""What each item of ours must stay under (DynamoDB's limit is 400 KB)."""


def request_with(body: str) -> str:
    """A send request as ``replyonce.rules.outbox`` builds it, with ``body`` as its HTML."""
    return (
        '{"body":' + f'"{body}"' + ',"metadata":{"key1":"i1"},"reply_to_message_id":"m1",'
        '"subject":"Re: Order","to":[{"email":"alice@example.com"}]}'
    )


def incompressible(size: int) -> str:
    """``size`` characters of base64 of random bytes (an inline image): zlib cannot shrink it much."""
    return base64.b64encode(random.Random(size).randbytes(size * 3 // 4)).decode()[:size]


JUST_UNDER_NYLAS_LIMIT = request_with(incompressible(MAX_REQUEST_BYTES - 200))
WITH_A_LOGO = request_with(incompressible(440_000))


def an_intent(request: str, **kwargs) -> Intent:
    return Intent(id="i1", thread_id="thread-1", target_id="m1", covered=("m1",), request=request, **kwargs)


@pytest.fixture
def dynamodb(aws):
    return boto3.client("dynamodb")


@pytest.fixture
def store(aws, dynamodb):
    return DynamoDBStateStore(aws.tables["StateTable"], dynamodb, ttl_seconds=TTL_SECONDS)


def items(dynamodb, table: str, prefix: str) -> list[dict]:
    pages = dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    found = [item for page in pages for item in page["Items"]]  # a scan page holds 1 MB at most
    return sorted((i for i in found if i["pk"]["S"].startswith(prefix)), key=lambda i: i["pk"]["S"])


def stored_and_read_back(store: DynamoDBStateStore, intent: Intent) -> Intent:
    lease = store.take_lease(KEY, 60_000)
    assert store.store_intent(lease, intent)
    assert store.release(lease)
    reader = store.take_lease(KEY, 60_000)
    assert store.release(reader)
    return reader.state.outbox[intent.id]


def item_bytes(item: dict) -> int:
    """An item's size as DynamoDB counts it: names and values, binaries raw."""

    def size(value: dict) -> int:
        ((kind, inner),) = value.items()
        if kind == "M":
            return sum(len(k.encode()) + size(v) for k, v in inner.items())
        if kind == "L":
            return sum(size(v) for v in inner)
        return len(inner) if kind == "B" else len(str(inner).encode())

    return sum(len(name.encode()) + size(value) for name, value in item.items())


@pytest.mark.parametrize(
    ("request_text", "kept_in", "body_items"),
    [
        pytest.param(request_with("<p>Your order ships today.</p>"), "request_body", 1, id="a-small-reply"),
        pytest.param(
            request_with("<p>Order 1042 ships today.</p>" * 4000), "request_body", 1, id="long-html"
        ),
        pytest.param(WITH_A_LOGO, "request_body", 2, id="an-inline-logo-of-440-kb"),
        pytest.param(JUST_UNDER_NYLAS_LIMIT, "request_body", 10, id="just-under-nylas-limit"),
    ],
)
def test_a_request_of_any_size_nylas_takes_comes_back_byte_for_byte(
    store, dynamodb, aws, request_text, kept_in, body_items
):
    intent = an_intent(request_text)
    assert stored_and_read_back(store, intent) == intent
    table = aws.tables["StateTable"]
    [thread] = items(dynamodb, table, "thread#")
    [entry] = thread["outbox"]["M"].values()
    assert kept_in in entry["M"]
    assert item_bytes(thread) < 1024  # the thread item stays within one write unit, whatever the reply
    bodies = items(dynamodb, table, BODY_PREFIX)
    assert len(bodies) == body_items
    assert all(item_bytes(body) < ITEM_LIMIT for body in bodies)


def test_an_earlier_versions_intent_with_its_request_in_the_thread_item_is_still_read(store, dynamodb, aws):
    # Before issue 46 a request up to 16 KB was kept in the thread item, as text or compressed.
    request = request_with("<p>Your order ships today.</p>")
    lease = store.take_lease(KEY, 60_000)
    assert store.store_intent(lease, an_intent(request))
    assert store.release(lease)
    table = aws.tables["StateTable"]
    for body in items(dynamodb, table, BODY_PREFIX):
        dynamodb.delete_item(TableName=table, Key={"pk": body["pk"]})
    dynamodb.update_item(
        TableName=table,
        Key={"pk": {"S": KEY}},
        UpdateExpression="SET outbox.i1.#request = :request REMOVE outbox.i1.request_body",
        ExpressionAttributeNames={"#request": "request"},
        ExpressionAttributeValues={":request": {"S": request}},
    )
    reader = store.take_lease(KEY, 60_000)
    assert reader.state.outbox["i1"] == an_intent(request)


def test_a_body_written_without_its_intent_changes_nothing_another_worker_stored(store, dynamodb, aws):
    # Two workers, one burst, one intent id, two different replies of the agent. The stale one's lease is
    # gone: its body items are written (unconditioned) but not its intent. The holder's intent, stored
    # before or after, still reads back the holder's bytes; nothing names the stale ones.
    stale = store.take_lease(KEY, 1_000)
    dynamodb.update_item(  # its lease ran out; the holder took it
        TableName=aws.tables["StateTable"],
        Key={"pk": {"S": KEY}},
        UpdateExpression="SET lease_expires_at = :past",
        ExpressionAttributeValues={":past": {"N": "0"}},
    )
    holder = store.take_lease(KEY, 60_000)
    theirs = an_intent(WITH_A_LOGO)
    assert store.store_intent(holder, theirs)
    assert not store.store_intent(stale, an_intent(request_with(incompressible(440_001))))
    assert store.release(holder)
    assert store.take_lease(KEY, 60_000).state.outbox == {"i1": theirs}
    assert len(items(dynamodb, aws.tables["StateTable"], BODY_PREFIX)) == 4  # two bodies, one named


def test_each_lease_keeps_the_bodies_as_long_as_the_thread_item_and_a_grace(store, dynamodb, aws):
    table = aws.tables["StateTable"]
    stored_and_read_back(store, an_intent(WITH_A_LOGO))
    [thread] = items(dynamodb, table, "thread#")
    for body in items(dynamodb, table, BODY_PREFIX):
        assert int(body["expires_at"]["N"]) == int(thread["expires_at"]["N"]) + BODY_TTL_GRACE_SECONDS


def test_a_queued_reply_kept_by_its_settlement_still_reads_back(store):
    intent = an_intent(JUST_UNDER_NYLAS_LIMIT, attempts=1)
    lease = store.take_lease(KEY, 60_000)
    assert store.store_intent(lease, intent)
    queued = intent.queued(1_800_000_000, "reply-1")
    settlement = Settlement(Status.QUEUED, ("m1",), 1_800_000_000, queued, keep=True, counts_as_reply=True)
    assert store.settle(lease, settlement, "grant-1")
    kept = store.take_lease(KEY, 60_000).state.outbox["i1"]
    assert kept == queued
    assert kept.state is IntentState.QUEUED


@pytest.mark.parametrize("damage", ["deleted", "cut"])
def test_a_body_lost_or_damaged_sends_nothing_and_frees_the_lease(store, dynamodb, aws, damage):
    table = aws.tables["StateTable"]
    stored_and_read_back(store, an_intent(WITH_A_LOGO))
    body = items(dynamodb, table, BODY_PREFIX)[-1]
    if damage == "deleted":
        dynamodb.delete_item(TableName=table, Key={"pk": body["pk"]})
    else:
        dynamodb.put_item(TableName=table, Item={**body, "chunk": {"B": body["chunk"]["B"][:-1]}})
    with pytest.raises(StoredRequestLost):
        store.take_lease(KEY, 60_000)
    [thread] = items(dynamodb, table, "thread#")
    assert "lease_owner" not in thread  # freed: nothing was decided under it


def test_a_body_is_written_once_per_lease_however_often_its_intent_is_stored(store, dynamodb):
    puts: list[str] = []

    def put(params, **_):
        if params["Item"]["pk"]["S"].startswith(BODY_PREFIX):  # the body items (not table#began)
            puts.append(params["Item"]["pk"]["S"])

    dynamodb.meta.events.register("provide-client-params.dynamodb.PutItem", put)
    intent = an_intent(WITH_A_LOGO)
    lease = store.take_lease(KEY, 60_000)
    assert store.store_intent(lease, intent)
    assert store.store_intent(lease, intent.attempting(1_800_000_000))  # its attempt, counted
    queued = intent.attempting(1_800_000_000).queued(1_800_000_001, "reply-1")
    assert store.settle(
        lease, Settlement(Status.QUEUED, ("m1",), 1_800_000_001, queued, keep=True), "grant-1"
    )
    assert len(puts) == 2  # its two chunks, once
    later = store.take_lease(KEY, 60_000)  # read back (and renewed), not written
    assert store.store_intent(later, later.state.outbox["i1"].reopen())
    assert len(puts) == 2
