"""Capacity facts of the template: the record budget sizes the timeouts, batches, throttles, concurrency.

Why tests: each of these numbers is derived from another one (a record's budget, the expected peak,
the account's quota), and the derivation is what breaks silently — a send timeout raised without the
function's ``Timeout``, a batch size raised without the visibility, a reservation Lambda would
refuse. ``docs/performance.md`` ("Batch concurrency", "Scale on paper") says where the figures come
from; these tests read ``template.yaml`` and the product's own settings, never a measured time.
"""

import math

import pytest

from ops.errors import ConfigurationError
from ops.preflight import LAMBDA_UNRESERVED_MINIMUM, check_concurrency
from ops.template import load_template, sqs_event_source
from replyonce.config import ReplierSettings
from replyonce.policy import policy_of
from replyonce.shell.consumer import MAX_THREADS_AT_ONCE

# Slack in the function's Timeout beyond the batch's record budgets: the invocation's own work before
# the first record (parsing, registering the context). More would only delay a hung invocation's end.
INVOCATION_SLACK_SECONDS = (5, 30)
# AWS, for SQS event sources: "set the source queue's visibility timeout to at least six times the
# timeout that you configure on your function", plus the batching window.
VISIBILITY_PER_TIMEOUT = 6
# The scale model of docs/performance.md: 10 M notifications a day, the peak hour at 3x the average.
TARGET_PER_DAY = 10_000_000
PEAK_FACTOR = 3


def _replier() -> dict:
    return load_template()["Resources"]["ReplierFunction"]["Properties"]


def record_budget_seconds() -> float:
    """One record's budget, as the product computes it from the template's variables.

    Why the product's own property: a change to what a record needs (the agent's timeout, the send
    timeout, the lease wait) asks for a longer ``Timeout`` without this test being edited. A
    variable set from a number parameter counts at the parameter's ``MaxValue``: the largest value
    an operator may deploy must still fit.
    """
    parameters = load_template()["Parameters"]
    variables = {}
    for name, value in _replier()["Environment"]["Variables"].items():
        if isinstance(value, str | int):
            variables[name] = str(value)
        elif isinstance(value, dict) and parameters.get(value.get("Ref", ""), {}).get("Type") == "Number":
            parameter = parameters[value["Ref"]]
            variables[name] = str(parameter.get("MaxValue", parameter["Default"]))
    settings = ReplierSettings.from_environment(
        {
            **variables,
            # The names the template fills with !Ref: any value will do for the budget.
            "QUEUE_URL": "q",
            "NYLAS_API_KEY_SECRET_ID": "s",
            "IDEMPOTENCY_TABLE": "i",
            "STATE_TABLE": "t",
            "AGENT_GRANT_IDS": "g",
        }
    )
    return policy_of(settings).record_budget_seconds


def test_the_replier_timeout_is_what_one_record_budget_needs():
    # A batch's threads run at once, each thread's first record with the whole budget; a later record
    # of a thread starts only if a whole budget is left (the deadline rule), else it is back at once.
    needed = record_budget_seconds()
    slack = _replier()["Timeout"] - needed
    low, high = INVOCATION_SLACK_SECONDS
    # Enough that the first record starts (the deadline rule wants a whole budget left), and no more
    # than the invocation's own work: a longer Timeout only makes a hung invocation hold on longer.
    assert low <= slack <= high, f"Timeout {_replier()['Timeout']} s for a {needed:g} s record budget"


def test_the_queue_visibility_is_six_replier_timeouts_plus_the_batching_window():
    template = load_template()
    source = sqs_event_source(template)
    visibility = template["Resources"]["NotificationQueue"]["Properties"]["VisibilityTimeout"]
    expected = VISIBILITY_PER_TIMEOUT * _replier()["Timeout"] + source["MaximumBatchingWindowInSeconds"]
    # Exactly: less breaks AWS's guidance (a throttled batch's retry), more holds a crashed
    # invocation's records back longer than the retry needs.
    assert visibility == expected


def test_a_batch_holds_no_more_threads_than_the_consumer_runs_at_once_and_no_window():
    # Each thread of a batch gets a worker at once (docs/performance.md, "Batch concurrency"): a batch
    # larger than the pool would make its last threads wait for the first ones; a window holds every
    # lone record.
    source = sqs_event_source(load_template())
    assert 1 < source["BatchSize"] <= MAX_THREADS_AT_ONCE
    assert source["MaximumBatchingWindowInSeconds"] == 0
    assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_the_replier_memory_is_set_on_the_function_and_smaller_than_the_webhooks():
    template = load_template()
    # The replier waits on Nylas and the agent: GB-s at real latency is most of its bill, and its
    # measured peak memory is far below 256 MB. The webhook keeps the global size: CPU on the ack path.
    assert _replier()["MemorySize"] == 256
    assert "MemorySize" not in template["Resources"]["WebhookFunction"]["Properties"]
    assert template["Globals"]["Function"]["MemorySize"] == 512


def _peak_per_second() -> float:
    return TARGET_PER_DAY / 86_400 * PEAK_FACTOR


def test_the_stage_throttle_defaults_are_at_least_twice_the_expected_peak():
    parameters = load_template()["Parameters"]
    rate = parameters["WebhookThrottleRate"]["Default"]
    burst = parameters["WebhookThrottleBurst"]["Default"]
    assert rate >= 2 * _peak_per_second()
    assert burst >= 2 * _peak_per_second()
    # Inside API Gateway's regional account limits (10,000 requests/s, burst 5,000).
    assert rate <= parameters["WebhookThrottleRate"]["MaxValue"] <= 10_000
    assert burst <= parameters["WebhookThrottleBurst"]["MaxValue"] <= 5_000
    [setting] = load_template()["Resources"]["WebhookApi"]["Properties"]["MethodSettings"]
    assert setting["ThrottlingRateLimit"] == {"Ref": "WebhookThrottleRate"}
    assert setting["ThrottlingBurstLimit"] == {"Ref": "WebhookThrottleBurst"}


# A warm webhook request with its SQS send, generously (measured on loopback: ~9 ms p50, ~14 ms p99).
WEBHOOK_SECONDS_PER_REQUEST = 0.05


def test_the_webhook_reserves_a_small_pool_that_holds_the_stage_rate():
    parameters = load_template()["Parameters"]
    reserved = parameters["WebhookReservedConcurrency"]["Default"]
    needed = math.ceil(parameters["WebhookThrottleRate"]["Default"] * WEBHOOK_SECONDS_PER_REQUEST)
    # Enough for the stage's whole rate (a flood beyond it is answered 429 before any function runs),
    # small beside a default account quota of 1,000.
    assert needed <= reserved <= 100
    function = load_template()["Resources"]["WebhookFunction"]["Properties"]
    assert function["ReservedConcurrentExecutions"]["Fn::If"][0] == "HasWebhookReservedConcurrency"


# ---- make deploy's concurrency check (ops/preflight.py) ------------------------------------------------


def _check(unreserved: int, *, reserved: int, maximum: int) -> None:
    check_concurrency(unreserved, unreserved, "eu-west-1", reserved=reserved, maximum=maximum)


def test_a_default_account_holds_the_defaults_and_what_ten_million_a_day_needs():
    parameters = load_template()["Parameters"]
    reserved = parameters["WebhookReservedConcurrency"]["Default"]
    _check(1000, reserved=reserved, maximum=parameters["ReplierMaximumConcurrency"]["Default"])
    # Everything but the webhook's reservation is the replier's to use: 950 of a default 1,000.
    _check(1000, reserved=reserved, maximum=1000 - reserved)
    with pytest.raises(ConfigurationError, match=f"ReplierMaximumConcurrency={1000 - reserved}"):
        _check(1000, reserved=reserved, maximum=1000 - reserved + 1)


def test_a_reservation_must_leave_lambdas_unreserved_minimum():
    _check(150, reserved=50, maximum=5)
    with pytest.raises(ConfigurationError, match="WebhookReservedConcurrency=0"):
        _check(149, reserved=50, maximum=5)
    assert LAMBDA_UNRESERVED_MINIMUM == 100


def test_without_a_reservation_the_replier_may_take_half_of_the_pool_it_shares():
    _check(10, reserved=0, maximum=5)
    with pytest.raises(ConfigurationError, match="ReplierMaximumConcurrency=5 in samconfig"):
        _check(10, reserved=0, maximum=6)
