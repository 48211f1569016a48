"""The replier's decisions as pure functions: table-driven, no I/O, milliseconds.

Each table row is a situation real mail produces; the moto-and-emulator tests in
``test_replier.py`` check that the handler acts on these decisions.
"""

import pytest

from replyonce import decisions, filters
from replyonce.decisions import ReplyPlan, SendOutcome, Skip

AGENT = "support@acme.example"
OTHER_AGENT = "sales@acme.example"
OWN = frozenset({AGENT, OTHER_AGENT})


def msg(mid, sender="carol@customer.example", *, date=0, headers=None, reply_to=None, name="Carol"):
    message = {"id": mid, "from": [{"name": name, "email": sender}], "date": date}
    if headers is not None:
        message["headers"] = [{"name": k, "value": v} for k, v in headers.items()]
    if reply_to is not None:
        message["reply_to"] = reply_to
    return message


# ---- which message, which ones covered -------------------------------------------------------------

# Threads are listed newest arrival first; dates are what senders claim and are deliberately wrong.
PLANS = [
    pytest.param("m1", [msg("m1")], (), ("m1", ("m1",)), id="single message"),
    pytest.param(
        "m1",
        [msg("m2"), msg("m1")],
        (),
        ("m2", ("m2", "m1")),
        id="burst: one reply to the newest covers both",
    ),
    pytest.param(
        "m2",
        [msg("m2", date=100), msg("r1", AGENT, date=5_000), msg("m1", date=4_000)],
        {"m1"},
        ("m2", ("m2",)),
        id="back-dated follow-up after our reply is answered, not skipped by date",
    ),
    pytest.param(
        "m3",
        [msg("m3", date=1_000), msg("m2", date=9_999_999_999), msg("r1", AGENT)],
        {"m2"},
        ("m3", ("m3",)),
        id="future-dated message already covered does not take later replies",
    ),
    pytest.param(
        "m2",
        [msg("m2", date=50), msg("m1", date=50)],
        (),
        ("m2", ("m2", "m1")),
        id="equal dates: listing order decides",
    ),
    pytest.param(
        "m2",
        [msg("m2", date="yesterday"), msg("m1", date=None)],
        (),
        ("m2", ("m2", "m1")),
        id="malformed dates change nothing",
    ),
    pytest.param(
        "m2",
        [msg("m2"), {"from": [{"email": "x@customer.example"}]}, msg("m1")],
        (),
        ("m2", ("m2", "m1")),
        id="a listed message without id is ignored",
    ),
    pytest.param(
        "m2",
        [msg("m2"), msg("ooo", headers={"Auto-Submitted": "auto-replied"}), msg("m1")],
        (),
        ("m2", ("m2", "m1")),
        id="an out-of-office in the burst is neither target nor covered",
    ),
    pytest.param(
        "m1",
        [msg("t1", OTHER_AGENT), msg("m1")],
        (),
        ("m1", ("m1",)),
        id="another agent grant's newer message is own mail",
    ),
    pytest.param("m1", [msg("m1")], {"m1"}, "already_replied", id="covered by an earlier reply"),
    pytest.param(
        "m1", [msg("m1", headers={"Precedence": "bulk"})], (), "bulk_mail", id="headers from the read decide"
    ),
    pytest.param(
        "m1",
        [msg("m1", headers={"Auto-Submitted": "auto-replied"})],
        (),
        "auto_submitted",
        id="another agent's reply carries Auto-Submitted",
    ),
    pytest.param("m1", [msg("m1", AGENT)], (), "own_outbound", id="own mail"),
    pytest.param(
        "m1", [msg("m1", "noreply@shop.example")], (), "automated_sender", id="no-reply sender, no headers"
    ),
]


@pytest.mark.parametrize(("trigger", "thread", "answered", "expected"), PLANS)
def test_plan_reply(trigger, thread, answered, expected):
    plan = decisions.plan_reply(trigger, thread, answered, OWN)
    if isinstance(expected, str):
        assert plan == Skip(expected)
    else:
        target, covered = expected
        assert isinstance(plan, ReplyPlan)
        assert (plan.target["id"], plan.covered) == (target, covered)


def test_plan_reply_refuses_a_trigger_that_was_not_read():
    with pytest.raises(ValueError, match="not among the messages read"):
        decisions.plan_reply("m9", [msg("m1")], (), OWN)


# ---- to whom -----------------------------------------------------------------------------------------

RECIPIENTS = [
    pytest.param(msg("m", "ann@x.example"), (), ("ann@x.example",), id="From when there is no Reply-To"),
    pytest.param(
        msg("m", "ann@x.example", reply_to=[{"email": "team@x.example"}]),
        (),
        ("team@x.example",),
        id="Reply-To in the sender's domain",
    ),
    pytest.param(
        msg("m", "ann@x.example", reply_to=[{"email": "victim@elsewhere.example"}]),
        (),
        ("ann@x.example",),
        id="Reply-To to a third party is ignored",
    ),
    pytest.param(
        msg("m", "form@site.example", reply_to=[{"email": "buyer@gmail.example", "name": "Buyer"}]),
        ("form@site.example",),
        ("buyer@gmail.example",),
        id="trusted contact form: its Reply-To is the customer",
    ),
    pytest.param(
        msg("m", "ann@acme.example", reply_to=[{"email": AGENT}]),
        (),
        ("ann@acme.example",),
        id="never an agent address: Reply-To at the agent falls back to From",
    ),
    pytest.param(msg("m", AGENT), (), (), id="an agent's own message has nobody to answer"),
    pytest.param({"id": "m", "from": [{"name": "no address"}]}, (), (), id="no address at all"),
    pytest.param(
        msg("m", "Ann@X.Example", reply_to=[{"email": "ann@x.example"}, {"email": "ANN@x.example"}]),
        (),
        ("ann@x.example",),
        id="case-insensitive and de-duplicated",
    ),
]


@pytest.mark.parametrize(("message", "trusted", "expected"), RECIPIENTS)
def test_reply_recipients(message, trusted, expected):
    recipients = decisions.reply_recipients(message, OWN, trusted)
    assert tuple(r["email"] for r in recipients) == expected


# ---- filters -----------------------------------------------------------------------------------------

HEADERS = [
    ({}, None),
    ({"Auto-Submitted": "no"}, None),
    ({"Auto-Submitted": "auto-replied"}, "auto_submitted"),
    ({"auto-submitted": "Auto-Generated; owner-email=x"}, "auto_submitted"),
    ({"Precedence": "bulk"}, "bulk_mail"),
    ({"Precedence": "list"}, "bulk_mail"),
    ({"Precedence": "junk"}, "bulk_mail"),
    ({"Precedence": "first-class"}, None),
    ({"List-Id": "<news.shop.example>"}, "bulk_mail"),
    ({"List-Unsubscribe": "<https://shop.example/u>"}, "bulk_mail"),
    ({"X-Autoreply": "yes"}, "auto_submitted"),
]


@pytest.mark.parametrize(("headers", "expected"), HEADERS)
def test_header_skip_reason(headers, expected):
    assert filters.header_skip_reason(msg("m", headers=headers)) == expected


def test_a_message_without_headers_passes_the_header_check():
    # Why the header check runs only on the thread read, which asks Nylas for headers.
    assert filters.header_skip_reason(msg("m")) is None


@pytest.mark.parametrize(
    ("sender", "trusted", "expected"),
    [
        ("carol@customer.example", (), None),
        (AGENT, (), "own_outbound"),
        (OTHER_AGENT.upper(), (), "own_outbound"),
        ("no-reply@shop.example", (), "automated_sender"),
        ("MAILER-DAEMON@mx.example", (), "automated_sender"),
        ("bounces+123@list.example", (), "automated_sender"),
        ("no-reply@site.example", ("no-reply@site.example",), None),
        ("", (), "no_sender"),
    ],
)
def test_sender_skip_reason(sender, trusted, expected):
    assert filters.sender_skip_reason(msg("m", sender), OWN, trusted) == expected


# ---- keys and what a send's answer means ----------------------------------------------------------------


def test_idempotency_keys_are_pinned():
    # Known values: a change here re-opens the fence of every send still inside its hour.
    assert decisions.idempotency_key("grant-1", "msg-1") == "57a736ba-5b75-5552-85aa-123dc98cacc5"
    assert decisions.idempotency_key("grant-1", "msg-1", 1) == "d8e79aec-f1aa-5ecd-b3f0-6e63d6a86399"
    assert decisions.idempotency_key("grant-1", "msg-2") == "71b93d3a-a367-52de-8df1-15960497fcb6"
    assert decisions.idempotency_key("grant-2", "msg-1") == "eb7ed679-41d6-50cd-b4d8-c08c3cd4dcc4"


SENDS = [
    (None, "", False, SendOutcome.RETRY_SAME_KEY),  # timeout, connection lost
    (200, "", False, SendOutcome.SENT),
    (202, "", False, SendOutcome.SENT),  # Agent Account queueing
    (200, "", True, SendOutcome.SENT),  # replay of an earlier success
    (503, "api_error", False, SendOutcome.RETRY_SAME_KEY),  # Nylas 5xx: same key
    (503, "api_error", True, SendOutcome.RETRY_NEXT_KEY),  # the cached error again: move on
    (504, "provider_error", False, SendOutcome.RETRY_NEXT_KEY),  # provider error: new key
    (429, "rate_limit_error", False, SendOutcome.RETRY_SAME_KEY),
    (401, "unauthorized", False, SendOutcome.RETRY_SAME_KEY),  # stale API key during a rotation
    (409, "api.concurrent_idempotent_request", False, SendOutcome.RETRY_SAME_KEY),
    (409, "api.invalid_idempotent_request", False, SendOutcome.RETRY_NEXT_KEY),  # never evidence of a send
    (400, "invalid_request_error", False, SendOutcome.REJECTED),
    (403, "insufficient_scopes", True, SendOutcome.REJECTED),
    (404, "not_found_error", False, SendOutcome.REJECTED),
]


@pytest.mark.parametrize(("status", "error_type", "replayed", "expected"), SENDS)
def test_classify_send(status, error_type, replayed, expected):
    assert decisions.classify_send(status, error_type, replayed=replayed) is expected


# ---- the loop guard ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "visible", "now", "expected"),
    [
        ([], [], 10_000, False),
        ([9_000, 9_500], [], 10_000, False),
        ([7_000, 9_000, 9_500], [], 10_000, True),
        ([6_399, 9_000, 9_500], [], 10_000, False),  # one just outside the hour
        ([], [8_000, 9_000, 9_999], 10_000, True),  # replies Nylas shows that were never recorded
        ([9_000], [9_000, 9_500], 10_000, False),  # the same replies seen twice count once
    ],
)
def test_loop_guard(recorded, visible, now, expected):
    assert decisions.loop_guard_exhausted(recorded, visible, now=now, window=3600, budget=3) is expected
