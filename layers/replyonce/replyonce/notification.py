"""A Nylas webhook notification: the envelope and the message it carries.

Keys (docs/design.md): the top-level ``id`` identifies a notification across its
delivery attempts (primary dedup key); ``data.object.id`` identifies the
message (reply ledger); ``grant_id`` + ``thread_id`` identify the thread (lease).
"""

import json
from dataclasses import dataclass
from typing import Any

from replyonce.exceptions import InvalidNotificationError

MESSAGE_CREATED = "message.created"
TRUNCATED_SUFFIX = "truncated"


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

    @property
    def is_truncated(self) -> bool:
        """Nylas dropped the body (``.truncated`` anywhere in the type suffixes)."""
        return TRUNCATED_SUFFIX in self.type.split(".")[2:]

    @property
    def has_body(self) -> bool:
        return isinstance(self.object.get("body"), str)

    def without_body(self) -> "Notification":
        """The same notification with the message body (and attachment data) removed.

        Why: a notification too large for one SQS message is queued without
        its body; the replier then fetches the message by id, as it does for
        ``message.created.truncated``.
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

    def to_json(self) -> str:
        return json.dumps(self.payload, separators=(",", ":"), ensure_ascii=False)
