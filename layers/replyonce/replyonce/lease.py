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
from replyonce.state import ANSWERED, LEASE_EXPIRES_AT, LEASE_OWNER, REPLIES, TTL, ThreadState, thread_key

__all__ = ["Lease", "ThreadLeases", "thread_key"]

# While another worker holds the thread, look again this often (one conditional write each).
LEASE_POLL_SECONDS = 0.5


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
    sleep:
        Injectable sleep, for the wait in :meth:`acquire`.
    """

    def __init__(
        self,
        table_name: str,
        dynamodb_client: Any,
        *,
        item_ttl_seconds: int,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._table = table_name
        self._dynamodb = dynamodb_client
        self._item_ttl = item_ttl_seconds
        self._clock = clock
        self._sleep = sleep

    def acquire(self, key: str, duration_ms: int, *, wait_seconds: float = 0.0) -> Lease:
        """Take the lease for ``duration_ms``, waiting up to ``wait_seconds`` for its holder.

        Why wait here rather than only send the record back to the queue: a
        burst's later notifications meet the holder of the first one, whose
        reply usually covers them a second or two later. Polling for that long
        answers them (as already covered, or with their own reply) as soon as
        the holder is done, instead of a busy-retry cycle later.

        The thread state comes back in the same request (``ALL_NEW``), so
        the re-check inside the lease costs no extra read.

        Raises
        ------
        ThreadBusyError
            Still held after ``wait_seconds``.
        """
        polls = int(max(wait_seconds, 0.0) / LEASE_POLL_SECONDS)
        for _ in range(polls):
            try:
                return self._try_acquire(key, duration_ms)
            except ThreadBusyError:
                self._sleep(LEASE_POLL_SECONDS)
        return self._try_acquire(key, duration_ms)

    def _try_acquire(self, key: str, duration_ms: int) -> Lease:
        now_ms = int(self._clock() * 1000)
        token = uuid.uuid4().hex
        expires_at_ms = now_ms + max(duration_ms, 1000)
        try:
            response = self._dynamodb.update_item(
                TableName=self._table,
                Key={"pk": {"S": key}},
                UpdateExpression=f"SET {LEASE_OWNER} = :token, {LEASE_EXPIRES_AT} = :expires, {TTL} = :ttl, "
                f"{REPLIES} = if_not_exists({REPLIES}, :empty), "
                f"{ANSWERED} = if_not_exists({ANSWERED}, :empty)",
                ConditionExpression=f"attribute_not_exists({LEASE_OWNER}) OR {LEASE_EXPIRES_AT} < :now",
                ExpressionAttributeValues={
                    ":token": {"S": token},
                    ":expires": {"N": str(expires_at_ms)},
                    ":now": {"N": str(now_ms)},
                    ":ttl": {"N": str(int(self._clock()) + self._item_ttl)},
                    ":empty": {"M": {}},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            held_until = ThreadState.from_item(exc.response.get("Item", {})).lease_expires_at_ms or now_ms
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
                UpdateExpression=f"REMOVE {LEASE_OWNER}, {LEASE_EXPIRES_AT}",
                ConditionExpression=f"{LEASE_OWNER} = :token",
                ExpressionAttributeValues={":token": {"S": lease.token}},
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        finally:
            lease.released = True
        return True
