"""A grant's daily agent-call cap: whether a planned burst asks the agent, counts first, or is handed off.

The decision (``replyonce.rules.agent_calls``) as a table, its UTC day, and the core around it: a grant
without a cap takes no step more than before, a capped one counts before the agent (and before the
recipients' budgets), and a refusal is a hand-off the mailbox shows (invariant 7), recorded in shadow mode.
"""

import pytest

from replyonce.reasons import SkipReason
from replyonce.rules.agent_calls import AgentCallDecision, agent_call_decision, call_day, day_ends_at
from replyonce.state import AgentCalls

ASK, COUNT, HAND_OFF = AgentCallDecision.ASK, AgentCallDecision.COUNT, AgentCallDecision.HAND_OFF


@pytest.mark.parametrize(
    ("cap", "counted", "expected"),
    [
        # No cap: the agent is asked, nothing counted (no request more than before the cap existed).
        (0, None, ASK),
        (0, AgentCalls("i-1", allowed=False), ASK),
        # A cap: count first.
        (5, None, COUNT),
        (1, None, COUNT),
        # Counted now, or found counted by an earlier try of the same burst: ask.
        (5, AgentCalls("i-1", allowed=True), ASK),
        # Refused: the burst is a person's, the first refusal of the day or a later one alike.
        (5, AgentCalls("i-1", allowed=False), HAND_OFF),
        (5, AgentCalls("i-1", allowed=False, first_refusal=True), HAND_OFF),
        # An answer for another burst (the plan changed within the record): counted again.
        (5, AgentCalls("i-0", allowed=True), COUNT),
        (5, AgentCalls("i-0", allowed=False), COUNT),
    ],
)
def test_the_decision(cap, counted, expected):
    assert agent_call_decision(cap, "i-1", counted) is expected


@pytest.mark.parametrize(
    ("now", "day", "ends"),
    [
        (1_796_083_200, "2026-12-01", 1_796_169_600),  # 00:00:00 UTC: the day's first second
        (1_796_169_599, "2026-12-01", 1_796_169_600),  # 23:59:59 UTC: its last
        (1_796_169_600, "2026-12-02", 1_796_256_000),  # and the next day's cap is a new count
    ],
)
def test_a_call_counts_in_its_utc_day_and_the_grant_is_answered_again_when_it_ends(now, day, ends):
    assert call_day(now) == day
    assert day_ends_at(day) == ends


def test_the_cap_is_a_hand_off_reason():
    from replyonce.core import HANDED_OFF_SKIPS
    from replyonce.core.shadow import SHADOW_RECORDED_SKIPS

    assert SkipReason.AGENT_CALL_CAP in HANDED_OFF_SKIPS
    assert SkipReason.AGENT_CALL_CAP in SHADOW_RECORDED_SKIPS
