"""Reply once to one notification: filter, ledger, lease, outbox, send, record.

This runs inside Powertools idempotency (``consumer.py``), so it sees each
notification ``id`` once unless it raises — and raising is how every
transient failure asks for a retry (invariant 2: a crash before the send is
retried, never recorded as handled). Each skip is logged with a reason code
and counted (invariant 5). The decisions themselves (which message, which
ones covered, to whom, which key, what an answer means) are pure functions in
``decisions.py``; this module does the reads and writes around them:

    ledger says answered? ─▶ skip
    lease (waits briefly for a holder) ─▶ covered already? ─▶ skip
        stored intent?  ─▶ finish it first (found by intent id, or sent again byte for byte)
        thread read (headers, Nylas time) ─▶ loop guard ─▶ plan ─▶ draft
        store intent ─▶ send (key generation g) ─▶ record ledger + covered ids, release
"""

import time
from collections.abc import Callable
from typing import Any

from replyonce import decisions, filters
from replyonce.config import ReplierSettings
from replyonce.decisions import ALREADY_REPLIED, REPLY_BUDGET_EXHAUSTED, SendOutcome
from replyonce.drafter import ReplyDrafter
from replyonce.exceptions import (
    DraftRejectedError,
    LeaseLostError,
    NylasPermanentError,
    NylasRetryableError,
    ThreadBusyError,
)
from replyonce.lease import Lease, ThreadLeases
from replyonce.ledger import REPLIED, ReplyLedger
from replyonce.notification import Notification
from replyonce.nylas import Grant, NylasClient, SendAnswer
from replyonce.observability import count, count_by, logger
from replyonce.outbox import INTENT_METADATA_KEY, Outbox, new_intent_id, send_request
from replyonce.state import REPLY_BUDGET_WINDOW_SECONDS, SendIntent, thread_key

# Skip reasons decided here (the message-level ones live in ``filters``, the plan's in ``decisions``).
REPLY_PREVIOUSLY_FAILED = "reply_previously_failed"
SEND_REJECTED = "send_rejected"
DRAFT_REJECTED = "draft_rejected"
MESSAGE_GONE = "message_gone"
NO_MESSAGE_ID = "no_message_id"

# 409 concurrent_idempotent_request: the same key is in flight elsewhere; Nylas says retry in a few seconds.
_IN_FLIGHT_RETRY_SECONDS = 2.0
_IN_FLIGHT_ATTEMPTS = 3
# A holder that finished a stored intent goes round once more for its own message; bounded.
_LEASE_ROUNDS = 3


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


def _date(message: dict[str, Any]) -> int:
    try:
        return int(message.get("date") or 0)
    except (TypeError, ValueError):
        return 0


class Replier:
    """Turns a notification into at most one reply.

    Parameters
    ----------
    settings:
        Agent grants, reply budget, thread window, timeouts.
    nylas, ledger, leases, outbox, drafter:
        Collaborators, injectable for tests and the local stack.
    sleep:
        Injectable sleep (the in-flight retry).
    """

    def __init__(
        self,
        settings: ReplierSettings,
        nylas: NylasClient,
        ledger: ReplyLedger,
        leases: ThreadLeases,
        outbox: Outbox,
        drafter: ReplyDrafter,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._settings = settings
        self._nylas = nylas
        self._ledger = ledger
        self._leases = leases
        self._outbox = outbox
        self._drafter = drafter
        self._sleep = sleep
        self._own: frozenset[str] | None = None

    def own_addresses(self) -> frozenset[str]:
        """Every agent grant's address: mail from any of them is the agent's own (invariant 4).

        Looked up once per container. A configured grant Nylas does not know is
        logged as an error and counted, not silently ignored: a mistyped
        ``AGENT_GRANT_IDS`` would otherwise skip every message as ``grant_not_agent``.
        """
        if self._own is None:
            emails = set()
            for grant_id in sorted(self._settings.agent_grant_ids):
                try:
                    emails.add(self._nylas.grant(grant_id).email)
                except NylasPermanentError as unknown:
                    logger.error(
                        "AGENT_GRANT_IDS names a grant Nylas does not know; its mail is not answered",
                        extra={"grant_id": grant_id, "status": unknown.status},
                    )
                    count("AgentGrantUnknown")
            self._own = frozenset(e for e in emails if e)
        return self._own

    def reply(
        self, notification: Notification, *, remaining_ms: Callable[[], int], body_omitted: bool = False
    ) -> dict[str, Any]:
        """Process one notification; return its outcome (stored by Powertools idempotency).

        Raises
        ------
        ThreadBusyError
            Another worker holds the thread: the record must come back soon.
        NylasRetryableError, LeaseLostError, botocore errors
            Transient failures: the record fails and SQS redelivers it.
        """
        if not notification.is_message_created:
            return _skipped(notification, filters.UNSUPPORTED_TYPE)
        own = self.own_addresses()
        reason = filters.notification_skip_reason(notification, self._settings.agent_grant_ids)
        if reason:
            return _skipped(notification, reason)
        message_id = notification.message_id
        if not message_id:
            return _skipped(notification, NO_MESSAGE_ID)
        grant = self._nylas.grant(notification.grant_id)
        trusted = self._settings.reply_to_trusted_senders
        # The payload's sender is enough for the agent's own mail and machine addresses: no lease,
        # no read. Header checks wait for the thread read, which asks for headers.
        if notification.object.get("from"):
            reason = filters.sender_skip_reason(notification.object, own, trusted)
            if reason:
                return _skipped(notification, reason)
        thread_id = notification.thread_id
        if not thread_id:
            fetched = self._fetch(grant, message_id)
            if fetched is None:
                return _skipped(notification, MESSAGE_GONE)
            thread_id = str(fetched.get("thread_id") or message_id)
        entry = self._ledger.entry(grant.id, message_id)
        if entry is not None:
            reason = ALREADY_REPLIED if entry.status == REPLIED else REPLY_PREVIOUSLY_FAILED
            return _skipped(notification, reason, reply_message_id=entry.reply_message_id)
        key = thread_key(grant.id, thread_id)
        for _ in range(_LEASE_ROUNDS):
            lease = self._leases.acquire(
                key, duration_ms=remaining_ms(), wait_seconds=self._lease_wait_seconds(remaining_ms)
            )
            try:
                if message_id in lease.state.answered:
                    return _skipped(notification, ALREADY_REPLIED, thread_id=thread_id)
                pending = lease.state.intent
                if pending is None:
                    return self._reply_in_lease(notification, grant, thread_id, lease, remaining_ms)
                # A reply decided earlier (a crash, a timeout, a lost lease) goes out before any new one.
                finished = self._finish(notification, grant, lease, pending, remaining_ms, recovering=True)
                if message_id in pending.covered:
                    return finished
            finally:
                if not lease.released and not self._leases.release(lease):
                    logger.warning(
                        "thread lease expired and was taken over before release",
                        extra={"thread_key": lease.key},
                    )
                    count("LeaseLost")
        raise ThreadBusyError(key, 0)

    def _lease_wait_seconds(self, remaining_ms: Callable[[], int]) -> float:
        """Wait for a holder only as long as the rest of this record still fits in the invocation."""
        spare = (
            remaining_ms() / 1000
            - self._settings.nylas_send_timeout_seconds
            - self._settings.record_margin_seconds
        )
        return max(0.0, min(self._settings.lease_wait_seconds, spare))

    def _fetch(self, grant: Grant, message_id: str) -> dict[str, Any] | None:
        """The message with headers, or ``None`` when Nylas no longer has it (deleted, moved out of reach)."""
        try:
            message = self._nylas.message(grant.id, message_id)
        except NylasPermanentError as gone:
            if gone.status != 404:
                raise
            return None
        count("MessageFetched")
        return message

    def _reply_in_lease(
        self,
        notification: Notification,
        grant: Grant,
        thread_id: str,
        lease: Lease,
        remaining_ms: Callable[[], int],
    ) -> dict[str, Any]:
        message_id = notification.message_id
        read = self._nylas.thread_messages(grant.id, thread_id, self._settings.thread_window)
        messages = read.messages
        if message_id not in {str(m.get("id")) for m in messages}:
            # Older than the page read (a long thread) or not listed yet: fetch it by id.
            fetched = self._fetch(grant, message_id)
            if fetched is None:
                return _skipped(notification, MESSAGE_GONE)
            messages = [*messages, fetched]
        agent_dates = [_date(m) for m in messages if filters.sender_email(m) == grant.email]
        if decisions.loop_guard_exhausted(
            lease.state.replies.values(),
            agent_dates,
            now=read.nylas_time,
            window=REPLY_BUDGET_WINDOW_SECONDS,
            budget=self._settings.reply_budget_per_hour,
        ):
            return _skipped(notification, REPLY_BUDGET_EXHAUSTED, thread_id=thread_id)
        plan = decisions.plan_reply(
            message_id,
            messages,
            lease.state.answered.keys(),
            self.own_addresses(),
            self._settings.reply_to_trusted_senders,
        )
        if isinstance(plan, decisions.Skip):
            return _skipped(notification, plan.reason, thread_id=thread_id)
        try:
            draft = self._drafter.draft(dict(plan.target), grant.name)
        except DraftRejectedError as rejected:
            # A model refused for good (no access, invalid request): retrying 8 times changes nothing.
            self._ledger.record_failure(lease, grant.id, plan.covered, f"draft {rejected.code}")
            count_by("ReplyFailed", "status", "draft")
            return _skipped(notification, DRAFT_REJECTED, code=rejected.code, thread_id=thread_id)
        intent_id = new_intent_id()
        target_id = str(plan.target["id"])
        intent = SendIntent(
            id=intent_id,
            target_id=target_id,
            covered=plan.covered,
            request=send_request(target_id, plan.recipients, draft.subject, draft.body, intent_id),
            created_at=read.nylas_time,
        )
        # Stored before the first attempt: from here on, every attempt sends these bytes.
        if not self._outbox.store(lease, intent):
            raise LeaseLostError(f"lease on {lease.key} lost before the reply was stored; nothing was sent")
        return self._finish(notification, grant, lease, intent, remaining_ms, recovering=False)

    def _finish(
        self,
        notification: Notification,
        grant: Grant,
        lease: Lease,
        intent: SendIntent,
        remaining_ms: Callable[[], int],
        *,
        recovering: bool,
    ) -> dict[str, Any]:
        """Get a stored intent out exactly once, record it, and free the lease."""
        if recovering:
            # The key fences only for its hour, and a redrive can come later than that: look for
            # the reply itself (by the intent id sent as metadata) before any attempt.
            found = self._nylas.find_by_metadata(grant.id, INTENT_METADATA_KEY, intent.id)
            # Evidence only if it is ours and carries the intent id: a filter Nylas ignored must not
            # turn a customer's message into "our reply".
            if (
                found is not None
                and filters.sender_email(found) == grant.email
                and (found.get("metadata") or {}).get(INTENT_METADATA_KEY) == intent.id
            ):
                count("ReplyFoundInMailbox")
                return self._record(
                    notification, lease, grant, intent, str(found.get("id", "")), _date(found)
                )
        for attempt in range(1, _IN_FLIGHT_ATTEMPTS + 1):
            key = decisions.idempotency_key(grant.id, intent.target_id, intent.generation)
            answer = self._nylas.send(grant.id, intent.request, key)
            outcome = decisions.classify_send(answer.status, answer.error_type, replayed=answer.replayed)
            if outcome is SendOutcome.SENT:
                count("SendReplayed" if answer.replayed else "ReplySent")
                return self._record(notification, lease, grant, intent, answer.message_id, answer.nylas_time)
            if outcome is SendOutcome.REJECTED:
                return self._rejected(notification, lease, grant, intent, answer)
            if outcome is SendOutcome.RETRY_NEXT_KEY:
                # The key holds a cached failure (or was used for other bytes): only the next key
                # can send. Stored before the attempt that uses it, so any worker uses the same one.
                intent = intent.next_generation()
                if not self._outbox.store(lease, intent):
                    raise LeaseLostError(f"lease on {lease.key} lost while moving to the next key")
                logger.warning(
                    "send key holds a failure; the next attempt uses the next key generation",
                    extra={
                        "status": answer.status,
                        "error_type": answer.error_type,
                        "generation": intent.generation,
                    },
                )
                count("KeyGenerationAdvanced")
                raise self._retryable(answer)
            in_flight = answer.error_type == decisions.CONCURRENT_IDEMPOTENT_REQUEST
            time_left = remaining_ms() / 1000 > self._settings.nylas_send_timeout_seconds / 4
            if not in_flight or attempt == _IN_FLIGHT_ATTEMPTS or not time_left:
                raise self._retryable(answer)
            logger.info(
                "same send is in flight elsewhere; retrying with the same key", extra={"attempt": attempt}
            )
            self._sleep(_IN_FLIGHT_RETRY_SECONDS)
        raise AssertionError("unreachable")

    @staticmethod
    def _retryable(answer: SendAnswer) -> NylasRetryableError:
        return NylasRetryableError(
            answer.detail or f"send: {answer.status}",
            status=answer.status,
            error_type=answer.error_type,
            retry_after_seconds=answer.retry_after_seconds,
        )

    def _record(
        self,
        notification: Notification,
        lease: Lease,
        grant: Grant,
        intent: SendIntent,
        reply_message_id: str,
        sent_at: int,
    ) -> dict[str, Any]:
        held = self._ledger.record_reply(
            lease, grant.id, intent, reply_message_id, sent_at or intent.created_at
        )
        if not held:
            logger.warning(
                "thread lease was lost before the reply was recorded; recorded without it",
                extra={"thread_key": lease.key},
            )
            count("LeaseLost")
        if len(intent.covered) > 1:
            count("BurstCoalesced", len(intent.covered) - 1)
        request = intent.payload
        logger.info(
            "reply sent",
            extra={
                "notification_id": notification.id,
                "replied_to": intent.target_id,
                "reply_message_id": reply_message_id,
                "covered": list(intent.covered),
                "to": [r.get("email", "") for r in request.get("to", [])],
                "subject": request.get("subject", ""),
                "generation": intent.generation,
            },
        )
        return {
            "outcome": "replied",
            "replied_to": intent.target_id,
            "reply_message_id": reply_message_id,
            "covered": list(intent.covered),
        }

    def _rejected(
        self, notification: Notification, lease: Lease, grant: Grant, intent: SendIntent, answer: SendAnswer
    ) -> dict[str, Any]:
        logger.error(
            "Nylas rejected the reply; not retrying",
            extra={"status": answer.status, "error_type": answer.error_type, "detail": answer.detail},
        )
        self._ledger.record_failure(lease, grant.id, intent.covered, f"{answer.status} {answer.error_type}")
        count_by("ReplyFailed", "status", str(answer.status))
        return _skipped(notification, SEND_REJECTED, status=answer.status)
