"""ReplierFunction: SQS batch → one reply per inbound message.

Thin on purpose: Powertools wiring here, behaviour in ``replyonce.consumer``
and ``replyonce.replier``.
"""

from functools import cache

from aws_lambda_powertools.utilities.typing import LambdaContext

from replyonce.consumer import NotificationConsumer
from replyonce.observability import build_tracer, logger, metrics

# Every library X-Ray supports is patched: botocore (DynamoDB, SQS, Secrets Manager) and requests,
# so each Nylas call is a subsegment of the trace.
tracer = build_tracer()


@cache
def consumer() -> NotificationConsumer:
    """Built on first use and kept for the container's life (clients, grant cache, secret cache)."""
    return NotificationConsumer.from_environment()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return consumer().handle_batch(event, context)
