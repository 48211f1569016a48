"""API Gateway stand-in: HTTP on loopback → REST API proxy event → the webhook handler.

As the template configures the REST API: every body reaches the function as
base64 of the exact bytes (binary media type ``*/*``), headers and query
string as in a proxy event, and the function's status, headers and body go
back with a Content-Length (never chunked). A function that raises is
answered 502 and one that outlives its timeout 504, as the proxy
integration does.

One addition API Gateway does not have: ``/_local/...`` is answered by the
local stack's control routes when they are installed (``control``, see
``devstack/control.py``), so ``make mail`` needs nothing but the webhook's port.
"""

import base64
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from devstack.containers import Handler
from devstack.events import STAGE, WEBHOOK_PATH, proxy_event
from devstack.lambda_context import LocalLambdaContext
from devstack.loopback import LoopbackHTTPServer

ControlRoutes = Callable[[str, str, bytes], tuple[int, dict[str, Any]]]
CONTROL_PATH = "/_local/"


class ApiGatewayStandIn:
    """Serves ``/{stage}/webhook`` on ``127.0.0.1``.

    Parameters
    ----------
    handler:
        The webhook function's handler.
    timeout_seconds:
        The function's timeout (its Lambda context deadline).
    port:
        0 picks a free port.
    """

    def __init__(self, handler: Handler, *, timeout_seconds: float = 8.0, port: int = 0) -> None:
        self._handler = handler
        self._timeout = timeout_seconds
        self.control: ControlRoutes | None = None
        self._invocations: set[threading.Thread] = set()
        self._invocations_lock = threading.Lock()
        # What the function raised, one line each: API Gateway answers 502 for it, which Nylas retries,
        # but a raise is a defect of ours, never an answer (a harness counts them against invariant 6).
        self.function_errors: list[str] = []
        stand_in = self

        class _Request(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                stand_in._serve(self)

            do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = LoopbackHTTPServer(("127.0.0.1", port), _Request)

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/{STAGE}{WEBHOOK_PATH}"

    def replace_handler(self, handler: Handler) -> None:
        """Invoke ``handler`` from the next request on (a new container)."""
        self._handler = handler

    def start(self) -> "ApiGatewayStandIn":
        self._server.start_serving("api-gateway")
        return self

    def stop(self) -> None:
        """Stop accepting requests, then let the invocations under way finish (up to the timeout).

        Why wait: the stack stops the embedded AWS and its log collection next; an invocation still
        running would fail against the one and write past the other, onto the terminal.
        """
        self._server.stop_serving()
        with self._invocations_lock:
            running = list(self._invocations)
        for invocation in running:
            invocation.join(self._timeout)

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        target = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        if self.control is not None and target.path.startswith(CONTROL_PATH):
            status, answer = self.control(request.command, target.path, body)
            self._respond(request, status, {"Content-Type": "application/json"}, json.dumps(answer).encode())
            return
        if target.path != f"/{STAGE}{WEBHOOK_PATH}":
            self._respond(
                request,
                403,
                {"Content-Type": "application/json"},
                b'{"message":"Missing Authentication Token"}',
            )
            return
        event = proxy_event(
            request.command,
            body=body if length else None,
            headers={name: value for name, value in request.headers.items()},
            query=dict(parse_qsl(target.query, keep_blank_values=True)) or None,
            base64_encoded=bool(length),
        )
        outcome: dict[str, Any] = {}

        def invoke() -> None:
            try:
                context = LocalLambdaContext("WebhookFunction", timeout_seconds=self._timeout)
                outcome["response"] = self._handler(event, context)
            except Exception as exc:
                outcome["error"] = exc
                with self._invocations_lock:
                    self.function_errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                with self._invocations_lock:
                    self._invocations.discard(threading.current_thread())

        worker = threading.Thread(target=invoke, daemon=True)
        with self._invocations_lock:
            self._invocations.add(worker)
        worker.start()
        worker.join(self._timeout)
        json_type = {"Content-Type": "application/json"}
        if worker.is_alive():
            # The function outlived its timeout: Lambda stops it and the integration answers 504.
            self._respond(request, 504, json_type, b'{"message": "Endpoint request timed out"}')
            return
        if "error" in outcome:
            self._respond(request, 502, json_type, b'{"message": "Internal server error"}')
            return
        response = outcome["response"]
        raw = response.get("body") or ""
        payload = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
        self._respond(request, int(response["statusCode"]), response.get("headers") or {}, payload)

    @staticmethod
    def _respond(request: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
        request.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "transfer-encoding"):
                request.send_header(name, value)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)
