"""Webhook destinations (``/v3/webhooks``), with Nylas' challenge: the application-level admin routes.

``POST /v3/webhooks`` verifies the destination the way Nylas does before it answers: a ``GET`` of
``webhook_url?challenge=<value>`` that must return 200 with exactly the value as the body (not
chunked) within 10 seconds; otherwise the create fails with 400 and no webhook exists. Only
loopback URLs are reached: the emulator must never contact anything outside this machine.

Sources: https://developer.nylas.com/docs/v3/notifications/ (the challenge, no retry of a failed
verification, the secret returned on create and rotate only),
https://developer.nylas.com/docs/reference/api/webhook-notifications/ (the routes: create, list and
get without the secret, delete answering ``{"status": "success"}``, rotate), and
https://developer.nylas.com/docs/reference/api/webhook-notifications/post-new-secret/ (no overlap
window after a rotation).
"""

from __future__ import annotations

import copy
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit, urlunsplit
from urllib.request import HTTPRedirectHandler, ProxyHandler, Request, build_opener

from devstack.nylas.wire import Json, Response, error, invalid, not_found, ok, parse_json

CHALLENGE_TIMEOUT_SECONDS = 10.0
"""How long ``POST /v3/webhooks`` waits for the challenge answer (Nylas: 10 seconds)."""

TRIGGER_TYPES = frozenset(
    {
        "booking.cancelled",
        "booking.created",
        "booking.pending",
        "booking.reminder",
        "booking.rescheduled",
        "calendar.created",
        "calendar.deleted",
        "calendar.updated",
        "contact.deleted",
        "contact.updated",
        "event.created",
        "event.deleted",
        "event.updated",
        "folder.created",
        "folder.deleted",
        "folder.updated",
        "grant.created",
        "grant.deleted",
        "grant.expired",
        "grant.imap_sync_completed",
        "grant.updated",
        "message.bounce_detected",
        "message.bounced",
        "message.complaint",
        "message.created",
        "message.created.cleaned",
        "message.created.metadata",
        "message.deleted",
        "message.delivered",
        "message.intelligence.order",
        "message.intelligence.return",
        "message.intelligence.tracking",
        "message.intelligence.travel",
        "message.link_clicked",
        "message.opened",
        "message.rejected",
        "message.send_failed",
        "message.send_success",
        "message.transactional.bounced",
        "message.transactional.complaint",
        "message.transactional.delivered",
        "message.transactional.rejected",
        "message.updated",
        "message.updated.metadata",
        "notetaker.created",
        "notetaker.deleted",
        "notetaker.media",
        "notetaker.meeting_state",
        "notetaker.updated",
        "thread.replied",
    }
)
"""The trigger names of Nylas' notification reference (https://developer.nylas.com/docs/reference/notifications/);
``POST /v3/webhooks`` refuses any other. The ``.truncated`` and ``.transformed`` suffixes are
delivery variants, not triggers one subscribes to."""

WEBHOOK_VERIFICATION_ERROR_TYPE = "70005"
"""``error.type`` of a failed challenge, as in the fact sheet's example (``unable.verify.webhook_url``)."""


class _NoRedirect(HTTPRedirectHandler):
    # A challenge answered with a redirect is a failed challenge, not a second request elsewhere.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# No proxy from the environment either: the challenge must go to the loopback URL itself.
_CHALLENGE_OPENER = build_opener(ProxyHandler({}), _NoRedirect())
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class Webhooks:
    """The webhook destinations of the application and every challenge made.

    Parameters
    ----------
    lock : threading.Lock
        The emulator's state lock.
    now : callable
        The emulator's clock, for ``created_at`` / ``updated_at``.
    """

    def __init__(self, lock: threading.Lock, now: Callable[[], float]) -> None:
        self._lock = lock
        self._now = now
        self.challenge_timeout_seconds = CHALLENGE_TIMEOUT_SECONDS
        self.clear()

    def clear(self) -> None:
        """Forget every destination and challenge (call with the lock held, or before serving)."""
        self.destinations: dict[str, Json] = {}
        self.challenges: list[Json] = []

    def route(self, method: str, rest: list[str], body: bytes) -> Response | None:
        """Answer ``/v3/webhooks/<rest>``, or ``None`` when it is no such route."""
        if method == "POST" and not rest:
            return self._create(body)
        if method == "GET" and not rest:
            with self._lock:
                listed = [copy.deepcopy(w) for w in self.destinations.values()]
            for webhook in listed:
                webhook.pop("webhook_secret")
            return ok(listed)
        if method == "DELETE" and len(rest) == 1:
            with self._lock:
                deleted = self.destinations.pop(rest[0], None)
            return ok({"status": "success"}) if deleted is not None else not_found(f"webhook {rest[0]!r}")
        if method == "GET" and len(rest) == 1:
            with self._lock:
                webhook = copy.deepcopy(self.destinations.get(rest[0]))
            if webhook is None:
                return not_found(f"webhook {rest[0]!r}")
            webhook.pop("webhook_secret")  # Get and List never return the secret
            return ok(webhook)
        if method == "POST" and len(rest) == 2 and rest[0] == "rotate-secret":
            with self._lock:
                webhook = self.destinations.get(rest[1])
                if webhook is not None:
                    # The previous secret stops being used at once: Nylas gives no overlap window.
                    webhook["webhook_secret"] = _new_secret()
                    webhook["updated_at"] = int(self._now())
                    webhook = copy.deepcopy(webhook)
            if webhook is None:
                return not_found(f"webhook {rest[1]!r}")
            return ok(webhook)
        return None

    def _create(self, body: bytes) -> Response:
        payload, parsed = parse_json(body)
        if not parsed or not isinstance(payload, dict):
            return invalid("request body must be a JSON object")
        triggers = payload.get("trigger_types")
        if not triggers or not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
            return invalid("`trigger_types` must be a non-empty list of strings")
        unknown = sorted(set(triggers) - TRIGGER_TYPES)
        if unknown:
            return invalid(f"`trigger_types`: unknown trigger type(s) {', '.join(unknown)}")
        url = payload.get("webhook_url")
        if (
            not isinstance(url, str)
            or urlsplit(url).scheme not in ("http", "https")
            or not urlsplit(url).netloc
        ):
            return invalid("`webhook_url` must be an http(s) URL")
        emails = payload.get("notification_email_addresses") or []
        if not isinstance(emails, list) or not all(isinstance(e, str) for e in emails):
            return invalid("`notification_email_addresses` must be a list of strings")
        failure = self._verify(url)  # outside the lock: the endpoint may be slow
        if failure is not None:
            return error(400, WEBHOOK_VERIFICATION_ERROR_TYPE, f"unable.verify.webhook_url : {failure}")
        now = int(self._now())
        webhook: Json = {
            "id": str(uuid.uuid4()),
            "description": str(payload.get("description") or ""),
            "trigger_types": list(triggers),
            "webhook_url": url,
            "webhook_secret": _new_secret(),
            "status": "active",
            "notification_email_addresses": list(emails),
            "status_updated_at": now,
            "created_at": now,
            "updated_at": now,
        }
        with self._lock:
            self.destinations[webhook["id"]] = webhook
            created = copy.deepcopy(webhook)
        return ok(created)

    def _verify(self, url: str) -> str | None:
        """GET ``url?challenge=X`` like Nylas; ``None`` when verified, else why not (Nylas' wording)."""
        challenge = str(uuid.uuid4())
        split = urlsplit(url)
        query = f"{split.query}&challenge={challenge}" if split.query else f"challenge={challenge}"
        target = urlunsplit(split._replace(query=query))
        status, failure = 0, None
        if (split.hostname or "") not in _LOOPBACK_HOSTS:
            failure = "the emulator only reaches loopback addresses"
        else:
            started = time.monotonic()
            try:
                with _CHALLENGE_OPENER.open(
                    # http(s) only (checked on create) and loopback only (checked above).
                    Request(target, method="GET"),  # noqa: S310
                    timeout=self.challenge_timeout_seconds,
                ) as response:
                    status = response.status
                    chunked = response.headers.get("Transfer-Encoding", "").lower() == "chunked"
                    answer = response.read()
            except HTTPError as exc:  # any status but 2xx, redirects included (they are not followed)
                status = exc.code
                exc.close()
                failure = f"status is not ok, got {status}"
            except (URLError, OSError) as exc:
                failure = f"request failed: {getattr(exc, 'reason', exc)}"
            else:
                if time.monotonic() - started > self.challenge_timeout_seconds:
                    failure = f"no answer within {self.challenge_timeout_seconds:g} seconds"
                elif status != 200:
                    failure = f"status is not ok, got {status}"
                elif chunked:
                    failure = "chunked transfer encoding is not supported"
                elif answer != challenge.encode():
                    failure = "challenge response does not match"
        with self._lock:
            self.challenges.append(
                {"url": target, "status": status, "verified": failure is None, "error": failure}
            )
        return failure


def _new_secret() -> str:
    return secrets.token_hex(32)
