"""The contract tier: each case runs on the in-memory fake of a port and on its production adapter.

``store`` is :class:`tests.fakes.FakeStateStore` or :class:`replyonce.adapters.store.DynamoDBStateStore` on
the template's state table in the embedded AWS; ``mailbox`` is :class:`tests.fakes.FakeMailbox` or
:class:`replyonce.adapters.nylas.NylasMailbox` on the Nylas emulator. Both sides of a port share one settable
clock (the store's wall clock, Nylas' clock), so a lease expires or a key's hour passes without a
sleep. A case asserts only what the port lets a caller observe; where the two must differ, the case
says why in its ``xfail`` reason.
"""

import boto3
import pytest

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID
from devstack.template import LOCAL_API_KEY
from replyonce.adapters.nylas import NylasMailbox
from replyonce.adapters.store import DynamoDBStateStore
from tests.fakes import Clock, FakeMailbox, FakeStateStore

START = 1_800_000_000.0
TTL_SECONDS = 3600


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture(params=["fake", "dynamodb"])
def store(request, clock):
    """The state store port: the fake, or the DynamoDB adapter on the template's ``StateTable``."""
    if request.param == "fake":
        return FakeStateStore(clock)
    aws = request.getfixturevalue("aws")
    return DynamoDBStateStore(
        aws.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=TTL_SECONDS, clock=clock
    )


class MailboxWorld:
    """One side of the mailbox contract: the port, and the world around it a case sets up and counts.

    Attributes
    ----------
    mailbox:
        The port under test (``FakeMailbox`` or ``NylasMailbox``).
    grant_id:
        The agent's grant, added to both sides with the same address and name.
    """

    def __init__(
        self, mailbox, deliver, advance, emails_out, hook_send_started, queue_sends, release
    ) -> None:
        self.mailbox = mailbox
        self.grant_id = AGENT_GRANT_ID
        self._deliver = deliver
        self.advance = advance
        self.emails_out = emails_out
        self.on_send_started = hook_send_started
        self.queue_sends = queue_sends
        """Agent Account send queueing on (every send answers ``202`` and waits for :attr:`release`)."""
        self.release = release
        """The queue decides: every queued email goes out."""

    def deliver(self, sender: str, subject: str, thread_id: str | None = None) -> dict:
        """An inbound message arrives in the agent's inbox; its message object as stored."""
        return self._deliver(sender, subject, thread_id)


def _fake_world(clock: Clock, mailbox_type: type[FakeMailbox] = FakeMailbox) -> MailboxWorld:
    """The fake's side; ``mailbox_type`` a broken variant of it (``tests/contract/test_broken_fakes.py``)."""
    fake = mailbox_type(clock)
    fake.add_grant(AGENT_GRANT_ID, AGENT_EMAIL, "Acme Support")

    def deliver(sender, subject, thread_id):
        return fake.deliver(
            AGENT_GRANT_ID, sender=sender, subject=subject, body="<p>?</p>", thread_id=thread_id
        )

    def hook(callback):
        fake.on_send_started = callback

    def queue_sends():
        fake.queue_sends = True

    return MailboxWorld(
        fake, deliver, clock.advance, lambda: len(fake.sent), hook, queue_sends, fake.release_queued
    )


def _emulator_world(nylas) -> MailboxWorld:
    mailbox = NylasMailbox(nylas.url, lambda: LOCAL_API_KEY, timeout_seconds=10, send_timeout_seconds=10)

    def deliver(sender, subject, thread_id):
        return nylas.deliver_inbound(
            AGENT_GRANT_ID, from_email=sender, subject=subject, body="<p>?</p>", thread_id=thread_id
        )

    def hook(callback):
        nylas.on_send_started = callback

    def queue_sends():
        nylas.modes.send_queue = True

    return MailboxWorld(
        mailbox,
        deliver,
        nylas.advance_clock,
        lambda: len(nylas.sends),
        hook,
        queue_sends,
        nylas.release_queued,
    )


@pytest.fixture(params=["fake", "emulator"])
def world(request, clock):
    """The mailbox port with its world: ``FakeMailbox``, or ``NylasMailbox`` on the Nylas emulator."""
    if request.param == "fake":
        yield _fake_world(clock)
        return
    nylas = request.getfixturevalue("nylas")
    yield _emulator_world(nylas)
    nylas.on_send_started = None
