"""The thread lease: one worker at a time drafts a reply for a thread.

A lease is a conditional write on the thread's item in ``STATE_TABLE``. It is
taken only when no lease exists or the existing one's ``lease_expires_at`` is
in the past — compared in the condition itself, because DynamoDB TTL deletes
expired items up to days late. Release and the final record are conditioned
on the owner token, so a worker that lost its lease cannot free someone
else's. The lease serialises work; the send's ``Idempotency-Key`` is what
makes a stale holder harmless.
"""

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from replyonce.exceptions import ThreadBusyError

# How many recently answered message ids the thread item remembers.
ANSWERED_MEMORY = 50
# The loop guard's window (REPLY_BUDGET_PER_HOUR): the thread item keeps reply times this long.
REPLY_BUDGET_WINDOW_SECONDS = 3600


def thread_key(grant_id: str, thread_id: str) -> str:
    return f"thread#{grant_id}#{thread_id}"


@dataclass(frozen=True)
class ThreadState:
    """What the thread item says, read in the same request that took the lease."""

    reply_times: tuple[int, ...] = ()
    answered: tuple[str, ...] = ()

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> "ThreadState":
        return cls(
            reply_times=tuple(int(n["N"]) for n in item.get("reply_times", {}).get("L", [])),
            answered=tuple(s["S"] for s in item.get("answered", {}).get("L", [])),
        )

    def replies_since(self, since: int) -> int:
        return sum(1 for moment in self.reply_times if moment >= since)


@dataclass
class Lease:
    """A held lease: the token proves ownership in every later write."""

    key: str
    token: str
    expires_at_ms: int
    state: ThreadState = field(default_factory=ThreadState)
    released: bool = False


class ThreadLeases:
    """Acquire and release thread leases in ``STATE_TABLE``.

    Parameters
    ----------
    table_name:
        ``STATE_TABLE``.
    dynamodb_client:
        Injectable boto3 DynamoDB client.
    item_ttl_seconds:
        TTL of the thread item (``expires_at``), refreshed on every lease.
    clock:
        Wall clock in seconds; injectable so tests can play a skewed worker.
    """

    def __init__(
        self,
        table_name: str,
        dynamodb_client: Any,
        *,
        item_ttl_seconds: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._table = table_name
        self._dynamodb = dynamodb_client
        self._item_ttl = item_ttl_seconds
        self._clock = clock

    def acquire(self, key: str, duration_ms: int) -> Lease:
        """Take the lease for ``duration_ms`` or raise :class:`ThreadBusyError`.

        The thread state comes back in the same request (``ALL_NEW``), so
        the re-check inside the lease costs no extra read.
        """
        now_ms = int(self._clock() * 1000)
        token = uuid.uuid4().hex
        expires_at_ms = now_ms + max(duration_ms, 1000)
        try:
            response = self._dynamodb.update_item(
                TableName=self._table,
                Key={"pk": {"S": key}},
                UpdateExpression="SET lease_owner = :token, lease_expires_at = :expires, expires_at = :ttl",
                ConditionExpression="attribute_not_exists(lease_owner) OR lease_expires_at < :now",
                ExpressionAttributeValues={
                    ":token": {"S": token},
                    ":expires": {"N": str(expires_at_ms)},
                    ":now": {"N": str(now_ms)},
                    ":ttl": {"N": str(int(self._clock()) + self._item_ttl)},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            held_until = int(exc.response.get("Item", {}).get("lease_expires_at", {}).get("N", now_ms))
            raise ThreadBusyError(key, max(0, (held_until - now_ms) // 1000 + 1)) from None
        return Lease(key, token, expires_at_ms, ThreadState.from_item(response["Attributes"]))

    def release(self, lease: Lease) -> bool:
        """Free the lease if we still own it; ``False`` when it was lost meanwhile."""
        if lease.released:
            return True
        try:
            self._dynamodb.update_item(
                TableName=self._table,
                Key={"pk": {"S": lease.key}},
                UpdateExpression="REMOVE lease_owner, lease_expires_at",
                ConditionExpression="lease_owner = :token",
                ExpressionAttributeValues={":token": {"S": lease.token}},
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        finally:
            lease.released = True
        return True
