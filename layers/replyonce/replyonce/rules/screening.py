"""Which messages the agent must never answer (invariant 4), as pure functions of the message.

One function decides it, :func:`reason_not_to_answer`, from what the message
says about itself and what the deployment knows: its agents' addresses, the
senders it trusts, the folders mail must not be answered from. Nothing here
trusts a header's *absence*: Nylas includes ``headers`` only when asked
(``fields=include_headers``), so on a webhook payload the header checks find
nothing, and the replier runs this again on the thread read, which asks.

Machine signs
-------------
Every mark a machine leaves on the mail it sends, one :class:`Sign` each (the
code a skip's log line can carry as its detail), with the standard that
defines it and the :class:`~replyonce.reasons.SkipReason` it is counted
under. Any one sign refuses the message; :func:`machine_sign` names the
first, in this order.

``machine_local_part`` → AUTOMATED_SENDER
    mailer-daemon (any program's daemon: bugzilla-daemon), postmaster,
    no-reply, do-not-reply, auto-reply, autoresponder, autoreports,
    bounce(s), notification(s) (and Benachrichtigung(en), notificación(es),
    notificações, notifiche, notificaties, powiadomienia), a list
    manager's command address (majordomo, listserv) as a word of the
    local part, with any of ``- _ . +`` or nothing between and around its
    parts (RFC 3834 §2, RFC 2142 §5).
``reply_to_machine`` → AUTOMATED_SENDER
    ``Reply-To`` naming only machine addresses (by the words above:
    Amazon's ``order-update@`` notices say ``Reply-To: no-reply@``): the
    sender itself says a reply reaches no one.
``replyonce_mark`` → AUTO_SUBMITTED
    ``X-ReplyOnce``: a reply of a ReplyOnce deployment, this one or another
    (every reply carries it beside ``Auto-Submitted``, which Microsoft Graph
    refuses or drops since its name has no ``X-`` prefix).
``auto_submitted`` → AUTO_SUBMITTED
    ``Auto-Submitted`` other than ``no``, comments aside (RFC 3834 §5).
``multipart_report`` → AUTO_SUBMITTED
    ``Content-Type: multipart/report`` of any report-type (RFC 6522): DSN
    (RFC 3464, RFC 6533), MDN and read receipts (RFC 8098), ARF abuse
    reports (RFC 5965); or one of their report parts sent bare; or a mail
    server's own mark on the DSN it writes in plain text (MDaemon's
    ``X-MDDSN-Message``).
``null_return_path`` → AUTO_SUBMITTED
    ``Return-Path: <>``, spaces tolerated, and IIS's ``<<>>``: a bounce or a
    notification (RFC 5321 §4.5.5; RFC 3834 §2: never respond to it).
``x_auto_response_suppress_all`` → AUTO_SUBMITTED
    ``X-Auto-Response-Suppress`` naming ``All``: Exchange's own
    out-of-office replies and notices ([MS-OXCMAIL] 2.1.3.2.20, the
    property's -1 of [MS-OXOMSG] 2.2.1.77). Only ``All``: a person's Outlook
    mail carries ``DR, RN, NRN, OOF, AutoReply``.
``autoresponder_header`` → AUTO_SUBMITTED
    ``X-Autoreply``, ``X-Autorespond``, ``X-Autoresponder``,
    ``X-Autoresponse`` with a value: responders older than RFC 3834 (an
    empty one claims nothing).
``precedence_auto_reply`` → AUTO_SUBMITTED
    ``Precedence: auto_reply`` (the convention RFC 2076 records).
``x_loop`` → AUTO_SUBMITTED
    ``X-Loop``, any value: a responder or list marking its own output so it
    never answers it (procmail, fml, feedback loops); ``X-No-Loop`` and the
    OTRS family's ``X-OTRS-Loop``, ``X-OTOBO-Loop`` (its loop-protection
    test: ``LoopDetection.t``) likewise.
``tracker_notification`` → AUTO_SUBMITTED
    A tracker's or forge's own header on the notices it sends
    (``X-Bugzilla-Reason``, ``X-GitHub-Reason``, ``X-GitLab-Project``,
    ``X-Redmine-Project``, ``X-Launchpad-Notification-Type``,
    ``X-Phabricator-Sent-This-Message``): a reply to one posts a comment
    where the tracker takes mail in, so it is never answered.
``auto_reply_subject`` → AUTO_SUBMITTED
    A subject opening "Automatic reply:", "Out of Office:",
    "Abwesenheitsnotiz:", "Réponse automatique :", ... on a reply
    (``In-Reply-To`` or ``References``; RFC 3834 §3).
``precedence_bulk`` → BULK_MAIL
    ``Precedence: bulk|junk|list`` (RFC 2076; RFC 3834 §2) with a list's or
    a bulk sender's header below.
``precedence_alone`` → BULK_UNCONFIRMED
    ``Precedence: bulk|junk|list`` and nothing else a list or a machine
    writes: not answered (RFC 3834 §2), but handed to a person — a
    forwarder (GoDaddy's) stamps it on the personal mail it passes on, and a
    newsletter today carries ``List-Unsubscribe`` (RFC 8058) too.
``unsubscribe_alone`` → BULK_UNCONFIRMED
    ``List-Unsubscribe`` and no other list's header, precedence or bulk
    sender's header beside it: not answered, handed to a person, as the
    precedence alone is. A list post carries ``List-Id`` too, a bulk sender
    today ``List-Unsubscribe-Post`` (RFC 8058) as well; one header a sender
    typed is no proof the mail is no person's (Drupal Inmail's forwarded
    test message carries it).
``list_headers`` → BULK_MAIL
    ``List-Id`` (RFC 2919), ``List-Unsubscribe``, ``-Post``, ``-Help``,
    ``-Subscribe``, ``-Owner``, ``-Archive`` (RFC 2369, RFC 8058), ezmlm's
    ``Mailing-List``, vger's ``X-Mailing-List``, fml's ``X-ML-Name`` and
    ``X-MLServer``, an older list manager's ``X-ListServer`` (CommuniGate,
    ListSTAR).
``bulk_sender_header`` → BULK_MAIL
    ``X-CSA-Complaints``: a sender certified for bulk mail (Certified
    Senders Alliance).
``challenge_response`` → AUTO_SUBMITTED
    A challenge-response system's request to confirm a sender: its vendor
    headers, TMDA's ``-tmda-confirm`` Message-Id, or the ``Precedence: spam``
    such systems set.

Signs read from the subject with a second sign (:func:`_content_sign`, where
the headers carry none):

``gateway_bounce`` → AUTO_SUBMITTED
    A bounce's subject ("Undeliverable", "failure notice", ...) over a body
    only a mail system writes (a status code, "user unknown", ...).
``complaint_report`` → AUTO_SUBMITTED
    Hotmail's "complaint about message from <IP>" from its own domains.
``notes_out_of_office`` → AUTO_SUBMITTED
    Lotus Notes' "AUTO: … is out of the office" with no ``In-Reply-To``, or
    its fixed out-of-office sentence under an "AUTO:" subject.
``aggregate_report`` → AUTO_SUBMITTED
    The subject RFC 7489 §7.2.1.1 and RFC 8460 §5.3 fix for DMARC and SMTP
    TLS reports, "Report Domain: … Submitter: … Report-ID: …", alone: three
    labelled fields no person types.

Last, when nothing above is found:

``empty_from_address`` → NO_SENDER
    ``From`` with no address: ``MAILER-DAEMON <>`` as an empty or missing
    email, as ``"<>"``, a name alone, no participant (RFC 5321 §4.5.5: the
    null path is no mailbox). Nobody to answer, and handed to a person: with
    no machine sign in the headers this is not known to be a machine's (a
    person's mail whose ``From`` the provider could not read comes so; a
    bounce's null path comes with ``Return-Path: <>`` or a report).

Measured and left out (``scripts/measure_machine_mail.py``): a subject
marker alone (a person writes "Out of office question" or "Auto:
Kaufvertrag", a car in German; no person in the measured sets opens a
subject with a marker, but none of their machine mail needs the marker alone
either), and ``Feedback-ID`` (OVH, IONOS and Amazon SES stamp it on their
customers' personal mail). The list and bulk decision is :func:`bulk_sign`,
alone, so operator-named lists can be let through in one place.
"""

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from replyonce.mail import Mail
from replyonce.reasons import SkipReason


class Sign(StrEnum):
    """A machine's mark on a message: the detail its skip is logged with (stable: operators query it)."""

    EMPTY_FROM_ADDRESS = "empty_from_address"
    MACHINE_LOCAL_PART = "machine_local_part"
    REPLY_TO_MACHINE = "reply_to_machine"
    REPLYONCE_MARK = "replyonce_mark"
    AUTO_SUBMITTED = "auto_submitted"
    MULTIPART_REPORT = "multipart_report"
    NULL_RETURN_PATH = "null_return_path"
    X_AUTO_RESPONSE_SUPPRESS_ALL = "x_auto_response_suppress_all"
    AUTORESPONDER_HEADER = "autoresponder_header"
    PRECEDENCE_AUTO_REPLY = "precedence_auto_reply"
    X_LOOP = "x_loop"
    TRACKER_NOTIFICATION = "tracker_notification"
    AUTO_REPLY_SUBJECT = "auto_reply_subject"
    PRECEDENCE_BULK = "precedence_bulk"
    PRECEDENCE_ALONE = "precedence_alone"
    UNSUBSCRIBE_ALONE = "unsubscribe_alone"
    LIST_HEADERS = "list_headers"
    BULK_SENDER_HEADER = "bulk_sender_header"
    CHALLENGE_RESPONSE = "challenge_response"
    GATEWAY_BOUNCE = "gateway_bounce"
    COMPLAINT_REPORT = "complaint_report"
    NOTES_OUT_OF_OFFICE = "notes_out_of_office"
    AGGREGATE_REPORT = "aggregate_report"

    @property
    def reason(self) -> SkipReason:
        """The skip reason this sign is counted under (the list in the module docstring)."""
        if self is Sign.EMPTY_FROM_ADDRESS:
            return SkipReason.NO_SENDER
        if self in (Sign.MACHINE_LOCAL_PART, Sign.REPLY_TO_MACHINE):
            return SkipReason.AUTOMATED_SENDER
        if self in _BULK_SIGNS:
            return SkipReason.BULK_MAIL
        if self in (Sign.PRECEDENCE_ALONE, Sign.UNSUBSCRIBE_ALONE):
            return SkipReason.BULK_UNCONFIRMED
        return SkipReason.AUTO_SUBMITTED


_BULK_SIGNS = frozenset({Sign.PRECEDENCE_BULK, Sign.LIST_HEADERS, Sign.BULK_SENDER_HEADER})

REPLYONCE_MARK = {"name": "X-ReplyOnce", "value": "auto-replied"}
"""ReplyOnce's own mark on every reply it sends (``replyonce.rules.outbox``): an ``X-`` header, so it survives
providers that keep only ``X-`` custom headers, and any deployment recognises another's."""

# Local-part words of machines, not people (RFC 3834 section 2, RFC 2142 section 5 and common
# practice). A word is matched between any of - _ . + or the ends of the local part ("info.notifications",
# "bounces+123", "no-reply-aws"), and with any of - _ . + or nothing between its parts: no-reply, noreply,
# no.reply, no+reply, post_master, mailer.daemon. Why words and not substrings: "noreen", "nobounce" and
# "postmasters-fan" are people.
_SEP = r"[-_.+]?"
_MACHINE_WORDS = (
    rf"no{_SEP}reply",
    rf"do{_SEP}not{_SEP}reply",
    # An autoresponder's own address (USPS's "auto-reply@" delivery notices), RFC 3834's automatic responses,
    # and a reporting robot's (Shadowserver's "autoreports@").
    rf"auto{_SEP}(?:reply|respon(?:der|se)|reports?)",
    rf"(?:mailer{_SEP})?daemon",  # mailer-daemon, bugzilla-daemon: a program's own name
    rf"post{_SEP}master",
    r"bounces?",
    # "notification(s)" and the same word in the languages of Europe's large mail senders (Allegro's
    # "powiadomienia@" carrier notices): a word naming what the address sends, not who writes.
    r"notifications?",
    r"benachrichtigung(?:en)?",
    r"notificaci(?:on|ones)",
    r"notifica(?:cao|coes)",
    r"notifiche",
    r"notificaties?",
    r"powiadomienia",
    # A list manager's command address, whose program answers subscriptions and commands itself (Majordomo's
    # "Majordomo@", L-Soft's "LISTSERV@"): Mail::Box's mailbox holds Majordomo's confirmation and welcome.
    r"majordomo",
    r"listserv",
)
_MACHINE_LOCAL_PART = re.compile(rf"(?:^|[-_.+])(?:{'|'.join(_MACHINE_WORDS)})(?:[-_.+]|$)")
# Precedence values (RFC 2076): of list and bulk mail, and of autoresponders.
_BULK_PRECEDENCE = frozenset({"bulk", "junk", "list"})
_AUTO_REPLY_PRECEDENCE = "auto_reply"
# Vendor headers of autoresponders that predate RFC 3834 (any value but an empty one: no one writes "no" in
# them, and MIME::Lite's empty "X-Autoreply:" stands on a form system's letters that people write).
_AUTORESPONDER_HEADERS = frozenset({"x-autoreply", "x-autorespond", "x-autoresponder", "x-autoresponse"})
# Headers only mailing lists and newsletters carry: RFC 2919, RFC 2369, RFC 8058; ezmlm, vger, fml, older list
# managers.
_LIST_HEADERS = frozenset(
    {
        "list-id",
        "list-unsubscribe",
        "list-unsubscribe-post",
        "list-post",
        "list-help",
        "list-subscribe",
        "list-owner",
        "list-archive",
        "mailing-list",
        "x-mailing-list",
        "x-ml-name",
        "x-mlserver",
        # The list manager naming itself on its posts, before RFC 2369 (CommuniGate's "X-ListServer:",
        # ListSTAR's "X-Listserver:", as Mail::ListDetector's tests hold them).
        "x-listserver",
    }
)
# Headers of senders certified for bulk mail (the Certified Senders Alliance).
_BULK_SENDER_HEADERS = frozenset({"x-csa-complaints"})
# A responder's or ticket system's mark on its own output, against loops (procmail's and fml's X-Loop; OTRS,
# Znuny and OTOBO's loop protection reads X-No-Loop and writes its own).
_LOOP_HEADERS = frozenset({"x-loop", "x-no-loop", "x-otrs-loop", "x-otobo-loop"})
# Headers trackers and forges put on their notices (Bugzilla, GitHub, GitLab, Redmine, Launchpad,
# Phabricator): only their own mail carries them.
_TRACKER_HEADERS = frozenset(
    {
        "x-bugzilla-reason",
        "x-bugzilla-type",
        "x-github-reason",
        "x-gitlab-project",
        "x-redmine-project",
        "x-launchpad-notification-type",
        "x-phabricator-sent-this-message",
    }
)
# A mail server's own header on the delivery report it writes in plain text (MDaemon: "X-MDDSN-Message:
# True"), only ever on that report.
_DSN_VENDOR_HEADERS = frozenset({"x-mddsn-message"})
# Media types of machine reports (RFC 6522 multipart/report; a report part sent bare: RFC 3464, 6533, 8098,
# 5965). Why any report-type: every one of them is a machine speaking (DSN, MDN, ARF), none a person.
_REPORT_TYPES = frozenset(
    {
        "multipart/report",
        "message/delivery-status",
        "message/global-delivery-status",
        "message/disposition-notification",
        "message/global-disposition-notification",
        "message/feedback-report",
    }
)
# Subject openings of out-of-office and auto-replies (Exchange/Outlook in their languages, Lotus Notes,
# iCloud, Gmail, Zimbra): a marker, then a colon (ASCII or full-width; French puts a space before it).
_AUTO_REPLY_MARKERS = (
    "automatic reply",
    "automatische antwort",
    "auto reply",
    "auto-reply",
    "autoreply",
    "auto response",
    "auto-response",
    "autoresponse",
    "automatic response",
    "auto",
    "autosvar",
    "automatisk svar",
    "automatisch antwoord",
    "abwesenheitsnotiz",
    "out of office",
    "out of office autoreply",
    "out of office reply",
    "out of the office",
    "réponse automatique",
    "respuesta automática",
    "risposta automatica",
    "resposta automática",
    "automaattinen vastaus",
    "automatyczna odpowiedź",
    "automatická odpověď",
    "automatikus válasz",
    "otomatik yanıt",  # noqa: RUF001 - Turkish: the dotless i is the word's
    "автоматический ответ",
    "自动回复",
    "自動回覆",
    "自動応答",
    "自動返信",
    "자동 회신",
)
# Exchange's own out-of-office subjects (2003 and the clients that kept its words), long set phrases nobody
# types as a subject of their own: they decide alone, without the reply headers the short markers need
# (bounce_email's Latvian non-bounce carries no In-Reply-To, no Auto-Submitted).
_EXCHANGE_OUT_OF_OFFICE = re.compile(
    r"^\s*(?:out of office autoreply|ārpus biroja atrašanās automātiskā atbilde|"
    r"arpus biroja atrasanas automatiska atbilde|réponse automatique d'absence du bureau|"
    r"automatisch antwoord bij afwezigheid|respuesta automática de fuera de la oficina)\s*[:\uff1a]",
    re.IGNORECASE,
)
_MARKER_ALTERNATIVES = "|".join(re.escape(m) for m in sorted(_AUTO_REPLY_MARKERS, key=len, reverse=True))
_AUTO_REPLY_SUBJECT = re.compile(rf"^\s*(?:{_MARKER_ALTERNATIVES})\s*[:\uff1a]", re.IGNORECASE)
# Vendor headers of challenge-response systems ("prove you are a person": Boxtrapper, Bluebottle,
# ChoiceMail, Ask, Spam Arrest, Spamazoid, Spamlion, ExiSpam) and of reports generated by Exchange
# and mail scanners: present only on the machine's own message (SpamAssassin's 20_vbounce.cf names them).
_CHALLENGE_RESPONSE_HEADERS = frozenset(
    {
        "x-boxtrapper",
        "x-bluebottle-request",
        "x-choicemail-registration-request",
        "x-askversion",
        "x-spamarrest-noauth",
        "x-spamazoid-md",
        "spamlion",
        "x-exispam",
        "x-ms-embedded-report",
    }
)
_TMDA_CONFIRM = re.compile(r"-tmda-confirm>?\s*$", re.IGNORECASE)  # TMDA's challenge Message-Id
# Subjects of gateway bounces of mail systems that mark their bounces no other way (no null path,
# no report type, no machine sender): read together with the body (:data:`_BOUNCE_BODY`), never alone —
# a customer writes "Delivery failure" about a parcel.
_BOUNCE_SUBJECT = re.compile(
    r"^\s*(?:undeliverable|undelivered mail|undeliverable mail|returned mail|mail delivery failed|"
    r"mail delivery failure|message delivery failure|delivery failure|delivery status notification|"
    r"delivery notification|delivery has failed|failure notice|mail system error|"
    r"message not delivered|nondeliverable mail|non-deliverable|notice of delivery failure|"
    r"undeliverable message|could not send message|mail could not be delivered|"
    r"warning: could not send message|delayed mail|warning: message .{1,40} delayed|"
    r"\*\*\s*message you sent blocked|notification d.état de la distribution|"
    r"unzustellbar|nicht zustellbar|non remis|no se puede entregar|impossibile recapitare)\b",
    re.IGNORECASE,
)
# What only a mail system writes in a bounce's body: an SMTP reply or enhanced status code next to a
# recipient, a mailbox that does not exist, the transcript's set phrases.
_BOUNCE_BODY = re.compile(
    r"\b(?:[245]\.\d{1,3}\.\d{1,3})\b|"
    r"\b5[0-5]\d[ -](?=.{0,80}(?:user|mailbox|recipient|address|unknown|denied|rejected))|"
    r"user unknown|unknown user|no such (?:user|mailbox|recipient|address)|"
    r"mailbox (?:unavailable|is full|full|"
    r"not found|does not exist|disabled)|recipient address rejected|"
    r"(?:message|mail) (?:could not|couldn.t|cannot|was not|wasn.t|has not been) (?:be )?delivered|"
    r"could not be delivered to|permanent(?:ly)? (?:fatal )?error|fatal errors?|"
    r"delivery to the following recipients? (?:failed|has been delayed)|"
    r"original message (?:follows|is attached|below)|the original message was received|"
    r"this is the mail system at host|mail delivery (?:software|subsystem|system)|"
    r"unable to deliver (?:your |the )?(?:message|mail)|was not delivered to|"
    r"(?:headers|header) of the original message|returned to sender|"
    r"did not reach the following recipient|has been delayed|will retry|"
    r"i'm sorry to have to inform you|i.m afraid i wasn.t able to deliver",
    re.IGNORECASE | re.DOTALL,
)
# Hotmail's and Outlook.com's complaint (feedback-loop) report: not multipart/report but a
# multipart/mixed from their staff address with the complained-of message attached, the subject naming
# the sending IP.
_COMPLAINT_SUBJECT = re.compile(
    r"^\s*complaint about message from \d{1,3}\.\d{1,3}\.\d{1,3}\.(?:\d{1,3}|x+)\s*$", re.IGNORECASE
)
_COMPLAINT_DOMAINS = frozenset({"hotmail.com", "msn.com", "live.com", "outlook.com"})
# The subject RFC 7489 §7.2.1.1 (DMARC aggregate reports) and RFC 8460 §5.3 (SMTP TLS reports) fix:
# "Report Domain: <domain> Submitter: <submitter> Report-ID: <id>", a receiver's tag before it at most
# (Microsoft's "[Preview]"). Three labelled fields in that order no person types; a forward says "Fwd:".
_AGGREGATE_REPORT_SUBJECT = re.compile(
    r"^\s*(?:\[[^\]]{1,30}\]\s*)?report\s+domain\s*:\s*\S+\s+submitter\s*:\s*\S+\s+report-id\s*:",
    re.IGNORECASE,
)
# Lotus Notes' out-of-office reply: "AUTO: Alice is out of the office (returning 01/05/2026)" with no
# In-Reply-To, and its fixed body "I will be out of the office starting … and will not return until …".
_NOTES_SUBJECT = re.compile(r"^\s*auto\s*:.*\bis out of (?:the )?office\b", re.IGNORECASE)
_NOTES_BODY = re.compile(
    r"\bout of the office starting\b.{0,80}\bwill not return until\b", re.IGNORECASE | re.DOTALL
)

# Folder names of mail never answered: Agent Account system folders (junk, trash) and the names other
# providers give them. Notifications may carry names, REST answers carry ids (resolved per grant).
CLOSED_FOLDER_NAMES = frozenset({"junk", "trash", "spam", "deleted items", "junk email"})


def sender_email(message: Mail) -> str:
    """The ``From`` address (lower case, :attr:`replyonce.mail.Address.email`), ``""`` when there is none."""
    return message.sender


def recipients_of(message: Mail) -> list[str]:
    """Every ``to`` and ``cc`` address of the message, lower case, in order."""
    return [a.email for a in message.addresses("to", "cc") if a.email]


def header_values(message: Mail, name: str) -> tuple[str, ...]:
    """Every value of header ``name`` (case-insensitive), stripped, lower case, in order."""
    return message.header(name)


def _without_comments(value: str) -> str:
    """``value`` with RFC 5322 comments removed: ``no (sent by a person)`` → ``no``; nested ones too."""
    depth, kept = 0, []
    escaped = False
    for char in value:
        if escaped:
            escaped = False
            if depth == 0:
                kept.append(char)
            continue
        if char == "\\":
            escaped = True
            continue
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def auto_submitted_keyword(value: str) -> str:
    """The keyword of an ``Auto-Submitted`` value (RFC 3834 section 5): comments and parameters dropped."""
    return _without_comments(value).split(";", 1)[0].strip().lower()


def is_machine_address(email: str) -> bool:
    """Whether the local part of ``email`` names a machine (no-reply, mailer-daemon, bounces, ...)."""
    return bool(_MACHINE_LOCAL_PART.search(email.split("@", 1)[0].lower()))


def _keywords(message: Mail, name: str) -> set[str]:
    """The first word of each value of header ``name``, comments and parameters dropped."""
    return {auto_submitted_keyword(v) for v in header_values(message, name)}


def _is_null_path(value: str) -> bool:
    """Whether a ``Return-Path`` value is the null path: ``<>``, ``< >``, IIS's ``<<>>``, comments aside."""
    path = "".join(_without_comments(value).split())
    return bool(path) and path.startswith("<") and not path.strip("<>")


def _is_report(value: str) -> bool:
    """Whether a ``Content-Type`` value is a machine report (:data:`_REPORT_TYPES`), parameters aside."""
    return _without_comments(value).split(";", 1)[0].strip() in _REPORT_TYPES


def _suppresses_all(value: str) -> bool:
    """Whether an ``X-Auto-Response-Suppress`` value names ``All`` (its values are a comma list)."""
    return "all" in {token.strip() for token in re.split(r"[,\s]+", value)}


def _has_auto_reply_subject(message: Mail, names: Collection[str]) -> bool:
    """An auto-reply's subject ("Automatic reply: ...") on a reply (``In-Reply-To`` or ``References``).

    Why both: the subject alone matches people ("Out of office: question",
    "Auto: Kaufvertrag" — a car, in German); an autoresponder answers a
    message, so it sets ``In-Reply-To`` (RFC 3834 §3) and keeps the
    original subject after its marker, where a person's reply starts "Re:".
    """
    is_reply = "in-reply-to" in names or "references" in names
    return is_reply and bool(_AUTO_REPLY_SUBJECT.match(message.subject))


def list_id(message: Mail) -> str:
    """The list's identifier of its ``List-Id`` (RFC 2919: the part in angle brackets), lower case."""
    for value in header_values(message, "list-id"):
        inside = value[value.find("<") + 1 : value.rfind(">")] if "<" in value and ">" in value else value
        if inside.strip():
            return inside.strip()
    return ""


def relayed_by_trusted_list(message: Mail, trusted_lists: Collection[str]) -> bool:
    """Whether a list or group the company runs (``TRUSTED_LISTS``, by ``List-Id``) relayed ``message``."""
    found = list_id(message)
    return bool(found) and found in trusted_lists


def bulk_sign(message: Mail, trusted_lists: Collection[str] = ()) -> Sign | None:
    """The list or bulk sign of ``message``, or ``None``: the one place the list decision is made.

    Why one function: a mailing list a deployment means to answer (an
    operator-named ``List-Id``, ``TRUSTED_LISTS``: a support address run as a
    Google Group) passes here and only here — its posts carry ``List-Id`` and
    ``Precedence: list`` both — while an autoresponder answering through that
    list is still refused by the signs before it.
    """
    if relayed_by_trusted_list(message, trusted_lists):
        return None
    names = message.header_names
    listed = names & (_LIST_HEADERS | _BULK_SENDER_HEADERS)
    if _keywords(message, "precedence") & _BULK_PRECEDENCE:
        # Alone, the precedence is a claim a forwarder makes of a person's mail too: a person decides.
        return Sign.PRECEDENCE_BULK if listed else Sign.PRECEDENCE_ALONE
    if listed == {"list-unsubscribe"}:
        # Alone, one header a sender types: not answered, and a person decides (a list post says List-Id too).
        return Sign.UNSUBSCRIBE_ALONE
    if names & _LIST_HEADERS:
        return Sign.LIST_HEADERS
    if names & _BULK_SENDER_HEADERS:
        return Sign.BULK_SENDER_HEADER
    return None


def _challenge_response(message: Mail, names: Collection[str]) -> bool:
    """A challenge-response system's request: its vendor headers, a TMDA ``Message-ID``, or the
    ``Precedence: spam`` such systems set."""
    if set(names) & _CHALLENGE_RESPONSE_HEADERS:
        return True
    if any(_TMDA_CONFIRM.search(v) for v in header_values(message, "message-id")):
        return True
    return "spam" in _keywords(message, "precedence")


# The header signs in the order they are tried (automatic before bulk: an out-of-office reply sent through
# a list is an out-of-office reply first). Each reads the message and its header names.
_HEADER_SIGNS: tuple[tuple[Sign, Callable[[Mail, Collection[str]], bool]], ...] = (
    (Sign.REPLYONCE_MARK, lambda m, names: bool(header_values(m, REPLYONCE_MARK["name"]))),
    (
        Sign.AUTO_SUBMITTED,
        lambda m, names: any(auto_submitted_keyword(v) != "no" for v in header_values(m, "auto-submitted")),
    ),
    (
        Sign.MULTIPART_REPORT,
        lambda m, names: (
            any(_is_report(v) for v in header_values(m, "content-type"))
            or bool(set(names) & _DSN_VENDOR_HEADERS)
        ),
    ),
    (Sign.NULL_RETURN_PATH, lambda m, names: any(_is_null_path(v) for v in header_values(m, "return-path"))),
    (
        Sign.X_AUTO_RESPONSE_SUPPRESS_ALL,
        lambda m, names: any(_suppresses_all(v) for v in header_values(m, "x-auto-response-suppress")),
    ),
    (
        Sign.AUTORESPONDER_HEADER,
        lambda m, names: any(v.strip() for name in _AUTORESPONDER_HEADERS for v in header_values(m, name)),
    ),
    (Sign.PRECEDENCE_AUTO_REPLY, lambda m, names: _AUTO_REPLY_PRECEDENCE in _keywords(m, "precedence")),
    (Sign.X_LOOP, lambda m, names: bool(set(names) & _LOOP_HEADERS)),
    (Sign.TRACKER_NOTIFICATION, lambda m, names: bool(set(names) & _TRACKER_HEADERS)),
    (Sign.AUTO_REPLY_SUBJECT, _has_auto_reply_subject),
    (Sign.CHALLENGE_RESPONSE, _challenge_response),
)


def _header_sign(message: Mail, trusted_lists: Collection[str] = ()) -> Sign | None:
    """The first machine sign in the headers (and subject) of ``message``, or ``None``.

    Automatic signs come before bulk ones: an out-of-office reply sent
    through a list is an out-of-office reply first (a list let through must
    not let its members' autoresponders through). Then the subject and body
    together (:func:`_content_sign`), then the list and bulk signs.
    """
    names = message.header_names
    for sign, found in _HEADER_SIGNS:
        if found(message, names):
            return sign
    return _content_sign(message, names) or bulk_sign(message, trusted_lists)


def _body_text(message: Mail) -> str:
    """The body as text (Nylas gives HTML or plain text), for signs that read it with the subject."""
    from replyonce.rules.text import html_to_text

    return html_to_text(message.body)[:20000] if message.body else ""


def _content_sign(message: Mail, names: Collection[str]) -> Sign | None:
    """A machine sign in the subject and body together, where the headers carry none.

    Each rule needs two signs: the subject alone is what people write too ("Delivery failure",
    "Auto: …"); the body, or the sender's domain, holds what only the machine writes (a status
    code, a mailbox that does not exist, Notes' fixed out-of-office sentence, Hotmail's staff
    address). One subject is enough alone: the form RFC 7489 and RFC 8460 fix for reports
    ("Report Domain: … Submitter: … Report-ID: …"), three labelled fields no person types.
    """
    subject = message.subject
    if not subject.strip():
        return None
    if _COMPLAINT_SUBJECT.match(subject) and sender_email(message).rpartition("@")[2] in _COMPLAINT_DOMAINS:
        return Sign.COMPLAINT_REPORT
    if _AGGREGATE_REPORT_SUBJECT.match(subject):
        return Sign.AGGREGATE_REPORT
    if _BOUNCE_SUBJECT.match(subject) and _BOUNCE_BODY.search(_body_text(message)):
        return Sign.GATEWAY_BOUNCE
    if _EXCHANGE_OUT_OF_OFFICE.match(subject):
        return Sign.AUTO_REPLY_SUBJECT
    if (
        "in-reply-to" not in names
        and _AUTO_REPLY_SUBJECT.match(subject)
        and (_NOTES_SUBJECT.match(subject) or _NOTES_BODY.search(_body_text(message)))
    ):
        return Sign.NOTES_OUT_OF_OFFICE
    return None


def header_reason(message: Mail, trusted_lists: Collection[str] = ()) -> SkipReason | None:
    """Automatic and bulk mail, from the headers; any one sign among several decides."""
    sign = _header_sign(message, trusted_lists)
    return sign.reason if sign else None


def _sender_sign(message: Mail, trusted_senders: Collection[str] = ()) -> Sign | None:
    """The machine sign of the ``From`` and ``Reply-To`` addresses (no headers needed: Nylas gives both
    on every message), or ``None``.

    ``trusted_senders`` (``REPLY_TO_TRUSTED_SENDERS``) vouch for a machine's
    address, a contact form's no-reply for one. An empty address is no sign
    here: what the headers say decides first (:func:`machine_sign`).
    """
    sender = sender_email(message)
    if sender and sender not in trusted_senders and is_machine_address(sender):
        return Sign.MACHINE_LOCAL_PART
    # Where replies go, by the sender's own word: only machine addresses there, and no reply reaches anyone
    # (a contact form's Reply-To names the customer; a person never sends replies to no-reply@).
    replies = [a.email for a in message.addresses("reply_to") if a.email]
    if replies and all(r not in trusted_senders and is_machine_address(r) for r in replies):
        return Sign.REPLY_TO_MACHINE
    return None


def machine_sign(
    message: Mail, trusted_senders: Collection[str] = (), trusted_lists: Collection[str] = ()
) -> Sign | None:
    """The sign that makes ``message`` a machine's, or ``None``: what a machine skip is logged with.

    The same signs in the same order as :func:`reason_not_to_answer` (the
    sender's address, then the headers), so for a skip counted as
    ``NO_SENDER``, ``AUTOMATED_SENDER``, ``AUTO_SUBMITTED`` or ``BULK_MAIL``
    this names the sign behind it (``machine_sign(m).reason`` is that reason).
    """
    found = _sender_sign(message, trusted_senders) or _header_sign(message, trusted_lists)
    return found or (Sign.EMPTY_FROM_ADDRESS if not sender_email(message) else None)


def in_closed_folder(message: Mail, closed_folder_ids: Collection[str]) -> bool:
    """Whether ``folders`` names the grant's junk or trash folder, by id or by name."""
    return any(f in closed_folder_ids or f.lower() in CLOSED_FOLDER_NAMES for f in message.folders)


@dataclass(frozen=True)
class Agents:
    """The deployment's agent grants, in the configured order, with the addresses Nylas gave them.

    Attributes
    ----------
    grant_ids:
        ``AGENT_GRANT_IDS`` in its order: the order decides which agent answers an email sent to several.
    emails:
        Grant id → address (lower case), for the grants Nylas knows.
    names:
        Grant id → display name (the reply's signature).
    """

    grant_ids: tuple[str, ...]
    emails: Mapping[str, str]
    names: Mapping[str, str] = field(default_factory=dict)
    providers: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Grant id → its aliases (``GET /v3/grants/{id}?expose_aliases=true``, lower case): a grant's own
    addresses are its ``email`` and these, so mail from an alias is the grant's own."""

    def shared_by_people(self, grant_id: str) -> bool:
        """Whether the grant is a person's or a team's mailbox (any provider but ``nylas``, an Agent
        Account): people write there too, drafts included."""
        provider = self.providers.get(grant_id, "nylas") or "nylas"
        return provider != "nylas"

    @property
    def addresses(self) -> frozenset[str]:
        """Every agent address, aliases included: mail from any of them is the agent's own."""
        return frozenset(self.emails.values()) | {a for names in self.aliases.values() for a in names}

    def addresses_of(self, grant_id: str) -> frozenset[str]:
        """The grant's own addresses: its ``email`` and its aliases."""
        primary = self.emails.get(grant_id, "")
        return frozenset({primary} if primary else set()) | frozenset(self.aliases.get(grant_id, ()))

    def answering(self, message: Mail, receiving_grant: str) -> str:
        """The grant that answers ``message``: the first configured agent among its recipients.

        Why without coordination: one email to two agent mailboxes arrives as
        two messages (own ids, own threads, own notifications) with the same
        ``Message-ID``; each copy sees the same ``to``/``cc``, so each decides
        the same grant without talking to the other. A grant addressed only
        as ``bcc`` (in no ``to``/``cc``) defers to an addressed one; when none
        is addressed, each copy answers for itself (its ``bcc`` is invisible
        to the others — the one case two agents can both answer).
        """
        addressed = set(recipients_of(message))
        for grant_id in self.grant_ids:
            if self.addresses_of(grant_id) & addressed:
                return grant_id
        return receiving_grant


def sender_reason(message: Mail, agents: Agents, trusted_senders: Collection[str]) -> SkipReason | None:
    """The agent's own mail and machine senders, from ``from`` alone (no headers needed)."""
    sender = sender_email(message)
    if sender and sender in agents.addresses:
        return SkipReason.OWN_OUTBOUND
    sign = _sender_sign(message, trusted_senders)
    return sign.reason if sign else None


def reason_not_to_answer(
    message: Mail,
    *,
    grant_id: str,
    agents: Agents,
    trusted_senders: Collection[str],
    closed_folder_ids: Collection[str],
    trusted_lists: Collection[str] = (),
) -> SkipReason | None:
    """Why the agent must not answer ``message`` received by ``grant_id``, or ``None`` (invariant 4).

    In order: the sender (own mail, a machine's address —
    ``REPLY_TO_TRUSTED_SENDERS`` vouches for a contact form's no-reply
    address), the folder (junk, trash), the headers (every machine sign of
    the module's table; :func:`machine_sign` names the one behind a skip),
    no address to answer (``NO_SENDER``, a hand-off: no sign said it is a
    machine's), then which of several addressed agents answers.
    """
    reason = sender_reason(message, agents, trusted_senders)
    if reason:
        return reason
    if in_closed_folder(message, closed_folder_ids):
        return SkipReason.JUNK_OR_TRASH
    reason = header_reason(message, trusted_lists)
    if reason:
        return reason
    if not sender_email(message):
        return SkipReason.NO_SENDER
    if agents.answering(message, grant_id) != grant_id:
        return SkipReason.ANSWERED_BY_OTHER_AGENT
    return None
