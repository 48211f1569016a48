"""What the replier's tests share: queue notifications as the webhook does, run the handler as SQS does.

Every test of this kind runs the real ``functions/replier/app.py`` handler
against moto (resources from ``template.yaml``) and the Nylas emulator over
loopback, and counts at the emulator what Nylas saw.
"""

import json
import time

import boto3

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from devstack.events import notification_envelope as notification  # noqa: F401 - for the tests
from devstack.poller import EventSourcePoller
from functions.replier import app
from ops.template import load_template
from replyonce.adapters.queue import NotificationQueue
from replyonce.rules.notification import Notification
from replyonce.shell.consumer import NotificationConsumer
from replyonce.state import thread_key

SEND_PATH = rf"^/v3/grants/{AGENT_GRANT_ID}/messages/send$"
# Where a person's message the agent does not answer is moved: the template's HandoffFolder default.
HANDOFF_FOLDER = load_template()["Parameters"]["HandoffFolder"]["Default"]


class Pipeline:
    """Queue notifications as the webhook does; run the replier as the event source mapping does."""

    def __init__(self, resources, sqs) -> None:
        self.resources = resources
        self.sqs = sqs
        self.queue = NotificationQueue(resources.queues["NotificationQueue"], 1_048_576, sqs)

    def deliver(self, payload: dict, times: int = 1) -> None:
        for _ in range(times):
            self.queue.enqueue(Notification(payload))

    def poller(self, handler=None, **kwargs) -> EventSourcePoller:
        return EventSourcePoller(handler or app.lambda_handler, self.resources, sqs_client=self.sqs, **kwargs)

    def drain(self, handler=None) -> None:
        self.poller(handler).drain()

    def dead_letters(self) -> list[dict]:
        from tests.conftest import drain

        return drain(self.sqs, self.resources.queues["NotificationDeadLetterQueue"])

    def in_flight(self) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.resources.queues["NotificationQueue"],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )


def inbound(nylas, **kwargs) -> dict:
    kwargs.setdefault("from_email", CUSTOMER_EMAIL)
    kwargs.setdefault("subject", "Where is my order?")
    kwargs.setdefault("body", "<p>Order 1042 has not arrived.</p>")
    return nylas.deliver_inbound(AGENT_GRANT_ID, **kwargs)


def grant_lookups(nylas, grant_id: str = AGENT_GRANT_ID) -> int:
    """``GET /v3/grants/{id}`` requests for the grant itself (not its folders, messages...)."""
    return nylas.count("GET", f"/v3/grants/{grant_id}") - nylas.count("GET", f"/v3/grants/{grant_id}/")


def ping_pong(pipeline, nylas, sender: str, rounds: int, deliver=envelope) -> None:
    """Another robot answers every reply of the agent at once, ``rounds`` times (its dates just after)."""
    last = inbound(nylas, from_email=sender)
    for round_ in range(rounds):
        pipeline.deliver(deliver(last))
        pipeline.drain()
        replies = nylas.sent_messages(thread_id=last["thread_id"])
        last = inbound(
            nylas,
            from_email=sender,
            reply_to_message_id=replies[-1]["id"],
            date=replies[-1]["date"] + 1 + round_,
        )


def skip_reasons(log_records) -> list[str]:
    return [
        r["reason"]
        for r in log_records()
        if r.get("message") in ("notification skipped", "duplicate delivery absorbed")
    ]


def deferrals(log_records) -> list[str]:
    return [r["reason"] for r in log_records() if r.get("message") == "record deferred; it will be retried"]


def metrics_emitted(output: str) -> list[tuple[str, dict[str, str]]]:
    """(metric name, its dimensions) of every metric in the EMF lines Powertools printed."""
    emitted = []
    for line in output.splitlines():
        if '"_aws"' not in line:
            continue
        blob = json.loads(line)
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            dimensions = {d: str(blob[d]) for group in directive["Dimensions"] for d in group}
            emitted += [(metric["Name"], dimensions) for metric in directive["Metrics"]]
    return emitted


def container_recording_visibility(**kwargs) -> tuple[NotificationConsumer, list[int]]:
    """A new replier container and the ``VisibilityTimeout`` of every record visibility it sets;
    ``kwargs`` as :func:`new_container` takes them (``aws`` aside)."""
    session = boto3.session.Session()
    visibility: list[int] = []
    session.events.register(
        "before-parameter-build.sqs.ChangeMessageVisibility",
        lambda params, **_: visibility.append(params["VisibilityTimeout"]),
    )
    return new_container(aws=session, **kwargs), visibility


def hold_lease(replier, message: dict, *, owner: str, for_ms: int, now: float | None = None) -> None:
    """Another worker's lease on the message's thread, ending ``for_ms`` after ``now`` (the wall clock by
    default; a test's :class:`tests.fakes.Clock` for a verdict that does not move with the machine's load;
    negative: expired)."""
    boto3.client("dynamodb").put_item(
        TableName=replier.tables["StateTable"],
        Item={
            "pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])},
            "lease_owner": {"S": owner},
            "lease_expires_at": {"N": str(int((time.time() if now is None else now) * 1000) + for_ms)},
        },
    )


def new_container(**kwargs) -> NotificationConsumer:
    """What a fresh Lambda container builds: its own clients, caches and idempotency config.

    Built as the handler builds its own (``app.consumer``, which the ``replier_env`` fixture made with
    the test's ``tuning``); ``kwargs``: ``aws``, ``http``, ``clock``, as ``from_environment`` takes them.
    """
    return app.consumer.__wrapped__(**kwargs)


def folders_of(nylas, message_id: str, grant: str = AGENT_GRANT_ID) -> list[str]:
    """The folders (names) the mailbox shows the message in now."""
    [folders] = [m["folders"] for _, m in nylas.mailbox(grant) if m["id"] == message_id]
    return folders


def handed_off(log_records, reason: str) -> bool:
    """Whether a skip with ``reason`` was logged as a hand-off."""
    return any(
        r.get("message") == "notification skipped"
        and r.get("reason") == reason
        and r.get("handed_off") is True
        for r in log_records()
    )


def with_env(monkeypatch, **variables: str) -> None:
    """Set the replier's variables and start a new container, which reads them."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    app.consumer.cache_clear()


def with_tuning(tuning: dict, **fields) -> None:
    """Set settings no variable sets (``ReplierSettings`` fields); a new container reads them."""
    tuning.update(fields)
    app.consumer.cache_clear()


# A team's Google mailbox as the agent's grant: people write there too, drafts included.
TEAM_GRANT = ("grant-team-0001", "help@acme.example")


def answer_for_a_team_mailbox(nylas, monkeypatch) -> str:
    """Make :data:`TEAM_GRANT` the one agent grant (in the emulator and the replier); its id."""
    nylas.add_grant(*TEAM_GRANT, name="Acme Help", provider="google")
    with_env(monkeypatch, AGENT_GRANT_IDS=TEAM_GRANT[0])
    return TEAM_GRANT[0]
