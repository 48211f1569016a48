"""The mailbox on the Nylas v3 API: grants, folders, messages, thread pages, searches, send, drafts.

Why ``requests`` with one ``Session``: connection reuse across records of a
warm container; urllib3 ``Retry`` retries the idempotent GETs (with
``Retry-After``), while a send or a draft creation is never retried blindly —
its answer is returned as is and ``replyonce.answers`` decides what it means.
"""

import email.utils
import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from replyonce.adapters.pacing import GrantHolds, GrantPacer
from replyonce.agent import AttachmentGone, AttachmentTooLarge, AttachmentUnavailable
from replyonce.answers import Answer, Proof, proof_of
from replyonce.config import MAX_THREAD_WINDOW
from replyonce.exceptions import NylasPermanentError, NylasRetryableError
from replyonce.mail import read_message, read_messages
from replyonce.observability import count, logger
from replyonce.outgoing import Encoding, wire
from replyonce.ports import Folder, Grant, Message, SearchResult, ThreadPage
from replyonce.redaction import redact_addresses
from replyonce.rules.outbox import MAX_REQUEST_BYTES

# Statuses worth another try in a moment: urllib3 retries them for GETs (never for a send).
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 507})
# 401 too is ours to retry: during an API-key rotation the cached key is stale for up to its cache age.
RETRYABLE_STATUSES = TRANSIENT_STATUSES | {401}
MAX_IDEMPOTENCY_KEY_LENGTH = 256
_CONNECT_TIMEOUT_SECONDS = 3.05
# Headers of every message read: the automaton filters need them, and Nylas omits them unless asked.
_WITH_HEADERS = {"fields": "include_headers"}
_DOWNLOAD_CHUNK_BYTES = 65_536
FOLDERS_PAGE_LIMIT = MAX_THREAD_WINDOW
"""The largest page ``GET /folders`` gives (Nylas: ``limit`` default 50, the same maximum as every list)."""
MAX_FOLDER_PAGES = 25
"""5,000 folders: beyond that the listing is taken to be broken, not read in part."""


def _error(response: requests.Response) -> tuple[str, str]:
    try:
        body = response.json()
        error = (body.get("error") if isinstance(body, dict) else None) or {}
    except ValueError:
        error = {}
    error = error if isinstance(error, dict) else {}
    error_type = str(error.get("type", ""))
    if error.get("provider_error") and not error_type:
        error_type = "provider_error"
    # Nylas' messages can quote a recipient ("invalid address x@y"): they end up in log lines.
    return error_type, redact_addresses(str(error.get("message", response.reason or "")))


def _retry_after(response: requests.Response) -> int | None:
    value = response.headers.get("Retry-After", "")
    return int(value) if value.isdigit() else None


def _succeeded(response: requests.Response, request: str) -> requests.Response:
    """``response`` when it is a ``200``; else the error it is: retryable for a status Nylas may answer
    differently later (``RETRYABLE_STATUSES``), permanent for any other."""
    if response.status_code == 200:
        return response
    error_type, message = _error(response)
    error = NylasRetryableError if response.status_code in RETRYABLE_STATUSES else NylasPermanentError
    raise error(
        f"{request}: {response.status_code} {message}",
        status=response.status_code,
        error_type=error_type,
        retry_after_seconds=_retry_after(response),
    )


def _path(*segments: str) -> str:
    return "/v3/grants/" + "/".join(quote(s, safe="") for s in segments)


_GRANTS_PREFIX = "/v3/grants/"
SEND, READ = "send", "read"
"""The kinds of request a grant's ``429`` holds apart (``replyonce.adapters.pacing.GrantHolds``)."""


def _grant_of(path: str) -> str:
    """The grant a request's path is about (its first segment after ``/v3/grants/``)."""
    if not path.startswith(_GRANTS_PREFIX):
        return ""
    return unquote(path.removeprefix(_GRANTS_PREFIX).split("/", 1)[0])


def _rate_limited(status: int | None, error_type: str) -> bool:
    """A ``429`` of a rate limit (``replyonce.answers``: nothing sent, try later), not an account limit."""
    return status == 429 and proof_of(Answer(status, error_type=error_type)) is Proof.NOT_SENT


class NylasMailbox:
    """:class:`replyonce.ports.Mailbox` on the Nylas v3 API.

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
        Stands in for Nylas' clock when an answer has no ``Date`` header (logged: Nylas always sends one).
    pacer:
        Paces multipart sends per grant (``replyonce.adapters.pacing``); one per container.
    holds:
        A grant's rate-limit ``429``s, held to that grant (``replyonce.adapters.pacing``); one per container.
    """

    def __init__(
        self,
        api_uri: str,
        api_key: Callable[[], str],
        *,
        timeout_seconds: float,
        send_timeout_seconds: float,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.time,
        pacer: GrantPacer | None = None,
        holds: GrantHolds | None = None,
    ) -> None:
        self._clock = clock
        self._pacer = pacer or GrantPacer()
        self._holds = holds or GrantHolds()
        self._api_uri = api_uri.rstrip("/")
        self._api_key = api_key
        self._timeout = (_CONNECT_TIMEOUT_SECONDS, timeout_seconds)
        self._send_timeout = (_CONNECT_TIMEOUT_SECONDS, send_timeout_seconds)
        self._session = session or requests.Session()
        retry = Retry(
            total=3,
            backoff_factor=0.5,
            status_forcelist=sorted(TRANSIENT_STATUSES),
            allowed_methods=frozenset({"GET"}),  # never a send: it is not idempotent without our key logic
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._session.mount(self._api_uri, HTTPAdapter(max_retries=retry, pool_maxsize=16))

    # ---- plumbing ----------------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key()}", "Accept": "application/json"}

    def nylas_time(self, response: requests.Response) -> int:
        """Nylas' clock, from the answer's ``Date`` header.

        Why: the loop guard's window, the key's hour and the settle time are
        measured in Nylas' time, which a skewed worker clock cannot move.
        """
        try:
            return int(email.utils.parsedate_to_datetime(response.headers["Date"]).timestamp())
        except (KeyError, TypeError, ValueError, IndexError):
            logger.warning(
                "Nylas answer without a usable Date header; the worker's clock stands in for Nylas' time",
                extra={"reason": "no_nylas_date", "status": response.status_code},
            )
            return int(self._clock())

    def _get(self, path: str, params: dict[str, Any] | None = None) -> requests.Response:
        grant_id = _grant_of(path)
        held = self._holds.held(grant_id, READ)
        if held is not None:
            # Nylas told this grant to wait: no request until then, and no other grant is held.
            seconds, error_type = held
            raise NylasRetryableError(
                f"GET {path}: not asked; the grant's reads wait {seconds} s after Nylas' 429",
                status=429,
                error_type=error_type,
                retry_after_seconds=seconds,
            )
        try:
            response = self._session.get(
                f"{self._api_uri}{path}", params=params, headers=self._headers(), timeout=self._timeout
            )
        except requests.RequestException as exc:
            raise NylasRetryableError(f"GET {path} failed: {exc}") from exc
        if response.status_code == 429:
            # urllib3 retried it (after Retry-After) and the grant is still throttled: hold its next reads.
            error_type, _ = _error(response)
            if _rate_limited(429, error_type):
                self._holds.hold(grant_id, READ, _retry_after(response), error_type)
        return _succeeded(response, f"GET {path}")

    def _data(self, response: requests.Response) -> Any:
        try:
            body = response.json()
        except ValueError as exc:
            raise NylasRetryableError(f"Nylas answered {response.status_code} without JSON") from exc
        return body.get("data") if isinstance(body, dict) else None

    def _page(self, response: requests.Response, what: str) -> tuple[list[Any], str | None]:
        """A list answer's ``data`` and its ``next_cursor`` (``None`` on the last page)."""
        try:
            body = response.json()
        except ValueError as exc:
            raise NylasRetryableError(f"{what} without JSON") from exc
        data = body.get("data") if isinstance(body, dict) else None
        cursor = body.get("next_cursor") if isinstance(body, dict) else None
        return (data if isinstance(data, list) else []), (
            cursor if isinstance(cursor, str) and cursor else None
        )

    def _post(
        self,
        grant_id: str,
        path: str,
        request: str,
        files: Mapping[str, bytes] | None,
        headers: dict[str, str],
        timeout: tuple[float, float],
    ) -> Answer:
        """Send the stored ``request`` with its files (``replyonce.outgoing.wire``: JSON, or multipart
        form data paced per grant); the answer as it came, never raised."""
        held = self._holds.held(grant_id, SEND)
        if held is not None:
            # Nylas answered this grant's send 429 with a Retry-After not yet up: the same answer, without
            # asking (nothing sent: replyonce.answers), and the record is deferred for the time left.
            seconds, error_type = held
            return Answer(
                status=429,
                error_type=error_type,
                detail=f"429 {error_type}: not sent; the grant's sends wait {seconds} s after Nylas' 429",
                retry_after_seconds=seconds,
            )
        body = wire(request, files or {}, MAX_REQUEST_BYTES)
        if body.encoding is Encoding.MULTIPART:
            self._pacer.wait_turn(grant_id)
            count("MultipartSend")
        try:
            response = self._session.post(
                f"{self._api_uri}{path}",
                data=body.body,
                headers={**self._headers(), "Content-Type": body.content_type, **headers},
                timeout=timeout,
            )
        except requests.RequestException as exc:
            # It may have happened: what that means is replyonce.answers' to say.
            return Answer(status=None, detail=f"{path}: no answer: {exc}")
        replayed = response.headers.get("Idempotent-Response", "").lower() == "true"
        at = self.nylas_time(response)
        if 200 <= response.status_code < 300:
            try:
                data = response.json().get("data") or {}
            except (ValueError, AttributeError):
                data = {}
            message_id = str(data.get("id", "")) if isinstance(data, dict) else ""
            return Answer(response.status_code, replayed=replayed, message_id=message_id, nylas_time=at)
        error_type, message = _error(response)
        if _rate_limited(response.status_code, error_type) and not replayed:
            self._holds.hold(grant_id, SEND, _retry_after(response), error_type)
        return Answer(
            status=response.status_code,
            error_type=error_type,
            detail=f"{response.status_code} {error_type} {message}".strip(),
            replayed=replayed,
            retry_after_seconds=_retry_after(response),
            nylas_time=at,
        )

    # ---- the port ----------------------------------------------------------------------------------------

    def grant(self, grant_id: str) -> Grant:
        """The grant with its aliases (``expose_aliases=true``: Google and Microsoft grants have them, and a
        sent copy of our reply may show one as its ``from``)."""
        data = self._data(self._get(_path(grant_id), {"expose_aliases": "true"})) or {}
        aliases = data.get("email_aliases")
        return Grant(
            id=grant_id,
            email=str(data.get("email", "")).lower(),
            name=str(data.get("name") or ""),
            provider=str(data.get("provider") or ""),
            aliases=tuple(a.strip().lower() for a in aliases if isinstance(a, str) and a.strip())
            if isinstance(aliases, list)
            else (),
        )

    def drafts_in_thread(self, grant_id: str, thread_id: str) -> list[Message]:
        """The thread's drafts, the filter checked in the answer (a draft of another thread is dropped)."""
        data = self._data(self._get(_path(grant_id, "drafts"), {"thread_id": thread_id, "limit": 20}))
        return [d for d in read_messages(data) if d.thread_id == thread_id]

    def folders(self, grant_id: str) -> list[Folder]:
        """Every folder of the grant: the listing is paged (``limit`` 50 by default, at most our limit), and
        junk, trash or the hand-off folder can be on any page of a grant with many labels or rules."""
        found: list[Folder] = []
        params: dict[str, Any] = {"limit": FOLDERS_PAGE_LIMIT}
        for _ in range(MAX_FOLDER_PAGES):
            data, cursor = self._page(self._get(_path(grant_id, "folders"), params), "folder listing")
            found.extend(
                Folder(
                    id=str(f.get("id", "")),
                    name=str(f.get("name", "")),
                    attributes=tuple(str(a) for a in f.get("attributes") or [] if isinstance(a, str)),
                )
                for f in data or []
                if isinstance(f, dict)
            )
            if cursor is None:
                return found
            params = {"limit": FOLDERS_PAGE_LIMIT, "page_token": cursor}
        # Unbounded paging could spin on a cursor that never ends; a partial list would hide junk.
        raise NylasRetryableError(f"the folder listing of {grant_id} did not end in {MAX_FOLDER_PAGES} pages")

    def message(self, grant_id: str, message_id: str) -> Message | None:
        """``GET .../messages/{id}`` with headers; ``None`` when Nylas answers 404."""
        try:
            data = self._data(self._get(_path(grant_id, "messages", message_id), _WITH_HEADERS))
        except NylasPermanentError as gone:
            if gone.status == 404:
                return None
            raise
        return read_message(data)

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        """One page of the thread, with headers, as Nylas lists it; never re-sorted by ``date``."""
        objects, cursor, at = self.thread_objects(grant_id, thread_id, limit, page_token)
        return ThreadPage(read_messages(objects), cursor, at)

    def thread_objects(
        self, grant_id: str, thread_id: str, limit: int, page_token: str | None
    ) -> tuple[list[Any], str | None, int]:
        """One page of the thread as Nylas answered it (its JSON objects, not read into ``Mail``), the next
        page's cursor and Nylas' time: what ``ops export`` keeps, for a replay to read as the replier does."""
        params: dict[str, Any] = {"thread_id": thread_id, "limit": limit, **_WITH_HEADERS}
        if page_token:
            params["page_token"] = page_token
        response = self._get(_path(grant_id, "messages"), params)
        data, cursor = self._page(response, "thread listing")
        return data, cursor, self.nylas_time(response)

    def received_since(self, grant_id: str, received_after: int) -> Iterator[dict[str, Any]]:
        """Every message the grant received after ``received_after`` (epoch seconds), page by page, as Nylas
        answered them (with headers): a re-authenticated grant's backfill (``replyonce.shell.grant_life``).

        ``GET /messages?received_after=`` (https://developer.nylas.com/docs/reference/api/messages/get-messages/).
        """
        params: dict[str, Any] = {
            "received_after": received_after,
            "limit": FOLDERS_PAGE_LIMIT,
            **_WITH_HEADERS,
        }
        while True:
            data, cursor = self._page(self._get(_path(grant_id, "messages"), params), "backfill listing")
            yield from (m for m in data if isinstance(m, dict))
            if cursor is None:
                return
            params = {**params, "page_token": cursor}

    def search(self, grant_id: str, kind: str, key: str, value: str) -> SearchResult:
        """``GET /{kind}?metadata_pair=key:value``; a failure is returned as *unknown*, never raised."""
        try:
            response = self._get(_path(grant_id, kind), {"metadata_pair": f"{key}:{value}", "limit": 5})
            data = self._data(response)
        except (NylasRetryableError, NylasPermanentError) as exc:
            return SearchResult(failed=str(exc))
        return SearchResult(read_messages(data), nylas_time=self.nylas_time(response))

    def send(self, grant_id: str, request: str, key: str, files: Mapping[str, bytes] | None = None) -> Answer:
        if len(key) > MAX_IDEMPOTENCY_KEY_LENGTH:
            raise ValueError(f"Idempotency-Key longer than {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
        return self._post(
            grant_id,
            _path(grant_id, "messages", "send"),
            request,
            files,
            {"Idempotency-Key": key},
            self._send_timeout,
        )

    def create_draft(self, grant_id: str, request: str, files: Mapping[str, bytes] | None = None) -> Answer:
        return self._post(grant_id, _path(grant_id, "drafts"), request, files, {}, self._send_timeout)

    def download_attachment(
        self, grant_id: str, attachment_id: str, message_id: str, max_bytes: int, timeout_seconds: float
    ) -> bytes:
        """``GET .../attachments/{id}/download?message_id=…``, streamed: at most ``max_bytes`` read, and
        not a moment past ``timeout_seconds`` (each read's time-out is what is left of it).

        Raises
        ------
        AttachmentTooLarge
            The file is over ``max_bytes``: counted by the bytes read (a ``Content-Length`` over it
            stops the read before the body).
        AttachmentGone
            ``404``, or any other ``4xx`` but a time-out or a rate limit: no retry will read it.
        AttachmentUnavailable
            No answer in time, a ``5xx``, a ``408``, a ``429`` or a ``401`` (an API key being
            rotated): maybe later.
        """
        path = _path(grant_id, "attachments", attachment_id, "download")
        started = time.monotonic()
        try:
            response = self._session.get(
                f"{self._api_uri}{path}",
                params={"message_id": message_id},
                headers={**self._headers(), "Accept": "*/*"},
                timeout=(min(_CONNECT_TIMEOUT_SECONDS, timeout_seconds), timeout_seconds),
                stream=True,
            )
        except requests.RequestException as exc:
            raise AttachmentUnavailable(f"attachment {attachment_id}: no answer: {exc}") from exc
        with response:
            status = response.status_code
            if status != 200:
                _, detail = _error(response)
                failure = (
                    AttachmentUnavailable if status in RETRYABLE_STATUSES or status >= 500 else AttachmentGone
                )
                raise failure(f"attachment {attachment_id}: Nylas answered {status} {detail}".strip())
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise AttachmentTooLarge(f"attachment {attachment_id}: {declared} bytes, over {max_bytes}")
            chunks: list[bytes] = []
            read = 0
            try:
                for chunk in response.iter_content(_DOWNLOAD_CHUNK_BYTES):
                    read += len(chunk)
                    if read > max_bytes:
                        raise AttachmentTooLarge(f"attachment {attachment_id}: over {max_bytes} bytes")
                    if time.monotonic() - started > timeout_seconds:
                        raise AttachmentUnavailable(f"attachment {attachment_id}: not read within its time")
                    chunks.append(chunk)
            except requests.RequestException as exc:
                raise AttachmentUnavailable(f"attachment {attachment_id}: cut off: {exc}") from exc
        return b"".join(chunks)

    def create_folder(self, grant_id: str, name: str) -> Folder:
        """``POST /folders`` with ``{"name": name}``: the folder Nylas made (its id is the one to move to)."""
        response = self._write("post", _path(grant_id, "folders"), {"name": name})
        data = self._data(response) or {}
        if not isinstance(data, dict) or not data.get("id"):
            raise NylasRetryableError(f"folder creation in {grant_id} answered no folder id")
        attributes = data.get("attributes") or []
        return Folder(
            id=str(data["id"]),
            name=str(data.get("name") or name),
            attributes=tuple(str(a) for a in attributes if isinstance(a, str)),
        )

    def move(self, grant_id: str, message_id: str, folder_id: str) -> None:
        self._write("put", _path(grant_id, "messages", message_id), {"folders": [folder_id]})

    def _write(self, method: str, path: str, body: dict[str, Any]) -> requests.Response:
        """A ``PUT``/``POST`` of a JSON body (not a send): its ``200``, or the error it raises (a retryable
        status or no answer: :class:`NylasRetryableError`; any other: :class:`NylasPermanentError`)."""
        try:
            response = self._session.request(
                method.upper(),
                f"{self._api_uri}{path}",
                data=json.dumps(body).encode(),
                headers={**self._headers(), "Content-Type": "application/json"},
                timeout=self._timeout,
            )
        except requests.RequestException as exc:
            raise NylasRetryableError(f"{method.upper()} {path} failed: {exc}") from exc
        return _succeeded(response, f"{method.upper()} {path}")
