"""Which step held a record's time, on the line it ends with (``Replier._timed_step``).

Both functions are traced by the Lambda service alone, so X-Ray shows how long an invocation took
but not which call took it; the operator's runbook reads it from the record's outcome line instead.
The real replier over the fakes (``tests/unit/on_fakes.py``), on one settable clock: a step "takes"
what the clock moves while it runs, so the figures do not depend on the machine.
"""

from replyonce.adapters.agents import template_agent
from replyonce.agent import Conversation, Reply
from tests.unit.on_fakes import Desk

AGENT_SECONDS = 5  # well inside the lease: the record goes on to send in the same run


def replied_lines(log_records) -> list[dict]:
    return [line for line in log_records() if line.get("replied_to")]


def test_the_reply_line_names_the_agent_when_the_agent_held_the_time(log_records):
    desk = Desk()

    def slow_agent(conversation: Conversation) -> Reply:
        desk.clock.advance(AGENT_SECONDS)
        return template_agent(conversation)

    desk.agent = slow_agent
    desk.notify(desk.inbound())
    [line] = replied_lines(log_records)
    assert (line["slowest_step"], line["slowest_step_seconds"]) == ("AskAgent", AGENT_SECONDS)


def test_a_record_does_not_carry_the_slowest_step_of_the_one_before(log_records):
    desk = Desk()
    slow = {"left": 1}

    def slow_once(conversation: Conversation) -> Reply:
        if slow["left"]:
            slow["left"] -= 1
            desk.clock.advance(AGENT_SECONDS)
        return template_agent(conversation)

    desk.agent = slow_once
    desk.notify(desk.inbound(subject="First"))
    desk.notify(desk.inbound(subject="Second"))
    first, second = replied_lines(log_records)
    assert first["slowest_step_seconds"] == AGENT_SECONDS
    # Nothing moved the clock during the second record: no step of it was slower than nothing.
    assert "slowest_step" not in second
