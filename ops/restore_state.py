"""``restore-state``: a restored state table's items put back while mail flows, every thread begun again.

Why a command and not ``batch-write-item`` by hand (issue 48, the restore while mail flows): a thread
item brought back from an older backup, or deleted by hand and created again by the next lease, keeps
the table's old beginning (``since``). A reply sent or queued (``202``) in the last
``pending_confirm_seconds`` before the restore is then in no listing yet and in no state either, and
the customer's follow-up, planned as a burst of both messages, threads on the newer one under a new
``Idempotency-Key``: the first message gets a second email. The replier waits out a new state before a
burst of more than its own message (``core.arrival.state_settles_in``, ``state_new``) — so this command
makes every thread's state new at the restore: ``table#began`` and each thread item's ``since`` are
stamped with the restore's time. For ``pending_confirm_seconds`` after it such bursts wait (a
customer's single message is answered at once, under the key any lost attempt used); then everything
sent or queued before the restore is listed and covers what it answered.

The stamp is written twice: before the copy (a thread the replier creates meanwhile begins then) and
after it, on every thread item (what the copy wrote, and what a lease wrote during it), so the wait
lasts ``pending_confirm_seconds`` from the copy's end. The clock is the later of this machine's and
AWS's (``ops.failover.stamping_clock``): a slow operator clock cannot shorten the wait.
"""

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from replyonce.adapters.state_items import SINCE, TABLE_BEGAN_KEY
from replyonce.state import THREAD_PREFIX

# DynamoDB's BatchWriteItem takes at most 25 puts; what it leaves unprocessed is sent again this often.
_BATCH = 25
_MAX_ROUNDS = 12


@dataclass(frozen=True)
class RestoreResult:
    """What the command wrote: items copied, thread items stamped, and the stamp (ms)."""

    copied: int
    threads_begun_again: int
    began_ms: int


def restore_state(
    dynamodb: Any, *, source: str | None, target: str, clock: Callable[[], float]
) -> RestoreResult:
    """Copy ``source``'s items into ``target`` (``None``: copy nothing, items deleted by hand), then make
    every thread of ``target`` begin again now.

    Items of ``target`` the backup does not hold stay as they are; delete what is damaged first (then
    this command, without ``source``, stamps what the next leases create).
    """
    first = int(clock() * 1000)
    _stamp(dynamodb, target, {"pk": {"S": TABLE_BEGAN_KEY}}, first, create=True)
    copied = 0
    if source is not None:
        for page in _pages(dynamodb, source):
            items = [_begun_again(item, first) for item in page]
            _put_all(dynamodb, target, items)
            copied += len(items)
    last = int(clock() * 1000)
    _stamp(dynamodb, target, {"pk": {"S": TABLE_BEGAN_KEY}}, last, create=True)
    stamped = sum(_stamp(dynamodb, target, key, last) for key in _thread_keys(dynamodb, target))
    return RestoreResult(copied=copied, threads_begun_again=stamped, began_ms=last)


def _begun_again(item: Mapping[str, Any], began_ms: int) -> dict[str, Any]:
    """A thread item with its ``since`` stamped; any other item (ledger, budgets, bodies) as it was."""
    if item.get("pk", {}).get("S", "").startswith(THREAD_PREFIX):
        return {**item, SINCE: {"N": str(began_ms)}}
    return dict(item)


def _stamp(dynamodb: Any, table: str, key: Mapping[str, Any], began_ms: int, *, create: bool = False) -> int:
    """``since`` of one item raised to ``began_ms`` (1), or left when later already or gone (0).

    Why conditional: a ``since`` already later (a lease that created the item after the stamp, a table
    emptied and begun again by a worker whose clock is ahead of the operator's) is kept, and a thread
    item deleted meanwhile is not created again here (``create``: ``table#began`` is).
    """
    later = f"(attribute_not_exists({SINCE}) OR {SINCE} <= :began)"
    try:
        dynamodb.update_item(
            TableName=table,
            Key=dict(key),
            UpdateExpression=f"SET {SINCE} = :began",
            ConditionExpression=later if create else f"attribute_exists(pk) AND {later}",
            ExpressionAttributeValues={":began": {"N": str(began_ms)}},
        )
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return 0
    return 1


def _pages(dynamodb: Any, table: str, **scan: Any) -> Iterator[list[dict[str, Any]]]:
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True, **scan):
        yield page.get("Items", [])


def _thread_keys(dynamodb: Any, table: str) -> Iterator[dict[str, Any]]:
    for page in _pages(
        dynamodb,
        table,
        ProjectionExpression="pk",
        FilterExpression="begins_with(pk, :thread)",
        ExpressionAttributeValues={":thread": {"S": THREAD_PREFIX}},
    ):
        yield from ({"pk": item["pk"]} for item in page)


def _put_all(dynamodb: Any, table: str, items: list[dict[str, Any]]) -> None:
    """Every item written, BatchWriteItem's unprocessed ones again until none is left."""
    for start in range(0, len(items), _BATCH):
        requests = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + _BATCH]]}
        for attempt in range(_MAX_ROUNDS):
            requests = dynamodb.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
            if not requests:
                break
            time.sleep(min(1.0, 0.05 * 2**attempt))  # DynamoDB left some unwritten: throttled, back off
        else:
            raise RuntimeError(
                f"DynamoDB left items unwritten after {_MAX_ROUNDS} rounds; run the command again"
            )


def render(result: RestoreResult, pending_confirm_seconds: int, began: str) -> str:
    """The operator's summary: what was written, and how long bursts of more than one message wait."""
    return (
        f"{result.copied} items copied; {result.threads_begun_again} thread items begin again at {began}\n"
        f"for {pending_confirm_seconds} s (pending_confirm_seconds) a burst of more than its own message "
        "waits (state_new) until every reply sent or queued before the restore is listed; then run "
        '`make backfill ARGS="--since <the restore point> --apply"` and `make redrive`'
    )
