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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devstack.nylas.faults import IDEMPOTENCY_ERRORS, FaultQueue, Pause, fault_response
from devstack.nylas.mailbox import (
    Json,
    Mailbox,
    build_message,
    metadata_problem,
    participants,
    valid_participants,
)
from devstack.nylas.wire import Response, error, invalid, json_response, not_found, parse_json, request_id

IDEMPOTENCY_TTL_SECONDS = 3600.0
"""How long (emulator clock) a first request's response is kept for replay under its key."""

MAX_IDEMPOTENCY_KEY_LENGTH = 256
"""Longest accepted ``Idempotency-Key``; longer keys are rejected with 400."""

_log = logging.getLogger(__name__)

SendStartedCallback = Callable[[str, Any], None]


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


@dataclass
class _KeyRecord:
    # ``response`` stays None while the first request is in flight; that is the concurrency signal.
    fingerprint: str
    first_seen: float
    response: Response | None = None


class Send:
    """The send endpoint, its idempotency keys and the test-facing record of what went out.

    Parameters
    ----------
    mailbox : Mailbox
        Where sent mail is stored (and whose lock guards the keys too).
    faults : FaultQueue
        Consulted for provider errors inside the key logic.
    announce : callable
        ``announce(message)`` fires ``message.created`` for a message that went out.
    """

    def __init__(self, mailbox: Mailbox, faults: FaultQueue, announce: Callable[[Json], None]) -> None:
        self._mailbox = mailbox
        self._faults = faults
        self._announce = announce
        self.accepts_with_202 = False
        self.on_send_started: SendStartedCallback | None = None
        self.clear()

    def clear(self) -> None:
        """Forget keys and records (call with the mailbox lock held, or before serving)."""
        self.keys: dict[tuple[str, str], _KeyRecord] = {}
        self.sends: list[SendRecord] = []
        self.attempts: list[SendAttempt] = []

    # ---- test-facing views -----------------------------------------------------------------------

    def records(self) -> list[SendRecord]:
        with self._mailbox.lock:
            records = list(self.sends)
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

    def send(
        self, grant: Json, path: str, headers: dict[str, str] | Any, body: bytes, pause: Pause
    ) -> Response:
        key = headers.get("idempotency-key")
        payload, parsed = parse_json(body)
        response, replayed = self._answer(grant, path, key, body, (payload, parsed), pause)
        with self._mailbox.lock:
            self.attempts.append(
                SendAttempt(grant["id"], key, response.status, replayed, payload if parsed else None)
            )
        return response

    def _answer(
        self,
        grant: Json,
        path: str,
        key: str | None,
        body: bytes,
        parsed_body: tuple[Any, bool],
        pause: Pause,
    ) -> tuple[Response, bool]:
        """The send's answer and whether it is a replay of a cached one."""
        grant_id = grant["id"]
        payload, parsed = parsed_body
        if key is not None and len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            return error(
                400,
                "api.invalid_idempotency_key",
                f"Idempotency-Key must be at most {MAX_IDEMPOTENCY_KEY_LENGTH} characters",
            ), False
        record: _KeyRecord | None = None
        slot = (grant_id, key or "")  # keys are scoped per grant
        with self._mailbox.lock:
            if key is not None:
                now = self._mailbox.now()
                existing = self.keys.get(slot)
                fingerprint = _fingerprint(body, payload, parsed)
                if existing is None or now - existing.first_seen >= IDEMPOTENCY_TTL_SECONDS:
                    record = _KeyRecord(fingerprint=fingerprint, first_seen=now)
                    self.keys[slot] = record
                elif existing.fingerprint != fingerprint:
                    # Checked before "in flight": a different payload is a client bug either way,
                    # and retrying it with the same key can never succeed.
                    return error(409, *IDEMPOTENCY_ERRORS["invalid"]), False
                elif existing.response is None:
                    return error(409, *IDEMPOTENCY_ERRORS["concurrent"]), False
                else:
                    cached = existing.response
                    return Response(
                        cached.status, cached.body, {**cached.headers, "Idempotent-Response": "true"}
                    ), True
            # A first request (or one without a key): only now may a provider error be spent on it.
            provider_fault = self._faults.take("POST", path, provider_error=True)
        try:
            self._send_started(grant_id, payload if parsed else None)
            pause()  # the key (if any) is in flight during an injected delay
            if provider_fault is not None:
                response, sent = fault_response(provider_fault), None
            else:
                response, sent = self._perform(grant, key, payload, parsed)
        except BaseException:
            # Never leave a key stuck "in flight" because of an emulator failure.
            if record is not None:
                with self._mailbox.lock:
                    if self.keys.get(slot) is record:
                        del self.keys[slot]
            raise
        if record is not None:
            with self._mailbox.lock:
                record.response = response  # errors are cached too, as Nylas does
        if sent is not None:
            self._announce(sent)
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

    def _perform(
        self, grant: Json, key: str | None, payload: Any, parsed: bool
    ) -> tuple[Response, Json | None]:
        if not parsed or not isinstance(payload, dict):
            return invalid("request body must be a JSON object"), None
        problem = compose_problem(payload, require_to=True)
        if problem is not None:
            return invalid(problem), None
        reply_to_id = payload.get("reply_to_message_id")
        grant_id = grant["id"]
        mailbox = self._mailbox
        with mailbox.lock:
            parent: Json | None = None
            if reply_to_id is not None:
                parent = mailbox.locked_message(grant_id, reply_to_id)
                if parent is None:
                    return not_found(f"message {reply_to_id!r}"), None
                thread = mailbox.threads[parent["thread_id"]]
            else:
                thread = mailbox.locked_new_thread(grant_id)
            message = build_message(
                grant_id=grant_id,
                thread_id=thread.id,
                subject=str(payload.get("subject") or ""),
                sender={"name": grant["name"], "email": grant["email"]},
                to=participants(payload["to"]),
                cc=participants(payload.get("cc") or []),
                bcc=participants(payload.get("bcc") or []),
                reply_to=participants(payload.get("reply_to") or []),
                date=int(mailbox.now()),
                body=str(payload.get("body") or ""),
                folder="sent",
                headers=[
                    {"name": h["name"], "value": h["value"]} for h in payload.get("custom_headers") or []
                ],
                in_reply_to=reply_to_id,
                parent=parent,
                metadata=payload.get("metadata") or {},
            )
            mailbox.locked_store(message, thread)
            self.sends.append(SendRecord(grant_id, key, copy.deepcopy(payload), copy.deepcopy(message)))
            status = 202 if self.accepts_with_202 else 200
        data = {**copy.deepcopy(message), "reply_to_message_id": reply_to_id}
        if status == 202:
            # Agent Account queueing: "same message object as a 200 but no headers array".
            data.pop("headers", None)
        response = json_response(status, {"request_id": request_id(), "grant_id": grant_id, "data": data})
        return response, copy.deepcopy(message)


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
