"""The agent's view of a thread, built from the listing the replier already read (no extra request).

Pure: the listing's messages (newest first), the burst the plan chose, the
answering grant and the mode in; a :class:`replyonce.agent.Conversation` out,
oldest first.
"""

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from replyonce.agent import AgentIdentity, Conversation, Message, Mode
from replyonce.attachments import listed_attachments
from replyonce.keys import conversation_key
from replyonce.plan import Burst, message_id
from replyonce.screening import address, sender_email
from replyonce.text import full_text, new_text


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def agent_message(message: Mapping[str, Any], agent_addresses: Collection[str]) -> Message:
    """One Nylas message as the contract's :class:`~replyonce.agent.Message`."""
    senders = message.get("from")
    first = senders[0] if isinstance(senders, list) and senders and isinstance(senders[0], Mapping) else {}
    recipients = message.get("to")
    body = message.get("body")
    html = body if isinstance(body, str) else str(message.get("snippet") or "")
    sender = sender_email(message)
    return Message(
        id=message_id(message),
        sender=sender,
        sender_name=str(first.get("name") or ""),
        to=tuple(a for p in recipients if (a := address(p))) if isinstance(recipients, list) else (),
        subject=str(message.get("subject") or ""),
        date=_int(message.get("date")),
        text=new_text(html),
        html=html,
        from_agent=sender in agent_addresses,
        full_text=full_text(html),
        attachments=listed_attachments(message),
    )


def conversation_for(
    listing: Sequence[Mapping[str, Any]],
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
