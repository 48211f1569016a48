"""The webhook endpoint: answer the challenge, verify, queue, and only then answer 200.

Status rules (DESIGN.md invariant 6). Nylas retries only 408, 429, 502, 503,
504, 507 and timeouts and drops every other status, so:

- a forged or unsigned request → 401, nothing queued;
- a signed body that is not a notification → 400 (a retry cannot fix it);
- a body over the cap → 413;
- any failure of ours → 503, never 500, so Nylas tries again.
"""

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field

import boto3
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from aws_lambda_powertools.utilities.parameters import SecretsProvider

from replyonce.config import WebhookSettings
from replyonce.exceptions import EnqueueError, InvalidNotificationError, SecretsUnavailableError
from replyonce.notification import Notification
from replyonce.observability import count, count_by, logger
from replyonce.queue import SQS_CLIENT_CONFIG, NotificationQueue
from replyonce.secrets import WebhookSecrets
from replyonce.signature import SIGNATURE_HEADER, signature_matches


@dataclass(frozen=True)
class WebhookResponse:
    """A REST API Lambda proxy response."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def to_proxy(self) -> dict:
        headers = {"Content-Type": "application/json", **self.headers}
        return {"statusCode": self.status, "headers": headers, "body": self.body, "isBase64Encoded": False}


def _json(status: int, message: str, **extra: str) -> WebhookResponse:
    return WebhookResponse(status, json.dumps({"message": message, **extra}))


class RejectedError(Exception):
    """A request answered with a non-200 status; ``reason`` is the metric dimension."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class WebhookEndpoint:
    """Handles one API Gateway request.

    Parameters
    ----------
    settings:
        Body cap and queue limits.
    secrets:
        The webhook signing secrets.
    queue:
        Where verified notifications go.
    """

    def __init__(self, settings: WebhookSettings, secrets: WebhookSecrets, queue: NotificationQueue) -> None:
        self._settings = settings
        self._secrets = secrets
        self._queue = queue

    @classmethod
    def from_environment(cls, aws: boto3.session.Session | None = None) -> "WebhookEndpoint":
        """Build the endpoint the template configures; ``aws`` is the boto3 session clients come from."""
        settings = WebhookSettings.from_environment()
        aws = aws or boto3.session.Session()
        return cls(
            settings,
            WebhookSecrets(settings.secrets, SecretsProvider(boto3_session=aws)),
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
            raise RejectedError(405, "method_not_allowed", f"method {event.http_method} is not allowed")
        except RejectedError as rejected:
            logger.warning(
                "request rejected",
                extra={"reason": rejected.reason, "status": rejected.status, "detail": str(rejected)},
            )
            count_by("NotificationRejected", "reason", rejected.reason)
            response = _json(rejected.status, str(rejected))
            if rejected.status == 405:
                response.headers["Allow"] = "GET, POST"
            return response
        except (SecretsUnavailableError, EnqueueError) as failure:
            logger.error(
                "notification not queued; answering 503 so Nylas retries", extra={"detail": str(failure)}
            )
            count_by("EnqueueFailed", "reason", type(failure).__name__)
            return _json(503, "temporarily unable to accept the notification; retry")
        except Exception:
            # A bug of ours must still be retried by Nylas: 503, not 500.
            logger.exception("unexpected failure; answering 503 so Nylas retries")
            count_by("EnqueueFailed", "reason", "unexpected")
            return _json(503, "temporarily unable to accept the notification; retry")

    def _challenge(self, event: APIGatewayProxyEvent) -> WebhookResponse:
        challenge = event.get_query_string_value("challenge")
        if not challenge:
            raise RejectedError(400, "challenge_missing", "GET needs a challenge query parameter")
        count("ChallengeAnswered")
        logger.info("challenge answered")
        # The bare value, as text: no JSON, no quotes. A proxy response is
        # buffered, so API Gateway sends it with Content-Length, not chunked.
        return WebhookResponse(200, challenge, {"Content-Type": "text/plain"})

    def _notification(self, event: APIGatewayProxyEvent) -> WebhookResponse:
        raw = self._raw_body(event)
        signature = event.headers.get(SIGNATURE_HEADER)
        if not signature:
            raise RejectedError(401, "signature_missing", "X-Nylas-Signature header is missing")
        if not self._verified(raw, signature):
            if self._secrets.rotating():
                # Perhaps signed with a secret Nylas issued and we have not stored yet: ask for a retry.
                raise RejectedError(
                    503, "signature_unverified_during_rotation", "secret rotation under way; retry"
                )
            raise RejectedError(401, "signature_invalid", "X-Nylas-Signature does not match the body")
        body = self._decoded(raw, event.headers.get("content-encoding", ""))
        try:
            notification = Notification.parse(body)
        except InvalidNotificationError as exc:
            logger.error("signed body is not a notification; dropping it", extra={"detail": str(exc)})
            raise RejectedError(400, "not_a_notification", str(exc)) from None
        logger.set_correlation_id(notification.id)
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
                raise RejectedError(413, "body_too_large", f"body exceeds {cap} bytes")
            try:
                raw = base64.b64decode(body, validate=True)
            except (binascii.Error, ValueError):
                raise RejectedError(400, "body_not_base64", "body is marked base64 but is not") from None
        else:
            raw = body.encode()
        if len(raw) > cap:
            raise RejectedError(413, "body_too_large", f"body exceeds {cap} bytes")
        return raw

    def _verified(self, raw: bytes, signature: str) -> bool:
        if signature_matches(raw, signature, self._secrets.webhook_secrets()):
            return True
        # The cached secret may predate a rotation: one fresh read, then decide.
        refreshed = self._secrets.refreshed_webhook_secrets()
        return refreshed is not None and signature_matches(raw, signature, refreshed)

    def _decoded(self, raw: bytes, content_encoding: str) -> bytes:
        """Decompress after verifying: for compressed delivery Nylas signs the gzip bytes."""
        encoding = content_encoding.strip().lower()
        if encoding in ("", "identity"):
            return raw
        if encoding != "gzip":
            raise RejectedError(
                415, "encoding_unsupported", f"Content-Encoding {content_encoding!r} is not supported"
            )
        cap = self._settings.max_body_bytes
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            # max_length bounds memory: a small gzip bomb cannot inflate past the cap.
            body = inflater.decompress(raw, cap + 1)
        except zlib.error:
            raise RejectedError(400, "gzip_invalid", "body is not valid gzip") from None
        if len(body) > cap or inflater.unconsumed_tail:
            raise RejectedError(413, "body_too_large", f"decompressed body exceeds {cap} bytes")
        if not inflater.eof:
            raise RejectedError(400, "gzip_invalid", "gzip body is truncated")
        return body
