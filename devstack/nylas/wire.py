"""What every resource of the emulator writes and reads on the wire: requests, answers, errors, pages.

Nylas answers every call with the same envelope (https://developer.nylas.com/docs/api/v3/):
``{"request_id", "data"}`` on success, ``{"request_id", "error": {"type", "message"}}`` on failure,
lists paginated with ``next_cursor`` / ``page_token``. Writing it once here keeps every resource's
answers alike, as Nylas' are.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

Json = dict[str, Any]

DEFAULT_LIST_LIMIT = 50
"""``limit`` of a list call that gives none (Nylas: 50)."""

MAX_LIST_LIMIT = 200
"""Largest ``limit`` Nylas accepts on a list call."""

_CURSOR_PREFIX = "offset:"


@dataclass(frozen=True)
class Response:
    """One answer: status, body bytes and headers (``Content-Length`` is added by the server)."""

    status: int
    body: bytes
    headers: Mapping[str, str]


@dataclass(frozen=True)
class Request:
    """One API request as the resources see it.

    Attributes
    ----------
    method : str
        Upper-case HTTP method.
    path : str
        The path as received (percent-encoded), without the query string: what faults match on.
    segments : list of str
        The path's segments, percent-decoded (an IMAP-style id may hold ``/``).
    query : mapping
        ``parse_qs`` of the query string.
    headers : mapping
        Request headers, names lower-cased.
    body : bytes
        The raw body.
    """

    method: str
    path: str
    segments: list[str]
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes = b""

    @cached_property
    def json(self) -> tuple[Any, bool]:
        """The body parsed as JSON and whether it parsed."""
        return parse_json(self.body)

    def param(self, name: str, default: str | None = None) -> str | None:
        """The first value of query parameter ``name``."""
        return self.query.get(name, [default])[0]


def request_id() -> str:
    return str(uuid.uuid4())


def json_response(status: int, obj: Any, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})})


def ok(data: Any, status: int = 200, **extra: Any) -> Response:
    """A Nylas success answer: ``{"request_id", **extra, "data"}``."""
    return json_response(status, {"request_id": request_id(), **extra, "data": data})


def error(
    status: int,
    error_type: str,
    message: str,
    *,
    provider_error: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """A Nylas error answer: ``{"request_id", "error": {"type", "message"[, "provider_error"]}}``."""
    body: Json = {"type": error_type, "message": message}
    if provider_error is not None:
        body["provider_error"] = dict(provider_error)
    return json_response(status, {"request_id": request_id(), "error": body}, headers)


def invalid(message: str) -> Response:
    """The 400 Nylas answers for a request it cannot accept."""
    return error(400, "invalid_request_error", message)


def not_found(what: str) -> Response:
    return error(404, "not_found_error", f"{what} not found")


def parse_json(body: bytes) -> tuple[Any, bool]:
    try:
        return json.loads(body), True
    except ValueError:
        return None, False


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode()).decode()


def decode_cursor(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("page_token is not a cursor from this server") from exc
    if not text.startswith(_CURSOR_PREFIX) or not text[len(_CURSOR_PREFIX) :].isdigit():
        raise ValueError("page_token is not a cursor from this server")
    return int(text[len(_CURSOR_PREFIX) :])


@dataclass(frozen=True)
class Page:
    """``limit`` and ``page_token`` of a list call, validated (a :class:`ValueError` says why not)."""

    limit: int
    offset: int

    @classmethod
    def of(cls, request: Request) -> Page:
        limit = int(request.param("limit", str(DEFAULT_LIST_LIMIT)) or DEFAULT_LIST_LIMIT)
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIST_LIMIT}")
        token = request.param("page_token")
        return cls(limit, decode_cursor(token) if token is not None else 0)

    def answer(self, ids: Sequence[str], render: Callable[[str], Json]) -> Response:
        """The page of ``ids`` (in listing order) with its ``next_cursor``; only the page is rendered."""
        page = [render(i) for i in ids[self.offset : self.offset + self.limit]]
        more = self.offset + self.limit < len(ids)
        return json_response(
            200,
            {
                "request_id": request_id(),
                "data": page,
                "next_cursor": encode_cursor(self.offset + self.limit) if more else None,
            },
        )
