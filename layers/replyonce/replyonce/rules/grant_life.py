"""A grant's life, from Nylas: what one lifecycle notification does to what the stack knows of the grant.

Nylas tells a stack of its grants' lives with four notifications (``grant.created``, ``grant.updated``,
``grant.expired``, ``grant.deleted``; https://developer.nylas.com/docs/reference/notifications/grants/).
Like every notification they come at least once and in no promised order
(https://developer.nylas.com/docs/dev-guide/best-practices/webhook-best-practices/), so what one does is
decided here, once, from the grant's :class:`GrantLife` as stored and the notification alone
(:func:`decide`): applied twice, or late, it changes nothing it should not. The shell
(``replyonce.shell.grant_life``) reads the life, asks, and writes what comes back conditioned on the life
it read; the registry's adapter (``replyonce.adapters.grant_registry``) stores it. Pure; table-tested in
``tests/unit/test_grant_life.py``.

Why times and not a state machine of events: the notification's ``time`` (Nylas' clock, the envelope's)
orders what a grant went through however the deliveries were shuffled. A grant is expired while its
newest expiry is newer than its newest re-authentication; so a ``grant.expired`` that arrives after a
later re-authentication pauses nothing, and a redelivered one finds the same time already recorded.
"""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from replyonce.jobs import GrantChanged

EXPIRY_DETECTION_SECONDS = 600
"""How long before its ``grant.expired`` a grant may already have been expired: Nylas finds expired grants
"through sync health checks, which can take up to 10 minutes"
(https://developer.nylas.com/docs/cookbook/use-cases/build/handle-grant-expiry/). The backfill after a
re-authentication starts this much before the expiry's notification, so mail of those minutes is in it."""


class Kind(StrEnum):
    """The lifecycle notifications, by the suffix of their ``type``."""

    CREATED = "grant.created"
    UPDATED = "grant.updated"
    EXPIRED = "grant.expired"
    DELETED = "grant.deleted"


@dataclass(frozen=True)
class GrantLife:
    """What Nylas said of one grant, as Nylas' times (epoch seconds; 0: never said).

    Attributes
    ----------
    created_at:
        The ``grant.created`` applied (a grant is registered once, by its first creation).
    expired_at:
        The newest ``grant.expired``.
    reauthenticated_at:
        The newest ``grant.updated`` with ``reauthentication_flag``.
    deleted_at:
        The ``grant.deleted``: final (Nylas never re-authenticates a deleted grant; a new one gets a new
        id: https://developer.nylas.com/docs/reference/api/manage-grants/delete_grant_by_id/).
    swept:
        The deleted grant's state is gone from the state table.
    backfill_since:
        A re-authenticated grant's mail since this time (Nylas' clock) is to be fed through the pipeline
        again; 0 once it was (kept until then, so a backfill that failed is done by a later try).
    sweep_from:
        Where the sweep of a deleted grant's state goes on from (the state table's last key it read;
        ``""``: from the start): a table too large for one invocation is swept over several.
    """

    created_at: int = 0
    expired_at: int = 0
    reauthenticated_at: int = 0
    deleted_at: int = 0
    swept: bool = False
    backfill_since: int = 0
    sweep_from: str = ""

    @property
    def expired(self) -> bool:
        """Expired now: the newest expiry is newer than the newest re-authentication.

        A tie (both in the same second) reads as re-authenticated: which came first is unknown, and the
        wrong guess costs less that way — a grant still expired answers our calls ``401``, which keeps its
        mail waiting (deferred ``unauthorized``) as the pause would have; a grant wrongly left paused
        waits for an operator.
        """
        return self.expired_at > self.reauthenticated_at and not self.deleted

    @property
    def deleted(self) -> bool:
        return self.deleted_at > 0


class Ignored(StrEnum):
    """Why a notification changed nothing (the log line's ``reason``)."""

    ALREADY_DELETED = "grant_deleted_before"
    """The grant was deleted: nothing Nylas says of it afterwards changes anything (deletion is final)."""
    ALREADY_CREATED = "grant_created_before"
    """A second ``grant.created`` (a redelivery, or one an operator's ``remove`` came after)."""
    NOT_NEWER = "older_than_recorded"
    """Its time is not newer than what the life recorded of the same kind: a redelivery, or a late one."""
    EXPIRED_BEFORE_REAUTHENTICATION = "expired_before_reauthentication"
    """A ``grant.expired`` older than a re-authentication already recorded: delivered late, it pauses
    nothing."""
    NOT_A_REAUTHENTICATION = "not_a_reauthentication"
    """A ``grant.updated`` without ``reauthentication_flag`` (scopes, settings): nothing of ours changes."""


@dataclass(frozen=True)
class LifeDecision:
    """What one notification does, given the grant's life as read.

    Attributes
    ----------
    life:
        The life to store (the same one when nothing changed).
    register:
        Register the grant (a record in the new grants' mode) unless it has a record already.
    paused:
        The grant was active and is expired now: its mail waits, and the alarm names it.
    resumed:
        The grant was expired and is re-authenticated now: its mail is answered again, and the mail of the
        window its life's ``backfill_since`` opens is fed through the pipeline again.
    forget:
        Deleted and not swept yet: the grant's state is to be removed from the state table.
    ignored:
        Why the notification itself changed nothing (``None``: it did). A deleted grant's unfinished
        sweep goes on whatever the notification (``forget``).
    """

    life: GrantLife
    register: bool = False
    paused: bool = False
    resumed: bool = False
    forget: bool = False
    ignored: Ignored | None = None


def decide(life: GrantLife, event: GrantChanged) -> LifeDecision:
    """What ``event`` does to a grant whose life is ``life``.

    Parameters
    ----------
    life:
        As stored (``GrantLife()`` for a grant Nylas never told us of).
    event:
        The notification: its kind, its time and, for ``grant.updated``, whether it re-authenticated.
    """
    at = event.at
    if life.deleted:
        # Nothing Nylas says afterwards moves a deleted grant; a sweep that did not finish goes on (its
        # notification redelivered, or any later one of the grant).
        return LifeDecision(life, forget=not life.swept, ignored=Ignored.ALREADY_DELETED)
    match event.kind:
        case Kind.DELETED:
            return LifeDecision(replace(life, deleted_at=max(at, 1)), forget=True)
        case Kind.CREATED:
            if life.created_at:
                return LifeDecision(life, ignored=Ignored.ALREADY_CREATED)
            return LifeDecision(replace(life, created_at=max(at, 1)), register=True)
        case Kind.EXPIRED:
            if at <= life.reauthenticated_at:
                return LifeDecision(life, ignored=Ignored.EXPIRED_BEFORE_REAUTHENTICATION)
            if at <= life.expired_at:
                return LifeDecision(life, ignored=Ignored.NOT_NEWER)
            after = replace(life, expired_at=at)
            return LifeDecision(after, paused=not life.expired and after.expired)
        case Kind.UPDATED:
            if not event.reauthenticated:
                return LifeDecision(life, ignored=Ignored.NOT_A_REAUTHENTICATION)
            return _reauthenticated(life, at)
    raise ValueError(f"not a lifecycle notification: {event.kind!r}")


def _reauthenticated(life: GrantLife, at: int) -> LifeDecision:
    """A ``grant.updated`` with ``reauthentication_flag`` at ``at``: resumed, with its window, if it was
    expired before and is not after."""
    if at <= life.reauthenticated_at:
        return LifeDecision(life, ignored=Ignored.NOT_NEWER)
    after = replace(life, reauthenticated_at=at)
    if not (life.expired and not after.expired):
        return LifeDecision(after)
    since = max(1, life.expired_at - EXPIRY_DETECTION_SECONDS)
    if life.backfill_since:
        # A backfill still owed from an earlier expiry (it expired again before it ran): one window.
        since = min(since, life.backfill_since)
    return LifeDecision(replace(after, backfill_since=since), resumed=True)


# ---- the backfill of a re-authenticated grant ---------------------------------------------------------

BACKFILL_SOURCE = "/replyonce/backfill"


def backfill_notification(message: Mapping[str, Any], now: float) -> dict[str, Any]:
    """A ``message.created`` for one message of a resumed grant's window, shaped as Nylas sends one.

    Its id is ``backfill:{grant}:{message}``, the id ``make backfill`` gives the same message
    (``ops.backfill.notification_id``): Powertools idempotency absorbs the one the other queued, and the
    reply ledger any notification of the message that Nylas delivered as well (its own id, its own run
    that finds the message answered).
    """
    grant_id, message_id = str(message.get("grant_id", "")), str(message.get("id", ""))
    return {
        "specversion": "1.0",
        "type": "message.created",
        "source": BACKFILL_SOURCE,
        "id": f"backfill:{grant_id}:{message_id}",
        "time": int(now),
        "webhook_delivery_attempt": 1,
        "data": {"application_id": "", "object": dict(message)},
    }
