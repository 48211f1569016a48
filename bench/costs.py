"""Cost per million notifications on AWS list prices, from counted requests and measured durations.

Nothing here is measured: it combines what the other benchmarks counted and
timed with published prices. Prices are us-east-1 list prices as of
``PRICES.as_of``, without free tiers; re-check them on the AWS pricing pages
before relying on the figures.
"""

import math
from dataclasses import dataclass

from devstack.counting import Tally
from devstack.template import load_template, sqs_event_source

SQS_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Prices:
    """USD list prices, us-east-1."""

    as_of: str
    api_gateway_rest_per_million: float  # first 333 M requests a month
    lambda_arm64_per_gb_second: float
    lambda_per_million_requests: float
    sqs_standard_per_million: float  # per 64 KB chunk of a request, after the first million
    dynamodb_per_million_wru: float  # on-demand, after the November 2024 price cut
    dynamodb_per_million_rru: float
    secrets_manager_per_10k_calls: float
    secrets_manager_per_secret_month: float
    sources: tuple[str, ...]


PRICES = Prices(
    as_of="2026-11-30",
    api_gateway_rest_per_million=3.50,
    lambda_arm64_per_gb_second=0.0000133334,
    lambda_per_million_requests=0.20,
    sqs_standard_per_million=0.40,
    dynamodb_per_million_wru=0.625,
    dynamodb_per_million_rru=0.125,
    secrets_manager_per_10k_calls=0.05,
    secrets_manager_per_secret_month=0.40,
    sources=(
        "https://aws.amazon.com/api-gateway/pricing/",
        "https://aws.amazon.com/lambda/pricing/",
        "https://aws.amazon.com/sqs/pricing/",
        "https://aws.amazon.com/dynamodb/pricing/on-demand/",
        "https://aws.amazon.com/secrets-manager/pricing/",
    ),
)

# Secrets Manager traffic is per container, not per notification: a warm container
# re-reads the secret once every SECRETS_MAX_AGE_SECONDS while it has traffic.
MONTH_SECONDS = 30 * 24 * 3600


@dataclass(frozen=True)
class Inputs:
    """What the cost model needs from the measurements."""

    webhook_ms: float  # warm handler p50
    replier_ms: dict[str, float]  # path -> billed handler ms per notification
    replier_tallies: dict[str, Tally]  # path -> the function's requests per notification
    invocations_per_notification: float  # replier, at the template's batch size
    esm_sqs_per_notification: float  # the event source mapping's receive + delete
    largest_item_bytes: int
    message_bytes: int  # the queued notification, for SQS's 64 KB chunks


@dataclass(frozen=True)
class PathCost:
    """USD per million notifications that take one path, by line item."""

    path: str
    lines: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.lines.values())


def memory_gb() -> float:
    """The functions' ``MemorySize`` from template.yaml (Globals), in GB as Lambda bills it."""
    return float(load_template()["Globals"]["Function"]["MemorySize"]) / 1024


def batch_size() -> int:
    """The replier's SQS event source ``BatchSize`` from template.yaml."""
    return int(sqs_event_source(load_template())["BatchSize"])


def outbox_per_million(inputs: Inputs, prices: Prices = PRICES) -> float:
    """USD per million first replies for the outbox's one write (the intent stored before the send)."""
    per_write = max(1, math.ceil(inputs.largest_item_bytes / 1024))
    return per_write * prices.dynamodb_per_million_wru


def secrets_max_age_seconds() -> int:
    variables = load_template()["Globals"]["Function"]["Environment"]["Variables"]
    return int(variables["SECRETS_MAX_AGE_SECONDS"])


def _gb_seconds(milliseconds: float) -> float:
    """Lambda bills each invocation rounded up to the millisecond."""
    return math.ceil(milliseconds) / 1000 * memory_gb()


def dynamodb_units(tally: Tally, largest_item_bytes: int) -> tuple[float, float]:
    """(WRU, RRU) of one notification's DynamoDB requests.

    Writes cost 1 WRU per KB of the largest item version touched (a failed
    conditional write too); a transaction 2 WRU per item per KB — one ledger
    entry and the thread item for a single-message reply; a strongly
    consistent read 1 RRU per 4 KB (a miss still costs the minimum).
    """
    per_write = max(1, math.ceil(largest_item_bytes / 1024))
    per_read = max(1, math.ceil(largest_item_bytes / 4096))
    wru = rru = 0.0
    for operation, count in tally.operations("dynamodb").items():
        if operation == "GetItem":
            rru += count * per_read
        elif operation == "TransactWriteItems":
            wru += count * 2 * 2 * per_write
        else:
            wru += count * per_write
    return wru, rru


def webhook_lines(inputs: Inputs, prices: Prices = PRICES) -> dict[str, float]:
    """The webhook's share: every notification pays it, whatever the replier does."""
    chunks = max(1, math.ceil(inputs.message_bytes / SQS_CHUNK_BYTES))
    return {
        "API Gateway (REST)": prices.api_gateway_rest_per_million,
        "Lambda requests (webhook)": prices.lambda_per_million_requests,
        "Lambda GB-s (webhook)": _gb_seconds(inputs.webhook_ms) * prices.lambda_arm64_per_gb_second * 1e6,
        "SQS SendMessage": chunks * prices.sqs_standard_per_million,
    }


def replier_lines(inputs: Inputs, path: str, prices: Prices = PRICES) -> dict[str, float]:
    """The replier's share for one path, at the template's batch size."""
    tally = inputs.replier_tallies[path]
    wru, rru = dynamodb_units(tally, inputs.largest_item_bytes)
    function_sqs = tally.service("sqs")  # ChangeMessageVisibility of a busy thread
    return {
        "Lambda requests (replier)": inputs.invocations_per_notification * prices.lambda_per_million_requests,
        "Lambda GB-s (replier)": _gb_seconds(inputs.replier_ms[path])
        * prices.lambda_arm64_per_gb_second
        * 1e6,
        "SQS receive + delete (event source)": inputs.esm_sqs_per_notification
        * prices.sqs_standard_per_million,
        "SQS (function)": function_sqs * prices.sqs_standard_per_million,
        "DynamoDB writes": wru * prices.dynamodb_per_million_wru,
        "DynamoDB reads": rru * prices.dynamodb_per_million_rru,
    }


def path_cost(inputs: Inputs, path: str, prices: Prices = PRICES) -> PathCost:
    return PathCost(path, {**webhook_lines(inputs, prices), **replier_lines(inputs, path, prices)})


def secrets_per_million(notifications_per_month: float = 1e6, prices: Prices = PRICES) -> float:
    """Secrets Manager calls per million notifications when each function keeps one warm container.

    Each container reads the secret once per cache age while it has traffic,
    so the cost is per container-hour, not per notification: at 1 M a month
    (one notification every 2.6 s) one container per function stays warm.
    """
    calls = 2 * MONTH_SECONDS / secrets_max_age_seconds()
    return calls / 10_000 * prices.secrets_manager_per_10k_calls * (1e6 / notifications_per_month)


def per_100ms_of_waiting(prices: Prices = PRICES) -> float:
    """USD per million notifications for every 100 ms a replier invocation waits (on Nylas, DynamoDB)."""
    return 0.1 * memory_gb() * prices.lambda_arm64_per_gb_second * 1e6
