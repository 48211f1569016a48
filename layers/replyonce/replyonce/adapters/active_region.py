"""The active-Region record on DynamoDB (``ACTIVE_REGION_TABLE``): which Region may send, and since when.

One item, in a table of its own: a multi-Region strongly consistent (MRSC)
global table (``template.yaml``, ``ActiveRegionTable``), so a strongly
consistent read in any Region returns the last failover written in any
Region, or fails — never an older one. The replier reads it before each
lease and each send (``replyonce.core.fence``); the operator's ``failover``
command (``ops/failover.py``) is its only writer, a conditional write that
raises the epoch by one, so two operators failing over at once cannot both
win. This module is the only one that knows the item's layout.
"""

import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from replyonce.exceptions import ReplyOnceError
from replyonce.ports import ActiveRegion, FenceUnreadable

# The one item's key, and its attributes.
RECORD_KEY = {"pk": {"S": "active-region"}}
REGION = "region"
EPOCH = "epoch"
SINCE = "since"
QUEUE_URL = "queue_url"


# An isolated Region's read must fail soon, not hang: botocore's defaults (60 s to connect, 60 s to read,
# DynamoDB's retries) would hold the record for minutes before it fails closed. Two tries of a few
# seconds each; a record whose send no longer fits after a slow read is deferred by the core anyway.
FENCE_READ_ATTEMPTS = 2
FENCE_CLIENT_CONFIG = Config(
    connect_timeout=2,
    read_timeout=3,
    retries={"mode": "standard", "total_max_attempts": FENCE_READ_ATTEMPTS},
)


class FailoverRefused(ReplyOnceError):
    """The record's epoch is not the one the operator expected: another failover came first."""

    def __init__(self, expected_epoch: int, found: ActiveRegion | FenceUnreadable) -> None:
        super().__init__(f"the active-Region record is not at epoch {expected_epoch}: {found}")
        self.expected_epoch = expected_epoch
        self.found = found


def _record(item: dict[str, Any] | None, read_at: int) -> ActiveRegion:
    if not item:
        # Never written: no Region is active, and a fenced replier sends nothing until an operator says.
        return ActiveRegion(region="", epoch=0, since=0, read_at=read_at)
    return ActiveRegion(
        region=item[REGION]["S"],
        epoch=int(item[EPOCH]["N"]),
        since=int(item.get(SINCE, {}).get("N", "0")),
        read_at=read_at,
        queue_url=item.get(QUEUE_URL, {}).get("S", ""),
    )


class DynamoDBRegionFence:
    """The replier's side of the record: one strongly consistent ``GetItem`` per lease and per send.

    Parameters
    ----------
    table:
        ``ACTIVE_REGION_TABLE``: this Region's replica of the global table.
    dynamodb:
        A DynamoDB client of this Region (injectable; made with :data:`FENCE_CLIENT_CONFIG`, whose
        timeouts bound how long an isolated Region waits before it fails closed).
    clock:
        The replier's wall clock: when the record was read. The handover is counted from the
        failover's ``since``, stamped no earlier than AWS's time (``ops.failover.stamping_clock``,
        issue 48); the replier's clock is Lambda's, kept to AWS's time (Amazon Time Sync). A replier
        clock ahead of AWS's by a second shortens the handover by a second: not checked here.
    """

    def __init__(self, table: str, dynamodb: Any, *, clock: Callable[[], float] = time.time) -> None:
        self._table = table
        self._dynamodb = dynamodb
        self._clock = clock

    def read(self) -> ActiveRegion | FenceUnreadable:
        """The record as it is now in every Region, or why it could not be read (never raises)."""
        try:
            answer = self._dynamodb.get_item(TableName=self._table, Key=RECORD_KEY, ConsistentRead=True)
        except (BotoCoreError, ClientError) as failure:
            # Unknown is not "active": the caller fails closed.
            code = failure.response["Error"].get("Code", "") if isinstance(failure, ClientError) else ""
            return FenceUnreadable(f"{type(failure).__name__} {code}".strip())
        return _record(answer.get("Item"), int(self._clock()))


def aws_clock(dynamodb: Any, table: str) -> Callable[[], float] | None:
    """AWS's time, as DynamoDB's answer to one read of the record dates it (its HTTP ``Date``), carried on
    by this machine's monotonic clock: never earlier than AWS's time when it is called. ``None`` when the
    answer has no ``Date``.

    Why: the handover is counted from the failover's ``since`` and compared with the repliers' clocks
    (Lambda's, kept to AWS's time). An operator's clock minutes behind stamped a ``since`` minutes early
    and shortened the handover by as much (issue 48); ``ops.failover`` stamps the later of its own clock
    and this one, so a slow clock can only lengthen the handover. Upper bound: the ``Date`` is truncated
    to the second (+1), and AWS's time when the answer was made is no later than the read's start
    plus its whole round trip, which the monotonic clock counts from the read's start.
    """
    started = time.monotonic()
    answer = dynamodb.get_item(TableName=table, Key=RECORD_KEY, ConsistentRead=True)
    date = answer.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if not date:
        return None
    dated = parsedate_to_datetime(date).timestamp()
    return lambda: dated + 1 + (time.monotonic() - started)


def fail_over(
    dynamodb: Any,
    table: str,
    to_region: str,
    *,
    expected_epoch: int,
    queue_url: str = "",
    clock: Callable[[], float] = time.time,
) -> ActiveRegion:
    """Make ``to_region`` the active Region: the epoch goes from ``expected_epoch`` to one more.

    The first activation (epoch 0: no record yet) has no handover (``since`` 0): no other Region
    can have sent under the fence. Every later one starts the handover now. ``queue_url``, the new
    Region's notification queue, is where the other Regions hand over the records they hold
    (``replyonce.shell.consumer``); ``""`` removes an older Region's, so nothing is handed to a queue that
    no longer sends.

    Raises
    ------
    FailoverRefused
        The record is not at ``expected_epoch`` (another failover came first); nothing was written.
    """
    now = int(clock())
    since = 0 if expected_epoch == 0 else now
    condition = "attribute_not_exists(#epoch)" if expected_epoch == 0 else "#epoch = :expected"
    values: dict[str, Any] = {
        ":region": {"S": to_region},
        ":epoch": {"N": str(expected_epoch + 1)},
        ":since": {"N": str(since)},
    }
    if expected_epoch:
        values[":expected"] = {"N": str(expected_epoch)}
    names = {"#region": REGION, "#epoch": EPOCH, "#since": SINCE, "#queue": QUEUE_URL}
    update = "SET #region = :region, #epoch = :epoch, #since = :since"
    if queue_url:
        values[":queue"] = {"S": queue_url}
        update += ", #queue = :queue"
    else:
        update += " REMOVE #queue"
    try:
        dynamodb.update_item(
            TableName=table,
            Key=RECORD_KEY,
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
    except ClientError as failure:
        if failure.response["Error"].get("Code") != "ConditionalCheckFailedException":
            raise
        found = DynamoDBRegionFence(table, dynamodb, clock=clock).read()
        raise FailoverRefused(expected_epoch, found) from None
    return ActiveRegion(
        region=to_region, epoch=expected_epoch + 1, since=since, read_at=now, queue_url=queue_url
    )
