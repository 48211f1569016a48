"""Which messages the agent must never answer (invariant 4), as pure functions of the message.

One function decides it, :func:`reason_not_to_answer`, from what the message
says about itself and what the deployment knows: its agents' addresses, the
senders it trusts, the folders mail must not be answered from. Nothing here
trusts a header's *absence*: Nylas includes ``headers`` only when asked
(``fields=include_headers``), so on a webhook payload the header checks find
nothing, and the replier runs this again on the thread read, which asks.
"""

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replyonce.reasons import SkipReason

# Local-part tokens of machines, not people (RFC 3834 section 2 and common practice). A token is
# matched with any of - _ . + or the ends of the local part around it, and with any of - _ .
# (or nothing) inside it: no-reply, noreply+x, no.reply, do-not-reply.orders, no-reply-aws.
_MACHINE_TOKENS = (
    r"no[-_.]?reply",
    r"do[-_.]?not[-_.]?reply",
    r"mailer[-_.]?daemon",
    r"postmaster",
    r"bounces?",
    r"notifications?",
)
_MACHINE_LOCAL_PART = re.compile(rf"(?:^|[-_.+])(?:{'|'.join(_MACHINE_TOKENS)})(?:[-_.+]|$)")
# Precedence values of list and bulk mail (RFC 2076; RFC 3834 section 2: do not answer them).
_BULK_PRECEDENCE = frozenset({"bulk", "junk", "list"})
# Headers only mailing lists and newsletters carry (RFC 2919, RFC 2369).
_LIST_HEADERS = frozenset({"list-id", "list-unsubscribe"})
# Vendor headers of autoresponders that predate RFC 3834.
_AUTORESPONDER_HEADERS = frozenset({"x-autoreply", "x-autorespond", "x-autoresponse"})
# Folder names of mail never answered: Agent Account system folders (junk, trash) and the names other
# providers give them. Notifications may carry names, REST answers carry ids (resolved per grant).
CLOSED_FOLDER_NAMES = frozenset({"junk", "trash", "spam", "deleted items", "junk email"})


def address(participant: Any) -> str:
    """The lower-cased email of a ``{name, email}`` participant (``""`` when malformed)."""
    if isinstance(participant, Mapping):
        email = participant.get("email")
        return email.strip().lower() if isinstance(email, str) else ""
    return ""


def sender_email(message: Mapping[str, Any]) -> str:
    """The ``From`` address (lower case), ``""`` when there is none."""
    senders = message.get("from")
    return address(senders[0]) if isinstance(senders, list) and senders else ""


def recipients_of(message: Mapping[str, Any]) -> list[str]:
    """Every ``to`` and ``cc`` address of the message, lower case, in order."""
    found: list[str] = []
    for name in ("to", "cc"):
        value = message.get(name)
        for participant in value if isinstance(value, list) else []:
            email = address(participant)
            if email:
                found.append(email)
    return found


def header_values(message: Mapping[str, Any], name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive), stripped, lower case, in order."""
    wanted = name.lower()
    headers = message.get("headers")
    return [
        str(h.get("value", "")).strip().lower()
        for h in (headers if isinstance(headers, list) else [])
        if isinstance(h, Mapping) and str(h.get("name", "")).strip().lower() == wanted
    ]


def _header_names(message: Mapping[str, Any]) -> set[str]:
    headers = message.get("headers")
    return {
        str(h.get("name", "")).strip().lower()
        for h in (headers if isinstance(headers, list) else [])
        if isinstance(h, Mapping)
    }


def _without_comments(value: str) -> str:
    """``value`` with RFC 5322 comments removed: ``no (sent by a person)`` → ``no``; nested ones too."""
    depth, kept = 0, []
    escaped = False
    for char in value:
        if escaped:
            escaped = False
            if depth == 0:
                kept.append(char)
            continue
        if char == "\\":
            escaped = True
            continue
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def auto_submitted_keyword(value: str) -> str:
    """The keyword of an ``Auto-Submitted`` value (RFC 3834 section 5): comments and parameters dropped."""
    return _without_comments(value).split(";", 1)[0].strip().lower()


def is_machine_address(email: str) -> bool:
    """Whether the local part of ``email`` names a machine (no-reply, mailer-daemon, bounces, ...)."""
    return bool(_MACHINE_LOCAL_PART.search(email.split("@", 1)[0].lower()))


def header_reason(message: Mapping[str, Any]) -> SkipReason | None:
    """Automatic and bulk mail, from the headers; any one automatic header among several decides."""
    if any(auto_submitted_keyword(v) != "no" for v in header_values(message, "auto-submitted")):
        return SkipReason.AUTO_SUBMITTED
    names = _header_names(message)
    precedence = set(header_values(message, "precedence"))
    if names & _AUTORESPONDER_HEADERS or "auto_reply" in precedence:
        return SkipReason.AUTO_SUBMITTED
    if precedence & _BULK_PRECEDENCE or names & _LIST_HEADERS:
        return SkipReason.BULK_MAIL
    return None


def in_closed_folder(message: Mapping[str, Any], closed_folder_ids: Collection[str]) -> bool:
    """Whether ``folders`` names the grant's junk or trash folder, by id or by name."""
    folders = message.get("folders")
    for folder in folders if isinstance(folders, list) else []:
        if isinstance(folder, str) and (folder in closed_folder_ids or folder.lower() in CLOSED_FOLDER_NAMES):
            return True
    return False


@dataclass(frozen=True)
class Agents:
    """The deployment's agent grants, in the configured order, with the addresses Nylas gave them.

    Attributes
    ----------
    grant_ids:
        ``AGENT_GRANT_IDS`` in its order: the order decides which agent answers an email sent to several.
    emails:
        Grant id → address (lower case), for the grants Nylas knows.
    names:
        Grant id → display name (the reply's signature).
    """

    grant_ids: tuple[str, ...]
    emails: Mapping[str, str]
    names: Mapping[str, str] = field(default_factory=dict)

    @property
    def addresses(self) -> frozenset[str]:
        """Every agent address: mail from any of them is the agent's own."""
        return frozenset(self.emails.values())

    def answering(self, message: Mapping[str, Any], receiving_grant: str) -> str:
        """The grant that answers ``message``: the first configured agent among its recipients.

        Why without coordination: one email to two agent mailboxes arrives as
        two messages (own ids, own threads, own notifications) with the same
        ``Message-ID``; each copy sees the same ``to``/``cc``, so each decides
        the same grant without talking to the other. A grant addressed only
        as ``bcc`` (in no ``to``/``cc``) defers to an addressed one; when none
        is addressed, each copy answers for itself (its ``bcc`` is invisible
        to the others — the one case two agents can both answer).
        """
        addressed = set(recipients_of(message))
        for grant_id in self.grant_ids:
            if self.emails.get(grant_id, "") in addressed:
                return grant_id
        return receiving_grant


def sender_reason(
    message: Mapping[str, Any], agents: Agents, trusted_senders: Collection[str]
) -> SkipReason | None:
    """The agent's own mail and machine senders, from ``from`` alone (no headers needed)."""
    sender = sender_email(message)
    if not sender:
        return SkipReason.NO_SENDER
    if sender in agents.addresses:
        return SkipReason.OWN_OUTBOUND
    if sender not in trusted_senders and is_machine_address(sender):
        return SkipReason.AUTOMATED_SENDER
    return None


def reason_not_to_answer(
    message: Mapping[str, Any],
    *,
    grant_id: str,
    agents: Agents,
    trusted_senders: Collection[str],
    closed_folder_ids: Collection[str],
) -> SkipReason | None:
    """Why the agent must not answer ``message`` received by ``grant_id``, or ``None`` (invariant 4).

    In order: the sender (own mail, no sender, a machine's address —
    ``REPLY_TO_TRUSTED_SENDERS`` vouches for a contact form's no-reply
    address), the folder (junk, trash), the headers (RFC 3834
    ``Auto-Submitted`` on its keyword, autoresponders, bulk and list mail),
    then which of several addressed agents answers.
    """
    reason = sender_reason(message, agents, trusted_senders)
    if reason:
        return reason
    if in_closed_folder(message, closed_folder_ids):
        return SkipReason.JUNK_OR_TRASH
    reason = header_reason(message)
    if reason:
        return reason
    if agents.answering(message, grant_id) != grant_id:
        return SkipReason.ANSWERED_BY_OTHER_AGENT
    return None


def unanswerable(
    messages: Iterable[Mapping[str, Any]],
    *,
    grant_id: str,
    agents: Agents,
    trusted_senders: Collection[str],
    closed_folder_ids: Collection[str],
) -> Sequence[SkipReason | None]:
    """:func:`reason_not_to_answer` for each message, in order."""
    return [
        reason_not_to_answer(
            m,
            grant_id=grant_id,
            agents=agents,
            trusted_senders=trusted_senders,
            closed_folder_ids=closed_folder_ids,
        )
        for m in messages
    ]
