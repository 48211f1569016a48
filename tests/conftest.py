"""Shared fixtures: one moto server on loopback for the session, resources from template.yaml per test.

Why a real moto server rather than in-process mocks: the handlers reach AWS
through ``AWS_ENDPOINT_URL`` exactly as in the local stack, and concurrency
tests need a server that serialises conditional writes for many threads.
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
    }
)

import boto3
import pytest
import requests
from aws_lambda_powertools.utilities import parameters

from devstack.embedded_aws import start_threaded_server
from devstack.template import LocalResources, create_resources


@pytest.fixture(scope="session")
def moto_endpoint():
    """A moto server on an ephemeral loopback port, shared by the session."""
    server, endpoint = start_threaded_server()
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    yield endpoint
    server.stop()


@pytest.fixture
def aws(moto_endpoint) -> LocalResources:
    """A clean embedded AWS with the template's tables, queues and secret."""
    requests.post(f"{moto_endpoint}/moto-api/reset", timeout=10).raise_for_status()
    # Powertools Parameters keeps a module-level provider and cache: a secret
    # cached by one test must not leak into the next.
    parameters.clear_caches()
    parameters.base.DEFAULT_PROVIDERS.clear()
    return create_resources()


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
def replier_env(aws, nylas, monkeypatch):
    """ReplierFunction's environment from the template, pointed at the emulator, with fast retries."""
    from devstack.events import AGENT_GRANT_ID

    for name, value in aws.function_environment("ReplierFunction").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NYLAS_API_URI", nylas.url)
    monkeypatch.setenv("AGENT_GRANT_IDS", AGENT_GRANT_ID)
    # Redeliveries in seconds would make the suite slow; the logic is the same at 0.
    monkeypatch.setenv("BUSY_RETRY_SECONDS", "0")
    monkeypatch.setenv("RETRY_BASE_SECONDS", "0")
    # Every deferral comes back at once (the settle time, an account limit): tests move Nylas' clock instead.
    monkeypatch.setenv("RETRY_MAX_SECONDS", "0")
    # A busy thread fails the record at once (tests of the in-process wait set it themselves).
    monkeypatch.setenv("LEASE_WAIT_SECONDS", "0")
    return aws


@pytest.fixture
def replier(replier_env):
    """The replier handler's container, rebuilt for this test's environment."""
    from functions.replier import app

    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


@pytest.fixture
def pipeline(replier, sqs):
    from tests.replier_harness import Pipeline

    return Pipeline(replier, sqs)
