"""The Nylas side of a chaos run: mail as hostile as real mail, and the ground truth of each message.

Every message the workload puts in a mailbox is recorded with *why* it was
generated (:class:`devstack.invariants.Truth`): a human customer, an
out-of-office or a newsletter from a human-looking address, a mailer-daemon,
another agent grant, a teammate writing from the agent's mailbox, a contact
form with ``Reply-To``... The checker judges the product against that, never
against the product's own filters.

Each hostile part is a knob of :class:`WorkloadSettings` with a default that
turns it on; ``make chaos`` runs them all, CI turns on those the product holds
(``tests/e2e/test_chaos.py``). Seeded: the same seed gives the same conversations,
copies and order of deliveries (timing between threads is the machine's).
"""

import inspect
import random
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from typing import Any

import requests

from chaos.written import ATTRIBUTIONS, BROCHURE_REQUEST, LOGO_REQUEST, SHAPES, written_reply
from devstack.events import (
    AGENT_EMAIL,
    AGENT_GRANT_ID,
    HUMAN_EMAIL,
    HUMAN_GRANT_ID,
    envelope,
    notification_envelope,
)
from devstack.invariants import MACHINE, OURS, Truth
from devstack.nylas import NylasEmulator
from devstack.nylas.mailbox import authentication_results
from devstack.webhook_sender import WebhookSender

# An automaton that does not say so (no machine word in its address, no header): the loop guard must stop
# it. Its address carried "autoresponder" until the screening learned that word (stop 60) and refused it.
BOT_EMAIL = "concierge@other-bot.example"
# How much longer than its 5-10 s a send-queue window stays open, at most, waiting for both outcomes.
QUEUE_WINDOW_MAX_EXTRA_SECONDS = 30.0
# A second agent grant of the same deployment: its mailbox and the first one's exchange mail.
SECOND_AGENT_GRANT_ID = "grant-agent-0003"
SECOND_AGENT_EMAIL = "sales@replyonce.example"
AGENT_GRANTS = {AGENT_GRANT_ID: AGENT_EMAIL, SECOND_AGENT_GRANT_ID: SECOND_AGENT_EMAIL}
# Senders that look human: only their headers say they are machines (Nylas omits headers unless asked).
DISGUISED_AUTOMATA = {
    "out_of_office": ("maria.lopez@example.org", {"Auto-Submitted": "auto-replied", "X-Autoreply": "yes"}),
    "newsletter": (
        "jane@news.example.org",
        {"Precedence": "bulk", "List-Unsubscribe": "<mailto:unsubscribe@news.example.org>"},
    ),
    "mailing_list": ("bob.smith@lists.example.net", {"List-Id": "<users.lists.example.net>"}),
    # The classes other projects' fixture sets hold (docs/reliability.md, "Real mail"), each refused by
    # one header sign only: a DSN with a null reverse path, an abuse-desk feedback report, Exchange's
    # out-of-office, a responder's X-Loop, and another ReplyOnce deployment's reply whose
    # Auto-Submitted a Graph-like provider dropped.
    "delivery_status_report": (
        "postoffice@relay.example.net",
        {"Content-Type": "multipart/report; report-type=delivery-status; boundary=b1", "Return-Path": "<>"},
    ),
    "feedback_report": (
        "staff@feedback.example.com",
        {"Content-Type": "multipart/report; report-type=feedback-report; boundary=b2"},
    ),
    "exchange_out_of_office": ("ana.silva@example.com", {"X-Auto-Response-Suppress": "All"}),
    "x_loop": ("helpdesk@example.org", {"X-Loop": "helpdesk@example.org"}),
    "other_replyonce": (
        "support@other-company.example",
        {"X-Auto-Response-Suppress": "All", "X-ReplyOnce": "auto-replied"},
    ),
}
# Senders whose address says it all.
PLAIN_AUTOMATA = {
    "mailer_daemon": ("MAILER-DAEMON@mx.example.net", {}),
    "no_reply": ("no-reply@shop.example", {}),
}
# How a group, a distribution list or aliases on the deployment's domain address one email that
# reaches both agent mailboxes: no grant's own address in To (each played in turn).
GROUP_ADDRESSINGS = (
    ("team@replyonce.example",),
    ("help@replyonce.example", "deals@replyonce.example"),
)
# A support address run as a Google Group: the list the run trusts (chaos/run.py sets TRUSTED_LISTS
# to it) and the group's address, which the relay writes in From; and a list nobody trusts.
TRUSTED_LIST_ID = "customers.replyonce.example"
TRUSTED_GROUP = "customers@replyonce.example"
UNTRUSTED_LIST_ID = "community.lists.partner.example"
UNTRUSTED_GROUP = "community@lists.partner.example"
# The run's TRUSTED_LISTS entry: the list's id and the address its relays write in From (issue 40).
TRUSTED_LISTS = f"{TRUSTED_LIST_ID}={TRUSTED_GROUP}"
# The folder hand-offs move a message into (the run's HANDOFF_FOLDER, the template's default).
HANDOFF_FOLDER = "Needs a person"
# The second agent grant's alias: its sent copies show it (alias_sent_from) and people write from it.
SECOND_AGENT_ALIAS = "deals@replyonce.example"
# Where a colleague forwards a customer's question, and the teammate an internal note goes to.
WAREHOUSE = "warehouse@replyonce.example"
TEAMMATE_NOTE_TO = "sam@replyonce.example"
# A customer asking again each day on one thread: Nylas' clock moves this far between questions.
SLOW_CUSTOMER_QUESTIONS = 5
SLOW_CUSTOMER_GAP_SECONDS = 24 * 3600.0
# How long (real seconds) the slow customer waits for the agent's answer or hand-off before asking again.
SLOW_CUSTOMER_WAIT_SECONDS = 30.0
# Another company's agent on a ReplyOnce deployment of its own (or any auto-responder): it answers every
# email of ours with the marks its provider lets through. One address per conversation.
PEER_DEPLOYMENT = "agent@partner{}.example"
# One Gmail inbox written from in every spelling that reaches it (the checker's ground truth of which
# inbox each spelling is, History.inboxes): case, +tags, dots, googlemail.com.
SPELLINGS = (
    "{local}@gmail.com",
    "{local}+orders@gmail.com",
    "{dotted}@gmail.com",
    "{upper}@GMAIL.COM",
    "{local}+2@googlemail.com",
    "{dotted}+x@gmail.com",
)
# Headers of a stored email that are the mailbox's threading, not marks an agent chose to send.
_THREADING = frozenset({"message-id", "in-reply-to", "references"})
# What a colleague writes from the shared mailbox.
PERSON_ANSWER = "<p>Thanks, I have sorted this out for you. — Sam</p>"
# How often the customer answers the colleague: higher than follow_up_probability, so a short run
# plays the hold (a customer message after a person's, skipped ``person_hold``).
PERSON_FOLLOW_UP_PROBABILITY = 0.5
# A colleague answering later does so this long (at most) after the agent's first reply on the thread.
PERSON_LATER_SECONDS = 2.0

# Knobs that are the hostile mail of issue 12 (as opposed to the volume settings around them).
HOSTILE_KNOBS = (
    "slow_send_probability",
    "date_skew_probability",
    "webhook_headers",
    "disguised_automaton_probability",
    "agent_mail_probability",
    "teammate_probability",
    "provider_error_probability",
    "nonce_drafter",
    "reply_to_probability",
    "long_thread_probability",
    "redrive_threads",
    # Nylas as its documentation describes it (issue 19): the emulator's opt-in modes.
    "provider_error_sent_probability",
    "send_queue_probability",
    "send_failed_fraction",
    "metadata_search_lag_seconds",
    "search_failure_probability",
    "listing_by_date",
    "junk_probability",
    "refuse_custom_headers",
    "account_limit_probability",
    "account_limit_within_key_hour_fraction",
    "two_agents_probability",
    "bare_error_types",
    # People and groups in a shared mailbox: a colleague's answer, one email through a group.
    "person_answers_probability",
    "cc_chain_probability",
    "group_delivery_probability",
    "group_relay_probability",
    # What people write and the robots between deployments (issue 31).
    "written_reply_probability",
    "peer_deployment_probability",
    "spelled_mailbox_probability",
    "large_reply_probability",
    "oversize_reply_probability",
    "drop_headers_window_probability",
    # The hostile mail of issue 40 (the rule of evidence, hand-offs, newcomers, robot speed, aliases).
    "forged_own_address_probability",
    "forged_list_probability",
    "genuine_group_post_probability",
    "relay_verification_probability",
    "colleague_forward_probability",
    "slow_customer_threads",
    "person_draft_probability",
    "stranger_joins_probability",
    "preempted_message_id_probability",
    "alias_sent_from",
    "drafts_without_date",
)
# The account limits a window plays, and the shapes of each (devstack/nylas/limits.py). The quota's
# ``rate_limit`` shape is left out: it is a 429 with a day's Retry-After, which the product rightly
# honours as a rate limit (capped at retry_max_seconds), so it only makes a run wait.
ACCOUNT_LIMIT_SHAPES = {
    "daily_quota": ("429", "403"),
    "monthly_quota": ("429", "403"),
    "sending_paused": ("403", "forbidden", "400"),
}
# The Agent Account queue's automatic release: Nylas sends a queued message "usually within seconds".
QUEUE_RELEASE_SECONDS = 2.0


@dataclass
class WorkloadSettings:
    notifications: int = 300
    burst_probability: float = 0.25
    truncated_probability: float = 0.08
    updated_probability: float = 0.15  # a message.updated, delivered before the message.created
    automated_probability: float = 0.04  # no-reply / mailer-daemon: the address says it
    other_grant_probability: float = 0.03
    follow_up_probability: float = 0.2
    bot_threads: int = 2
    # A bot (or two agents) answering each other stops after this many messages per thread, so a
    # broken loop guard shows as a violation instead of a run that never ends.
    max_loop_messages: int = 8
    # Not hostility but the drafter's latency: each draft takes 20-100 % of this many seconds, as a
    # language model's does (0: instant, the template). It widens the moment between a holder's
    # thread read and the store of its send intent; off by default, on for the mutant whose break
    # needs a second holder in that moment (chaos/mutants.py, no_ledger_owner_check).
    draft_seconds: float = 0.0
    max_copies: int = 3
    concurrent_probability: float = 0.3
    forged_probability: float = 0.02
    max_pending_deliveries: int = 40
    max_queue_depth: int = 150
    # ---- hostile mail (issue 12), each on by default --------------------------------------------
    # A send takes 0.3-1.5 s, and half of the slow ones see the customer write again meanwhile.
    slow_send_probability: float = 0.15
    # Sender dates off by seconds to hours, both ways (the sender's clock, not the mailbox's).
    date_skew_probability: float = 0.2
    max_date_skew_seconds: float = 4 * 3600
    # Nylas puts headers in webhook payloads only with dashboard field customization: off.
    webhook_headers: bool = False
    # Out-of-office, newsletter and list mail from human-looking addresses (headers only).
    disguised_automaton_probability: float = 0.05
    # One agent grant writing to another (both in AGENT_GRANT_IDS); threads go to either agent.
    agent_mail_probability: float = 0.03
    # A human teammate sending from the agent's mailbox (fires message.created, like the agent).
    teammate_probability: float = 0.03
    # A provider 5xx on a send, cached under its Idempotency-Key as Nylas does.
    provider_error_probability: float = 0.03
    # The worker's drafter appends a random nonce: no two drafts of one message are equal.
    nonce_drafter: bool = True
    # Reply-To elsewhere: a third party, another agent, or a contact form's no-reply with the customer.
    reply_to_probability: float = 0.06
    # Threads with more messages than one page of the replier's thread read.
    long_thread_probability: float = 0.03
    long_thread_messages: int = 12
    # Threads whose every send answer is lost until the record dead-letters; redriven after the key's hour.
    redrive_threads: int = 1
    # ---- Nylas as its documentation describes it (issue 19), each on by default once held ---------
    # The next agent send is *performed*, then answered 504 provider_error ("Provider request timed
    # out."): https://developer.nylas.com/docs/v3/email/idempotent-send/ -- "Nylas returns a 504 Gateway
    # Timeout however the provider completed the send but was delayed".
    provider_error_sent_probability: float = 0.02
    # Per send, a window of 5-10 s in which the Agent Account queues every send (202, sent
    # QUEUE_RELEASE_SECONDS later, message.delivered or message.send_failed delivered to the webhook):
    # https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/ (a deployment
    # sending faster than 5/s). Each run plays at least one window.
    send_queue_probability: float = 0.03
    # Fraction of queued sends Nylas fails (message.send_failed; seeded per queued send), same source.
    send_failed_fraction: float = 0.1
    # metadata_pair finds a message only this many seconds (Nylas' clock) after it arrived; kept below
    # the run's mailbox_settle_seconds (4), the product's assumption about the index. Nylas documents
    # no indexing delay either way: https://developer.nylas.com/docs/dev-guide/metadata/.
    metadata_search_lag_seconds: float = 3.0
    # Per send, a window of 1-4 s in which every metadata_pair search answers 400 or 503 (a
    # failing search, same source). Each run plays at least one window.
    search_failure_probability: float = 0.01
    # Thread listings newest *date* first instead of newest arrival: Nylas says only "reverse
    # chronological" (https://developer.nylas.com/docs/reference/api/messages/get-messages/); with
    # skewed sender dates this reorders the thread.
    listing_by_date: bool = True
    # Mail a customer-looking sender wrote that the mailbox filed in junk or trash (the system folders
    # of https://developer.nylas.com/docs/v3/agent-accounts/mailboxes/): never to be answered.
    junk_probability: float = 0.03
    # Every send with a custom header not named X-... is refused 400 (Microsoft Graph requires X-
    # names; Nylas: custom headers are "generally prefixed with X-",
    # https://developer.nylas.com/docs/v3/email/send-email/): the reply must go out without them.
    refuse_custom_headers: bool = True
    # Per send, an account limit (daily or monthly quota, sending paused; a shape of
    # ACCOUNT_LIMIT_SHAPES, devstack/nylas/limits.py, after
    # https://developer.nylas.com/docs/v3/agent-accounts/send-limits/) for 1-3 s; nothing is sent
    # meanwhile. Each run plays at least one window.
    account_limit_probability: float = 0.005
    # The share of windows whose limit clears within the Idempotency-Key's hour (Nylas' clock does not
    # move: a retry meets the refusal cached under the key); the others outlast it (at the window's end
    # Nylas' clock moves 3,720 s ahead). The docs say neither how long a limit lasts: both ways.
    account_limit_within_key_hour_fraction: float = 0.5
    # One customer email addressed to both agent grants: each mailbox gets its own copy (same
    # Message-ID), exactly one of the two must be answered. Nylas documents nothing specific; the
    # emulator does what any mail system does (deliver_inbound(also_to=...)).
    two_agents_probability: float = 0.03
    # Error types in the bare spelling (concurrent_idempotent_request, provider_error) instead of the
    # api.-prefixed one: Nylas' error tables use the prefix, its examples do not
    # (https://developer.nylas.com/docs/api/errors/, the idempotent-send guide).
    bare_error_types: bool = True
    # ---- people and groups in a shared mailbox, each on by default ------------------------------
    # On a customer thread a colleague answers from the mailbox (NylasEmulator.person_replies): half
    # the time right after the customer's message arrives (before or racing its notification), half
    # later, up to PERSON_LATER_SECONDS after the agent's first reply there (a follow-up may land
    # before the colleague's answer). The customer messages it answers are the agent's no more once
    # its read saw the answer (the checker decides from the wire tap); those after it may be
    # answered, need not be (PERSON_HOLD_SECONDS, a week in the run).
    person_answers_probability: float = 0.03
    # One customer email through a group or aliases (addressed_to: no grant's own address in To) to
    # both agent mailboxes: exactly one of the copies must be answered, as for two_agents.
    group_delivery_probability: float = 0.03
    # A Google-Group-style relay (From the group, List-Id and Precedence: list, the customer in
    # Reply-To and X-Original-From): from the run's trusted list (TRUSTED_LISTS) it must be answered,
    # to the customer only; from another list (half of them) never.
    group_relay_probability: float = 0.03
    # A customer writes with a colleague in Cc, and the colleague answers all at once (before the
    # replier reads the thread): both are to be answered by one reply that reaches both of them.
    cc_chain_probability: float = 0.03
    # ---- what people write, robots between deployments, replies of any size (issue 31) ------------
    # The agent says back what it read as each message's text, and attaches the image a customer asks
    # for (chaos/mutants.py, echo_agent): the checker holds the product to the customer's words.
    echo_drafter: bool = True
    # Of the customers' follow-ups, the share written as people write (chaos/written.py): bottom-
    # posted, interleaved, attribution lines and Outlook blocks in eleven languages, forwards.
    written_reply_probability: float = 0.4
    # Another company's agent writes to the mailbox and answers each of our emails on its own, with the
    # marks its provider lets through (the X- ones of ours when it drops the rest); for
    # peer_marks_lost_fraction of them the provider (or a relay) drops every custom header, so only
    # the exchange limit (max_automatic_exchanges) ends the conversation.
    peer_deployment_probability: float = 0.02
    peer_marks_lost_fraction: float = 0.5
    # One Gmail inbox writes from each spelling of SPELLINGS, one thread each: one recipient budget
    # (chaos/run.py's REPLY_BUDGET_PER_RECIPIENT_PER_HOUR, below len(SPELLINGS)).
    spelled_mailbox_probability: float = 0.005
    # A customer asks for the logo (a ~440 KB reply: goes out once) or the brochure (over the 3 MB
    # Nylas takes: handed off, reply_too_large, never sent). Needs echo_drafter.
    large_reply_probability: float = 0.01
    oversize_reply_probability: float = 0.003
    # Per send, a window of 5-10 s in which the provider drops custom headers not named X-... instead
    # of refusing them (Microsoft Graph; the emulator's custom_headers="drop"). Each run plays one.
    drop_headers_window_probability: float = 0.01
    # ---- issue 40: whom a reply may go to, and no silent no for a person, each on by default ------
    # Mail forged from the agent's own address (NylasEmulator.deliver_forged_own), In-Reply-To a
    # customer's question, filed in the inbox or junk in turn: no person's answer, the customer must
    # still be answered.
    forged_own_address_probability: float = 0.02
    # Direct mail from a customer carrying the trusted list's List-Id and X-Original-From a stranger:
    # only the sender may receive a reply.
    forged_list_probability: float = 0.02
    # A genuine post to the trusted group from a domain without DMARC rewriting: it keeps its own From
    # (the group in To): answered to From.
    genuine_group_post_probability: float = 0.02
    # Relays of the trusted list (From the group): with the receiving provider's topmost
    # Authentication-Results dmarc=pass (answered to the person in X-Original-From), or fail, none,
    # or a forged "pass" below a topmost fail (handed off relay_unverified, never mailed).
    relay_verification_probability: float = 0.04
    # A colleague forwards a customer's question to the warehouse, or writes an internal note, from the
    # mailbox before the agent reads: neither answers the customer (answered or handed off).
    colleague_forward_probability: float = 0.02
    # Customers who ask five times over five days on one thread (Nylas' clock moves a day between):
    # every question answered or handed off, none silent; no robot speed, so no exchange limit.
    slow_customer_threads: int = 1
    # A colleague starts a draft on a customer's question and leaves it open (person_drafts): the
    # agent waits, then hands off, never dead-letters.
    person_draft_probability: float = 0.02
    # A stranger writes into a customer's thread: each answered alone, at their own address.
    stranger_joins_probability: float = 0.02
    # An attacker's email to the second agent under a customer's Message-ID, just before the
    # customer's to the first: the customer must still be answered.
    preempted_message_id_probability: float = 0.02
    # The second agent grant has an alias its sent copies show (modes.sent_from_by_grant) and its
    # people write from: our reply is ours whatever its From, nothing answered twice.
    alias_sent_from: bool = True
    # Drafts without a date (modes.draft_date off: the API's draft schema has none).
    drafts_without_date: bool = True
    # Issue 42, many grants (chaos/grants.py): this many registered grants beside the run's two (0: none),
    # taking ``grant_share`` of the conversations, ``flood_share`` of those to one grant (the flood).
    grant_fleet: int = 0
    grant_share: float = 0.6
    flood_share: float = 0.3

    def agent_grant_ids(self) -> list[str]:
        """The deployment's agent grants: two when agents exchange mail or share an email, else one."""
        two = (
            self.agent_mail_probability
            or self.two_agents_probability
            or self.group_delivery_probability
            or self.preempted_message_id_probability
            or self.alias_sent_from
        )
        return list(AGENT_GRANTS) if two else [AGENT_GRANT_ID]

    def gentle(self, keep: frozenset[str] = frozenset()) -> "WorkloadSettings":
        """These settings with every hostile knob off except those in ``keep``."""
        off = {
            f.name: (False if isinstance(getattr(self, f.name), bool) else 0)
            for f in fields(self)
            if f.name in HOSTILE_KNOBS and f.name not in keep and f.name != "webhook_headers"
        }
        if "webhook_headers" not in keep:
            off["webhook_headers"] = True  # gentle: headers handed to the product in the payload
        return replace(self, **off)


class SendQueueSwitch:
    """Nylas' send queue (``modes.send_queue``), on while anyone holds it.

    Why: the workload's send-queue windows and the failover drill's held send (``chaos/failover.py``)
    each switch the queue on for their own reasons, and each used to set the mode back as it wished
    when done: a window closing while the drill held its send switched the queue off under it.
    """

    def __init__(self, modes: Any) -> None:
        self._modes = modes
        self._lock = threading.Lock()
        self._holders: Counter[str] = Counter()

    def hold(self, holder: str) -> None:
        with self._lock:
            self._holders[holder] += 1
            self._modes.send_queue = True

    def let_go(self, holder: str) -> None:
        with self._lock:
            self._holders[holder] -= 1
            if self._holders[holder] <= 0:
                del self._holders[holder]
            self._modes.send_queue = bool(self._holders)


@dataclass
class Workload:
    """Generates conversations in the emulator and delivers their notifications through the webhook."""

    settings: WorkloadSettings
    nylas: NylasEmulator
    sender: WebhookSender
    rng: random.Random
    features: Counter[str] = field(default_factory=Counter)
    notifications: dict[str, dict[str, Any]] = field(default_factory=dict)
    forged_ids: set[str] = field(default_factory=set)
    truth: dict[str, Truth] = field(default_factory=dict)  # inbound message id -> why it exists
    harness_sent_ids: set[str] = field(default_factory=set)  # teammate sends (not the agent's)
    # Colleagues' answers from the mailbox (person_replies): never sends, so not in harness_sent_ids
    # (the report counts replies as sends minus those); the checker knows them from the mailbox.
    person_reply_ids: set[str] = field(default_factory=set)
    redrive_message_ids: set[str] = field(default_factory=set)  # their sends lose every answer
    # Ground truth of mailboxes: each spelling the workload wrote from -> the inbox it reaches (lower
    # case); a spelling not in it is its own inbox.
    inboxes: dict[str, str] = field(default_factory=dict)
    unsupported: set[str] = field(default_factory=set)  # knobs this emulator cannot play
    queue_depth: Any = lambda: 0  # visible + in flight on the notification queue
    # Moves Nylas' clock ahead (the experiment's, so the checker knows when): the end of a long limit.
    advance_clock: Any = None
    # Ground truth of the grants' aliases (History.aliases): grant -> the addresses besides its own.
    aliases: dict[str, list[str]] = field(default_factory=dict)
    # Issue 42: the fleet of registered grants and their lives (chaos.grants.GrantFleet), or None.
    fleet: Any = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=12, thread_name_prefix="nylas-deliveries")
        self._pending: list[Future] = []
        self._bot_threads: set[str] = set()
        self._customer_threads: dict[str, tuple[str, str]] = {}  # thread -> (grant, customer address)
        # Threads a person (a teammate) wrote in from the mailbox: the agent stays out of them for
        # PERSON_HOLD_SECONDS, longer than any run, so a customer there may be answered, need not be.
        self._person_threads: set[str] = set()
        # Customer threads a colleague answers once the agent has replied there: thread -> (grant,
        # the customer message the colleague answers).
        self._person_later: dict[str, tuple[str, dict[str, Any]]] = {}
        self._message_threads: dict[str, str] = {}
        # (grant, thread, other grant) -> the other grant's thread for the same conversation.
        self._linked_threads: dict[tuple[str, str, str], str] = {}
        self._loop_messages: Counter[str] = Counter()  # agent emails per thread
        # Threads a peer deployment writes in: thread -> (its address, whether its marks are lost).
        self._peer_threads: dict[str, tuple[str, bool]] = {}
        self._sequence = 0
        self._open_windows: set[str] = set()  # Nylas behaviours switched on for a while right now
        self.send_queue = SendQueueSwitch(self.nylas.modes)
        self._sends_started = 0
        if self.advance_clock is None:
            self.advance_clock = self.nylas.advance_clock
        # Messages the emulator announces while this thread delivers one email to several mailboxes.
        self._copies = threading.local()
        # Set while this thread has a colleague write from the mailbox: its message.created is theirs.
        self._person = threading.local()
        inbound = inspect.signature(self.nylas.deliver_inbound).parameters
        self._inbound_accepts = set(inbound)
        s = self.settings
        if "reply_to" not in inbound and s.reply_to_probability:
            self.unsupported.add("reply_to_probability")
        if not hasattr(self.nylas, "on_send_started") and s.slow_send_probability:
            self.unsupported.add("slow_send_probability")
        if s.provider_error_probability and not hasattr(_fault_class(), "provider_error"):
            self.unsupported.add("provider_error_probability")
        if s.person_answers_probability and not hasattr(self.nylas, "person_replies"):
            self.unsupported.add("person_answers_probability")
        for knob in ("group_delivery_probability", "group_relay_probability"):
            if getattr(s, knob) and "addressed_to" not in inbound:
                self.unsupported.add(knob)
        for knob in ("genuine_group_post_probability", "relay_verification_probability"):
            if getattr(s, knob) and not {"addressed_to", "authentication_results"} <= set(inbound):
                self.unsupported.add(knob)
        if not s.echo_drafter:
            # Without the agent saying back what it read, nobody asks for an image either.
            needs_echo = ["written_reply_probability", "large_reply_probability"]
            needs_echo.append("oversize_reply_probability")
            self.unsupported.update(knob for knob in needs_echo if getattr(s, knob))
        if not s.webhook_headers and not hasattr(self.nylas, "webhook_includes_headers"):
            self.unsupported.add("webhook_headers")  # this emulator always sends them
        if hasattr(self.nylas, "webhook_includes_headers"):
            self.nylas.webhook_includes_headers = s.webhook_headers
        self.nylas.on_send_started = self._on_send_started
        self._documented_modes()

    def _documented_modes(self) -> None:
        """The emulator's opt-in modes (devstack/nylas/modes.py) that last the whole run, and the send
        queue's release policy (its windows open in :meth:`play`)."""
        s, modes = self.settings, self.nylas.modes
        modes.update(
            {
                "listing_order": "date" if s.listing_by_date else "arrival",
                "custom_headers": "refuse" if s.refuse_custom_headers else "accept",
                "error_spelling": "bare" if s.bare_error_types else "api",
                "metadata_search_lag_seconds": s.metadata_search_lag_seconds,
                "queue_release_after_seconds": QUEUE_RELEASE_SECONDS,
                "queue_fail_fraction": s.send_failed_fraction,
                "queue_seed": self.rng.randrange(2**31),
                "draft_date": not s.drafts_without_date,
            }
        )
        if s.alias_sent_from and SECOND_AGENT_GRANT_ID in s.agent_grant_ids():
            # The second agent's sent copies show its alias; Nylas lists the alias with the grant.
            self.nylas.set_aliases(SECOND_AGENT_GRANT_ID, [SECOND_AGENT_ALIAS])
            modes.sent_from_by_grant = {SECOND_AGENT_GRANT_ID: SECOND_AGENT_ALIAS}
            self.aliases[SECOND_AGENT_GRANT_ID] = [SECOND_AGENT_ALIAS]
            self.features["alias_sent_from"] += 1
        # message.delivered and message.send_failed reach the webhook, as for a subscribed webhook.
        self.nylas.on_notification = self.on_notification

    # ---- deliveries ----------------------------------------------------------------------------

    def _random(self) -> float:
        with self._lock:
            return self.rng.random()

    def _randint(self, low: int, high: int) -> int:
        with self._lock:
            return self.rng.randint(low, high)

    def _choice(self, options: list[Any]) -> Any:
        with self._lock:
            return self.rng.choice(options)

    def deliver(self, payload: dict[str, Any], copies: int | None = None) -> None:
        """Queue one notification for delivery: 1-3 copies (or ``copies``), sometimes at once,
        sometimes forged too."""
        with self._lock:
            self.notifications[payload["id"]] = payload
        if copies is None:
            copies = self._randint(1, self.settings.max_copies)
        concurrent = copies > 1 and self._random() < self.settings.concurrent_probability
        if copies > 1:
            self.features["duplicate_delivery"] += copies - 1
        if concurrent:
            self.features["concurrent_delivery"] += 1
        self._submit(self.sender.deliver_many, payload, copies=copies, concurrent=concurrent)
        if self._random() < self.settings.forged_probability:
            forged = {**payload, "id": f"forged-{payload['id']}"}
            with self._lock:
                self.forged_ids.add(forged["id"])
            self.features["forged"] += 1
            self._submit(self.sender.deliver, forged, forged=True)

    def _submit(self, function: Any, *args: Any, **kwargs: Any) -> None:
        future = self._pool.submit(function, *args, **kwargs)
        with self._lock:
            self._pending.append(future)

    def _backpressure(self) -> None:
        """Nylas spreads deliveries over time: keep the backlog (deliveries and queue) bounded, so a
        long run measures the pipeline rather than moto scanning a queue of thousands."""
        while (
            self.pending() > self.settings.max_pending_deliveries
            or self.queue_depth() > self.settings.max_queue_depth
        ):
            time.sleep(0.1)

    def new_customers(self, count: int) -> list[dict[str, Any]]:
        """``count`` customers writing for the first time, one message each, in the mailbox and owed an
        answer (the ground truth knows them); their notifications are returned, not delivered: the
        caller delivers them its own way."""
        grants = self.settings.agent_grant_ids()
        payloads = []
        for index in range(count):
            grant, address = grants[index % len(grants)], f"newcomer{uuid.uuid4().hex[:6]}@example.com"
            message = self._inbound(grant, address, label="customer")
            self._customer_threads[message["thread_id"]] = (grant, address)
            payload = envelope(message)
            with self._lock:
                self.notifications[payload["id"]] = payload
            payloads.append(payload)
        return payloads

    def pending(self) -> int:
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]
            return len(self._pending)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

    # ---- what Nylas and the people on the other side do on their own -----------------------------

    def on_message_created(self, message: dict[str, Any]) -> None:
        """Emulator callback: sends fire message.created; a bot answers; customers follow up; mail
        from one agent to another lands in the other's inbox."""
        copies = getattr(self._copies, "messages", None)
        if copies is not None:
            copies.append(message)
        if getattr(self._person, "writing", False):
            self._from_a_person(message)
            return
        fleet = self.fleet.all_addresses() if self.fleet is not None else {}
        if message["grant_id"] in fleet and "sent" not in message.get("folders", []):
            self.fleet.on_inbound_created(message)
            return
        if message["grant_id"] not in {**AGENT_GRANTS, **fleet} or "sent" not in message.get("folders", []):
            return
        self.features["own_outbound"] += 1
        self.deliver(envelope(message))
        if message["id"] in self.harness_sent_ids:
            return
        recipients = {
            str(p.get("email", "")).lower()
            for key in ("to", "cc", "bcc")
            for p in message.get(key) or []
            if isinstance(p, dict)
        }
        with self._lock:
            self._loop_messages[message["thread_id"]] += 1
            looping = self._loop_messages[message["thread_id"]] <= self.settings.max_loop_messages
        for grant, address in AGENT_GRANTS.items():
            if looping and address in recipients and grant != message["grant_id"]:
                # An agent mailed another agent: the mail arrives (in the thread linked to the
                # sender's), and must not be answered.
                self.features["agent_to_agent_delivered"] += 1
                source = (message["grant_id"], message["thread_id"])
                self._submit(self._relay, grant, message, source)
        thread_id = message["thread_id"]
        with self._lock:
            later = self._person_later.pop(thread_id, None)
        if later is not None:
            # The replier has handled the customer: the colleague, not knowing, answers too (a
            # follow-up the agent's reply starts below may land before or after that answer).
            self.features["person_answers_after_agent"] += 1
            self._submit(self._person_answers, *later, PERSON_LATER_SECONDS * self._random())
        peer = self._peer_threads.get(thread_id)
        if peer is not None and looping:
            self.features["peer_deployment_answer"] += 1
            self._submit(self._peer_answers, message, *peer)
        elif thread_id in self._bot_threads and looping:
            self.features["bot_loop"] += 1
            self._submit(self._answer, message["grant_id"], thread_id, BOT_EMAIL, message, "bot")
        elif thread_id in self._customer_threads and self._random() < self.settings.follow_up_probability:
            self.features["follow_up"] += 1
            _, customer = self._customer_threads[thread_id]
            self._submit(self._answer, message["grant_id"], thread_id, customer, message, "follow_up")

    def on_notification(self, trigger: str, data: dict[str, Any]) -> None:
        """Emulator callback for the send queue's outcomes: delivered to the webhook like any other
        notification (copies, forgeries and all); other triggers are not subscribed to."""
        if trigger not in ("message.delivered", "message.send_failed") and not trigger.startswith("grant."):
            return
        self.features[trigger.replace(".", "_")] += 1
        self.deliver(notification_envelope(trigger, data))

    def _on_send_started(self, grant_id: str, payload: dict[str, Any]) -> None:
        """Emulator hook, on the send's request thread with the key reserved: a window of a Nylas
        behaviour may open (this send is the first under it), the send may be slow, and the
        customer may write again while it is in flight."""
        self._open_windows_at_send()
        if self._random() >= self.settings.slow_send_probability:
            return
        self.features["slow_send"] += 1
        time.sleep(0.3 + 1.2 * self._random())
        thread_id = self._message_threads.get(str(payload.get("reply_to_message_id")))
        if thread_id in self._customer_threads and self._random() < 0.5:
            self.features["message_during_send"] += 1
            grant, customer = self._customer_threads[thread_id]
            message = self._inbound(grant, customer, thread_id=thread_id, label="during_send")
            self._deliver_new(message)

    def _answer(self, grant: str, thread_id: str, sender: str, reply: dict[str, Any], label: str) -> None:
        written = None
        playable = self._playable("written_reply_probability")
        # The first follow-up is written so (each kind once early), then at the knob's rate.
        if (
            label == "follow_up"
            and playable
            and (not self.features["written_reply"] or self._random() < playable)
        ):
            shape, language = self._choice(list(SHAPES)), self._choice(sorted(ATTRIBUTIONS))
            with self._lock:
                self._sequence += 1
                tag = str(self._sequence)
            agent = AGENT_GRANTS.get(grant, AGENT_EMAIL)
            written = written_reply(shape, language, tag, agent, str(reply.get("subject") or ""))
            self.features["written_reply"] += 1
            self.features[f"written_{shape}"] += 1
        answer = self._inbound(
            grant,
            sender,
            thread_id=thread_id,
            label=label,
            subject=reply["subject"],
            body=written.body if written else None,
        )
        if written is not None:
            with self._lock:
                truth = self.truth[answer["id"]]
                self.truth[answer["id"]] = replace(truth, words=written.words, quoted=written.quoted)
        self._deliver_new(answer)

    def _deliver_new(self, message: dict[str, Any]) -> None:
        """A new message's ``message.created``, unless Nylas holds it (a fleet grant expired or deleted)."""
        fleet = self.fleet.all_addresses() if self.fleet is not None else {}
        if message["grant_id"] in fleet and self.nylas.grant_state(message["grant_id"]) != "valid":
            self.features["fleet_held"] += 1
            return
        self.deliver(envelope(message))

    def _peer_answers(self, sent: dict[str, Any], peer: str, marks_lost: bool) -> None:
        """The peer deployment answers our email as ReplyOnce would: with the marks that reached it
        (those of our email its provider let through), or none when they are lost on the way.

        Ground truth: a marked answer is a machine's, never answered; an unmarked one looks like a
        person's, may be answered, and the exchange limit must end the conversation.
        """
        stored = [
            m
            for m in self.nylas.sent_messages(grant_id=sent["grant_id"], thread_id=sent["thread_id"])
            if m["id"] == sent["id"]
        ]
        headers = {h["name"]: h["value"] for m in stored for h in m.get("headers") or []}
        marks = None if marks_lost else {k: v for k, v in headers.items() if k.lower() not in _THREADING}
        answer = self._inbound(
            sent["grant_id"],
            peer,
            thread_id=sent["thread_id"],
            label="peer_unmarked" if not marks else "peer_marked",
            subject=sent["subject"],
            headers=marks or None,
        )
        self.features["peer_marks_lost" if not marks else "peer_marks_kept"] += 1
        self._notify(answer)

    def _relay(self, grant: str, sent: dict[str, Any], source: tuple[str, str]) -> None:
        """Deliver an agent's email to another agent's mailbox with the headers it was sent with."""
        stored = [
            m
            for m in self.nylas.sent_messages(grant_id=sent["grant_id"], thread_id=sent["thread_id"])
            if m["id"] == sent["id"]
        ]
        headers = {h["name"]: h["value"] for m in stored for h in m.get("headers") or []}
        self._agent_mail(grant, AGENT_GRANTS[sent["grant_id"]], sent["subject"], source, headers or None)

    def _agent_mail(
        self,
        grant: str,
        from_agent: str,
        subject: str,
        source: tuple[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Mail from another agent's address lands in ``grant``'s mailbox, in the thread linked to
        the one it came from (as References would thread it), so a loop stays on one thread pair."""
        with self._lock:
            linked = self._linked_threads.get((*source, grant)) if source else None
        message = self._inbound(
            grant, from_agent, label="agent_mail", subject=subject, thread_id=linked, headers=headers
        )
        if source is not None:
            with self._lock:
                self._linked_threads[(*source, grant)] = message["thread_id"]
                self._linked_threads[(grant, message["thread_id"], source[0])] = source[1]
        self._notify(message)

    # ---- messages ------------------------------------------------------------------------------

    def _date(self) -> float | None:
        if self._random() >= self.settings.date_skew_probability:
            return None
        self.features["skewed_date"] += 1
        skew = self.settings.max_date_skew_seconds * self._random() ** 2  # mostly seconds to minutes
        sign = 1 if self._random() < 0.5 else -1
        return self.nylas.now() + sign * max(1.0, skew)

    def _inbound(
        self,
        grant: str,
        sender: str,
        *,
        label: str,
        thread_id: str | None = None,
        headers: dict[str, str] | None = None,
        reply_to: str | None = None,
        subject: str | None = None,
        folder: str = "inbox",
        body: str | None = None,
        more: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            self._sequence += 1
            sequence = self._sequence
        extra: dict[str, Any] = dict(more or {})
        if reply_to is not None and "reply_to" in self._inbound_accepts:
            extra["reply_to"] = [{"name": "", "email": reply_to}]
        if "from_name" in self._inbound_accepts and label in ("customer", "follow_up", "out_of_office"):
            extra["from_name"] = sender.split("@")[0].replace(".", " ").title()
        message = self.nylas.deliver_inbound(
            grant,
            from_email=sender,
            subject=subject or f"Question {sequence}",
            body=body or f"<p>Message {sequence}</p>",
            thread_id=thread_id,
            headers=headers,
            date=self._date(),
            folder=folder,
            **extra,
        )
        truth = _truth(label, sender, reply_to)
        if message["thread_id"] in self._person_threads and truth.must_answer:
            # After a person's answer the agent holds off: answered or handed off (person_hold).
            truth = replace(truth, label=f"{truth.label}_after_person", must_answer=False)
        self.truth[message["id"]] = truth
        self._message_threads[message["id"]] = message["thread_id"]
        return message

    def _to_both_agents(
        self,
        grant: str,
        sender: str,
        addressed_to: tuple[str, ...] | None = None,
        label: str = "to_both_agents",
    ) -> list[dict[str, Any]]:
        """One customer email to both agent grants: a copy in each mailbox (each its own id, thread
        and message.created, the same Message-ID). Ground truth: one of them is answered.

        Parameters
        ----------
        grant, sender : str
            The first mailbox, and the customer who wrote.
        addressed_to : tuple of str or None
            The email's ``To`` when a group or aliases delivered it (no grant's own address in it);
            ``None``: both agents' addresses, as a customer writing to both.
        label : str
            Ground truth's label of the copies.
        """
        other = next(g for g in AGENT_GRANTS if g != grant)
        with self._lock:
            self._sequence += 1
            sequence = self._sequence
        extra: dict[str, Any] = {} if addressed_to is None else {"addressed_to": list(addressed_to)}
        self._copies.messages = []
        try:
            first = self.nylas.deliver_inbound(
                grant,
                from_email=sender,
                subject=f"Question {sequence}" + (" to both of you" if addressed_to is None else ""),
                body=f"<p>Message {sequence}</p>",
                date=self._date(),
                also_to=[other],
                **extra,
            )
            announced = self._copies.messages
        finally:
            self._copies.messages = None
        copies = [first, *(m for m in announced if m["id"] != first["id"] and m["grant_id"] == other)]
        email = next(h["value"] for h in first["headers"] if h["name"].lower() == "message-id")
        for message in copies:
            self.truth[message["id"]] = Truth.one_of(label, email, sender)
            self._message_threads[message["id"]] = message["thread_id"]
            self._customer_threads[message["thread_id"]] = (message["grant_id"], sender)
        return copies

    def _cc_chain(self, grant: str, customer: str) -> list[dict[str, Any]]:
        """A customer writes with a colleague in Cc; the colleague answers all before the replier reads.

        Ground truth: both messages must be answered, each at its own sender's address (one reply
        reaching both is what the product sends; one reply to the colleague alone leaves the
        customer's message unanswered, which the checker sees by the email's recipients).
        """
        colleague = customer.replace("customer", "colleague", 1)
        mailbox = self.agent_grants()[grant]
        # The colleague is named on the customer's message (a participant of the thread from its start),
        # and answers all: the customer is named on theirs.
        first = self._inbound(
            grant, customer, label="cc_customer", more={"addressed_to": [mailbox, colleague]}
        )
        second = self._inbound(
            grant,
            colleague,
            label="cc_colleague",
            thread_id=first["thread_id"],
            subject=f"Re: {first['subject']}",
            more={"addressed_to": [mailbox, customer]},
        )
        self.truth[first["id"]] = Truth.human("cc_customer", customer)
        self.truth[second["id"]] = Truth.human("cc_colleague", colleague)
        self._customer_threads[first["thread_id"]] = (grant, customer)
        return [first, second]

    def _group_relay(
        self,
        grant: str,
        customer: str,
        *,
        trusted: bool,
        verified: bool = True,
        variant: int = 0,
    ) -> dict[str, Any]:
        """A customer's email relayed by a Google-Group-style list: From rewritten to the group, its
        ``List-Id`` and ``Precedence: list``, the customer in ``Reply-To`` and ``X-Original-From``.

        Ground truth: from the list the run trusts (``TRUSTED_LISTS``) with the receiving provider's
        topmost ``Authentication-Results`` ``dmarc=pass`` a customer wrote, to be answered at the
        customer's own address only (never the group's: every member would get it); unverified
        (``verified=False``: by ``variant``, ``dmarc=fail``, no result at all, or a forged ``pass``
        below a topmost ``fail``), a person must have it (handed off ``relay_unverified``) and nobody
        is mailed; from any other list, bulk mail, never answered.
        """
        list_id, group = (TRUSTED_LIST_ID, TRUSTED_GROUP) if trusted else (UNTRUSTED_LIST_ID, UNTRUSTED_GROUP)
        name = customer.split("@")[0].replace(".", " ").title()
        with self._lock:
            self._sequence += 1
            sequence = self._sequence
        domain = group.split("@")[1]
        headers = {
            "List-Id": f"<{list_id}>",
            "Precedence": "list",
            "X-Original-From": f"{name} <{customer}>",
        }
        stamped: str | None = authentication_results(dmarc="pass", from_domain=domain)
        if not verified:
            kind = ("dmarc_fail", "no_results", "forged_pass_below")[variant % 3]
            self.features[f"relay_unverified_{kind}"] += 1
            stamped = (
                None if kind == "no_results" else authentication_results(dmarc="fail", from_domain=domain)
            )
            if kind == "forged_pass_below":
                headers["Authentication-Results"] = authentication_results(dmarc="pass", from_domain=domain)
        message = self.nylas.deliver_inbound(
            grant,
            from_email=group,
            from_name=f"{name} via {group.split('@')[0].title()}",
            subject=f"Question {sequence}",
            body=f"<p>Message {sequence}</p>",
            reply_to=[{"name": name, "email": customer}],
            headers=headers,
            date=self._date(),
            # The customer wrote to the group: its address is the To the member mailbox sees.
            addressed_to=[group],
            authentication_results=stamped,
        )
        if not trusted:
            truth = Truth.never("untrusted_list")  # list traffic nobody trusted: bulk, a plain skip
        elif verified:
            truth = Truth.human("group_relay", customer)
        else:
            truth = Truth.hand_off("relay_unverified")
        self.truth[message["id"]] = truth
        self._message_threads[message["id"]] = message["thread_id"]
        if trusted and verified:
            # The agent's reply goes to the customer, who answers it directly: a follow-up.
            self._customer_threads[message["thread_id"]] = (grant, customer)
        return message

    def _person_answers(self, grant: str, message: dict[str, Any], delay: float = 0.0) -> None:
        """A colleague answers ``message`` from the shared mailbox after ``delay`` seconds: every
        customer message of the thread that arrived before the answer is answered."""
        if delay:
            time.sleep(delay)
        with self._lock:
            # Before the answer exists: a message landing after it is never taken for one before it
            # (ground truth ``..._after_person``, checked in _inbound once the message is stored).
            self._person_threads.add(message["thread_id"])
        self._person.writing = True
        try:
            self.nylas.person_replies(grant, message["id"], PERSON_ANSWER)
        finally:
            self._person.writing = False

    def _from_a_person(self, message: dict[str, Any]) -> None:
        """The colleague's answer fired message.created (on the writing thread, inside
        person_replies): notified like any mailbox message, never to be answered, and the customer
        may answer it (a message after the person's: may be answered, need not be)."""
        with self._lock:
            self.person_reply_ids.add(message["id"])
            self.truth[message["id"]] = Truth.never("person", author=OURS)
            self._message_threads[message["id"]] = message["thread_id"]
        self.features["person_reply"] += 1
        self.deliver(envelope(message))
        thread_id = message["thread_id"]
        if thread_id in self._customer_threads and self._random() < PERSON_FOLLOW_UP_PROBABILITY:
            self.features["follow_up_after_person"] += 1
            _, customer = self._customer_threads[thread_id]
            self._submit(self._answer, message["grant_id"], thread_id, customer, message, "follow_up")

    # ---- Nylas behaviours that come and go -----------------------------------------------------

    def _open_windows_at_send(self) -> None:
        """Per send: each windowed behaviour opens at its rate, and each kind at least once early
        (at the 2nd, 4th, 6th and 8th send), so a short run plays every one while replies go out."""
        s = self.settings
        with self._lock:
            self._sends_started += 1
            started = self._sends_started
        windows = [
            (s.send_queue_probability, self._send_queue_window),
            (s.search_failure_probability, self._search_failure_window),
            (s.account_limit_probability, self._account_limit_window),
            (s.drop_headers_window_probability, self._drop_headers_window),
        ]
        for index, (probability, open_window) in enumerate(windows):
            if probability and (started == 2 * (index + 1) or self._random() < probability):
                open_window()

    def _window(self, kind: str, seconds: float, start: Any, end: Any) -> None:
        """Switch a behaviour of the emulator on now and off after ``seconds`` (one window of a kind
        at a time); the closing is a pending delivery, so the run drains only after it."""
        with self._lock:
            if kind in self._open_windows:
                return
            self._open_windows.add(kind)
        self.features[f"{kind}_window"] += 1
        start()

        def close() -> None:
            time.sleep(seconds)
            try:
                end()
            finally:
                with self._lock:
                    self._open_windows.discard(kind)

        self._submit(close)

    def _send_queue_window(self) -> None:
        seconds = 5.0 + 5.0 * self._random()

        def end() -> None:
            # Open past its 5-10 s until the queue has played each outcome the run documents
            # (message.delivered, and message.send_failed when sends fail at all), at most
            # QUEUE_WINDOW_MAX_EXTRA_SECONDS more. Why: how many sends fall in the window is the
            # machine's timing, and the n-th queued send's fate is fixed by its place (seeded), so a
            # window holding one send played one outcome only (a fresh-clone CI run of stop 60).
            wanted = ["message_delivered"] + (
                ["message_send_failed"] if self.settings.send_failed_fraction else []
            )
            deadline = time.monotonic() + QUEUE_WINDOW_MAX_EXTRA_SECONDS
            while time.monotonic() < deadline and not all(self.features[kind] for kind in wanted):
                time.sleep(0.2)
            self.send_queue.let_go("window")

        self._window("send_queue", seconds, lambda: self.send_queue.hold("window"), end)

    def _drop_headers_window(self) -> None:
        modes = self.nylas.modes
        before = modes.custom_headers
        self._window(
            "drop_headers",
            5.0 + 5.0 * self._random(),
            lambda: setattr(modes, "custom_headers", "drop"),
            lambda: setattr(modes, "custom_headers", before),
        )

    def _search_failure_window(self) -> None:
        modes = self.nylas.modes
        status = self._choice([400, 503])
        seconds = 1.0 + 3.0 * self._random()
        self._window(
            "search_failure",
            seconds,
            lambda: setattr(modes, "metadata_search_failure", status),
            lambda: setattr(modes, "metadata_search_failure", None),
        )

    def _account_limit_window(self) -> None:
        modes = self.nylas.modes
        limit = self._choice(sorted(ACCOUNT_LIMIT_SHAPES))
        shape = self._choice(list(ACCOUNT_LIMIT_SHAPES[limit]))
        seconds = 1.0 + 2.0 * self._random()
        within_key_hour = self._random() < self.settings.account_limit_within_key_hour_fraction

        def start() -> None:
            self.features[f"account_limit_{limit}_{shape}"] += 1
            hour = "within_key_hour" if within_key_hour else "past_key_hour"
            self.features[f"account_limit_{hour}"] += 1
            modes.update({"account_limit": limit, "account_limit_shape": shape})

        def end() -> None:
            # Cleared first, then (past the hour) the clock moves: a retry in between meets the
            # refusal cached under the key.
            modes.update({"account_limit": None, "account_limit_shape": None})
            if not within_key_hour:
                self.advance_clock(3600 + 120)

        self._window(
            "account_limit",
            seconds,
            start,
            end,
        )

    def _notify(self, message: dict[str, Any]) -> None:
        truncated = self._random() < self.settings.truncated_probability
        if self._random() < self.settings.updated_probability:
            # Ordering is not guaranteed: the update first, then the creation.
            self.features["out_of_order"] += 1
            self.deliver(envelope(message, notification_type="message.updated"))
        if truncated:
            self.features["truncated"] += 1
        self.deliver(
            envelope(
                message, notification_type="message.created.truncated" if truncated else "message.created"
            )
        )

    def _teammate(self, grant: str) -> None:
        """A person writes from the agent's mailbox (the UI, not the agent): a send we did not make."""
        customer = f"lead{self._randint(1, 10**6)}@example.com"
        response = requests.post(
            # Addressed by the grant's email, so the provider errors meant for the agent's sends
            # (matched on grant ids) never hit the teammate.
            f"{self.nylas.url}/v3/grants/{AGENT_GRANTS[grant]}/messages/send",
            json={"to": [{"email": customer}], "subject": "Following up on your call", "body": "<p>Hi</p>"},
            headers={"Authorization": f"Bearer {self.nylas.api_key}"},
            timeout=10,
        )
        if response.status_code not in (200, 202):
            # Refused (an account-limit window, a full send queue): the person's email never left,
            # so nothing happened in the world; counted, as every played feature is.
            self.features["teammate_send_refused"] += 1
            return
        message = response.json()["data"]
        # Recorded before its message.created can be delivered: on_message_created runs on the send.
        with self._lock:
            self.harness_sent_ids.add(message["id"])
            self.truth[message["id"]] = Truth.never("teammate", author=OURS)
            self._person_threads.add(message["thread_id"])
            self._customer_threads[message["thread_id"]] = (grant, customer)

    def play(self) -> None:
        """Create conversations until the notification target is reached; deliver as they come."""
        s = self.settings
        grants = s.agent_grant_ids()
        for index in range(s.bot_threads):
            opener = self._inbound(grants[index % len(grants)], BOT_EMAIL, label="bot")
            self._bot_threads.add(opener["thread_id"])
            self._notify(opener)
        for _ in range(s.redrive_threads):
            address = f"redrive{uuid.uuid4().hex[:6]}@example.com"
            message = self._inbound(AGENT_GRANT_ID, address, label="customer")
            self.redrive_message_ids.add(message["id"])
            self.features["redrive_after_key_hour"] += 1
            # One copy: the scenario is Nylas unreachable for one reply (duplicates are played
            # everywhere else), and every copy would spend its own receives before the redrive.
            self.deliver(envelope(message), copies=1)
        for _ in range(s.slow_customer_threads):
            self.features["slow_customer"] += 1
            self._submit(self._slow_customer, grants[0], f"slow{uuid.uuid4().hex[:6]}@example.com")
        customer = 0
        knobs = [
            ("junk", s.junk_probability),
            ("two_agents", s.two_agents_probability),
            ("automated", s.automated_probability),
            ("other_grant", s.other_grant_probability),
            ("disguised_automaton", s.disguised_automaton_probability),
            ("agent_mail", s.agent_mail_probability),
            ("teammate", s.teammate_probability),
            ("reply_to", s.reply_to_probability if "reply_to_probability" not in self.unsupported else 0),
            ("long_thread", s.long_thread_probability),
            # People and groups in a shared mailbox (each knob split between its two kinds).
            ("person_answers_first", self._playable("person_answers_probability") / 2),
            ("person_answers_later", self._playable("person_answers_probability") / 2),
            ("group_delivery", self._playable("group_delivery_probability")),
            ("cc_chain", s.cc_chain_probability),
            ("group_relay", self._playable("group_relay_probability") / 2),
            ("untrusted_relay", self._playable("group_relay_probability") / 2),
            # What people write and the robots between deployments (issue 31).
            ("peer_deployment", s.peer_deployment_probability),
            ("spelled_mailbox", s.spelled_mailbox_probability),
            ("large_reply", self._playable("large_reply_probability")),
            ("oversize_reply", self._playable("oversize_reply_probability")),
            # Issue 40: whom a reply may go to, and no silent no for a person.
            ("forged_own_address", s.forged_own_address_probability),
            ("forged_list", s.forged_list_probability),
            ("genuine_group_post", self._playable("genuine_group_post_probability")),
            ("relay_verified", self._playable("relay_verification_probability") / 2),
            ("relay_unverified", self._playable("relay_verification_probability") / 2),
            ("colleague_forward", s.colleague_forward_probability),
            ("person_draft", s.person_draft_probability),
            ("stranger_joins", s.stranger_joins_probability),
            ("preempted_message_id", s.preempted_message_id_probability if len(grants) > 1 else 0.0),
        ]
        provider_error_type = "provider_error" if s.bare_error_types else "api.provider_error"
        # Each kind of conversation once early (its knob on), then at its rate: a short run plays
        # every one (a run of 40 notifications has only a couple of dozen conversations).
        early = [name for name, probability in knobs if probability]
        conversation = 0
        while len(self.notifications) < s.notifications:
            if self.fleet is not None and self._random() < s.grant_share:
                # Issue 42: a customer of one of the fleet's grants (the flood's share to the flood).
                self.fleet.converse()
                self._backpressure()
                continue
            conversation += 1
            if "provider_error_probability" not in self.unsupported and (
                (conversation == 2 and s.provider_error_probability)
                or self._random() < s.provider_error_probability
            ):
                # The next send fails at the provider; Nylas caches that answer under its key.
                self.features["provider_error"] += 1
                status = self._choice([502, 503, 504])
                self.nylas.inject(
                    "POST",
                    r"/grants/grant-[^/]+/messages/send$",
                    _fault_class().provider_error(status=status, error_type=provider_error_type),
                )
            if (conversation == 3 and s.provider_error_sent_probability) or (
                self._random() < s.provider_error_sent_probability
            ):
                # The next send goes out, and is answered 504 all the same (cached under its key).
                self.features["provider_error_sent"] += 1
                self.nylas.inject(
                    "POST",
                    r"/grants/grant-[^/]+/messages/send$",
                    _fault_class().provider_error(status=504, sent=True, error_type=provider_error_type),
                )
            roll, grant = self._random(), self._choice(grants)
            kind = None
            for name, probability in knobs:
                if roll < probability:
                    kind = name
                    break
                roll -= probability
            if 2 <= conversation < 2 + len(early):
                kind = early[conversation - 2]
            if kind is not None:
                self.features[kind] += 1
            if kind == "automated":
                label = self._choice(sorted(PLAIN_AUTOMATA))
                sender, headers = PLAIN_AUTOMATA[label]
                self._notify(self._inbound(grant, sender, label=label, headers=headers or None))
                continue
            if kind == "disguised_automaton":
                label = self._choice(sorted(DISGUISED_AUTOMATA))
                sender, headers = DISGUISED_AUTOMATA[label]
                self._notify(self._inbound(grant, sender, label=label, headers=headers))
                continue
            if kind == "other_grant":
                message = self.nylas.deliver_inbound(
                    HUMAN_GRANT_ID,
                    from_email="friend@example.com",
                    subject="Lunch?",
                    body="<p>Friday?</p>",
                    to_email=HUMAN_EMAIL,
                )
                self.truth[message["id"]] = Truth.never("other_grant")
                self.deliver(envelope(message))
                continue
            if kind == "junk":
                # A customer-looking sender, filed by the mailbox where no reply must come from.
                folder = self._choice(["junk", "trash"])
                sender = f"prospect{self._randint(1, 10**6)}@example.com"
                message = self._inbound(grant, sender, label=folder, folder=folder)
                self.truth[message["id"]] = Truth.never(folder, author="person", filed=folder)
                self._notify(message)
                continue
            if kind in ("two_agents", "group_delivery"):
                customer += 1
                if kind == "two_agents":
                    copies = self._to_both_agents(grant, f"customer{customer}@example.com")
                else:
                    # A group, then aliases, in turn: a run with two plays both addressings.
                    addressed_to = GROUP_ADDRESSINGS[(self.features[kind] - 1) % len(GROUP_ADDRESSINGS)]
                    label = "through_group" if len(addressed_to) == 1 else "through_aliases"
                    copies = self._to_both_agents(
                        grant, f"customer{customer}@example.com", addressed_to=addressed_to, label=label
                    )
                for message in copies:
                    self._notify(message)
                self._backpressure()
                continue
            if kind == "cc_chain":
                customer += 1
                for message in self._cc_chain(grant, f"customer{customer}@example.com"):
                    self._notify(message)
                self._backpressure()
                continue
            if kind in ("group_relay", "untrusted_relay"):
                customer += 1
                trusted = kind == "group_relay"
                self._notify(self._group_relay(grant, f"customer{customer}@example.com", trusted=trusted))
                self._backpressure()
                continue
            if kind in ISSUE_40_CONVERSATIONS:
                customer += 1
                getattr(self, f"_{kind}")(grant, f"customer{customer}@example.com")
                self._backpressure()
                continue
            if kind == "peer_deployment":
                customer += 1
                peer = PEER_DEPLOYMENT.format(customer)
                # The first peer loses its marks (the case only the exchange limit ends), then at the rate.
                marks_lost = self.features[kind] == 1 or self._random() < s.peer_marks_lost_fraction
                opener = self._inbound(grant, peer, label="peer_agent", subject="A question from our agent")
                with self._lock:
                    self._peer_threads[opener["thread_id"]] = (peer, marks_lost)
                self._notify(opener)
                self._backpressure()
                continue
            if kind == "spelled_mailbox":
                customer += 1
                local = f"victim{customer}"
                inbox = f"{local}@gmail.com"
                spellings = [
                    spelling.format(local=local, dotted=f"{local[0]}.{local[1:]}", upper=local.upper())
                    for spelling in SPELLINGS
                ]
                for spelling in spellings:
                    with self._lock:
                        self.inboxes[spelling.lower()] = inbox
                    message = self._inbound(grant, spelling, label="spelled_mailbox")
                    self._customer_threads[message["thread_id"]] = (grant, spelling)
                    self._notify(message)
                self._backpressure()
                continue
            if kind in ("large_reply", "oversize_reply"):
                customer += 1
                address = f"customer{customer}@example.com"
                request = LOGO_REQUEST if kind == "large_reply" else BROCHURE_REQUEST
                message = self._inbound(grant, address, label=kind, body=f"<p>Hello. {request}</p>")
                if kind == "large_reply":
                    self._customer_threads[message["thread_id"]] = (grant, address)
                self._notify(message)
                self._backpressure()
                continue
            if kind == "agent_mail":
                other = next(g for g in AGENT_GRANTS if g != grant)
                self._agent_mail(grant, AGENT_GRANTS[other], "Handing this over")
                continue
            if kind == "teammate":
                self._teammate(grant)
                continue
            customer += 1
            address = f"customer{customer}@example.com"
            reply_to = None
            label = "customer"
            sender = address
            if kind == "reply_to":
                label = self._choice(["reply_to_third_party", "reply_to_agent", "contact_form"])
                if label == "reply_to_third_party":
                    reply_to = f"stranger{customer}@elsewhere.example"
                elif label == "reply_to_agent":
                    reply_to = AGENT_GRANTS[self._choice(sorted(AGENT_GRANTS))]
                else:
                    sender, reply_to = "no-reply@forms.example.com", address
            if kind == "long_thread":
                # History the agent was never notified of: more messages than one page of a read.
                first = self._inbound(grant, address, label="customer")
                for _ in range(s.long_thread_messages - 1):
                    self._inbound(grant, address, label="customer", thread_id=first["thread_id"])
                messages = [self._inbound(grant, address, label="customer", thread_id=first["thread_id"])]
            else:
                first = self._inbound(grant, sender, label=label, reply_to=reply_to)
                messages = [first]
                if self._random() < s.burst_probability:
                    self.features["burst"] += 1
                    messages += [
                        self._inbound(
                            grant, sender, label=label, reply_to=reply_to, thread_id=first["thread_id"]
                        )
                        for _ in range(self._randint(1, 4))
                    ]
            self._customer_threads[first["thread_id"]] = (grant, address)
            person_first = kind == "person_answers_first"
            racing = person_first and self._random() < 0.5
            if person_first and not racing:
                # The colleague was quicker than the webhook: answered before any notification.
                self._person_answers(grant, messages[-1])
            for message in messages:
                self._notify(message)
            if racing:
                # Racing the notifications' delivery (and the replier's read that follows).
                self.features["person_answers_racing"] += 1
                self._submit(self._person_answers, grant, messages[-1])
            elif kind == "person_answers_later":
                with self._lock:
                    self._person_later[first["thread_id"]] = (grant, messages[-1])
            self._backpressure()

    # ---- issue 40: the rule of evidence, hand-offs, newcomers --------------------------------------

    def _question(
        self, grant: str, customer: str, truth: Truth | None = None, **options: Any
    ) -> dict[str, Any]:
        """A customer's question (ground truth ``truth``, else a customer's), stored, not notified."""
        message = self._inbound(grant, customer, label="customer", **options)
        if truth is not None:
            self.truth[message["id"]] = truth
        return message

    def _forged_own_address(self, grant: str, customer: str) -> None:
        """A spoofer writes as the agent, In-Reply-To the customer's question, filed in the inbox or
        junk in turn: nobody's answer (own_outbound, nothing else changes); the customer is owed one."""
        question = self._question(grant, customer)
        self._customer_threads[question["thread_id"]] = (grant, customer)
        folder = ("inbox", "junk")[self.features["forged_own_address"] % 2]
        self.features[f"forged_own_address_{folder}"] += 1
        forged = self.nylas.deliver_forged_own(
            grant, reply_to_message_id=question["id"], folder=folder, date=self._date(), notify=False
        )
        with self._lock:
            self.truth[forged["id"]] = Truth.never("forged_own_address", filed=folder)
            self._message_threads[forged["id"]] = forged["thread_id"]
        self._notify(question)
        self._notify(forged)

    def _forged_list(self, grant: str, customer: str) -> None:
        """Direct mail with the trusted list's List-Id and a stranger in X-Original-From: the list's
        address is not its From, so it is the sender's, answered to them only."""
        with self._lock:
            self._sequence += 1
            stranger = f"stranger{self._sequence}@elsewhere.example"
        question = self._question(
            grant,
            customer,
            Truth.human("forged_list", customer),
            headers={"List-Id": f"<{TRUSTED_LIST_ID}>", "X-Original-From": f"Someone <{stranger}>"},
            more={"authentication_results": authentication_results(dmarc="pass", from_domain="example.com")},
        )
        self._customer_threads[question["thread_id"]] = (grant, customer)
        self._notify(question)

    def _genuine_group_post(self, grant: str, customer: str) -> None:
        """A member posts to the trusted group from a domain without DMARC: the group does not rewrite
        From, so the post keeps its own (the group in To); answered to From."""
        member = customer.replace("@example.com", "@smallco.example")
        question = self._question(
            grant,
            member,
            Truth.human("genuine_group_post", member),
            headers={"List-Id": f"<{TRUSTED_LIST_ID}>", "Precedence": "list"},
            more={
                "addressed_to": [TRUSTED_GROUP],
                "authentication_results": authentication_results(
                    dmarc="none", dkim="pass", dkim_domain="smallco.example", from_domain="smallco.example"
                ),
            },
        )
        self._customer_threads[question["thread_id"]] = (grant, member)
        self._notify(question)

    def _relay_verified(self, grant: str, customer: str) -> None:
        self._notify(self._group_relay(grant, customer, trusted=True))

    def _relay_unverified(self, grant: str, customer: str) -> None:
        variant = self.features["relay_unverified"] - 1
        self._notify(self._group_relay(grant, customer, trusted=True, verified=False, variant=variant))

    def _colleague_forward(self, grant: str, customer: str) -> None:
        """Before the agent reads, a colleague forwards the question to the warehouse, or writes an
        internal note to a teammate, from the mailbox: in Sent, from the grant, to neither the
        customer: no answer. The customer is answered or handed off."""
        question = self._question(
            grant, customer, Truth.answer_or_hand_off("forwarded_by_colleague", customer)
        )
        self._customer_threads[question["thread_id"]] = (grant, customer)
        note = self.features["colleague_forward"] % 2 == 0
        label, to = ("internal_note", TEAMMATE_NOTE_TO) if note else ("colleague_forward", WAREHOUSE)
        self.features[label] += 1
        self._person.writing = True
        try:
            written = self.nylas.person_replies(grant, question["id"], f"<p>FYI ({label})</p>", to=[to])
        finally:
            self._person.writing = False
        with self._lock:
            self.truth[written["id"]] = Truth.never(label, author=OURS)
        self._notify(question)

    def _person_draft(self, grant: str, customer: str) -> None:
        """A colleague starts an answer and leaves the draft open (no date under drafts_without_date):
        the agent waits for them, then hands off, and never dead-letters."""
        question = self._question(grant, customer, Truth.answer_or_hand_off("held_by_a_draft", customer))
        self.nylas.person_drafts(grant, question["id"], "<p>Let me check with the warehouse first.</p>")
        self._notify(question)

    def _stranger_joins(self, grant: str, customer: str) -> None:
        """A stranger writes into a customer's thread: a newcomer, answered alone at their address;
        the customer's messages are answered to the customer."""
        question = self._question(grant, customer)
        self._customer_threads[question["thread_id"]] = (grant, customer)
        with self._lock:
            self._sequence += 1
            stranger = f"stranger{self._sequence}@elsewhere.example"
        joined = self._inbound(
            grant,
            stranger,
            label="stranger_joins",
            thread_id=question["thread_id"],
            subject=f"Re: {question['subject']}",
        )
        self.truth[joined["id"]] = Truth.human("stranger_joins", stranger, alone=True)
        self._notify(question)
        self._notify(joined)

    def _preempted_message_id(self, grant: str, customer: str) -> None:
        """An attacker mails the other agent under the customer's Message-ID and subject, just before
        the customer's email arrives: the customer is still answered (claims are keyed on the
        Message-ID, the sender and the subject); the attacker is a person like any other."""
        other = next(g for g in AGENT_GRANTS if g != grant)
        with self._lock:
            self._sequence += 1
            sequence = self._sequence
        message_id, subject = f"<q{sequence}.{uuid.uuid4().hex[:8]}@example.com>", f"Question {sequence}"
        attacker = f"attacker{sequence}@elsewhere.example"
        first = self._inbound(
            other, attacker, label="preempting_copy", subject=subject, headers={"Message-ID": message_id}
        )
        self.truth[first["id"]] = Truth.answer_or_hand_off("preempting_copy", attacker)
        question = self._question(grant, customer, subject=subject, headers={"Message-ID": message_id})
        self._customer_threads[question["thread_id"]] = (grant, customer)
        self._notify(first)
        self._notify(question)

    def _slow_customer(self, grant: str, customer: str) -> None:
        """A customer asks five times over five days on one thread: each question waits for the agent's
        answer (or SLOW_CUSTOMER_WAIT_SECONDS), then Nylas' clock moves a day. Every question is
        answered or handed off; at a day's pace the exchange limit never applies."""
        thread_id = None
        for index in range(SLOW_CUSTOMER_QUESTIONS):
            if index:
                self.advance_clock(SLOW_CUSTOMER_GAP_SECONDS)
                self.features["slow_customer_day"] += 1
            question = self._inbound(
                grant,
                customer,
                label="slow_customer",
                thread_id=thread_id,
                subject=None if thread_id is None else "Re: Still waiting",
            )
            self.truth[question["id"]] = Truth.answer_or_hand_off("slow_customer", customer)
            thread_id = question["thread_id"]
            before = len(self.nylas.sent_messages(grant_id=grant, thread_id=thread_id))
            self._notify(question)
            deadline = time.monotonic() + SLOW_CUSTOMER_WAIT_SECONDS
            while time.monotonic() < deadline:
                if len(self.nylas.sent_messages(grant_id=grant, thread_id=thread_id)) > before:
                    break
                time.sleep(0.5)

    def _playable(self, knob: str) -> float:
        """The knob's probability, or 0 when this emulator cannot play it."""
        return 0.0 if knob in self.unsupported else float(getattr(self.settings, knob))

    def agent_grants(self) -> dict[str, str]:
        """Every agent grant of the deployment and its address."""
        fleet = self.fleet.all_addresses() if self.fleet is not None else {}
        return {**{grant: AGENT_GRANTS[grant] for grant in self.settings.agent_grant_ids()}, **fleet}


ISSUE_40_CONVERSATIONS = frozenset(
    {
        "forged_own_address",
        "forged_list",
        "genuine_group_post",
        "relay_verified",
        "relay_unverified",
        "colleague_forward",
        "person_draft",
        "stranger_joins",
        "preempted_message_id",
    }
)
"""Kinds of conversation of issue 40, each played by the method of its name (``_forged_list``...)."""


def _truth(label: str, sender: str, reply_to: str | None) -> Truth:
    """Ground truth of a generated message, from why it was generated."""
    if label in ("customer", "follow_up", "during_send"):
        return Truth.human(label, sender)
    if label == "peer_agent":
        # Another company's agent writing first is answerable (the exchange limit ends the rest).
        return Truth.human(label, sender, author=MACHINE)
    if label in ("spelled_mailbox", "large_reply"):
        # A spelling of one inbox is its customer; a customer asking for the logo gets a large reply.
        return Truth.human(label, sender)
    if label == "oversize_reply":
        # A customer asking for the brochure: over what Nylas takes, handed off (reply_too_large).
        return Truth.hand_off(label)
    if label == "peer_unmarked":
        # The peer's automatic answer with every mark lost: nothing tells it from a person.
        return Truth.optional(label, sender, author=MACHINE)
    if label == "bot":
        # An automaton that does not say so: answerable, and the loop guard must stop it.
        return Truth.human(label, sender, author=MACHINE)
    if label in ("reply_to_third_party", "reply_to_agent"):
        # A human wrote; the Reply-To would make the agent mail someone else: answer the sender.
        return Truth.human(label, sender)
    if label == "contact_form":
        # A form's no-reply sender with the customer in Reply-To: answer the customer, or skip it (the
        # run trusts no form, REPLY_TO_TRUSTED_SENDERS: its robot's mail, a plain automated skip).
        assert reply_to is not None
        return Truth.optional(label, reply_to, author=MACHINE)
    return Truth.never(label)


def _fault_class() -> Any:
    from devstack.nylas import Fault

    return Fault
