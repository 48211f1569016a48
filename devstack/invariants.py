"""Check the six invariants of DESIGN.md against a history of one run.

The history is what the outside world saw, not what our code believes:
every message in the Nylas mailbox with the real time it appeared (inbound
and the agent's replies), every webhook delivery with its HTTP status, and
the handlers' logs (skip reasons, queued notification ids). A violation is a
sentence naming the message, thread or notification concerned.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from devstack.webhook_sender import RETRIED_STATUSES
from replyonce.filters import message_skip_reason, sender_email

# What the handlers log, by the ``message`` of the record (functions/, replyonce/replier.py).
QUEUED = "notification queued"
REPLY_SENT = "reply sent"
SKIPPED = "notification skipped"
DUPLICATE_ABSORBED = "duplicate delivery absorbed"
LEASE_LOST = (
    "thread lease expired and was taken over before release",
    "thread lease was lost before the reply was recorded; recorded without it",
)

INVARIANTS = {
    1: "at most one reply per inbound message",
    2: "nothing silently lost",
    3: "one reply per burst",
    4: "never reply to itself or to machines; loop guard",
    5: "every skip logged with a reason",
    6: "200 only once queued; forged never queued; never 500",
}


@dataclass
class History:
    """Everything observed during a run."""

    agent_grants: dict[str, str]  # grant id -> agent address
    mailbox: list[tuple[float, dict[str, Any]]]  # (arrived_at, message), every grant
    deliveries: list[Any]  # devstack.webhook_sender.Delivery
    logs: list[dict[str, Any]]
    reply_budget_per_hour: int
    notified_message_ids: set[str] = field(default_factory=set)  # messages whose message.created was sent
    forged_notification_ids: set[str] = field(default_factory=set)
    dead_lettered_notification_ids: set[str] = field(default_factory=set)


def _eligible(message: dict[str, Any], agent_grants: dict[str, str]) -> bool:
    agent = agent_grants.get(message["grant_id"])
    return agent is not None and message_skip_reason(message, agent) is None


def check(history: History) -> dict[int, list[str]]:
    """Violations per invariant number (empty lists when all hold)."""
    violations: dict[int, list[str]] = {number: [] for number in INVARIANTS}
    by_id = {message["id"]: message for _, message in history.mailbox}
    arrived = {message["id"]: at for at, message in history.mailbox}
    threads: dict[tuple[str, str], list[tuple[float, dict[str, Any]]]] = defaultdict(list)
    for at, message in history.mailbox:
        threads[(message["grant_id"], message["thread_id"])].append((at, message))

    replies = [
        (at, m)
        for at, m in history.mailbox
        if m["grant_id"] in history.agent_grants and sender_email(m) == history.agent_grants[m["grant_id"]]
    ]
    replies_to: dict[str, int] = defaultdict(int)
    for _, reply in replies:
        target = reply.get("in_reply_to") or reply.get("reply_to_message_id")
        if target:
            replies_to[target] += 1
    # 1. At most one reply per inbound message.
    for target, count in replies_to.items():
        if count > 1:
            violations[1].append(f"message {target} got {count} replies")

    # 4. Never to itself, machines or other grants; the loop guard holds.
    for _, reply in replies:
        target_id = reply.get("in_reply_to") or reply.get("reply_to_message_id")
        target = by_id.get(target_id) if target_id else None
        if target is None:
            violations[4].append(f"reply {reply['id']} answers no known inbound message")
        elif not _eligible(target, history.agent_grants):
            violations[4].append(
                f"reply {reply['id']} answers {target_id}, which is the agent's own or a machine's"
            )
    for (grant, thread), items in threads.items():
        times = sorted(at for at, m in items if sender_email(m) == history.agent_grants.get(grant))
        for index, at in enumerate(times):
            within_hour = [t for t in times[: index + 1] if t > at - 3600]
            if len(within_hour) > history.reply_budget_per_hour:
                violations[4].append(f"thread {thread}: {len(within_hour)} replies within an hour")
                break

    # 3. One reply per burst: between two replies on a thread, some eligible message arrived; and
    # each reply answers a message of the current burst (arrived after the previous reply).
    for (grant, thread), items in threads.items():
        agent = history.agent_grants.get(grant)
        if agent is None:
            continue
        previous_reply_at = float("-inf")
        for at, message in sorted(items, key=lambda item: item[0]):
            if sender_email(message) != agent:
                continue
            target_id = message.get("in_reply_to") or message.get("reply_to_message_id")
            burst = [
                m
                for t, m in items
                if previous_reply_at <= t <= at
                and sender_email(m) != agent
                and _eligible(m, history.agent_grants)
            ]
            if not burst:
                violations[3].append(
                    f"thread {thread}: reply {message['id']} has no new inbound message to answer"
                )
            elif target_id and arrived.get(target_id, at) < previous_reply_at:
                violations[3].append(
                    f"thread {thread}: reply {message['id']} answers an already answered burst"
                )
            previous_reply_at = at

    # 2. Nothing silently lost; 5. every skip logged.
    skipped_messages = _skipped_message_ids(history.logs)
    outcomes = _outcomes_by_notification(history.logs)
    for at, message in history.mailbox:
        if message["id"] not in history.notified_message_ids or not _eligible(message, history.agent_grants):
            continue
        agent = history.agent_grants[message["grant_id"]]
        answered = any(
            reply_at >= at
            for reply_at, m in threads[(message["grant_id"], message["thread_id"])]
            if sender_email(m) == agent
        )
        if not answered and message["id"] not in skipped_messages:
            violations[2].append(f"message {message['id']} was neither answered nor skipped with a reason")
    for notification_id in _queued_notification_ids(history.logs):
        if notification_id not in outcomes and notification_id not in history.dead_lettered_notification_ids:
            violations[5].append(f"notification {notification_id} was queued but has no logged outcome")
    for record in history.logs:
        if record.get("message") == SKIPPED and not record.get("reason"):
            violations[5].append(f"skip without a reason: {record.get('notification_id')}")

    # 6. The endpoint: never 500, forged never queued, 200 only for queued notifications.
    queued = _queued_notification_ids(history.logs)
    for delivery in history.deliveries:
        if delivery.status == 500:
            violations[6].append(f"delivery of {delivery.notification_id} answered 500")
        # A forged request is refused (401), or, when we cannot check it (secret unreadable,
        # function timed out), answered a status Nylas retries; never accepted.
        if delivery.forged and delivery.status not in ({401} | RETRIED_STATUSES):
            violations[6].append(f"forged delivery of {delivery.notification_id} answered {delivery.status}")
        if not delivery.forged and delivery.status == 200 and delivery.notification_id not in queued:
            violations[6].append(f"{delivery.notification_id} answered 200 but was never queued")
    for notification_id in history.forged_notification_ids & queued:
        violations[6].append(f"forged notification {notification_id} was queued")
    return violations


def _queued_notification_ids(logs: Iterable[dict[str, Any]]) -> set[str]:
    return {r["notification_id"] for r in logs if r.get("message") == QUEUED and r.get("notification_id")}


def _outcomes_by_notification(logs: Iterable[dict[str, Any]]) -> set[str]:
    final = {REPLY_SENT, SKIPPED, DUPLICATE_ABSORBED}
    return {r["notification_id"] for r in logs if r.get("message") in final and r.get("notification_id")}


def _skipped_message_ids(logs: Iterable[dict[str, Any]]) -> set[str]:
    return {r["message_id"] for r in logs if r.get("message") == SKIPPED and r.get("message_id")}


def skips_by_reason(logs: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Skipped notifications and absorbed duplicates, counted by their logged reason code."""
    return dict(Counter(r["reason"] for r in logs if r.get("message") in (SKIPPED, DUPLICATE_ABSORBED)))


def leases_lost(logs: Iterable[dict[str, Any]]) -> int:
    """Holders that found their thread lease taken over (the owner-token fence refused them)."""
    return sum(1 for r in logs if r.get("message") in LEASE_LOST)


def sends_replayed(logs: Iterable[dict[str, Any]]) -> int:
    """Sends Nylas answered from its ``Idempotency-Key`` cache instead of sending again."""
    return sum(1 for r in logs if r.get("message") == REPLY_SENT and r.get("replayed"))
