"""Which test each pytest-xdist worker starts with: the suite's longest runs, one per worker.

The suite runs on xdist workers with work stealing (``--dist worksteal``,
``pyproject.toml``): the collection is cut into one contiguous share per
worker, and an idle worker steals the back half of the longest queue. A
worker never gives up the test after the one it is running, so two long runs
next to each other in one share run one after the other whatever the others
are doing: the chaos run, the failover drill and its mutant did (273 s on one
worker while three others had finished). Tests marked ``long_running`` are
therefore moved to the head of a share each, where they start at once and in
parallel; everything else keeps its order.

A wrong guess about the shares costs time, never a verdict: the order of
tests is not something any test depends on.
"""

from collections.abc import Sequence


def share_starts(count: int, workers: int) -> list[int]:
    """Where each worker's first share begins, as work stealing cuts ``count`` tests for ``workers``
    (each idle worker in turn is sent ``len(pending) // workers_left`` of what is pending)."""
    starts, taken = [], 0
    for left in range(workers, 0, -1):
        starts.append(taken)
        taken += (count - taken) // left
    return starts


def long_runs_first[T](items: Sequence[T], is_long: Sequence[bool], workers: int) -> list[T]:
    """``items`` reordered so that the long ones head distinct shares (in their order), the rest in
    theirs; long ones beyond the number of workers stay where they were."""
    if workers < 2:
        return list(items)
    long = [item for item, flag in zip(items, is_long, strict=True) if flag][:workers]
    rest = [item for item in items if not any(item is chosen for chosen in long)]
    ordered = list(rest)
    for index, start in sorted(enumerate(share_starts(len(items), workers)[: len(long)]), key=lambda p: p[1]):
        ordered.insert(start, long[index])
    return ordered
