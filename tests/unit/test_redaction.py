"""What reaches a log line of a customer's address (replyonce.redaction): ``<email>``, or its digest.

Why table-driven: the regex and the digest are the whole defence of the logs (kept LogRetentionDays);
each row is a shape of address or text that has to come out right.
"""

import hashlib

import pytest

from replyonce.redaction import DIGEST_LENGTH, REDACTED, address_digest, redact_addresses


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("invalid recipient customer@example.com", "invalid recipient <email>"),
        ("bounce from First.Last+tag@mail.example.co.uk; retry", "bounce from <email>; retry"),
        # Bedrock and Nylas quote addresses inside punctuation and markup.
        ("'to' [<alice@example.com>] refused", "'to' [<<email>>] refused"),
        ("rcpt=o'brien@example.ie,bob_2@x-y.example.org", "rcpt=<email>,<email>"),
        ("ALICE@EXAMPLE.COM in upper case", "<email> in upper case"),
        # Nothing shaped like an address is left alone.
        ("ThrottlingException: rate exceeded (429)", "ThrottlingException: rate exceeded (429)"),
        ("an @mention and user@localhost", "an @mention and user@localhost"),
        ("", ""),
    ],
)
def test_addresses_are_redacted_and_nothing_else_is(text, expected):
    assert redact_addresses(text) == expected
    assert redact_addresses(expected) == expected  # redacting twice changes nothing


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("alice@example.com", "Alice@Example.COM"),
        ("alice@example.com", "  alice@example.com\n"),
        ("o'brien@example.ie", "O'Brien@example.ie"),
    ],
)
def test_one_address_has_one_digest_whatever_its_case_or_blanks(one, other):
    assert address_digest(one) == address_digest(other)


@pytest.mark.parametrize(
    ("address", "digest"),
    [
        # What an operator computes by hand (docs/operations.md): sha256 of the lower-cased address.
        ("alice@example.com", hashlib.sha256(b"alice@example.com").hexdigest()[:DIGEST_LENGTH]),
        ("Bob@Example.org", hashlib.sha256(b"bob@example.org").hexdigest()[:DIGEST_LENGTH]),
    ],
)
def test_the_digest_is_the_short_sha256_an_operator_can_compute(address, digest):
    assert address_digest(address) == digest
    assert len(digest) == DIGEST_LENGTH
    assert "@" not in digest


def test_different_addresses_have_different_digests():
    addresses = [f"customer{n}@example.com" for n in range(2000)] + ["alice@example.com", "alice@example.co"]
    assert len({address_digest(a) for a in addresses}) == len(addresses)
    assert REDACTED not in {address_digest(a) for a in addresses}
