"""The deployed target of the end-to-end suite, run against a stand-in for a deployed stack.

``make e2e`` with ``AWS_SAM_STACK_NAME`` takes a code path CI never reaches
otherwise: the CloudFormation lookup, the secrets, a real email sent from a
second grant. Here a pytest subprocess runs the suite with exactly the
environment a user would set, against the local stack registered as a
CloudFormation stack in its embedded AWS, and a Nylas emulator that delivers
mail between its own grants as Nylas delivers between mailboxes.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, HUMAN_EMAIL, HUMAN_GRANT_ID
from devstack.stack import LocalStack, StackSettings
from tests.conftest import register_stack

ROOT = Path(__file__).resolve().parents[2]
STACK = "replyonce-e2e-deployed"


@pytest.fixture
def deployed_stand_in():
    with LocalStack(StackSettings(pollers=2)) as stack:
        emulator = stack.emulator
        emulator.add_grant(HUMAN_GRANT_ID, HUMAN_EMAIL, name="Alice")

        def deliver_between_grants(message: dict) -> None:
            # Mail the human grant sends to the agent's address lands in the agent's inbox.
            if message.get("grant_id") != HUMAN_GRANT_ID:
                return
            if any(p.get("email") == AGENT_EMAIL for p in message.get("to") or []):
                emulator.deliver_inbound(
                    AGENT_GRANT_ID, from_email=HUMAN_EMAIL, subject=message["subject"], body=message["body"]
                )

        emulator.on_message_created = deliver_between_grants
        resources = stack.resources
        outputs = {
            "WebhookUrl": stack.webhook_url,
            "NylasSecretsArn": resources.secrets["NylasSecrets"],
            "NylasApiKeySecretArn": resources.secrets["NylasApiKeySecret"],
            "StateTableName": resources.tables["StateTable"],
            "NotificationQueueUrl": resources.queues["NotificationQueue"],
        }
        parameters = {"AgentGrantIds": AGENT_GRANT_ID, "NylasApiUri": emulator.url}
        register_stack(STACK, outputs, parameters)
        yield stack


SUITE = ["-m", "pytest", "tests/e2e/test_end_to_end.py", "-q", "-rs", "-p", "no:cacheprovider"]


def run_suite(environment: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own interpreter and test suite
        [sys.executable, *SUITE],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def user_environment(endpoint: str, **extra: str) -> dict[str, str]:
    """What a user exports, with the stand-in's endpoint where AWS would be."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "E2E_", "POWERTOOLS_"))}
    return {
        **keep,
        "AWS_SAM_STACK_NAME": STACK,
        "AWS_ACCESS_KEY_ID": "user",
        "AWS_SECRET_ACCESS_KEY": "user",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
        **extra,
    }


def test_make_e2e_proves_a_deployed_stack(deployed_stand_in):
    emulator = deployed_stand_in.emulator
    result = run_suite(
        user_environment(
            os.environ["AWS_ENDPOINT_URL"],
            E2E_SENDER_GRANT_ID=HUMAN_GRANT_ID,
            E2E_TIMEOUT_SECONDS="30",
            E2E_SETTLE_SECONDS="3",
        )
    )
    assert "4 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]
    # The deployed path ran: each customer email went out from the sender grant, and was answered once.
    customer_emails = emulator.sent_messages(HUMAN_GRANT_ID)
    replies = [s for s in emulator.sends if s.grant_id == AGENT_GRANT_ID]
    assert len(customer_emails) == len(replies) == 2
    expected = sorted(f"Re: {e['subject']}" for e in customer_emails)
    assert sorted(r.payload["subject"] for r in replies) == expected


def test_without_a_sender_grant_a_deployed_run_is_skipped_with_the_reason(deployed_stand_in):
    result = run_suite(user_environment(os.environ["AWS_ENDPOINT_URL"]))
    assert "4 skipped" in result.stdout, result.stdout[-3000:]
    assert "set E2E_SENDER_GRANT_ID" in result.stdout
