"""A batch's threads at once, each thread's records in order, behind the real handler.

The template gives the replier batches of 10 with no window (``docs/performance.md``, "Batch
concurrency"); ``replyonce.shell.consumer`` runs a batch's threads at once. Counted at the emulator: no
timing is asserted — a consumer that ran the batch one record after another cannot pass the first
test at any speed, since each send waits until the other thread's send has started.
"""

import threading

from devstack.events import envelope
from tests.replier_harness import deferrals, inbound, skip_reasons


def answers(nylas) -> list[str]:
    return sorted(s.payload["reply_to_message_id"] for s in nylas.sends)


def test_a_slow_send_on_one_thread_does_not_hold_another_threads_reply(pipeline, nylas):
    first = inbound(nylas, subject="Order 1042")
    second = inbound(nylas, subject="Order 1043", from_email="bob@example.com")
    # Each send is held until the other thread's send has started: only threads run at once get past.
    both_sending = threading.Barrier(2, timeout=30)
    nylas.on_send_started = lambda grant_id, payload: both_sending.wait()
    try:
        pipeline.deliver(envelope(first))
        pipeline.deliver(envelope(second))
        result = pipeline.poller().poll_once(wait_seconds=1)
    finally:
        nylas.on_send_started = None
    assert result.received == 2  # one batch
    assert answers(nylas) == sorted([first["id"], second["id"]])
    assert not both_sending.broken


def test_one_threads_records_run_in_queue_order_and_get_one_reply(pipeline, nylas, log_records):
    # On a thread whose item is in service (an earlier message answered, pending_confirm_seconds ago): a
    # brand-new thread item's burst would first wait that long (issue 48).
    earlier = inbound(nylas, subject="Order 1042")
    pipeline.deliver(envelope(earlier))
    pipeline.drain()
    nylas.advance_clock(700)
    first = inbound(nylas, thread_id=earlier["thread_id"], subject="Re: Order 1042")
    follow_up = inbound(
        nylas, thread_id=earlier["thread_id"], subject="Re: Order 1042", body="<p>Also...</p>"
    )
    pipeline.deliver(envelope(first))
    pipeline.deliver(envelope(follow_up))
    result = pipeline.poller().poll_once(wait_seconds=1)
    assert result.received == 2
    # In order, one after the other: the first record's reply covers the burst (to its newest), the
    # second finds it answered. Run beside each other, one would have met the other's lease.
    assert answers(nylas) == sorted([earlier["id"], follow_up["id"]])
    assert "already_replied" in skip_reasons(log_records)
    assert deferrals(log_records) == []


def test_each_records_log_lines_carry_its_own_ids(pipeline, nylas, log_records):
    messages = [inbound(nylas, subject=f"Order {n}", from_email=f"c{n}@example.com") for n in range(4)]
    notifications = [envelope(m) for m in messages]
    for notification in notifications:
        pipeline.deliver(notification)
    assert pipeline.poller().poll_once(wait_seconds=1).received == 4
    sent = {
        r["notification_id"]: r.get("message_id") for r in log_records() if r.get("message") == "reply sent"
    }
    # Four threads logged at once, each line with its own record's keys (thread-safe keys).
    assert set(sent) == {n["id"] for n in notifications}
