"""A shadow record is written once per key, on DynamoDB and in the fake, and read back as written.

The same cases run against the product's adapter (``replyonce.adapters.store.DynamoDBStateStore`` on the moto
server, the template's state table) and the in-memory fake the interleaving scheduler uses
(``tests/fakes.FakeStateStore``), so the fake cannot drift from what DynamoDB's condition does.
"""

import boto3
import pytest

from replyonce.adapters.state_items import SHADOW_TEXT_CHARS, shadow_item, shadow_key, shadow_record_of
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.state import Settlement, ShadowOutcome, ShadowRecord, Status
from tests.fakes import FakeStateStore

START = 1_800_000_000


@pytest.fixture(params=["dynamodb", "fake"])
def store(request):
    if request.param == "fake":
        return FakeStateStore(lambda: START)
    aws = request.getfixturevalue("aws")
    return DynamoDBStateStore(aws.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=3600)


def kept(store) -> list[ShadowRecord]:
    if isinstance(store, FakeStateStore):
        return list(store.shadow.values())
    return store.shadow_records()


def burst(text: str, record_id: str = "intent1") -> ShadowRecord:
    return ShadowRecord("g1", record_id, "t#1", "m2", ("m2", "m1"), ShadowOutcome.REPLY, "", text, START)


def test_the_first_record_of_a_key_is_kept_and_a_second_writes_nothing(store):
    assert store.record_shadow(burst("first answer"))
    # The same burst again (a redelivery, the agent asked again): its other text changes nothing.
    assert not store.record_shadow(burst("second answer"))
    assert kept(store) == [burst("first answer")]
    assert store.record_shadow(burst("another burst", record_id="intent2"))
    assert len(kept(store)) == 2


def test_a_record_reads_back_as_written_its_text_bounded():
    long = burst("x" * (SHADOW_TEXT_CHARS + 10))
    item = shadow_item(long, expires_at=START + 60)
    assert item["pk"]["S"] == shadow_key("g1", "intent1")
    back = shadow_record_of(item)
    assert back.text == "x" * SHADOW_TEXT_CHARS
    assert back == ShadowRecord(**{**long.__dict__, "text": "x" * SHADOW_TEXT_CHARS})
    skipped = ShadowRecord("g1", "message:m#3", "t1", "m#3", ("m#3",), ShadowOutcome.SKIPPED, "bulk_mail")
    assert shadow_record_of(shadow_item(skipped, expires_at=0)) == skipped


def shadowed(record: ShadowRecord) -> Settlement:
    return Settlement(Status.SHADOWED, record.covered, START, reason="reply", shadow=record)


def test_a_shadow_settlement_writes_its_record_with_the_ledger_under_the_lease(store):
    lease = store.take_lease("thread#g1#t#1", 60_000)
    assert store.settle(lease, shadowed(burst("the answer")), "g1")
    assert kept(store) == [burst("the answer")]
    assert store.ledger_entry("g1", "m1").status is Status.SHADOWED


def test_a_holder_that_lost_the_lease_writes_neither_its_record_nor_the_ledger(store):
    stale = store.take_lease("thread#g1#t#1", 1_000)
    # The stale holder's lease is taken over (its end passed: the next holder's clock is later).
    if isinstance(store, FakeStateStore):
        store.threads[stale.key] = store.threads[stale.key].__class__(lease_owner="someone-else")
    else:
        boto3.client("dynamodb").update_item(
            TableName=store._table,
            Key={"pk": {"S": stale.key}},
            UpdateExpression="SET lease_owner = :other",
            ExpressionAttributeValues={":other": {"S": "someone-else"}},
        )
    assert not store.settle(stale, shadowed(burst("a stale answer")), "g1")
    assert kept(store) == []
    assert store.ledger_entry("g1", "m1") is None
