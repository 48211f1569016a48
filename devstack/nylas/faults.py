"""Misbehaviour on demand: injected faults, the one-shot pause they share, and latency profiles.

Why here and not in the resources: a fault is decided when a request *arrives* (a gateway answered,
or the connection dropped) or, for a provider error, inside the send's key logic; either way the
resources only ask "is there one for me?". Keeping the queue of faults in one place means a test's
``inject`` reads the same whatever the route.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from devstack.nylas.wire import Response, error, request_id

FAULT_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "unauthorized",
    403: "insufficient_scopes",
    404: "not_found_error",
    429: "rate_limit_error",
    504: "provider_error",
}
"""Default ``error.type`` of an injected status without a body: the fact sheet's names where it gives
one (https://developer.nylas.com/docs/api/errors/); the rest need only be plausible and stable."""

PROVIDER_TIMEOUT_MESSAGE = "Provider request timed out."
"""``error.message`` of the spec's only ``504`` example (components/responses/504)."""

IDEMPOTENCY_ERRORS = {
    "concurrent": (
        "api.concurrent_idempotent_request",
        "A request with this Idempotency-Key is still being processed; retry with the same key in a "
        "few seconds",
    ),
    "invalid": (
        "api.invalid_idempotent_request",
        "Idempotency-Key was already used with a different request payload",
    ),
}
"""The two documented ``409`` answers of the key logic, as ``(error.type, error.message)``
(https://developer.nylas.com/docs/v3/email/idempotent-send/)."""


def spell(error_type: str, spelling: Literal["api", "bare"]) -> str:
    """``error_type`` in the chosen spelling: Nylas' error tables write ``api.provider_error``, its
    examples ``provider_error`` (https://developer.nylas.com/docs/api/errors/ and the idempotent-send
    guide), so a product must read both; the emulator can write either."""
    bare = error_type.removeprefix("api.")
    return bare if spelling == "bare" else f"api.{bare}"


@dataclass(frozen=True)
class Fault:
    """One injected misbehaviour; build it with :meth:`status`, :meth:`delay`, :meth:`lose_response`,
    :meth:`provider_error` or :meth:`idempotency_error`.

    Attributes
    ----------
    kind : {"status", "delay", "lose_response", "provider_error"}
        What the emulator does with the request the fault is matched to.
    status_code : int
        HTTP status answered by a ``"status"`` or ``"provider_error"`` fault (0 otherwise).
    body : mapping, str, bytes or None
        Body of a ``"status"`` or ``"provider_error"`` fault; ``None`` means a Nylas-shaped error body.
    headers : mapping
        Extra response headers of a ``"status"`` fault (e.g. ``Retry-After``).
    seconds : float
        Sleep of a ``"delay"`` fault.
    sent : bool
        For a ``"provider_error"``: the send is performed before the error is answered.
    """

    kind: Literal["status", "delay", "lose_response", "provider_error"]
    status_code: int = 0
    body: Mapping[str, Any] | str | bytes | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    sent: bool = False

    @classmethod
    def status(
        cls,
        code: int,
        body: Mapping[str, Any] | str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """Answer ``code`` without processing the request (nothing is sent, no key is recorded).

        Parameters
        ----------
        code : int
            HTTP status, e.g. 500, 503, or 429.
        body : mapping, str, bytes or None
            Response body; a mapping is JSON-encoded. ``None`` gives the usual error shape.
        headers : mapping or None
            Extra headers, e.g. ``{"Retry-After": "2"}``.
        """
        if not 100 <= code <= 599:
            raise ValueError(f"not an HTTP status code: {code}")
        return cls("status", status_code=code, body=body, headers=dict(headers or {}))

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Sleep ``seconds`` (real time), then process normally: a slow response.

        The sleep happens where the real work starts, *after* an ``Idempotency-Key`` has been
        registered, so the key is "in flight" for the whole delay -- which is what makes the
        ``409 api.concurrent_idempotent_request`` path testable.
        """
        if seconds < 0:
            raise ValueError("delay must be >= 0")
        return cls("delay", seconds=float(seconds))

    @classmethod
    def lose_response(cls) -> Fault:
        """Process the request fully, then close the connection without answering.

        This is how a client timeout or a dropped connection looks from the client's side: the
        email *was* sent and the idempotency key *was* recorded, but the caller never learns it.
        """
        return cls("lose_response")

    @classmethod
    def provider_error(
        cls,
        status: int = 504,
        message: str = PROVIDER_TIMEOUT_MESSAGE,
        provider_error: Mapping[str, Any] | None = None,
        *,
        sent: bool = False,
        error_type: str = "provider_error",
    ) -> Fault:
        """Fail a send the way Nylas does when the provider fails: *through* the key logic.

        Unlike :meth:`status` (a gateway in front of Nylas: no key recorded), this answer is what
        Nylas itself returns for the first request under an ``Idempotency-Key``, so it is cached
        under the key and replayed, with ``Idempotent-Response: true``, for the key's hour; only a
        new key sends again. It applies to the send routes (``POST .../messages/send`` and
        ``POST .../drafts/{id}``) and is consumed by a request that is a *first* request under its
        key (or has no key): a replay or a 409 leaves it queued.

        Source: https://developer.nylas.com/docs/v3/email/idempotent-send/ -- "Nylas returns a 504
        Gateway Timeout however the provider completed the send but was delayed"; the spec's only
        ``504`` example is ``provider_error`` / "Provider request timed out.".

        Parameters
        ----------
        status : int
            A 5xx status, e.g. 502, 503 or 504 (Nylas documents 504 ``provider_error``).
        message : str
            ``error.message`` of the body.
        provider_error : mapping or None
            ``error.provider_error``, the provider's own error object; a plausible one by default.
        sent : bool
            False (default): nothing is sent. True: the send *is* performed -- in ``sends``, in the
            mailbox, ``on_message_created`` fired, synchronously even when the send queue is on --
            and then this error is answered (and cached) instead of the 200. A request Nylas
            rejects itself (a 400, a 404, an account limit) answers that rejection.
        error_type : str
            ``error.type``: ``"provider_error"`` (the spec's example) or ``"api.provider_error"``
            (the error tables' spelling).
        """
        if not 500 <= status <= 599:
            raise ValueError(f"a provider error is a 5xx status, not {status}")
        detail = dict(provider_error) if provider_error is not None else {"error": "upstream timeout"}
        body = {"error": {"type": error_type, "message": message, "provider_error": detail}}
        return cls("provider_error", status_code=status, body=body, sent=sent)

    @classmethod
    def idempotency_error(
        cls, which: Literal["concurrent", "invalid"], spelling: Literal["api", "bare"] = "api"
    ) -> Fault:
        """A ``409`` of Nylas' key logic, answered without processing (nothing sent, no key kept).

        ``which="concurrent"`` is ``concurrent_idempotent_request`` (the key is in flight
        elsewhere), ``"invalid"`` is ``invalid_idempotent_request`` (another payload used the key
        within the hour -- and *that* request may have sent). ``spelling`` picks ``api.<type>``
        (Nylas' error table) or the bare ``<type>`` (its examples).
        Source: https://developer.nylas.com/docs/v3/email/idempotent-send/.
        """
        error_type, message = IDEMPOTENCY_ERRORS[which]
        return cls.status(
            409,
            {"request_id": request_id(), "error": {"type": spell(error_type, spelling), "message": message}},
        )


@dataclass(frozen=True)
class _Injected:
    method: str
    pattern: re.Pattern[str]
    fault: Fault


class FaultQueue:
    """The faults queued by :meth:`NylasEmulator.inject`; call :meth:`take` with the state lock held."""

    def __init__(self) -> None:
        self._entries: list[list[Any]] = []  # [_Injected, remaining uses]

    def inject(self, method: str, path_regex: str, fault: Fault, times: int) -> None:
        if times < 1:
            raise ValueError("times must be >= 1")
        self._entries.append([_Injected(method.upper(), re.compile(path_regex), fault), times])

    def take(self, method: str, path: str, *, provider_error: bool = False) -> Fault | None:
        """The first matching fault, spending one of its uses.

        Provider errors are taken inside a send's key logic, every other kind on arrival.
        """
        for entry in self._entries:
            injected, remaining = entry
            if (
                injected.method == method
                and (injected.fault.kind == "provider_error") == provider_error
                and injected.pattern.search(path)
            ):
                if remaining <= 1:
                    self._entries.remove(entry)
                else:
                    entry[1] = remaining - 1
                return injected.fault
        return None

    def clear(self) -> None:
        self._entries.clear()


class Pause:
    """A one-shot sleep, so a delay is spent exactly once wherever processing reaches it first."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def __call__(self) -> None:
        seconds, self._seconds = self._seconds, 0.0
        if seconds > 0:
            time.sleep(seconds)


def fault_response(fault: Fault) -> Response:
    """The answer of a ``"status"`` or ``"provider_error"`` fault."""
    headers = {"Content-Type": "application/json", **fault.headers}
    if fault.body is None:
        default = error(
            fault.status_code, FAULT_ERROR_TYPES.get(fault.status_code, "api_error"), "injected fault"
        )
        return Response(fault.status_code, default.body, headers)
    if isinstance(fault.body, bytes):
        return Response(fault.status_code, fault.body, headers)
    if isinstance(fault.body, str):
        return Response(fault.status_code, fault.body.encode(), headers)
    if fault.kind == "provider_error":  # a Nylas answer: it has a request id like every other
        return Response(
            fault.status_code, json.dumps({"request_id": request_id(), **fault.body}).encode(), headers
        )
    return Response(fault.status_code, json.dumps(dict(fault.body)).encode(), headers)


class Latency:
    """Seeded per-route delays in real seconds, drawn from :attr:`Modes.latency` (benchmarks).

    Each route's delay is uniform between its ``(low, high)``; one seeded generator serves every
    route, so a run with the same seed and the same request order draws the same delays.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seed: int | None = None
        self._rng = random.Random(0)

    def draw(self, profile: Mapping[str, tuple[float, float]], seed: int, route: str) -> float:
        bounds = profile.get(route)
        if bounds is None:
            return 0.0
        with self._lock:
            if self._seed != seed:
                self._seed, self._rng = seed, random.Random(seed)
            return self._rng.uniform(*bounds)

    def reset(self) -> None:
        with self._lock:
            self._seed = None
