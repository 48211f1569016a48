"""Which public fixture sets the mail rules are tuned on, and which are held out (issue #41).

Split by whole project, fixed before any rule was changed for #41: a rule may be
shaped by what the tuning sets show; the held-out sets are run only to report
(``scripts/measure_machine_mail.py`` and ``scripts/measure_new_text.py`` print
both, per set). Nothing of theirs is copied into this repository: each is read
from a checkout (or ``git archive`` of the commit named here) in a scratch
directory given on the command line.

Why these held out: they come from projects none of the earlier rounds read
(mail-facts.md names the tuning ones), and each holds what the rules were
never fitted to — another bounce parser's corpus (challenge-response,
Notes and gateway bounces), another helpdesk's people, and two reply parsers
whose fixtures are in languages and client formats of their own.
"""

from typing import NamedTuple


class Source(NamedTuple):
    repository: str
    commit: str
    split: str  # "tuning" or "held-out"
    measures: str  # "machine" (scripts/measure_machine_mail.py) or "text" (scripts/measure_new_text.py)


SOURCES: dict[str, Source] = {
    # Tuning: the sets mail-facts.md names (the rules before #41 were fitted to them) and one more.
    "sisimai": Source(
        "sisimai/set-of-emails", "18e585c22288b83c1f6943949cb86b2623b362ce", "tuning", "machine"
    ),
    "flanker": Source("mailgun/flanker", "c7f70738dbb39eda2861b03917b63ec9fa828f5d", "tuning", "machine"),
    "mikel-mail": Source("mikel/mail", "d645d7b5b7d03218b0bc8971ef041c991a63f5f7", "tuning", "machine"),
    "zammad": Source("zammad/zammad", "(not re-measured: snapshot over 500 MiB)", "tuning", "machine"),
    "discourse": Source(
        "discourse/discourse", "(not re-measured: snapshot over 500 MiB)", "tuning", "machine"
    ),
    "php-bounce-handler": Source(
        "cfortune/PHP-Bounce-Handler", "956e65b0d502b1904546c3c46480409ded41d755", "tuning", "machine"
    ),
    "talon": Source("mailgun/talon", "71d9b6eb78e985bcdfbf99b69c20c001b4b818c4", "tuning", "text"),
    "erp": Source("github/email_reply_parser", "59e5859cfe826d3cb6069bbbfd8577230c93b3cf", "tuning", "text"),
    "trimmer": Source(
        "discourse/email_reply_trimmer", "117fd1a2703d110651d4faec09b12dc1fc22f237", "tuning", "text"
    ),
    # Held out: looked at only to report.
    "bounceparser": Source(
        "rjbs/Mail-DeliveryStatus-BounceParser",
        "3133a16326c596e0e9fc97469930aee535962bcf",
        "held-out",
        "machine",
    ),
    "bounce-email": Source(
        "mitio/bounce_email", "ae6618ebf001643dad177c3e2cdc319459f9cfdf", "held-out", "machine"
    ),
    "redmine": Source("redmine/redmine", "890812e49cc60e96c7c252b7dedbd881a4edba55", "held-out", "machine"),
    "crisp": Source(
        "crisp-oss/email-reply-parser", "0b3704c8744d6f57ae1d86d7eab75535c51d2f5c", "held-out", "text"
    ),
    "mpr": Source(
        "alfonsrv/mail-parser-reply", "fc44bc880932f81f70a7deaf91c4525b3a6feddb", "held-out", "text"
    ),
}

HELD_OUT = frozenset(name for name, source in SOURCES.items() if source.split == "held-out")
