"""The mailbox port's contract: every case on ``FakeMailbox`` and on ``NylasMailbox`` (the Nylas emulator).

What the replier may rely on, observed only through the port (``replyonce.ports.Mailbox``) and the
count of emails that went out: the grant, its folders, a message with its headers, a thread's pages
newest first, ``metadata_pair`` searches, a send under its ``Idempotency-Key`` (replayed, refused
for another payload or while in flight, new after the key's hour), drafts and moving a message.
"""

import json

import pytest

from devstack.events import AGENT_EMAIL
from replyonce.exceptions import NylasPermanentError


def reply_request(world, to: dict, intent_id: str = "intent-1", body: str = "<p>Thanks</p>") -> str:
    return json.dumps(
        {
            "to": [{"email": to["from"][0]["email"]}],
            "subject": f"Re: {to['subject']}",
            "body": body,
            "reply_to_message_id": to["id"],
            "metadata": {"key1": intent_id, "key2": to["id"]},
        }
    )


# ---- the grant and its folders --------------------------------------------------------------------------


def test_the_grant_is_its_address_and_name_and_an_unknown_one_is_a_404(world):
    grant = world.mailbox.grant(world.grant_id)
    assert (grant.id, grant.email, grant.name, grant.provider) == (
        world.grant_id,
        AGENT_EMAIL,
        "Acme Support",
        "nylas",  # an Agent Account: the replier tells a person's shared mailbox by its provider
    )
    with pytest.raises(NylasPermanentError) as unknown:
        world.mailbox.grant("grant-nobody")
    assert unknown.value.status == 404


def test_the_folders_are_the_agent_accounts_six_with_their_attributes(world):
    folders = {f.name: f.attributes for f in world.mailbox.folders(world.grant_id)}
    assert folders == {
        "inbox": ("\\Inbox",),
        "sent": ("\\Sent",),
        "drafts": ("\\Drafts",),
        "trash": ("\\Trash",),
        "junk": ("\\Junk",),
        "archive": ("\\Archive",),
    }


# ---- messages and thread pages --------------------------------------------------------------------------


def test_a_message_is_fetched_with_its_sender_and_thread_and_a_gone_one_is_none(world):
    delivered = world.deliver("alice@example.com", "Order 7")
    fetched = world.mailbox.message(world.grant_id, delivered["id"])
    assert fetched.id == delivered["id"]
    assert fetched.thread_id == delivered["thread_id"]
    assert fetched.sender == "alice@example.com"
    assert fetched.subject == "Order 7"
    inbox = next(f.id for f in world.mailbox.folders(world.grant_id) if f.name == "inbox")
    assert fetched.folders == (inbox,)  # folder ids, as GET /folders gives them, not names
    assert world.mailbox.message(world.grant_id, "msg-never-existed") is None


@pytest.mark.parametrize(
    "world",
    [
        pytest.param(
            "fake",
            marks=pytest.mark.xfail(
                reason="FakeMailbox.deliver adds no Message-ID header unless a scenario gives one, so most "
                "interleaving scenarios never claim their email (claim_email); adding it changes every "
                "scenario's schedules and docs/reliability.md's figures: left to the scheduler's owners",
                strict=True,
            ),
        ),
        "emulator",
    ],
    indirect=True,
)
def test_every_message_carries_a_message_id_header(world):
    delivered = world.deliver("alice@example.com", "Order 7")
    fetched = world.mailbox.message(world.grant_id, delivered["id"])
    assert len(fetched.header("Message-ID")) == 1


def test_a_thread_is_read_in_pages_newest_first_and_only_its_own_messages(world):
    first = world.deliver("alice@example.com", "Order 7", thread_id="thread-contract")
    world.advance(1)
    second = world.deliver("alice@example.com", "Re: Order 7", thread_id="thread-contract")
    world.deliver("bob@example.com", "Another thread")
    world.advance(1)
    third = world.deliver("alice@example.com", "Re: Order 7", thread_id="thread-contract")
    page = world.mailbox.thread_page(world.grant_id, "thread-contract", 2, None)
    assert [m.id for m in page.messages] == [third["id"], second["id"]]
    assert page.next_cursor is not None
    last = world.mailbox.thread_page(world.grant_id, "thread-contract", 2, page.next_cursor)
    assert [m.id for m in last.messages] == [first["id"]]
    assert last.next_cursor is None
    assert last.nylas_time >= page.nylas_time > 0


# ---- send, under its Idempotency-Key ---------------------------------------------------------------------


def test_a_send_goes_out_once_and_a_retry_under_its_key_replays_the_same_answer(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    request = reply_request(world, inbound)
    first = world.mailbox.send(world.grant_id, request, "key-1")
    assert (first.status, first.replayed) == (200, False)
    assert first.message_id
    again = world.mailbox.send(world.grant_id, request, "key-1")
    assert (again.status, again.replayed, again.message_id) == (200, True, first.message_id)
    assert world.emails_out() == 1
    listed = world.mailbox.thread_page(world.grant_id, inbound["thread_id"], 10, None).messages
    assert [m.id for m in listed] == [first.message_id, inbound["id"]]
    assert listed[0].metadata["key1"] == "intent-1"
    assert world.mailbox.message(world.grant_id, first.message_id).metadata["key2"] == inbound["id"]


def test_another_payload_under_a_used_key_is_refused_and_sends_nothing(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    world.mailbox.send(world.grant_id, reply_request(world, inbound), "key-1")
    other = world.mailbox.send(world.grant_id, reply_request(world, inbound, body="<p>Other</p>"), "key-1")
    assert other.status == 409
    assert other.error_type.removeprefix("api.") == "invalid_idempotent_request"
    assert world.emails_out() == 1


def test_a_send_under_a_key_still_in_flight_is_refused_and_sends_nothing(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    request = reply_request(world, inbound)
    meanwhile = []
    world.on_send_started(
        lambda grant_id, payload: meanwhile.append(world.mailbox.send(grant_id, request, "key-1"))
    )
    first = world.mailbox.send(world.grant_id, request, "key-1")
    world.on_send_started(None)
    assert first.status == 200
    assert [(a.status, a.error_type.removeprefix("api.")) for a in meanwhile] == [
        (409, "concurrent_idempotent_request")
    ]
    assert world.emails_out() == 1


def test_a_key_is_kept_one_hour_then_a_send_under_it_is_a_new_email(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    request = reply_request(world, inbound)
    first = world.mailbox.send(world.grant_id, request, "key-1")
    world.advance(3599)
    assert world.mailbox.send(world.grant_id, request, "key-1").replayed is True
    world.advance(2)
    later = world.mailbox.send(world.grant_id, request, "key-1")
    assert (later.status, later.replayed) == (200, False)
    assert later.message_id != first.message_id
    assert world.emails_out() == 2


def test_a_queued_send_is_accepted_not_sent_until_the_queue_lets_it_go(world):
    world.queue_sends()
    inbound = world.deliver("alice@example.com", "Order 7")
    accepted = world.mailbox.send(world.grant_id, reply_request(world, inbound), "key-1")
    assert accepted.status == 202
    assert accepted.message_id
    assert world.emails_out() == 0
    listed = world.mailbox.thread_page(world.grant_id, inbound["thread_id"], 10, None).messages
    assert [m.id for m in listed] == [inbound["id"]]  # queued: in no listing yet
    world.release()
    assert world.emails_out() == 1
    listed = world.mailbox.thread_page(world.grant_id, inbound["thread_id"], 10, None).messages
    assert [m.id for m in listed] == [accepted.message_id, inbound["id"]]  # under the id the 202 gave


# ---- search by metadata ----------------------------------------------------------------------------------


def test_a_reply_is_found_by_its_indexed_metadata_and_an_unindexed_key_cannot_answer(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    sent = world.mailbox.send(world.grant_id, reply_request(world, inbound), "key-1")
    found = world.mailbox.search(world.grant_id, "messages", "key1", "intent-1")
    assert ([m.id for m in found.found], found.failed) == ([sent.message_id], "")
    assert world.mailbox.search(world.grant_id, "messages", "key1", "intent-other").found == ()
    unindexed = world.mailbox.search(world.grant_id, "messages", "intent", "intent-1")
    assert unindexed.failed  # unknown, never "not there"
    assert unindexed.found == ()


# ---- drafts ----------------------------------------------------------------------------------------------


def test_a_draft_is_listed_in_its_thread_found_by_metadata_and_sends_nothing(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    elsewhere = world.deliver("bob@example.com", "Another thread")
    draft = world.mailbox.create_draft(world.grant_id, reply_request(world, inbound))
    world.mailbox.create_draft(world.grant_id, reply_request(world, elsewhere, intent_id="intent-2"))
    assert draft.status == 200
    listed = world.mailbox.drafts_in_thread(world.grant_id, inbound["thread_id"])
    assert [d.id for d in listed] == [draft.message_id]
    found = world.mailbox.search(world.grant_id, "drafts", "key1", "intent-1")
    assert [d.id for d in found.found] == [draft.message_id]
    assert world.emails_out() == 0


@pytest.mark.parametrize(
    "world",
    [
        pytest.param(
            "fake",
            marks=pytest.mark.xfail(
                reason="a deliberate simplification: FakeMailbox validates no request and answers every "
                "draft 200 (the replier's requests are built by replyonce.rules.outbox; a refused send is "
                "scripted with script_send)",
                strict=True,
            ),
        ),
        "emulator",
    ],
    indirect=True,
)
def test_a_draft_refused_by_nylas_is_an_answer_not_an_exception(world):
    refused = world.mailbox.create_draft(
        world.grant_id, json.dumps({"subject": "x", "metadata": {"bad key": 1}})
    )
    assert 400 <= refused.status < 500


# ---- moving a message ------------------------------------------------------------------------------------


def test_a_moved_message_is_in_the_folder_it_was_moved_to(world):
    inbound = world.deliver("alice@example.com", "Order 7")
    archive = next(f.id for f in world.mailbox.folders(world.grant_id) if f.name == "archive")
    world.mailbox.move(world.grant_id, inbound["id"], archive)
    assert world.mailbox.message(world.grant_id, inbound["id"]).folders == (archive,)
