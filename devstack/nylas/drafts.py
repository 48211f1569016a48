"""Drafts: ``POST``/``GET .../drafts``, ``GET``/``PUT``/``DELETE .../drafts/{id}``, and
``POST .../drafts/{id}``, which sends one.

Sources: https://developer.nylas.com/docs/reference/api/drafts/ (the routes; a draft takes the body
fields of a send), https://developer.nylas.com/docs/reference/api/drafts/send-draft-id/ (the send),
https://developer.nylas.com/docs/v3/email/send-email/ ("Create and send a draft": it lives in the
Drafts folder until sent), https://developer.nylas.com/docs/dev-guide/metadata/ (drafts carry
``metadata`` and are searched with ``metadata_pair`` like messages) and
https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/ (a draft send is
queued like a send; a failed one stays in Drafts).

A draft belongs to its thread (``draft_ids``, ``has_drafts``) but never appears in ``GET .../messages``.
Sending it makes a message from the grant in ``sent`` with the draft's fields, metadata and headers;
the draft is gone once the message went out. A draft send takes no ``Idempotency-Key`` (Nylas
documents none) and is not a :attr:`NylasEmulator.send_attempts` entry; it is in ``sends``.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid
from dataclasses import dataclass

from devstack.nylas.attachments import decoded, read_send_body
from devstack.nylas.faults import FaultQueue, Pause
from devstack.nylas.mailbox import (
    BASIC_HEADER_NAMES,
    MESSAGE_FIELDS,
    Mailbox,
    build_message,
    parse_metadata_pair,
    participants,
    snippet,
)
from devstack.nylas.messages import Messages
from devstack.nylas.modes import Modes
from devstack.nylas.notifications import Notifier
from devstack.nylas.send import Send, compose_problem
from devstack.nylas.wire import Json, Page, Request, Response, invalid, not_found, ok

_UPDATABLE = frozenset({"to", "cc", "bcc", "reply_to", "subject", "body", "metadata", "custom_headers"})


@dataclass(frozen=True)
class DraftRecord:
    """One draft created through ``POST .../drafts``.

    Attributes
    ----------
    grant_id : str
        Canonical grant id.
    payload : dict
        The JSON request body as received.
    draft : dict
        The draft object as created (folders as names, headers included).
    """

    grant_id: str
    payload: Json
    draft: Json


def sent_as(message: Json, grant: Json, modes: Modes, now: float) -> None:
    """Turn a copy of a draft into the message its send puts in ``sent`` (in place): from the address
    the grant's sent copies show (:meth:`Modes.sender_address`), dated now, its metadata kept or not
    (:attr:`Modes.draft_send_keeps_metadata`)."""
    message.update(object="message", folders=["sent"], unread=False, date=int(now))
    message["from"] = [{"name": grant["name"], "email": modes.sender_address(grant["id"], grant["email"])}]
    if not modes.draft_send_keeps_metadata:
        message["metadata"] = {}


class Drafts:
    """The draft routes, on the mailbox, with sends going through :class:`Send`."""

    def __init__(
        self,
        mailbox: Mailbox,
        modes: Modes,
        faults: FaultQueue,
        send: Send,
        messages: Messages,
        notifier: Notifier,
    ) -> None:
        self._mailbox = mailbox
        self._modes = modes
        self._faults = faults
        self._send = send
        self._messages = messages
        self._notifier = notifier
        self.created: list[DraftRecord] = []

    def clear(self) -> None:
        """Forget the record of created drafts (the drafts themselves live in the mailbox)."""
        self.created = []

    def records(self) -> list[DraftRecord]:
        with self._mailbox.lock:
            records = list(self.created)
        return [
            dataclasses.replace(r, payload=copy.deepcopy(r.payload), draft=copy.deepcopy(r.draft))
            for r in records
        ]

    def route(self, request: Request, grant: Json, rest: list[str], pause: Pause) -> Response | None:
        """Answer ``.../drafts[/{id}]`` (``rest``: the path after the grant), or ``None``."""
        if not rest or rest[0] != "drafts" or len(rest) > 2:
            return None
        method = request.method
        if len(rest) == 1:
            if method == "POST":
                return self._create(request, grant)
            if method == "GET":
                return self._list(request, grant["id"])
            return None
        draft_id = rest[1]
        if method == "POST":
            return self._send_draft(request, grant, draft_id, pause)
        if method == "GET":
            return self._get(request, grant["id"], draft_id)
        if method == "PUT":
            return self._update(request, grant["id"], draft_id)
        if method == "DELETE":
            with self._mailbox.lock:
                if self._mailbox.locked_draft(grant["id"], draft_id) is None:
                    return not_found(f"draft {draft_id!r}")
                self._mailbox.locked_remove_draft(draft_id)
            return ok({"status": "success"})
        return None

    def _create(self, request: Request, grant: Json) -> Response:
        body = read_send_body(request)
        if body.refused is not None:
            return body.refused
        payload, parsed = body.payload, body.parsed
        if not parsed or not isinstance(payload, dict):
            return invalid("request body must be a JSON object")
        problem = compose_problem(payload, require_to=False)
        if problem is not None:
            return invalid(problem)
        custom_headers, refused = self._send.custom_headers(payload.get("custom_headers") or [])
        if refused is not None:
            return refused
        reply_to_id = payload.get("reply_to_message_id")
        grant_id = grant["id"]
        mailbox = self._mailbox
        with mailbox.lock:
            parent: Json | None = None
            if reply_to_id is not None:
                parent = mailbox.locked_message(grant_id, reply_to_id)
                if parent is None:
                    return not_found(f"message {reply_to_id!r}")
                thread = mailbox.threads[parent["thread_id"]]
            else:
                thread = mailbox.locked_new_thread(grant_id)
            draft = build_message(
                grant_id=grant_id,
                thread_id=thread.id,
                subject=str(payload.get("subject") or ""),
                sender={"name": grant["name"], "email": grant["email"]},
                to=participants(payload.get("to") or []),
                cc=participants(payload.get("cc") or []),
                bcc=participants(payload.get("bcc") or []),
                reply_to=participants(payload.get("reply_to") or []),
                date=int(mailbox.now()),
                body=str(payload.get("body") or ""),
                folder="drafts",
                headers=custom_headers,
                in_reply_to=reply_to_id,
                message_id=f"draft-{uuid.uuid4().hex}",
                parent=parent,
                metadata=payload.get("metadata") or {},
            )
            draft["object"] = "draft"
            draft["attachments"] = mailbox.files.attach(grant_id, draft["id"], decoded(payload))
            if reply_to_id is not None:
                draft["reply_to_message_id"] = reply_to_id
            mailbox.locked_store_draft(draft, thread)
            self.created.append(DraftRecord(grant_id, copy.deepcopy(payload), copy.deepcopy(draft)))
            data = mailbox.rest_view(draft, "standard")
        return ok(data, grant_id=grant_id)

    def _get(self, request: Request, grant_id: str, draft_id: str) -> Response:
        fields = request.param("fields", "standard") or "standard"
        if fields not in MESSAGE_FIELDS:
            return invalid(f"`fields` must be one of {', '.join(sorted(MESSAGE_FIELDS))}")
        with self._mailbox.lock:
            draft = self._mailbox.locked_draft(grant_id, draft_id)
            data = self._mailbox.rest_view(draft, fields) if draft is not None else None
        return ok(data) if data is not None else not_found(f"draft {draft_id!r}")

    def _list(self, request: Request, grant_id: str) -> Response:
        thread_id = request.param("thread_id")
        metadata_pair = request.param("metadata_pair")
        try:
            page = Page.of(request)
            indexed = parse_metadata_pair(metadata_pair) if metadata_pair is not None else None
        except ValueError as exc:
            return invalid(f"invalid query parameter: {exc}")
        if indexed is not None and thread_id is not None:
            return invalid("metadata_pair cannot be combined with a provider filter (thread_id)")
        if indexed is not None and (failure := self._messages.search_failure()) is not None:
            return failure
        mailbox = self._mailbox
        with mailbox.lock:
            drafts = mailbox.drafts
            ids = [
                i
                for i, s in drafts.items()
                if s.message["grant_id"] == grant_id
                and (thread_id is None or s.message["thread_id"] == thread_id)
            ]
            if indexed is not None:
                key, value = indexed
                ids = self._messages.findable(
                    [i for i in ids if drafts[i].message["metadata"].get(key) == value], drafts
                )
            ordered = self._messages.newest_first(ids, drafts)
            return page.answer(ordered, lambda i: mailbox.rest_view(drafts[i].message, "standard"))

    def _update(self, request: Request, grant_id: str, draft_id: str) -> Response:
        payload, parsed = request.json
        if not parsed or not isinstance(payload, dict):
            return invalid("request body must be a JSON object")
        unknown = sorted(set(payload) - _UPDATABLE)
        if unknown:
            return invalid(f"cannot update {', '.join(unknown)}: only {', '.join(sorted(_UPDATABLE))}")
        problem = compose_problem(payload, require_to=False)
        if problem is not None:
            return invalid(problem)
        custom_headers, refused = self._send.custom_headers(payload.get("custom_headers") or [])
        if refused is not None:
            return refused
        mailbox = self._mailbox
        with mailbox.lock:
            draft = mailbox.locked_draft(grant_id, draft_id)
            if draft is None:
                return not_found(f"draft {draft_id!r}")
            for name in ("to", "cc", "bcc", "reply_to"):
                if name in payload:
                    draft[name] = participants(payload[name] or [])
            for name in ("subject", "body"):
                if name in payload:
                    draft[name] = str(payload[name] or "")
            draft["snippet"] = snippet(draft["body"])
            if "metadata" in payload:
                draft["metadata"] = dict(payload["metadata"] or {})  # replaced whole, as Nylas does
            if "custom_headers" in payload:
                threading = [h for h in draft["headers"] if h["name"].lower() in BASIC_HEADER_NAMES]
                draft["headers"] = [*threading, *custom_headers]
            draft["date"] = int(mailbox.now())
            data = mailbox.rest_view(draft, "standard")
        return ok(data)

    def _send_draft(self, request: Request, grant: Json, draft_id: str, pause: Pause) -> Response:
        with self._mailbox.lock:
            provider_fault = self._faults.take("POST", request.path, provider_error=True)
        pause()  # a draft send's latency is spent where the work is, as a send's
        response, sent = self._send.perform(
            grant, provider_fault, lambda sync: self._build_send(grant, draft_id, sync)
        )
        if sent is not None:
            self._notifier.message_created(sent, swallow=True)
        return response

    def _build_send(self, grant: Json, draft_id: str, synchronous: bool) -> tuple[Response, Json | None]:
        grant_id = grant["id"]
        with self._mailbox.lock:
            draft = self._mailbox.locked_draft(grant_id, draft_id)
            if draft is None:
                return not_found(f"draft {draft_id!r}"), None
            message = copy.deepcopy(draft)
        if not message["to"]:
            return invalid("`to` is required: the draft has no recipient"), None
        limited = self._send.limit_for(grant_id)
        if limited is not None:
            return limited, None
        sent_as(message, grant, self._modes, self._mailbox.now())
        reply_to_id = message.pop("reply_to_message_id", None)
        if self._modes.draft_send_new_id:
            message["id"] = f"msg-{uuid.uuid4().hex}"
        return self._send.dispatch(
            grant_id,
            None,
            {},
            message,
            synchronous=synchronous,
            draft_id=draft_id,
            extra={"reply_to_message_id": reply_to_id} if reply_to_id is not None else None,
        )
