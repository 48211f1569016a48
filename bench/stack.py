"""The local stack the benchmarks run against, without pollers and with the handlers' output muted.

Why muted: the local stack parses every log line and EMF metric the handlers
print (the demo judges invariants from them). Timed here, that parsing would
be billed to the handler; in Lambda the runtime just forwards stdout. The
handlers still format every line — that cost is real and stays in the times.
"""

import io
import itertools
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3

from devstack.nylas import NylasEmulator
from devstack.stack import LocalStack, StackSettings
from devstack.template import LocalResources, put_in_service

_scratch_names = itertools.count(1)


class _Discard(io.TextIOBase):
    """A text stream that accepts and drops everything."""

    def write(self, text: str) -> int:
        return len(text)


@contextmanager
def muted() -> Iterator[None]:
    """Send the Powertools logger and stdout (EMF metrics) to a sink for the ``with`` block."""
    from replyonce.observability import logger

    sink = _Discard()
    previous_stream = logger.registered_handler.setStream(sink)
    previous_stdout, sys.stdout = sys.stdout, sink
    try:
        yield
    finally:
        sys.stdout = previous_stdout
        logger.registered_handler.setStream(previous_stream)


@contextmanager
def local_stack() -> Iterator[LocalStack]:
    """Embedded AWS (moto, resources from template.yaml) and the Nylas emulator, all on 127.0.0.1.

    No pollers: each benchmark drives the replier itself, so it knows exactly
    which invocations it is timing or counting. The replier's retry delays are
    the template's (``StackSettings`` shortens them for demos), because the
    time-to-reply run measures them.
    """
    # moto's per-request lines would bury the progress output, and so would the tracebacks of its
    # internal errors under concurrent transactions: the client retries those, and the request
    # counts of bench.throughput show the retries. Set again after start, which sets its own level.
    werkzeug = logging.getLogger("werkzeug")
    werkzeug.setLevel(logging.CRITICAL)
    with LocalStack(StackSettings(pollers=0)) as stack, muted():
        werkzeug.setLevel(logging.CRITICAL)
        yield stack


def parts(stack: LocalStack) -> tuple[LocalResources, NylasEmulator]:
    """The started stack's resources and emulator (both exist once ``start`` has returned)."""
    if stack.resources is None or stack.emulator is None:
        raise RuntimeError("the local stack is not started")
    return stack.resources, stack.emulator


def clear_tables(stack: LocalStack) -> None:
    """Delete every item of the template's tables, and put the state table in service again.

    Why: moto copies a whole table for each transaction, so a table grown by
    earlier benchmarks would slow later ones down; each timed round starts
    from empty tables, as a fresh deployment does.
    """
    resources, _ = parts(stack)
    dynamodb = boto3.client("dynamodb")
    for logical_id, table in resources.tables.items():
        schema = resources.template["Resources"][logical_id]["Properties"]["KeySchema"]
        key_names = [key["AttributeName"] for key in schema]
        _delete_scanned(dynamodb, table, ProjectionExpression=", ".join(key_names))
    # A deployed table's beginning (``table#began``) a day back, as the local stack starts with: an
    # emptied table is a new one, and a burst on it waits mailbox_settle_seconds (300 s) for its thread
    # state to settle (``replyonce.core.state_settles_in``), which is a state loss's drill, not this run.
    put_in_service(resources)


def _delete_scanned(dynamodb: Any, table: str, **scan: Any) -> None:
    """Delete the items a scan of ``table`` returns (``scan`` must project exactly the key)."""
    pages = dynamodb.get_paginator("scan").paginate(TableName=table, **scan)
    keys = [item for page in pages for item in page["Items"]]
    for start in range(0, len(keys), 25):
        requests = [{"DeleteRequest": {"Key": key}} for key in keys[start : start + 25]]
        dynamodb.batch_write_item(RequestItems={table: requests})


def forget_recipient_budgets(stack: LocalStack) -> None:
    """Delete the per-recipient budget items (a recipient's hour), so the next reply is within its budget.

    Why: the counted paths answer the same customer again and again (``devstack.counting``), and
    ``ReplyBudgetPerRecipientPerHour`` allows that address ten replies an hour: the eleventh would be
    skipped as ``recipient_budget_exhausted`` and counted as a different path. Each repeat is measured
    as a recipient's reply within its budget, as on a deployment that serves many customers.
    """
    from replyonce.adapters.state_items import RECIPIENT_PREFIX

    resources, _ = parts(stack)
    _delete_scanned(
        boto3.client("dynamodb"),
        resources.tables["StateTable"],
        ProjectionExpression="pk",
        FilterExpression="begins_with(pk, :prefix)",
        ExpressionAttributeValues={":prefix": {"S": RECIPIENT_PREFIX}},
    )


@contextmanager
def scratch_queue(stack: LocalStack) -> Iterator[str]:
    """A queue like the notification queue that the webhook sends to for the ``with`` block, then deleted.

    Why not the stack's queue: what the webhook benchmarks queue would stay
    there for the replier benchmarks, and SQS allows one purge a minute.
    """
    resources, _ = parts(stack)
    sqs = boto3.client("sqs")
    template_queue = resources.queues["NotificationQueue"]
    attributes = sqs.get_queue_attributes(QueueUrl=template_queue, AttributeNames=["MaximumMessageSize"])
    url = sqs.create_queue(
        QueueName=f"replyonce-bench-scratch-{next(_scratch_names)}", Attributes=attributes["Attributes"]
    )["QueueUrl"]
    previous = os.environ["QUEUE_URL"]
    os.environ["QUEUE_URL"] = url  # what the webhook's settings read when its endpoint is built
    try:
        yield url
    finally:
        os.environ["QUEUE_URL"] = previous
        sqs.delete_queue(QueueUrl=url)


def require_empty_queue(stack: LocalStack) -> None:
    """Fail loudly if an earlier step left records: they would be drained, and counted, as ours."""
    visible, in_flight, _ = stack.queue_depth()
    if visible or in_flight:
        raise RuntimeError(f"the notification queue is not empty ({visible} visible, {in_flight} in flight)")
