"""Who receives a reply (replyonce.rules.recipients): one well-formed mailbox that a stranger cannot
choose."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.mail import read_message
from replyonce.rules.recipients import AddressRefusal, parse_mailbox, reply_recipient, single_mailbox

OWN = frozenset({"support@acme.example"})
FORM = "no-reply@forms.acme.example"
GOOGLE = frozenset({"mx.google.com"})  # the receiving provider whose Authentication-Results count


def message(sender="alice@gmail.com", name="Alice", reply_to=(), authentication=None):
    """A message; ``authentication``: the receiving provider's ``Authentication-Results`` (default: a
    pass for the sender's domain when it names a ``Reply-To``, as a contact form's provider gives it)."""
    domain = (single_mailbox(sender) or sender).rpartition("@")[2]  # DKIM and DMARC name A-labels
    if authentication is None and reply_to:
        authentication = f"mx.google.com; dkim=pass header.d={domain}; dmarc=pass header.from={domain}"
    headers = [{"name": "Authentication-Results", "value": authentication}] if authentication else []
    return read_message(
        {
            "from": [{"name": name, "email": sender}],
            "reply_to": [{"email": a} for a in reply_to],
            "headers": headers,
        }
    )


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
        # An internationalised domain is answered, at its A-labels (the spelling every provider accepts).
        ("carol@bücher.example", "carol@xn--bcher-kva.example"),
        ("Carol@BÜCHER.Example", "carol@xn--bcher-kva.example"),
        ("carol@XN--BCHER-KVA.example", "carol@xn--bcher-kva.example"),
        ("carol@bücher\u3002example", "carol@xn--bcher-kva.example"),  # UTS #46: an ideographic full stop
        ("carol@faß.de", "carol@xn--fa-hia.de"),  # IDNA 2008: not fass.de, someone else's domain
        ("carol@例え.テスト", "carol@xn--r8jz45g.xn--zckzah"),
        # ... and refused whenever its ASCII form would be: separators, spaces, CR/LF, bad labels, lengths.
        ("carol@bücher.example, team@customer.example", None),
        ("carol@bü cher.example", None),
        ("carol@bücher.example\r\nBcc: x@y.example", None),
        ("carol@bü\r\ncher.example", None),
        ("carol@bücher\u2028.example", None),
        ("carol@a\uff0cb.example", None),  # a fullwidth comma: no separator by another name
        ("carol@a\ufe6bb.example", None),  # a small commercial at
        ("carol@bücher..example", None),
        ("carol@-bücher.example", None),
        ("carol@bücher", None),
        ("carol@" + "ü" * 64 + ".example", None),  # its A-label is longer than 63
        ("carol@" + ".".join(["ü" * 56] * 4) + ".example", None),  # 241 characters, 265 octets as A-labels
        ("Carol <carol@bücher.example>", None),
        # A non-ASCII local part (SMTPUTF8) is refused: AddressRefusal.NON_ASCII_LOCAL_PART.
        ("jürgen@example.com", None),
        ("jürgen@bücher.example", None),
    ],
)
def test_only_a_single_well_formed_mailbox_is_an_address(value, mailbox):
    assert single_mailbox(value) == mailbox


@pytest.mark.parametrize(
    ("value", "refusal"),
    [
        ("jürgen@example.com", AddressRefusal.NON_ASCII_LOCAL_PART),
        ("Jürgen.Müller@bücher.example", AddressRefusal.NON_ASCII_LOCAL_PART),
        ("用户@例子.广告", AddressRefusal.NON_ASCII_LOCAL_PART),
        # Not even an SMTPUTF8 mailbox: no skip of its own, the address is simply not one.
        ("jür gen@example.com", AddressRefusal.NOT_A_MAILBOX),
        ("jürgen\u00a0@example.com", AddressRefusal.NOT_A_MAILBOX),
        ("jür\u2028gen@example.com", AddressRefusal.NOT_A_MAILBOX),
        ("jürgen@exa mple.com", AddressRefusal.NOT_A_MAILBOX),
        ("jürgen@example.com, x@y.example", AddressRefusal.NOT_A_MAILBOX),
        ("jür..gen@example.com", AddressRefusal.NOT_A_MAILBOX),
        ("alice@example.com, bob@example.com", AddressRefusal.NOT_A_MAILBOX),
        ("alice@localhost", AddressRefusal.NOT_A_MAILBOX),
        (None, AddressRefusal.NOT_A_MAILBOX),
    ],
)
def test_a_refused_address_says_why(value, refusal):
    assert parse_mailbox(value) is refusal


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
        (read_message({"from": []}), (), None),
        (read_message({}), (), None),
        (
            message(sender="carol@bücher.example"),
            (),
            {"name": "Alice", "email": "carol@xn--bcher-kva.example"},
        ),
        (message(sender="jürgen@example.com"), (), None),
        # Dots matter outside Gmail: s.upport@ is someone else's mailbox, answered.
        (message(sender="s.upport@acme.example"), (), {"name": "Alice", "email": "s.upport@acme.example"}),
        # Trust is granted to one address, not widened to its +detail variants.
        (
            message(sender="no-reply+x@forms.acme.example", reply_to=["customer@example.com"]),
            {FORM},
            {"name": "Alice", "email": "no-reply+x@forms.acme.example"},
        ),
        # A trusted sender is one address however it is spelt.
        (
            message(sender="No-Reply@Forms.Bücher.example", reply_to=["customer@example.com"]),
            {"no-reply@forms.xn--bcher-kva.example"},
            {"email": "customer@example.com"},
        ),
    ],
)
def test_reply_recipient(m, trusted, expected):
    assert reply_recipient(m, OWN, trusted, authserv_ids=GOOGLE) == expected


@pytest.mark.parametrize(
    ("own", "sender"),
    [
        ("info@bücher.example", "info@xn--bcher-kva.example"),
        ("info@xn--bcher-kva.example", "info@bücher.example"),
        ("info@xn--bcher-kva.example", "INFO@BÜCHER.example"),
        ("Info@Bücher.Example", "info@xn--bcher-kva.example"),
        # The agent's inbox in any spelling (replyonce.rules.recipients.mailbox_key): a reply to it is to
        # ourselves.
        ("support@acme.example", "support+orders@acme.example"),
        ("acme.support@gmail.com", "AcmeSupport+x@googlemail.com"),
    ],
)
def test_an_agent_address_is_recognised_in_every_spelling_of_its_mailbox(own, sender):
    form = "no-reply@forms.example"
    assert reply_recipient(message(sender=sender), {own}) is None
    # Nor does a trusted form's Reply-To aim the reply at the agent: it goes to the form instead.
    via_form = message(sender=form, name="Form", reply_to=[sender])
    assert reply_recipient(via_form, {own}, {form}) == {"name": "Form", "email": form}


participant = st.fixed_dictionaries(
    {"email": st.one_of(st.emails().map(str), st.text(max_size=40)), "name": st.text(max_size=20)}
)


@given(
    sender=participant,
    reply_to=st.lists(participant, max_size=60),
    trusted=st.booleans(),
)
def test_never_more_than_one_recipient_never_an_agent_and_always_a_parsed_mailbox(sender, reply_to, trusted):
    m = read_message({"from": [sender], "reply_to": reply_to})
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


# Addresses built from parts, so that many parse: labels of ASCII and non-ASCII letters, joined by dots,
# by what UTS #46 maps to a dot (U+3002, U+FF0E), or by what must never pass (a comma, a space, CR/LF,
# a second @, their fullwidth look-alikes, LINE SEPARATOR, NEL).
label = st.text(alphabet="abzAZ09-üÜß例\u00ad", min_size=1, max_size=8)
joint = st.sampled_from(
    [".", ".", ".", "\u3002", "\uff0e", ",", " ", "\r\n", "@", "\uff0c", "\ufe6b", "\u2028", "\x85"]
)
local_part = st.text(alphabet='abZ09.+_-ü"<> ', min_size=1, max_size=12)
built_address = st.builds(
    lambda local, labels, joints, tld: (
        local + "@" + "".join(a + b for a, b in zip(labels, joints, strict=False)) + tld
    ),
    local_part,
    st.lists(label, min_size=1, max_size=4),
    st.lists(joint, min_size=4, max_size=4),
    st.sampled_from(["example", "テスト", "com"]),
)


@given(st.one_of(built_address, st.emails().map(str)))
def test_an_accepted_address_is_one_ascii_mailbox_and_its_own_spelling(value):
    mailbox = single_mailbox(value)
    if mailbox is None:
        return
    local, _, domain = mailbox.partition("@")
    assert mailbox.isascii()
    assert mailbox == mailbox.lower()
    assert mailbox.count("@") == 1
    assert not any(c in mailbox for c in ' ,;<>"\r\n\t')
    assert "." in domain
    assert len(mailbox) <= 254
    assert len(local) <= 64
    assert single_mailbox(mailbox) == mailbox
