"""Invariant 7, end to end: no silent no for a person (issue 40).

Every message a person wrote ends in one of three ways the mailbox shows: the agent answered it, a
person of the mailbox answered it, or it was handed off (moved to ``Needs a person``, the reason
logged, ``HandedOff`` counted). Each test is one break of issue 40 where a person asked and nobody
answered and nobody was told, run against the real replier handler, moto and the Nylas emulator, and
judged from what a person would see: the emails at the emulator, the message's folder, the log and
the metric. Whom to answer (the rule of evidence) is ``tests/integration/test_evidence.py``.
"""

import pytest

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from ops.template import load_template
from tests.replier_harness import (
    HANDOFF_FOLDER,
    answer_for_a_team_mailbox,
    deferrals,
    folders_of,
    handed_off,
    inbound,
    metrics_emitted,
    skip_reasons,
    with_env,
)

DAY = 86_400
AGENT_SECONDS = 5  # how long the agent takes to answer
MAX_RECEIVES = load_template()["Resources"]["NotificationQueue"]["Properties"]["RedrivePolicy"][
    "maxReceiveCount"
]


def as_nylas_sends_it(message: dict) -> dict:
    """The notification Nylas delivers by default: no ``headers`` in the payload."""
    return envelope({k: v for k, v in message.items() if k != "headers"})


def counted(capsys) -> list[str]:
    return [name for name, _ in metrics_emitted(capsys.readouterr().out)]


def answered(nylas) -> list[str]:
    return [s.payload["reply_to_message_id"] for s in nylas.sends]


def one_thread_of_questions(
    pipeline, nylas, *, days: int, seconds_between: float, sender_clock_ahead: float = 0
) -> list[dict]:
    """A customer asks ``days`` questions on one thread, each in reply to the agent's last reply (or to
    their own last question when there is none), ``seconds_between`` after it. The agent takes a few
    seconds to answer (Nylas dates are whole seconds: a reply in the question's own second is dated
    with it); ``sender_clock_ahead``: the customer's clock is that far ahead (their ``Date``)."""
    questions: list[dict] = []
    for n in range(1, days + 1):
        ours = nylas.sent_messages(thread_id=questions[0]["thread_id"]) if questions else []
        parent = ours[-1]["id"] if ours else (questions[-1]["id"] if questions else None)
        questions.append(
            inbound(
                nylas,
                reply_to_message_id=parent,
                subject="Re: Order 1042" if parent else "Order 1042",
                body=f"<p>Question {n} about order 1042.</p>",
                date=nylas.now() + sender_clock_ahead,
            )
        )
        nylas.advance_clock(AGENT_SECONDS)
        pipeline.deliver(as_nylas_sends_it(questions[-1]))
        pipeline.drain()
        nylas.advance_clock(seconds_between)
    return questions


# ---- the exchange limit ----


def test_a_customer_who_asks_once_a_day_is_answered_every_day(pipeline, nylas, log_records):
    questions = one_thread_of_questions(pipeline, nylas, days=4, seconds_between=DAY)
    outcome = (skip_reasons(log_records), deferrals(log_records))
    assert answered(nylas) == [q["id"] for q in questions], outcome
    assert "exchange_limit" not in skip_reasons(log_records)


def test_a_customer_whose_clock_runs_ahead_who_asks_once_a_day_is_answered_every_day(
    pipeline, nylas, log_records
):
    questions = one_thread_of_questions(pipeline, nylas, days=4, seconds_between=DAY, sender_clock_ahead=60)
    assert answered(nylas) == [q["id"] for q in questions], skip_reasons(log_records)


def test_the_third_question_at_robot_speed_is_handed_off_not_dropped(
    pipeline, nylas, log_records, monkeypatch, capsys
):
    with_env(monkeypatch, REPLY_BUDGET_PER_HOUR="10")
    # Answered within seconds of each reply: an automatic exchange (max_automatic_exchanges, 2).
    questions = one_thread_of_questions(pipeline, nylas, days=3, seconds_between=5)
    assert answered(nylas) == [questions[0]["id"], questions[1]["id"]]
    third = questions[2]
    assert handed_off(log_records, "exchange_limit")
    assert folders_of(nylas, third["id"]) == [HANDOFF_FOLDER]
    assert "HandedOff" in counted(capsys)
    assert pipeline.dead_letters() == []


def test_in_review_mode_drafts_a_person_sent_are_a_persons_answers(pipeline, nylas, log_records, monkeypatch):
    # Review mode: every reply is a draft a person reads and sends. The customer answers each sent draft
    # within seconds; those were a person's answers, not automatic exchanges.
    with_env(monkeypatch, REPLY_MODE="review", REPLY_BUDGET_PER_HOUR="10")
    question = inbound(nylas, subject="Order 1042", body="<p>Question 1</p>")
    questions = [question]
    for n in range(2, 4):
        pipeline.deliver(as_nylas_sends_it(questions[-1]))
        pipeline.drain()
        assert len(nylas.drafts) == n - 1
        draft = nylas.drafts[-1].draft
        sent = nylas.person_sends_draft(AGENT_GRANT_ID, draft["id"])
        pipeline.deliver(as_nylas_sends_it(sent))  # its message.created
        nylas.advance_clock(5)
        questions.append(
            inbound(
                nylas, reply_to_message_id=sent["id"], subject="Re: Order 1042", body=f"<p>Question {n}</p>"
            )
        )
    pipeline.deliver(as_nylas_sends_it(questions[-1]))
    pipeline.drain()
    assert nylas.sends == []
    assert [d.payload["reply_to_message_id"] for d in nylas.drafts] == [q["id"] for q in questions]
    assert "exchange_limit" not in skip_reasons(log_records)


# ---- a person's draft that stays ----


@pytest.fixture
def team_mailbox(pipeline, nylas, monkeypatch):
    return answer_for_a_team_mailbox(nylas, monkeypatch)


def test_a_persons_draft_that_stays_hands_the_message_off_on_its_last_receive(
    pipeline, nylas, log_records, team_mailbox, capsys
):
    question = nylas.deliver_inbound(
        team_mailbox, from_email=CUSTOMER_EMAIL, subject="Invoice", body="<p>Where is my invoice?</p>"
    )
    # A colleague starts an answer and leaves it open (for hours): it never leaves the thread.
    nylas.person_drafts(team_mailbox, question["id"], "<p>Let me check…</p>")
    pipeline.deliver(as_nylas_sends_it(question))
    # Each receive is deferred (the queue's retries are immediate here); the record's receives run out.
    receives = 0
    while (result := pipeline.poller().poll_once()).received:
        receives += result.received
        assert receives <= MAX_RECEIVES
    assert receives == MAX_RECEIVES
    assert deferrals(log_records).count("person_drafting") == MAX_RECEIVES - 1
    assert nylas.sends == []
    assert handed_off(log_records, "person_drafting")
    assert folders_of(nylas, question["id"], team_mailbox) == [HANDOFF_FOLDER]
    assert "HandedOff" in counted(capsys)
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0


def test_a_persons_mail_a_forwarder_stamped_bulk_is_handed_off_not_dropped(
    pipeline, nylas, log_records, capsys
):
    # GoDaddy's forwarder stamps "Precedence: bulk" on the personal mail it passes on (django-mailbox's
    # fixtures). RFC 3834 §2: an automatic responder does not answer it; alone, it is no proof of a
    # machine, so a person sees the message. A newsletter's (List-Unsubscribe beside it) stays a skip.
    stamped = inbound(nylas, headers=[{"name": "Precedence", "value": "bulk"}])
    # List-Unsubscribe alone is one header a sender typed too (Drupal Inmail's person's test message).
    unsubscribe_only = inbound(
        nylas, headers=[{"name": "List-Unsubscribe", "value": "<mailto:u@lists.example>"}]
    )
    newsletter = inbound(
        nylas,
        from_email="news@shop.example",
        headers=[
            {"name": "Precedence", "value": "bulk"},
            {"name": "List-Unsubscribe", "value": "<https://shop.example/unsubscribe>"},
        ],
    )
    for message in (stamped, unsubscribe_only, newsletter):
        pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert nylas.sends == []
    assert handed_off(log_records, "bulk_unconfirmed")
    assert folders_of(nylas, stamped["id"]) == [HANDOFF_FOLDER]
    assert folders_of(nylas, unsubscribe_only["id"]) == [HANDOFF_FOLDER]
    assert folders_of(nylas, newsletter["id"]) != [HANDOFF_FOLDER]
    assert "bulk_mail" in skip_reasons(log_records)
    assert "HandedOff" in counted(capsys)
    assert pipeline.dead_letters() == []


def test_a_message_with_no_sender_address_is_handed_off_and_a_bounce_is_not(
    pipeline, nylas, log_records, capsys
):
    # A person's mail whose From the provider could not read (MimeKit's issue358: a bare "@" in the display
    # name leaves no address) cannot be answered, but nothing says it is a machine's: a person sees it. A
    # bounce's null path comes with its sign (Return-Path: <>) and stays a skip nobody is shown.
    unreadable = inbound(nylas, from_email="", from_name="jang.abcdef@xyzlinu")
    bounce = inbound(
        nylas,
        from_email="",
        from_name="MAILER-DAEMON",
        subject="Undelivered Mail Returned to Sender",
        headers=[{"name": "Return-Path", "value": "<>"}],
    )
    for message in (unreadable, bounce):
        pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert nylas.sends == []
    assert handed_off(log_records, "no_sender")
    assert folders_of(nylas, unreadable["id"]) == [HANDOFF_FOLDER]
    assert folders_of(nylas, bounce["id"]) != [HANDOFF_FOLDER]
    assert "auto_submitted" in skip_reasons(log_records)
    assert "HandedOff" in counted(capsys)
    assert pipeline.dead_letters() == []
