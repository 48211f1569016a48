"""A Nylas message read once (replyonce.mail): what each field becomes, and what malformed input reads as.

The rules never see the JSON: what they make of a field of the wrong shape is decided here, once. Each
malformed row keeps the message (nothing is dropped but what is no object at all) and reads the field
as empty, which the rules answer as they answer an empty field (no sender: ``NO_SENDER``, logged).
"""

import pytest

from replyonce.mail import Address, ListedFile, Mail, read_message, read_messages
from replyonce.reasons import SkipReason
from replyonce.rules.screening import Agents, reason_not_to_answer

NYLAS = {
    "id": "m1",
    "grant_id": "g1",
    "thread_id": "t1",
    "object": "message",
    "subject": "Order 7",
    "body": "<p>Where is it?</p>",
    "snippet": "Where is it?",
    "date": 1_800_000_000,
    "from": [{"name": "Alice", "email": " Alice@Example.COM "}],
    "to": [{"email": "support@acme.example"}],
    "cc": [{"name": "Bob", "email": "<bob@example.com>"}],
    "reply_to": [{"email": "alice.home@example.com"}],
    "folders": ["inbox-id"],
    "headers": [
        {"name": "List-Id", "value": " News <News.Example> "},
        {"name": "AUTO-SUBMITTED", "value": "No"},
        {"name": "In-Reply-To", "value": "<a1@shop.example>"},
    ],
    "metadata": {"key1": "intent-1", "count": 3},
    "attachments": [{"id": "a1", "filename": "x.pdf", "content_type": "application/pdf", "size": 12}],
}


def test_a_message_is_read_into_typed_fields_once():
    mail = read_message(NYLAS)
    assert (mail.id, mail.grant_id, mail.thread_id, mail.object) == ("m1", "g1", "t1", "message")
    assert (mail.subject, mail.body, mail.snippet, mail.date) == (
        "Order 7",
        "<p>Where is it?</p>",
        "Where is it?",
        1_800_000_000,
    )
    # Compared lower case, stripped, without angle brackets; the written form kept for the reply's parse.
    assert mail.from_ == (Address("alice@example.com", "Alice", " Alice@Example.COM "),)
    assert mail.sender == "alice@example.com"
    assert [a.email for a in mail.addresses("to", "cc")] == ["support@acme.example", "bob@example.com"]
    assert mail.folders == ("inbox-id",)
    # Any case of a name finds it; values stripped and lower case, in order.
    assert mail.header("list-id") == ("news <news.example>",)
    assert mail.header("Auto-Submitted") == ("no",)
    assert mail.header_names == {"list-id", "auto-submitted", "in-reply-to"}
    assert dict(mail.metadata) == {"key1": "intent-1"}  # only string pairs: every key ReplyOnce reads is one
    assert mail.attachments == (ListedFile("a1", "x.pdf", "application/pdf", 12),)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, Mail()),
        ({"id": 7, "thread_id": None, "subject": ["x"], "object": {}}, Mail()),
        ({"date": "1800000000"}, Mail(date=1_800_000_000)),  # a number as text is still the number
        ({"date": "yesterday"}, Mail()),
        ({"date": None}, Mail()),
        ({"body": None, "snippet": None}, Mail(body=None, snippet="")),
        ({"body": ""}, Mail(body="")),  # an empty body is a body: the agent is not shown the snippet
        ({"from": "alice@example.com"}, Mail()),  # no list: no participant
        # A participant of the wrong shape keeps its place (the first sender stays the first), empty.
        (
            {"from": ["alice@example.com", {"email": "bob@x.example"}]},
            Mail(from_=(Address(), Address("bob@x.example", "", "bob@x.example"))),
        ),
        ({"from": [{"email": None, "name": 5}]}, Mail(from_=(Address(),))),
        ({"from": [{"email": "<>"}]}, Mail(from_=(Address("", "", "<>"),))),
        ({"folders": ["inbox", 3, None]}, Mail(folders=("inbox",))),
        ({"folders": "inbox"}, Mail()),
        ({"headers": {"List-Id": "x"}}, Mail()),
        ({"headers": ["List-Id: x", {"name": "X-Loop"}]}, Mail(headers=(("x-loop", ""),))),
        ({"metadata": ["key1"]}, Mail()),
        (
            {
                "attachments": [
                    {"filename": "no-id.pdf"},
                    "junk",
                    {"id": "a2", "size": "n/a", "is_inline": "yes"},
                ]
            },
            Mail(attachments=(ListedFile("a2"),)),
        ),
    ],
)
def test_a_malformed_field_reads_as_empty_and_the_message_is_kept(raw, expected):
    assert read_message(raw) == expected


def test_what_is_no_object_is_no_message_and_a_listing_drops_only_that():
    assert read_message(None) is None
    assert read_message(["m1"]) is None
    assert [m.id for m in read_messages([{"id": "m1"}, "junk", None, {"id": "m2"}])] == ["m1", "m2"]
    assert read_messages({"id": "m1"}) == ()  # a listing that is no list lists nothing
    mail = read_message({"id": "m1"})
    assert read_message(mail) is mail  # read once: a value already read passes as it is


def test_a_message_without_a_readable_sender_is_still_answered_for_a_skip_with_its_reason():
    agents = Agents(("g1",), {"g1": "support@acme.example"})
    unreadable = read_message({"id": "m1", "from": [{"name": "MAILER-DAEMON", "email": None}]})
    assert (
        reason_not_to_answer(
            unreadable, grant_id="g1", agents=agents, trusted_senders=(), closed_folder_ids=()
        )
        is SkipReason.NO_SENDER
    )
