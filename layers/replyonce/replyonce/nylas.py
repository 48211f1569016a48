"""The Nylas API calls the replier makes: grant, message, thread messages, send.

Why ``requests`` with one ``Session``: connection reuse across records of a
warm container; urllib3 ``Retry`` retries the idempotent GETs (with
``Retry-After``), while the send is never retried blindly — its answer is
returned as is and ``replyonce.decisions.classify_send`` decides what it means.
"""

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from replyonce.decisions import RETRYABLE_STATUSES
from replyonce.exceptions import NylasPermanentError, NylasRetryableError
from replyonce.redaction import redact_addresses

# Statuses worth another try in a moment: urllib3 retries them for GETs (never for the send).
TRANSIENT_STATUSES = RETRYABLE_STATUSES - {401}
MAX_IDEMPOTENCY_KEY_LENGTH = 256
_CONNECT_TIMEOUT_SECONDS = 3.05
# Headers of every message read: the automaton filters need them, and Nylas omits them unless asked.
_WITH_HEADERS = {"fields": "include_headers"}


@dataclass(frozen=True)
class Grant:
    id: str
    email: str
    name: str


@dataclass(frozen=True)
class ThreadRead:
    """A thread's newest messages, in the listing's order (newest arrival first), and Nylas' time."""

    messages: list[dict[str, Any]]
    nylas_time: int


@dataclass(frozen=True)
class SendAnswer:
    """What Nylas answered to one send attempt (``status`` ``None``: no answer at all)."""

    status: int | None
    error_type: str = ""
    detail: str = ""
    replayed: bool = False
    message_id: str = ""
    retry_after_seconds: int | None = None
    nylas_time: int = 0
    message: dict[str, Any] = field(default_factory=dict)


def _error(response: requests.Response) -> tuple[str, str]:
    try:
        body = response.json()
        error = (body.get("error") if isinstance(body, dict) else None) or {}
    except ValueError:
        error = {}
    error_type = str(error.get("type", ""))
    if error.get("provider_error") and not error_type:
        error_type = "provider_error"
    # Nylas' messages can quote a recipient ("invalid address x@y"): they end up in log lines.
    return error_type, redact_addresses(str(error.get("message", response.reason or "")))


def _retry_after(response: requests.Response) -> int | None:
    value = response.headers.get("Retry-After", "")
    return int(value) if value.isdigit() else None


def nylas_time(response: requests.Response, fallback: Callable[[], float]) -> int:
    """Nylas' clock, from the answer's ``Date`` header; ``fallback`` only when it is absent or malformed.

    Why: the loop guard's window and the outbox's key hour are measured in
    Nylas' time, which a skewed worker clock cannot move.
    """
    try:
        return int(email.utils.parsedate_to_datetime(response.headers["Date"]).timestamp())
    except (KeyError, TypeError, ValueError, IndexError):
        return int(fallback())


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
    clock:
        Stands in for Nylas' clock when an answer has no ``Date`` header.
    """

    def __init__(
        self,
        api_uri: str,
        api_key: Callable[[], str],
        *,
        timeout_seconds: float = 10.0,
        send_timeout_seconds: float = 150.0,
        session: requests.Session | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._clock = clock or time.time
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
        return self._get_response(path, params).json()

    def _get_response(self, path: str, params: dict[str, Any] | None = None) -> requests.Response:
        try:
            response = self._session.get(
                f"{self._api_uri}{path}", params=params, headers=self._headers(), timeout=self._timeout
            )
        except requests.RequestException as exc:
            raise NylasRetryableError(f"GET {path} failed: {exc}") from exc
        if response.status_code == 200:
            return response
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
        """``GET /v3/grants/{grant}/messages/{id}`` with headers: the source of truth for a message."""
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages/{quote(message_id, safe='')}"
        return self._get(path, _WITH_HEADERS)["data"]

    def thread_messages(self, grant_id: str, thread_id: str, limit: int) -> ThreadRead:
        """The newest ``limit`` messages of a thread, with headers, as Nylas lists them (newest first).

        Never re-sorted by ``date``: that field comes from the sender's clock.
        """
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages"
        response = self._get_response(path, {"thread_id": thread_id, "limit": limit, **_WITH_HEADERS})
        data = response.json().get("data") or []
        return ThreadRead([m for m in data if isinstance(m, dict)], nylas_time(response, self._clock))

    def find_by_metadata(self, grant_id: str, key: str, value: str) -> dict[str, Any] | None:
        """The message whose indexed metadata ``key`` is ``value`` (``metadata_pair``), if any."""
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages"
        data = self._get(path, {"metadata_pair": f"{key}:{value}", "limit": 1}).get("data") or []
        return data[0] if data and isinstance(data[0], dict) else None

    def send(self, grant_id: str, request: str, key: str) -> SendAnswer:
        """``POST /v3/grants/{grant}/messages/send``: ``request`` byte for byte, with an ``Idempotency-Key``.

        Never raises for an HTTP answer: what an answer means for the reply is
        decided by :func:`replyonce.decisions.classify_send`.
        """
        if len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            raise ValueError(f"Idempotency-Key longer than {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
        path = f"/v3/grants/{quote(grant_id, safe='')}/messages/send"
        try:
            response = self._session.post(
                f"{self._api_uri}{path}",
                data=request.encode(),
                headers={**self._headers(), "Content-Type": "application/json", "Idempotency-Key": key},
                timeout=self._send_timeout,
            )
        except requests.RequestException as exc:
            # The send may have happened: the retry reuses the key and Nylas replays it.
            return SendAnswer(status=None, detail=f"send failed before a response: {exc}")
        replayed = response.headers.get("Idempotent-Response", "").lower() == "true"
        sent_at = nylas_time(response, self._clock)
        if response.status_code in (200, 202):
            try:
                data = response.json().get("data") or {}
            except ValueError:
                data = {}
            return SendAnswer(
                status=response.status_code,
                replayed=replayed,
                message_id=str(data.get("id", "")),
                nylas_time=sent_at,
                message=data if isinstance(data, dict) else {},
            )
        error_type, message = _error(response)
        return SendAnswer(
            status=response.status_code,
            error_type=error_type,
            detail=f"send: {response.status_code} {error_type} {message}".strip(),
            replayed=replayed,
            retry_after_seconds=_retry_after(response),
            nylas_time=sent_at,
        )
