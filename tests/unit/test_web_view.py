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
REDRIVE = 'make redrive ARGS="--local http://127.0.0.1:3710"'
LETTER = {
    "message": "notification dead-lettered",
    "notification_id": N,
    "message_id": "m1",
    "redrive": REDRIVE,
}


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
            "raised 1 time(s): KeyError: 'x'",
            ("retrying", "retrying: the agent raised KeyError: 'x'"),
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
            "raised 1 time(s): boom",
            ("retrying", "retrying: the agent raised boom"),
        ),
        (
            [queued(), ABSORBED],
            "-",
            "-",
            ("duplicate", "every delivery was a duplicate of one already handled"),
        ),
        ([queued()], "-", "-", ("pending", "no outcome yet (queued or retrying)")),
        (
            # The documented end of a record the agent kept failing: a dead letter, with its command.
            [queued(), replier("the agent failed; the record will be retried", detail="boom"), LETTER],
            "-",
            "raised 1 time(s): boom",
            ("dead-letter", "dead-lettered: no reply until it is redriven; fix the cause, then " + REDRIVE),
        ),
        (
            # Redriven and answered: the reply is the outcome, the dead letter only a step of its way.
            [queued(), LETTER, queued(), SENT],
            "taken",
            "replied",
            ("send", "reply r1 sent"),
        ),
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
    # r1 is from the mailbox's address without ReplyOnce's intent id: a person of the team wrote it.
    assert [(m["id"], m["role"]) for m in threads[1]["messages"]] == [("m1", "customer"), ("r1", "person")]
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
    from replyonce.rules.shadow_report import build_report

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


@pytest.mark.parametrize(
    ("first", "second", "changed"),
    [
        # The same reply, word for word: nothing changed.
        (_item("m1", "reply", text="Hi"), _item("m1", "reply", text="Hi"), []),
        # Reworded: the decision is the same, the text is not — marked, though it does not "differ".
        (_item("m1", "reply", text="Hi"), _item("m1", "reply", text="Hello"), ["text"]),
        # The same decline for another reason.
        (
            _item("m1", "declined", reason="spam"),
            _item("m1", "declined", reason="not a question"),
            ["reason"],
        ),
        # A decline became a reply: outcome, reason and text all changed.
        (
            _item("m1", "declined", reason="spam"),
            _item("m1", "reply", text="Hi"),
            ["outcome", "reason", "text"],
        ),
    ],
)
def test_a_compared_message_says_which_parts_of_its_decision_changed(first, second, changed):
    state = compare_reports(
        [("v1.json", {"periods": [], "items": [first]}), ("v2.json", {"periods": [], "items": [second]})]
    )
    [row] = state["messages"]
    assert row["changed"] == changed


def test_a_compared_message_shows_the_customers_words():
    item = {**_item("m1", "reply", text="It ships."), "customer_text": "Where is order 1042?"}
    state = compare_reports([("v1.json", {"periods": [], "items": [item]})])
    assert state["messages"][0]["customer_text"] == "Where is order 1042?"


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


@pytest.mark.parametrize(
    ("deliveries", "kind", "text"),
    [
        (
            [Delivery(N, 1, 401, True)],
            "forged",
            "forged signature: answered 401, never queued (nothing to redrive)",
        ),
        ([Delivery(N, 1, 413)], "refused", "refused by the webhook: answered 413, never queued"),
        (
            [Delivery(N, 1, 503), Delivery(N, 2, None)],
            "refused",
            "refused by the webhook: answered 503, timeout, never queued",
        ),
        ([Delivery(N, 1, 200)], "pending", "no outcome yet (queued or retrying)"),
    ],
)
def test_a_request_the_webhook_never_queued_says_so(deliveries, kind, text):
    [way] = notification_ways([], deliveries)
    assert (way["outcome"]["kind"], way["outcome"]["text"]) == (kind, text)


def test_roles_agent_person_customer_and_draft():
    ours = mail("r2", "t1", "a@x", "ann@example.com", "Re: Hi", "answer", metadata={"key1": "intent-1"})
    threads = conversations([*MAILBOX[:2], (2.5, ours)], [], ["a@x"])
    assert [(m["id"], m["role"]) for m in threads[0]["messages"]] == [
        ("m1", "customer"),
        ("r1", "person"),
        ("r2", "agent"),
    ]


TRACEBACK = """Traceback (most recent call last):
  File "/repo/layers/replyonce/replyonce/shell/replier.py", line 386, in call
    result["outcome"] = self._agent(conversation)
  File "/home/me/agents/my_agent.py", line 12, in reply
    return lookup(conversation)
  File "/home/me/agents/my_agent.py", line 4, in lookup
    return orders["9"]
  File "/repo/.venv/lib/python3.13/site-packages/requests/api.py", line 73, in get
    return request("get", url, params=params, **kwargs)
KeyError: '9'
"""


def test_a_notifications_way_in_time_order_with_the_agents_traceback():
    failed = replier(
        "the agent failed; the record will be retried",
        detail="KeyError: '9'",
        traceback=TRACEBACK,
        timestamp="2026-12-06 08:48:19,250+0000",
    )
    records = [
        {**queued(), "timestamp": "2026-12-06 08:48:18,900+0000"},
        {**replier("next step", step="AskAgent"), "timestamp": "2026-12-06 08:48:19,000+0000"},
        failed,
        {**BUSY, "reason": "agent_failed", "retry_in_seconds": 1, "receives": 1,
         "timestamp": "2026-12-06 08:48:19,260+0000"},
        {**LETTER, "detail": "failed 8 times", "timestamp": "2026-12-06T08:48:30.000+00:00"},
    ]  # fmt: skip
    delivered = Delivery(N, 1, 200, at=1796546898.5)  # 2026-12-06 08:48:18.500 UTC
    [way] = notification_ways(records, [delivered])
    assert [(step["at"], step["what"]) for step in way["timeline"]] == [
        ("08:48:18.500", "delivered: the webhook answered 200"),
        ("08:48:18.900", "queued by the webhook"),
        ("08:48:19.000", "agent asked"),
        ("08:48:19.250", "agent raised KeyError: '9' (my_agent.py:4 in lookup) after 0.250 s"),
        ("08:48:19.260", "deferred: agent_failed, back in 1 s, receive 1"),
        ("08:48:30.000", "dead-lettered by SQS: failed 8 times"),
    ]
    # The innermost frame of the person's code: not the layer's, not an installed package's.
    failure = way["agent_failure"]
    assert (failure["where"], failure["code"], failure["file"]) == (
        "my_agent.py:4 in lookup",
        'return orders["9"]',
        "/home/me/agents/my_agent.py",
    )
    assert failure["traceback"] == TRACEBACK
    assert way["outcome"]["command"] == REDRIVE


def test_a_way_shows_its_messages_sender_subject_and_first_line():
    mailbox = [
        (1.0, mail("m1", "t1", "ann@example.com", "a@x", "Order 12", "<p></p><p>Where is it?</p><p>Ann</p>"))
    ]
    [way] = notification_ways([queued(), SENT], [Delivery(N, 1, 200)], mailbox)
    assert way["message"] == {"from": "ann@example.com", "subject": "Order 12", "first_line": "Where is it?"}
    [unknown] = notification_ways([queued()], [Delivery(N, 1, 200)], [])
    assert unknown["message"] is None


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
