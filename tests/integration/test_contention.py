"""DynamoDB contention is retried in place: a waiter's lease poll or a settlement that meets another write.

Records waiting on a thread poll its lease (a conditional ``UpdateItem`` on
the thread item) while the holder's settlement (its ledger entries in a
``BatchWriteItem``, then the thread's ``UpdateItem``; a shadow burst's in one
``TransactWriteItems``) writes that same item; DynamoDB rejects whichever meets the other in flight
(``TransactionConflictException``, or a cancellation whose reason is
``TransactionConflict``), and botocore does not retry either. A
``ClientRequestToken`` met again with other parameters is refused
(``IdempotentParameterMismatchException``). The embedded AWS answers each of
them over the wire as DynamoDB does (``devstack.embedded_aws.contention``);
the real handler must still answer the message once, in the same receive.
"""

import boto3
import pytest
from botocore.exceptions import ClientError

from devstack.embedded_aws import contention
from devstack.events import AGENT_GRANT_ID, envelope
from replyonce.adapters.contention import (
    CONTENTION_ATTEMPTS,
    TRANSACTION_CONFLICT,
    contention_of,
    retry_contended,
)
from replyonce.adapters.contention import PARAMETER_MISMATCH as MISMATCH
from replyonce.adapters.state_items import message_key
from replyonce.exceptions import StateContended
from replyonce.reasons import DeferReason
from tests.replier_harness import deferrals, inbound, new_container, skip_reasons


def _error(code: str, reasons: list[str] | None = None) -> ClientError:
    response: dict = {"Error": {"Code": code, "Message": "answered"}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": r} for r in reasons]
    return ClientError(response, "TransactWriteItems")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (_error("TransactionConflictException"), TRANSACTION_CONFLICT),
        (_error("TransactionCanceledException", ["None", "TransactionConflict"]), TRANSACTION_CONFLICT),
        (_error("IdempotentParameterMismatchException"), MISMATCH),
        # A failed condition is a decision (the lease is someone else's), never retried.
        (_error("TransactionCanceledException", ["ConditionalCheckFailed", "None"]), None),
        (_error("TransactionCanceledException", ["TransactionConflict", "ConditionalCheckFailed"]), None),
        (_error("ConditionalCheckFailedException"), None),
        (_error("ValidationException"), None),
        (_error("InternalServerError"), None),  # botocore's own retries have had it already
    ],
)
def test_what_counts_as_contention(error, expected):
    assert contention_of(error) == expected


def test_a_write_contended_on_every_try_is_given_up_as_contended_after_its_tries():
    tries: list[int] = []
    waits: list[float] = []

    def always_conflicting(attempt: int) -> None:
        tries.append(attempt)
        raise _error("TransactionConflictException")

    with pytest.raises(StateContended) as contended:
        retry_contended(always_conflicting, what="the thread's lease", sleep=waits.append)
    assert contended.value.kind == TRANSACTION_CONFLICT
    assert tries == list(range(CONTENTION_ATTEMPTS))  # each try names itself (its own request token)
    assert len(waits) == CONTENTION_ATTEMPTS - 1


def _ledger_status(replier, message: dict) -> str:
    item = boto3.client("dynamodb").get_item(
        TableName=replier.tables["StateTable"],
        Key={"pk": {"S": message_key(AGENT_GRANT_ID, message["id"])}},
        ConsistentRead=True,
    )["Item"]
    return item["status"]["S"]


@pytest.mark.parametrize(
    ("operation", "answer", "key_prefix"),
    [
        # A waiter's lease poll (or the holder's own write) meets a settlement in flight.
        ("UpdateItem", "TransactionConflict", "thread#"),
        # A settlement's ledger entries (issue 46: a batch of puts before the thread's update) meet a
        # shadow settlement's transaction in flight.
        ("BatchWriteItem", "TransactionConflict", ""),
    ],
)
def test_a_contended_write_is_retried_in_place_and_the_message_answered_once_in_its_receive(
    pipeline, nylas, replier, log_records, operation, answer, key_prefix
):
    message = inbound(nylas)
    pipeline.deliver(envelope(message))
    with contention(operation, answer=answer, key_prefix=key_prefix) as planned:
        first = pipeline.poller().poll_once()
    assert planned.answered == 1  # DynamoDB did answer it so
    assert (first.received, first.failed) == (1, 0)
    assert deferrals(log_records) == []
    assert len(nylas.sends) == 1
    assert _ledger_status(replier, message) == "replied"
    pipeline.deliver(envelope(inbound(nylas, reply_to_message_id=message["id"])))
    pipeline.drain()
    assert pipeline.dead_letters() == []


def test_a_thread_item_contended_past_every_try_sends_the_record_back_as_busy_not_as_unexpected(
    pipeline, nylas, replier, log_records
):
    message = inbound(nylas)
    container = new_container()
    container._replier._store._sleep = lambda seconds: None  # the tries are counted, not timed
    pipeline.deliver(envelope(message))
    with contention("UpdateItem", key_prefix="thread#", times=CONTENTION_ATTEMPTS) as planned:
        first = pipeline.poller(container.handle_batch).poll_once()
    assert planned.answered == CONTENTION_ATTEMPTS
    assert first.failed == 1
    assert nylas.sends == []
    assert deferrals(log_records) == [DeferReason.THREAD_BUSY.value]
    pipeline.drain(container.handle_batch)
    assert len(nylas.sends) == 1
    pipeline.deliver(envelope(message))  # delivered again (a new notification of the same message)
    pipeline.drain(container.handle_batch)
    assert len(nylas.sends) == 1
    assert skip_reasons(log_records)[-1] == "already_replied"
