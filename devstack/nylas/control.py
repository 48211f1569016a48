"""Control routes for a local stack: what a test does with method calls, another process does over HTTP.

They live under ``/_emulator/`` and are not Nylas: no bearer auth (the server binds loopback only),
not counted in :attr:`NylasEmulator.requests`, never faulted. Every mistake is a 4xx with a Nylas-like
error body whose ``message`` says what was wrong.

- ``POST /_emulator/inbound``: :meth:`NylasEmulator.deliver_inbound` (201, ``{"data": message}``;
  502 when the message was stored but ``on_message_created`` failed);
- ``GET /_emulator/threads/{id}``: a thread's messages in arrival order, with headers;
- ``PUT /_emulator/grants/{id}/aliases`` ``{"aliases": [...]}``: :meth:`NylasEmulator.set_aliases`
  (``{"data": {"grant_id", "email_aliases"}}``);
- ``POST /_emulator/clock`` ``{"advance_seconds": n}``: :meth:`NylasEmulator.advance_clock`;
- ``GET /_emulator/modes``, ``POST /_emulator/modes`` ``{<mode>: <value>, ...}`` (only the named modes
  change; a bad one changes none and answers 400) and ``DELETE /_emulator/modes`` (all off): the
  :class:`~devstack.nylas.modes.Modes` of the emulator, by their Python names;
- ``POST /_emulator/faults`` ``{"method", "path_regex", "times"?, "fault": {"kind", ...}}``:
  :meth:`NylasEmulator.inject`, the fault built by the :class:`~devstack.nylas.faults.Fault` class
  method named by ``kind`` (``status``, ``delay``, ``lose_response``, ``provider_error``,
  ``idempotency_error``) with the other keys as its keyword arguments;
- ``POST /_emulator/grants/{id}/{create|expire|reauthenticate|delete}`` (``create``: ``{"email",
  "name"?, "provider"?}``): a grant's life (:mod:`devstack.nylas.grant_life`), each firing its
  ``grant.*`` notification as Nylas does (``{"data": {"grant_id", "state"}}``; 404 for an unknown
  grant, 409 for a deleted one's re-authentication);
- ``GET /_emulator/queue``: the queued sends (``{"data": [{"grant_id", "idempotency_key", "draft_id",
  "message"}]}``); ``POST /_emulator/queue/release`` ``{"message_ids"?: [...], "fail"?: bool,
  "reason"?: str}``: :meth:`NylasEmulator.release_queued` (``{"data": {"released": [ids]}}``).
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable
from typing import Any

from devstack.nylas.faults import Fault
from devstack.nylas.mailbox import INBOUND_FOLDERS, Mailbox, valid_participants
from devstack.nylas.modes import Modes
from devstack.nylas.send import SendRecord
from devstack.nylas.wire import Json, Response, error, invalid, json_response, parse_json

CONTROL_PREFIX = "/_emulator/"
"""Path prefix of the local-stack control routes (no auth, not counted in ``requests``)."""

_log = logging.getLogger(__name__)

GRANT_ACTIONS = ("create", "expire", "reauthenticate", "delete")
"""The control route's actions on a grant's life."""

_FAULT_KINDS = ("status", "delay", "lose_response", "provider_error", "idempotency_error")

_INBOUND_FIELDS = frozenset(
    {
        "attachments",
        "grant_id",
        "grant_email",
        "from_email",
        "from_name",
        "subject",
        "body",
        "thread_id",
        "reply_to_message_id",
        "headers",
        "date",
        "reply_to",
        "to_email",
        "message_id",
        "folder",
        "also_to",
        "addressed_to",
        "notify",
        "authentication_results",
    }
)


class Control:
    """The control routes, on the emulator's mailbox, its ``message.created`` announcer and its clock."""

    def __init__(
        self,
        mailbox: Mailbox,
        announce: Callable[[Json], None],
        advance_clock: Callable[[float], float],
        modes: Modes,
        queued: Callable[[], list[SendRecord]],
        release: Callable[..., list[str]],
        inject: Callable[[str, str, Fault, int], None],
        grant_life: Callable[[str, str, dict[str, Any]], str] | None = None,
    ) -> None:
        # (action, grant id, body) -> the grant's state after it: NylasEmulator.create_grant and the others.
        self._grant_life = grant_life
        self._mailbox = mailbox
        self._announce = announce
        self._advance_clock = advance_clock
        self._modes = modes
        self._queued = queued
        self._release = release
        self._inject = inject

    def route(self, method: str, segments: list[str], body: bytes) -> Response:
        """Answer one control request (``segments``: the decoded path after ``/_emulator/``)."""
        if method == "POST" and segments == ["inbound"]:
            return self._inbound(body)
        if method == "GET" and len(segments) == 2 and segments[0] == "threads":
            messages = self._mailbox.thread_messages(segments[1])
            if messages is None:
                return error(404, "not_found_error", f"thread {segments[1]!r} not found")
            return json_response(200, {"data": messages})
        if method == "PUT" and len(segments) == 3 and segments[0] == "grants" and segments[2] == "aliases":
            return self._aliases(segments[1], body)
        if (
            method == "POST"
            and len(segments) == 3
            and segments[0] == "grants"
            and segments[2] in GRANT_ACTIONS
            and self._grant_life is not None
        ):
            return self._grant_route(segments[2], segments[1], body)
        if method == "POST" and segments == ["clock"]:
            return self._clock(body)
        if segments == ["modes"] and method in ("GET", "POST", "DELETE"):
            return self._modes_route(method, body)
        if method == "POST" and segments == ["faults"]:
            return self._fault_route(body)
        if method == "GET" and segments == ["queue"]:
            entries = [
                {
                    "grant_id": r.grant_id,
                    "idempotency_key": r.idempotency_key,
                    "draft_id": r.draft_id,
                    "message": r.message,
                }
                for r in self._queued()
            ]
            return json_response(200, {"data": entries})
        if method == "POST" and segments == ["queue", "release"]:
            return self._release_route(body)
        path = CONTROL_PREFIX + "/".join(segments)
        return error(404, "not_found_error", f"no such control route: {method} {path}")

    def _aliases(self, grant_id: str, body: bytes) -> Response:
        payload, parsed = parse_json(body)
        aliases = payload.get("aliases") if parsed and isinstance(payload, dict) else None
        if not isinstance(aliases, list) or not all(isinstance(a, str) and "@" in a for a in aliases):
            return invalid('body must be a JSON object {"aliases": [<address>, ...]}')
        with self._mailbox.lock:
            grant = self._mailbox.locked_find_grant(grant_id)
            if grant is None:
                return error(404, "not_found_error", f"grant {grant_id!r} not found")
            self._mailbox.aliases[grant["id"]] = list(aliases)
        return json_response(200, {"data": {"grant_id": grant["id"], "email_aliases": aliases}})

    def _grant_route(self, action: str, grant_id: str, body: bytes) -> Response:
        payload, parsed = parse_json(body) if body.strip() else ({}, True)
        if not parsed or not isinstance(payload, dict):
            return invalid('body must be a JSON object (create: {"email": <address>, "name"?: <name>})')
        if action == "create" and "@" not in str(payload.get("email", "")):
            return invalid('create needs {"email": <address>}')
        assert self._grant_life is not None
        try:
            state = self._grant_life(action, grant_id, payload)
        except KeyError as exc:
            status = 409 if "deleted" in str(exc) else 404
            return error(
                status, "invalid_request_error" if status == 409 else "not_found_error", str(exc.args[0])
            )
        return json_response(200, {"data": {"grant_id": grant_id, "state": state}})

    def _clock(self, body: bytes) -> Response:
        payload, parsed = parse_json(body)
        seconds = payload.get("advance_seconds") if parsed and isinstance(payload, dict) else None
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            return invalid('body must be a JSON object {"advance_seconds": <number>}')
        try:
            now = self._advance_clock(seconds)
        except ValueError as exc:
            return invalid(str(exc))
        return json_response(200, {"data": {"now": now}})

    def _modes_route(self, method: str, body: bytes) -> Response:
        if method == "POST":
            payload, parsed = parse_json(body)
            if not parsed or not isinstance(payload, dict):
                return invalid("body must be a JSON object of mode names to values")
            try:
                self._modes.update(payload)
            except ValueError as exc:
                return invalid(str(exc))
        elif method == "DELETE":
            self._modes.reset()
        return json_response(200, {"data": self._modes.to_json()})

    def _fault_route(self, body: bytes) -> Response:
        payload, parsed = parse_json(body)
        shape = '{"method", "path_regex", "times"?, "fault": {"kind": "status"|"delay"|...}}'
        if not parsed or not isinstance(payload, dict) or not isinstance(payload.get("fault"), dict):
            return invalid(f"body must be a JSON object {shape}")
        options = dict(payload["fault"])
        kind = options.pop("kind", None)
        if kind not in _FAULT_KINDS:
            return invalid(f"fault.kind must be one of {', '.join(_FAULT_KINDS)}")
        method, pattern, times = payload.get("method"), payload.get("path_regex"), payload.get("times", 1)
        if not isinstance(method, str) or not isinstance(pattern, str) or not isinstance(times, int):
            return invalid(f"body must be a JSON object {shape}")
        try:
            fault = getattr(Fault, kind)(**options)
            self._inject(method, pattern, fault, times)
        except (TypeError, ValueError, re.error) as exc:
            return invalid(f"cannot inject that fault: {exc}")
        return json_response(201, {"data": {"method": method.upper(), "path_regex": pattern, "times": times}})

    def _release_route(self, body: bytes) -> Response:
        payload, parsed = parse_json(body or b"{}")
        if not parsed or not isinstance(payload, dict) or set(payload) - {"message_ids", "fail", "reason"}:
            return invalid(
                'body must be a JSON object {"message_ids"?: [...], "fail"?: bool, "reason"?: str}'
            )
        ids = payload.get("message_ids")
        if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
            return invalid("`message_ids` must be a list of message ids")
        if not isinstance(payload.get("fail", False), bool) or not isinstance(payload.get("reason", ""), str):
            return invalid("`fail` must be true or false and `reason` a string")
        options = {"fail": payload.get("fail", False)}
        if payload.get("reason"):
            options["reason"] = payload["reason"]
        try:
            released = self._release(ids, **options)
        except KeyError as exc:
            return error(404, "not_found_error", str(exc.args[0]))
        return json_response(200, {"data": {"released": released}})

    def _inbound(self, body: bytes) -> Response:
        payload, parsed = parse_json(body)
        if not parsed or not isinstance(payload, dict):
            return invalid("body must be a JSON object")
        problem = _inbound_problem(payload)
        if problem is not None:
            return invalid(problem)
        grant = payload.get("grant_id") or payload["grant_email"]
        try:
            messages = self._mailbox.receive(
                grant,
                from_email=payload["from_email"],
                from_name=payload.get("from_name") or "",
                subject=payload.get("subject") or "",
                body=payload.get("body") or "",
                reply_to=payload.get("reply_to"),
                thread_id=payload.get("thread_id"),
                reply_to_message_id=payload.get("reply_to_message_id"),
                headers=payload.get("headers"),
                date=payload.get("date"),
                to_email=payload.get("to_email"),
                message_id=payload.get("message_id"),
                folder=payload.get("folder") or "inbox",
                also_to=payload.get("also_to") or (),
                addressed_to=payload.get("addressed_to"),
                authentication=payload.get("authentication_results"),
                # Files arrive as base64 over the control API: {filename, content_type, content}.
                attachments=[
                    {**a, "content": base64.b64decode(a["content"])} for a in payload.get("attachments") or []
                ],
            )
        except KeyError as exc:
            return error(404, "not_found_error", str(exc.args[0]))
        except ValueError as exc:
            return invalid(str(exc))
        message = messages[0]
        try:
            for stored in messages if payload.get("notify", True) else ():
                self._announce(stored)
        except Exception as exc:
            # The message is in the mailbox; say so, and that its notification did not go out.
            _log.exception("on_message_created callback failed for message %s", message["id"])
            return json_response(
                502,
                {
                    "error": {
                        "type": "callback_error",
                        "message": f"message {message['id']} was stored, but on_message_created failed: "
                        f"{type(exc).__name__}: {exc}",
                    },
                    "data": message,
                },
            )
        answer: Json = {"data": message}
        if len(messages) > 1:
            answer["copies"] = messages[1:]  # the same email in the other grants' mailboxes
        return json_response(201, answer)


def _inbound_problem(payload: Json) -> str | None:
    """What is wrong with a ``POST /_emulator/inbound`` body, or ``None``."""
    unknown = sorted(set(payload) - _INBOUND_FIELDS)
    if unknown:
        return f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_INBOUND_FIELDS))}"
    grant = payload.get("grant_id") or payload.get("grant_email")
    if not isinstance(grant, str) or not grant:
        return "`grant_id` (a grant id or its email address) or `grant_email` is required"
    if not isinstance(payload.get("from_email"), str) or not payload["from_email"]:
        return "`from_email` is required: the sender's address"
    for name in (
        "from_name",
        "subject",
        "body",
        "thread_id",
        "reply_to_message_id",
        "to_email",
        "message_id",
    ):
        if payload.get(name) is not None and not isinstance(payload[name], str):
            return f"`{name}` must be a string"
    date = payload.get("date")
    if date is not None and (isinstance(date, bool) or not isinstance(date, int | float)):
        return "`date` must be Unix seconds (a number)"
    headers = payload.get("headers")
    if headers is not None and not _valid_headers(headers):
        return "`headers` must be a list of {name, value} or an object of name: value strings"
    reply_to = payload.get("reply_to")
    if reply_to is not None and not valid_participants(reply_to):
        return "`reply_to` must be a list of {name?, email}"
    if payload.get("folder") is not None and payload["folder"] not in INBOUND_FOLDERS:
        return f"`folder` must be one of {', '.join(INBOUND_FOLDERS)}"
    also_to = payload.get("also_to")
    if also_to is not None and (
        not isinstance(also_to, list) or not all(isinstance(g, str) for g in also_to)
    ):
        return "`also_to` must be a list of grant ids (or their email addresses)"
    addressed_to = payload.get("addressed_to")
    if addressed_to is not None and (
        not isinstance(addressed_to, list) or not all(isinstance(a, str) for a in addressed_to)
    ):
        return "`addressed_to` must be a list of addresses"
    results = payload.get("authentication_results")
    if results is not None and not (
        isinstance(results, str) or (isinstance(results, list) and all(isinstance(r, str) for r in results))
    ):
        return "`authentication_results` must be a header value or a list of them (topmost first)"
    files = payload.get("attachments")
    if files is not None and not (
        isinstance(files, list)
        and all(
            isinstance(f, dict) and isinstance(f.get("filename"), str) and isinstance(f.get("content"), str)
            for f in files
        )
    ):
        return "`attachments` must be a list of {filename, content_type?, content (base64)}"
    if not isinstance(payload.get("notify", True), bool):
        return "`notify` must be true or false"
    return None


def _valid_headers(headers: Any) -> bool:
    if isinstance(headers, dict):
        return all(isinstance(v, str) for v in headers.values())
    return isinstance(headers, list) and all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str)
        for h in headers
    )
