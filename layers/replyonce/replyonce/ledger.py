"""The reply ledger: has the agent already acted on this message?

Secondary key (docs/design.md): ``data.object.id``. A ``message.created`` and a
later notification for the same message are distinct notifications; the
ledger catches the second. Entries live in ``STATE_TABLE`` next to the thread
items (layout: ``replyonce.state``) and outlive the idempotency record (24 h)
and the Nylas ``Idempotency-Key`` (1 h).

A message is recorded as replied only with evidence of the send (a 2xx from
Nylas, or the reply found in the mailbox by its intent id), and only for the
messages the reply's draft saw (the intent's ``covered`` ids).
"""

import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from botocore.exceptions import ClientError

from replyonce.lease import Lease
from replyonce.state import (
    ANSWERED,
    ANSWERED_MEMORY,
    FAILED,
    LEASE_EXPIRES_AT,
    LEASE_OWNER,
    OUTBOX,
    REPLIED,
    REPLIES,
    REPLY_BUDGET_WINDOW_SECONDS,
    LedgerEntry,
    SendIntent,
    message_key,
    times_attribute,
)

__all__ = ["FAILED", "REPLIED", "LedgerEntry", "ReplyLedger", "message_key"]


def _request_token(intent_id: str, purpose: str) -> str:
    """A ``ClientRequestToken`` (≤ 36 characters) per intent and purpose.

    Why: botocore retries a transaction whose response was lost; with the
    token, DynamoDB answers the retry with the first outcome instead of
    running it again (for 10 minutes), so a lost response cannot make the
    owner condition fail and send us down the "lease lost" path.
    """
    return uuid.uuid5(uuid.NAMESPACE_OID, f"{intent_id}:{purpose}").hex


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
        Wall clock in seconds (``recorded_at`` and the TTL only: no decision rests on it).
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
        return LedgerEntry.from_item(message_id, item) if item else None

    def _puts(self, grant_id: str, entries: Iterable[LedgerEntry]) -> list[dict[str, Any]]:
        expires_at = int(self._clock()) + self._ttl
        return [{"Put": {"TableName": self._table, "Item": e.to_item(grant_id, expires_at)}} for e in entries]

    def record_reply(
        self, lease: Lease, grant_id: str, intent: SendIntent, reply_message_id: str, sent_at: int
    ) -> bool:
        """Record one sent reply for every message it covers, clear the outbox, free the lease.

        One transaction, the thread update conditioned on still owning the
        lease. Returns ``False`` when the lease was lost (a paused worker): the
        ledger and the reply's time are then written without the lease, since
        the email went out either way; the outbox is left to the new holder,
        which finds the reply by its key or its intent id and records it again
        — harmlessly, because reply times are keyed by intent id.

        Parameters
        ----------
        sent_at:
            Nylas time of the send (for the loop guard's window).
        """
        now = int(self._clock())
        entries = [
            LedgerEntry(m, REPLIED, reply_message_id, intent.target_id, intent.id, recorded_at=now)
            for m in dict.fromkeys(intent.covered)
        ]
        since = sent_at - REPLY_BUDGET_WINDOW_SECONDS
        replies = {rid: t for rid, t in lease.state.replies.items() if t >= since and rid != intent.id}
        replies[intent.id] = sent_at
        answered = dict(lease.state.answered) | dict.fromkeys(intent.covered, sent_at)
        newest = sorted(answered.items(), key=lambda pair: pair[1])[-ANSWERED_MEMORY:]
        thread_update = {
            "TableName": self._table,
            "Key": {"pk": {"S": lease.key}},
            "UpdateExpression": f"SET {REPLIES} = :replies, {ANSWERED} = :answered "
            f"REMOVE {LEASE_OWNER}, {LEASE_EXPIRES_AT}, {OUTBOX}",
            "ConditionExpression": f"{LEASE_OWNER} = :token",
            "ExpressionAttributeValues": {
                ":replies": times_attribute(replies),
                ":answered": times_attribute(dict(newest)),
                ":token": {"S": lease.token},
            },
        }
        try:
            self._dynamodb.transact_write_items(
                TransactItems=[*self._puts(grant_id, entries), {"Update": thread_update}],
                ClientRequestToken=_request_token(intent.id, "record"),
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            self._record_without_lease(lease, grant_id, intent, entries, sent_at)
            lease.released = True
            return False
        lease.released = True
        return True

    def _record_without_lease(
        self, lease: Lease, grant_id: str, intent: SendIntent, entries: list[LedgerEntry], sent_at: int
    ) -> None:
        """The ledger, the reply's time and the covered ids, set by key: twice changes nothing."""
        names = {"#replies": REPLIES, "#answered": ANSWERED, "#reply": intent.id}
        sets = ["#replies.#reply = :sent_at"]
        for index, message_id in enumerate(dict.fromkeys(intent.covered)):
            names[f"#m{index}"] = message_id
            sets.append(f"#answered.#m{index} = :sent_at")
        self._dynamodb.transact_write_items(
            TransactItems=[
                *self._puts(grant_id, entries),
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": {"pk": {"S": lease.key}},
                        "UpdateExpression": "SET " + ", ".join(sets),
                        # The maps exist: the lease acquisition creates them.
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": {":sent_at": {"N": str(sent_at)}},
                    }
                },
            ],
            ClientRequestToken=_request_token(intent.id, "record-without-lease"),
        )

    def record_failure(self, lease: Lease, grant_id: str, message_ids: Iterable[str], reason: str) -> None:
        """Mark messages whose reply Nylas rejected for good, clear the outbox, free the lease."""
        now = int(self._clock())
        entries = [LedgerEntry(m, FAILED, reason=reason, recorded_at=now) for m in dict.fromkeys(message_ids)]
        try:
            self._dynamodb.transact_write_items(
                TransactItems=[
                    *self._puts(grant_id, entries),
                    {
                        "Update": {
                            "TableName": self._table,
                            "Key": {"pk": {"S": lease.key}},
                            "UpdateExpression": f"REMOVE {LEASE_OWNER}, {LEASE_EXPIRES_AT}, {OUTBOX}",
                            "ConditionExpression": f"{LEASE_OWNER} = :token",
                            "ExpressionAttributeValues": {":token": {"S": lease.token}},
                        }
                    },
                ]
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            self._dynamodb.transact_write_items(TransactItems=self._puts(grant_id, entries))
        lease.released = True


def _condition_failed(exc: ClientError) -> bool:
    reasons: list[Mapping[str, Any]] = exc.response.get("CancellationReasons", [])
    return exc.response["Error"]["Code"] == "TransactionCanceledException" and any(
        r.get("Code") == "ConditionalCheckFailed" for r in reasons
    )
