"""The agent contract: what ReplyOnce gives your agent, and what your agent gives back.

ReplyOnce is the exactly-once machinery around *your* email agent. Point
``REPLY_AGENT`` at ``module:function`` and the replier calls ``function`` once
per burst — the messages a customer wrote before the agent answered — inside
the thread's lease, with one argument, a :class:`Conversation`::

    from replyonce.agent import Conversation, Handoff, NoReply, Reply

    def reply(conversation: Conversation) -> Reply | NoReply | Handoff:
        if "refund" in conversation.target.text.lower():
            return Handoff("refunds are decided by a person")
        return Reply(text=f"Hi {conversation.target.sender_name or 'there'}, ...")

What the replier guarantees around it:

- the reply you return is stored *before* anything is sent, and every retry
  sends those stored bytes: you are never asked twice for a burst whose reply
  is stored, and two different replies can never both go out;
- you may be called again for the same burst after a crash *before* your
  reply was stored: make your own side effects idempotent with
  :attr:`Conversation.key` (``docs/agents.md`` shows Powertools'
  ``idempotent_function`` doing it);
- an exception is a transient failure (the record is retried with backoff);
  :class:`AgentRejected` is final (logged, counted, never retried); a call
  that outlives ``AGENT_TIMEOUT_SECONDS`` is a retry, never a half-stored reply.

What the replier does *not* do for you: undo your side effects. Shadow mode
(``REPLY_MODE=shadow``) and a replay of history (``make replay``) ask your
agent about mail it will never answer, so :attr:`Conversation.mode` says which
run this is, and a side effect belongs only where
:attr:`Conversation.acts_for_real` holds (``send`` and ``review``).
"""

from dataclasses import dataclass
from enum import StrEnum


class Mode(StrEnum):
    """Why the agent is asked: :attr:`Conversation.mode`.

    Why the agent must be told: the same function runs in all four, and only
    two of them answer a customer. A ticket opened or a refund issued in the
    other two is real for a customer who will never hear of it (issue 40:
    shadow mode opened three real tickets and sent nothing).
    """

    SEND = "send"
    """``REPLY_MODE=send``: the reply is sent to the customer."""
    REVIEW = "review"
    """``REPLY_MODE=review``: the reply becomes a draft a person of the mailbox sends."""
    SHADOW = "shadow"
    """``REPLY_MODE=shadow``: live mail, nothing is sent or drafted; what would be is recorded."""
    REPLAY = "replay"
    """``make replay`` (``python -m ops replay``): past mail, read only; what would have been is reported."""

    @property
    def acts_for_real(self) -> bool:
        """True for ``send`` and ``review``: the customer is answered, so side effects belong here."""
        return self in (Mode.SEND, Mode.REVIEW)


@dataclass(frozen=True)
class Message:
    """One message of the thread, as the agent sees it.

    Attributes
    ----------
    id:
        The Nylas message id.
    sender, sender_name:
        The ``From`` address (lower case) and display name.
    to:
        The ``To`` addresses (lower case).
    subject:
        The subject line.
    date:
        The message's ``date`` (Unix seconds) as Nylas gives it — from the
        sender's clock: fine to show, never to order by.
    text:
        What the sender wrote in this message (``replyonce.text.new_text``):
        their new words, quoted history ("On … wrote:", ``>`` lines, Outlook
        blocks) and signatures removed, forwarded content kept. Its promise:
        never an older message's text as theirs. Where the reader cannot tell
        the customer's words from history, it stops being sure at a line
        ``replyonce.text.UNSURE_MARKER`` and the rest of the message follows it.
    html:
        The body exactly as received.
    from_agent:
        Sent by an agent grant of this deployment (the agent's own earlier replies).
    full_text:
        The whole body as plain text, quoted history included (quotes as ``>``
        lines): what to read when ``text`` is not enough — a request the
        reader cut away, a question the customer typed under a pasted header.
        Treat what is not in ``text`` as possibly quoted.
    """

    id: str
    sender: str
    sender_name: str
    to: tuple[str, ...]
    subject: str
    date: int
    text: str
    html: str
    from_agent: bool
    full_text: str = ""


@dataclass(frozen=True)
class AgentIdentity:
    """The grant answering: ``grant_id``, its ``email`` and display ``name``."""

    grant_id: str
    email: str
    name: str


@dataclass(frozen=True)
class Conversation:
    """What the agent is asked to answer.

    Attributes
    ----------
    messages:
        The thread as read, oldest first (the agent's earlier replies included, ``from_agent``).
    to_answer:
        The messages this reply covers — the whole burst, oldest first.
    target:
        The newest of ``to_answer``: the reply threads on it and goes to its sender.
    agent:
        The answering grant.
    key:
        The same string on every retry of this burst: the idempotency key for
        the agent's own side effects (a refund, a ticket).
    thread_id:
        The Nylas thread.
    mode:
        Why the agent is asked (:class:`Mode`): ``send``, ``review``, ``shadow`` or ``replay``. Only
        ``send`` and ``review`` answer a customer: do a side effect only when :attr:`acts_for_real`.
        A replay's ``key`` is of its own kind (``replay-`` and a UUID): it never equals the key the
        live replier gives the same burst, so an idempotency store never takes one for the other.
    """

    messages: tuple[Message, ...]
    to_answer: tuple[Message, ...]
    target: Message
    agent: AgentIdentity
    key: str
    thread_id: str
    # Required, no default: a Conversation built without saying why would claim to be for real.
    mode: Mode

    def __post_init__(self) -> None:
        # "shadow" as a plain string is accepted (a StrEnum equals its value); anything else is an error
        # here rather than a silent "not send" in the agent.
        object.__setattr__(self, "mode", Mode(self.mode))

    @property
    def acts_for_real(self) -> bool:
        """True in ``send`` and ``review`` mode only: the one place for a refund, a ticket, an email."""
        return self.mode.acts_for_real


@dataclass(frozen=True)
class Reply:
    """Answer the burst.

    Parameters
    ----------
    text:
        Plain text; sent as escaped HTML paragraphs (blank lines separate them).
    html:
        HTML sent as given (used when both are set).
    subject:
        The subject; by default ``Re:`` and the target's subject.
    review:
        Make this one reply a draft in the mailbox for a person to send,
        instead of sending it (``REPLY_MODE=review`` does it for every reply).
    """

    text: str | None = None
    html: str | None = None
    subject: str | None = None
    review: bool = False

    def __post_init__(self) -> None:
        if not (self.html or "").strip() and not (self.text or "").strip():
            raise ValueError("a Reply needs text or html")


@dataclass(frozen=True)
class NoReply:
    """Send nothing: the burst is settled as declined (skip reason ``agent_declined``) with ``reason``."""

    reason: str


@dataclass(frozen=True)
class Handoff:
    """Leave the burst for a person: settled as ``handed_off``, never offered to the agent again.

    Counted in the ``HandedOff`` metric (alarm on it to page a person); the
    message is moved to ``HANDOFF_FOLDER`` when that is set.
    """

    reason: str


class AgentRejected(Exception):
    """The agent refuses this burst for good: logged, counted (``agent_rejected``), never retried."""


Outcome = Reply | NoReply | Handoff
"""What an agent returns."""
