"""A customer's attachments on the way in: listed from the message Nylas gives, read only when the agent asks.

Why lazily: most replies need no file, a message may carry a hundred, and
each read is a download inside the agent's time. The listing costs nothing
(the thread read already carries each message's ``attachments``); a read is
one ``GET …/attachments/{id}/download?message_id=…``, streamed and cut off at
the cap by the bytes actually read — the listed ``size`` is the sender's word
and may differ (``docs/agents.md``, "Attachments").
"""

import dataclasses
import re
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from replyonce.agent import (
    Attachment,
    AttachmentTooLarge,
    AttachmentUnavailable,
    Conversation,
    Message,
)
from replyonce.mail import Mail
from replyonce.observability import count, logger

MAX_FILENAME_CHARACTERS = 255
_PATH_SEPARATORS = re.compile(r"[/\\]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
)


def safe_filename(name: Any) -> str:
    """The file name to show: what follows the last path separator, control characters removed, at most
    255 characters (the extension kept). ``""`` when nothing is left."""
    text = name if isinstance(name, str) else ""
    text = _CONTROL.sub("", _PATH_SEPARATORS.split(text)[-1]).strip()
    if text in (".", ".."):
        return ""
    if len(text) > MAX_FILENAME_CHARACTERS:
        stem, dot, extension = text.rpartition(".")
        keep = extension[:16] if dot else ""
        text = (stem if dot else text)[: MAX_FILENAME_CHARACTERS - len(keep) - len(dot)] + dot + keep
    return text


def _content_type(value: Any) -> str:
    text = value.split(";")[0].strip().lower() if isinstance(value, str) else ""
    return text if "/" in text and not _CONTROL.search(text) else "application/octet-stream"


def listed_attachments(message: Mail) -> tuple[Attachment, ...]:
    """The message's ``attachments`` as Nylas lists them (``id``, ``filename``, ``content_type``,
    ``size``, ``content_id``, ``is_inline``), with no reader: the agent's view, built without a request.

    An entry without a string ``id`` cannot be downloaded and is left out (``replyonce.mail``).
    """
    if not message.id:
        return ()
    return tuple(
        Attachment(
            id=listed.id,
            message_id=message.id,
            filename=safe_filename(listed.filename),
            content_type=_content_type(listed.content_type),
            size=listed.size,
            inline=listed.inline,
            content_id=_CONTROL.sub("", listed.content_id.strip("<> ")),
        )
        for listed in message.attachments
    )


def sniffed_type(content: bytes) -> str:
    """The type the bytes themselves show (their first bytes), or ``application/octet-stream``.

    What to trust before handing a file to a model or a parser: a listed
    ``content_type`` is the sender's claim (``invoice.pdf`` may be a zip).
    """
    for magic, kind in _MAGIC:
        if content.startswith(magic):
            return kind
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


class Download(Protocol):
    """``Mailbox.download_attachment``: at most ``max_bytes`` of one file within ``timeout_seconds``."""

    def __call__(
        self, grant_id: str, attachment_id: str, message_id: str, max_bytes: int, timeout_seconds: float
    ) -> bytes: ...


class AttachmentReader:
    """Reads attachments for one agent call: each file once, within the caps and the agent's deadline.

    Parameters
    ----------
    download:
        The mailbox's download (``replyonce.adapters.nylas.NylasMailbox.download_attachment``).
    grant_id:
        The grant whose mailbox holds the files.
    max_bytes:
        ``attachment_max_bytes``: the most one file may be.
    max_record_bytes:
        ``attachments_max_bytes_per_record``: the most all files read for one record may be together.
    deadline:
        ``monotonic`` time at which the agent's call is abandoned: no read outlives it.
    """

    def __init__(
        self,
        download: Download,
        grant_id: str,
        *,
        max_bytes: int,
        max_record_bytes: int,
        deadline: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._download = download
        self._grant_id = grant_id
        self._max_bytes = max_bytes
        self._max_record_bytes = max_record_bytes
        self._deadline = deadline
        self._monotonic = monotonic
        self._read: dict[tuple[str, str], bytes] = {}
        self._used = 0
        # An agent may read files from threads of its own.
        self._lock = threading.Lock()

    def __call__(self, attachment: Attachment, max_bytes: int | None = None) -> bytes:
        slot = (attachment.message_id, attachment.id)
        asked = self._max_bytes if max_bytes is None else min(max_bytes, self._max_bytes)
        with self._lock:
            if slot in self._read:
                content = self._read[slot]
                if len(content) > asked:
                    name = attachment.filename or attachment.id
                    raise AttachmentTooLarge(f"{name!r} is over the {asked} bytes asked for")
                return content
            left = self._max_record_bytes - self._used
            cap = min(asked, left)
        seconds = self._deadline - self._monotonic()
        if left <= 0:
            count("AttachmentRefused")
            raise AttachmentTooLarge(
                f"{attachment.filename or attachment.id!r} not read: the record's files already took all of "
                f"attachments_max_bytes_per_record ({self._max_record_bytes} bytes)"
            )
        if seconds <= 0:
            raise AttachmentUnavailable(f"attachment {attachment.id}: no time left in the agent's call")
        try:
            content = self._download(self._grant_id, attachment.id, attachment.message_id, cap, seconds)
        except AttachmentTooLarge:
            if cap == left < asked:
                whose = (
                    f"what is left of attachments_max_bytes_per_record ({left} of {self._max_record_bytes})"
                )
            elif asked < self._max_bytes:
                whose = f"the {asked} bytes asked for"
            else:
                whose = f"attachment_max_bytes ({self._max_bytes})"
            logger.info(
                "attachment over its cap, not read",
                extra={"attachment_id": attachment.id, "message_id": attachment.message_id, "cap": cap},
            )
            count("AttachmentRefused")
            raise AttachmentTooLarge(
                f"{attachment.filename or attachment.id!r} is larger than {whose} bytes"
            ) from None
        with self._lock:
            if slot not in self._read:
                self._used += len(content)
                self._read[slot] = content
        count("AttachmentRead")
        return self._read[slot]


def _bound(message: Message, reader: AttachmentReader) -> Message:
    if not message.attachments:
        return message
    return dataclasses.replace(
        message, attachments=tuple(dataclasses.replace(a, reader=reader) for a in message.attachments)
    )


def readable(conversation: Conversation, reader: AttachmentReader) -> Conversation:
    """``conversation`` whose attachments read through ``reader`` (the same values otherwise)."""
    messages = {m.id: _bound(m, reader) for m in conversation.messages}
    return dataclasses.replace(
        conversation,
        messages=tuple(messages.values()),
        to_answer=tuple(messages.get(m.id, _bound(m, reader)) for m in conversation.to_answer),
        target=messages.get(conversation.target.id, _bound(conversation.target, reader)),
    )
