"""The replier's decisions on the in-memory ports: one email per message, and each skip with its reason.

Moved from the handler's tests (``tests/integration/test_replier.py``, ``test_shared_mailbox.py``):
each of these checks what the rules decide — who is answered, which message a reply answers, why
one is not — and paid for moto and HTTP to say it. Here the real ``Replier`` runs over the fakes
(``tests/unit/on_fakes.py``), and each test asserts what it asserted there: the emails that went out,
the message each answers, the skip reason logged and counted, what the ledger holds. The handler's
own tests keep one end-to-end test per invariant (``tests/integration``: own mail and a colleague's
answer never answered over, a notification delivered three times, a burst over two containers).
"""

import pytest

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, CUSTOMER_EMAIL
from replyonce.agent import Conversation, Reply
from replyonce.rules.coverage import reply_metadata
from tests.unit.on_fakes import Desk


def answered(desk: Desk) -> list[str]:
    """The message each email that went out answers, in order."""
    return [email.request["reply_to_message_id"] for email in desk.sent]


# ---- one email per message (from tests/integration/test_replier.py) ------------------------------------


def test_created_then_updated_for_one_message_sends_one_reply():
    desk = Desk()
    message = desk.inbound()
    desk.notify(message, "message.updated")
    desk.notify(message)
    desk.notify(message, "message.updated")
    assert answered(desk) == [message["id"]]
    assert desk.skips() == ["unsupported_type", "unsupported_type"]


def test_two_notifications_for_the_same_message_send_one_reply():
    # A provider upsert: a second message.created with a new notification id, same message.
    desk = Desk()
    message = desk.inbound()
    assert desk.notify(message) == "replied"
    desk.notify(message)
    assert answered(desk) == [message["id"]]
    assert desk.skips() == ["already_replied"]
    assert desk.ledger_status(message) == "replied"


def test_the_reply_goes_to_the_sender_under_the_subject():
    desk = Desk()
    message = desk.inbound(subject="Order 1042")
    desk.notify(message)
    [email] = desk.sent
    assert [r["email"] for r in email.request["to"]] == [message["from"][0]["email"]]
    assert email.request["subject"] == "Re: Order 1042"


def test_non_agent_grant_gets_no_reply():
    desk = Desk()
    desk.mailbox.add_grant("grant-human-0002", "alice@example.com")
    message = desk.inbound(grant_id="grant-human-0002", subject="Hi", body="Hello")
    desk.notify(message)
    assert desk.sent == []
    assert desk.skips() == ["grant_not_agent"]


@pytest.mark.parametrize(
    ("sender", "headers", "reason"),
    [
        ("no-reply@shop.example", None, "automated_sender"),
        ("MAILER-DAEMON@mx.example", None, "automated_sender"),
        ("alice@example.com", [{"name": "Auto-Submitted", "value": "auto-replied"}], "auto_submitted"),
        (
            "news@example.com",
            [
                {"name": "Precedence", "value": "bulk"},
                {"name": "List-Unsubscribe", "value": "<mailto:u@ex.com>"},
            ],
            "bulk_mail",
        ),
        (
            "anna@shop.example",
            [
                {"name": "List-Unsubscribe", "value": "<mailto:u@shop.ex>"},
                {"name": "List-Unsubscribe-Post", "value": "List-Unsubscribe=One-Click"},
            ],
            "bulk_mail",
        ),
        # Alone, List-Unsubscribe is not answered either, but a person sees it (a hand-off).
        (
            "anna@shop.example",
            [{"name": "List-Unsubscribe", "value": "<mailto:u@shop.ex>"}],
            "bulk_unconfirmed",
        ),
    ],
)
def test_machines_get_no_reply(sender, headers, reason):
    desk = Desk()
    message = desk.inbound(sender=sender, headers=headers)
    desk.notify(message)
    assert desk.sent == []
    assert desk.skips() == [reason]


def test_truncated_notification_for_a_deleted_message_is_skipped_not_retried():
    desk = Desk()
    message = desk.inbound()
    gone = {**message, "id": "msg-deleted-meanwhile"}
    assert desk.notify(gone, "message.created.truncated") == "skipped:message_gone"
    assert desk.sent == []
    assert desk.outcomes == ["skipped:message_gone"]  # no deferral: the record is not retried


def test_two_messages_on_one_thread_before_the_reply_get_one_reply_to_the_newer():
    desk = Desk()
    first = desk.inbound(subject="Order 1042", body="<p>Where is it?</p>")
    second = desk.inbound(
        subject="Re: Order 1042", body="<p>Also: invoice?</p>", thread_id=first["thread_id"]
    )
    desk.notify(first)
    desk.notify(second)
    assert answered(desk) == [second["id"]]
    assert desk.ledger_status(first) == desk.ledger_status(second) == "replied"


def test_message_after_the_reply_gets_its_own_reply():
    desk = Desk()
    first = desk.inbound()
    desk.notify(first)
    desk.clock.advance(5)
    later = desk.inbound(body="<p>Thanks, one more thing</p>", thread_id=first["thread_id"])
    desk.notify(later)
    assert answered(desk) == [first["id"], later["id"]]


def ping_pong(desk: Desk, sender: str, rounds: int) -> None:
    """Another robot answers every reply of the agent at once, ``rounds`` times."""
    last = desk.inbound(sender=sender)
    for _ in range(rounds):
        desk.notify(last)
        last = desk.inbound(sender=sender, thread_id=last["thread_id"])


def test_reply_budget_stops_ping_pong_with_another_bot():
    desk = Desk()
    # The exchange limit off: the loop guard alone (with it on, the exchange limit is met first).
    desk.configure({"max_automatic_exchanges": 0}, REPLY_BUDGET_PER_HOUR="2")
    ping_pong(desk, "bot@other.example", rounds=4)
    assert len(desk.sent) == 2
    assert desk.skips().count("reply_budget_exhausted") == 2


def test_loop_guard_counts_replies_the_ledger_never_recorded():
    # Found by the chaos harness: a worker killed after the send but before the ledger leaves a
    # reply that only Nylas knows about; the loop guard must still count it.
    desk = Desk()
    desk.configure(REPLY_BUDGET_PER_HOUR="1")
    first = desk.inbound(sender="bot@other.example")
    # The agent's earlier reply, sent by a worker that died before recording it: in the mailbox's Sent
    # folder with the metadata every reply of ours carries (only the API sets it).
    earlier = desk.inbound(
        sender=AGENT_EMAIL, subject="Re: hi", body="<p>ok</p>", thread_id=first["thread_id"], folders=["sent"]
    )
    stored = next(m for m in desk.mailbox.messages if m["id"] == earlier["id"])
    stored["metadata"] = reply_metadata("intent-lost", first["id"], first["thread_id"], (first["id"],))
    later = desk.inbound(sender="bot@other.example", thread_id=first["thread_id"])
    desk.notify(later)
    assert desk.sent == []
    assert desk.skips() == ["reply_budget_exhausted"]


def test_a_forged_own_address_message_spends_no_reply_budget():
    # Anyone can write the mailbox's address in From: a message that shows it from the inbox is no reply
    # of ours, so it neither fills the thread's hourly budget nor silences the customer.
    desk = Desk()
    desk.configure(REPLY_BUDGET_PER_HOUR="1")
    first = desk.inbound()
    desk.inbound(sender=AGENT_EMAIL, subject="Re: hi", body="<p>ok</p>", thread_id=first["thread_id"])
    desk.notify(first)
    assert answered(desk) == [first["id"]]


# ---- people share the mailbox (from tests/integration/test_shared_mailbox.py) --------------------------


def test_after_a_colleague_the_agent_answers_only_what_came_after():
    desk = Desk()
    desk.configure(PERSON_HOLD_SECONDS="0")
    first = desk.inbound(subject="Order 1042")
    desk.person_replies(first)
    second = desk.inbound(subject="Re: Order 1042", thread_id=first["thread_id"])
    desk.notify(first)
    desk.notify(second)
    [reply] = desk.sent
    assert reply.request["reply_to_message_id"] == second["id"]
    # The reply's metadata names what it covers: the colleague's question is not among them.
    assert reply.request["metadata"]["key2"] == second["id"]
    assert "answered_by_person" in desk.skips()


def test_the_thread_is_the_persons_for_the_hold():
    # The default hold (a week): the customer's follow-up after the colleague's answer is theirs.
    desk = Desk()
    first = desk.inbound(subject="Order 1042")
    desk.person_replies(first)
    second = desk.inbound(subject="Re: Order 1042", thread_id=first["thread_id"])
    desk.notify(second)
    assert desk.sent == []
    assert desk.skips() == ["person_hold"]


def test_the_agents_own_replies_are_no_person():
    # Its own reply (with its metadata) never starts a hold: the customer's follow-up is answered.
    desk = Desk()
    first = desk.inbound(subject="Order 1042")
    desk.notify(first)
    second = desk.inbound(subject="Re: Order 1042", thread_id=first["thread_id"])
    desk.notify(second)
    assert answered(desk) == [first["id"], second["id"]]
    assert "person_hold" not in desk.skips()


def test_a_colleague_answering_while_the_agent_drafts_is_not_answered_over():
    # The thread is read before the agent is asked; the colleague's answer lands inside the lease.
    first_message: list[dict] = []

    def drafting_while_a_colleague_answers(conversation: Conversation) -> Reply:
        desk.person_replies(first_message[0], "<p>Shipped. — Sam</p>")
        return Reply(text="Thanks, we are on it.")

    desk = Desk(agent=drafting_while_a_colleague_answers)
    desk.configure(PERSON_HOLD_SECONDS="0")
    first_message.append(desk.inbound(subject="Order 1042"))
    desk.notify(first_message[0])
    assert desk.sent == []
    assert desk.skips() == ["answered_by_person"]
    # Nothing of ours was stored for it: a redelivery finds the colleague's answer in the thread read.
    desk.notify(first_message[0])
    assert desk.sent == []
    assert desk.skips() == ["answered_by_person", "answered_by_person"]


SECOND_AGENT = ("grant-agent-0003", "sales@replyonce.example")


@pytest.mark.parametrize(
    "addressed_to",
    [
        ["team@replyonce.example"],  # a group or distribution list reaching both agent mailboxes
        ["help@replyonce.example", "deals@replyonce.example"],  # an alias of each agent
    ],
)
def test_one_email_through_a_group_or_aliases_gets_one_reply(addressed_to):
    # Neither copy names a grant's own address in To/Cc: the first grant to claim the Message-ID answers.
    desk = Desk()
    desk.mailbox.add_grant(*SECOND_AGENT, name="Sales")
    desk.configure(AGENT_GRANT_IDS=f"{AGENT_GRANT_ID},{SECOND_AGENT[0]}")
    header = [{"name": "Message-ID", "value": "<order-1042@example.com>"}]
    first = desk.inbound(headers=header, to=addressed_to)
    second = desk.inbound(grant_id=SECOND_AGENT[0], headers=header, to=addressed_to)
    desk.notify(first)
    desk.notify(second)
    assert len(desk.sent) == 1
    assert desk.skips().count("answered_by_other_agent") == 1


GROUP_RELAY = [
    {"name": "List-Id", "value": "<support.acme.example>"},
    {"name": "Precedence", "value": "list"},
    {"name": "X-Original-From", "value": "Alice Doe <alice@example.com>"},
]
AUTHENTICATED = {
    "name": "Authentication-Results",
    "value": "mx.google.com; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example",
}
NOT_AUTHENTICATED = {
    "name": "Authentication-Results",
    "value": "mx.google.com; spf=fail; dmarc=fail header.from=acme.example",
}


@pytest.mark.parametrize(
    ("trusted_lists", "authentication", "answered_to", "skips"),
    [
        # The company's group, named by its List-Id and its address, authenticated: its customer answered.
        ("support.acme.example=support-group@acme.example", [AUTHENTICATED], "alice@example.com", []),
        ("<Support.Acme.Example>=Support-Group@Acme.example", [AUTHENTICATED], "alice@example.com", []),
        # Nothing vouches for the group's From (a failed or missing verdict): a person takes it.
        ("support.acme.example=support-group@acme.example", [NOT_AUTHENTICATED], None, ["relay_unverified"]),
        ("support.acme.example=support-group@acme.example", [], None, ["relay_unverified"]),
        # Named by its List-Id alone, a rewritten post cannot be told from a forged one: handed off.
        ("support.acme.example", [AUTHENTICATED], None, ["relay_unverified"]),
        ("", [AUTHENTICATED], None, ["bulk_mail"]),  # no list named: every list is bulk mail
        ("newsletter.acme.example=news@acme.example", [AUTHENTICATED], None, ["bulk_mail"]),  # another list
    ],
)
def test_a_support_address_run_as_a_group_relays_customers(trusted_lists, authentication, answered_to, skips):
    # A Google Group rewrites From to itself and keeps the customer in Reply-To and X-Original-From.
    desk = Desk()
    desk.configure(TRUSTED_LISTS=trusted_lists)
    relayed = desk.inbound(
        sender="support-group@acme.example",
        reply_to=[{"name": "Alice Doe", "email": "alice@example.com"}],
        headers=authentication + GROUP_RELAY,
    )
    # The notification carries no headers (as Nylas' does not): the thread read inside the lease does.
    desk.notify({k: v for k, v in relayed.items() if k != "headers"})
    assert [email.request["to"][0]["email"] for email in desk.sent] == ([answered_to] if answered_to else [])
    assert desk.skips() == skips


def test_a_colleague_in_cc_who_answers_all_leaves_the_customer_answered_too():
    # The customer writes with a colleague in Cc; the colleague answers all ("adding support here")
    # before the thread is read (a backlog): one reply covers both, and both receive it.
    desk = Desk()
    first = desk.inbound(
        subject="Contract renewal", sender="carol@customer.example", to=[AGENT_EMAIL, "dave@customer.example"]
    )
    second = desk.inbound(
        subject="Re: Contract renewal",
        sender="dave@customer.example",
        thread_id=first["thread_id"],
        to=[AGENT_EMAIL, "carol@customer.example"],
        body="<p>Adding support here. We need the renewal quote by Friday.</p>",
    )
    desk.notify(first)
    desk.notify(second)
    [reply] = desk.sent
    assert reply.request["reply_to_message_id"] == second["id"]
    assert {r["email"] for r in reply.request["to"]} == {"dave@customer.example", "carol@customer.example"}
    assert desk.skips().count("already_replied") == 1  # the other notification, covered


# ---- mail as Nylas delivers it (from test_real_mail.py and test_nylas_as_documented.py) -----------------


def as_nylas_sends_it(message: dict) -> dict:
    """The message as Nylas' notification carries it by default: no ``headers`` (the thread read has them)."""
    return {k: v for k, v in message.items() if k != "headers"}


SECOND_AGENT_GRANT_ID, SECOND_AGENT_EMAIL = "grant-agent-0003", "sales@replyonce.example"


def test_two_agent_grants_never_answer_each_other():
    desk = Desk()
    desk.mailbox.add_grant(SECOND_AGENT_GRANT_ID, SECOND_AGENT_EMAIL, "Acme Sales")
    desk.configure(AGENT_GRANT_IDS=f"{AGENT_GRANT_ID},{SECOND_AGENT_GRANT_ID}")
    # The sales agent's reply lands in the support agent's inbox (it was cc'd, or a customer
    # forwarded it): mail from an agent address is the agent's own, whichever grant sent it.
    message = desk.inbound(sender=SECOND_AGENT_EMAIL, subject="Re: your quote")
    desk.notify(as_nylas_sends_it(message))
    assert desk.sent == []
    assert desk.skips() == ["own_outbound"]


def test_reply_to_pointing_at_a_stranger_is_not_mailed():
    desk = Desk()
    message = desk.inbound(reply_to=[{"name": "", "email": "victim@elsewhere.example"}])
    desk.notify(as_nylas_sends_it(message))
    [sent] = desk.sent
    assert [r["email"] for r in sent.request["to"]] == [CUSTOMER_EMAIL]


def test_trusted_contact_form_is_answered_at_its_reply_to():
    desk = Desk()
    desk.configure(REPLY_TO_TRUSTED_SENDERS="no-reply@forms.replyonce.example")
    form_authenticated = {
        "name": "Authentication-Results",
        "value": "mx.google.com; dkim=pass header.d=forms.replyonce.example; dmarc=pass",
    }
    message = desk.inbound(
        sender="no-reply@forms.replyonce.example",
        reply_to=[{"name": "Dana", "email": "dana@customer.example"}],
        headers=[form_authenticated],
    )
    desk.notify(as_nylas_sends_it(message))
    [sent] = desk.sent
    assert sent.request["to"] == [{"name": "Dana", "email": "dana@customer.example"}]


def test_a_forged_contact_form_aims_the_agent_at_nobody():
    # Anyone can write the form's address in From and a stranger in Reply-To; without the receiving
    # provider's pass for the form's domain, the Reply-To is never mailed: a person takes the message.
    desk = Desk()
    desk.configure(REPLY_TO_TRUSTED_SENDERS="no-reply@forms.replyonce.example")
    forged = desk.inbound(
        sender="no-reply@forms.replyonce.example",
        reply_to=[{"name": "Victim", "email": "victim@elsewhere.example"}],
        headers=[{"name": "Authentication-Results", "value": "mx.google.com; dmarc=fail"}],
    )
    desk.notify(as_nylas_sends_it(forged))
    assert desk.sent == []
    assert desk.skips() == ["relay_unverified"]
    assert desk.ledger_status(forged) == "handed_off"


@pytest.mark.parametrize(
    "sender",
    [
        "no-reply-aws@amazon.example",
        "noreply+x@shop.example",
        "no.reply@bank.example",
        "do-not-reply.orders@shop.example",
    ],
)
def test_machine_senders_are_recognised_by_pattern(sender):
    desk = Desk()
    desk.notify(as_nylas_sends_it(desk.inbound(sender=sender)))
    assert desk.sent == []
    assert desk.skips() == ["automated_sender"]


def test_auto_submitted_no_with_a_comment_is_a_person():
    desk = Desk()
    message = desk.inbound(headers=[{"name": "Auto-Submitted", "value": "no (sent by a person)"}])
    desk.notify(as_nylas_sends_it(message))
    assert answered(desk) == [message["id"]]


def test_the_reply_names_the_customer_and_is_addressed_to_them_only():
    desk = Desk()
    message = desk.inbound(sender=CUSTOMER_EMAIL)
    desk.notify(as_nylas_sends_it(message))
    [sent] = desk.sent
    assert [r["email"] for r in sent.request["to"]] == [CUSTOMER_EMAIL]
    assert AGENT_EMAIL not in str(sent.request["to"])
