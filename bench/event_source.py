"""An SQS event source stand-in with the template's batching (batch size and window), for time-to-reply runs.

``devstack.poller.EventSourcePoller`` invokes as soon as one receive returns
records; Lambda's SQS event source with ``MaximumBatchingWindowInSeconds``
keeps gathering records until the batch is full or the window has passed
since the first one, and that window is part of what a customer waits. This
poller does the same, reading ``BatchSize`` and the window from
``template.yaml`` (or an override, for a what-if run), and records when each
batch was invoked and which container ran it, so ``bench.time_to_reply`` can
say where each message's time went.

The first receive of a batch is a long poll (1 s), as Lambda's pollers use:
moto wakes it as soon as a message is sent. moto re-checks visibility only
once a second, though, so a record coming back from a visibility timeout (a
failed record's retry) is seen up to a second later than SQS would return it;
that lag lands in the retry's share of a message's time. Once a batch has
its first record, the window is filled with short polls every
``IDLE_POLL_SECONDS``.

``serial`` is the consumer as it was before it ran a batch's threads at once
(the *before* row of ``docs/performance.md``, "Batch concurrency"): the
batch's records handed to the real handler one after another, each as a
batch of its own, sharing the invocation's deadline. The invocation ends when
its last record does, and its failures are the records' failures put
together -- what the serial consumer returned to Lambda.
"""

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3

from devstack.events import sqs_event_from_messages
from devstack.lambda_context import LocalLambdaContext
from devstack.template import LocalResources
from ops.template import sqs_event_source

IDLE_POLL_SECONDS = 0.05

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass(frozen=True)
class Invocation:
    """One batch handed to a container."""

    container: int  # containers are numbered as they are created
    cold: bool  # the container was created for this batch
    started: float  # time.time() when the batch was handed over
    ready: float  # the container was ready (later than ``started`` only when cold)
    ended: float
    notification_ids: tuple[str, ...]


def billed_ms(invocation: Invocation) -> int:
    """Lambda bills each invocation's duration rounded up to the millisecond."""
    return math.ceil((invocation.ended - invocation.started) * 1000)


def peak_concurrency(invocations: list[Invocation] | tuple[Invocation, ...]) -> int:
    """Most invocations running at one moment."""
    events = sorted([(i.started, 1) for i in invocations] + [(i.ended, -1) for i in invocations])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


@dataclass
class Container:
    """A replier container: its number and the real handler."""

    number: int
    handler: Handler


@dataclass
class BatchingSettings:
    batch_size: int
    window_seconds: float
    timeout_seconds: float
    maximum_concurrency: int

    @classmethod
    def from_template(
        cls, resources: LocalResources, function: str = "ReplierFunction"
    ) -> "BatchingSettings":
        properties = resources.template["Resources"][function]["Properties"]
        source = sqs_event_source(resources.template, function)
        concurrency = resources.resolve(source.get("ScalingConfig", {}).get("MaximumConcurrency", 1000))
        return cls(
            batch_size=int(source.get("BatchSize", 10)),
            window_seconds=float(source.get("MaximumBatchingWindowInSeconds", 0)),
            timeout_seconds=float(properties.get("Timeout", 3)),
            maximum_concurrency=int(concurrency),
        )


@dataclass
class BatchingEventSource:
    """Pollers that gather batches as Lambda's SQS event source does and invoke containers, several at once.

    Each batch goes to an idle container, or to a new one when none is idle
    (a cold start), up to ``maximum_concurrency`` at a time; a poller goes
    back to polling as soon as it has handed its batch over.
    :meth:`retire_idle_containers` plays Lambda reclaiming idle containers,
    so the next batches start cold.
    """

    resources: LocalResources
    settings: BatchingSettings
    # A new container: its number and its handler (``bench.timeline.Recorder.container``).
    make_container: Callable[[], tuple[int, Handler]]
    pollers: int = 2
    invocations: list[Invocation] = field(default_factory=list)
    serial: bool = False  # the consumer before: a batch's records one after another (module docstring)

    def __post_init__(self) -> None:
        self._sqs = boto3.client("sqs")
        self._queue_url = self.resources.queues["NotificationQueue"]
        self._queue_arn = self.resources.queue_arns["NotificationQueue"]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._idle: list[Container] = []
        self._slots = threading.BoundedSemaphore(self.settings.maximum_concurrency)
        self._running: list[threading.Thread] = []
        self._threads = [
            threading.Thread(target=self._poll, name=f"bench-poller-{index}", daemon=True)
            for index in range(self.pollers)
        ]

    def start(self) -> "BatchingEventSource":
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        for thread in list(self._running):
            thread.join(timeout=60)

    def busy(self) -> bool:
        """Whether any batch is being processed."""
        with self._lock:
            return any(thread.is_alive() for thread in self._running)

    def retire_idle_containers(self) -> None:
        """Forget every idle container: the next batches run on new ones."""
        with self._lock:
            self._idle.clear()

    def _receive(self, limit: int, wait_seconds: int = 0) -> list[dict[str, Any]]:
        return self._sqs.receive_message(
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=min(limit, 10),
            WaitTimeSeconds=wait_seconds,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
        ).get("Messages", [])

    def _gather(self) -> list[dict[str, Any]]:
        """A batch: the first records received, then more until full or the window has passed."""
        batch = self._receive(self.settings.batch_size, wait_seconds=1)
        if not batch:
            return []
        deadline = time.monotonic() + self.settings.window_seconds
        while len(batch) < self.settings.batch_size and time.monotonic() < deadline:
            time.sleep(min(IDLE_POLL_SECONDS, max(0.0, deadline - time.monotonic())))
            batch += self._receive(self.settings.batch_size - len(batch))
        return batch

    def _poll(self) -> None:
        while not self._stop.is_set():
            # Like the event source, stop receiving while every allowed invocation is running.
            self._slots.acquire()
            try:
                batch = self._gather()
            except Exception:  # the embedded AWS went away while stopping
                self._slots.release()
                if self._stop.is_set():
                    return
                raise
            if not batch:
                self._slots.release()
                continue
            thread = threading.Thread(target=self._invoke, args=(batch,), daemon=True)
            with self._lock:
                self._running = [t for t in self._running if t.is_alive()] + [thread]
            thread.start()

    def _invoke(self, batch: list[dict[str, Any]]) -> None:
        from replyonce.rules.notification import Notification

        try:
            started = time.time()
            with self._lock:
                container = self._idle.pop() if self._idle else None
            cold = container is None
            if container is None:
                container = Container(*self.make_container())
            ready = time.time()
            context = LocalLambdaContext("ReplierFunction", timeout_seconds=self.settings.timeout_seconds)
            failures: list[dict[str, str]] = []
            for part in [[m] for m in batch] if self.serial else [batch]:
                event = sqs_event_from_messages(part, self._queue_arn)
                try:
                    response = container.handler(event, context) or {}
                except Exception:
                    response = {"batchItemFailures": [{"itemIdentifier": m["MessageId"]} for m in part]}
                failures.extend(response.get("batchItemFailures", []))
            ended = time.time()
            failed = {item["itemIdentifier"] for item in failures}
            done = [m for m in batch if m["MessageId"] not in failed]
            if done:
                self._sqs.delete_message_batch(
                    QueueUrl=self._queue_url,
                    Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
                )
            ids = tuple(Notification.parse(m["Body"]).id for m in batch)
            with self._lock:
                self.invocations.append(Invocation(container.number, cold, started, ready, ended, ids))
                self._idle.append(container)
        finally:
            self._slots.release()
