"""Leases last one record's budget, and a waiting record always outlasts the longest lease.

A replier that crashes holding a thread's lease must delay its thread, never
dead-letter it: its lease ends with one record's budget (not the rest of the
invocation), its own record comes back when that lease can have expired (not
after the queue's visibility timeout), and a record waiting on the thread
keeps coming back until then without spending ``maxReceiveCount``. Every
number comes from ``template.yaml`` or, for what no variable sets, the
settings' defaults (``replyonce.config.ReplierSettings``).
"""

import time

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault
from ops.template import load_template
from replyonce.adapters.state_items import lease_expiry_ms
from replyonce.config import ReplierSettings
from replyonce.reasons import DeferReason
from replyonce.rules.redelivery import retry_delay
from replyonce.state import thread_key
from tests.replier_harness import SEND_PATH, container_recording_visibility, deferrals, inbound

TEMPLATE = load_template()
REPLIER = TEMPLATE["Resources"]["ReplierFunction"]["Properties"]
VARIABLES = REPLIER["Environment"]["Variables"]
PARAMETERS = TEMPLATE["Parameters"]
QUEUE = TEMPLATE["Resources"]["NotificationQueue"]["Properties"]


def seconds(name: str) -> float:
    """A variable the template sets, or a setting no variable sets (``ReplierSettings``' default)."""
    if name.islower():
        return float(getattr(ReplierSettings, name))
    value = VARIABLES[name]
    if isinstance(value, dict):  # a number parameter: the largest value an operator may deploy
        return float(PARAMETERS[value["Ref"]].get("MaxValue", PARAMETERS[value["Ref"]]["Default"]))
    return float(value)


LONGEST_LEASE = (
    seconds("AGENT_TIMEOUT_SECONDS")
    + seconds("nylas_send_timeout_seconds")
    + seconds("record_margin_seconds")
)


MAX_RECEIVES = QUEUE["RedrivePolicy"]["maxReceiveCount"]


def receives_to_outlast(hold: float, reason: DeferReason, *, in_process_wait: float) -> int | None:
    """The receive at which a record waiting on a ``hold`` (s) that began with its first receive finds
    it over, deferred as the replier defers it with the template's settings; ``None``: dead-lettered.

    Only the in-process wait and the deferrals count: no time is spent between receives (the worst
    case: polled at once, and every receive ends as soon as it starts).
    """
    elapsed = 0.0
    for receive in range(1, MAX_RECEIVES + 1):
        elapsed += in_process_wait  # waited in-process for the holder
        if elapsed > hold:
            return receive
        if receive == MAX_RECEIVES:
            return None  # its last receive failed: the next one is the dead-letter queue's
        elapsed += retry_delay(
            reason,
            int(hold - elapsed) + 1,
            receive,
            busy_base_seconds=int(seconds("busy_retry_seconds")),
            retry_base_seconds=int(seconds("retry_base_seconds")),
            retry_max_seconds=int(seconds("retry_max_seconds")),
            max_receives=int(seconds("max_receive_count")),
        )
    raise AssertionError("unreachable")


def test_the_replier_knows_the_queues_max_receive_count():
    assert int(seconds("max_receive_count")) == MAX_RECEIVES


def test_a_record_waiting_on_a_crashed_holder_outlasts_its_longest_lease():
    wait = seconds("lease_wait_seconds")
    assert receives_to_outlast(LONGEST_LEASE, DeferReason.THREAD_BUSY, in_process_wait=wait) is not None


def test_a_record_late_in_its_invocation_still_outlasts_the_longest_lease():
    # Late in its invocation a record cannot wait in-process (its wait is bounded by the time left
    # beyond a lease: 0); its deferrals alone must outlast the holder's lease.
    assert receives_to_outlast(LONGEST_LEASE, DeferReason.THREAD_BUSY, in_process_wait=0) is not None


def test_a_lease_lasts_one_records_budget_not_the_rest_of_the_invocation(replier_env, nylas, monkeypatch):
    monkeypatch.setenv(
        "AGENT_TIMEOUT_SECONDS", "30"
    )  # the send timeout (150) and the margin (10) as deployed
    message = inbound(nylas)
    seen = {}

    def look_at_the_lease(grant_id, payload):
        item = boto3.client("dynamodb").get_item(
            TableName=replier_env.tables["StateTable"],
            Key={"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}},
            ConsistentRead=True,
        )["Item"]
        seen["lease_seconds"] = lease_expiry_ms(item) / 1000 - time.time()

    nylas.on_send_started = look_at_the_lease
    container, visibility = container_recording_visibility()
    try:
        # An invocation with 900 s left: the lease still ends with the record's own budget.
        container.handle_batch(
            sqs_event([envelope(message)]), LocalLambdaContext("ReplierFunction", timeout_seconds=900)
        )
    finally:
        nylas.on_send_started = None
    assert seen["lease_seconds"] == pytest.approx(30 + 150 + 10, abs=5)
    # Its record was held for that long (a lease wait, the lease, the margin), not the queue's 1560 s.
    assert visibility == [(0 + 190 + 10) + 1]
    assert visibility[0] < QUEUE["VisibilityTimeout"]


def test_a_crashed_holders_thread_is_answered_once_its_lease_has_expired(
    pipeline, nylas, replier, monkeypatch
):
    # The holder dies mid-send (its lease stays, its intent is stored); the redelivery after the lease
    # finds the intent and finishes it under the same key.
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.lose_response())
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    dynamodb = boto3.client("dynamodb")
    key = {"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}}
    # As if the worker had died holding the lease: it is still held, for a while.

    def lease_ends_in(ms: int) -> None:
        dynamodb.update_item(
            TableName=replier.tables["StateTable"],
            Key=key,
            UpdateExpression="SET lease_owner = :o, lease_expires_at = :e",
            ExpressionAttributeValues={
                ":o": {"S": "dead-worker"},
                ":e": {"N": str(int(time.time() * 1000) + ms)},
            },
        )

    lease_ends_in(60_000)
    assert pipeline.poller().poll_once().failed == 1  # busy: comes back
    lease_ends_in(-1)  # the dead worker's lease has run out (its item stays until TTL deletes it)
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert pipeline.dead_letters() == []


FUNCTION_TIMEOUT = float(REPLIER["Timeout"])


def test_a_duplicate_waiting_on_its_original_outlasts_the_longest_in_progress_hold():
    # Powertools ends an INPROGRESS record at its holder's invocation deadline: up to the function's
    # Timeout after the record began. A duplicate (same id, its own SQS message) that meets it must not
    # spend its maxReceiveCount before then, even with no time between its receives.
    held = receives_to_outlast(FUNCTION_TIMEOUT, DeferReason.NOTIFICATION_IN_PROGRESS, in_process_wait=0)
    assert held is not None


def test_a_duplicate_meeting_its_original_in_progress_comes_back_only_as_often_as_its_receives_allow(
    replier, nylas, tuning, log_records
):
    tuning.update(busy_retry_seconds=1, retry_max_seconds=900)
    message = inbound(nylas)
    notification = envelope(message)
    duplicate, visibility = container_recording_visibility()

    def duplicate_arrives(grant_id, payload):
        # The original is sending, inside its invocation: its notification is in progress.
        nylas.on_send_started = None
        duplicate.handle_batch(sqs_event([notification]), LocalLambdaContext("ReplierFunction"))

    nylas.on_send_started = duplicate_arrives
    try:
        original = container_recording_visibility()[0]
        original.handle_batch(sqs_event([notification]), LocalLambdaContext("ReplierFunction"))
    finally:
        nylas.on_send_started = None
    assert deferrals(log_records) == [DeferReason.NOTIFICATION_IN_PROGRESS.value]
    [delay] = visibility
    # Its receives left, each this long, outlast the original's record (the whole Timeout: the original
    # began with it), and no single one waits past it.
    assert delay * (MAX_RECEIVES - 1) >= FUNCTION_TIMEOUT
    assert delay <= FUNCTION_TIMEOUT + 1
    assert len(nylas.sends) == 1
    # Back once the original is done: absorbed, not sent again.
    duplicate.handle_batch(sqs_event([notification], receive_count=2), LocalLambdaContext("ReplierFunction"))
    assert len(nylas.sends) == 1
    assert "duplicate_notification" in [r.get("reason") for r in log_records()]
