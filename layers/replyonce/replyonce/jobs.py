"""What a record asks the replier to do: the three kinds of work (a :data:`Job`), as plain values.

Named a job, not a subject, so it is never mistaken for the email's own subject (``Mail.subject``),
which the rules read too.

Kept apart from the core so the webhook (which parses notifications, and
whose cold start Nylas waits for) imports nothing heavier than this.
"""

from dataclasses import dataclass

from replyonce.mail import Mail, read_message


@dataclass(frozen=True)
class MessageArrived:
    """A ``message.created`` (or one of its variants) for a message in an agent's mailbox."""

    grant_id: str
    message_id: str
    thread_id: str
    payload: Mail
    """The notification's message object, read once (``replyonce.mail``): a raw one given is read here."""

    def __post_init__(self) -> None:
        # A caller holding the raw object (the notification, a replayed export) hands it as it is.
        object.__setattr__(self, "payload", read_message(self.payload) or Mail())


@dataclass(frozen=True)
class SendReported:
    """``message.delivered`` (``delivered``) or ``message.send_failed`` for a reply of ours."""

    grant_id: str
    thread_id: str
    intent_id: str
    reply_message_id: str
    delivered: bool


@dataclass(frozen=True)
class ReconcileDue:
    """Our own check, scheduled after a ``202``: has the queued reply gone out?"""

    grant_id: str
    thread_id: str
    intent_id: str


@dataclass(frozen=True)
class GrantChanged:
    """A grant's lifecycle notification (``grant.created``, ``.updated``, ``.expired``, ``.deleted``).

    Not a :data:`Job` of the core: what it does to the grant is ``replyonce.rules.grant_life``'s, carried
    out by ``replyonce.shell.grant_life``.
    """

    grant_id: str
    kind: str
    """The notification's ``type``."""
    at: int
    """The notification's ``time`` (Nylas' clock, epoch seconds): what orders a grant's notifications."""
    reauthenticated: bool = False
    """``grant.updated``'s ``reauthentication_flag``."""
    notification_id: str = ""


Job = MessageArrived | SendReported | ReconcileDue
"""One record's work: a new message, a send outcome Nylas reported, or our own reconcile."""
