"""Contract: what issue 40's rule of evidence reads in a mailbox, as the emulator serves it.

The hand-off folder (``POST .../folders``, then a move), the Sent folder's ``\\Sent`` attribute, a
grant's aliases (``expose_aliases``) and the alias its sent copies may show, the receiving provider's
``Authentication-Results``, mail forged from the grant's own address, a person's drafts (with or
without a ``date``) and their send (with or without our metadata), and an inbound ``date`` that is
the sender's or the receipt's.

Sources: https://developer.nylas.com/docs/reference/api/folders/post-folder/,
https://developer.nylas.com/docs/reference/api/folders/ (``attributes``),
https://developer.nylas.com/docs/reference/api/manage-grants/get_grant_by_id/ (``expose_aliases``),
https://developer.nylas.com/docs/reference/api/drafts/, RFC 8601 (``Authentication-Results``).
"""

import pytest

from devstack.nylas.mailbox import authentication_results
from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    call,
    control,
    error_of,
    get,
    inbound,
    list_messages,
    reply_to,
    send,
)

HANDOFF = "Needs a person"
ALIAS = "help@example.com"


def folders(nylas) -> list[dict]:
    return get(nylas, f"/v3/grants/{GRANT}/folders").json()["data"]


def test_a_created_folder_is_listed_and_takes_messages(nylas):
    created = call(nylas, "POST", f"/v3/grants/{GRANT}/folders", json={"name": HANDOFF})
    assert created.status_code == 200
    body = created.json()
    assert body["request_id"]
    folder = body["data"]
    assert folder["name"] == HANDOFF
    assert folder["object"] == "folder"
    assert folder["system_folder"] is False
    assert folder["id"] != HANDOFF  # an opaque id, as every folder's
    assert [f for f in folders(nylas) if f["name"] == HANDOFF] == [folder]
    assert get(nylas, f"/v3/grants/{GRANT}/folders/{folder['id']}").json()["data"] == folder

    message = inbound(nylas)
    moved = call(
        nylas, "PUT", f"/v3/grants/{GRANT}/messages/{message['id']}", json={"folders": [folder["id"]]}
    )
    assert moved.status_code == 200
    assert moved.json()["data"]["folders"] == [folder["id"]]
    [(_, stored)] = nylas.mailbox(GRANT)
    assert stored["folders"] == [HANDOFF]  # names in the test-facing view
    listed = list_messages(nylas, **{"in": folder["id"]}).json()["data"]
    assert [m["id"] for m in listed] == [message["id"]]
    [counted] = [f for f in folders(nylas) if f["name"] == HANDOFF]
    assert counted["total_count"] == 1
    assert counted["unread_count"] == 1


@pytest.mark.parametrize(
    ("mode", "status", "error_type"), [("conflict", 409, "conflict"), ("invalid", 400, None)]
)
def test_a_folder_name_the_grant_has_is_refused(nylas, mode, status, error_type):
    nylas.modes.folder_exists = mode
    assert call(nylas, "POST", f"/v3/grants/{GRANT}/folders", json={"name": HANDOFF}).status_code == 200
    for name in (HANDOFF, "Inbox", "sent"):
        again = call(nylas, "POST", f"/v3/grants/{GRANT}/folders", json={"name": name})
        assert again.status_code == status
        assert error_of(again)["type"] == (error_type or "invalid_request_error")
    assert [f["name"] for f in folders(nylas)].count(HANDOFF) == 1


def test_a_folder_needs_a_name(nylas):
    for body in ({}, {"name": ""}, {"name": 3}):
        response = call(nylas, "POST", f"/v3/grants/{GRANT}/folders", json=body)
        assert response.status_code == 400
        assert "name" in error_of(response)["message"]


def test_reset_forgets_created_folders_and_aliases(nylas):
    call(nylas, "POST", f"/v3/grants/{GRANT}/folders", json={"name": HANDOFF})
    nylas.set_aliases(GRANT, [ALIAS])
    nylas.reset()
    nylas.add_grant(GRANT, AGENT_EMAIL)
    assert HANDOFF not in [f["name"] for f in folders(nylas)]
    assert get(nylas, f"/v3/grants/{GRANT}?expose_aliases=true").json()["data"]["email_aliases"] == []


def test_the_sent_folder_carries_the_sent_attribute(nylas):
    [sent] = [f for f in folders(nylas) if f["name"] == "sent"]
    assert sent["attributes"] == ["\\Sent"]
    assert sent["system_folder"] is True


def test_aliases_only_when_asked_for(nylas):
    nylas.set_aliases(GRANT, [ALIAS])
    plain = get(nylas, f"/v3/grants/{GRANT}").json()["data"]
    assert "email_aliases" not in plain
    exposed = get(nylas, f"/v3/grants/{GRANT}", params={"expose_aliases": "true"}).json()["data"]
    assert exposed["email_aliases"] == [ALIAS]
    assert exposed["email"] == AGENT_EMAIL
    # Not stored in the grant object: the next plain read has none either.
    assert "email_aliases" not in get(nylas, f"/v3/grants/{GRANT}").json()["data"]
    with pytest.raises(KeyError):
        nylas.set_aliases("grant-nobody", [ALIAS])


def test_aliases_set_through_the_control_route(nylas):
    answer = control(nylas, "PUT", f"grants/{GRANT}/aliases", json={"aliases": [ALIAS]})
    assert answer.status_code == 200
    assert answer.json()["data"] == {"grant_id": GRANT, "email_aliases": [ALIAS]}
    assert get(nylas, f"/v3/grants/{GRANT}?expose_aliases=true").json()["data"]["email_aliases"] == [ALIAS]
    assert control(nylas, "PUT", f"grants/{GRANT}/aliases", json={"aliases": ["nope"]}).status_code == 400
    assert control(nylas, "PUT", "grants/grant-nobody/aliases", json={"aliases": []}).status_code == 404


def test_sent_copies_show_the_alias_of_their_grant_only(nylas):
    nylas.add_grant("grant-plain", "plain@example.com")
    nylas.set_aliases(GRANT, [ALIAS])
    nylas.modes.sent_from_by_grant = {GRANT: ALIAS}
    message = inbound(nylas)
    sent = send(nylas, reply_to(message)).json()["data"]
    assert sent["from"][0]["email"] == ALIAS
    other = send(nylas, {"to": [{"email": CUSTOMER}], "subject": "Hi"}, grant="grant-plain").json()["data"]
    assert other["from"][0]["email"] == "plain@example.com"

    draft = call(nylas, "POST", f"/v3/grants/{GRANT}/drafts", json=reply_to(message)).json()["data"]
    from_draft = call(nylas, "POST", f"/v3/grants/{GRANT}/drafts/{draft['id']}").json()["data"]
    assert from_draft["from"][0]["email"] == ALIAS

    person = nylas.person_replies(GRANT, message["id"])
    assert person["from"][0]["email"] == ALIAS
    assert (
        nylas.person_replies(GRANT, message["id"], from_email=AGENT_EMAIL)["from"][0]["email"] == AGENT_EMAIL
    )
    with pytest.raises(ValueError, match="sent_from_by_grant"):
        nylas.modes.sent_from_by_grant = {GRANT: "not-an-address"}
    nylas.modes.reset()
    assert nylas.modes.sent_from_by_grant == {}


def test_the_receiving_providers_authentication_results_are_on_top(nylas):
    stamped = authentication_results(
        dmarc="fail", dkim="pass", dkim_domain="lists.example", from_domain="x.example"
    )
    assert stamped == "mx.emulator.nylas; dkim=pass header.d=lists.example; dmarc=fail header.from=x.example"
    forged = "mx.emulator.nylas; dmarc=pass"
    message = inbound(nylas, headers={"Authentication-Results": forged}, authentication_results=stamped)
    read = get(nylas, f"/v3/grants/{GRANT}/messages/{message['id']}", params={"fields": "include_headers"})
    results = [h["value"] for h in read.json()["data"]["headers"] if h["name"] == "Authentication-Results"]
    assert results == [stamped, forged]  # the provider's first: the sender's own comes below it

    unstamped = inbound(nylas)
    assert not [h for h in unstamped["headers"] if h["name"] == "Authentication-Results"]
    assert authentication_results(dmarc=None) == "mx.emulator.nylas; none"


def test_authentication_results_through_the_control_route(nylas):
    value = authentication_results(dmarc="pass", from_domain="example.com")
    answer = control(
        nylas,
        "POST",
        "inbound",
        json={
            "grant_id": GRANT,
            "from_email": CUSTOMER,
            "authentication_results": [value],
            "addressed_to": ["team@example.com"],
        },
    )
    assert answer.status_code == 201
    data = answer.json()["data"]
    assert data["headers"][1] == {"name": "Authentication-Results", "value": value}
    assert data["to"] == [{"name": "", "email": "team@example.com"}]
    bad = control(
        nylas,
        "POST",
        "inbound",
        json={"grant_id": GRANT, "from_email": CUSTOMER, "authentication_results": 1},
    )
    assert bad.status_code == 400


@pytest.mark.parametrize("folder", ["inbox", "junk"])
def test_mail_forged_from_the_grants_own_address_is_inbound(nylas, folder):
    seen: list[dict] = []
    nylas.on_message_created = seen.append
    customer = inbound(nylas)
    forged = nylas.deliver_forged_own(GRANT, reply_to_message_id=customer["id"], folder=folder)
    assert forged["from"][0]["email"] == AGENT_EMAIL
    assert forged["folders"] == [folder]
    assert forged["thread_id"] == customer["thread_id"]
    customer_id = next(h["value"] for h in customer["headers"] if h["name"] == "Message-ID")
    assert {"name": "In-Reply-To", "value": customer_id} in forged["headers"]
    assert forged["metadata"] == {}
    assert nylas.sends == []  # nobody sent it: it arrived
    assert [m["id"] for m in seen] == [customer["id"], forged["id"]]
    assert forged["unread"] is True


def test_a_persons_draft_and_its_send(nylas):
    message = inbound(nylas)
    draft = nylas.person_drafts(GRANT, message["id"], "<p>Checking with the warehouse.</p>")
    assert draft["object"] == "draft"
    assert draft["to"] == message["from"]
    listed = get(nylas, f"/v3/grants/{GRANT}/drafts", params={"thread_id": message["thread_id"]}).json()[
        "data"
    ]
    assert [d["id"] for d in listed] == [draft["id"]]
    assert "date" in listed[0]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert thread["draft_ids"] == [draft["id"]]

    nylas.modes.draft_date = False
    assert "date" not in get(nylas, f"/v3/grants/{GRANT}/drafts/{draft['id']}").json()["data"]
    listed = get(nylas, f"/v3/grants/{GRANT}/drafts").json()["data"]
    assert "date" not in listed[0]
    assert "date" in get(nylas, f"/v3/grants/{GRANT}/messages/{message['id']}").json()["data"]

    seen: list[dict] = []
    nylas.on_message_created = seen.append
    sent = nylas.person_sends_draft(GRANT, draft["id"])
    assert sent["folders"] == ["sent"]
    assert sent["object"] == "message"
    assert sent["id"] != draft["id"]
    assert [m["id"] for m in seen] == [sent["id"]]
    assert nylas.sends == []  # a person's send from the mail client, not the API
    assert get(nylas, f"/v3/grants/{GRANT}/drafts/{draft['id']}").status_code == 404
    with pytest.raises(KeyError):
        nylas.person_sends_draft(GRANT, draft["id"])


@pytest.mark.parametrize("keeps", [True, False])
def test_a_review_draft_sent_by_a_person_keeps_our_metadata_or_not(nylas, keeps):
    nylas.modes.draft_send_keeps_metadata = keeps
    message = inbound(nylas)
    ours = {**reply_to(message), "metadata": {"key1": "intent-1"}}
    draft = call(nylas, "POST", f"/v3/grants/{GRANT}/drafts", json=ours).json()["data"]
    sent = nylas.person_sends_draft(GRANT, draft["id"])
    assert sent["metadata"] == ({"key1": "intent-1"} if keeps else {})
    found = list_messages(nylas, metadata_pair="key1:intent-1").json()["data"]
    assert [m["id"] for m in found] == ([sent["id"]] if keeps else [])

    api_draft = call(nylas, "POST", f"/v3/grants/{GRANT}/drafts", json=ours).json()["data"]
    via_api = call(nylas, "POST", f"/v3/grants/{GRANT}/drafts/{api_draft['id']}").json()["data"]
    assert via_api["metadata"] == ({"key1": "intent-1"} if keeps else {})


def test_an_inbound_date_is_the_senders_or_the_receipts(nylas, clock):
    sender_date = clock.now - 7200
    assert inbound(nylas, date=sender_date)["date"] == int(sender_date)
    nylas.modes.message_date = "received"
    message = inbound(nylas, date=sender_date)
    assert message["date"] == int(clock.now)
    date_header = next(h["value"] for h in message["headers"] if h["name"] == "Date")
    from email.utils import parsedate_to_datetime

    assert parsedate_to_datetime(date_header).timestamp() == int(sender_date)
    with pytest.raises(ValueError, match="message_date"):
        nylas.modes.message_date = "sent"
