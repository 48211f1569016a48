"""Who receives a reply: exactly one mailbox nobody but the customer can choose (invariant 4).

Anyone can write any ``Reply-To``, and "the sender's own domain" is no
safeguard on gmail.com or outlook.com: honouring it would let one message
aim the agent at up to 50 strangers, from the company's address. So the reply
goes to ``From``; ``Reply-To`` is honoured only for senders the operator
vouches for (``REPLY_TO_TRUSTED_SENDERS``: a contact form that sends from its
own no-reply address with the customer in ``Reply-To``), when the receiving
provider authenticated that sender, and even then to one address. Every
address is parsed as a single mailbox — a string holding two addresses, a
display name or a bare ``@`` is refused, never passed on.

An address is sent to and compared in one spelling, the one
:func:`parse_mailbox` returns: lower case, its domain in ASCII
(``carol@bücher.example`` is ``carol@xn--bcher-kva.example``). An inbox has
one key, :func:`mailbox_key`, whatever spelling reaches it: the per-recipient
budget counts by it, and an agent is recognised by it.
"""

import re
from collections.abc import Collection, Iterable, Sequence
from email.utils import parseaddr
from enum import StrEnum
from typing import Any

from replyonce.config import TrustedList
from replyonce.mail import Address, Mail
from replyonce.reasons import SkipReason
from replyonce.rules.evidence import Authentication, sender_authenticated
from replyonce.rules.screening import header_values, is_machine_address, list_id, sender_email

# A dot-atom mailbox (RFC 5322 section 3.4.1 without quoted local parts or domain literals, which no
# customer needs and which hide separators): labels of letters, digits and hyphens, at least one dot.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_LOCAL_PART = re.compile(rf"{_ATEXT}+(?:\.{_ATEXT}+)*")
_DOMAIN = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
)
# The same dot-atom with any non-ASCII character as atext (RFC 6532 section 3.2): an SMTPUTF8 local part.
_UTF8_LOCAL_PART = re.compile(rf"(?:{_ATEXT}|[^\x00-\x7f])+(?:\.(?:{_ATEXT}|[^\x00-\x7f])+)*")
_MAX_ADDRESS_LENGTH = 254  # RFC 5321 section 4.5.3.1.3 (path minus the angle brackets)
_MAX_LOCAL_PART_LENGTH = 64
# Gmail ignores dots in the local part and delivers googlemail.com to the same accounts. Google documents it
# for consumer Gmail only: a Workspace domain's dots are significant, so no other domain is folded this way.
_GMAIL = "gmail.com"
_GMAIL_DOMAINS = frozenset({_GMAIL, "googlemail.com"})
_SUBADDRESS_SEPARATOR = "+"  # RFC 5233
_MAX_NAME_LENGTH = 100
# What ends a header line or may be shown as a line break: C0 (CR, LF, TAB, NUL, ESC...), DEL, C1 (NEL
# U+0085 among them: some decoders end a line there), LINE SEPARATOR and PARAGRAPH SEPARATOR.
_HEADER_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def header_text(value: str) -> str:
    """``value`` fit to be one header's value: every control character a space, the ends trimmed.

    The one filter of every header value ReplyOnce builds (the subject, the
    recipient's display name, custom header values: ``replyonce.rules.outbox``).
    A subject decoded from an RFC 2047 encoded-word can carry any octet, so a
    CR/LF in it is the customer's to choose; Nylas builds the MIME message
    from our JSON, and what it does with a line break in a value is not
    documented. A space, not nothing, so the words either side of a break stay
    two words.

    >>> header_text("Order 123\\r\\nBcc: victim@elsewhere.example")
    'Order 123  Bcc: victim@elsewhere.example'
    """
    return _HEADER_BREAKING.sub(" ", value).strip()


class AddressRefusal(StrEnum):
    """Why :func:`parse_mailbox` refuses a value: a reason a caller can log as a skip of its own."""

    NOT_A_MAILBOX = "not_a_mailbox"
    """No single well-formed mailbox: two addresses, a display name, a CR/LF, a bad domain, too long."""
    NON_ASCII_LOCAL_PART = "non_ascii_local_part"
    """A well-formed SMTPUTF8 address (RFC 6531) whose local part is not ASCII, such as ``jürgen@…``.

    Refused, not answered: such an address reaches its mailbox only if every
    hop speaks SMTPUTF8, which Nylas does not document and most MX servers do
    not offer (UASG 047, 2023: about 22% advertised it), so the reply would
    most likely bounce from the company's address; and a non-ASCII local part
    has no agreed case folding or normalisation (NFC and NFD spell one name
    two ways), so it could not be compared as one mailbox.
    """


def _ascii_domain(domain: str) -> str | None:
    """``domain`` as ASCII host name labels, lower case (A-labels for an IDN), or ``None``.

    Why A-labels: an SMTP session without SMTPUTF8 carries nothing else
    (RFC 5890, RFC 6531), so it is the form every provider accepts and
    the one spelling two messages can be compared in. Why the ``idna``
    package (IDNA 2008 with the UTS #46 mapping, non-transitional, as
    browsers resolve names) and not the stdlib codec (IDNA 2003): the
    stdlib spells ``faß.de`` as ``fass.de``, a different domain with a
    different owner, so the reply would go to a stranger. ``idna`` ships in
    the layer already (``requests`` needs it; pinned in
    ``layers/replyonce/requirements.txt``). The result must still match the
    ASCII grammar: the mapping turns characters such as U+FF0E into dots, and
    what it maps into a separator or a space is refused, never passed on.
    """
    if not domain.isascii():
        # Imported here: loading it and its tables costs ~20 ms, paid only by a message from an IDN.
        import idna

        try:
            domain = idna.encode(domain, uts46=True, std3_rules=True, transitional=False).decode("ascii")
        except UnicodeError:  # idna.IDNAError: a disallowed code point, an empty or too long label
            return None
    domain = domain.lower()
    return domain if _DOMAIN.fullmatch(domain) else None


def parse_mailbox(value: Any) -> str | AddressRefusal:
    """``value`` as one mailbox in the form a reply is sent to and compared in, or why not.

    The form: lower case, the domain as A-labels (:func:`_ascii_domain`),
    the local part as written. The lengths of RFC 5321 are of this form
    (octets on the wire), not of the Unicode spelling.

    >>> parse_mailbox("Carol@Bücher.example")
    'carol@xn--bcher-kva.example'
    >>> parse_mailbox("jürgen@example.com")
    <AddressRefusal.NON_ASCII_LOCAL_PART: 'non_ascii_local_part'>
    """
    if not isinstance(value, str):
        return AddressRefusal.NOT_A_MAILBOX
    candidate = value.strip()
    local, at, domain = candidate.rpartition("@")
    if len(candidate) > _MAX_ADDRESS_LENGTH or not at:
        return AddressRefusal.NOT_A_MAILBOX
    ascii_domain = _ascii_domain(domain)
    if ascii_domain is None:
        return AddressRefusal.NOT_A_MAILBOX
    if not local.isascii():
        eai = _UTF8_LOCAL_PART.fullmatch(local) and local.isprintable()
        return AddressRefusal.NON_ASCII_LOCAL_PART if eai else AddressRefusal.NOT_A_MAILBOX
    if len(local) > _MAX_LOCAL_PART_LENGTH or not _LOCAL_PART.fullmatch(local):
        return AddressRefusal.NOT_A_MAILBOX
    mailbox = f"{local.lower()}@{ascii_domain}"
    return mailbox if len(mailbox) <= _MAX_ADDRESS_LENGTH else AddressRefusal.NOT_A_MAILBOX


def single_mailbox(value: Any) -> str | None:
    """``value`` as one well-formed mailbox (:func:`parse_mailbox`'s form), or ``None``.

    >>> single_mailbox("Alice@Example.com")
    'alice@example.com'
    >>> single_mailbox("victim@elsewhere.example, team@customer.example") is None
    True
    """
    mailbox = parse_mailbox(value)
    return None if isinstance(mailbox, AddressRefusal) else mailbox


def mailbox_key(email: str) -> str:
    """The inbox ``email`` reaches, as one string: every spelling of one mailbox gives the same key.

    Folded: the case of the domain (RFC 5321 section 2.4) and of the local
    part (case-sensitive in the RFC, folded by the providers in practice);
    the domain's Unicode and A-label spellings (:func:`parse_mailbox`);
    ``+detail`` subaddressing (RFC 5233) at every domain; the dots of the
    local part and ``googlemail.com`` at Gmail.

    Why fold so far: a budget per spelling is no budget — ``victim+1@``,
    ``victim+2@`` and ``v.ictim@gmail.com`` are one Gmail inbox. Folding a
    ``+`` at a domain that does not subaddress is a mistake on the safe side
    twice: two mailboxes share one budget (fewer replies, never more), and
    ``support+x@`` beside an agent's ``support@`` is taken for the agent (no
    reply, where the other mistake mails ourselves). Dots are folded nowhere
    but Gmail: elsewhere ``a.b@`` and ``ab@`` are different people.

    A value that is no mailbox is its own key (stripped, lower case), so the
    function is total; such a value never receives a reply.

    >>> mailbox_key("V.ictim+orders@GoogleMail.com")
    'victim@gmail.com'
    >>> mailbox_key("Carol+x@Bücher.example")
    'carol@xn--bcher-kva.example'
    """
    mailbox = single_mailbox(email)
    if mailbox is None:
        return email.strip().lower()
    local, _, domain = mailbox.rpartition("@")
    local = local.split(_SUBADDRESS_SEPARATOR, 1)[0] or local  # "+x@": nothing before the detail to keep
    if domain in _GMAIL_DOMAINS:
        local, domain = local.replace(".", ""), _GMAIL
    return f"{local}@{domain}"


def _mailboxes(addresses: Iterable[str]) -> frozenset[str]:
    """The well-formed ``addresses`` in :func:`parse_mailbox`'s form (the rest can match no mailbox)."""
    return frozenset(m for m in map(single_mailbox, addresses) if m is not None)


def _display_name(participant: Address) -> str:
    """The participant's name as a header value (:func:`header_text`), at most ``_MAX_NAME_LENGTH`` long."""
    return header_text(participant.name)[:_MAX_NAME_LENGTH].strip()


def _first_mailbox(participants: Sequence[Address], own: frozenset[str]) -> dict[str, str] | None:
    """The first participant with a well-formed mailbox whose :func:`mailbox_key` is not in ``own``."""
    for participant in participants:
        email = single_mailbox(participant.written)
        if email is None or mailbox_key(email) in own:
            continue
        name = _display_name(participant)
        return {"name": name, "email": email} if name else {"email": email}
    return None


def _original_sender(message: Mail, own: Collection[str]) -> dict[str, str] | None:
    """The person a list or group relayed: ``X-Original-From`` (Google Groups), else ``Reply-To``."""
    for value in header_values(message, "x-original-from"):
        name, email = parseaddr(value)
        found = _first_mailbox([Address(email.lower(), name, email)], own)
        if found is not None:
            return found
    return _first_mailbox(message.reply_to, own)


def _trusted_list_of(message: Mail, trusted_lists: Collection[TrustedList]) -> TrustedList | None:
    """The trusted list that ``message`` claims to come through: by its ``List-Id``, or by a ``From`` that is
    a trusted list's own address (a post claiming the group's address without its ``List-Id`` is no less
    a claim to be the group's)."""
    listed = list_id(message)
    sender = mailbox_key(sender_email(message))
    for trusted in trusted_lists:
        if (listed and listed == trusted.list_id) or (
            trusted.address and sender == mailbox_key(trusted.address)
        ):
            return trusted
    return None


def _names_someone_else(message: Mail, own: Collection[str]) -> bool:
    """Whether ``X-Original-From`` or ``Reply-To`` names a mailbox other than ``From``: signs of a relay."""
    original = _original_sender(message, own)
    return original is not None and mailbox_key(original["email"]) != mailbox_key(sender_email(message))


def _authenticated(message: Mail, sender: str, authserv_ids: Collection[str]) -> bool:
    """Whether the receiving provider authenticated ``sender``'s domain (compared in its A-labels, as DKIM
    and DMARC name domains)."""
    return (
        sender_authenticated(message, single_mailbox(sender) or sender, authserv_ids) is Authentication.PASS
    )


def recipient_choice(
    message: Mail,
    own_addresses: Collection[str],
    trusted_senders: Collection[str] = (),
    trusted_lists: Collection[TrustedList] = (),
    authserv_ids: Collection[str] = (),
) -> dict[str, str] | SkipReason:
    """The one recipient of a reply to ``message`` (a Nylas participant), or why there is none.

    The rule of evidence (``docs/design.md``): the reply goes to ``From``,
    and to anyone else only on what the receiving provider vouches for.

    - A post of a trusted list whose ``From`` is the list's own address (the
      group rewrote it, DMARC mitigation) goes to the person it relayed
      (``X-Original-From``, else ``Reply-To``) only when the receiving
      provider (its ``authserv_ids``) authenticated that ``From``
      (:func:`replyonce.rules.evidence.sender_authenticated`):
      otherwise :attr:`SkipReason.RELAY_UNVERIFIED` (handed off to a person —
      never the stranger a typed header names, never the group itself).
    - A post of a trusted list that kept its own ``From`` goes to ``From``:
      a forged ``List-Id`` on direct mail reaches only its sender. A list
      named without its address cannot recognise a rewritten post: one that
      names someone other than ``From`` is handed off.
    - A trusted sender's (a contact form's) ``Reply-To`` is honoured when
      the provider authenticated the form's ``From``; otherwise handed off.
    - ``NO_RECIPIENT``: no single well-formed mailbox that is not an agent's.
    """
    own = frozenset(map(mailbox_key, own_addresses))
    trusted_list = _trusted_list_of(message, trusted_lists)
    sender = sender_email(message)
    if trusted_list is not None:
        rewritten = bool(trusted_list.address) and mailbox_key(sender) == mailbox_key(trusted_list.address)
        if rewritten or (not trusted_list.address and _names_someone_else(message, own)):
            if not rewritten or not _authenticated(message, sender, authserv_ids):
                return SkipReason.RELAY_UNVERIFIED
            original = _original_sender(message, own)
            if original is None or is_machine_address(original["email"]):
                return SkipReason.NO_RECIPIENT
            return original
    elif single_mailbox(sender) in _mailboxes(trusted_senders):
        asked = _first_mailbox(message.reply_to, own)
        if asked is not None:
            if not _authenticated(message, sender, authserv_ids):
                return SkipReason.RELAY_UNVERIFIED
            return asked
    found = _first_mailbox(message.from_[:1], own)
    return found if found is not None else SkipReason.NO_RECIPIENT


def reply_recipient(
    message: Mail,
    own_addresses: Collection[str],
    trusted_senders: Collection[str] = (),
    trusted_lists: Collection[TrustedList] = (),
    authserv_ids: Collection[str] = (),
) -> dict[str, str] | None:
    """:func:`recipient_choice`'s recipient, or ``None`` when there is none (for whatever reason).

    An agent address never receives a reply: an agent is recognised by the inbox
    (:func:`mailbox_key`: ``info@bücher.example``, ``INFO+x@xn--bcher-kva.example``),
    since a reply to any spelling of it is a reply to ourselves. A trusted
    sender is recognised by its address (:func:`parse_mailbox`'s form, so
    either spelling of its domain), not by its inbox: trust is granted to
    one address, and is not widened to its ``+`` variants.
    """
    choice = recipient_choice(message, own_addresses, trusted_senders, trusted_lists, authserv_ids)
    return None if isinstance(choice, SkipReason) else choice
