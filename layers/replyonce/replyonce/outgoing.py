"""A reply's attachments on the way out: the limits, the reference the intent keeps, the request on the wire.

Why the intent keeps a reference and not the bytes: a DynamoDB item holds
400 KB and a reply may carry 25 MB. The stored request names each file by
its SHA-256 (:func:`file_reference`); the bytes are kept in the stack's
bucket under the intent and that digest (``replyonce.adapters.reply_files``), written
before the intent is stored, read back for every attempt. :func:`wire` turns
the stored request and those bytes into what Nylas is sent — the same bytes
on every attempt, so a replay under the same ``Idempotency-Key`` is the same
request:

- below Nylas' 3 MB JSON limit (:data:`replyonce.rules.outbox.MAX_REQUEST_BYTES`): JSON, each file base64 in
  ``attachments``;
- up to 25 MB (:data:`MAX_MULTIPART_BYTES`): ``multipart/form-data``, the message as a ``message`` part
  and each file a part of its own, under a boundary derived from the request (never random);
- larger: never sent (:func:`encoding_of` says so; the core hands the burst off).

Sources: https://developer.nylas.com/docs/v3/email/attachments/ and the send-attachments cookbook
("Under 3MB: application/json with base64; 3MB to 25MB: multipart/form-data"; the 3 MB is the whole
request).
"""

import base64
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol


class ReplyFile(Protocol):
    """What a reply's file is here (``replyonce.agent.ReplyAttachment``, which builds on this module)."""

    content: bytes
    filename: str
    content_type: str


NYLAS_MULTIPART_REQUEST_LIMIT_BYTES = 25_000_000
"""Nylas' limit on a ``multipart/form-data`` send or draft: 25 MB, the whole request (decimal, the smaller
reading of "25MB")."""
MULTIPART_HEAD_ALLOWANCE_BYTES = 8_192
"""What the request line and headers take of that limit, counted as for JSON (``replyonce.rules.outbox``)."""
MAX_MULTIPART_BYTES = NYLAS_MULTIPART_REQUEST_LIMIT_BYTES - MULTIPART_HEAD_ALLOWANCE_BYTES
"""The largest multipart body a reply may have."""
MAX_ATTACHMENT_BYTES = NYLAS_MULTIPART_REQUEST_LIMIT_BYTES - 1_000_000
"""The most a reply's files may weigh together: the multipart limit less a megabyte for the message part
(its HTML, recipients, metadata). A reply whose whole request is still over the limit is handed off."""
MAX_REPLY_ATTACHMENTS = 20
"""Files per reply: more is not an answer a person reads (and each is a part Nylas must take)."""
MAX_FILENAME_CHARACTERS = 255
"""The longest file name most file systems (and mail clients saving it) take."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTENT_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


class Encoding(StrEnum):
    """How a request goes to Nylas."""

    JSON = "json"
    MULTIPART = "multipart"
    TOO_LARGE = "too_large"


def refusal(attachments: Sequence[ReplyFile]) -> str:
    """Why Nylas cannot be sent these files (``""``: it can): the one check of a reply's attachments.

    Refused rather than repaired: a name the agent gave with a path or a
    control character, an empty file or an unknown type is a bug of the agent
    that a silent fix would hide from it.
    """
    if len(attachments) > MAX_REPLY_ATTACHMENTS:
        return f"{len(attachments)} attachments: a reply carries at most {MAX_REPLY_ATTACHMENTS}"
    total = 0
    for index, file in enumerate(attachments):
        if not all(hasattr(file, name) for name in ("content", "filename", "content_type")):
            return f"attachment {index} is a {type(file).__name__}, not a ReplyAttachment"
        if not isinstance(file.content, bytes | bytearray) or not file.content:
            return f"attachment {index} ({file.filename!r}) is empty: a file needs at least one byte"
        name = file.filename
        if not isinstance(name, str) or not name.strip():
            return f"attachment {index} has no file name"
        if "/" in name or "\\" in name or _CONTROL.search(name) or name in (".", ".."):
            return f"attachment {index}: the file name {name!r} has a path separator or a control character"
        if len(name) > MAX_FILENAME_CHARACTERS:
            return f"attachment {index}: the file name is over {MAX_FILENAME_CHARACTERS} characters"
        if not isinstance(file.content_type, str) or not _CONTENT_TYPE.match(file.content_type):
            return f"attachment {index} ({name!r}): {file.content_type!r} is not a MIME type (type/subtype)"
        total += len(file.content)
    if total > MAX_ATTACHMENT_BYTES:
        return (
            f"the attachments weigh {total} bytes together: Nylas sends at most {MAX_ATTACHMENT_BYTES} "
            "(25 MB a request, less the message itself); link to a larger file instead"
        )
    return ""


def digest(content: bytes) -> str:
    """SHA-256 (hex) of a file: its address in the bucket, and the check of what is read back."""
    return hashlib.sha256(content).hexdigest()


def file_reference(file: ReplyFile) -> dict[str, Any]:
    """What the stored request holds for ``file``: no bytes."""
    return {
        "content_type": file.content_type,
        "filename": file.filename,
        "sha256": digest(bytes(file.content)),
        "size": len(file.content),
    }


def references(request: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The file references a stored request names (none for a reply without files)."""
    found = request.get("attachments")
    return tuple(r for r in found if isinstance(r, dict)) if isinstance(found, list) else ()


def _serialise(request: Mapping[str, Any]) -> str:
    # As replyonce.rules.outbox serialises a request: the same bytes for the same request on every attempt.
    return json.dumps(request, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _json_entry(reference: Mapping[str, Any], content: str) -> dict[str, Any]:
    return {"content": content, "content_type": reference["content_type"], "filename": reference["filename"]}


def _message_part(request: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k != "attachments"}


def json_bytes(request: Mapping[str, Any]) -> int:
    """The exact size of the JSON request :func:`wire` sends, computed from the references alone.

    Base64 needs no JSON escaping, so each file adds exactly ``4 * ceil(size / 3)`` characters to its
    entry written with an empty ``content``.
    """
    refs = references(request)
    if not refs:
        return len(_serialise(request).encode())
    shell = {**request, "attachments": [_json_entry(r, "") for r in refs]}
    return len(_serialise(shell).encode()) + sum(4 * math.ceil(int(r["size"]) / 3) for r in refs)


def _boundary(request_text: str) -> str:
    return "replyonce-" + hashlib.sha256(request_text.encode()).hexdigest()[:40]


def _quoted(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _part_head(boundary: str, name: str, content_type: str, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"'
    if filename is not None:
        disposition += f'; filename="{_quoted(filename)}"'
    return (
        f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: {content_type}\r\n\r\n"
    ).encode()


def multipart_bytes(request: Mapping[str, Any]) -> int:
    """The exact size of the multipart body :func:`wire` sends, from the references alone."""
    boundary = _boundary(_serialise(request))
    size = len(_part_head(boundary, "message", "application/json")) + len(
        _serialise(_message_part(request)).encode()
    )
    for index, ref in enumerate(references(request)):
        head = _part_head(boundary, f"file{index}", ref["content_type"], ref["filename"])
        size += 2 + len(head) + int(ref["size"])  # the CRLF that ends the part before
    return size + len(f"\r\n--{boundary}--\r\n".encode())


def encoding_of(request: Mapping[str, Any], json_limit: int) -> Encoding:
    """How the request goes: JSON when its whole body fits ``json_limit``, multipart within 25 MB,
    else not at all. A request without files is always JSON (and sized as JSON)."""
    if json_bytes(request) <= json_limit:
        return Encoding.JSON
    if references(request) and multipart_bytes(request) <= MAX_MULTIPART_BYTES:
        return Encoding.MULTIPART
    return Encoding.TOO_LARGE


@dataclass(frozen=True)
class Wire:
    """A request as sent: its body and ``Content-Type``."""

    body: bytes
    content_type: str
    encoding: Encoding


class FileMismatch(ValueError):
    """The bytes given for a reference are not the file it names (a digest or a size that differs)."""


def wire(request_text: str, files: Mapping[str, bytes], json_limit: int) -> Wire:
    """The request Nylas is sent for the stored ``request_text``, its files' bytes by digest.

    A request without files is sent as stored, byte for byte.

    Raises
    ------
    FileMismatch
        A file is missing from ``files`` or is not the bytes its reference names.
    """
    request = json.loads(request_text)
    refs = references(request)
    if not refs:
        return Wire(request_text.encode(), "application/json", Encoding.JSON)
    contents = []
    for ref in refs:
        content = files.get(ref["sha256"])
        if content is None or len(content) != int(ref["size"]) or digest(content) != ref["sha256"]:
            raise FileMismatch(f"the bytes of {ref['filename']!r} are not the file the intent names")
        contents.append(content)
    encoding = encoding_of(request, json_limit)
    if encoding is Encoding.JSON:
        entries = [_json_entry(r, base64.b64encode(c).decode()) for r, c in zip(refs, contents, strict=True)]
        body = _serialise({**request, "attachments": entries}).encode()
        return Wire(body, "application/json", encoding)
    if encoding is Encoding.TOO_LARGE:
        raise FileMismatch("the request is larger than Nylas takes; it is never sent")
    boundary = _boundary(_serialise(request))
    parts = [_part_head(boundary, "message", "application/json"), _serialise(_message_part(request)).encode()]
    for index, (ref, content) in enumerate(zip(refs, contents, strict=True)):
        parts += [
            b"\r\n",
            _part_head(boundary, f"file{index}", ref["content_type"], ref["filename"]),
            content,
        ]
    parts.append(f"\r\n--{boundary}--\r\n".encode())
    return Wire(b"".join(parts), f"multipart/form-data; boundary={boundary}", encoding)
