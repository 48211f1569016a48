"""WebhookFunction: API Gateway (REST API, Lambda proxy) → verify → SQS.

Thin on purpose: Powertools wiring here, behaviour in ``replyonce.webhook``.
"""

from functools import cache

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from replyonce.observability import logger, metrics, tracer
from replyonce.webhook import WebhookEndpoint


@cache
def endpoint() -> WebhookEndpoint:
    """Built on first use and kept for the container's life (clients and secret cache reused)."""
    return WebhookEndpoint.from_environment()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
@event_source(data_class=APIGatewayProxyEvent)
def lambda_handler(event: APIGatewayProxyEvent, context: LambdaContext) -> dict:
    return endpoint().handle(event).to_proxy()
