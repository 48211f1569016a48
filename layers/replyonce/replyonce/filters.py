"""Which messages the agent must not answer, each with a reason code.

Reason codes are part of the operational interface: they appear in the skip
log line and as the ``reason`` dimension of the ``NotificationSkipped`` metric.
"""

from typing import Any

from replyonce.notification import Notification

UNSUPPORTED_TYPE = "unsupported_type"
GRANT_NOT_AGENT = "grant_not_agent"
OWN_OUTBOUND = "own_outbound"
AUTOMATED_SENDER = "automated_sender"
AUTO_SUBMITTED = "auto_submitted"
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
# Header values that mark bulk or automatic mail (RFC 3834 Auto-Submitted, Precedence).
_BULK_PRECEDENCE = frozenset({"bulk", "junk", "list", "auto_reply"})


def sender_email(message: dict[str, Any]) -> str:
    senders = message.get("from") or []
    if senders and isinstance(senders[0], dict):
        return str(senders[0].get("email", "")).strip().lower()
    return ""


def notification_skip_reason(notification: Notification, agent_grant_ids: frozenset[str]) -> str | None:
    """Skip reasons that need nothing but the envelope."""
    if not notification.is_message_created:
        return UNSUPPORTED_TYPE
    if notification.grant_id not in agent_grant_ids:
        return GRANT_NOT_AGENT
    return None


def message_skip_reason(message: dict[str, Any], agent_email: str) -> str | None:
    """Skip reasons of a message: the agent's own mail, and machines."""
    sender = sender_email(message)
    if not sender:
        return NO_SENDER
    if sender == agent_email.lower():
        return OWN_OUTBOUND
    local_part = sender.split("@", 1)[0]
    if local_part in _AUTOMATED_LOCAL_PARTS or local_part.startswith(("mailer-daemon", "bounce")):
        return AUTOMATED_SENDER
    headers = {
        str(h.get("name", "")).lower(): str(h.get("value", "")).strip().lower()
        for h in message.get("headers") or []
        if isinstance(h, dict)
    }
    if headers.get("auto-submitted", "no") != "no":
        return AUTO_SUBMITTED
    if (
        headers.get("precedence") in _BULK_PRECEDENCE
        or "x-autoreply" in headers
        or "x-autorespond" in headers
    ):
        return AUTO_SUBMITTED
    return None
