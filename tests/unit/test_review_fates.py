"""The review report's pure rules (ops.review_report): the edit distance, a draft's fate from its thread,
its status while listed, the rates. Tables of hand-made drafts and threads; no mailbox."""

import pytest

from ops.review_report import (
    TrackedDraft,
    edit_distance,
    fate_after_drafts,
    normalised_edit_distance,
    status_of,
    summarise,
)
from replyonce.mail import read_messages
from replyonce.rules.coverage import reply_metadata

OWN = "support@acme.example"
SENT = "folder-sent"
DRAFT = TrackedDraft(
    "g1", "d1", "intent-1", "t1", "Your order ships on Friday", created_at=1000, first_seen=1000
)


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("kitten", "sitting", 3),  # the textbook example, letter by letter
        ("", "abc", 3),
        ("abc", "abc", 0),
        ("abcd", "acbd", 2),  # a swap is two substitutions
    ],
)
def test_levenshtein_distance(a, b, distance):
    assert edit_distance(list(a), list(b)) == distance


@pytest.mark.parametrize(
    ("drafted", "sent", "distance"),
    [
        ("Your order ships on Friday", "your order ships on friday.", 0.0),  # case, punctuation aside
        ("Your order ships on Friday", "Your order ships on Monday", 1 / 5),
        ("Your order ships on Friday", "Your order ships on Monday morning", 2 / 6),
        ("Your order ships on Friday", "Refund approved", 1.0),
        ("", "", 0.0),
    ],
)
def test_the_normalised_distance_counts_words_over_the_longer_text(drafted, sent, distance):
    assert normalised_edit_distance(drafted, sent) == pytest.approx(distance)


def sent_by_person(mid, body, date=2000, metadata=None):
    message = {"id": mid, "from": [{"email": OWN}], "folders": [SENT], "body": body, "date": date}
    if metadata is not None:
        message["metadata"] = metadata
    return message


CUSTOMER = {
    "id": "m1",
    "from": [{"email": "alice@example.com"}],
    "folders": ["inbox"],
    "body": "When?",
    "date": 900,
}
OURS = reply_metadata("intent-1", "m1", "t1", ("m1",), review=True)
OTHER_DRAFT = reply_metadata("intent-2", "m1", "t1", ("m1",), review=True)


@pytest.mark.parametrize(
    ("thread", "fate", "matched_by", "sent_id"),
    [
        ((CUSTOMER,), "deleted", "", ""),
        (
            (sent_by_person("s1", "<p>Your order ships on Friday</p>", metadata=OURS), CUSTOMER),
            "sent_unchanged",
            "metadata",
            "s1",
        ),
        (
            (sent_by_person("s1", "<p>Ships Monday</p>", metadata=OURS), CUSTOMER),
            "sent_edited",
            "metadata",
            "s1",
        ),
        # The provider dropped the metadata: the person's first message after the draft is its send.
        (
            (
                sent_by_person("s2", "<p>Later</p>", 3000),
                sent_by_person("s1", "<p>Your order ships on Friday</p>"),
                CUSTOMER,
            ),
            "sent_unchanged",
            "thread",
            "s1",
        ),
        # A person's message from before the draft was made is not its send.
        ((CUSTOMER, sent_by_person("s0", "<p>Old</p>", date=500)), "deleted", "", ""),
        # Another draft of ours, sent with its metadata, is not this one's send.
        ((sent_by_person("s3", "<p>Other</p>", metadata=OTHER_DRAFT), CUSTOMER), "deleted", "", ""),
        # The mailbox's address in the inbox is a forged From, not a person's send.
        (({**sent_by_person("s4", "<p>x</p>"), "folders": ["inbox"]}, CUSTOMER), "deleted", "", ""),
    ],
)
def test_a_draft_that_left_drafts_ends_as_its_thread_says(thread, fate, matched_by, sent_id):
    ended = fate_after_drafts(DRAFT, read_messages(thread), [OWN], [SENT])
    assert (ended.fate, ended.matched_by, ended.sent_message_id) == (fate, matched_by, sent_id)


@pytest.mark.parametrize(
    ("listed", "age", "status"),
    [(True, 3599, "pending"), (True, 3600, "open"), (False, 99999, "")],
)
def test_a_listed_draft_is_open_only_after_the_stated_time(listed, age, status):
    assert status_of(DRAFT, listed, DRAFT.created_at + age, 3600) == status


def test_the_rates_count_decided_drafts_only_and_the_most_edited_come_first():
    entries = [
        (TrackedDraft("g1", "a", "", "", "", 0, 0, fate="sent_edited", distance=0.2), "sent_edited"),
        (TrackedDraft("g1", "b", "", "", "", 0, 0, fate="sent_edited", distance=0.9), "sent_edited"),
        (TrackedDraft("g1", "c", "", "", "", 0, 0, fate="sent_unchanged", distance=0.0), "sent_unchanged"),
        (TrackedDraft("g1", "d", "", "", "", 0, 0), "pending"),
        (TrackedDraft("g1", "e", "", "", "", 0, 0), ""),  # left Drafts, not followed yet
    ]
    report = summarise({"g1": entries}, reads=3, open_after_seconds=3600)
    [grant] = report.grants
    assert {r.fate: (r.count, r.total) for r in grant.rates} == {
        "sent_unchanged": (1, 3),
        "sent_edited": (2, 3),
        "deleted": (0, 3),
        "open": (0, 3),
    }
    assert [t.draft_id for t in grant.most_edited] == ["b", "a"]
    assert grant.mean_distance_sent == pytest.approx(1.1 / 3)
    assert report.not_followed == 1
