"""Stand-in for the Lambda SQS event source mapping.

What it does, as the mapping does: receive up to the template's batch size,
invoke the replier handler with an SQS event, delete the records that
succeeded, and leave the ``batchItemFailures`` to come back after their
visibility timeout — SQS itself moves a message to the dead-letter queue
after ``maxReceiveCount`` receives (the queue's redrive policy, created from
``template.yaml``).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from devstack.events import sqs_event_from_messages
from devstack.lambda_context import LocalLambdaContext
from devstack.template import LocalResources
from ops.template import sqs_event_source

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass(frozen=True)
class PollResult:
    received: int
    succeeded: int
    failed: int


class EventSourcePoller:
    """Feeds SQS batches to a handler.

    Parameters
    ----------
    handler:
        ``functions/replier/app.py:lambda_handler`` or a consumer's ``handle_batch``.
    resources:
        The local resources (queue URL and ARN).
    function_logical_id:
        The template's function, for its batch size and timeout.
    sqs_client:
        Injectable boto3 SQS client.
    """

    def __init__(
        self,
        handler: Handler,
        resources: LocalResources,
        function_logical_id: str = "ReplierFunction",
        *,
        sqs_client: Any | None = None,
        timeout_seconds: float | None = None,
    ) -> None:
        function = resources.template["Resources"][function_logical_id]["Properties"]
        source = sqs_event_source(resources.template, function_logical_id)
        queue_logical_id = source["Queue"]["Fn::GetAtt"][0]
        self._handler = handler
        self._function_name = function_logical_id
        self._batch_size = int(source.get("BatchSize", 10))
        self._timeout = timeout_seconds if timeout_seconds is not None else float(function.get("Timeout", 3))
        self._queue_url = resources.queues[queue_logical_id]
        self._queue_arn = resources.queue_arns[queue_logical_id]
        self._sqs = sqs_client or boto3.client("sqs")
        # The records the handler failed, by SQS message id: their last receipt handle.
        self._failed: dict[str, str] = {}

    def replace_handler(self, handler: Handler) -> None:
        """Invoke ``handler`` from the next batch on (a new container; the current batch finishes first)."""
        self._handler = handler

    def poll_once(self, wait_seconds: int = 0) -> PollResult:
        """Receive one batch, invoke the handler once, settle the batch."""
        messages = self._sqs.receive_message(
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=min(self._batch_size, 10),
            WaitTimeSeconds=wait_seconds,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return PollResult(0, 0, 0)
        event = sqs_event_from_messages(messages, self._queue_arn)
        context = LocalLambdaContext(self._function_name, timeout_seconds=self._timeout)
        try:
            response = self._handler(event, context) or {}
        except Exception:
            # A crashed invocation fails the whole batch, as in Lambda.
            self._failed.update({m["MessageId"]: m["ReceiptHandle"] for m in messages})
            return PollResult(len(messages), 0, len(messages))
        failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
        succeeded = [m for m in messages if m["MessageId"] not in failed]
        for message in messages:
            if message["MessageId"] in failed:
                self._failed[message["MessageId"]] = message["ReceiptHandle"]
            else:
                self._failed.pop(message["MessageId"], None)
        for start in range(0, len(succeeded), 10):
            chunk = succeeded[start : start + 10]
            self._sqs.delete_message_batch(
                QueueUrl=self._queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)],
            )
        return PollResult(len(messages), len(succeeded), len(failed))

    def release_failed(self) -> int:
        """Make the records this poller's handler failed visible now (``make serve``, agent fixed).

        A record received again since, deleted or dead-lettered has a stale receipt handle: SQS
        refuses the change, and the record is left as it is.
        """
        released = 0
        for message_id, receipt in list(self._failed.items()):
            self._failed.pop(message_id, None)
            try:
                self._sqs.change_message_visibility(
                    QueueUrl=self._queue_url, ReceiptHandle=receipt, VisibilityTimeout=0
                )
            except ClientError:
                continue
            released += 1
        return released

    def drain(self, max_polls: int = 100) -> list[PollResult]:
        """Poll until the queue has nothing visible (bounded)."""
        results = []
        for _ in range(max_polls):
            result = self.poll_once()
            if result.received == 0:
                return results
            results.append(result)
        raise RuntimeError(f"queue not drained after {max_polls} polls")
