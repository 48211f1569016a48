"""Typed exceptions: each names one way a notification or a reply can fail.

Why typed: the handlers map each failure to an HTTP status (webhook) or to a
batch item failure (replier); a bare ``Exception`` would hide which of "retry",
"drop with a log line" or "dead-letter" applies.
"""


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


class LeaseLostError(ReplyOnceError):
    """The lease expired and another worker took it before we stored or moved our intent."""


class DeadlineError(ReplyOnceError):
    """Too little time left in the invocation to start a record; it goes back to the queue unstarted."""


class NylasError(ReplyOnceError):
    """A Nylas API call failed."""

    def __init__(self, message: str, *, status: int | None = None, error_type: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type


class NylasRetryableError(NylasError):
    """A Nylas failure worth retrying later (5xx, 429, timeout, key in flight)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retry_after_seconds: int | None = None,
    ) -> None:
        super().__init__(message, status=status, error_type=error_type)
        self.retry_after_seconds = retry_after_seconds


class NylasPermanentError(NylasError):
    """A Nylas 4xx that no retry can fix (bad request, scope, not found)."""


class DraftRejectedError(ReplyOnceError):
    """The drafting model refused the request for good (Bedrock 4xx: access, validation, unknown model).

    Why typed: retrying cannot fix a missing model access or a wrong model id,
    and eight retries end on the dead-letter queue; the replier records it as a
    permanent failure, like a send Nylas refuses.
    """

    def __init__(self, message: str, *, code: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
