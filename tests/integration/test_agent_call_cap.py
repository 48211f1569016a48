"""A grant's daily agent-call cap (issue 42), end to end: the real replier handler, moto, the emulator.

Judged as a person would: which customers got the agent's reply, which messages the mailbox shows in the
hand-off folder, the log line that names the grant (once a day, not once a message), the metrics, and
the day's count in the state table. The decision itself is ``tests/unit/test_agent_calls.py``; the
count's conditions on both sides of the port ``tests/contract/test_agent_call_count.py``.
"""

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from functions.replier import app
from replyonce.adapters.grant_registry import Change, read_grant, write_change
from replyonce.adapters.state_items import agent_call_day_of, agent_calls_key
from replyonce.agent import Reply
from replyonce.rules.agent_calls import call_day
from tests.replier_harness import (
    HANDOFF_FOLDER,
    deferrals,
    folders_of,
    handed_off,
    inbound,
    metrics_emitted,
    skip_reasons,
)

OPERATOR = "arn:aws:iam::123456789012:user/operator"
CAP_LINE = "the grant reached its daily agent-call cap"
DAY = 86_400
ASKED: list[str] = []


def put_record(resources, record: dict) -> None:
    """The seeded grant's record, as ``make grants set`` writes it."""
    client, table = boto3.client("dynamodb"), resources.tables["GrantRegistryTable"]
    read = read_grant(client, table, AGENT_GRANT_ID)
    change = Change(
        AGENT_GRANT_ID, "2026-12-06T10:00:00Z", "set", OPERATOR, read.record if read else None, record
    )
    write_change(client, table, change, read)


def fails_first(conversation):
    """An agent whose first call for a burst raises (a model's 503), and which answers the next one."""
    ASKED.append(conversation.key)
    if ASKED.count(conversation.key) == 1:
        raise RuntimeError("the model is unavailable")
    return Reply(text="Thanks, we are on it.")


@pytest.fixture
def capped(replier_env, tuning):
    """The seeded grant with a cap of two agent calls a day (the registry read at once: a 0 s cache)."""
    tuning.update({"registry_max_age_seconds": 0})
    put_record(replier_env, {"daily_agent_call_cap": 2})
    app.consumer.cache_clear()
    ASKED.clear()
    yield replier_env
    app.consumer.cache_clear()


def count_today(resources, nylas) -> tuple[int, int]:
    """The grant's count item of Nylas' day, as ``make grants show`` reads it: (calls, cap)."""
    day = call_day(int(nylas.now()))
    item = (
        boto3.client("dynamodb")
        .get_item(
            TableName=resources.tables["StateTable"], Key={"pk": {"S": agent_calls_key(AGENT_GRANT_ID, day)}}
        )
        .get("Item")
    )
    read = agent_call_day_of(item)
    return read.calls, read.cap


def cap_lines(log_records) -> list[dict]:
    return [r for r in log_records() if r.get("message", "").startswith(CAP_LINE)]


def customers(n: int, nylas, start: int = 0) -> list[dict]:
    return [
        inbound(nylas, from_email=f"c{k}@customer.example", subject=f"Order {k}") for k in range(start, n)
    ]


def test_past_its_cap_a_grants_mail_goes_to_a_person_once_said_and_counted(
    capped, pipeline, nylas, log_records, capsys
):
    messages = customers(4, nylas)
    for message in messages:
        pipeline.deliver(envelope(message))
        pipeline.drain()
    # The first two asked the agent and were answered; the other two are a person's, in the mailbox.
    assert sorted(s.payload["reply_to_message_id"] for s in nylas.sends) == sorted(
        m["id"] for m in messages[:2]
    )
    for message in messages[2:]:
        assert folders_of(nylas, message["id"]) == [HANDOFF_FOLDER]
    assert handed_off(log_records, "agent_call_cap")
    assert skip_reasons(log_records).count("agent_call_cap") == 2
    # Said once, naming the grant, when it crossed (not once per message); counted once too.
    [line] = cap_lines(log_records)
    assert (line["grant_id"], line["daily_agent_call_cap"], line["level"]) == (AGENT_GRANT_ID, 2, "WARNING")
    emitted = [name for name, _ in metrics_emitted(capsys.readouterr().out)]
    assert emitted.count("AgentCallCapReached") == 1
    assert emitted.count("HandedOff") == 2
    assert emitted.count("AgentAsked") == 2
    assert count_today(capped, nylas) == (2, 2)
    assert pipeline.dead_letters() == []


def test_the_next_utc_day_the_grant_is_the_agents_again(capped, pipeline, nylas, log_records):
    for message in customers(3, nylas):
        pipeline.deliver(envelope(message))
    pipeline.drain()
    assert len(nylas.sends) == 2
    nylas.advance_clock(DAY)  # Nylas' time: the next UTC day
    tomorrow = customers(6, nylas, start=3)
    for message in tomorrow:
        pipeline.deliver(envelope(message))
    pipeline.drain()
    assert len(nylas.sends) == 4  # two more, then the new day's cap
    assert count_today(capped, nylas) == (2, 2)
    # A line for each day the grant crossed its cap.
    assert len(cap_lines(log_records)) == 2


def test_a_retried_record_that_was_counted_is_not_counted_again(capped, pipeline, nylas, log_records):
    # The agent fails on the first try of every burst: each record is deferred after its count and comes
    # back. With a cap of two, counting each try would hand the second customer off.
    put_record(capped, {"daily_agent_call_cap": 2, "agent": f"{__name__}:fails_first"})
    first, second = customers(2, nylas)
    for message in (first, second):
        pipeline.deliver(envelope(message))
        pipeline.drain()
    assert deferrals(log_records) == ["agent_failed", "agent_failed"]
    assert len(ASKED) == 4  # each burst asked twice (the model's spend is AgentAsked's to show)...
    assert sorted(s.payload["reply_to_message_id"] for s in nylas.sends) == sorted(
        [first["id"], second["id"]]
    )
    assert count_today(capped, nylas) == (2, 2)  # ...and counted once
    assert "agent_call_cap" not in skip_reasons(log_records)


def test_in_shadow_mode_the_cap_is_recorded_as_what_would_have_happened(capped, pipeline, nylas):
    from replyonce.adapters.store import DynamoDBStateStore

    put_record(capped, {"daily_agent_call_cap": 1, "reply_mode": "shadow"})
    for message in customers(2, nylas):
        pipeline.deliver(envelope(message))
        pipeline.drain()
    assert nylas.sends == []
    store = DynamoDBStateStore(capped.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=0)
    outcomes = sorted((r.outcome.value, r.reason) for r in store.shadow_records())
    assert outcomes == [("reply", ""), ("skipped", "agent_call_cap")]
