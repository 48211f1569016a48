"""Keep customers out of logs: addresses redacted from error texts, and digests where an operator correlates.

Why here and not at each log call: an error text travels (exception message →
``detail`` of a log line → CloudWatch, kept ``LogRetentionDays``); cleaning it
where it enters our code, once, covers every place it is logged later. And
one function makes the digest, so the one an operator computes from a
customer's address (``docs/operations.md``, "Logs and customer data") is the
one the replier logged.
"""

import hashlib
import re

# Deliberately broad: anything shaped like local@domain.tld. A false positive costs a word of a log
# line; a false negative puts a customer's address in the logs.
_ADDRESS = re.compile(r"[A-Za-z0-9._%+\-']+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
REDACTED = "<email>"
# 12 hex digits (48 bits): distinct for every address a deployment will ever log, short enough to read.
DIGEST_LENGTH = 12


def redact_addresses(text: str) -> str:
    """``text`` with every email address replaced by ``<email>``."""
    return _ADDRESS.sub(REDACTED, text)


def address_digest(address: str) -> str:
    """The stand-in for ``address`` in INFO lines: the first 12 hex digits of the sha256 of it, lower-cased.

    Stable (the same address, whatever its case or surrounding blanks, has the
    same digest in every line, function and deployment), so an operator finds a
    customer's lines from the address they were given; not reversible from the
    line alone. It is a pseudonym, not anonymity: whoever holds a list of
    addresses can compute theirs — which is what correlating needs.
    """
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()[:DIGEST_LENGTH]
