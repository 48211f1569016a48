"""``POST /v3/grants/{grant}/messages/send`` and its ``Idempotency-Key`` contract.

Sources: https://developer.nylas.com/docs/v3/email/send-email/ (the request body; a send is
synchronous and never retried by Nylas), https://developer.nylas.com/docs/v3/email/idempotent-send/
and https://developer.nylas.com/docs/changelogs/2026-04-28-idempotent-send/ (the key: per grant,
one hour from the first request, success *and* error answers cached and replayed with
``Idempotent-Response: true``, ``409`` for a different payload or a request still in flight, ``400``
for a key over 256 characters).

The key's timeline, as this module enforces it::

    first request ──reserve──▶ in flight (response None) ──answer──▶ cached for an hour
                                   │                                      │
        same key, same payload ────┴── 409 concurrent                     ├── replay, Idempotent-Response
        same key, other payload ─────── 409 invalid (checked first)       └── after the hour: a new first
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devstack.nylas.attachments import MULTIPART_SENDS_PER_SECOND, SendBody, decoded, read_send_body
from devstack.nylas.faults import IDEMPOTENCY_ERRORS, Fault, FaultQueue, Pause, fault_response, spell
from devstack.nylas.limits import limit_response
from devstack.nylas.mailbox import (
    Json,
    Mailbox,
    build_message,
    metadata_problem,
    participants,
    valid_participants,
)
from devstack.nylas.modes import Modes
from devstack.nylas.notifications import Notifier
from devstack.nylas.queue import Queued, SendQueue
from devstack.nylas.wire import Request, Response, error, invalid, json_response, not_found, request_id

IDEMPOTENCY_TTL_SECONDS = 3600.0
"""How long (emulator clock) a first request's response is kept for replay under its key."""

MAX_IDEMPOTENCY_KEY_LENGTH = 256
"""Longest accepted ``Idempotency-Key``; longer keys are rejected with 400."""

_log = logging.getLogger(__name__)

SendStartedCallback = Callable[[str, Any], None]


@dataclass(frozen=True)
class SendRecord:
    """One email that went out through ``POST .../messages/send`` or a draft send (or, in
    :attr:`NylasEmulator.queued_sends` / ``failed_sends``, one that waits or failed).

    Attributes
    ----------
    grant_id : str
        Canonical grant id (even when the request addressed the grant by email).
    idempotency_key : str or None
        The ``Idempotency-Key`` header of the request, if any.
    payload : dict
        The JSON request body as received.
    message : dict
        The message object stored in the mailbox (folders as names, headers included).
    draft_id : str or None
        The draft it was sent from (``POST .../drafts/{id}``; ``payload`` is then that request's body).
    """

    grant_id: str
    idempotency_key: str | None
    payload: Json
    message: Json
    draft_id: str | None = None


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
        The JSON request body as parsed (a multipart body: its ``message`` part, with its files as
        ``attachments`` in base64), or ``None`` when it was neither.
    encoding : str
        ``"json"`` or ``"multipart"`` (``multipart/form-data``).
    """

    grant_id: str
    idempotency_key: str | None
    status: int
    replayed: bool
    payload: Any
    encoding: str = "json"


@dataclass
class _KeyRecord:
    # ``response`` stays None while the first request is in flight; that is the concurrency signal.
    fingerprint: str
    first_seen: float
    response: Response | None = None


class Send:
    """The send endpoint, its idempotency keys, the send queue and the record of what went out.

    Parameters
    ----------
    mailbox : Mailbox
        Where sent mail is stored (and whose lock guards the keys too).
    modes : Modes
        Error spelling, custom-header policy, account limits, the send queue.
    faults : FaultQueue
        Consulted for provider errors inside the key logic.
    notifier : Notifier
        Fires ``message.created`` (and the queue's ``message.delivered`` / ``message.send_failed``).
    """

    def __init__(self, mailbox: Mailbox, modes: Modes, faults: FaultQueue, notifier: Notifier) -> None:
        self._mailbox = mailbox
        self._modes = modes
        self._faults = faults
        self._notifier = notifier
        self.on_send_started: SendStartedCallback | None = None
        self.queue = SendQueue(mailbox.lock, modes, self._settle)
        self.clear()

    def clear(self) -> None:
        """Forget keys, records and queued sends (call with the mailbox lock held, or before serving)."""
        self.keys: dict[tuple[str, str], _KeyRecord] = {}
        self.sends: list[SendRecord] = []
        self.failed: list[SendRecord] = []
        self.attempts: list[SendAttempt] = []
        self.queue.clear()

    # ---- test-facing views -----------------------------------------------------------------------

    def records(self, which: str = "sent") -> list[SendRecord]:
        """Copies of the ``"sent"``, ``"failed"`` or ``"queued"`` records, in order."""
        with self._mailbox.lock:
            if which == "queued":
                records = [
                    SendRecord(e.grant_id, e.idempotency_key, e.payload, e.message, e.draft_id)
                    for e in self.queue.entries.values()
                ]
            else:
                records = list(self.sends if which == "sent" else self.failed)
        return [
            dataclasses.replace(r, payload=copy.deepcopy(r.payload), message=copy.deepcopy(r.message))
            for r in records
        ]

    def attempt_records(self) -> list[SendAttempt]:
        with self._mailbox.lock:
            attempts = list(self.attempts)
        return [dataclasses.replace(a, payload=copy.deepcopy(a.payload)) for a in attempts]

    def sent_messages(self, grant_id: str | None, thread_id: str | None) -> list[Json]:
        with self._mailbox.lock:
            # Filter before copying: chaos runs call this per thread over thousands of sends.
            return [
                copy.deepcopy(r.message)
                for r in self.sends
                if (grant_id is None or r.grant_id == grant_id)
                and (thread_id is None or r.message["thread_id"] == thread_id)
            ]

    # ---- the route -------------------------------------------------------------------------------

    def send(self, grant: Json, request: Request, pause: Pause) -> Response:
        key = request.headers.get("idempotency-key")
        body = read_send_body(request)
        if body.refused is not None:
            response, replayed = body.refused, False
        elif body.encoding == "multipart" and self._multipart_limited(grant["id"]):
            response, replayed = (
                error(
                    429,
                    "nylas_rate_limit_exceeded",
                    f"more than {MULTIPART_SENDS_PER_SECOND} multipart sends a second for this grant",
                ),
                False,
            )
        else:
            response, replayed = self._answer(grant, request, key, pause, body)
        with self._mailbox.lock:
            self.attempts.append(
                SendAttempt(
                    grant["id"],
                    key,
                    response.status,
                    replayed,
                    body.payload if body.parsed else None,
                    body.encoding,
                )
            )
        return response

    def _multipart_limited(self, grant_id: str) -> bool:
        """Whether this multipart send is over the grant's 10 a second (emulator clock); else counted."""
        with self._mailbox.lock:
            now = self._mailbox.now()
            sent = [t for t in self._mailbox.files.multipart_sent.get(grant_id, []) if now - t < 1.0]
            limited = len(sent) >= MULTIPART_SENDS_PER_SECOND
            self._mailbox.files.multipart_sent[grant_id] = sent if limited else [*sent, now]
        return limited

    def _answer(
        self, grant: Json, request: Request, key: str | None, pause: Pause, body: SendBody
    ) -> tuple[Response, bool]:
        """The send's answer and whether it is a replay of a cached one."""
        grant_id = grant["id"]
        payload, parsed = body.payload, body.parsed
        spelling = self._modes.error_spelling
        if key is not None and len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            return error(
                400,
                spell("api.invalid_idempotency_key", spelling),
                f"Idempotency-Key must be at most {MAX_IDEMPOTENCY_KEY_LENGTH} characters",
            ), False
        record: _KeyRecord | None = None
        slot = (grant_id, key or "")  # keys are scoped per grant
        with self._mailbox.lock:
            if key is not None:
                now = self._mailbox.now()
                existing = self.keys.get(slot)
                # A multipart body is judged byte for byte (its boundary included): Nylas documents
                # no comparison of parts, so only the same bytes are surely "the same payload".
                fingerprint = _fingerprint(request.body, payload, parsed and body.encoding == "json")
                if existing is None or now - existing.first_seen >= IDEMPOTENCY_TTL_SECONDS:
                    record = _KeyRecord(fingerprint=fingerprint, first_seen=now)
                    self.keys[slot] = record
                elif existing.fingerprint != fingerprint:
                    # Checked before "in flight": a different payload is a client bug either way,
                    # and retrying it with the same key can never succeed.
                    return _idempotency_error("invalid", spelling), False
                elif existing.response is None:
                    return _idempotency_error("concurrent", spelling), False
                else:
                    cached = existing.response
                    return Response(
                        cached.status, cached.body, {**cached.headers, "Idempotent-Response": "true"}
                    ), True
            # A first request (or one without a key): only now may a provider error be spent on it.
            provider_fault = self._faults.take("POST", request.path, provider_error=True)
        try:
            self._send_started(grant_id, payload if parsed else None)
            pause()  # the key (if any) is in flight during an injected delay
            response, sent = self.perform(
                grant, provider_fault, lambda sync: self._build(grant, key, payload, sync)
            )
        except BaseException:
            # Never leave a key stuck "in flight" because of an emulator failure.
            if record is not None:
                with self._mailbox.lock:
                    if self.keys.get(slot) is record:
                        del self.keys[slot]
            raise
        if record is not None:
            with self._mailbox.lock:
                record.response = response  # errors are cached too, as Nylas does (202s too)
        if sent is not None:
            self._notifier.message_created(sent, swallow=True)
        return response, False

    def perform(
        self,
        grant: Json,
        provider_fault: Fault | None,
        build: Callable[[bool], tuple[Response, Json | None]],
    ) -> tuple[Response, Json | None]:
        """Run ``build(synchronous)`` under a provider error, if one was taken.

        Without one, or with one that does not send, this is the send or the error; with
        ``Fault.provider_error(sent=True)`` the email goes out synchronously (never queued) and the
        error is answered instead of the ``200``.
        """
        if provider_fault is None:
            return build(False)
        if not provider_fault.sent:
            return fault_response(provider_fault), None
        response, sent = build(True)
        if response.status >= 300:
            return response, sent  # Nylas refused it itself: the provider never saw it
        return fault_response(provider_fault), sent

    def _send_started(self, grant_id: str, payload: Any) -> None:
        callback = self.on_send_started
        if callback is None:
            return
        try:
            callback(grant_id, copy.deepcopy(payload))
        except Exception:
            # The send goes on: a test hook failing must not change what Nylas answers.
            _log.exception("on_send_started callback failed for grant %s", grant_id)

    def _build(
        self, grant: Json, key: str | None, payload: Any, synchronous: bool
    ) -> tuple[Response, Json | None]:
        if not isinstance(payload, dict):
            return invalid("request body must be a JSON object"), None
        problem = compose_problem(payload, require_to=True)
        if problem is not None:
            return invalid(problem), None
        custom_headers, refused = self.custom_headers(payload.get("custom_headers") or [])
        if refused is not None:
            return refused, None
        limited = self.limit_for(grant["id"])
        if limited is not None:
            return limited, None
        reply_to_id = payload.get("reply_to_message_id")
        grant_id = grant["id"]
        mailbox = self._mailbox
        with mailbox.lock:
            parent: Json | None = None
            if reply_to_id is not None:
                parent = mailbox.locked_message(grant_id, reply_to_id)
                if parent is None:
                    return not_found(f"message {reply_to_id!r}"), None
            message = build_message(
                grant_id=grant_id,
                # A new conversation's thread exists once its first message is in the mailbox.
                thread_id=parent["thread_id"] if parent is not None else f"thread-{uuid.uuid4().hex}",
                subject=str(payload.get("subject") or ""),
                sender={"name": grant["name"], "email": self._modes.sender_address(grant_id, grant["email"])},
                to=participants(payload["to"]),
                cc=participants(payload.get("cc") or []),
                bcc=participants(payload.get("bcc") or []),
                reply_to=participants(payload.get("reply_to") or []),
                date=int(mailbox.now()),
                body=str(payload.get("body") or ""),
                folder="sent",
                headers=custom_headers,
                in_reply_to=reply_to_id,
                parent=parent,
                metadata=payload.get("metadata") or {},
            )
            # The files go with the email: listed on the sent message, downloadable like any other.
            message["attachments"] = mailbox.files.attach(grant_id, message["id"], decoded(payload))
        return self.dispatch(
            grant_id,
            key,
            payload,
            message,
            synchronous=synchronous,
            extra={"reply_to_message_id": reply_to_id},
        )

    # ---- shared with draft sends -----------------------------------------------------------------

    def custom_headers(self, headers: list[Json]) -> tuple[list[Json], Response | None]:
        """``headers`` as :attr:`Modes.custom_headers` lets them through, or the 400 refusing them."""
        headers = [{"name": h["name"], "value": h["value"]} for h in headers]
        foreign = [h["name"] for h in headers if not h["name"].lower().startswith("x-")]
        policy = self._modes.custom_headers
        if not foreign or policy == "accept":
            return headers, None
        if policy == "refuse":
            refused = ", ".join(foreign)
            return [], invalid(
                f"`custom_headers`: {refused} not allowed; custom header names must start with X-"
            )
        return [h for h in headers if h["name"].lower().startswith("x-")], None

    def limit_for(self, grant_id: str) -> Response | None:
        """The answer of the account limit in force for ``grant_id`` (:attr:`Modes.account_limit`)."""
        modes = self._modes
        if modes.account_limit is None:
            return None
        if modes.account_limit_grants is not None and grant_id not in modes.account_limit_grants:
            return None
        return limit_response(modes.account_limit, modes.account_limit_shape)

    def dispatch(
        self,
        grant_id: str,
        key: str | None,
        payload: Json,
        message: Json,
        *,
        synchronous: bool,
        draft_id: str | None = None,
        extra: Json | None = None,
    ) -> tuple[Response, Json | None]:
        """Send ``message`` now (200) or queue it (202, :attr:`Modes.send_queue`); returns the answer
        and the message when it went out now (for ``message.created``)."""
        mailbox = self._mailbox
        with mailbox.lock:
            queued = self.queue.queueing and not synchronous
            if queued:
                self.queue.locked_accept(Queued(grant_id, key, copy.deepcopy(payload), message, draft_id))
            else:
                self._locked_go_out(Queued(grant_id, key, payload, message, draft_id))
            data = {**mailbox.rest_view(message, "include_headers"), **(extra or {})}
            sent = None if queued else copy.deepcopy(message)
        if queued:
            # "The same message or draft object as a 200, without the headers array".
            data.pop("headers", None)
        response = json_response(
            202 if queued else 200, {"request_id": request_id(), "grant_id": grant_id, "data": data}
        )
        return response, sent

    def _locked_go_out(self, entry: Queued) -> None:
        mailbox = self._mailbox
        message = entry.message
        mailbox.locked_store(
            message, mailbox.locked_thread_for(entry.grant_id, message["thread_id"]), outbound=True
        )
        self.sends.append(
            SendRecord(
                entry.grant_id,
                entry.idempotency_key,
                copy.deepcopy(entry.payload),
                copy.deepcopy(message),
                entry.draft_id,
            )
        )
        if entry.draft_id is not None and entry.draft_id in mailbox.drafts:
            mailbox.locked_remove_draft(entry.draft_id)

    def _settle(self, entry: Queued, failed: bool, reason: str, swallow: bool) -> None:
        """A queued send's outcome: it goes out (``message.created``, ``message.delivered``) or fails
        (``message.send_failed``; never in the mailbox, a queued draft stays in Drafts)."""
        now = int(self._mailbox.now())
        if failed:
            with self._mailbox.lock:
                self.failed.append(
                    SendRecord(
                        entry.grant_id, entry.idempotency_key, entry.payload, entry.message, entry.draft_id
                    )
                )
            failure = {
                "type": spell("api.provider_error", self._modes.error_spelling),
                "message": reason,
                "status_code": 554,
                "provider_error": {"smtp": "554 5.7.1 message rejected"},
            }
            self._notifier.send_failed(
                entry.grant_id, entry.message, reason=reason, failure=failure, swallow=swallow
            )
            return
        with self._mailbox.lock:
            self._locked_go_out(entry)
            sent = copy.deepcopy(entry.message)  # a PUT may change the stored one from here on
        self._notifier.message_created(sent, swallow=swallow)
        self._notifier.delivered(sent, sent_at=now, delivered_at=now, swallow=swallow)


def _idempotency_error(which: str, spelling: str) -> Response:
    error_type, message = IDEMPOTENCY_ERRORS[which]
    return error(409, spell(error_type, spelling), message)


def compose_problem(payload: Json, *, require_to: bool) -> str | None:
    """What is wrong with a send (or draft) body's message fields, or ``None``.

    The fields of https://developer.nylas.com/docs/v3/email/send-email/: ``to`` (required on a send),
    ``cc``, ``bcc``, ``reply_to`` (lists of ``{name?, email}``), ``reply_to_message_id``,
    ``custom_headers`` (a list of ``{name, value}``) and ``metadata`` (Nylas' limits).
    """
    to = payload.get("to")
    if require_to and (not to or not valid_participants(to)):
        return "`to` is required: a list of {name?, email}"
    for field_name in ("to", "cc", "bcc", "reply_to"):
        value = payload.get(field_name)
        if value is not None and not valid_participants(value):
            return f"`{field_name}` must be a list of {{name?, email}}"
    reply_to_id = payload.get("reply_to_message_id")
    if reply_to_id is not None and not isinstance(reply_to_id, str):
        return "`reply_to_message_id` must be a string"
    custom_headers = payload.get("custom_headers") or []
    if not isinstance(custom_headers, list) or not all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str)
        for h in custom_headers
    ):
        return "`custom_headers` must be a list of {name, value}"
    return metadata_problem(payload.get("metadata") or {})


def _fingerprint(raw: bytes, payload: Any, parsed: bool) -> str:
    # "Same payload" is judged on the JSON value, not the bytes: key order and whitespace from a
    # different serializer do not make a different request.
    data = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode() if parsed else raw
    return hashlib.sha256(data).hexdigest()
