"""Reading the mailbox: ``GET .../messages/{id}``, ``GET .../messages``, ``GET .../threads/{id}``.

Sources: https://developer.nylas.com/docs/reference/api/messages/get-messages-id/,
https://developer.nylas.com/docs/reference/api/messages/get-messages/ (``limit`` 50 by default,
200 at most, ``next_cursor`` / ``page_token``; filters ``thread_id``, ``received_after``,
``received_before``, ``metadata_pair``), https://developer.nylas.com/docs/reference/api/threads/ and
https://developer.nylas.com/docs/dev-guide/metadata/ ("You can't create a query that includes both a
provider and metadata filter").

List order: Nylas documents none (a Nylas staff post says newest first). The emulator lists newest
first *by arrival in the mailbox*, never by ``date``: ``date`` is sender-supplied and can be skewed,
so a product that orders by it is caught here. A thread's ``message_ids`` are in arrival order.
"""

from __future__ import annotations

from devstack.nylas.mailbox import MESSAGE_FIELDS, Mailbox, parse_metadata_pair, select_fields
from devstack.nylas.wire import Json, Page, Request, Response, invalid, not_found, ok


class Messages:
    """The read routes of messages and threads."""

    def __init__(self, mailbox: Mailbox) -> None:
        self._mailbox = mailbox

    def route(self, request: Request, grant: Json, rest: list[str]) -> Response | None:
        """Answer the request if it is one of these routes (``rest``: the path after the grant)."""
        if request.method != "GET" or not rest:
            return None
        if rest[0] == "messages":
            fields = request.param("fields", "standard") or "standard"
            if fields not in MESSAGE_FIELDS:
                return invalid(f"`fields` must be one of {', '.join(sorted(MESSAGE_FIELDS))}")
            if len(rest) == 1:
                return self._list(request, grant["id"], fields)
            if len(rest) == 2:
                return self._get(grant["id"], rest[1], fields)
        if rest[0] == "threads" and len(rest) == 2:
            return self._thread(grant["id"], rest[1])
        return None

    def _get(self, grant_id: str, message_id: str, fields: str) -> Response:
        with self._mailbox.lock:
            message = self._mailbox.locked_message(grant_id, message_id)
            data = select_fields(message, fields) if message is not None else None
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
        metadata_pair = request.param("metadata_pair")
        try:
            # received_after / received_before (Unix seconds): on the message's arrival in the mailbox.
            received_after = float(request.param("received_after", "-inf") or "-inf")
            received_before = float(request.param("received_before", "inf") or "inf")
            page = Page.of(request)
            indexed = parse_metadata_pair(metadata_pair) if metadata_pair is not None else None
        except ValueError as exc:
            return invalid(f"invalid query parameter: {exc}")
        if indexed is not None and thread_id is not None:
            # Nylas: "You can't create a query that includes both a provider and metadata filter".
            return invalid("metadata_pair cannot be combined with a provider filter (thread_id)")
        mailbox = self._mailbox
        with mailbox.lock:
            if indexed is not None:
                ids = mailbox.metadata_index.get((grant_id, *indexed), [])
            elif thread_id is not None:
                thread = mailbox.threads.get(thread_id)
                ids = thread.message_ids if thread is not None and thread.grant_id == grant_id else []
            else:
                ids = [i for i, s in mailbox.messages.items() if s.message["grant_id"] == grant_id]
            if "received_after" in request.query or "received_before" in request.query:
                ids = [i for i in ids if received_after <= mailbox.messages[i].arrived_at < received_before]
            # Newest first by arrival: ``ids`` are in arrival order.
            return page.answer(ids[::-1], lambda i: select_fields(mailbox.messages[i].message, fields))
