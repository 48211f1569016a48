"""Where a replier container's time goes: every record attempt with its DynamoDB and Nylas requests, timed.

A container is the real ``functions/replier/app.py`` handler whose consumer
is built from a boto3 Session and a ``requests`` Session this module times:
botocore's ``before-call``/``after-call`` events bracket each AWS call
(retries included), and the Nylas session's ``send`` brackets each HTTP
request. Each span is filed under the record being processed on that thread,
which is known because the consumer's per-record handler is wrapped — the
only place the harness reaches into the consumer; it fails loudly if the
consumer stops having one.

Every container's boto3 Session shares one botocore loader, so a new
container costs its clients and caches, not parsing botocore's service
models again. Why: in one interpreter on 2 cores, containers started
together parse their models under one GIL (eight of them took 9-10 s each to
initialise in the template's mix of ``make bench`` on 2026-12-01), and every
record running meanwhile slows with them; a Lambda fleet starts its
containers on CPUs of their own. What a fresh process pays for its imports
and models is measured where it happens, in fresh processes
(``bench.coldstart``).
"""

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
import botocore.loaders
import botocore.session
import requests

from devstack.counting import handler_with, nylas_kind

DYNAMODB = "DynamoDB"
NYLAS = "Nylas"
AGENT = "agent"  # the draft's time (``bench.slow_agent``), filed like a request
# A state-table write refused by its condition: another worker holds the thread's lease.
_REFUSED = ("ConditionalCheckFailedException", "TransactionCanceledException")


_SHARED_LOADER = botocore.loaders.create_loader()


def container_session() -> boto3.session.Session:
    """A new container's boto3 Session, on the loader every container shares (module docstring)."""
    core = botocore.session.Session()
    core.register_component("data_loader", _SHARED_LOADER)
    return boto3.session.Session(botocore_session=core)


@dataclass
class Span:
    """One request: which service, what, when (``time.time()``), and how it ended."""

    service: str  # DYNAMODB, NYLAS or another AWS service id
    operation: str
    started: float
    ended: float = 0.0
    table: str = ""
    error: str = ""
    reply_to: str = ""  # a Nylas send: the message it answers


@dataclass
class Attempt:
    """One record processed once by one container (a retried record has several)."""

    notification_id: str
    container: int
    started: float
    ended: float = 0.0
    error: str = ""  # the exception class that failed the record, "" when it succeeded
    outcome: str = ""  # what the record returned: "replied", or the reason it was skipped
    spans: list[Span] = field(default_factory=list)

    def lease_refusals(self, state_table: str) -> list[Span]:
        return [s for s in self.spans if state_table in s.table.split(",") and s.error in _REFUSED]


class _TimedHttp(requests.Session):
    """The Nylas client's session: each request timed and filed under the current record."""

    def __init__(self, recorder: "Recorder") -> None:
        super().__init__()
        self._recorder = recorder

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        path = request.path_url.split("?", 1)[0]
        span = Span(NYLAS, nylas_kind(request.method or "", path), time.time())
        if span.operation == "send" and request.body:
            with contextlib.suppress(ValueError):
                span.reply_to = str(json.loads(request.body).get("reply_to_message_id") or "")
        try:
            response = super().send(request, **kwargs)
            span.error = "" if response.ok else str(response.status_code)
            return response
        except requests.RequestException as exc:
            span.error = type(exc).__name__
            raise
        finally:
            span.ended = time.time()
            self._recorder.file(span)


class Recorder:
    """Every attempt of every container built with :meth:`container`, in one list.

    Parameters
    ----------
    prepare:
        Called with each new container's consumer before its first record (``bench.slow_agent``
        gives it a drafter that takes the agent's time).
    """

    def __init__(self, prepare: Callable[[Any], None] | None = None) -> None:
        self._prepare = prepare
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()
        self._current = threading.local()
        self._containers = iter(range(1, 1_000_000))

    def file(self, span: Span) -> None:
        """File ``span`` under the record this thread is processing (nothing when it is none)."""
        attempt = getattr(self._current, "attempt", None)
        if attempt is not None:
            attempt.spans.append(span)

    @staticmethod
    def _note_table(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        """``before-parameter-build`` sees the API parameters (``before-call`` only the serialised body)."""
        tables = {str(params["TableName"])} if "TableName" in params else set()
        for item in params.get("TransactItems", []):
            tables.update(str(part["TableName"]) for part in item.values() if "TableName" in part)
        context["bench_tables"] = ",".join(sorted(tables))

    def _before_call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        stack = self._current.__dict__.setdefault("calls", [])
        service = model.service_model.service_id.hyphenize()
        name = DYNAMODB if service == "dynamodb" else service
        stack.append(Span(name, model.name, time.time(), table=context.get("bench_tables", "")))

    def _after_call(self, parsed: dict[str, Any] | None = None, exception: Any = None, **_: Any) -> None:
        stack = self._current.__dict__.get("calls") or []
        if not stack:
            return
        span = stack.pop()
        span.ended = time.time()
        if exception is not None:
            span.error = type(exception).__name__
        elif parsed and "Error" in parsed:
            span.error = str(parsed["Error"].get("Code", "error"))
        self.file(span)

    def container(self) -> tuple[int, Any]:
        """A new container: (its number, the real handler) with every request timed."""
        from replyonce.shell.consumer import NotificationConsumer

        number = next(self._containers)
        session = container_session()
        session.events.register("before-parameter-build", self._note_table)
        session.events.register("before-call", self._before_call)
        session.events.register("after-call", self._after_call)
        session.events.register("after-call-error", self._after_call)
        consumer = NotificationConsumer.from_environment(aws=session, http=_TimedHttp(self))
        if self._prepare is not None:
            self._prepare(consumer)
        handle_record = getattr(consumer, "_handle_record", None)
        if handle_record is None:
            raise RuntimeError("NotificationConsumer has no _handle_record: update bench/timeline.py")

        def timed_record(record: Any) -> Any:
            from replyonce.rules.notification import Notification

            attempt = Attempt(Notification.parse(record.body).id, number, time.time())
            self._current.attempt = attempt
            try:
                result = handle_record(record)
                if isinstance(result, dict):
                    attempt.outcome = str(result.get("reason") or result.get("outcome") or "")
                return result
            except Exception as exc:
                attempt.error = type(exc).__name__
                raise
            finally:
                attempt.ended = time.time()
                self._current.attempt = None
                with self._lock:
                    self.attempts.append(attempt)

        # Powertools' batch processor calls ``self._handle_record``: the instance attribute wins.
        consumer._handle_record = timed_record  # type: ignore[method-assign]
        return number, handler_with("ReplierFunction", "consumer", consumer)
