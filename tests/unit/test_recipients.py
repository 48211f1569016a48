"""Who receives a reply (replyonce.recipients): one well-formed mailbox that a stranger cannot choose."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.recipients import reply_recipient, single_mailbox

OWN = frozenset({"support@acme.example"})
FORM = "no-reply@forms.acme.example"


def message(sender="alice@gmail.com", name="Alice", reply_to=()):
    return {"from": [{"name": name, "email": sender}], "reply_to": [{"email": a} for a in reply_to]}


@pytest.mark.parametrize(
    ("value", "mailbox"),
    [
        ("alice@example.com", "alice@example.com"),
        ("Alice.Smith+tag@Example.COM", "alice.smith+tag@example.com"),
        ("victim@elsewhere.example, team@customer.example", None),
        ("victim@elsewhere.example team@customer.example", None),
        ("Alice <alice@example.com>", None),
        ("@", None),
        ("alice@", None),
        ("@example.com", None),
        ("alice@localhost", None),
        ("alice@exa mple.com", None),
        ("alice@example.com\r\nBcc: x@y.example", None),
        ('"quoted"@example.com', None),
        ("a..b@example.com", None),
        ("x" * 65 + "@example.com", None),
        ("a@" + "b" * 250 + ".com", None),
        (None, None),
        (42, None),
    ],
)
def test_only_a_single_well_formed_mailbox_is_an_address(value, mailbox):
    assert single_mailbox(value) == mailbox


@pytest.mark.parametrize(
    ("m", "trusted", "expected"),
    [
        (message(), (), {"name": "Alice", "email": "alice@gmail.com"}),
        # The same domain is no safeguard on gmail.com: Reply-To is ignored for anyone not trusted.
        (message(reply_to=["stranger@gmail.com"]), (), {"name": "Alice", "email": "alice@gmail.com"}),
        (
            message(reply_to=[f"victim{i}@elsewhere.example" for i in range(50)]),
            (),
            {"name": "Alice", "email": "alice@gmail.com"},
        ),
        (
            message(sender=FORM, name="Form", reply_to=["customer@example.com"]),
            {FORM},
            {"email": "customer@example.com"},
        ),
        (
            message(sender=FORM, name="Form", reply_to=["a@x.example", "b@y.example"]),
            {FORM},
            {"email": "a@x.example"},
        ),
        (
            message(sender=FORM, name="Form", reply_to=["a@x.example, b@y.example", "c@z.example"]),
            {FORM},
            {"email": "c@z.example"},
        ),
        (
            message(sender=FORM, name="Form", reply_to=["support@acme.example"]),
            {FORM},
            {"name": "Form", "email": FORM},
        ),
        (message(sender="support@acme.example"), (), None),
        (message(sender="a@x.example, b@y.example"), (), None),
        (
            message(name="Alice\r\nBcc: evil@x.example"),
            (),
            {"name": "Alice  Bcc: evil@x.example", "email": "alice@gmail.com"},
        ),
        ({"from": []}, (), None),
        ({}, (), None),
    ],
)
def test_reply_recipient(m, trusted, expected):
    assert reply_recipient(m, OWN, trusted) == expected


participant = st.fixed_dictionaries(
    {"email": st.one_of(st.emails().map(str), st.text(max_size=40)), "name": st.text(max_size=20)}
)


@given(
    sender=participant,
    reply_to=st.lists(participant, max_size=60),
    trusted=st.booleans(),
)
def test_never_more_than_one_recipient_never_an_agent_and_always_a_parsed_mailbox(sender, reply_to, trusted):
    m = {"from": [sender], "reply_to": reply_to}
    trusted_senders = {str(sender["email"]).strip().lower()} if trusted else set()
    recipient = reply_recipient(m, OWN, trusted_senders)
    if recipient is None:
        return
    assert recipient["email"] not in OWN
    assert single_mailbox(recipient["email"]) == recipient["email"]
    allowed = {single_mailbox(sender["email"])}
    if trusted:
        allowed |= {single_mailbox(p["email"]) for p in reply_to}
    assert recipient["email"] in allowed
    assert "\n" not in recipient.get("name", "")
    assert "\r" not in recipient.get("name", "")
