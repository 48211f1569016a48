"""Attachments as Nylas keeps them: listed on messages, downloaded by id, and sent as JSON or multipart.

Sources: https://developer.nylas.com/docs/v3/email/attachments/ (messages list ``attachments`` with
``id``, ``filename``, ``content_type``, ``size``, ``content_id``, ``is_inline``; ``GET
/v3/grants/{grant}/attachments/{id}/download?message_id=…`` returns the bytes, ``GET
…/attachments/{id}?message_id=…`` the metadata; the JSON schema's whole request at most 3 MB, the
multipart schema's 25 MB) and the rate-limits page (10 multipart sends per grant and second, against
200 JSON ones). Nylas does not document the status of a request over a size limit: the emulator answers
``413`` with ``invalid_request_error``, which no client may read as "sent".

The listed ``size`` is the sender's word in real mail: :meth:`Files.attach` takes a ``listed_size`` to
make it lie, as a test of a reader that must count the bytes it reads.
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from devstack.nylas.wire import Json, Request, Response, error, invalid, not_found, ok, parse_json

JSON_REQUEST_LIMIT_BYTES = 3_000_000
"""The largest JSON send or draft body Nylas takes (the whole request; here its body)."""
MULTIPART_REQUEST_LIMIT_BYTES = 25_000_000
"""The largest ``multipart/form-data`` send or draft body."""
MULTIPART_SENDS_PER_SECOND = 10
"""Per grant: more multipart sends than this within one second (emulator clock) are answered ``429``."""


@dataclass(frozen=True)
class StoredFile:
    """One attachment's bytes and the message it belongs to."""

    grant_id: str
    message_id: str
    metadata: Json
    content: bytes


class Files:
    """Every attachment's bytes, by attachment id; cleared with the mailbox."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.stored: dict[str, StoredFile] = {}
        self.multipart_sent: dict[str, list[float]] = {}

    def attach(self, grant_id: str, message_id: str, files: Sequence[Mapping[str, Any]]) -> list[Json]:
        """Keep ``files`` (``filename``, ``content_type``, ``content`` bytes; optional ``content_id``,
        ``is_inline``, ``listed_size``) for ``message_id``; the message's ``attachments`` listing."""
        listing = []
        for file in files:
            content = bytes(file["content"])
            metadata: Json = {
                "id": f"att-{uuid.uuid4().hex[:16]}",
                "grant_id": grant_id,
                "filename": str(file.get("filename", "")),
                "content_type": str(file.get("content_type", "application/octet-stream")),
                "size": int(file.get("listed_size", len(content))),
                "is_inline": bool(file.get("is_inline", False)),
            }
            if file.get("content_id"):
                metadata["content_id"] = str(file["content_id"])
            self.stored[metadata["id"]] = StoredFile(grant_id, message_id, dict(metadata), content)
            listing.append(metadata)
        return listing

    def forget(self, attachment_id: str) -> None:
        """The provider lost the file (a message deleted at the source): its download is a ``404``."""
        self.stored.pop(attachment_id, None)

    def route(self, request: Request, grant: Json, rest: list[str]) -> Response | None:
        """``GET attachments/{id}`` and ``GET attachments/{id}/download``, both with ``message_id``."""
        if request.method != "GET" or not rest or rest[0] != "attachments" or len(rest) not in (2, 3):
            return None
        if len(rest) == 3 and rest[2] != "download":
            return None
        message_id = request.param("message_id")
        if not message_id:
            return invalid("`message_id` is required")
        stored = self.stored.get(rest[1])
        if stored is None or stored.grant_id != grant["id"] or stored.message_id != message_id:
            return not_found(f"attachment {rest[1]!r}")
        if len(rest) == 2:
            return ok(stored.metadata)
        headers = {
            "Content-Type": stored.metadata["content_type"],
            "Content-Disposition": "attachment",
        }
        return Response(200, stored.content, headers)


@dataclass(frozen=True)
class SendBody:
    """A send or draft request's body as understood: its message fields with ``attachments`` (each
    ``filename``, ``content_type``, ``content`` base64), how it came, or why it is refused."""

    payload: Any
    parsed: bool
    encoding: str = "json"
    refused: Response | None = None


def too_large(limit: int, size: int, encoding: str) -> Response:
    return error(413, "invalid_request_error", f"{encoding} request of {size} bytes: Nylas takes {limit}")


def read_send_body(request: Request) -> SendBody:
    """The body of a send or a draft, JSON or ``multipart/form-data``, checked against Nylas' limits."""
    content_type = request.headers.get("content-type", "application/json")
    if content_type.lower().startswith("multipart/form-data"):
        if len(request.body) > MULTIPART_REQUEST_LIMIT_BYTES:
            return SendBody(
                None,
                False,
                "multipart",
                too_large(MULTIPART_REQUEST_LIMIT_BYTES, len(request.body), "multipart"),
            )
        return _multipart(content_type, request.body)
    if len(request.body) > JSON_REQUEST_LIMIT_BYTES:
        return SendBody(None, False, "json", too_large(JSON_REQUEST_LIMIT_BYTES, len(request.body), "JSON"))
    payload, parsed = parse_json(request.body)
    if parsed and isinstance(payload, dict) and payload.get("attachments") is not None:
        problem = _attachments_problem(payload["attachments"])
        if problem:
            return SendBody(payload, parsed, "json", invalid(problem))
    return SendBody(payload, parsed, "json")


def _attachments_problem(attachments: Any) -> str:
    if not isinstance(attachments, list):
        return "`attachments` must be a list"
    for index, entry in enumerate(attachments):
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            return f"`attachments[{index}]` needs a filename"
        if not isinstance(entry.get("content"), str):
            return f"`attachments[{index}].content` must be base64"
        try:
            base64.b64decode(entry["content"], validate=True)
        except (binascii.Error, ValueError):
            return f"`attachments[{index}].content` is not base64"
    return ""


def _multipart(content_type: str, body: bytes) -> SendBody:
    parsed = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    if not parsed.is_multipart():
        return SendBody(None, False, "multipart", invalid("multipart body without parts"))
    message: Any = None
    files = []
    for part in parsed.iter_parts():
        name = part.get_param("name", header="content-disposition")
        content = part.get_payload(decode=True) or b""
        if name == "message":
            message, ok_ = parse_json(content)
            if not ok_ or not isinstance(message, dict):
                return SendBody(None, False, "multipart", invalid("the `message` part must be a JSON object"))
        elif part.get_filename() is not None:
            files.append(
                {
                    "filename": part.get_filename(),
                    "content_type": part.get_content_type(),
                    "content": base64.b64encode(content).decode(),
                }
            )
    if message is None:
        return SendBody(None, False, "multipart", invalid("multipart send without a `message` part"))
    return SendBody({**message, "attachments": files}, True, "multipart")


def decoded(payload: Mapping[str, Any]) -> list[Json]:
    """The files of a send's payload as :meth:`Files.attach` takes them."""
    return [
        {
            "filename": a.get("filename", ""),
            "content_type": a.get("content_type", "application/octet-stream"),
            "content": base64.b64decode(a.get("content", "")),
            **({"content_id": a["content_id"], "is_inline": True} if a.get("content_id") else {}),
        }
        for a in payload.get("attachments") or []
        if isinstance(a, dict)
    ]
