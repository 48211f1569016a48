"""Replier throughput on the local stack with 1, 2 and 4 pollers (one container each).

First replies, each on its own thread, are queued before any poller starts;
the clock runs from the pollers' start until the emulator has seen every
reply. Everything shares one Python process — moto, the Nylas emulator and
the pollers — so on a small machine this measures the replier's per-record
work under contention, not Lambda's scaling (one container per concurrent
batch, up to ``ReplierMaximumConcurrency``).
"""

import threading
import time
from dataclasses import dataclass

from bench.stack import clear_tables, parts, require_empty_queue
from bench.stats import Spread
from devstack.counting import AwsRequestCounter, handler_with, inbound
from devstack.events import envelope
from devstack.poller import EventSourcePoller
from devstack.stack import LocalStack
from replyonce.adapters.queue import NotificationQueue
from replyonce.rules.notification import Notification
from replyonce.shell.consumer import NotificationConsumer

POLLER_COUNTS = (1, 2, 4)
_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class ThroughputResult:
    pollers: int
    notifications: int
    replies_per_second: Spread
    seconds: Spread
    # 5 when nothing was retried; more when moto failed concurrent transactions and botocore retried.
    dynamodb_per_reply: float


def _drain(pollers: list[EventSourcePoller], expected: int) -> None:
    """Poll from one thread per poller until ``expected`` records succeeded (or time runs out)."""
    done = threading.Event()
    lock = threading.Lock()
    succeeded = [0]

    def run(poller: EventSourcePoller) -> None:
        while not done.is_set():
            result = poller.poll_once()
            with lock:
                succeeded[0] += result.succeeded
                if succeeded[0] >= expected:
                    done.set()

    threads = [threading.Thread(target=run, args=(p,), daemon=True) for p in pollers]
    for thread in threads:
        thread.start()
    if not done.wait(_TIMEOUT_SECONDS):
        done.set()
        raise TimeoutError(f"{expected} notifications not drained in {_TIMEOUT_SECONDS:.0f} s")
    for thread in threads:
        thread.join(timeout=30)


def _one_round(stack: LocalStack, pollers: int, notifications: int) -> tuple[float, int]:
    """Seconds to drain ``notifications`` queued first replies with ``pollers`` containers.

    Returns the seconds and the DynamoDB requests all containers sent.
    """
    clear_tables(stack)
    require_empty_queue(stack)
    resources, nylas = parts(stack)
    queue = NotificationQueue(resources.queues["NotificationQueue"], 1_048_576)
    # A customer each: one address gets ``ReplyBudgetPerRecipientPerHour`` replies an hour.
    for index in range(notifications):
        queue.enqueue(Notification(envelope(inbound(nylas, from_email=f"throughput{index}@example.com"))))
    counters = [AwsRequestCounter() for _ in range(pollers)]
    containers = [
        EventSourcePoller(
            handler_with("ReplierFunction", "consumer", NotificationConsumer.from_environment(aws=c.session)),
            resources,
        )
        for c in counters
    ]
    sends_before = len(nylas.sends)
    started = time.perf_counter()
    _drain(containers, notifications)
    seconds = time.perf_counter() - started
    if len(nylas.sends) - sends_before != notifications:
        raise AssertionError(f"expected {notifications} replies, Nylas saw {len(nylas.sends) - sends_before}")
    dynamodb = sum(n for c in counters for (service, _), n in c.snapshot().items() if service == "dynamodb")
    return seconds, dynamodb


def measure(stack: LocalStack, *, notifications: int, rounds: int) -> list[ThroughputResult]:
    """Drain ``notifications`` first replies with 1, 2 and 4 pollers, ``rounds`` times each."""
    results = []
    for pollers in POLLER_COUNTS:
        runs = [_one_round(stack, pollers, notifications) for _ in range(rounds)]
        seconds = [s for s, _ in runs]
        results.append(
            ThroughputResult(
                pollers=pollers,
                notifications=notifications,
                replies_per_second=Spread.of([notifications / s for s in seconds]),
                seconds=Spread.of(seconds),
                dynamodb_per_reply=sum(d for _, d in runs) / (rounds * notifications),
            )
        )
    return results
