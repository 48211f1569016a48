"""Every reason ReplyOnce gives for not answering, not accepting or not finishing: one enumeration each.

Reason codes are part of the operational interface: they are the ``reason`` of
the log line and the ``reason`` dimension of the metric an operator alarms
on, so each lives here once, with what it means, and is logged and counted
from one function (``replyonce.observability.skipped`` for skips, the webhook
for rejections, the consumer for deferrals).
"""

from enum import StrEnum


class SkipReason(StrEnum):
    """Why a notification gets no reply (invariant 5: every skip is logged and counted).

    The ledger statuses of a message settled earlier map onto these too
    (``replyonce.core.settled_reason``), so a redelivery says what happened the first time.
    """

    DUPLICATE_NOTIFICATION = "duplicate_notification"
    """The same notification ``id`` was processed before (Powertools idempotency)."""
    UNSUPPORTED_TYPE = "unsupported_type"
    """Not a ``message.created`` (or a send outcome of ours): nothing to answer."""
    GRANT_NOT_AGENT = "grant_not_agent"
    """The message is in a mailbox the agent does not answer for (``AGENT_GRANT_IDS``)."""
    NO_MESSAGE_ID = "no_message_id"
    """The notification names no message."""
    MESSAGE_GONE = "message_gone"
    """Nylas no longer has the message (deleted or moved out of reach)."""
    OWN_OUTBOUND = "own_outbound"
    """Sent by an agent grant of this deployment (its sends fire ``message.created`` too)."""
    NO_SENDER = "no_sender"
    """The message has no ``from`` address and no machine's sign: nobody to answer, handed to a person
    (a person's mail whose ``From`` the provider could not read comes so; a bounce's null path carries a
    sign)."""
    AUTOMATED_SENDER = "automated_sender"
    """A machine's address: no-reply, mailer-daemon (a daemon), postmaster, bounces, notifications."""
    AUTO_SUBMITTED = "auto_submitted"
    """RFC 3834 ``Auto-Submitted`` other than ``no``, or an autoresponder's header."""
    BULK_MAIL = "bulk_mail"
    """A list or newsletter: ``List-Id``, ``List-Unsubscribe`` (a ``Precedence: bulk`` beside them or not)."""
    BULK_UNCONFIRMED = "bulk_unconfirmed"
    """``Precedence: bulk|junk|list``, or ``List-Unsubscribe``, alone (no other list's or bulk sender's
    header beside it): not answered (RFC 3834 §2), handed to a person, since a forwarder (GoDaddy's) stamps
    the precedence on a person's mail too, and one header a sender typed is no proof."""
    JUNK_OR_TRASH = "junk_or_trash"
    """Filed in the mailbox's junk or trash folder: answering spam feeds the complaint rate."""
    ANSWERED_BY_OTHER_AGENT = "answered_by_other_agent"
    """One email to several agents of this deployment: another of them answers it."""
    ANSWERED_BY_PERSON = "answered_by_person"
    """A person answered it from the mailbox: a message in the grant's Sent folder that ReplyOnce did not
    send, addressed to its sender, came after it in the thread or names it in ``In-Reply-To`` or
    ``References``."""
    ANSWERED_BY_PERSON_UNCONFIRMED = "answered_by_person_unconfirmed"
    """A person's message of the mailbox, addressed to its sender, is listed after it without naming it in
    ``In-Reply-To``/``References``: the listing's order may be the sender's ``date`` (a back-dated message),
    so it may be the person's answer or not. Never answered twice, never left silent: handed off."""
    PERSON_HOLD = "person_hold"
    """A person wrote in the thread from the mailbox less than ``PERSON_HOLD_SECONDS`` ago: the
    thread is theirs until then (``docs/agents.md`` says how to hand it back)."""
    ALREADY_REPLIED = "already_replied"
    """A reply covers the message already (our state, or a reply of ours in the thread)."""
    ALREADY_DRAFTED = "already_drafted"
    """A draft for a person to send covers the message already (review mode)."""
    ALREADY_SHADOWED = "already_shadowed"
    """Shadow mode recorded what the agent would have done for the message already (``REPLY_MODE=shadow``):
    a redelivery records nothing new."""
    REPLY_BUDGET_EXHAUSTED = "reply_budget_exhausted"
    """The thread had ``REPLY_BUDGET_PER_HOUR`` replies in the last hour (the loop guard)."""
    RECIPIENT_BUDGET_EXHAUSTED = "recipient_budget_exhausted"
    """The recipient got ``REPLY_BUDGET_PER_RECIPIENT_PER_HOUR`` replies in this hour, across threads."""
    EXCHANGE_LIMIT = "exchange_limit"
    """The agent already answered this correspondent ``max_automatic_exchanges`` times on the thread
    with no person of the mailbox writing in between: a loop between robots ends here, whatever the
    provider did with the automatic marks; a person takes the thread from here."""
    SENDER_NOT_REACHED = "sender_not_reached"
    """The reply that covers this message cannot go to its sender (not yet a participant of the
    thread, or past ``max_reply_recipients``): the message is not recorded answered."""
    NO_RECIPIENT = "no_recipient"
    """No single well-formed mailbox the policy allows to receive the reply."""
    RELAY_UNVERIFIED = "relay_unverified"
    """The message asks for the reply to go to someone other than its ``From`` (a trusted list's rewritten
    post, a trusted contact form's ``Reply-To``) and the receiving provider did not authenticate it
    (``Authentication-Results``): handed off to a person, never mailed to an address a sender typed."""
    PERSON_DRAFTING = "person_drafting"
    """A person's draft in the thread held the message back through the record's receives: the message is
    the person's (handed off) rather than a dead letter nobody hears of."""
    AGENT_CALL_CAP = "agent_call_cap"
    """The grant asked its agent ``daily_agent_call_cap`` times today (UTC): the burst is handed to a
    person (moved to the grant's hand-off folder) instead, and the grant's mail is the agent's again from
    00:00 UTC (``replyonce.rules.agent_calls``)."""
    AGENT_DECLINED = "agent_declined"
    """The agent returned ``NoReply``."""
    HANDED_OFF = "handed_off"
    """The agent returned ``Handoff``: left for a person, never offered to the agent again."""
    REPLY_TOO_LARGE = "reply_too_large"
    """The agent's reply makes a request larger than Nylas accepts (3 MB for a JSON send, the whole
    request: ``replyonce.rules.outbox.MAX_REQUEST_BYTES``): never sent, since no retry could send it; the
    burst is handed off to a person as a ``Handoff`` is (``handed_off``, ``HandedOff``, moved to
    ``HANDOFF_FOLDER``)."""
    AGENT_REJECTED = "agent_rejected"
    """The agent raised ``AgentRejected`` (or its model refused for good): not retried."""
    SEND_REJECTED = "send_rejected"
    """Nylas refused the reply for good (a 4xx about the message); the covered messages are failed."""
    REPLY_PREVIOUSLY_FAILED = "reply_previously_failed"
    """An earlier reply to this message was refused for good."""
    NOT_OUR_REPLY = "not_our_reply"
    """A send outcome (``message.delivered`` / ``message.send_failed``) for no pending reply of ours."""
    GRANT_DELETED = "grant_deleted"
    """Nylas deleted the grant (``grant.deleted``): nothing more is read or sent for it, and its state is
    removed from the state table (``replyonce.shell.grant_life``)."""


class DeferReason(StrEnum):
    """Why a record goes back to the queue to be tried later (never a loss: it returns or dead-letters)."""

    DEADLINE = "deadline"
    """Too little time left in the invocation to start the record."""
    THREAD_BUSY = "thread_busy"
    """Another worker holds the thread's lease."""
    NOTIFICATION_IN_PROGRESS = "notification_in_progress"
    """The same notification is being processed elsewhere."""
    NYLAS_UNAVAILABLE = "nylas_unavailable"
    """A Nylas read failed transiently (5xx, 429, timeout)."""
    SEND_RETRY = "send_retry"
    """A send may have gone out or did not: tried again with the same key."""
    SEND_UNCERTAIN = "send_uncertain"
    """A send may have gone out: waiting until the mailbox could show it before any new attempt."""
    SEARCH_FAILED = "search_failed"
    """The mailbox search that decides whether a reply went out failed: unknown, never "not sent"."""
    RATE_LIMITED = "rate_limited"
    """Nylas throttled a call (429): nothing sent, tried again after ``Retry-After``."""
    UNAUTHORIZED = "unauthorized"
    """Nylas refused our API key (401): a key being rotated, or revoked; tried again with it re-read."""
    ACCOUNT_LIMITED = "account_limited"
    """The account cannot send (quota, paused, outbound rule, or an unknown refusal): the reply waits."""
    PERSON_DRAFTING = "person_drafting"
    """A person's draft in the thread (a shared mailbox): the agent waits, at most
    ``person_draft_wait_seconds`` from the draft's date, for the person to send or drop it."""
    REPLY_PENDING = "reply_pending"
    """The thread's reply budget is full only with replies Nylas queued and has not confirmed: one may
    still fail (``message.send_failed``) and free its place, so the message waits for their outcome."""
    SHADOW_MODE = "shadow_mode"
    """A reply stored before the switch to ``REPLY_MODE=shadow`` waits: shadow mode sends nothing, so it
    goes out once the mode is ``send`` or ``review`` again (or is redriven from the dead-letter queue)."""
    TRIGGER_NOT_REACHED = "trigger_not_reached"
    """The thread read ended at ``max_thread_pages`` before it reached the message: a reply covering it
    would be newer, so it may be in the pages not read (a late notification on a long thread after the
    state was lost). Never answered blind: it waits, and dead-letters for an operator past its receives."""
    STATE_NEW = "state_new"
    """The thread's state is younger than ``pending_confirm_seconds`` (a new thread item, or a table emptied):
    a reply the lost state knew of may still be queued or in flight at Nylas and not listed yet, so a burst
    covering more than its own message waits until the mailbox could show it."""
    AGENT_FAILED = "agent_failed"
    """The agent raised or outlived ``AGENT_TIMEOUT_SECONDS``: asked again on the next try."""
    LEASE_LOST = "lease_lost"
    """The lease expired and another worker took it before our write."""
    REGION_PASSIVE = "region_passive"
    """The active-Region record names another Region (``ACTIVE_REGION_TABLE``): this one is passive and
    sends nothing; the record waits (and, after a failover, the active Region answers the thread)."""
    REGION_ISOLATED = "region_isolated"
    """The active-Region record could not be read: this Region may be cut off from the others, so it
    fails closed (never sends on what it cannot check)."""
    REGION_HANDOVER = "region_handover"
    """This Region became active less than the handover ago: a send the old Region started before the
    failover may still land and show in the mailbox, so the new Region waits it out."""
    GRANT_PAUSED = "grant_paused"
    """The grant's record in the grant registry says ``enabled: false`` (``make grants pause``): its mail
    waits, each record coming back every ``paused_retry_seconds``, and dead-letters past its receives for
    ``make redrive`` once the grant is resumed; never dropped, never answered while paused."""
    GRANT_DELETED = "grant_deleted"
    """The grant was deleted while the record ran (its deletion seen by the strongly consistent read before
    the send, ``replyonce.shell.grants``): nothing is sent; the record comes back once every container's
    cache of the registry knows, and is skipped ``grant_deleted``."""
    CONFIGURATION = "configuration"
    """The replier cannot start (a configuration error); every record returns to the queue."""
    UNEXPECTED = "unexpected"
    """A failure of ours nobody foresaw; logged with its traceback."""


class RejectReason(StrEnum):
    """Why the webhook answered something other than 200 (the ``NotificationRejected`` metric).

    Each reason has exactly one status (:attr:`status`): 401 for anything
    forged or replayed, 4xx for what no retry can fix, 503 for what a retry
    can (Nylas retries 503; it drops a 500 for good, so none is ever 500).
    """

    METHOD_NOT_ALLOWED = "method_not_allowed"
    CHALLENGE_MISSING = "challenge_missing"
    SIGNATURE_MISSING = "signature_missing"
    SIGNATURE_INVALID = "signature_invalid"
    NOTIFICATION_TOO_OLD = "notification_too_old"
    NOTIFICATION_FROM_THE_FUTURE = "notification_from_the_future"
    NOT_A_NOTIFICATION = "not_a_notification"
    BODY_TOO_LARGE = "body_too_large"
    BODY_NOT_BASE64 = "body_not_base64"
    ENCODING_UNSUPPORTED = "encoding_unsupported"
    GZIP_INVALID = "gzip_invalid"
    SIGNATURE_UNVERIFIED_DURING_ROTATION = "signature_unverified_during_rotation"
    SIGNATURE_UNVERIFIED_SECRET_STALE = "signature_unverified_secret_stale"  # noqa: S105 - a reason, not a secret

    @property
    def status(self) -> int:
        """The HTTP status this reason is answered with."""
        return _REJECT_STATUS[self]


_REJECT_STATUS: dict[RejectReason, int] = {
    RejectReason.METHOD_NOT_ALLOWED: 405,
    RejectReason.CHALLENGE_MISSING: 400,
    RejectReason.SIGNATURE_MISSING: 401,
    RejectReason.SIGNATURE_INVALID: 401,
    # Authentic bytes used out of their time: an authentication failure no retry can fix.
    RejectReason.NOTIFICATION_TOO_OLD: 401,
    RejectReason.NOTIFICATION_FROM_THE_FUTURE: 401,
    RejectReason.NOT_A_NOTIFICATION: 400,
    RejectReason.BODY_TOO_LARGE: 413,
    RejectReason.BODY_NOT_BASE64: 400,
    RejectReason.ENCODING_UNSUPPORTED: 415,
    RejectReason.GZIP_INVALID: 400,
    # Perhaps signed with a secret we have not read yet: Nylas must retry, not drop it.
    RejectReason.SIGNATURE_UNVERIFIED_DURING_ROTATION: 503,
    RejectReason.SIGNATURE_UNVERIFIED_SECRET_STALE: 503,
}
