"""The reply ledger: has the agent already acted on this message?

Secondary key (DESIGN.md): ``data.object.id``. A ``message.created`` and a
later notification for the same message are distinct notifications; the
ledger catches the second. Entries live in ``STATE_TABLE`` next to the thread
items and outlive the idempotency record (24 h) and the Nylas
``Idempotency-Key`` (1 h).
"""

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from replyonce.lease import ANSWERED_MEMORY, REPLY_BUDGET_WINDOW_SECONDS, Lease

REPLIED = "replied"
FAILED = "failed"
_APPEND_REPLY_TIME = (
    "SET reply_times = list_append(if_not_exists(reply_times, :empty), :now_list), last_reply_at = :now"
)


def message_key(grant_id: str, message_id: str) -> str:
    return f"message#{grant_id}#{message_id}"


@dataclass(frozen=True)
class LedgerEntry:
    message_id: str
    status: str
    reply_message_id: str
    recorded_at: int


class ReplyLedger:
    """Read and write ledger entries; record a reply together with the thread state.

    Parameters
    ----------
    table_name:
        ``STATE_TABLE``.
    dynamodb_client:
        Injectable boto3 DynamoDB client.
    ttl_seconds:
        How long an entry is kept (``expires_at``).
    clock:
        Wall clock in seconds.
    """

    def __init__(
        self,
        table_name: str,
        dynamodb_client: Any,
        *,
        ttl_seconds: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._table = table_name
        self._dynamodb = dynamodb_client
        self._ttl = ttl_seconds
        self._clock = clock

    def entry(self, grant_id: str, message_id: str) -> LedgerEntry | None:
        item = self._dynamodb.get_item(
            TableName=self._table, Key={"pk": {"S": message_key(grant_id, message_id)}}, ConsistentRead=True
        ).get("Item")
        if not item:
            return None
        return LedgerEntry(
            message_id=message_id,
            status=item["status"]["S"],
            reply_message_id=item.get("reply_message_id", {}).get("S", ""),
            recorded_at=int(item["recorded_at"]["N"]),
        )

    def _entry_item(
        self, grant_id: str, message_id: str, status: str, reply_message_id: str, **extra: str
    ) -> dict:
        now = int(self._clock())
        item = {
            "pk": {"S": message_key(grant_id, message_id)},
            "status": {"S": status},
            "reply_message_id": {"S": reply_message_id},
            "recorded_at": {"N": str(now)},
            "expires_at": {"N": str(now + self._ttl)},
        }
        item.update({name: {"S": value} for name, value in extra.items() if value})
        return item

    def record_reply(
        self, lease: Lease, grant_id: str, covered: Iterable[str], reply_message_id: str, replied_to: str
    ) -> bool:
        """Record one reply for every message it covers and free the lease, in one transaction.

        The thread update is conditioned on still owning the lease. Returns
        ``False`` when the lease was lost (a paused worker): the ledger is then
        written without the lease, because the email has gone out either way.
        """
        covered = list(dict.fromkeys(covered))
        now = int(self._clock())
        window_start = now - REPLY_BUDGET_WINDOW_SECONDS
        reply_times = [t for t in lease.state.reply_times if t >= window_start] + [now]
        answered = (list(lease.state.answered) + [m for m in covered if m not in lease.state.answered])[
            -ANSWERED_MEMORY:
        ]
        puts = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": self._entry_item(grant_id, m, REPLIED, reply_message_id, replied_to=replied_to),
                }
            }
            for m in covered
        ]
        thread_update = {
            "TableName": self._table,
            "Key": {"pk": {"S": lease.key}},
            "UpdateExpression": "SET reply_times = :times, answered = :answered, last_reply_at = :now "
            "REMOVE lease_owner, lease_expires_at",
            "ExpressionAttributeValues": {
                ":times": {"L": [{"N": str(t)} for t in reply_times]},
                ":answered": {"L": [{"S": m} for m in answered]},
                ":now": {"N": str(now)},
            },
        }
        try:
            self._dynamodb.transact_write_items(
                TransactItems=[
                    *puts,
                    {
                        "Update": {
                            **thread_update,
                            "ConditionExpression": "lease_owner = :token",
                            "ExpressionAttributeValues": {
                                **thread_update["ExpressionAttributeValues"],
                                ":token": {"S": lease.token},
                            },
                        }
                    },
                ]
            )
        except ClientError as exc:
            reasons = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
            if (
                exc.response["Error"]["Code"] != "TransactionCanceledException"
                or "ConditionalCheckFailed" not in reasons
            ):
                raise
            # Lost the lease: keep the ledger true (the email was sent) and
            # count the reply for the loop guard, without touching the new lease.
            self._dynamodb.transact_write_items(
                TransactItems=[
                    *puts,
                    {
                        "Update": {
                            "TableName": self._table,
                            "Key": {"pk": {"S": lease.key}},
                            "UpdateExpression": _APPEND_REPLY_TIME,
                            "ExpressionAttributeValues": {
                                ":empty": {"L": []},
                                ":now_list": {"L": [{"N": str(now)}]},
                                ":now": {"N": str(now)},
                            },
                        }
                    },
                ]
            )
            lease.released = True
            return False
        lease.released = True
        return True

    def record_failure(self, grant_id: str, message_id: str, reason: str) -> None:
        """Mark a message whose reply Nylas rejected for good, so no retry storm follows."""
        self._dynamodb.put_item(
            TableName=self._table, Item=self._entry_item(grant_id, message_id, FAILED, "", reason=reason)
        )
