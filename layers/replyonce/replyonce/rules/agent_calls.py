"""A grant's daily cap on agent calls (``daily_agent_call_cap``): ask the agent, count first, or hand off.

Pure: the day is Nylas' time's UTC day, the decision a table (``tests/unit/test_agent_calls.py``). The
count itself is the state table's (``StateStore.count_agent_call``, a conditional write below the cap,
idempotent per burst); the core asks it only for a grant with a cap, so a grant without one (``0``, the
default) costs no request more than before.

Why a burst and not a record is what counts: the count is taken inside the record's idempotent call
(``replyonce.shell.consumer``), and Powertools idempotency remembers only a record that *finished*; a
record deferred after its count (the agent failed or outlived its timeout, a Nylas read failed, the
lease was lost, the invocation ran out) runs every step again when it comes back, the count included.
Keyed by the burst's intent id (``Conversation.key``: the same on every retry of the burst), the
retry finds itself counted and asks the agent without spending a second call of the cap. A burst that
grows (a new message on the thread) is a new question to the agent, and counts once more.
"""

import calendar
import time
from enum import StrEnum

from replyonce.state import AgentCalls

DAY_SECONDS = 86_400


class AgentCallDecision(StrEnum):
    """What a planned burst does about the agent under its grant's cap."""

    ASK = "ask"
    """Ask the agent: the grant has no cap, or the burst is counted (now or by an earlier try)."""
    COUNT = "count"
    """Count the call first (a conditional write below the cap)."""
    HAND_OFF = "hand_off"
    """The cap is reached for today: the burst is a person's (``agent_call_cap``), not the agent's."""


def agent_call_decision(cap: int, intent_id: str, counted: AgentCalls | None) -> AgentCallDecision:
    """Whether the burst ``intent_id`` asks the agent, counts the call first, or is handed off.

    Parameters
    ----------
    cap:
        The grant's ``daily_agent_call_cap``; ``0``: no cap (nothing is counted).
    intent_id:
        The burst's intent id.
    counted:
        The count's answer in this record (``None``: not asked yet); an answer for another burst (the
        plan changed since) is asked again.
    """
    if cap <= 0:
        return AgentCallDecision.ASK
    if counted is None or counted.intent_id != intent_id:
        return AgentCallDecision.COUNT
    return AgentCallDecision.ASK if counted.allowed else AgentCallDecision.HAND_OFF


def call_day(now: int) -> str:
    """The UTC day (``YYYY-MM-DD``) of Nylas' time ``now``: the day a call counts in.

    Why UTC and Nylas' time: one day for every replier container and Region, whatever their clocks and
    wherever the grant's people are; a grant over its cap is asked again from 00:00 UTC.
    """
    return time.strftime("%Y-%m-%d", time.gmtime(now))


def day_ends_at(day: str) -> int:
    """The epoch second the UTC day ``day`` ends (when a grant over its cap is answered again)."""
    return calendar.timegm(time.strptime(day, "%Y-%m-%d")) + DAY_SECONDS
