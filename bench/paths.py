"""Requests per notification on each path, counted, and the handler time of each (median of repeats).

Each path is repeated; the counts must be identical every time (they are
what ``tests/integration/test_budgets.py`` asserts), while the times are only reported.
"""

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import boto3

from bench.stack import forget_recipient_budgets, parts, scratch_queue
from devstack.counting import (
    WARM_PATHS,
    ReplierHarness,
    Step,
    Tally,
    WebhookHarness,
    busy_thread,
    first_reply,
    item_size,
    warm,
)
from devstack.events import message_created
from devstack.stack import LocalStack


@dataclass(frozen=True)
class PathResult:
    """One path: its (identical) tally, and the handler's median time in ms."""

    name: str
    tally: Tally
    median_ms: float
    failed: bool
    # Requests whose count is a timed wait's polls (the busy thread's lease): (service, operation) ->
    # the fewest and most over the repeats; the tally holds the first repeat's.
    polls: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class PathsResult:
    replier: list[PathResult]
    webhook: list[PathResult]
    repeats: int
    # Largest item each table holds after the runs: what DynamoDB's capacity units are computed from.
    largest_item_bytes: dict[str, int]


def _repeat(
    name: str,
    run: Callable[[], Step],
    repeats: int,
    before: Callable[[], None] = lambda: None,
    polls: tuple[tuple[str, str], ...] = (),
) -> PathResult:
    """``run`` ``repeats`` times; every count must agree, but for ``polls``: a timed wait's polls."""
    steps = []
    for _ in range(repeats):
        before()
        steps.append(run())

    def fixed(step: Step) -> str:
        aws = sorted((k, n) for k, n in step.tally.aws.items() if k not in polls)
        return repr(aws) + repr(sorted(step.tally.nylas.items()))

    tallies = {fixed(s) for s in steps}
    if len(tallies) != 1:
        raise AssertionError(f"path {name!r} counted differently across repeats: {tallies}")
    return PathResult(
        name=name,
        tally=steps[0].tally,
        median_ms=statistics.median(s.seconds for s in steps) * 1000,
        failed=steps[0].failed,
        polls={
            k: (min(s.tally.aws[k] for s in steps), max(s.tally.aws[k] for s in steps))
            for k in polls
            if any(s.tally.aws[k] for s in steps)
        },
    )


def _replier_paths(stack: LocalStack, repeats: int) -> list[PathResult]:
    resources, nylas = parts(stack)

    # Every path answers the same customer: each repeat starts within the recipient's hourly budget.
    def within_budget() -> None:
        forget_recipient_budgets(stack)

    # A grant's first record creates its HANDOFF_FOLDER, once in the grant's life: not a cold container's
    # cost, and it would make the first repeat count differently from the rest.
    first_reply(ReplierHarness(resources, nylas))
    within_budget()
    results = [
        # A new container each time: the cold path is a container's first notification.
        _repeat(
            "first reply, cold container",
            lambda: first_reply(ReplierHarness(resources, nylas)),
            repeats,
            within_budget,
        )
    ]
    within_budget()
    container = warm(ReplierHarness(resources, nylas))
    for name, path in WARM_PATHS:
        results.append(_repeat(name, lambda path=path: path(container), repeats, within_budget))
    state_table = resources.tables["StateTable"]
    results.append(
        _repeat(
            "busy thread (lease held)",
            lambda: busy_thread(container, state_table),
            repeats,
            within_budget,
            # The in-process lease wait looks at the lease (a read) every LEASE_POLL_SECONDS for
            # lease_wait_seconds: how many looks fit depends on how long each takes (this machine's load).
            polls=(("dynamodb", "GetItem"),),
        )
    )
    return results


def _webhook_paths(stack: LocalStack, repeats: int) -> list[PathResult]:
    with scratch_queue(stack):
        return _webhook_paths_on_queue(repeats)


def _webhook_paths_on_queue(repeats: int) -> list[PathResult]:
    def cold() -> Step:
        return WebhookHarness().post(message_created())

    container = WebhookHarness()
    container.post(message_created())  # warm: the secret is cached
    results = [
        _repeat("accepted, cold container", cold, repeats),
        _repeat("accepted, warm container", lambda: container.post(message_created()), repeats),
    ]
    # The first forged request may re-read the secret (rotation check); the next ones may not.
    forged = WebhookHarness()
    forged.post(message_created())
    forged.post(message_created(), forged=True)

    def forged_again() -> Step:
        return forged.post(message_created(), forged=True)

    results.append(_repeat("forged signature (after the first)", forged_again, repeats))
    return results


def _largest_items(stack: LocalStack) -> dict[str, int]:
    resources, _ = parts(stack)
    dynamodb = boto3.client("dynamodb")
    largest = {}
    for logical_id, table in resources.tables.items():
        items = dynamodb.scan(TableName=table)["Items"]
        largest[logical_id] = max((item_size(item) for item in items), default=0)
    return largest


def measure(stack: LocalStack, repeats: int) -> PathsResult:
    """Count every path ``repeats`` times on the local stack."""
    return PathsResult(
        replier=_replier_paths(stack, repeats),
        webhook=_webhook_paths(stack, repeats),
        repeats=repeats,
        largest_item_bytes=_largest_items(stack),
    )
