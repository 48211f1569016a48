"""An example agent: answers order-status questions from a small table, hands refunds to a person.

Deploy it with ``ReplyAgent=order_status_agent:reply`` (``REPLY_AGENT``); run it
locally with ``make serve ARGS="--agent order_status_agent:reply"`` and
``make mail``. It shows the three outcomes of the contract (``docs/agents.md``):
a :class:`~replyonce.agent.Reply` built from the whole burst, a
:class:`~replyonce.agent.Handoff` for what a person must decide, and a
:class:`~replyonce.agent.NoReply` for a thank-you that needs no answer.

It also shows where a side effect goes: a refund request opens a ticket for the
person who decides it (here only a log line, ``would open a ticket``), and only
when ``conversation.acts_for_real`` — in ``send`` and ``review`` mode. Shadow
mode and ``make replay`` ask the same question about mail nobody will answer
from here: they get the same ``Handoff`` and open nothing.
"""

import re

from replyonce.agent import Conversation, Handoff, NoReply, Reply
from replyonce.observability import logger

# In a real deployment: your order system. Here: a table small enough to read.
ORDERS = {
    "1042": "shipped on 28 November with DHL, tracking JD014600006281",
    "1043": "being packed; it leaves our warehouse tomorrow",
    "1044": "delivered on 27 November",
}
_ORDER_NUMBER = re.compile(r"\border\s*(?:number\s*|no\.?\s*|#\s*)?(\d{3,})\b", re.IGNORECASE)
_REFUND = re.compile(r"\b(refund|money back|chargeback|reimburse)", re.IGNORECASE)
_THANKS_ONLY = re.compile(r"^\W*(thanks?|thank you|cheers|great|perfect)\b[\w\s!.,]*$", re.IGNORECASE)


def open_ticket(conversation: Conversation, reason: str) -> None:
    """The example's side effect, a stand-in for your helpdesk: here only a log line.

    A real one creates the ticket idempotently on ``conversation.key`` (``docs/agents.md``): the agent may
    be asked again for a burst whose reply was not stored yet, and must not open a second ticket.
    """
    logger.info(
        "would open a ticket",
        extra={"ticket_key": conversation.key, "reason": reason, "mode": conversation.mode},
    )


def reply(conversation: Conversation) -> Reply | NoReply | Handoff:
    """Answer every order the burst asks about; a refund request goes to a person, with a ticket."""
    written = "\n".join(m.text for m in conversation.to_answer)
    if _REFUND.search(written):
        reason = "the customer asks for a refund: a person decides"
        # Only when the customer is answered for real: in shadow mode or a replay, a ticket would be a
        # real one for a customer nobody answers from here (issue 40). The decision is the same.
        if conversation.acts_for_real:
            open_ticket(conversation, reason)
        return Handoff(reason)
    orders = list(dict.fromkeys(_ORDER_NUMBER.findall(written)))
    if not orders:
        # The reader may have cut the request away (a pasted header block, "On … wrote:" typed by the
        # customer): look in the whole body's unquoted lines before handing off.
        unquoted = "\n".join(
            line
            for m in conversation.to_answer
            for line in m.full_text.splitlines()
            if not line.startswith(">")
        )
        if _REFUND.search(unquoted):
            return Handoff("the customer asks for a refund: a person decides")
        orders = list(dict.fromkeys(_ORDER_NUMBER.findall(unquoted)))
    if not orders:
        if all(_THANKS_ONLY.match(m.text.strip() or "thanks") for m in conversation.to_answer):
            return NoReply("a thank-you needs no answer")
        return Handoff("no order number: a person reads it")
    name = conversation.target.sender_name or "there"
    lines = [
        f"Order {number} is {ORDERS[number]}."
        if number in ORDERS
        else f"I cannot find order {number}; could you check the number on your confirmation?"
        for number in orders
    ]
    return Reply(text=f"Hi {name},\n\n" + "\n\n".join(lines) + f"\n\n{conversation.agent.name or 'Support'}")
