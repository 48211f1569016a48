"""The real replier over the in-memory ports: what the handler decides, without moto or HTTP.

``Desk`` is the replier's world as ``tests/interleavings.py`` builds it for one worker at a time: the
real shell and core (``replyonce.shell.replier.Replier``, the template's agent) over ``FakeStateStore`` and
``FakeMailbox`` (``tests/fakes.py``, held to DynamoDB and the Nylas emulator by ``tests/contract``), on
one settable clock. A notification goes in as the webhook queues it (``devstack.events.envelope``) and
is handled as the consumer hands it over (``Notification.job``); a record the replier defers comes
back when its delay has passed, as the queue brings it back. What a test reads is what a user sees:
the emails that went out (``sent``), the outcome or skip reason of each notification, the ledger.

What stays with the real handler (``tests/integration``): Powertools idempotency (a notification
delivered twice), SQS (visibility, the dead-letter queue), the wire (Nylas' answers, faults, request
counts) and concurrency between containers.
"""

from dataclasses import dataclass, field
from typing import Any

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from replyonce.adapters.agents import template_agent
from replyonce.config import ReplierSettings
from replyonce.exceptions import Deferred
from replyonce.observability import skipped
from replyonce.policy import Policy, policy_of
from replyonce.reasons import SkipReason
from replyonce.rules.notification import Notification
from replyonce.shell.replier import Replier
from tests.fakes import Clock, FakeMailbox, FakeStateStore, SentEmail

# What the replier's settings require and its decisions never read: where its tables and queue are.
PLACEHOLDERS = {
    "QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/notifications",
    "IDEMPOTENCY_TABLE": "idempotency",
    "STATE_TABLE": "state",
    "NYLAS_API_KEY_SECRET_ID": "nylas-api-key",
}

IN_SERVICE_SECONDS = 86_400
"""The state table has been in service this long (``table#began``), as ``put_in_service`` leaves it."""


@dataclass
class Desk:
    """One agent grant's mailbox, its state table and a replier container, on one clock."""

    clock: Clock = field(default_factory=Clock)
    policy: Policy = field(default_factory=lambda: Policy(agent_grant_ids=(AGENT_GRANT_ID,)))
    agent: Any = template_agent
    mailbox: FakeMailbox = field(init=False)
    store: FakeStateStore = field(init=False)
    outcomes: list[str] = field(default_factory=list)
    """Each record's end: its outcome (``replied``...), ``skipped:<reason>`` or ``deferred:<reason>``."""
    _replier: Replier | None = None

    def __post_init__(self) -> None:
        self.mailbox = FakeMailbox(self.clock)
        self.mailbox.add_grant(AGENT_GRANT_ID, AGENT_EMAIL, "Acme Support")
        self.store = FakeStateStore(self.clock)
        self.store.began_ms = int((self.clock() - IN_SERVICE_SECONDS) * 1000)

    def configure(self, tuning: dict | None = None, **variables: str) -> None:
        """The replier's environment set to ``variables`` and ``tuning`` (the settings no variable sets),
        read as the handler reads them, over the defaults: a new container on the same world."""
        environment = {**PLACEHOLDERS, "AGENT_GRANT_IDS": ",".join(self.policy.agent_grant_ids), **variables}
        self.policy = policy_of(ReplierSettings.from_environment(environment, tuning=tuning))
        self._replier = None

    @property
    def replier(self) -> Replier:
        if self._replier is None:
            self._replier = Replier(
                self.policy,
                self.store,
                self.mailbox,
                self.agent,
                reconcile_later=lambda due, seconds: None,
                lease_wait_seconds=0.0,
                clock=self.clock,
                monotonic=self.clock,
                sleep=self.clock.advance,
            )
        return self._replier

    # ---- the world's side -------------------------------------------------------------------------------

    def inbound(self, *, sender: str = CUSTOMER_EMAIL, grant_id: str = AGENT_GRANT_ID, **kwargs: Any) -> dict:
        """A customer's message arrives (a second later than whatever happened before)."""
        self.clock.advance(1)
        kwargs.setdefault("subject", "Where is my order?")
        kwargs.setdefault("body", "<p>Order 1042 has not arrived.</p>")
        return self.mailbox.deliver(grant_id, sender=sender, **kwargs)

    def person_replies(self, to: dict, body: str = "<p>On it.</p>") -> dict:
        """A colleague answers from the shared mailbox: the grant's own address, no metadata of ours."""
        self.clock.advance(1)
        grant = self.mailbox.grants[to["grant_id"]]
        # A person's mail client names what it answers (In-Reply-To): every real message has a Message-ID,
        # which the fake gives only on request, so the customer's gets one here.
        stored = next(m for m in self.mailbox.messages if m["id"] == to["id"])
        email_id = next((h["value"] for h in stored["headers"] if h["name"].lower() == "message-id"), "")
        if not email_id:
            email_id = f"<{to['id']}@customer.example>"
            stored["headers"].append({"name": "Message-ID", "value": email_id})
        message = self.mailbox.deliver(
            to["grant_id"],
            sender=grant.email,
            subject=f"Re: {to['subject']}",
            body=body,
            thread_id=to["thread_id"],
            folders=["sent"],
            to=[p["email"] for p in to["from"]],
            headers=[{"name": "In-Reply-To", "value": email_id}],
        )
        return message

    # ---- the pipeline's side ----------------------------------------------------------------------------

    def notify(self, message: dict, notification_type: str = "message.created", *, retries: int = 5) -> str:
        """The webhook's notification of ``message``, handled until it ends (a deferral back when due)."""
        notification = Notification(envelope(message, notification_type=notification_type))
        job = notification.job()
        if job is None:
            outcome = skipped(SkipReason.UNSUPPORTED_TYPE, notification_type=notification.type)
            return self._ended(outcome)
        for _ in range(retries + 1):
            try:
                return self._ended(self.replier.handle(job, remaining_seconds=lambda: 900.0))
            except Deferred as deferred:
                self.outcomes.append(f"deferred:{deferred.reason.value}")
                self.clock.advance(deferred.seconds if deferred.seconds is not None else 10)
        return self.outcomes[-1]

    def _ended(self, outcome: dict[str, Any]) -> str:
        name = str(outcome.get("outcome", ""))
        ended = f"skipped:{outcome['reason']}" if name == "skipped" else name
        self.outcomes.append(ended)
        self.clock.advance(1)
        return ended

    # ---- what the world saw -----------------------------------------------------------------------------

    @property
    def sent(self) -> list[SentEmail]:
        """Every email that went out, in order."""
        return list(self.mailbox.sent)

    def skips(self) -> list[str]:
        """The skip reasons, in order: what the replier logged and counted for each notification skipped."""
        return [o.split(":", 1)[1] for o in self.outcomes if o.startswith("skipped:")]

    def ledger_status(self, message: dict) -> str | None:
        entry = self.store.ledger_entry(message["grant_id"], message["id"])
        return None if entry is None else str(entry.status.value)
