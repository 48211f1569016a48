"""``make serve``'s control routes: put mail in, fire notifications, read a thread back.

Like ``stripe trigger``: ``python -m devstack.trigger`` (``make mail``) asks a
running ``make serve`` to put a customer message in the emulated mailbox.
The message goes in through the emulator's own control route
(``POST /_emulator/inbound``), the emulator fires ``message.created``, and
this module delivers it to the webhook the way Nylas does (signed, retried
on 408/429/5xx, with duplicates on request) through
:class:`devstack.webhook_sender.WebhookSender`. Threads are read back with
``GET /_emulator/threads/{id}`` (arrival order). The agent's own sends fire
``message.created`` too, as Nylas does for Agent Accounts, so the replier
sees and skips its own mail as in production.

The routes live under ``/_local/`` on the webhook's port (loopback only, no
authentication: a development tool, like LocalStack's ``/_localstack/``);
API Gateway would answer 403 there, the stand-in answers these instead.
Every answer is JSON; every mistake is a 4xx with an ``error`` sentence the
trigger command prints as one line.
"""

import json
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import requests

from devstack.agent_failures import where_it_raised
from devstack.events import AGENT_GRANT_ID, envelope, message_created, notification_envelope
from devstack.hints import port_option
from devstack.invariants import (
    DUPLICATE_ABSORBED,
    REPLY_DRAFTED,
    REPLY_QUEUED,
    REPLY_SENT,
    REPLY_SHADOWED,
    SKIPPED,
)
from devstack.nylas import NylasEmulator
from devstack.nylas.control import GRANT_ACTIONS
from devstack.stack import LogCollector
from devstack.web_view import AGENT_FAILED, DEFERRED
from devstack.webhook_sender import WebhookSender
from ops.register_webhook import TRIGGER_TYPES
from ops.template import load_template
from replyonce.reasons import DeferReason

CONTROL_PREFIX = "/_local"
GRANT_PAUSED = DeferReason.GRANT_PAUSED.value
NOTIFICATION_TYPES = ("message.created", "message.created.truncated", "message.updated")

Json = dict[str, Any]


class ControlError(Exception):
    """A request the control routes cannot honour; ``status`` and a sentence for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class DeliveryOptions:
    """How Nylas should deliver one notification."""

    notification_type: str = "message.created"
    copies: int = 1
    concurrent: bool = False
    forged: bool = False


@dataclass
class _Pending:
    options: DeliveryOptions
    notifications: list[Json] = field(default_factory=list)


class MailControl:
    """The control routes' behaviour, on top of a running local stack's emulator and webhook.

    Parameters
    ----------
    emulator:
        The Nylas emulator (``None`` when ``make serve`` talks to the real Nylas API:
        every route then answers 409 with what to do instead).
    sender:
        Signs and delivers notifications to the webhook.
    agent_grant_id, agent_email:
        The grant mail is delivered to by default, and its address.
    agent_addresses:
        Every agent grant's address, by grant (``make serve --grants N``): a thread read back names
        its own grant's address as the agent's.
    logs:
        The handlers' log records, for what the replier decided about a message (``outcome``).
    aws:
        The embedded AWS's endpoint and queues (``GET /_local/aws``): the operator commands reach
        the local stack's queues, state table and mailbox with it (``make redrive ARGS=--local``,
        ``make shadow-report ARGS=--local``). Fake credentials only; the API key stays in its secret.
    """

    def __init__(
        self,
        emulator: NylasEmulator | None,
        sender: WebhookSender,
        *,
        agent_grant_id: str = AGENT_GRANT_ID,
        agent_email: str = "",
        logs: LogCollector | None = None,
        aws: Mapping[str, str] | None = None,
        agent_addresses: Mapping[str, str] | None = None,
    ) -> None:
        self._emulator = emulator
        self._sender = sender
        self._logs = logs
        self._aws = dict(aws or {})
        self._agent_grant_id = agent_grant_id
        self._agent_email = agent_email
        # Every agent grant's address (make serve --grants): a thread's agent is its own grant's.
        self._agent_addresses = dict(agent_addresses or {})
        # Mail put in by :meth:`mail`, by message id: the emulator announces it on its own request
        # thread, and the delivery options travel with it from here.
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self._http = requests.Session()
        # The agent's sends are announced on the emulator's request thread, while the replier waits
        # for the send's answer: deliver their notifications from elsewhere.
        self._background = ThreadPoolExecutor(max_workers=4, thread_name_prefix="nylas-webhooks")
        if emulator is not None:
            emulator.on_message_created = self._message_created
            emulator.on_notification = self._notification

    def close(self) -> None:
        if self._emulator is not None:
            self._emulator.on_message_created = None
            self._emulator.on_notification = None
        self._background.shutdown(wait=True)

    # ---- the emulator's callback ---------------------------------------------------------------

    def _message_created(self, message: Json) -> None:
        with self._lock:
            pending = self._pending.get(message["id"])
        if "sent" in message.get("folders", []):
            self._background.submit(self._sender.deliver, envelope(message))
            return
        options = pending.options if pending is not None else DeliveryOptions()
        notification = envelope(message, notification_type=options.notification_type)
        if pending is not None:
            pending.notifications.append(notification)
        else:  # mail put in some other way (the emulator's own route): deliver it once, as Nylas would
            self._background.submit(self._sender.deliver, notification)

    def _notification(self, trigger: str, data: Json) -> None:
        """A send outcome of a queued reply reaches the webhook, as for a webhook subscribed to it."""
        if trigger in TRIGGER_TYPES:
            self._background.submit(self._sender.deliver, notification_envelope(trigger, data))

    # ---- routes --------------------------------------------------------------------------------

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, Json]:
        """Answer one control request: ``(status, JSON body)``."""
        try:
            route = path.removeprefix(CONTROL_PREFIX).strip("/").split("/")
            if method == "GET" and route == ["health"]:
                return 200, self.health()
            if method == "GET" and route == ["aws"]:
                if not self._aws:
                    raise ControlError(404, "this stack shares no embedded AWS")
                return 200, dict(self._aws)
            if method == "POST" and route == ["mail"]:
                return 201, self.mail(_json_object(body))
            if method == "POST" and route == ["notify"]:
                return 200, self.notify(_json_object(body))
            if method == "POST" and len(route) == 3 and route[0] == "grants":
                return 200, self.grant(
                    unquote(route[1]), route[2], _json_object(body) if body.strip() else {}
                )
            if method == "GET" and len(route) == 2 and route[0] == "threads":
                return 200, self.thread(unquote(route[1]))
            if method == "GET" and len(route) == 2 and route[0] == "outcomes":
                return 200, self.outcome(unquote(route[1]))
            if method == "GET" and len(route) == 2 and route[0] == "decisions":
                return 200, self.decision(unquote(route[1]))
            raise ControlError(404, f"no control route {method} {path}")
        except ControlError as error:
            return error.status, {"error": str(error)}
        except Exception as error:  # a bug or a stopped emulator: one line for the caller, no traceback
            return 503, {"error": f"the local stack could not do that: {type(error).__name__}: {error}"}

    def health(self) -> Json:
        return {
            "webhook_url": self._sender.url,
            "nylas": "emulator" if self._emulator is not None else "real",
            "agent_grant_id": self._agent_grant_id,
            "agent_email": self._agent_email,
        }

    def mail(self, request: Mapping[str, Any]) -> Json:
        """A customer message into the agent's mailbox, new thread or existing; notified as asked."""
        emulator = self._require_emulator()
        options = _options(request)
        from_email = _text(request, "from_email", required=True)
        if "@" not in from_email:
            raise ControlError(400, f"from_email {from_email!r} is not an email address")
        thread_id = _text(request, "thread_id")
        if thread_id:
            # The emulator starts a thread under an unknown id (readable ids in tests); a person who
            # names a thread means an existing one, and a typo must not start a new conversation.
            try:
                self.thread(thread_id)
            except ControlError as error:
                raise ControlError(error.status, f"{error}; leave out --thread to start one") from None
        message_id = f"msg-{uuid.uuid4().hex}"
        inbound: Json = {
            "grant_id": str(request.get("grant_id") or self._agent_grant_id),
            "message_id": message_id,
            "from_email": from_email,
            "subject": _text(request, "subject") or "(no subject)",
            "body": _text(request, "body") or "",
        }
        for name in ("from_name", "thread_id", "reply_to_message_id"):
            if _text(request, name):
                inbound[name] = _text(request, name)
        for name in ("headers", "reply_to", "date", "attachments"):
            if request.get(name):
                inbound[name] = request[name]
        pending = _Pending(options)
        with self._lock:
            self._pending[message_id] = pending
        try:
            answer = self._emulator_call("POST", "inbound", inbound, emulator)
        finally:
            with self._lock:
                self._pending.pop(message_id, None)
        deliveries = [self._deliver(n, options) for n in pending.notifications]
        return {"message": answer["data"], "notifications": deliveries}

    def notify(self, request: Mapping[str, Any]) -> Json:
        """A notification about a message already in the mailbox, or (``unknown``) one nobody holds."""
        options = _options(request)
        message_id = _text(request, "message_id")
        if request.get("unknown"):
            # Well-formed and signed, for a message the mailbox does not hold (deleted, or never there).
            notification = message_created(
                notification_id=str(uuid.uuid4()),
                message_id=message_id or f"msg-unknown-{uuid.uuid4().hex[:12]}",
                thread_id=f"thread-unknown-{uuid.uuid4().hex[:12]}",
                grant_id=str(request.get("grant_id") or self._agent_grant_id),
                notification_type=options.notification_type,
            )
            return {"notifications": [self._deliver(notification, options)]}
        emulator = self._require_emulator()
        if not message_id:
            raise ControlError(400, "message_id is required (or unknown: true)")
        found = [m for _, m in emulator.mailbox() if m["id"] == message_id]
        if not found:
            hint = f'`make thread ARGS="--thread T{port_option(self._sender.url)}"` lists a thread'
            raise ControlError(404, f"the mailbox holds no message {message_id}; {hint}")
        notification = envelope(found[0], notification_type=options.notification_type)
        return {"notifications": [self._deliver(notification, options)]}

    def thread(self, thread_id: str) -> Json:
        """A thread's messages in arrival order, as the mailbox holds them."""
        emulator = self._require_emulator()
        try:
            messages = self._emulator_call("GET", f"threads/{quote(thread_id, safe='')}", None, emulator)[
                "data"
            ]
        except ControlError as error:
            if error.status == 404:
                raise ControlError(404, f"the mailbox holds no thread {thread_id}") from None
            raise
        grant = next((m.get("grant_id") for m in messages if m.get("grant_id")), None)
        return {"data": messages, "agent_email": self._agent_addresses.get(grant, self._agent_email)}

    def outcome(self, message_id: str) -> Json:
        """What the replier decided about a message so far, from its own log records.

        ``reply``: the ``reply sent`` (or ``reply drafted for review``) record of the reply that
        covers the message (it may answer a burst, addressed to a newer message); else ``skip``: the
        ``notification skipped`` record naming the message, with its reason. Both ``None``: nothing
        decided yet (queued, retrying).
        """
        if self._logs is None:
            raise ControlError(404, "this stack keeps no log records to read outcomes from")
        # A review draft answers the message as a send does (REPLY_MODE=review): a decision, not a wait.
        replies = [
            *self._logs.messages(REPLY_SENT),
            *self._logs.messages(REPLY_DRAFTED),
            *self._logs.messages(REPLY_SHADOWED),  # REPLY_MODE=shadow: recorded, a decision too
        ]
        reply = next((r for r in replies if message_id in (r.get("covered") or [])), None)
        skip = None
        if reply is None:
            skip = next((r for r in self._logs.messages(SKIPPED) if r.get("message_id") == message_id), None)
        else:
            # The replier logs no address at INFO (only its digest): the recipients are the sent message's.
            sent = self.sent_message(reply.get("reply_message_id")) or {}
            reply = {**reply, "to": reply.get("to") or [p.get("email", "") for p in sent.get("to") or []]}
        return {"message_id": message_id, "reply": reply, "skip": skip}

    def agent_failure(self, notification_id: str) -> Json | None:
        """The agent's last failure on a message not decided yet, and when its record comes back.

        ``None`` until the deferral that follows the failure is logged too (the two are one event).

        ``detail`` (``RuntimeError: ...``), ``where`` (the person's file, line and function) and
        ``code`` (that line), ``receives`` and ``retry_in_seconds`` of the deferral that followed, and
        ``max_receives`` (the queue's ``maxReceiveCount``, after which SQS dead-letters it).
        """
        assert self._logs is not None
        records = [r for r in list(self._logs.records) if r.get("notification_id") == notification_id]
        failed = [i for i, r in enumerate(records) if r.get("message") == AGENT_FAILED]
        if not failed:
            return None
        last = records[failed[-1]]
        deferral = next((r for r in records[failed[-1] :] if r.get("message") == DEFERRED), None)
        if deferral is None:
            # The replier logs the failure and then, a moment later, the deferral that says when the
            # record comes back: a reader between the two would report a failure with no retry to name.
            return None
        frame = where_it_raised(str(last.get("traceback") or ""))
        redrive = load_template()["Resources"]["NotificationQueue"]["Properties"]["RedrivePolicy"]
        return {
            "detail": str(last.get("detail") or ""),
            "where": frame.short() if frame else "",
            "code": frame.code if frame else "",
            "receives": deferral.get("receives"),
            "retry_in_seconds": deferral.get("retry_in_seconds"),
            "max_receives": int(redrive["maxReceiveCount"]),
        }

    def decision(self, notification_id: str) -> Json:
        """The replier's last word on one notification so far, from its own log records.

        ``decision``: the ``reply sent`` (drafted, queued by Nylas), ``notification skipped`` or
        ``duplicate delivery absorbed`` record naming the notification; ``None``: nothing decided yet.
        Why by notification, not by message: a ``message.updated`` or a second ``message.created``
        about an answered message has a decision of its own, which the message's reply is not.
        """
        if self._logs is None:
            raise ControlError(404, "this stack keeps no log records to read decisions from")
        final = (REPLY_SENT, REPLY_DRAFTED, REPLY_QUEUED, REPLY_SHADOWED, SKIPPED, DUPLICATE_ABSORBED)
        with_records = [
            r
            for message in final
            for r in self._logs.messages(message)
            if r.get("notification_id") == notification_id
        ]
        # A duplicate absorbed is the decision only when the notification has no other.
        decided = [r for r in with_records if r.get("message") != DUPLICATE_ABSORBED] or with_records
        return {
            "notification_id": notification_id,
            "decision": decided[0] if decided else None,
            # Each queued copy after the first is absorbed once its run sees the stored outcome.
            "absorbed": sum(1 for r in with_records if r.get("message") == DUPLICATE_ABSORBED),
            # Not decided, and the agent raised: what `make mail` says at once instead of waiting.
            "failure": None if decided else self.agent_failure(notification_id),
            # Not decided, and its grant is paused: waiting for `make grants resume`, said at once too.
            "paused": None if decided else self.paused(notification_id),
        }

    def paused(self, notification_id: str) -> Json | None:
        """The replier's deferral of a notification whose grant is paused (``make grants pause``, or an
        expiry at Nylas): its ``grant_id``, ``retry_in_seconds`` and who paused it; ``None``: not paused."""
        assert self._logs is not None
        deferrals = [
            r
            for r in self._logs.messages(DEFERRED)
            if r.get("notification_id") == notification_id and r.get("reason") == GRANT_PAUSED
        ]
        if not deferrals:
            return None
        last = deferrals[-1]
        return {
            "grant_id": last.get("grant_id"),
            "retry_in_seconds": last.get("retry_in_seconds"),
            "paused_by": last.get("paused_by") or "operator",
        }

    # ---- helpers -------------------------------------------------------------------------------

    def sent_message(self, message_id: str | None) -> Json | None:
        """A message the agent sent or drafted, as the mailbox holds it (``None``: absent, or real Nylas)."""
        if self._emulator is None or not message_id:
            return None
        sent = next((m for _, m in self._emulator.mailbox() if m["id"] == message_id), None)
        if sent is not None:
            return sent
        return next((d.draft for d in self._emulator.drafts if d.draft.get("id") == message_id), None)

    def _emulator_call(self, method: str, route: str, body: Json | None, emulator: NylasEmulator) -> Json:
        """One of the emulator's ``/_emulator/`` control routes; its error answers become ControlError."""
        response = self._http.request(method, f"{emulator.url}/_emulator/{route}", json=body, timeout=30)
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status_code >= 300:
            error = answer.get("error") if isinstance(answer, dict) else None
            detail = error.get("message") if isinstance(error, dict) else f"status {response.status_code}"
            raise ControlError(404 if response.status_code == 404 else 400, str(detail))
        return answer

    def grant(self, grant_id: str, action: str, request: Mapping[str, Any]) -> Json:
        """A grant's life in the emulated Nylas (``make trigger ARGS="grant expire --grant G"``): the
        emulator fires its ``grant.*`` notification, delivered to the webhook as Nylas would."""
        emulator = self._require_emulator()
        if action not in GRANT_ACTIONS:
            raise ControlError(400, f"the action must be one of {', '.join(GRANT_ACTIONS)}, not {action!r}")
        if action == "create" and "@" not in str(request.get("email", "")):
            raise ControlError(400, "create needs the grant's email address (--email)")
        try:
            state = emulator.grant_action(action, grant_id, dict(request))
        except KeyError as refused:
            raise ControlError(409 if "deleted" in str(refused) else 404, str(refused.args[0])) from None
        return {"grant_id": grant_id, "state": state}

    def _require_emulator(self) -> NylasEmulator:
        if self._emulator is None:
            raise ControlError(
                409,
                "make serve is talking to the real Nylas API (NYLAS_API_URI): "
                "send an email to the agent's address instead",
            )
        return self._emulator

    def _deliver(self, notification: Json, options: DeliveryOptions) -> Json:
        before = len(self._sender.deliveries)
        if options.forged:
            for _ in range(options.copies):
                self._sender.deliver(notification, forged=True)
        else:
            self._sender.deliver_many(notification, copies=options.copies, concurrent=options.concurrent)
        mine = [d for d in self._sender.deliveries[before:] if d.notification_id == notification["id"]]
        return {
            "id": notification["id"],
            "type": notification["type"],
            "message_id": notification["data"]["object"]["id"],
            "thread_id": notification["data"]["object"].get("thread_id"),
            "forged": options.forged,
            "statuses": [d.status for d in mine],
        }


def _json_object(body: bytes) -> Json:
    try:
        value = json.loads(body or b"{}")
    except ValueError:
        raise ControlError(400, "the request body is not JSON") from None
    if not isinstance(value, dict):
        raise ControlError(400, "the request body must be a JSON object")
    return value


def _text(request: Mapping[str, Any], name: str, *, required: bool = False) -> str:
    value = request.get(name)
    if value is None or value == "":
        if required:
            raise ControlError(400, f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise ControlError(400, f"{name} must be a string")
    return value


def _options(request: Mapping[str, Any]) -> DeliveryOptions:
    notification_type = request.get("notification_type", "message.created")
    if notification_type not in NOTIFICATION_TYPES:
        raise ControlError(400, f"notification_type must be one of {', '.join(NOTIFICATION_TYPES)}")
    copies = request.get("copies", 1)
    if not isinstance(copies, int) or isinstance(copies, bool) or not 1 <= copies <= 20:
        raise ControlError(400, "copies must be a whole number from 1 to 20")
    return DeliveryOptions(
        notification_type=notification_type,
        copies=copies,
        concurrent=bool(request.get("concurrent", False)),
        forged=bool(request.get("forged", False)),
    )
