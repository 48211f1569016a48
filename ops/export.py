"""A frozen export of a grant's threads, with people's addresses and names replaced by pseudonyms.

What it is for: a gate in CI (``ops.gate``) needs the same mail on every run and no Nylas key; an
export is a JSON file a team can keep in a repository and replay with ``make replay ARGS="--from-export
FILE ..."``. It holds what a replay reads, nothing more: the grant, its folders, and each thread as
the replier reads it (``ops.replay.read_thread``: with headers, newest first), in the order the replay
would take them (``ops.replay.recent_threads``).

Read-only: ``GET`` only (the grant, its folders, the window's listing, each thread), counted in
``tests/integration/test_export.py``.

Pseudonyms (:class:`Pseudonyms`): every e-mail address — in ``from``, ``to``, ``cc``, ``bcc``,
``reply_to``, in header values, subjects and bodies — becomes ``c-<10 hex>@<pseudonym of its
domain>``, where the hex digits are HMAC-SHA256 of the lower-cased address under a key the team keeps
(``REPLYONCE_EXPORT_KEY``); a domain becomes one HMAC label per label, its top-level label kept, so a
subdomain stays a subdomain of its parent's pseudonym and DKIM/DMARC alignment
(``replyonce.rules.evidence.sender_authenticated``) reads the same; an address whose local part names a
machine (``no-reply``, ``mailer-daemon``: ``replyonce.rules.screening.is_machine_address``) keeps that word,
so the replay skips it as the live one did. Display names become ``Person <6 hex>``, and each known
name (and its first word) is replaced wherever it appears in subjects, bodies and headers. The same
key gives the same pseudonyms on every run; the key never enters the file (only a fingerprint of it).
Ids (messages, threads, folders, metadata) are kept: threads keep their order, ids and replies.

What it cannot find: personal data written in free text that is not an address or a known name (a
phone number, a street address, a name nobody signed with). Read an export before committing it.
"""

import hashlib
import hmac
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ops.errors import ConfigurationError
from ops.json_files import read_json
from ops.replay import MAX_THREAD_PAGES, PAGE_LIMIT, recent_threads
from replyonce.ports import Folder, Grant, SearchResult, ThreadPage
from replyonce.rules.screening import is_machine_address

FORMAT = "replyonce-export/1"
KEY_ENVIRONMENT = "REPLYONCE_EXPORT_KEY"
MIN_KEY_BYTES = 16
_ADDRESS = re.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+"
)
_PARTICIPANT_FIELDS = ("from", "to", "cc", "bcc", "reply_to")
# Fields of a message that hold ids or flags, never a person's words: kept as they are.
_KEPT_FIELDS = frozenset(
    {
        "id",
        "grant_id",
        "thread_id",
        "object",
        "folders",
        "metadata",
        "date",
        "unread",
        "starred",
        "reply_to_message_id",
    }
)


class Pseudonyms:
    """Stable pseudonyms under one key: the same address, domain or name gives the same pseudonym.

    Parameters
    ----------
    key:
        The team's secret (at least :data:`MIN_KEY_BYTES` bytes); lose it and the next export's
        pseudonyms differ from the last one's.
    """

    def __init__(self, key: bytes) -> None:
        if len(key) < MIN_KEY_BYTES:
            raise ConfigurationError(
                f"the export key is {len(key)} bytes: at least {MIN_KEY_BYTES} are needed"
            )
        self._key = key
        self._names: dict[str, str] = {}

    def _hex(self, kind: str, value: str, digits: int) -> str:
        return hmac.new(self._key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:digits]

    @property
    def key_id(self) -> str:
        """A fingerprint of the key (not the key): two exports with the same one share pseudonyms."""
        return self._hex("key-id", "replyonce-export", 12)

    def domain(self, domain: str) -> str:
        labels = domain.lower().rstrip(".").split(".")
        if len(labels) < 2:
            return f"d{self._hex('domain', domain.lower(), 8)}"
        # Label by label, from the top: a.b.example -> each suffix's own HMAC, the TLD kept.
        out = [labels[-1]]
        for i in range(len(labels) - 2, -1, -1):
            out.insert(0, f"d{self._hex('domain', '.'.join(labels[i:]), 8)}")
        return ".".join(out)

    def address(self, address: str) -> str:
        lowered = address.strip().lower()
        _, at, domain = lowered.rpartition("@")
        if not at:
            return f"c-{self._hex('address', lowered, 10)}@invalid.example"
        prefix = "no-reply" if is_machine_address(lowered) else "c"
        return f"{prefix}-{self._hex('address', lowered, 10)}@{self.domain(domain)}"

    def name(self, name: str) -> str:
        cleaned = " ".join(name.split())
        if not cleaned:
            return ""
        pseudonym = f"Person {self._hex('name', cleaned.lower(), 6)}"
        self._names.setdefault(cleaned, pseudonym)
        first = cleaned.split()[0]
        if len(first) >= 3 and first != cleaned:
            self._names.setdefault(first, pseudonym.split()[0])
        return pseudonym

    def text(self, text: str, domains: Sequence[str] = ()) -> str:
        """``text`` with every address, each known domain (longest first) and each known name replaced."""
        replaced = _ADDRESS.sub(lambda m: self.address(m.group(0)), text)
        for domain in sorted(domains, key=len, reverse=True):
            pattern = re.compile(rf"(?<![\w.@-]){re.escape(domain)}(?![\w-]|\.[\w])", re.IGNORECASE)
            replaced = pattern.sub(lambda _m, d=domain: self.domain(d), replaced)
        for name in sorted(self._names, key=len, reverse=True):
            replaced = re.sub(rf"\b{re.escape(name)}\b", self._names[name], replaced)
        return replaced


def _participants(message: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for name in _PARTICIPANT_FIELDS:
        for participant in message.get(name) or []:
            if isinstance(participant, Mapping):
                yield participant


def known_domains(messages: Sequence[Mapping[str, Any]], grant_emails: Sequence[str]) -> list[str]:
    """Every domain of an address in the messages' participants, with its parents (but no bare TLD)."""
    found: set[str] = set()
    addresses = [str(p.get("email") or "") for m in messages for p in _participants(m)] + list(grant_emails)
    for address in addresses:
        domain = address.rpartition("@")[2].lower()
        labels = domain.split(".")
        for i in range(len(labels) - 1):
            found.add(".".join(labels[i:]))
    return sorted(d for d in found if d)


def _pseudonymised(value: Any, pseudonyms: Pseudonyms, domains: Sequence[str]) -> Any:
    if isinstance(value, str):
        return pseudonyms.text(value, domains)
    if isinstance(value, list):
        return [_pseudonymised(v, pseudonyms, domains) for v in value]
    if isinstance(value, dict):
        return {k: _pseudonymised(v, pseudonyms, domains) for k, v in value.items()}
    return value


def pseudonymise_message(message: Mapping[str, Any], pseudonyms: Pseudonyms, domains: Sequence[str]) -> dict:
    """A copy of ``message`` with its people pseudonymised (see the module's docstring); ids kept."""
    out: dict[str, Any] = {}
    for field_name in _PARTICIPANT_FIELDS:
        if field_name in message:
            out[field_name] = [
                {
                    **({"name": pseudonyms.name(str(p.get("name") or ""))} if p.get("name") else {}),
                    "email": pseudonyms.address(str(p.get("email") or "")),
                }
                for p in message.get(field_name) or []
                if isinstance(p, Mapping)
            ]
    for field_name, value in message.items():
        if field_name in _PARTICIPANT_FIELDS:
            continue
        out[field_name] = value if field_name in _KEPT_FIELDS else _pseudonymised(value, pseudonyms, domains)
    return out


def _thread_objects(mailbox: Any, grant_id: str, thread_id: str) -> list[dict[str, Any]]:
    """The whole thread as Nylas lists it to the replier (``ops.replay.read_thread``'s pages, with headers,
    newest first), as the JSON objects it answered: the export keeps what Nylas said, and its replay reads
    them into ``replyonce.mail.Mail`` as the replier does."""
    objects: list[dict[str, Any]] = []
    token: str | None = None
    for _ in range(MAX_THREAD_PAGES):
        page, token, _at = mailbox.thread_objects(grant_id, thread_id, PAGE_LIMIT, token)
        objects.extend(o for o in page if isinstance(o, dict))
        if not token:
            break
    return objects


def export_threads(
    mailbox: Any,
    lister: Any,
    grant_id: str,
    pseudonyms: Pseudonyms,
    *,
    since: int,
    until: int,
    limit: int,
    parameters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The export of the grant's newest ``limit`` threads of ``[since, until)`` (the replay's choice).

    ``mailbox`` is the replier's Nylas reads (``replyonce.adapters.nylas.NylasMailbox``: the grant, its
    folders, each thread with headers), ``lister`` lists the window (``ops.nylas_admin.NylasAdmin``).
    ``parameters`` are the stack's (the replay decides with them), pseudonymised as the mail is: a
    trusted sender's address (``ReplyToTrustedSenders``) or a list's (``TrustedLists``) still names the
    sender the export's messages show.
    """
    grant = mailbox.grant(grant_id)
    folders = list(mailbox.folders(grant_id))
    thread_ids = recent_threads(lister, grant_id, since, until, limit)
    threads = {thread_id: _thread_objects(mailbox, grant_id, thread_id) for thread_id in thread_ids}
    everything = [m for messages in threads.values() for m in messages]
    # Names first: a name signed in a body is replaced only once it is known from a participant.
    for message in everything:
        for participant in _participants(message):
            if participant.get("name"):
                pseudonyms.name(str(participant["name"]))
    if grant.name:
        pseudonyms.name(grant.name)
    domains = known_domains(everything, [grant.email, *grant.aliases])
    return {
        "format": FORMAT,
        "key_id": pseudonyms.key_id,
        "window": {"since": since, "until": until, "limit": limit},
        "parameters": {k: pseudonyms.text(str(v), domains) for k, v in (parameters or {}).items()},
        "grant": {
            "id": grant.id,
            "email": pseudonyms.address(grant.email) if grant.email else "",
            "name": pseudonyms.name(grant.name) if grant.name else "",
            "provider": grant.provider,
            "aliases": [pseudonyms.address(a) for a in grant.aliases],
        },
        "folders": [{"id": f.id, "name": f.name, "attributes": list(f.attributes)} for f in folders],
        "threads": [
            {"id": thread_id, "messages": [pseudonymise_message(m, pseudonyms, domains) for m in messages]}
            for thread_id, messages in threads.items()
        ],
    }


def write_export(document: Mapping[str, Any], path: Path) -> None:
    """The export as JSON, sorted keys: two exports of the same mail under one key are the same file."""
    path.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def load_export(path: Path) -> dict[str, Any]:
    """An export :func:`write_export` wrote.

    Raises
    ------
    ConfigurationError
        Missing, not JSON, or not an export of this format: one line naming the file.
    """
    document = read_json(path, "export", f'make export ARGS="... --out {path}"')
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ConfigurationError(f"{path}: not a ReplyOnce export ({FORMAT})")
    return document


@dataclass(frozen=True)
class FrozenNylas:
    """The reads of a replay, answered from an export: the mailbox and the lister ``ops.replay.replay``
    takes, without Nylas. The window is the export's: every exported thread is listed, in its order."""

    document: Mapping[str, Any]

    def grant(self, grant_id: str) -> Grant:
        grant = self.document["grant"]
        return Grant(
            id=grant_id,
            email=str(grant.get("email") or ""),
            name=str(grant.get("name") or ""),
            provider=str(grant.get("provider") or ""),
            aliases=tuple(grant.get("aliases") or ()),
        )

    def folders(self, grant_id: str) -> list[Folder]:
        return [
            Folder(str(f["id"]), str(f.get("name") or ""), tuple(f.get("attributes") or ()))
            for f in self.document.get("folders") or []
        ]

    def _thread(self, thread_id: str) -> list[dict[str, Any]]:
        for thread in self.document.get("threads") or []:
            if thread["id"] == thread_id:
                return list(thread["messages"])
        return []

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        messages = self._thread(thread_id)
        start = int(page_token or 0)
        end = start + limit
        return ThreadPage(tuple(messages[start:end]), str(end) if end < len(messages) else None, 0)

    def received_messages(self, grant_id: str, received_after: int, received_before: int) -> Iterator[dict]:
        for thread in self.document.get("threads") or []:
            yield {"id": f"listed-{thread['id']}", "thread_id": thread["id"]}

    def search(self, grant_id: str, kind: str, key: str, value: str) -> SearchResult:
        return SearchResult(())
