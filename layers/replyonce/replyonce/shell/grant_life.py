"""A grant's lifecycle notification, carried out: the life read and written, then what it asks for.

The consumer hands each ``grant.created``/``.updated``/``.expired``/``.deleted`` here (inside Powertools
idempotency, like every notification: a redelivery is absorbed there first). What it does is decided by
``replyonce.rules.grant_life.decide`` from the grant's life as read strongly consistent; the new life is
written conditioned on that read (two notifications of one grant at once: the second reads again), and
only then are its effects carried out, so what a record does is what the stored life says:

- ``register``: the grant's first record, in the new grants' mode (``NEW_GRANT_REPLY_MODE``), unless it
  has one (never an operator's overwritten: ``grant_registry.register_new``);
- ``paused``: a warning naming the grant and ``GrantExpired`` (the alarm); its mail waits (deferred
  ``grant_paused`` in ``replyonce.shell.grants``);
- ``resumed``: the mail of the expiry's window fed through the pipeline again (``backfill_since``, kept in
  the life until done, so a backfill that failed is done by the record's next try);
- ``forget``: the deleted grant's state swept from the state table (``sweep_from`` kept in the life, so a
  table too large for one invocation is swept over several of the record's tries).
"""

import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any

from replyonce.adapters.grant_registry import (
    NYLAS_PREFIX,
    Change,
    LifeChanged,
    read_grant,
    read_life,
    register_new,
    write_life,
)
from replyonce.exceptions import Deferred
from replyonce.jobs import GrantChanged
from replyonce.observability import count, logger
from replyonce.reasons import DeferReason
from replyonce.rules.grant_life import GrantLife, LifeDecision, backfill_notification, decide
from replyonce.rules.notification import Notification
from replyonce.shell.grants import GrantDirectory

NEW_GRANTS_OFF = "off"
"""``NEW_GRANT_REPLY_MODE`` that registers no grant Nylas creates (an operator registers each one)."""
_TRIES = 3

Sweep = Callable[[str, str, Callable[[], bool]], tuple[str, int]]
"""``(grant, start_after, keep_going) -> (go on from, items deleted)``: ``adapters.store.sweep_grant``."""
Backfill = Callable[[str, int, Callable[[], bool]], int | None]
"""``(grant, since, keep_going) -> messages queued`` (``None``: stopped before the end)."""


class GrantLifecycle:
    """Carries out one lifecycle notification of a grant.

    Parameters
    ----------
    dynamodb, table:
        The grant registry (``GRANT_REGISTRY_TABLE``) and a client for its consistent reads and writes.
    directory:
        The replier's grants (told at once of a deletion this container handled).
    new_grant_mode:
        ``NEW_GRANT_REPLY_MODE``: the reply mode a grant Nylas creates is registered in, or ``off``.
    sweep, backfill:
        The state table's sweep of a deleted grant and a resumed grant's backfill (I/O, injected).
    seeded:
        ``AGENT_GRANT_IDS``: agent grants without a record. Nylas tells of every grant of the application;
        only an agent grant's expiry pages, and only an agent grant's deletion sweeps the state table.
    clock:
        Wall clock for the change items' time.
    page_margin_seconds:
        A sweep page or a backfill page starts only with this much of the invocation left
        (``ReplierSettings.grant_page_margin_seconds``): a page cut by the function's end is done again
        in the record's next try, so a page that cannot finish is not begun.
    """

    def __init__(
        self,
        dynamodb: Any,
        table: str,
        directory: GrantDirectory,
        *,
        new_grant_mode: str,
        sweep: Sweep,
        backfill: Backfill,
        seeded: tuple[str, ...] = (),
        clock: Callable[[], float] = time.time,
        page_margin_seconds: float,
    ) -> None:
        self._seeded = seeded
        self._page_margin_seconds = page_margin_seconds
        self._dynamodb = dynamodb
        self._table = table
        self._directory = directory
        self._new_grant_mode = new_grant_mode
        self._sweep = sweep
        self._backfill = backfill
        self._clock = clock

    def handle(self, job: GrantChanged, remaining_seconds: Callable[[], float]) -> dict[str, Any]:
        """Apply ``job`` to the grant's life and carry out what it asks; the outcome Powertools stores.

        Raises
        ------
        Deferred
            ``unexpected``: the life kept changing under us, or a sweep or backfill must go on in the
            record's next try (it comes back at once and goes on where the life says).
        """
        grant, kind = job.grant_id, job.kind
        fields = {"grant_id": grant, "notification_type": kind, "notification_time": job.at}
        if not grant:
            logger.warning("grant notification names no grant; nothing to do", extra=fields)
            return {"outcome": "ignored", "reason": "no_grant_id"}
        decision, life = self._apply(job, fields)
        keep_going = lambda: remaining_seconds() > self._page_margin_seconds  # noqa: E731
        if decision.ignored is not None:
            logger.info(
                "grant notification changed nothing", extra={**fields, "reason": decision.ignored.value}
            )
        if decision.paused and not self._ours(grant):
            logger.info("grant expired: not an agent grant of this stack; nothing waits", extra=fields)
        elif decision.paused:
            # The alarm (GrantExpired) and the line naming the grant (docs/operations.md, "Grant expired").
            logger.warning(
                "grant expired: paused; its mail waits until Nylas says it was re-authenticated",
                extra={**fields, "paused_by": "expiry"},
            )
            count("GrantExpired")
        if decision.resumed:
            logger.info("grant re-authenticated: resumed", extra=fields)
            count("GrantResumed")
        if decision.forget:
            self._directory.forget(grant)
            self._forget(grant, life, keep_going, fields, first=decision.ignored is None)
        elif life.backfill_since and not life.expired:
            # Owed since a re-authentication (kept until done); not while expired again: Nylas would
            # refuse the listing (401), and the next re-authentication's window includes this one.
            self._backfill_window(grant, life, keep_going, fields)
        return {"outcome": "grant_life", "notification_type": kind, "grant_id": grant}

    # ---- the life, read and written ------------------------------------------------------------------------

    def _apply(self, job: GrantChanged, fields: dict[str, Any]) -> tuple[LifeDecision, GrantLife]:
        """Decide on the life as read, and write what changed conditioned on that read (read again if another
        record of the grant wrote it meanwhile)."""
        for _ in range(_TRIES):
            stored = read_life(self._dynamodb, self._table, job.grant_id)
            life = stored.life if stored else GrantLife()
            decision = decide(life, job)
            if decision.register:
                # Before the life says "created": a registration that failed is made by the next try.
                self._register(job.grant_id, job, fields)
            after = decision.life
            if after == life:
                return decision, life
            try:
                write_life(
                    self._dynamodb, self._table, job.grant_id, after, stored, self._change(job, life, after)
                )
            except LifeChanged:
                continue
            return decision, after
        raise Deferred(
            DeferReason.UNEXPECTED, 0, detail="the grant's life kept changing; read again", **fields
        )

    def _change(
        self, job: GrantChanged, before: GrantLife | None, after: GrantLife, action: str = ""
    ) -> Change:
        at = datetime.fromtimestamp(self._clock(), UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        action = action or _ACTIONS.get(job.kind, "life")
        return Change(
            job.grant_id,
            at,
            action,
            NYLAS_PREFIX + job.kind,
            asdict(before) if before else None,
            asdict(after),
        )

    def _rewrite(
        self, job_grant: str, kind: str, life: GrantLife, after: GrantLife, action: str
    ) -> GrantLife:
        """A follow-up write of the life (a backfill or a sweep done, or gone further), conditioned on
        ``life``."""
        stored = read_life(self._dynamodb, self._table, job_grant)
        if stored is None or stored.life != life:
            raise Deferred(
                DeferReason.UNEXPECTED, 0, grant_id=job_grant, detail="the grant's life changed meanwhile"
            )
        job = GrantChanged(job_grant, kind, 0)
        try:
            write_life(
                self._dynamodb, self._table, job_grant, after, stored, self._change(job, life, after, action)
            )
        except LifeChanged:
            raise Deferred(
                DeferReason.UNEXPECTED, 0, grant_id=job_grant, detail="the grant's life changed meanwhile"
            ) from None
        return after

    # ---- the effects ---------------------------------------------------------------------------------------

    def _register(self, grant: str, job: GrantChanged, fields: dict[str, Any]) -> None:
        if self._new_grant_mode == NEW_GRANTS_OFF:
            logger.info("grant created: not registered (NewGrantReplyMode is off)", extra=fields)
            return
        record = {"reply_mode": self._new_grant_mode}
        written = register_new(
            self._dynamodb, self._table, grant, record, self._change(job, None, GrantLife(), "register")
        )
        if written:
            logger.info("grant created: registered", extra={**fields, "reply_mode": self._new_grant_mode})
            count("GrantRegistered")
        else:
            logger.info("grant created: it has a record already, left as it is", extra=fields)

    def _backfill_window(
        self, grant: str, life: GrantLife, keep_going: Callable[[], bool], fields: dict[str, Any]
    ) -> GrantLife:
        if not self._ours(grant):
            # Another application grant: its mail is not ours to answer (each would be skipped).
            logger.info("grant re-authenticated: not an agent grant of this stack; no backfill", extra=fields)
            return self._rewrite(grant, "grant.updated", life, replace(life, backfill_since=0), "backfill")
        queued = self._backfill(grant, life.backfill_since, keep_going)
        if queued is None:
            raise Deferred(DeferReason.DEADLINE, 0, detail="the backfill goes on in the next try", **fields)
        logger.info(
            "re-authenticated grant's mail since its expiry queued again",
            extra={**fields, "backfill_since": life.backfill_since, "queued": queued},
        )
        count("GrantBackfilled", queued)
        return self._rewrite(grant, "grant.updated", life, replace(life, backfill_since=0), "backfill")

    def _ours(self, grant: str) -> bool:
        """An agent grant of the stack: ``AGENT_GRANT_IDS`` or a record (strongly consistent)."""
        return grant in self._seeded or read_grant(self._dynamodb, self._table, grant) is not None

    def _forget(
        self,
        grant: str,
        life: GrantLife,
        keep_going: Callable[[], bool],
        fields: dict[str, Any],
        *,
        first: bool,
    ) -> GrantLife:
        if not self._ours(grant):
            # Another application grant: none of its state is ours (a Scan of the table for nothing).
            logger.info("grant deleted: not an agent grant of this stack; no state to remove", extra=fields)
            return self._rewrite(grant, "grant.deleted", life, replace(life, swept=True), "sweep")
        if first:
            logger.warning(
                "grant deleted: nothing more is sent for it; its state is being removed", extra=fields
            )
            count("GrantDeleted")
        go_on_from, deleted = self._sweep(grant, life.sweep_from, keep_going)
        after = replace(life, sweep_from=go_on_from, swept=go_on_from == "")
        life = self._rewrite(grant, "grant.deleted", life, after, "sweep")
        if not life.swept:
            logger.info(
                "deleted grant's state: part removed, the rest in the next try",
                extra={**fields, "items": deleted},
            )
            raise Deferred(DeferReason.DEADLINE, 0, detail="the sweep goes on in the next try", **fields)
        logger.info("deleted grant's state removed", extra={**fields, "items": deleted})
        count("GrantStateSwept", deleted)
        return life


_ACTIONS = {
    "grant.created": "created",
    "grant.updated": "reauthenticate",
    "grant.expired": "expire",
    "grant.deleted": "delete",
}


class QueueBackfill:
    """A resumed grant's mail since its expiry, queued again as ``message.created`` notifications.

    Each message Nylas lists as received in the window goes on the notification queue as the webhook
    would put it (``rules.grant_life.backfill_notification``), so every exactly-once guard applies: a
    message answered meanwhile, or answered by its own (deferred) notification later, is skipped
    ``already_replied``; the agent's own mail ``own_outbound``.

    Parameters
    ----------
    list_since:
        ``(grant, received_after) -> messages`` (``NylasMailbox.received_since``).
    enqueue:
        Puts one notification on the queue (``NotificationQueue.enqueue``).
    """

    def __init__(
        self,
        list_since: Callable[[str, int], Any],
        enqueue: Callable[[Notification], Any],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._list_since = list_since
        self._enqueue = enqueue
        self._clock = clock

    def __call__(self, grant: str, since: int, keep_going: Callable[[], bool]) -> int | None:
        queued = 0
        for message in self._list_since(grant, since):
            if not keep_going():
                return None
            self._enqueue(Notification(backfill_notification({**message, "grant_id": grant}, self._clock())))
            queued += 1
        return queued
