"""The local stack: embedded AWS, API Gateway and event source stand-ins, and Nylas — one process.

Everything listens on loopback. The handlers are the unchanged
``functions/*/app.py`` code; they reach the embedded AWS through
``AWS_ENDPOINT_URL`` and Nylas through ``NYLAS_API_URI``, as in Lambda.
"""

import importlib
import io
import json
import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import boto3
import requests
from moto.server import ThreadedMotoServer

from devstack.containers import load_handler, tune_container
from devstack.dead_letters import DeadLetterWatch
from devstack.embedded_aws import start_threaded_server
from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID
from devstack.gateway import ApiGatewayStandIn, ControlRoutes
from devstack.hints import redrive_command
from devstack.nylas import NylasEmulator
from devstack.nylas.mailbox import RECEIVING_AUTHSERV
from devstack.poller import EventSourcePoller
from devstack.template import (
    LOCAL_API_KEY,
    LOCAL_PREVIOUS_WEBHOOK_SECRET,
    LOCAL_WEBHOOK_SECRET,
    LocalResources,
    create_resources,
    put_in_service,
)
from devstack.webhook_sender import WebhookSender

# The local stack's AWS: fake credentials, no X-Ray daemon, one region.
_AWS_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_SESSION_TOKEN": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "POWERTOOLS_TRACE_DISABLED": "true",
}


LineEcho = Callable[[str, dict[str, Any] | None], None]


# The modules whose bare ``print()`` writes Powertools Metrics' EMF documents (3.37: the CloudWatch
# provider's flush and its 100-metric overflow in the first; ``single_metric`` in the second). A
# ``print`` in a module's own namespace is found before the builtin, so the documents reach the
# collector whatever ``sys.stdout`` is at that moment.
_EMF_PRINTING_MODULES = (
    "aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch",
    "aws_lambda_powertools.metrics.base",
)
_NOT_SET = object()


class LogCollector(io.TextIOBase):
    """A stream the handlers' JSON logs and metrics are written to; keeps them parsed.

    Why: the demo and the chaos harness judge the invariants from what the
    handlers logged (every skip has a reason code) and what Nylas saw.

    Parameters
    ----------
    echo:
        Also show each line: a stream gets the raw line, a callable (such as
        ``devstack.console.LogView``) gets the raw line and its parsed record
        (``None`` when the line is not JSON).
    """

    def __init__(self, echo: io.TextIOBase | TextIO | LineEcho | None = None) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._partial = ""
        self.records: list[dict[str, Any]] = []
        if echo is not None and not callable(echo):
            stream = echo
            echo = lambda raw, _record: stream.write(raw + "\n")  # noqa: E731
        self._echo: LineEcho | None = echo
        self._saved_stream: Any = None
        self._saved_printers: dict[str, Any] = {}

    def write(self, text: str) -> int:
        with self._lock:
            self._partial += text
            *lines, self._partial = self._partial.split("\n")
            for line in lines:
                record = None
                if line.startswith("{"):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        record = None
                if record is not None:
                    self.records.append(record)
                if self._echo is not None:
                    self._echo(line, record)
        return len(text)

    def print_metric(self, *values: Any, **options: Any) -> None:
        """``print`` for Powertools Metrics while captured: the same text, into this stream."""
        options.pop("file", None)
        print(*values, **options, file=self)

    def capture(self) -> None:
        """Take the handlers' output: Powertools Logger's stream and Metrics' EMF ``print``.

        Why not ``sys.stdout``, where Powertools prints the EMF lines: a terminal's spinner or
        progress bar (rich's ``Live``) swaps ``sys.stdout`` while it runs and puts back what it
        found, which undid a capture taken or released meanwhile; the metric lines then reached
        the screen as raw JSON and went missing from the records the invariants are checked on.
        The Logger's stream and the metrics modules' ``print`` are nobody else's to swap.
        """
        from replyonce.observability import logger

        quiet_embedded_aws()
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        handler = logger.registered_handler
        with handler.lock:
            # Not setStream(): it flushes the stream it replaces, which may be closed by now (the
            # stdout a test runner captured while the layer was first imported).
            self._saved_stream, handler.stream = handler.stream, self
        for name in _EMF_PRINTING_MODULES:
            module = importlib.import_module(name)
            self._saved_printers[name] = module.__dict__.get("print", _NOT_SET)
            module.print = self.print_metric  # type: ignore[attr-defined]

    def release(self) -> None:
        """Give back what :meth:`capture` took; harmless when nothing was taken."""
        if self._saved_stream is None:
            return
        from replyonce.observability import logger

        handler = logger.registered_handler
        with handler.lock:
            handler.stream = self._saved_stream
        self._saved_stream = None
        for name, saved in self._saved_printers.items():
            module = sys.modules[name]
            if saved is _NOT_SET:
                del module.print  # type: ignore[attr-defined]
            else:
                module.print = saved  # type: ignore[attr-defined]
        self._saved_printers.clear()

    def messages(self, message: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.records if r.get("message") == message]


def quiet_embedded_aws() -> None:
    """moto's and werkzeug's request lines would drown everything a person wants to read."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


@dataclass
class StackSettings:
    """What differs between the demo, ``make serve`` and the tests."""

    pollers: int = 2
    agent_grant_ids: str = AGENT_GRANT_ID
    nylas_api_uri: str | None = None  # None: the emulator; else a real Nylas API
    nylas_api_key: str = LOCAL_API_KEY
    webhook_secret: str = LOCAL_WEBHOOK_SECRET
    webhook_port: int = 0
    # POWERTOOLS_LOG_LEVEL for both functions (None: the template's LogLevel default).
    log_level: str | None = None
    # Say when SQS dead-letters a notification (make serve): a log record the pane shows.
    watch_dead_letters: bool = False
    # The replier's variables beside the template's (REPLY_MODE, REPLY_AGENT from the shell or options).
    replier_environment: dict[str, str] = field(default_factory=dict)
    # Settings no variable sets (ReplierSettings fields), in-process: redeliveries in seconds rather than
    # minutes, so a demo finishes in seconds.
    replier_tuning: dict[str, float] = field(
        default_factory=lambda: {"busy_retry_seconds": 1, "retry_base_seconds": 1, "retry_max_seconds": 4}
    )


class LocalStack:
    """Start with ``with LocalStack(StackSettings()) as stack:``; everything stops on exit."""

    def __init__(
        self,
        settings: StackSettings | None = None,
        *,
        log_echo: io.TextIOBase | TextIO | LineEcho | None = None,
    ) -> None:
        self.settings = settings or StackSettings()
        self.logs = LogCollector(echo=log_echo)
        self.emulator: NylasEmulator | None = None
        self.resources: LocalResources | None = None
        self._moto: ThreadedMotoServer | None = None
        self._gateway: ApiGatewayStandIn | None = None
        self._pollers: list[threading.Thread] = []
        self._replier_pollers: list[EventSourcePoller] = []
        self._stop = threading.Event()
        self._saved_environment: dict[str, str | None] = {}
        self._saved_log_level: int | None = None
        self.poll_results: list[Any] = []
        # What the stack sets differently from the template (after start): `make invoke` lists it.
        self.overrides: dict[str, str] = {}

    # ---- lifecycle ----------------------------------------------------------------------------

    def __enter__(self) -> "LocalStack":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _setenv(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            self._saved_environment.setdefault(name, os.environ.get(name))
            os.environ[name] = value
        if "POWERTOOLS_LOG_LEVEL" in values:
            self._apply_log_level(values["POWERTOOLS_LOG_LEVEL"])

    def _apply_log_level(self, level: str) -> None:
        """Give the one Powertools Logger the functions' ``POWERTOOLS_LOG_LEVEL``.

        Why: in Lambda every container is a fresh process whose Logger reads the variable when the
        layer is imported; here the layer was imported once, before the stack set anything, so a
        level set in the environment (``--env-vars``, ``--log-level``) would change nothing.
        """
        from replyonce.observability import logger

        if self._saved_log_level is None:
            self._saved_log_level = logger.log_level
        logger.setLevel(level)

    def start(self) -> None:
        quiet_embedded_aws()
        self._moto, endpoint = start_threaded_server()
        self._setenv({**_AWS_ENVIRONMENT, "AWS_ENDPOINT_URL": endpoint})
        # moto keeps its state per process, shared by every server in it: start from nothing.
        requests.post(f"{endpoint}/moto-api/reset", timeout=10).raise_for_status()
        self.resources = create_resources()
        put_in_service(self.resources)
        self._store_secret()
        api_uri = self.settings.nylas_api_uri
        if api_uri is None:
            self.emulator = NylasEmulator(api_key=self.settings.nylas_api_key).start()
            self.emulator.add_grant(AGENT_GRANT_ID, AGENT_EMAIL, name="Acme Support")
            api_uri = self.emulator.url
        self.overrides = {
            "NYLAS_API_URI": api_uri,
            "AGENT_GRANT_IDS": self.settings.agent_grant_ids,
            # The emulator is the receiving provider: its Authentication-Results vouch for a From.
            **({"RECEIVING_AUTHSERV_IDS": RECEIVING_AUTHSERV} if self.emulator is not None else {}),
            **({"POWERTOOLS_LOG_LEVEL": self.settings.log_level} if self.settings.log_level else {}),
            **self.settings.replier_environment,
        }
        environment = {
            **self.resources.function_environment("WebhookFunction"),
            **self.resources.function_environment("ReplierFunction"),
            **self.overrides,
        }
        # Both functions share this process: their variables do not conflict (each its own secret).
        environment.pop("POWERTOOLS_SERVICE_NAME", None)
        self._setenv(environment)
        self.logs.capture()
        webhook_timeout = float(
            self.resources.template["Resources"]["WebhookFunction"]["Properties"]["Timeout"]
        )
        self._gateway = ApiGatewayStandIn(
            load_handler("WebhookFunction"), timeout_seconds=webhook_timeout, port=self.settings.webhook_port
        ).start()
        for index in range(self.settings.pollers):
            replier = load_handler("ReplierFunction")
            tune_container(replier, self.settings.replier_tuning)
            poller = EventSourcePoller(replier, self.resources)
            self._replier_pollers.append(poller)
            thread = threading.Thread(target=self._poll, args=(poller,), name=f"poller-{index}", daemon=True)
            thread.start()
            self._pollers.append(thread)
        if self.settings.watch_dead_letters:
            thread = threading.Thread(target=self._watch_dead_letters, name="dead-letters", daemon=True)
            thread.start()
            self._pollers.append(thread)

    def _watch_dead_letters(self) -> None:
        assert self.resources is not None
        policy = self.resources.template["Resources"]["NotificationQueue"]["Properties"]["RedrivePolicy"]
        watch = DeadLetterWatch(
            boto3.client("sqs"),
            self.resources.queues["NotificationDeadLetterQueue"],
            int(policy["maxReceiveCount"]),
            lambda record: self.logs.write(json.dumps(record) + "\n"),
            redrive_command(self.webhook_url),
        )
        while not self._stop.wait(1.0):
            try:
                watch.check()
            except Exception:  # noqa: S112 - the embedded AWS went away while stopping; checked again
                continue

    def release_deferred(self) -> int:
        """Make every record the replier failed and SQS still hides visible now; how many.

        Why: a record deferred for a configuration error (an agent that did not import) comes back
        after the queue's visibility timeout, 26 minutes. Once the agent is fixed (its file saved),
        ``make serve`` calls this so what was sent meanwhile is answered at once.
        """
        return sum(poller.release_failed() for poller in self._replier_pollers)

    def new_webhook_container(self) -> None:
        """The webhook behind the stand-in gets a fresh container (cold start: secrets read anew)."""
        self._gateway.replace_handler(load_handler("WebhookFunction"))

    def new_replier_containers(self) -> None:
        """Every poller gets a fresh replier container (cold start: the agent, clients, caches anew).

        Why: ``make serve --agent`` picks up an edited agent the way a deploy would, with new containers.
        """
        for poller in self._replier_pollers:
            poller.replace_handler(load_handler("ReplierFunction"))

    def stop(self) -> None:
        self._stop.set()
        for thread in self._pollers:
            thread.join(timeout=10)
        if self._gateway is not None:
            self._gateway.stop()
        if self.emulator is not None:
            self.emulator.stop()
        if self._moto is not None:
            self._moto.stop()
        self.logs.release()
        if self._saved_log_level is not None:
            from replyonce.observability import logger

            logger.setLevel(self._saved_log_level)
            self._saved_log_level = None
        for name, value in self._saved_environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_environment.clear()

    def _store_secret(self) -> None:
        assert self.resources is not None
        secretsmanager = boto3.client("secretsmanager")
        secretsmanager.put_secret_value(
            SecretId=self.resources.secrets["NylasSecrets"],
            SecretString=json.dumps(
                {
                    "webhook_secret": self.settings.webhook_secret,
                    # The rotation event of events/ is signed with the documented previous local secret.
                    "previous_webhook_secret": LOCAL_PREVIOUS_WEBHOOK_SECRET
                    if self.settings.webhook_secret == LOCAL_WEBHOOK_SECRET
                    else "",
                }
            ),
        )
        # The replier's own secret (NYLAS_API_KEY_SECRET_ID): the webhook's never holds the key.
        secretsmanager.put_secret_value(
            SecretId=self.resources.secrets["NylasApiKeySecret"],
            SecretString=json.dumps({"api_key": self.settings.nylas_api_key}),
        )

    def _poll(self, poller: EventSourcePoller) -> None:
        while not self._stop.is_set():
            try:
                result = poller.poll_once(wait_seconds=1)
            except Exception as exc:  # the embedded AWS went away while stopping
                if self._stop.is_set():
                    return
                self.logs.write(json.dumps({"message": "poller error", "detail": str(exc)}) + "\n")
                time.sleep(0.5)
                continue
            if result.received:
                self.poll_results.append(result)

    # ---- use ----------------------------------------------------------------------------------

    @property
    def webhook_url(self) -> str:
        assert self._gateway is not None
        return self._gateway.url

    def function_environment(self, logical_id: str) -> dict[str, str]:
        """The variables the template declares for ``logical_id``, resolved against the local resources."""
        assert self.resources is not None
        return self.resources.function_environment(logical_id)

    def set_environment(self, values: dict[str, str]) -> None:
        """Set variables for the handlers; they are restored when the stack stops."""
        self._setenv(values)

    def serve_control(self, routes: ControlRoutes | None) -> None:
        """Answer ``/_local/...`` on the webhook's port with ``routes`` (``devstack/control.py``)."""
        assert self._gateway is not None
        self._gateway.control = routes

    def embedded_aws(self) -> dict[str, str]:
        """Where the embedded AWS is, its queues, its state table and the API key's secret, and the
        Nylas the replier reads: what ``make redrive ARGS=--local``, ``make shadow-report
        ARGS=--local`` and ``make grants ARGS="list --local"`` work on (names only: the key stays in the
        secret)."""
        assert self.resources is not None
        return {
            "endpoint_url": os.environ["AWS_ENDPOINT_URL"],
            "region": _AWS_ENVIRONMENT["AWS_REGION"],
            "notification_queue_url": self.resources.queues["NotificationQueue"],
            "dead_letter_queue_url": self.resources.queues["NotificationDeadLetterQueue"],
            "state_table": self.resources.tables["StateTable"],
            # `make grants ARGS="list --local"`: the registry, and the defaults its records override.
            "grant_registry_table": self.resources.tables["GrantRegistryTable"],
            "reply_mode": os.environ.get("REPLY_MODE", ""),
            "reply_agent": os.environ.get("REPLY_AGENT", ""),
            # How soon its replier sees a registry change and looks again at a paused grant's mail.
            **{
                name: str(int(self.settings.replier_tuning[name]))
                for name in ("registry_max_age_seconds", "paused_retry_seconds")
                if name in self.settings.replier_tuning
            },
            "api_key_secret_id": self.resources.secrets["NylasApiKeySecret"],
            "nylas_api_uri": self.overrides["NYLAS_API_URI"],
            "agent_grant_ids": self.overrides["AGENT_GRANT_IDS"],
        }

    def sender(self, **kwargs: Any) -> WebhookSender:
        return WebhookSender(self.webhook_url, self.settings.webhook_secret, **kwargs)

    def queue_depth(self) -> tuple[int, int, int]:
        """(visible, in flight, dead-lettered) messages."""
        assert self.resources is not None
        sqs = boto3.client("sqs")
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        main = sqs.get_queue_attributes(
            QueueUrl=self.resources.queues["NotificationQueue"], AttributeNames=names
        )
        dead = sqs.get_queue_attributes(
            QueueUrl=self.resources.queues["NotificationDeadLetterQueue"], AttributeNames=names
        )
        values = main["Attributes"]
        dead_count = sum(int(v) for v in dead["Attributes"].values())
        return int(values[names[0]]), int(values[names[1]]), dead_count

    def wait_until_drained(self, timeout_seconds: float = 60.0, settle_seconds: float = 1.5) -> bool:
        """Wait until the queue has nothing visible or in flight for ``settle_seconds``."""
        deadline = time.monotonic() + timeout_seconds
        quiet_since: float | None = None
        while time.monotonic() < deadline:
            visible, in_flight, _ = self.queue_depth()
            if visible == 0 and in_flight == 0:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= settle_seconds:
                    return True
            else:
                quiet_since = None
            time.sleep(0.2)
        return False
