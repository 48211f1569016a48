"""The state table (``STATE_TABLE``): its keys and item layout, in one place.

Two kinds of item share the table, told apart by the ``pk`` prefix:

``thread#{grant}#{thread}`` — one per thread (written under the lease)
    ``lease_owner`` (S), ``lease_expires_at`` (N, ms, worker clock)
        the thread lease; both absent when free.
    ``replies`` (M: reply id → N, Nylas time)
        the loop guard's memory: when each reply went out. Keyed by reply, so
        recording the same reply twice (a retried transaction, two holders
        finishing one intent) cannot count it twice.
    ``covered`` (M: message id → N, Nylas time)
        messages a sent reply covered (its draft saw them), newest
        ``ANSWERED_MEMORY`` kept.
    ``outbox`` (M)
        the send intent: the exact send request stored before the first send
        attempt (see :class:`SendIntent`); removed when the reply is recorded.
    ``expires_at`` (N) DynamoDB TTL.

``message#{grant}#{message}`` — the reply ledger, one per inbound message acted on
    ``status`` (``replied`` | ``failed``), ``reply_message_id``, ``replied_to``,
    ``intent_id``, ``reason``, ``recorded_at`` (N), ``expires_at`` (N, TTL).

Why one module: the lease, the ledger, the outbox and the ``thread-state``
ops command all read these items; a layout known in one place cannot drift
between its readers. Items written by earlier versions (``reply_times`` and
``answered`` as lists) are still read. The lease acquisition creates the two
maps, so a writer without the lease can set one key of them.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

THREAD_PREFIX = "thread#"
MESSAGE_PREFIX = "message#"

# How many recently answered message ids the thread item remembers (older ones live in the ledger).
ANSWERED_MEMORY = 50
# The loop guard's window (REPLY_BUDGET_PER_HOUR): the thread item keeps reply times this long.
REPLY_BUDGET_WINDOW_SECONDS = 3600

REPLIED = "replied"
FAILED = "failed"

# Attribute names, for the expressions of the modules that write them.
LEASE_OWNER = "lease_owner"
LEASE_EXPIRES_AT = "lease_expires_at"
REPLIES = "replies"
ANSWERED = "covered"
_LEGACY_REPLY_TIMES = "reply_times"
_LEGACY_ANSWERED = "answered"
OUTBOX = "outbox"
TTL = "expires_at"


def thread_key(grant_id: str, thread_id: str) -> str:
    return f"{THREAD_PREFIX}{grant_id}#{thread_id}"


def message_key(grant_id: str, message_id: str) -> str:
    return f"{MESSAGE_PREFIX}{grant_id}#{message_id}"


def _number(value: Mapping[str, Any] | None, default: int = 0) -> int:
    try:
        return int((value or {}).get("N", default))
    except (TypeError, ValueError):
        return default


def _string(value: Mapping[str, Any] | None) -> str:
    return str((value or {}).get("S", ""))


def _times(attribute: Mapping[str, Any] | None) -> dict[str, int]:
    """A ``M`` of id → N; an old list of N (times without ids) is keyed by position."""
    if not attribute:
        return {}
    if "M" in attribute:
        return {key: _number(value) for key, value in attribute["M"].items()}
    if "L" in attribute:
        values = attribute["L"]
        if values and "S" in values[0]:  # old ``answered``: ids, no times
            return {_string(v): 0 for v in values}
        return {f"legacy-{i}": _number(v) for i, v in enumerate(values)}
    return {}


def times_attribute(times: Mapping[str, int]) -> dict[str, Any]:
    return {"M": {key: {"N": str(moment)} for key, moment in times.items()}}


@dataclass(frozen=True)
class SendIntent:
    """A reply decided and stored before its first send attempt: the outbox.

    Every attempt — by this worker, another one, after a crash or a DLQ
    redrive hours later — sends ``request`` byte for byte, so a
    non-deterministic drafter can never produce a second, different email.

    Attributes
    ----------
    id:
        The intent's id; also sent as message metadata ``key1`` so the reply
        can be found in the thread after the ``Idempotency-Key`` has lapsed.
    target_id:
        The message replied to (``reply_to_message_id``).
    covered:
        Every message id the draft saw and the reply answers.
    request:
        The exact JSON body of ``POST /messages/send``.
    generation:
        Part of the ``Idempotency-Key``; moves on after a cached error.
    created_at:
        Nylas time (the thread read's ``Date``) when the intent was stored.
    """

    id: str
    target_id: str
    covered: tuple[str, ...]
    request: str
    generation: int = 0
    created_at: int = 0

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.request)

    def next_generation(self) -> "SendIntent":
        return replace(self, generation=self.generation + 1)

    def to_attribute(self) -> dict[str, Any]:
        return {
            "M": {
                "intent_id": {"S": self.id},
                "target_id": {"S": self.target_id},
                "covered": {"L": [{"S": m} for m in self.covered]},
                "request": {"S": self.request},
                "generation": {"N": str(self.generation)},
                "created_at": {"N": str(self.created_at)},
            }
        }

    @classmethod
    def from_attribute(cls, attribute: Mapping[str, Any] | None) -> "SendIntent | None":
        fields = (attribute or {}).get("M")
        if not fields:
            return None
        return cls(
            id=_string(fields.get("intent_id")),
            target_id=_string(fields.get("target_id")),
            covered=tuple(_string(m) for m in fields.get("covered", {}).get("L", [])),
            request=_string(fields.get("request")),
            generation=_number(fields.get("generation")),
            created_at=_number(fields.get("created_at")),
        )


@dataclass(frozen=True)
class ThreadState:
    """What a ``thread#`` item says (read in the same request that took the lease)."""

    replies: Mapping[str, int] = field(default_factory=dict)
    answered: Mapping[str, int] = field(default_factory=dict)
    intent: SendIntent | None = None
    lease_owner: str = ""
    lease_expires_at_ms: int = 0

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> "ThreadState":
        return cls(
            replies=_times(item.get(REPLIES)) or _times(item.get(_LEGACY_REPLY_TIMES)),
            answered=_times(item.get(ANSWERED)) or _times(item.get(_LEGACY_ANSWERED)),
            intent=SendIntent.from_attribute(item.get(OUTBOX)),
            lease_owner=_string(item.get(LEASE_OWNER)),
            lease_expires_at_ms=_number(item.get(LEASE_EXPIRES_AT)),
        )

    def replies_since(self, since: int) -> int:
        return sum(1 for moment in self.replies.values() if moment >= since)


@dataclass(frozen=True)
class LedgerEntry:
    """What a ``message#`` item says: the agent's action on one inbound message."""

    message_id: str
    status: str
    reply_message_id: str = ""
    replied_to: str = ""
    intent_id: str = ""
    reason: str = ""
    recorded_at: int = 0

    @classmethod
    def from_item(cls, message_id: str, item: Mapping[str, Any]) -> "LedgerEntry":
        return cls(
            message_id=message_id,
            status=_string(item.get("status")),
            reply_message_id=_string(item.get("reply_message_id")),
            replied_to=_string(item.get("replied_to")),
            intent_id=_string(item.get("intent_id")),
            reason=_string(item.get("reason")),
            recorded_at=_number(item.get("recorded_at")),
        )

    def to_item(self, grant_id: str, expires_at: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "pk": {"S": message_key(grant_id, self.message_id)},
            "status": {"S": self.status},
            "reply_message_id": {"S": self.reply_message_id},
            "recorded_at": {"N": str(self.recorded_at)},
            TTL: {"N": str(expires_at)},
        }
        for name in ("replied_to", "intent_id", "reason"):
            value = getattr(self, name)
            if value:
                item[name] = {"S": value}
        return item
