"""Which messages the agent must not answer, each with a reason code (pure functions).

Reason codes are part of the operational interface: they appear in the skip
log line and as the ``reason`` dimension of the ``NotificationSkipped`` metric.

Two kinds of check, because Nylas includes a message's ``headers`` only when
asked (``fields=include_headers``; webhook payloads carry none by default):

- :func:`sender_skip_reason` needs only ``from``: it runs on the webhook
  payload, before any lease or Nylas call.
- :func:`header_skip_reason` needs the headers: it runs on the thread read
  made inside the lease, which asks for them. Run on a payload without
  headers it would find nothing — which is why it is never the only check.
"""

from collections.abc import Collection, Mapping
from typing import Any

from replyonce.notification import Notification

UNSUPPORTED_TYPE = "unsupported_type"
GRANT_NOT_AGENT = "grant_not_agent"
OWN_OUTBOUND = "own_outbound"
AUTOMATED_SENDER = "automated_sender"
AUTO_SUBMITTED = "auto_submitted"
BULK_MAIL = "bulk_mail"
NO_SENDER = "no_sender"

# Local parts of addresses that belong to machines, not people (RFC 3834 and common practice).
_AUTOMATED_LOCAL_PARTS = frozenset(
    {
        "noreply",
        "no-reply",
        "no_reply",
        "donotreply",
        "do-not-reply",
        "do_not_reply",
        "mailer-daemon",
        "postmaster",
        "bounce",
        "bounces",
        "notifications",
        "notification",
    }
)
# Precedence values of list and bulk mail (RFC 2076; RFC 3834 section 2 says not to answer them).
_BULK_PRECEDENCE = frozenset({"bulk", "junk", "list"})
# Headers only mailing lists and newsletters carry (RFC 2919, RFC 2369).
_LIST_HEADERS = ("list-id", "list-unsubscribe")
# Vendor headers of autoresponders that predate RFC 3834.
_AUTORESPONDER_HEADERS = ("x-autoreply", "x-autorespond", "x-autoresponse")


def address(participant: Any) -> str:
    """The lower-cased email of a ``{name, email}`` participant (``""`` when malformed)."""
    if isinstance(participant, Mapping):
        return str(participant.get("email") or "").strip().lower()
    return ""


def sender_email(message: Mapping[str, Any]) -> str:
    senders = message.get("from") or []
    return address(senders[0]) if isinstance(senders, list) and senders else ""


def headers_of(message: Mapping[str, Any]) -> dict[str, str]:
    """Header name (lower case) → value (stripped, lower case); the last one wins."""
    return {
        str(h.get("name", "")).strip().lower(): str(h.get("value", "")).strip().lower()
        for h in message.get("headers") or []
        if isinstance(h, Mapping)
    }


def notification_skip_reason(notification: Notification, agent_grant_ids: Collection[str]) -> str | None:
    """Skip reasons that need nothing but the envelope."""
    if not notification.is_message_created:
        return UNSUPPORTED_TYPE
    if notification.grant_id not in agent_grant_ids:
        return GRANT_NOT_AGENT
    return None


def sender_skip_reason(
    message: Mapping[str, Any], own_addresses: Collection[str], trusted_senders: Collection[str] = ()
) -> str | None:
    """The agent's own mail (any agent grant's address) and machine senders, from ``from`` alone.

    ``trusted_senders`` (``REPLY_TO_TRUSTED_SENDERS``) are no-reply addresses
    the operator vouches for, such as a contact form that puts the customer in
    ``Reply-To``: their machine-looking local part is not a reason to skip.
    """
    sender = sender_email(message)
    if not sender:
        return NO_SENDER
    if sender in own_addresses:
        return OWN_OUTBOUND
    if sender in trusted_senders:
        return None
    local_part = sender.split("@", 1)[0]
    if local_part in _AUTOMATED_LOCAL_PARTS or local_part.startswith(("mailer-daemon", "bounce")):
        return AUTOMATED_SENDER
    return None


def header_skip_reason(message: Mapping[str, Any]) -> str | None:
    """Automatic and bulk mail, from the headers (RFC 3834 ``Auto-Submitted``, ``Precedence``, lists).

    ``Auto-Submitted`` other than ``no`` includes ``auto-replied``, which
    every reply of ours carries: another ReplyOnce (or any agent of ours)
    never answers it.
    """
    headers = headers_of(message)
    if headers.get("auto-submitted", "no").split(";", 1)[0].strip() != "no":
        return AUTO_SUBMITTED
    if any(name in headers for name in _AUTORESPONDER_HEADERS) or headers.get("precedence") == "auto_reply":
        return AUTO_SUBMITTED
    if headers.get("precedence") in _BULK_PRECEDENCE or any(name in headers for name in _LIST_HEADERS):
        return BULK_MAIL
    return None


def message_skip_reason(
    message: Mapping[str, Any], own_addresses: Collection[str], trusted_senders: Collection[str] = ()
) -> str | None:
    """Every message-level reason: sender first, then headers (when the message carries them)."""
    return sender_skip_reason(message, own_addresses, trusted_senders) or header_skip_reason(message)
