"""What the webhooks would carry: the callbacks that stand for Nylas' notifications.

The emulator never POSTs notifications itself (the local stack's :mod:`devstack.webhook_sender`
signs and delivers them); it hands each one to a callback:

- ``on_message_created(message)`` for every message that appears in a mailbox (inbound mail, and
  outbound mail, which fires ``message.created`` too for Agent Accounts);
- ``on_notification(trigger_type, data)`` for every other trigger, with ``data`` the notification's
  ``data`` object exactly as Nylas documents it (``application_id`` included).

Sources: https://developer.nylas.com/docs/v3/notifications/ (field customization: no ``headers``
unless asked), https://developer.nylas.com/docs/reference/notifications/messages/message-updated/,
https://developer.nylas.com/docs/reference/notifications/agent-accounts/message-delivered/,
https://developer.nylas.com/docs/reference/notifications/messages/message-send_failed/.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from devstack.nylas.mailbox import folder_id, select_fields
from devstack.nylas.modes import Modes
from devstack.nylas.wire import Json

_log = logging.getLogger(__name__)

MessageCallback = Callable[[Json], None]
NotificationCallback = Callable[[str, Json], None]


class Notifier:
    """Builds each notification's payload and hands it to its callback.

    Parameters
    ----------
    modes : Modes
        ``webhook_includes_headers`` and ``notification_folders`` shape the messages.
    application_id : str
        ``data.application_id`` of every notification.
    """

    def __init__(self, modes: Modes, application_id: str) -> None:
        self._modes = modes
        self.application_id = application_id
        self.on_message_created: MessageCallback | None = None
        self.on_notification: NotificationCallback | None = None

    def view(self, message: Json) -> Json:
        """A message as a notification carries it: a copy, headers and folders as the modes say."""
        # A webhook without field customization carries no headers: a product that filters on them
        # must read the message (fields=include_headers), and is caught here if it does not.
        view = select_fields(
            message, "include_headers" if self._modes.webhook_includes_headers else "standard"
        )
        if self._modes.notification_folders == "ids":
            view["folders"] = [folder_id(message["grant_id"], f) for f in message["folders"]]
        return view

    def message_created(self, message: Json, *, swallow: bool) -> None:
        callback = self.on_message_created
        if callback is None:
            return
        view = self.view(message)  # a copy: what the callback does never reaches the mailbox
        try:
            callback(view)
        except Exception:
            if not swallow:
                raise
            _log.exception("on_message_created callback failed for message %s", view.get("id"))

    def message_updated(self, message: Json, *, swallow: bool = True) -> None:
        """``message.updated``: ``data.object`` is the message, as for ``message.created``."""
        self.notify("message.updated", {"object": self.view(message)}, swallow=swallow)

    def delivered(self, message: Json, *, sent_at: int, delivered_at: int, swallow: bool) -> None:
        """``message.delivered`` for a message that went out (Agent Accounts only)."""
        recipients = [p["email"] for p in [*message["to"], *message["cc"], *message["bcc"]]]
        summary: Json = {
            "id": message["id"],
            "subject": message["subject"],
            "from": message["from"][0]["email"],
            "to": [p["email"] for p in message["to"]],
            "sent_at": sent_at,
        }
        # "Omitted if none were specified / provided", as the reference says of each.
        for name in ("cc", "bcc"):
            if message[name]:
                summary[name] = [p["email"] for p in message[name]]
        if message["metadata"]:
            summary["metadata"] = dict(message["metadata"])
        self.notify(
            "message.delivered",
            {
                "grant_id": message["grant_id"],
                "object": {
                    "message": summary,
                    "delivered": {"delivered_at": delivered_at, "recipients": recipients},
                },
            },
            swallow=swallow,
        )

    def send_failed(
        self, grant_id: str, message: Json | None, *, reason: str, failure: Mapping[str, Any], swallow: bool
    ) -> None:
        """``message.send_failed``: ``data.object`` holds ``grant_id``, ``reason``, ``error`` and the
        message that failed (``object``, ``null`` when it could not be built)."""
        failed = None
        if message is not None:
            failed = {**self.view(message), "object": "message", "folders": []}  # it never reached one
        self.notify(
            "message.send_failed",
            {"object": {"grant_id": grant_id, "reason": reason, "error": dict(failure), "object": failed}},
            swallow=swallow,
        )

    def notify(self, trigger_type: str, data: Json, *, swallow: bool) -> None:
        """Hand ``data`` (``application_id`` added first) to ``on_notification``."""
        callback = self.on_notification
        if callback is None:
            return
        try:
            callback(trigger_type, {"application_id": self.application_id, **data})
        except Exception:
            if not swallow:
                raise
            _log.exception("on_notification callback failed for %s", trigger_type)
