"""Keep email addresses out of logs: Nylas' and Bedrock's error texts may quote them.

Why here and not at each log call: an error text travels (exception message →
``detail`` of a log line → CloudWatch, kept ``LogRetentionDays``); cleaning it
where it enters our code, once, covers every place it is logged later.
"""

import re

# Deliberately broad: anything shaped like local@domain.tld. A false positive costs a word of a log
# line; a false negative puts a customer's address in the logs.
_ADDRESS = re.compile(r"[A-Za-z0-9._%+\-']+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
REDACTED = "<email>"


def redact_addresses(text: str) -> str:
    """``text`` with every email address replaced by ``<email>``."""
    return _ADDRESS.sub(REDACTED, text)
