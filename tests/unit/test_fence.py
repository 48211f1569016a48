"""Only the active Region sends (replyonce.core.fence): a situation and the record read, in; a step, out.

A deployment across Regions (``ACTIVE_REGION_TABLE`` set) reads the
active-Region record before each lease and each send; the Region it names may
go ahead once the handover is over, any other Region — or one that cannot
read the record — defers the record and sends nothing. One Region (the
default) takes every step as it did before the fence existed.
"""

from dataclasses import replace

import pytest

from replyonce import core
from replyonce.config import AGENT_ACCOUNT_QUEUE_SECONDS
from replyonce.core import UNREAD, Situation, next_step
from replyonce.jobs import MessageArrived
from replyonce.policy import Policy
from replyonce.ports import ActiveRegion, FenceUnreadable
from replyonce.reasons import DeferReason
from replyonce.rules.screening import Agents
from replyonce.state import Intent, Lease, ThreadState

GRANT, THREAD, HERE, THERE = "g1", "t1", "us-east-1", "us-west-2"
NOW = 1_800_000_000
SINGLE = Policy(agent_grant_ids=(GRANT,))
FENCED = replace(SINGLE, fence_region=HERE)
AGENTS = Agents((GRANT,), {GRANT: "support@acme.example"}, {GRANT: "Acme"})
INTENT = Intent(
    id="i1",
    thread_id=THREAD,
    target_id="m1",
    covered=("m1",),
    request='{"to":[{"email":"alice@example.com"}]}',
    created_at=NOW - 100,
    attempts=1,
    first_attempt_at=NOW - 100,
    last_attempt_at=NOW - 100,
)
HANDOVER = FENCED.handover_seconds


def before_lease(policy, record=UNREAD):
    """A new message, ledger read, about to take the thread's lease."""
    job = MessageArrived(GRANT, "m1", THREAD, {"from": [{"email": "alice@example.com"}]})
    return Situation(job, policy, AGENTS, frozenset(), ledger=None, active_region=record, now=NOW)


def before_send(policy, record=UNREAD):
    """Inside the lease, the intent stored with its attempt counted: the next step is the send."""
    s = before_lease(policy, record)
    state = ThreadState(outbox={INTENT.id: INTENT})
    lease = Lease(f"thread#{GRANT}#{THREAD}", "token", (NOW + 900) * 1000, state)
    return replace(s, phase=core.Leased(lease, state), attempting=frozenset({INTENT.id}), time_left=900.0)


def active(region, *, since=0, read_at=NOW, epoch=2):
    return ActiveRegion(region=region, epoch=epoch, since=since, read_at=read_at)


LEASE = core.TakeLease(f"thread#{GRANT}#{THREAD}", SINGLE.lease_seconds)
SEND = core.Attempt(GRANT, INTENT)


@pytest.mark.parametrize(
    ("situation", "expected"),
    [
        # One Region: no read, no fence, every step as before.
        (before_lease(SINGLE), LEASE),
        (before_send(SINGLE), SEND),
        (before_send(SINGLE, active(THERE)), SEND),
        # Fenced: each lease and each send first reads the record.
        (before_lease(FENCED), core.ReadActiveRegion()),
        (before_send(FENCED), core.ReadActiveRegion()),
        # The record names this Region, the handover long over (or a first activation): go.
        (before_lease(FENCED, active(HERE)), LEASE),
        (before_send(FENCED, active(HERE)), SEND),
        (before_send(FENCED, active(HERE, since=NOW - HANDOVER)), SEND),
        # Another Region is active: this one is passive and sends nothing.
        (
            before_send(FENCED, active(THERE)),
            core.Defer(
                DeferReason.REGION_PASSIVE, None, {"region": HERE, "active_region": THERE, "epoch": 2}
            ),
        ),
        (
            before_lease(FENCED, active(THERE)),
            core.Defer(
                DeferReason.REGION_PASSIVE, None, {"region": HERE, "active_region": THERE, "epoch": 2}
            ),
        ),
        # The failover recorded the active Region's queue: the record is moved there (the consumer's
        # hand-over), not kept here to dead-letter.
        (
            before_lease(FENCED, replace(active(THERE), queue_url="https://sqs.us-west-2/q")),
            core.Defer(
                DeferReason.REGION_PASSIVE,
                None,
                {"region": HERE, "active_region": THERE, "epoch": 2},
                replace(active(THERE), queue_url="https://sqs.us-west-2/q"),
            ),
        ),
        # No Region recorded yet (the operator has not said): nobody sends.
        (
            before_send(FENCED, active("", epoch=0)),
            core.Defer(
                DeferReason.REGION_PASSIVE, None, {"region": HERE, "active_region": "(none)", "epoch": 0}
            ),
        ),
        # Cannot read the record (isolated): fail closed.
        (
            before_send(FENCED, FenceUnreadable("EndpointConnectionError")),
            core.Defer(
                DeferReason.REGION_ISOLATED, None, {"region": HERE, "detail": "EndpointConnectionError"}
            ),
        ),
        (
            before_lease(FENCED, FenceUnreadable("ConnectTimeoutError")),
            core.Defer(DeferReason.REGION_ISOLATED, None, {"region": HERE, "detail": "ConnectTimeoutError"}),
        ),
        # Active here, but the failover was 10 s ago: the old Region's last send may still land.
        (
            before_send(FENCED, active(HERE, since=NOW - 10)),
            core.Defer(DeferReason.REGION_HANDOVER, int(HANDOVER) - 10, {"region": HERE, "epoch": 2}),
        ),
        (
            before_lease(FENCED, active(HERE, since=NOW - 10)),
            core.Defer(DeferReason.REGION_HANDOVER, int(HANDOVER) - 10, {"region": HERE, "epoch": 2}),
        ),
    ],
)
def test_only_the_active_region_takes_a_lease_or_sends(situation, expected):
    step = next_step(situation)
    # A deferral under the lease frees it first (core.ReleaseLease), then is the record's end.
    assert (step.then if isinstance(step, core.ReleaseLease) else step) == expected


def test_steps_that_neither_lease_nor_send_are_not_fenced():
    # Reading the ledger, the thread and the mailbox is safe in a passive Region: only what writes
    # the shared state (the lease) and what reaches a customer (the send) waits for the record.
    s = replace(before_lease(FENCED, active(THERE)), ledger=UNREAD)
    assert next_step(s) == core.ReadLedger(GRANT, "m1")
    leased = replace(before_send(FENCED, active(THERE)), attempting=frozenset(), now=None)
    assert next_step(leased) == core.ReadThread(GRANT, THREAD, FENCED.thread_window, None)


def test_the_handover_outlasts_a_whole_lease_the_agent_account_queue_and_the_mailbox_settle_time():
    # The old Region's send can start up to a lease after its last read of the record; answered 202, the
    # Agent Account queue sends it up to 90 s later, and the mailbox shows it the settle time after that
    # (pending_confirm_seconds covers both, as ReplierSettings requires): the new Region waits for all.
    assert FENCED.handover_seconds == FENCED.lease_seconds + FENCED.pending_confirm_seconds
    assert FENCED.pending_confirm_seconds >= AGENT_ACCOUNT_QUEUE_SECONDS + FENCED.settle_seconds
