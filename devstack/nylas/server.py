"""The HTTP server the emulator answers on: loopback, one request per connection, Nylas' clock.

Standard library only (``http.server``), so the emulator runs wherever the tests run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from typing import Any

from devstack.loopback import LoopbackHTTPServer
from devstack.nylas.wire import Response

_log = logging.getLogger(__name__)

Handle = Callable[[str, str, Mapping[str, str], bytes], Response | None]
"""``handle(method, target, headers, body)``: the answer, or ``None`` to close without one."""


class Server(LoopbackHTTPServer):
    """A loopback server whose every request is answered by ``handle``; ``now`` dates the answers."""

    def __init__(self, address: tuple[str, int], handle: Handle, now: Callable[[], float]) -> None:
        self.answer = handle
        self.now = now
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection. A lost response then cleanly looks like "server closed
    # the connection without a response", and stop() leaves no keep-alive connection still served.
    protocol_version = "HTTP/1.0"
    server: Server

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        response = self.server.answer(self.command, self.path, headers, body)
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
        return formatdate(self.server.now(), usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("%s - %s", self.address_string(), format % args)
