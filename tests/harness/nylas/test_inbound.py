"""Contract: mail arriving, and the ``message.created`` notification it (and every send) fires.

Sources: https://developer.nylas.com/docs/reference/notifications/messages/message-created/ (the
object; ``headers`` only with field customization, https://developer.nylas.com/docs/v3/notifications/),
https://dev.to/qasim157/build-the-reply-loop-receive-think-respond-2me7 (Nylas staff: an Agent
Account's own sends fire ``message.created`` too), https://developer.nylas.com/docs/v3/agent-accounts/mailboxes/
(junk and trash folders), https://developer.nylas.com/docs/v3/agent-accounts/email-threading/
(threads from ``Message-ID`` / ``In-Reply-To`` / ``References``).
"""

import pytest

from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    OTHER_EMAIL,
    OTHER_GRANT,
    get,
    header_names,
    inbound,
    list_messages,
    reply_to,
    send,
)


@pytest.fixture
def created(nylas) -> list[dict]:
    seen: list[dict] = []
    nylas.on_message_created = seen.append
    return seen


def test_message_created_fires_for_inbound_and_outbound_mail_once(nylas, created):
    message = inbound(nylas)
    assert created == [{k: v for k, v in message.items() if k != "headers"}]

    response = send(nylas, reply_to(message), key="k")
    assert len(created) == 2  # already fired when the client has the answer
    assert created[1]["id"] == response.json()["data"]["id"]
    assert created[1]["folders"] == ["sent"]
    assert created[1]["from"][0]["email"] == AGENT_EMAIL

    send(nylas, reply_to(message), key="k")  # replay: nothing new in the mailbox
    send(nylas, {"subject": "no to"})  # rejected
    assert len(created) == 2


def test_message_created_has_no_headers_unless_the_webhook_includes_them(nylas, created):
    message = inbound(nylas, headers={"Auto-Submitted": "auto-generated"})
    send(nylas, reply_to(message))
    assert all("headers" not in m for m in created)
    assert header_names(message) == ["Message-ID", "Auto-Submitted"]  # the test-facing return keeps them

    nylas.webhook_includes_headers = True
    with_headers = inbound(nylas, headers={"Auto-Submitted": "auto-generated"})
    assert created[2]["headers"] == with_headers["headers"]
    nylas.reset()
    assert nylas.webhook_includes_headers is False


def test_notification_folders_are_names_or_ids(nylas, created):
    """``modes.notification_folders``: the notification schema shows names (``"SENT"``), the message
    object says ids; Nylas documents both, so both are on offer."""
    inbound(nylas, folder="junk")
    nylas.modes.notification_folders = "ids"
    inbound(nylas, folder="junk")

    assert [m["folders"] for m in created] == [["junk"], [nylas.folder_id(GRANT, "junk")]]


def test_deliver_inbound_sets_sender_name_and_reply_to(nylas):
    message = inbound(nylas, from_name="Cus Tomer", reply_to=[{"name": "Desk", "email": "desk@example.com"}])
    data = get(nylas, f"/v3/grants/{GRANT}/messages/{message['id']}").json()["data"]

    assert data["from"] == [{"name": "Cus Tomer", "email": CUSTOMER}]
    assert data["reply_to"] == [{"name": "Desk", "email": "desk@example.com"}]
    assert message["from"] == data["from"]


def test_mail_filed_in_junk_may_or_may_not_notify(nylas, created):
    """Whether ``message.created`` fires for junk is not documented: ``notify=False`` is the other way."""
    noticed = inbound(nylas, folder="junk")
    silent = inbound(nylas, folder="junk", notify=False)

    assert [m["id"] for m in created] == [noticed["id"]]
    assert {m["id"] for m in list_messages(nylas).json()["data"]} == {noticed["id"], silent["id"]}


def test_one_email_to_two_agent_grants_lands_in_each_mailbox(nylas, created):
    """An email addressed to two Agent Accounts: one message per mailbox -- own id, own thread, own
    ``message.created`` -- with the same ``Message-ID`` and both addresses in ``to``."""
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL, name="Sales Agent")

    first = inbound(nylas, also_to=[OTHER_GRANT], headers={"Message-ID": "<one@customer.example>"})

    [(_, copy)] = nylas.mailbox(OTHER_GRANT)
    assert copy["id"] != first["id"]
    assert copy["thread_id"] != first["thread_id"]
    assert [m["id"] for m in created] == [first["id"], copy["id"]]
    for message in (first, copy):
        assert [p["email"] for p in message["to"]] == [AGENT_EMAIL, OTHER_EMAIL]
        assert header_names(message)[0] == "Message-ID"
        assert message["headers"][0]["value"] == "<one@customer.example>"
    assert get(nylas, f"/v3/grants/{OTHER_GRANT}/messages/{copy['id']}").status_code == 200
    # The customer's follow-up to both threads in each mailbox by In-Reply-To.
    follow_up = inbound(nylas, reply_to_message_id=first["id"], also_to=[OTHER_EMAIL])
    [_, (_, copy_follow_up)] = nylas.mailbox(OTHER_GRANT)
    assert follow_up["thread_id"] == first["thread_id"]
    assert copy_follow_up["thread_id"] == copy["thread_id"]
    assert copy_follow_up["in_reply_to"] == copy["id"]
    with pytest.raises(KeyError, match="grant-nobody"):
        inbound(nylas, also_to=["grant-nobody"])


def test_a_callback_failure_during_a_send_is_logged_and_the_send_stands(nylas, caplog):
    def broken(message: dict) -> None:
        raise RuntimeError("webhook down")

    message = inbound(nylas)
    nylas.on_message_created = broken

    assert send(nylas, reply_to(message)).status_code == 200
    assert len(nylas.sends) == 1
    assert "on_message_created callback failed" in caplog.text
    with pytest.raises(RuntimeError, match="webhook down"):
        inbound(nylas)  # the caller is the test: it sees the failure
