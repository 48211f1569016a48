"""The local stack's model of SQS fair queues (``devstack.fair_queue``): its two rules, and the embedded
AWS delivering by them over the wire.

The rules are AWS's, as its developer guide states them ("How Amazon SQS fair queues work"): a tenant
is noisy with more than 10% of the in-flight messages and at least 30 of its own; quiet tenants'
messages are delivered first; noisy tenants by fewest in flight. The over-the-wire test runs the same
flood once with the model and once in moto's own order (``arrival_order``): the quiet grants' records
come first only with the model, so the test would catch a model that did nothing.
"""

import uuid

import boto3
import pytest

from devstack.fair_queue import NOISY_MIN_IN_FLIGHT, arrival_order, delivery_order, noisy_groups

NOISY_CASES = [
    # (previous, in flight, waiting, noisy now, why)
    (set(), {}, {"f": 100}, set(), "nothing in flight: nobody is noisy"),
    (set(), {"f": 30, "q": 1}, {"f": 5}, {"f"}, "over 10% and 30 in flight"),
    (set(), {"f": 29, "q": 1}, {"f": 5}, set(), "29 in flight: under AWS's floor of 30"),
    (set(), {"f": 30, **{f"q{i}": 1 for i in range(300)}}, {}, set(), "30 of 330 is under 10%"),
    ({"f"}, {"f": 10, "q": 5}, {"f": 3}, {"f"}, "still over 10% with a backlog: stays noisy"),
    ({"f"}, {"f": 10, "q": 5}, {}, set(), "backlog drained: quiet again"),
    ({"f"}, {"f": 1, **{f"q{i}": 1 for i in range(20)}}, {"f": 9}, set(), "share fell to 5%: quiet"),
    (set(), {"f": 40, "g": 40}, {"f": 1, "g": 1}, {"f", "g"}, "two floods: both noisy"),
]


@pytest.mark.parametrize(("previous", "in_flight", "waiting", "expected", "why"), NOISY_CASES)
def test_a_tenant_is_noisy_by_its_share_of_the_in_flight_messages(
    previous, in_flight, waiting, expected, why
):
    assert noisy_groups(frozenset(previous), in_flight, waiting) == frozenset(expected), why


ORDER_CASES = [
    # (groups of the visible messages, oldest first; in flight; noisy; expected order; why)
    (["f", "f", "a", "b"], {"f": 40}, set(), [0, 1, 2, 3], "nobody noisy: oldest first"),
    (["f", "f", "a", "f", "b"], {"f": 40}, {"f"}, [2, 4, 0, 1, 3], "quiet first, then the flood in order"),
    ([None, "f", None], {"f": 40}, {"f"}, [0, 2, 1], "a message without a group is quiet"),
    (["f", "f", "g", "g"], {"f": 40, "g": 30}, {"f", "g"}, [2, 3, 0, 1], "fewest in flight first"),
    (["f", "g", "f", "g"], {"f": 31, "g": 30}, {"f", "g"}, [1, 0, 3, 2], "a receive spreads across floods"),
]


@pytest.mark.parametrize(("groups", "in_flight", "noisy", "expected", "why"), ORDER_CASES)
def test_quiet_tenants_are_delivered_first(groups, in_flight, noisy, expected, why):
    assert delivery_order(groups, in_flight, frozenset(noisy)) == expected, why


FLOOD, QUIET = 60, 8


def _flooded_queue(sqs) -> str:
    """A standard queue holding a flood of one grant, then one message of each of eight quiet grants."""
    url = sqs.create_queue(QueueName=f"fair-{uuid.uuid4().hex[:12]}")["QueueUrl"]
    for start in range(0, FLOOD, 10):
        sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(n), "MessageBody": f"flood {n}", "MessageGroupId": "grant-flooding"}
                for n in range(start, start + 10)
            ],
        )
    sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": str(n), "MessageBody": f"quiet {n}", "MessageGroupId": f"grant-quiet-{n}"}
            for n in range(QUIET)
        ],
    )
    return url


def _next_receives(sqs, url: str) -> list[str]:
    """Take 30 records in flight (three batches of the consumer), then what the next batch holds."""
    for _ in range(NOISY_MIN_IN_FLIGHT // 10):
        sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300)
    return [
        m["Body"]
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300)["Messages"]
    ]


def test_the_embedded_sqs_hands_quiet_grants_records_out_before_a_flood_s_backlog(moto_endpoint):
    sqs = boto3.client("sqs")
    fair = _next_receives(sqs, _flooded_queue(sqs))
    # 30 of the flood in flight (all of them, and AWS's floor): the next batch is the eight quiet
    # grants' first, then the flood's backlog in its order.
    assert fair[:QUIET] == [f"quiet {n}" for n in range(QUIET)]
    assert fair[QUIET:] == ["flood 30", "flood 31"]

    with arrival_order():
        unfair = _next_receives(sqs, _flooded_queue(sqs))
    # moto's own order, as a queue without fairness: the flood's backlog first, the quiet grants wait.
    assert unfair == [f"flood {n}" for n in range(30, 40)]
