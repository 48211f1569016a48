"""What the product asked Nylas, seen on the wire: thread reads, send attempts and drafts.

The checker needs to know when each thread was read (a reply's draft can only
have seen what arrived before its read) and every send request, answered or
not (the first request carrying a draft dates the draft). The Nylas fault
proxy calls :meth:`WireTap.observe` for every request it handles, so this is
the world's record, not the product's account of itself.
"""

import json
import re
import threading
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from chaos.proxy import Request
from devstack.invariants import SendAttempt, ThreadRead, payload_digest

_MESSAGES = re.compile(r"^/v3/grants/([^/]+)/messages$")
_SEND = re.compile(r"^/v3/grants/([^/]+)/messages/send$")
_DRAFTS = re.compile(r"^/v3/grants/([^/]+)/drafts$")


@dataclass(frozen=True)
class DraftRequest:
    """A draft the product asked Nylas to create (review mode), answered or not: when, for which message."""

    grant_id: str
    reply_to_message_id: str
    started: float
    status: int | None


class WireTap:
    """Collects :class:`ThreadRead`, :class:`SendAttempt` and :class:`DraftRequest` records; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.thread_reads: list[ThreadRead] = []
        self.send_attempts: list[SendAttempt] = []
        self.draft_requests: list[DraftRequest] = []

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
        elif request.method == "POST" and (match := _DRAFTS.match(parts.path)):
            try:
                body = json.loads(request.body or b"null")
            except ValueError:
                body = None
            target = str(body.get("reply_to_message_id") or "") if isinstance(body, dict) else ""
            draft = DraftRequest(unquote(match.group(1)), target, started, status)
            with self._lock:
                self.draft_requests.append(draft)
