"""The bill per reply sent: each record attempt's path, and the bill's unit (issue 46)."""

import pytest

from bench import costs, per_reply
from bench.per_reply import COVERED, DUPLICATE, REPLY, RETRIED, Traffic
from bench.timeline import Attempt, Span

IDEMPOTENCY = "replyonce-idempotency"
STATE = "replyonce-state"


def _attempt(*spans: tuple[str, str, str, str], outcome: str = "replied", error: str = "") -> Attempt:
    attempt = Attempt("n1", 1, 0.0, 1.0, error=error, outcome=outcome)
    attempt.spans = [Span(service, op, 0.0, 0.1, table=table, error=err) for service, op, table, err in spans]
    return attempt


REFUSED = "ConditionalCheckFailedException"


@pytest.mark.parametrize(
    ("attempt", "path"),
    [
        # A first reply: its send went out.
        (
            _attempt(
                ("DynamoDB", "PutItem", IDEMPOTENCY, ""),
                ("DynamoDB", "UpdateItem", STATE, ""),
                ("Nylas", "send", "", ""),
            ),
            REPLY,
        ),
        # A redelivery: Powertools refuses the put and returns the first attempt's "replied".
        (_attempt(("DynamoDB", "PutItem", IDEMPOTENCY, REFUSED)), DUPLICATE),
        # A burst message the holder's reply covered: its ledger entry says so, nothing sent.
        (
            _attempt(
                ("DynamoDB", "PutItem", IDEMPOTENCY, ""),
                ("DynamoDB", "GetItem", STATE, ""),
                ("DynamoDB", "UpdateItem", IDEMPOTENCY, ""),
                outcome="already_replied",
            ),
            COVERED,
        ),
        # A send refused by Nylas is no reply.
        (_attempt(("Nylas", "send", "", "503"), error="NylasTransientError"), RETRIED),
        # A busy thread: the record comes back.
        (
            _attempt(("DynamoDB", "UpdateItem", STATE, REFUSED), outcome="", error="ThreadBusyError"),
            RETRIED,
        ),
        # The baseline's attempts carry no spans: its "replied" is its send.
        (_attempt(), REPLY),
        (_attempt(outcome="skipped"), COVERED),
    ],
)
def test_each_attempt_is_charged_to_the_path_it_took(attempt, path):
    assert per_reply._path(attempt) == path


def test_writes_are_counted_per_path_and_table():
    class Mix:
        attempts = (
            _attempt(("DynamoDB", "PutItem", IDEMPOTENCY, REFUSED)),
            _attempt(
                ("DynamoDB", "PutItem", IDEMPOTENCY, ""),
                ("DynamoDB", "UpdateItem", STATE, REFUSED),
                ("DynamoDB", "DeleteItem", IDEMPOTENCY, ""),
                ("sqs", "ChangeMessageVisibility", "", ""),
                error="ThreadBusyError",
            ),
        )

    counted = per_reply.attempt_paths(Mix(), IDEMPOTENCY)  # type: ignore[arg-type]
    assert counted.attempts == {REPLY: 0, DUPLICATE: 1, COVERED: 0, RETRIED: 1}
    assert counted.writes[DUPLICATE] == {"idempotency": 1}
    assert counted.writes[RETRIED] == {"idempotency": 2, "state": 1}
    assert counted.sqs[RETRIED] == 1


def _traffic(**changes: float) -> Traffic:
    base = dict(
        notifications=115,
        replies=80,
        invocations=115,
        billed_ms=115 * 9000.0,
        wru=1800.0,
        rru=80.0,
        function_sqs=80.0,
        log_bytes=115 * 3000.0,
        echo_ms=17.0,
        echo_wru=2.0,
        echo_log_bytes=2000.0,
    )
    return Traffic(**{**base, **changes})  # type: ignore[arg-type]


MEMORY = {"webhook": 256, "function": 256}


def test_the_bill_is_over_the_replies_sent_not_the_notifications():
    fewer = per_reply.lines(_traffic(), webhook_ms=20.0, memory=MEMORY)
    one_each = per_reply.lines(_traffic(replies=115), webhook_ms=20.0, memory=MEMORY)
    # The same traffic's compute over 80 replies instead of 115: 115/80 times as much per reply.
    assert fewer["Lambda GB-s, function"] == pytest.approx(one_each["Lambda GB-s, function"] * 115 / 80)
    # 9 s billed per notification at 256 MB, over 80 replies of 115 notifications.
    assert fewer["Lambda GB-s, function"] == pytest.approx(
        115 * 9.0 * 0.25 * costs.price("lambda_gb_s") / 80 * 1e6
    )
    # The echo does not depend on how many replies there were: one notification per reply.
    echo = "the echo (its message.created, skipped)"
    assert fewer[echo] == pytest.approx(one_each[echo])
    assert fewer[echo] > costs.price("api_rest")


def test_the_per_notification_figure_leaves_the_echo_out():
    traffic = _traffic()
    bill = per_reply.lines(traffic, webhook_ms=20.0, memory=MEMORY)
    echo = bill["the echo (its message.created, skipped)"]
    assert per_reply.per_notification(traffic, bill) == pytest.approx((sum(bill.values()) - echo) * 80 / 115)


def test_the_agents_draft_is_filed_for_the_copy_the_replier_hands_its_agent():
    from types import SimpleNamespace

    from bench.latency import LatencyModel
    from bench.slow_agent import SlowAgent

    agent = SlowAgent(lambda conversation: "no reply", LatencyModel(scale=0.0))
    target = SimpleNamespace(id="m1", subject="Order 1 #e1p0")
    asked = SimpleNamespace(target=target)
    copy = SimpleNamespace(target=target)  # the replier's readable() copy: another object, the same target
    assert agent(copy) == "no reply"
    span = agent.take_span(asked)
    assert span is not None
    assert span.operation == "draft"
