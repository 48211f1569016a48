"""The shadow report (replyonce.rules.shadow_report.build_report), one table per rule: records and threads in,
counts and items out. No port, no clock."""

import json

import pytest

from replyonce.mail import read_messages
from replyonce.rules.coverage import reply_metadata
from replyonce.rules.shadow_report import build_report, person_answer, render_text
from replyonce.state import ShadowOutcome, ShadowRecord

AGENT = "support@acme.example"
DAY = 24 * 3600
T0 = 1_800_000_000 - 1_800_000_000 % DAY  # a UTC midnight


def record(rid, outcome=ShadowOutcome.REPLY, *, covered=("m1",), thread="t1", at=T0 + 60, reason="", text=""):
    return ShadowRecord("g1", rid, thread, covered[0], covered, outcome, reason, text, at)


def customer(mid):
    return {"id": mid, "from": [{"email": "alice@example.com"}], "body": "<p>Where is it?</p>"}


def person(mid, body="<p>It ships today.</p><blockquote>Where is it?</blockquote>"):
    """A colleague's answer: from the mailbox's address, in its Sent folder (the provider's word)."""
    return {"id": mid, "from": [{"email": AGENT}], "body": body, "folders": ["sent"]}


def ours(mid):
    return {
        "id": mid,
        "from": [{"email": AGENT}],
        "body": "<p>Hi</p>",
        "metadata": reply_metadata("i1", "m1", "t1", ("m1",)),
    }


@pytest.mark.parametrize(
    ("thread", "answer"),
    [
        ((customer("m1"),), None),  # nobody answered
        ((person("p1"), customer("m1")), "p1"),  # a person, after it (the listing is newest first)
        ((person("p2"), person("p1"), customer("m1")), "p1"),  # the first person's answer after it
        ((customer("m1"), person("p0")), None),  # a person's message before it answers nothing of it
        ((ours("r1"), customer("m1")), None),  # ReplyOnce's own reply is no person
        # The mailbox's address on a message in the inbox is a forged From, no colleague's answer.
        (({**person("p1"), "folders": ["inbox"]}, customer("m1")), None),
        ((person("p1"),), None),  # the trigger is no longer listed: no guess
    ],
)
def test_a_persons_answer_is_the_first_message_of_the_mailbox_after_the_trigger_that_is_not_ours(
    thread, answer
):
    found = person_answer(record("i1"), read_messages(thread), [AGENT])
    assert (found.id if found else None) == answer


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([], []),
        (
            [record("i1", covered=("m2", "m1"))],
            [{"replies": 1, "answered": 2, "answered_by_person_too": 0, "skipped": {}}],
        ),
        (
            [
                record("i1", ShadowOutcome.DECLINED, reason="spam"),
                record("i2", ShadowOutcome.HANDED_OFF, covered=("m2",)),
                record("i3", ShadowOutcome.REJECTED, covered=("m3",)),
            ],
            [{"declined": 1, "handed_off": 1, "rejected": 1, "replies": 0}],
        ),
        (
            [
                record("message:m1", ShadowOutcome.SKIPPED, reason="bulk_mail"),
                record("message:m2", ShadowOutcome.SKIPPED, covered=("m2",), reason="bulk_mail"),
                record("message:m3", ShadowOutcome.SKIPPED, covered=("m3",), reason="person_hold"),
            ],
            [{"skipped": {"bulk_mail": 2, "person_hold": 1}, "answered": 0}],
        ),
        (
            # A message first skipped, then answered with a later one: counted once, as answered.
            [
                record("message:m1", ShadowOutcome.SKIPPED, reason="sender_not_reached"),
                record("i1", covered=("m2", "m1"), at=T0 + 120),
            ],
            [{"skipped": {}, "answered": 2}],
        ),
        (
            # Two bursts' records cover m1 (a table restored from before the first's settlement): m1 is
            # counted once, in the first.
            [record("i1"), record("i2", covered=("m2", "m1"), at=T0 + 120)],
            [{"replies": 2, "answered": 2}],
        ),
        (
            # Two days: one period each, oldest first.
            [record("i2", covered=("m2",), at=T0 + DAY + 5), record("i1")],
            [{"start": T0, "answered": 1}, {"start": T0 + DAY, "answered": 1}],
        ),
    ],
)
def test_each_period_counts_messages_by_what_the_agent_or_a_rule_decided(records, expected):
    report = build_report(records, {}, [AGENT])
    assert len(report.periods) == len(expected)
    for period, wanted in zip(report.periods, expected, strict=True):
        assert {k: getattr(period, k) for k in wanted} == wanted


@pytest.mark.parametrize(
    ("threads", "by_person"),
    [
        ({}, 0),  # the thread could not be read: no answer matched
        ({"t1": (customer("m1"),)}, 0),
        ({"t1": (person("p1"), customer("m1"))}, 1),
        ({"t1": (ours("r1"), customer("m1"))}, 0),
    ],
)
def test_a_reply_a_person_also_sent_is_counted_with_their_words_beside_the_agents(threads, by_person):
    report = build_report(
        [record("i1", text="Thanks!")], {t: read_messages(m) for t, m in threads.items()}, [AGENT]
    )
    [period] = report.periods
    assert period.answered_by_person_too == by_person
    [item] = report.items
    assert item.agent_text == "Thanks!"
    assert item.person_text == ("It ships today." if by_person else "")


@pytest.mark.parametrize(
    ("since", "until", "kept"),
    [
        (None, None, ["i1", "i2"]),
        (T0 + 100, None, ["i2"]),
        (None, T0 + 100, ["i1"]),
        (T0 + 60, T0 + 61, ["i1"]),
    ],
)
def test_the_window_keeps_records_by_their_time(since, until, kept):
    records = [record("i1", at=T0 + 60), record("i2", covered=("m2",), at=T0 + 200)]
    report = build_report(records, {}, [AGENT], since=since, until=until)
    assert [i.trigger_id for i in report.items] == [{"i1": "m1", "i2": "m2"}[k] for k in kept]


def test_a_period_shorter_than_a_second_is_refused():
    with pytest.raises(ValueError, match="period_seconds"):
        build_report([], {}, [AGENT], period_seconds=0)


def test_the_report_is_plain_data_and_its_text_is_the_same_for_the_same_report():
    records = [
        record("i1", text="Thanks!"),
        record("message:m2", ShadowOutcome.SKIPPED, covered=("m2",), reason="bulk_mail"),
    ]
    threads = {"t1": read_messages((person("p1"), customer("m1")))}
    report = build_report(records, threads, [AGENT])
    assert json.loads(json.dumps(report.to_dict()))["periods"][0]["skipped"] == {"bulk_mail": 1}
    text = render_text(report)
    assert text == render_text(build_report(list(reversed(records)), threads, [AGENT]))
    assert "would answer  1 message(s) in 1 reply(ies); a person answered 1 of them too" in text
    assert "skipped       bulk_mail 1" in text
    assert "    person: It ships today.  [p1]" in text
