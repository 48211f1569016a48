"""The replier's decisions, as pure functions: which message to answer, which ones the reply
covers, to whom it goes, which ``Idempotency-Key`` it carries, and what a send's answer means.

No I/O here, so each rule has a fast table-driven test (``tests/test_decisions.py``); the
replier (``replier.py``) does the reads and writes around them.

Order is the order in which messages reached the mailbox, as the thread listing gives it
(newest first), never the sender's ``date``: that header comes from the sender's clock and a
back-dated or future-dated message must neither be skipped nor steal later replies.
"""

import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from replyonce import filters

ALREADY_REPLIED = "already_replied"
NO_RECIPIENT = "no_recipient"
REPLY_BUDGET_EXHAUSTED = "reply_budget_exhausted"

# Nylas statuses worth another attempt (the record comes back): throttling, Nylas' own
# failures, and 401 — during an API-key rotation the cached key is stale for up to the
# secret's cache age, and a reply refused for our key is ours to retry.
RETRYABLE_STATUSES = frozenset({401, 408, 429, 500, 502, 503, 504, 507})
CONCURRENT_IDEMPOTENT_REQUEST = "api.concurrent_idempotent_request"
INVALID_IDEMPOTENT_REQUEST = "api.invalid_idempotent_request"
PROVIDER_ERROR = "provider_error"

# Changing it changes every key: a deploy would re-send what the old keys still fence.
_KEY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/replyonce/idempotency-key")


@dataclass(frozen=True)
class ReplyPlan:
    """One reply: to ``target``, answering every message in ``covered`` (target included)."""

    target: Mapping[str, Any]
    covered: tuple[str, ...]
    recipients: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class Skip:
    reason: str


def _id(message: Mapping[str, Any]) -> str:
    value = message.get("id")
    return value if isinstance(value, str) else ""


def plan_reply(
    trigger_id: str,
    messages: Sequence[Mapping[str, Any]],
    answered: Collection[str],
    own_addresses: Collection[str],
    trusted_senders: Collection[str] = (),
) -> ReplyPlan | Skip:
    """Decide the reply for the notification about ``trigger_id``.

    Parameters
    ----------
    trigger_id:
        The message the notification is about.
    messages:
        The thread as read inside the lease, newest arrival first, with headers;
        the trigger message must be among them (the caller fetches it when the
        thread is longer than one page).
    answered:
        Ids some earlier reply covered (its draft saw them).

    Returns
    -------
    ReplyPlan or Skip
        The burst is every eligible message not yet covered: one reply to the
        newest of them covers them all (invariant 3). A message that reached
        the thread after an earlier reply's read is not in ``answered``, so it
        is answered now, whatever its ``date`` says (invariant 2).
    """
    if trigger_id in answered:
        return Skip(ALREADY_REPLIED)
    trigger = next((m for m in messages if _id(m) == trigger_id), None)
    if trigger is None:
        raise ValueError(f"the trigger message {trigger_id!r} is not among the messages read")
    reason = filters.message_skip_reason(trigger, own_addresses, trusted_senders)
    if reason:
        return Skip(reason)
    burst = [
        m
        for m in messages
        if _id(m)
        and _id(m) not in answered
        and filters.message_skip_reason(m, own_addresses, trusted_senders) is None
    ]
    for target in burst:  # newest first; a target nobody may be mailed falls to the next
        recipients = reply_recipients(target, own_addresses, trusted_senders)
        if recipients:
            return ReplyPlan(target, tuple(dict.fromkeys(_id(m) for m in burst)), recipients)
    return Skip(NO_RECIPIENT)


def _domain(email: str) -> str:
    return email.rsplit("@", 1)[-1] if "@" in email else ""


def reply_recipients(
    message: Mapping[str, Any], own_addresses: Collection[str], trusted_senders: Collection[str] = ()
) -> tuple[dict[str, str], ...]:
    """Who receives the reply: ``Reply-To`` only where it cannot be abused, else ``From``.

    Anyone can write any ``Reply-To``; honouring it blindly lets a stranger make
    the agent mail third parties from your domain. A ``Reply-To`` address is
    used when it is in the sender's own domain, or when the sender is a trusted
    one (a contact form: ``REPLY_TO_TRUSTED_SENDERS``); otherwise the reply goes
    to ``From``. An agent address never receives a reply.
    """
    sender = filters.sender_email(message)

    def usable(participants: Any, allowed: Callable[[str], bool]) -> tuple[dict[str, str], ...]:
        found: dict[str, dict[str, str]] = {}
        for participant in participants if isinstance(participants, list) else []:
            email = filters.address(participant)
            if "@" not in email or email in own_addresses or not allowed(email):
                continue
            name = str(participant.get("name") or "").strip()
            found.setdefault(email, {"name": name, "email": email} if name else {"email": email})
        return tuple(found.values())

    reply_to = usable(
        message.get("reply_to"), lambda email: sender in trusted_senders or _domain(email) == _domain(sender)
    )
    return reply_to or usable(list(message.get("from") or [])[:1], lambda email: True)


def idempotency_key(grant_id: str, target_id: str, generation: int = 0) -> str:
    """The send fence: the same key for every attempt of one generation of one reply.

    Generation 0 keeps the key earlier versions used (``grant:message``), so a
    deploy does not re-open the fence of sends in flight.
    """
    name = f"{grant_id}:{target_id}" if generation == 0 else f"{grant_id}:{target_id}:{generation}"
    return str(uuid.uuid5(_KEY_NAMESPACE, name))


class SendOutcome(Enum):
    """What a send's answer means for the reply."""

    SENT = "sent"  # evidence: Nylas accepted it (now or, replayed, earlier)
    RETRY_SAME_KEY = "retry_same_key"  # may have gone out or may go out: the key must fence it
    RETRY_NEXT_KEY = "retry_next_key"  # the key holds a cached failure: only a new key can send
    REJECTED = "rejected"  # no retry can succeed


def classify_send(status: int | None, error_type: str = "", *, replayed: bool = False) -> SendOutcome:
    """Classify a send's answer (Nylas' idempotent-send rules).

    - no answer (network failure, timeout): the same key;
    - 200/202, replayed or not: sent;
    - 409 ``concurrent_idempotent_request``: the same key, in a few seconds;
    - 409 ``invalid_idempotent_request``: the key was used with another body —
      never evidence of a send; only a new key can go on;
    - a provider's error, or any retryable error replayed from the key's cache
      (``Idempotent-Response: true``): Nylas caches errors for the key's hour,
      so the same key would get the same error until then: the next key;
    - other 5xx, 429, 401: the same key;
    - any other 4xx: rejected.
    """
    if status is None:
        return SendOutcome.RETRY_SAME_KEY
    if status in (200, 202):
        return SendOutcome.SENT
    if error_type == CONCURRENT_IDEMPOTENT_REQUEST:
        return SendOutcome.RETRY_SAME_KEY
    if error_type == INVALID_IDEMPOTENT_REQUEST:
        return SendOutcome.RETRY_NEXT_KEY
    if status in RETRYABLE_STATUSES:
        if replayed or error_type == PROVIDER_ERROR:
            return SendOutcome.RETRY_NEXT_KEY
        return SendOutcome.RETRY_SAME_KEY
    return SendOutcome.REJECTED


def loop_guard_exhausted(
    recorded_replies: Iterable[int], agent_message_dates: Iterable[int], *, now: int, window: int, budget: int
) -> bool:
    """Whether the thread already had ``budget`` replies in the ``window`` seconds before ``now``.

    All three times are Nylas' (the ``Date`` of its answers, the dates Nylas
    gave our sent messages), never the worker's clock, so a worker whose clock
    runs an hour fast or slow neither forgets nor invents replies. Two sources,
    each enough alone: what we recorded, and the agent's messages the thread
    read shows (a reply whose worker died before recording it).
    """
    since = now - window
    recorded = sum(1 for moment in recorded_replies if moment >= since)
    visible = sum(1 for moment in agent_message_dates if moment >= since)
    return max(recorded, visible) >= budget
