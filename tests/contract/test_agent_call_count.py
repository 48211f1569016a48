"""A grant's daily agent-call count (``StateStore.count_agent_call``): on the fake and on DynamoDB (moto).

What the replier relies on: at most ``cap`` bursts of a grant are counted (allowed) per UTC day, however
many records ask at once; a burst counted once is allowed again without a second count (a retried
record); the first refusal of a grant's day, and only it, says so; another grant or another day is a
count of its own. A cap raised during the day allows again at once, and never alarms twice.
"""

import threading

import pytest

from replyonce.state import AgentCalls

DAY, NEXT_DAY = "2026-12-06", "2026-12-07"


def test_bursts_are_counted_up_to_the_cap_and_the_first_refusal_alone_says_so(store):
    assert [store.count_agent_call("g1", DAY, f"i{n}", 2) for n in range(4)] == [
        AgentCalls("i0", allowed=True),
        AgentCalls("i1", allowed=True),
        AgentCalls("i2", allowed=False, first_refusal=True),
        AgentCalls("i3", allowed=False, first_refusal=False),
    ]


def test_a_burst_counted_once_is_allowed_again_without_a_second_count(store):
    assert store.count_agent_call("g1", DAY, "i0", 2).allowed
    # The same burst again (a record retried after the agent failed): allowed, and nothing spent...
    assert store.count_agent_call("g1", DAY, "i0", 2) == AgentCalls("i0", allowed=True)
    # ...so one more burst still fits under a cap of two, and then none.
    assert store.count_agent_call("g1", DAY, "i1", 2).allowed
    assert not store.count_agent_call("g1", DAY, "i2", 2).allowed
    # A counted burst stays allowed at the cap (its retry asks the agent it was counted for).
    assert store.count_agent_call("g1", DAY, "i1", 2) == AgentCalls("i1", allowed=True)


def test_each_grant_and_each_day_counts_on_its_own(store):
    assert store.count_agent_call("g1", DAY, "i0", 1).allowed
    assert store.count_agent_call("g1", DAY, "i1", 1).first_refusal
    # Another grant the same day, and the same grant the next day (00:00 UTC): counted afresh.
    assert store.count_agent_call("g2", DAY, "i1", 1).allowed
    assert store.count_agent_call("g1", NEXT_DAY, "i1", 1).allowed
    assert store.count_agent_call("g1", NEXT_DAY, "i2", 1) == AgentCalls(
        "i2", allowed=False, first_refusal=True
    )


def test_a_cap_raised_during_the_day_allows_again_and_never_alarms_twice(store):
    assert store.count_agent_call("g1", DAY, "i0", 1).allowed
    assert store.count_agent_call("g1", DAY, "i1", 1).first_refusal
    assert store.count_agent_call("g1", DAY, "i1", 2).allowed  # the operator raised it to 2
    assert store.count_agent_call("g1", DAY, "i2", 2) == AgentCalls("i2", allowed=False, first_refusal=False)


@pytest.mark.parametrize("cap", [1, 3])
def test_records_at_the_cap_at_once_are_never_counted_beyond_it(store, cap):
    # Eight records of one grant ask at the same moment (threads released together): the count's
    # condition is what keeps the allowed ones to the cap, and exactly one refusal is the first.
    start = threading.Barrier(8)
    answers: list[AgentCalls] = []

    def ask(n: int) -> None:
        start.wait()
        answers.append(store.count_agent_call("g1", DAY, f"i{n}", cap))

    workers = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sum(a.allowed for a in answers) == cap
    assert sum(a.first_refusal for a in answers) == 1
