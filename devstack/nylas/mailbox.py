"""The emulated mailboxes: grants, messages, drafts, threads, folders and the metadata index.

Every resource reads and writes through :class:`Mailbox`. One lock guards all of it: the emulator is
small, and a single lock makes every check-and-set (an idempotency key and the send it reserves
above all) trivially atomic. Methods whose name starts with ``locked_`` expect the caller to hold
:attr:`Mailbox.lock`; the others take it themselves.

Messages are stored with their folders as *names* (``"inbox"``, ``"sent"``...), which is what the
test-facing views (:meth:`NylasEmulator.mailbox`, ``sent_messages``, the control routes) show; the
REST answers carry folder *ids*, as Nylas documents (:meth:`Mailbox.rest_view`).

Sources: the message object of https://developer.nylas.com/docs/reference/api/messages/, the thread
object of https://developer.nylas.com/docs/reference/api/threads/, metadata of
https://developer.nylas.com/docs/dev-guide/metadata/, the six system folders of
https://developer.nylas.com/docs/v3/agent-accounts/mailboxes/.
"""

from __future__ import annotations

import copy
import hashlib
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from devstack.nylas.attachments import Files
from devstack.nylas.modes import Modes
from devstack.nylas.wire import Json

MAX_METADATA_PAIRS = 50
MAX_METADATA_KEY_LENGTH = 40
MAX_METADATA_VALUE_LENGTH = 500
INDEXED_METADATA_KEYS = ("key1", "key2", "key3", "key4", "key5")
"""The reserved metadata keys Nylas indexes; only they can be used in ``metadata_pair``."""

BASIC_HEADER_NAMES = frozenset({"message-id", "in-reply-to", "references"})
"""Headers returned with ``fields=include_basic_headers`` (compared case-insensitively)."""

MESSAGE_FIELDS = frozenset(
    {"standard", "include_headers", "include_basic_headers", "include_tracking_options", "raw_mime"}
)
"""The documented values of ``fields=`` on message reads; anything else is a 400."""

SYNTHETIC_MESSAGE_ID_DOMAIN = "emulator.nylas"
"""Domain of the ``Message-ID`` header given to messages that arrive without one."""

SYSTEM_FOLDERS: dict[str, list[str]] = {
    "inbox": ["\\Inbox"],
    "sent": ["\\Sent"],
    "drafts": ["\\Drafts"],
    "trash": ["\\Trash"],
    "junk": ["\\Junk"],
    "archive": ["\\Archive"],
}
"""The six folders every Agent Account mailbox has, with their ``attributes`` (IMAP special-use
names, as Nylas gives system folders: https://developer.nylas.com/docs/reference/api/folders/)."""

INBOUND_FOLDERS = ("inbox", "junk", "trash", "archive")
"""Where :meth:`NylasEmulator.deliver_inbound` can file a message."""

RECEIVING_AUTHSERV = "mx.emulator.nylas"
"""The authserv-id of the ``Authentication-Results`` header the receiving provider stamps."""


def authentication_results(
    *,
    dmarc: str | None = "pass",
    dkim: str | None = None,
    dkim_domain: str | None = None,
    from_domain: str | None = None,
    spf: str | None = None,
    authserv: str = RECEIVING_AUTHSERV,
) -> str:
    """An ``Authentication-Results`` value as a receiving provider writes it (RFC 8601):
    ``mx.emulator.nylas; dkim=pass header.d=example.com; spf=pass; dmarc=pass header.from=example.com``.

    ``None`` leaves a method out (``dmarc=None``: no DMARC result at all, as a provider that does not
    evaluate it). The provider puts its header on top of the message's: the topmost one is its own,
    any lower one may be the sender's forgery (RFC 8601, section 5).
    """
    parts = [authserv]
    if dkim is not None:
        parts.append(f"dkim={dkim}" + (f" header.d={dkim_domain}" if dkim_domain else ""))
    if spf is not None:
        parts.append(f"spf={spf}")
    if dmarc is not None:
        parts.append(f"dmarc={dmarc}" + (f" header.from={from_domain}" if from_domain else ""))
    if len(parts) == 1:
        parts.append("none")
    return "; ".join(parts)


_TAG_RE = re.compile(r"<[^>]*>")


def folder_id(grant_id: str, name: str) -> str:
    """The opaque id of a grant's system folder ``name`` (stable, never equal to the name)."""
    return "fld-" + hashlib.sha256(f"{grant_id}\0{name}".encode()).hexdigest()[:20]


@dataclass
class Thread:
    id: str
    grant_id: str
    message_ids: list[str] = field(default_factory=list)
    draft_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Stored:
    """A message (or draft) in a mailbox, with when it arrived and which way it went."""

    # ``seq`` orders arrivals (finer than ``date``, which the sender supplies).
    seq: int
    message: Json
    # Real time the message appeared in the mailbox, for invariant checks and received_after/before.
    arrived_at: float = 0.0
    # Emulator time it appeared: what a lagging ``metadata_pair`` index counts from.
    entered_at: float = 0.0
    # Sent by the grant (a send, a sent draft) rather than received.
    outbound: bool = False


class Mailbox:
    """All mailbox state of one emulator.

    Parameters
    ----------
    now : callable
        The emulator's clock (Unix seconds), for grant creation times and message dates.
    modes : Modes or None
        The emulator's modes (those that shape what the mailbox shows: ``draft_date``,
        ``message_date``); ``None``: the defaults.
    """

    def __init__(self, now: Callable[[], float], modes: Modes | None = None) -> None:
        self.now = now
        self.modes = modes if modes is not None else Modes()
        self.lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        """Forget every grant, message and thread (call with the lock held, or before serving)."""
        self.grants: dict[str, Json] = {}
        # Folders a person made (Gmail labels, Outlook folders and rules), per grant, listed before the
        # system folders: a grant with many of them puts junk and trash on a later page of the listing.
        self.user_folders: dict[str, list[str]] = {}
        # Each grant's email aliases (GET /v3/grants/{id}?expose_aliases=true): not part of the grant
        # object, which "does not store them permanently".
        self.aliases: dict[str, list[str]] = {}
        self.messages: dict[str, Stored] = {}
        self.drafts: dict[str, Stored] = {}
        self.threads: dict[str, Thread] = {}
        # (grant id, reserved key, value) -> message ids in arrival order: metadata_pair lookups.
        self.metadata_index: dict[tuple[str, str, str], list[str]] = {}
        # (grant id, Message-ID header) -> message id: threads one email across several mailboxes.
        self.by_header_id: dict[tuple[str, str], str] = {}
        # Every attachment's bytes, by attachment id (GET .../attachments/{id}/download).
        self.files = Files()
        self._seq = 0

    # ---- grants ----------------------------------------------------------------------------------

    def add_grant(self, grant_id: str, email: str, name: str, provider: str = "nylas") -> Json:
        grant = {
            "id": grant_id,
            "email": email,
            "provider": provider,
            "grant_status": "valid",
            "name": name,
            "scope": [],
            "created_at": int(self.now()),
        }
        with self.lock:
            self.grants[grant_id] = grant
            return copy.deepcopy(grant)

    def locked_find_grant(self, segment: str) -> Json | None:
        """The grant a path segment names: its id or (as in Nylas) its email address."""
        grant = self.grants.get(segment)
        if grant is None:
            grant = next((g for g in self.grants.values() if g["email"].lower() == segment.lower()), None)
        return grant

    def find_grant(self, segment: str) -> Json | None:
        with self.lock:
            grant = self.locked_find_grant(segment)
            return copy.deepcopy(grant) if grant is not None else None

    def own_addresses(self, grant_id: str) -> list[str]:
        """The grant's address and its aliases (lower case), the addresses its people write from."""
        with self.lock:
            grant = self.locked_find_grant(grant_id)
            if grant is None:
                raise KeyError(f"unknown grant {grant_id!r}")
            return [grant["email"].lower(), *(a.lower() for a in self.aliases.get(grant["id"], []))]

    # ---- messages, drafts and threads ------------------------------------------------------------

    def locked_new_thread(self, grant_id: str, thread_id: str | None = None) -> Thread:
        thread = Thread(id=thread_id or f"thread-{uuid.uuid4().hex}", grant_id=grant_id)
        self.threads[thread.id] = thread
        return thread

    def locked_thread_for(self, grant_id: str, thread_id: str) -> Thread:
        """The grant's thread ``thread_id``, created when it does not exist yet (a queued send's)."""
        return self.threads.get(thread_id) or self.locked_new_thread(grant_id, thread_id)

    def locked_store(self, message: Json, thread: Thread, *, outbound: bool) -> None:
        # Arrival order is the order of ``messages`` (insertion) and of ``thread.message_ids``:
        # listings read it from there, so they cost O(thread), not O(mailbox), and never sort.
        self._seq += 1
        self.messages[message["id"]] = Stored(self._seq, message, time.time(), self.now(), outbound)
        thread.message_ids.append(message["id"])
        for key, value in message["metadata"].items():
            if key in INDEXED_METADATA_KEYS:
                self.metadata_index.setdefault((message["grant_id"], key, value), []).append(message["id"])
        own = header(message["headers"], "Message-ID")
        if own is not None:
            self.by_header_id.setdefault((message["grant_id"], own), message["id"])

    def locked_store_draft(self, draft: Json, thread: Thread) -> None:
        self._seq += 1
        self.drafts[draft["id"]] = Stored(self._seq, draft, time.time(), self.now(), outbound=True)
        thread.draft_ids.append(draft["id"])

    def locked_remove_draft(self, draft_id: str) -> None:
        stored = self.drafts.pop(draft_id)
        thread = self.threads.get(stored.message["thread_id"])
        if thread is not None and draft_id in thread.draft_ids:
            thread.draft_ids.remove(draft_id)

    def locked_message(self, grant_id: str, message_id: str) -> Json | None:
        """The grant's message ``message_id`` (the stored object, not a copy), or ``None``."""
        stored = self.messages.get(message_id)
        if stored is None or stored.message["grant_id"] != grant_id:
            return None
        return stored.message

    def locked_draft(self, grant_id: str, draft_id: str) -> Json | None:
        stored = self.drafts.get(draft_id)
        if stored is None or stored.message["grant_id"] != grant_id:
            return None
        return stored.message

    def write_from_mailbox(
        self,
        grant_id: str,
        reply_to_message_id: str,
        body: str,
        *,
        date: float | None = None,
        from_email: str | None = None,
        to: Sequence[str] | None = None,
    ) -> Json:
        """A person's reply from the grant's own mailbox (its web mail or mail client, not the API):
        from the grant's address (or ``from_email``, one of its aliases; else what
        :meth:`Modes.sender_address` gives), to the parent's sender, in ``sent``, with no metadata of
        ours. ``to``: other addressees than the parent's sender (a forward to a colleague, a note)."""
        with self.lock:
            grant = self.locked_find_grant(grant_id)
            if grant is None:
                raise KeyError(f"unknown grant {grant_id!r}")
            parent = self.locked_message(grant["id"], reply_to_message_id)
            if parent is None:
                raise KeyError(f"unknown message {reply_to_message_id!r} for grant {grant_id!r}")
            thread = self.threads[parent["thread_id"]]
            subject = (
                parent["subject"]
                if parent["subject"].lower().startswith("re:")
                else f"Re: {parent['subject']}"
            )
            message = build_message(
                grant_id=grant["id"],
                thread_id=thread.id,
                subject=subject,
                sender={
                    "name": grant["name"],
                    "email": from_email or self.modes.sender_address(grant["id"], grant["email"]),
                },
                to=[dict(p) for p in parent["from"]]
                if to is None
                else [{"name": "", "email": a} for a in to],
                cc=[],
                bcc=[],
                reply_to=[],
                date=int(self.now() if date is None else date),
                body=body,
                folder="sent",
                headers=[],
                in_reply_to=reply_to_message_id,
                parent=parent,
            )
            self.locked_store(message, thread, outbound=True)
            return copy.deepcopy(message)

    def draft_from_mailbox(self, grant_id: str, reply_to_message_id: str, body: str) -> Json:
        """A person's draft answering a message, written in the grant's mailbox (web mail, a mail
        client; not the API): from the grant's address, to the parent's sender, in ``drafts``, no
        metadata of ours. It stays there until :meth:`NylasEmulator.person_sends_draft` or forever."""
        with self.lock:
            grant = self.locked_find_grant(grant_id)
            if grant is None:
                raise KeyError(f"unknown grant {grant_id!r}")
            parent = self.locked_message(grant["id"], reply_to_message_id)
            if parent is None:
                raise KeyError(f"unknown message {reply_to_message_id!r} for grant {grant_id!r}")
            thread = self.threads[parent["thread_id"]]
            subject = parent["subject"]
            draft = build_message(
                grant_id=grant["id"],
                thread_id=thread.id,
                subject=subject if subject.lower().startswith("re:") else f"Re: {subject}",
                sender={"name": grant["name"], "email": grant["email"]},
                to=[dict(p) for p in parent["from"]],
                cc=[],
                bcc=[],
                reply_to=[],
                date=int(self.now()),
                body=body,
                folder="drafts",
                headers=[],
                in_reply_to=reply_to_message_id,
                message_id=f"draft-{uuid.uuid4().hex}",
                parent=parent,
            )
            draft["object"] = "draft"
            draft["reply_to_message_id"] = reply_to_message_id
            self.locked_store_draft(draft, thread)
            return copy.deepcopy(draft)

    def receive(
        self,
        grant_id: str,
        *,
        from_email: str,
        from_name: str,
        subject: str,
        body: str,
        reply_to: Sequence[Mapping[str, str]] | None,
        thread_id: str | None,
        reply_to_message_id: str | None,
        headers: Sequence[Mapping[str, str]] | Mapping[str, str] | None,
        date: float | None,
        to_email: str | None,
        message_id: str | None,
        folder: str = "inbox",
        also_to: Sequence[str] = (),
        addressed_to: Sequence[str] | None = None,
        authentication: str | Sequence[str] | None = None,
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> list[Json]:
        """Store an inbound message, one copy per receiving grant; see :meth:`NylasEmulator.deliver_inbound`.

        Returns copies of the stored messages, the first grant's first.
        """
        if folder not in INBOUND_FOLDERS:
            raise ValueError(f"folder must be one of {', '.join(INBOUND_FOLDERS)}, not {folder!r}")
        if isinstance(headers, Mapping):
            header_list = [{"name": k, "value": v} for k, v in headers.items()]
        else:
            header_list = [{"name": h["name"], "value": h["value"]} for h in headers or ()]
        # The receiving provider's Authentication-Results go on top of whatever the sender wrote.
        stamped = [authentication] if isinstance(authentication, str) else list(authentication or ())
        header_list = [{"name": "Authentication-Results", "value": v} for v in stamped] + header_list
        received = self.now()
        if self.modes.message_date == "received":
            # The sender's Date stays in its header; the message's date is when it was received.
            if header(header_list, "Date") is None:
                header_list.append({"name": "Date", "value": formatdate(received if date is None else date)})
            date = received
        with self.lock:
            grant = self.locked_find_grant(grant_id)
            if grant is None:
                raise KeyError(f"unknown grant {grant_id!r}")
            others = []
            for other_id in also_to:
                other = self.locked_find_grant(other_id)
                if other is None:
                    raise KeyError(f"unknown grant {other_id!r}")
                if other["id"] == grant["id"] or other in others:
                    raise ValueError(f"grant {other['id']!r} is named twice")
                others.append(other)
            grant_id = grant["id"]
            if message_id is not None and message_id in self.messages:
                raise ValueError(f"message id {message_id!r} already exists")
            parent: Json | None = None
            if reply_to_message_id is not None:
                parent = self.locked_message(grant_id, reply_to_message_id)
                if parent is None:
                    raise KeyError(f"unknown message {reply_to_message_id!r} for grant {grant_id!r}")
                if thread_id is not None and thread_id != parent["thread_id"]:
                    raise ValueError("thread_id and reply_to_message_id point at different threads")
                thread_id = parent["thread_id"]
            thread = self.threads.get(thread_id) if thread_id is not None else None
            if thread is not None and thread.grant_id != grant_id:
                raise ValueError(f"thread {thread_id!r} belongs to another grant")
            if thread is None:
                thread = self.locked_new_thread(grant_id, thread_id)
            recipient = to_email or grant["email"]
            to = [{"name": grant["name"] if recipient == grant["email"] else "", "email": recipient}]
            to += [{"name": o["name"], "email": o["email"]} for o in others]
            if addressed_to is not None:
                # A group, a distribution list or an alias reached the mailboxes: the header names it,
                # not them.
                to = [{"name": "", "email": address} for address in addressed_to]
            fields: Json = {
                "subject": subject,
                "sender": {"name": from_name, "email": from_email},
                "to": to,
                "cc": [],
                "bcc": [],
                "reply_to": participants(list(reply_to or [])),
                "date": int(received if date is None else date),
                "body": body,
                "folder": folder,
            }
            first = build_message(
                grant_id=grant_id,
                thread_id=thread.id,
                headers=header_list,
                in_reply_to=reply_to_message_id,
                message_id=message_id,
                parent=parent,
                **fields,
            )
            first["attachments"] = self.files.attach(grant_id, first["id"], attachments)
            self.locked_store(first, thread, outbound=False)
            stored = [first]
            # The same email in every other agent's mailbox: its own id and thread, the same headers
            # (Message-ID above all), threaded there by In-Reply-To as any mail system would.
            shared = first["headers"]
            in_reply_to_header = header(shared, "In-Reply-To")
            for other in others:
                parent_id = self.by_header_id.get((other["id"], in_reply_to_header or ""))
                other_parent = self.messages[parent_id].message if parent_id is not None else None
                other_thread = (
                    self.threads[other_parent["thread_id"]]
                    if other_parent is not None
                    else self.locked_new_thread(other["id"])
                )
                copy_ = build_message(
                    grant_id=other["id"],
                    thread_id=other_thread.id,
                    headers=copy.deepcopy(shared),
                    in_reply_to=parent_id,
                    **fields,
                )
                copy_["attachments"] = self.files.attach(other["id"], copy_["id"], attachments)
                self.locked_store(copy_, other_thread, outbound=False)
                stored.append(copy_)
            return copy.deepcopy(stored)

    def locked_thread_view(self, thread: Thread) -> Json | None:
        """The thread object of ``GET .../threads/{id}`` (folder ids), ``None`` for an empty thread."""
        messages = [self.messages[m] for m in thread.message_ids]  # arrival order
        drafts = [self.drafts[d] for d in thread.draft_ids]
        everything = sorted([*messages, *drafts], key=lambda s: s.seq)
        if not everything:
            return None
        objects = [s.message for s in everything]
        latest = everything[-1].message
        people: dict[str, Json] = {}
        for m in objects:
            for p in [*m["from"], *m["to"], *m["cc"]]:
                people.setdefault(p["email"].lower(), {"name": p.get("name", ""), "email": p["email"]})
        dated = [s.message for s in messages] or objects
        view: Json = {
            "grant_id": thread.grant_id,
            "id": thread.id,
            "object": "thread",
            "subject": objects[0]["subject"],
            "message_ids": [s.message["id"] for s in messages],
            "participants": list(people.values()),
            "snippet": latest["snippet"],
            "has_attachments": False,
            "has_drafts": bool(drafts),
            "draft_ids": [s.message["id"] for s in drafts],
            "starred": any(m["starred"] for m in objects),
            "unread": any(m["unread"] for m in objects),
            "folders": sorted({folder_id(thread.grant_id, f) for m in objects for f in m["folders"]}),
            "earliest_message_date": min(m["date"] for m in dated),
            "latest_draft_or_message": self.rest_view(latest, "standard"),
        }
        # Keys are absent rather than null when there is nothing to report, as in the docs example.
        received = [s.message["date"] for s in messages if not s.outbound]
        sent = [s.message["date"] for s in messages if s.outbound]
        if received:
            view["latest_message_received_date"] = max(received)
        if sent:
            view["latest_message_sent_date"] = max(sent)
        return view

    def rest_view(self, message: Json, fields: str) -> Json:
        """``message`` (or draft) as a REST answer gives it: headers only when asked, folder ids, and a
        draft's ``date`` only under :attr:`Modes.draft_date`."""
        view = select_fields(message, fields)
        view["folders"] = [folder_id(message["grant_id"], f) for f in message["folders"]]
        if view.get("object") == "draft" and not self.modes.draft_date:
            view.pop("date", None)
        return view

    def locked_folders(self, grant_id: str) -> list[Json]:
        """The grant's folder objects (``GET .../folders``), with their counts: the folders a person
        made first (no order is documented; this one makes a product that reads one page miss junk)."""
        folders = []
        for name in self.user_folders.get(grant_id, []):
            held = [
                s.message
                for s in self.messages.values()
                if s.message["grant_id"] == grant_id and name in s.message["folders"]
            ]
            folders.append(
                {
                    "id": folder_id(grant_id, name),
                    "grant_id": grant_id,
                    "object": "folder",
                    "name": name,
                    "system_folder": False,
                    "attributes": [],
                    "total_count": len(held),
                    "unread_count": sum(1 for m in held if m["unread"]),
                }
            )
        for name, attributes in SYSTEM_FOLDERS.items():
            held = [
                s.message
                for s in (self.drafts if name == "drafts" else self.messages).values()
                if s.message["grant_id"] == grant_id and name in s.message["folders"]
            ]
            folders.append(
                {
                    "id": folder_id(grant_id, name),
                    "grant_id": grant_id,
                    "object": "folder",
                    "name": name,
                    "system_folder": True,
                    "attributes": list(attributes),
                    "total_count": len(held),
                    "unread_count": sum(1 for m in held if m["unread"]),
                }
            )
        return folders

    def folder_name(self, grant_id: str, folder: str) -> str | None:
        """The name of the grant's folder with id ``folder`` (a system folder or one made by a person
        or through ``POST .../folders``), or ``None`` (names are not ids)."""
        names = [*SYSTEM_FOLDERS, *self.user_folders.get(grant_id, [])]
        return next((n for n in names if folder_id(grant_id, n) == folder), None)

    def locked_create_folder(self, grant_id: str, name: str) -> Json | None:
        """Make a folder ``name`` in the grant (``POST .../folders``): its folder object, or ``None``
        when the grant already has a folder of that name (system folders compared case-insensitively,
        as ``Inbox`` is ``inbox`` to every provider)."""
        taken = {n.lower() for n in SYSTEM_FOLDERS} | set(self.user_folders.get(grant_id, []))
        if name in taken or name.lower() in SYSTEM_FOLDERS:
            return None
        self.user_folders.setdefault(grant_id, []).append(name)
        return next(f for f in self.locked_folders(grant_id) if f["name"] == name)

    def thread_messages(self, thread_id: str) -> list[Json] | None:
        """Copies of a thread's messages and drafts in arrival order, with headers (``None``: no thread)."""
        with self.lock:
            thread = self.threads.get(thread_id)
            if thread is None:
                return None
            stored = [self.messages[i] for i in thread.message_ids] + [
                self.drafts[i] for i in thread.draft_ids
            ]
            return [copy.deepcopy(s.message) for s in sorted(stored, key=lambda s: s.seq)]

    def arrivals(self, grant_id: str | None = None) -> list[tuple[float, Json]]:
        """Every message (drafts excluded) with the real time it appeared, in arrival order (copies)."""
        with self.lock:
            stored = sorted(self.messages.values(), key=lambda s: s.seq)
            return [
                (s.arrived_at, copy.deepcopy(s.message))
                for s in stored
                if grant_id is None or s.message["grant_id"] == grant_id
            ]


# ---- message objects -----------------------------------------------------------------------------


def build_message(
    *,
    grant_id: str,
    thread_id: str,
    subject: str,
    sender: Json,
    to: list[Json],
    cc: list[Json],
    bcc: list[Json],
    reply_to: list[Json],
    date: int,
    body: str,
    folder: str,
    headers: list[Json],
    in_reply_to: str | None,
    message_id: str | None = None,
    parent: Json | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Json:
    """A Nylas message object, ``headers`` included (reads strip them unless asked)."""
    message_id = message_id or f"msg-{uuid.uuid4().hex}"
    message: Json = {
        "id": message_id,
        "grant_id": grant_id,
        "object": "message",
        "thread_id": thread_id,
        "subject": subject,
        "from": [sender],
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "reply_to": reply_to,
        "date": date,
        "body": body,
        "snippet": snippet(body),
        "starred": False,
        # Mail that arrived is unread; what the grant wrote (sent, drafts) is not.
        "unread": folder not in ("sent", "drafts"),
        "folders": [folder],
        "attachments": [],
        "metadata": dict(metadata or {}),
        "headers": with_threading_headers(headers, message_id, parent),
    }
    if in_reply_to is not None:
        message["in_reply_to"] = in_reply_to
    return message


def snippet(body: str) -> str:
    """The first 100 characters of a body's text, tags removed."""
    return " ".join(_TAG_RE.sub(" ", body).split())[:100]


def select_fields(message: Json, fields: str) -> Json:
    """A copy of ``message`` as a read with ``fields=`` returns it: ``headers`` only when asked."""
    selected = copy.deepcopy(message)
    headers = selected.pop("headers", [])
    if fields == "include_headers":
        selected["headers"] = headers
    elif fields == "include_basic_headers":
        selected["headers"] = [h for h in headers if h["name"].lower() in BASIC_HEADER_NAMES]
    return selected


def header(headers: Sequence[Mapping[str, str]], name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive), or ``None``."""
    name = name.lower()
    return next((h["value"] for h in headers if h["name"].lower() == name), None)


def with_threading_headers(headers: list[Json], message_id: str, parent: Json | None) -> list[Json]:
    """``headers`` plus the ``Message-ID`` / ``In-Reply-To`` / ``References`` a mail would carry.

    Headers the caller gave win; the rest are derived, so ``fields=include_basic_headers`` always
    has something to return and a reply points at its parent like a real one.
    """
    added: list[Json] = []
    if header(headers, "Message-ID") is None:
        # An IMAP-style id *is* the Message-ID; any other id gets a synthetic one.
        own = message_id if message_id.startswith("<") else f"<{message_id}@{SYNTHETIC_MESSAGE_ID_DOMAIN}>"
        added.append({"name": "Message-ID", "value": own})
    if parent is not None:
        parent_id = header(parent["headers"], "Message-ID")
        if parent_id is not None and header(headers, "In-Reply-To") is None:
            added.append({"name": "In-Reply-To", "value": parent_id})
        if parent_id is not None and header(headers, "References") is None:
            earlier = header(parent["headers"], "References")
            added.append({"name": "References", "value": f"{earlier} {parent_id}" if earlier else parent_id})
    return [*added, *headers]


# ---- request validation shared by the resources that take messages -------------------------------


def valid_participants(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(p, dict) and isinstance(p.get("email"), str) for p in value
    )


def participants(value: list[Json]) -> list[Json]:
    return [{"name": str(p.get("name") or ""), "email": p["email"]} for p in value]


def metadata_problem(value: Any) -> str | None:
    """Why ``value`` is not valid message metadata (Nylas' limits), or ``None`` when it is."""
    if not isinstance(value, dict):
        return "`metadata` must be an object of string keys to string values"
    if len(value) > MAX_METADATA_PAIRS:
        return f"`metadata` can hold at most {MAX_METADATA_PAIRS} pairs"
    for key, item in value.items():
        if not isinstance(item, str):
            return f"`metadata` value of {key!r} must be a string"
        if not key or len(key) > MAX_METADATA_KEY_LENGTH:
            return f"`metadata` keys must be 1 to {MAX_METADATA_KEY_LENGTH} characters"
        if len(item) > MAX_METADATA_VALUE_LENGTH:
            return f"`metadata` values must be at most {MAX_METADATA_VALUE_LENGTH} characters"
    return None


def parse_metadata_pair(value: str) -> tuple[str, str]:
    key, sep, wanted = value.partition(":")
    if not sep:
        raise ValueError("metadata_pair must look like key1:<value>")
    if key not in INDEXED_METADATA_KEYS:
        raise ValueError(
            f"metadata_pair can only filter on the indexed keys {', '.join(INDEXED_METADATA_KEYS)}"
        )
    return key, wanted
