"""The Agent Account send queue: a ``202 Accepted`` is not a send.

Source: https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/ -- a
burst over the per-second rate is held in a short queue and sent in order; the ``202`` carries the
message (or draft) object minus ``headers``; queued messages usually go out within seconds, at the
back of a full queue up to 90 s later; ``message.delivered`` confirms one went out; if Nylas cannot
send it, ``message.send_failed`` fires, it does not count against quotas, and a queued draft stays in
the Drafts folder.

Here a queued send waits until :meth:`SendQueue.release` decides it (a test, deterministically), or
until its timer does (:attr:`Modes.queue_release_after_seconds`, for a local stack).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from devstack.nylas.modes import Modes
from devstack.nylas.wire import Json

DEFAULT_FAILURE_REASON = "The message could not be sent: the recipient's mail server refused it."
"""``reason`` of a ``message.send_failed`` the caller did not word."""


@dataclass
class Queued:
    """One accepted, not yet sent message.

    Attributes
    ----------
    grant_id : str
        The sending grant.
    idempotency_key : str or None
        The key of the request that queued it.
    payload : dict
        The request body (``{}`` for a draft send).
    message : dict
        The message as it will be stored when it goes out (folders as names, headers included).
    draft_id : str or None
        The draft it was sent from.
    fail : bool
        Decided at acceptance for an automatic release (seeded); ignored by a manual one.
    """

    grant_id: str
    idempotency_key: str | None
    payload: Json
    message: Json
    draft_id: str | None = None
    fail: bool = False
    timer: threading.Timer | None = field(default=None, repr=False)


Outcome = Callable[[Queued, bool, str, bool], None]
"""``outcome(entry, failed, reason, swallow)``: send ``entry`` out, or fail it."""


class SendQueue:
    """Queued sends in acceptance order; call :meth:`locked_accept` with the state lock held.

    Parameters
    ----------
    lock : threading.Lock
        The emulator's state lock.
    modes : Modes
        Whether sends queue and how they are released.
    outcome : callable
        Carries a release out (:data:`Outcome`); called outside the lock.
    """

    def __init__(self, lock: threading.Lock, modes: Modes, outcome: Outcome) -> None:
        self._lock = lock
        self._modes = modes
        self._outcome = outcome
        self.clear()

    def clear(self) -> None:
        """Forget every queued send and cancel the timers (call with the lock held)."""
        for entry in getattr(self, "entries", {}).values():
            if entry.timer is not None:
                entry.timer.cancel()
        self.entries: dict[str, Queued] = {}
        self._accepted = 0

    def cancel_timers(self) -> None:
        """Stop every automatic release (the emulator stops); the sends stay queued."""
        with self._lock:
            for entry in self.entries.values():
                if entry.timer is not None:
                    entry.timer.cancel()

    @property
    def queueing(self) -> bool:
        return self._modes.send_queue

    def locked_accept(self, entry: Queued) -> None:
        """Queue ``entry``; with an automatic release, decide its fate and start its timer."""
        self._accepted += 1
        delay = self._modes.queue_release_after_seconds
        if delay is not None:
            # One generator per queued send, seeded by its place: the n-th send's fate is the same in
            # every run, however the releases interleave.
            draw = random.Random(f"{self._modes.queue_seed}:{self._accepted}").random()
            entry.fail = draw < self._modes.queue_fail_fraction
            entry.timer = threading.Timer(delay, self._release_one, (entry.message["id"],))
            entry.timer.daemon = True
            entry.timer.start()
        self.entries[entry.message["id"]] = entry

    def release(
        self,
        message_ids: Sequence[str] | None = None,
        *,
        fail: bool | Callable[[Json], bool] = False,
        reason: str = DEFAULT_FAILURE_REASON,
        swallow: bool = False,
    ) -> list[str]:
        """Send out (or fail) queued messages now, in acceptance order; returns their ids.

        ``fail`` is one answer for all, or a per-message policy ``fail(message) -> bool``.
        """
        with self._lock:
            wanted = list(self.entries) if message_ids is None else list(message_ids)
            unknown = [i for i in wanted if i not in self.entries]
            if unknown:
                raise KeyError(f"not queued: {', '.join(unknown)}")
            taken = [self.entries.pop(i) for i in wanted]
        for entry in taken:
            if entry.timer is not None:
                entry.timer.cancel()
            failed = fail(entry.message) if callable(fail) else fail
            self._outcome(entry, bool(failed), reason, swallow)
        return [entry.message["id"] for entry in taken]

    def _release_one(self, message_id: str) -> None:
        with self._lock:
            entry = self.entries.pop(message_id, None)
        if entry is not None:  # not already released by hand, nor forgotten by a reset
            self._outcome(entry, entry.fail, DEFAULT_FAILURE_REASON, True)
