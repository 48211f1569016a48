"""A fault-injecting HTTP proxy in front of the embedded AWS or the Nylas emulator.

Why a proxy: faults are injected on the wire, where real ones happen, with no
hook in the code under test. The handlers reach it through the same settings
as in Lambda (``AWS_ENDPOINT_URL``, ``NYLAS_API_URI``). A rule can answer an
error instead of forwarding, delay, lose the response after forwarding, or
kill (or pause) the worker process that sent the request — identified by the
``app/<id>`` part of its AWS User-Agent (``AWS_SDK_UA_APP_ID``).
"""

import contextlib
import email.utils
import http.client
import json
import os
import random
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from devstack.loopback import LoopbackHTTPServer

_APP_ID = re.compile(r"app/chaos-worker-(\d+)")
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass(frozen=True)
class Request:
    """What a rule can match on."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def target(self) -> str:
        """The AWS JSON-protocol operation, e.g. ``DynamoDB_20120810.PutItem``."""
        return self.headers.get("x-amz-target", "")

    @property
    def operation(self) -> str:
        return self.target.rsplit(".", 1)[-1]

    @property
    def worker_pid(self) -> int | None:
        match = _APP_ID.search(self.headers.get("user-agent", ""))
        return int(match.group(1)) if match else None

    @property
    def json(self) -> dict[str, Any]:
        try:
            value = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class Rule:
    """When ``match`` holds, with ``probability``, do ``action``.

    Actions: ``error`` (answer ``status``/``body`` without forwarding),
    ``delay`` (sleep ``seconds`` then forward; ``seconds`` may be a function of the request, for a
    latency drawn per request: ``bench.latency``), ``lose`` (forward, then drop
    the connection: the work happened, the answer is lost), ``kill_before`` /
    ``kill_after`` (SIGKILL the sending worker before or after forwarding),
    ``pause`` (SIGSTOP the worker for ``seconds`` after forwarding).
    """

    kind: str
    match: Callable[[Request], bool]
    action: str
    probability: float = 1.0
    status: int = 500
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float | Callable[[Request], float] = 0.0
    active: Callable[[], bool] = lambda: True
    # Fire on the first match whatever the probability: a short run still sees every fault once.
    at_least_once: bool = False
    fired: int = 0

    def seconds_for(self, request: Request) -> float:
        """How long ``delay`` sleeps (or ``pause`` stops) for this request."""
        return self.seconds(request) if callable(self.seconds) else self.seconds


class FaultProxy:
    """Forwards to ``upstream`` on ``127.0.0.1``, applying the first rule that fires."""

    def __init__(
        self, upstream: str, *, rng: random.Random, port: int = 0, clock: Callable[[], float] = time.time
    ) -> None:
        # ``clock``: the upstream's, for the Date of the answers the proxy makes up itself (an injected
        # error is the upstream's answer as far as the client can tell: Nylas' errors carry its Date).
        self._clock = clock
        parts = urlsplit(upstream)
        self._upstream_host = parts.hostname or "127.0.0.1"
        self._upstream_port = parts.port or 80
        self._rng = rng
        self.rules: list[Rule] = []
        # Wire tap: called with (request, status or None when no answer reached the client, response
        # headers, started, finished) for every request, faulted or not.
        self.observer: Callable[[Request, int | None, dict[str, str], float, float], None] | None = None
        self.injected: Counter[str] = Counter()
        self.requests = 0
        self._lock = threading.Lock()
        self._connections = threading.local()
        proxy = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _any

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = LoopbackHTTPServer(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return self._server.base_url

    def start(self) -> "FaultProxy":
        self._server.start_serving("fault-proxy")
        return self

    def stop(self) -> None:
        self._server.stop_serving()

    def _roll(self, probability: float) -> bool:
        return self._rng.random() < probability

    def _fire(self, request: Request) -> Rule | None:
        for rule in self.rules:
            if not (rule.active() and rule.match(request)):
                continue
            if rule.action.startswith(("kill", "pause")) and request.worker_pid is None:
                continue
            with self._lock:
                forced = rule.at_least_once and rule.fired == 0
                if forced or self._roll(rule.probability):
                    rule.fired += 1
                    self.injected[rule.kind] += 1
                    return rule
        return None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.time()
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        request = Request(
            handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body
        )
        with self._lock:
            self.requests += 1
        status, headers = self._serve(handler, request)
        if self.observer is not None:
            self.observer(request, status, headers, started, time.time())

    def _serve(self, handler: BaseHTTPRequestHandler, request: Request) -> tuple[int | None, dict[str, str]]:
        """Apply the first rule that fires; return what the client got (None: no answer)."""
        rule = self._fire(request)
        if rule is not None and rule.action == "error":
            headers = {"Date": email.utils.formatdate(self._clock(), usegmt=True), **rule.headers}
            self._answer(handler, rule.status, headers, rule.body)
            return rule.status, rule.headers
        if rule is not None and rule.action == "kill_before":
            os.kill(request.worker_pid, signal.SIGKILL)  # type: ignore[arg-type]
            handler.close_connection = True
            return None, {}
        if rule is not None and rule.action == "delay":
            time.sleep(rule.seconds_for(request))
        try:
            status, headers, payload = self._forward(request)
        except OSError:
            self._answer(
                handler,
                502,
                {"Date": email.utils.formatdate(self._clock(), usegmt=True)},
                b"upstream unavailable",
            )
            return 502, {}
        if rule is not None and rule.action == "kill_after":
            # The worker may have ended meanwhile (its own deadline): then it is dead already.
            with contextlib.suppress(ProcessLookupError):
                os.kill(request.worker_pid, signal.SIGKILL)  # type: ignore[arg-type]
            handler.close_connection = True
            return None, headers
        if rule is not None and rule.action == "lose":
            handler.close_connection = True
            return None, headers
        if rule is not None and rule.action == "pause":
            pid = request.worker_pid
            try:
                os.kill(pid, signal.SIGSTOP)  # type: ignore[arg-type]
            except ProcessLookupError:
                pass  # the worker ended between its request and this answer: nobody to pause
            else:
                threading.Timer(rule.seconds_for(request), lambda: _continue(pid)).start()
        self._answer(handler, status, headers, payload)
        return status, headers

    def _forward(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        """Send upstream on this thread's kept-alive connection (one retry on a stale one)."""
        headers = {k: v for k, v in request.headers.items() if k not in _HOP_BY_HOP}
        headers["Host"] = f"{self._upstream_host}:{self._upstream_port}"
        for attempt in (1, 2):
            connection = getattr(self._connections, "connection", None)
            if connection is None:
                connection = http.client.HTTPConnection(self._upstream_host, self._upstream_port, timeout=60)
                self._connections.connection = connection
            try:
                connection.request(request.method, request.path, body=request.body or None, headers=headers)
                response = connection.getresponse()
                payload = response.read()
            except (http.client.HTTPException, OSError):
                connection.close()
                self._connections.connection = None
                if attempt == 2:
                    raise
                continue
            if response.will_close:
                connection.close()
                self._connections.connection = None
            kept = {k: v for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP}
            return response.status, kept, payload
        raise AssertionError("unreachable")

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
        try:
            # Not send_response: it adds the proxy's own Server and Date, and a second Date (the real
            # clock) before upstream's hides Nylas' clock from the product (its Date, which moves with
            # advance_clock, times the loop guard and the key's hour). The upstream's are passed on.
            handler.send_response_only(status)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            handler.close_connection = True


def _continue(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        return


def aws_error(kind: str) -> tuple[int, bytes]:
    """Status and JSON body of an AWS error botocore understands (JSON protocols)."""
    errors = {
        "dynamodb_throttle": (400, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"),
        "dynamodb_error": (500, "com.amazonaws.dynamodb.v20120810#InternalServerError"),
        "sqs_error": (500, "com.amazonaws.sqs#InternalError"),
        "secrets_error": (500, "InternalServiceError"),
    }
    status, error_type = errors[kind]
    return status, json.dumps({"__type": error_type, "message": f"injected {kind}"}).encode()
