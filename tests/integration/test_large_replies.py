"""A reply of any size Nylas accepts goes out once; a larger one is handed off, never dead-lettered.

The real replier handler against moto (whose items, like DynamoDB's, hold at
most 400 KB) and the Nylas emulator. The agent is this module's own
``REPLY_AGENT``: an answer with an inline logo (a ``data:`` image of random
bytes, so compression cannot shrink it below DynamoDB's limit).
"""

import base64
import random

import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from functions.replier import app
from replyonce.agent import Conversation, Reply
from tests.replier_harness import inbound, skip_reasons

LOGO_BYTES = 330_000
"""An inline logo of 330 KB: about 440 KB once base64 in the HTML, as a branded reply carries it."""
BROCHURE_BYTES = 2_300_000
"""An inline image of 2.3 MB: over 3 MB in base64, more than Nylas takes in a JSON request (3 MB, whole
request: https://developer.nylas.com/docs/v3/email/attachments/)."""
asked_for: list[str] = []
"""The bursts' targets each agent call was for, in order."""


def _logo_html(raw_bytes: int) -> str:
    """A short answer and an inline image of ``raw_bytes`` random bytes (the same in every run)."""
    logo = base64.b64encode(random.Random(raw_bytes).randbytes(raw_bytes)).decode()
    return f'<p>Your order 1042 ships today.</p><img alt="Acme" src="data:image/png;base64,{logo}">'


def with_a_logo(conversation: Conversation) -> Reply:
    """The agent's answer with a ~440 KB inline logo."""
    asked_for.append(conversation.target.id)
    return Reply(text="Your order 1042 ships today.", html=_logo_html(LOGO_BYTES))


def over_the_limit(conversation: Conversation) -> Reply:
    """The agent's answer with an inline image larger than any request Nylas accepts (3 MB)."""
    asked_for.append(conversation.target.id)
    return Reply(text="Here is the brochure.", html=_logo_html(BROCHURE_BYTES))


@pytest.fixture
def agent_named(replier, monkeypatch):
    """Set ``REPLY_AGENT`` to one of this module's agents, for a fresh container."""

    def use(function: str) -> None:
        asked_for.clear()
        monkeypatch.setenv("REPLY_AGENT", f"{__name__}:{function}")
        app.consumer.cache_clear()

    yield use
    app.consumer.cache_clear()


def test_a_reply_with_a_440_kb_logo_goes_out_once_and_nothing_is_dead_lettered(
    pipeline, nylas, agent_named, log_records
):
    agent_named("with_a_logo")
    message = inbound(nylas, subject="Order 1042")
    pipeline.deliver(envelope(message), times=2)  # Nylas delivers at least once
    pipeline.drain()
    pipeline.deliver(envelope(message))  # a redelivery after the reply
    pipeline.drain()
    assert asked_for == [message["id"]]  # once, not once per receive
    [sent] = nylas.sends
    assert sent.payload["body"] == _logo_html(LOGO_BYTES)  # every byte of it
    assert sent.payload["reply_to_message_id"] == message["id"]
    assert len(sent.payload["body"]) > 400_000  # more than a DynamoDB item holds
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0
    assert "unexpected" not in [r.get("reason") for r in log_records()]
    assert "already_replied" in skip_reasons(log_records)


def test_a_reply_over_nylas_limit_is_handed_off_not_sent_and_not_dead_lettered(
    pipeline, nylas, agent_named, log_records, monkeypatch, capsys
):
    monkeypatch.setenv("HANDOFF_FOLDER", "archive")
    agent_named("over_the_limit")
    message = inbound(nylas, subject="Brochure")
    pipeline.deliver(envelope(message))
    pipeline.drain()
    pipeline.deliver(envelope(message))  # a redelivery: settled, the agent is not asked again
    pipeline.drain()
    assert asked_for == [message["id"]]
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["reply_too_large", "handed_off"]
    assert "HandedOff" in capsys.readouterr().out
    # Filed by the hand-off, and again by the redelivery: a hand-off the mailbox does not show (a crash
    # between the settlement and the move) would be a silent "no", and a move is idempotent.
    moved = nylas.requests.count(("PUT", f"/v3/grants/{AGENT_GRANT_ID}/messages/{message['id']}"))
    assert moved == 2
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0
