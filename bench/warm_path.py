"""Webhook warm path: time per request of the real handler beside the unavoidable work, in one run.

The baseline does only what any correct endpoint must do per request: an HMAC
over the same bytes (and its constant-time comparison) and one SQS
``SendMessage`` with a raw boto3 client. The two are interleaved request by
request against the same moto server, so drift and background load hit both
alike. On moto both are dominated by the loopback HTTP round trip to the
embedded SQS; the ratio is what carries over to AWS, not the milliseconds.
"""

import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from bench.stack import muted, scratch_queue
from bench.stats import Spread, percentile
from devstack.containers import load_handler
from devstack.counting import function_timeout
from devstack.events import encode, message_created, signed_post
from devstack.lambda_context import LocalLambdaContext
from devstack.stack import LocalStack
from devstack.template import LOCAL_WEBHOOK_SECRET
from replyonce.shell.webhook import WebhookEndpoint


@dataclass(frozen=True)
class Round:
    """Per-request seconds of one round, for each contender."""

    handler: list[float]
    handle: list[float]
    baseline: list[float]


@dataclass(frozen=True)
class WarmPathResult:
    """p50 and p99 (ms) of each contender, as min/median/max over rounds."""

    iterations: int
    rounds: int
    body_bytes: int
    handler_p50: Spread
    handler_p99: Spread
    handle_p50: Spread
    handle_p99: Spread
    baseline_p50: Spread
    baseline_p99: Spread


def _timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _baseline(sqs: Any, queue_url: str, raw: bytes, signature: str) -> Callable[[], None]:
    """The unavoidable work: verify the HMAC over the exact bytes, send them to SQS."""
    secret = LOCAL_WEBHOOK_SECRET.encode()
    text = raw.decode()

    def run() -> None:
        expected = hmac.new(secret, raw, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signature):
            raise AssertionError("baseline signature mismatch")
        sqs.send_message(QueueUrl=queue_url, MessageBody=text)

    return run


def _one_round(queue_url: str, iterations: int, warmup: int) -> Round:
    """A fresh container of each contender, warmed, then ``iterations`` interleaved requests."""
    raw = encode(message_created())
    # As API Gateway hands it over with BinaryMediaTypes */*: base64 of the exact bytes.
    event = signed_post(raw, base64_encoded=True)
    handler = load_handler("WebhookFunction")
    timeout = function_timeout("WebhookFunction")
    endpoint = WebhookEndpoint.from_environment()
    baseline = _baseline(boto3.client("sqs"), queue_url, raw, event["headers"]["X-Nylas-Signature"])

    def invoke() -> None:
        context = LocalLambdaContext("WebhookFunction", timeout_seconds=timeout)
        response = handler(event, context)
        if response["statusCode"] != 200:
            raise AssertionError(f"webhook answered {response['statusCode']}")

    proxy_event = APIGatewayProxyEvent(event)

    def handle() -> None:
        if endpoint.handle(proxy_event).status != 200:
            raise AssertionError("endpoint did not accept the notification")

    contenders = (invoke, handle, baseline)
    for _ in range(warmup):
        for contender in contenders:
            contender()
    samples: tuple[list[float], ...] = ([], [], [])
    for _ in range(iterations):
        for contender, times in zip(contenders, samples, strict=True):
            times.append(_timed(contender))
    return Round(*samples)


def measure(stack: LocalStack, *, iterations: int, rounds: int, warmup: int = 50) -> WarmPathResult:
    """Run ``rounds`` rounds; report each contender's p50 and p99 in milliseconds."""
    results = []
    with muted():
        for _ in range(rounds):
            with scratch_queue(stack) as queue_url:
                results.append(_one_round(queue_url, iterations, warmup))

    def spread(pick: Callable[[Round], list[float]], fraction: float) -> Spread:
        return Spread.of([percentile(pick(r), fraction) * 1000 for r in results])

    return WarmPathResult(
        iterations=iterations,
        rounds=rounds,
        body_bytes=len(encode(message_created())),
        handler_p50=spread(lambda r: r.handler, 0.50),
        handler_p99=spread(lambda r: r.handler, 0.99),
        handle_p50=spread(lambda r: r.handle, 0.50),
        handle_p99=spread(lambda r: r.handle, 0.99),
        baseline_p50=spread(lambda r: r.baseline, 0.50),
        baseline_p99=spread(lambda r: r.baseline, 0.99),
    )
