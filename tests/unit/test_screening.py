"""Which messages are never answered (replyonce.screening): machines, RFC 3834, folders, other agents."""

import pytest

from replyonce.reasons import SkipReason
from replyonce.screening import Agents, auto_submitted_keyword, is_machine_address, reason_not_to_answer

AGENTS = Agents(
    ("g-support", "g-sales"), {"g-support": "support@acme.example", "g-sales": "sales@acme.example"}
)


def message(sender="alice@example.com", headers=(), folders=("inbox",), to=("support@acme.example",), cc=()):
    return {
        "from": [{"email": sender}],
        "headers": [{"name": n, "value": v} for n, v in headers],
        "folders": list(folders),
        "to": [{"email": a} for a in to],
        "cc": [{"email": a} for a in cc],
    }


def reason(m, grant="g-support", trusted=(), closed=("folder-junk", "folder-trash")):
    return reason_not_to_answer(
        m, grant_id=grant, agents=AGENTS, trusted_senders=trusted, closed_folder_ids=closed
    )


@pytest.mark.parametrize(
    ("address", "machine"),
    [
        ("no-reply@aws.example", True),
        ("no-reply-aws@amazon.example", True),
        ("noreply+x@shop.example", True),
        ("no.reply@bank.example", True),
        ("no_reply@bank.example", True),
        ("do-not-reply.orders@shop.example", True),
        ("donotreply@shop.example", True),
        ("do_not_reply@shop.example", True),
        ("MAILER-DAEMON@mx.example", True),
        ("postmaster@mx.example", True),
        ("bounce@lists.example", True),
        ("bounces+123@lists.example", True),
        ("info.notifications@saas.example", True),
        ("notification@saas.example", True),
        ("alice@example.com", False),
        ("noreen@example.com", False),
        ("nobounce@example.com", False),
        ("replyguy@example.com", False),
        ("postmasters-fan@example.com", False),
    ],
)
def test_machine_senders_are_recognised_by_their_local_part(address, machine):
    assert is_machine_address(address) is machine


@pytest.mark.parametrize(
    ("value", "keyword"),
    [
        ("no", "no"),
        ("No (sent by a person)", "no"),
        ("no (a (nested) comment)", "no"),
        ("auto-replied", "auto-replied"),
        ("auto-generated; owner-email=x@y", "auto-generated"),
        ("(comment first) auto-notified", "auto-notified"),
    ],
)
def test_auto_submitted_is_compared_on_its_keyword(value, keyword):
    assert auto_submitted_keyword(value) == keyword


@pytest.mark.parametrize(
    ("m", "expected"),
    [
        (message(), None),
        (message(sender="support@acme.example"), SkipReason.OWN_OUTBOUND),
        (message(sender="sales@ACME.example"), SkipReason.OWN_OUTBOUND),
        (message(sender=""), SkipReason.NO_SENDER),
        (message(sender="no-reply@aws.example"), SkipReason.AUTOMATED_SENDER),
        (message(headers=[("Auto-Submitted", "no (sent by a person)")]), None),
        (message(headers=[("Auto-Submitted", "auto-replied")]), SkipReason.AUTO_SUBMITTED),
        # Any one automatic header among several decides: the order does not matter.
        (
            message(headers=[("Auto-Submitted", "auto-replied"), ("Auto-Submitted", "no")]),
            SkipReason.AUTO_SUBMITTED,
        ),
        (
            message(headers=[("Auto-Submitted", "no"), ("Auto-Submitted", "auto-generated")]),
            SkipReason.AUTO_SUBMITTED,
        ),
        (message(headers=[("X-Autoreply", "yes")]), SkipReason.AUTO_SUBMITTED),
        (message(headers=[("Precedence", "auto_reply")]), SkipReason.AUTO_SUBMITTED),
        (message(headers=[("Precedence", "bulk")]), SkipReason.BULK_MAIL),
        (message(headers=[("Precedence", "first-class"), ("Precedence", "list")]), SkipReason.BULK_MAIL),
        (message(headers=[("List-Unsubscribe", "<mailto:x@y>")]), SkipReason.BULK_MAIL),
        (message(headers=[("list-id", "news.example")]), SkipReason.BULK_MAIL),
        (message(folders=["folder-junk"]), SkipReason.JUNK_OR_TRASH),
        (message(folders=["folder-trash"]), SkipReason.JUNK_OR_TRASH),
        (message(folders=["JUNK"]), SkipReason.JUNK_OR_TRASH),  # a notification carrying names
        (message(folders=["inbox", "trash"]), SkipReason.JUNK_OR_TRASH),
        (message(folders=["folder-archive"]), None),
    ],
)
def test_reason_not_to_answer(m, expected):
    assert reason(m) is expected


def test_a_trusted_contact_form_is_answered_despite_its_no_reply_address():
    form = message(sender="no-reply@forms.acme.example")
    assert reason(form) is SkipReason.AUTOMATED_SENDER
    assert reason(form, trusted={"no-reply@forms.acme.example"}) is None


@pytest.mark.parametrize(
    ("to", "cc", "support_answers", "sales_answers"),
    [
        (("support@acme.example", "sales@acme.example"), (), True, False),
        (
            ("sales@acme.example", "support@acme.example"),
            (),
            True,
            False,
        ),  # configured order, not header order
        (("sales@acme.example",), ("support@acme.example",), True, False),
        (("sales@acme.example",), (), False, True),  # support got it as bcc: sales is the one addressed
        (("someone@else.example",), (), True, True),  # each copy, bcc'd alone, answers for itself
    ],
)
def test_one_email_to_several_agents_is_answered_by_the_first_configured_one_among_its_recipients(
    to, cc, support_answers, sales_answers
):
    copy = message(to=to, cc=cc)
    assert (reason(copy, grant="g-support") is None) is support_answers
    assert (reason(copy, grant="g-sales") is None) is sales_answers
    if not support_answers:
        assert reason(copy, grant="g-support") is SkipReason.ANSWERED_BY_OTHER_AGENT
