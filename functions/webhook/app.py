"""WebhookFunction: API Gateway (REST API, Lambda proxy) → verify → SQS.

Thin on purpose: Powertools wiring here, behaviour in ``replyonce.shell.webhook``.
Nylas waits for the 200, so the import path stays light: nothing is imported
or patched that the request does not use (``make bench`` measures it).
"""

from functools import cache

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from replyonce.exceptions import ConfigurationError
from replyonce.observability import logger, metrics
from replyonce.shell.webhook import WebhookEndpoint, unavailable


@cache
def endpoint() -> WebhookEndpoint:
    """Built on first use and kept for the container's life (clients and secret cache reused)."""
    return WebhookEndpoint.from_environment()


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@event_source(data_class=APIGatewayProxyEvent)
def lambda_handler(event: APIGatewayProxyEvent, context: LambdaContext) -> dict:
    try:
        webhook = endpoint()
    except ConfigurationError as failure:
        # A function that cannot start (e.g. NYLAS_SECRETS_ID unset) answers 503, as the README says;
        # nothing is cached, so the next invocation tries again once the configuration is fixed.
        return unavailable(failure).to_proxy()
    return webhook.handle(event).to_proxy()
