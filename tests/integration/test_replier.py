"""ReplierFunction: one email per inbound message, counted at the Nylas emulator.

Every test runs the real handler code against moto (resources from
template.yaml) and the Nylas emulator over loopback. Concurrency tests run
real threads, each with its own consumer — one per simulated Lambda
container — against the same servers.

The decisions these tests once also covered on the handler (machines, other grants, a message
updated, a second notification, a burst's newest message, the reply budget, a message gone) run on
the in-memory ports in ``tests/unit/test_replier_decisions.py``.
"""

import contextlib
import json
import threading
import time

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope, load_event, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault
from functions.replier import app
from replyonce.adapters.state_items import OUTBOX, message_key
from replyonce.keys import idempotency_key
from replyonce.reasons import DeferReason
from replyonce.shell.consumer import NotificationConsumer
from replyonce.state import thread_key
from tests.fakes import Clock
from tests.replier_harness import (
    SEND_PATH,
    container_recording_visibility,
    deferrals,
    grant_lookups,
    hold_lease,
    inbound,
    metrics_emitted,
    new_container,
    skip_reasons,
)


def wait_for(condition, timeout: float = 30.0) -> bool:
    """Whether ``condition()`` holds within ``timeout`` s: a wait on the emulator's work, not a verdict."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_one_notification_delivered_three_times_sends_one_reply(pipeline, nylas, log_records):
    message = inbound(nylas)
    notification = envelope(message)
    for _ in range(3):
        pipeline.deliver(notification)
        pipeline.drain()
    assert len(nylas.sends) == 1
    sent = nylas.sends[0]
    assert sent.payload["reply_to_message_id"] == message["id"]
    sender = message["from"][0]
    assert sent.payload["to"] == [{k: v for k, v in sender.items() if k in ("name", "email") and v}]
    assert sent.payload["subject"] == f"Re: {message['subject']}"
    assert skip_reasons(log_records) == ["duplicate_notification", "duplicate_notification"]


def test_same_notification_in_eight_concurrent_invocations_sends_one_reply(replier, nylas, sqs):
    message = inbound(nylas)
    notification = envelope(message)
    containers = [new_container() for _ in range(8)]
    event = {
        "Records": [
            load_event("replier-message-created.json")["Records"][0] | {"body": json.dumps(notification)}
        ]
    }
    start = threading.Barrier(8)
    results: list[dict] = [{}] * 8

    def invoke(index: int) -> None:
        start.wait()
        results[index] = containers[index].handle_batch(event, LocalLambdaContext("ReplierFunction"))

    threads = [threading.Thread(target=invoke, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # Losers of the race fail their record (in progress elsewhere) and SQS would redeliver it:
    # redeliver to every container until none fails.
    for _ in range(5):
        failing = [i for i, r in enumerate(results) if r.get("batchItemFailures")]
        if not failing:
            break
        for index in failing:
            results[index] = containers[index].handle_batch(event, LocalLambdaContext("ReplierFunction"))
    assert all(not r["batchItemFailures"] for r in results)
    assert len(nylas.sends) == 1


def test_agents_own_outbound_mail_is_never_answered(pipeline, nylas, log_records):
    # As for Agent Accounts, the emulator fires message.created for the agent's own send.
    nylas.on_message_created = lambda message: pipeline.deliver(envelope(message))
    inbound(nylas)  # fires message.created for the inbound message
    pipeline.drain()
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert skip_reasons(log_records) == ["own_outbound"]


def test_truncated_notification_is_answered_once_from_the_thread_read(pipeline, nylas):
    # The thread read inside the lease carries the full message (body and headers): no extra fetch.
    message = inbound(nylas, body="<p>The full body only the API has.</p>")
    notification = envelope(message, notification_type="message.created.truncated")
    assert "body" not in notification["data"]["object"]
    pipeline.deliver(notification, times=2)
    pipeline.drain()
    assert nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}/messages/{message['id']}") == 0
    assert len(nylas.sends) == 1
    assert nylas.sends[0].payload["reply_to_message_id"] == message["id"]


def test_nylas_500_on_first_send_is_retried_and_sends_once(pipeline, nylas):
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.status(500))
    pipeline.deliver(envelope(message))
    first = pipeline.poller().poll_once()
    assert (first.received, first.failed) == (1, 1)
    assert nylas.sends == []
    pipeline.drain()
    assert len(nylas.sends) == 1


def test_send_accepted_but_response_lost_sends_one_email(pipeline, nylas):
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.lose_response())
    pipeline.deliver(envelope(message))
    first = pipeline.poller().poll_once()
    assert first.failed == 1
    assert len(nylas.sends) == 1  # the email did go out; we only lost the answer
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert len(nylas.sent_messages(thread_id=message["thread_id"])) == 1


def test_retry_after_lost_response_replays_the_send(pipeline, nylas):
    # Even when the thread listing does not show the reply yet, the same key is replayed, not re-sent.
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.lose_response())
    nylas.inject(
        "GET",
        rf"/v3/grants/{AGENT_GRANT_ID}/messages$",
        Fault.status(200, body={"request_id": "r", "data": [message], "next_cursor": None}),
        times=1,
    )
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    nylas.inject(
        "GET",
        rf"/v3/grants/{AGENT_GRANT_ID}/messages$",
        Fault.status(200, body={"request_id": "r", "data": [message], "next_cursor": None}),
        times=1,
    )
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send") == 2


def test_burst_processed_by_two_concurrent_containers_gets_one_reply(pipeline, nylas):
    # On a thread whose item is in service (an earlier exchange, answered long ago): a brand-new thread
    # item's burst waits the settle first (issue 48; the interleavings' burst_race and
    # tests/unit/test_core.py), which would only postpone the race this test is about.
    earlier = inbound(nylas)
    pipeline.deliver(envelope(earlier))
    pipeline.drain()
    [our_reply] = nylas.sent_messages(thread_id=earlier["thread_id"])
    nylas.advance_clock(700)  # past the settle and the automatic-exchange window
    first = inbound(nylas, reply_to_message_id=our_reply["id"])
    second = inbound(nylas, reply_to_message_id=first["id"], date=first["date"] + 1)
    third = inbound(nylas, reply_to_message_id=first["id"], date=first["date"] + 2)
    for message in (first, second, third):
        pipeline.deliver(envelope(message))
    containers = [new_container() for _ in range(3)]
    pollers = [pipeline.poller(c.handle_batch) for c in containers]
    # Batches of one so each container takes a different message at the same time.
    for poller in pollers:
        poller._batch_size = 1
    for _ in range(10):
        threads = [threading.Thread(target=p.poll_once) for p in pollers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    pipeline.drain()
    _, sent = nylas.sends
    assert sent.payload["reply_to_message_id"] == third["id"]
    assert pipeline.dead_letters() == []


def test_burst_notification_waits_for_the_holder_instead_of_a_busy_retry(replier, nylas, monkeypatch, tuning):
    # The burst's second notification meets the first one's lease; the holder's reply covers it.
    # Waiting in-process for the lease answers it as soon as the holder is done: no record fails,
    # nothing comes back a busy-retry cycle later, and Nylas sees one send.
    tuning["lease_wait_seconds"] = 5
    # On a thread whose item is in service (an earlier exchange, answered long ago): a brand-new thread
    # item's burst would first wait the settle (issue 48), and nobody would hold the lease meanwhile.
    earlier = inbound(nylas)
    new_container().handle_batch(sqs_event([envelope(earlier)]), LocalLambdaContext("ReplierFunction"))
    [our_reply] = nylas.sent_messages(thread_id=earlier["thread_id"])
    nylas.advance_clock(700)  # past the settle and the automatic-exchange window
    first = inbound(nylas, reply_to_message_id=our_reply["id"])
    second = inbound(nylas, reply_to_message_id=first["id"])
    nylas.inject("POST", SEND_PATH, Fault.delay(1.0))
    holder_has_the_lease = threading.Event()
    nylas.on_send_started = lambda grant_id, payload: holder_has_the_lease.set()
    results = {}

    def holder() -> None:
        results["first"] = new_container().handle_batch(
            sqs_event([envelope(first)]), LocalLambdaContext("ReplierFunction")
        )

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert holder_has_the_lease.wait(timeout=30)
        results["second"] = new_container().handle_batch(
            sqs_event([envelope(second)]), LocalLambdaContext("ReplierFunction")
        )
    finally:
        thread.join(timeout=30)
        nylas.on_send_started = None
    assert results == {"first": {"batchItemFailures": []}, "second": {"batchItemFailures": []}}
    _, sent = nylas.sends
    assert sent.payload["reply_to_message_id"] == second["id"]


def test_lease_held_past_expiry_by_a_paused_worker_still_sends_one_email(
    replier, nylas, monkeypatch, log_records, tuning
):
    # Worker A's send hangs at Nylas past A's own send timeout and past A's lease (a paused worker,
    # a slow provider): A gives up without an answer. Worker B gets the redelivery, takes over the
    # expired lease, finds A's stored intent and attempts it under the same Idempotency-Key, which
    # Nylas holds in flight (409, deferred); once Nylas has sent it, the next receive gets the replay:
    # one email, whoever finishes.
    # Nothing here races the machine: the send is held until the test releases it (the emulator's
    # on_send_started runs with the key in flight), and the lease is timed by a clock the test moves,
    # so A's steps before its send fit its lease however slowly they run.
    tuning["nylas_send_timeout_seconds"] = 1.0
    tuning["record_margin_seconds"] = 0.2
    monkeypatch.setenv("AGENT_TIMEOUT_SECONDS", "2")  # a lease of 3.2 s
    clock = Clock(time.time())
    message = inbound(nylas)
    event = {
        "Records": [
            load_event("replier-message-created.json")["Records"][0] | {"body": json.dumps(envelope(message))}
        ]
    }
    release = threading.Event()
    held = threading.Event()

    def hold_the_send(grant_id, payload):
        held.set()
        release.wait(timeout=60)

    nylas.on_send_started = hold_the_send

    def container() -> NotificationConsumer:
        return new_container(clock=clock)

    try:
        a = container().handle_batch(event, LocalLambdaContext("ReplierFunction"))
        assert held.is_set()  # A's send reached Nylas ...
        assert len(nylas.sends) == 0  # ... which still holds it
        clock.advance(4.0)  # A's lease (3.2 s) is over
        b = container().handle_batch(event, LocalLambdaContext("ReplierFunction"))
        assert len(nylas.sends) == 0  # B met the key in flight and sent nothing of its own
    finally:
        release.set()
        nylas.on_send_started = None
    assert wait_for(lambda: len(nylas.sends) == 1)  # Nylas finishes A's send after A has gone
    c = container().handle_batch(event, LocalLambdaContext("ReplierFunction"))
    assert [len(r["batchItemFailures"]) for r in (a, b, c)] == [1, 1, 0]
    assert len(nylas.sends) == 1
    # A's attempt and B's, under one key (C may settle from the mailbox, where the reply now is).
    assert nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send") >= 2
    assert {a.idempotency_key for a in nylas.send_attempts} == {nylas.sends[0].idempotency_key}


def test_a_slow_intent_write_that_eats_the_lease_sends_nothing_until_a_later_receive(
    pipeline, nylas, monkeypatch, log_records, tuning
):
    # The write that stores the attempt takes longer than the lease can spare (a throttled or paused
    # store). Sending then could land after the lease ends, when another worker may have read the
    # thread without it: the record goes back instead, and its next receive sends under the same key.
    # The write "takes" 2.5 s on a clock the test moves, not in real time: the verdict does not
    # depend on how fast the machine runs the steps around it.
    tuning["nylas_send_timeout_seconds"] = 2
    tuning["record_margin_seconds"] = 1
    monkeypatch.setenv("AGENT_TIMEOUT_SECONDS", "2")  # a lease of 5 s
    clock = Clock(time.time())
    message = inbound(nylas)
    container = new_container(clock=clock)
    slowed = {"left": 1}

    def slow_outbox_write(**kwargs):
        # The write of one outbox entry (store.store_intent), not the lease or the reservation: an update,
        # or (right before a send, issue 46) the update of a transaction with the grant life's check.
        params = kwargs["params"]
        updates = [params, *(item.get("Update", {}) for item in params.get("TransactItems", []))]
        if slowed["left"] and any(
            u.get("UpdateExpression", "").startswith(f"SET {OUTBOX}.#intent") for u in updates
        ):
            slowed["left"] -= 1
            clock.advance(2.5)  # under 2.5 s of the lease left: less than a 2 s send and its 1 s margin

    for operation in ("UpdateItem", "TransactWriteItems"):
        container._replier._store._dynamodb.meta.events.register(
            f"before-parameter-build.dynamodb.{operation}", slow_outbox_write
        )
    pipeline.deliver(envelope(message))
    first = pipeline.poller(container.handle_batch).poll_once()
    assert (first.failed, len(nylas.sends)) == (1, 0)
    assert deferrals(log_records) == [DeferReason.DEADLINE.value]
    pipeline.drain(container.handle_batch)
    [sent] = nylas.sends
    assert sent.payload["reply_to_message_id"] == message["id"]
    assert {a.idempotency_key for a in nylas.send_attempts} == {sent.idempotency_key}


def test_dynamodb_error_during_ledger_write_is_retried_and_sends_once(pipeline, nylas, replier):
    message = inbound(nylas)
    container = new_container()
    # Fail the settlement's ledger write (its BatchWriteItem) at the AWS client boundary: a failed write.
    failures = {"left": 1}

    def fail_once(**kwargs):
        if failures["left"]:
            failures["left"] -= 1
            from botocore.exceptions import ClientError

            raise ClientError(
                {"Error": {"Code": "InternalServerError", "Message": "injected"}}, "BatchWriteItem"
            )

    client = container._replier._store._dynamodb
    client.meta.events.register("before-call.dynamodb.BatchWriteItem", fail_once)
    pipeline.deliver(envelope(message))
    first = pipeline.poller(container.handle_batch).poll_once()
    assert first.failed == 1
    assert len(nylas.sends) == 1
    pipeline.drain(container.handle_batch)
    assert len(nylas.sends) == 1


def test_a_worker_dead_between_the_ledger_and_the_thread_leaves_the_reply_settled_for_its_messages(
    pipeline, nylas, replier, log_records
):
    # Issue 46: a settlement writes the ledger entries first, then the thread's update under the lease.
    # The worker dies between the two: the ledger says replied, the thread's outbox still holds the intent.
    message = inbound(nylas)
    container = new_container()
    dead = {"left": 1}

    class WorkerDied(BaseException):
        """The container died at this request (nothing of the product catches a BaseException)."""

    def die_at_the_thread_update(**kwargs):
        params = kwargs["params"]
        if (
            dead["left"]
            and "#outbox" in params.get("ExpressionAttributeNames", {})
            and "REMOVE" in params.get("UpdateExpression", "")
        ):
            dead["left"] -= 1
            raise WorkerDied()

    container._replier._store._dynamodb.meta.events.register(
        "before-parameter-build.dynamodb.UpdateItem", die_at_the_thread_update
    )
    pipeline.deliver(envelope(message))
    with contextlib.suppress(WorkerDied):
        pipeline.poller(container.handle_batch).poll_once()
    assert dead["left"] == 0
    assert len(nylas.sends) == 1
    dynamodb = boto3.client("dynamodb")
    table = replier.tables["StateTable"]
    ledger = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": message_key(AGENT_GRANT_ID, message["id"])}}, ConsistentRead=True
    )["Item"]
    thread = dynamodb.get_item(
        TableName=table,
        Key={"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}},
        ConsistentRead=True,
    )["Item"]
    assert ledger["status"]["S"] == "replied"
    assert len(thread[OUTBOX]["M"]) == 1  # the intent a later record of the thread settles (drive_undriven)
    # A new notification for the same message stops at the ledger: nothing twice.
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert "already_replied" in skip_reasons(log_records)


def test_busy_thread_record_fails_and_returns_quickly(pipeline, nylas, replier, sqs, log_records):
    message = inbound(nylas)
    # Another worker holds the thread's lease for a minute.
    hold_lease(replier, message, owner="someone-else", for_ms=60_000)
    pipeline.deliver(envelope(message))
    result = pipeline.poller().poll_once()
    assert (result.received, result.failed) == (1, 1)
    assert nylas.sends == []
    assert any(r.get("reason") == "thread_busy" for r in log_records())
    # Visible again at once (busy_retry_seconds=0), not after the queue's 5400 s visibility timeout.
    boto3.client("dynamodb").delete_item(
        TableName=replier.tables["StateTable"],
        Key={"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}},
    )
    pipeline.drain()
    assert len(nylas.sends) == 1


def test_expired_lease_is_taken_over_even_before_ttl_deletes_it(pipeline, nylas, replier):
    message = inbound(nylas)
    hold_lease(replier, message, owner="crashed-worker", for_ms=-1)
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert len(nylas.sends) == 1


def test_rate_limited_send_honours_retry_after(pipeline, nylas, sqs, replier, monkeypatch, tuning):
    tuning["retry_max_seconds"] = 900
    app.consumer.cache_clear()
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.status(429, headers={"Retry-After": "30"}))
    pipeline.deliver(envelope(message))
    assert pipeline.poller().poll_once().failed == 1
    # Not visible for Retry-After seconds: nothing to receive now.
    assert pipeline.poller().poll_once().received == 0
    queue = replier.queues["NotificationQueue"]
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )
    assert attributes["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert nylas.sends == []


def test_concurrent_idempotent_request_is_retried_with_the_same_key(pipeline, nylas, log_records):
    message = inbound(nylas)
    body = {"request_id": "r", "error": {"type": "api.concurrent_idempotent_request", "message": "in flight"}}
    nylas.inject("POST", SEND_PATH, Fault.status(409, body=body))
    pipeline.deliver(envelope(message))
    pipeline.drain()
    # "Retry with the same key after a few seconds" (idempotent-send guide): the record comes back.
    attempts = [a for a in nylas.requests if a == ("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send")]
    assert len(attempts) == 2
    assert len(nylas.sends) == 1
    assert deferrals(log_records) == ["send_retry"]


def test_send_refused_for_our_api_key_is_retried_not_given_up(pipeline, nylas, log_records):
    # During an API key rotation the cached key can be stale: a 401 is ours to retry.
    message = inbound(nylas)
    body = {"request_id": "r", "error": {"type": "unauthorized", "message": "invalid api key"}}
    nylas.inject("POST", SEND_PATH, Fault.status(401, body=body))
    pipeline.deliver(envelope(message))
    assert pipeline.poller().poll_once().failed == 1
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert "send_rejected" not in skip_reasons(log_records)


def test_a_refusal_of_the_message_is_recorded_and_not_retried(pipeline, nylas, log_records, capsys):
    # A 400 about the message: first without our custom headers (a header may be all it refused),
    # then, refused again, the covered message is failed for good.
    message = inbound(nylas)
    body = {"request_id": "r", "error": {"type": "invalid_request_error", "message": "bad body"}}
    nylas.inject("POST", SEND_PATH, Fault.status(400, body=body), times=2)
    pipeline.deliver(envelope(message))
    pipeline.drain()
    pipeline.deliver(envelope(message))
    pipeline.drain()
    sends = [a for a in nylas.send_attempts]
    assert nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send") == 2
    assert sends == []  # injected answers never reach the key logic
    assert skip_reasons(log_records) == ["send_rejected", "reply_previously_failed"]
    # Counted by Nylas' status: the alarms tell one message's refusal from a grant that cannot send.
    failed = [d for name, d in metrics_emitted(capsys.readouterr().out) if name == "ReplyFailed"]
    assert [d["status"] for d in failed] == ["400"]


def test_poison_record_goes_to_the_dead_letter_queue(pipeline, sqs, replier):
    sqs.send_message(QueueUrl=replier.queues["NotificationQueue"], MessageBody="not a notification")
    poller = pipeline.poller()
    for _ in range(20):
        poller.poll_once()
    [dead] = pipeline.dead_letters()
    assert dead["Body"] == "not a notification"


def test_idempotency_key_is_pinned_to_the_notification_id(pipeline, nylas, replier):
    message = inbound(nylas)
    notification = envelope(message, notification_id="notif-pinned-0001")
    pipeline.deliver(notification)
    pipeline.drain()
    items = boto3.client("dynamodb").scan(TableName=replier.tables["IdempotencyTable"])["Items"]
    [item] = items
    import hashlib

    expected_hash = hashlib.md5(json.dumps("notif-pinned-0001").encode(), usedforsecurity=False).hexdigest()
    # The literal deployed stacks hold, not the constant: a rename of the constant's value (a module moved,
    # a refactor) would re-open every notification of the last 24 h and still pass against itself.
    assert item["id"]["S"] == f"replyonce.notification#{expected_hash}"
    assert item["status"]["S"] == "COMPLETED"
    assert int(item["expiration"]["N"]) - time.time() == pytest.approx(24 * 3600, abs=60)


def test_send_carries_a_deterministic_idempotency_key(pipeline, nylas):
    message = inbound(nylas)
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert nylas.sends[0].idempotency_key == idempotency_key(AGENT_GRANT_ID, message["id"], 0)
    assert len(nylas.sends[0].idempotency_key) <= 256


def test_events_directory_replier_events_run_through_the_handler(replier, nylas):
    # The SQS events for `sam local invoke` parse and process; their message is fetched when truncated.
    for name in ("replier-message-created.json", "replier-truncated.json", "replier-duplicate-batch.json"):
        event = load_event(name)
        response = app.lambda_handler(event, LocalLambdaContext("ReplierFunction"))
        assert set(response) == {"batchItemFailures"}


def test_agent_grant_address_is_looked_up_once_per_container(pipeline, nylas):
    for _ in range(3):
        pipeline.deliver(envelope(inbound(nylas)))
    pipeline.drain()
    assert len(nylas.sends) == 3
    assert grant_lookups(nylas) == 1


@pytest.mark.parametrize(
    ("receives", "expected_delay"),
    [
        # The lease's 60 s are told as 61 (whole seconds, rounded up past its end) and the record waits a
        # second past that: 62.
        (1, 9),  # the doubling's 2 s is sooner than the 62 s spread over the 7 receives left
        (3, 13),  # 62 s over 5 receives left
        (5, 32),  # the doubling is later than the spread
        (10, 62),  # past maxReceiveCount's spread: never past the lease's end
    ],
)
def test_busy_record_backs_off_by_receive_count_but_not_past_the_lease(
    replier, nylas, monkeypatch, receives, expected_delay, tuning
):
    # A crashed holder keeps the lease for up to a record's budget: waiting records double their delay
    # with each receive and never come back sooner than the lease spread over the receives they have
    # left (so they do not burn maxReceiveCount before it ends), never past the lease's end.
    tuning["busy_retry_seconds"] = 2
    tuning["retry_max_seconds"] = 900
    message = inbound(nylas)
    # The lease's end and the container's clock are one clock, so the lease left is 60 s however long the
    # steps between take (on the wall clock it was 59.x s, or under CI's load 59: delays of 61, or 60).
    clock = Clock(time.time())
    hold_lease(replier, message, owner="crashed-worker", for_ms=60_000, now=clock())
    container, delays = container_recording_visibility(clock=clock)
    event = sqs_event([envelope(message)], receive_count=receives)
    response = container.handle_batch(event, LocalLambdaContext("ReplierFunction"))
    assert len(response["batchItemFailures"]) == 1
    held, retried_in = delays  # held for the lease it tried to take, then the busy retry's delay
    assert held > expected_delay
    assert retried_in == expected_delay


def test_a_grant_look_up_refused_once_is_asked_again_and_its_own_reply_still_recognised(
    pipeline, nylas, log_records
):
    # A 404 for the agent's grant at the container's cold start, Auto-Submitted dropped as Microsoft
    # Graph drops non-X- headers: the grant's address is the only thing that tells its own reply apart.
    nylas.modes.custom_headers = "drop"
    nylas.inject("GET", f"/v3/grants/{AGENT_GRANT_ID}$", Fault.status(404))
    nylas.on_message_created = lambda message: pipeline.deliver(envelope(message))
    inbound(nylas)
    pipeline.drain()
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert grant_lookups(nylas) == 2  # refused, then asked again (and kept)
    assert "configuration" in deferrals(log_records)
    assert skip_reasons(log_records) == ["own_outbound"]
    assert pipeline.dead_letters() == []


def test_junk_on_a_later_page_of_the_folder_listing_is_still_junk(pipeline, nylas, log_records):
    # A grant with many labels: the system folders come after the first page of GET /folders. The
    # notification names folders by id (as REST objects do), so only the listing says which is junk.
    nylas.modes.notification_folders = "ids"
    nylas.add_folders(AGENT_GRANT_ID, [f"label-{n:03d}" for n in range(260)])
    nylas.on_message_created = lambda message: pipeline.deliver(envelope(message))
    inbound(nylas, folder="junk")
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["junk_or_trash"]
    assert nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}/folders") == 2  # 200 a page, two pages
