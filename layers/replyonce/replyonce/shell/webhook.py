"""The webhook endpoint: answer the challenge, verify, queue, and only then answer 200.

Status rules (docs/design.md invariant 6). Nylas retries only 408, 429, 502, 503,
504, 507 and timeouts and drops every other status, so:

- a forged or unsigned request → 401, nothing queued;
- a signed body that is not a notification → 400 (a retry cannot fix it);
- a body over the cap → 413;
- a signed notification older than ``MAX_NOTIFICATION_AGE_SECONDS``, or dated
  more than ``max_notification_future_seconds`` ahead → 401 (a replay: Nylas
  signs no timestamp, so the body's own ``time`` is the bound);
- a signature that matches no stored secret while a rotation is flagged
  (``rotating_until``), or while a fresh read of the secret is refused by its
  rate limit → 503, so a genuine delivery signed with a secret we have not
  read yet is retried rather than dropped;
- any failure of ours, including a function that cannot start (configuration)
  → 503, never 500, so Nylas tries again.

Metrics for the alarms (template.yaml): ``RequestRejected`` counts every 4xx
this function answers (the 4xx alarm sees our path only, not scanners that
API Gateway answers on other paths); ``NotificationDeferred`` counts the
deliberate 503s of an unverifiable signature, which the 5xx alarm subtracts.
Every reason is a :class:`replyonce.reasons.RejectReason`, which carries its status.
"""

import base64
import binascii
import json
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from replyonce.adapters.queue import SQS_CLIENT_CONFIG, NotificationQueue
from replyonce.adapters.secrets import WebhookSecrets, bounded_provider
from replyonce.config import WebhookSettings
from replyonce.exceptions import (
    ConfigurationError,
    EnqueueError,
    InvalidNotificationError,
    SecretsUnavailableError,
)
from replyonce.observability import count, count_by, logger
from replyonce.reasons import RejectReason
from replyonce.rules.notification import Notification
from replyonce.rules.signature import SIGNATURE_HEADER, signature_matches


@dataclass(frozen=True)
class WebhookResponse:
    """A REST API Lambda proxy response."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def to_proxy(self) -> dict:
        # nosniff: a browser must not read the echoed challenge (attacker-chosen text) as HTML.
        headers = {"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", **self.headers}
        return {"statusCode": self.status, "headers": headers, "body": self.body, "isBase64Encoded": False}


def _json(status: int, message: str, **extra: str) -> WebhookResponse:
    return WebhookResponse(status, json.dumps({"message": message, **extra}))


# A notification `time` above this is milliseconds (10^11 s is the year 5138).
_MILLISECONDS_ABOVE = 10**11
RETRY_LATER = "temporarily unable to accept the notification; retry"


def unavailable(failure: ConfigurationError) -> WebhookResponse:
    """The answer of a function that cannot start: 503 (Nylas retries), with one clear log line.

    Why not let the exception escape: API Gateway would answer 502 for the
    crashed invocation, which Nylas retries too, but the log would hold a bare
    traceback per request instead of what to fix.
    """
    logger.error(
        "webhook cannot start: configuration error; answering 503 so Nylas retries",
        extra={"reason": "configuration_error", "detail": str(failure)},
    )
    count_by("EnqueueFailed", "reason", "configuration_error")
    return _json(503, RETRY_LATER)


class RejectedError(Exception):
    """A request answered with a non-200 status; its reason decides the status and is the metric dimension."""

    def __init__(self, reason: RejectReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    @property
    def status(self) -> int:
        return self.reason.status


class WebhookEndpoint:
    """Handles one API Gateway request.

    Parameters
    ----------
    settings:
        Body cap, queue limits, notification age bound.
    secrets:
        The webhook signing secrets.
    queue:
        Where verified notifications go.
    clock:
        Epoch clock the notification's ``time`` is compared with.
    """

    def __init__(
        self,
        settings: WebhookSettings,
        secrets: WebhookSecrets,
        queue: NotificationQueue,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._settings = settings
        self._secrets = secrets
        self._queue = queue
        self._clock = clock

    @classmethod
    def from_environment(
        cls, aws: boto3.session.Session | None = None, *, tuning: Mapping[str, Any] | None = None
    ) -> "WebhookEndpoint":
        """Build the endpoint the template configures; ``aws`` is the boto3 session clients come from.

        ``tuning``: settings no variable sets, by field name (``WebhookSettings``), from a harness only.
        """
        settings = WebhookSettings.from_environment(tuning=tuning)
        aws = aws or boto3.session.Session()
        return cls(
            settings,
            WebhookSecrets(settings.secrets, bounded_provider(aws)),
            NotificationQueue(
                settings.queue_url,
                settings.queue_max_message_bytes,
                aws.client("sqs", config=SQS_CLIENT_CONFIG),
            ),
        )

    def handle(self, event: APIGatewayProxyEvent) -> WebhookResponse:
        """Answer one request; never raises, never answers 500."""
        try:
            if event.http_method == "GET":
                return self._challenge(event)
            if event.http_method == "POST":
                return self._notification(event)
            raise RejectedError(RejectReason.METHOD_NOT_ALLOWED, f"method {event.http_method} is not allowed")
        except RejectedError as rejected:
            logger.warning(
                "request rejected",
                extra={"reason": rejected.reason.value, "status": rejected.status, "detail": str(rejected)},
            )
            count_by("NotificationRejected", "reason", rejected.reason.value)
            count("NotificationDeferred" if rejected.status == 503 else "RequestRejected")
            response = _json(rejected.status, str(rejected))
            if rejected.status == 405:
                response.headers["Allow"] = "GET, POST"
            return response
        except (SecretsUnavailableError, EnqueueError) as failure:
            logger.error(
                "notification not queued; answering 503 so Nylas retries", extra={"detail": str(failure)}
            )
            count_by("EnqueueFailed", "reason", type(failure).__name__)
            return _json(503, RETRY_LATER)
        except Exception:
            # A bug of ours must still be retried by Nylas: 503, not 500.
            logger.exception("unexpected failure; answering 503 so Nylas retries")
            count_by("EnqueueFailed", "reason", "unexpected")
            return _json(503, RETRY_LATER)

    def _challenge(self, event: APIGatewayProxyEvent) -> WebhookResponse:
        challenge = event.get_query_string_value("challenge")
        if not challenge:
            raise RejectedError(RejectReason.CHALLENGE_MISSING, "GET needs a challenge query parameter")
        count("ChallengeAnswered")
        logger.info("challenge answered")
        # The bare value, as text: no JSON, no quotes. A proxy response is
        # buffered, so API Gateway sends it with Content-Length, not chunked.
        return WebhookResponse(200, challenge, {"Content-Type": "text/plain"})

    def _notification(self, event: APIGatewayProxyEvent) -> WebhookResponse:
        raw = self._raw_body(event)
        signature = event.headers.get(SIGNATURE_HEADER)
        if not signature:
            raise RejectedError(RejectReason.SIGNATURE_MISSING, "X-Nylas-Signature header is missing")
        self._verify(raw, signature)
        body = self._decoded(raw, event.headers.get("content-encoding", ""))
        try:
            notification = Notification.parse(body)
        except InvalidNotificationError as exc:
            logger.error("signed body is not a notification; dropping it", extra={"detail": str(exc)})
            raise RejectedError(RejectReason.NOT_A_NOTIFICATION, str(exc)) from None
        logger.set_correlation_id(notification.id)
        self._check_time(notification)
        enqueued = self._queue.enqueue(notification)
        logger.info(
            "notification queued",
            extra={
                "notification_id": notification.id,
                "notification_type": notification.type,
                "grant_id": notification.grant_id,
                "sqs_message_id": enqueued.message_id,
                "body_omitted": enqueued.body_omitted,
            },
        )
        count("NotificationAccepted")
        if enqueued.body_omitted:
            count("NotificationBodyOmitted")
        return _json(200, "queued", notification_id=notification.id)

    def _raw_body(self, event: APIGatewayProxyEvent) -> bytes:
        """The exact bytes Nylas sent (API Gateway base64-encodes binary bodies)."""
        body = event.body or ""
        cap = self._settings.max_body_bytes
        if event.is_base64_encoded:
            # Base64 grows by 4/3: check before decoding so abuse costs nothing.
            if len(body) > (cap + 2) // 3 * 4:
                raise RejectedError(RejectReason.BODY_TOO_LARGE, f"body exceeds {cap} bytes")
            try:
                raw = base64.b64decode(body, validate=True)
            except (binascii.Error, ValueError):
                raise RejectedError(
                    RejectReason.BODY_NOT_BASE64, "body is marked base64 but is not"
                ) from None
        else:
            raw = body.encode()
        if len(raw) > cap:
            raise RejectedError(RejectReason.BODY_TOO_LARGE, f"body exceeds {cap} bytes")
        return raw

    def _verify(self, raw: bytes, signature: str) -> None:
        """Return when the signature matches a stored secret; else raise the answer (401 or 503)."""
        if signature_matches(raw, signature, self._secrets.webhook_secrets()):
            return
        # The cached secret may predate a rotation: one fresh read, then decide.
        refreshed = self._secrets.refreshed_webhook_secrets()
        if refreshed is not None and signature_matches(raw, signature, refreshed):
            return
        if refreshed is None:
            # A fresh read was refused by the rate limit, so we cannot know whether the stored secret
            # changed since our last read: a genuine delivery signed with a newer secret must be
            # retried (503), never dropped (401). Forged traffic gets 503s too, and costs no reads.
            raise RejectedError(
                RejectReason.SIGNATURE_UNVERIFIED_SECRET_STALE, "secret could not be re-read just now; retry"
            )
        if self._secrets.rotating():
            # Perhaps signed with a secret Nylas issued and we have not stored yet: ask for a retry.
            raise RejectedError(
                RejectReason.SIGNATURE_UNVERIFIED_DURING_ROTATION, "secret rotation under way; retry"
            )
        raise RejectedError(RejectReason.SIGNATURE_INVALID, "X-Nylas-Signature does not match the body")

    def _check_time(self, notification: Notification) -> None:
        """Refuse a notification older than the bound, or dated further ahead than clock skew explains.

        Why 401 and not a retried status: the request is authentic bytes used
        out of their time, an authentication failure no retry can fix. Nylas
        itself stops retrying long before the bound (72 h). ``time`` is Unix
        seconds (the envelope schema); a value above 10^11 is milliseconds
        (some Nylas examples show them) and is read as such, so it can neither
        switch the bound off nor pass as a time far ahead.
        """
        sent = notification.payload.get("time")
        if isinstance(sent, bool) or not isinstance(sent, int | float):
            # Nylas always sends `time`; a signed body without one cannot have been altered to drop it.
            logger.warning("notification has no numeric time; its age is not checked")
            return
        if sent > _MILLISECONDS_ABOVE:
            sent = sent / 1000
        age = self._clock() - sent
        bound = self._settings.max_notification_age_seconds
        if bound and age > bound:
            raise RejectedError(
                RejectReason.NOTIFICATION_TOO_OLD,
                f"notification is {int(age)} s old, over {bound} s: a replay",
            )
        ahead = self._settings.max_notification_future_seconds
        if bound and -age > ahead:
            raise RejectedError(
                RejectReason.NOTIFICATION_FROM_THE_FUTURE,
                f"notification is dated {int(-age)} s ahead, over {ahead} s: not a genuine delivery",
            )

    def _decoded(self, raw: bytes, content_encoding: str) -> bytes:
        """Decompress after verifying: for compressed delivery Nylas signs the gzip bytes."""
        encoding = content_encoding.strip().lower()
        if encoding in ("", "identity"):
            return raw
        if encoding != "gzip":
            raise RejectedError(
                RejectReason.ENCODING_UNSUPPORTED, f"Content-Encoding {content_encoding!r} is not supported"
            )
        cap = self._settings.max_body_bytes
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            # max_length bounds memory: a small gzip bomb cannot inflate past the cap.
            body = inflater.decompress(raw, cap + 1)
        except zlib.error:
            raise RejectedError(RejectReason.GZIP_INVALID, "body is not valid gzip") from None
        if len(body) > cap or inflater.unconsumed_tail:
            raise RejectedError(RejectReason.BODY_TOO_LARGE, f"decompressed body exceeds {cap} bytes")
        if not inflater.eof:
            raise RejectedError(RejectReason.GZIP_INVALID, "gzip body is truncated")
        return body
