"""Active-passive across Regions: only the Region the active-Region record names sends.

The real replier handler against moto and the Nylas emulator over loopback,
configured as a Region of a two-Region deployment (``ACTIVE_REGION_TABLE``,
and the Region's name, which Lambda's ``AWS_REGION`` gives), with the record written by the operator's own
``failover`` command. Counted at the emulator: what Nylas was asked to send.
The default (one Region) deploys and answers as it always has.
"""

import contextlib
import json
import time
from dataclasses import replace

import boto3
import pytest

from devstack.events import envelope
from devstack.template import create_active_region_table
from ops.failover import FailoverError, fail_over_to, stamping_clock
from replyonce.adapters.active_region import DynamoDBRegionFence, aws_clock
from replyonce.config import ReplierSettings
from replyonce.exceptions import Deferred
from replyonce.jobs import MessageArrived
from replyonce.policy import Policy, policy_of
from replyonce.ports import ActiveRegion, FenceUnreadable
from replyonce.shell.replier import Replier
from tests.conftest import register_stack
from tests.fakes import Clock, FakeMailbox, FakeRegionFence, FakeStateStore
from tests.integration.test_iam_enforced import Resolver, rendered_template, role_statements
from tests.integration.test_ops import REGION, ops
from tests.interleavings import AGENT_EMAIL, GRANT, agent
from tests.replier_harness import deferrals, inbound, new_container

HERE, THERE = "us-west-2", "us-east-1"
TABLE = "replyonce-active-region"
AN_HOUR_AGO = time.time() - 3600


@pytest.fixture
def fenced(replier_env, tuning, monkeypatch):
    """This replier is the us-west-2 Region of a deployment across Regions; the record's table exists."""
    create_active_region_table(TABLE)
    monkeypatch.setenv("ACTIVE_REGION_TABLE", TABLE)
    # Lambda's AWS_REGION names the Region; moto serves every Region here from one, so it is named in-process.
    tuning["region"] = HERE
    return boto3.client("dynamodb")


def activate(dynamodb, region: str, *, at: float = AN_HOUR_AGO) -> None:
    """The operator's failover to ``region``, done at ``at`` (an hour ago: the handover is over)."""
    fail_over_to(dynamodb, TABLE, region, clock=lambda: at)


def poll(pipeline, times: int = 3) -> None:
    """What the event source does a few times: each deferred record comes back at once (RETRY_MAX 0)."""
    poller = pipeline.poller()
    for _ in range(times):
        poller.poll_once()


def test_the_default_deploys_one_region_without_a_fence(replier_env, pipeline, nylas, log_records):
    # The template's default: no table, no fence, no permission to read one, and replies as before.
    assert replier_env.function_environment("ReplierFunction")["ACTIVE_REGION_TABLE"] == ""
    assert policy_of(ReplierSettings.from_environment()).fence_region == ""
    cfn = rendered_template()
    statements = role_statements(cfn, "ReplierFunction", Resolver(cfn, replier_env, REGION))
    assert not [s for s in statements if s.get("Sid") == "ReadActiveRegion"]
    pipeline.deliver(envelope(inbound(nylas)))
    pipeline.drain()
    assert len(nylas.sends) == 1


def test_a_passive_region_sends_nothing_until_it_is_failed_over_to(fenced, pipeline, nylas, log_records):
    activate(fenced, THERE)
    pipeline.deliver(envelope(inbound(nylas)))
    poll(pipeline)
    assert nylas.sends == []
    assert set(deferrals(log_records)) == {"region_passive"}
    activate(fenced, HERE)
    pipeline.drain()
    assert len(nylas.sends) == 1


def test_a_region_that_cannot_read_the_record_fails_closed(fenced, pipeline, nylas, log_records, monkeypatch):
    activate(fenced, HERE)
    # The record's table out of reach (here: a name this Region has no replica of).
    monkeypatch.setenv("ACTIVE_REGION_TABLE", "replyonce-active-region-unreachable")
    pipeline.deliver(envelope(inbound(nylas)))
    poll(pipeline)
    assert nylas.sends == []
    assert set(deferrals(log_records)) == {"region_isolated"}


def test_a_region_just_failed_over_to_waits_out_the_handover(fenced, pipeline, nylas, log_records):
    activate(fenced, THERE)
    activate(fenced, HERE, at=time.time())
    pipeline.deliver(envelope(inbound(nylas)))
    poll(pipeline)
    assert nylas.sends == []
    assert set(deferrals(log_records)) == {"region_handover"}


def test_no_region_recorded_means_no_region_sends(fenced, pipeline, nylas, log_records):
    pipeline.deliver(envelope(inbound(nylas)))
    poll(pipeline)
    assert nylas.sends == []
    assert set(deferrals(log_records)) == {"region_passive"}


# ---- the passive Region's backlog, handed over (issue 48) ---------------------------------------------


@pytest.fixture
def active_queue():
    """The active Region's notification queue (THERE): what the failover to THERE recorded."""
    sqs = boto3.client("sqs", region_name=THERE)
    url = sqs.create_queue(QueueName="replyonce-there-notifications")["QueueUrl"]
    yield sqs, url
    with contextlib.suppress(sqs.exceptions.QueueDoesNotExist):  # a test may have deleted it
        sqs.delete_queue(QueueUrl=url)


def received(sqs, url: str) -> list[dict]:
    answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"])
    return answer.get("Messages", [])


def queued(pipeline) -> list[dict]:
    """What is left on this Region's queue, visible or not."""
    attributes = pipeline.sqs.get_queue_attributes(
        QueueUrl=pipeline.resources.queues["NotificationQueue"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return [name for name, count in attributes.items() if int(count)]


def test_a_passive_region_hands_what_it_holds_to_the_active_regions_queue(
    fenced, pipeline, nylas, log_records, active_queue
):
    sqs, url = active_queue
    fail_over_to(fenced, TABLE, THERE, queue_url=url, clock=lambda: AN_HOUR_AGO)
    notification = envelope(inbound(nylas))
    pipeline.deliver(notification)
    poll(pipeline, times=1)
    assert nylas.sends == []
    # Gone from here, not waiting to dead-letter: on the active Region's queue, as the webhook queued it.
    assert queued(pipeline) == []
    assert pipeline.dead_letters() == []
    [moved] = received(sqs, url)
    assert json.loads(moved["Body"]) == notification
    assert moved["MessageAttributes"]["notification_id"]["StringValue"] == notification["id"]
    assert moved["MessageAttributes"]["handed_over_at_epoch"]["StringValue"] == "1"
    assert [r["message"] for r in log_records() if r.get("moved_as")] == [
        "record handed over to the active Region's queue"
    ]


def test_a_record_moves_once_per_failover_and_waits_when_the_queue_refuses(
    fenced, pipeline, nylas, log_records, active_queue
):
    sqs, url = active_queue
    fail_over_to(fenced, TABLE, THERE, queue_url=url, clock=lambda: AN_HOUR_AGO)
    # Back here after it moved at this epoch (a queue recorded wrongly would do that): it stays.
    pipeline.sqs.send_message(
        QueueUrl=pipeline.resources.queues["NotificationQueue"],
        MessageBody=json.dumps(envelope(inbound(nylas))),
        MessageAttributes={"handed_over_at_epoch": {"DataType": "Number", "StringValue": "1"}},
    )
    poll(pipeline, times=1)
    assert received(sqs, url) == []
    assert set(deferrals(log_records)) == {"region_passive"}
    # A queue that does not take it (here: gone): the record waits here too, with a warning.
    sqs.delete_queue(QueueUrl=url)
    pipeline.deliver(envelope(inbound(nylas)))
    poll(pipeline, times=1)
    assert nylas.sends == []
    assert len(queued(pipeline)) == 1
    assert any("could not hand the record over" in r["message"] for r in log_records())


def test_a_hand_over_that_fails_for_a_reason_of_ours_still_defers_the_record_and_says_why(
    fenced, pipeline, nylas, log_records, active_queue
):
    sqs, url = active_queue
    fail_over_to(fenced, TABLE, THERE, queue_url=url, clock=lambda: AN_HOUR_AGO)
    # Not AWS refusing (that is a warning above): anything else raised on the way, a bug of ours.
    session = boto3.session.Session()

    def broken(**_):
        raise RuntimeError("a bug on the hand-over's path")

    session.events.register("before-call.sqs.SendMessage", broken)
    container = new_container(aws=session)
    pipeline.deliver(envelope(inbound(nylas)))
    pipeline.poller(handler=lambda event, context: container.handle_batch(event, context)).poll_once()
    assert received(sqs, url) == []
    assert len(queued(pipeline)) == 1  # nothing lost: the record waits here
    assert set(deferrals(log_records)) == {"region_passive"}
    [failure] = [r for r in log_records() if "a failure of ours" in r["message"]]
    assert "a bug on the hand-over's path" in failure["exception"]


# ---- the record and the operator's failover ---------------------------------------------------------


def test_failover_raises_the_epoch_once_per_region_change(fenced):
    fence = DynamoDBRegionFence(TABLE, fenced)
    unset = fence.read()
    assert unset == ActiveRegion("", 0, 0, unset.read_at)
    first = fail_over_to(fenced, TABLE, THERE, clock=lambda: 1_000)
    assert (first.after.region, first.after.epoch, first.after.since) == (THERE, 1, 0)  # no handover
    again = fail_over_to(fenced, TABLE, THERE, clock=lambda: 2_000)
    assert not again.written
    assert again.after.epoch == 1
    moved = fail_over_to(fenced, TABLE, HERE, clock=lambda: 3_000)
    assert (moved.after.region, moved.after.epoch, moved.after.since) == (HERE, 2, 3_000)
    read = fence.read()
    assert (read.region, read.epoch, read.since) == (HERE, 2, 3_000)


def test_a_failover_that_another_one_overtook_writes_nothing(fenced):
    fail_over_to(fenced, TABLE, THERE)
    with pytest.raises(FailoverError, match="epoch 1"):
        fail_over_to(fenced, TABLE, HERE, expect_epoch=0)
    assert DynamoDBRegionFence(TABLE, fenced).read().region == THERE


def test_the_record_unreadable_is_unknown_not_active(fenced):
    assert isinstance(DynamoDBRegionFence("no-such-table", fenced).read(), FenceUnreadable)
    with pytest.raises(FailoverError, match="cannot read"):
        fail_over_to(fenced, "no-such-table", HERE)


def test_the_failover_command_fails_over_the_stacks_table(fenced, aws):
    queue_url = aws.queues["NotificationQueue"]  # the stack's own queue, in the Region it runs in
    outputs = {"StateTableName": aws.tables["StateTable"], "NotificationQueueUrl": queue_url}
    register_stack("replyonce-regions", outputs, {"ActiveRegionTableName": TABLE})
    assert REGION == THERE
    run = ops("failover", "--to", THERE, stack_name="replyonce-regions")
    assert run.code == 0, run.text
    assert "first activation" in run.out
    # Run in the Region it fails over to: that Region's queue is recorded for the hand-over.
    assert DynamoDBRegionFence(TABLE, fenced).read().queue_url == queue_url
    run = ops("failover", "--to", HERE, stack_name="replyonce-regions")
    assert run.code == 0, run.text
    assert f"-> {HERE} (epoch 2)" in run.out
    # Run from another Region: the stack there is not HERE's, so no queue is recorded, and it says so.
    assert f"no queue of {HERE} recorded" in run.out
    after = DynamoDBRegionFence(TABLE, fenced).read()
    assert (after.region, after.queue_url) == (HERE, "")
    refused = ops("failover", "--to", THERE, "--expect-epoch", "1", stack_name="replyonce-regions")
    assert refused.code == 1
    assert "epoch 2" in refused.err


def test_an_operators_clock_behind_awss_cannot_shorten_the_handover(fenced):
    # Issue 48: the failover's since was the operator's clock alone, compared with the repliers' clocks;
    # ten minutes slow, it ended the handover ten minutes early. Stamped with the later of the operator's
    # clock and AWS's (DynamoDB's Date, carried on by the monotonic clock), it is never before the write.
    fail_over_to(fenced, TABLE, THERE, clock=lambda: AN_HOUR_AGO)  # the first activation
    slow = lambda: time.time() - 600  # noqa: E731
    before = time.time()
    written = fail_over_to(fenced, TABLE, HERE, clock=stamping_clock(fenced, TABLE, local=slow)).after
    assert before - 1 <= written.since <= time.time() + 2
    assert DynamoDBRegionFence(TABLE, fenced).read().since == written.since
    # A clock ahead is kept: it only lengthens the handover.
    fast = lambda: time.time() + 600  # noqa: E731
    assert stamping_clock(fenced, TABLE, local=fast)() >= time.time() + 599


def test_aws_clock_is_none_without_a_date(fenced):
    class NoDate:
        def get_item(self, **_):
            return {"ResponseMetadata": {"HTTPHeaders": {}}}

    assert aws_clock(NoDate(), TABLE) is None
    assert stamping_clock(NoDate(), TABLE, local=lambda: 5.0)() == 5.0


def test_the_failover_command_on_a_one_region_stack_says_there_is_nothing_to_fail_over(aws):
    register_stack("replyonce-one-region", {"StateTableName": aws.tables["StateTable"]}, {})
    run = ops("failover", "--to", HERE, stack_name="replyonce-one-region")
    assert run.code == 2
    assert "ActiveRegionTableName" in run.err


# ---- the window between the lease and the send ------------------------------------------------------


class FailsOverOnRead(FakeRegionFence):
    """The record as the replier reads it; the operator fails over right after the ``nth`` read."""

    def __init__(self, clock, region: str, *, nth: int, to: str) -> None:
        super().__init__(clock, region)
        self.reads = 0
        self._nth, self._to = nth, to

    def read(self):
        record = super().read()
        self.reads += 1
        if self.reads == self._nth:
            self.fail_over(self._to)
        return record


def one_record(*, failover_after_read: int) -> tuple[FakeMailbox, FailsOverOnRead]:
    """One message through a fenced replier (this Region active); the failover after that read (0: none)."""
    clock = Clock()
    fence = FailsOverOnRead(clock, HERE, nth=failover_after_read, to=THERE)
    mailbox = FakeMailbox(clock)
    mailbox.add_grant(GRANT, AGENT_EMAIL)
    message = mailbox.deliver(GRANT, sender="alice@example.com", subject="Order 1042")
    policy = replace(Policy(agent_grant_ids=(GRANT,)), fence_region=HERE)
    replier = Replier(
        policy,
        FakeStateStore(clock),
        mailbox,
        agent,
        reconcile_later=lambda due, seconds: None,
        lease_wait_seconds=0.0,
        clock=clock,
        fence=fence,
        monotonic=clock,
        sleep=lambda seconds: None,
    )
    job = MessageArrived(GRANT, message["id"], message["thread_id"], {"from": message["from"]})
    try:
        replier.handle(job, remaining_seconds=lambda: 900.0)
    except Deferred as deferred:
        mailbox.calls.append(f"deferred {deferred.reason.value}")
    return mailbox, fence


def test_the_lease_and_the_send_each_read_the_record():
    mailbox, fence = one_record(failover_after_read=0)
    assert len(mailbox.sent) == 1
    assert fence.reads == 2  # one before the lease, one before the send


def test_a_failover_between_the_lease_and_the_send_stops_the_send():
    # The record read for the lease named this Region; the operator failed over before the send.
    mailbox, _ = one_record(failover_after_read=1)
    assert mailbox.sent == []
    assert mailbox.calls[-1] == "deferred region_passive"
