"""Which messages are never answered (replyonce.rules.screening): machines, RFC 3834, folders, other agents.

The machine rows are our own messages, one per sign and per class of machine
mail met in other projects' fixture sets (named in the row id; measured with
``scripts/measure_machine_mail.py``, never copied here). The people rows are
mail a person sends that carries something a careless filter takes for a
machine's mark.
"""

import dataclasses

import pytest

from replyonce.mail import read_message
from replyonce.reasons import SkipReason
from replyonce.rules import screening
from replyonce.rules.screening import (
    Agents,
    Sign,
    auto_submitted_keyword,
    is_machine_address,
    machine_sign,
    reason_not_to_answer,
    sender_email,
)

AGENTS = Agents(
    ("g-support", "g-sales"), {"g-support": "support@acme.example", "g-sales": "sales@acme.example"}
)


def message(
    sender="alice@example.com",
    headers=(),
    folders=("inbox",),
    to=("support@acme.example",),
    cc=(),
    subject="Order 1234",
    from_=None,
    body=None,
    reply_to=(),
):
    """A Nylas message as the replier reads it (``fields=include_headers``); ``from_`` replaces ``from``."""
    return read_message(
        {
            "from": [{"name": "", "email": sender}] if from_ is None else from_,
            "subject": subject,
            "headers": [{"name": n, "value": v} for n, v in headers],
            "folders": list(folders),
            "to": [{"email": a} for a in to],
            "cc": [{"email": a} for a in cc],
            "reply_to": [{"email": a} for a in reply_to],
        }
        | ({"body": body} if body is not None else {})
    )


def reason(m, grant="g-support", trusted=(), closed=("folder-junk", "folder-trash")):
    return reason_not_to_answer(
        m, grant_id=grant, agents=AGENTS, trusted_senders=trusted, closed_folder_ids=closed
    )


REPLY = (("In-Reply-To", "<a1@shop.example>"), ("References", "<a1@shop.example>"))


def machine(row_id, m, skip, sign):
    return pytest.param(m, skip, sign, id=row_id)


# One row per sign, and per class of machine mail the measured sets hold. The ones marked "today:
# answered" were answered before these signs existed (each fails against the old screening).
MACHINE_MAIL = [
    # -- multipart/report: every report-type ---------------------------------------------------------
    machine(
        "multipart/report DSN (sisimai: a relay's bounce from Mail.Delivery.System@; today: answered)",
        message(
            "mail.delivery.system@mx44.example",
            [("Content-Type", 'multipart/report; boundary="b0"; report-type=delivery-status')],
            subject="Delivery status notification",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.MULTIPART_REPORT,
    ),
    machine(
        "multipart/report MDN read receipt, RFC 8098 (flanker: disposition-notification; today: answered)",
        message(
            "joe.recipient@example.com",
            [("Content-Type", "multipart/report; report-type=disposition-notification; boundary=RAA1")],
            subject="Disposition notification",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.MULTIPART_REPORT,
    ),
    machine(
        "multipart/report ARF report, RFC 5965 (sisimai, flanker: feedback loops; today: answered)",
        message(
            "feedback@arf.mail.example",
            [("Content-Type", 'Multipart/Report; report-type="feedback-report"; boundary="_--=_1342"')],
            subject="FW: Some subject",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.MULTIPART_REPORT,
    ),
    machine(
        "a report part sent bare: message/delivery-status (flanker: delayed-broken; today: answered)",
        message("relay@mx.example", [("Content-Type", "message/delivery-status")], subject=""),
        SkipReason.AUTO_SUBMITTED,
        Sign.MULTIPART_REPORT,
    ),
    # -- the null reverse-path ---------------------------------------------------------------------------
    machine(
        "null Return-Path (sisimai: OpenSMTPD bounce from a misspelt poostmaster@; today: answered)",
        message("poostmaster@example.co.jp", [("Return-Path", "<>")], subject="Delivery status notification"),
        SkipReason.AUTO_SUBMITTED,
        Sign.NULL_RETURN_PATH,
    ),
    machine(
        "null Return-Path, spaces and a comment (sisimai: Verizon NDR from sysadmin@; today: answered)",
        message("sysadmin@m01.vzwpix.example", [("Return-Path", " < > (null)")], subject="Undeliverable"),
        SkipReason.AUTO_SUBMITTED,
        Sign.NULL_RETURN_PATH,
    ),
    machine(
        "null Return-Path as Microsoft IIS's SMTP service writes it: <<>> (today: answered)",
        message("smtpsvc@mx.example", [("Return-Path", "<<>>")], subject="Delivery Status Notification"),
        SkipReason.AUTO_SUBMITTED,
        Sign.NULL_RETURN_PATH,
    ),
    machine(
        "null Return-Path on one delivery of two (a forwarder delivering a bounce; today: answered)",
        message("kijitora@example.org", [("Return-Path", "<kijitora@example.org>"), ("Return-Path", "<>")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.NULL_RETURN_PATH,
    ),
    # -- Exchange's own mail: X-Auto-Response-Suppress naming All -------------------------------------
    machine(
        "X-Auto-Response-Suppress: All (sisimai: Exchange 'Automatic reply:'; today: answered)",
        message(
            "nekonyaan@example.org",
            [
                ("X-Auto-Response-Suppress", "All"),
                ("X-MS-Exchange-Inbox-Rules-Loop", "nekonyaan@example.org"),
            ],
            subject="Automatic reply: Nyaan",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.X_AUTO_RESPONSE_SUPPRESS_ALL,
    ),
    machine(
        "X-Auto-Response-Suppress: all among others (zammad: auto-response test; today: answered)",
        message("me@example.com", [("X-Auto-Response-Suppress", "OOF,all")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.X_AUTO_RESPONSE_SUPPRESS_ALL,
    ),
    # -- X-Loop ----------------------------------------------------------------------------------------
    machine(
        "X-Loop: yes (zammad: its auto-response test; today: answered)",
        message("me@example.com", [("X-Loop", "yes")], subject="some new subject"),
        SkipReason.AUTO_SUBMITTED,
        Sign.X_LOOP,
    ),
    machine(
        "X-No-Loop: yes (OTOBO's LoopDetection.t: not answered)",
        message("test@home.example", [("X-No-Loop", "yes")], subject="Testmail"),
        SkipReason.AUTO_SUBMITTED,
        Sign.X_LOOP,
    ),
    machine(
        "X-OTOBO-Loop: yes (OTOBO's own mark on its output)",
        message("test@home.example", [("X-OTOBO-Loop", "yes")], subject="Testmail"),
        SkipReason.AUTO_SUBMITTED,
        Sign.X_LOOP,
    ),
    machine(
        "a tracker's notice by its own header (Bugzilla's X-Bugzilla-Reason, from a person's address)",
        message(
            "kent@example.com", [("X-Bugzilla-Reason", "AssignedTo Reporter")], subject="[Bug 436880] IMAP"
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.TRACKER_NOTIFICATION,
    ),
    machine(
        "a forge's notice by its own header (GitHub's X-GitHub-Reason)",
        message(
            "octocat@example.com", [("X-GitHub-Reason", "mention")], subject="Re: [acme/app] Fix login (#12)"
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.TRACKER_NOTIFICATION,
    ),
    machine(
        "X-Loop with an empty value (sisimai: ARF reports carry X-Loop; today: answered)",
        message("kijitora@example.co.jp", [("X-Loop", "")], subject="Email Feedback Report for IP 192.0.2.1"),
        SkipReason.AUTO_SUBMITTED,
        Sign.X_LOOP,
    ),
    # -- Precedence ----------------------------------------------------------------------------------
    machine(
        "Precedence: bulk with a comment, over List-Unsubscribe (today: answered)",
        message(
            "news@shop.example",
            [("Precedence", "Bulk (newsletter)"), ("List-Unsubscribe", "<https://shop.example/u>")],
        ),
        SkipReason.BULK_MAIL,
        Sign.PRECEDENCE_BULK,
    ),
    machine(
        "Precedence: bulk over a bulk sender's X-CSA-Complaints",
        message("news@shop.example", [("Precedence", "bulk"), ("X-CSA-Complaints", "csa-complaints@eco.de")]),
        SkipReason.BULK_MAIL,
        Sign.PRECEDENCE_BULK,
    ),
    # Alone, a precedence is not answered (RFC 3834 §2) but handed to a person (core.arrival's
    # HANDED_OFF_SKIPS): GoDaddy's forwarder stamps "Precedence: bulk" on a person's mail it passes on
    # (django-mailbox's fixtures, the fifteenth split's two people refused).
    machine(
        "Precedence: bulk alone (a forwarder's stamp, or an old newsletter)",
        message("anna@example.com", [("Precedence", "bulk")]),
        SkipReason.BULK_UNCONFIRMED,
        Sign.PRECEDENCE_ALONE,
    ),
    machine(
        "Precedence: junk alone (mikel/mail: spam)",
        message("infoz@outpost.example", [("Precedence", "junk")]),
        SkipReason.BULK_UNCONFIRMED,
        Sign.PRECEDENCE_ALONE,
    ),
    machine(
        "Precedence: list among several, alone (discourse: auto_generated_precedence)",
        message("foo@bar.example", [("Precedence", "first-class"), ("Precedence", "list")]),
        SkipReason.BULK_UNCONFIRMED,
        Sign.PRECEDENCE_ALONE,
    ),
    machine(
        "List-Unsubscribe alone (Drupal Inmail's forwarded test message: a person's)",
        message("arild@example.com", [("List-Unsubscribe", "<mailto:unsubscribe-espc-tech@domain.example>")]),
        SkipReason.BULK_UNCONFIRMED,
        Sign.UNSUBSCRIBE_ALONE,
    ),
    machine(
        "List-Unsubscribe with RFC 8058's List-Unsubscribe-Post: a bulk sender's",
        message(
            "news@shop.example",
            [
                ("List-Unsubscribe", "<https://shop.example/u>"),
                ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
            ],
        ),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "MDaemon's plain-text DSN, marked X-MDDSN-Message (Stalwart's antispam bounce test)",
        message("dm@domain.example", [("X-MDDSN-Message", "True")], subject="Something went wrong"),
        SkipReason.AUTO_SUBMITTED,
        Sign.MULTIPART_REPORT,
    ),
    machine(
        "Precedence: auto_reply",
        message("away@example.com", [("Precedence", "auto_reply")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.PRECEDENCE_AUTO_REPLY,
    ),
    # -- autoresponders' vendor headers -------------------------------------------------------------------
    machine(
        "X-Autoresponder (today: answered)",
        message("away@example.com", [("X-Autoresponder", "vacation")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTORESPONDER_HEADER,
    ),
    machine(
        "X-Autorespond",
        message("away@example.com", [("X-Autorespond", "Autoresponder")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTORESPONDER_HEADER,
    ),
    machine(
        "X-Autoreply with Precedence: bulk (zammad: a Gmail vacation response)",
        message("xx@xx.example", [("Precedence", "bulk"), ("X-Autoreply", "yes")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTORESPONDER_HEADER,
    ),
    # -- another ReplyOnce deployment's reply, its Auto-Submitted dropped by Microsoft Graph -------------
    machine(
        "X-ReplyOnce alone: a ReplyOnce reply whose non-X- headers the provider dropped",
        message("support@other-company.example", [("X-ReplyOnce", "auto-replied")], subject="Re: Ticket 9"),
        SkipReason.AUTO_SUBMITTED,
        Sign.REPLYONCE_MARK,
    ),
    # -- RFC 3834 Auto-Submitted ------------------------------------------------------------------------
    machine(
        "Auto-Submitted: auto-replied (sisimai: rfc3834 vacation replies)",
        message("kijitora@example.net", [("Auto-Submitted", "auto-replied")], subject="Away until May 5"),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_SUBMITTED,
    ),
    machine(
        "Auto-Submitted: auto-generated (failure), a comment after (mikel/mail: sendmail DSN)",
        message("reports@relay.example", [("Auto-Submitted", "auto-generated (failure)")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_SUBMITTED,
    ),
    machine(
        "Auto-Submitted before list headers: an autoresponder answering through a list",
        message(
            "away@example.com", [("List-Id", "<users.lists.example>"), ("Auto-Submitted", "auto-replied")]
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_SUBMITTED,
    ),
    # -- a subject marker on a reply --------------------------------------------------------------------
    machine(
        "'Auto reply:' on a reply (sisimai: iCloud vacation, X-Apple-Action only; today: answered)",
        message(
            "kijitora@apple.example", [*REPLY, ("X-Apple-Action", "VACATION")], subject="Auto reply: Nyaan"
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_REPLY_SUBJECT,
    ),
    machine(
        "'Abwesenheitsnotiz:' with References only (today: answered)",
        message("k.mueller@example.de", [REPLY[1]], subject="Abwesenheitsnotiz: Ihre Bestellung"),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_REPLY_SUBJECT,
    ),
    machine(
        "'Réponse automatique :' with the French space before the colon (today: answered)",
        message("c.dupont@example.fr", REPLY, subject="Réponse automatique : Commande 1234"),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_REPLY_SUBJECT,
    ),
    machine(
        "'Out of Office AutoReply:' (Exchange 2003) on a reply (today: answered)",
        message("j.smith@example.com", REPLY, subject="Out of Office AutoReply: Order 1234"),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_REPLY_SUBJECT,
    ),
    # -- lists and bulk senders -------------------------------------------------------------------------
    machine(
        "List-Id (discourse: mailinglist)",
        message("alice@foo.example", [("List-Id", "Example List <list.example.com>")]),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "X-ListServer: CommuniGate List 1.4 (Mail::ListDetector's test: a list's post; today: answered)",
        message("test@example.com", [("X-ListServer", "CommuniGate List 1.4")]),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "List-Post alone (today: answered)",
        message("bob@example.com", [("List-Post", "<mailto:users@lists.example>")]),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "List-Subscribe (sisimai: an fml list's 'you are not a member' notice; today: answered)",
        message(
            "neko-admin@example.org", [("List-Subscribe", "<mailto:neko-ctl@example.org?body=subscribe>")]
        ),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "Mailing-List (ezmlm, Google Groups; today: answered)",
        message("dev@example.com", [("Mailing-List", "contact dev-help@lists.example; run by ezmlm")]),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "X-Mailing-List (vger.kernel.org lists; today: answered)",
        message("dev@example.org", [("X-Mailing-List", "linux-kernel@vger.kernel.org")]),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "X-MLServer (sisimai: an fml 'Loop Alert' from its list admin; today: answered)",
        message(
            "neko-admin@example.co.jp", [("X-MLServer", "fml [fml 4.0.3 release]")], subject="Loop Alert"
        ),
        SkipReason.BULK_MAIL,
        Sign.LIST_HEADERS,
    ),
    machine(
        "X-CSA-Complaints: a certified bulk sender (today: answered)",
        message("offers@shop.example", [("X-CSA-Complaints", "csa-complaints@eco.de")]),
        SkipReason.BULK_MAIL,
        Sign.BULK_SENDER_HEADER,
    ),
    # -- the sender's address ---------------------------------------------------------------------------
    machine(
        "post_master@ (sisimai: Apache James and Verizon vtext bounces; today: answered)",
        message("post_master@vtext.example", subject="Re:Test message"),
        SkipReason.AUTOMATED_SENDER,
        Sign.MACHINE_LOCAL_PART,
    ),
    machine(
        "auto-reply@ (Home Assistant Mail and Packages: USPS's delivery exception notice; today: answered)",
        message("auto-reply@usps.example", subject="USPS Delivery Exception 9274890241063"),
        SkipReason.AUTOMATED_SENDER,
        Sign.MACHINE_LOCAL_PART,
    ),
    machine(
        "Reply-To: no-reply@ under a notice's own address (Mail and Packages: Amazon's order-update@; "
        "today: answered)",
        message(
            "order-update@shop.example", reply_to=("no-reply@shop.example",), subject="Delivered: order 1042"
        ),
        SkipReason.AUTOMATED_SENDER,
        Sign.REPLY_TO_MACHINE,
    ),
    machine(
        "no+reply@ (today: answered)",
        message("no+reply@shop.example"),
        SkipReason.AUTOMATED_SENDER,
        Sign.MACHINE_LOCAL_PART,
    ),
    machine(
        "MAILER-DAEMON without a domain (discourse: invalid_from_2)",
        message(from_=[{"name": "Mail Delivery System", "email": "MAILER-DAEMON"}]),
        SkipReason.AUTOMATED_SENDER,
        Sign.MACHINE_LOCAL_PART,
    ),
    machine(
        "gmail-noreply@ before any header sign (mikel/mail: a Gmail invitation notice)",
        message("gmail-noreply@google.example", [("Precedence", "bulk")]),
        SkipReason.AUTOMATED_SENDER,
        Sign.MACHINE_LOCAL_PART,
    ),
    machine(
        "From: MAILER-DAEMON <> as an empty email",
        message(from_=[{"name": "MAILER-DAEMON", "email": ""}]),
        SkipReason.NO_SENDER,
        Sign.EMPTY_FROM_ADDRESS,
    ),
    machine(
        "From: MAILER-DAEMON <> as '<>' (today: answered)",
        message(from_=[{"name": "MAILER-DAEMON", "email": "<>"}]),
        SkipReason.NO_SENDER,
        Sign.EMPTY_FROM_ADDRESS,
    ),
    machine(
        "From: <> as ' <> ' (zammad: spam from a name and <>; today: answered)",
        message(from_=[{"name": "我", "email": " <> "}]),
        SkipReason.NO_SENDER,
        Sign.EMPTY_FROM_ADDRESS,
    ),
    # No address and a machine's sign in the headers: the sign decides (a machine's, skipped, not handed
    # to a person); with no sign, NO_SENDER, which the replier hands to a person (see test_hand_off.py).
    machine(
        "From: <> beside Return-Path: <> (zammad's spam): the null path decides",
        message(from_=[{"name": "我", "email": " <> "}], headers=[("Return-Path", "<>")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.NULL_RETURN_PATH,
    ),
    machine(
        "no From at all, a delivery report: the report decides",
        message(from_=[], headers=[("Content-Type", "multipart/report; report-type=delivery-status")]),
        SkipReason.AUTO_SUBMITTED,
        Sign.MULTIPART_REPORT,
    ),
    machine(
        "From: a name with no email",
        message(from_=[{"name": "Mail Delivery System"}]),
        SkipReason.NO_SENDER,
        Sign.EMPTY_FROM_ADDRESS,
    ),
    machine("From: no participant", message(from_=[]), SkipReason.NO_SENDER, Sign.EMPTY_FROM_ADDRESS),
    # Issue #41: signs of the subject and body together, and vendor headers (each with the people-written
    # mail beside it in PEOPLE that must still be answered).
    machine(
        "old gateway bounce: bounce subject and a mail system's words in the body, no other sign",
        message(
            "gateway@mail.example.net",
            subject="Undeliverable: Order 1234",
            body="Your message did not reach some or all of the intended recipients.<br>"
            "The following recipient(s) could not be reached: bob@shop.example<br>550 5.1.1 User unknown",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.GATEWAY_BOUNCE,
    ),
    machine(
        "old gateway bounce: 'failure notice' and qmail's set phrase",
        message(
            "mail@relay.example.org",
            subject="failure notice",
            body="Hi. This is the qmail-send program at relay.example.org.\n"
            "I'm sorry to have to inform you that your message could not be delivered "
            "to one or more addresses.",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.GATEWAY_BOUNCE,
    ),
    machine(
        "Hotmail-shaped complaint report: multipart/mixed from staff@hotmail.com, no report type",
        message(
            "staff@hotmail.com",
            [("Content-Type", "multipart/mixed; boundary=b1")],
            subject="complaint about message from 192.0.2.10",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.COMPLAINT_REPORT,
    ),
    machine(
        "a DMARC aggregate report: RFC 7489's subject, Microsoft's '[Preview]' before it (mox, mail-auth)",
        message(
            "dmarcreport@microsoft.com",
            subject="[Preview] Report Domain: shop.example Submitter: protection.outlook.com Report-ID: 8be4",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.AGGREGATE_REPORT,
    ),
    machine(
        "an SMTP TLS report: RFC 8460's subject, the same three fields",
        message(
            "tlsrpt@mail.example",
            subject="Report Domain: shop.example Submitter: mail.example Report-ID: <2026.12.06@mail.test>",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.AGGREGATE_REPORT,
    ),
    machine(
        "Lotus Notes out-of-office: 'AUTO:' subject, no In-Reply-To",
        message(
            "carol@corp.example", subject="AUTO: Carol Jones is out of the office (returning 07/12/2026)"
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.NOTES_OUT_OF_OFFICE,
    ),
    machine(
        "Lotus Notes out-of-office: its fixed body under 'AUTO: <subject>'",
        message(
            "carol@corp.example",
            subject="AUTO: Order 1234",
            body="I will be out of the office starting 01/12/2026 and will not return until 07/12/2026.",
        ),
        SkipReason.AUTO_SUBMITTED,
        Sign.NOTES_OUT_OF_OFFICE,
    ),
    machine(
        "Exchange's own out-of-office subject, no reply headers (bounce_email: a Latvian non-bounce)",
        message("agris@corp.example", subject="Ārpus biroja atrašanās automātiskā atbilde: Order 1234"),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_REPLY_SUBJECT,
    ),
    machine(
        "Exchange 2003's 'Out of Office AutoReply:' subject, no reply headers",
        message("carol@corp.example", subject="Out of Office AutoReply: Order 1234"),
        SkipReason.AUTO_SUBMITTED,
        Sign.AUTO_REPLY_SUBJECT,
    ),
    *(
        machine(
            f"challenge-response: {name}",
            message("dave@example.org", [(name, value)], subject="Please verify your message"),
            SkipReason.AUTO_SUBMITTED,
            Sign.CHALLENGE_RESPONSE,
        )
        for name, value in (
            ("X-Boxtrapper", "abc123"),
            ("X-Bluebottle-Request", "challenge"),
            ("X-ChoiceMail-Registration-Request", "1"),
            ("X-AskVersion", "2.0 paganini.net"),
            ("X-Spamarrest-noauth", "1"),
            ("Message-Id", "<1234.5678@example.org-tmda-confirm>"),
            ("Precedence", "spam"),
        )
    ),
]


def person(row_id, m):
    return pytest.param(m, id=row_id)


# Mail from people that carries what a careless filter takes for a machine's mark: all answered.
PEOPLE = [
    person(
        "Reply-To a colleague (a person sends replies to their team)",
        message(reply_to=("bob@example.com",)),
    ),
    person(
        "Reply-To a no-reply address and a person: a reply reaches the person",
        message(reply_to=("no-reply@example.com", "alice@example.com")),
    ),
    person(
        "Outlook: X-Auto-Response-Suppress: DR, RN, NRN, OOF, AutoReply (discourse: quirks_exchange_xars)",
        message("foo.bar@example.com", [("X-Auto-Response-Suppress", "DR, RN, NRN, OOF, AutoReply")]),
    ),
    person("subject 'Out of office question', a new mail", message(subject="Out of office question")),
    person(
        "subject 'Out of office: back Monday?', a new mail", message(subject="Out of office: back Monday?")
    ),
    person(
        "subject 'Auto: Kaufvertrag' (a car, in German), a new mail", message(subject="Auto: Kaufvertrag")
    ),
    person(
        "subject 'Is your Out of Office AutoReply on?' (the words, not the prefix), a new mail",
        message(subject="Is your Out of Office AutoReply on? Order 1234"),
    ),
    person(
        "subject 'Automatic reply: not a person?' from a customer, a new mail",
        message(subject="Automatic reply: not a person?"),
    ),
    person(
        "a reply quoting an auto-reply's subject: 'Re: Automatic reply: ...'",
        message(headers=REPLY, subject="Re: Automatic reply: Order 1234"),
    ),
    person(
        "Auto-Submitted: no (sent by a person)",
        message(headers=[("Auto-Submitted", "no (sent by a person)")]),
    ),
    person("Precedence: first-class", message(headers=[("Precedence", "first-class")])),
    person("Return-Path of the sender", message(headers=[("Return-Path", "<alice@example.com>")])),
    person(
        "Feedback-ID: OVH, IONOS, Amazon SES stamp personal mail (sisimai: originals inside bounces)",
        message(headers=[("Feedback-Id", "184:1649")]),
    ),
    person(
        "a person forwarding a bounce: 'Fwd: Returned mail' (sisimai: sendmail-14)",
        message(
            "shironeko@example.jp",
            [("Content-Type", "text/plain; charset=ISO-2022-JP"), ("References", "<2009@mx.example.jp>")],
            subject="Fwd: Returned mail: see transcript for details",
        ),
    ),
    person(
        "a report forwarded as an attachment: the top level is multipart/mixed",
        message(headers=[("Content-Type", "multipart/mixed; boundary=b1")], subject="FW: bounce?"),
    ),
    person(
        "Thunderbird's draft header naming receipt and DSN (flanker: long-links)",
        message(headers=[("X-Mozilla-Draft-Info", "internal/draft; vcard=0; receipt=0; DSN=0; uuencode=0")]),
    ),
    person("an address in angle brackets", message(from_=[{"name": "Bob", "email": "<Bob@Example.com>"}])),
    person("noreen@: a name, not no-reply", message("noreen@example.com")),
    person(
        "a webhook payload: no headers at all, nothing trusted from their absence",
        read_message({"from": [{"email": "a@b.c"}]}),
    ),
    person(
        "a customer's 'Delivery failure' about a parcel: a bounce's subject, a person's body (#41)",
        message(
            subject="Delivery failure",
            body="The courier says the parcel could not be delivered. Can you send it again?",
        ),
    ),
    person(
        "a customer's 'Undeliverable: order 1234' with no mail system's words (#41)",
        message(subject="Undeliverable: order 1234", body="Your courier says my address is undeliverable?"),
    ),
    person(
        "a complaint from a Hotmail customer, no IP in the subject (#41)",
        message("ann@hotmail.com", subject="complaint about message from your agent"),
    ),
    person(
        "'Auto: Kaufvertrag' with a person's out-of-office sentence (#41)",
        message(
            subject="Auto: Kaufvertrag", body="I will be out of the office next week, can we sign today?"
        ),
    ),
    person(
        "a customer forwarding a DMARC report to ask about it: 'Fwd:' before the report's subject (#41)",
        message(subject="Fwd: Report Domain: shop.example Submitter: google.com Report-ID: 1234"),
    ),
    person(
        "a web form's 'Report domain: … Submitter: <name>' with no Report-ID (#41)",
        message(subject="Report domain: shop.example Submitter: Alice Smith"),
    ),
    person(
        "a customer's question naming the report's fields in another order (#41)",
        message(subject="DMARC report: which Submitter: is google.com? Report Domain: shop.example"),
    ),
    person(
        "an empty 'X-Autoreply:' on a form system's letter a person wrote (froide test_mail_05)",
        message("reidt.a@broadcaster.example", [("X-Autoreply", ""), ("X-Mailer", "MIME::Lite 3.027")]),
    ),
    person(
        "a person whose mail mentions TMDA and Boxbe in the body only (#41)",
        message(body="Your confirmation went to my challenge-response filter (TMDA), sorry."),
    ),
]


@pytest.mark.parametrize(("m", "skip", "sign"), MACHINE_MAIL)
def test_machine_mail_is_refused_and_its_sign_named(m, skip, sign):
    assert reason(m) is skip
    assert machine_sign(m) is sign
    assert sign.reason is skip  # the sign logged is the one behind the reason counted


@pytest.mark.parametrize("m", PEOPLE)
def test_people_are_answered(m):
    assert reason(m) is None
    assert machine_sign(m) is None


def test_a_header_sign_needs_the_headers_the_thread_read_asks_for():
    """A bounce whose only sign is a header passes the webhook payload (no headers), not the thread read."""
    with_headers = message(
        "relay@mx.example", [("Content-Type", "multipart/report; report-type=delivery-status")]
    )
    payload = dataclasses.replace(with_headers, headers=())
    assert reason(payload) is None
    assert reason(with_headers) is SkipReason.AUTO_SUBMITTED


def test_the_machine_filter_is_the_two_functions_the_chaos_mutant_patches():
    """``chaos/mutants.py``'s ``no_automaton_filter`` patches two functions: every sign goes through them."""
    from chaos.mutants import applied

    with applied("no_automaton_filter"):
        for row in MACHINE_MAIL:
            m, _skip, _sign = row.values
            # What is left is no address to answer (NO_SENDER): no machine sign is read any more.
            assert reason(m) is (SkipReason.NO_SENDER if not sender_email(m) else None), row.id


@pytest.mark.parametrize(
    ("address_", "machine"),
    [
        ("no-reply@aws.example", True),
        ("no-reply-aws@amazon.example", True),
        ("noreply+x@shop.example", True),
        ("no.reply@bank.example", True),
        ("no_reply@bank.example", True),
        ("no+reply@bank.example", True),
        ("do-not-reply.orders@shop.example", True),
        ("donotreply@shop.example", True),
        ("do_not_reply@shop.example", True),
        ("do+not+reply@shop.example", True),
        ("auto-reply@usps.example", True),  # an autoresponder's own address (Mail and Packages' USPS notice)
        ("autoreply@mx.example", True),
        ("auto_responder@shop.example", True),
        ("autoresponse@shop.example", True),
        ("autoreports@shadowserver.example", True),  # a reporting robot (AbuseIO's Shadowserver samples)
        ("auto-report@monitor.example", True),
        ("autohaus-meier@example.de", False),  # a car dealer: "auto" alone is no word of a machine's
        ("autorepair-shop@example.com", False),
        ("autor@verlag.example", False),
        ("MAILER-DAEMON@mx.example", True),
        ("mailer_daemon@mx.example", True),
        ("mailerdaemon@mx.example", True),
        ("bugzilla-daemon@mozilla.example", True),  # comm-central's bugmail: a program's own name
        ("Majordomo@imagemagick.example", True),  # a list manager's command address (Mail::Box's mailbox)
        ("LISTSERV@lists.example", True),
        ("listservices@example.com", False),  # a word that starts like one: a team's shared mailbox
        ("postmaster@mx.example", True),
        ("post_master@mx.example", True),
        ("post-master@mx.example", True),
        ("post.master@mx.example", True),
        ("bounce@lists.example", True),
        ("bounces+123@lists.example", True),
        ("info.notifications@saas.example", True),
        ("notification@saas.example", True),
        # No person in the measured sets has a local part with a machine's word in it.
        ("notifications-team@saas.example", True),
        ("powiadomienia@allegromail.example", True),  # Polish: Allegro's DPD carrier notice
        ("benachrichtigung@bank.example", True),
        ("Benachrichtigungen@shop.example", True),
        ("notificaciones@banco.example", True),
        ("notificacion@banco.example", True),
        ("notificacoes@loja.example", True),
        ("notifiche@negozio.example", True),
        ("notificaties@winkel.example", True),
        ("notificador.pedro@example.com", False),  # a word that starts like one
        # The Unix account form mailers send from (InterNIC's renewal notice), but also the stand-in for a
        # person in other projects' test mail (Exim's harness, Thunderbird's "Demo User"): a developer trying
        # the product with it must be answered.
        ("nobody@example.com", False),
        ("alice@example.com", False),
        ("noreen@example.com", False),
        ("daemonica@example.com", False),
        ("nobounce@example.com", False),
        ("replyguy@example.com", False),
        ("postmasters-fan@example.com", False),
        ("poostmaster@example.co.jp", False),  # a machine's, but no word of ours: its headers tell
    ],
)
def test_machine_senders_are_recognised_by_their_local_part(address_, machine):
    assert is_machine_address(address_) is machine


@pytest.mark.parametrize(
    ("participant", "email"),
    [
        ({"name": "Bob", "email": " Bob@Example.com "}, "bob@example.com"),
        ({"email": "<bob@example.com>"}, "bob@example.com"),
        ({"email": "<>"}, ""),
        ({"email": " < > "}, ""),
        ({"name": "MAILER-DAEMON"}, ""),
        ({"email": None}, ""),
        ("bob@example.com", ""),
    ],
)
def test_an_address_is_the_mailbox_or_nothing(participant, email):
    assert read_message({"from": [participant]}).sender == email


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
        # Any one automatic header among several decides: the order does not matter.
        (
            message(headers=[("Auto-Submitted", "auto-replied"), ("Auto-Submitted", "no")]),
            SkipReason.AUTO_SUBMITTED,
        ),
        (
            message(headers=[("Auto-Submitted", "no"), ("Auto-Submitted", "auto-generated")]),
            SkipReason.AUTO_SUBMITTED,
        ),
        (message(headers=[("List-Unsubscribe", "<mailto:x@y>")]), SkipReason.BULK_UNCONFIRMED),
        (
            message(
                headers=[
                    ("List-Unsubscribe", "<mailto:x@y>"),
                    ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
                ]
            ),
            SkipReason.BULK_MAIL,
        ),
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
    assert machine_sign(form, trusted_senders={"no-reply@forms.acme.example"}) is None


def test_a_trusted_sender_vouches_for_its_address_not_for_its_headers():
    form = message(sender="no-reply@forms.acme.example", headers=[("Auto-Submitted", "auto-generated")])
    trusted = {"no-reply@forms.acme.example"}
    assert reason(form, trusted=trusted) is SkipReason.AUTO_SUBMITTED
    assert machine_sign(form, trusted_senders=trusted) is Sign.AUTO_SUBMITTED


def test_the_agents_own_mail_is_own_even_from_a_machine_looking_address():
    agents = Agents(("g-n",), {"g-n": "notifications@acme.example"})
    own = message(sender="notifications@acme.example")
    assert (
        reason_not_to_answer(own, grant_id="g-n", agents=agents, trusted_senders=(), closed_folder_ids=())
        is SkipReason.OWN_OUTBOUND
    )


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


GROUP = [("List-Id", "Support <support.acme.example>"), ("Precedence", "list")]


@pytest.mark.parametrize(
    ("headers", "trusted_lists", "expected"),
    [
        (GROUP, frozenset({"support.acme.example"}), None),  # the company's group relays a customer
        (GROUP, frozenset(), SkipReason.BULK_MAIL),  # nothing named: a list is bulk mail
        (GROUP, frozenset({"other.acme.example"}), SkipReason.BULK_MAIL),  # another list stays bulk
        # An autoresponder answering through the trusted group is still an autoresponder.
        (
            [*GROUP, ("Auto-Submitted", "auto-replied")],
            frozenset({"support.acme.example"}),
            SkipReason.AUTO_SUBMITTED,
        ),
        ([*GROUP, ("X-Loop", "support")], frozenset({"support.acme.example"}), SkipReason.AUTO_SUBMITTED),
    ],
)
def test_a_list_the_company_runs_is_no_bulk_mail(headers, trusted_lists, expected):
    relayed = message("support-group@acme.example", headers)
    assert screening.header_reason(relayed, trusted_lists) is expected
