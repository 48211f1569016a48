"""The HTTP server under every local stand-in (API Gateway, Nylas emulator, fault proxies)."""

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server for loopback stand-ins.

    Set as class attributes because ``request_queue_size`` is read by
    ``listen()`` inside ``__init__``: assigning it after construction does
    nothing.
    """

    daemon_threads = True  # a request stuck in an injected delay must not block interpreter exit
    # The default backlog of 5 drops connections when a burst of concurrent clients arrives;
    # they then stall for a 1 s SYN retransmit and concurrency runs become slow and misleading.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client going away mid-request is what a killed worker or a timed-out caller does;
        # the caller's side records it. Anything else is a bug in the stand-in: print it.
        if isinstance(sys.exception(), ConnectionError):
            return
        super().handle_error(request, client_address)
