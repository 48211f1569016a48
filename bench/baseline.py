"""The pipeline without exactly once: webhook -> queue -> function -> send, and nothing else.

What a team would build first, and what ReplyOnce's bill is set against
(``docs/performance.md`` leads with the ratio): the same webhook in front of
the same queue, then a function that, for each record, skips mail the agent
sent itself (its folders say ``sent``), takes the agent's time for the
message (``bench.slow_agent.think``: the same draws as ReplyOnce's agent,
keyed by the message), and sends one reply through Nylas. No state, no
lease, no idempotency record, no thread read: when Nylas delivers a
notification twice it sends twice, and each message of a burst gets a reply
of its own.

It runs where ReplyOnce's replier runs: through ``bench.event_source`` at the
same batching, behind the same latency proxy (``bench.latency``), on the
same seeded mix (``bench.time_to_reply.run_mix``) and the same saturation
round (``bench.real_latency.saturate``).
"""

import json
import math
import os
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import boto3
import requests

from bench import slow_agent
from bench.latency import LatencyModel
from bench.stack import parts
from bench.timeline import Attempt
from devstack.events import envelope, sqs_event

if TYPE_CHECKING:
    from devstack.stack import LocalStack

_KEY_SECRET = "NYLAS_API_KEY_SECRET_ID"  # noqa: S105 - the variable's name, as the replier has it
# A queued Agent Account send answers after up to 23 s (``bench.latency``): the function waits for it.
SEND_TIMEOUT_SECONDS = 60.0


class BaselineContainers:
    """New baseline containers for ``bench.event_source`` (``make_container``), and their attempts.

    Shaped like ``bench.timeline.Recorder`` where ``run_mix`` uses one: ``container()`` and
    ``attempts`` (one per record, without spans: nothing here is worth timing apart).
    """

    def __init__(self, model: LatencyModel) -> None:
        self.model = model
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()
        self._numbers = iter(range(1, 1_000_000))

    def container(self) -> tuple[int, Callable[[dict[str, Any], Any], dict[str, Any]]]:
        """A cold container: the API key read once, one HTTP session; a batch's records at once."""
        number = next(self._numbers)
        secret = boto3.client("secretsmanager").get_secret_value(SecretId=os.environ[_KEY_SECRET])
        api_key = json.loads(secret["SecretString"])["api_key"]
        base = os.environ["NYLAS_API_URI"].rstrip("/")
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {api_key}"

        def record(body: str) -> str:
            notification = json.loads(body)
            message = notification["data"]["object"]
            if notification["type"] != "message.created" or "sent" in message.get("folders", []):
                return "skipped"
            prose = slow_agent.think(self.model, str(message.get("subject") or ""), str(message["id"]))
            sender = message["from"][0]
            response = http.post(
                f"{base}/v3/grants/{message['grant_id']}/messages/send",
                json={
                    "to": [sender],
                    "subject": f"Re: {message.get('subject') or ''}",
                    "body": f"<p>Thank you for your message.</p><p>{prose}</p>",
                    "reply_to_message_id": message["id"],
                },
                timeout=SEND_TIMEOUT_SECONDS,
            )
            response.raise_for_status()
            return "replied"

        def handler(event: dict[str, Any], _context: Any) -> dict[str, Any]:
            def one(item: dict[str, Any]) -> str | None:
                attempt = Attempt(json.loads(item["body"])["id"], number, time.time())
                try:
                    attempt.outcome = record(item["body"])
                    return None
                except Exception as exc:  # the record goes back to the queue, as a partial batch failure
                    attempt.error = type(exc).__name__
                    return str(item["messageId"])
                finally:
                    attempt.ended = time.time()
                    with self._lock:
                        self.attempts.append(attempt)

            records = event["Records"]
            with ThreadPoolExecutor(max_workers=max(1, len(records))) as pool:
                failed = [i for i in pool.map(one, records) if i is not None]
            return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

        return number, handler


def echo_ms(stack: "LocalStack", containers: BaselineContainers, repeats: int = 5) -> float:
    """The baseline function's billed ms for an echo (a sent message's ``message.created``), skipped."""
    resources, nylas = parts(stack)
    sent = nylas.sent_messages()
    if not sent:
        return 0.0
    _, handler = containers.container()
    event = sqs_event([envelope(sent[-1])], queue_arn=resources.queue_arns["NotificationQueue"])
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        handler(event, None)
        times.append(math.ceil((time.perf_counter() - started) * 1000))
    return float(statistics.median(times))
