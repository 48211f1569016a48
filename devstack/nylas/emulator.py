"""``NylasEmulator``: the resources put together behind one loopback server, and what tests read.

The class routes each request to its resource module (messages, send, webhooks, control), owns the
clock and the callbacks that stand for webhooks, and exposes the test-facing counters. Everything a
resource answers is in its own module, with its Nylas source.
"""

from __future__ import annotations

import copy
import hmac
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import parse_qs, unquote, urlsplit

from devstack.nylas.control import CONTROL_PREFIX, Control
from devstack.nylas.faults import Fault, FaultQueue, Pause, fault_response
from devstack.nylas.mailbox import Mailbox, select_fields
from devstack.nylas.messages import Messages
from devstack.nylas.send import Send, SendAttempt, SendRecord, SendStartedCallback
from devstack.nylas.server import Server
from devstack.nylas.webhooks import Webhooks
from devstack.nylas.wire import Json, Request, Response, error, ok

_log = logging.getLogger(__name__)

MessageCallback = Callable[[Json], None]


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
    challenge_timeout_seconds : float
        How long ``POST /v3/webhooks`` waits for the challenge answer (wiring, like the callbacks).

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
        self.on_message_created: MessageCallback | None = None
        self.webhook_includes_headers = False
        self._clock_offset = 0.0
        self._port = port
        self._server: Server | None = None
        self._mailbox = Mailbox(self.now)
        self._lock = self._mailbox.lock
        self._faults = FaultQueue()
        self._requests: list[tuple[str, str]] = []
        self._messages = Messages(self._mailbox)
        self._send = Send(self._mailbox, self._faults, lambda m: self._announce(m, swallow=True))
        self._webhooks = Webhooks(self._lock, self.now)
        self._control = Control(self._mailbox, lambda m: self._announce(m, swallow=False), self.advance_clock)

    # ---- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> NylasEmulator:
        """Bind the socket and serve in a background thread; returns ``self`` for chaining."""
        if self._server is not None:
            raise RuntimeError("emulator already started")
        self._server = Server(("127.0.0.1", self._port), self._handle, self.now)
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

    # ---- wiring kept by reset() --------------------------------------------------------------------

    @property
    def on_send_started(self) -> SendStartedCallback | None:
        return self._send.on_send_started

    @on_send_started.setter
    def on_send_started(self, callback: SendStartedCallback | None) -> None:
        self._send.on_send_started = callback

    @property
    def challenge_timeout_seconds(self) -> float:
        return self._webhooks.challenge_timeout_seconds

    @challenge_timeout_seconds.setter
    def challenge_timeout_seconds(self, seconds: float) -> None:
        self._webhooks.challenge_timeout_seconds = seconds

    @property
    def send_accepts_with_202(self) -> bool:
        """When true, successful sends answer ``202`` (Agent Account send queueing) with the same body
        minus the message ``headers`` array, as the changelog describes."""
        return self._send.accepts_with_202

    @send_accepts_with_202.setter
    def send_accepts_with_202(self, value: bool) -> None:
        self._send.accepts_with_202 = value

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
        return self._mailbox.add_grant(grant_id, email, name)

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
        message = self._mailbox.receive(
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

    def inject(self, method: str, path_regex: str, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests matching ``method`` and ``path_regex``.

        The regex is searched (``re.search``) in the request path as received -- percent-encoded,
        without the query string -- so anchor it (``/messages/send$``) when it matters. Faults are
        consulted in injection order and the first one that matches is used.
        """
        with self._lock:
            self._faults.inject(method, path_regex, fault, times)

    def reset(self) -> None:
        """Forget grants, messages, threads, counters, faults, idempotency keys and the clock offset.

        ``send_accepts_with_202`` and ``webhook_includes_headers`` go back to ``False``;
        ``on_message_created`` and ``on_send_started`` are wiring installed by whoever started the
        emulator (e.g. the local stack) and are kept.
        """
        with self._lock:
            self._mailbox.clear()
            self._send.clear()
            self._webhooks.clear()
            self._faults.clear()
            self._requests = []
            self._clock_offset = 0.0
            self.send_accepts_with_202 = False
            self.webhook_includes_headers = False

    # ---- test-facing counters ----------------------------------------------------------------------

    @property
    def sends(self) -> list[SendRecord]:
        """Every send that put an email on the wire, in order (replays and rejections excluded)."""
        return self._send.records()

    @property
    def send_attempts(self) -> list[SendAttempt]:
        """Every request that reached the send endpoint, in order: sends, replays, 409s, errors."""
        return self._send.attempt_records()

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
        return self._send.sent_messages(grant_id, thread_id)

    def mailbox(self, grant_id: str | None = None) -> list[tuple[float, Json]]:
        """Every message (inbound and sent) with the real time it appeared, in arrival order."""
        return self._mailbox.arrivals(grant_id)

    def webhooks(self) -> list[Json]:
        """Every webhook destination, in creation order, *with* its ``webhook_secret``.

        The secret is absent from the API's GET answers, as in Nylas; tests read it here to sign
        notifications the way Nylas would, or to check what an operator command stored.
        """
        with self._lock:
            return [copy.deepcopy(w) for w in self._webhooks.destinations.values()]

    def webhook(self, webhook_id: str) -> Json:
        """One webhook destination with its secret; ``KeyError`` when unknown."""
        with self._lock:
            return copy.deepcopy(self._webhooks.destinations[webhook_id])

    @property
    def challenges(self) -> list[Json]:
        """Every challenge GET made, in order: ``{url, status, verified, error}`` (status 0: no answer)."""
        with self._lock:
            return [dict(c) for c in self._webhooks.challenges]

    # ---- notifications -----------------------------------------------------------------------------

    def _announce(self, message: Json, *, swallow: bool) -> None:
        callback = self.on_message_created
        if callback is None:
            return
        # A webhook without field customization carries no headers: a product that filters on them
        # must read the message (fields=include_headers), and is caught here if it does not. Always
        # a copy: what the callback does to it never reaches the mailbox or the caller.
        message = select_fields(message, "include_headers" if self.webhook_includes_headers else "standard")
        try:
            callback(message)
        except Exception:
            if not swallow:
                raise
            _log.exception("on_message_created callback failed for message %s", message.get("id"))

    # ---- HTTP handling -----------------------------------------------------------------------------

    def _handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response | None:
        """Answer one request; ``None`` means "close the connection without answering"."""
        split = urlsplit(target)
        path = split.path
        if path.startswith(CONTROL_PREFIX):
            # Not Nylas: not counted, never faulted.
            segments = [unquote(s) for s in path[len(CONTROL_PREFIX) :].rstrip("/").split("/")]
            return _guarded(method, path, lambda: self._control.route(method, segments, body))
        with self._lock:
            self._requests.append((method, path))
            fault = self._faults.take(method, path)
        if fault is not None and fault.kind == "status":
            return fault_response(fault)
        pause = Pause(fault.seconds if fault is not None and fault.kind == "delay" else 0.0)
        request = Request(
            method=method,
            path=path,
            segments=[unquote(s) for s in path.rstrip("/").split("/")[1:]],
            query=parse_qs(split.query),
            headers=headers,
            body=body,
        )
        response = _guarded(method, path, lambda: self._route(request, pause))
        pause()
        if fault is not None and fault.kind == "lose_response":
            return None
        return response

    def _route(self, request: Request, pause: Pause) -> Response:
        segments = request.segments
        is_send = request.method == "POST" and len(segments) == 5 and segments[3:] == ["messages", "send"]
        if not is_send:
            pause()
        if not self._authorized(request.headers.get("authorization", "")):
            return error(401, "unauthorized", "Unauthorized: missing or invalid API key")
        unknown = error(404, "not_found_error", f"no such endpoint: {request.method} {request.path}")
        if segments[:2] == ["v3", "webhooks"]:
            return self._webhooks.route(request.method, segments[2:], request.body) or unknown
        if len(segments) < 3 or segments[:2] != ["v3", "grants"]:
            return unknown
        grant = self._mailbox.find_grant(segments[2])
        if grant is None:
            return error(404, "not_found_error", f"grant {segments[2]!r} not found")
        rest = segments[3:]
        if request.method == "GET" and not rest:
            return ok(grant)
        if is_send:
            return self._send.send(grant, request.path, request.headers, request.body, pause)
        return self._messages.route(request, grant, rest) or unknown

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        # compare_digest: no reason to teach anyone timing leaks, even in a test double.
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode(), self.api_key.encode()
        )


def _guarded(method: str, path: str, route: Callable[[], Response]) -> Response:
    try:
        return route()
    except Exception:
        # An emulator bug must be loud in the test log, but must not kill the server thread.
        _log.exception("nylas emulator failed on %s %s", method, path)
        return error(500, "api_error", "internal emulator error")
