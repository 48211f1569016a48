"""The replier's SQS consumer: a batch's threads at once, each thread's records in order; and "not now".

Primary dedup (docs/design.md): Powertools idempotency keyed on the
notification ``id`` — not the SQS ``messageId`` (a redelivery is a new SQS
message) and not ``data.object.id``. The key prefix is pinned, so a refactor
or a renamed function does not silently start a new key space. Records the
replier queued itself (the reconcile of a queued reply) are not
notifications and skip idempotency: a reconcile is idempotent under the lease.
Nor does the echo of a reply we sent (``core.is_our_echo``: by the metadata
our sends carry), which is skipped with no side effect.

A batch is split by conversation thread (:func:`replyonce.shell.batch.thread_groups`);
the groups run at once on threads of the container, each through its own
Powertools ``BatchProcessor``, and their ``batchItemFailures`` are put
together. So no record waits on another thread's Nylas or agent time, and one
record's budget is all the function's ``Timeout`` needs (``docs/performance.md``,
"Batch concurrency").

When a record cannot finish now, one pure function
(:func:`replyonce.rules.redelivery.retry_delay`) decides when it comes back, and the
record's visibility is set to that.
"""

import contextvars
import math
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
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
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import BotoCoreError, ClientError

from replyonce.adapters.active_region import FENCE_CLIENT_CONFIG, DynamoDBRegionFence
from replyonce.adapters.agents import BedrockAgent, load_agent
from replyonce.adapters.grant_registry import GrantRegistry
from replyonce.adapters.nylas import NylasMailbox
from replyonce.adapters.queue import (
    ATTR_TASK,
    NotificationQueue,
    ReconcileQueue,
    hand_over,
    handed_over_at,
    queue_region,
    reconcile_task,
)
from replyonce.adapters.reply_files import S3ReplyFiles
from replyonce.adapters.secrets import NylasApiKey, bounded_provider
from replyonce.adapters.store import DynamoDBStateStore, sweep_grant
from replyonce.config import QUEUE_MAX_MESSAGE_BYTES, ReplierSettings
from replyonce.core import before_start, is_our_echo
from replyonce.exceptions import ConfigurationError, Deferred, InvalidNotificationError
from replyonce.grants import defaults_of
from replyonce.jobs import GrantChanged
from replyonce.observability import count, count_by, logger, skipped
from replyonce.policy import policy_of
from replyonce.ports import ActiveRegion
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.notification import Notification
from replyonce.rules.redelivery import retry_delay
from replyonce.shell.batch import thread_groups
from replyonce.shell.grant_life import GrantLifecycle, QueueBackfill
from replyonce.shell.grants import GrantDirectory
from replyonce.shell.replier import SLOWEST_STEP_KEYS, Replier, deferred

# Part of the stored data: changing it re-opens every notification of the last 24 h. It names the module
# the notification once lived in; that module moved (replyonce.rules.notification), the key must not.
IDEMPOTENCY_KEY_PREFIX = "replyonce.notification"
# Threads of one batch run at once: as many as SQS puts in a batch (the template's BatchSize is at most
# this, tests/static/test_capacity.py); the Nylas session's connection pool holds as many.
MAX_THREADS_AT_ONCE = 10


class NotificationConsumer:
    """Handles SQS batches for the replier.

    Parameters
    ----------
    settings:
        Replier settings.
    replier:
        Does the work for one record.
    persistence:
        Powertools persistence layer (DynamoDB, ``IDEMPOTENCY_TABLE``).
    sqs_client:
        Sets a deferred record's visibility to when it should come back.
    clock:
        Wall clock to read an in-progress record's expiry by (Powertools times it with the real one).
    """

    def __init__(
        self,
        settings: ReplierSettings,
        replier: Replier,
        persistence: DynamoDBPersistenceLayer,
        sqs_client: Any,
        *,
        clock: Callable[[], float] = time.time,
        sqs_in: Callable[[str], Any] | None = None,
        grant_life: GrantLifecycle | None = None,
    ) -> None:
        self._settings = settings
        # Nylas' grant notifications (issue 42); None: no registry, they are skipped unsupported_type.
        self._grant_life = grant_life
        # An SQS client of another Region, for the hand-over of records to the active Region's queue.
        self._sqs_in = sqs_in or (lambda region: sqs_client)
        self._policy = policy_of(settings)
        self._persistence = persistence
        self._clock = clock
        self._replier = replier
        self._sqs = sqs_client
        self._config = IdempotencyConfig(
            event_key_jmespath="id",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=settings.idempotency_expiry_seconds,
            response_hook=self._absorbed,
        )
        self._handle_once = idempotent_function(
            data_keyword_argument="notification",
            persistence_store=persistence,
            config=self._config,
            key_prefix=IDEMPOTENCY_KEY_PREFIX,
        )(self._handle_notification)
        self._remaining_ms: Callable[[], int] = lambda: 60_000
        # The record being processed, for the duplicate hook (which Powertools calls without it).
        self._current = threading.local()
        self._pool: ThreadPoolExecutor | None = None

    @classmethod
    def from_environment(
        cls,
        *,
        aws: boto3.session.Session | None = None,
        http: requests.Session | None = None,
        clock: Callable[[], float] = time.time,
        agent_path: Path | None = None,
        tuning: Mapping[str, Any] | None = None,
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
        agent_path:
            The function's own directory, where ``REPLY_AGENT=module:function`` is looked for first
            (in Lambda it is on ``sys.path`` already: ``/var/task``).
        tuning:
            Settings no variable sets, by field name (``ReplierSettings``): only a harness passes them.

        Raises
        ------
        ConfigurationError
            A setting is missing or malformed, or ``REPLY_AGENT`` names nothing callable.
        """
        settings = ReplierSettings.from_environment(tuning=tuning)
        aws = aws or boto3.session.Session()
        if agent_path is not None and str(agent_path) not in sys.path:
            sys.path.insert(0, str(agent_path))

        def agent_named(name: str) -> Any:
            if name == "bedrock" and not settings.bedrock_model_id:
                raise ConfigurationError("agent bedrock needs the stack's BedrockModelId (BEDROCK_MODEL_ID)")
            return load_agent(
                name,
                bedrock=lambda: BedrockAgent(
                    settings.bedrock_model_id, aws.client("bedrock-runtime"), settings.agent_system_prompt
                ),
            )

        # The deployment's agent is loaded at cold start (a mistyped REPLY_AGENT stops it there); a grant's
        # own agent (its record in the grant registry) on its first record.
        agent = agent_named(settings.reply_agent)
        registry = (
            GrantRegistry(
                settings.grant_registry_table, session=aws, max_age_seconds=settings.registry_max_age_seconds
            )
            if settings.grant_registry_table
            else None
        )
        grants = GrantDirectory(
            defaults_of(settings),
            settings.agent_grant_ids,
            registry,
            agent_named,
            paused_retry_seconds=settings.paused_retry_seconds,
            loaded={settings.reply_agent: agent},
            # What Nylas said of each grant: the same registry, the same cached Query (issue 42).
            lives=registry,
            deleted_retry_seconds=settings.registry_max_age_seconds,
        )
        dynamodb = aws.client("dynamodb")
        sqs = aws.client("sqs")
        api_key = NylasApiKey(settings.secrets, bounded_provider(aws))
        mailbox = NylasMailbox(
            settings.nylas_api_uri,
            api_key.api_key,
            timeout_seconds=settings.nylas_timeout_seconds,
            send_timeout_seconds=settings.nylas_send_timeout_seconds,
            session=http,
            clock=clock,
        )
        replier = Replier(
            policy_of(settings),
            DynamoDBStateStore(
                settings.state_table,
                dynamodb,
                ttl_seconds=settings.ledger_ttl_seconds,
                clock=clock,
                grant_life=registry.not_deleted_check if registry is not None else None,
            ),
            mailbox,
            agent,
            reconcile_later=ReconcileQueue(
                settings.queue_url, sqs, max_delay_seconds=settings.retry_max_seconds
            ),
            lease_wait_seconds=settings.lease_wait_seconds,
            clock=clock,
            fence=(
                DynamoDBRegionFence(
                    settings.active_region_table,
                    aws.client("dynamodb", config=FENCE_CLIENT_CONFIG),
                    clock=clock,
                )
                if settings.active_region_table
                else None
            ),
            reply_files=(
                S3ReplyFiles(settings.reply_files_bucket, aws.client("s3"))
                if settings.reply_files_bucket
                else None
            ),
            attachment_max_bytes=settings.attachment_max_bytes,
            attachments_max_bytes_per_record=settings.attachments_max_bytes_per_record,
            grants=grants,
        )
        persistence = DynamoDBPersistenceLayer(table_name=settings.idempotency_table, boto3_client=dynamodb)
        grant_life = (
            GrantLifecycle(
                dynamodb,
                settings.grant_registry_table,
                grants,
                new_grant_mode=settings.new_grant_reply_mode,
                sweep=lambda grant, start, keep_going: sweep_grant(
                    dynamodb, settings.state_table, grant, start, keep_going
                ),
                backfill=QueueBackfill(
                    mailbox.received_since,
                    NotificationQueue(settings.queue_url, QUEUE_MAX_MESSAGE_BYTES, sqs).enqueue,
                    clock,
                ),
                seeded=settings.agent_grant_ids,
                clock=clock,
                page_margin_seconds=settings.grant_page_margin_seconds,
            )
            if settings.grant_registry_table
            else None
        )
        return cls(settings, replier, persistence, sqs, sqs_in=_clients_by_region(aws), grant_life=grant_life)

    def handle_batch(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        """Process an SQS batch; return ``batchItemFailures`` for the records to retry."""
        # In-progress idempotency records expire with this invocation, so a
        # timed-out run is retried instead of blocking the notification.
        self._config.register_lambda_context(context)
        self._remaining_ms = context.get_remaining_time_in_millis
        groups = thread_groups(event.get("Records") or [])
        if len(groups) <= 1:
            return self._handle_group(event, context)
        if self._pool is None:
            # Once per container: its threads outlive the invocation, as the clients do.
            self._pool = ThreadPoolExecutor(max_workers=MAX_THREADS_AT_ONCE, thread_name_prefix="thread")
        # Each group runs in a copy of this invocation's context: Powertools' thread-safe log keys live
        # in context variables, and a group's lines belong to the invocation that received it.
        runs = [
            self._pool.submit(contextvars.copy_context().run, self._handle_group, {"Records": group}, context)
            for group in groups
        ]
        # Every group ends before the invocation does, even when one of them raised.
        wait(runs)
        failures = [failure for run in runs for failure in run.result()["batchItemFailures"]]
        return {"batchItemFailures": failures}

    def _handle_group(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        """One thread's records, in queue order: a Powertools partial response of their own."""
        # A batch whose every record failed is still a partial response, not a crashed invocation.
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
        return process_partial_response(
            event=event, record_handler=self._handle_record, processor=processor, context=context
        )

    def _handle_record(self, record: SQSRecord) -> dict[str, Any]:
        # Thread-safe keys: the other threads of the batch log their own records meanwhile.
        logger.thread_safe_append_keys(sqs_message_id=record.message_id)
        try:
            too_late = before_start(self._remaining(), self._policy)
            if too_late is not None:
                # Started now, the record could outlive the invocation; not started, it is back at once.
                raise deferred(too_late)
            self._current.record = record
            if ATTR_TASK in record.message_attributes:
                return self._replier.handle(
                    reconcile_task(record.body), remaining_seconds=self._remaining, hold_record=self._hold
                )
            notification = Notification.parse(record.body)
            logger.thread_safe_append_keys(notification_id=notification.id)
            self._current.notification_id = notification.id
            if is_our_echo(notification.job()):
                # Our own reply's echo, by its payload alone: skipped with no side effect, so no
                # idempotency record (a put and an update) is written for it.
                return self._handle_notification(notification.payload)
            return self._handle_once(notification=notification.payload)
        except InvalidNotificationError as exc:
            # No retry can fix it: visible at once, so it reaches the dead-letter queue in seconds.
            logger.error("queued record is not a notification", extra={"detail": str(exc)})
            count("PoisonRecord")
            self._retry_in(record, 0)
            raise
        except Deferred as not_now:
            # The core's deferral (replyonce.core): every "not now" is one of these.
            if not_now.hand_over is not None and self._handed_over(record, not_now.hand_over):
                return {"outcome": "handed_over", "active_region": not_now.hand_over.region}
            self._defer(record, not_now.reason, not_now.seconds, not_now.detail)
            raise
        except IdempotencyAlreadyInProgressError:
            # The other run finishes (we then find its result) or its record expires with its invocation:
            # this copy comes back no later than that, and its receives outlast it (never dead-lettered
            # while the original can still hold the notification).
            held_for = self._in_progress_for(notification.payload)
            self._defer(
                record, DeferReason.NOTIFICATION_IN_PROGRESS, held_for, {"held_for_seconds": held_for}
            )
            raise
        except Exception:
            logger.exception("record failed; it will be retried with backoff")
            self._defer(record, DeferReason.UNEXPECTED, None, {})
            raise
        finally:
            logger.thread_safe_remove_keys(["notification_id", "sqs_message_id", *SLOWEST_STEP_KEYS])

    def _remaining(self) -> float:
        return self._remaining_ms() / 1000

    def _in_progress_for(self, payload: dict[str, Any]) -> int | None:
        """Seconds the original run of this notification may still hold its in-progress record, plus one.

        Why read it: Powertools ends an ``INPROGRESS`` record at its holder's
        invocation deadline (``register_lambda_context``), up to the function's
        ``Timeout`` after it began; a duplicate that knows when the hold ends
        spreads it over its receives left (``replyonce.rules.redelivery.retry_delay``) and
        is never dead-lettered while the original may still be working (or
        lies crashed behind a record not yet expired). One consistent read, for
        duplicates that meet a run in progress only. ``0``: the record is gone
        (the run failed and deleted it, or finished meanwhile): back at once.
        ``None``: it cannot be read; the plain doubling, as for any failure.
        """
        try:
            data_record = self._persistence.get_record(data=payload)
        except IdempotencyItemNotFoundError:
            return 0
        except Exception as exc:  # the persistence layer wraps what DynamoDB says in several types
            logger.warning("could not read the in-progress record's expiry", extra={"detail": str(exc)})
            return None
        expiry_ms = getattr(data_record, "in_progress_expiry_timestamp", None)
        if expiry_ms is None:
            return None
        # Read back from DynamoDB, the timestamp is a Decimal: milliseconds, compared as seconds.
        return max(0, math.ceil(float(expiry_ms) / 1000 - self._clock())) + 1

    def _handle_notification(self, notification: dict[str, Any]) -> dict[str, Any]:
        parsed = Notification(notification)
        job = parsed.job()
        if isinstance(job, GrantChanged) and self._grant_life is not None:
            # A grant's life, from Nylas: deduplicated above like every notification.
            return self._grant_life.handle(job, self._remaining)
        if job is None or isinstance(job, GrantChanged):
            return skipped(SkipReason.UNSUPPORTED_TYPE, notification_type=parsed.type)
        record = self._current.record
        # SQS sets it on every record; an event written by hand (``sam local invoke``) may lack it.
        first_received_ms = record.attributes.get("ApproximateFirstReceiveTimestamp")
        return self._replier.handle(
            job,
            remaining_seconds=self._remaining,
            hold_record=self._hold,
            receives=int(record.attributes.approximate_receive_count or 1),
            first_received_at=int(first_received_ms or 0) // 1000
            if str(first_received_ms or "").isdigit()
            else 0,
        )

    def _hold(self, seconds: float) -> None:
        """The record stays invisible while its worker may hold the thread's lease, and no longer."""
        self._retry_in(self._current.record, int(seconds) + 1)

    def _absorbed(self, response: Any, data_record: Any) -> Any:
        """Powertools calls this when it returns a stored result instead of running: a duplicate."""
        skipped(
            SkipReason.DUPLICATE_NOTIFICATION,
            message="duplicate delivery absorbed",
            notification_id=getattr(self._current, "notification_id", ""),
        )
        count("DuplicateAbsorbed")
        return response

    def _defer(
        self, record: SQSRecord, reason: DeferReason, seconds: int | None, detail: dict[str, Any]
    ) -> None:
        """Log and count the deferral, and set when the record comes back (one place for every "not now")."""
        receives = int(record.attributes.approximate_receive_count or 1)
        delay = retry_delay(
            reason,
            seconds,
            receives,
            busy_base_seconds=self._settings.busy_retry_seconds,
            retry_base_seconds=self._settings.retry_base_seconds,
            retry_max_seconds=self._settings.retry_max_seconds,
            max_receives=self._settings.max_receive_count,
        )
        level = logger.warning if reason in _WORTH_A_WARNING else logger.info
        level(
            "record deferred; it will be retried",
            extra={"reason": reason.value, "retry_in_seconds": delay, "receives": receives, **detail},
        )
        count_by("RecordDeferred", "reason", reason.value)
        if reason is DeferReason.ACCOUNT_LIMITED:
            count("AccountLimited")
        self._retry_in(record, delay)

    def _handed_over(self, record: SQSRecord, active: ActiveRegion) -> bool:
        """Move a record this passive Region holds to the active Region's queue; whether it moved.

        Why: after a failover the old Region's backlog would otherwise wait here until it
        dead-letters, for a backfill in the new Region to bring it back (issue 48). Moved, it is
        answered there as soon as the handover is over, and deleted here. A record moved once at
        this epoch stays (it came back: a queue recorded wrongly, say) and waits as before; so does
        one the active Region's queue does not take.
        """
        where = {"active_region": active.region, "epoch": active.epoch}
        try:
            if handed_over_at(record) >= active.epoch:
                return False
            # The queue's own Region, from its URL (an endpoint override names none: this client's).
            region = queue_region(active.queue_url)
            sqs = self._sqs_in(region) if region else self._sqs
            moved_as = hand_over(sqs, active.queue_url, record, active.epoch)
        except (BotoCoreError, ClientError) as refused:
            logger.warning(
                "could not hand the record over to the active Region's queue; it waits here",
                extra={**where, "detail": str(refused)},
            )
            return False
        except Exception:
            # A failure of ours here must not cost the record its deferral (its log line, its visibility):
            # Powertools' batch processor would fail it without a word. It waits here, with the traceback.
            logger.exception(
                "could not hand the record over to the active Region's queue (a failure of ours); it waits "
                "here",
                extra=where,
            )
            return False
        logger.info("record handed over to the active Region's queue", extra={**where, "moved_as": moved_as})
        count("RecordHandedOver")
        return True

    def _retry_in(self, record: SQSRecord, seconds: int) -> None:
        """Make a failed record visible again after ``seconds`` (not the queue's visibility timeout)."""
        try:
            self._sqs.change_message_visibility(
                QueueUrl=self._settings.queue_url,
                ReceiptHandle=record.receipt_handle,
                VisibilityTimeout=seconds,
            )
        except (BotoCoreError, ClientError) as exc:
            logger.warning(
                "could not set the record's visibility; it returns after the queue's visibility timeout",
                extra={"detail": str(exc)},
            )


def _clients_by_region(aws: boto3.session.Session) -> Callable[[str], Any]:
    """An SQS client per Region, made once each (the hand-over's, to the active Region's queue)."""
    clients: dict[str, Any] = {}
    lock = threading.Lock()

    def client(region: str) -> Any:
        with lock:
            if region not in clients:
                clients[region] = aws.client("sqs", region_name=region)
            return clients[region]

    return client


# Deferrals an operator should see without looking for them (the others are the system working).
_WORTH_A_WARNING = frozenset(
    {
        DeferReason.NYLAS_UNAVAILABLE,
        DeferReason.UNAUTHORIZED,
        DeferReason.SEARCH_FAILED,
        DeferReason.ACCOUNT_LIMITED,
        DeferReason.AGENT_FAILED,
        DeferReason.LEASE_LOST,
        DeferReason.UNEXPECTED,
        # A Region that cannot read the active-Region record sends nothing: worth seeing at once.
        DeferReason.REGION_ISOLATED,
    }
)
