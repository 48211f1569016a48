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
40 rounds (``tests/test_embedded_aws.py``). So the embedded AWS answers one
DynamoDB request at a time, as the table's items would see them.

Every local moto (tests, local stack, chaos) starts here, so all of them run
the same embedded AWS.
"""

import functools
import sys
import threading

from moto.core.common_models import BaseModel
from moto.dynamodb.models import dynamo_type, table
from moto.dynamodb.responses import DynamoHandler
from moto.server import ThreadedMotoServer
from moto.server import main as moto_server_main


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
            return answer(self)

    one_at_a_time.serialized = True  # type: ignore[attr-defined]
    DynamoHandler.call_action = one_at_a_time  # type: ignore[method-assign]


def start_threaded_server() -> tuple[ThreadedMotoServer, str]:
    """Start a moto server in this process on an ephemeral loopback port.

    Returns
    -------
    tuple[ThreadedMotoServer, str]
        The server (call ``stop()`` when done) and its endpoint URL.
    """
    untrack_dynamodb_models()
    serialize_dynamodb_requests()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def main(argv: list[str] | None = None) -> None:
    """``python -m devstack.embedded_aws -H 127.0.0.1 -p PORT``: moto's own server command."""
    untrack_dynamodb_models()
    serialize_dynamodb_requests()
    moto_server_main(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
