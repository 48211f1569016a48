"""Which messages one reply answers (replyonce.rules.plan): bursts, coverage, the loop guard."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.mail import read_message, read_messages
from replyonce.reasons import SkipReason
from replyonce.rules.coverage import reply_metadata
from replyonce.rules.plan import (
    Burst,
    automatic_exchanges,
    loop_guard_exhausted,
    needs_another_page,
    newcomers,
    plan_burst,
)

AGENT = "support@acme.example"


def msg(
    mid, sender="alice@example.com", machine=False, *, person=False, date=0, headers=(), to=None, covers=()
):
    """A listed message; one from the agent's address is ReplyOnce's reply (its intent id in the
    metadata, and the messages it ``covers``) unless ``person``: a colleague writing from the shared
    mailbox."""
    message = {"id": mid, "from": [{"email": sender}], "date": date}
    if sender == AGENT:
        message["to"] = [{"email": to or "alice@example.com"}]
        # ReplyOnce's reply carries its intent id; a colleague's message sits in the mailbox's Sent folder.
        metadata = (
            reply_metadata(f"intent-{mid}", covers[0], "t", covers) if covers else {"key1": f"intent-{mid}"}
        )
        message.update({"folders": ["sent"]} if person else {"metadata": metadata})
    headers = (*headers, ("Auto-Submitted", "auto-generated")) if machine else headers
    if headers:
        message["headers"] = [{"name": n, "value": v} for n, v in headers]
    return message


def not_to_answer(m):
    m = read_message(m)  # the property test asks of the listing it built too
    if m.sender == AGENT:
        return SkipReason.OWN_OUTBOUND
    return SkipReason.AUTO_SUBMITTED if m.header("auto-submitted") else None


def plan(trigger, listing, covered=()):
    return plan_burst(
        trigger,
        read_messages(listing),
        is_covered=lambda mid: mid in covered,
        reason_not_to_answer=not_to_answer,
        own_addresses={AGENT},
    )


def test_one_reply_to_the_newest_covers_the_whole_burst():
    listing = [msg("m3"), msg("m2"), msg("m1")]  # newest first
    burst = plan("m1", listing)
    assert isinstance(burst, Burst)
    assert burst.target.id == "m3"
    assert burst.covered == ("m3", "m2", "m1")


def test_a_message_covered_by_an_earlier_reply_is_not_answered_again():
    assert plan("m1", [msg("m2"), msg("m1")], covered={"m1"}) is SkipReason.ALREADY_REPLIED
    burst = plan("m2", [msg("m2"), msg("m1")], covered={"m1"})
    assert burst.covered == ("m2",)


def test_the_agents_own_mail_and_machines_are_neither_target_nor_covered():
    listing = [msg("r1", AGENT), msg("ooo", "bob@example.com", machine=True), msg("m1")]
    burst = plan("m1", listing)
    assert burst.covered == ("m1",)
    assert plan("ooo", listing) is SkipReason.AUTO_SUBMITTED


DAY = 24 * 3600
HOLD = 7 * DAY
NOW = 1_800_000_000


def person_plan(trigger, listing, *, hold=HOLD, now=NOW):
    return plan_burst(
        trigger,
        read_messages(listing),
        is_covered=lambda mid: False,
        reason_not_to_answer=not_to_answer,
        own_addresses={AGENT},
        now=now,
        person_hold_seconds=hold,
    )


@pytest.mark.parametrize(
    ("trigger", "listing", "hold", "expected"),
    [
        # A colleague answered m1 from the mailbox (their reply names it): m1 is answered, whatever our
        # state says.
        (
            "m1",
            [
                msg("p1", AGENT, person=True, date=NOW - 60, headers=[("In-Reply-To", "<m1@x>")]),
                msg("m1", headers=[("Message-ID", "<m1@x>")]),
            ],
            HOLD,
            SkipReason.ANSWERED_BY_PERSON,
        ),
        # Going live on an old thread: what is listed below the team's last answer to its sender, without
        # being named by it, may be answered or not (the order may be a back-dated date): a person is told.
        (
            "m1",
            [msg("p1", AGENT, person=True, date=NOW - 30 * 86400), msg("m2"), msg("m1")],
            HOLD,
            SkipReason.ANSWERED_BY_PERSON_UNCONFIRMED,
        ),
        # A colleague's forward to the warehouse answers nobody: the customer is answered.
        ("m1", [msg("p1", AGENT, person=True, to="warehouse@acme.example"), msg("m1")], HOLD, ("m1",)),
        # The mailbox's address on a message in the inbox (a forged From) answers nobody.
        ("m1", [{**msg("p1", AGENT, person=True), "folders": ["inbox"]}, msg("m1")], HOLD, ("m1",)),
        # The customer writes again after the colleague: the thread is the person's for the hold...
        (
            "m2",
            [msg("m2"), msg("p1", AGENT, person=True, date=NOW - 60), msg("m1")],
            HOLD,
            SkipReason.PERSON_HOLD,
        ),
        # ... and the agent's again once it is over, answering only what came after the person.
        ("m2", [msg("m2"), msg("p1", AGENT, person=True, date=NOW - HOLD - 1), msg("m1")], HOLD, ("m2",)),
        # A hold of 0 is off: only what the person answered is left alone.
        ("m2", [msg("m2"), msg("p1", AGENT, person=True, date=NOW - 60), msg("m1")], 0, ("m2",)),
        # The person's In-Reply-To names a message listed above it (a back-dated one, a listing by
        # date): answered too — the side that sends nothing twice.
        (
            "m3",
            [
                msg("m3", headers=[("Message-ID", "<m3@x>")]),
                msg("m2"),
                msg("p1", AGENT, person=True, date=NOW - HOLD - 5, headers=[("In-Reply-To", "<m3@x>")]),
            ],
            HOLD,
            SkipReason.ANSWERED_BY_PERSON,
        ),
        (
            "m2",
            [
                msg("m3", headers=[("Message-ID", "<m3@x>")]),
                msg("m2"),
                msg("p1", AGENT, person=True, date=NOW - HOLD - 5, headers=[("References", "<a@x> <m3@x>")]),
            ],
            HOLD,
            ("m2",),
        ),
        # ReplyOnce's own reply is no person: coverage decides, by its metadata (not by order).
        ("m1", [msg("r1", AGENT), msg("m1")], HOLD, ("m1",)),
    ],
)
def test_people_in_the_mailbox_count(trigger, listing, hold, expected):
    planned = person_plan(trigger, listing, hold=hold)
    if isinstance(expected, SkipReason):
        assert planned is expected
    else:
        assert isinstance(planned, Burst)
        assert planned.covered == expected


def test_a_target_nobody_may_be_mailed_at_falls_to_the_next():
    listing = [msg("m2", "a@x.example, b@y.example"), msg("m1")]
    burst = plan("m1", listing)
    assert burst.target.id == "m1"
    # m2's sender cannot be mailed: the reply does not cover it (never "answered" with nobody told).
    assert burst.covered == ("m1",)
    assert plan("m2", listing) is SkipReason.NO_RECIPIENT


def thread(*messages):
    """Messages with their recipients: each names the agent; ``cc`` as given."""
    return [{**m, "to": [{"email": AGENT}], "cc": [{"email": a} for a in m.pop("cc_", ())]} for m in messages]


@pytest.mark.parametrize(
    ("listing", "max_recipients", "trigger", "expected"),
    [
        # The customer wrote with a colleague in Cc; the colleague answered all before the agent read:
        # one reply, to both, covering both.
        (
            [msg("m2", "bob@example.com"), {**msg("m1"), "cc_": ["bob@example.com"]}],
            3,
            "m1",
            (("m2", "m1"), ["bob@example.com", "alice@example.com"]),
        ),
        # Past the cap, the other sender's message is not covered (it is handed off when it is the trigger).
        (
            [
                msg("m3", "carol@example.com"),
                msg("m2", "bob@example.com"),
                {**msg("m1"), "cc_": ["bob@example.com", "carol@example.com"]},
            ],
            1,
            "m2",
            SkipReason.SENDER_NOT_REACHED,
        ),
        # Someone the thread never named (a newcomer) is answered alone, and the customer alone too.
        ([msg("m2", "bob@example.com"), msg("m1")], 1, "m2", (("m2",), ["bob@example.com"])),
        ([msg("m2", "bob@example.com"), msg("m1")], 3, "m1", (("m1",), ["alice@example.com"])),
        # The same customer twice: one recipient, whatever the cap.
        ([msg("m2"), msg("m1")], 1, "m1", (("m2", "m1"), ["alice@example.com"])),
    ],
)
def test_everyone_who_asked_is_answered(listing, max_recipients, trigger, expected):
    planned = plan_burst(
        trigger,
        read_messages(thread(*listing)),
        is_covered=lambda mid: False,
        reason_not_to_answer=not_to_answer,
        own_addresses={AGENT},
        max_recipients=max_recipients,
    )
    if isinstance(expected, SkipReason):
        assert planned is expected
    else:
        assert (planned.covered, [r["email"] for r in planned.recipients]) == (expected[0], expected[1])


def test_the_trigger_must_have_been_read():
    with pytest.raises(ValueError, match="not among the messages read"):
        plan("m9", [msg("m1")])


def test_another_page_only_while_the_burst_may_go_on():
    assert needs_another_page(
        read_messages([msg("m2"), msg("m1")]), is_covered=lambda m: False, reason_not_to_answer=not_to_answer
    )
    assert not needs_another_page(
        read_messages([msg("r", AGENT), msg("m1")]),
        is_covered=lambda m: m == "m1",
        reason_not_to_answer=not_to_answer,
    )


@pytest.mark.parametrize(
    ("page", "covered", "trigger_seen", "another"),
    [
        # Every message on the page covered: the burst ends here, once the trigger was read.
        ([msg("r", AGENT), msg("m9")], {"m9"}, True, False),
        # The same page before the trigger was reached: a reply covering it is newer than it, so it may be
        # on a page not read yet (a redelivery of an old message after the state table was lost).
        ([msg("r", AGENT), msg("m9")], {"m9"}, False, True),
        ([msg("r", AGENT)], set(), False, True),
        ([msg("m2"), msg("m1")], set(), True, True),
    ],
)
def test_the_read_goes_on_until_the_trigger_is_reached_and_the_burst_ends(
    page, covered, trigger_seen, another
):
    got = needs_another_page(
        read_messages(page),
        is_covered=covered.__contains__,
        reason_not_to_answer=not_to_answer,
        trigger_seen=trigger_seen,
    )
    assert got is another


@pytest.mark.parametrize(
    ("recorded", "visible", "now", "exhausted"),
    [
        ([100, 200, 300], [], 1000, True),
        ([100, 200], [], 1000, False),
        ([], [900, 950, 990], 1000, True),  # replies our state forgot, visible in the thread
        ([100, 200, 300], [], 4000, False),  # an hour later the window is empty
        ([-5000, 100, 200, 300], [], 3701, False),  # the oldest just left the window
    ],
)
def test_loop_guard(recorded, visible, now, exhausted):
    assert loop_guard_exhausted(recorded, visible, now=now, window=3600, budget=3) is exhausted


listings = st.lists(
    st.tuples(st.sampled_from(["alice@example.com", "bob@example.com", AGENT, "a@x, b@y"]), st.booleans()),
    min_size=1,
    max_size=12,
)


@given(
    listing=listings, covered_mask=st.lists(st.booleans(), min_size=12, max_size=12), pick=st.integers(0, 11)
)
def test_properties_of_any_plan(listing, covered_mask, pick):
    messages = [msg(f"m{i}", sender, machine) for i, (sender, machine) in enumerate(listing)]
    covered = {m["id"] for m, c in zip(messages, covered_mask, strict=False) if c}
    trigger = messages[pick % len(messages)]["id"]
    planned = plan(trigger, messages, covered)
    if not isinstance(planned, Burst):
        return
    ids = planned.covered
    assert len(ids) == len(set(ids)), "a message covered twice"
    assert not set(ids) & covered, "an already-covered message covered again"
    assert trigger in ids
    eligible_uncovered = [m["id"] for m in messages if m["id"] not in covered and not_to_answer(m) is None]
    assert set(ids) <= set(eligible_uncovered), "only eligible uncovered messages are answered"
    reached = {r["email"] for r in planned.recipients}
    by_id = {m["id"]: m for m in messages}
    assert all(by_id[i]["from"][0]["email"] in reached for i in ids), "a covered message's sender got nothing"
    left_out = [i for i in eligible_uncovered if i not in ids]
    # The trigger's group: a newcomer's own messages, or everyone else's (a newcomer is answered alone).
    strangers = newcomers(read_messages(messages), {AGENT})
    sender = by_id[trigger]["from"][0]["email"]

    def in_group(m):
        if trigger in strangers:
            return m["id"] in strangers and m["from"][0]["email"] == sender
        return m["id"] not in strangers

    group = [m for m in messages if in_group(m)]
    assert all(i in [m["id"] for m in group] for i in ids), "a newcomer's message in another's burst"
    # A sender reached by the reply has each of their messages of the group covered by it.
    left_out = [i for i in left_out if i in [m["id"] for m in group]]
    assert all(by_id[i]["from"][0]["email"] not in reached for i in left_out), "a reached sender left out"
    mailable = [m for m in group if m["id"] in eligible_uncovered and "," not in m["from"][0]["email"]]
    assert planned.target.id == mailable[0]["id"], "the target is the newest mailable message of the burst"
    assert AGENT not in reached


@pytest.mark.parametrize(
    ("listing", "expected"),
    [
        # Newest first: two replies of ours to alice, each answered by her (dated after it), since anyone
        # from the mailbox wrote.
        (
            [
                msg("m3", date=40),
                msg("r2", AGENT, date=30, covers=("m2",)),
                msg("m2", date=20),
                msg("r1", AGENT, date=10, covers=("m1",)),
                msg("m1"),
            ],
            2,
        ),
        # A reply she has not answered (yet) is no exchange: what it covers came before it, whatever its date.
        (
            [
                msg("r2", AGENT, date=30, covers=("m2",)),
                msg("m2", date=20),
                msg("r1", AGENT, date=10, covers=("m1",)),
                msg("m1"),
            ],
            1,
        ),
        # ... even dated after it (her clock runs a minute ahead: the question "after" its own answer): r1 was
        # answered (by m2), r2 was not.
        (
            [
                msg("r2", AGENT, date=30, covers=("m2",)),
                msg("m2", date=90),
                msg("r1", AGENT, date=10, covers=("m1",)),
                msg("m1", date=70),
            ],
            1,
        ),
        # A robot's clock a few seconds slow dates its instant answer just before our reply: still one.
        (
            [
                msg("m3", date=38),
                msg("r2", AGENT, date=40, covers=("m2",)),
                msg("m2", date=18),
                msg("r1", AGENT, date=20, covers=("m1",)),
                msg("m1"),
            ],
            2,
        ),
        # A colleague wrote in between: only what came after counts.
        (
            [
                msg("m3", date=40),
                msg("r2", AGENT, date=30, covers=("m2",)),
                msg("m2", date=20),
                msg("p", AGENT, person=True, date=15),
                msg("r1", AGENT, date=10, covers=("m1",)),
                msg("m1"),
            ],
            1,
        ),
        # A reply of ours to someone else does not count for alice.
        (
            [
                msg("m3", date=40),
                msg("r2", AGENT, to="bob@example.com", date=30),
                msg("m2", date=20),
                msg("m1"),
            ],
            0,
        ),
        # Answered a day later each time: a conversation, not a loop (the window is 600 s).
        (
            [
                msg("m3", date=2 * DAY),
                msg("r2", AGENT, date=DAY, covers=("m2",)),
                msg("m2", date=DAY - 10),
                msg("r1", AGENT, date=10, covers=("m1",)),
                msg("m1"),
            ],
            0,
        ),
        # Not the listing's order but the dates (a listing by date puts a back-dated message anywhere).
        (
            [
                msg("r2", AGENT, date=30, covers=("m2",)),
                msg("m3", date=40),
                msg("r1", AGENT, date=10, covers=("m1",)),
                msg("m2", date=20),
                msg("m1"),
            ],
            2,
        ),
    ],
)
def test_automatic_exchanges_with_one_correspondent(listing, expected):
    assert (
        automatic_exchanges(
            read_messages(listing), "Alice@example.com", {AGENT}, window_seconds=600, now=10 * DAY
        )
        == expected
    )


def test_a_third_exchange_without_a_person_is_a_loop():
    listing = [msg("m3"), msg("r2", AGENT), msg("m2"), msg("r1", AGENT), msg("m1")]
    planned = plan_burst(
        "m3",
        read_messages(listing),
        is_covered=lambda mid: mid in {"m1", "m2"},
        reason_not_to_answer=not_to_answer,
        own_addresses={AGENT},
        max_automatic_exchanges=2,
    )
    assert planned is SkipReason.EXCHANGE_LIMIT


@pytest.mark.parametrize(
    ("listing", "trigger", "covered", "to", "hidden"),
    [
        # The 10,000-notification run of issue 40 (seed 41): the stranger back-dates their message, so a
        # listing by date puts it first, and our reply to the customer stands before the customer's own
        # first message. Counted as naming the customer, our reply made the customer no newcomer, nobody
        # was one, and the customer's follow-up was answered to both. Our own mail names nobody: the two
        # are apart, each reply to its own sender.
        (
            [
                msg("m1", date=23027),
                msg("m2", date=21177),
                msg("r1", AGENT, date=21177, covers=("m1",)),
                msg("s1", "stranger@elsewhere.example", date=21166),
            ],
            "m2",
            ("m2",),
            ["alice@example.com"],
            set(),
        ),
        (
            [
                msg("m1", date=23027),
                msg("m2", date=21177),
                msg("r1", AGENT, date=21177, covers=("m1",)),
                msg("s1", "stranger@elsewhere.example", date=21166),
            ],
            "s1",
            ("s1",),
            ["stranger@elsewhere.example"],
            {"m1", "m2", "r1"},
        ),
        # In arrival order: the stranger joins later, is answered alone, and the customer's reply is drafted
        # without the stranger's message.
        (
            [msg("s1", "stranger@elsewhere.example"), msg("m2"), msg("r1", AGENT, covers=("m1",)), msg("m1")],
            "m2",
            ("m2",),
            ["alice@example.com"],
            {"s1"},
        ),
    ],
)
def test_a_stranger_and_a_customer_are_answered_apart_in_any_listing_order(
    listing, trigger, covered, to, hidden
):
    planned = plan_burst(
        trigger,
        read_messages(listing),
        is_covered=lambda mid: mid == "m1",
        reason_not_to_answer=not_to_answer,
        own_addresses={AGENT},
        max_recipients=3,
    )
    assert planned.covered == covered
    assert [r["email"] for r in planned.recipients] == to
    hidden_ids = getattr(planned, "hidden", frozenset())
    listed = read_messages(listing)
    shown = planned.to_answer if planned.alone else [m for m in listed if m.id not in hidden_ids]
    assert {m.id for m in listed} - {m.id for m in shown} >= hidden
    # Nothing of the other party reaches the agent for this reply.
    other = "stranger@elsewhere.example" if to == ["alice@example.com"] else "alice@example.com"
    assert all(m.sender != other for m in shown)
