"""One grant's ``429`` never slows another grant (issue 42, "Fair to every mailbox"): the real replier
against the Nylas emulator with two grants, counted at the emulator (requests and sends), never timed.

Grant A's send is answered ``429`` with ``Retry-After: 30``. In the same container, A's next records
ask Nylas nothing until the 30 s are up (each is deferred for the time left, as the ``429`` itself
was), while grant B's records in the same batch send at once. A replier without the per-grant hold
sends A's every record into the ``429``; one that held every grant would leave B's replies unsent.
"""

import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from devstack.nylas import Fault
from tests.replier_harness import deferrals, inbound, new_container

GRANT_B = "grant-agent-b"
SENDS_A = rf"^/v3/grants/{AGENT_GRANT_ID}/messages/send$"


@pytest.fixture
def two_grants(nylas, monkeypatch):
    nylas.add_grant(GRANT_B, "brand-b@replyonce.example", name="Brand B")
    monkeypatch.setenv("AGENT_GRANT_IDS", f"{AGENT_GRANT_ID},{GRANT_B}")
    return nylas


def _sends(nylas, grant_id: str) -> int:
    return nylas.count("POST", f"/v3/grants/{grant_id}/messages/send")


def _answered(nylas, messages: list[dict]) -> set[str]:
    ids = {m["id"] for m in messages}
    return {s.payload["reply_to_message_id"] for s in nylas.sends} & ids


def test_a_throttled_grant_waits_out_its_retry_after_while_another_grant_replies(
    pipeline, two_grants, log_records
):
    nylas = two_grants
    nylas.inject("POST", SENDS_A, Fault.status(429, headers={"Retry-After": "30"}), times=1)
    first_a = inbound(nylas, subject="Order 1", from_email="ann@example.com")
    pipeline.deliver(envelope(first_a))
    poller = pipeline.poller()
    assert poller.poll_once(wait_seconds=1).failed == 1
    assert _sends(nylas, AGENT_GRANT_ID) == 1  # answered 429: nothing sent

    later_a = [inbound(nylas, subject=f"Order {n}", from_email=f"a{n}@example.com") for n in (2, 3)]
    of_b = [
        nylas.deliver_inbound(GRANT_B, from_email=f"b{n}@example.com", subject=f"Ticket {n}", body="Hi")
        for n in (1, 2, 3)
    ]
    for message in later_a + of_b:
        pipeline.deliver(envelope(message))
    while poller.poll_once(wait_seconds=1).received:
        if not pipeline.in_flight():
            break
        if _answered(nylas, of_b) == {m["id"] for m in of_b} and _sends(nylas, AGENT_GRANT_ID) == 1:
            break

    # B: every record sent at once, one send each, none deferred.
    assert _sends(nylas, GRANT_B) == 3
    assert _answered(nylas, of_b) == {m["id"] for m in of_b}
    # A: its later records asked Nylas nothing within the Retry-After; each was deferred as rate limited.
    assert _sends(nylas, AGENT_GRANT_ID) == 1
    assert _answered(nylas, [first_a, *later_a]) == set()
    assert set(deferrals(log_records)) == {"rate_limited"}
    assert len(deferrals(log_records)) >= 3

    # Nothing of A's is lost: another container (no hold of its own) sends each once.
    pipeline.drain(handler=new_container().handle_batch)
    assert _answered(nylas, [first_a, *later_a]) == {m["id"] for m in [first_a, *later_a]}
    assert _sends(nylas, AGENT_GRANT_ID) == 1 + 3
