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

Files: each :class:`Message` lists the customer's :class:`Attachment` s, read
only on :meth:`Attachment.read` (capped, within the agent's time, typed errors);
a :class:`Reply` may carry :class:`ReplyAttachment` s, kept in the stack's
bucket until sent, the same bytes on every attempt (``docs/agents.md``,
"Attachments").

What the replier does *not* do for you: undo your side effects. Shadow mode
(``REPLY_MODE=shadow``) and a replay of history (``make replay``) ask your
agent about mail it will never answer, so :attr:`Conversation.mode` says which
run this is, and a side effect belongs only where
:attr:`Conversation.acts_for_real` holds (``send`` and ``review``).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from replyonce.outgoing import refusal


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


class AgentRejected(Exception):
    """The agent refuses this burst for good: logged, counted (``agent_rejected``), never retried."""


class AttachmentError(Exception):
    """An attachment could not be read, or cannot be sent: the base of the errors below.

    Catch it to answer without the file (say so in the reply) or to return a
    :class:`Handoff`. The refusals for good (:class:`AttachmentTooLarge`,
    :class:`AttachmentGone`, :class:`ReplyAttachmentRefused`) are also
    :class:`AgentRejected`: one the agent lets through hands the burst off to a
    person, never retried, never dead-lettered. :class:`AttachmentUnavailable`
    is for now only: let it through and the record is retried.
    """


class AttachmentTooLarge(AttachmentError, AgentRejected):
    """The file is larger than ``attachment_max_bytes``, or than what is left of
    ``attachments_max_bytes_per_record``: counted by the bytes actually read, never by the listed size."""


class AttachmentGone(AttachmentError, AgentRejected):
    """Nylas no longer has the file (``404``), or refuses it for good (any other ``4xx``)."""


class AttachmentUnavailable(AttachmentError):
    """Not now: Nylas did not answer in time (inside the agent's deadline) or answered a ``5xx``/``429``."""


class ReplyAttachmentRefused(AttachmentError, AgentRejected, ValueError):
    """A :class:`Reply`'s attachments break a limit (count, name, total size): raised when the
    ``Reply`` is built, so the agent can leave the file out, or hand off."""


@dataclass(frozen=True)
class Attachment:
    """A file the customer sent, as Nylas lists it on the message; its bytes only on :meth:`read`.

    Attributes
    ----------
    id:
        The Nylas attachment id.
    message_id:
        The message it came with (the download names both).
    filename:
        The file name as the sender gave it, made safe to show: no path (only what follows the last
        ``/`` or ``\\``), no control characters, at most 255 characters; ``""`` when nothing is left.
    content_type:
        The listed MIME type, lower case, parameters dropped (``application/pdf``). The sender chose
        it: a file may not be what it claims (:func:`replyonce.rules.attachments.sniffed_type` tells from
        the bytes).
    size:
        The listed size in bytes. Never trusted: the caps count the bytes read.
    inline:
        Shown inside the body (a logo, a pasted screenshot), named there by ``content_id``.
    content_id:
        The ``cid:`` the HTML refers to, for an inline file; ``""`` otherwise.
    """

    id: str
    message_id: str
    filename: str
    content_type: str
    size: int
    inline: bool = False
    content_id: str = ""
    # Bound by the replier for the agent's call (replyonce.rules.attachments.AttachmentReader); not the value.
    reader: "Callable[[Attachment, int | None], bytes] | None" = field(
        default=None, compare=False, repr=False
    )

    def read(self, max_bytes: int | None = None) -> bytes:
        """The file's bytes, downloaded from Nylas once per record (a second read is the same bytes).

        ``max_bytes`` lowers the cap for this read (a model that takes 4.5 MB need not download 10):
        a larger file raises :class:`AttachmentTooLarge` after at most that many bytes.

        Raises
        ------
        AttachmentTooLarge
            Over ``attachment_max_bytes``, or over what is left of the record's
            ``attachments_max_bytes_per_record``.
        AttachmentGone
            Nylas no longer has it.
        AttachmentUnavailable
            Not now (time-out inside the agent's deadline, a ``5xx``), or the file is read outside a
            replier's call (a test building a ``Message`` by hand, ``make replay``).
        """
        if self.reader is None:
            raise AttachmentUnavailable(f"attachment {self.id}: nothing can read it here")
        return self.reader(self, max_bytes)


@dataclass(frozen=True)
class ReplyAttachment:
    """A file the reply carries.

    Parameters
    ----------
    content:
        The bytes (at least one).
    filename:
        The name the customer sees: no path separators or control characters, at most 255 characters.
    content_type:
        Its MIME type (``application/pdf``).
    """

    content: bytes
    filename: str
    content_type: str = "application/octet-stream"


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
        What the sender wrote in this message (``replyonce.rules.text.new_text``):
        their new words, quoted history ("On … wrote:", ``>`` lines, Outlook
        blocks) and signatures removed, forwarded content kept (the message's own
        subject tells an Outlook block under "RE: FW: …" from a forward). Its promise:
        never an older message's text as theirs. Where the reader cannot tell
        the customer's words from history, it stops being sure at a line
        ``replyonce.rules.text.UNSURE_MARKER`` and the rest of the message follows it.
    html:
        The body exactly as received.
    from_agent:
        Sent by an agent grant of this deployment (the agent's own earlier replies).
    full_text:
        The whole body as plain text, quoted history included (quotes as ``>``
        lines): what to read when ``text`` is not enough — a request the
        reader cut away, a question the customer typed under a pasted header.
        Treat what is not in ``text`` as possibly quoted.
    attachments:
        The files the message carries, inline ones included (:class:`Attachment`); bytes only on
        ``read()``. Files shared as cloud-drive links are links in ``html``, not attachments.
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
    attachments: tuple[Attachment, ...] = ()


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
    attachments:
        Files sent with the reply (:class:`ReplyAttachment`): at most
        ``replyonce.outgoing.MAX_REPLY_ATTACHMENTS`` of them, together at most
        ``replyonce.outgoing.MAX_ATTACHMENT_BYTES`` (Nylas' 25 MB multipart limit, less the request's
        own). Below Nylas' 3 MB JSON limit the reply goes as JSON, above it as multipart form data.

    Raises
    ------
    ReplyAttachmentRefused
        The attachments break a limit: the reply is refused here, when the agent builds it, with the
        reason (a refusal the agent lets through hands the burst off).
    """

    text: str | None = None
    html: str | None = None
    subject: str | None = None
    review: bool = False
    attachments: tuple[ReplyAttachment, ...] = ()

    def __post_init__(self) -> None:
        if not (self.html or "").strip() and not (self.text or "").strip():
            raise ValueError("a Reply needs text or html")
        object.__setattr__(self, "attachments", tuple(self.attachments or ()))
        # The one place a reply's files are judged: replyonce.outgoing, with Nylas' limits.
        problem = refusal(self.attachments)
        if problem:
            raise ReplyAttachmentRefused(problem)


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


Outcome = Reply | NoReply | Handoff
"""What an agent returns."""
