"""Reply once to one notification: filter, fetch, ledger, lease, draft, send, record.

This runs inside Powertools idempotency (``consumer.py``), so it sees each
notification ``id`` once unless it raises — and raising is how every
transient failure asks for a retry (invariant 2: a crash before the send is
retried, never recorded as handled). Each skip is logged with a reason code
and counted (invariant 5).
"""

import time
from collections.abc import Callable
from typing import Any

from replyonce import filters
from replyonce.config import ReplierSettings
from replyonce.drafter import ReplyDrafter
from replyonce.exceptions import NylasPermanentError, NylasRetryableError
from replyonce.lease import REPLY_BUDGET_WINDOW_SECONDS, Lease, ThreadLeases, thread_key
from replyonce.ledger import REPLIED, ReplyLedger
from replyonce.notification import Notification
from replyonce.nylas import (
    CONCURRENT_IDEMPOTENT_REQUEST,
    INVALID_IDEMPOTENT_REQUEST,
    Grant,
    NylasClient,
    SentReply,
    idempotency_key,
)
from replyonce.observability import count, count_by, logger

# Skip reasons decided here (the message-level ones live in ``filters``).
ALREADY_REPLIED = "already_replied"
REPLY_PREVIOUSLY_FAILED = "reply_previously_failed"
BURST_ALREADY_ANSWERED = "burst_already_answered"
REPLY_BUDGET_EXHAUSTED = "reply_budget_exhausted"
SEND_REJECTED = "send_rejected"
MESSAGE_GONE = "message_gone"

# 409 concurrent_idempotent_request: the same key is in flight elsewhere; Nylas says retry in a few seconds.
_IN_FLIGHT_RETRY_SECONDS = 2.0
_IN_FLIGHT_ATTEMPTS = 3


def _date(message: dict[str, Any]) -> int:
    try:
        return int(message.get("date") or 0)
    except (TypeError, ValueError):
        return 0


def _skipped(notification: Notification, reason: str, **detail: Any) -> dict[str, Any]:
    logger.info(
        "notification skipped",
        extra={
            "reason": reason,
            "notification_id": notification.id,
            "notification_type": notification.type,
            "message_id": notification.message_id,
            **detail,
        },
    )
    count_by("NotificationSkipped", "reason", reason)
    return {"outcome": "skipped", "reason": reason}


class Replier:
    """Turns a notification into at most one reply.

    Parameters
    ----------
    settings:
        Agent grants, reply budget, thread window.
    nylas, ledger, leases, drafter:
        Collaborators, injectable for tests and the local stack.
    clock, sleep:
        Wall clock and sleep, injectable for tests.
    """

    def __init__(
        self,
        settings: ReplierSettings,
        nylas: NylasClient,
        ledger: ReplyLedger,
        leases: ThreadLeases,
        drafter: ReplyDrafter,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._settings = settings
        self._nylas = nylas
        self._ledger = ledger
        self._leases = leases
        self._drafter = drafter
        self._clock = clock
        self._sleep = sleep

    def reply(
        self, notification: Notification, *, remaining_ms: Callable[[], int], body_omitted: bool = False
    ) -> dict[str, Any]:
        """Process one notification; return its outcome (stored by Powertools idempotency).

        Raises
        ------
        ThreadBusyError
            Another worker holds the thread: the record must come back soon.
        NylasRetryableError, botocore errors
            Transient failures: the record fails and SQS redelivers it.
        """
        reason = filters.notification_skip_reason(notification, self._settings.agent_grant_ids)
        if reason:
            return _skipped(notification, reason)
        grant = self._nylas.grant(notification.grant_id)
        message = notification.object
        if notification.is_truncated or body_omitted or not notification.has_body:
            # The payload body is a hint; the API is the source of truth.
            try:
                message = self._nylas.message(grant.id, notification.message_id)
            except NylasPermanentError as gone:
                if gone.status != 404:
                    raise
                # Deleted (or moved out of reach) before we got to it: nothing to answer.
                return _skipped(notification, MESSAGE_GONE)
            count("MessageFetched")
        reason = filters.message_skip_reason(message, grant.email)
        if reason:
            return _skipped(notification, reason)
        message_id = str(message.get("id") or notification.message_id)
        entry = self._ledger.entry(grant.id, message_id)
        if entry is not None:
            reason = ALREADY_REPLIED if entry.status == REPLIED else REPLY_PREVIOUSLY_FAILED
            return _skipped(notification, reason, reply_message_id=entry.reply_message_id)
        thread_id = str(message.get("thread_id") or notification.thread_id or message_id)
        lease = self._leases.acquire(thread_key(grant.id, thread_id), duration_ms=remaining_ms())
        try:
            return self._reply_in_lease(notification, grant, message, thread_id, lease, remaining_ms)
        finally:
            if not lease.released and not self._leases.release(lease):
                logger.warning(
                    "thread lease expired and was taken over before release", extra={"thread_key": lease.key}
                )
                count("LeaseLost")

    def _reply_in_lease(
        self,
        notification: Notification,
        grant: Grant,
        message: dict[str, Any],
        thread_id: str,
        lease: Lease,
        remaining_ms: Callable[[], int],
    ) -> dict[str, Any]:
        message_id = str(message["id"])
        # Re-check inside the lease: another worker may have answered while we waited.
        if message_id in lease.state.answered:
            return _skipped(notification, ALREADY_REPLIED)
        window_start = int(self._clock()) - REPLY_BUDGET_WINDOW_SECONDS
        if lease.state.replies_since(window_start) >= self._settings.reply_budget_per_hour:
            return _skipped(notification, REPLY_BUDGET_EXHAUSTED, thread_id=thread_id)

        thread = self._nylas.thread_messages(grant.id, thread_id, self._settings.thread_window)
        agent_dates = [_date(m) for m in thread if filters.sender_email(m) == grant.email]
        last_agent_reply = max(agent_dates, default=0)
        if last_agent_reply > _date(message):
            return _skipped(notification, BURST_ALREADY_ANSWERED, thread_id=thread_id)
        # The loop guard again, from what Nylas shows: a reply whose worker died before recording
        # it is in the thread but not in our state.
        if sum(1 for date in agent_dates if date >= window_start) >= self._settings.reply_budget_per_hour:
            return _skipped(notification, REPLY_BUDGET_EXHAUSTED, thread_id=thread_id)
        # The burst: inbound messages since the agent last wrote. One reply, to the newest, covers them all.
        burst = [
            m
            for m in thread
            if _date(m) >= last_agent_reply and filters.message_skip_reason(m, grant.email) is None
        ]
        if message_id not in {str(m.get("id")) for m in burst}:
            burst.append(message)
        target = max(burst, key=_date)  # ties keep the listing's newest-first order
        draft = self._drafter.draft(target, grant.name)
        recipients = target.get("reply_to") or target.get("from") or []
        payload = {
            "to": [{k: v for k, v in r.items() if k in ("name", "email") and v} for r in recipients],
            "subject": draft.subject,
            "body": draft.body,
            "reply_to_message_id": target["id"],
        }
        covered = [str(m["id"]) for m in burst]
        key = idempotency_key(grant.id, str(target["id"]))
        try:
            sent = self._send(grant.id, payload, key, remaining_ms)
        except NylasPermanentError as rejected:
            if rejected.error_type == INVALID_IDEMPOTENT_REQUEST:
                # An earlier attempt already used this key with another draft: the
                # reply went out (or was refused) then. Never send a second one.
                logger.warning(
                    "send key already used with another draft; not sending again",
                    extra={"replied_to": target["id"]},
                )
                sent = SentReply(message_id="", status=409, replayed=True)
            else:
                logger.error(
                    "Nylas rejected the reply; not retrying",
                    extra={
                        "status": rejected.status,
                        "error_type": rejected.error_type,
                        "detail": str(rejected),
                    },
                )
                for covered_id in covered:
                    self._ledger.record_failure(
                        grant.id, covered_id, f"{rejected.status} {rejected.error_type}"
                    )
                count_by("ReplyFailed", "status", str(rejected.status))
                return _skipped(notification, SEND_REJECTED, status=rejected.status)

        held = self._ledger.record_reply(
            lease, grant.id, covered, sent.message_id, replied_to=str(target["id"])
        )
        if not held:
            logger.warning(
                "thread lease was lost before the reply was recorded; recorded without it",
                extra={"thread_key": lease.key},
            )
            count("LeaseLost")
        count("SendReplayed" if sent.replayed else "ReplySent")
        if len(covered) > 1:
            count("BurstCoalesced", len(covered) - 1)
        logger.info(
            "reply sent",
            extra={
                "notification_id": notification.id,
                "replied_to": target["id"],
                "reply_message_id": sent.message_id,
                "covered": len(covered),
                "replayed": sent.replayed,
                "status": sent.status,
            },
        )
        return {
            "outcome": "replied",
            "replied_to": target["id"],
            "reply_message_id": sent.message_id,
            "covered": covered,
        }

    def _send(
        self, grant_id: str, payload: dict[str, Any], key: str, remaining_ms: Callable[[], int]
    ) -> SentReply:
        """Send; on 409 for a key in flight, wait and retry with the same key while time allows."""
        for attempt in range(1, _IN_FLIGHT_ATTEMPTS + 1):
            try:
                return self._nylas.send(grant_id, payload, key)
            except NylasRetryableError as exc:
                in_flight = exc.error_type == CONCURRENT_IDEMPOTENT_REQUEST
                time_left = remaining_ms() / 1000 > self._settings.nylas_send_timeout_seconds / 4
                if not in_flight or attempt == _IN_FLIGHT_ATTEMPTS or not time_left:
                    raise
                logger.info(
                    "same send is in flight elsewhere; retrying with the same key", extra={"attempt": attempt}
                )
                self._sleep(_IN_FLIGHT_RETRY_SECONDS)
        raise AssertionError("unreachable")
