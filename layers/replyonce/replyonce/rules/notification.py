"""A Nylas webhook notification: the envelope and the message it carries.

Keys (docs/design.md): the top-level ``id`` identifies a notification across its
delivery attempts (primary dedup key); ``data.object.id`` identifies the
message (reply ledger); ``grant_id`` + ``thread_id`` identify the thread (lease).
"""

import json
from dataclasses import dataclass
from typing import Any

from replyonce.exceptions import InvalidNotificationError
from replyonce.jobs import GrantChanged, MessageArrived, SendReported
from replyonce.rules.coverage import INTENT_KEY, THREAD_KEY

MESSAGE_CREATED = "message.created"
MESSAGE_DELIVERED = "message.delivered"
MESSAGE_SEND_FAILED = "message.send_failed"
GRANT_LIFECYCLE = ("grant.created", "grant.updated", "grant.expired", "grant.deleted")
"""The grant notifications the replier acts on (``replyonce.rules.grant_life``); ``grant.imap_sync_completed``
and every other type stay skipped ``unsupported_type``."""
# A notification `time` above this is milliseconds (10^11 s is the year 5138), as the webhook reads it.
_MILLISECONDS_ABOVE = 10**11


@dataclass(frozen=True)
class Notification:
    """A parsed notification envelope.

    Attributes
    ----------
    payload:
        The whole envelope as Nylas sent it (after decompression).
    """

    payload: dict[str, Any]

    @classmethod
    def parse(cls, body: bytes | str) -> "Notification":
        """Parse and check an envelope.

        Raises
        ------
        InvalidNotificationError
            When the body is not JSON, not an object, or lacks ``id``, ``type``
            or a ``data.object`` object: such a body can never be processed,
            so retrying it is pointless.
        """
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidNotificationError(f"body is not JSON: {exc}") from None
        if not isinstance(payload, dict):
            raise InvalidNotificationError("body is not a JSON object")
        for field in ("id", "type"):
            value = payload.get(field)
            if not isinstance(value, str) or not value:
                raise InvalidNotificationError(f"notification has no string {field!r}")
        data = payload.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("object"), dict):
            raise InvalidNotificationError("notification has no data.object")
        return cls(payload)

    @property
    def id(self) -> str:
        return self.payload["id"]

    @property
    def type(self) -> str:
        return self.payload["type"]

    @property
    def object(self) -> dict[str, Any]:
        return self.payload["data"]["object"]

    @property
    def grant_id(self) -> str:
        value = self.object.get("grant_id")
        return value if isinstance(value, str) else ""

    @property
    def message_id(self) -> str:
        value = self.object.get("id")
        return value if isinstance(value, str) else ""

    @property
    def thread_id(self) -> str:
        value = self.object.get("thread_id")
        return value if isinstance(value, str) else ""

    @property
    def is_message_created(self) -> bool:
        """``message.created`` or one of its variants (``.truncated``, ``.transformed``, ...)."""
        return self.type == MESSAGE_CREATED or self.type.startswith(MESSAGE_CREATED + ".")

    def without_body(self) -> "Notification":
        """The same notification with the message body (and attachment data) removed.

        Why: a notification too large for one SQS message is queued without
        its body; the replier reads the thread inside the lease anyway, which
        carries every body, so nothing is lost and nothing is fetched extra.
        """
        stripped = {k: v for k, v in self.object.items() if k not in ("body", "attachments")}
        data = {**self.payload["data"], "object": stripped}
        return Notification({**self.payload, "data": data})

    def skeleton(self) -> "Notification":
        """Only the envelope and the ids needed to fetch the message again."""
        keep = ("id", "grant_id", "object", "thread_id")
        stripped = {k: self.object[k] for k in keep if k in self.object}
        envelope = {
            k: self.payload[k] for k in ("specversion", "type", "source", "id", "time") if k in self.payload
        }
        application = self.payload["data"].get("application_id")
        data: dict[str, Any] = {"object": stripped}
        if isinstance(application, str):
            data["application_id"] = application
        return Notification({**envelope, "data": data})

    @property
    def time(self) -> int:
        """The envelope's ``time`` in epoch seconds (milliseconds read as such); 0 when it has none."""
        sent = self.payload.get("time")
        if isinstance(sent, bool) or not isinstance(sent, int | float):
            return 0
        return int(sent / 1000 if sent > _MILLISECONDS_ABOVE else sent)

    def job(self) -> "MessageArrived | SendReported | GrantChanged | None":
        """What this notification asks the replier to do; ``None`` for a type it does not handle.

        ``message.created`` and its variants (``.truncated``, ``.transformed``,
        ``.cleaned``, ``.metadata``) are a message to answer. ``message.delivered``
        and ``message.send_failed`` report on a reply Nylas queued (Agent
        Accounts): ours carry the intent id and the thread in their metadata.
        """
        if self.is_message_created:
            return MessageArrived(self.grant_id, self.message_id, self.thread_id, self.object)
        if self.type in GRANT_LIFECYCLE:
            # data.object: grant_id, integration_id, provider, ...; grant.updated: reauthentication_flag
            # (https://developer.nylas.com/docs/reference/notifications/grants/grant-updated/).
            return GrantChanged(
                grant_id=self.grant_id,
                kind=self.type,
                at=self.time,
                reauthenticated=self.object.get("reauthentication_flag") is True,
                notification_id=self.id,
            )
        if self.type == MESSAGE_DELIVERED:
            # message.delivered: data.grant_id, data.object.message (id, metadata, ...), .delivered.
            sent = self.object.get("message")
            sent = sent if isinstance(sent, dict) else {}
            grant = self.payload["data"].get("grant_id") or sent.get("grant_id") or ""
            return _reported(grant, sent, delivered=True)
        if self.type == MESSAGE_SEND_FAILED:
            # message.send_failed: data.object.{grant_id, reason, error, object (the message, or null)}.
            failed = self.object.get("object")
            failed = failed if isinstance(failed, dict) else {}
            grant = self.object.get("grant_id") or failed.get("grant_id") or ""
            return _reported(grant, failed, delivered=False)
        return None

    def to_json(self) -> str:
        return json.dumps(self.payload, separators=(",", ":"), ensure_ascii=False)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _reported(grant_id: Any, message: dict[str, Any], *, delivered: bool) -> "SendReported":
    metadata = message.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return SendReported(
        grant_id=_text(grant_id),
        thread_id=_text(metadata.get(THREAD_KEY)) or _text(message.get("thread_id")),
        intent_id=_text(metadata.get(INTENT_KEY)),
        reply_message_id=_text(message.get("id")),
        delivered=delivered,
    )
