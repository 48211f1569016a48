"""The Nylas side of a chaos run: customers, bursts, bots, and how each notification is delivered.

Seeded: the same seed gives the same conversations, the same copies and the
same order of deliveries (timing between threads is the machine's).
"""

import random
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, HUMAN_EMAIL, HUMAN_GRANT_ID, envelope
from devstack.nylas_emulator import NylasEmulator
from devstack.webhook_sender import WebhookSender

BOT_EMAIL = "autoresponder@other-bot.example"


@dataclass
class WorkloadSettings:
    notifications: int = 300
    burst_probability: float = 0.25
    truncated_probability: float = 0.08
    updated_probability: float = 0.15  # a message.updated, delivered before the message.created
    automated_probability: float = 0.05
    other_grant_probability: float = 0.03
    follow_up_probability: float = 0.2
    bot_threads: int = 2
    max_copies: int = 3
    concurrent_probability: float = 0.3
    forged_probability: float = 0.02
    max_pending_deliveries: int = 40
    max_queue_depth: int = 150


@dataclass
class Workload:
    """Generates conversations in the emulator and delivers their notifications through the webhook."""

    settings: WorkloadSettings
    nylas: NylasEmulator
    sender: WebhookSender
    rng: random.Random
    features: Counter[str] = field(default_factory=Counter)
    notifications: dict[str, dict[str, Any]] = field(default_factory=dict)
    forged_ids: set[str] = field(default_factory=set)
    queue_depth: Any = lambda: 0  # visible + in flight on the notification queue

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=12, thread_name_prefix="nylas-deliveries")
        self._pending: list[Future] = []
        self._bot_threads: set[str] = set()
        self._customer_threads: dict[str, str] = {}
        self._sequence = 0

    # ---- deliveries ----------------------------------------------------------------------------

    def _random(self) -> float:
        with self._lock:
            return self.rng.random()

    def _randint(self, low: int, high: int) -> int:
        with self._lock:
            return self.rng.randint(low, high)

    def deliver(self, payload: dict[str, Any]) -> None:
        """Queue one notification for delivery: 1-3 copies, sometimes at once, sometimes forged too."""
        with self._lock:
            self.notifications[payload["id"]] = payload
        copies = self._randint(1, self.settings.max_copies)
        concurrent = copies > 1 and self._random() < self.settings.concurrent_probability
        if copies > 1:
            self.features["duplicate_delivery"] += copies - 1
        if concurrent:
            self.features["concurrent_delivery"] += 1
        self._submit(self.sender.deliver_many, payload, copies=copies, concurrent=concurrent)
        if self._random() < self.settings.forged_probability:
            forged = {**payload, "id": f"forged-{payload['id']}"}
            with self._lock:
                self.forged_ids.add(forged["id"])
            self.features["forged"] += 1
            self._submit(self.sender.deliver, forged, forged=True)

    def _submit(self, function: Any, *args: Any, **kwargs: Any) -> None:
        future = self._pool.submit(function, *args, **kwargs)
        with self._lock:
            self._pending.append(future)

    def _backpressure(self) -> None:
        """Nylas spreads deliveries over time: keep the backlog (deliveries and queue) bounded, so a
        long run measures the pipeline rather than moto scanning a queue of thousands."""
        while (
            self.pending() > self.settings.max_pending_deliveries
            or self.queue_depth() > self.settings.max_queue_depth
        ):
            time.sleep(0.1)

    def pending(self) -> int:
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]
            return len(self._pending)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

    # ---- what Nylas does on its own -------------------------------------------------------------

    def on_message_created(self, message: dict[str, Any]) -> None:
        """Emulator callback: the agent's sends fire message.created; a bot answers; customers follow up."""
        if message["grant_id"] != AGENT_GRANT_ID or "sent" not in message.get("folders", []):
            return
        self.features["own_outbound"] += 1
        self.deliver(envelope(message))
        thread_id = message["thread_id"]
        if thread_id in self._bot_threads:
            self.features["bot_loop"] += 1
            self._submit(self._answer, thread_id, BOT_EMAIL, message)
        elif thread_id in self._customer_threads and self._random() < self.settings.follow_up_probability:
            self.features["follow_up"] += 1
            self._submit(self._answer, thread_id, self._customer_threads[thread_id], message)

    def _answer(self, thread_id: str, sender: str, reply: dict[str, Any]) -> None:
        answer = self.nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=sender,
            subject=reply["subject"],
            body="<p>Thanks, and one more thing.</p>",
            reply_to_message_id=reply["id"],
        )
        self.deliver(envelope(answer))

    # ---- conversations -------------------------------------------------------------------------

    def _inbound(
        self, sender: str, *, thread_of: dict[str, Any] | None = None, headers=None
    ) -> dict[str, Any]:
        self._sequence += 1
        return self.nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=sender,
            subject=f"Question {self._sequence}",
            body=f"<p>Message {self._sequence}</p>",
            reply_to_message_id=thread_of["id"] if thread_of else None,
            headers=headers,
        )

    def _notify(self, message: dict[str, Any]) -> None:
        truncated = self._random() < self.settings.truncated_probability
        if self._random() < self.settings.updated_probability:
            # Ordering is not guaranteed: the update first, then the creation.
            self.features["out_of_order"] += 1
            self.deliver(envelope(message, notification_type="message.updated"))
        if truncated:
            self.features["truncated"] += 1
        self.deliver(
            envelope(
                message, notification_type="message.created.truncated" if truncated else "message.created"
            )
        )

    def play(self) -> None:
        """Create conversations until the notification target is reached; deliver as they come."""
        for _ in range(self.settings.bot_threads):
            opener = self._inbound(BOT_EMAIL)
            self._bot_threads.add(opener["thread_id"])
            self._notify(opener)
        customer = 0
        while len(self.notifications) < self.settings.notifications:
            roll = self._random()
            if roll < self.settings.automated_probability:
                self.features["automated_sender"] += 1
                automated = [
                    ("no-reply@shop.example", None),
                    ("help@vendor.example", [{"name": "Auto-Submitted", "value": "auto-replied"}]),
                ]
                sender, headers = automated[self._randint(0, 1)]
                self._notify(self._inbound(sender, headers=headers))
                continue
            if roll < self.settings.automated_probability + self.settings.other_grant_probability:
                self.features["other_grant"] += 1
                message = self.nylas.deliver_inbound(
                    HUMAN_GRANT_ID,
                    from_email="friend@example.com",
                    subject="Lunch?",
                    body="<p>Friday?</p>",
                    to_email=HUMAN_EMAIL,
                )
                self.deliver(envelope(message))
                continue
            customer += 1
            address = f"customer{customer}@example.com"
            first = self._inbound(address)
            self._customer_threads[first["thread_id"]] = address
            messages = [first]
            if self._random() < self.settings.burst_probability:
                self.features["burst"] += 1
                messages += [self._inbound(address, thread_of=first) for _ in range(self._randint(1, 4))]
            for message in messages:
                self._notify(message)
            self._backpressure()

    @staticmethod
    def agent_grants() -> dict[str, str]:
        return {AGENT_GRANT_ID: AGENT_EMAIL}
