"""``failover --to REGION``: make another Region the one that sends (active-passive across Regions).

The active-Region record is one item of a multi-Region strongly consistent
table (``ActiveRegionTableName``; ``replyonce.adapters.active_region`` owns its
layout). This command reads it, then raises its epoch by one with a
conditional write naming ``REGION``: two operators failing over at once
cannot both win, and a failover that lost the race says so instead of
writing. From that write on, every other Region's replier defers what it
would have sent (its next read of the record says so), and ``REGION`` starts
sending once the handover is over (``Policy.handover_seconds``). The webhook
is re-pointed separately (docs/operations.md, "Across Regions").
"""

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ops.errors import OpsError
from replyonce.adapters.active_region import DynamoDBRegionFence, FailoverRefused, aws_clock, fail_over
from replyonce.ports import ActiveRegion, FenceUnreadable


class FailoverError(OpsError):
    """The record could not be read, or another failover came first; nothing was written."""


@dataclass(frozen=True)
class FailoverResult:
    """What the record said before, what it says now, and whether this command wrote it."""

    before: ActiveRegion
    after: ActiveRegion
    written: bool


def fail_over_to(
    dynamodb: Any,
    table: str,
    to_region: str,
    *,
    expect_epoch: int | None = None,
    queue_url: str = "",
    clock: Callable[[], float] = time.time,
) -> FailoverResult:
    """Make ``to_region`` active; a no-op when it is already (nothing written, no new handover).

    ``expect_epoch``: fail unless the record is at this epoch (what the operator saw before deciding).
    ``queue_url``: ``to_region``'s notification queue, where the other Regions hand over the records
    they hold (``""``: they wait and dead-letter, for a backfill to bring them back).

    Raises
    ------
    FailoverError
        The record cannot be read from this Region, is not at ``expect_epoch``, or another failover
        was written between the read and the write.
    """
    before = DynamoDBRegionFence(table, dynamodb, clock=clock).read()
    if isinstance(before, FenceUnreadable):
        raise FailoverError(
            f"cannot read the active-Region record ({before.detail}): run the failover against a Region "
            "that can reach the table (--region of the Region you fail over to)"
        )
    if expect_epoch is not None and before.epoch != expect_epoch:
        raise FailoverError(
            f"the record is at epoch {before.epoch} (active: {before.region or 'none'}), not "
            f"{expect_epoch}: someone failed over since; read it again before deciding"
        )
    if before.region == to_region:
        return FailoverResult(before, before, written=False)
    try:
        after = fail_over(
            dynamodb, table, to_region, expected_epoch=before.epoch, queue_url=queue_url, clock=clock
        )
    except FailoverRefused as refused:
        raise FailoverError(
            f"another failover came first (the record is no longer at epoch {before.epoch}: "
            f"{refused.found}); nothing written"
        ) from None
    return FailoverResult(before, after, written=True)


def stamping_clock(
    dynamodb: Any, table: str, *, local: Callable[[], float] = time.time
) -> Callable[[], float]:
    """The clock the failover's ``since`` is stamped with: the later of this machine's and AWS's
    (:func:`replyonce.adapters.active_region.aws_clock`), so an operator's clock behind AWS's cannot shorten
    the handover (issue 48); one ahead only lengthens it. This machine's alone when AWS's cannot be read
    (the read that follows fails the command then anyway)."""
    try:
        aws = aws_clock(dynamodb, table)
    except (BotoCoreError, ClientError):
        aws = None
    if aws is None:
        return local
    return lambda: max(local(), aws())


def render(result: FailoverResult, handover_seconds: float) -> str:
    """The operator's summary: who was active, who is now, and when the new Region starts sending."""
    before, after = result.before, result.after
    if not result.written:
        return f"{after.region} is already the active Region (epoch {after.epoch}); nothing written"
    lines = [
        f"active Region: {before.region or '(none)'} (epoch {before.epoch}) -> {after.region} "
        f"(epoch {after.epoch})"
    ]
    if after.since:
        starts = datetime.datetime.fromtimestamp(after.since + handover_seconds, datetime.UTC)
        lines.append(
            f"{after.region} sends from {starts:%Y-%m-%dT%H:%M:%SZ} (handover {int(handover_seconds)} s: the "
            f"old Region's last send shows in the mailbox by then); {before.region or 'the old Region'} "
            "sends nothing from now"
        )
    else:
        lines.append(f"first activation: {after.region} sends at once")
    if after.queue_url:
        lines.append(
            f"the other Regions hand the notifications they hold over to {after.region}'s queue "
            f"({after.queue_url}) as they next receive them"
        )
    else:
        lines.append(
            f"no queue of {after.region} recorded (run the command with --region {after.region} to record "
            "it): the notifications the other Regions hold wait there and dead-letter; the backfill "
            "brings them back"
        )
    lines.append('next: re-point the webhook (docs/operations.md, "Across Regions"), then backfill')
    return "\n".join(lines)
