"""Which messages one reply answers, and to whom it goes (invariants 2 and 3), as pure functions.

Order is the thread listing's order (Nylas: "reverse chronological", the sort
key not named), never a comparison of the sender's ``date``: that header
comes from the sender's clock, and a back-dated or future-dated message must
neither be skipped nor steal later replies. Whatever key Nylas sorts on, the
plan is defensible: the burst is every eligible message not covered yet —
which no order changes — and only the choice of the one it threads on (the
first listed, the newest) depends on the order.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replyonce.coverage import carries_intent_id
from replyonce.reasons import SkipReason
from replyonce.recipients import mailbox_key, reply_recipient
from replyonce.screening import address, header_values, sender_email

Message = Mapping[str, Any]


def message_id(message: Message) -> str:
    value = message.get("id")
    return value if isinstance(value, str) else ""


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
    """The inboxes (:func:`replyonce.recipients.mailbox_key`) the message's ``fields`` name."""
    found = set()
    for name in fields:
        value = message.get(name)
        for participant in value if isinstance(value, list) else []:
            email = address(participant)
            if email:
                found.add(mailbox_key(email))
    return found


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


def from_a_person(message: Message, own_addresses: Iterable[str]) -> bool:
    """Written from the mailbox by a person: sent from one of its own addresses without ReplyOnce's
    intent id in its metadata (every reply ReplyOnce sends carries it, ``replyonce.coverage``)."""
    return sender_email(message) in frozenset(own_addresses) and not carries_intent_id(message)


@dataclass(frozen=True)
class PeopleInThread:
    """What the people of the mailbox did in a thread, as its listing shows it.

    Attributes
    ----------
    answered:
        Message ids a person's message answered: every message listed older than the newest
        person's message, and every message a person's ``In-Reply-To``/``References`` names.
    newest:
        The newest person's message (listing order), or ``None``.
    """

    answered: frozenset[str]
    newest: Message | None


def people_in_thread(messages: Sequence[Message], own_addresses: Iterable[str]) -> PeopleInThread:
    """Which messages the mailbox's people answered (invariant 1, counting the people).

    Why two sources: "after" is the listing's order (never the sender's
    ``date``), and a person's reply names what it answers in its headers
    when they were read. Where they disagree — a back-dated customer message
    listed below a person's reply, a reply to an older message — the
    message counts as answered: that side sends nothing twice, and the skip
    is logged with its reason.
    """
    own = frozenset(own_addresses)
    newest = next((i for i, m in enumerate(messages) if from_a_person(m, own)), None)
    if newest is None:
        return PeopleInThread(frozenset(), None)
    answered = {message_id(m) for m in messages[newest + 1 :]}
    named: set[str] = set()
    for m in messages:
        if from_a_person(m, own):
            for header in ("in-reply-to", "references"):
                for value in header_values(m, header):
                    named.update(part for part in value.split() if part)
    if named:
        answered |= {
            message_id(m) for m in messages if any(v in named for v in header_values(m, "message-id"))
        }
    return PeopleInThread(frozenset(answered - {""}), messages[newest])


def person_hold_ends(people: PeopleInThread, hold_seconds: int) -> int | None:
    """When the thread is the agent's again after a person wrote in it (Nylas time), or ``None``.

    The person's message's ``date`` is the mailbox's own clock (it was sent from the mailbox), not a
    customer's; a date in the future holds the thread until then and a hold of 0 is off.
    """
    if people.newest is None or hold_seconds <= 0:
        return None
    try:
        written = int(people.newest.get("date") or 0)
    except (TypeError, ValueError):
        written = 0
    return written + hold_seconds


def automatic_exchanges(
    messages: Sequence[Message],
    correspondent: str,
    own_addresses: Iterable[str],
    pending: Sequence[Sequence[str]] = (),
) -> int:
    """ReplyOnce's replies to ``correspondent`` in the thread since a person of the mailbox last wrote.

    Why count them: when a provider drops every automatic mark (or the other
    side is a robot that honours none), two agents answer each other paced
    only by the hourly budget. A person writing from the mailbox resets the
    count: the conversation is a person's again. ``messages`` are in the
    listing's order (newest first); a reply counts when it is ours (our
    intent id in its metadata) and names the correspondent's mailbox.
    ``pending`` are the ``to`` addresses of our replies not in the listing
    yet (queued by Nylas, or still being sent): newer than any message
    listed, so no person's message stands between them and the next reply.
    Why they count: a reply queued by Nylas is in no listing for seconds, and
    the 10,000-notification run of issue 31 sent a third email beside it.
    """
    own = frozenset(own_addresses)
    wanted = mailbox_key(correspondent)
    count = sum(1 for to in pending if wanted in {mailbox_key(a) for a in to})
    for m in messages:
        if from_a_person(m, own):
            break
        if sender_email(m) in own and carries_intent_id(m) and wanted in _mailboxes(m, ("to",)):
            count += 1
    return count


def plan_burst(
    trigger_id: str,
    messages: Sequence[Message],
    *,
    is_covered: Callable[[str], bool],
    reason_not_to_answer: Callable[[Message], SkipReason | None],
    own_addresses: Iterable[str],
    trusted_senders: Iterable[str] = (),
    trusted_lists: Iterable[str] = (),
    now: int = 0,
    person_hold_seconds: int = 0,
    max_recipients: int = 1,
    max_automatic_exchanges: int = 0,
    pending_replies: Sequence[Sequence[str]] = (),
) -> Burst | SkipReason:
    """The reply to plan for the notification about ``trigger_id`` (invariants 2 and 3).

    Parameters
    ----------
    trigger_id:
        The message the notification is about; it must be among ``messages``.
    messages:
        The thread as read inside the lease, in the listing's order.
    is_covered:
        Whether a reply (our state, or a reply of ours in the mailbox) covers a message id.
    reason_not_to_answer:
        ``replyonce.screening.reason_not_to_answer`` bound to this grant.
    pending_replies:
        The ``to`` addresses of our replies that may be out, or will be, and are not in ``messages``
        (:func:`automatic_exchanges`).

    Returns
    -------
    Burst or SkipReason
        One reply to the newest eligible uncovered message covers every
        eligible uncovered message (invariant 3). A message that reached the
        thread after an earlier reply's read is not covered, so it is
        answered now (invariant 2).
    """
    if is_covered(trigger_id):
        return SkipReason.ALREADY_REPLIED
    trigger = next((m for m in messages if message_id(m) == trigger_id), None)
    if trigger is None:
        raise ValueError(f"the trigger message {trigger_id!r} is not among the messages read")
    own = frozenset(own_addresses)
    people = people_in_thread(messages, own)
    if trigger_id in people.answered:
        return SkipReason.ANSWERED_BY_PERSON
    reason = reason_not_to_answer(trigger)
    if reason is not None:
        return reason
    hold_ends = person_hold_ends(people, person_hold_seconds)
    if hold_ends is not None and now < hold_ends:
        return SkipReason.PERSON_HOLD
    trusted = frozenset(trusted_senders)
    lists = frozenset(trusted_lists)
    burst = tuple(
        dict(
            (message_id(m), m)
            for m in messages
            if message_id(m)
            and message_id(m) not in people.answered
            and not is_covered(message_id(m))
            and reason_not_to_answer(m) is None
        ).values()
    )

    def recipient_of(message: Message) -> dict[str, str] | None:
        return reply_recipient(message, own, trusted, lists)

    for target in burst:  # newest first; a target nobody may be mailed at falls to the next
        recipient = recipient_of(target)
        if recipient is None:
            continue
        kept, recipients = reach_everyone(
            burst, target, recipient, messages, recipient_of=recipient_of, max_recipients=max_recipients
        )
        if trigger_id not in {message_id(m) for m in kept}:
            # Its sender is not reached by the reply that covers it: nobody may be mailed at (a malformed
            # or agent address), or one sender too many. Logged, never recorded answered.
            return SkipReason.NO_RECIPIENT if recipient_of(trigger) is None else SkipReason.SENDER_NOT_REACHED
        if max_automatic_exchanges and any(
            automatic_exchanges(messages, r["email"], own, pending_replies) >= max_automatic_exchanges
            for r in recipients
        ):
            return SkipReason.EXCHANGE_LIMIT
        return Burst(kept, target, recipients)
    return SkipReason.NO_RECIPIENT


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
