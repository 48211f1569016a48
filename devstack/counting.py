"""Count what one notification costs: AWS requests by service and operation, Nylas calls by kind.

Why count at the wire rather than in the code: the budgets (``docs/performance.md``,
``tests/integration/test_budgets.py``) are about what AWS bills and what Nylas rate-limits,
so every HTTP request a client sends is counted — retries included — through
botocore's ``before-send`` event on the boto3 Session the real consumer or
endpoint is built from, and the Nylas emulator's own request log.

The harnesses run the unchanged domain code (``NotificationConsumer``,
``WebhookEndpoint``) against whatever embedded AWS and Nylas emulator the
environment points at: the tests' fixtures or the bench's local stack.
"""

import inspect
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import boto3

from devstack.containers import load_handler
from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope, signed_post, sqs_event_from_messages
from devstack.lambda_context import LocalLambdaContext, function_timeout
from devstack.nylas import NylasEmulator
from devstack.template import LOCAL_WEBHOOK_SECRET, LocalResources
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.state_items import LEASE_EXPIRES_AT, LEASE_OWNER
from replyonce.rules.notification import Notification
from replyonce.shell.consumer import NotificationConsumer
from replyonce.shell.webhook import WebhookEndpoint
from replyonce.state import thread_key

AwsOperation = tuple[str, str]  # (service, operation), e.g. ("dynamodb", "PutItem")

# Nylas call kinds: what the budgets are stated in.
GRANT_LOOKUP = "grant lookup"
THREAD_READ = "thread read"
MESSAGE_FETCH = "message fetch"
FOLDERS_LOOKUP = "folders lookup"
FOLDER_CREATED = "folder created"
SEND = "send"
ATTACHMENT_READ = "attachment read"

_QUEUE_MAX_MESSAGE_BYTES = 1_048_576


def item_size(item: Mapping[str, Any]) -> int:
    """Bytes DynamoDB counts for an item: attribute names plus values (AWS's documented sizing rules)."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Mapping[str, Any]) -> int:
    (kind, data), *_ = value.items()
    if kind == "S":
        return len(data.encode())
    if kind == "N":
        digits = data.lstrip("-").replace(".", "").strip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + _value_size(element) for element in data)
    if kind == "M":
        return 3 + sum(len(k.encode()) + 1 + _value_size(v) for k, v in data.items())
    return sum(len(str(element)) for element in data)  # SS, NS, BS


def write_units(size_bytes: int) -> int:
    """Write units of one item write: one per KB, rounded up, of the larger of its two images; at least 1."""
    return max(1, math.ceil(size_bytes / 1024))


class WriteUnitCounter:
    """The write units DynamoDB bills for every write of the clients made from one boto3 Session.

    Why measured from the items, not from ``ReturnConsumedCapacity``: moto answers a fixed 1.0 whatever
    the item's size. DynamoDB bills a write by the larger of the item's images before and after it (a
    unit per KB), a refused conditional write as well (its item unchanged), and an item of a transaction
    twice. So each write's items are read (by another, uncounted client) just before the request and
    just after its answer, and sized by AWS's documented rules (:func:`item_size`). Test-only: the
    reads around each write would weigh on a timed run.
    """

    _MULTIPLIER: ClassVar[dict[str, int]] = {"TransactWriteItems": 2}

    def __init__(self, session: boto3.session.Session) -> None:
        self._reader = boto3.session.Session().client("dynamodb")
        self._key_names: dict[str, list[str]] = {}
        self._units: Counter[str] = Counter()
        self._lock = threading.Lock()
        session.events.register("before-parameter-build.dynamodb", self._before)
        session.events.register("after-call.dynamodb", self._after)

    def snapshot(self) -> Counter[str]:
        """Write units so far, by operation."""
        with self._lock:
            return Counter(self._units)

    def _before(self, params: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        targets = self._targets(model.name, params)
        if targets:
            context["replyonce_write_targets"] = (targets, [self._size(t, k) for t, k in targets])

    def _after(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        measured = context.pop("replyonce_write_targets", None)
        if measured is None:
            return
        targets, before = measured
        after = [self._size(table, key) for table, key in targets]
        units = sum(write_units(max(b, a)) for b, a in zip(before, after, strict=True))
        with self._lock:
            self._units[model.name] += self._MULTIPLIER.get(model.name, 1) * units

    def _targets(self, operation: str, params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """(table, key) of every item the write touches; none for a read."""
        if operation == "PutItem":
            return [(params["TableName"], self._key(params["TableName"], params["Item"]))]
        if operation in ("UpdateItem", "DeleteItem"):
            return [(params["TableName"], dict(params["Key"]))]
        if operation == "TransactWriteItems":
            targets = []
            for entry in params["TransactItems"]:
                (_, body), *_ = entry.items()
                key = body.get("Key") or self._key(body["TableName"], body["Item"])
                targets.append((body["TableName"], dict(key)))
            return targets
        if operation == "BatchWriteItem":
            targets = []
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    put = request.get("PutRequest")
                    key = self._key(table, put["Item"]) if put else request["DeleteRequest"]["Key"]
                    targets.append((table, dict(key)))
            return targets
        return []

    def _key(self, table: str, item: Mapping[str, Any]) -> dict[str, Any]:
        if table not in self._key_names:
            schema = self._reader.describe_table(TableName=table)["Table"]["KeySchema"]
            self._key_names[table] = [k["AttributeName"] for k in schema]
        return {name: item[name] for name in self._key_names[table]}

    def _size(self, table: str, key: Mapping[str, Any]) -> int:
        item = self._reader.get_item(TableName=table, Key=dict(key), ConsistentRead=True).get("Item")
        return item_size(item) if item else 0


class AwsRequestCounter:
    """Counts the HTTP requests sent by every client made from one boto3 Session.

    Parameters
    ----------
    session:
        The session to instrument; a new one by default. Register before any
        client is made: a client copies the session's event hooks when created.
    write_units:
        Also measure DynamoDB's write units (:class:`WriteUnitCounter`): the budgets' tests do, a timed
        run does not.
    """

    def __init__(self, session: boto3.session.Session | None = None, *, write_units: bool = False) -> None:
        self.session = session or boto3.session.Session()
        self._counts: Counter[AwsOperation] = Counter()
        self._lock = threading.Lock()
        # ``before-send`` fires once per HTTP attempt, retries included: what AWS bills.
        self.session.events.register("before-send", self._sent)
        self.units = WriteUnitCounter(self.session) if write_units else None

    def _sent(self, event_name: str, **_: Any) -> None:
        # event_name is "before-send.<service-id>.<Operation>"; returning None lets the request go.
        _, service, operation = event_name.split(".", 2)
        with self._lock:
            self._counts[(service, operation)] += 1

    def snapshot(self) -> Counter[AwsOperation]:
        with self._lock:
            return Counter(self._counts)


def nylas_kind(method: str, path: str) -> str:
    """Classify a Nylas request by what the replier asked for (paths as the emulator logs them)."""
    parts = path.strip("/").split("/")  # v3, grants, {grant}, messages, {id | send}
    if method == "GET" and len(parts) == 3:
        return GRANT_LOOKUP
    if method == "GET" and parts[3:] == ["messages"]:
        return THREAD_READ
    if method == "POST" and parts[3:] == ["messages", "send"]:
        return SEND
    if method == "GET" and len(parts) == 5 and parts[3] == "messages":
        return MESSAGE_FETCH
    if method == "GET" and parts[3:] == ["folders"]:
        return FOLDERS_LOOKUP
    if method == "POST" and parts[3:] == ["folders"]:
        return FOLDER_CREATED
    if method == "GET" and len(parts) == 6 and parts[3] == "attachments" and parts[5] == "download":
        return ATTACHMENT_READ
    return f"{method} {path}"


@dataclass
class Tally:
    """Requests counted during one measured step."""

    aws: Counter[AwsOperation] = field(default_factory=Counter)
    nylas: Counter[str] = field(default_factory=Counter)
    # DynamoDB write units by operation, when the counter measures them (``WriteUnitCounter``).
    write_units: Counter[str] = field(default_factory=Counter)

    @property
    def write_units_total(self) -> int:
        return sum(self.write_units.values())

    def service(self, name: str) -> int:
        """Requests to one AWS service (``dynamodb``, ``sqs``, ``secrets-manager``)."""
        return sum(n for (service, _), n in self.aws.items() if service == name)

    def operations(self, name: str) -> dict[str, int]:
        """``{operation: requests}`` of one AWS service."""
        return {operation: n for (service, operation), n in sorted(self.aws.items()) if service == name}

    @property
    def nylas_total(self) -> int:
        return sum(self.nylas.values())


class Meter:
    """Turns counters into a :class:`Tally` per measured step."""

    def __init__(self, aws: AwsRequestCounter, nylas: NylasEmulator | None = None) -> None:
        self._aws = aws
        self._nylas = nylas

    @contextmanager
    def measure(self) -> Iterator[Tally]:
        """Count what happens inside the ``with`` block; the tally is filled on exit."""
        tally = Tally()
        aws_before = self._aws.snapshot()
        units_before = self._aws.units.snapshot() if self._aws.units else Counter()
        nylas_before = len(self._nylas.requests) if self._nylas else 0
        try:
            yield tally
        finally:
            tally.aws.update(self._aws.snapshot() - aws_before)
            if self._aws.units:
                tally.write_units.update(self._aws.units.snapshot() - units_before)
            if self._nylas:
                tally.nylas.update(nylas_kind(m, p) for m, p in self._nylas.requests[nylas_before:])


@dataclass
class Step:
    """One measured invocation: what it cost, how long the handler ran, whether the record failed."""

    tally: Tally
    seconds: float
    failed: bool = False
    status: int = 0


Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def handler_with(logical_id: str, builder: str, built: object) -> Handler:
    """A fresh copy of the function's real ``lambda_handler`` whose cached ``builder()`` returns ``built``.

    Why: the handler's Powertools decorators (logger context, metrics flush)
    are part of every invocation's time, while the consumer or endpoint must
    come from the counted session. The decorators keep ``__wrapped__``, so the
    undecorated function's globals are the module's.
    """
    handler = load_handler(logical_id)
    inspect.unwrap(handler).__globals__[builder] = lambda: built
    return handler


class ReplierHarness:
    """One replier container, fed one notification at a time through the real queue.

    The real handler runs (a fresh copy of ``functions/replier/app.py``) with
    a consumer built from a counted session. What is counted is the
    function's own requests; the event source mapping's receive and delete use
    another client, counted apart by the event source stand-in (``bench.batches``).

    Parameters
    ----------
    resources:
        The embedded AWS resources (queue URL and ARN).
    nylas:
        The emulator ``NYLAS_API_URI`` points at.
    tuning:
        Settings no variable sets (``ReplierSettings`` fields), in-process; ``None``: as deployed.
    write_units:
        Measure DynamoDB's write units too (``WriteUnitCounter``; its reads add to the handler's time).
    """

    def __init__(
        self,
        resources: LocalResources,
        nylas: NylasEmulator,
        tuning: Mapping[str, Any] | None = None,
        *,
        write_units: bool = False,
    ) -> None:
        self.aws = AwsRequestCounter(write_units=write_units)
        self.consumer = NotificationConsumer.from_environment(aws=self.aws.session, tuning=tuning)
        self.handler = handler_with("ReplierFunction", "consumer", self.consumer)
        self.meter = Meter(self.aws, nylas)
        self.nylas = nylas
        self._sqs = boto3.client("sqs")
        self._queue_url = resources.queues["NotificationQueue"]
        self._queue_arn = resources.queue_arns["NotificationQueue"]
        self._queue = NotificationQueue(self._queue_url, _QUEUE_MAX_MESSAGE_BYTES, self._sqs)
        self._timeout = function_timeout("ReplierFunction")

    def process(self, notification: dict[str, Any]) -> Step:
        """Queue ``notification`` as the webhook does, invoke the handler with it, count the invocation.

        The record is deleted afterwards whatever the outcome: one step
        measures one invocation, and a failed record must not come back into
        the next step.
        """
        self._queue.enqueue(Notification(notification))
        messages = self._sqs.receive_message(
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=1,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
        ).get("Messages", [])
        if len(messages) != 1 or Notification.parse(messages[0]["Body"]).id != notification["id"]:
            raise RuntimeError("the queue did not return the notification just queued (is it empty?)")
        event = sqs_event_from_messages(messages, self._queue_arn)
        context = LocalLambdaContext("ReplierFunction", timeout_seconds=self._timeout)
        with self.meter.measure() as tally:
            started = time.perf_counter()
            response = self.handler(event, context)
            seconds = time.perf_counter() - started
        self._sqs.delete_message(QueueUrl=self._queue_url, ReceiptHandle=messages[0]["ReceiptHandle"])
        return Step(tally, seconds, failed=bool(response["batchItemFailures"]))


class WebhookHarness:
    """One webhook container: the endpoint built from a counted session, fed signed proxy events."""

    def __init__(self, secret: str = LOCAL_WEBHOOK_SECRET) -> None:
        self.aws = AwsRequestCounter()
        self.endpoint = WebhookEndpoint.from_environment(aws=self.aws.session)
        self.handler = handler_with("WebhookFunction", "endpoint", self.endpoint)
        self.meter = Meter(self.aws)
        self._secret = secret
        self._timeout = function_timeout("WebhookFunction")

    def post(self, payload: dict[str, Any], *, forged: bool = False) -> Step:
        """Deliver ``payload`` as Nylas does (signed; ``forged`` signs with a wrong secret)."""
        body = Notification(payload).to_json().encode()
        # As API Gateway hands it over with BinaryMediaTypes */*: base64 of the exact bytes.
        event = signed_post(body, secret="not-the-secret" if forged else self._secret, base64_encoded=True)
        context = LocalLambdaContext("WebhookFunction", timeout_seconds=self._timeout)
        with self.meter.measure() as tally:
            started = time.perf_counter()
            response = self.handler(event, context)
            seconds = time.perf_counter() - started
        return Step(tally, seconds, status=response["statusCode"])


# ---- the paths of docs/performance.md (each sets itself up, then measures one step) ----------------


def inbound(nylas: NylasEmulator, **kwargs: Any) -> dict[str, Any]:
    """A customer's message in the agent's inbox (its own thread unless told otherwise)."""
    kwargs.setdefault("from_email", CUSTOMER_EMAIL)
    kwargs.setdefault("subject", "Where is my order?")
    kwargs.setdefault("body", "<p>Order 1042 has not arrived.</p>")
    return nylas.deliver_inbound(AGENT_GRANT_ID, **kwargs)


def first_reply(harness: ReplierHarness) -> Step:
    """A new inbound message: filter, ledger, lease, thread read, send, record."""
    return harness.process(envelope(inbound(harness.nylas)))


def truncated_first_reply(harness: ReplierHarness) -> Step:
    """``message.created.truncated``: the same, plus fetching the message."""
    return harness.process(envelope(inbound(harness.nylas), notification_type="message.created.truncated"))


def duplicate_delivery(harness: ReplierHarness) -> Step:
    """The same notification id again (Nylas retry or SQS redelivery) after it was handled."""
    notification = envelope(inbound(harness.nylas))
    harness.process(notification)
    return harness.process(notification)


def ignored_type(harness: ReplierHarness) -> Step:
    """``message.updated``: a notification type the agent never answers."""
    return harness.process(envelope(inbound(harness.nylas), notification_type="message.updated"))


def own_outbound(harness: ReplierHarness) -> Step:
    """``message.created`` for the agent's own reply (Agent Accounts fire it for sent mail)."""
    first_reply(harness)
    return harness.process(envelope(harness.nylas.sent_messages()[-1]))


def already_replied(harness: ReplierHarness) -> Step:
    """A second notification (new id) for a message already answered: the ledger stops it."""
    message = inbound(harness.nylas)
    harness.process(envelope(message))
    return harness.process(envelope(message))


def busy_thread(harness: ReplierHarness, state_table: str) -> Step:
    """Another worker holds the thread's lease: the record fails and comes back shortly."""
    message = inbound(harness.nylas)
    dynamodb = boto3.client("dynamodb")
    key = {"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}}
    held_until_ms = int(time.time() * 1000) + 60_000
    dynamodb.put_item(
        TableName=state_table,
        Item={**key, LEASE_OWNER: {"S": "another-worker"}, LEASE_EXPIRES_AT: {"N": str(held_until_ms)}},
    )
    try:
        return harness.process(envelope(message))
    finally:
        dynamodb.delete_item(TableName=state_table, Key=key)


def warm(harness: ReplierHarness) -> ReplierHarness:
    """Make the container warm: the grant's address and the API key are cached after one reply."""
    step = first_reply(harness)
    if step.failed:
        raise RuntimeError("the warm-up reply failed")
    return harness


# (path name, what it does): the replier paths of the report, measured on a warm container.
WARM_PATHS: tuple[tuple[str, Callable[[ReplierHarness], Step]], ...] = (
    ("first reply", first_reply),
    ("first reply, truncated notification", truncated_first_reply),
    ("duplicate delivery", duplicate_delivery),
    ("ignored type (message.updated)", ignored_type),
    ("own outbound message", own_outbound),
    ("already replied (new notification, same message)", already_replied),
)
