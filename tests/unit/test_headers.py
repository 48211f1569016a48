"""No header value we build can be injected (replyonce.rules.recipients.header_text,
replyonce.rules.outbox.new_intent).

A customer's subject is decoded from RFC 2047 encoded-words, which can carry
any octet, a CR and LF among them; an agent writes its own subject; a
display name is whatever the sender typed. Each of them reaches a header of
the reply, so the stored request — the JSON every attempt sends — must hold
none of the characters that end a header line or that a client may render
as one.
"""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.agent import Reply
from replyonce.core import next_step
from replyonce.mail import read_message
from replyonce.ports import ThreadPage
from replyonce.rules import outbox
from replyonce.rules.outbox import new_intent
from replyonce.rules.recipients import header_text, reply_recipient
from tests.unit.test_core import CUSTOMER, inbound, leased, listing

# What must never be in a header value we build: C0 (CR, LF, TAB, ESC, NUL...), DEL, C1 (NEL U+0085, CSI
# U+009B), LINE SEPARATOR and PARAGRAPH SEPARATOR. Written out here, not imported, so the test is a second
# statement of the rule rather than a copy of the implementation.
FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

INJECTIONS = [
    pytest.param("\r\n", id="crlf"),
    pytest.param("\n", id="lf"),
    pytest.param("\r", id="cr"),
    pytest.param("\r\n\r\n", id="end-of-headers"),
    pytest.param("\x00", id="nul"),
    pytest.param("\t", id="tab"),
    pytest.param("\x1b", id="escape"),
    pytest.param("\x7f", id="del"),
    pytest.param("\x85", id="nel"),
    pytest.param("\x9b", id="csi"),
    pytest.param("\u2028", id="line-separator"),
    pytest.param("\u2029", id="paragraph-separator"),
]
# Only what today's C0-and-DEL filter of display names let through.
BEYOND_C0 = [p for p in INJECTIONS if p.id in {"nel", "csi", "line-separator", "paragraph-separator"}]


def injected(separator: str) -> str:
    """A value with ``separator`` inside it, where ``strip()`` cannot remove it."""
    return f"Refund{separator}Bcc: victim@elsewhere.example"


def built(
    *, target_subject: str = "Order", reply: Reply | None = None, name: str = "Alice", review: bool = False
) -> dict:
    """The request ``new_intent`` stores, as every attempt sends it."""
    intent = new_intent(
        intent_id="i1",
        thread_id="t1",
        target=read_message({"id": "m1", "subject": target_subject}),
        covered=("m1",),
        recipients=({"name": name, "email": "alice@example.com"},),
        reply=reply or Reply(text="Hello"),
        review=review,
        now=1_800_000_000,
    )
    return intent.payload


def header_values(request: dict) -> list[str]:
    """Every header value of the request: the subject, the recipients' names, the custom headers' values."""
    return [
        request["subject"],
        *(p.get("name", "") for p in request["to"]),
        *(h["value"] for h in request.get("custom_headers", [])),
    ]


def assert_injection_free(request: dict) -> None:
    for value in header_values(request):
        assert not FORBIDDEN.search(value), value


@pytest.mark.parametrize("separator", INJECTIONS)
@pytest.mark.parametrize("review", [False, True], ids=["send", "draft"])
def test_the_customers_subject_cannot_inject_a_header(separator, review):
    request = built(target_subject=injected(separator), review=review)
    assert_injection_free(request)
    assert request["subject"].startswith("Re: Refund ")
    assert request["subject"].endswith(" Bcc: victim@elsewhere.example")


@pytest.mark.parametrize("separator", INJECTIONS)
def test_the_agents_own_subject_cannot_inject_a_header(separator):
    request = built(reply=Reply(text="Hello", subject=injected(separator)))
    assert_injection_free(request)
    assert request["subject"].startswith("Refund ")


@pytest.mark.parametrize("separator", INJECTIONS)
def test_a_recipient_name_given_to_the_outbox_cannot_inject_a_header(separator):
    request = built(name=f"Alice{separator}Bcc: victim@elsewhere.example")
    assert_injection_free(request)
    assert request["to"][0]["name"].startswith("Alice ")


@pytest.mark.parametrize("separator", BEYOND_C0)
def test_a_senders_display_name_cannot_inject_a_header(separator):
    name = f"Alice{separator}Bcc: victim@elsewhere.example"
    message = read_message({"from": [{"name": name, "email": "alice@example.com"}]})
    recipient = reply_recipient(message, frozenset())
    # The reply still reaches Alice, under a name with no line break left in it.
    assert recipient["email"] == "alice@example.com"
    assert recipient["name"].startswith("Alice ")
    assert not FORBIDDEN.search(recipient["name"])
    assert_injection_free(built(name=recipient["name"]))


@pytest.mark.parametrize("separator", INJECTIONS)
def test_a_custom_header_value_cannot_inject_a_header(separator, monkeypatch):
    # Today's custom headers are constants; the guarantee is about every header value the outbox builds.
    header = {"name": "Auto-Submitted", "value": injected(separator)}
    monkeypatch.setattr(outbox, "AUTOMATIC_MARKS", (header,))
    request = built()
    assert_injection_free(request)
    assert request["custom_headers"] == [
        {"name": "Auto-Submitted", "value": "Refund" + " " * len(separator) + "Bcc: victim@elsewhere.example"}
    ]


@pytest.mark.parametrize("separator", INJECTIONS)
def test_the_stored_intent_of_an_injected_message_has_no_control_character(separator):
    """The whole path: the message as Nylas lists it, through the plan and the core, to the stored JSON."""
    message = {
        **inbound("m1", sender={**CUSTOMER, "name": f"Alice{separator}Bcc: victim@elsewhere.example"}),
        "subject": injected(separator),
    }
    step = next_step(
        leased(
            listing=listing(message),
            reserved=True,
            agent_outcome=Reply(text="Hello"),
            looked_before_send=ThreadPage((message,), None, 0),
        )
    )
    assert_injection_free(step.intent.payload)
    assert step.intent.payload["to"][0]["email"] == CUSTOMER["email"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Order 123", "Order 123"),
        ("  Order 123  ", "Order 123"),
        ("Order\r\nBcc: x@y.example", "Order  Bcc: x@y.example"),
        ("Order\u2028123", "Order 123"),
        ("Order\x85123", "Order 123"),
        ("\r\n\t", ""),
        ("Ünïcödé — “quoted” ✓", "Ünïcödé — “quoted” ✓"),
    ],
)
def test_header_text(value, expected):
    assert header_text(value) == expected


@given(st.text())
def test_header_text_holds_no_control_character_and_changes_nothing_else(value):
    text = header_text(value)
    assert not FORBIDDEN.search(text)
    assert header_text(text) == text
    assert text == FORBIDDEN.sub(" ", value).strip()
