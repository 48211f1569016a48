"""The rule of evidence (issue 40), end to end: whom to answer rests on what the provider vouches for.

Each test is one break of issue 40 ("Whom to answer, on evidence the provider vouches for"), run
against the real replier handler, moto and the Nylas emulator, and judged from what a person would
see: which emails reached whom (at the emulator), the folder a message ends in, the skip reason in
the log and the ``HandedOff`` metric. ``docs/design.md``, "The rule of evidence", is the contract;
the hand-offs of invariant 7 (the exchange limit, a person's draft, review mode) are in
``tests/integration/test_hand_off.py``.
"""

import boto3
import pytest

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from devstack.nylas import Fault
from devstack.nylas.mailbox import authentication_results
from replyonce.agent import Reply
from tests.replier_harness import (
    HANDOFF_FOLDER,
    SEND_PATH,
    answer_for_a_team_mailbox,
    deferrals,
    folders_of,
    handed_off,
    inbound,
    metrics_emitted,
    skip_reasons,
    with_env,
)

STRANGER = "victim@stranger.example"
DAY = 86_400


def as_nylas_sends_it(message: dict) -> dict:
    """The notification Nylas delivers by default: no ``headers`` in the payload."""
    return envelope({k: v for k, v in message.items() if k != "headers"})


def recipients(nylas) -> list[list[str]]:
    """Every address each email that went out was addressed to (to, cc, bcc), in send order."""
    return [
        [p["email"] for field in ("to", "cc", "bcc") for p in s.payload.get(field) or []] for s in nylas.sends
    ]


def reached(nylas, address: str) -> bool:
    return any(address in to for to in recipients(nylas))


# ---- a stranger aims the agent ----

LIST_ID = "customers.acme.example"
LIST_ADDRESS = "customers-group@acme.example"


@pytest.mark.parametrize(
    "trusted_lists",
    [f"{LIST_ID}={LIST_ADDRESS}", LIST_ID],  # named by both, and the older spelling (the id alone)
)
def test_a_forged_list_id_on_direct_mail_reaches_only_its_sender(
    pipeline, nylas, monkeypatch, log_records, trusted_lists
):
    # Mallory writes directly to the agent with a List-Id she typed and a stranger in X-Original-From
    # and Reply-To. Her own domain authenticates her (dmarc=pass for gmail.com): that vouches for her,
    # not for the stranger. Twenty such emails reached twenty strangers.
    with_env(monkeypatch, TRUSTED_LISTS=trusted_lists)
    strangers = [f"stranger{n}@elsewhere.example" for n in range(3)]
    forgeries = []
    for n, stranger in enumerate(strangers):
        forged = inbound(
            nylas,
            from_email="mallory@gmail.com",
            subject=f"Your order {n}",
            reply_to=[{"email": stranger}],
            headers=[
                {"name": "List-Id", "value": f"<{LIST_ID}>"},
                {"name": "Precedence", "value": "list"},
                {"name": "X-Original-From", "value": f"Stranger <{stranger}>"},
            ],
            authentication_results=authentication_results(dmarc="pass", from_domain="gmail.com"),
        )
        forgeries.append(forged)
        pipeline.deliver(as_nylas_sends_it(forged))
    pipeline.drain()
    assert not any(reached(nylas, stranger) for stranger in strangers)
    if "=" in trusted_lists:
        assert recipients(nylas) == [["mallory@gmail.com"]] * 3
    else:
        # A list named by its id alone cannot tell a rewritten post from direct mail: one naming someone
        # other than From is handed off (docs/design.md, the rule of evidence), never sent to them.
        assert all(to == ["mallory@gmail.com"] for to in recipients(nylas))
        handed = [f for f in forgeries if folders_of(nylas, f["id"]) == [HANDOFF_FOLDER]]
        assert len(nylas.sends) + len(handed) == len(forgeries)
        assert not handed or handed_off(log_records, "relay_unverified")


@pytest.mark.parametrize("trusted_lists", [f"{LIST_ID}={LIST_ADDRESS}", LIST_ID])
def test_a_group_post_that_kept_its_own_from_is_answered_to_its_from(
    pipeline, nylas, monkeypatch, log_records, trusted_lists
):
    # A genuine post through the trusted group from a domain without strict DMARC: the group did not
    # rewrite From, so From is the author; Reply-To (anyone's to type) names a stranger.
    with_env(monkeypatch, TRUSTED_LISTS=trusted_lists)
    post = inbound(
        nylas,
        from_email="alice@small-shop.example",
        reply_to=[{"email": STRANGER}],
        addressed_to=[LIST_ADDRESS],
        headers=[{"name": "List-Id", "value": f"<{LIST_ID}>"}, {"name": "Precedence", "value": "list"}],
        authentication_results=authentication_results(dmarc="none", spf="pass"),
    )
    pipeline.deliver(as_nylas_sends_it(post))
    pipeline.drain()
    assert not reached(nylas, STRANGER)
    if "=" in trusted_lists or nylas.sends:
        assert recipients(nylas) == [["alice@small-shop.example"]]
    else:
        # Named by its id alone, the list cannot tell this post from a rewritten one that names someone
        # else: handed off (docs/design.md, the rule of evidence).
        assert handed_off(log_records, "relay_unverified")
        assert folders_of(nylas, post["id"]) == [HANDOFF_FOLDER]


# An Authentication-Results the sender typed (or an earlier hop wrote): below the receiving provider's own.
TYPED_PASS = {
    "name": "Authentication-Results",
    "value": "mx.acme.example; dmarc=pass header.from=acme.example",
}


def rewritten_post(nylas, verdict: str | None, typed: tuple[dict, ...] = ()) -> dict:
    """A post the trusted group relayed with From rewritten to itself, its author in X-Original-From and
    Reply-To; ``verdict`` the receiving provider's topmost Authentication-Results (``None``: it stamped
    none); ``typed``: headers the sender wrote above the list's."""
    return inbound(
        nylas,
        from_email=LIST_ADDRESS,
        from_name="Alice Doe via Customers",
        reply_to=[{"name": "Alice Doe", "email": "alice@example.com"}],
        addressed_to=[LIST_ADDRESS],
        headers=[
            *typed,
            {"name": "List-Id", "value": f"<{LIST_ID}>"},
            {"name": "Precedence", "value": "list"},
            {"name": "X-Original-From", "value": "Alice Doe <alice@example.com>"},
        ],
        authentication_results=verdict,
    )


def test_a_trusted_groups_rewritten_post_that_the_provider_vouches_for_goes_to_its_author(
    pipeline, nylas, monkeypatch, log_records
):
    with_env(monkeypatch, TRUSTED_LISTS=f"{LIST_ID}={LIST_ADDRESS}")
    post = rewritten_post(nylas, authentication_results(dmarc="pass", from_domain="acme.example"))
    pipeline.deliver(as_nylas_sends_it(post))
    pipeline.drain()
    assert recipients(nylas) == [["alice@example.com"]]
    assert "relay_unverified" not in skip_reasons(log_records)


@pytest.mark.parametrize(
    ("verdict", "typed"),
    [
        # The provider's fail on top; a pass the sender typed below it is never the one read.
        (authentication_results(dmarc="fail", from_domain="acme.example"), (TYPED_PASS,)),
        (None, ()),  # the provider stamped nothing, and nothing else claims a pass
        # The provider stamped nothing and the sender typed a pass: only the provider's authserv-id
        # (RECEIVING_AUTHSERV_IDS) vouches, so it is no one's word.
        (None, (TYPED_PASS,)),
    ],
    ids=["dmarc_fail", "no_authentication_results", "only_a_typed_pass"],
)
def test_a_trusted_groups_rewritten_post_nobody_vouches_for_is_handed_off(
    pipeline, nylas, monkeypatch, log_records, capsys, verdict, typed
):
    with_env(monkeypatch, TRUSTED_LISTS=f"{LIST_ID}={LIST_ADDRESS}")
    post = rewritten_post(nylas, verdict, typed)
    pipeline.deliver(as_nylas_sends_it(post))
    pipeline.drain()
    assert recipients(nylas) == []
    assert handed_off(log_records, "relay_unverified")
    assert folders_of(nylas, post["id"]) == [HANDOFF_FOLDER]
    assert "HandedOff" in [name for name, _ in metrics_emitted(capsys.readouterr().out)]
    assert pipeline.dead_letters() == []


# ---- a stranger silences the agent ----

YEAR_2100 = 4_102_444_800


@pytest.mark.parametrize("folder", ["junk", "inbox"])
def test_a_forged_own_address_answer_silences_nobody(pipeline, nylas, log_records, folder):
    # A forged "From: support@…" threaded onto the customer's question by In-Reply-To, dated 2100, lands
    # before the replier reads the thread; its own notification is delivered too.
    question = inbound(nylas, subject="Order 1042")
    forged = nylas.deliver_forged_own(
        AGENT_GRANT_ID, reply_to_message_id=question["id"], folder=folder, date=YEAR_2100
    )
    assert forged["from"][0]["email"] == AGENT_EMAIL
    pipeline.deliver(as_nylas_sends_it(question))
    pipeline.deliver(as_nylas_sends_it(forged))
    pipeline.drain()
    # Eight days later (past PERSON_HOLD_SECONDS, a week, from a read; never from 2100) the customer
    # writes again.
    nylas.advance_clock(8 * DAY)
    follow_up = inbound(nylas, reply_to_message_id=question["id"], subject="Re: Order 1042")
    pipeline.deliver(as_nylas_sends_it(follow_up))
    pipeline.drain()
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [question["id"], follow_up["id"]]
    assert recipients(nylas) == [[CUSTOMER_EMAIL], [CUSTOMER_EMAIL]]
    skips = skip_reasons(log_records)
    assert "answered_by_person" not in skips
    assert "person_hold" not in skips


SECOND_AGENT = ("grant-agent-0003", "sales@replyonce.example")


def test_an_attackers_copy_under_the_customers_message_id_does_not_pre_empt_the_customer(
    pipeline, nylas, monkeypatch, log_records
):
    # The customer's Message-ID is known (a Cc, a list archive); the attacker sends their own email to
    # the second agent grant under it, with the same subject, and it is processed first.
    nylas.add_grant(*SECOND_AGENT, name="Sales")
    with_env(monkeypatch, AGENT_GRANT_IDS=f"{AGENT_GRANT_ID},{SECOND_AGENT[0]}")
    message_id = {"name": "Message-ID", "value": "<order-1042.7f3a@example.com>"}
    attackers = nylas.deliver_inbound(
        SECOND_AGENT[0],
        from_email="mallory@gmail.com",
        subject="Where is my order?",
        body="<p>Anything.</p>",
        headers=[message_id],
    )
    customers = inbound(nylas, headers=[message_id])
    pipeline.deliver(as_nylas_sends_it(attackers))
    pipeline.drain()
    pipeline.deliver(as_nylas_sends_it(customers))
    pipeline.drain()
    answered = {(s.grant_id, s.payload["reply_to_message_id"]) for s in nylas.sends}
    assert (AGENT_GRANT_ID, customers["id"]) in answered
    assert reached(nylas, CUSTOMER_EMAIL)
    assert "answered_by_other_agent" not in skip_reasons(log_records)


# What every message the agent was shown said: an agent (a language model) may repeat any of it.
SHOWN: list = []


def echo_agent(conversation):
    """An agent that writes back every message it was shown (what a model given the thread could say)."""
    SHOWN.append(conversation)
    said = " / ".join(m.text for m in conversation.messages)
    return Reply(text=f"About what you wrote: {said}")


def test_a_stranger_joining_the_customers_thread_gets_only_an_answer_to_their_own_message(
    pipeline, nylas, monkeypatch
):
    SHOWN.clear()
    with_env(monkeypatch, REPLY_AGENT=f"{__name__}:echo_agent")
    question = inbound(
        nylas, subject="Order 1042", body="<p>Order 1042 to 12 Elm Street has not arrived.</p>"
    )
    # Before the replier reads the thread, a stranger writes in reply to the customer's message.
    stranger = inbound(
        nylas,
        from_email=STRANGER,
        reply_to_message_id=question["id"],
        subject="Re: Order 1042",
        body="<p>Any news on this?</p>",
    )
    pipeline.deliver(as_nylas_sends_it(question))
    pipeline.deliver(as_nylas_sends_it(stranger))
    pipeline.drain()
    to_stranger = [s for s in nylas.sends if STRANGER in [p["email"] for p in s.payload["to"]]]
    to_customer = [s for s in nylas.sends if CUSTOMER_EMAIL in [p["email"] for p in s.payload["to"]]]
    # The stranger: at most one email, answering their own message, never carrying the customer's words.
    assert [s.payload["reply_to_message_id"] for s in to_stranger] in ([], [stranger["id"]])
    assert not any("Elm Street" in s.payload["body"] for s in to_stranger)
    assert all(CUSTOMER_EMAIL not in [p["email"] for p in s.payload.get("cc") or []] for s in to_stranger)
    # The customer: their own reply, to their own message.
    assert [s.payload["reply_to_message_id"] for s in to_customer] == [question["id"]]
    assert len(nylas.sends) == len(to_stranger) + len(to_customer)


# ---- a person's answer is one addressed to them ----


@pytest.fixture
def team_mailbox(pipeline, nylas, monkeypatch):
    return answer_for_a_team_mailbox(nylas, monkeypatch)


def test_a_colleagues_forward_to_the_warehouse_is_not_an_answer_to_the_customer(
    pipeline, nylas, log_records, team_mailbox
):
    question = nylas.deliver_inbound(
        team_mailbox, from_email=CUSTOMER_EMAIL, subject="Order 1042", body="<p>Not arrived.</p>"
    )
    # A colleague forwards the question to the warehouse from the shared mailbox: in Sent, in the thread,
    # addressed to the warehouse, nobody else.
    forward = nylas.person_replies(
        team_mailbox, question["id"], "<p>Warehouse: can you check 1042?</p>", to=["warehouse@acme.example"]
    )
    assert "sent" in folders_of(nylas, forward["id"], team_mailbox)
    pipeline.deliver(as_nylas_sends_it(question))
    pipeline.drain()
    answered = [s.payload["reply_to_message_id"] for s in nylas.sends]
    assert answered == [question["id"]] or folders_of(nylas, question["id"], team_mailbox) == [HANDOFF_FOLDER]
    # Two days later the customer follows up: no colleague ever wrote to them, so no hold.
    nylas.advance_clock(2 * DAY)
    follow_up = nylas.deliver_inbound(
        team_mailbox,
        from_email=CUSTOMER_EMAIL,
        subject="Re: Order 1042",
        body="<p>Any news?</p>",
        reply_to_message_id=question["id"],
    )
    pipeline.deliver(as_nylas_sends_it(follow_up))
    pipeline.drain()
    skips = skip_reasons(log_records)
    assert "answered_by_person" not in skips
    assert "person_hold" not in skips
    assert follow_up["id"] in [s.payload["reply_to_message_id"] for s in nylas.sends]


# ---- a person's draft without a date ----


def test_a_persons_draft_without_a_date_still_holds_the_agent_back(
    pipeline, nylas, log_records, team_mailbox
):
    # The API's draft object has no `date` (the SDKs model one): the wait runs from the record's first
    # receive, never from 0 (no wait at all: a person and the agent would both answer).
    nylas.modes.draft_date = False
    question = nylas.deliver_inbound(
        team_mailbox, from_email="erin@example.com", subject="Invoice", body="<p>Where is it?</p>"
    )
    nylas.person_drafts(team_mailbox, question["id"], "<p>Let me check…</p>")
    pipeline.deliver(as_nylas_sends_it(question))
    pipeline.poller().poll_once()
    assert nylas.sends == []
    assert "person_drafting" in deferrals(log_records)


# ---- our reply is ours wherever it sits ----

ALIAS = "help@replyonce.example"


def forget_our_tables(replier) -> None:
    """A point-in-time restore from before the reply: both tables forget it."""
    dynamodb = boto3.client("dynamodb")
    for table in (replier.tables["StateTable"], replier.tables["IdempotencyTable"]):
        for item in dynamodb.scan(TableName=table)["Items"]:
            key = {"pk": item["pk"]} if "pk" in item else {"id": item["id"]}
            dynamodb.delete_item(TableName=table, Key=key)


@pytest.mark.parametrize("how", ["lost_send_answer", "state_lost"])
def test_a_reply_whose_sent_copy_shows_an_alias_is_sent_once(pipeline, nylas, replier, how):
    # Google and Microsoft grants have aliases (expose_aliases=true); the Sent copy of our reply shows
    # one in its `from`. Its metadata still names our intent.
    nylas.set_aliases(AGENT_GRANT_ID, [ALIAS])
    nylas.modes.sent_from_by_grant = {AGENT_GRANT_ID: ALIAS}
    message = inbound(nylas)
    if how == "lost_send_answer":
        nylas.inject("POST", SEND_PATH, Fault.lose_response())
        pipeline.deliver(as_nylas_sends_it(message))
        assert pipeline.poller().poll_once().failed == 1
    else:
        pipeline.deliver(as_nylas_sends_it(message))
        pipeline.drain()
        forget_our_tables(replier)
        pipeline.deliver(as_nylas_sends_it(message))  # a redelivery
    [sent] = nylas.sent_messages()
    assert sent["from"][0]["email"] == ALIAS
    nylas.advance_clock(3700)  # past the idempotency key's hour: the key no longer fences
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send") == 1
