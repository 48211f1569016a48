"""How the replier's cost per notification changes with the SQS batch size.

First replies are queued, then drained by the event source stand-in with the
template's batch size replaced by 1, 5 and 10. Counted per notification:
Lambda invocations, the event source mapping's own SQS requests (receive and
delete, billed to the account like any other), the function's DynamoDB and
Nylas requests, and the billed handler time. Batching divides the first two
and the per-invocation overhead; DynamoDB and Nylas work is per record.
"""

import copy
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.stack import clear_tables, parts, require_empty_queue
from devstack.counting import AwsRequestCounter, Meter, ReplierHarness, Tally, inbound, warm
from devstack.events import envelope
from devstack.poller import EventSourcePoller
from devstack.stack import LocalStack
from devstack.template import LocalResources
from replyonce.adapters.queue import NotificationQueue
from replyonce.rules.notification import Notification

BATCH_SIZES = (1, 5, 10)


@dataclass(frozen=True)
class BatchResult:
    """Per-notification figures at one batch size (times: median over rounds)."""

    batch_size: int
    notifications: int
    invocations_per_notification: float
    esm_sqs_per_notification: float
    function_requests: dict[str, float]  # AWS service -> requests per notification
    nylas_per_notification: float
    billed_ms_per_invocation: float  # median over rounds of the mean per invocation
    billed_ms_per_notification: float


def _with_batch_size(resources: LocalResources, batch_size: int) -> LocalResources:
    """The same resources with the replier's event source ``BatchSize`` replaced."""
    changed = copy.copy(resources)
    changed.template = copy.deepcopy(resources.template)
    events = changed.template["Resources"]["ReplierFunction"]["Properties"]["Events"]
    for event in events.values():
        if event["Type"] == "SQS":
            event["Properties"]["BatchSize"] = batch_size
    return changed


def _timed_handler(handler: Callable[..., Any], billed_ms: list[int]) -> Callable[..., Any]:
    """Wrap the handler to record each invocation's billed time (Lambda rounds up to the millisecond)."""

    def invoke(event: dict[str, Any], context: Any) -> Any:
        started = time.perf_counter()
        try:
            return handler(event, context)
        finally:
            billed_ms.append(math.ceil((time.perf_counter() - started) * 1000))

    return invoke


@dataclass(frozen=True)
class _Round:
    esm: Counter  # the event source mapping's SQS requests
    tally: Tally  # the function's AWS requests and Nylas calls
    billed_ms: list[int]  # per invocation
    invocations: int


def _one_round(stack: LocalStack, batch_size: int, notifications: int) -> _Round:
    """Queue ``notifications`` first replies, drain them at ``batch_size`` with one warm container."""
    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    harness = warm(ReplierHarness(resources, nylas))
    esm = AwsRequestCounter()
    esm_sqs = esm.session.client("sqs")
    queue = NotificationQueue(resources.queues["NotificationQueue"], 1_048_576, esm_sqs)
    # A customer each: one address gets ``ReplyBudgetPerRecipientPerHour`` replies an hour.
    for index in range(notifications):
        queue.enqueue(Notification(envelope(inbound(nylas, from_email=f"batch{index}@example.com"))))
    esm_before = esm.snapshot()
    billed_ms: list[int] = []
    poller = EventSourcePoller(
        _timed_handler(harness.handler, billed_ms),
        _with_batch_size(resources, batch_size),
        sqs_client=esm_sqs,
    )
    with Meter(harness.aws, nylas).measure() as tally:
        polls = poller.drain()
    failed = sum(p.failed for p in polls)
    if failed:
        raise AssertionError(f"batch size {batch_size}: {failed} records failed")
    esm_requests = esm.snapshot() - esm_before
    # The final empty receive is the mapping's idle polling, not a cost of these notifications.
    esm_requests[("sqs", "ReceiveMessage")] -= 1
    return _Round(esm_requests, tally, billed_ms, len(polls))


def measure(stack: LocalStack, *, notifications: int, rounds: int) -> list[BatchResult]:
    """Drain ``notifications`` first replies at each batch size, ``rounds`` times."""
    results = []
    for batch_size in BATCH_SIZES:
        runs = [_one_round(stack, batch_size, notifications) for _ in range(rounds)]
        last = runs[-1]  # counts are the same every round; times are not
        services = {"dynamodb", "sqs", "secrets-manager"} | {service for service, _ in last.tally.aws}
        results.append(
            BatchResult(
                batch_size=batch_size,
                notifications=notifications,
                invocations_per_notification=last.invocations / notifications,
                esm_sqs_per_notification=sum(last.esm.values()) / notifications,
                function_requests={s: last.tally.service(s) / notifications for s in sorted(services)},
                nylas_per_notification=last.tally.nylas_total / notifications,
                billed_ms_per_invocation=statistics.median(statistics.mean(r.billed_ms) for r in runs),
                billed_ms_per_notification=statistics.median(sum(r.billed_ms) / notifications for r in runs),
            )
        )
    return results
