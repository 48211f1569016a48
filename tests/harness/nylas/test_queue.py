"""Contract: the Agent Account send queue -- ``202 Accepted`` is not a send.

Sources: https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/ (the
``202`` body is the message object without ``headers``; queued mail goes out within seconds, up to
90 s, or ``message.send_failed`` fires and it never goes out),
https://developer.nylas.com/docs/reference/notifications/agent-accounts/message-delivered/ and
https://developer.nylas.com/docs/reference/notifications/messages/message-send_failed/ (the
notifications' ``data``).
"""

import threading

import pytest

from devstack.nylas import Fault
from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    get,
    inbound,
    list_messages,
    reply_to,
    send,
)


@pytest.fixture
def notified(nylas) -> list[tuple[str, dict]]:
    seen: list[tuple[str, dict]] = []
    nylas.on_notification = lambda trigger, data: seen.append((trigger, data))
    return seen


@pytest.fixture
def created(nylas) -> list[dict]:
    seen: list[dict] = []
    nylas.on_message_created = seen.append
    return seen


def queued_reply(nylas, key: str = "k", **extra):
    nylas.modes.send_queue = True
    message = inbound(nylas)
    answer = send(nylas, {**reply_to(message), "metadata": {"key1": "intent-1"}, **extra}, key=key)
    return message, answer


def test_a_queued_send_answers_202_without_headers_and_is_not_in_the_mailbox(nylas, created):
    message, answer = queued_reply(nylas)

    assert answer.status_code == 202
    body = answer.json()
    assert body["grant_id"] == GRANT
    data = body["data"]
    assert "headers" not in data
    assert (data["thread_id"], data["reply_to_message_id"]) == (message["thread_id"], message["id"])
    assert nylas.sends == []
    assert [r.message["id"] for r in nylas.queued_sends] == [data["id"]]
    assert get(nylas, f"/v3/grants/{GRANT}/messages/{data['id']}").status_code == 404
    assert [m["id"] for m in list_messages(nylas, thread_id=message["thread_id"]).json()["data"]] == [
        message["id"]
    ]
    assert [m["id"] for m in created] == [message["id"]]  # no message.created for the send yet


def test_a_replay_of_the_key_answers_the_cached_202_and_queues_nothing_more(nylas):
    """Queued sends count against the key like a 200."""
    message, first = queued_reply(nylas)
    replay = send(nylas, {**reply_to(message), "metadata": {"key1": "intent-1"}}, key="k")

    assert replay.status_code == 202
    assert replay.headers["Idempotent-Response"] == "true"
    assert replay.content == first.content
    assert len(nylas.queued_sends) == 1


def test_a_released_send_goes_out_with_message_created_and_message_delivered(nylas, created, notified, clock):
    message, answer = queued_reply(nylas)
    sent_id = answer.json()["data"]["id"]
    clock.advance(5)

    assert nylas.release_queued() == [sent_id]

    [record] = nylas.sends
    assert (record.message["id"], record.idempotency_key, record.message["folders"]) == (
        sent_id,
        "k",
        ["sent"],
    )
    stored = get(nylas, f"/v3/grants/{GRANT}/messages/{sent_id}").json()["data"]
    assert stored["thread_id"] == message["thread_id"]
    assert created[-1]["id"] == sent_id
    [(trigger, data)] = notified
    assert trigger == "message.delivered"
    assert data == {
        "application_id": "app-replyonce-local",
        "grant_id": GRANT,
        "object": {
            "message": {
                "id": sent_id,
                "subject": "Re: Order 42",
                "from": AGENT_EMAIL,
                "to": [CUSTOMER],
                "sent_at": int(clock.now),
                "metadata": {"key1": "intent-1"},
            },
            "delivered": {"delivered_at": int(clock.now), "recipients": [CUSTOMER]},
        },
    }
    assert nylas.queued_sends == []


def test_a_failed_queued_send_fires_message_send_failed_and_never_reaches_the_mailbox(
    nylas, created, notified
):
    message, answer = queued_reply(nylas)
    data = answer.json()["data"]

    nylas.release_queued(fail=True, reason="Recipient server refused")

    assert nylas.sends == []
    assert [r.message["id"] for r in nylas.failed_sends] == [data["id"]]
    assert get(nylas, f"/v3/grants/{GRANT}/messages/{data['id']}").status_code == 404
    assert len(created) == 1  # only the inbound message
    [(trigger, payload)] = notified
    assert trigger == "message.send_failed"
    assert set(payload) == {"application_id", "object"}
    failed = payload["object"]
    assert (failed["grant_id"], failed["reason"]) == (GRANT, "Recipient server refused")
    assert set(failed["error"]) == {"type", "message", "status_code", "provider_error"}
    assert failed["error"]["type"] == "api.provider_error"
    assert failed["object"]["id"] == data["id"]
    assert failed["object"]["object"] == "message"
    assert failed["object"]["metadata"] == {"key1": "intent-1"}
    assert failed["object"]["thread_id"] == message["thread_id"]
    assert "headers" not in failed["object"]


def test_release_takes_chosen_messages_and_a_per_message_policy(nylas, notified):
    nylas.modes.send_queue = True
    message = inbound(nylas)
    ids = [
        send(nylas, reply_to(message, body=f"reply {i}"), key=f"k{i}").json()["data"]["id"] for i in range(3)
    ]

    assert nylas.release_queued([ids[1]]) == [ids[1]]
    with pytest.raises(KeyError, match="not queued"):
        nylas.release_queued([ids[1]])
    released = nylas.release_queued(fail=lambda m: m["body"] == "reply 2")

    assert released == [ids[0], ids[2]]
    assert [trigger for trigger, _ in notified] == [
        "message.delivered",
        "message.delivered",
        "message.send_failed",
    ]
    assert [r.message["id"] for r in nylas.sends] == [ids[1], ids[0]]


def test_automatic_release_sends_after_real_seconds_and_fails_a_seeded_fraction(nylas):
    """``modes.queue_release_after_seconds`` / ``queue_fail_fraction`` / ``queue_seed`` (local stack)."""
    done = threading.Event()
    outcomes: list[str] = []

    def record(trigger: str, data: dict) -> None:
        outcomes.append(trigger)
        if len(outcomes) == 10:
            done.set()

    nylas.on_notification = record
    nylas.modes.update({"send_queue": True, "queue_release_after_seconds": 0.05, "queue_fail_fraction": 0.5})
    for i in range(10):
        assert send(nylas, {"to": [{"email": CUSTOMER}], "body": f"{i}"}).status_code == 202

    assert done.wait(5)
    failed = [r.payload["body"] for r in nylas.failed_sends]
    assert 0 < len(failed) < 10
    assert len(nylas.sends) + len(failed) == 10
    nylas.reset()  # the same seed fails the same sends
    nylas.on_notification = record
    outcomes.clear()
    done.clear()
    nylas.add_grant(GRANT, AGENT_EMAIL)
    nylas.modes.update({"send_queue": True, "queue_release_after_seconds": 0.05, "queue_fail_fraction": 0.5})
    for i in range(10):
        send(nylas, {"to": [{"email": CUSTOMER}], "body": f"{i}"})
    assert done.wait(5)
    assert sorted(r.payload["body"] for r in nylas.failed_sends) == sorted(failed)


def test_reset_drops_queued_sends_and_their_timers(nylas):
    nylas.modes.update({"send_queue": True, "queue_release_after_seconds": 0.2})
    send(nylas, {"to": [{"email": CUSTOMER}]})

    nylas.reset()
    threading.Event().wait(0.4)

    assert nylas.queued_sends == nylas.sends == []


def test_send_accepts_with_202_is_the_send_queue_under_its_old_name(nylas):
    nylas.send_accepts_with_202 = True

    assert nylas.modes.send_queue is True
    assert send(nylas, {"to": [{"email": CUSTOMER}]}).status_code == 202


def test_provider_error_sent_true_goes_out_at_once_even_when_sends_queue(nylas):
    nylas.modes.send_queue = True
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(sent=True))

    assert send(nylas, {"to": [{"email": CUSTOMER}]}, key="k").status_code == 504

    assert len(nylas.sends) == 1
    assert nylas.queued_sends == []
