"""A loopback HTTP emulator of the parts of the Nylas v3 API that ReplyOnce uses.

Why it exists: ReplyOnce promises that the agent replies exactly once. That promise is only testable
against something that *counts what Nylas saw* -- every send that went out, every request, every
replay of an ``Idempotency-Key`` -- and that can misbehave on demand (5xx, 429, slow answers, lost
responses). Mocking the HTTP client would test our assumptions about Nylas instead of the wire
behaviour, so this is a real HTTP server on ``127.0.0.1`` that the unchanged client code talks to.

What is emulated (sources: the public Nylas v3 docs, https://developer.nylas.com/docs/v3/email/,
https://developer.nylas.com/docs/reference/api/messages/,
https://developer.nylas.com/docs/v3/email/idempotent-send/,
https://developer.nylas.com/docs/dev-guide/metadata/ and
https://developer.nylas.com/docs/v3/notifications/):

- bearer-token auth and the common error body ``{"request_id", "error": {"type", "message"}}``;
  every response carries an HTTP ``Date`` header from the emulator's clock (see :meth:`advance_clock`),
  the time a product must use instead of its own clock or the sender-supplied message ``date``;
- ``GET /v3/grants/{grant}``, ``GET .../messages/{id}``, ``GET .../messages?thread_id=&limit=`` (also
  ``metadata_pair=key1:<value>``), ``GET .../threads/{id}``. Messages carry ``headers`` only when
  asked with ``fields=include_headers`` (all) or ``fields=include_basic_headers`` (``Message-ID``,
  ``In-Reply-To``, ``References``), as in Nylas;
- list order: Nylas documents none (a Nylas staff post says newest first). The emulator lists newest
  first *by arrival in the mailbox*, never by ``date``: ``date`` is sender-supplied and can be skewed
  (``deliver_inbound(date=...)``), so a product that orders by it is caught here. A thread's
  ``message_ids`` are in arrival order;
- ``POST .../messages/send`` with the ``Idempotency-Key`` contract (per grant, one hour, cached
  success *and* error responses, ``Idempotent-Response: true`` on replays, the two 409s, the
  256-character limit), ``metadata`` and ``custom_headers``, provider errors that are cached under
  the key (:meth:`Fault.provider_error`), and the Agent Account ``202`` queueing answer;
- outbound mail firing ``message.created`` like inbound mail does (through a callback whose message
  has no ``headers``, like a webhook without field customization);
- webhook destinations: ``POST /v3/webhooks`` (which performs the challenge ``GET`` against the
  ``webhook_url`` and fails with 400 like Nylas when it does not get 200 and the exact value back),
  ``GET /v3/webhooks/{id}``, ``DELETE /v3/webhooks/{id}`` and ``POST /v3/webhooks/rotate-secret/{id}``;
- control routes for a local stack, outside the Nylas API and without auth (the server binds
  loopback only): ``POST /_emulator/inbound``, ``GET /_emulator/threads/{id}``,
  ``POST /_emulator/clock``.

The ``{grant}`` path segment also accepts the grant's email address, as the real API does.

Standard library only, so the emulator runs wherever the tests run.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal
from urllib.error import HTTPError, URLError
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit
from urllib.request import HTTPRedirectHandler, ProxyHandler, Request, build_opener

from devstack.loopback import LoopbackHTTPServer

__all__ = [
    "IDEMPOTENCY_TTL_SECONDS",
    "MAX_IDEMPOTENCY_KEY_LENGTH",
    "Fault",
    "NylasEmulator",
    "SendAttempt",
    "SendRecord",
]

IDEMPOTENCY_TTL_SECONDS = 3600.0
"""How long (emulator clock) a first request's response is kept for replay under its key."""

MAX_IDEMPOTENCY_KEY_LENGTH = 256
"""Longest accepted ``Idempotency-Key``; longer keys are rejected with 400."""

CHALLENGE_TIMEOUT_SECONDS = 10.0
"""How long ``POST /v3/webhooks`` waits for the challenge answer (Nylas: 10 seconds)."""

WEBHOOK_VERIFICATION_ERROR_TYPE = "70005"
"""``error.type`` of a failed challenge, as in the fact sheet's example (``unable.verify.webhook_url``)."""

DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 200

MAX_METADATA_PAIRS = 50
MAX_METADATA_KEY_LENGTH = 40
MAX_METADATA_VALUE_LENGTH = 500
INDEXED_METADATA_KEYS = ("key1", "key2", "key3", "key4", "key5")
"""The reserved metadata keys Nylas indexes; only they can be used in ``metadata_pair``."""

BASIC_HEADER_NAMES = frozenset({"message-id", "in-reply-to", "references"})
"""Headers returned with ``fields=include_basic_headers`` (compared case-insensitively)."""

MESSAGE_FIELDS = frozenset(
    {"standard", "include_headers", "include_basic_headers", "include_tracking_options", "raw_mime"}
)
"""The documented values of ``fields=`` on message reads; anything else is a 400."""

SYNTHETIC_MESSAGE_ID_DOMAIN = "emulator.nylas"
"""Domain of the ``Message-ID`` header given to messages that arrive without one."""

CONTROL_PREFIX = "/_emulator/"
"""Path prefix of the local-stack control routes (no auth, not counted in :attr:`requests`)."""

_log = logging.getLogger(__name__)

Json = dict[str, Any]
MessageCallback = Callable[[Json], None]
SendStartedCallback = Callable[[str, Any], None]

# Default ``error.type`` for an injected status without an explicit body. The names follow the
# fact sheet where it gives one; the rest only need to be plausible and stable.
_FAULT_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "unauthorized",
    403: "insufficient_scopes",
    404: "not_found_error",
    429: "rate_limit_error",
    504: "provider_error",
}

_TAG_RE = re.compile(r"<[^>]*>")
_CURSOR_PREFIX = "offset:"


# --------------------------------------------------------------------------------------------------
# Public value types
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One injected misbehaviour; build it with :meth:`status`, :meth:`delay`, :meth:`lose_response`
    or :meth:`provider_error`.

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
    """

    kind: Literal["status", "delay", "lose_response", "provider_error"]
    status_code: int = 0
    body: Mapping[str, Any] | str | bytes | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0

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
        message: str = "The email provider did not answer in time",
        provider_error: Mapping[str, Any] | None = None,
    ) -> Fault:
        """Fail a send the way Nylas does when the provider fails: *through* the key logic.

        Unlike :meth:`status` (a gateway in front of Nylas: no key recorded), this answer is what
        Nylas itself returns for the first request under an ``Idempotency-Key``, so it is cached
        under the key and replayed, with ``Idempotent-Response: true``, for the key's hour; only a
        new key sends again. Nothing is sent. It applies to ``POST .../messages/send`` only and is
        consumed by a request that is a *first* request under its key (or has no key): a replay or
        a 409 leaves it queued.

        Parameters
        ----------
        status : int
            A 5xx status, e.g. 502, 503 or 504 (Nylas documents 504 ``provider_error``).
        message : str
            ``error.message`` of the body.
        provider_error : mapping or None
            ``error.provider_error``, the provider's own error object; a plausible one by default.
        """
        if not 500 <= status <= 599:
            raise ValueError(f"a provider error is a 5xx status, not {status}")
        detail = dict(provider_error) if provider_error is not None else {"error": "upstream timeout"}
        body = {"error": {"type": "provider_error", "message": message, "provider_error": detail}}
        return cls("provider_error", status_code=status, body=body)


@dataclass(frozen=True)
class SendRecord:
    """One email that actually went out through ``POST .../messages/send``.

    Attributes
    ----------
    grant_id : str
        Canonical grant id (even when the request addressed the grant by email).
    idempotency_key : str or None
        The ``Idempotency-Key`` header of the request, if any.
    payload : dict
        The JSON request body as received.
    message : dict
        The message object stored in the mailbox.
    """

    grant_id: str
    idempotency_key: str | None
    payload: Json
    message: Json


@dataclass(frozen=True)
class SendAttempt:
    """One request that reached the send endpoint, whatever its outcome.

    Injected :meth:`Fault.status` answers and unauthorized requests never reach it (a gateway
    answered, or nobody); :attr:`NylasEmulator.requests` counts those.

    Attributes
    ----------
    grant_id : str
        Canonical grant id.
    idempotency_key : str or None
        The ``Idempotency-Key`` header of the request, if any.
    status : int
        HTTP status answered (also when the response was then lost by a fault).
    replayed : bool
        True when the answer was a cached response (``Idempotent-Response: true``).
    payload : any
        The JSON request body as parsed, or ``None`` when it was not JSON.
    """

    grant_id: str
    idempotency_key: str | None
    status: int
    replayed: bool
    payload: Any


# --------------------------------------------------------------------------------------------------
# Internal state types
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Response:
    status: int
    body: bytes
    headers: Mapping[str, str]


@dataclass
class _KeyRecord:
    # ``response`` stays None while the first request is in flight; that is the concurrency signal.
    fingerprint: str
    first_seen: float
    response: _Response | None = None


@dataclass
class _Thread:
    id: str
    grant_id: str
    message_ids: list[str]


@dataclass(frozen=True)
class _Stored:
    # ``seq`` breaks ties between equal ``date`` values so ordering is deterministic.
    seq: int
    message: Json
    # Real time the message appeared in the mailbox (finer than ``date``), for invariant checks.
    arrived_at: float = 0.0


@dataclass(frozen=True)
class _InjectedFault:
    method: str
    pattern: re.Pattern[str]
    fault: Fault


class _Pause:
    """A one-shot sleep, so a delay is spent exactly once wherever processing reaches it first."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def __call__(self) -> None:
        seconds, self._seconds = self._seconds, 0.0
        if seconds > 0:
            time.sleep(seconds)


# --------------------------------------------------------------------------------------------------
# The emulator
# --------------------------------------------------------------------------------------------------


class NylasEmulator:
    """A thread-safe Nylas v3 API emulator served on ``127.0.0.1``.

    Parameters
    ----------
    api_key : str
        The only bearer token accepted.
    clock : callable
        Returns "now" in Unix seconds. Plus the offset of :meth:`advance_clock`, it drives message
        dates, the idempotency-key TTL and the HTTP ``Date`` header, so a test can jump an hour ahead
        without sleeping. Delays injected with :meth:`Fault.delay` use real time.
    port : int
        TCP port; 0 (default) picks a free ephemeral port.

    Attributes
    ----------
    send_accepts_with_202 : bool
        When true, successful sends answer ``202`` (Agent Account send queueing) with the same body
        minus the message ``headers`` array, as the changelog describes.
    on_message_created : callable or None
        Called with a copy of every message that appears in a mailbox: inbound mail from
        :meth:`deliver_inbound` and outbound mail from a send that really went out (never for a
        replay). For sends it runs on the request thread *before* the response is written, so when a
        client sees the answer the callback has already run; it must therefore not block on that
        client. Its exceptions are logged there (the email went out regardless) but propagate from
        :meth:`deliver_inbound`, where the caller is the test itself. The message has no ``headers``
        unless :attr:`webhook_includes_headers` is set, as a webhook without field customization.
    webhook_includes_headers : bool
        Give ``on_message_created`` the message *with* its ``headers`` (Nylas' field customization
        ``headers``). False by default and after :meth:`reset`.
    on_send_started : callable or None
        Called as ``on_send_started(grant_id, payload)`` on the request thread of a send, after its
        ``Idempotency-Key`` (if any) is reserved and before the send is performed, outside the lock:
        a test delivers a customer message "while the send is in flight" here. Not called for
        replays and 409s. Its exceptions are logged, never propagated. Wiring: kept by :meth:`reset`.

    Examples
    --------
    >>> with NylasEmulator() as nylas:  # doctest: +SKIP
    ...     nylas.add_grant("g1", "agent@example.com")
    ...     inbound = nylas.deliver_inbound("g1", from_email="c@example.com", subject="Hi", body="?")
    ...     requests.post(f"{nylas.url}/v3/grants/g1/messages/send", ...)
    ...     assert len(nylas.sends) == 1
    """

    def __init__(
        self, api_key: str = "test-api-key", clock: Callable[[], float] = time.time, *, port: int = 0
    ) -> None:
        self.api_key = api_key
        self.clock = clock
        self.send_accepts_with_202 = False
        self.on_message_created: MessageCallback | None = None
        self.webhook_includes_headers = False
        self.on_send_started: SendStartedCallback | None = None
        self._clock_offset = 0.0
        # Wiring, like on_message_created: a test may shorten it to prove the timeout path quickly.
        self.challenge_timeout_seconds = CHALLENGE_TIMEOUT_SECONDS
        self._port = port
        # One lock for all state: the emulator is tiny, and a single lock makes every check-and-set
        # (idempotency keys above all) trivially atomic.
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._clear_state()

    # ---- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> NylasEmulator:
        """Bind the socket and serve in a background thread; returns ``self`` for chaining."""
        if self._server is not None:
            raise RuntimeError("emulator already started")
        self._server = _Server(("127.0.0.1", self._port), self)
        self._server.start_serving("nylas-emulator")
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call twice."""
        server, self._server = self._server, None
        if server is not None:
            server.stop_serving()

    def __enter__(self) -> NylasEmulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321`` (use it as ``NYLAS_API_URI``)."""
        if self._server is None:
            raise RuntimeError("emulator not started")
        return self._server.base_url

    # ---- the emulator's clock ----------------------------------------------------------------------

    def now(self) -> float:
        """The emulator's "now" in Unix seconds: the injected clock plus :meth:`advance_clock`."""
        return self.clock() + self._clock_offset

    def advance_clock(self, seconds: float) -> float:
        """Move the emulator's clock forward by ``seconds`` without sleeping; returns the new now.

        Everything that reads Nylas time moves with it: new message dates, the idempotency keys'
        hour and the HTTP ``Date`` header. :meth:`reset` sets the offset back to zero.

        Raises
        ------
        ValueError
            ``seconds`` is negative or not finite: Nylas' clock does not go back.
        """
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"advance_seconds must be a finite number >= 0, not {seconds!r}")
        with self._lock:
            self._clock_offset += float(seconds)
        return self.now()

    # ---- test-facing setup -------------------------------------------------------------------------

    def add_grant(self, grant_id: str, email: str, name: str = "Agent") -> Json:
        """Create (or replace) a valid Agent Account grant and return its object."""
        grant = {
            "id": grant_id,
            "email": email,
            "provider": "nylas",
            "grant_status": "valid",
            "name": name,
            "scope": [],
            "created_at": int(self.now()),
        }
        with self._lock:
            self._grants[grant_id] = grant
            return copy.deepcopy(grant)

    def deliver_inbound(
        self,
        grant_id: str,
        *,
        from_email: str,
        subject: str,
        body: str,
        from_name: str = "",
        reply_to: Sequence[Mapping[str, str]] | None = None,
        thread_id: str | None = None,
        reply_to_message_id: str | None = None,
        headers: Sequence[Mapping[str, str]] | Mapping[str, str] | None = None,
        date: float | None = None,
        to_email: str | None = None,
        message_id: str | None = None,
    ) -> Json:
        """Put an inbound message in the grant's inbox and fire ``on_message_created``.

        Parameters
        ----------
        grant_id : str
            Receiving grant (must have been added); its email address works too.
        from_email, subject, body : str
            Sender and content.
        from_name : str
            Sender's display name.
        reply_to : list of {name, email} or None
            The message's ``Reply-To`` addresses.
        thread_id : str or None
            Join this thread; an unknown id creates a thread with that id (readable ids in tests).
        reply_to_message_id : str or None
            Join the thread of this message and set ``in_reply_to`` (and the ``In-Reply-To`` and
            ``References`` headers, unless given) to it.
        headers : list of {name, value}, mapping, or None
            Message headers (e.g. ``Auto-Submitted``); stored as a list of ``{name, value}``. A
            ``Message-ID`` is added when absent.
        date : float or None
            Unix seconds, sender-supplied (it may be skewed); defaults to the emulator clock. It
            never changes the message's place in listings, which is its arrival.
        to_email : str or None
            Recipient; defaults to the grant's address.
        message_id : str or None
            Force the message id, e.g. an IMAP-style ``<abc/def@host>`` that must be URL-encoded in
            paths; defaults to a fresh ``msg-<hex>``.

        Returns
        -------
        dict
            The stored message object, with its ``headers``.

        Raises
        ------
        KeyError
            Unknown grant or unknown ``reply_to_message_id``.
        ValueError
            The thread belongs to another grant, ``thread_id`` and ``reply_to_message_id`` disagree,
            or ``message_id`` is already taken.
        """
        message = self._receive(
            grant_id,
            from_email=from_email,
            from_name=from_name,
            subject=subject,
            body=body,
            reply_to=reply_to,
            thread_id=thread_id,
            reply_to_message_id=reply_to_message_id,
            headers=headers,
            date=date,
            to_email=to_email,
            message_id=message_id,
        )
        # Outside the lock: the callback may call back into the emulator (over HTTP or directly).
        self._announce(message, swallow=False)
        return copy.deepcopy(message)

    def _receive(
        self,
        grant_id: str,
        *,
        from_email: str,
        from_name: str,
        subject: str,
        body: str,
        reply_to: Sequence[Mapping[str, str]] | None,
        thread_id: str | None,
        reply_to_message_id: str | None,
        headers: Sequence[Mapping[str, str]] | Mapping[str, str] | None,
        date: float | None,
        to_email: str | None,
        message_id: str | None,
    ) -> Json:
        """Store an inbound message (see :meth:`deliver_inbound`) and return a copy, announcing nothing."""
        if isinstance(headers, Mapping):
            header_list = [{"name": k, "value": v} for k, v in headers.items()]
        else:
            header_list = [{"name": h["name"], "value": h["value"]} for h in headers or ()]
        with self._lock:
            grant = self._find_grant(grant_id)
            if grant is None:
                raise KeyError(f"unknown grant {grant_id!r}")
            grant_id = grant["id"]
            if message_id is not None and message_id in self._messages:
                raise ValueError(f"message id {message_id!r} already exists")
            parent: Json | None = None
            if reply_to_message_id is not None:
                stored = self._messages.get(reply_to_message_id)
                if stored is None or stored.message["grant_id"] != grant_id:
                    raise KeyError(f"unknown message {reply_to_message_id!r} for grant {grant_id!r}")
                parent = stored.message
                if thread_id is not None and thread_id != parent["thread_id"]:
                    raise ValueError("thread_id and reply_to_message_id point at different threads")
                thread_id = parent["thread_id"]
            thread = self._threads.get(thread_id) if thread_id is not None else None
            if thread is not None and thread.grant_id != grant_id:
                raise ValueError(f"thread {thread_id!r} belongs to another grant")
            if thread is None:
                thread = self._new_thread(grant_id, thread_id)
            recipient = to_email or grant["email"]
            message = _message(
                grant_id=grant_id,
                thread_id=thread.id,
                subject=subject,
                sender={"name": from_name, "email": from_email},
                to=[{"name": grant["name"] if recipient == grant["email"] else "", "email": recipient}],
                cc=[],
                bcc=[],
                reply_to=_participants(list(reply_to or [])),
                date=int(self.now() if date is None else date),
                body=body,
                folder="inbox",
                headers=header_list,
                in_reply_to=reply_to_message_id,
                message_id=message_id,
                parent=parent,
            )
            self._store(message, thread)
            return copy.deepcopy(message)

    def inject(self, method: str, path_regex: str, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests matching ``method`` and ``path_regex``.

        The regex is searched (``re.search``) in the request path as received -- percent-encoded,
        without the query string -- so anchor it (``/messages/send$``) when it matters. Faults are
        consulted in injection order and the first one that matches is used.
        """
        if times < 1:
            raise ValueError("times must be >= 1")
        entry = _InjectedFault(method.upper(), re.compile(path_regex), fault)
        with self._lock:
            self._faults.append([entry, times])

    def reset(self) -> None:
        """Forget grants, messages, threads, counters, faults, idempotency keys and the clock offset.

        ``send_accepts_with_202`` and ``webhook_includes_headers`` go back to ``False``;
        ``on_message_created`` and ``on_send_started`` are wiring installed by whoever started the
        emulator (e.g. the local stack) and are kept.
        """
        with self._lock:
            self._clear_state()
            self._clock_offset = 0.0
            self.send_accepts_with_202 = False
            self.webhook_includes_headers = False

    # ---- test-facing counters ----------------------------------------------------------------------

    @property
    def sends(self) -> list[SendRecord]:
        """Every send that put an email on the wire, in order (replays and rejections excluded)."""
        with self._lock:
            records = list(self._sends)
        return [
            dataclasses.replace(r, payload=copy.deepcopy(r.payload), message=copy.deepcopy(r.message))
            for r in records
        ]

    @property
    def send_attempts(self) -> list[SendAttempt]:
        """Every request that reached the send endpoint, in order: sends, replays, 409s, errors."""
        with self._lock:
            attempts = list(self._send_attempts)
        return [dataclasses.replace(a, payload=copy.deepcopy(a.payload)) for a in attempts]

    @property
    def requests(self) -> list[tuple[str, str]]:
        """``(method, path)`` of every API request received, faulted ones included, in arrival order.

        The ``/_emulator/`` control routes are not Nylas requests and are not counted.
        """
        with self._lock:
            return list(self._requests)

    def count(self, method: str, path_prefix: str) -> int:
        """Number of requests received with ``method`` whose path starts with ``path_prefix``."""
        method = method.upper()
        with self._lock:
            return sum(1 for m, p in self._requests if m == method and p.startswith(path_prefix))

    def sent_messages(self, grant_id: str | None = None, thread_id: str | None = None) -> list[Json]:
        """Messages that went out through send, in send order, optionally filtered."""
        with self._lock:
            # Filter before copying: chaos runs call this per thread over thousands of sends.
            return [
                copy.deepcopy(r.message)
                for r in self._sends
                if (grant_id is None or r.grant_id == grant_id)
                and (thread_id is None or r.message["thread_id"] == thread_id)
            ]

    def mailbox(self, grant_id: str | None = None) -> list[tuple[float, Json]]:
        """Every message (inbound and sent) with the real time it appeared, in arrival order."""
        with self._lock:
            stored = sorted(self._messages.values(), key=lambda s: s.seq)
            return [
                (s.arrived_at, copy.deepcopy(s.message))
                for s in stored
                if grant_id is None or s.message["grant_id"] == grant_id
            ]

    # ---- state helpers (call with the lock held) ---------------------------------------------------

    def _clear_state(self) -> None:
        self._grants: dict[str, Json] = {}
        self._messages: dict[str, _Stored] = {}
        self._threads: dict[str, _Thread] = {}
        self._keys: dict[tuple[str, str], _KeyRecord] = {}
        self._faults: list[list[Any]] = []  # [_InjectedFault, remaining uses]
        self._sends: list[SendRecord] = []
        self._send_attempts: list[SendAttempt] = []
        # (grant id, reserved key, value) -> message ids in arrival order: metadata_pair lookups.
        self._metadata_index: dict[tuple[str, str, str], list[str]] = {}
        self._requests: list[tuple[str, str]] = []
        self._seq = 0
        self._webhooks: dict[str, Json] = {}
        self._challenges: list[Json] = []

    def _new_thread(self, grant_id: str, thread_id: str | None = None) -> _Thread:
        thread = _Thread(id=thread_id or f"thread-{uuid.uuid4().hex}", grant_id=grant_id, message_ids=[])
        self._threads[thread.id] = thread
        return thread

    def _store(self, message: Json, thread: _Thread) -> None:
        # Arrival order is the order of ``_messages`` (insertion) and of ``thread.message_ids``:
        # listings read it from there, so they cost O(thread), not O(mailbox), and never sort.
        self._seq += 1
        self._messages[message["id"]] = _Stored(self._seq, message, time.time())
        thread.message_ids.append(message["id"])
        for key, value in message["metadata"].items():
            if key in INDEXED_METADATA_KEYS:
                self._metadata_index.setdefault((message["grant_id"], key, value), []).append(message["id"])

    def _find_grant(self, segment: str) -> Json | None:
        grant = self._grants.get(segment)
        if grant is None:
            grant = next((g for g in self._grants.values() if g["email"].lower() == segment.lower()), None)
        return grant

    def _take_fault(self, method: str, path: str, *, provider_error: bool = False) -> Fault | None:
        # Provider errors are taken inside the send's key logic, everything else on arrival.
        for entry in self._faults:
            injected, remaining = entry
            if (
                injected.method == method
                and (injected.fault.kind == "provider_error") == provider_error
                and injected.pattern.search(path)
            ):
                if remaining <= 1:
                    self._faults.remove(entry)
                else:
                    entry[1] = remaining - 1
                return injected.fault
        return None

    def _thread_view(self, thread: _Thread) -> Json:
        messages = [self._messages[m].message for m in thread.message_ids]  # arrival order
        latest = messages[-1]
        participants: dict[str, Json] = {}
        for m in messages:
            for p in [*m["from"], *m["to"], *m["cc"]]:
                participants.setdefault(p["email"].lower(), {"name": p.get("name", ""), "email": p["email"]})
        view: Json = {
            "grant_id": thread.grant_id,
            "id": thread.id,
            "object": "thread",
            "subject": messages[0]["subject"],
            "message_ids": [m["id"] for m in messages],
            "participants": list(participants.values()),
            "snippet": latest["snippet"],
            "has_attachments": False,
            "has_drafts": False,
            "draft_ids": [],
            "starred": False,
            "unread": any(m["unread"] for m in messages),
            "folders": sorted({f for m in messages for f in m["folders"]}),
            "earliest_message_date": min(m["date"] for m in messages),
            "latest_draft_or_message": _select_fields(latest, "standard"),
        }
        # Keys are absent rather than null when there is nothing to report, as in the docs example.
        received = [m["date"] for m in messages if "inbox" in m["folders"]]
        sent = [m["date"] for m in messages if "sent" in m["folders"]]
        if received:
            view["latest_message_received_date"] = max(received)
        if sent:
            view["latest_message_sent_date"] = max(sent)
        return view

    def _announce(self, message: Json, *, swallow: bool) -> None:
        callback = self.on_message_created
        if callback is None:
            return
        # A webhook without field customization carries no headers: a product that filters on them
        # must read the message (fields=include_headers), and is caught here if it does not. Always
        # a copy: what the callback does to it never reaches the mailbox or the caller.
        message = _select_fields(message, "include_headers" if self.webhook_includes_headers else "standard")
        try:
            callback(message)
        except Exception:
            if not swallow:
                raise
            _log.exception("on_message_created callback failed for message %s", message.get("id"))

    # ---- HTTP handling -----------------------------------------------------------------------------

    def _handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> _Response | None:
        """Answer one request; ``None`` means "close the connection without answering"."""
        split = urlsplit(target)
        path = split.path
        if path.startswith(CONTROL_PREFIX):
            # Not Nylas: not counted, never faulted.
            return self._guarded(method, path, lambda: self._route_control(method, path, body))
        with self._lock:
            self._requests.append((method, path))
            fault = self._take_fault(method, path)
        if fault is not None and fault.kind == "status":
            return _fault_response(fault)
        pause = _Pause(fault.seconds if fault is not None and fault.kind == "delay" else 0.0)
        query = parse_qs(split.query)
        response = self._guarded(method, path, lambda: self._route(method, path, query, headers, body, pause))
        pause()
        if fault is not None and fault.kind == "lose_response":
            return None
        return response

    @staticmethod
    def _guarded(method: str, path: str, route: Callable[[], _Response]) -> _Response:
        try:
            return route()
        except Exception:
            # An emulator bug must be loud in the test log, but must not kill the server thread.
            _log.exception("nylas emulator failed on %s %s", method, path)
            return _error(500, "api_error", "internal emulator error")

    def _route(
        self,
        method: str,
        path: str,
        query: Mapping[str, list[str]],
        headers: Mapping[str, str],
        body: bytes,
        pause: _Pause,
    ) -> _Response:
        segments = [unquote(s) for s in path.rstrip("/").split("/")[1:]]
        is_send = method == "POST" and len(segments) == 5 and segments[3:] == ["messages", "send"]
        if not is_send:
            pause()
        if not self._authorized(headers.get("authorization", "")):
            return _error(401, "unauthorized", "Unauthorized: missing or invalid API key")
        if segments[:2] == ["v3", "webhooks"]:
            return self._route_webhooks(method, segments[2:], body)
        if len(segments) < 3 or segments[:2] != ["v3", "grants"]:
            return _error(404, "not_found_error", f"no such endpoint: {method} {path}")
        with self._lock:
            grant = self._find_grant(segments[2])
            grant = copy.deepcopy(grant) if grant is not None else None
        if grant is None:
            return _error(404, "not_found_error", f"grant {segments[2]!r} not found")
        rest = segments[3:]
        if method == "GET" and not rest:
            return _ok({"request_id": _request_id(), "data": grant})
        if is_send:
            return self._send(grant, path, headers, body, pause)
        fields = query.get("fields", ["standard"])[0]
        if method == "GET" and rest and rest[0] == "messages" and fields not in MESSAGE_FIELDS:
            return _error(
                400, "invalid_request_error", f"`fields` must be one of {', '.join(sorted(MESSAGE_FIELDS))}"
            )
        if method == "GET" and rest == ["messages"]:
            return self._list_messages(grant["id"], query, fields)
        if method == "GET" and len(rest) == 2 and rest[0] == "messages":
            with self._lock:
                stored = self._messages.get(rest[1])
                found = stored is not None and stored.message["grant_id"] == grant["id"]
                data = _select_fields(stored.message, fields) if found and stored is not None else None
            if data is None:
                return _error(404, "not_found_error", f"message {rest[1]!r} not found")
            return _ok({"request_id": _request_id(), "data": data})
        if method == "GET" and len(rest) == 2 and rest[0] == "threads":
            with self._lock:
                thread = self._threads.get(rest[1])
                view = self._thread_view(thread) if thread and thread.grant_id == grant["id"] else None
            if view is None:
                return _error(404, "not_found_error", f"thread {rest[1]!r} not found")
            return _ok({"request_id": _request_id(), "data": view})
        return _error(404, "not_found_error", f"no such endpoint: {method} {path}")

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        # compare_digest: no reason to teach anyone timing leaks, even in a test double.
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode(), self.api_key.encode()
        )

    def _list_messages(self, grant_id: str, query: Mapping[str, list[str]], fields: str) -> _Response:
        thread_id = query.get("thread_id", [None])[0]
        metadata_pair = query.get("metadata_pair", [None])[0]
        try:
            # received_after / received_before (Unix seconds): on the message's arrival in the mailbox.
            received_after = float(query.get("received_after", ["-inf"])[0])
            received_before = float(query.get("received_before", ["inf"])[0])
            limit = int(query.get("limit", [str(DEFAULT_LIST_LIMIT)])[0])
            offset = _decode_cursor(query["page_token"][0]) if "page_token" in query else 0
            indexed = _parse_metadata_pair(metadata_pair) if metadata_pair is not None else None
        except ValueError as exc:
            return _error(400, "invalid_request_error", f"invalid query parameter: {exc}")
        if not 1 <= limit <= MAX_LIST_LIMIT:
            return _error(400, "invalid_request_error", f"limit must be between 1 and {MAX_LIST_LIMIT}")
        if indexed is not None and thread_id is not None:
            # Nylas: "You can't create a query that includes both a provider and metadata filter".
            return _error(
                400,
                "invalid_request_error",
                "metadata_pair cannot be combined with a provider filter (thread_id)",
            )
        with self._lock:
            if indexed is not None:
                ids = self._metadata_index.get((grant_id, *indexed), [])
            elif thread_id is not None:
                thread = self._threads.get(thread_id)
                ids = thread.message_ids if thread is not None and thread.grant_id == grant_id else []
            else:
                ids = [i for i, s in self._messages.items() if s.message["grant_id"] == grant_id]
            if "received_after" in query or "received_before" in query:
                ids = [i for i in ids if received_after <= self._messages[i].arrived_at < received_before]
            total = len(ids)
            # Newest first by arrival: ``ids`` are in arrival order, so read them backwards.
            newest_first = ids[total - 1 - offset :: -1] if offset < total else []
            page = [_select_fields(self._messages[i].message, fields) for i in newest_first[:limit]]
        more = offset + limit < total
        next_cursor = _encode_cursor(offset + limit) if more else None
        return _ok({"request_id": _request_id(), "data": page, "next_cursor": next_cursor})

    def _send(
        self, grant: Json, path: str, headers: Mapping[str, str], body: bytes, pause: _Pause
    ) -> _Response:
        key = headers.get("idempotency-key")
        payload, parsed = _parse_json(body)
        response, replayed = self._answer_send(grant, path, key, body, (payload, parsed), pause)
        with self._lock:
            self._send_attempts.append(
                SendAttempt(grant["id"], key, response.status, replayed, payload if parsed else None)
            )
        return response

    def _answer_send(
        self,
        grant: Json,
        path: str,
        key: str | None,
        body: bytes,
        parsed_body: tuple[Any, bool],
        pause: _Pause,
    ) -> tuple[_Response, bool]:
        """The send's answer and whether it is a replay of a cached one."""
        grant_id = grant["id"]
        payload, parsed = parsed_body
        if key is not None and len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            return _error(
                400,
                "api.invalid_idempotency_key",
                f"Idempotency-Key must be at most {MAX_IDEMPOTENCY_KEY_LENGTH} characters",
            ), False
        record: _KeyRecord | None = None
        slot = (grant_id, key or "")  # keys are scoped per grant
        with self._lock:
            if key is not None:
                now = self.now()
                existing = self._keys.get(slot)
                if existing is None or now - existing.first_seen >= IDEMPOTENCY_TTL_SECONDS:
                    record = _KeyRecord(fingerprint=_fingerprint(body, payload, parsed), first_seen=now)
                    self._keys[slot] = record
                elif existing.fingerprint != _fingerprint(body, payload, parsed):
                    # Checked before "in flight": a different payload is a client bug either way,
                    # and retrying it with the same key can never succeed.
                    return _error(
                        409,
                        "api.invalid_idempotent_request",
                        "Idempotency-Key was already used with a different request payload",
                    ), False
                elif existing.response is None:
                    return _error(
                        409,
                        "api.concurrent_idempotent_request",
                        "A request with this Idempotency-Key is still being processed; retry with the "
                        "same key in a few seconds",
                    ), False
                else:
                    cached = existing.response
                    return _Response(
                        cached.status, cached.body, {**cached.headers, "Idempotent-Response": "true"}
                    ), True
            # A first request (or one without a key): only now may a provider error be spent on it.
            provider_fault = self._take_fault("POST", path, provider_error=True)
        try:
            self._send_started(grant_id, payload if parsed else None)
            pause()  # the key (if any) is in flight during an injected delay
            if provider_fault is not None:
                response, sent = _fault_response(provider_fault), None
            else:
                response, sent = self._perform_send(grant, key, payload, parsed)
        except BaseException:
            # Never leave a key stuck "in flight" because of an emulator failure.
            if record is not None:
                with self._lock:
                    if self._keys.get(slot) is record:
                        del self._keys[slot]
            raise
        if record is not None:
            with self._lock:
                record.response = response  # errors are cached too, as Nylas does
        if sent is not None:
            self._announce(sent, swallow=True)
        return response, False

    def _send_started(self, grant_id: str, payload: Any) -> None:
        callback = self.on_send_started
        if callback is None:
            return
        try:
            callback(grant_id, copy.deepcopy(payload))
        except Exception:
            # The send goes on: a test hook failing must not change what Nylas answers.
            _log.exception("on_send_started callback failed for grant %s", grant_id)

    def _perform_send(
        self, grant: Json, key: str | None, payload: Any, parsed: bool
    ) -> tuple[_Response, Json | None]:
        if not parsed or not isinstance(payload, dict):
            return _error(400, "invalid_request_error", "request body must be a JSON object"), None
        to = payload.get("to")
        if not to or not _valid_participants(to):
            return _error(400, "invalid_request_error", "`to` is required: a list of {name?, email}"), None
        for field_name in ("cc", "bcc", "reply_to"):
            value = payload.get(field_name)
            if value is not None and not _valid_participants(value):
                return _error(
                    400, "invalid_request_error", f"`{field_name}` must be a list of {{name?, email}}"
                ), None
        reply_to_id = payload.get("reply_to_message_id")
        if reply_to_id is not None and not isinstance(reply_to_id, str):
            return _error(400, "invalid_request_error", "`reply_to_message_id` must be a string"), None
        custom_headers = payload.get("custom_headers") or []
        if not isinstance(custom_headers, list) or not all(
            isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str)
            for h in custom_headers
        ):
            return _error(
                400, "invalid_request_error", "`custom_headers` must be a list of {name, value}"
            ), None
        metadata = payload.get("metadata") or {}
        problem = _metadata_problem(metadata)
        if problem is not None:
            return _error(400, "invalid_request_error", problem), None
        grant_id = grant["id"]
        with self._lock:
            parent: Json | None = None
            if reply_to_id is not None:
                stored = self._messages.get(reply_to_id)
                if stored is None or stored.message["grant_id"] != grant_id:
                    return _error(404, "not_found_error", f"message {reply_to_id!r} not found"), None
                parent = stored.message
                thread = self._threads[parent["thread_id"]]
            else:
                thread = self._new_thread(grant_id)
            message = _message(
                grant_id=grant_id,
                thread_id=thread.id,
                subject=str(payload.get("subject") or ""),
                sender={"name": grant["name"], "email": grant["email"]},
                to=_participants(to),
                cc=_participants(payload.get("cc") or []),
                bcc=_participants(payload.get("bcc") or []),
                reply_to=_participants(payload.get("reply_to") or []),
                date=int(self.now()),
                body=str(payload.get("body") or ""),
                folder="sent",
                headers=[{"name": h["name"], "value": h["value"]} for h in custom_headers],
                in_reply_to=reply_to_id,
                parent=parent,
                metadata=metadata,
            )
            self._store(message, thread)
            self._sends.append(SendRecord(grant_id, key, copy.deepcopy(payload), copy.deepcopy(message)))
            status = 202 if self.send_accepts_with_202 else 200
        data = {**copy.deepcopy(message), "reply_to_message_id": reply_to_id}
        if status == 202:
            # Agent Account queueing: "same message object as a 200 but no headers array".
            data.pop("headers", None)
        response = _json_response(status, {"request_id": _request_id(), "grant_id": grant_id, "data": data})
        return response, copy.deepcopy(message)

    # ---- control routes (local stack) --------------------------------------------------------------
    #
    # What a test does with method calls, a local stack (another process) does over HTTP. These are
    # not Nylas routes: no bearer auth (the server binds loopback only), not in ``requests``, no faults.

    _INBOUND_FIELDS = frozenset(
        {
            "grant_id",
            "grant_email",
            "from_email",
            "from_name",
            "subject",
            "body",
            "thread_id",
            "reply_to_message_id",
            "headers",
            "date",
            "reply_to",
            "to_email",
            "message_id",
        }
    )

    def _route_control(self, method: str, path: str, body: bytes) -> _Response:
        segments = [unquote(s) for s in path[len(CONTROL_PREFIX) :].rstrip("/").split("/")]
        if method == "POST" and segments == ["inbound"]:
            return self._control_inbound(body)
        if method == "GET" and len(segments) == 2 and segments[0] == "threads":
            with self._lock:
                thread = self._threads.get(segments[1])
                messages = (
                    [copy.deepcopy(self._messages[i].message) for i in thread.message_ids]
                    if thread is not None
                    else None
                )
            if messages is None:
                return _error(404, "not_found_error", f"thread {segments[1]!r} not found")
            return _ok({"data": messages})
        if method == "POST" and segments == ["clock"]:
            payload, parsed = _parse_json(body)
            seconds = payload.get("advance_seconds") if parsed and isinstance(payload, dict) else None
            if isinstance(seconds, bool) or not isinstance(seconds, int | float):
                return _error(
                    400, "invalid_request_error", 'body must be a JSON object {"advance_seconds": <number>}'
                )
            try:
                now = self.advance_clock(seconds)
            except ValueError as exc:
                return _error(400, "invalid_request_error", str(exc))
            return _ok({"data": {"now": now}})
        return _error(404, "not_found_error", f"no such control route: {method} {path}")

    def _control_inbound(self, body: bytes) -> _Response:
        payload, parsed = _parse_json(body)
        if not parsed or not isinstance(payload, dict):
            return _error(400, "invalid_request_error", "body must be a JSON object")
        problem = _inbound_problem(payload, self._INBOUND_FIELDS)
        if problem is not None:
            return _error(400, "invalid_request_error", problem)
        grant = payload.get("grant_id") or payload["grant_email"]
        try:
            message = self._receive(
                grant,
                from_email=payload["from_email"],
                from_name=payload.get("from_name") or "",
                subject=payload.get("subject") or "",
                body=payload.get("body") or "",
                reply_to=payload.get("reply_to"),
                thread_id=payload.get("thread_id"),
                reply_to_message_id=payload.get("reply_to_message_id"),
                headers=payload.get("headers"),
                date=payload.get("date"),
                to_email=payload.get("to_email"),
                message_id=payload.get("message_id"),
            )
        except KeyError as exc:
            return _error(404, "not_found_error", str(exc.args[0]))
        except ValueError as exc:
            return _error(400, "invalid_request_error", str(exc))
        try:
            self._announce(message, swallow=False)
        except Exception as exc:
            # The message is in the mailbox; say so, and that its notification did not go out.
            _log.exception("on_message_created callback failed for message %s", message["id"])
            return _json_response(
                502,
                {
                    "error": {
                        "type": "callback_error",
                        "message": f"message {message['id']} was stored, but on_message_created failed: "
                        f"{type(exc).__name__}: {exc}",
                    },
                    "data": message,
                },
            )
        return _json_response(201, {"data": message})

    # ---- webhook destinations ----------------------------------------------------------------------
    #
    # ``POST /v3/webhooks`` verifies the destination the way Nylas does before it answers: a GET of
    # ``webhook_url?challenge=<value>`` that must return 200 with exactly the value as the body (not
    # chunked) within 10 seconds; otherwise the create fails with 400 and no webhook exists. Only
    # loopback URLs are reached: the emulator must never contact anything outside this machine.

    def webhooks(self) -> list[Json]:
        """Every webhook destination, in creation order, *with* its ``webhook_secret``.

        The secret is absent from the API's GET answers, as in Nylas; tests read it here to sign
        notifications the way Nylas would, or to check what an operator command stored.
        """
        with self._lock:
            return [copy.deepcopy(w) for w in self._webhooks.values()]

    def webhook(self, webhook_id: str) -> Json:
        """One webhook destination with its secret; ``KeyError`` when unknown."""
        with self._lock:
            return copy.deepcopy(self._webhooks[webhook_id])

    @property
    def challenges(self) -> list[Json]:
        """Every challenge GET made, in order: ``{url, status, verified, error}`` (status 0: no answer)."""
        with self._lock:
            return [dict(c) for c in self._challenges]

    def _route_webhooks(self, method: str, rest: list[str], body: bytes) -> _Response:
        if method == "POST" and not rest:
            return self._create_webhook(body)
        if method == "GET" and len(rest) == 1:
            with self._lock:
                webhook = copy.deepcopy(self._webhooks.get(rest[0]))
            if webhook is None:
                return _error(404, "not_found_error", f"webhook {rest[0]!r} not found")
            webhook.pop("webhook_secret")  # Get and List never return the secret
            return _ok({"request_id": _request_id(), "data": webhook})
        if method == "DELETE" and len(rest) == 1:
            with self._lock:
                deleted = self._webhooks.pop(rest[0], None)
            if deleted is None:
                return _error(404, "not_found_error", f"webhook {rest[0]!r} not found")
            return _ok({"request_id": _request_id(), "data": {"status": "success"}})
        if method == "POST" and len(rest) == 2 and rest[0] == "rotate-secret":
            with self._lock:
                webhook = self._webhooks.get(rest[1])
                if webhook is not None:
                    # The previous secret stops being used at once: Nylas gives no overlap window.
                    webhook["webhook_secret"] = _new_webhook_secret()
                    webhook["updated_at"] = int(self.now())
                    webhook = copy.deepcopy(webhook)
            if webhook is None:
                return _error(404, "not_found_error", f"webhook {rest[1]!r} not found")
            return _ok({"request_id": _request_id(), "data": webhook})
        return _error(404, "not_found_error", f"no such endpoint: {method} /v3/webhooks/{'/'.join(rest)}")

    def _create_webhook(self, body: bytes) -> _Response:
        payload, parsed = _parse_json(body)
        if not parsed or not isinstance(payload, dict):
            return _error(400, "invalid_request_error", "request body must be a JSON object")
        triggers = payload.get("trigger_types")
        if not triggers or not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
            return _error(400, "invalid_request_error", "`trigger_types` must be a non-empty list of strings")
        url = payload.get("webhook_url")
        if (
            not isinstance(url, str)
            or urlsplit(url).scheme not in ("http", "https")
            or not urlsplit(url).netloc
        ):
            return _error(400, "invalid_request_error", "`webhook_url` must be an http(s) URL")
        emails = payload.get("notification_email_addresses") or []
        if not isinstance(emails, list) or not all(isinstance(e, str) for e in emails):
            return _error(
                400, "invalid_request_error", "`notification_email_addresses` must be a list of strings"
            )
        failure = self._verify_webhook_url(url)  # outside the lock: the endpoint may be slow
        if failure is not None:
            return _error(400, WEBHOOK_VERIFICATION_ERROR_TYPE, f"unable.verify.webhook_url : {failure}")
        now = int(self.now())
        webhook: Json = {
            "id": str(uuid.uuid4()),
            "description": str(payload.get("description") or ""),
            "trigger_types": list(triggers),
            "webhook_url": url,
            "webhook_secret": _new_webhook_secret(),
            "status": "active",
            "notification_email_addresses": list(emails),
            "status_updated_at": now,
            "created_at": now,
            "updated_at": now,
        }
        with self._lock:
            self._webhooks[webhook["id"]] = webhook
            created = copy.deepcopy(webhook)
        return _ok({"request_id": _request_id(), "data": created})

    def _verify_webhook_url(self, url: str) -> str | None:
        """GET ``url?challenge=X`` like Nylas; ``None`` when verified, else why not (Nylas' wording)."""
        challenge = str(uuid.uuid4())
        split = urlsplit(url)
        query = f"{split.query}&challenge={challenge}" if split.query else f"challenge={challenge}"
        target = urlunsplit(split._replace(query=query))
        status, failure = 0, None
        if (split.hostname or "") not in _LOOPBACK_HOSTS:
            failure = "the emulator only reaches loopback addresses"
        else:
            started = time.monotonic()
            try:
                with _CHALLENGE_OPENER.open(
                    # http(s) only (checked on create) and loopback only (checked above).
                    Request(target, method="GET"),  # noqa: S310
                    timeout=self.challenge_timeout_seconds,
                ) as response:
                    status = response.status
                    chunked = response.headers.get("Transfer-Encoding", "").lower() == "chunked"
                    answer = response.read()
            except HTTPError as exc:  # any status but 2xx, redirects included (they are not followed)
                status = exc.code
                exc.close()
                failure = f"status is not ok, got {status}"
            except (URLError, OSError) as exc:
                failure = f"request failed: {getattr(exc, 'reason', exc)}"
            else:
                if time.monotonic() - started > self.challenge_timeout_seconds:
                    failure = f"no answer within {self.challenge_timeout_seconds:g} seconds"
                elif status != 200:
                    failure = f"status is not ok, got {status}"
                elif chunked:
                    failure = "chunked transfer encoding is not supported"
                elif answer != challenge.encode():
                    failure = "challenge response does not match"
        with self._lock:
            self._challenges.append(
                {"url": target, "status": status, "verified": failure is None, "error": failure}
            )
        return failure


# --------------------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------------------


class _Server(LoopbackHTTPServer):
    def __init__(self, address: tuple[str, int], emulator: NylasEmulator) -> None:
        self.emulator = emulator
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection. A lost response then cleanly looks like "server closed
    # the connection without a response", and stop() leaves no keep-alive connection still served.
    protocol_version = "HTTP/1.0"
    server: _Server

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        response = self.server.emulator._handle(self.command, self.path, headers, body)
        self.close_connection = True
        if response is None:
            return  # lost response: the server closes the socket without a single byte
        try:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its own timeout); nothing left to tell it

    def date_time_string(self, timestamp: float | None = None) -> str:
        # ``send_response`` adds the ``Date`` header from this: Nylas' time is the emulator clock,
        # never this machine's, so a product reading it sees skew and advance_clock() jumps.
        return formatdate(self.server.emulator.now(), usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("%s - %s", self.address_string(), format % args)


# --------------------------------------------------------------------------------------------------
# Small pure helpers
# --------------------------------------------------------------------------------------------------


def _request_id() -> str:
    return str(uuid.uuid4())


def _new_webhook_secret() -> str:
    return secrets.token_hex(32)


class _NoRedirect(HTTPRedirectHandler):
    # A challenge answered with a redirect is a failed challenge, not a second request elsewhere.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# No proxy from the environment either: the challenge must go to the loopback URL itself.
_CHALLENGE_OPENER = build_opener(ProxyHandler({}), _NoRedirect())
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _json_response(status: int, obj: Any, headers: Mapping[str, str] | None = None) -> _Response:
    return _Response(
        status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})}
    )


def _ok(obj: Json) -> _Response:
    return _json_response(200, obj)


def _error(status: int, error_type: str, message: str) -> _Response:
    return _json_response(
        status, {"request_id": _request_id(), "error": {"type": error_type, "message": message}}
    )


def _fault_response(fault: Fault) -> _Response:
    headers = {"Content-Type": "application/json", **fault.headers}
    if fault.body is None:
        default = _error(
            fault.status_code, _FAULT_ERROR_TYPES.get(fault.status_code, "api_error"), "injected fault"
        )
        return _Response(fault.status_code, default.body, headers)
    if isinstance(fault.body, bytes):
        return _Response(fault.status_code, fault.body, headers)
    if isinstance(fault.body, str):
        return _Response(fault.status_code, fault.body.encode(), headers)
    if fault.kind == "provider_error":  # a Nylas answer: it has a request id like every other
        return _Response(
            fault.status_code, json.dumps({"request_id": _request_id(), **fault.body}).encode(), headers
        )
    return _Response(fault.status_code, json.dumps(dict(fault.body)).encode(), headers)


def _select_fields(message: Json, fields: str) -> Json:
    """A copy of ``message`` as a read with ``fields=`` returns it: ``headers`` only when asked."""
    selected = copy.deepcopy(message)
    headers = selected.pop("headers", [])
    if fields == "include_headers":
        selected["headers"] = headers
    elif fields == "include_basic_headers":
        selected["headers"] = [h for h in headers if h["name"].lower() in BASIC_HEADER_NAMES]
    return selected


def _parse_json(body: bytes) -> tuple[Any, bool]:
    try:
        return json.loads(body), True
    except ValueError:
        return None, False


def _fingerprint(raw: bytes, payload: Any, parsed: bool) -> str:
    # "Same payload" is judged on the JSON value, not the bytes: key order and whitespace from a
    # different serializer do not make a different request.
    data = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode() if parsed else raw
    return hashlib.sha256(data).hexdigest()


def _valid_participants(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(p, dict) and isinstance(p.get("email"), str) for p in value
    )


def _participants(value: list[Json]) -> list[Json]:
    return [{"name": str(p.get("name") or ""), "email": p["email"]} for p in value]


def _inbound_problem(payload: Json, known: frozenset[str]) -> str | None:
    """What is wrong with a ``POST /_emulator/inbound`` body, or ``None``."""
    unknown = sorted(set(payload) - known)
    if unknown:
        return f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
    grant = payload.get("grant_id") or payload.get("grant_email")
    if not isinstance(grant, str) or not grant:
        return "`grant_id` (a grant id or its email address) or `grant_email` is required"
    if not isinstance(payload.get("from_email"), str) or not payload["from_email"]:
        return "`from_email` is required: the sender's address"
    for name in (
        "from_name",
        "subject",
        "body",
        "thread_id",
        "reply_to_message_id",
        "to_email",
        "message_id",
    ):
        if payload.get(name) is not None and not isinstance(payload[name], str):
            return f"`{name}` must be a string"
    date = payload.get("date")
    if date is not None and (isinstance(date, bool) or not isinstance(date, int | float)):
        return "`date` must be Unix seconds (a number)"
    headers = payload.get("headers")
    if headers is not None and not (
        (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values()))
        or (
            isinstance(headers, list)
            and all(
                isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str)
                for h in headers
            )
        )
    ):
        return "`headers` must be a list of {name, value} or an object of name: value strings"
    reply_to = payload.get("reply_to")
    if reply_to is not None and not _valid_participants(reply_to):
        return "`reply_to` must be a list of {name?, email}"
    return None


def _parse_metadata_pair(value: str) -> tuple[str, str]:
    key, sep, wanted = value.partition(":")
    if not sep:
        raise ValueError("metadata_pair must look like key1:<value>")
    if key not in INDEXED_METADATA_KEYS:
        raise ValueError(
            f"metadata_pair can only filter on the indexed keys {', '.join(INDEXED_METADATA_KEYS)}"
        )
    return key, wanted


def _metadata_problem(value: Any) -> str | None:
    """Why ``value`` is not valid message metadata (Nylas' limits), or ``None`` when it is."""
    if not isinstance(value, dict):
        return "`metadata` must be an object of string keys to string values"
    if len(value) > MAX_METADATA_PAIRS:
        return f"`metadata` can hold at most {MAX_METADATA_PAIRS} pairs"
    for key, item in value.items():
        if not isinstance(item, str):
            return f"`metadata` value of {key!r} must be a string"
        if not key or len(key) > MAX_METADATA_KEY_LENGTH:
            return f"`metadata` keys must be 1 to {MAX_METADATA_KEY_LENGTH} characters"
        if len(item) > MAX_METADATA_VALUE_LENGTH:
            return f"`metadata` values must be at most {MAX_METADATA_VALUE_LENGTH} characters"
    return None


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode()


def _decode_cursor(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("page_token is not a cursor from this server") from exc
    if not text.startswith(_CURSOR_PREFIX) or not text[len(_CURSOR_PREFIX) :].isdigit():
        raise ValueError("page_token is not a cursor from this server")
    return int(text[len(_CURSOR_PREFIX) :])


def _message(
    *,
    grant_id: str,
    thread_id: str,
    subject: str,
    sender: Json,
    to: list[Json],
    cc: list[Json],
    bcc: list[Json],
    reply_to: list[Json],
    date: int,
    body: str,
    folder: Literal["inbox", "sent"],
    headers: list[Json],
    in_reply_to: str | None,
    message_id: str | None = None,
    parent: Json | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Json:
    message_id = message_id or f"msg-{uuid.uuid4().hex}"
    message: Json = {
        "id": message_id,
        "grant_id": grant_id,
        "object": "message",
        "thread_id": thread_id,
        "subject": subject,
        "from": [sender],
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "reply_to": reply_to,
        "date": date,
        "body": body,
        "snippet": " ".join(_TAG_RE.sub(" ", body).split())[:100],
        "starred": False,
        "unread": folder == "inbox",
        "folders": [folder],
        "attachments": [],
        "metadata": dict(metadata or {}),
        "headers": _with_threading_headers(headers, message_id, parent),
    }
    if in_reply_to is not None:
        message["in_reply_to"] = in_reply_to
    return message


def _header(headers: Sequence[Mapping[str, str]], name: str) -> str | None:
    name = name.lower()
    return next((h["value"] for h in headers if h["name"].lower() == name), None)


def _with_threading_headers(headers: list[Json], message_id: str, parent: Json | None) -> list[Json]:
    """``headers`` plus the ``Message-ID`` / ``In-Reply-To`` / ``References`` a mail would carry.

    Headers the caller gave win; the rest are derived, so ``fields=include_basic_headers`` always
    has something to return and a reply points at its parent like a real one.
    """
    added: list[Json] = []
    if _header(headers, "Message-ID") is None:
        # An IMAP-style id *is* the Message-ID; any other id gets a synthetic one.
        own = message_id if message_id.startswith("<") else f"<{message_id}@{SYNTHETIC_MESSAGE_ID_DOMAIN}>"
        added.append({"name": "Message-ID", "value": own})
    if parent is not None:
        parent_id = _header(parent["headers"], "Message-ID")
        if parent_id is not None and _header(headers, "In-Reply-To") is None:
            added.append({"name": "In-Reply-To", "value": parent_id})
        if parent_id is not None and _header(headers, "References") is None:
            earlier = _header(parent["headers"], "References")
            added.append({"name": "References", "value": f"{earlier} {parent_id}" if earlier else parent_id})
    return [*added, *headers]
