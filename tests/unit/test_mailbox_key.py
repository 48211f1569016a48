"""One budget per inbox, not per spelling (recipients.mailbox_key, state_items.recipient_key).

``victim+1@gmail.com``, ``Victim+2@GMAIL.com`` and ``v.ictim@googlemail.com``
are one Gmail inbox; ``carol@bücher.example`` and ``carol@xn--bcher-kva.example``
one mailbox. Each spelling the sender may choose must count against the one
per-recipient budget, and two different mailboxes must never share one.
"""

import idna
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.adapters.state_items import recipient_key
from replyonce.rules.recipients import mailbox_key


@pytest.mark.parametrize(
    ("spellings", "key"),
    [
        (
            [
                "victim@gmail.com",
                "victim+1@gmail.com",
                "victim+2@gmail.com",
                "v.ictim@gmail.com",
                "V.I.C.T.I.M+orders+2024@GMAIL.COM",
                "victim@googlemail.com",
                "vic.tim+x@GoogleMail.com",
                " victim@gmail.com ",
            ],
            "victim@gmail.com",
        ),
        (
            ["alice.smith@example.com", "Alice.Smith@Example.COM", "alice.smith+tag@example.com"],
            "alice.smith@example.com",
        ),
        (
            [
                "carol@bücher.example",
                "Carol@BÜCHER.example",
                "carol+x@bücher.example",
                "carol@xn--bcher-kva.example",
                "CAROL+y@XN--BCHER-KVA.EXAMPLE",
            ],
            "carol@xn--bcher-kva.example",
        ),
        # A Workspace or any other domain keeps its dots, whoever hosts it.
        (["a.b@acme.example", "A.B+x@ACME.example"], "a.b@acme.example"),
        # Nothing before the detail: the local part is kept whole rather than emptied.
        (["+x@example.com", "+X@Example.com"], "+x@example.com"),
    ],
)
def test_every_spelling_of_one_mailbox_is_one_key(spellings, key):
    assert {mailbox_key(s) for s in spellings} == {key}
    assert len({recipient_key(s) for s in spellings}) == 1


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("a.b@acme.example", "ab@acme.example"),  # dots matter outside Gmail
        ("victim@gmail.com", "victim@gmail.co"),
        ("victim@gmail.com", "victim@mail.gmail.com"),
        ("victim@gmail.com", "victim@outlook.com"),
        ("alice@example.com", "alice-smith@example.com"),
        ("alice@example.com", "alice@example.org"),
        ("carol@bücher.example", "carol@bucher.example"),
        ("carol@faß.de", "carol@fass.de"),  # IDNA 2008: two domains (IDNA 2003 would merge them)
    ],
)
def test_different_mailboxes_are_different_keys(one, other):
    assert mailbox_key(one) != mailbox_key(other)
    assert recipient_key(one) != recipient_key(other)


def test_a_value_that_is_no_mailbox_is_its_own_key():
    assert mailbox_key(" Not An Address ") == "not an address"
    assert mailbox_key("a@x.example, b@y.example") == "a@x.example, b@y.example"


# ---- properties: spellings drawn at random --------------------------------------------------------------

_ATEXT = "abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*/=?^_`{|}~-"
# A local part without its detail: dot-atoms of atext other than "+" (the separator).
atoms = st.lists(st.text(alphabet=_ATEXT, min_size=1, max_size=6), min_size=1, max_size=3)
# The detail after "+": empty, or dot-atoms that may hold further "+" (the local part stays a dot-atom).
detail = st.lists(st.text(alphabet=_ATEXT + "+", min_size=1, max_size=4), max_size=3).map(".".join)
ascii_domain = st.sampled_from(["example.com", "acme.example", "mail.co.uk", "gmail.co", "outlook.com"])
unicode_domain = st.builds(
    "{}.{}".format,
    st.text(alphabet="abcdeäöüéñçåøß例え", min_size=1, max_size=10).filter(lambda s: not s.isascii()),
    st.sampled_from(["example", "de", "テスト"]),
)


def recase(text: str, flips: list[bool]) -> str:
    """``text`` with the flipped characters upper case, where that is a change of case alone.

    ``"ß".upper()`` is ``"SS"``, another spelling of another domain (``ss.example``), not of this one.
    """
    return "".join(
        c.upper() if flip and len(c.upper()) == 1 and c.upper().lower() == c else c
        for c, flip in zip(text, flips + [False] * len(text), strict=False)
    )


def a_labels(domain: str) -> str:
    """The A-label spelling, from the reference implementation (the code under test must agree with it)."""
    return idna.encode(domain, uts46=True, transitional=False).decode()


@given(
    atoms=atoms,
    domain=st.one_of(ascii_domain, unicode_domain),
    details=st.lists(detail, min_size=1, max_size=4),
    flips=st.lists(st.booleans(), max_size=40),
    as_a_labels=st.booleans(),
)
def test_case_details_and_domain_spelling_never_change_the_key(atoms, domain, details, flips, as_a_labels):
    local = ".".join(atoms)
    expected = f"{local}@{a_labels(domain)}"
    spelt_domain = a_labels(domain) if as_a_labels else domain
    for d in details:
        spelling = recase(f"{local}+{d}@{spelt_domain}", flips)
        assert mailbox_key(spelling) == expected, spelling
    assert mailbox_key(recase(f"{local}@{spelt_domain}", flips)) == expected


@given(
    name=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=2, max_size=12),
    dots=st.lists(st.booleans(), max_size=12),
    tag=st.one_of(st.none(), detail),
    domain=st.sampled_from(["gmail.com", "googlemail.com", "GMail.com", "GOOGLEMAIL.COM"]),
    flips=st.lists(st.booleans(), max_size=40),
)
def test_every_gmail_spelling_of_one_account_is_one_key(name, dots, tag, domain, flips):
    # A dot after any character but the last: never leading, trailing or doubled (a dot-atom).
    dotted = "".join(
        c + ("." if i < len(name) - 1 and i < len(dots) and dots[i] else "") for i, c in enumerate(name)
    )
    spelling = recase(dotted + (f"+{tag}" if tag is not None else "") + "@" + domain, flips)
    assert mailbox_key(spelling) == f"{name}@gmail.com", spelling
    assert recipient_key(spelling) == recipient_key(f"{name}@gmail.com")


@given(one=atoms, other=atoms, domain=st.one_of(ascii_domain, unicode_domain))
def test_different_local_parts_where_dots_matter_are_different_keys(one, other, domain):
    a, b = ".".join(one), ".".join(other)
    keys = {mailbox_key(f"{a}@{domain}"), mailbox_key(f"{b}@{domain}")}
    assert len(keys) == (1 if a == b else 2)
    assert len({recipient_key(k) for k in keys}) == len(keys)
