"""Where a record stands (the core's phases): the table the design shows, the moves it allows, and the
plan a thread read is decided from, once.

The document's table is compared with what the code prints; a record's phases and its plans are read
off a real run of the shell and the core over the in-memory ports (``tests/rounds.py``).
"""

import re
from pathlib import Path

import pytest

from replyonce import core
from replyonce.agent import Reply
from replyonce.core import AgentReturned
from replyonce.jobs import MessageArrived
from replyonce.policy import Policy
from replyonce.ports import ThreadPage
from replyonce.reasons import SkipReason
from replyonce.rules.screening import Agents
from replyonce.state import Intent, Lease, Settlement, Status, ThreadState
from tests.rounds import one_message_to_its_send

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design.md"
LEASE = Lease("thread#g1#t1", "token", 0, ThreadState())
LEASED = core.Leased(LEASE, LEASE.state)
SETTLE = core.Settle(Settlement(Status.REPLIED, ("m1",), 0))
PLAN = core.Plan(core.Skip(SkipReason.ALREADY_REPLIED), (), 0)
JOB = MessageArrived("g1", "m1", "t1", {})
POLICY = Policy(agent_grant_ids=("g1",))


def test_the_designs_phase_table_is_the_one_the_code_moves_records_by():
    text = DESIGN.read_text()
    shown = re.search(r"<!-- phase-table[^>]*-->\n(.*?)\n<!-- /phase-table -->", text, re.S)
    assert shown is not None, "docs/design.md has no phase table between its markers"
    # After a change to the phases, paste what this prints between the markers (PYTHONPATH=layers/replyonce):
    #   .venv/bin/python -c "from replyonce.core import phase_table; print(phase_table())"
    assert shown.group(1) == core.phase_table()


def test_every_phase_is_in_the_table_and_every_move_leads_to_one():
    assert set(core.TRANSITIONS) == set(core.Phase.__args__)
    for moves in core.TRANSITIONS.values():
        assert all(target in core.TRANSITIONS for targets in moves.values() for target in targets)


@pytest.mark.parametrize(
    ("before", "step", "after"),
    [
        # A settlement needs the lease: a record that never took it cannot have written one.
        (core.Arrived(), SETTLE, core.Settled(SETTLE)),
        # A lease is taken once, before the thread is read: the thread read is never undone by one.
        (core.Planned(LEASE, LEASE.state, PLAN), core.TakeLease(LEASE.key, 1.0), LEASED),
        # A record that ended stays ended: nothing moves it back under the lease.
        (core.Settled(SETTLE), core.TakeLease(LEASE.key, 1.0), LEASED),
        (core.Released(core.Skip(SkipReason.ALREADY_REPLIED)), core.ReadThread("g1", "t1", 10, None), LEASED),
    ],
    ids=["settled-without-a-lease", "planned-then-leased-again", "settled-then-leased", "released-then-read"],
)
def test_a_move_the_table_does_not_name_is_refused(before, step, after):
    with pytest.raises(core.PhaseError, match="cannot move a record"):
        core.moved(before, step, after)


def test_a_lease_taken_again_after_the_end_is_refused_by_learn_itself():
    s = core.Situation(JOB, POLICY, phase=core.Settled(SETTLE))
    with pytest.raises(core.PhaseError, match="TakeLease cannot move a record from Settled to Leased"):
        core.learn(s, core.TakeLease(LEASE.key, 1.0), LEASE)


def test_a_write_under_the_lease_is_refused_to_a_record_that_does_not_hold_it():
    with pytest.raises(core.PhaseError, match="Settle needs the thread's lease; the record is Arrived"):
        core.learn(core.Situation(JOB, POLICY), SETTLE, True)


def test_a_first_reply_goes_through_its_phases_and_is_planned_once():
    trace = one_message_to_its_send()
    assert list(zip(trace.phases, trace.rounds, strict=True)) == [
        ("Arrived", "LookUpAgents"),
        ("Arrived", "LookUpFolders"),
        ("Arrived", "ReadLedger"),
        ("Arrived", "TakeLease"),
        ("Leased", "ReadThread"),
        ("Planned", "Reserve"),
        ("Planned", "AskAgent"),
        ("Answered", "LookBeforeSend"),
        ("Answered", "Store"),
        ("Leased", "Attempt"),
    ]
    # One thread read, one plan: the rounds after it carry the plan (four derivations before issue 45).
    assert trace.of("rules.plan.plan_burst") == 1
    # The thread's one message and the trigger's payload screened once each.
    assert trace.of("rules.screening.reason_not_to_answer") == 2


# ---- decided once: a plan is carried until a new read changes what it was decided from ------------------

AGENTS = Agents(("g1",), {"g1": "support@acme.example"}, {"g1": "Acme"})
CUSTOMER = "alice@example.com"


def _message(mid, email_id=""):
    headers = [{"name": "Message-ID", "value": email_id}] if email_id else []
    return {
        "id": mid,
        "thread_id": "t1",
        "from": [{"email": CUSTOMER}],
        "to": [{"email": "support@acme.example"}],
        "subject": "Order",
        "body": "<p>Where is it?</p>",
        "date": 1_800_000_000 - 60,
        "headers": headers,
        "folders": ["inbox"],
    }


def _thread_read(*messages):
    """A new message's record that has just read its thread (one page) under the lease."""
    s = core.Situation(
        JOB, POLICY, AGENTS, frozenset(), ledger=None, phase=LEASED, now=1_800_000_000, time_left=900.0
    )
    return core.learn(s, core.ReadThread("g1", "t1", 10, None), ThreadPage(messages, None, 1_800_000_000))


def test_a_thread_read_is_planned_once_and_the_plan_is_carried_by_the_rounds_that_read_nothing_new():
    read = _thread_read(_message("m1"))
    assert isinstance(read.phase, core.Planned)
    plan = read.phase.plan
    reserved = core.learn(read, core.Reserve((), "i1"), [True])
    answered = core.learn(reserved, core.AskAgent(None, None), AgentReturned(Reply(text="Hello")))
    looked = core.learn(answered, core.LookBeforeSend("g1", "t1", 5), ThreadPage((), None, 1_800_000_001))
    # The very same plan, not one decided again to the same effect; the agent's answer beside it.
    assert all(s.phase.plan is plan for s in (reserved, answered, looked))
    assert looked.phase == core.Answered(LEASE, LEASE.state, plan, Reply(text="Hello"))


def test_a_new_read_decides_the_plan_again():
    read = _thread_read(_message("m1", "<m1@customer.example>"))
    claimed = core.learn(read, core.ClaimEmails("g1", ("email-1",)), {"email-1": "g1"})
    assert isinstance(claimed.phase, core.Planned)
    assert claimed.phase.plan is not read.phase.plan
    again = core.learn(claimed, core.ReadThread("g1", "t1", 10, None), ThreadPage((), None, 1_800_000_002))
    assert again.phase.plan is not claimed.phase.plan


def test_an_intent_stored_for_the_trigger_leaves_nothing_to_plan():
    read = _thread_read(_message("m1"))
    intent = Intent(id="i1", thread_id="t1", target_id="m1", covered=("m1",), request="{}")
    stored = core.learn(read, core.Store(intent), True)
    assert stored.phase == core.Leased(LEASE, ThreadState(outbox={"i1": intent}))
