"""The local stack's model of SQS fair queues, which moto does not have.

AWS (July 2025, "Amazon SQS fair queues"; the developer guide's "How Amazon SQS fair queues work"):
a standard queue whose messages carry a ``MessageGroupId`` treats each group as a tenant. A tenant
is a *noisy neighbour* when it holds more than 10% of the queue's in-flight messages and at least
30 of its own (its concurrency share), or more than 10% of the consumers' recent processing time.
While one is, consumers receive the quiet tenants' messages first whenever there are any; noisy
tenants' messages follow, the tenant with the fewest in flight first. Nothing is dropped or
throttled: a noisy tenant is served from what the quiet ones leave, and is no longer noisy once
its share falls back or its backlog is drained. A message without a group is a tenant of its own.

moto 5 accepts ``MessageGroupId`` on a standard queue and returns it on receive, but delivers
oldest first, as a standard queue did before fair queues. The embedded AWS installs
:func:`fair_delivery`, which orders what moto's ``ReceiveMessage`` looks through by the two pure
functions below, so the local stack, the tests and ``make bench-flood`` meet a flood the way the
deployed queue does. What it models, and what it does not:

- modelled: the concurrency share (more than :data:`NOISY_SHARE` of the in-flight messages and at
  least :data:`NOISY_MIN_IN_FLIGHT` of its own, AWS's figures); quiet first; noisy tenants by fewest
  in flight; a noisy tenant stays noisy while its share is over :data:`NOISY_SHARE` and it has
  messages waiting;
- not modelled: the processing-time share (a tenant with few but slow messages) and the five
  minutes without a send after which AWS forgets a tenant was noisy. So locally a tenant is only
  ever deprioritised for what it holds in flight, which needs a consumer taking 30 or more records
  at once: the template's event source does (``ReplierMaximumConcurrency`` 5 x ``BatchSize`` 10).
"""

import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from moto.sqs.models import Queue

NOISY_SHARE = 0.10
"""A tenant holding more than this share of the queue's in-flight messages can be noisy (AWS)."""
NOISY_MIN_IN_FLIGHT = 30
"""…when it has at least this many of its own in flight (AWS: detection needs this many)."""


def noisy_groups(
    previous: frozenset[str],
    in_flight: Mapping[str, int],
    waiting: Mapping[str, int],
    *,
    share: float = NOISY_SHARE,
    min_in_flight: int = NOISY_MIN_IN_FLIGHT,
) -> frozenset[str]:
    """The groups that are noisy now, given the ones that were (``previous``).

    Parameters
    ----------
    in_flight:
        Messages received and neither deleted nor visible again, by group.
    waiting:
        Visible messages, by group (a noisy group with none waiting has drained its backlog).
    """
    total = sum(in_flight.values())
    if not total:
        return frozenset()
    noisy = set()
    for group, count in in_flight.items():
        over_share = count / total > share
        if over_share and (count >= min_in_flight or (group in previous and waiting.get(group, 0) > 0)):
            noisy.add(group)
    return frozenset(noisy)


def delivery_order(
    groups: Sequence[str | None], in_flight: Mapping[str, int], noisy: frozenset[str]
) -> list[int]:
    """The order to deliver visible messages in: indexes into ``groups`` (oldest first, their groups).

    Quiet tenants' messages first, oldest first; then the noisy tenants', by the in-flight count each
    would have when it is delivered (fewest first: a receive of several spreads across them), oldest
    first on a tie. A message without a group is quiet. With no noisy tenant: oldest first, unchanged.
    """
    if not noisy:
        return list(range(len(groups)))
    quiet: list[int] = []
    loud: list[tuple[int, int]] = []
    taken: Counter[str] = Counter()
    for index, group in enumerate(groups):
        if group is None or group not in noisy:
            quiet.append(index)
            continue
        loud.append((in_flight.get(group, 0) + taken[group], index))
        taken[group] += 1
    return quiet + [index for _, index in sorted(loud)]


# ---- the embedded AWS ------------------------------------------------------------------------------

_ARRIVAL_ORDER = False


@contextlib.contextmanager
def arrival_order() -> Iterator[None]:
    """moto's own order (oldest first, no fairness) for the ``with`` block, in this process.

    For the bench's run without fair queues (``make bench-flood``: what a flood costs the quiet grants
    when SQS does not reorder) and for the harness test that the model is what makes the difference.
    """
    global _ARRIVAL_ORDER
    previous, _ARRIVAL_ORDER = _ARRIVAL_ORDER, True
    try:
        yield
    finally:
        _ARRIVAL_ORDER = previous


def fair_delivery() -> None:
    """Make moto's standard queues deliver as fair queues do (once per process; the module docstring)."""
    visible_messages = Queue.messages
    if getattr(visible_messages.fget, "fair", False):
        return

    def messages(self: Queue) -> list:
        visible = visible_messages.fget(self)  # type: ignore[attr-defined]
        if self.fifo_queue or _ARRIVAL_ORDER or len(visible) < 2:
            return visible
        in_flight = Counter(m.group_id for m in list(self._messages) if m.group_id and not m.visible)
        waiting = Counter(m.group_id for m in visible if m.group_id)
        noisy = noisy_groups(getattr(self, "_replyonce_noisy", frozenset()), in_flight, waiting)
        self._replyonce_noisy = noisy  # type: ignore[attr-defined]
        return [visible[i] for i in delivery_order([m.group_id for m in visible], in_flight, noisy)]

    fair = property(messages)
    fair.fget.fair = True  # type: ignore[union-attr]
    Queue.messages = fair  # type: ignore[method-assign,assignment]
