"""The Nylas API calls the replier makes: grant, message, thread messages, send.

Why ``requests`` with one ``Session``: connection reuse across records of a
warm container; urllib3 ``Retry`` retries the idempotent GETs (with
``Retry-After``), while the send is never retried blindly — its outcomes are
classified here and the caller decides, with the same ``Idempotency-Key``.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from replyonce.exceptions import NylasPermanentError, NylasRetryableError
from replyonce.redaction import redact_addresses

# Statuses worth another try in a moment (urllib3 retries them for GETs)...
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 507})
# ...and those worth another try later, with the record: 401 too, because during an API key
# rotation the cached key is stale for up to the secret's cache age, and a reply refused for our
# key is ours to retry, not a customer's message to give up on.
RETRYABLE_STATUSES = TRANSIENT_STATUSES | {401}
CONCURRENT_IDEMPOTENT_REQUEST = "api.concurrent_idempotent_request"
INVALID_IDEMPOTENT_REQUEST = "api.invalid_idempotent_request"
MAX_IDEMPOTENCY_KEY_LENGTH = 256
_KEY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/replyonce/idempotency-key")
_CONNECT_TIMEOUT_SECONDS = 3.05


def idempotency_key(grant_id: str, message_id: str) -> str:
    """The send fence: one key per (grant, message replied to), the same on every re-run.

    A re-run after a Lambda timeout, or a stale lease holder, sends with the
    same key and Nylas replays the first response instead of sending again.
    """
    return str(uuid.uuid5(_KEY_NAMESPACE, f"{grant_id}:{message_id}"))


@dataclass(frozen=True)
class Grant:
    id: str
    email: str
    name: str


@dataclass(frozen=True)
class SentReply:
    """What Nylas answered to a send."""

    message_id: str
    status: int
    replayed: bool


def _error(response: requests.Response) -> tuple[str, str]:
    try:
        error = response.json().get("error") or {}
    except ValueError:
        error = {}
    # Nylas' messages can quote a recipient ("invalid address x@y"): they end up in log lines.
    return str(error.get("type", "")), redact_addresses(str(error.get("message", response.reason or "")))


def _retry_after(response: requests.Response) -> int | None:
    value = response.headers.get("Retry-After", "")
    return int(value) if value.isdigit() else None


class NylasClient:
    """A small Nylas v3 client.

    Parameters
    ----------
    api_uri:
        ``NYLAS_API_URI`` (the emulator's URL in tests and the local stack).
    api_key:
        Called per request, so a rotated key (cached by Powertools
        Parameters) is picked up without rebuilding the client.
    timeout_seconds, send_timeout_seconds:
        Read timeouts; Nylas recommends at least 150 s for a send.
    session:
        Injectable ``requests.Session``.
    """

    def __init__(
        self,
        api_uri: str,
        api_key: Callable[[], str],
        *,
        timeout_seconds: float = 10.0,
        send_timeout_seconds: float = 150.0,
        session: requests.Session | None = None,
    ) -> None:
        self._api_uri = api_uri.rstrip("/")
        self._api_key = api_key
        self._timeout = (_CONNECT_TIMEOUT_SECONDS, timeout_seconds)
        self._send_timeout = (_CONNECT_TIMEOUT_SECONDS, send_timeout_seconds)
        self._session = session or requests.Session()
        retry = Retry(
            total=3,
            backoff_factor=0.5,
            status_forcelist=sorted(TRANSIENT_STATUSES),
            allowed_methods=frozenset({"GET"}),  # never the send: it is not idempotent without our key logic
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._session.mount(self._api_uri, HTTPAdapter(max_retries=retry, pool_maxsize=16))
        self._grants: dict[str, Grant] = {}

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key()}", "Accept": "application/json"}

    def _get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = self._session.get(
                f"{self._api_uri}{path}", params=params, headers=self._headers(), timeout=self._timeout
            )
        except requests.RequestException as exc:
            raise NylasRetryableError(f"GET {path} failed: {exc}") from exc
        if response.status_code == 200:
            return response.json()
        error_type, message = _error(response)
        if response.status_code in RETRYABLE_STATUSES:
            raise NylasRetryableError(
                f"GET {path}: {response.status_code} {message}",
                status=response.status_code,
                error_type=error_type,
                retry_after_seconds=_retry_after(response),
            )
        raise NylasPermanentError(
            f"GET {path}: {response.status_code} {message}",
            status=response.status_code,
            error_type=error_type,
        )

    def grant(self, grant_id: str) -> Grant:
        """The grant's address, cached for the container's life (Grants API: 50 req/s per app)."""
        cached = self._grants.get(grant_id)
        if cached is None:
            data = self._get(f"/v3/grants/{quote(grant_id, safe='')}")["data"]
            cached = Grant(
                id=grant_id, email=str(data.get("email", "")).lower(), name=str(data.get("name") or "")
            )
            self._grants[grant_id] = cached
        return cached

    def message(self, grant_id: str, message_id: str) -> dict[str, Any]:
        """``GET /v3/grants/{grant}/messages/{id}``: the source of truth for a message."""
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages/{quote(message_id, safe='')}"
        return self._get(path)["data"]

    def thread_messages(self, grant_id: str, thread_id: str, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` messages of a thread, newest first.

        Nylas does not document the list order, so it is sorted here by ``date``.
        """
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages"
        data = self._get(path, params={"thread_id": thread_id, "limit": limit})["data"]
        return sorted(data, key=lambda message: int(message.get("date") or 0), reverse=True)

    def send(self, grant_id: str, payload: dict[str, Any], key: str) -> SentReply:
        """``POST /v3/grants/{grant}/messages/send`` with an ``Idempotency-Key``.

        Raises
        ------
        NylasRetryableError
            5xx, 429 (with ``retry_after_seconds``), timeouts, lost responses,
            and 409 ``concurrent_idempotent_request`` (retry with the same key).
        NylasPermanentError
            Any other 4xx, including 409 ``invalid_idempotent_request``.
        """
        if len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            raise ValueError(f"Idempotency-Key longer than {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages/send"
        try:
            response = self._session.post(
                f"{self._api_uri}{path}",
                json=payload,
                headers={**self._headers(), "Idempotency-Key": key},
                timeout=self._send_timeout,
            )
        except requests.RequestException as exc:
            # The send may have happened: the retry reuses the key and Nylas replays it.
            raise NylasRetryableError(f"send failed before a response: {exc}") from exc
        if response.status_code in (200, 202):
            data = response.json().get("data") or {}
            return SentReply(
                message_id=str(data.get("id", "")),
                status=response.status_code,
                replayed=response.headers.get("Idempotent-Response", "").lower() == "true",
            )
        error_type, message = _error(response)
        detail = f"send: {response.status_code} {error_type} {message}".strip()
        if response.status_code in RETRYABLE_STATUSES or error_type == CONCURRENT_IDEMPOTENT_REQUEST:
            raise NylasRetryableError(
                detail,
                status=response.status_code,
                error_type=error_type,
                retry_after_seconds=_retry_after(response),
            )
        raise NylasPermanentError(detail, status=response.status_code, error_type=error_type)
