"""The replier's SQS consumer: batch → idempotent reply per record.

Primary dedup (docs/design.md): Powertools idempotency keyed on the notification
``id`` — not the SQS ``messageId`` (a redelivery is a new SQS message) and not
``data.object.id``. The key prefix is pinned, so a refactor or a renamed
function does not silently start a new key space.
"""

import threading
import time
from collections.abc import Callable
from typing import Any

import boto3
import requests
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from aws_lambda_powertools.utilities.parameters import SecretsProvider
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import BotoCoreError, ClientError

from replyonce.config import ReplierSettings
from replyonce.drafter import BedrockDrafter, ReplyDrafter, TemplateDrafter
from replyonce.exceptions import (
    DeadlineError,
    InvalidNotificationError,
    NylasRetryableError,
    ThreadBusyError,
)
from replyonce.lease import ThreadLeases
from replyonce.ledger import ReplyLedger
from replyonce.notification import Notification
from replyonce.nylas import NylasClient
from replyonce.observability import count, count_by, logger
from replyonce.outbox import Outbox
from replyonce.queue import ATTR_BODY_OMITTED
from replyonce.replier import Replier
from replyonce.secrets import NylasApiKey

# Part of the stored data: changing it re-opens every notification of the last 24 h.
IDEMPOTENCY_KEY_PREFIX = "replyonce.notification"
DUPLICATE_NOTIFICATION = "duplicate_notification"


class NotificationConsumer:
    """Handles SQS batches for the replier.

    Parameters
    ----------
    settings:
        Replier settings.
    replier:
        Does the work for one notification.
    persistence:
        Powertools persistence layer (DynamoDB, ``IDEMPOTENCY_TABLE``).
    sqs_client:
        Used to bring a busy-thread record back in seconds instead of the
        queue's visibility timeout.
    """

    def __init__(
        self,
        settings: ReplierSettings,
        replier: Replier,
        persistence: DynamoDBPersistenceLayer,
        sqs_client: Any,
    ) -> None:
        self._settings = settings
        self._replier = replier
        self._sqs = sqs_client
        self._config = IdempotencyConfig(
            event_key_jmespath="id",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=settings.idempotency_expiry_seconds,
            response_hook=self._absorbed,
        )
        self._reply_once = idempotent_function(
            data_keyword_argument="notification",
            persistence_store=persistence,
            config=self._config,
            key_prefix=IDEMPOTENCY_KEY_PREFIX,
        )(self._reply)
        self._remaining_ms: Callable[[], int] = lambda: 60_000
        # The record being processed, for the duplicate hook (which Powertools calls without it).
        self._current = threading.local()

    @classmethod
    def from_environment(
        cls,
        *,
        aws: boto3.session.Session | None = None,
        http: requests.Session | None = None,
        clock: Callable[[], float] = time.time,
    ) -> "NotificationConsumer":
        """Build the consumer the template configures.

        Parameters
        ----------
        aws:
            The boto3 session every AWS client is made from (injectable: the
            benchmarks count requests and the chaos harness injects faults
            through botocore's event hooks on it).
        http:
            The ``requests`` session of the Nylas client.
        clock:
            Wall clock of leases and the ledger.
        """
        settings = ReplierSettings.from_environment()
        aws = aws or boto3.session.Session()
        dynamodb = aws.client("dynamodb")
        api_key = NylasApiKey(settings.secrets, SecretsProvider(boto3_session=aws))
        nylas = NylasClient(
            settings.nylas_api_uri,
            api_key.api_key,
            timeout_seconds=settings.nylas_timeout_seconds,
            send_timeout_seconds=settings.nylas_send_timeout_seconds,
            session=http,
            clock=clock,
        )
        drafter: ReplyDrafter = (
            BedrockDrafter(settings.bedrock_model_id, aws.client("bedrock-runtime"))
            if settings.reply_drafter == "bedrock"
            else TemplateDrafter()
        )
        replier = Replier(
            settings,
            nylas,
            ReplyLedger(settings.state_table, dynamodb, ttl_seconds=settings.ledger_ttl_seconds, clock=clock),
            ThreadLeases(
                settings.state_table, dynamodb, item_ttl_seconds=settings.ledger_ttl_seconds, clock=clock
            ),
            Outbox(settings.state_table, dynamodb),
            drafter,
        )
        persistence = DynamoDBPersistenceLayer(table_name=settings.idempotency_table, boto3_client=dynamodb)
        return cls(settings, replier, persistence, aws.client("sqs"))

    def handle_batch(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        """Process an SQS batch; return ``batchItemFailures`` for the records to retry."""
        # In-progress idempotency records expire with this invocation, so a
        # timed-out run is retried instead of blocking the notification.
        self._config.register_lambda_context(context)
        self._remaining_ms = context.get_remaining_time_in_millis
        # A batch whose every record failed is still a partial response, not a crashed invocation.
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
        return process_partial_response(
            event=event,
            record_handler=self._handle_record,
            processor=processor,
            context=context,
        )

    def _handle_record(self, record: SQSRecord) -> dict[str, Any]:
        remaining = self._remaining_ms() / 1000
        if remaining < self._settings.record_budget_seconds:
            # Started now, a slow send could outlive the invocation and take the records after it
            # down with a timeout. Not started, it is back on the queue at once.
            logger.info(
                "not enough time left in this invocation to start the record; returned to the queue",
                extra={
                    "reason": "deadline",
                    "sqs_message_id": record.message_id,
                    "remaining_seconds": round(remaining, 1),
                    "needed_seconds": self._settings.record_budget_seconds,
                },
            )
            count("RecordDeferred")
            self._retry_in(record, 0)
            raise DeadlineError(
                f"{remaining:.1f} s left, a record may need {self._settings.record_budget_seconds} s"
            )
        try:
            notification = Notification.parse(record.body)
        except InvalidNotificationError as exc:
            # Cannot succeed on any retry: fails until maxReceiveCount moves it to the dead-letter queue.
            logger.error(
                "queued record is not a notification",
                extra={"sqs_message_id": record.message_id, "detail": str(exc)},
            )
            count("PoisonRecord")
            # No retry can fix it: make it visible at once so it reaches the dead-letter queue in seconds.
            self._retry_in(record, 0)
            raise
        logger.append_keys(notification_id=notification.id, sqs_message_id=record.message_id)
        self._current.notification_id = notification.id
        attributes = record.message_attributes
        body_omitted = (
            ATTR_BODY_OMITTED in attributes and attributes[ATTR_BODY_OMITTED].string_value == "true"
        )
        try:
            return self._reply_once(notification=notification.payload, body_omitted=body_omitted)
        except ThreadBusyError as busy:
            # Soon when the holder is about to finish; never later than its lease can last. The
            # doubling keeps a crashed holder's lease (up to the function timeout) from burning
            # through maxReceiveCount and sending the record to the dead-letter queue.
            delay = min(self._busy_backoff(record), busy.held_for_seconds + 1)
            logger.info(
                "thread busy; record will be retried",
                extra={"reason": "thread_busy", "retry_in_seconds": delay},
            )
            count("ThreadBusy")
            self._retry_in(record, delay)
            raise
        except IdempotencyAlreadyInProgressError:
            logger.info(
                "same notification in progress elsewhere; record will be retried",
                extra={"reason": "notification_in_progress"},
            )
            count("NotificationInProgress")
            # The other run either finishes (we then find its result) or its in-progress record
            # expires with its invocation: back off rather than spend receives.
            self._retry_in(record, self._busy_backoff(record))
            raise
        except NylasRetryableError as exc:
            logger.warning(
                "Nylas failed transiently; record will be retried",
                extra={"status": exc.status, "error_type": exc.error_type, "detail": str(exc)},
            )
            count_by("NylasRetry", "status", str(exc.status or "network"))
            self._retry_in(record, exc.retry_after_seconds or self._backoff(record))
            raise
        except Exception:
            logger.exception("record failed; it will be retried with backoff")
            count("RecordFailed")
            self._retry_in(record, self._backoff(record))
            raise
        finally:
            logger.remove_keys(["notification_id", "sqs_message_id"])

    def _reply(self, notification: dict[str, Any], body_omitted: bool) -> dict[str, Any]:
        return self._replier.reply(
            Notification(notification), remaining_ms=self._remaining_ms, body_omitted=body_omitted
        )

    def _absorbed(self, response: Any, data_record: Any) -> Any:
        """Powertools calls this when it returns a stored result instead of running: a duplicate."""
        logger.info(
            "duplicate delivery absorbed",
            extra={
                "reason": DUPLICATE_NOTIFICATION,
                "notification_id": getattr(self._current, "notification_id", ""),
            },
        )
        count_by("NotificationSkipped", "reason", DUPLICATE_NOTIFICATION)
        count("DuplicateAbsorbed")
        return response

    def _backoff(self, record: SQSRecord) -> int:
        """Failed records: ``RETRY_BASE_SECONDS`` doubling per receive, capped."""
        return self._doubling(record, self._settings.retry_base_seconds)

    def _busy_backoff(self, record: SQSRecord) -> int:
        """Contended records: ``BUSY_RETRY_SECONDS`` doubling per receive, capped."""
        return self._doubling(record, self._settings.busy_retry_seconds)

    def _doubling(self, record: SQSRecord, base: int) -> int:
        receives = int(record.attributes.approximate_receive_count or 1)
        return min(base * 2 ** min(receives - 1, 16), self._settings.retry_max_seconds)

    def _retry_in(self, record: SQSRecord, seconds: int) -> None:
        """Make a failed record visible again after ``seconds`` (not the queue's 18 minutes)."""
        try:
            self._sqs.change_message_visibility(
                QueueUrl=self._settings.queue_url,
                ReceiptHandle=record.receipt_handle,
                VisibilityTimeout=seconds,
            )
        except (BotoCoreError, ClientError) as exc:
            logger.warning(
                "could not shorten the record's visibility; it returns after the queue's timeout",
                extra={"detail": str(exc)},
            )
