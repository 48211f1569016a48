"""A Nylas message as the rules read it: one typed, frozen value, converted once at the port.

Why one conversion: Nylas answers JSON, and what a field holds is the
sender's or a provider's to choose (a ``from`` that is no list, a header
without a name, a ``date`` as text). The mailbox adapter (``replyonce.adapters.nylas``),
the webhook's notification (``replyonce.rules.notification``) and the in-memory fake
(``tests/fakes.py``) hand every message object to :func:`read_message`, and
every rule (``replyonce.rules.screening``, ``replyonce.rules.plan``, ``replyonce.rules.recipients``
...) reads the :class:`Mail` it returns: addresses parsed, headers named in
lower case, folders as strings, the date as an integer.

Malformed input is never refused here, nor lost: a field of the wrong shape
reads as empty (no sender, no header, no folder, date ``0``), exactly what the
rules made of it before, so the message still gets the answer the rules give
an empty field — a message with no readable ``From`` is skipped as
``NO_SENDER``, a log line with its reason. Only something that is not a JSON
object at all is no message (:func:`read_message` returns ``None``), and the
listings drop it as they always did.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Address:
    """One participant of ``from``, ``to``, ``cc``, ``bcc`` or ``reply_to``.

    Attributes
    ----------
    email:
        The address as the rules compare it: stripped, angle brackets dropped (``"<>"`` is the null
        path, RFC 5321 §4.5.5), lower case; ``""`` when the participant has no string ``email``.
    name:
        The display name as written (``""`` when there is none or it is no string).
    written:
        The ``email`` exactly as Nylas gave it (``""`` when no string): what a reply's recipient is parsed
        from (``replyonce.rules.recipients.single_mailbox``), which refuses what the comparison form forgives.
    """

    email: str = ""
    name: str = ""
    written: str = ""


@dataclass(frozen=True)
class ListedFile:
    """One entry of a message's ``attachments`` as Nylas lists it (the strings as written, ``""`` when none
    is given; ``replyonce.rules.attachments`` makes them safe to show)."""

    id: str
    filename: str = ""
    content_type: str = ""
    size: int = 0
    inline: bool = False
    content_id: str = ""


@dataclass(frozen=True)
class Mail:
    """A Nylas message (or draft) object, read once (:func:`read_message`).

    Each field is what the rules made of the JSON field of the same name
    (``from_`` for ``from``); ``headers`` are ``(name, value)`` pairs, both
    stripped and lower case, in order (Nylas includes them only when asked,
    ``fields=include_headers``: a notification's payload has none).
    """

    id: str = ""
    grant_id: str = ""
    thread_id: str = ""
    object: str = ""
    subject: str = ""
    body: str | None = None
    """``None`` when the object has no string ``body`` (the agent is then shown the ``snippet``)."""
    snippet: str = ""
    date: int = 0
    from_: tuple[Address, ...] = ()
    to: tuple[Address, ...] = ()
    cc: tuple[Address, ...] = ()
    bcc: tuple[Address, ...] = ()
    reply_to: tuple[Address, ...] = ()
    folders: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    metadata: Mapping[str, str] = field(default=_EMPTY)
    """The string pairs of ``metadata`` (only the API sets them; every key ReplyOnce reads is a string)."""
    attachments: tuple[ListedFile, ...] = ()
    """The listed files with a string ``id`` (one without cannot be downloaded)."""

    @property
    def sender(self) -> str:
        """The ``From`` address (:attr:`Address.email`), ``""`` when there is none."""
        return self.from_[0].email if self.from_ else ""

    def header(self, name: str) -> tuple[str, ...]:
        """Every value of header ``name`` (any case), in order."""
        wanted = name.lower()
        return tuple(value for key, value in self.headers if key == wanted)

    @property
    def header_names(self) -> frozenset[str]:
        """The names of the headers present, lower case."""
        return frozenset(key for key, _ in self.headers)

    def addresses(self, *fields: str) -> tuple[Address, ...]:
        """The participants of ``fields`` (``"from"``, ``"to"``, ``"cc"``...), in that order."""
        return tuple(a for name in fields for a in getattr(self, "from_" if name == "from" else name))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _address(participant: Any) -> Address:
    """A participant as :class:`Address`; one that is no object keeps its place, empty."""
    if not isinstance(participant, Mapping):
        return Address()
    written = _text(participant.get("email"))
    return Address(
        email=written.strip().strip("<>").strip().lower(),
        name=_text(participant.get("name")),
        written=written,
    )


def _addresses(value: Any) -> tuple[Address, ...]:
    return tuple(_address(p) for p in value) if isinstance(value, list) else ()


def _size(value: Any) -> int:
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return 0


def _files(value: Any) -> tuple[ListedFile, ...]:
    return tuple(
        ListedFile(
            id=entry["id"],
            filename=_text(entry.get("filename")),
            content_type=_text(entry.get("content_type")),
            size=_size(entry.get("size")),
            inline=entry.get("is_inline") is True,
            content_id=_text(entry.get("content_id")),
        )
        for entry in (value if isinstance(value, list) else [])
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), str) and entry["id"]
    )


def _headers(value: Any) -> tuple[tuple[str, str], ...]:
    return tuple(
        (str(h.get("name", "")).strip().lower(), str(h.get("value", "")).strip().lower())
        for h in (value if isinstance(value, list) else [])
        if isinstance(h, Mapping)
    )


def _metadata(value: Any) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        return _EMPTY
    return MappingProxyType({k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)})


def read_message(raw: Any) -> Mail | None:
    """``raw`` (a message or draft object of the Nylas API) as a :class:`Mail`; ``None`` when it is no
    object at all. Never raises: a field of the wrong shape reads as empty (the module docstring)."""
    if isinstance(raw, Mail):
        return raw
    if not isinstance(raw, Mapping):
        return None
    body = raw.get("body")
    folders = raw.get("folders")
    return Mail(
        id=_text(raw.get("id")),
        grant_id=_text(raw.get("grant_id")),
        thread_id=_text(raw.get("thread_id")),
        object=_text(raw.get("object")),
        subject=_text(raw.get("subject")),
        body=body if isinstance(body, str) else None,
        snippet=str(raw.get("snippet") or ""),
        date=_int(raw.get("date")),
        from_=_addresses(raw.get("from")),
        to=_addresses(raw.get("to")),
        cc=_addresses(raw.get("cc")),
        bcc=_addresses(raw.get("bcc")),
        reply_to=_addresses(raw.get("reply_to")),
        folders=tuple(f for f in folders if isinstance(f, str)) if isinstance(folders, list) else (),
        headers=_headers(raw.get("headers")),
        metadata=_metadata(raw.get("metadata")),
        attachments=_files(raw.get("attachments")),
    )


def read_messages(raw: Any) -> tuple[Mail, ...]:
    """Every object of a listing's ``data`` as :class:`Mail`; what is no object is no message."""
    return tuple(m for m in map(read_message, raw if isinstance(raw, list | tuple) else ()) if m is not None)
