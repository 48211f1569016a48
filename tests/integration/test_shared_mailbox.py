"""People share the mailbox: a colleague's answer counts, and the thread is theirs for a while.

Each test runs the real replier handler against moto and the Nylas emulator, and counts at the
emulator. A colleague writes from the shared mailbox with ``NylasEmulator.person_replies``: a
message of the grant's own address in the thread, without ReplyOnce's metadata, as a person's web
mail or mail client sends it.
"""

import pytest
import requests

from devstack.events import AGENT_GRANT_ID, envelope
from replyonce.agent import Conversation, Reply
from tests.replier_harness import deferrals, inbound, skip_reasons

# What the agent below does while it drafts: set by the test that names it as REPLY_AGENT.
WHILE_DRAFTING: list = []


def drafting_while_a_colleague_answers(conversation: Conversation) -> Reply:
    """An agent that takes its time: meanwhile a colleague answers from the mailbox."""
    for happen in WHILE_DRAFTING:
        happen(conversation)
    return Reply(text="Thanks, we are on it.")


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


def test_after_a_colleague_the_agent_answers_only_what_came_after(pipeline, nylas, log_records, no_hold):
    first = inbound(nylas, subject="Order 1042")
    nylas.person_replies(AGENT_GRANT_ID, first["id"])
    second = inbound(nylas, subject="Re: Order 1042", reply_to_message_id=first["id"])
    pipeline.deliver(envelope(first))
    pipeline.deliver(envelope(second))
    pipeline.drain()
    [reply] = nylas.sends
    assert reply.payload["reply_to_message_id"] == second["id"]
    # The reply's metadata names what it covers: the colleague's question is not among them.
    assert reply.payload["metadata"]["key2"] == second["id"]
    assert "answered_by_person" in skip_reasons(log_records)


def test_the_thread_is_the_persons_for_the_hold(pipeline, nylas, log_records):
    # The template's hold (a week): the customer's follow-up after the colleague's answer is theirs.
    first = inbound(nylas, subject="Order 1042")
    nylas.person_replies(AGENT_GRANT_ID, first["id"])
    second = inbound(nylas, subject="Re: Order 1042", reply_to_message_id=first["id"])
    pipeline.deliver(envelope(second))
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["person_hold"]


def test_the_agents_own_replies_are_no_person(pipeline, nylas, log_records):
    # Its own reply (with its metadata) never starts a hold: the customer's follow-up is answered.
    first = inbound(nylas, subject="Order 1042")
    pipeline.deliver(envelope(first))
    pipeline.drain()
    second = inbound(nylas, subject="Re: Order 1042", reply_to_message_id=first["id"])
    pipeline.deliver(envelope(second))
    pipeline.drain()
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [first["id"], second["id"]]
    assert "person_hold" not in skip_reasons(log_records)


def test_a_colleague_answering_while_the_agent_drafts_is_not_answered_over(
    pipeline, nylas, log_records, no_hold, monkeypatch
):
    # The thread is read before the agent is asked; the colleague's answer lands inside the lease.
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:drafting_while_a_colleague_answers")
    from functions.replier import app

    app.consumer.cache_clear()
    first = inbound(nylas, subject="Order 1042")
    monkeypatch.setattr(
        f"{__name__}.WHILE_DRAFTING",
        [lambda conversation: nylas.person_replies(AGENT_GRANT_ID, first["id"], "<p>Shipped. — Sam</p>")],
    )
    pipeline.deliver(envelope(first))
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["answered_by_person"]
    # Nothing of ours was stored for it: a redelivery finds the colleague's answer in the thread read.
    pipeline.deliver(envelope(first))
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["answered_by_person", "answered_by_person"]


SECOND_AGENT = ("grant-agent-0003", "sales@replyonce.example")


@pytest.mark.parametrize(
    "addressed_to",
    [
        ["team@replyonce.example"],  # a group or distribution list reaching both agent mailboxes
        ["help@replyonce.example", "deals@replyonce.example"],  # an alias of each agent
    ],
)
def test_one_email_through_a_group_or_aliases_gets_one_reply(
    pipeline, nylas, monkeypatch, log_records, addressed_to
):
    # Neither copy names a grant's own address in To/Cc: the first grant to claim the Message-ID answers.
    from functions.replier import app

    nylas.add_grant(*SECOND_AGENT, name="Sales")
    monkeypatch.setenv("AGENT_GRANT_IDS", f"{AGENT_GRANT_ID},{SECOND_AGENT[0]}")
    app.consumer.cache_clear()
    first = inbound(nylas, also_to=[SECOND_AGENT[0]], addressed_to=addressed_to)
    [second] = [m for _, m in nylas.mailbox(SECOND_AGENT[0]) if m["id"] != first["id"]]
    pipeline.deliver(envelope(first))
    pipeline.deliver(envelope(second))
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert skip_reasons(log_records).count("answered_by_other_agent") == 1


GROUP_RELAY = [
    {"name": "List-Id", "value": "<support.acme.example>"},
    {"name": "Precedence", "value": "list"},
    {"name": "X-Original-From", "value": "Alice Doe <alice@example.com>"},
]


@pytest.mark.parametrize(
    ("trusted_lists", "answered_to", "skips"),
    [
        ("support.acme.example", "alice@example.com", []),  # the company's group: its customer answered
        ("<Support.Acme.Example>", "alice@example.com", []),  # as the operator may write it
        ("", None, ["bulk_mail"]),  # no list named: every list is bulk mail
        ("newsletter.acme.example", None, ["bulk_mail"]),  # another list stays skipped
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


def test_a_colleague_in_cc_who_answers_all_leaves_the_customer_answered_too(pipeline, nylas, log_records):
    # The customer writes with a colleague in Cc; the colleague answers all ("adding support here")
    # before the thread is read (a backlog): one reply covers both, and both receive it.
    first = inbound(nylas, subject="Contract renewal", from_email="carol@customer.example")
    second = inbound(
        nylas,
        subject="Re: Contract renewal",
        from_email="dave@customer.example",
        reply_to_message_id=first["id"],
        body="<p>Adding support here. We need the renewal quote by Friday.</p>",
    )
    pipeline.deliver(envelope(first))
    pipeline.deliver(envelope(second))
    pipeline.drain()
    [reply] = nylas.sends
    assert reply.payload["reply_to_message_id"] == second["id"]
    assert {r["email"] for r in reply.payload["to"]} == {"dave@customer.example", "carol@customer.example"}
    assert skip_reasons(log_records).count("already_replied") == 1  # the other notification, covered


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
    nylas.advance_clock(601)  # PERSON_DRAFT_WAIT_SECONDS (600) from the draft's date
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
