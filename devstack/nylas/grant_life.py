"""Grants' lives in the emulator: created, expired, re-authenticated and deleted, each notified as Nylas does.

Sources, one per behaviour:

- the four triggers and their ``data.object`` (``grant_id``, ``integration_id``, ``provider``, ``email``,
  ``code``; ``grant.created`` adds ``login_id``, ``name``, ``scope``; ``grant.updated``
  ``reauthentication_flag``, ``code`` 25027 for a re-authentication and 25014 otherwise; ``grant.expired``
  ``grant_updated_at``), ``source`` ``/nylas/system``:
  https://developer.nylas.com/docs/reference/notifications/grants/ and its four pages;
- an expired grant: "When a grant becomes invalid ... Nylas loses access to the user's data and stops
  sending notifications about changes to their objects"
  (https://developer.nylas.com/docs/dev-guide/best-practices/manage-grants/), its ``grant_status`` is
  ``invalid`` and calls on it answer ``401``
  (https://developer.nylas.com/docs/cookbook/use-cases/build/handle-grant-expiry/: "handle 401 responses on
  every API call to catch an expiry instantly");
- a re-authentication keeps the grant id, and the API replays "up to 72 hours of missed notifications"
  (https://developer.nylas.com/docs/cookbook/email/email-sync-failures/):
  :attr:`Modes.reauthentication_replays` (default on; off: the other reading, never notified);
- a deleted grant: "stops all access and webhooks for that grant immediately"
  (https://developer.nylas.com/docs/cookbook/use-cases/build/list-revoke-grants/) and is never
  re-authenticated (https://developer.nylas.com/docs/reference/api/manage-grants/delete_grant_by_id/); the
  status its calls answer is not named: :attr:`Modes.deleted_grant_answer` (``404`` by default, or ``401``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from devstack.nylas.wire import Json

VALID, EXPIRED, DELETED = "valid", "expired", "deleted"
INTEGRATION_ID = "integration-local"
"""``data.object.integration_id`` of every grant's notification (the connector; one in the emulator)."""
CODES = {"grant.created": 25002, "grant.expired": 25009, "grant.deleted": 25013}
"""``data.object.code`` of the notifications (``grant.updated``: 25014, or 25027 for a re-authentication)."""


@dataclass
class _Life:
    state: str = VALID
    updated_at: int = 0
    # Messages that arrived while expired, in arrival order: notified at the re-authentication (or never).
    held: list[str] = field(default_factory=list)


class GrantLives:
    """Each grant's state (valid, expired, deleted) and the mail it holds while expired."""

    def __init__(self) -> None:
        self._lives: dict[str, _Life] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._lives.clear()

    def state(self, grant_id: str) -> str:
        with self._lock:
            life = self._lives.get(grant_id)
            return life.state if life is not None else VALID

    def begin(self, grant_id: str, now: int) -> None:
        with self._lock:
            self._lives[grant_id] = _Life(VALID, now)

    def expire(self, grant_id: str) -> int:
        """Mark the grant expired; its last successful update (``grant_updated_at``)."""
        with self._lock:
            life = self._lives.setdefault(grant_id, _Life())
            if life.state == DELETED:
                raise KeyError(f"grant {grant_id!r} was deleted")
            life.state = EXPIRED
            return life.updated_at

    def reauthenticate(self, grant_id: str, now: int) -> list[str]:
        """Mark the grant valid again; the messages it held while expired (for their notifications)."""
        with self._lock:
            life = self._lives.setdefault(grant_id, _Life())
            if life.state == DELETED:
                # "You cannot re-authenticate the deleted grant ... Nylas creates a new grant instead."
                raise KeyError(f"grant {grant_id!r} was deleted: a re-authentication creates a new grant")
            held, life.held = life.held, []
            life.state, life.updated_at = VALID, now
            return held

    def delete(self, grant_id: str) -> None:
        with self._lock:
            life = self._lives.setdefault(grant_id, _Life())
            life.state, life.held = DELETED, []

    def hold(self, grant_id: str, message_id: str) -> bool:
        """Whether a message that just arrived goes un-notified: its grant is expired (held until the
        re-authentication) or deleted (never)."""
        with self._lock:
            life = self._lives.get(grant_id)
            if life is None or life.state == VALID:
                return False
            if life.state == EXPIRED:
                life.held.append(message_id)
            return True


def grant_object(grant: Json, trigger: str, **extra: object) -> Json:
    """``data.object`` of a grant notification, as the reference pages show it."""
    code = 25027 if extra.get("reauthentication_flag") else CODES.get(trigger, 25014)
    return {
        "code": code,
        "grant_id": grant["id"],
        "integration_id": INTEGRATION_ID,
        "provider": grant["provider"],
        "email": grant["email"],
        **extra,
    }
