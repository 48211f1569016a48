"""The embedded AWS: a moto server on loopback, without moto's copy-per-transaction leak.

moto registers every model instance it creates in a class-level list
(``BaseModel.instances_tracked``, read only by its ``/moto-api/data.json``
dashboard). ``copy.deepcopy`` goes through ``__new__``, and DynamoDB's
``TransactWriteItems`` deep-copies each table it touches as a rollback backup,
so every transaction leaves a full copy of the table behind: memory grows with
transactions x table size (2,000 transactions on one table: 87 MB to 2.2 GB;
a 10,000-notification chaos run was killed at 22 GB). The replier commits each
reply with one transaction, so any long run hits it. Dropping the registration
for DynamoDB's models keeps moto's behaviour and frees the copies.

DynamoDB answers each request atomically: a conditional write is checked and
applied as one step. moto's threaded server checks and applies in the
request's thread with nothing between concurrent requests: eight conditional
``UpdateItem``s racing for a budget of three let four or more through in 18 of
40 rounds (``tests/harness/test_embedded_aws.py``). So the embedded AWS answers one
DynamoDB request at a time, as the table's items would see them.

The same rollback backup costs time, too: a deep copy of a 20,000-item table
takes ~0.5 s, behind which every other DynamoDB request waits. Runs slowed as
the tables grew (a 10,000-notification chaos run fell from ~190 to ~50
notifications a minute, and its workers hit their timeouts). Since the
embedded AWS answers one DynamoDB request at a time, nothing but the
transaction itself changes a table meanwhile: its backup needs the table's
item maps copied and only the items the transaction names deep-copied.

DynamoDB refuses any write that leaves an item over 400 KB. moto checks
only what a put or an update sets at the top of an item: an update that sets
an entry of a map (``SET outbox.#intent = :intent``) grows the item past the
limit unrefused, so a reply too large for its thread item went out locally
where DynamoDB would have refused to store it. The embedded AWS checks the
item an update leaves, as DynamoDB does.

Answering one request at a time, the embedded AWS never meets what DynamoDB
answers two requests that overlap on an item: a single-item write that meets
a transaction in flight gets ``TransactionConflictException``, a transaction
that meets another write is cancelled with a ``TransactionConflict`` reason,
and a ``ClientRequestToken`` used again with other parameters gets
``IdempotentParameterMismatchException``. :func:`contention` makes it answer
them on demand, over the wire, exactly as DynamoDB words them, so the
replier's handling is tested against the real client.

SQS fair queues (a standard queue's ``MessageGroupId`` as its tenant) are not in moto: the
embedded AWS models them (:mod:`devstack.fair_queue`, which says what it models and what not).

Every local moto (tests, local stack, chaos) starts here, so all of them run
the same embedded AWS.
"""

import contextlib
import copy
import functools
import json
import sys
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import moto.dynamodb.models as dynamodb_models
from moto.core.common_models import BaseModel
from moto.dynamodb.exceptions import (
    ERROR_TYPE_PREFIX,
    DynamodbException,
    ItemSizeToUpdateTooLarge,
    TransactionCanceledException,
)
from moto.dynamodb.models import DynamoDBBackend, dynamo_type, table
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler
from moto.server import ThreadedMotoServer
from moto.server import main as moto_server_main

from devstack.fair_queue import fair_delivery


def _untracked_new(cls: type, *args: object, **kwargs: object) -> object:
    return object.__new__(cls)


def untrack_dynamodb_models() -> None:
    """Stop moto from registering DynamoDB model instances (tables, items, indexes, streams)."""
    for module in (table, dynamo_type):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                value.__new__ = staticmethod(_untracked_new)  # type: ignore[method-assign]
                value.instances_tracked = []  # type: ignore[attr-defined]


_ONE_DYNAMODB_REQUEST_AT_A_TIME = threading.Lock()


def serialize_dynamodb_requests() -> None:
    """Answer one DynamoDB request at a time: a conditional write is atomic, as in DynamoDB."""
    answer = DynamoHandler.call_action
    if getattr(answer, "serialized", False):
        return

    @functools.wraps(answer)
    def one_at_a_time(self: DynamoHandler) -> object:
        with _ONE_DYNAMODB_REQUEST_AT_A_TIME:
            contended = _contended_answer(self)
            if contended is not None:
                return contended
            return answer(self)

    one_at_a_time.serialized = True  # type: ignore[attr-defined]
    DynamoHandler.call_action = one_at_a_time  # type: ignore[method-assign]


TRANSACTION_CONFLICT = "TransactionConflict"
PARAMETER_MISMATCH = "IdempotentParameterMismatch"
_SINGLE_ITEM_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})


@dataclass
class Contention:
    """Requests the embedded AWS answers with contention instead of serving them.

    Attributes
    ----------
    operation:
        ``UpdateItem``, ``PutItem``, ``DeleteItem`` or ``TransactWriteItems``.
    answer:
        :data:`TRANSACTION_CONFLICT` (a single-item write: ``TransactionConflictException``; a
        transaction: ``TransactionCanceledException`` with a ``TransactionConflict`` reason on each
        item named by ``key_prefix``) or :data:`PARAMETER_MISMATCH` (a transaction:
        ``IdempotentParameterMismatchException``).
    key_prefix:
        Only requests that name an item whose ``pk`` starts with this (``""``: any).
    times:
        How many matching requests are answered so; :attr:`answered` counts them.
    """

    operation: str
    answer: str = TRANSACTION_CONFLICT
    key_prefix: str = ""
    times: int = 1
    answered: int = 0


_CONTENTION: list[Contention] = []


@contextlib.contextmanager
def contention(
    operation: str, *, answer: str = TRANSACTION_CONFLICT, key_prefix: str = "", times: int = 1
) -> Iterator[Contention]:
    """Inside the block, the next ``times`` matching DynamoDB requests are answered with contention.

    In-process only: the server must run in this process (:func:`start_threaded_server`, as the
    tests run it).
    """
    if answer == PARAMETER_MISMATCH and operation != "TransactWriteItems":
        raise ValueError("only a TransactWriteItems carries a ClientRequestToken")
    planned = Contention(operation, answer, key_prefix, times)
    with _ONE_DYNAMODB_REQUEST_AT_A_TIME:
        _CONTENTION.append(planned)
    try:
        yield planned
    finally:
        with _ONE_DYNAMODB_REQUEST_AT_A_TIME:
            _CONTENTION.remove(planned)


def _item_keys(operation: str, request: dict[str, Any]) -> list[str]:
    """The ``pk`` of each item the request writes (the state and idempotency tables' key is a string)."""
    if operation == "TransactWriteItems":
        ops = [next(iter(item.values()), {}) for item in request.get("TransactItems", [])]
    else:
        ops = [request]
    keys = []
    for op in ops:
        key = op.get("Item") or op.get("Key") or {}
        value = next(iter(key.values()), {})
        keys.append(str(value.get("S", "")) if isinstance(value, dict) else "")
    return keys


def _contended_answer(handler: DynamoHandler) -> tuple[int, dict[str, str], str] | None:
    """What DynamoDB would answer a contended request (call with the request lock held), or ``None``."""
    if not _CONTENTION:
        return None
    operation = handler._get_action()
    try:
        request = json.loads(handler.body or "{}")
    except ValueError:
        return None
    keys = _item_keys(operation, request)
    for planned in _CONTENTION:
        if planned.operation != operation or planned.answered >= planned.times:
            continue
        hit = [key.startswith(planned.key_prefix) for key in keys]
        if not any(hit):
            continue
        planned.answered += 1
        return _error_response(operation, planned.answer, hit)
    return None


def _error_response(operation: str, answer: str, hit: list[bool]) -> tuple[int, dict[str, str], str]:
    if answer == PARAMETER_MISMATCH:
        error: DynamodbException = DynamodbException(
            ERROR_TYPE_PREFIX + "IdempotentParameterMismatchException",
            "Transaction request cannot be processed: the ClientRequestToken was used with other parameters",
        )
    elif operation in _SINGLE_ITEM_WRITES:
        error = DynamodbException(
            ERROR_TYPE_PREFIX + "TransactionConflictException",
            "Transaction is ongoing for the item",
        )
    else:
        conflict = (TRANSACTION_CONFLICT, "Transaction is ongoing for the item", None)
        error = TransactionCanceledException([conflict if h else (None, None, None) for h in hit])
    return error.code, dict(error.get_headers()), error.get_body()


# Per thread: the keys (hash, range) each table's items are named by in the transaction under way.
_TRANSACTION = threading.local()


class _TransactionBackups:
    """What ``moto.dynamodb.models`` sees as ``copy``: ``deepcopy`` of a table backs up what can change.

    Outside a transaction, and for anything but a table, it is ``copy.deepcopy``.
    """

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        named = getattr(_TRANSACTION, "keys", None)
        if named is None or not isinstance(value, Table):
            return copy.deepcopy(value, memo)
        return _rollback_backup(value, named.get(value.name, ()))


def _rollback_backup(live: Table, keys: Any) -> Table:
    """A table to put back if the transaction fails: the item maps copied, the named items deep-copied.

    Why this is enough: a Put or a Delete replaces or removes an entry of the maps (the backup's maps
    keep the old one); an Update changes its item in place (the backup holds a deep copy of it).
    """
    backup = copy.copy(live)
    if live.has_range_key:
        backup.items = defaultdict(dict, {h: dict(by_range) for h, by_range in live.items.items()})
    else:
        backup.items = defaultdict(dict, live.items)
    for hash_value, range_value in keys:
        if live.has_range_key:
            item = live.items.get(hash_value, {}).get(range_value)
            if item is not None:
                backup.items[hash_value][range_value] = copy.deepcopy(item)
        elif (item := live.items.get(hash_value)) is not None:
            backup.items[hash_value] = copy.deepcopy(item)
    return backup


def _named_keys(backend: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Table name → the (hash, range) keys the transaction's operations name (unreadable ones skipped)."""
    named: dict[str, list[Any]] = defaultdict(list)
    for item in transact_items:
        try:
            op_type, op = next(iter(item.items()))
            live = backend.get_table(op["TableName"])
            key = op["Item"] if op_type == "Put" else op["Key"]
            named[live.name].append(backend.get_keys_value(live, key))
        except Exception:  # noqa: S112 - moto itself answers a malformed operation
            continue
    return named


def cheap_transaction_backups() -> None:
    """Back up only what a ``TransactWriteItems`` can change, instead of deep-copying each table."""
    transact = DynamoDBBackend.transact_write_items
    if getattr(transact, "cheap_backups", False):
        return

    @functools.wraps(transact)
    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        _TRANSACTION.keys = _named_keys(self, transact_items)
        try:
            return transact(self, transact_items)
        finally:
            _TRANSACTION.keys = None

    transact_write_items.cheap_backups = True  # type: ignore[attr-defined]
    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    dynamodb_models.copy = _TransactionBackups()  # type: ignore[assignment]


MAX_ITEM_BYTES = 405_000
"""moto's own bound for a put (DynamoDB's 400 KB, between 409 and 410 KB measured by moto's authors)."""


def _restore(table_: Table, key: Any, before: Any) -> None:
    """Put the item an update changed back as it was (or remove it, if the update created it)."""
    hash_value, range_value = key
    if table_.has_range_key:
        if before is None:
            table_.items[hash_value].pop(range_value, None)
        else:
            table_.items[hash_value][range_value] = before
    elif before is None:
        table_.items.pop(hash_value, None)
    else:
        table_.items[hash_value] = before


def item_size_checked_updates() -> None:
    """Refuse an ``UpdateItem`` whose item ends over 400 KB, leaving the item as it was (as DynamoDB)."""
    update = DynamoDBBackend.update_item
    if getattr(update, "size_checked", False):
        return

    @functools.wraps(update)
    def update_item(
        self: DynamoDBBackend, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        live = self.get_table(table_name)
        keys = self.get_keys_value(live, key)
        before = copy.deepcopy(live.get_item(*keys))
        item = update(self, table_name, key, *args, **kwargs)
        if item is not None and item.size() > MAX_ITEM_BYTES:
            _restore(live, keys, before)
            raise ItemSizeToUpdateTooLarge()
        return item

    update_item.size_checked = True  # type: ignore[attr-defined]
    DynamoDBBackend.update_item = update_item  # type: ignore[method-assign]


def start_threaded_server() -> tuple[ThreadedMotoServer, str]:
    """Start a moto server in this process on an ephemeral loopback port.

    Returns
    -------
    tuple[ThreadedMotoServer, str]
        The server (call ``stop()`` when done) and its endpoint URL.
    """
    untrack_dynamodb_models()
    serialize_dynamodb_requests()
    cheap_transaction_backups()
    item_size_checked_updates()
    fair_delivery()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


EPHEMERAL = "--ephemeral"


def main(argv: list[str] | None = None) -> None:
    """``python -m devstack.embedded_aws -H 127.0.0.1 -p PORT``: moto's own server command.

    ``python -m devstack.embedded_aws --ephemeral`` binds a free loopback port itself and prints its
    URL as its first line, then serves until it is stopped. Why: a port picked by the caller and bound
    later can be taken meanwhile by another server (two chaos runs side by side in the test suite), and
    the caller would then talk to that other process's AWS without knowing it.
    """
    args = argv if argv is not None else sys.argv[1:]
    if args == [EPHEMERAL]:
        _server, url = start_threaded_server()
        print(url, flush=True)
        threading.Event().wait()  # until the caller stops this process
        return
    untrack_dynamodb_models()
    serialize_dynamodb_requests()
    cheap_transaction_backups()
    item_size_checked_updates()
    fair_delivery()
    moto_server_main(args)


if __name__ == "__main__":
    main()
