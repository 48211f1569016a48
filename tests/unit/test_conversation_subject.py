"""The agent's Message reads the customer's new words with the message's own subject (issue #41, tenth split).

Outlook's reply and forward differ only by the subject: ``replyonce.rules.conversation.agent_message`` must
hand it to ``replyonce.rules.text.new_text``, or a reply above a forwarded message's block ("RE: FW: …")
gives the agent that older message as the customer's words.
"""

from replyonce.mail import read_message
from replyonce.rules.conversation import agent_message

BODY = (
    "<p>Please see below, thanks.</p><p>From: Acme Support &lt;support@acme.example&gt;<br>"
    "Sent: Monday, November 30, 2026 10:02 AM<br>To: Alice &lt;alice@example.com&gt;<br>"
    "Subject: FW: Order 1042</p><p>Your order 1042 shipped on Friday.</p>"
)


def message(subject: str):
    raw = {
        "id": "m1",
        "thread_id": "t1",
        "from": [{"email": "alice@example.com", "name": "Alice"}],
        "to": [{"email": "desk@acme.example"}],
        "subject": subject,
        "body": BODY,
        "date": 1_796_000_000,
    }
    mail = read_message(raw)
    assert mail is not None
    return agent_message(mail, {"desk@acme.example"})


def test_a_reply_to_a_forward_hands_the_agent_only_the_customers_words():
    reply = message("RE: FW: Order 1042")
    assert reply.text == "Please see below, thanks."
    assert "shipped on Friday" in reply.full_text  # the whole body still holds it, marked as possibly quoted


def test_a_forward_keeps_the_forwarded_message():
    assert "shipped on Friday" in message("FW: FW: Order 1042").text
