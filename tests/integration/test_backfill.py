"""``ops backfill``: after a failed webhook, the window's unanswered messages go through the pipeline once.

Real parts: the Nylas emulator (messages listed page by page), moto (the stack's outputs, the queue,
the reply ledger), and the unchanged replier handler behind the event source stand-in. The webhook
is "failed" simply by never delivering: the emulator's ``on_message_created`` is not wired.
"""

import io
import time
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
import requests

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from devstack.poller import EventSourcePoller
from functions.replier import app
from ops import backfill, nylas_admin
from ops.cli import Runtime, main
from ops.nylas_admin import NylasAdmin
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.rules.notification import Notification
from tests.conftest import register_stack

STACK = "replyonce-backfill-test"


@pytest.fixture
def stack(replier_env, nylas):
    """A moto stack whose outputs and parameters are this test's resources, as `make deploy` leaves them."""
    outputs = {
        "NotificationQueueUrl": replier_env.queues["NotificationQueue"],
        "NylasSecretsArn": replier_env.secrets["NylasSecrets"],
        "NylasApiKeySecretArn": replier_env.secrets["NylasApiKeySecret"],
        "StateTableName": replier_env.tables["StateTable"],
    }
    parameters = {"NylasApiUri": nylas.url, "AgentGrantIds": AGENT_GRANT_ID}
    register_stack(STACK, outputs, parameters)
    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


def run_backfill(*argv: str, since: str | None = None) -> str:
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={})
    since = since or str(int(time.time()) - 3600)
    argv = ("--stack-name", STACK, "--region", "us-east-1", "--since", since, *argv)
    code = main(["backfill", *argv], runtime)
    assert code == 0, err.getvalue()
    return out.getvalue()


def queued(resources) -> int:
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=resources.queues["NotificationQueue"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return sum(int(v) for v in attributes.values())


def drain(resources) -> None:
    EventSourcePoller(app.lambda_handler, resources).drain()


def customer(nylas, subject: str) -> dict:
    return nylas.deliver_inbound(AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject=subject, body="Hello?")


@pytest.fixture
def outage(stack, nylas):
    """One message answered before the webhook failed, then three that arrived while it was failed."""
    answered = customer(nylas, "Before the outage")
    NotificationQueue(stack.queues["NotificationQueue"], 1_048_576, boto3.client("sqs")).enqueue(
        Notification(envelope(answered))
    )
    drain(stack)
    assert len(nylas.sends) == 1  # its reply (the agent's own message) is in the mailbox too
    missed = [customer(nylas, "Order 1042"), customer(nylas, "Refund please")]
    robot = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email="no-reply@shop.example", subject="Your receipt", body="Thanks"
    )
    return {"answered": answered, "missed": missed, "robot": robot}


def test_dry_run_lists_only_unanswered_messages_and_queues_nothing(outage, stack):
    out = run_backfill()
    would = [line.split()[2] for line in out.splitlines() if line.strip().startswith("would queue")]
    expected = [backfill.notification_id(AGENT_GRANT_ID, m["id"]) for m in outage["missed"]]
    assert sorted(would) == sorted(expected)
    assert queued(stack) == 0
    assert "already_replied" in out  # the message answered before the outage
    assert "own_outbound" in out  # the agent's reply to it
    assert "automated_sender" in out


def test_apply_answers_each_missed_message_once_and_a_second_run_queues_nothing(outage, stack, nylas):
    run_backfill("--apply")
    assert queued(stack) == 2
    drain(stack)
    replied_to = [s.payload["reply_to_message_id"] for s in nylas.sends]
    assert sorted(replied_to) == sorted([outage["answered"]["id"], *(m["id"] for m in outage["missed"])])

    out = run_backfill("--apply")
    assert queued(stack) == 0
    assert not [line for line in out.splitlines() if line.strip().startswith("queued")]
    drain(stack)
    assert len(nylas.sends) == 3


def test_a_backfill_run_twice_before_the_replier_sends_one_reply_each(outage, stack, nylas, log_records):
    run_backfill("--apply")
    run_backfill("--apply")  # nothing answered yet: both runs queue the two messages
    assert queued(stack) == 4
    drain(stack)
    assert len(nylas.sends) == 3
    # The same message got the same notification id: Powertools idempotency absorbed the copies.
    absorbed = [r for r in log_records() if r.get("message") == "duplicate delivery absorbed"]
    assert len(absorbed) == 2


def test_the_listing_asks_for_the_window_and_follows_every_page(stack, nylas, monkeypatch):
    for index in range(5):
        customer(nylas, f"Question {index}")
    seen: list[dict] = []
    session = requests.Session()
    session.hooks["response"].append(lambda r, *a, **k: seen.append(parse_qs(urlsplit(r.url).query)))
    monkeypatch.setattr(nylas_admin, "PAGE_LIMIT", 2)
    window = backfill.Window(int(time.time()) - 60, int(time.time()) + 60)
    inbox = NylasAdmin(nylas.url, nylas.api_key, session=session)
    ledger = DynamoDBStateStore(stack.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=0)
    plan = backfill.plan_backfill(inbox, ledger, [AGENT_GRANT_ID], window)
    assert len(plan.to_enqueue) == 5
    listings = [q for q in seen if "limit" in q]
    assert len(listings) == 3  # 2 + 2 + 1
    assert all(q["received_after"] == [str(window.received_after)] for q in listings)
    assert all(q["received_before"] == [str(window.received_before)] for q in listings)
    assert [("page_token" in q) for q in listings] == [False, True, True]


def test_only_messages_received_in_the_window_are_queued(stack, nylas):
    customer(nylas, "Before the window")
    time.sleep(1.1)  # the window is in whole seconds
    since = str(int(time.time()))
    inside = customer(nylas, "Inside the window")
    out = run_backfill(since=since)
    would = [line.split()[2] for line in out.splitlines() if line.strip().startswith("would queue")]
    assert would == [backfill.notification_id(AGENT_GRANT_ID, inside["id"])]


def test_an_empty_window_is_refused_before_anything_is_read():
    with pytest.raises(backfill.ConfigurationError, match="empty window"):
        backfill.window("2026-11-30T10:00Z", "2026-11-30T09:00Z", time.time())


def test_agent_email_is_never_printed(outage):
    assert AGENT_EMAIL not in run_backfill()
    assert CUSTOMER_EMAIL not in run_backfill()


def test_a_customer_relayed_by_a_group_the_company_runs_is_backfilled(stack, nylas):
    # TRUSTED_LISTS (the stack's TrustedLists): the replier answers such a relay, so a backfill after a
    # failed webhook (or a failover) must queue it, not drop it as a list's mail.
    register_stack(
        STACK + "-lists",
        {
            "NotificationQueueUrl": stack.queues["NotificationQueue"],
            "NylasSecretsArn": stack.secrets["NylasSecrets"],
            "NylasApiKeySecretArn": stack.secrets["NylasApiKeySecret"],
            "StateTableName": stack.tables["StateTable"],
        },
        {"NylasApiUri": nylas.url, "AgentGrantIds": AGENT_GRANT_ID, "TrustedLists": "<support.acme.example>"},
    )
    relayed = nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email="support@groups.acme.example",
        subject="Order 1042",
        body="Where is it?",
        reply_to=[{"name": "Alice", "email": CUSTOMER_EMAIL}],
        headers={
            "List-Id": "<support.acme.example>",
            "Precedence": "list",
            "X-Original-From": CUSTOMER_EMAIL,
        },
        addressed_to=["support@groups.acme.example"],
    )
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={})
    since = str(int(time.time()) - 3600)
    argv = ["backfill", "--stack-name", STACK + "-lists", "--region", "us-east-1", "--since", since]
    assert main(argv, runtime) == 0, err.getvalue()
    would = [
        line.split()[2] for line in out.getvalue().splitlines() if line.strip().startswith("would queue")
    ]
    assert would == [backfill.notification_id(AGENT_GRANT_ID, relayed["id"])]
