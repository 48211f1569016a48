"""End to end, from outside: the webhook URL, Nylas, and the state table - one suite, two targets.

``make e2e`` runs it against the stack named by ``AWS_SAM_STACK_NAME`` when
that variable and AWS credentials are set (tests/e2e/conftest.py lists what a
deployed run needs), and against the local stack otherwise, as CI does.
"""

import time
import uuid
from urllib.parse import quote

import requests

from devstack.events import encode, envelope
from ops.thread_state import read_thread_state
from replyonce.rules.signature import sign


def post(target, body: bytes, signature: str) -> requests.Response:
    return requests.post(
        target.webhook_url,
        data=body,
        headers={"Content-Type": "application/json", "X-Nylas-Signature": signature},
        timeout=15,
    )


def wait_for_replies(target, thread_id: str) -> list[dict]:
    """The agent's replies in the thread once the first arrived and nothing more came for a while."""
    deadline = time.monotonic() + target.reply_timeout_seconds
    while not target.agent_messages(thread_id):
        assert time.monotonic() < deadline, (
            f"{target.description}: no reply in thread {thread_id} after {target.reply_timeout_seconds:.0f} s"
        )
        time.sleep(0.5)
    time.sleep(target.settle_seconds)
    return target.agent_messages(thread_id)


def test_the_challenge_is_echoed(target):
    challenge = uuid.uuid4().hex
    response = requests.get(target.webhook_url, params={"challenge": challenge}, timeout=15)
    assert (response.status_code, response.text) == (200, challenge)


def test_a_forged_delivery_is_refused(target):
    # A message that does not exist: on a deployed stack nothing real is touched.
    marker = uuid.uuid4().hex
    message = {"id": f"e2e-forged-{marker}", "grant_id": target.agent_grant_id, "thread_id": f"e2e-{marker}"}
    body = encode(envelope(message))
    assert post(target, body, sign(body, "not-the-webhook-secret")).status_code == 401
    assert post(target, body, "").status_code == 401


def test_a_delivery_sent_twice_gets_one_reply_recorded_in_the_thread_state(target):
    message = target.write_inbound(f"ReplyOnce e2e {uuid.uuid4().hex[:8]}")
    notification = envelope(message)
    body = encode(notification)
    # Nylas delivers at least once: the same signed notification twice.
    assert [post(target, body, sign(body, target.webhook_secret)).status_code for _ in range(2)] == [200, 200]

    replies = wait_for_replies(target, message["thread_id"])
    assert len(replies) == 1

    state = read_thread_state(
        target.aws().client("dynamodb"),
        target.state_table,
        target.agent_grant_id,
        message["thread_id"],
        message_ids=[message["id"]],
    )
    assert state.found
    assert not state.lease_held
    assert message["id"] in state.answered
    [entry] = [e for e in state.ledger if e.message_id == message["id"]]
    assert entry.status == "replied"
    assert entry.reply_message_id == replies[0]["id"]


def test_the_reply_tells_other_robots_it_is_automatic_in_headers_that_survive(target):
    # After deploy, as the provider kept them: the X- marks must be there (Microsoft Graph keeps only
    # X- custom headers); Auto-Submitted too where the provider keeps it.
    message = target.write_inbound(f"ReplyOnce e2e marks {uuid.uuid4().hex[:8]}")
    body = encode(envelope(message))
    assert post(target, body, sign(body, target.webhook_secret)).status_code == 200
    [reply] = wait_for_replies(target, message["thread_id"])
    path = f"/v3/grants/{quote(target.agent_grant_id, safe='')}/messages/{quote(reply['id'], safe='')}"
    stored = target.nylas("GET", path, params={"fields": "include_headers"})["data"]
    headers = {str(h.get("name", "")).lower(): str(h.get("value", "")) for h in stored.get("headers") or []}
    assert headers.get("x-auto-response-suppress") == "All"
    assert headers.get("x-replyonce") == "auto-replied"
    assert stored["metadata"]["key1"]  # and ours by its intent id, whatever its From
