"""Messages, threads and folders: ``GET``/``PUT .../messages/{id}``, ``GET .../messages``,
``GET .../threads/{id}``, ``GET .../folders[/{id}]``, ``POST .../folders``.

Sources: https://developer.nylas.com/docs/reference/api/messages/get-messages-id/,
https://developer.nylas.com/docs/reference/api/messages/get-messages/ (``limit`` 50 by default,
200 at most, ``next_cursor`` / ``page_token``; filters ``thread_id``, ``in`` (a folder id),
``received_after``, ``received_before``, ``metadata_pair``),
https://developer.nylas.com/docs/reference/api/messages/put-messages-id/ (``folders``, ``unread``,
``starred``, ``metadata``; a move fires ``message.updated``),
https://developer.nylas.com/docs/reference/api/threads/, https://developer.nylas.com/docs/reference/api/folders/
and https://developer.nylas.com/docs/dev-guide/metadata/ ("You can't create a query that includes
both a provider and metadata filter"; ``PUT`` replaces the whole metadata object).

Creating a folder (https://developer.nylas.com/docs/reference/api/folders/post-folder/): the body's
``name`` is required; the answer is ``{"request_id", "data": folder}``, the folder listed by
``GET .../folders`` from then on and a destination of ``PUT .../messages/{id}`` ``folders``. A name
the grant already has is refused (:attr:`Modes.folder_exists`: the docs are silent, the providers
refuse).

List order: Nylas says "reverse chronological" without naming the key. By default the emulator lists
newest first *by arrival in the mailbox*, never by ``date`` (sender-supplied, can be skewed), so a
product that orders by it is caught; :attr:`Modes.listing_order` ``"date"`` lists by ``date``. A
thread's ``message_ids`` are in arrival order either way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from devstack.nylas.faults import FAULT_ERROR_TYPES
from devstack.nylas.mailbox import (
    INDEXED_METADATA_KEYS,
    MESSAGE_FIELDS,
    Mailbox,
    Stored,
    metadata_problem,
    parse_metadata_pair,
)
from devstack.nylas.modes import Modes
from devstack.nylas.wire import Json, Page, Request, Response, error, invalid, not_found, ok

_SEARCH_FAILURE_TYPES = {**FAULT_ERROR_TYPES, 503: "service_unavailable"}


class Messages:
    """The message, thread and folder routes.

    Parameters
    ----------
    mailbox, modes
        The emulator's state and modes.
    updated : callable
        ``updated(message)`` fires ``message.updated`` for a message a ``PUT`` changed.
    """

    def __init__(self, mailbox: Mailbox, modes: Modes, updated: Callable[[Json], None]) -> None:
        self._mailbox = mailbox
        self._modes = modes
        self._updated = updated

    def route(self, request: Request, grant: Json, rest: list[str]) -> Response | None:
        """Answer the request if it is one of these routes (``rest``: the path after the grant)."""
        if not rest:
            return None
        grant_id = grant["id"]
        if rest[0] == "messages" and len(rest) == 2 and request.method == "PUT":
            return self._update(request, grant_id, rest[1])
        if rest == ["folders"] and request.method == "POST":
            return self._create_folder(request, grant_id)
        if request.method != "GET":
            return None
        if rest[0] == "messages" and len(rest) <= 2:
            fields = request.param("fields", "standard") or "standard"
            if fields not in MESSAGE_FIELDS:
                return invalid(f"`fields` must be one of {', '.join(sorted(MESSAGE_FIELDS))}")
            if len(rest) == 1:
                return self._list(request, grant_id, fields)
            return self._get(grant_id, rest[1], fields)
        if rest[0] == "threads" and len(rest) == 2:
            return self._thread(grant_id, rest[1])
        if rest[0] == "folders" and len(rest) <= 2:
            with self._mailbox.lock:
                folders = self._mailbox.locked_folders(grant_id)
            if len(rest) == 1:
                # Paged like every list (``limit`` 50 by default, 200 at most, ``next_cursor``): the
                # spec's get-folder operation and components/responses/folders.
                try:
                    page = Page.of(request)
                except ValueError as exc:
                    return invalid(f"invalid query parameter: {exc}")
                by_id = {f["id"]: f for f in folders}
                return page.answer(list(by_id), lambda i: by_id[i])
            found = next((f for f in folders if f["id"] == rest[1]), None)
            return ok(found) if found is not None else not_found(f"folder {rest[1]!r}")
        return None

    def _create_folder(self, request: Request, grant_id: str) -> Response:
        payload, parsed = request.json
        if not parsed or not isinstance(payload, dict):
            return invalid("request body must be a JSON object")
        name = payload.get("name")
        if not isinstance(name, str) or not name.strip():
            return invalid("`name` is required: the folder's display name")
        with self._mailbox.lock:
            folder = self._mailbox.locked_create_folder(grant_id, name)
        if folder is None:
            message = f"a folder named {name!r} already exists"
            if self._modes.folder_exists == "invalid":
                return invalid(message)
            return error(409, "conflict", message)
        return ok(folder)

    def _get(self, grant_id: str, message_id: str, fields: str) -> Response:
        with self._mailbox.lock:
            message = self._mailbox.locked_message(grant_id, message_id)
            data = self._mailbox.rest_view(message, fields) if message is not None else None
        if data is None:
            return not_found(f"message {message_id!r}")
        return ok(data)

    def _thread(self, grant_id: str, thread_id: str) -> Response:
        mailbox = self._mailbox
        with mailbox.lock:
            thread = mailbox.threads.get(thread_id)
            view = mailbox.locked_thread_view(thread) if thread and thread.grant_id == grant_id else None
        if view is None:
            return not_found(f"thread {thread_id!r}")
        return ok(view)

    def _list(self, request: Request, grant_id: str, fields: str) -> Response:
        thread_id = request.param("thread_id")
        in_folder = request.param("in")
        metadata_pair = request.param("metadata_pair")
        try:
            # received_after / received_before (Unix seconds): on the message's arrival in the mailbox.
            received_after = float(request.param("received_after", "-inf") or "-inf")
            received_before = float(request.param("received_before", "inf") or "inf")
            page = Page.of(request)
            indexed = parse_metadata_pair(metadata_pair) if metadata_pair is not None else None
        except ValueError as exc:
            return invalid(f"invalid query parameter: {exc}")
        if indexed is not None and (thread_id is not None or in_folder is not None):
            # Nylas: "You can't create a query that includes both a provider and metadata filter".
            return invalid("metadata_pair cannot be combined with a provider filter (thread_id, in)")
        if indexed is not None and (failure := self.search_failure()) is not None:
            return failure
        mailbox = self._mailbox
        with mailbox.lock:
            folder = mailbox.folder_name(grant_id, in_folder) if in_folder is not None else None
            if in_folder is not None and folder is None:
                return invalid(f"`in` must be a folder id of this grant (GET /folders), not {in_folder!r}")
            if indexed is not None:
                found = mailbox.metadata_index.get((grant_id, *indexed), [])
                # Arrival order (a PUT re-indexes a message at the end of its new pair's list).
                ids = self.findable(sorted(found, key=lambda i: mailbox.messages[i].seq), mailbox.messages)
            elif thread_id is not None:
                thread = mailbox.threads.get(thread_id)
                ids = thread.message_ids if thread is not None and thread.grant_id == grant_id else []
            else:
                ids = [i for i, s in mailbox.messages.items() if s.message["grant_id"] == grant_id]
            if folder is not None:
                ids = [i for i in ids if folder in mailbox.messages[i].message["folders"]]
            if "received_after" in request.query or "received_before" in request.query:
                ids = [i for i in ids if received_after <= mailbox.messages[i].arrived_at < received_before]
            ordered = self.newest_first(ids, mailbox.messages)
            return page.answer(ordered, lambda i: mailbox.rest_view(mailbox.messages[i].message, fields))

    # ---- shared with drafts ----------------------------------------------------------------------

    def search_failure(self) -> Response | None:
        """The answer of a failing ``metadata_pair`` search (:attr:`Modes.metadata_search_failure`)."""
        status = self._modes.metadata_search_failure
        if status is None:
            return None
        return error(status, _SEARCH_FAILURE_TYPES.get(status, "api_error"), "metadata search failed")

    def findable(self, ids: list[str], store: Mapping[str, Stored]) -> list[str]:
        """``ids`` a lagging metadata index already holds (:attr:`Modes.metadata_search_lag_seconds`)."""
        lag = self._modes.metadata_search_lag_seconds
        if lag <= 0:
            return ids
        now = self._mailbox.now()
        return [i for i in ids if now - store[i].entered_at >= lag]

    def newest_first(self, ids: list[str], store: Mapping[str, Stored]) -> list[str]:
        """``ids`` (in arrival order) in listing order: :attr:`Modes.listing_order`."""
        if self._modes.listing_order == "date":
            return sorted(ids, key=lambda i: (store[i].message["date"], store[i].seq), reverse=True)
        return ids[::-1]

    # ---- PUT -------------------------------------------------------------------------------------

    def _update(self, request: Request, grant_id: str, message_id: str) -> Response:
        payload, parsed = request.json
        if not parsed or not isinstance(payload, dict):
            return invalid("request body must be a JSON object")
        unknown = sorted(set(payload) - {"folders", "unread", "starred", "metadata"})
        if unknown:
            return invalid(f"cannot update {', '.join(unknown)}: only folders, unread, starred, metadata")
        for flag in ("unread", "starred"):
            if flag in payload and not isinstance(payload[flag], bool):
                return invalid(f"`{flag}` must be true or false")
        if "metadata" in payload and (problem := metadata_problem(payload["metadata"])) is not None:
            return invalid(problem)
        mailbox = self._mailbox
        with mailbox.lock:
            message = mailbox.locked_message(grant_id, message_id)
            if message is None:
                return not_found(f"message {message_id!r}")
            if "folders" in payload:
                ids = payload["folders"]
                names = [mailbox.folder_name(grant_id, f) for f in ids] if isinstance(ids, list) else [None]
                if not names or None in names or "drafts" in names:
                    return invalid(
                        "`folders` must be a non-empty list of this grant's folder ids (GET /folders)"
                    )
                message["folders"] = list(dict.fromkeys(names))
            for flag in ("unread", "starred"):
                if flag in payload:
                    message[flag] = payload[flag]
            if "metadata" in payload:
                self._reindex(message, payload["metadata"])
            updated = copy.deepcopy(message)
            data = mailbox.rest_view(message, "standard")
        self._updated(updated)
        return ok(data)

    def _reindex(self, message: Json, metadata: Json) -> None:
        # PUT replaces the whole metadata object: the old indexed pairs stop finding the message.
        index = self._mailbox.metadata_index
        for key, value in message["metadata"].items():
            if key in INDEXED_METADATA_KEYS:
                ids = index.get((message["grant_id"], key, value), [])
                if message["id"] in ids:
                    ids.remove(message["id"])
        message["metadata"] = dict(metadata)
        for key, value in metadata.items():
            if key in INDEXED_METADATA_KEYS:
                index.setdefault((message["grant_id"], key, value), []).append(message["id"])
