"""ReplierFunction: SQS batch → at most one reply per inbound message.

Thin on purpose: Powertools wiring here, behaviour in ``replyonce.shell.consumer``
(the batch), ``replyonce.shell.replier`` (the shell) and ``replyonce.core`` (the rules).
"""

from functools import cache
from pathlib import Path

from aws_lambda_powertools.utilities.typing import LambdaContext

from replyonce.exceptions import ConfigurationError
from replyonce.observability import count_by, logger, metrics
from replyonce.reasons import DeferReason
from replyonce.shell.consumer import NotificationConsumer


@cache
def consumer() -> NotificationConsumer:
    """Built on first use and kept for the container's life (clients, agent, grant and secret caches).

    ``REPLY_AGENT=module:function`` is looked for in this function's directory first, as Lambda does
    (``/var/task``), so the local stack finds the same modules.
    """
    return NotificationConsumer.from_environment(agent_path=Path(__file__).parent)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    try:
        replier = consumer()
    except ConfigurationError as failure:
        # One clear line, and every record back to the queue: a configuration error must never read as a
        # skip. Nothing is cached, so the next invocation tries again once the configuration is fixed.
        logger.error(
            "replier cannot start: configuration error; every record goes back to the queue",
            extra={"reason": DeferReason.CONFIGURATION.value, "detail": str(failure)},
        )
        count_by("RecordDeferred", "reason", DeferReason.CONFIGURATION.value)
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event.get("Records", [])]}
    return replier.handle_batch(event, context)
