"""``REPLY_MODE=shadow`` on the real handlers: nothing sent or drafted, each decision recorded once.

Real parts: the unchanged replier handler behind the event source stand-in, moto (the state table
the shadow records live in, the stack ``ops shadow-report`` finds), and the Nylas emulator, which
counts every request it was sent. The report is the operator's command, run as ``make
shadow-report`` runs it.
"""

import io
import json
import sys
import time

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from devstack.nylas import Fault
from functions.replier import app
from ops.cli import Runtime, main
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.agent import Conversation, Handoff, NoReply, Reply
from replyonce.keys import conversation_key
from replyonce.state import ShadowOutcome
from tests.conftest import register_stack
from tests.replier_harness import SEND_PATH, deferrals, inbound, new_container, skip_reasons

STACK = "replyonce-shadow-test"
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def by_subject(conversation: Conversation) -> Reply | NoReply | Handoff:
    """An agent that declines, hands off or answers by the subject: each outcome of the contract."""
    subject = (conversation.target.subject or "").lower()
    if "decline" in subject:
        return NoReply("not a support question")
    if "handoff" in subject:
        return Handoff("billing dispute")
    return Reply(text="Thanks for writing: order 1042 ships today.")


@pytest.fixture
def shadow(replier_env, monkeypatch):
    monkeypatch.setenv("REPLY_MODE", "shadow")
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:by_subject")
    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


def records(resources):
    return DynamoDBStateStore(
        resources.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=0
    ).shadow_records()


def writes_to_nylas(nylas) -> list[tuple[str, str]]:
    return [(method, path) for method, path in nylas.requests if method in WRITES]


def test_shadow_mode_sends_nothing_and_records_a_burst_once_however_often_it_is_delivered(
    shadow, pipeline, nylas, log_records
):
    # On a thread whose item is in service (an earlier message recorded, pending_confirm_seconds ago): a
    # brand-new thread item's burst would first wait that long (issue 48).
    earlier = inbound(nylas, subject="Order 1042")
    pipeline.deliver(envelope(earlier))
    pipeline.drain()
    nylas.advance_clock(700)
    first = inbound(nylas, subject="Re: Order 1042", thread_id=earlier["thread_id"])
    second = inbound(nylas, subject="Re: Order 1042", reply_to_message_id=first["id"])
    notification = envelope(second)
    for _ in range(3):
        pipeline.deliver(notification)
    pipeline.deliver(envelope(first))
    pipeline.drain()
    # A provider's upsert: the same message in a notification of its own, later.
    pipeline.deliver(envelope(second))
    pipeline.drain()
    assert writes_to_nylas(nylas) == []
    assert nylas.sends == []
    [record] = [r for r in records(shadow) if r.trigger_id != earlier["id"]]
    assert record.outcome is ShadowOutcome.REPLY
    assert set(record.covered) == {first["id"], second["id"]}
    assert record.trigger_id == second["id"]
    assert record.text == "Thanks for writing: order 1042 ships today."
    reasons = skip_reasons(log_records)
    assert reasons.count("duplicate_notification") == 2
    assert reasons.count("already_shadowed") == 2


def test_a_settlement_that_fails_records_nothing_and_its_redelivery_records_the_burst_once(
    shadow, pipeline, nylas, log_records
):
    message = inbound(nylas, subject="Order 1042")
    container = new_container()
    # The settlement (the ledger and the record, one transaction) fails once: SQS delivers it again.
    failures = {"left": 1}

    def fail_once(**kwargs):
        if failures["left"]:
            failures["left"] -= 1
            from botocore.exceptions import ClientError

            raise ClientError(
                {"Error": {"Code": "InternalServerError", "Message": "injected"}}, "TransactWriteItems"
            )

    container._replier._store._dynamodb.meta.events.register(
        "before-call.dynamodb.TransactWriteItems", fail_once
    )
    pipeline.deliver(envelope(message))
    first = pipeline.poller(container.handle_batch).poll_once()
    assert first.failed == 1
    assert records(shadow) == []
    pipeline.drain(container.handle_batch)
    pipeline.deliver(envelope(message))  # and once more, after it settled
    pipeline.drain(container.handle_batch)
    [record] = records(shadow)
    assert record.covered == (message["id"],)
    assert writes_to_nylas(nylas) == []
    assert skip_reasons(log_records)[-1] == "already_shadowed"


def run_report(*argv: str) -> tuple[str, dict]:
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={}, progress=lambda: None)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "report.json"
        code = main(
            [
                "shadow-report",
                "--stack-name",
                STACK,
                "--region",
                "us-east-1",
                "--since",
                str(int(time.time()) - 3600),
                "--json",
                str(path),
                *argv,
            ],
            runtime,
        )
        assert code == 0, err.getvalue()
        return out.getvalue(), json.loads(path.read_text())


@pytest.fixture
def stack(shadow, nylas):
    outputs = {
        "NylasApiKeySecretArn": shadow.secrets["NylasApiKeySecret"],
        "StateTableName": shadow.tables["StateTable"],
    }
    register_stack(STACK, outputs, {"NylasApiUri": nylas.url, "AgentGrantIds": AGENT_GRANT_ID})
    return shadow


def test_the_report_counts_each_outcome_and_skip_and_matches_a_persons_later_reply(
    stack, pipeline, nylas, log_records, monkeypatch
):
    # A hand-off would move the message to this folder in send mode: in shadow mode, nothing moves.
    monkeypatch.setenv("HANDOFF_FOLDER", "archive")
    app.consumer.cache_clear()
    answered = inbound(nylas, subject="Order 1042")
    machine = inbound(nylas, from_email="no-reply@shop.example", subject="Your receipt")
    bulk = inbound(
        nylas,
        from_email="news@example.com",
        subject="Weekly",
        headers=[
            {"name": "Precedence", "value": "bulk"},
            {"name": "List-Unsubscribe", "value": "<https://example.com/unsubscribe>"},
        ],
    )
    before_the_agent = inbound(nylas, from_email="bob@example.com", subject="Return label")
    nylas.person_replies(AGENT_GRANT_ID, before_the_agent["id"], "<p>Label attached. — Sam</p>")
    declined = inbound(nylas, from_email="carol@example.com", subject="Please decline this")
    handed = inbound(nylas, from_email="dan@example.com", subject="Handoff: refund")
    for message in (answered, machine, bulk, before_the_agent, declined, handed):
        pipeline.deliver(envelope(message))
    pipeline.drain()
    # After the shadow record, a colleague answers the customer the agent would have answered.
    person = nylas.person_replies(AGENT_GRANT_ID, answered["id"], "<p>It left the warehouse today. — Sam</p>")

    text, report = run_report()

    assert writes_to_nylas(nylas) == []
    [period] = report["periods"]
    assert (period["replies"], period["answered"], period["answered_by_person_too"]) == (1, 1, 1)
    assert (period["declined"], period["handed_off"], period["rejected"]) == (1, 1, 0)
    assert period["skipped"] == {"answered_by_person": 1, "automated_sender": 1, "bulk_mail": 1}
    [reply] = [item for item in report["items"] if item["outcome"] == "reply"]
    assert reply["trigger_id"] == answered["id"]
    assert reply["person_message_id"] == person["id"]
    assert reply["person_text"] == "It left the warehouse today. — Sam"
    assert reply["agent_text"] == "Thanks for writing: order 1042 ships today."
    assert "a person answered 1 of them too" in text
    assert f"person: It left the warehouse today. — Sam  [{person['id']}]" in text


def test_shadow_mode_takes_no_recipient_budget_so_the_switch_to_send_answers_at_once(
    shadow, pipeline, nylas, monkeypatch
):
    monkeypatch.setenv("REPLY_BUDGET_PER_RECIPIENT_PER_HOUR", "1")
    app.consumer.cache_clear()
    for subject in ("Order 1042", "Order 1043"):
        pipeline.deliver(envelope(inbound(nylas, subject=subject)))
    pipeline.drain()
    assert [r.outcome for r in records(shadow)] == [ShadowOutcome.REPLY, ShadowOutcome.REPLY]
    # One parameter: REPLY_MODE=send. The same customer writes on a new thread within the hour.
    monkeypatch.setenv("REPLY_MODE", "send")
    app.consumer.cache_clear()
    live = inbound(nylas, subject="Order 1044")
    pipeline.deliver(envelope(live))
    pipeline.drain()
    [sent] = nylas.sends
    assert sent.payload["reply_to_message_id"] == live["id"]
    assert sent.payload["to"][0]["email"] == CUSTOMER_EMAIL


def test_after_the_switch_a_shadowed_message_is_not_answered_again_but_the_follow_up_is(
    shadow, pipeline, nylas, monkeypatch, log_records
):
    first = inbound(nylas, subject="Order 1042")
    pipeline.deliver(envelope(first))
    pipeline.drain()
    monkeypatch.setenv("REPLY_MODE", "send")
    app.consumer.cache_clear()
    follow_up = inbound(nylas, subject="Re: Order 1042", reply_to_message_id=first["id"])
    pipeline.deliver(envelope(first))
    pipeline.deliver(envelope(follow_up))
    pipeline.drain()
    [sent] = nylas.sends
    assert sent.payload["reply_to_message_id"] == follow_up["id"]
    assert sent.payload["metadata"]["key2"] == follow_up["id"]
    assert "already_shadowed" in skip_reasons(log_records)


def test_a_reply_stored_before_the_switch_to_shadow_is_not_sent_in_shadow_mode(
    replier, pipeline, nylas, monkeypatch, log_records
):
    # Live: the first send is refused with a 500, so its intent stays stored for the next try.
    message = inbound(nylas, subject="Order 1042")
    nylas.inject("POST", SEND_PATH, Fault.status(500))
    pipeline.deliver(envelope(message))
    assert pipeline.poller().poll_once().failed == 1
    attempts = nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send")
    before = len(deferrals(log_records))
    # The switch to shadow before its retry: the stored reply waits (and dead-letters), never sent.
    monkeypatch.setenv("REPLY_MODE", "shadow")
    app.consumer.cache_clear()
    pipeline.drain()
    assert nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send") == attempts
    assert nylas.sends == []
    assert set(deferrals(log_records)[before:]) == {"shadow_mode"}
    [letter] = pipeline.dead_letters()
    # Back to send, and the dead letter redriven: the stored reply goes out, once.
    monkeypatch.setenv("REPLY_MODE", "send")
    app.consumer.cache_clear()
    pipeline.sqs.send_message(QueueUrl=replier.queues["NotificationQueue"], MessageBody=letter["Body"])
    pipeline.drain()
    [sent] = nylas.sends
    assert sent.payload["reply_to_message_id"] == message["id"]


# ---- the agent knows it is in shadow mode (issue 40) ----------------------------------------------------


@pytest.fixture
def watched(shadow, monkeypatch):
    """``by_subject`` as ``REPLY_AGENT``, every conversation it is handed recorded."""
    calls: list[Conversation] = []

    def watching(conversation: Conversation) -> Reply | NoReply | Handoff:
        calls.append(conversation)
        return by_subject(conversation)

    monkeypatch.setattr(sys.modules[__name__], "watching", watching, raising=False)
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:watching")
    app.consumer.cache_clear()
    return calls


def test_shadow_mode_tells_the_agent_it_is_shadow_mode_under_the_live_key(watched, pipeline, nylas):
    message = inbound(nylas, subject="Order 1042")
    pipeline.deliver(envelope(message))
    pipeline.drain()
    [conversation] = watched
    assert conversation.mode == "shadow"
    assert not conversation.acts_for_real
    # Shadow mode runs on live mail: its key is the live one (the shadow record's id is derived from it).
    assert conversation.key == conversation_key(AGENT_GRANT_ID, message["thread_id"], (message["id"],))
    assert nylas.sends == []


def test_the_example_agent_opens_no_ticket_in_shadow_mode_and_one_after_the_switch_to_send(
    shadow, pipeline, nylas, monkeypatch, log_records
):
    monkeypatch.syspath_prepend("functions/replier")
    monkeypatch.setenv("REPLY_AGENT", "order_status_agent:reply")
    app.consumer.cache_clear()
    shadowed = inbound(nylas, subject="Order 1042", body="<p>I want a refund for order 1042.</p>")
    pipeline.deliver(envelope(shadowed))
    pipeline.drain()
    [record] = records(shadow)
    assert record.outcome is ShadowOutcome.HANDED_OFF  # the same decision is recorded ...
    assert [r for r in log_records() if r.get("message") == "would open a ticket"] == []  # ... no ticket
    assert writes_to_nylas(nylas) == []
    monkeypatch.setenv("REPLY_MODE", "send")
    app.consumer.cache_clear()
    live = inbound(nylas, subject="Order 1043", body="<p>Please refund order 1043.</p>")
    pipeline.deliver(envelope(live))
    pipeline.drain()
    [ticket] = [r for r in log_records() if r.get("message") == "would open a ticket"]
    assert ticket["mode"] == "send"
    assert ticket["ticket_key"] == conversation_key(AGENT_GRANT_ID, live["thread_id"], (live["id"],))


@pytest.mark.parametrize(("gone", "status"), [("expire_grant", 401), ("delete_grant", 404)])
def test_a_grant_nylas_will_not_read_keeps_its_records_and_the_other_grants_keep_their_threads(
    nylas, gone, status
):
    # A report over every registered grant must not stop at one whose user let it expire (or deleted it):
    # its records are counted without their threads, and the line says which grant and why.
    from ops import shadow
    from ops.nylas_admin import NylasAdmin
    from replyonce.state import ShadowRecord

    nylas.add_grant("grant-agent-0002", "support2@replyonce.example", name="Acme Sales")
    first = inbound(nylas, subject="Order 1042")
    second = nylas.deliver_inbound(
        "grant-agent-0002", from_email=CUSTOMER_EMAIL, subject="Quote", body="<p>A quote, please.</p>"
    )
    person = nylas.person_replies(AGENT_GRANT_ID, first["id"], "<p>It ships today. — Sam</p>")
    now = int(time.time())
    records = [
        ShadowRecord(
            m["grant_id"],
            f"r-{m['id']}",
            m["thread_id"],
            m["id"],
            (m["id"],),
            ShadowOutcome.REPLY,
            "",
            "Thanks for writing.",
            now - 60,
        )
        for m in (first, second)
    ]
    getattr(nylas, gone)("grant-agent-0002")
    said: list[str] = []
    inbox = NylasAdmin(nylas.url, nylas.api_key)

    report = shadow.report_from_records(
        records, inbox, [AGENT_GRANT_ID, "grant-agent-0002"], since=now - 3600, until=None, say=said.append
    )

    answered = {item.trigger_id: item.person_message_id for item in report.items}
    assert answered == {first["id"]: person["id"], second["id"]: ""}
    [line] = said
    assert line.startswith(f"grant grant-agent-0002: Nylas refused to read it (Nylas answered {status} ")
    assert line.endswith(
        "its 1 record(s) are counted without their threads, so a person's answer there is not seen"
    )


def test_nylas_unreachable_stops_the_report_in_its_own_words(nylas):
    from ops import shadow
    from ops.errors import NylasApiError
    from ops.nylas_admin import NylasAdmin

    nylas.inject("GET", rf"^/v3/grants/{AGENT_GRANT_ID}$", Fault.status(503), times=5)
    with pytest.raises(NylasApiError, match="answered 503"):
        shadow.report_from_records(
            [], NylasAdmin(nylas.url, nylas.api_key), [AGENT_GRANT_ID], since=0, until=None
        )
