"""What the web console shows, decided from log records, deliveries and the mailbox: the rules in tables."""

import pytest

from devstack.invariants import INVARIANTS
from devstack.web_view import (
    NO_SHADOW_RECORDS,
    compare_reports,
    conversations,
    invariant_status,
    live_truth,
    notification_ways,
    report_totals,
    shadow_report,
)
from devstack.webhook_sender import Delivery

N = "notif-1"


def queued(n=N):
    return {"message": "notification queued", "notification_id": n, "notification_type": "message.created"}


def replier(message, n=N, **fields):
    return {"message": message, "notification_id": n, "message_id": "m1", "thread_id": "t1", **fields}


SENT = replier("reply sent", reply_message_id="r1", covered=["m1"])
DRAFTED = replier("reply drafted for review", reply_message_id="d1", covered=["m1"])
ABSORBED = {
    "message": "duplicate delivery absorbed",
    "notification_id": N,
    "reason": "duplicate_notification",
}
BUSY = {"message": "record deferred; it will be retried", "notification_id": N, "reason": "thread_busy"}


@pytest.mark.parametrize(
    ("records", "lease", "agent", "outcome"),
    [
        ([queued(), SENT], "taken", "replied", ("send", "reply r1 sent")),
        ([queued(), DRAFTED], "taken", "replied", ("draft", "draft d1 for review")),
        (
            [queued(), BUSY, queued(), SENT],
            "waited 1 time(s): the thread was busy, taken",
            "replied",
            ("send", "reply r1 sent"),
        ),
        (
            [queued(), replier("notification skipped", reason="own_outbound")],
            "-",
            "not asked (own_outbound)",
            ("skip", "skipped, reason=own_outbound"),
        ),
        (
            [queued(), replier("notification skipped", reason="agent_declined", detail="a thank-you note")],
            "taken",
            "declined: a thank-you note",
            ("skip", "skipped, reason=agent_declined: a thank-you note"),
        ),
        (
            [queued(), replier("notification skipped", reason="handed_off", detail="asks for a refund")],
            "taken",
            "handed off: asks for a refund",
            ("skip", "skipped, reason=handed_off: asks for a refund"),
        ),
        (
            [queued(), replier("the agent failed; the record will be retried", detail="KeyError: 'x'")],
            "-",
            "failed 1 time(s): KeyError: 'x'",
            ("pending", "no outcome yet (queued or retrying)"),
        ),
        (
            [queued(), replier("notification skipped", reason="agent_declined")],
            "taken",
            "declined",
            ("skip", "skipped, reason=agent_declined"),
        ),
        (
            # DEBUG: the steps are logged; the lease was taken, the agent failed and the record waits.
            [
                queued(),
                replier("next step", step="TakeLease"),
                replier("next step", step="AskAgent"),
                replier("the agent failed; the record will be retried", detail="boom"),
            ],
            "taken",
            "failed 1 time(s): boom",
            ("pending", "no outcome yet (queued or retrying)"),
        ),
        (
            [queued(), ABSORBED],
            "-",
            "-",
            ("duplicate", "every delivery was a duplicate of one already handled"),
        ),
        ([queued()], "-", "-", ("pending", "no outcome yet (queued or retrying)")),
    ],
)
def test_a_notifications_way_from_its_records(records, lease, agent, outcome):
    [way] = notification_ways(records, [Delivery(N, 1, 200)])
    assert (way["lease"], way["agent"], (way["outcome"]["kind"], way["outcome"]["text"])) == (
        lease,
        agent,
        outcome,
    )


def test_deliveries_duplicates_and_order_newest_first():
    records = [queued(), SENT, queued(), ABSORBED, queued("notif-2")]
    deliveries = [
        Delivery(N, 1, 200),
        Delivery(N, 1, 200),
        Delivery("notif-2", 1, 200),
        Delivery("forged", 1, 401, True),
    ]
    ways = notification_ways(records, deliveries)
    assert [w["notification_id"] for w in ways] == ["forged", "notif-2", N]
    forged, _, first = ways
    assert (first["deliveries"], first["queued"], first["duplicates_absorbed"]) == ([200, 200], 2, 1)
    assert (first["type"], first["message_id"], first["thread_id"]) == ("message.created", "m1", "t1")
    assert (forged["deliveries"], forged["forged"], forged["queued"]) == ([401], True, 0)


def test_metric_lines_and_records_of_no_notification_are_not_ways():
    emf = {"_aws": {}, "notification_id": N}
    assert notification_ways([emf, {"message": "agent loaded"}], []) == []


def person(address):
    return [{"email": address}]


def mail(message_id, thread_id, sender, to, subject, body, **more):
    addressed = {"from": person(sender), "to": person(to)}
    return {"id": message_id, "thread_id": thread_id, **addressed, "subject": subject, "body": body, **more}


MAILBOX = [
    (1.0, mail("m1", "t1", "ann@example.com", "a@x", "Hi", "<p>line one</p><p>line two &amp; three</p>")),
    (
        2.0,
        mail(
            "r1",
            "t1",
            "A@X",
            "ann@example.com",
            "Re: Hi",
            "<p>Hello Ann,</p><p>second</p><p>third</p><p>fourth</p>",
        ),
    ),
    (3.0, mail("m2", "t2", "bob@example.com", "a@x", "<b>x", "text", reply_to=person("desk@example.com"))),
]


def test_conversations_newest_thread_first_whole_bodies_roles_and_drafts():
    draft = {"id": "d1", "thread_id": "t2", "from": person("a@x"), "to": person("bob@example.com"),
             "subject": "Re: <b>x", "body": "<p>draft</p>"}  # fmt: skip
    threads = conversations(MAILBOX, [draft, {**draft, "thread_id": "elsewhere"}], ["a@x"])
    assert [t["thread_id"] for t in threads] == ["t2", "t1"]
    assert [(m["id"], m["role"]) for m in threads[0]["messages"]] == [("m2", "customer"), ("d1", "draft")]
    assert [(m["id"], m["role"]) for m in threads[1]["messages"]] == [("m1", "customer"), ("r1", "agent")]
    # Every line of the agent's reply; entities unescaped into the text the page shows as text.
    assert threads[1]["messages"][1]["body"] == "Hello Ann,\nsecond\nthird\nfourth"
    assert threads[1]["messages"][0]["body"] == "line one\nline two & three"
    assert threads[0]["messages"][0]["subject"] == "<b>x"


def test_live_truth_lets_a_reply_go_only_to_whoever_wrote_never_to_the_agent():
    truth = live_truth(MAILBOX, ["a@x"])
    assert set(truth) == {"m1", "m2"}
    assert truth["m2"].recipients == {"bob@example.com", "desk@example.com"}
    assert (truth["m1"].may_answer, truth["m1"].must_answer) == (True, False)


@pytest.mark.parametrize(
    ("violations", "in_queue", "statuses"),
    [
        ({}, 0, ["holds", "not judged", "holds", "holds", "holds", "holds", "not judged"]),
        (
            {1: ["message m1 got 2 emails"]},
            0,
            ["violated", "not judged", "holds", "holds", "holds", "holds", "not judged"],
        ),
        (
            {5: ["notification n was queued but has no logged outcome"]},
            1,
            ["holds", "not judged", "holds", "holds", "pending", "holds", "not judged"],
        ),
        (
            {5: ["notification n was queued but has no logged outcome"]},
            0,
            ["holds", "not judged", "holds", "holds", "violated", "holds", "not judged"],
        ),
        (
            {5: ["notification n was queued but has no logged outcome", "skip without a reason: n"]},
            1,
            ["holds", "not judged", "holds", "holds", "violated", "holds", "not judged"],
        ),
    ],
)
def test_invariant_status(violations, in_queue, statuses):
    rows = invariant_status(violations, in_queue)
    assert [r["number"] for r in rows] == list(INVARIANTS)
    assert [r["status"] for r in rows] == statuses
    for row in rows:
        if row["status"] == "violated":
            assert row["detail"]


def _report(*records):
    from replyonce.shadow_report import build_report

    return build_report(records, {}, ["support@acme.example"])


def _shadowed(rid, mid, text):
    from replyonce.state import ShadowOutcome, ShadowRecord

    return ShadowRecord("g1", rid, "t1", mid, (mid,), ShadowOutcome.REPLY, "", text, 1_800_000_000)


@pytest.mark.parametrize(
    ("report", "records", "shown"),
    [
        (None, [], [NO_SHADOW_RECORDS]),  # the table holds no shadow record yet
        (_report(), [], [NO_SHADOW_RECORDS]),
        (_report(_shadowed("i1", "m1", "It ships today.")), ["m1"], ["m1", "It ships today."]),
    ],
)
def test_the_shadow_panel_shows_the_report_make_shadow_report_prints(report, records, shown):
    panel = shadow_report(report)
    assert [item["trigger_id"] for item in panel["records"]] == records
    for text in shown:
        assert text in panel["summary"]


def _item(mid, outcome, *, covered=None, reason="", text="", person="", at=1):
    return {
        "thread_id": "t1",
        "trigger_id": mid,
        "covered": list(covered or [mid]),
        "at": at,
        "outcome": outcome,
        "reason": reason,
        "agent_text": text,
        "person_text": person,
    }


def _period(**counts):
    return {"replies": 0, "answered": 0, "declined": 0, "skipped": {}, **counts}


@pytest.mark.parametrize(
    ("first", "second", "rows"),
    [
        # The same decisions: nothing differs.
        ([_item("m1", "reply", text="Hi")], [_item("m1", "reply", text="Hello")], [("m1", False)]),
        # A decline became a reply: the row differs.
        ([_item("m1", "declined", reason="spam")], [_item("m1", "reply")], [("m1", True)]),
        # One report has no record of a message: that differs too.
        ([_item("m1", "reply")], [], [("m1", True)]),
        # A burst's reply covers each of its messages, in the order they came.
        (
            [_item("m2", "reply", covered=["m1", "m2"], at=5), _item("m0", "skipped", at=1)],
            [_item("m2", "reply", covered=["m1", "m2"], at=5), _item("m0", "skipped", at=1)],
            [("m0", False), ("m1", False), ("m2", False)],
        ),
    ],
)
def test_two_reports_compared_message_by_message(first, second, rows):
    state = compare_reports(
        [("v1.json", {"periods": [], "items": first}), ("v2.json", {"periods": [], "items": second})]
    )
    assert [(r["message_id"], r["differs"]) for r in state["messages"]] == rows


def test_a_compared_message_shows_each_reports_decision_text_and_the_persons_answer():
    state = compare_reports(
        [
            ("v1.json", {"periods": [], "items": [_item("m1", "declined", reason="spam")]}),
            (
                "v2.json",
                {"periods": [], "items": [_item("m1", "reply", text="It ships.", person="Sam: today")]},
            ),
        ]
    )
    [row] = state["messages"]
    assert row["decisions"] == [
        {"outcome": "declined", "reason": "spam", "text": ""},
        {"outcome": "reply", "reason": "", "text": "It ships."},
    ]
    assert row["person_text"] == "Sam: today"


def test_a_reports_totals_add_its_periods_and_merge_its_skips_by_reason():
    report = {
        "periods": [
            _period(replies=1, answered=2, skipped={"bulk_mail": 1}),
            _period(declined=1, skipped={"bulk_mail": 2, "automated_sender": 1}),
        ],
        "items": [],
    }
    totals = report_totals(report)
    assert (totals["replies"], totals["answered"], totals["declined"]) == (1, 2, 1)
    assert totals["skipped"] == {"automated_sender": 1, "bulk_mail": 3}


def test_each_compared_report_carries_its_score_from_its_items_and_its_judges_closeness():
    def answered(mid, outcome):
        return {**_item(mid, outcome, person="Sam: today"), "person_message_id": "p-" + mid}

    first = [answered("m1", "reply"), answered("m2", "declined")]
    second = [answered("m1", "declined"), answered("m2", "declined")]
    state = compare_reports(
        [
            (
                "v1.json",
                {
                    "periods": [],
                    "items": first,
                    "score": {"judge": "ops.judge:rouge_l", "closeness_mean": 0.5},
                },
            ),
            ("v2.json", {"periods": [], "items": second}),
        ]
    )
    scores = [r["score"] for r in state["reports"]]
    answered = [next(r for r in s["rates"] if r["name"] == "answered_when_answered") for s in scores]
    assert [(r["count"], r["total"]) for r in answered] == [(1, 2), (0, 2)]
    assert scores[0]["table"]["decline"] == {"person_answered": 1, "nobody_answered": 0}
    assert [(s["judge"], s["closeness_mean"]) for s in scores] == [("ops.judge:rouge_l", 0.5), ("", None)]
