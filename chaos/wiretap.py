"""What the product asked Nylas, seen on the wire: thread reads and send attempts.

The checker needs to know when each thread was read (a reply's draft can only
have seen what arrived before its read) and every send request, answered or
not (the first request carrying a draft dates the draft). The Nylas fault
proxy calls :meth:`WireTap.observe` for every request it handles, so this is
the world's record, not the product's account of itself.
"""

import json
import re
import threading
from urllib.parse import parse_qs, unquote, urlsplit

from chaos.proxy import Request
from devstack.invariants import SendAttempt, ThreadRead, payload_digest

_MESSAGES = re.compile(r"^/v3/grants/([^/]+)/messages$")
_SEND = re.compile(r"^/v3/grants/([^/]+)/messages/send$")


class WireTap:
    """Collects :class:`ThreadRead` and :class:`SendAttempt` records; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.thread_reads: list[ThreadRead] = []
        self.send_attempts: list[SendAttempt] = []

    def observe(
        self, request: Request, status: int | None, headers: dict[str, str], started: float, finished: float
    ) -> None:
        parts = urlsplit(request.path)
        if request.method == "GET" and (match := _MESSAGES.match(parts.path)):
            thread = parse_qs(parts.query).get("thread_id")
            if thread:
                read = ThreadRead(unquote(match.group(1)), thread[0], started, finished)
                with self._lock:
                    self.thread_reads.append(read)
        elif request.method == "POST" and (match := _SEND.match(parts.path)):
            try:
                digest = payload_digest(json.loads(request.body or b"null"))
            except ValueError:
                digest = "unparsable"
            replayed = any(k.lower() == "idempotent-response" and v == "true" for k, v in headers.items())
            attempt = SendAttempt(unquote(match.group(1)), digest, started, status, replayed)
            with self._lock:
                self.send_attempts.append(attempt)
