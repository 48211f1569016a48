"""Who receives a reply: exactly one mailbox nobody but the customer can choose (invariant 4).

Anyone can write any ``Reply-To``, and "the sender's own domain" is no
safeguard on gmail.com or outlook.com: honouring it would let one message
aim the agent at up to 50 strangers, from the company's address. So the reply
goes to ``From``; ``Reply-To`` is honoured only for senders the operator
vouches for (``REPLY_TO_TRUSTED_SENDERS``: a contact form that sends from its
own no-reply address with the customer in ``Reply-To``), and even then to
one address. Every address is parsed as a single mailbox — a string holding
two addresses, a display name or a bare ``@`` is refused, never passed on.
"""

import re
from collections.abc import Collection, Mapping
from typing import Any

from replyonce.screening import sender_email

# A dot-atom mailbox (RFC 5322 section 3.4.1 without quoted local parts or domain literals, which no
# customer needs and which hide separators): labels of letters, digits and hyphens, at least one dot.
_LOCAL_PART = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
_DOMAIN = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_MAILBOX = re.compile(rf"{_LOCAL_PART}@{_DOMAIN}")
_MAX_ADDRESS_LENGTH = 254  # RFC 5321 section 4.5.3.1.3 (path minus the angle brackets)
_MAX_LOCAL_PART_LENGTH = 64
_MAX_NAME_LENGTH = 100
# What ends a header line or may be shown as a line break: C0 (CR, LF, TAB, NUL, ESC...), DEL, C1 (NEL
# U+0085 among them: some decoders end a line there), LINE SEPARATOR and PARAGRAPH SEPARATOR.
_HEADER_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def header_text(value: str) -> str:
    """``value`` fit to be one header's value: every control character a space, the ends trimmed.

    The one filter of every header value ReplyOnce builds (the subject, the
    recipient's display name, custom header values: ``replyonce.outbox``).
    A subject decoded from an RFC 2047 encoded-word can carry any octet, so a
    CR/LF in it is the customer's to choose; Nylas builds the MIME message
    from our JSON, and what it does with a line break in a value is not
    documented. A space, not nothing, so the words either side of a break stay
    two words.

    >>> header_text("Order 123\r\nBcc: victim@elsewhere.example")
    'Order 123  Bcc: victim@elsewhere.example'
    """
    return _HEADER_BREAKING.sub(" ", value).strip()


def single_mailbox(value: Any) -> str | None:
    """``value`` as one well-formed mailbox (lower case), or ``None``.

    >>> single_mailbox("Alice@Example.com")
    'alice@example.com'
    >>> single_mailbox("victim@elsewhere.example, team@customer.example") is None
    True
    """
    if not isinstance(value, str):
        return None
    candidate = value.strip()
    if len(candidate) > _MAX_ADDRESS_LENGTH or not _MAILBOX.fullmatch(candidate):
        return None
    if len(candidate.split("@", 1)[0]) > _MAX_LOCAL_PART_LENGTH:
        return None
    return candidate.lower()


def _display_name(participant: Mapping[str, Any]) -> str:
    """The participant's name as a header value (:func:`header_text`), at most ``_MAX_NAME_LENGTH`` long."""
    name = participant.get("name")
    if not isinstance(name, str):
        return ""
    return header_text(name)[:_MAX_NAME_LENGTH].strip()


def _first_mailbox(participants: Any, own_addresses: Collection[str]) -> dict[str, str] | None:
    for participant in participants if isinstance(participants, list) else []:
        if not isinstance(participant, Mapping):
            continue
        email = single_mailbox(participant.get("email"))
        if email is None or email in own_addresses:
            continue
        name = _display_name(participant)
        return {"name": name, "email": email} if name else {"email": email}
    return None


def reply_recipient(
    message: Mapping[str, Any], own_addresses: Collection[str], trusted_senders: Collection[str] = ()
) -> dict[str, str] | None:
    """The one recipient of a reply to ``message``, as a Nylas participant, or ``None``.

    ``Reply-To`` (its first well-formed mailbox) only when ``From`` is a
    trusted sender; otherwise, or when it holds none, ``From``. An agent
    address never receives a reply.
    """
    if sender_email(message) in trusted_senders:
        trusted = _first_mailbox(message.get("reply_to"), own_addresses)
        if trusted is not None:
            return trusted
    senders = message.get("from")
    return _first_mailbox(senders[:1] if isinstance(senders, list) else [], own_addresses)
