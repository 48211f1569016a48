"""What the provider vouches for (replyonce.rules.evidence) and whom a reply may reach on it
(replyonce.rules.recipients.recipient_choice): the rule of evidence of docs/design.md, one table each."""

import pytest

from replyonce.config import TrustedList, trusted_lists
from replyonce.mail import read_message
from replyonce.ports import Folder
from replyonce.reasons import SkipReason
from replyonce.rules.evidence import Authentication, in_sent_folder, sender_authenticated, sent_folder_ids
from replyonce.rules.recipients import recipient_choice

PROVIDER = frozenset({"mx.google.com"})
OWN = frozenset({"support@acme.example"})
GROUP = TrustedList("customers.acme.example", "customers@acme.example")
FORM = "no-reply@forms.acme.example"


def results(value: str) -> dict:
    return {"name": "Authentication-Results", "value": value}


def message(sender, *headers, reply_to=(), list_id=None, original=None):
    named = list(headers)
    if list_id:
        named.append({"name": "List-Id", "value": f"<{list_id}>"})
    if original:
        named.append({"name": "X-Original-From", "value": original})
    return read_message(
        {"from": [{"email": sender}], "reply_to": [{"email": a} for a in reply_to], "headers": named}
    )


@pytest.mark.parametrize(
    ("headers", "sender", "verdict"),
    [
        (
            [results("mx.google.com; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example")],
            "a@acme.example",
            Authentication.PASS,
        ),
        # DKIM alone passes when its signing domain is aligned with From's (a parent or a child).
        (
            [results("mx.google.com; dkim=pass header.d=acme.example")],
            "a@mail.acme.example",
            Authentication.PASS,
        ),
        ([results("mx.google.com; dkim=pass header.d=other.example")], "a@acme.example", Authentication.FAIL),
        (
            [results("mx.google.com; spf=pass; dmarc=fail header.from=acme.example")],
            "a@acme.example",
            Authentication.FAIL,
        ),
        # A DMARC pass for another From domain is not this From's.
        (
            [results("mx.google.com; dmarc=pass header.from=other.example")],
            "a@acme.example",
            Authentication.FAIL,
        ),
        ([], "a@acme.example", Authentication.MISSING),
        # Typed by the sender (no provider's id), alone or above the provider's: never the provider's word.
        ([results("mx.attacker.example; dmarc=pass")], "a@acme.example", Authentication.MISSING),
        ([results("dmarc=pass header.from=acme.example")], "a@acme.example", Authentication.MISSING),
        (
            [results("mx.attacker.example; dmarc=pass"), results("mx.google.com; dmarc=fail")],
            "a@acme.example",
            Authentication.FAIL,
        ),
        # The topmost of the provider's own is its verdict: a lower copy was an earlier hop's.
        (
            [results("mx.google.com; dmarc=fail"), results("mx.google.com; dmarc=pass")],
            "a@acme.example",
            Authentication.FAIL,
        ),
    ],
)
def test_only_the_receiving_providers_authentication_results_vouch_for_a_from(headers, sender, verdict):
    assert sender_authenticated(message(sender, *headers), sender, PROVIDER) is verdict


PASS = results("mx.google.com; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example")
FORM_PASS = results("mx.google.com; dmarc=pass header.from=forms.acme.example")


@pytest.mark.parametrize(
    ("m", "lists", "senders", "expected"),
    [
        # The group rewrote From to itself, the provider vouches for it: the person it relayed.
        (
            message(GROUP.address, PASS, list_id=GROUP.list_id, original="Alice <alice@example.com>"),
            [GROUP],
            (),
            "alice@example.com",
        ),
        # ... unvouched (failed, missing, or typed by the sender): handed off, never the address typed.
        (
            message(GROUP.address, list_id=GROUP.list_id, original="alice@example.com"),
            [GROUP],
            (),
            SkipReason.RELAY_UNVERIFIED,
        ),
        (
            message(
                GROUP.address,
                results("mx.attacker.example; dmarc=pass"),
                list_id=GROUP.list_id,
                original="x@evil.example",
            ),
            [GROUP],
            (),
            SkipReason.RELAY_UNVERIFIED,
        ),
        # The group's address without its List-Id is still a claim to be the group.
        (
            message(GROUP.address, original="stranger@elsewhere.example"),
            [GROUP],
            (),
            SkipReason.RELAY_UNVERIFIED,
        ),
        # A forged List-Id on direct mail: the reply reaches its sender only, whatever it names.
        (
            message("mallory@evil.example", PASS, list_id=GROUP.list_id, original="victim@elsewhere.example"),
            [GROUP],
            (),
            "mallory@evil.example",
        ),
        # A genuine post that kept its own From (no strict DMARC): its From, not its Reply-To.
        (
            message("bob@example.com", list_id=GROUP.list_id, reply_to=["stranger@elsewhere.example"]),
            [GROUP],
            (),
            "bob@example.com",
        ),
        # A list named by its List-Id alone cannot tell a rewritten post from a forged one.
        (
            message("customers@acme.example", PASS, list_id=GROUP.list_id, original="alice@example.com"),
            [TrustedList(GROUP.list_id)],
            (),
            SkipReason.RELAY_UNVERIFIED,
        ),
        (
            message("bob@example.com", list_id=GROUP.list_id),
            [TrustedList(GROUP.list_id)],
            (),
            "bob@example.com",
        ),
        # A trusted contact form: its Reply-To only when the provider vouches for the form's From.
        (message(FORM, FORM_PASS, reply_to=["dana@example.com"]), [], {FORM}, "dana@example.com"),
        (message(FORM, reply_to=["victim@elsewhere.example"]), [], {FORM}, SkipReason.RELAY_UNVERIFIED),
        # Anyone else's Reply-To is ignored.
        (
            message("carol@example.com", PASS, reply_to=["stranger@elsewhere.example"]),
            [],
            (),
            "carol@example.com",
        ),
    ],
)
def test_a_reply_goes_beyond_from_only_on_the_providers_word(m, lists, senders, expected):
    choice = recipient_choice(m, OWN, senders, lists, PROVIDER)
    assert (choice["email"] if isinstance(choice, dict) else choice) == expected


@pytest.mark.parametrize(
    ("folders", "listed", "sent"),
    [
        ([Folder("f1", "Sent", ("\\Sent",))], ["f1"], True),
        ([Folder("f1", "Gesendet", ("\\Sent",))], ["f1"], True),  # by attribute, whatever the name
        ([Folder("f1", "Sent Items")], ["f1"], True),  # by name (Outlook), no attribute
        ([Folder("f1", "Sent"), Folder("f2", "INBOX", ("\\Inbox",))], ["f2"], False),
        ([], ["sent"], True),  # a notification's folder names
        ([], ["inbox"], False),
        ([], [], False),
    ],
)
def test_a_message_in_the_sent_folder_was_sent_by_the_mailbox(folders, listed, sent):
    assert in_sent_folder(read_message({"folders": listed}), sent_folder_ids(folders)) is sent


def test_trusted_lists_are_named_by_list_id_and_address():
    assert trusted_lists(" <Customers.Acme.Example>=Customers@Acme.example , news.acme.example,,") == (
        TrustedList("customers.acme.example", "customers@acme.example"),
        TrustedList("news.acme.example", ""),
    )
