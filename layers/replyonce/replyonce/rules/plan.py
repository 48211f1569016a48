"""Which messages one reply answers, and to whom it goes (invariants 2 and 3), as pure functions.

Order is the thread listing's order (Nylas: "reverse chronological", the sort
key not named), never a comparison of the sender's ``date``: that header
comes from the sender's clock, and a back-dated or future-dated message must
neither be skipped nor steal later replies. Whatever key Nylas sorts on, the
plan is defensible: the burst is every eligible message not covered yet —
which no order changes — and only the choice of the one it threads on (the
first listed, the newest) depends on the order.
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from replyonce.config import TrustedList
from replyonce.mail import Mail
from replyonce.reasons import SkipReason
from replyonce.rules.coverage import carries_intent_id, covered_in_mailbox, is_covered, is_reviewed_draft
from replyonce.rules.evidence import in_sent_folder
from replyonce.rules.recipients import mailbox_key, recipient_choice, reply_recipient
from replyonce.rules.screening import header_values, sender_email

Message = Mail


def message_id(message: Message) -> str:
    return message.id


@dataclass(frozen=True)
class Burst:
    """One reply's plan: the messages it answers and the one it threads on.

    Attributes
    ----------
    to_answer:
        Every eligible message not covered yet, in the listing's order (newest first).
    target:
        The message the reply threads on (``reply_to_message_id``): the newest of them
        that someone may be mailed at.
    recipients:
        Who the reply goes to: the target's sender (``From``, or a trusted sender's ``Reply-To``)
        first, then the sender of every other message it answers (at most ``max_recipients``, each
        already a participant of the thread).
    """

    to_answer: tuple[Message, ...]
    target: Message
    recipients: tuple[dict[str, str], ...]
    alone: bool = False
    """A newcomer's burst (:func:`newcomers`): the agent is shown only these messages, not the thread."""
    hidden: frozenset[str] = frozenset()
    """Messages of the thread the agent is not shown for this burst: a newcomer's, and our replies to them
    (the others' conversation is none of the newcomer's business, nor theirs of it)."""

    @property
    def recipient(self) -> dict[str, str]:
        """The target's recipient, the first."""
        return self.recipients[0]

    @property
    def covered(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(message_id(m) for m in self.to_answer))


def participants(messages: Sequence[Message], besides: Message) -> frozenset[str]:
    """Every mailbox named on the thread's messages (``from``, ``to``, ``cc``) other than ``besides``, the
    message being answered: who is on the thread already (an address first named there is not)."""
    return frozenset(key for m in messages if m is not besides for key in _mailboxes(m, ("from", "to", "cc")))


def _mailboxes(message: Message, fields: Sequence[str]) -> set[str]:
    """The inboxes (:func:`replyonce.rules.recipients.mailbox_key`) the message's ``fields`` name."""
    return {mailbox_key(a.email) for a in message.addresses(*fields) if a.email}


def reach_everyone(
    burst: Sequence[Message],
    target: Message,
    first: dict[str, str],
    messages: Sequence[Message],
    *,
    recipient_of: Callable[[Message], dict[str, str] | None],
    max_recipients: int,
) -> tuple[tuple[Message, ...], tuple[dict[str, str], ...]]:
    """The messages one reply can answer and whom it goes to, so that every sender it covers gets it.

    Why: a customer writes with a colleague in Cc, the colleague answers all
    before the agent reads the thread; a reply to the newest sender alone
    would record the customer's message answered while the customer got
    nothing. Each other sender is added (at most ``max_recipients`` in all)
    when already a participant of the thread — named on a message other than
    the one the reply threads on — and otherwise their message is left out of
    the reply (never recorded answered without an email to its sender).
    """
    recipients = [first]
    reached = {mailbox_key(first["email"])}
    on_the_thread = participants(messages, target)
    kept: list[Message] = []
    for m in burst:
        if m is target:
            kept.append(m)
            continue
        recipient = recipient_of(m)
        if recipient is None:
            continue
        key = mailbox_key(recipient["email"])
        if key in reached:
            kept.append(m)
        elif len(recipients) < max_recipients and key in on_the_thread:
            recipients.append(recipient)
            reached.add(key)
            kept.append(m)
    return tuple(kept), tuple(recipients)


class Author(Enum):
    """Who wrote a message of the thread, on the provider's and our own evidence (never ``From`` alone)."""

    OTHER = "other"
    """Anyone outside: a customer, a machine — and a message in the inbox or junk that shows the
    mailbox's own address in ``From``, since only mail the mailbox sent sits in its Sent folder."""
    AGENT = "agent"
    """ReplyOnce's reply: our intent id in its metadata (only the API sets metadata), whatever its
    ``from`` shows (a grant's alias, a provider's rewrite)."""
    REVIEWED = "reviewed"
    """A review draft of ours that a person sent: our metadata with the review mark. Its words are the
    agent's, but a person chose to send them: not an automatic exchange, no person's hold either."""
    PERSON = "person"
    """A person of the mailbox: from one of its own addresses, in its Sent folder, not ours."""


def author(message: Message, own_addresses: Collection[str], sent_folders: Collection[str]) -> Author:
    """Who wrote ``message`` (:class:`Author`); ``sent_folders``: the grant's Sent folder ids."""
    if carries_intent_id(message):
        return Author.REVIEWED if is_reviewed_draft(message) else Author.AGENT
    if sender_email(message) in own_addresses and in_sent_folder(message, sent_folders):
        return Author.PERSON
    return Author.OTHER


def from_a_person(message: Message, own_addresses: Collection[str], sent_folders: Collection[str]) -> bool:
    """Written from the mailbox by a person (:attr:`Author.PERSON`): the one definition the rules use."""
    return author(message, own_addresses, sent_folders) is Author.PERSON


@dataclass(frozen=True)
class PeopleInThread:
    """What the people of the mailbox answered in a thread, as its listing shows it.

    Attributes
    ----------
    answered:
        Message ids a person's message answered: a message whose sender a person's message of the
        mailbox is addressed to (``to``/``cc``), listed older than it or named by its
        ``In-Reply-To``/``References``.
    last_answer_to:
        Correspondent's inbox (:func:`replyonce.rules.recipients.mailbox_key`) → the newest person's message
        addressed to them that answered something of theirs: where a person's hold runs from.
    """

    answered: frozenset[str]
    last_answer_to: Mapping[str, Message]
    named: frozenset[str] = frozenset()
    """Of ``answered``, the ids a person's message names in ``In-Reply-To``/``References``: an answer the
    person's own mail client recorded. The rest rest on the listing's order alone."""


def _named_by(message: Message) -> set[str]:
    """The ``Message-ID``s a message's ``In-Reply-To`` and ``References`` name."""
    return {
        part
        for header in ("in-reply-to", "references")
        for v in header_values(message, header)
        for part in v.split()
    }


def people_in_thread(
    messages: Sequence[Message], own_addresses: Collection[str], sent_folders: Collection[str] = ()
) -> PeopleInThread:
    """Which messages the mailbox's people answered (invariant 1, counting the people; invariant 7).

    A person's answer is a message addressed to its sender: a colleague's
    forward to the warehouse or an internal note answers nobody, and a
    message that only shows the mailbox's address in ``From`` is no
    person's (:func:`author`). Why two sources for *which* of a sender's
    messages: "after" is the listing's order (never the sender's ``date``),
    and a person's reply names what it answers in its headers. Where they
    disagree — a back-dated message listed below the answer, an answer to an
    older message — the message counts as answered: that side sends nothing twice.
    """
    answered: set[str] = set()
    named_ids: set[str] = set()
    last_answer_to: dict[str, Message] = {}
    for index, person in enumerate(messages):  # newest first
        if not from_a_person(person, own_addresses, sent_folders):
            continue
        addressed = _mailboxes(person, ("to", "cc"))
        named = _named_by(person)
        for position, m in enumerate(messages):
            sender = mailbox_key(sender_email(m))
            if m is person or sender not in addressed or not message_id(m):
                continue
            named_it = any(v in named for v in header_values(m, "message-id"))
            if position > index or named_it:
                answered.add(message_id(m))
                last_answer_to.setdefault(sender, person)
                if named_it:
                    named_ids.add(message_id(m))
    return PeopleInThread(frozenset(answered), last_answer_to, frozenset(named_ids))


def person_hold_ends(people: PeopleInThread, correspondent: str, hold_seconds: int, now: int) -> int | None:
    """When a thread is the agent's again for ``correspondent`` after a person answered them, or ``None``.

    The hold runs from the person's answer's ``date``, but never from later
    than ``now`` (the read that saw it, Nylas' time): a ``date`` in the future
    cannot hold the thread beyond one hold from when it was read. A hold of 0 is off.
    """
    answer = people.last_answer_to.get(mailbox_key(correspondent))
    if answer is None or hold_seconds <= 0:
        return None
    return min(answer.date, now) + hold_seconds


def newcomers(messages: Sequence[Message], own_addresses: Collection[str]) -> frozenset[str]:
    """Ids of the messages of every newcomer: a sender whose first message of the thread came after
    others that name them nowhere (no ``from``/``to``/``cc`` of an older message): someone who joined a
    customer's conversation, not a participant. ``messages`` must be the whole thread.

    Why it matters: a reply to the thread's newest message goes to its sender
    with the whole conversation behind it; a stranger who replies into a
    customer's thread (the customer's ``Message-ID`` is enough) would receive
    the answer to the customer's question. A newcomer is answered alone, and
    the others' reply is drafted without the newcomer's messages
    (:attr:`Burst.hidden`). "Earlier" is the listing's order, which may be
    the senders' dates: a back-dated stranger can stand first and make the
    customer the newcomer — then each is still answered apart, each shown
    only what is theirs.
    """
    own = {mailbox_key(a) for a in own_addresses}
    seen: set[str] = set()
    strangers: set[str] = set()
    met: set[str] = set()
    for m in reversed(messages):  # oldest first
        sender = mailbox_key(sender_email(m))
        if sender in own:
            # The mailbox's own mail (our replies above all) names nobody into the conversation: a reply
            # to a stranger must not make them a participant.
            continue
        if sender and sender not in met:
            met.add(sender)
            if seen and sender not in seen:
                strangers.add(sender)
        seen |= _mailboxes(m, ("from", "to", "cc"))
    return frozenset(
        message_id(m) for m in messages if message_id(m) and mailbox_key(sender_email(m)) in strangers
    )


SENDER_CLOCK_TOLERANCE_SECONDS = 30
"""How far behind Nylas' clock a correspondent's may run and its message still count as an answer to our
reply (a robot's clock two seconds slow dates its instant answer before our reply): the side that ends a
loop sooner, never one that lets it run."""


def automatic_exchanges(
    messages: Sequence[Message],
    correspondent: str,
    own_addresses: Collection[str],
    pending: Sequence[Sequence[str]] = (),
    *,
    sent_folders: Collection[str] = (),
    window_seconds: int = 0,
    now: int = 0,
) -> int:
    """ReplyOnce's replies to ``correspondent`` that were answered at robot speed since a person wrote.

    Why count them: when a provider drops every automatic mark (or the other
    side is a robot that honours none), two agents answer each other paced
    only by the hourly budget. Only an exchange the other side answered
    within ``window_seconds`` of our reply counts (``0``: every reply): a
    customer who asks one question a day is a conversation, not a loop. A
    reply is answered when a message of the correspondent's is dated from
    the reply's ``date`` (Nylas' own: it was sent from the mailbox) to
    ``window_seconds`` after it, its date never later than ``now`` (the
    read). Why dates and not the listing's order: Nylas does not name the
    key it lists by, and under a listing by date a back-dated message stands
    anywhere; a date typed to look slow only leaves the loop to the hourly
    budget, one typed to look fast only hands the thread to a person.

    A person writing from the mailbox, or sending a review draft of ours,
    resets the count: what is listed below their message (``messages`` are
    newest first) is the conversation before a person took it. ``pending``
    are the ``to`` addresses of our replies not in the listing yet (queued
    by Nylas, or still being sent): they count, since the answer that
    prompts the next reply may already be in (the 10,000-notification run of
    issue 31 sent a third email beside one queued).
    """
    wanted = mailbox_key(correspondent)
    count = sum(1 for to in pending if wanted in {mailbox_key(a) for a in to})
    ours: list[tuple[int, tuple[frozenset[str], frozenset[str]]]] = []
    theirs: list[tuple[str, int]] = []
    for m in messages:
        who = author(m, own_addresses, sent_folders)
        if who in (Author.PERSON, Author.REVIEWED):
            break
        if who is Author.AGENT and wanted in _mailboxes(m, ("to",)):
            ours.append((m.date, covered_in_mailbox([m])))
        elif who is Author.OTHER and mailbox_key(sender_email(m)) == wanted:
            theirs.append((message_id(m), min(m.date, now) if now else m.date))
    if not window_seconds:
        return count + len(ours)

    def answered(sent: int) -> bool:
        # What a reply of ours up to this one covers came before it, whatever its date says (a clock
        # running ahead, a date in the same second): only an uncovered message can be its answer.
        before = [record for at, record in ours if at <= sent]
        return any(
            -SENDER_CLOCK_TOLERANCE_SECONDS <= at - sent <= window_seconds
            and not any(is_covered(mid, record) for record in before)
            for mid, at in theirs
        )

    return count + sum(1 for sent, _ in ours if answered(sent))


def plan_burst(
    trigger_id: str,
    messages: Sequence[Message],
    *,
    is_covered: Callable[[str], bool],
    reason_not_to_answer: Callable[[Message], SkipReason | None],
    own_addresses: Iterable[str],
    sent_folders: Collection[str] = (),
    trusted_senders: Iterable[str] = (),
    trusted_lists: Iterable[TrustedList] = (),
    authserv_ids: Collection[str] = (),
    now: int = 0,
    person_hold_seconds: int = 0,
    max_recipients: int = 1,
    max_automatic_exchanges: int = 0,
    automatic_exchange_seconds: int = 0,
    pending_replies: Sequence[Sequence[str]] = (),
    whole_thread: bool = True,
) -> Burst | SkipReason:
    """The reply to plan for the notification about ``trigger_id`` (invariants 2, 3 and 4).

    Parameters
    ----------
    trigger_id:
        The message the notification is about; it must be among ``messages``.
    messages:
        The thread as read inside the lease, in the listing's order.
    is_covered:
        Whether a reply (our state, or a reply of ours in the mailbox) covers a message id.
    reason_not_to_answer:
        ``replyonce.rules.screening.reason_not_to_answer`` bound to this grant.
    sent_folders:
        The grant's Sent folder ids: a person's message is one the mailbox sent (:func:`author`).
    pending_replies:
        The ``to`` addresses of our replies that may be out, or will be, and are not in ``messages``
        (:func:`automatic_exchanges`).
    whole_thread:
        Whether ``messages`` reach the thread's first message: only then can a sender be known for a
        newcomer (:func:`newcomers`); a read cut short knows no newcomers.

    Returns
    -------
    Burst or SkipReason
        One reply to the newest eligible uncovered message covers every
        eligible uncovered message (invariant 3); a newcomer's messages are a
        burst of their own. A message that reached the thread after an
        earlier reply's read is not covered, so it is answered now
        (invariant 2). The reasons a person's message is not answered
        (``PERSON_HOLD``, ``EXCHANGE_LIMIT``, ``NO_RECIPIENT``,
        ``RELAY_UNVERIFIED``, ``SENDER_NOT_REACHED``) are handed off by the
        core (invariant 7).
    """
    if is_covered(trigger_id):
        return SkipReason.ALREADY_REPLIED
    trigger = next((m for m in messages if message_id(m) == trigger_id), None)
    if trigger is None:
        raise ValueError(f"the trigger message {trigger_id!r} is not among the messages read")
    own = frozenset(own_addresses)
    people = people_in_thread(messages, own, sent_folders)
    if trigger_id in people.answered:
        # Named by the person's reply: theirs. Below it in the listing only: perhaps, so a person is told.
        named = trigger_id in people.named
        return SkipReason.ANSWERED_BY_PERSON if named else SkipReason.ANSWERED_BY_PERSON_UNCONFIRMED
    reason = reason_not_to_answer(trigger)
    if reason is not None:
        return reason
    hold_ends = person_hold_ends(people, sender_email(trigger), person_hold_seconds, now)
    if hold_ends is not None and now < hold_ends:
        return SkipReason.PERSON_HOLD
    trusted = frozenset(trusted_senders)
    lists = tuple(trusted_lists)

    def recipient_of(message: Message) -> dict[str, str] | None:
        return reply_recipient(message, own, trusted, lists, authserv_ids)

    choice = recipient_choice(trigger, own, trusted, lists, authserv_ids)
    if isinstance(choice, SkipReason):
        return choice
    strangers = newcomers(messages, own) if whole_thread else frozenset()
    alone = trigger_id in strangers
    trigger_sender = mailbox_key(sender_email(trigger))
    burst = tuple(
        dict(
            (message_id(m), m)
            for m in messages
            if message_id(m)
            and message_id(m) not in people.answered
            and not is_covered(message_id(m))
            and reason_not_to_answer(m) is None
            and (
                message_id(m) in strangers and mailbox_key(sender_email(m)) == trigger_sender
                if alone
                else message_id(m) not in strangers
            )
        ).values()
    )
    for target in burst:  # newest first; a target nobody may be mailed at falls to the next
        recipient = recipient_of(target)
        if recipient is None:
            continue
        kept, recipients = reach_everyone(
            burst, target, recipient, messages, recipient_of=recipient_of, max_recipients=max_recipients
        )
        if trigger_id not in {message_id(m) for m in kept}:
            # Its sender is not reached by the reply that covers it (one sender too many): handed off,
            # never recorded answered.
            return SkipReason.SENDER_NOT_REACHED
        if max_automatic_exchanges and any(
            automatic_exchanges(
                messages,
                r["email"],
                own,
                pending_replies,
                sent_folders=sent_folders,
                window_seconds=automatic_exchange_seconds,
                now=now,
            )
            >= max_automatic_exchanges
            for r in recipients
        ):
            return SkipReason.EXCHANGE_LIMIT
        return Burst(
            kept, target, recipients, alone=alone, hidden=_not_theirs(messages, strangers, own, alone)
        )
    return SkipReason.NO_RECIPIENT


def _not_theirs(
    messages: Sequence[Message], strangers: frozenset[str], own: Collection[str], alone: bool
) -> frozenset[str]:
    """For the burst of everyone but the newcomers, the newcomers' messages and our replies addressed only
    to them: what the agent must not be shown (a newcomer's own burst shows only its messages)."""
    if alone or not strangers:
        return frozenset()
    newcomer_inboxes = {mailbox_key(sender_email(m)) for m in messages if message_id(m) in strangers}
    return frozenset(
        message_id(m)
        for m in messages
        if message_id(m) in strangers
        or (
            sender_email(m) in own
            and _mailboxes(m, ("to", "cc"))
            and _mailboxes(m, ("to", "cc")) <= newcomer_inboxes
        )
    )


def reached(messages_read: Sequence[Message], trigger_id: str) -> bool:
    """Whether the thread read has reached the trigger: only then has it seen every reply that could cover
    it (each is newer than what it answers), so only then may the mailbox say it is not answered."""
    return any(message_id(m) == trigger_id for m in messages_read)


def needs_another_page(
    messages_on_page: Sequence[Message],
    *,
    is_covered: Callable[[str], bool],
    reason_not_to_answer: Callable[[Message], SkipReason | None],
    trigger_seen: bool = True,
) -> bool:
    """Whether the thread read goes on beyond this page: the trigger is not reached yet, or the page
    holds an eligible message not covered yet.

    Why these rules: a page whose every message is covered, the agent's own or
    not to be answered ends the burst in any order Nylas lists by; one that
    still holds an uncovered message may have more of the burst behind it.
    And a reply that covers the trigger was sent after it arrived, so it is
    listed newer than the trigger: only a read that has reached the trigger
    (``trigger_seen``) has seen every reply that could cover it. Why it
    matters: after the state table was lost or restored, the mailbox is the
    only record, and a redelivered, backfilled or redriven message older
    than the newest page was fetched by id and answered again while its
    cover sat on a page never read.
    """
    if not trigger_seen:
        return True
    return any(
        message_id(m) and not is_covered(message_id(m)) and reason_not_to_answer(m) is None
        for m in messages_on_page
    )


def loop_guard_exhausted(
    recorded_replies: Iterable[int], agent_message_dates: Iterable[int], *, now: int, window: int, budget: int
) -> bool:
    """Whether the thread had ``budget`` replies in the ``window`` seconds before ``now`` (invariant 4).

    All three times are Nylas' (the ``Date`` of its answers, the dates Nylas
    gave our sent messages), never the worker's clock, so a worker whose clock
    runs an hour fast or slow neither forgets nor invents replies. Two sources,
    each enough alone: what we recorded, and the agent's messages the thread
    read shows (a reply whose worker died before recording it).
    """
    since = now - window
    recorded = sum(1 for moment in recorded_replies if moment >= since)
    visible = sum(1 for moment in agent_message_dates if moment >= since)
    return max(recorded, visible) >= budget
