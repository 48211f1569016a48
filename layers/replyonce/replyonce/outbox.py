"""The send outbox: the exact send request, stored under the lease before the first attempt.

Why: a send can take minutes, a worker can die or time out in the middle, a
record can be redriven from the dead-letter queue hours later, and a Bedrock
draft differs between calls. If each attempt drafted anew, the second attempt
would carry another body under the same ``Idempotency-Key`` (Nylas: 409, not
a replay) or, after the key's hour, simply send a second email. With the
intent stored first, every attempt sends the same bytes, and an attempt after
the key's hour first looks for the intent's id in the mailbox.

Timeline of one reply (``T`` = thread item, written only by the lease holder):

    read thread ─▶ store intent in T ─▶ send(key gen g) ─▶ record ledger, clear T.outbox
                        │                     │
                        │                     ├─ no answer / Nylas 5xx ─▶ retry later, same g
                        │                     └─ cached error / provider error ─▶ g+1 stored, retry
                        └─ any later holder finding T.outbox sends it before anything else
"""

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from botocore.exceptions import ClientError

from replyonce.lease import Lease
from replyonce.state import LEASE_OWNER, OUTBOX, SendIntent

# RFC 3834: our replies say they are automatic, so other agents (and other ReplyOnce
# deployments) do not answer them.
AUTO_SUBMITTED_HEADER = {"name": "Auto-Submitted", "value": "auto-replied"}
# The one metadata key Nylas indexes that we use: ``metadata_pair=key1:<intent id>`` finds a reply.
INTENT_METADATA_KEY = "key1"


def send_request(
    target_id: str,
    recipients: Sequence[Mapping[str, str]],
    subject: str,
    body: str,
    intent_id: str,
) -> str:
    """The JSON body of ``POST /messages/send`` for one reply, serialised once, sent as is."""
    request: dict[str, Any] = {
        "to": [dict(r) for r in recipients],
        "subject": subject,
        "body": body,
        "reply_to_message_id": target_id,
        "custom_headers": [AUTO_SUBMITTED_HEADER],
        "metadata": {INTENT_METADATA_KEY: intent_id},
    }
    return json.dumps(request, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def new_intent_id() -> str:
    return uuid.uuid4().hex


class Outbox:
    """Stores and advances the send intent in the thread item, always conditioned on the lease.

    Parameters
    ----------
    table_name:
        ``STATE_TABLE``.
    dynamodb_client:
        Injectable boto3 DynamoDB client.
    """

    def __init__(self, table_name: str, dynamodb_client: Any) -> None:
        self._table = table_name
        self._dynamodb = dynamodb_client

    def store(self, lease: Lease, intent: SendIntent) -> bool:
        """Write ``intent`` as the thread's outbox; ``False`` when the lease was lost meanwhile.

        Also used to move an intent to its next key generation: the generation
        is stored *before* the attempt that uses it, so whoever attempts next
        (this worker or another) uses the same one.
        """
        try:
            self._dynamodb.update_item(
                TableName=self._table,
                Key={"pk": {"S": lease.key}},
                UpdateExpression=f"SET {OUTBOX} = :intent",
                ConditionExpression=f"{LEASE_OWNER} = :token",
                ExpressionAttributeValues={":intent": intent.to_attribute(), ":token": {"S": lease.token}},
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        return True
