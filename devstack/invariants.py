"""Check the invariants of docs/design.md, and issue 40's seventh, against what the world saw.

Knowing nothing of the product, as below.

Why a checker of its own: one that shares the product's filters or its idea of
coverage agrees with the product's mistakes. This module therefore imports
nothing from ``layers/`` or ``functions/`` (``tests/harness/test_invariants.py`` checks it)
and decides from world facts only:

- **ground truth** from the workload: each inbound message it generated with
  its label (human customer, out-of-office, newsletter, mailer-daemon, another
  agent, a teammate writing from the agent's mailbox...) and the addresses a
  reply may go to (:class:`Truth`);
- **the mailbox** of the Nylas emulator: every message in arrival order, with
  the time it arrived. Order is the mailbox's, never the sender's ``date``;
- **what went out**: every email the emulator delivered (key replays are not
  emails; a lapsed key's second send is one; a queued send becomes one only
  when Nylas' queue releases it, and one Nylas failed, ``message.send_failed``,
  never does), and every send request the product made, seen on the wire
  (:class:`SendAttempt`);
- **thread reads** seen on the wire (:class:`ThreadRead`): a reply's draft can
  only have seen messages that arrived before the read that produced it;
- **people in the mailbox**: a message in an agent grant's Sent folder from
  one of that grant's own addresses (its address and its aliases, ground truth)
  that the agent did not send (a colleague answering from a shared mailbox, a
  teammate's send) answers every message of its thread that arrived before it
  and whose sender it addresses (``to``/``cc``): a forward to a colleague
  answers nobody, and mail forged from the grant's address (in the inbox or
  junk) is nobody's answer;
- **the hand-off folder** at the end of the run: a message a person wrote that
  sits there is a person's to answer (invariant 7);
- the webhook deliveries with their statuses, and the handlers' logs (only for
  invariant 5, which is about the logs, and for the skips invariant 2 accepts
  when ground truth says their reason is true).

A violation is a sentence naming the message, thread or notification concerned.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# What the handlers log, by the ``message`` of the record (the logs are the product's public output).
QUEUED = "notification queued"
REPLY_SENT = "reply sent"
# REPLY_MODE=review: the reply is a draft in the mailbox for a person; nothing was sent.
REPLY_DRAFTED = "reply drafted for review"
# REPLY_MODE=shadow: what the agent would have sent, recorded; nothing was sent or drafted.
REPLY_SHADOWED = "shadow mode: reply recorded, nothing sent"
REPLY_QUEUED = "reply queued by Nylas"  # a 202: the outcome of its notification (Nylas sends it later)
SKIPPED = "notification skipped"
# What a grant notification (grant.created/updated/expired/deleted) did, one of these lines (issue 42).
GRANT_LIFE_OUTCOMES = frozenset(
    {
        "grant notification changed nothing",
        "grant notification names no grant; nothing to do",
        "grant expired: not an agent grant of this stack; nothing waits",
        "grant expired: paused; its mail waits until Nylas says it was re-authenticated",
        "grant re-authenticated: resumed",
        "grant created: not registered (NewGrantReplyMode is off)",
        "grant created: registered",
        "grant created: it has a record already, left as it is",
        "grant deleted: not an agent grant of this stack; no state to remove",
        "grant deleted: nothing more is sent for it; its state is being removed",
    }
)
DUPLICATE_ABSORBED = "duplicate delivery absorbed"
LEASE_LOST = (
    "thread lease expired and was taken over before release",
    "thread lease was lost before the reply was recorded; recorded without it",
)
# The metric every skip is counted in, with its reason as a dimension (CloudWatch EMF in the logs).
SKIP_METRIC = "NotificationSkipped"
# The skip reasons of an eligible message that ground truth can confirm: the loop guard's, and the end
# of a run of automatic exchanges with one correspondent (the agent answered them enough times with no
# person of the mailbox writing in between).
BUDGET_SKIP = "reply_budget_exhausted"
EXCHANGE_SKIP = "exchange_limit"
RECIPIENT_SKIP = "recipient_budget_exhausted"
# Nylas' time is whole seconds (its answers' Date), so a reservation's time may be off by up to two.
RESERVATION_SLACK_SECONDS = 2.0
# Statuses Nylas retries a webhook delivery on (Nylas' documentation, not our code).
NYLAS_RETRIED_STATUSES = frozenset({408, 429, 502, 503, 504, 507})

INVARIANTS = {
    1: "at most one email per inbound message",
    2: "nothing silently lost",
    3: "one email per burst, to its newest message",
    4: "never to itself, an agent, a machine or a forbidden Reply-To; loop guard",
    5: "every skip logged with a reason and counted",
    6: "200 only once queued; forged never queued; never 500",
    7: "no silent no for a person",
}
# The hand-off folder's name by default (the template's HandoffFolder, HANDOFF_FOLDER).
HANDOFF_FOLDER = "Needs a person"
# Who wrote a message, as ground truth knows it (Truth.author).
PERSON, MACHINE, OURS = "person", "machine", "ours"
# Folders a provider files mail in that nobody owes an answer (invariant 7).
JUNK_FOLDERS = frozenset({"junk", "trash"})


@dataclass(frozen=True)
class Truth:
    """Why the workload generated an inbound message, and what a reply to it may do.

    Attributes
    ----------
    label : str
        What the message is (``customer``, ``out_of_office``, ``newsletter``, ``mailer_daemon``,
        ``agent_mail``, ``teammate``, ``contact_form``, ``reply_to_third_party``, ...).
    must_answer : bool
        A human wrote it to an agent: it must be covered by a reply (or skipped by the loop guard).
    may_answer : bool
        A reply is allowed at all (a contact form may be answered at its ``Reply-To``, or skipped).
    recipients : frozenset of str
        Lower-cased addresses a reply to it may be sent to (``to``/``cc``/``bcc``).
    email : str
        For one email addressed to several agent grants (each mailbox holds its own copy, its own
        id), the ``Message-ID`` the copies share; ``""`` otherwise. The copies are one message to
        the customer: ``must_answer`` asks one email among them, and two are two answers.
    words : tuple of str
        Tokens the sender wrote in this message (or forwarded for the agent to read), wherever they
        stand in the body: an email answering it says each back (the run's agent echoes what it
        read, :attr:`History.agent_echoes`).
    quoted : tuple of str
        Tokens of the history the message quotes: no email answering it says one back.
    author : {"person", "machine", "ours"}
        Who wrote it: a person (a customer, a colleague in Cc, a customer relayed by a list), a
        machine (an auto-responder, a newsletter, another agent, list traffic nobody trusted, mail
        forged from our own address) or the mailbox itself (a teammate, a colleague's answer).
        Invariant 7 holds every message a person wrote to its end: answered, answered by the
        mailbox's people, or handed off.
    filed : str
        The folder the provider filed it in on arrival (``inbox``; ``junk`` or ``trash``: nobody
        owes it an answer).
    alone : bool
        A newcomer to the thread (its sender in no earlier message's ``from``/``to``/``cc``): a reply
        to it goes to its ``recipients`` only, and theirs join no reply to another message of the
        thread; it is a burst of its own (invariant 3).
    """

    label: str
    must_answer: bool
    may_answer: bool
    recipients: frozenset[str] = frozenset()
    email: str = ""
    words: tuple[str, ...] = ()
    quoted: tuple[str, ...] = ()
    author: str = PERSON
    filed: str = "inbox"
    alone: bool = False

    @classmethod
    def human(cls, label: str, *answer_to: str, **more: Any) -> Truth:
        return cls(label, True, True, frozenset(a.lower() for a in answer_to), **more)

    @classmethod
    def optional(cls, label: str, *answer_to: str, **more: Any) -> Truth:
        return cls(label, False, True, frozenset(a.lower() for a in answer_to), **more)

    @classmethod
    def answer_or_hand_off(cls, label: str, *answer_to: str, **more: Any) -> Truth:
        """A person wrote it and may be answered; a hand-off is as good (invariant 7 holds it)."""
        return cls(label, False, True, frozenset(a.lower() for a in answer_to), author=PERSON, **more)

    @classmethod
    def hand_off(cls, label: str, **more: Any) -> Truth:
        """A person wrote it, no reply may go to anyone: a person of the mailbox must have it."""
        return cls(label, False, False, author=PERSON, **more)

    @classmethod
    def never(cls, label: str, author: str = MACHINE, **more: Any) -> Truth:
        return cls(label, False, False, author=author, **more)

    @classmethod
    def one_of(cls, label: str, email: str, *answer_to: str) -> Truth:
        """A copy of ``email`` in one of several agents' mailboxes: one copy must be answered."""
        return cls(label, True, True, frozenset(a.lower() for a in answer_to), email)


@dataclass(frozen=True)
class ThreadRead:
    """A request for a thread's messages, as seen on the wire (times on the mailbox's clock)."""

    grant_id: str
    thread_id: str
    started: float
    finished: float


@dataclass(frozen=True)
class SendAttempt:
    """A send request the product made, as seen on the wire, whatever became of it."""

    grant_id: str
    payload_digest: str
    started: float
    status: int | None  # None: no answer reached the product
    replayed: bool = False


def payload_digest(payload: Any) -> str:
    """One digest per draft, so every attempt of it is recognised: the send request body without its
    ``custom_headers`` (a send Nylas refused for them goes out again without them, the same draft)."""
    if isinstance(payload, Mapping):
        payload = {key: value for key, value in payload.items() if key != "custom_headers"}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@dataclass
class History:
    """Everything observed during a run.

    ``thread_reads`` and ``send_attempts`` come from a wire tap (the chaos harness's proxy); without
    them (``None``) a reply is taken to have been drafted right before it was delivered, which is
    weaker: a message landing mid-send then counts as covered.
    """

    agent_grants: dict[str, str]  # grant id -> agent address (every agent grant of the deployment)
    mailbox: list[tuple[float, dict[str, Any]]]  # (arrived_at, message), every grant, arrival order
    truth: dict[str, Truth]  # inbound message id -> ground truth
    sends: list[Any]  # emails the emulator delivered: objects with grant_id, payload, message
    deliveries: list[Any]  # webhook deliveries: objects with notification_id, status, forged
    logs: list[dict[str, Any]]
    reply_budget: int  # emails per thread per window
    budget_window_seconds: float = 3600.0
    # Agent emails to one correspondent per thread with no person writing in between, at most (0: off).
    automatic_exchanges: int = 0
    # Emails per recipient inbox (across threads) within budget_window_seconds of the mailbox's clock,
    # at most (0: off); which spellings reach one inbox is ground truth (``inboxes``: spelling -> inbox,
    # lower case; any other address is its own inbox).
    recipient_budget: int = 0
    inboxes: dict[str, str] = field(default_factory=dict)
    # The run's agent says back the text it was given (``Truth.words`` and ``Truth.quoted`` are checked).
    agent_echoes: bool = False
    # Sends made by the workload (teammates): not the agent's. A colleague's answer from the mailbox is
    # no send at all; both are people's messages (:attr:`_World.people`).
    harness_sent_ids: set[str] = field(default_factory=set)
    thread_reads: list[ThreadRead] | None = None
    send_attempts: list[SendAttempt] | None = None
    # (real time, seconds): the mailbox's clock jumped ahead then (``advance_clock``), not real time.
    clock_advances: list[tuple[float, float]] = field(default_factory=list)
    # The same jumps, each at the real time its ``advance_clock`` had returned: a request between the two
    # times (one holding the emulator's lock delays the jump) may have been answered either side of it.
    # Empty: each jump known to the instant (``clock_advances`` serves both bounds).
    clock_advances_done: list[tuple[float, float]] = field(default_factory=list)
    notified_message_ids: set[str] = field(default_factory=set)  # messages whose message.created was sent
    # Queued sends Nylas failed (message.send_failed): never emails; objects with grant_id, payload.
    failed_sends: list[Any] = field(default_factory=list)
    # The order of the thread listings the product read: newest "arrival" first, or newest "date"
    # (the sender's clock) first -- Nylas says only "reverse chronological". It decides which
    # message is a burst's newest, the one its reply threads on (invariant 3).
    listing_order: str = "arrival"
    forged_notification_ids: set[str] = field(default_factory=set)
    # What the webhook function raised (API Gateway's 502), one line each: never an answer of ours.
    function_errors: list[str] = field(default_factory=list)
    dead_lettered_notification_ids: set[str] = field(default_factory=set)
    # The messages those dead letters announced (their ``message.created``): still waiting for the
    # operator's redrive at the end, so invariant 2 names them as dead-lettered, not as never seen.
    dead_lettered_message_ids: set[str] = field(default_factory=set)
    # Each agent grant's email aliases (ground truth: the addresses its people write from besides its
    # own, and the ones its sent copies may show).
    aliases: dict[str, list[str]] = field(default_factory=dict)
    # The folder a hand-off moves a message into (the run's HANDOFF_FOLDER), by name.
    handoff_folder: str = HANDOFF_FOLDER
    # An automatic exchange is an email of ours the correspondent answered within this many seconds of
    # Nylas' time (robot speed, automatic_exchange_seconds); a slower answer is a person's.
    automatic_exchange_seconds: float = 600.0
    # Messages no agent owes an end (issue 42): their grant was in shadow or review, created and not yet
    # promoted, or deleted while they waited, so neither an answer nor a hand-off is due (invariant 7).
    # What such a grant may not do is checked per grant (chaos/grant_checks.py), from its life's log.
    unowed: set[str] = field(default_factory=set)


@dataclass
class _Email:
    """One email the agent put on the wire."""

    id: str
    grant_id: str
    thread_id: str
    target: str | None
    recipients: list[str]
    sent_at: float  # arrival in the mailbox (real time)
    # Nylas' time of the email, which the loop guard is measured in: its ``date`` (stamped when Nylas
    # accepted it) and its arrival on the mailbox's clock; they differ by a queue's delay, or by an
    # hour when Nylas' clock jumped meanwhile. The checks take whichever of the two is lenient.
    nylas_lo: float
    nylas_hi: float
    drafted_before: float  # the first request carrying this draft started here
    body: str = ""  # the request's body (HTML)
    read_lo: float = float("-inf")  # every read that could have produced it started after this
    read_hi: float = float("inf")  # and finished before this


def _addresses(participants: Iterable[Mapping[str, Any]] | None) -> list[str]:
    return [str(p.get("email", "")).lower() for p in participants or [] if isinstance(p, Mapping)]


class _World:
    """The history re-indexed: messages by id and thread, the agent's emails with their read windows."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.arrived: dict[str, float] = {}
        self.seq: dict[str, int] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        for position, (at, message) in enumerate(history.mailbox):
            self.arrived[message["id"]] = at
            self.seq[message["id"]] = position
            self.messages[message["id"]] = message
        agent_ids = {
            str(record.message["id"])
            for record in history.sends
            if record.grant_id in history.agent_grants
            and record.message["id"] not in history.harness_sent_ids
        }
        first_attempt: dict[tuple[str, str], float] = {}
        for attempt in history.send_attempts or []:
            slot = (attempt.grant_id, attempt.payload_digest)
            first_attempt[slot] = min(first_attempt.get(slot, attempt.started), attempt.started)
        reads: dict[tuple[str, str], list[ThreadRead]] = defaultdict(list)
        for read in history.thread_reads or []:
            reads[(read.grant_id, read.thread_id)].append(read)
        self.emails: list[_Email] = []
        for record in history.sends:
            message = record.message
            if message["id"] not in agent_ids:
                continue
            payload = record.payload if isinstance(record.payload, Mapping) else {}
            sent_at = self.arrived.get(message["id"], 0.0)
            arrival = self.mailbox_time(sent_at)
            drafted = first_attempt.get((record.grant_id, payload_digest(record.payload)), sent_at)
            self.emails.append(
                _Email(
                    id=message["id"],
                    grant_id=record.grant_id,
                    thread_id=message["thread_id"],
                    target=payload.get("reply_to_message_id") or message.get("in_reply_to"),
                    recipients=[
                        *_addresses(payload.get("to")),
                        *_addresses(payload.get("cc")),
                        *_addresses(payload.get("bcc")),
                    ],
                    sent_at=sent_at,
                    nylas_lo=min(float(message.get("date") or arrival), arrival),
                    nylas_hi=max(float(message.get("date") or arrival), arrival),
                    drafted_before=min(drafted, sent_at),
                    body=str(payload.get("body") or ""),
                )
            )
        self.emails.sort(key=lambda e: self.seq.get(e.id, 0))
        # Per thread in the order they were *drafted*: a queued send arrives when Nylas' queue
        # releases it, and one Nylas failed goes out again later, so arrival order can differ.
        self.emails_by_thread: dict[tuple[str, str], list[_Email]] = defaultdict(list)
        for email in sorted(self.emails, key=lambda e: (e.drafted_before, self.seq.get(e.id, 0))):
            self.emails_by_thread[(email.grant_id, email.thread_id)].append(email)
        for (grant, thread), emails in self.emails_by_thread.items():
            previous_draft = float("-inf")
            for email in emails:
                if history.thread_reads is None:
                    # No wire tap: the draft could have seen everything up to the send.
                    email.read_lo = email.read_hi = email.drafted_before
                else:
                    # The read that produced this draft finished before its first send request and
                    # started after the previous email of the thread had been drafted.
                    candidates = [
                        r
                        for r in reads[(grant, thread)]
                        if r.finished <= email.drafted_before and r.started >= previous_draft
                    ]
                    if candidates:
                        email.read_lo = min(r.started for r in candidates)
                        email.read_hi = max(r.finished for r in candidates)
                    else:  # drafted from no read we saw: it can have seen nothing newer than its send
                        email.read_lo = email.read_hi = email.drafted_before
                previous_draft = email.drafted_before
        self.agent_addresses = {address.lower() for address in history.agent_grants.values()}
        # Targets of the sends Nylas failed, per (grant, thread): a failed send is no email.
        self.failed_targets: dict[tuple[str, str], list[str]] = defaultdict(list)
        for record in history.failed_sends:
            payload = record.payload if isinstance(record.payload, Mapping) else {}
            target = payload.get("reply_to_message_id")
            if target in self.messages:
                message = self.messages[target]
                self.failed_targets[(message["grant_id"], message["thread_id"])].append(target)
        # Copies of one email in several agents' mailboxes, by the Message-ID they share.
        self.copies: dict[str, list[str]] = defaultdict(list)
        for message_id, truth in history.truth.items():
            if truth.email:
                self.copies[truth.email].append(message_id)
        # People's messages per (grant, thread), in arrival order: from the mailbox's own address, not
        # sent by the agent. Why from its own address only: mail from another agent's address is
        # that agent's, and lands in this mailbox as inbound mail.
        # Only in the Sent folder: mail forged from the grant's address arrives in its inbox or junk.
        email_ids = {email.id for email in self.emails}
        self.people: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.people_by_grant: dict[str, list[str]] = defaultdict(list)
        for _, message in history.mailbox:
            own = self.own_addresses(message["grant_id"])
            if (
                own
                and message["id"] not in email_ids
                and own & set(_addresses(message.get("from")))
                and "sent" in message.get("folders", ())
            ):
                self.people[(message["grant_id"], message["thread_id"])].append(message["id"])
                self.people_by_grant[message["grant_id"]].append(message["id"])

    def own_addresses(self, grant: str) -> set[str]:
        """An agent grant's address and its aliases (lower case); empty for any other grant."""
        own = self.history.agent_grants.get(grant, "")
        if not own:
            return set()
        return {own.lower(), *(a.lower() for a in self.history.aliases.get(grant, []))}

    def senders(self, message_id: str) -> set[str]:
        """Whom an answer to the message must reach: its person as ground truth knows them (a
        relayed customer, a contact form's), else its ``From``."""
        truth = self.truth(message_id)
        if truth is not None and truth.recipients:
            return set(truth.recipients)
        return set(_addresses(self.messages[message_id].get("from")))

    def addresses(self, person_id: str, message_id: str) -> bool:
        """A people's message is addressed (``to``/``cc``) to the message's sender."""
        person = self.messages[person_id]
        named = {self.inbox(a) for a in [*_addresses(person.get("to")), *_addresses(person.get("cc"))]}
        return bool(named & {self.inbox(a) for a in self.senders(message_id)})

    def same_party(self, first: str, second: str) -> bool:
        """Two messages of a thread belong to one burst: neither is a newcomer's, or both are from the
        same sender (a newcomer is answered alone)."""
        a, b = self.truth(first), self.truth(second)
        if (a is None or not a.alone) and (b is None or not b.alone):
            return True
        return set(_addresses(self.messages[first].get("from"))) == set(
            _addresses(self.messages[second].get("from"))
        )

    def inbox(self, address: str) -> str:
        """The inbox an address reaches (ground truth, :attr:`History.inboxes`)."""
        address = address.lower()
        return self.history.inboxes.get(address, address)

    def mailbox_time(self, real: float) -> float:
        """The mailbox's clock at real time ``real`` (the loop guard is measured in Nylas' time): at the
        latest, a jump counted from the moment it was asked for."""
        return real + sum(seconds for at, seconds in self.history.clock_advances if at <= real)

    def mailbox_time_surely(self, real: float) -> float:
        """The mailbox's clock at real time ``real`` at the earliest: a jump counted only once its
        ``advance_clock`` had returned, so a conviction never rests on a jump that had not happened."""
        done = self.history.clock_advances_done or self.history.clock_advances
        return real + sum(seconds for at, seconds in done if at <= real)

    def listed_before(self, newer: str, older: str) -> bool:
        """Whether the thread listing shows ``newer`` as newer than ``older`` (its order, its key)."""
        if self.history.listing_order == "date":
            return self._by_date(newer) > self._by_date(older)
        return self.seq[newer] > self.seq[older]

    def _by_date(self, message_id: str) -> tuple[int, int]:
        """A date-ordered listing's key: the sender's ``date``, ties by arrival."""
        return int(self.messages[message_id].get("date") or 0), self.seq[message_id]

    def truth(self, message_id: str | None) -> Truth | None:
        return self.history.truth.get(message_id or "")

    def inbound(self, grant: str, thread: str) -> list[str]:
        """Ids of the thread's messages with ground truth (inbound), in arrival order."""
        return [
            m["id"]
            for _, m in self.history.mailbox
            if m["grant_id"] == grant and m["thread_id"] == thread and m["id"] in self.history.truth
        ]


def check(history: History) -> dict[int, list[str]]:
    """Violations per invariant number (empty lists when all hold)."""
    violations: dict[int, list[str]] = {number: [] for number in INVARIANTS}
    world = _World(history)
    _at_most_one(world, violations[1])
    _answered_by_people(world, violations[1])
    _nothing_lost(world, violations[2])
    _customer_words(world, violations[2])
    _one_per_burst(world, violations[3])
    _never_to_machines(world, violations[4])
    _exchange_limit(world, violations[4])
    _recipient_budget(world, violations[4])
    _skips_logged(history, violations[5])
    _endpoint(history, violations[6])
    _no_silent_no(world, violations[7])
    return violations


def _at_most_one(world: _World, found: list[str]) -> None:
    """1. Count delivered emails per inbound message they answer (replays and sends Nylas failed are
    not emails); the copies of one email in several agents' mailboxes are one message."""
    per_target = Counter(email.target for email in world.emails if email.target)
    for target, emails in sorted(per_target.items()):
        if emails > 1:
            found.append(f"message {target} got {emails} emails")
    for email_id, copies in sorted(world.copies.items()):
        answered = sorted(copy for copy in copies if per_target[copy])
        if len(answered) > 1:
            found.append(f"email {email_id} to several agents was answered in each of {', '.join(answered)}")


def _answered_by_people(world: _World, found: list[str]) -> None:
    """1, counting people: no message a person answered from the mailbox is answered again by the
    agent, counting only the agent's share of the fault.

    A person's message answers every message of its thread that arrived before it, so it ends a
    burst as an agent's email does: an email covers a message the person answered only if it
    answers (threads on) a message from before the person's, since an email to a later message
    answers the burst after it (those the hold keeps the agent from may be answered, need not be).
    The agent is at fault only if every read that could have produced the email started after the
    person's message arrived: a person answering while the agent drafts (between its read and
    its send) is a race the agent could not see.
    """
    for (grant, thread), emails in sorted(world.emails_by_thread.items()):
        people = world.people.get((grant, thread), [])
        if not people:
            continue
        for email in emails:
            target = email.target
            if target not in world.seq or world.messages[target]["thread_id"] != thread:
                continue  # it answers nothing of this thread's (invariant 4 names an unknown target)
            after_target = [
                p for p in people if world.seq[p] > world.seq[target] and world.addresses(p, target)
            ]
            person = next((p for p in after_target if world.arrived[p] < email.read_lo), None)
            if person is not None:
                found.append(
                    f"message {target} answered by a person ({person}) and again by the agent "
                    f"(email {email.id}, read after the person's answer)"
                )


def _answered_by_person(world: _World, message_id: str) -> bool:
    """A person's message in the thread, addressed to its sender, arrived after this one: a person
    answered it."""
    message = world.messages[message_id]
    people = world.people.get((message["grant_id"], message["thread_id"]), [])
    return any(
        world.seq[person] > world.seq[message_id] and world.addresses(person, message_id) for person in people
    )


def _nothing_lost(world: _World, found: list[str]) -> None:
    """2. Every message a human wrote to an agent is covered by an email whose draft could have
    seen it (it arrived before the read that produced the email finished), answered by a person
    from the mailbox (a message of theirs in the thread arrived after it), or skipped by a loop
    guard whose budget was truly spent."""
    history = world.history
    budget_skips = {
        r["message_id"]
        for r in history.logs
        if r.get("message") == SKIPPED and r.get("reason") == BUDGET_SKIP
    }
    exchange_skips = {
        r["message_id"]
        for r in history.logs
        if r.get("message") == SKIPPED and r.get("reason") == EXCHANGE_SKIP
    }
    recipient_skips = {
        r["message_id"]
        for r in history.logs
        if r.get("message") == SKIPPED and r.get("reason") == RECIPIENT_SKIP
    }
    for message_id, truth in sorted(history.truth.items()):
        if not truth.must_answer or message_id not in history.notified_message_ids:
            continue
        message = world.messages.get(message_id)
        if message is None:
            found.append(f"message {message_id} ({truth.label}) is not in the mailbox")
            continue
        if truth.email and any(
            _covered(world, copy) or _answered_by_person(world, copy) or _refused_twice(world, copy)
            for copy in world.copies[truth.email]
            if copy != message_id and copy in world.messages
        ):
            # Another agent's copy of the same email was answered (or its reply refused twice by the
            # customer's server: the one answer the email gets, and no loss of ours).
            continue
        if _covered(world, message_id) or _answered_by_person(world, message_id):
            continue
        if _refused_twice(world, message_id):
            continue
        arrived = world.arrived[message_id]
        if message_id in budget_skips and _budget_spent_after(world, message, arrived):
            continue
        if message_id in exchange_skips and _exchanges_spent_before(world, message, arrived):
            continue
        if message_id in recipient_skips and _recipient_budget_spent(world, message, truth):
            continue
        if message_id in budget_skips:
            reason = "skipped (budget not spent)"
        elif message_id in history.dead_lettered_message_ids:
            reason = "dead-lettered (its notification waits in the dead-letter queue at the end)"
        else:
            reason = "never answered"
        found.append(f"message {message_id} ({truth.label}) {reason}: no email's draft could have seen it")


def _customer_words(world: _World, found: list[str]) -> None:
    """2, the customer's words: an email answering a message says back every word the sender wrote in
    it, wherever they stood (below a quote, between quoted blocks, a forward's content), and nothing
    of the history it quoted as theirs. Only for a run whose agent echoes what it read."""
    if not world.history.agent_echoes:
        return
    for email in world.emails:
        truth = world.truth(email.target)
        if truth is None or not (truth.words or truth.quoted):
            continue
        missing = [word for word in truth.words if word not in email.body]
        quoted = [token for token in truth.quoted if token in email.body]
        if missing:
            found.append(
                f"email {email.id} answers {email.target} ({truth.label}) without what its sender wrote: "
                f"{', '.join(missing)} never reached the agent"
            )
        if quoted:
            found.append(
                f"email {email.id} answers {email.target} ({truth.label}) taking quoted history for the "
                f"sender's words: {', '.join(quoted)}"
            )


def _covered(world: _World, message_id: str) -> bool:
    """Some email of the message's thread was drafted from a read that finished after it arrived, and
    reached its sender: an email the sender never got answers nothing for them (a reply to a Cc'd
    colleague alone leaves the customer unanswered)."""
    message = world.messages.get(message_id)
    if message is None:
        return False
    truth = world.truth(message_id)
    reachable = truth.recipients if truth is not None else frozenset()
    emails = world.emails_by_thread[(message["grant_id"], message["thread_id"])]
    return any(
        world.arrived[message_id] < email.read_hi
        and (not reachable or bool(reachable & set(email.recipients)))
        for email in emails
    )


def _refused_twice(world: _World, message_id: str) -> bool:
    """Nylas failed two queued sends answering this message or a later one of its thread (the
    recipient's server refused the reply twice, ``message.send_failed``): the customer cannot be
    reached, which is no loss of ours. One failure is not enough: the reply goes out again."""
    message = world.messages[message_id]
    targets = world.failed_targets.get((message["grant_id"], message["thread_id"]), [])
    # "Later" as the listing orders the thread: under a listing by date a burst's reply threads on its
    # latest-dated message, which may have arrived before this one (the 10,000-notification run).
    return sum(1 for t in targets if t == message_id or world.listed_before(t, message_id)) >= 2


def _exchanges_spent_before(world: _World, message: dict[str, Any], arrived: float) -> bool:
    """The agent's emails of the message's thread to its sender, since the thread's last message from a
    person of the mailbox (a send the workload made), reached the run's limit as some read of the thread
    after the message arrived could see them (the skip is decided on such a read: a message that
    arrived while the second reply was on its way is the third exchange all the same)."""
    limit = world.history.automatic_exchanges
    if limit <= 0:
        return False
    sender = str((message.get("from") or [{}])[0].get("email", "")).lower()
    grant, thread = message["grant_id"], message["thread_id"]
    people = [
        world.arrived[person]
        for person in world.people.get((grant, thread), [])
        if world.arrived[person] < arrived
    ]
    since = max(people, default=float("-inf"))
    sent = sorted(
        e.sent_at
        for e in world.emails_by_thread[(grant, thread)]
        if since < e.sent_at
        and sender in e.recipients
        and _robot_answered(world, e, world.inbox(sender), surely=False)
    )
    if len(sent) < limit:
        return False
    reads = world.history.thread_reads
    if reads is None:  # no wire tap: the emails must have been out when the message arrived
        return sent[limit - 1] < arrived
    return any(
        r.grant_id == grant and r.thread_id == thread and r.started > arrived and sent[limit - 1] < r.finished
        for r in reads
    )


def _robot_answered(
    world: _World, email: _Email, who: str, *, surely: bool, by: float = float("inf")
) -> bool:
    """The correspondent ``who`` answered ``email`` at robot speed: its next message of the thread
    came within ``automatic_exchange_seconds`` of Nylas' time. ``surely``: by its arrival *and* by
    its sender's ``date``, whichever the product reads (to convict), and arrived before ``by`` (the
    end of the read window of the email being judged: an answer that came later was seen by no read
    that produced it); otherwise by either (to excuse a skip)."""
    limit = world.history.automatic_exchange_seconds
    # To convict, the answer came after the email was in the mailbox; to excuse, after the read that
    # produced it (a message landing while the email was on its way answers it as far as anyone knows).
    after = [
        m
        for m in world.inbound(email.grant_id, email.thread_id)
        if (
            world.seq[m] > world.seq.get(email.id, -1) and world.arrived[m] < by
            if surely
            else world.arrived[m] > email.read_lo
        )
        and who in {world.inbox(a) for a in _addresses(world.messages[m].get("from"))}
    ]
    if not after:
        return False
    answer = after[0]
    arrival = world.mailbox_time(world.arrived[answer])
    dated = float(world.messages[answer].get("date") or arrival)
    if surely:
        gaps = [arrival - email.nylas_lo, dated - email.nylas_lo]
        return all(-RESERVATION_SLACK_SECONDS <= gap <= limit - RESERVATION_SLACK_SECONDS for gap in gaps)
    gaps = [arrival - email.nylas_hi, dated - email.nylas_hi]
    return any(gap <= limit + RESERVATION_SLACK_SECONDS for gap in gaps)


def _recipient_budget_spent(world: _World, message: dict[str, Any], truth: Truth) -> bool:
    """The inbox a reply to ``message`` would reach got ``recipient_budget`` replies (any thread, any
    spelling) whose reservations could fit in one window of the product's clock. A queued reply Nylas
    then failed (``message.send_failed``) counts: it was a reply decided for the inbox, its slot taken
    before its fate was known (the product keeps it for the hour, docs/reliability.md)."""
    budget = world.history.recipient_budget
    if budget <= 0:
        return False
    addresses = {*truth.recipients, *_addresses(message.get("from"))}
    inboxes = {world.inbox(a) for a in addresses}
    emails = sorted(
        (e for e in world.emails if inboxes & {world.inbox(r) for r in e.recipients}),
        key=lambda e: e.drafted_before,
    )
    failed = sum(
        1
        for record in world.history.failed_sends
        if isinstance(record.payload, Mapping)
        and inboxes & {world.inbox(r) for r in _addresses(record.payload.get("to"))}
    )
    needed = budget - failed
    if needed <= 0:
        return True
    window = world.history.budget_window_seconds + RESERVATION_SLACK_SECONDS
    # The reservations could be closest when the first was made as late as the send that put it in the
    # mailbox and the last as early as its read. Not its first request: after a state loss or a restore
    # the reply's slot is gone with the table, and the record that sends it at last reserves it again
    # (a restore while mail flows, issue 48: the first request before Nylas' clock moved a day, the
    # email and its new reservation after).
    emails.sort(key=lambda e: e.sent_at)
    return any(
        world.mailbox_time(last.read_lo) - world.mailbox_time_surely(first.sent_at) < window
        for first, last in zip(emails, emails[needed - 1 :], strict=False)
    )


def _exchange_limit(world: _World, found: list[str]) -> None:
    """4, the end of automatic exchanges: per thread, at most ``automatic_exchanges`` emails answer one
    correspondent (the target's sender, by inbox) with no person of the mailbox writing in between,
    counting only the emails the correspondent answered at robot speed (within
    ``automatic_exchange_seconds`` by arrival and by date): a customer who writes back a day later
    is no robot, however many times.

    Why: two agents (or an agent and an auto-responder whose marks a provider dropped) answer each
    other for as long as their budgets let them; only this ends it. A person's message resets the
    count as soon as some read producing the email could have seen it (lenient: it arrived before
    the read window closed).
    """
    limit = world.history.automatic_exchanges
    if limit <= 0:
        return
    for (grant, thread), emails in sorted(world.emails_by_thread.items()):
        people = [world.arrived[p] for p in world.people.get((grant, thread), [])]

        def correspondent(email: _Email) -> str:
            target = world.messages.get(email.target or "")
            senders = _addresses(target.get("from")) if target else []
            return world.inbox(senders[0]) if senders else ""

        for index, email in enumerate(emails):
            who = correspondent(email)
            if not who:
                continue
            reset = max((at for at in people if at < email.read_hi), default=float("-inf"))
            before = [
                e
                for e in emails[:index]
                if correspondent(e) == who
                and e.drafted_before > reset
                and _robot_answered(world, e, who, surely=True, by=email.read_hi)
            ]
            if len(before) >= limit:
                found.append(
                    f"thread {thread}: email {email.id} is automatic email {len(before) + 1} to {who} with "
                    f"no person of the mailbox writing in between (at most {limit})"
                )


def _recipient_budget(world: _World, found: list[str]) -> None:
    """4, the per-recipient budget: no inbox (every spelling of it, ground truth) gets more than
    ``recipient_budget`` emails whose reservations surely fall within one window of the product's
    clock (a reservation is made after the read that produced its email, before its first send, and
    dated in Nylas' time, which is the mailbox's clock: it jumps when the run moves that clock)."""
    budget = world.history.recipient_budget
    if budget <= 0:
        return
    per_inbox: dict[str, list[_Email]] = defaultdict(list)
    for email in world.emails:
        for inbox in sorted({world.inbox(r) for r in email.recipients} - world.agent_addresses):
            per_inbox[inbox].append(email)
    window = world.history.budget_window_seconds - RESERVATION_SLACK_SECONDS
    for inbox, emails in sorted(per_inbox.items()):
        emails.sort(key=lambda e: e.drafted_before)
        for first, last in zip(emails, emails[budget:], strict=False):
            if world.mailbox_time(last.drafted_before) - world.mailbox_time_surely(first.read_lo) < window:
                spellings = sorted({r for e in emails for r in e.recipients if world.inbox(r) == inbox})
                found.append(
                    f"inbox {inbox}: {budget + 1} emails within {world.history.budget_window_seconds:g} s "
                    f"({', '.join(spellings)})"
                )
                break


def _budget_spent_after(world: _World, message: dict[str, Any], arrived: float) -> bool:
    """Some moment after ``arrived`` had ``budget`` emails of the thread within one window."""
    budget, window = world.history.reply_budget, world.history.budget_window_seconds
    emails = world.emails_by_thread[(message["grant_id"], message["thread_id"])]
    if budget <= 0:
        return True
    times = sorted(emails, key=lambda email: email.nylas_lo)
    arrived_mailbox = world.mailbox_time(arrived)
    for first, last in zip(times, times[budget - 1 :], strict=False):
        if first.nylas_hi > max(last.nylas_lo, arrived_mailbox) - window - 1:
            return True
    return False


def _one_per_burst(world: _World, found: list[str]) -> None:
    """3. Each email answers the newest message its read saw, and never an earlier email's burst."""
    for (grant, thread), emails in world.emails_by_thread.items():
        inbound = world.inbound(grant, thread)
        for index, email in enumerate(emails):
            target = email.target
            if target not in world.seq:
                continue  # invariant 4 names it
            # Messages that certainly existed when every candidate read started: the draft saw them;
            # those an earlier email of the thread may have covered are no part of this burst (under
            # a date-ordered listing, an answered message can be listed above a newer one).
            newer_seen = [
                m
                for m in inbound
                if world.listed_before(m, target)
                and world.same_party(m, target)
                and world.arrived[m] < email.read_lo
                and (truth := world.truth(m)) is not None
                and truth.must_answer
                and not any(
                    world.arrived[m] < earlier.read_hi
                    for earlier in emails[:index]
                    if earlier.target not in world.seq or world.same_party(earlier.target, m)
                )
                # A message whose replies Nylas refused twice is settled for good (no loss of ours,
                # invariant 2): no part of a later burst either.
                and not _refused_twice(world, m)
            ]
            if newer_seen:
                found.append(
                    f"thread {thread}: email {email.id} answers {target}, but {newer_seen[-1]} "
                    "arrived before the read that produced it"
                )
            for earlier in emails[:index]:
                if earlier.target in world.seq and not world.same_party(earlier.target, target):
                    continue  # a newcomer's email, or the others' beside a newcomer's: its own burst
                if world.arrived[target] < earlier.read_lo:
                    found.append(
                        f"thread {thread}: email {email.id} answers {target}, already covered by email "
                        f"{earlier.id}"
                    )
                    break


def _never_to_machines(world: _World, found: list[str]) -> None:
    """4. Targets a reply is allowed for, recipients ground truth allows, the loop guard's budget."""
    for email in world.emails:
        truth = world.truth(email.target)
        if email.target is None or email.target not in world.messages:
            found.append(f"email {email.id} answers no known inbound message ({email.target})")
            continue
        if truth is None or not truth.may_answer:
            label = truth.label if truth else "no ground truth: the agent's own or unknown mail"
            found.append(f"email {email.id} answers {email.target}, which must not be answered ({label})")
            continue
        to_agents = sorted(set(email.recipients) & world.agent_addresses)
        if to_agents:
            found.append(f"email {email.id} is addressed to agent address(es) {', '.join(to_agents)}")
        # A reply may reach the sender of every message of its thread its draft could have seen (a Cc'd
        # colleague who answered all, and the customer), each as ground truth allows that message.
        seen = [
            world.truth(m)
            for m in world.inbound(email.grant_id, email.thread_id)
            if world.arrived[m] < email.read_hi
        ]
        # A newcomer is answered alone: its reply reaches it only, and no other reply reaches it.
        allowed = (
            truth.recipients
            if truth.alone
            else truth.recipients.union(
                *(t.recipients for t in seen if t is not None and t.may_answer and not t.alone)
            )
        )
        strangers = sorted(set(email.recipients) - allowed - world.agent_addresses)
        if strangers:
            found.append(
                f"email {email.id} answering {email.target} ({truth.label}) goes to {', '.join(strangers)}; "
                f"allowed: {', '.join(sorted(truth.recipients)) or 'nobody'}"
            )
        if not email.recipients:
            found.append(f"email {email.id} has no recipient")
    budget, window = world.history.reply_budget, world.history.budget_window_seconds
    for (_, thread), emails in world.emails_by_thread.items():
        times = sorted(emails, key=lambda email: email.nylas_lo)
        # One second of slack: the mailbox's dates are whole seconds.
        for first, last in zip(times, times[budget:], strict=False):
            if last.nylas_hi - first.nylas_lo < window - 1:
                found.append(
                    f"thread {thread}: {budget + 1} emails within {window:g} s of the mailbox's clock"
                )
                break


def _no_silent_no(world: _World, found: list[str]) -> None:
    """7. No silent no for a person: every message a person wrote to an agent mailbox (ground truth,
    notified, not filed in junk or trash) ends answered by the agent (an email of its thread whose
    draft could have seen it reached its sender), answered by the mailbox's people (a message of
    theirs in Sent, from the grant's own addresses and not the agent's, addressed to its sender,
    after it), or in the hand-off folder at the end of the run. One email to several agents is one
    message: any copy's end is the email's."""
    history = world.history
    handoff = history.handoff_folder
    for message_id, truth in sorted(history.truth.items()):
        if truth.author != PERSON or truth.filed in JUNK_FOLDERS or message_id in history.unowed:
            continue
        if world.messages.get(message_id, {}).get("grant_id") not in history.agent_grants:
            continue  # mail to a person's own grant is theirs, not the agents'

        if message_id not in history.notified_message_ids or message_id not in world.messages:
            continue  # never notified: the product never heard of it (invariant 2 judges the loss)
        copies = [c for c in world.copies[truth.email] if c in world.messages] if truth.email else []
        if any(_ended(world, copy, handoff) for copy in [message_id, *copies]):
            continue
        sender = ", ".join(sorted(world.senders(message_id))) or "nobody"
        found.append(
            f"message {message_id} ({truth.label}) from a person ({sender}) was neither answered, nor "
            f"answered by the mailbox's people, nor handed off to {handoff!r}"
        )


def _ended(world: _World, message_id: str, handoff: str) -> bool:
    """The message is answered by the agent or the mailbox's people, or sits in the hand-off folder."""
    message = world.messages[message_id]
    if handoff in message.get("folders", ()):
        return True
    reach = {world.inbox(a) for a in world.senders(message_id)}
    arrived = world.arrived[message_id]
    if any(
        arrived < email.read_hi and reach & {world.inbox(r) for r in email.recipients}
        for email in world.emails_by_thread[(message["grant_id"], message["thread_id"])]
    ):
        return True
    return any(
        world.seq[person] > world.seq[message_id] and world.addresses(person, message_id)
        for person in world.people_by_grant.get(message["grant_id"], [])
    )


def _skips_logged(history: History, found: list[str]) -> None:
    """5. Every queued notification has a logged outcome; every skip has a reason and is counted."""
    outcomes = _outcomes_by_notification(history.logs)
    for notification_id in sorted(_queued_notification_ids(history.logs)):
        if notification_id not in outcomes and notification_id not in history.dead_lettered_notification_ids:
            found.append(f"notification {notification_id} was queued but has no logged outcome")
    for record in history.logs:
        if record.get("message") == SKIPPED and not record.get("reason"):
            found.append(f"skip without a reason: {record.get('notification_id')}")
    # Absorbed duplicates are skips too (reason ``duplicate_notification``), logged in their own words.
    logged = Counter(
        r.get("reason") for r in history.logs if r.get("message") in (SKIPPED, DUPLICATE_ABSORBED)
    )
    counted: Counter[Any] = Counter()
    for record in history.logs:
        if "_aws" in record and SKIP_METRIC in record:
            values = record[SKIP_METRIC]
            counted[record.get("reason")] += int(sum(values) if isinstance(values, list) else values)
    for reason in sorted(set(logged) | set(counted), key=str):
        if logged[reason] != counted[reason]:
            found.append(
                f"skip reason {reason}: {logged[reason]} logged, {counted[reason]} counted in {SKIP_METRIC}"
            )


def _endpoint(history: History, found: list[str]) -> None:
    """6. Never 500 (nor a raise, which API Gateway answers 502), forged never queued, 200 only for queued
    notifications."""
    queued = _queued_notification_ids(history.logs)
    for error, times in sorted(Counter(history.function_errors).items()):
        found.append(f"the webhook function raised {error} ({times} deliveries answered 502)")
    for delivery in history.deliveries:
        if delivery.status == 500:
            found.append(f"delivery of {delivery.notification_id} answered 500")
        # A forged request is refused (401), or, when it cannot be checked (secret unreadable,
        # function timed out), answered a status Nylas retries; never accepted. No answer within
        # the sender's 10 s (status None) is what Nylas documents as a timeout, retried like a 504.
        if delivery.forged and delivery.status not in ({401, None} | NYLAS_RETRIED_STATUSES):
            found.append(f"forged delivery of {delivery.notification_id} answered {delivery.status}")
        if not delivery.forged and delivery.status == 200 and delivery.notification_id not in queued:
            found.append(f"{delivery.notification_id} answered 200 but was never queued")
    for notification_id in sorted(history.forged_notification_ids & queued):
        found.append(f"forged notification {notification_id} was queued")


def _queued_notification_ids(logs: Iterable[dict[str, Any]]) -> set[str]:
    return {r["notification_id"] for r in logs if r.get("message") == QUEUED and r.get("notification_id")}


def _outcomes_by_notification(logs: Iterable[dict[str, Any]]) -> set[str]:
    # A review draft and a shadow record are a notification's outcome too (a grant's reply mode, issue 42),
    # and a grant notification's is what it did to the grant's life.
    final = {REPLY_SENT, REPLY_QUEUED, SKIPPED, DUPLICATE_ABSORBED, REPLY_DRAFTED, REPLY_SHADOWED}
    final |= GRANT_LIFE_OUTCOMES
    return {r["notification_id"] for r in logs if r.get("message") in final and r.get("notification_id")}


def skips_by_reason(logs: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Skipped notifications and absorbed duplicates, counted by their logged reason code."""
    return dict(Counter(r["reason"] for r in logs if r.get("message") in (SKIPPED, DUPLICATE_ABSORBED)))


def leases_lost(logs: Iterable[dict[str, Any]]) -> int:
    """Holders that found their thread lease taken over (the owner-token fence refused them)."""
    return sum(1 for r in logs if r.get("message") in LEASE_LOST)


def sends_replayed(attempts: Iterable[SendAttempt]) -> int:
    """Send requests Nylas answered from its ``Idempotency-Key`` cache (seen on the wire)."""
    return sum(1 for attempt in attempts if attempt.replayed)
