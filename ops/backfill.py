"""``ops backfill``: feed what the webhook never delivered through the normal pipeline.

When a webhook was ``failed`` (Nylas stops delivering after its retries) or an
outage outlasted Nylas' retries, the messages that arrived meanwhile were
never queued. For a time window, this lists each agent grant's messages at
Nylas (``GET /v3/grants/{grant}/messages`` with ``received_after`` /
``received_before``, page by page) and keeps those the replier has neither
answered nor recorded (the reply ledger in ``STATE_TABLE``) and would not skip
for what the message itself says (the agent's own mail, machines: the
replier's own filters). Each is put on the notification queue as a synthetic
``message.created`` notification, exactly as the webhook queues one, so every
exactly-once guard applies: the ledger, the thread lease, Nylas'
``Idempotency-Key`` - and Powertools idempotency on the notification id, which
is deterministic (``backfill:{grant}:{message}``) so running the same backfill
twice queues a duplicate at worst, never a second reply.

Dry run by default: it prints what it would queue; ``--apply`` queues.
"""

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ops.errors import ConfigurationError
from ops.nylas_admin import NylasAdmin
from replyonce.adapters.queue import NotificationQueue
from replyonce.config import TrustedList
from replyonce.core import settled_reason
from replyonce.mail import read_message
from replyonce.ports import StateStore
from replyonce.rules.notification import Notification
from replyonce.rules.screening import CLOSED_FOLDER_NAMES, Agents, reason_not_to_answer

SOURCE = "/replyonce/backfill"
ENQUEUE = "enqueue"


def notification_id(grant_id: str, message_id: str) -> str:
    """The backfill notification's id: the same message always gets the same id (idempotency key)."""
    return f"backfill:{grant_id}:{message_id}"


def synthetic_notification(message: dict[str, Any], now: float) -> dict[str, Any]:
    """A ``message.created`` notification for ``message``, shaped as Nylas sends one."""
    return {
        "specversion": "1.0",
        "type": "message.created",
        "source": SOURCE,
        "id": notification_id(str(message["grant_id"]), str(message["id"])),
        "time": int(now),
        "webhook_delivery_attempt": 1,
        "data": {"application_id": "", "object": message},
    }


@dataclass(frozen=True)
class Window:
    """``[received_after, received_before)`` in Unix seconds."""

    received_after: int
    received_before: int


def parse_time(text: str) -> int:
    """Unix seconds from ``1764496800`` or ISO 8601 (``2026-11-30T10:00Z``; no zone means UTC)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigurationError(
            f"not a time: {text!r} (Unix seconds or ISO 8601, e.g. 2026-11-30T10:00Z)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def window(since: str, until: str | None, now: float) -> Window:
    """The window an operator asked for; ``until`` defaults to now."""
    start = parse_time(since)
    # Nylas counts in whole seconds: "until now" includes what arrived during the current second.
    end = parse_time(until) if until else int(now) + 1
    if start >= end:
        raise ConfigurationError(f"empty window: --since {since} is not before --until {until or 'now'}")
    return Window(start, end)


@dataclass(frozen=True)
class Candidate:
    """One listed message and what the backfill does with it (``enqueue`` or the reason not to)."""

    grant_id: str
    message_id: str
    thread_id: str
    decision: str
    message: dict[str, Any] = field(repr=False, compare=False)


@dataclass
class BackfillPlan:
    window: Window
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def to_enqueue(self) -> list[Candidate]:
        return [c for c in self.candidates if c.decision == ENQUEUE]

    def decisions(self) -> Counter[str]:
        return Counter(c.decision for c in self.candidates)


def plan_backfill(
    inbox: NylasAdmin,
    ledger: StateStore,
    grant_ids: Iterable[str],
    window: Window,
    *,
    agent_grant_ids: Iterable[str] = (),
    trusted_senders: Iterable[str] = (),
    trusted_lists: Iterable[TrustedList] = (),
) -> BackfillPlan:
    """Decide, for every message of the window, whether it goes through the pipeline again.

    Not queued: messages the ledger has (answered, covered by a reply, or failed for good), and
    those the replier would skip for what the message says (``replyonce.rules.screening``): mail from any
    agent grant's address (``agent_grant_ids``, default ``grant_ids``), machines, lists, junk and trash.
    ``trusted_lists``: the stack's ``TrustedLists`` (``replyonce.config.trusted_lists``): a customer
    a group
    the company runs relayed is answered by the replier, so it is queued, not dropped as a list's mail.
    """
    grant_ids = list(grant_ids)
    agent_ids = tuple(agent_grant_ids) or tuple(grant_ids)
    agents = Agents(agent_ids, {g: inbox.grant_email(g) for g in agent_ids})
    trusted = frozenset(s.strip().lower() for s in trusted_senders if s.strip())
    plan = BackfillPlan(window)
    for grant_id in grant_ids:
        for message in inbox.received_messages(grant_id, window.received_after, window.received_before):
            message_id = str(message.get("id", ""))
            reason = reason_not_to_answer(
                read_message(message),
                grant_id=grant_id,
                agents=agents,
                trusted_senders=trusted,
                closed_folder_ids=CLOSED_FOLDER_NAMES,
                trusted_lists=frozenset(t.list_id for t in trusted_lists),
            )
            if reason is None:
                entry = ledger.ledger_entry(grant_id, message_id)
                if entry is not None:
                    reason = settled_reason(entry.status)
            decision = reason.value if reason is not None else None
            plan.candidates.append(
                Candidate(
                    grant_id,
                    message_id,
                    str(message.get("thread_id", "")),
                    decision or ENQUEUE,
                    {**message, "grant_id": message.get("grant_id") or grant_id},
                )
            )
    return plan


def apply_backfill(
    plan: BackfillPlan, queue: NotificationQueue, clock: Callable[[], float] = time.time
) -> None:
    """Queue every ``enqueue`` candidate as the webhook would (``render`` reports them)."""
    for candidate in plan.to_enqueue:
        queue.enqueue(Notification(synthetic_notification(candidate.message, clock())))


def render(plan: BackfillPlan, *, applied: bool) -> str:
    """What was (or would be) queued, then the counts; ids only, never addresses or content."""
    verb = "queued" if applied else "would queue"
    lines = [
        f"window: received_after={plan.window.received_after} received_before={plan.window.received_before}",
        f"{len(plan.candidates)} message(s) listed at Nylas",
    ]
    for candidate in plan.to_enqueue:
        identifier = notification_id(candidate.grant_id, candidate.message_id)
        lines.append(f"  {verb} {identifier}  thread {candidate.thread_id}")
    for decision, count in sorted(plan.decisions().items()):
        lines.append(f"  {decision:<24} {count}")
    if not applied and plan.to_enqueue:
        lines.append("dry run: nothing was queued; run again with --apply to queue them")
    return "\n".join(lines)
