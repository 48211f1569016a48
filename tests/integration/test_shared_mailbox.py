"""People share the mailbox: a colleague's answer counts, and the thread is theirs for a while.

Each test runs the real replier handler against moto and the Nylas emulator, and counts at the
emulator. A colleague writes from the shared mailbox with ``NylasEmulator.person_replies``: a
message of the grant's own address in the thread, without ReplyOnce's metadata, as a person's web
mail or mail client sends it.

What the rules decide about a colleague's answer (what comes after it, the hold, the agent's own
replies, an answer landing while the agent drafts), one email through a group or aliases, a list the
operator trusts and a colleague in Cc run on the in-memory ports in ``tests/unit/test_replier_decisions.py``;
here, end to end, a colleague's answer counts, the drafts of a shared mailbox, and our own reply known by
its metadata.
"""

import pytest
import requests

from devstack.events import AGENT_GRANT_ID, envelope
from tests.replier_harness import deferrals, inbound, skip_reasons

# What the agent below does while it drafts: set by the test that names it as REPLY_AGENT.
WHILE_DRAFTING: list = []


@pytest.fixture
def no_hold(replier_env, monkeypatch):
    monkeypatch.setenv("PERSON_HOLD_SECONDS", "0")
    from functions.replier import app

    app.consumer.cache_clear()


def test_a_question_a_colleague_answered_is_not_answered_again(pipeline, nylas, log_records, no_hold):
    # The agent is behind (a backlog): the colleague answers the first question before it does.
    first = inbound(nylas, subject="Order 1042")
    nylas.person_replies(AGENT_GRANT_ID, first["id"], "<p>It ships today. — Sam</p>")
    pipeline.deliver(envelope(first))
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["answered_by_person"]


GROUP_RELAY = [
    # The receiving provider's verdict on the group's From, topmost (RFC 8601): what vouches for the relay.
    {
        "name": "Authentication-Results",
        "value": "mx.emulator.nylas; dkim=pass header.d=acme.example; dmarc=pass",
    },
    {"name": "List-Id", "value": "<support.acme.example>"},
    {"name": "Precedence", "value": "list"},
    {"name": "X-Original-From", "value": "Alice Doe <alice@example.com>"},
]


@pytest.mark.parametrize(
    ("trusted_lists", "answered_to", "skips"),
    [
        # End to end, one of each (every spelling and other list: tests/unit/test_replier_decisions.py).
        # The company's group, by its List-Id and address, authenticated: its customer answered.
        ("<Support.Acme.Example>=support-group@acme.example", "alice@example.com", []),
        ("newsletter.acme.example=news@acme.example", None, ["bulk_mail"]),  # another list stays skipped
    ],
)
def test_a_support_address_run_as_a_group_relays_customers(
    pipeline, nylas, monkeypatch, log_records, trusted_lists, answered_to, skips
):
    # A Google Group rewrites From to itself and keeps the customer in Reply-To and X-Original-From.
    from functions.replier import app

    monkeypatch.setenv("TRUSTED_LISTS", trusted_lists)
    app.consumer.cache_clear()
    relayed = inbound(
        nylas,
        from_email="support-group@acme.example",
        from_name="Alice Doe via Support",
        reply_to=[{"name": "Alice Doe", "email": "alice@example.com"}],
        headers=GROUP_RELAY,
    )
    pipeline.deliver(envelope({k: v for k, v in relayed.items() if k != "headers"}))
    pipeline.drain()
    assert [s.payload["to"][0]["email"] for s in nylas.sends] == ([answered_to] if answered_to else [])
    assert skip_reasons(log_records) == skips


TEAM_GRANT = ("grant-team-0001", "help@acme.example")


@pytest.fixture
def team_mailbox(pipeline, nylas, monkeypatch):
    """A team's Google mailbox as the agent's grant: people write there too, drafts included."""
    from functions.replier import app

    nylas.add_grant(*TEAM_GRANT, name="Acme Help", provider="google")
    monkeypatch.setenv("AGENT_GRANT_IDS", TEAM_GRANT[0])
    app.consumer.cache_clear()
    return TEAM_GRANT[0]


def a_persons_draft(nylas, grant: str, reply_to: dict) -> None:
    """A colleague starts an answer in their mail client: a draft in the thread, no metadata of ours."""
    response = requests.post(
        f"{nylas.url}/v3/grants/{grant}/drafts",
        json={"reply_to_message_id": reply_to["id"], "to": reply_to["from"], "body": "<p>Let me check…</p>"},
        headers={"Authorization": f"Bearer {nylas.api_key}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text


def held_back_by_a_draft(pipeline, nylas, log_records, grant: str) -> dict:
    """A customer writes to the team's mailbox while a colleague drafts an answer: the record waits."""
    first = nylas.deliver_inbound(grant, from_email="erin@example.com", subject="Invoice", body="<p>?</p>")
    a_persons_draft(nylas, grant, first)
    pipeline.deliver(envelope(first))
    pipeline.poller().poll_once()
    assert nylas.sends == []
    assert "person_drafting" in deferrals(log_records)
    return first


def test_a_persons_draft_holds_the_agent_back_and_their_answer_counts(
    pipeline, nylas, log_records, team_mailbox
):
    first = held_back_by_a_draft(pipeline, nylas, log_records, team_mailbox)
    nylas.person_replies(team_mailbox, first["id"], "<p>Attached. — Sam</p>")  # the person sent it
    pipeline.drain()
    assert nylas.sends == []
    assert "answered_by_person" in skip_reasons(log_records)


def test_a_draft_left_unsent_holds_the_agent_back_only_for_the_wait(
    pipeline, nylas, log_records, team_mailbox
):
    first = held_back_by_a_draft(pipeline, nylas, log_records, team_mailbox)
    nylas.advance_clock(601)  # person_draft_wait_seconds (600) from the draft's date
    pipeline.drain()
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [first["id"]]


def test_an_agent_account_reads_no_drafts(pipeline, nylas):
    pipeline.deliver(envelope(inbound(nylas)))
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}/drafts") == 0


def test_our_reply_is_recognised_by_its_metadata_and_its_id_not_by_its_from(pipeline, nylas, log_records):
    # A provider that sends as an alias (or rewrites From): our reply is in the thread, and fires
    # message.created, under another address. Its metadata says it is ours; so does the id the send
    # returned (kept in the ledger as own_reply).
    nylas.modes.sent_from = "help-alias@acme.example"
    nylas.on_message_created = lambda message: pipeline.deliver(envelope(message))
    inbound(nylas)
    pipeline.drain()
    pipeline.drain()
    [sent] = nylas.sent_messages()
    assert sent["from"][0]["email"] == "help-alias@acme.example"
    assert len(nylas.sends) == 1
    assert skip_reasons(log_records) == ["own_outbound"]
