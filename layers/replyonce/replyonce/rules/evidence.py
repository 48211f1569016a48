"""What the provider vouches for about a message, apart from what its sender typed (the rule of evidence).

Every header of an inbound message was written by its sender or by a server
on its way; only the receiving provider's own marks and the mailbox itself
are facts. ``docs/design.md`` ("The rule of evidence") holds the table: each
decision to stay silent for a person, or to write to anyone but the
message's ``From``, and the fact it rests on. This module reads those facts,
as pure functions of the message and of what the grant's folders say:

- the folder a message sits in (:func:`in_sent_folder`): a message in the
  grant's Sent folder was sent from the mailbox; one from the mailbox's own
  address found anywhere else was received, so it came from outside;
- the receiving provider's ``Authentication-Results`` (RFC 8601),
  :func:`sender_authenticated`: whether DMARC (or DKIM aligned with the
  ``From`` domain) passed, the only thing that makes a ``From`` more than
  typed text;
- the operator's naming of a trusted list by its ``List-Id`` **and** its own
  address (:class:`~replyonce.config.TrustedList`): a group that rewrote ``From`` to itself is
  recognised by both, never by a ``List-Id`` anyone can type.

A fact that is missing never widens what the agent does: the callers fall to
the side that sends nothing twice and leaves no one unanswered (a hand-off).
"""

import re
from collections.abc import Collection
from enum import StrEnum
from typing import Any

from replyonce.mail import Mail
from replyonce.rules.screening import header_values

SENT_FOLDER_NAMES = frozenset({"sent", "sent items", "sent mail", "sent messages", "[gmail]/sent mail"})
"""Names the providers give the Sent folder (notifications may carry names; REST answers carry ids)."""
SENT_FOLDER_ATTRIBUTE = "\\sent"
"""The IMAP special-use attribute of the Sent folder (RFC 6154), as Nylas lists it on system folders."""


def sent_folder_ids(folders: Collection[Any]) -> frozenset[str]:
    """The ids of the grant's Sent folder(s), by attribute or by name (``replyonce.ports.Folder`` values)."""
    return frozenset(
        f.id
        for f in folders
        if f.name.lower() in SENT_FOLDER_NAMES or SENT_FOLDER_ATTRIBUTE in {a.lower() for a in f.attributes}
    )


def folders_of(message: Mail) -> tuple[str, ...]:
    """The message's ``folders`` (ids, or names in a notification), ``()`` when there are none."""
    return message.folders


def in_sent_folder(message: Mail, sent_ids: Collection[str]) -> bool:
    """Whether the provider filed ``message`` in the grant's Sent folder: the mailbox sent it.

    Why the folder and not ``From``: anyone can write the mailbox's own
    address in ``From``; only a message the mailbox sent sits in its Sent
    folder (a forged one lands in the inbox or in junk).
    """
    return any(f in sent_ids or f.lower() in SENT_FOLDER_NAMES for f in folders_of(message))


class Authentication(StrEnum):
    """What the receiving provider's topmost ``Authentication-Results`` says of the ``From`` domain."""

    PASS = "pass"  # noqa: S105 - an authentication verdict, not a password
    """DMARC passed, or DKIM passed with the signing domain the ``From`` domain (or its parent)."""
    FAIL = "fail"
    """The header is there and records no pass for the ``From`` domain."""
    MISSING = "missing"
    """No ``Authentication-Results`` at all: nothing vouches for ``From``."""


_RESULT = re.compile(r"\b(dmarc|dkim)\s*=\s*([a-z]+)([^;]*)")
_HEADER_D = re.compile(r"header\.d\s*=\s*([a-z0-9.-]+)")
_HEADER_FROM = re.compile(r"header\.from\s*=\s*([a-z0-9.-]+)")


def _aligned(domain: str, from_domain: str) -> bool:
    """Relaxed alignment (RFC 7489 section 3.1): the same domain, or one a parent of the other."""
    return bool(domain) and (
        domain == from_domain or from_domain.endswith("." + domain) or domain.endswith("." + from_domain)
    )


def _authserv_id(value: str) -> str:
    """The ``authserv-id`` an ``Authentication-Results`` value opens with (RFC 8601 section 2.2)."""
    first = value.split(";", 1)[0].strip()
    return "" if "=" in first else first.split()[0].lower() if first else ""


def sender_authenticated(message: Mail, from_address: str, authserv_ids: Collection[str]) -> Authentication:
    """Whether the receiving provider authenticated ``from_address``'s domain (RFC 8601, RFC 7489).

    Only the topmost ``Authentication-Results`` whose ``authserv-id`` is one of
    ``authserv_ids`` (``RECEIVING_AUTHSERV_IDS``: the id the mailbox's
    provider stamps, ``mx.google.com`` for Google) is read: the receiving
    provider prepends its own and removes any other copy bearing its id
    (RFC 8601 section 5), so one with its id is its word; any other was
    added by an earlier hop or typed by the sender — and if the provider
    stamps none at all, a typed one is all there is. DMARC's pass is for the
    ``From`` domain by definition (``header.from`` is checked when present);
    a DKIM pass counts only when its ``header.d`` is aligned with it.
    """
    ids = {i.lower() for i in authserv_ids}
    results = [v for v in header_values(message, "authentication-results") if _authserv_id(v) in ids]
    if not results:
        return Authentication.MISSING
    from_domain = from_address.rpartition("@")[2].lower()
    for method, outcome, properties in _RESULT.findall(results[0].lower()):
        if outcome != "pass":
            continue
        if method == "dmarc":
            stated = _HEADER_FROM.search(properties)
            if stated is None or _aligned(stated.group(1), from_domain):
                return Authentication.PASS
        elif (signer := _HEADER_D.search(properties)) is not None and _aligned(signer.group(1), from_domain):
            return Authentication.PASS
    return Authentication.FAIL
