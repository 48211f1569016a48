"""The template's notification queue and event source as an SQS fair queue needs them (issue 42).

A standard queue (a FIFO queue would read ``MessageGroupId`` as an order to keep: one record of a
grant at a time, a flood's backlog blocking its own grant and nothing gained for the others), and
an event source that takes enough records at once for a flooding grant's share of them to stand out:
AWS detects a noisy tenant by its in-flight messages (more than 10% of them and at least 30 of its
own, ``devstack.fair_queue``), so with fewer than 30 in flight only the processing-time share is left
to detect it.
"""

from devstack.fair_queue import NOISY_MIN_IN_FLIGHT
from ops.template import load_template, sqs_event_source


def test_the_notification_queue_is_a_standard_queue():
    queue = load_template()["Resources"]["NotificationQueue"]["Properties"]
    assert "FifoQueue" not in queue
    assert "ContentBasedDeduplication" not in queue
    assert not queue.get("QueueName", "").endswith(".fifo")


def test_the_event_source_takes_enough_records_at_once_for_a_flood_to_be_detected():
    template = load_template()
    source = sqs_event_source(template)
    concurrency = template["Parameters"]["ReplierMaximumConcurrency"]
    in_flight = source["BatchSize"] * concurrency["Default"]
    assert in_flight >= NOISY_MIN_IN_FLIGHT, f"{in_flight} records in flight at the default concurrency"
