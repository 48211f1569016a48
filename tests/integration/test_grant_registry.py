"""The grant registry (issue 42) on moto, and the replier's records decided by each grant's own settings.

Real parts: the table built from ``template.yaml`` (``GrantRegistryTable``) on moto, Powertools
Parameters' DynamoDB provider with its own cache, the unchanged replier handler behind the event
source stand-in, and the Nylas emulator counting what each grant's mailbox was sent. The clock the
cache's bound is checked against is the one Powertools reads (``datetime.now`` in its ``base``
module), moved by the test: the bound is asserted, never timed.
"""

from datetime import datetime, timedelta

import boto3
import pytest
from aws_lambda_powertools.utilities.parameters import base as parameters_base
from botocore.exceptions import ClientError

from devstack.events import AGENT_GRANT_ID, envelope
from functions.replier import app
from replyonce.adapters.grant_registry import (
    Change,
    GrantRegistry,
    changes_of,
    list_grants,
    read_grant,
    write_change,
)
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.state import ShadowOutcome
from tests.replier_harness import deferrals, inbound, skip_reasons

SEND_GRANT = "grant-brand-0002"
SEND_EMAIL = "help@brand.example"
PAUSED_GRANT = "grant-paused-0003"
PAUSED_EMAIL = "sales@brand.example"
OPERATOR = "arn:aws:iam::123456789012:user/operator"


def registry_table(resources) -> str:
    return resources.tables["GrantRegistryTable"]


def put_record(resources, grant_id: str, record: dict, *, at: str = "2026-12-06T10:00:00Z") -> None:
    """Write the grant's record as ``make grants set`` does: the change and who made it, conditioned."""
    client = boto3.client("dynamodb")
    table = registry_table(resources)
    read = read_grant(client, table, grant_id)
    before = read.record if read else None
    write_change(client, table, Change(grant_id, at, "set", OPERATOR, before, record), read)


# ---- the adapter -------------------------------------------------------------------------------------


def test_a_record_is_stored_with_who_changed_it_and_each_change_is_kept(aws):
    client, table = boto3.client("dynamodb"), registry_table(aws)
    put_record(aws, "g-1", {"reply_mode": "shadow"}, at="2026-12-06T10:00:00Z")
    put_record(aws, "g-1", {"reply_mode": "send"}, at="2026-12-06T11:00:00Z")
    put_record(aws, "g-2", {"enabled": False}, at="2026-12-06T12:00:00Z")
    stored = read_grant(client, table, "g-1")
    assert (stored.record, stored.updated_at, stored.updated_by) == (
        {"reply_mode": "send"},
        "2026-12-06T11:00:00Z",
        OPERATOR,
    )
    assert [(g.grant_id, g.record) for g in list_grants(client, table)] == [
        ("g-1", {"reply_mode": "send"}),
        ("g-2", {"enabled": False}),
    ]
    assert [(c.at, c.before, c.after, c.by) for c in changes_of(client, table, "g-1")] == [
        ("2026-12-06T11:00:00Z", {"reply_mode": "shadow"}, {"reply_mode": "send"}, OPERATOR),
        ("2026-12-06T10:00:00Z", None, {"reply_mode": "shadow"}, OPERATOR),
    ]
    # Removed: the record is gone, the change that removed it stays.
    write_change(
        client,
        table,
        Change("g-1", "2026-12-06T13:00:00Z", "remove", OPERATOR, {"reply_mode": "send"}, None),
        read_grant(client, table, "g-1"),
    )
    assert read_grant(client, table, "g-1") is None
    assert [c.action for c in changes_of(client, table, "g-1")] == ["remove", "set", "set"]


def test_a_change_made_on_a_record_another_operator_changed_meanwhile_is_refused(aws):
    client, table = boto3.client("dynamodb"), registry_table(aws)
    put_record(aws, "g-1", {"reply_mode": "shadow"})
    seen = read_grant(client, table, "g-1")
    put_record(aws, "g-1", {"reply_mode": "review"}, at="2026-12-06T11:00:00Z")
    change = Change("g-1", "2026-12-06T12:00:00Z", "set", OPERATOR, seen.record, {"reply_mode": "send"})
    with pytest.raises(ClientError, match="TransactionCanceled"):
        write_change(client, table, change, seen)
    assert read_grant(client, table, "g-1").record == {"reply_mode": "review"}
    # Nor is a record created twice: the second operator read none.
    with pytest.raises(ClientError, match="TransactionCanceled"):
        write_change(client, table, Change("g-1", "2026-12-06T12:00:01Z", "set", OPERATOR, None, {}), None)


class _Clock:
    """``datetime`` as Powertools' cache reads it, at a time the test moves."""

    def __init__(self) -> None:
        self.at = datetime(2026, 12, 6, 10, 0, 0)

    def now(self) -> datetime:
        return self.at


def test_a_change_is_seen_within_the_caches_bound_and_one_query_serves_every_grant_meanwhile(
    aws, monkeypatch
):
    clock = _Clock()
    monkeypatch.setattr(parameters_base, "datetime", clock)
    session = boto3.session.Session()
    queries: list[str] = []
    session.events.register("before-call.dynamodb.Query", lambda **kwargs: queries.append("Query"))
    registry = GrantRegistry(registry_table(aws), session=session, max_age_seconds=60)
    put_record(aws, "g-1", {"reply_mode": "shadow"})
    assert registry.records() == {"g-1": {"reply_mode": "shadow"}}
    put_record(aws, "g-1", {"reply_mode": "send"}, at="2026-12-06T10:00:30Z")
    put_record(aws, "g-2", {"enabled": False}, at="2026-12-06T10:00:31Z")
    # Within the bound: the listing as read, for every grant, with no request of its own.
    clock.at += timedelta(seconds=59)
    for _ in range(20):
        assert registry.records() == {"g-1": {"reply_mode": "shadow"}}
    assert len(queries) == 1
    # Past it: the change, read once more.
    clock.at += timedelta(seconds=2)
    assert registry.records() == {"g-1": {"reply_mode": "send"}, "g-2": {"enabled": False}}
    assert len(queries) == 2


def test_a_record_that_is_not_json_is_read_as_it_is_for_the_replier_to_refuse(aws):
    boto3.client("dynamodb").put_item(
        TableName=registry_table(aws),
        Item={"pk": {"S": "grant"}, "sk": {"S": "g-bad"}, "settings": {"S": "{reply_mode: send"}},
    )
    registry = GrantRegistry(registry_table(aws), max_age_seconds=0)
    assert registry.records() == {"g-bad": "{reply_mode: send"}


# ---- the replier, per grant --------------------------------------------------------------------------


@pytest.fixture
def grants(replier_env, nylas, tuning, monkeypatch):
    """The stack's parameters say review; the registry says shadow for the seeded grant, send for a grant
    only the registry names, and paused for a third. A change is read at once (a cache of 0 s)."""
    tuning.update({"registry_max_age_seconds": 0, "paused_retry_seconds": 2})
    monkeypatch.setenv("REPLY_MODE", "review")
    nylas.add_grant(SEND_GRANT, SEND_EMAIL, name="Brand Help")
    nylas.add_grant(PAUSED_GRANT, PAUSED_EMAIL, name="Brand Sales")
    put_record(replier_env, AGENT_GRANT_ID, {"reply_mode": "shadow"})
    put_record(replier_env, SEND_GRANT, {"reply_mode": "send"})
    put_record(replier_env, PAUSED_GRANT, {"enabled": False, "reply_mode": "send"})
    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


def shadow_records(resources):
    store = DynamoDBStateStore(resources.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=0)
    return store.shadow_records()


def test_two_grants_of_one_stack_answer_in_their_own_modes(grants, pipeline, nylas, log_records):
    shadowed = inbound(nylas, subject="Order 1042")
    sent = nylas.deliver_inbound(
        SEND_GRANT, from_email="ann@customer.example", subject="Order 77", body="Where is order 77?"
    )
    pipeline.deliver(envelope(shadowed))
    pipeline.deliver(envelope(sent))
    pipeline.drain()
    # The registry's grant sends (the stack's parameter says review: no draft anywhere).
    [reply] = nylas.sent_messages(grant_id=SEND_GRANT)
    assert reply["to"][0]["email"] == "ann@customer.example"
    assert nylas.drafts == []
    # The seeded grant is in shadow: nothing sent from it, its decision recorded.
    assert nylas.sent_messages(grant_id=AGENT_GRANT_ID) == []
    [record] = shadow_records(grants)
    assert (record.trigger_id, record.outcome) == (shadowed["id"], ShadowOutcome.REPLY)
    assert deferrals(log_records) == []


def test_a_paused_grants_mail_waits_with_its_reason_and_is_answered_once_resumed(
    grants, pipeline, nylas, log_records
):
    import time

    message = nylas.deliver_inbound(
        PAUSED_GRANT, from_email="bob@customer.example", subject="Quote", body="A quote for 10 seats?"
    )
    pipeline.deliver(envelope(message))
    pipeline.drain()
    # Waiting, not skipped: deferred with its own reason and the grant named; nothing asked of its mailbox.
    [line] = [r for r in log_records() if r.get("message") == "record deferred; it will be retried"]
    assert (line["reason"], line["grant_id"], line["retry_in_seconds"]) == ("grant_paused", PAUSED_GRANT, 2)
    assert skip_reasons(log_records) == []
    assert nylas.count("GET", f"/v3/grants/{PAUSED_GRANT}/") == 0
    assert pipeline.in_flight() == 1
    put_record(grants, PAUSED_GRANT, {"enabled": True, "reply_mode": "send"}, at="2026-12-06T11:00:00Z")
    time.sleep(2.5)  # the record's visibility (paused_retry_seconds): SQS gives it back after it
    pipeline.drain()
    [reply] = nylas.sent_messages(grant_id=PAUSED_GRANT)
    assert reply["to"][0]["email"] == "bob@customer.example"
    assert pipeline.in_flight() == 0
    assert pipeline.dead_letters() == []


def test_a_grant_in_neither_the_registry_nor_agent_grant_ids_is_not_an_agent_grant(
    grants, pipeline, nylas, log_records
):
    nylas.add_grant("grant-stranger-0009", "someone@else.example")
    message = nylas.deliver_inbound(
        "grant-stranger-0009", from_email="c@customer.example", subject="Hi", body="Hello"
    )
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert skip_reasons(log_records) == ["grant_not_agent"]
    assert nylas.sends == []


def test_a_record_the_replier_cannot_read_keeps_the_grants_mail_waiting(grants, pipeline, nylas, log_records):
    boto3.client("dynamodb").put_item(
        TableName=registry_table(grants),
        Item={"pk": {"S": "grant"}, "sk": {"S": SEND_GRANT}, "settings": {"S": '{"reply_mode": "draft"}'}},
    )
    message = nylas.deliver_inbound(SEND_GRANT, from_email="d@customer.example", subject="Hi", body="Hello")
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    [line] = [r for r in log_records() if r.get("message", "").startswith("the grant's record")]
    assert line["grant_id"] == SEND_GRANT
    assert "reply_mode must be one of" in line["detail"]
    assert deferrals(log_records) == ["configuration"]
    assert nylas.sends == []
    assert pipeline.in_flight() == 1


def test_a_paused_grants_echo_of_a_reply_it_sent_before_the_pause_is_skipped_not_held(
    grants, pipeline, nylas, log_records
):
    message = nylas.deliver_inbound(SEND_GRANT, from_email="e@customer.example", subject="Hi", body="Hello")
    pipeline.deliver(envelope(message))
    pipeline.drain()
    [reply] = nylas.sent_messages(grant_id=SEND_GRANT)
    put_record(grants, SEND_GRANT, {"enabled": False, "reply_mode": "send"}, at="2026-12-06T11:00:00Z")
    pipeline.deliver(envelope(reply))
    pipeline.drain()
    assert skip_reasons(log_records) == ["own_outbound"]
    assert deferrals(log_records) == []
    assert pipeline.in_flight() == 0


def test_a_batch_s_threads_refresh_the_registry_with_one_query_between_them(aws):
    # Issue 42: the cache has expired (a new container) and a batch's ten threads ask at once: one
    # Query of the whole registry serves them all, not one each.
    import threading

    put_record(aws, "g-1", {"reply_mode": "shadow"})
    session = boto3.session.Session()
    queries: list[str] = []
    session.events.register("before-call.dynamodb.Query", lambda **kwargs: queries.append("Query"))
    registry = GrantRegistry(registry_table(aws), session=session, max_age_seconds=60)
    start, seen = threading.Barrier(10), []

    def read() -> None:
        start.wait()
        seen.append(registry.records())

    threads = [threading.Thread(target=read) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [{"g-1": {"reply_mode": "shadow"}}] * 10
    assert queries == ["Query"]
