"""The Nylas calls of the operator commands: webhooks (create, get, rotate, delete), a grant, messages.

Why not the Nylas SDK: these few calls are all the commands need, ``requests`` is already a
pinned dependency, and the documented rotate path (``POST /v3/webhooks/rotate-secret/{id}``,
https://developer.nylas.com/docs/reference/api/webhook-notifications/post-new-secret/) differs
from the Python SDK's (``PUT /v3/webhooks/{id}/rotate-secret``).
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests

from ops.errors import NylasApiError
from replyonce.ports import Folder
from replyonce.rules.evidence import sent_folder_ids

# Nylas verifies the URL inside the create call and allows itself 10 s for that.
CREATE_TIMEOUT_SECONDS = 30.0
TIMEOUT_SECONDS = 15.0
# Nylas' default page; listings follow next_cursor for the rest.
PAGE_LIMIT = 50


@dataclass(frozen=True)
class Webhook:
    """A webhook destination; ``secret`` is set only by create and rotate (never shown by ``repr``)."""

    id: str
    webhook_url: str
    status: str = ""
    trigger_types: tuple[str, ...] = ()
    notification_email_addresses: tuple[str, ...] = ()
    secret: str = field(default="", repr=False)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Webhook":
        return cls(
            id=str(data["id"]),
            webhook_url=str(data.get("webhook_url", "")),
            status=str(data.get("status", "")),
            trigger_types=tuple(data.get("trigger_types") or ()),
            notification_email_addresses=tuple(data.get("notification_email_addresses") or ()),
            secret=str(data.get("webhook_secret") or ""),
        )


class NylasAdmin:
    """Nylas v3 calls with the application's API key.

    Parameters
    ----------
    api_uri:
        ``https://api.us.nylas.com`` or ``https://api.eu.nylas.com`` (the stack's ``NylasApiUri``).
    api_key:
        The application API key (``Authorization: Bearer``); never part of an error message.
    session:
        Injectable ``requests.Session``.
    """

    def __init__(self, api_uri: str, api_key: str, session: requests.Session | None = None) -> None:
        self._base = api_uri.rstrip("/")
        self._session = session or requests.Session()
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}

    def create_webhook(
        self, webhook_url: str, trigger_types: list[str], description: str, notification_emails: list[str]
    ) -> Webhook:
        """``POST /v3/webhooks``; Nylas GETs ``webhook_url?challenge=`` before it answers."""
        body = {
            "trigger_types": trigger_types,
            "webhook_url": webhook_url,
            "description": description,
            "notification_email_addresses": notification_emails,
        }
        document = self._call("POST", "/v3/webhooks", "create the webhook", CREATE_TIMEOUT_SECONDS, json=body)
        return Webhook.from_data(_data_object(document, "create the webhook"))

    def get_webhook(self, webhook_id: str) -> Webhook | None:
        """``GET /v3/webhooks/{id}``; ``None`` when Nylas does not know it (deleted)."""
        operation = "read the webhook"
        try:
            document = self._call(
                "GET", f"/v3/webhooks/{quote(webhook_id, safe='')}", operation, TIMEOUT_SECONDS
            )
        except NylasApiError as exc:
            if exc.status == 404:
                return None
            raise
        return Webhook.from_data(_data_object(document, operation))

    def delete_webhook(self, webhook_id: str) -> None:
        """``DELETE /v3/webhooks/{id}``: Nylas stops delivering to that destination."""
        path = f"/v3/webhooks/{quote(webhook_id, safe='')}"
        self._call("DELETE", path, "delete the webhook", TIMEOUT_SECONDS)

    def rotate_secret(self, webhook_id: str) -> Webhook:
        """``POST /v3/webhooks/rotate-secret/{id}``: the old secret stops being used at once."""
        operation = "rotate the webhook secret"
        path = f"/v3/webhooks/rotate-secret/{quote(webhook_id, safe='')}"
        return Webhook.from_data(
            _data_object(self._call("POST", path, operation, TIMEOUT_SECONDS), operation)
        )

    def thread_messages(self, grant_id: str, thread_id: str, limit: int = 20) -> list[dict[str, Any]]:
        """``GET /v3/grants/{grant}/messages?thread_id=``: the thread's newest messages."""
        operation = "list the thread's messages"
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages"
        document = self._call(
            "GET", path, operation, TIMEOUT_SECONDS, params={"thread_id": thread_id, "limit": limit}
        )
        return _data_list(document, operation)

    def drafts_page(
        self, grant_id: str, limit: int, page_token: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """``GET /v3/grants/{grant}/drafts``: one page of the grant's drafts and the next page's cursor
        (https://developer.nylas.com/docs/reference/api/drafts/)."""
        operation = "list the grant's drafts"
        params: dict[str, Any] = {"limit": limit}
        if page_token:
            params["page_token"] = page_token
        path = f"/v3/grants/{quote(grant_id, safe='')}/drafts"
        document = self._call("GET", path, operation, TIMEOUT_SECONDS, params=params)
        cursor = document.get("next_cursor")
        return _data_list(document, operation), str(cursor) if cursor else None

    def sent_folder_ids(self, grant_id: str) -> frozenset[str]:
        """The ids of the grant's Sent folder (``GET /folders``, by attribute or name): a person's answer
        is a message of the mailbox filed there (``replyonce.rules.evidence``)."""
        operation = "list the grant's folders"
        path = f"/v3/grants/{quote(grant_id, safe='')}/folders"
        document = self._call("GET", path, operation, TIMEOUT_SECONDS, params={"limit": 200})
        folders = [
            Folder(
                str(f.get("id", "")), str(f.get("name", "")), tuple(str(a) for a in f.get("attributes") or [])
            )
            for f in _data_list(document, operation)
            if isinstance(f, dict)
        ]
        return sent_folder_ids(folders)

    def grant_email(self, grant_id: str) -> str:
        """``GET /v3/grants/{grant}``: the grant's address, lower case."""
        document = self._call(
            "GET", f"/v3/grants/{quote(grant_id, safe='')}", "read the grant", TIMEOUT_SECONDS
        )
        data = document.get("data")
        return str(data.get("email", "") if isinstance(data, dict) else "").lower()

    def received_messages(
        self, grant_id: str, received_after: int, received_before: int
    ) -> Iterator[dict[str, Any]]:
        """Every message of the grant received in ``[received_after, received_before]``, page by page.

        ``fields=include_headers``: the replier's filters read List-Id, Auto-Submitted and the like.
        """
        operation = "list the grant's messages"
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages"
        params: dict[str, Any] = {
            "received_after": received_after,
            "received_before": received_before,
            "limit": PAGE_LIMIT,
            "fields": "include_headers",
        }
        while True:
            document = self._call("GET", path, operation, TIMEOUT_SECONDS, params=params)
            yield from _data_list(document, operation)
            cursor = document.get("next_cursor")
            if not cursor:
                return
            params = {**params, "page_token": cursor}

    def _call(self, method: str, path: str, operation: str, timeout: float, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self._session.request(
                method, self._base + path, headers=self._headers, timeout=timeout, **kwargs
            )
        except requests.RequestException as exc:
            # The exception text names the URL, never the headers: safe to show.
            raise NylasApiError(operation, None, message=f"{type(exc).__name__}: {exc}") from None
        try:
            document = response.json()
        except ValueError:
            document = {}
        if not isinstance(document, dict):
            document = {}
        if response.status_code != 200:
            error = document.get("error") if isinstance(document.get("error"), dict) else {}
            raise NylasApiError(
                operation,
                response.status_code,
                error_type=str(error.get("type", "")),
                message=str(error.get("message", "")) or response.reason or "",
                request_id=str(document.get("request_id", "")),
            )
        return document


def _data_object(document: dict[str, Any], operation: str) -> dict[str, Any]:
    data = document.get("data")
    if not isinstance(data, dict) or "id" not in data:
        raise NylasApiError(operation, 200, message="the answer has no data.id")
    return data


def _data_list(document: dict[str, Any], operation: str) -> list[dict[str, Any]]:
    """The objects of a listing's ``data``; anything else in the list is not a message and is skipped."""
    data = document.get("data")
    if not isinstance(data, list):
        raise NylasApiError(operation, 200, message="the answer has no data list")
    return [m for m in data if isinstance(m, dict)]
