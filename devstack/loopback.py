"""The HTTP server under every local stand-in (API Gateway, Nylas emulator, fault proxies)."""

import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server for loopback stand-ins, served from a background thread.

    Set as class attributes because ``request_queue_size`` is read by
    ``listen()`` inside ``__init__``: assigning it after construction does
    nothing.
    """

    daemon_threads = True  # a request stuck in an injected delay must not block interpreter exit
    # The default backlog of 5 drops connections when a burst of concurrent clients arrives;
    # they then stall for a 1 s SYN retransmit and concurrency runs become slow and misleading.
    request_queue_size = 256

    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, the bound address."""
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start_serving(self, name: str) -> None:
        """Serve in a daemon thread named ``name`` (shown in thread dumps)."""
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
        )
        self._thread.start()

    def stop_serving(self) -> None:
        """Stop the serving thread and close the socket."""
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client going away mid-request is what a killed worker or a timed-out caller does;
        # the caller's side records it. Anything else is a bug in the stand-in: print it.
        if isinstance(sys.exception(), ConnectionError):
            return
        super().handle_error(request, client_address)
