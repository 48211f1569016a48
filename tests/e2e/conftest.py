"""Where the end-to-end suite runs: a deployed stack, or the local stack.

As the AWS serverless test samples do, the suite finds the stack through
``AWS_SAM_STACK_NAME`` and its CloudFormation outputs, and drives it from
outside only: HTTP to the webhook URL, the Nylas API, and reads of the state
table. With ``AWS_SAM_STACK_NAME`` and AWS credentials in the environment
pytest was started with, the target is that deployed stack; otherwise it is
the local stack (``devstack.stack.LocalStack``: moto, the API Gateway and SQS
stand-ins, the Nylas emulator), which is what CI runs.

A deployed target needs a second Nylas grant that plays the customer, since a
message cannot be put into a real mailbox any other way:

``E2E_SENDER_GRANT_ID`` (required)
    A grant (not an agent grant) the test sends the customer's email from.
``E2E_GRANT_ID``
    The agent grant to write to; default: the first of the stack's ``AgentGrantIds``.
``E2E_TIMEOUT_SECONDS``
    How long to wait for the email to arrive and for the reply (default 180).
``E2E_SETTLE_SECONDS``
    After the first reply, how long to watch for a second one (default 30).
``E2E_NYLAS_API_KEY``
    The Nylas API key the test reads and sends with; default: the one stored in the stack's secret.
"""

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import boto3
import pytest
import requests

from devstack.stack import LocalStack, StackSettings
from ops.stack import describe_stack
from tests.starting_environment import STARTING_ENVIRONMENT

STACK_VARIABLE = "AWS_SAM_STACK_NAME"


@dataclass
class Target:
    """One ReplyOnce stack, as seen from outside."""

    description: str
    webhook_url: str
    webhook_secret: str
    nylas_api_uri: str
    nylas_api_key: str
    agent_grant_id: str
    agent_email: str
    state_table: str
    aws: Callable[[], boto3.session.Session]
    # subject -> the agent grant's copy of a new customer email with that subject
    write_inbound: Callable[[str], dict[str, Any]]
    reply_timeout_seconds: float
    # After the first reply, how long to keep watching for a second one.
    settle_seconds: float

    def nylas(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = requests.request(
            method,
            self.nylas_api_uri.rstrip("/") + path,
            headers={"Authorization": f"Bearer {self.nylas_api_key}", "Accept": "application/json"},
            timeout=30,
            **kwargs,
        )
        assert response.status_code == 200, (
            f"Nylas {method} {path}: {response.status_code} {response.text[:300]}"
        )
        return response.json()

    def grant_email(self) -> str:
        grant = self.nylas("GET", f"/v3/grants/{quote(self.agent_grant_id, safe='')}")["data"]
        return str(grant["email"]).lower()

    def thread_messages(self, thread_id: str) -> list[dict[str, Any]]:
        path = f"/v3/grants/{quote(self.agent_grant_id, safe='')}/messages"
        return self.nylas("GET", path, params={"thread_id": thread_id, "limit": 50})["data"]

    def agent_messages(self, thread_id: str) -> list[dict[str, Any]]:
        """The agent's own messages in the thread: its replies."""
        return [
            m
            for m in self.thread_messages(thread_id)
            if any(p.get("email", "").lower() == self.agent_email for p in m.get("from") or [])
        ]


def _deployed_session() -> boto3.session.Session | None:
    """A session with the credentials pytest was started with (tests/conftest.py hides them)."""
    with _environment(STARTING_ENVIRONMENT):
        session = boto3.session.Session()
        credentials = session.get_credentials()
        if credentials is None:
            return None
        frozen = credentials.get_frozen_credentials()
        return boto3.session.Session(
            aws_access_key_id=frozen.access_key,
            aws_secret_access_key=frozen.secret_key,
            aws_session_token=frozen.token,
            region_name=session.region_name,
        )


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _deployed_target(stack_name: str, session: boto3.session.Session) -> Target:
    environ = STARTING_ENVIRONMENT
    sender = environ.get("E2E_SENDER_GRANT_ID", "")
    if not sender:
        pytest.skip(
            f"{STACK_VARIABLE}={stack_name}: set E2E_SENDER_GRANT_ID to a Nylas grant the test can send "
            "the customer's email from (and optionally E2E_GRANT_ID, the agent grant)"
        )
    stack = describe_stack(session.client("cloudformation"), stack_name)
    grants = [g.strip() for g in stack.parameters.get("AgentGrantIds", "").split(",") if g.strip()]
    agent = environ.get("E2E_GRANT_ID") or (grants[0] if grants else "")
    if agent not in grants:
        pytest.skip(f"E2E_GRANT_ID {agent!r} is not one of the stack's AgentGrantIds {grants}")
    secrets = session.client("secretsmanager")

    def secret_field(output: str, name: str) -> str:
        value = json.loads(secrets.get_secret_value(SecretId=stack.output(output))["SecretString"])
        return str(value.get(name, ""))

    # The API key has its own secret where the stack outputs one (an output named *ApiKey*).
    api_key_output = next((k for k in stack.outputs if "apikey" in k.lower()), "NylasSecretsArn")
    timeout = float(environ.get("E2E_TIMEOUT_SECONDS", "180"))
    target = Target(
        description=f"stack {stack_name}",
        webhook_url=stack.output("WebhookUrl"),
        webhook_secret=secret_field("NylasSecretsArn", "webhook_secret"),
        nylas_api_uri=stack.parameters.get("NylasApiUri", "https://api.us.nylas.com"),
        nylas_api_key=environ.get("E2E_NYLAS_API_KEY") or secret_field(api_key_output, "api_key"),
        agent_grant_id=agent,
        agent_email="",
        state_table=stack.output("StateTableName"),
        aws=lambda: session,
        write_inbound=lambda subject: {},
        reply_timeout_seconds=timeout,
        settle_seconds=float(environ.get("E2E_SETTLE_SECONDS", "30")),
    )
    target.agent_email = target.grant_email()

    def write_inbound(subject: str) -> dict[str, Any]:
        target.nylas(
            "POST",
            f"/v3/grants/{quote(sender, safe='')}/messages/send",
            json={
                "to": [{"email": target.agent_email}],
                "subject": subject,
                "body": "ReplyOnce end-to-end test.",
            },
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = target.nylas(
                "GET", f"/v3/grants/{quote(agent, safe='')}/messages", params={"subject": subject, "limit": 5}
            )["data"]
            # Exact subject: a provider's subject filter may match substrings.
            found = [m for m in found if m.get("subject") == subject]
            if found:
                return found[0]
            time.sleep(5)
        pytest.fail(f"the email {subject!r} did not reach {agent} within {timeout:.0f} s")

    target.write_inbound = write_inbound
    return target


def _local_target(stack: LocalStack) -> Target:
    assert stack.emulator is not None
    assert stack.resources is not None
    grant = stack.settings.agent_grant_ids.split(",")[0]

    def write_inbound(subject: str) -> dict[str, Any]:
        return stack.emulator.deliver_inbound(
            grant, from_email=f"customer-{uuid.uuid4().hex[:8]}@example.com", subject=subject, body="Hello?"
        )

    target = Target(
        description="local stack",
        webhook_url=stack.webhook_url,
        webhook_secret=stack.settings.webhook_secret,
        nylas_api_uri=stack.emulator.url,
        nylas_api_key=stack.settings.nylas_api_key,
        agent_grant_id=grant,
        agent_email="",
        state_table=stack.resources.tables["StateTable"],
        aws=boto3.session.Session,
        write_inbound=write_inbound,
        reply_timeout_seconds=30.0,
        # Longer than the stand-ins' redelivery delays (1-4 s): a second reply would have shown.
        settle_seconds=5.0,
    )
    target.agent_email = target.grant_email()
    return target


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    stack_name = STARTING_ENVIRONMENT.get(STACK_VARIABLE, "")
    session = _deployed_session() if stack_name else None
    if stack_name and session is not None:
        with pytest.MonkeyPatch.context() as patch:
            # The session moto of the other tests must not capture a deployed target's calls.
            endpoint = STARTING_ENVIRONMENT.get("AWS_ENDPOINT_URL")
            if endpoint:
                patch.setenv("AWS_ENDPOINT_URL", endpoint)
            else:
                patch.delenv("AWS_ENDPOINT_URL", raising=False)
            yield _deployed_target(stack_name, session)
        return
    with LocalStack(StackSettings(pollers=2)) as stack:
        yield _local_target(stack)
