"""Shared fixtures: one moto server on loopback, the template's resources created once, emptied per test.

Why a real moto server rather than in-process mocks: the handlers reach AWS
through ``AWS_ENDPOINT_URL`` exactly as in the local stack, and concurrency
tests need a server that serialises conditional writes for many threads.

Why moto (and with it flask and werkzeug) is imported inside the fixtures that start it: this
file is the unit tier's conftest too, and ``tests/unit`` is self-contained — no server, no
socket (``tests/unit/conftest.py``), nothing of the embedded AWS imported
(``tests/static/test_support_imports.py`` checks it in a fresh interpreter).
"""

import os

# First: the real environment, kept for the end-to-end suite's deployed target.
from tests.starting_environment import STARTING_ENVIRONMENT  # noqa: F401

# Before anything imports boto3 or Powertools: no real AWS, no X-Ray, and
# metrics flushed without a namespace warning.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "ReplyOnce",
        "POWERTOOLS_DEV": "false",
        # The suite empties the queues between tests (SQS allows one purge a minute; nothing of ours purges).
        "MOTO_SQS_ENFORCE_STRICT_QUEUE_PURGE_BEHAVIOUR": "false",
    }
)

import copy
import functools
from typing import Any

import boto3
import botocore.session
import pytest
import requests
from aws_lambda_powertools.utilities import parameters
from hypothesis import settings as hypothesis_settings

from devstack.template import LocalResources, create_resources

# Property tests draw the same examples on every machine and run without hypothesis' per-example time
# limit (200 ms): a verdict that changed with the machine's load (DeadlineExceeded while the suite runs
# beside other work) or with a random seed would be no verdict.
hypothesis_settings.register_profile("replyonce", deadline=None, derandomize=True)
hypothesis_settings.load_profile("replyonce")

# Every container a test builds opens a new boto3 Session, and each Session loads the JSON service
# models again (~40 ms a client, a third of the suite's time). The tests share one botocore loader
# (its cache is per loader); Lambda opens its clients once per container and is unaffected.
botocore.session.create_loader = functools.lru_cache(maxsize=None)(botocore.session.create_loader)


@pytest.fixture(scope="session")
def moto_endpoint():
    """A moto server on an ephemeral loopback port, shared by the session."""
    from devstack.embedded_aws import start_threaded_server

    server, endpoint = start_threaded_server()
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    yield endpoint
    server.stop()


# What a test may do to the template's resources and still leave them reusable once emptied: item and
# message traffic, and reads. Any other action the embedded AWS serves (a secret rotated, a queue's
# attributes set, a stack, a topic, a role: anything) makes the next test start from a full reset.
REUSABLE_AFTER = {
    "dynamodb": {
        "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
        "BatchWriteItem", "TransactGetItems", "TransactWriteItems", "DescribeTable", "ListTables",
        "DescribeTimeToLive",
    },
    "sqs": {
        "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
        "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "GetQueueAttributes", "GetQueueUrl",
        "ListQueues", "PurgeQueue",
    },
    "secretsmanager": {"GetSecretValue", "DescribeSecret", "ListSecrets"},
    "sts": {"GetCallerIdentity"},
}  # fmt: skip


class _ServedActions:
    """Every (service, action) the in-process moto server answered since the last reset."""

    def __init__(self) -> None:
        from moto.core.responses import BaseResponse

        self.seen: set[tuple[str, str]] = set()
        original = BaseResponse.call_action

        def recorded(response: Any) -> Any:
            try:
                self.seen.add((str(response.service_name), response._get_action()))
            except Exception:  # an action moto cannot name: not one we know is harmless
                self.seen.add((str(response.service_name), "?"))
            return original(response)

        BaseResponse.call_action = recorded  # type: ignore[method-assign]

    def reusable(self) -> bool:
        return all(action in REUSABLE_AFTER.get(service, ()) for service, action in self.seen)


@pytest.fixture(scope="session")
def _served(moto_endpoint) -> _ServedActions:
    return _ServedActions()


@pytest.fixture(scope="session")
def _template_resources() -> dict[str, LocalResources]:
    """The resources the session created last (``resources``), reused while tests leave them reusable."""
    return {}


def _emptied(resources: LocalResources) -> None:
    """Delete every item and message: what a fresh ``create_resources`` would hold."""
    dynamodb, sqs = boto3.client("dynamodb"), boto3.client("sqs")
    definitions = resources.template["Resources"]
    for logical_id, table in resources.tables.items():
        keys = [k["AttributeName"] for k in definitions[logical_id]["Properties"]["KeySchema"]]
        names = {f"#k{i}": key for i, key in enumerate(keys)}
        pages = dynamodb.get_paginator("scan").paginate(
            TableName=table, ProjectionExpression=", ".join(names), ExpressionAttributeNames=names
        )
        for page in pages:
            for start in range(0, len(page["Items"]), 25):
                deletes = [{"DeleteRequest": {"Key": item}} for item in page["Items"][start : start + 25]]
                dynamodb.batch_write_item(RequestItems={table: deletes})
    for url in resources.queues.values():
        sqs.purge_queue(QueueUrl=url)


@pytest.fixture
def aws(moto_endpoint, _served, _template_resources) -> LocalResources:
    """A clean embedded AWS with the template's tables, queues and secret.

    Created once, then emptied for each test (a third of a second saved per test); a test that did
    anything but item and message traffic to them gets a full reset and new resources instead.
    """
    # Powertools Parameters keeps a module-level provider and cache: a secret
    # cached by one test must not leak into the next.
    parameters.clear_caches()
    parameters.base.DEFAULT_PROVIDERS.clear()
    if "resources" in _template_resources and _served.reusable():
        _emptied(_template_resources["resources"])
    else:
        requests.post(f"{moto_endpoint}/moto-api/reset", timeout=10).raise_for_status()
        _template_resources["resources"] = create_resources()
    _served.seen.clear()
    return copy.deepcopy(_template_resources["resources"])


@pytest.fixture
def sqs(moto_endpoint):
    return boto3.client("sqs")


@pytest.fixture
def secretsmanager(moto_endpoint):
    return boto3.client("secretsmanager")


def drain(sqs_client, queue_url: str) -> list[dict]:
    """Receive every message on a queue (with attributes) and delete it."""
    messages = []
    while True:
        batch = sqs_client.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], WaitTimeSeconds=0
        ).get("Messages", [])
        if not batch:
            return messages
        for message in batch:
            sqs_client.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
        messages.extend(batch)


def register_stack(name: str, outputs: dict[str, str], parameters: dict[str, str] | None = None) -> str:
    """A CloudFormation stack in the embedded AWS with these outputs and parameters (and no resource
    that matters): what the ops commands and the end-to-end suite look a deployed stack up by.
    """
    import json

    parameters = parameters or {}
    boto3.client("cloudformation").create_stack(
        StackName=name,
        TemplateBody=json.dumps(
            {
                "Parameters": {key: {"Type": "String"} for key in parameters},
                "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {key: {"Value": value} for key, value in outputs.items()},
            }
        ),
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
    )
    return name


def register_mailbox_stack(name: str, replier_env: Any, nylas_url: str, **parameters: str) -> str:
    """The stack the commands that read a mailbox look up (replay, export, the review report, the gate):
    the API key's secret and the state table, Nylas' URL and the sample agent grant, and ``parameters``.
    """
    from devstack.events import AGENT_GRANT_ID

    outputs = {
        "NylasApiKeySecretArn": replier_env.secrets["NylasApiKeySecret"],
        "StateTableName": replier_env.tables["StateTable"],
    }
    return register_stack(
        name, outputs, {"NylasApiUri": nylas_url, "AgentGrantIds": AGENT_GRANT_ID, **parameters}
    )


@pytest.fixture
def log_records():
    """The JSON lines Powertools Logger writes during a test, parsed.

    Why not capsys: the Logger binds its stream when the layer is imported,
    before pytest swaps ``sys.stdout`` for the test.
    """
    import io
    import json

    from replyonce.observability import logger

    buffer = io.StringIO()
    handler = logger.registered_handler
    previous = handler.setStream(buffer)
    records: list[dict] = []

    def read() -> list[dict]:
        records[:] = [json.loads(line) for line in buffer.getvalue().splitlines() if line.startswith("{")]
        return records

    yield read
    handler.setStream(previous)


@pytest.fixture(scope="session")
def nylas_server():
    """The Nylas emulator on an ephemeral loopback port, shared by the session."""
    from devstack.nylas import NylasEmulator
    from devstack.template import LOCAL_API_KEY

    with NylasEmulator(api_key=LOCAL_API_KEY) as emulator:
        yield emulator


@pytest.fixture
def nylas(nylas_server):
    """A clean emulator with the agent's grant."""
    from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID

    nylas_server.reset()
    nylas_server.on_message_created = None
    nylas_server.add_grant(AGENT_GRANT_ID, AGENT_EMAIL, name="Acme Support")
    yield nylas_server
    nylas_server.on_message_created = None


@pytest.fixture
def tuning() -> dict:
    """The replier's settings no variable sets, for this test (``ReplierSettings`` fields, in-process).

    Redeliveries in seconds would make the suite slow; the logic is the same at 0. Every deferral comes
    back at once (the settle time, an account limit): tests move Nylas' clock instead. A busy thread fails
    the record at once (tests of the in-process wait set it themselves). A test changes its entries before
    its first record: the replier's container reads them when it is built.
    """
    return {"busy_retry_seconds": 0, "retry_base_seconds": 0, "retry_max_seconds": 0, "lease_wait_seconds": 0}


@pytest.fixture
def replier_env(aws, nylas, tuning, monkeypatch):
    """ReplierFunction's environment from the template, pointed at the emulator; its handler's container
    (``functions/replier/app.py``) built for it and this test's ``tuning``."""
    from pathlib import Path

    from devstack.containers import tuned_consumer
    from devstack.events import AGENT_GRANT_ID
    from devstack.nylas.mailbox import RECEIVING_AUTHSERV
    from devstack.template import put_in_service

    for name, value in aws.function_environment("ReplierFunction").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NYLAS_API_URI", nylas.url)
    monkeypatch.setenv("AGENT_GRANT_IDS", AGENT_GRANT_ID)
    # The emulator is the receiving provider: its Authentication-Results are the ones to trust.
    monkeypatch.setenv("RECEIVING_AUTHSERV_IDS", RECEIVING_AUTHSERV)
    from functions.replier import app

    monkeypatch.setattr(app, "consumer", tuned_consumer(Path(app.__file__).parent, tuning))
    put_in_service(aws)
    return aws


@pytest.fixture
def replier(replier_env):
    """The replier handler's container, built on first use for this test's environment and ``tuning``."""
    return replier_env


@pytest.fixture
def pipeline(replier, sqs):
    from tests.replier_harness import Pipeline

    return Pipeline(replier, sqs)


def pytest_collection_modifyitems(config, items):
    """The long runs (``long_running``) first, one per xdist worker (``tests/worker_order.py``)."""
    from tests.worker_order import long_runs_first

    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    is_long = [item.get_closest_marker("long_running") is not None for item in items]
    items[:] = long_runs_first(items, is_long, workers)
