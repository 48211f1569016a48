"""``--grant`` on every operator command (issue 42): a grant only the registry names beside the seeded one.

What each command does with it, as ``make`` runs it against moto's stack, the real replier and the Nylas
emulator: a command over every grant (``backfill``, ``shadow-report``, ``review-report``) covers the
registry's grants as well as ``AgentGrantIds`` by default, and ``--grant`` narrows it to the grants named;
a command about one grant (``replay``, ``export``, ``thread-state``) takes the grant's own settings from
its record. ``redrive --grant`` is ``tests/integration/test_ops.py``'s.
"""

import io
import json
import time

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from functions.replier import app
from ops import backfill
from ops.cli import Runtime, main
from replyonce.adapters.grant_registry import Change, read_grant, write_change
from tests.conftest import register_stack

STACK = "replyonce-grant-option-test"
OTHER = "grant-brand-0002"
OTHER_EMAIL = "help@brand.example"
OPERATOR = "arn:aws:iam::123456789012:user/operator"


def put_record(resources, grant_id: str, record: dict) -> None:
    client, table = boto3.client("dynamodb"), resources.tables["GrantRegistryTable"]
    read = read_grant(client, table, grant_id)
    change = Change(grant_id, "2026-12-06T10:00:00Z", "set", OPERATOR, read.record if read else None, record)
    write_change(client, table, change, read)


@pytest.fixture
def stack(replier_env, nylas, tuning):
    """Two grants in shadow: the seeded one (``AgentGrantIds``) and one only the registry names."""
    tuning.update({"registry_max_age_seconds": 0})
    nylas.add_grant(OTHER, OTHER_EMAIL, name="Brand Help")
    put_record(replier_env, AGENT_GRANT_ID, {"reply_mode": "shadow"})
    put_record(replier_env, OTHER, {"reply_mode": "shadow"})
    register_stack(
        STACK,
        {
            "GrantRegistryTableName": replier_env.tables["GrantRegistryTable"],
            "StateTableName": replier_env.tables["StateTable"],
            "NylasApiKeySecretArn": replier_env.secrets["NylasApiKeySecret"],
            "NotificationQueueUrl": replier_env.queues["NotificationQueue"],
        },
        {"AgentGrantIds": AGENT_GRANT_ID, "NylasApiUri": nylas.url},
    )
    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


def run(command: str, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={}, progress=lambda: None)
    code = main([command, "--stack-name", STACK, "--region", "us-east-1", *argv], runtime)
    assert code == 0, err.getvalue()
    return out.getvalue()


def since() -> str:
    return str(int(time.time()) - 3600)


@pytest.fixture
def mail(stack, nylas) -> dict[str, dict]:
    """One customer's question in each grant's mailbox."""
    return {
        AGENT_GRANT_ID: nylas.deliver_inbound(
            AGENT_GRANT_ID, from_email="ann@customer.example", subject="Order 1042", body="Where is it?"
        ),
        OTHER: nylas.deliver_inbound(
            OTHER, from_email="bob@customer.example", subject="Quote", body="A quote?"
        ),
    }


def test_backfill_covers_the_registrys_grants_by_default_and_grant_narrows_it(mail):
    def would(out: str) -> list[str]:
        return sorted(line.split()[2] for line in out.splitlines() if line.strip().startswith("would queue"))

    both = sorted(backfill.notification_id(g, m["id"]) for g, m in mail.items())
    assert would(run("backfill", "--since", since())) == both
    assert would(run("backfill", "--since", since(), "--grant", OTHER)) == [
        backfill.notification_id(OTHER, mail[OTHER]["id"])
    ]


def test_shadow_report_covers_every_grant_by_default_and_grant_narrows_it(mail, pipeline, tmp_path):
    for message in mail.values():
        pipeline.deliver(envelope(message))
    pipeline.drain()

    def triggers(*argv: str) -> list[str]:
        path = tmp_path / "report.json"
        run("shadow-report", "--since", since(), "--json", str(path), *argv)
        return sorted(item["trigger_id"] for item in json.loads(path.read_text())["items"])

    assert triggers() == sorted(m["id"] for m in mail.values())
    assert triggers("--grant", OTHER) == [mail[OTHER]["id"]]
    assert triggers("--grant", AGENT_GRANT_ID) == [mail[AGENT_GRANT_ID]["id"]]


def test_replay_of_a_grant_decides_with_its_records_settings(stack, nylas, tmp_path):
    # A person of the brand's mailbox answered, and the customer wrote again: under the stack's person
    # hold (7 days) the thread is the person's; the brand's record turns the hold off, so its replay
    # answers the follow-up, as the replier would. Only the grant's own mail is read.
    question = nylas.deliver_inbound(
        OTHER, from_email="bob@customer.example", subject="Quote", body="A quote?"
    )
    answer = nylas.person_replies(OTHER, question["id"], "<p>Sending it today. — Sam</p>")
    follow_up = nylas.deliver_inbound(
        OTHER,
        from_email="bob@customer.example",
        subject="Re: Quote",
        body="And the delivery time?",
        reply_to_message_id=answer["id"],
    )
    nylas.deliver_inbound(AGENT_GRANT_ID, from_email="ann@customer.example", subject="Order", body="Where?")

    def outcomes() -> list[tuple[str, str]]:
        path = tmp_path / "replay.json"
        agent = "tests.integration.test_shadow:by_subject"
        run("replay", "--agent", agent, "--grant", OTHER, "--since", since(), "--json", str(path))
        report = json.loads(path.read_text())
        assert report["threads"] == 1
        return [(i["trigger_id"], i["outcome"], i.get("reason", "")) for i in report["items"]]

    held = [(t, o) for t, o, _ in outcomes() if t == follow_up["id"]]
    assert held == [(follow_up["id"], "skipped")]
    put_record(stack, OTHER, {"reply_mode": "shadow", "person_hold_seconds": 0})
    answered = [(t, o) for t, o, _ in outcomes() if t == follow_up["id"]]
    assert answered == [(follow_up["id"], "reply")]


def test_review_report_grant_reads_only_that_grants_drafts(stack, nylas, tmp_path):
    before = len(nylas.requests)
    run("review-report", "--grant", OTHER, "--drafts-file", str(tmp_path / "drafts.json"))
    read = {path for _, path in nylas.requests[before:]}
    assert f"/v3/grants/{OTHER}/drafts" in read
    assert not any(path.startswith(f"/v3/grants/{AGENT_GRANT_ID}") for path in read)
