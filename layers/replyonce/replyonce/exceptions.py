"""Typed exceptions: each names one way a notification or a reply can fail.

Why typed: the handlers map each failure to an HTTP status (webhook) or to a
batch item failure (replier); a bare ``Exception`` would hide which of "retry",
"drop with a log line" or "dead-letter" applies.
"""

from typing import TYPE_CHECKING

from replyonce.reasons import DeferReason

if TYPE_CHECKING:
    from replyonce.ports import ActiveRegion


class ReplyOnceError(Exception):
    """Base class of every error raised by ReplyOnce."""


class ConfigurationError(ReplyOnceError):
    """An environment variable is missing or malformed."""


class SecretsUnavailableError(ReplyOnceError):
    """Secrets Manager could not be read, or the secret lacks a required key."""


class InvalidNotificationError(ReplyOnceError):
    """A signed body that is not a Nylas notification (no point in retrying it)."""


class EnqueueError(ReplyOnceError):
    """The notification could not be put on the queue; Nylas must retry it."""


class ThreadBusyError(ReplyOnceError):
    """Another worker holds the thread lease; the record comes back later."""

    def __init__(self, thread_key: str, held_for_seconds: int) -> None:
        super().__init__(f"thread {thread_key} is leased by another worker for {held_for_seconds} s more")
        self.thread_key = thread_key
        self.held_for_seconds = held_for_seconds


class StateContended(ReplyOnceError):
    """DynamoDB kept answering a write of the state table with contention (``replyonce.adapters.contention``).

    A transaction conflict is a moment's overlap, retried in place; one that
    outlasts every retry is a hot thread: the record goes back to the queue as
    for a busy thread (``DeferReason.THREAD_BUSY``), nothing having been written.
    """

    def __init__(self, what: str, kind: str, attempts: int) -> None:
        super().__init__(f"{what}: DynamoDB answered {kind} to {attempts} tries")
        self.what = what
        self.kind = kind
        self.attempts = attempts


class Deferred(ReplyOnceError):
    """The record goes back to the queue, to be tried again later (``replyonce.reasons.DeferReason``).

    Why an exception: Powertools idempotency stores a record's result only
    when the function returns; raising deletes the in-progress record, so the
    notification is processed again when SQS delivers it again.

    Attributes
    ----------
    reason:
        Why (the ``reason`` of the log line and of the ``RecordDeferred`` metric).
    seconds:
        When to try again, if the deferral knows (``Retry-After``, the settle time, a lease's end);
        ``None``: the standard backoff by receive count.
    detail:
        Log fields.
    hand_over:
        The active Region's record, when this Region is passive and may move the record to the
        active Region's queue (``replyonce.shell.consumer``); ``None``: the record stays here.
    """

    def __init__(
        self,
        reason: DeferReason,
        seconds: int | None = None,
        *,
        hand_over: "ActiveRegion | None" = None,
        **detail: object,
    ) -> None:
        super().__init__(f"deferred: {reason.value}")
        self.reason = reason
        self.seconds = seconds
        self.hand_over = hand_over
        self.detail = detail


class NylasError(ReplyOnceError):
    """A Nylas API call failed."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retry_after_seconds: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.retry_after_seconds = retry_after_seconds


class NylasRetryableError(NylasError):
    """A Nylas failure worth retrying later (5xx, 429, 401, timeout)."""


class NylasPermanentError(NylasError):
    """A Nylas 4xx that no retry can fix (bad request, scope, not found)."""


class StoredRequestLost(ReplyOnceError):
    """A stored intent's request body is missing from the state table, or is not the bytes it names.

    Never expected: the body is written before the intent that names it and
    outlives it (``replyonce.state``). Raised rather than sending anything
    else: the record fails as unexpected, and dead-letters if it persists.
    """


class ReplyFileLost(StoredRequestLost):
    """A file a stored intent names is not in the reply files bucket, or is not the bytes it names.

    Never expected: the file is written before the intent that names it, and
    the bucket keeps it ``ReplyFilesRetentionDays`` (longer than a record can
    wait, dead-letter queue included). Raised rather than sending the reply
    without it.
    """


class GrantLifeRefused(ReplyOnceError):
    """An intent's store carried the condition that its grant's life does not say deleted, and it did not
    hold (DynamoDB cancelled the write: nothing was stored).

    Raised by the store (``StateStore.store_intent`` with ``grant_alive``); the shell then reads the life
    strongly consistent and defers the record ``grant_deleted`` (issue 42), or, a life the condition could
    not read as alive that is not deleted, stores without it and reads before the send as before.
    """

    def __init__(self, grant_id: str) -> None:
        super().__init__(f"grant {grant_id}: its life does not show it alive; nothing stored")
        self.grant_id = grant_id
