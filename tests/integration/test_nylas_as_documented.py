"""Exactly once against the Nylas the documentation describes, and nobody can aim the agent.

Each test is one way the documented Nylas (and an attacker) broke the replier:
a ``504`` after the email went out, a ``202`` that is queued not sent, a
``metadata_pair`` search that lags or fails, our own tables lost, one email
to two agents, an account that cannot send, a header Nylas refuses, a
``Reply-To`` aimed at strangers, machine senders, junk, a burst longer than
a page. Every one runs the real handler against moto and the Nylas emulator's
documented modes (``devstack/nylas/modes.py``), and counts at the emulator.

Machine senders recognised by their address's pattern, an ``Auto-Submitted: no`` with a comment, and
whom the reply is addressed to are decisions, run on the in-memory ports
(``tests/unit/test_replier_decisions.py``).
"""

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from devstack.nylas import Fault
from functions.replier import app
from tests.replier_harness import (
    SEND_PATH,
    deferrals,
    inbound,
    metrics_emitted,
    notification,
    ping_pong,
    skip_reasons,
    with_tuning,
)

SETTLED = 400  # Nylas seconds past mailbox_settle_seconds (300): the mailbox could show a reply by now


def as_nylas_sends_it(message: dict, **kwargs) -> dict:
    """The notification Nylas delivers by default: no ``headers`` in the payload."""
    return envelope({k: v for k, v in message.items() if k != "headers"}, **kwargs)


def answers(nylas) -> list[str]:
    return [s.payload["reply_to_message_id"] for s in nylas.sends]


def sends_at_nylas(nylas) -> int:
    return nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send")


# ---- what an answer proves -----------------------------------------------------------------------------


def test_a_504_after_the_email_went_out_is_not_sent_again(pipeline, nylas, log_records):
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.provider_error(504, sent=True))
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()  # 504: may have sent
    pipeline.drain()  # the retry reads the thread first: the reply is there, with its intent id
    assert len(nylas.sends) == 1
    assert sends_at_nylas(nylas) == 1
    assert pipeline.dead_letters() == []
    assert deferrals(log_records) == ["send_retry"]


@pytest.mark.parametrize("spelling", ["api", "bare"])
def test_a_409_for_another_payload_under_the_key_is_never_a_license_to_send_at_once(
    pipeline, nylas, spelling
):
    # 409 invalid_idempotent_request: "another payload used this key within the hour: that request may
    # have sent". Only the mailbox after the settle time decides; here it shows nothing, so the next key.
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.idempotency_error("invalid", spelling=spelling))
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    assert nylas.sends == []
    pipeline.poller().poll_once()  # before the settle time: no new key, no send
    assert sends_at_nylas(nylas) == 1
    nylas.advance_clock(SETTLED)
    pipeline.drain()
    assert len(nylas.sends) == 1


def test_the_reply_is_recognised_in_the_thread_listing_when_metadata_search_lags(pipeline, nylas):
    # The answer to the send is lost and the key's hour passes; metadata_pair does not find the reply
    # yet (Nylas documents no indexing delay), but the thread listing shows it with its intent id.
    nylas.modes.metadata_search_lag_seconds = 10**6
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.lose_response())
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    nylas.advance_clock(2 * 3600)
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert sends_at_nylas(nylas) == 1


def test_a_failing_search_is_unknown_and_does_not_jam_the_thread(pipeline, nylas, log_records, tuning):
    # The first reply's outcome is unknown and the search that would tell answers 400: that reply
    # waits (never "not sent"), while the customer's next message on the thread gets its own reply.
    nylas.modes.metadata_search_failure = 400
    first = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.provider_error(504))  # cached under the key, not sent
    pipeline.deliver(as_nylas_sends_it(first))
    pipeline.poller().poll_once()
    pipeline.poller().poll_once()
    nylas.advance_clock(SETTLED)
    pipeline.poller().poll_once()  # search fails: unknown
    assert "search_failed" in deferrals(log_records)
    # From here its retries back off (by a second: the suite's are immediate), as deployed, so it
    # does not take every batch of one ahead of the customer's next message.
    with_tuning(tuning, retry_base_seconds=1, retry_max_seconds=1)
    second = inbound(nylas, reply_to_message_id=first["id"], subject="Anyone there?")
    pipeline.deliver(as_nylas_sends_it(second))
    pipeline.poller().poll_once()  # the first: the search fails again, back in a while
    pipeline.poller().poll_once()  # the second
    assert second["id"] in answers(nylas)
    assert first["id"] not in answers(nylas)  # still unknown: not sent again blindly
    nylas.modes.metadata_search_failure = None
    pipeline.poller().poll_once(wait_seconds=5)  # as soon as the first is back: the search tells
    assert sorted(answers(nylas)) == sorted([first["id"], second["id"]])


def test_our_tables_lost_after_a_reply_send_nothing_for_a_redelivery(pipeline, nylas, replier):
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    # A point-in-time restore from before the reply, past the key's hour: both tables forget.
    dynamodb = boto3.client("dynamodb")
    for table in (replier.tables["StateTable"], replier.tables["IdempotencyTable"]):
        for item in dynamodb.scan(TableName=table)["Items"]:
            key = {"pk": item["pk"]} if "pk" in item else {"id": item["id"]}
            dynamodb.delete_item(TableName=table, Key=key)
    nylas.advance_clock(2 * 3600)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert sends_at_nylas(nylas) == 1


# ---- queued sends --------------------------------------------------------------------------------------


@pytest.fixture
def webhook_notifications(nylas, pipeline):
    """Nylas' send-outcome notifications reach the queue, as a webhook subscribed to them does."""
    nylas.on_notification = lambda trigger, data: pipeline.deliver(notification(trigger, data))
    yield
    nylas.on_notification = None


def test_a_queued_reply_is_pending_until_nylas_says_it_went_out(
    pipeline, nylas, webhook_notifications, replier
):
    nylas.modes.send_queue = True
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert nylas.sends == []
    assert ledger_status(replier, message["id"]) == "queued"
    pipeline.deliver(as_nylas_sends_it(message))  # a redelivery while queued: nothing sent again
    pipeline.drain()
    nylas.release_queued()
    pipeline.drain()  # message.delivered
    assert len(nylas.sends) == 1
    assert ledger_status(replier, message["id"]) == "replied"


def test_a_queued_reply_that_fails_goes_out_again_once(pipeline, nylas, webhook_notifications, log_records):
    nylas.modes.send_queue = True
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    nylas.release_queued(fail=True)
    pipeline.drain()  # message.send_failed: re-opened, sent again (queued again)
    assert len(nylas.queued_sends) == 1
    nylas.release_queued()
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert answers(nylas) == [message["id"]]


def test_a_queued_reply_nothing_confirms_is_reconciled_through_the_mailbox(pipeline, nylas, replier):
    # No webhook for message.delivered / send_failed: our own reconcile asks the mailbox.
    nylas.modes.send_queue = True
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()  # 202: queued; the reconcile is scheduled
    nylas.release_queued()  # it went out; nobody told us
    nylas.advance_clock(700)  # past pending_confirm_seconds
    pipeline.drain()  # the reconcile task (a delayed message; delays are 0 in tests)
    assert len(nylas.sends) == 1
    assert ledger_status(replier, message["id"]) == "replied"


def test_a_budget_filled_by_a_queued_reply_that_fails_still_answers_the_thread(
    pipeline, nylas, monkeypatch, webhook_notifications, log_records, replier
):
    # The thread's budget is one reply an hour, and that one is queued (202), not sent. A follow-up
    # must wait for it to settle, not be skipped for a budget nobody spent: the queued reply fails
    # twice (message.send_failed), so it never went out, and the follow-up is answered after all.
    monkeypatch.setenv("REPLY_BUDGET_PER_HOUR", "1")
    app.consumer.cache_clear()
    nylas.modes.send_queue = True
    first = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(first))
    poller = pipeline.poller()
    poller.poll_once()  # 202: the first reply is queued
    follow_up = inbound(nylas, reply_to_message_id=first["id"], subject="Re: Where is my order?")
    pipeline.deliver(as_nylas_sends_it(follow_up))
    poller.poll_once()  # the follow-up waits; the first record waits for its reply to settle
    assert "reply_pending" in deferrals(log_records)
    assert skip_reasons(log_records) == []
    for _ in range(2):  # Nylas fails the queued reply, then the one sent again in its place
        nylas.release_queued(fail=True)
        poller.poll_once()
    assert ledger_status(replier, first["id"]) == "failed"
    nylas.modes.send_queue = False
    pipeline.drain()
    assert len(nylas.failed_sends) == 2
    [sent] = nylas.sends  # the one email the customer gets, and it answers the follow-up
    assert sent.payload["reply_to_message_id"] == follow_up["id"]
    assert "reply_budget_exhausted" not in skip_reasons(log_records)
    assert pipeline.dead_letters() == []


def ledger_status(replier, message_id: str) -> str:
    from replyonce.adapters.state_items import message_key

    item = (
        boto3.client("dynamodb")
        .get_item(
            TableName=replier.tables["StateTable"], Key={"pk": {"S": message_key(AGENT_GRANT_ID, message_id)}}
        )
        .get("Item")
    )
    return item["status"]["S"] if item else ""


# ---- the account, and headers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "shape"),
    [
        ("daily_quota", "429"),
        ("daily_quota", "403"),
        ("monthly_quota", "403"),
        ("sending_paused", "403"),
        ("sending_paused", "forbidden"),
        ("sending_paused", "400"),
        ("outbound_block", "403"),
    ],
)
def test_an_account_that_cannot_send_keeps_the_reply_and_sends_it_later(
    pipeline, nylas, log_records, replier, limit, shape, capsys
):
    nylas.modes.update({"account_limit": limit, "account_limit_shape": shape})
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    assert nylas.sends == []
    assert deferrals(log_records)[-1] == "account_limited"
    assert ledger_status(replier, message["id"]) == ""  # never failed for good
    assert "send_rejected" not in skip_reasons(log_records)
    counted = [name for name, _ in metrics_emitted(capsys.readouterr().out)]
    assert "AccountLimited" in counted  # what the replies-refused alarm pages on
    assert "ReplyFailed" not in counted
    nylas.modes.account_limit = None  # the operator raised the quota / cleared the pause
    nylas.advance_clock(2 * 3600)
    pipeline.drain()
    assert answers(nylas) == [message["id"]]


@pytest.mark.parametrize(("limit", "shape"), [("daily_quota", "403"), ("sending_paused", "403")])
def test_a_reply_goes_out_once_the_account_limit_clears_within_the_keys_hour(
    pipeline, nylas, log_records, limit, shape
):
    # The limit's 403 is cached under the send's Idempotency-Key for an hour (idempotent-send guide:
    # errors are cached and replayed), and proves nothing went out under the key. Once the operator
    # clears the limit, the reply must go out at the next retry -- not replay the cached refusal until
    # the key's hour is over, each retry a receive towards the dead-letter queue.
    nylas.modes.update({"account_limit": limit, "account_limit_shape": shape})
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    assert deferrals(log_records) == ["account_limited"]
    nylas.modes.account_limit = None  # cleared: quota raised, pause lifted
    nylas.advance_clock(1000)  # past account_retry_seconds (900) and the settle time, within the hour
    pipeline.drain()
    assert answers(nylas) == [message["id"]]
    assert pipeline.dead_letters() == []


def test_a_refused_custom_header_never_fails_every_reply(pipeline, nylas, log_records, capsys):
    nylas.modes.custom_headers = "refuse"
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    [sent] = nylas.sends
    # Auto-Submitted went (not X-: refused); the X- marks stayed, so other robots still see a robot.
    assert [h["name"] for h in sent.payload["custom_headers"]] == ["X-Auto-Response-Suppress", "X-ReplyOnce"]
    assert sent.payload["metadata"]["key1"]  # still marked as ours
    assert "CustomHeadersRefused" in capsys.readouterr().out


def test_another_deployments_reply_whose_auto_submitted_was_dropped_is_not_answered(
    pipeline, nylas, log_records
):
    # A Graph-like provider keeps only X- headers: the reply goes out without Auto-Submitted. When it
    # reaches the mailbox of another ReplyOnce deployment (here: this one, as a stranger's mail), its
    # X- marks are what says "a robot": no answer, so the two never mail each other.
    nylas.modes.custom_headers = "drop"
    pipeline.deliver(as_nylas_sends_it(inbound(nylas)))
    pipeline.drain()
    [reply] = nylas.sent_messages()
    kept = {h["name"]: h["value"] for h in reply["headers"] if h["name"].lower().startswith(("x-", "auto-"))}
    assert kept == {"X-Auto-Response-Suppress": "All", "X-ReplyOnce": "auto-replied"}
    echoed = inbound(
        nylas,
        from_email="support@other-company.example",
        subject=reply["subject"],
        headers=[h for h in reply["headers"] if h["name"].lower().startswith("x-")],
    )
    pipeline.deliver(as_nylas_sends_it(echoed))
    pipeline.drain()
    assert len(nylas.sends) == 1
    [skip] = [r for r in log_records() if r.get("message") == "notification skipped"]
    assert (skip["reason"], skip["sign"]) == ("auto_submitted", "replyonce_mark")


def test_a_robot_that_honours_no_mark_gets_two_answers_not_a_loop(pipeline, nylas, monkeypatch, log_records):
    # The other side answers every email at once and carries no automatic mark (a responder that honours
    # none, or a provider that strips every custom header): the hourly budget alone would pace a loop.
    monkeypatch.setenv("REPLY_BUDGET_PER_HOUR", "10")
    app.consumer.cache_clear()
    ping_pong(pipeline, nylas, "helpdesk@other-company.example", rounds=4, deliver=as_nylas_sends_it)
    assert len(nylas.sends) == 2  # max_automatic_exchanges: two, then a person's turn
    assert skip_reasons(log_records).count("exchange_limit") == 2


# ---- nobody can aim the agent --------------------------------------------------------------------------


def test_fifty_reply_to_addresses_on_gmail_get_one_email_to_the_sender(pipeline, nylas):
    strangers = [{"email": f"stranger{i}@gmail.com"} for i in range(50)]
    message = inbound(nylas, from_email="mallory@gmail.com", reply_to=strangers)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    [sent] = nylas.sends
    assert [r["email"] for r in sent.payload["to"]] == ["mallory@gmail.com"]


def test_one_address_draws_at_most_its_budget_across_threads(pipeline, nylas, monkeypatch, log_records):
    monkeypatch.setenv("REPLY_BUDGET_PER_RECIPIENT_PER_HOUR", "3")
    app.consumer.cache_clear()
    for n in range(5):
        pipeline.deliver(
            as_nylas_sends_it(inbound(nylas, from_email="mallory@gmail.com", subject=f"Subject {n}"))
        )
    pipeline.drain()
    assert len(nylas.sends) == 3
    assert skip_reasons(log_records).count("recipient_budget_exhausted") == 2


@pytest.mark.parametrize("folder", ["junk", "trash"])
def test_mail_filed_in_junk_or_trash_is_never_answered(pipeline, nylas, log_records, folder):
    pipeline.deliver(as_nylas_sends_it(inbound(nylas, folder=folder)))
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["junk_or_trash"]


SECOND_AGENT = ("grant-agent-0003", "sales@replyonce.example")


def test_one_email_to_two_agents_gets_one_reply(pipeline, nylas, monkeypatch, log_records):
    nylas.add_grant(*SECOND_AGENT, name="Sales")
    monkeypatch.setenv("AGENT_GRANT_IDS", f"{AGENT_GRANT_ID},{SECOND_AGENT[0]}")
    app.consumer.cache_clear()
    first = inbound(nylas, also_to=[SECOND_AGENT[0]])
    [(_, second)] = [(t, m) for t, m in nylas.mailbox(SECOND_AGENT[0]) if m["id"] != first["id"]]
    pipeline.deliver(as_nylas_sends_it(first))
    pipeline.deliver(as_nylas_sends_it(second))
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert skip_reasons(log_records).count("answered_by_other_agent") == 1


def test_a_burst_longer_than_a_page_gets_one_reply(pipeline, nylas):
    # On a thread whose item is in service (its first message answered, pending_confirm_seconds ago): a
    # brand-new thread item's burst would first wait that long (issue 48), its records out of sight.
    first = inbound(nylas, subject="Order 1042")
    pipeline.deliver(as_nylas_sends_it(first))
    pipeline.drain()
    nylas.advance_clock(700)
    burst = [inbound(nylas, reply_to_message_id=first["id"], subject=f"part {n}") for n in range(24)]
    for message in burst:
        pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    _, sent = nylas.sends
    assert sent.payload["reply_to_message_id"] == burst[-1]["id"]


def test_a_listing_ordered_by_date_still_answers_each_message_once(pipeline, nylas):
    # Nylas says "reverse chronological" without naming the key: by the sender's date, a back-dated
    # follow-up is listed below the reply it follows. It is still answered, once.
    nylas.modes.listing_order = "date"
    first = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(first))
    pipeline.drain()
    late = inbound(nylas, reply_to_message_id=first["id"], subject="Also", date=first["date"] - 3600)
    pipeline.deliver(as_nylas_sends_it(late))
    pipeline.drain()
    assert answers(nylas) == [first["id"], late["id"]]
