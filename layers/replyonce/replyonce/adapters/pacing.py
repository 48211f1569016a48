"""Pacing per grant: multipart sends within Nylas' per-grant limit, and a grant's ``429`` held to it.

Why: Nylas allows a grant 10 ``multipart/form-data`` sends a second, a
twentieth of its JSON sends (``docs/agents.md``, "Limits"). A container that sends files
for several threads of one grant at once waits its turn here instead of
spending a ``429``; containers do not see each other's sends, and a ``429``
Nylas still answers is a send that did not happen (``replyonce.answers``):
the record comes back and the same key sends later.

A ``429`` Nylas does answer holds that grant's next requests of its kind in this container until its
``Retry-After`` is up (:class:`GrantHolds`), and no other grant's.
"""

import math
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


MAX_HOLD_SECONDS = 300
"""The longest a ``Retry-After`` holds a grant's requests in this container (the record's own deferral
still honours all of it): a malformed or huge header must not silence a grant for the container's life."""
UNSTATED_HOLD_SECONDS = 1
"""A rate limit's ``429`` without ``Retry-After`` (Nylas does not say its own carry one): its limits are
per second, so the grant's next second."""


class GrantHolds:
    """Per grant and kind of request: the time Nylas asked this container to wait after a ``429``.

    Why per grant: Nylas' rate limits are a grant's (its message requests and its sends, each a number
    a second: ``docs/agents.md``, "Limits"), and a ``429`` with ``Retry-After`` speaks for that grant
    only. A grant that was told to wait makes no request of that kind until the time is up — its
    records are deferred with the time left, as the ``429`` itself would have been answered — while
    every other grant's requests go on at once: one mailbox's throttling never slows another's replies.

    Kinds (``"send"``, ``"read"``) are held apart: the Messages API and the send endpoint have limits
    of their own.
    """

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._until: dict[tuple[str, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    def hold(self, grant_id: str, kind: str, retry_after_seconds: int | None, error_type: str) -> None:
        """Nylas answered the grant's request of ``kind`` with a rate limit's ``429``: hold the next."""
        seconds = UNSTATED_HOLD_SECONDS if retry_after_seconds is None else retry_after_seconds
        seconds = min(max(seconds, 0), MAX_HOLD_SECONDS)
        with self._lock:
            until = self._monotonic() + seconds
            previous, _ = self._until.get((grant_id, kind), (0.0, ""))
            self._until[(grant_id, kind)] = (max(until, previous), error_type)
        count("GrantThrottled")

    def held(self, grant_id: str, kind: str) -> tuple[int, str] | None:
        """``(whole seconds left, the 429's error type)`` while the grant's requests of ``kind`` wait;
        ``None`` when they may go."""
        with self._lock:
            until, error_type = self._until.get((grant_id, kind), (0.0, ""))
            left = until - self._monotonic()
            if left <= 0:
                self._until.pop((grant_id, kind), None)
                return None
        count("GrantHeld")
        return math.ceil(left), error_type
