"""Only the active Region: the fence before every lease and every send (``docs/design.md``, "Only the
active Region sends").

Above :mod:`replyonce.core.situation` only; :func:`replyonce.core.next_step`
puts :func:`fence` around each lease and each attempt the flows decide.
"""

import math
from typing import assert_never

from replyonce.core.situation import (
    UNREAD,
    Situation,
)
from replyonce.core.steps import (
    Attempt,
    Defer,
    ReadActiveRegion,
    Step,
    TakeLease,
)
from replyonce.ports import ActiveRegion, FenceUnreadable
from replyonce.reasons import DeferReason


def fence(s: Situation, step: TakeLease | Attempt) -> Step:
    """``step`` (a lease or a send), if this Region is the active one; else why not.

    Off (``policy.fence_region`` empty: one Region) it is ``step`` itself. On,
    every lease and every send (or draft) needs its own read of the
    active-Region record (:class:`ReadActiveRegion`, strongly consistent
    across Regions), and goes ahead only when the record names this Region
    and the handover is over. Fails closed: a record that cannot be read
    (an isolated Region) or names another Region defers the record — the
    passive Region sends nothing, whatever its replica of the state says.

    Why the lease is fenced too: a passive Region that took leases and stored
    intents would write into the state the active Region reads (a global
    table replicates both ways). Why the handover
    (``policy.handover_seconds``): a send the old Region started just before
    the failover may still land; the new Region sends only after it would show
    in the mailbox, which the new Region reads before any reply (its replica
    of the state may lag).
    """
    region = s.policy.fence_region
    if not region:
        return step
    record = s.active_region
    if record is UNREAD:
        return ReadActiveRegion()
    match record:
        case FenceUnreadable(detail=detail):
            return Defer(DeferReason.REGION_ISOLATED, None, {"region": region, "detail": detail})
        case ActiveRegion():
            return _when_active(s, step, record, region)
        case unknown:
            assert_never(unknown)


def _when_active(s: Situation, step: TakeLease | Attempt, record: ActiveRegion, region: str) -> Step:
    """The record was read: ``step`` if it names this Region and the handover is over."""
    if record.region != region:
        passive = {"region": region, "active_region": record.region or "(none)", "epoch": record.epoch}
        # The active Region's queue recorded: the record is moved there rather than waiting here to
        # dead-letter (the consumer's hand-over); none recorded, it waits for the backfill.
        hand_over = record if record.region and record.queue_url else None
        return Defer(DeferReason.REGION_PASSIVE, None, passive, hand_over)
    handover_ends = record.since + s.policy.handover_seconds
    if record.read_at < handover_ends:
        waiting = {"region": region, "epoch": record.epoch}
        return Defer(DeferReason.REGION_HANDOVER, math.ceil(handover_ends - record.read_at), waiting)
    return step
