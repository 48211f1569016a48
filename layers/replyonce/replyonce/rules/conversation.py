"""The agent's view of a thread, built from the listing the replier already read (no extra request).

Pure: the listing's messages (newest first), the burst the plan chose, the
answering grant and the mode in; a :class:`replyonce.agent.Conversation` out,
oldest first.
"""

from collections.abc import Collection, Sequence

from replyonce.agent import AgentIdentity, Conversation, Message, Mode
from replyonce.keys import conversation_key
from replyonce.mail import Mail
from replyonce.rules.attachments import listed_attachments
from replyonce.rules.plan import Burst, message_id
from replyonce.rules.text import full_text, new_text


def agent_message(message: Mail, agent_addresses: Collection[str]) -> Message:
    """One Nylas message as the contract's :class:`~replyonce.agent.Message`."""
    html = message.body if message.body is not None else message.snippet
    sender = message.sender
    return Message(
        id=message.id,
        sender=sender,
        sender_name=message.from_[0].name if message.from_ else "",
        to=tuple(a.email for a in message.to if a.email),
        subject=message.subject,
        date=message.date,
        text=new_text(html, message.subject),
        html=html,
        from_agent=sender in agent_addresses,
        full_text=full_text(html),
        attachments=listed_attachments(message),
    )


def conversation_for(
    listing: Sequence[Mail],
    burst: Burst,
    *,
    agent: AgentIdentity,
    agent_addresses: Collection[str],
    thread_id: str,
    mode: Mode,
) -> Conversation:
    """The conversation the agent answers: the thread oldest first, the burst, the target, the key.

    ``mode`` is required (no default): every caller says whether this run answers a customer (``send``,
    ``review``) or not (``shadow``, ``replay``), and the key follows it (``keys.conversation_key``).
    """
    seen: dict[str, Message] = {}
    for raw in reversed(listing):  # the listing is newest first; the agent reads oldest first
        mid = message_id(raw)
        if mid and mid not in seen:
            seen[mid] = agent_message(raw, agent_addresses)
    messages = tuple(seen.values())
    covered = set(burst.covered)
    to_answer = tuple(m for m in messages if m.id in covered)
    target = seen[message_id(burst.target)]
    return Conversation(
        messages=messages,
        to_answer=to_answer,
        target=target,
        agent=agent,
        key=conversation_key(agent.grant_id, thread_id, burst.covered, mode),
        thread_id=thread_id,
        mode=mode,
    )
