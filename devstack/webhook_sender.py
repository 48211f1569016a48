"""Nylas' side of the webhook: sign each notification and deliver it as Nylas does.

Delivery semantics (the Nylas fact sheet): up to 3 attempts, retried only on
408, 429, 502, 503, 504, 507 and timeouts (a 500 or a 4xx is dropped for
good); the top-level ``id`` stays the same across attempts while
``webhook_delivery_attempt`` counts them. On top of that, deliberate
duplicates (``copies``) and concurrent redelivery (``concurrent``) reproduce
what an at-least-once sender does to a receiver.
"""

import gzip
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests

from replyonce.rules.signature import sign

RETRIED_STATUSES = frozenset({408, 429, 502, 503, 504, 507})
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Delivery:
    """One HTTP POST of a notification."""

    notification_id: str
    attempt: int
    status: int | None  # None: timed out or connection failed
    forged: bool = False
    at: float = 0.0  # when it was posted (Unix seconds): the console's timeline


class WebhookSender:
    """Delivers signed notifications to a webhook URL.

    Parameters
    ----------
    url:
        The webhook endpoint.
    secret:
        The webhook secret Nylas signs with.
    timeout_seconds:
        Nylas waits 10 s for the 200.
    retry_delays:
        Waits before attempts 2 and 3 (Nylas backs off over 10-20 minutes;
        the local stack compresses that).
    compressed:
        Deliver gzip bodies (``compressed_delivery: true``).
    """

    def __init__(
        self,
        url: str,
        secret: str,
        *,
        timeout_seconds: float = 10.0,
        retry_delays: tuple[float, float] = (0.2, 0.5),
        compressed: bool = False,
    ) -> None:
        self.url = url
        self._secret = secret
        self._timeout = timeout_seconds
        self._retry_delays = retry_delays
        self._compressed = compressed
        self._lock = threading.Lock()
        self._session = requests.Session()
        self.deliveries: list[Delivery] = []

    def _post_once(self, payload: dict[str, Any], attempt: int, *, forged: bool) -> int | None:
        body = json.dumps({**payload, "webhook_delivery_attempt": attempt}, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "Nylas-Webhooks (local stack)"}
        if self._compressed:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        headers["X-Nylas-Signature"] = sign(body, "forged-secret" if forged else self._secret)
        posted = time.time()
        try:
            status: int | None = requests.post(
                self.url, data=body, headers=headers, timeout=self._timeout
            ).status_code
        except requests.RequestException:
            status = None
        with self._lock:
            self.deliveries.append(Delivery(payload["id"], attempt, status, forged, posted))
        return status

    def deliver(self, payload: dict[str, Any], *, forged: bool = False) -> int | None:
        """One notification, with Nylas' retries; returns the final status (None: timed out)."""
        status: int | None = None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            status = self._post_once(payload, attempt, forged=forged)
            if status is not None and status not in RETRIED_STATUSES:
                return status
            if attempt < MAX_ATTEMPTS:
                time.sleep(self._retry_delays[attempt - 1])
        return status

    def deliver_many(self, payload: dict[str, Any], *, copies: int = 1, concurrent: bool = False) -> None:
        """Deliver the same notification ``copies`` times, all at once when ``concurrent``."""
        if concurrent and copies > 1:
            start = threading.Barrier(copies)

            def send() -> None:
                start.wait()
                self.deliver(payload)

            threads = [threading.Thread(target=send) for _ in range(copies)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            for _ in range(copies):
                self.deliver(payload)
