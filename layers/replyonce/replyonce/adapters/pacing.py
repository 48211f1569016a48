"""Pacing per grant: at most ``limit`` requests of a kind in any ``window_seconds``, in this container.

Why: Nylas allows a grant 10 ``multipart/form-data`` sends a second, a
twentieth of its JSON sends (``docs/agents.md``, "Limits"). A container that sends files
for several threads of one grant at once waits its turn here instead of
spending a ``429``; containers do not see each other's sends, and a ``429``
Nylas still answers is a send that did not happen (``replyonce.answers``):
the record comes back and the same key sends later.
"""

import threading
import time
from collections import deque
from collections.abc import Callable

from replyonce.observability import count

MULTIPART_SENDS_PER_SECOND = 10
"""Nylas' per-grant limit on ``multipart/form-data`` sends (the rate-limits page)."""


class GrantPacer:
    """Waits, when needed, so that no grant makes more than ``limit`` paced requests per window."""

    def __init__(
        self,
        limit: int = MULTIPART_SENDS_PER_SECOND,
        window_seconds: float = 1.0,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._limit = limit
        self._window = window_seconds
        self._monotonic = monotonic
        self._sleep = sleep
        self._sent: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait_turn(self, grant_id: str) -> float:
        """Take the grant's next slot, sleeping until one is free; the seconds waited (counted when > 0)."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._monotonic()
                sent = self._sent.setdefault(grant_id, deque())
                while sent and now - sent[0] >= self._window:
                    sent.popleft()
                if len(sent) < self._limit:
                    sent.append(now)
                    if waited:
                        count("MultipartSendPaced")
                    return waited
                pause = self._window - (now - sent[0])
            self._sleep(pause)
            waited += pause
