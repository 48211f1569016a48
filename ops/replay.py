"""Replay of history: a grant's recent threads, read from Nylas, run through a given agent in shadow mode.

What it is for: before deploying a new version of an agent, a team runs it over last week's mail and
reads what it would have done beside what its people did — and runs the version in production the
same way, then ``diff`` s the two reports (``docs/operations.md``).

How, and why it decides as the replier does: every customer message of a thread is handed, in the
order the mailbox received it, to the replier's own shell (:class:`replyonce.shell.replier.Replier`) and
functional core, with a shadow policy (``REPLY_MODE=shadow``), so the same dedup, plan, conversation
and skip rules decide. The agent is told it is a replay (``Conversation.mode == "replay"``, a key of
the replay's own namespace): its side effects (a ticket, a refund) belong to ``send`` and ``review``
only. The mailbox it reads is the thread *as it was when the message arrived* (:class:`HistoryMailbox`:
the listing from that message on, the mailbox's later messages — its people's answers — hidden until
their turn), and the state is kept in memory (:class:`HistoryStore`):

- nothing is written to Nylas: every thread is read with ``GET`` before the first message is
  replayed, and the mailbox refuses a send, a draft or a move (:class:`ReplayWriteRefused`), which
  the shadow core never asks for (``tests/integration/test_replay.py`` counts the emulator's requests);
- nothing is written to the stack's tables: the ledger, the leases and the shadow records of a
  replay live and die with it.

What differs from live shadow mode, by construction: drafts are not replayed (a person's draft of
last week is gone or sent), the search for our own replies finds nothing (a replay stores none), and
Nylas' time is each message's ``date`` (the listing holds no arrival time).
"""

import contextlib
import io
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ops.template import function_environment, load_template
from replyonce.adapters.agents import Agent
from replyonce.agent import AttachmentUnavailable
from replyonce.answers import Answer
from replyonce.config import ReplierSettings
from replyonce.exceptions import Deferred, ReplyOnceError
from replyonce.jobs import MessageArrived
from replyonce.observability import logger
from replyonce.policy import Policy, policy_of
from replyonce.ports import Folder, Grant, Message, SearchResult, ThreadPage
from replyonce.rules.evidence import sent_folder_ids
from replyonce.rules.plan import message_id
from replyonce.rules.screening import sender_email
from replyonce.shell.replier import Replier
from replyonce.state import (
    Intent,
    Lease,
    LedgerEntry,
    LedgerRead,
    Reservation,
    Settlement,
    ShadowRecord,
    ThreadState,
)

# A thread of more pages than this is replayed from its newest 1,000 messages.
MAX_THREAD_PAGES = 5
PAGE_LIMIT = 200


class ReplayWriteRefused(ReplyOnceError):
    """The replay was asked to write to the mailbox: it never does (a bug if ever raised)."""


@dataclass(frozen=True)
class HistoryMailbox:
    """:class:`replyonce.ports.Mailbox` over threads read once, each shown as of one moment.

    ``threads`` holds each thread's messages as Nylas listed them (newest first); ``shown_from[t]``
    is the position, in that listing, of the message being replayed: the thread then held that message
    and every older one, and nothing newer.
    """

    grant: Callable[[str], Grant]
    folders: Callable[[str], Sequence[Folder]]
    threads: Mapping[str, Sequence[Message]]
    shown_from: dict[str, int] = field(default_factory=dict)
    nylas_time: dict[str, int] = field(default_factory=dict)
    # The customer's files, read from Nylas as the live replier reads them (a read, never a write).
    download: Callable[[str, str, str, int, float], bytes] | None = None

    def _shown(self, thread_id: str) -> Sequence[Message]:
        return self.threads.get(thread_id, ())[self.shown_from.get(thread_id, 0) :]

    def message(self, grant_id: str, message_id_: str) -> Message | None:
        for thread_id in self.threads:
            for message in self._shown(thread_id):
                if message_id(message) == message_id_:
                    return message
        return None

    def drafts_in_thread(self, grant_id: str, thread_id: str) -> Sequence[Message]:
        return ()

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        shown = self._shown(thread_id)
        start = int(page_token or 0)
        end = start + limit
        cursor = str(end) if end < len(shown) else None
        return ThreadPage(tuple(shown[start:end]), cursor, self.nylas_time.get(thread_id, 0))

    def search(self, grant_id: str, kind: str, key: str, value: str) -> SearchResult:
        return SearchResult((), nylas_time=max(self.nylas_time.values(), default=0))

    def download_attachment(
        self, grant_id: str, attachment_id: str, message_id_: str, max_bytes: int, timeout_seconds: float
    ) -> bytes:
        if self.download is None:
            raise AttachmentUnavailable(f"attachment {attachment_id}: this replay reads no files")
        return self.download(grant_id, attachment_id, message_id_, max_bytes, timeout_seconds)

    def send(self, grant_id: str, request: str, key: str) -> Answer:
        raise ReplayWriteRefused("a replay never sends")

    def create_draft(self, grant_id: str, request: str) -> Answer:
        raise ReplayWriteRefused("a replay never drafts")

    def move(self, grant_id: str, message_id_: str, folder_id: str) -> None:
        raise ReplayWriteRefused("a replay never moves a message")


class HistoryStore:
    """:class:`replyonce.ports.StateStore` in memory, for one replay (one process, one worker).

    The layout's own rules decide what a settlement leaves (``Settlement.ledger_entries``,
    ``Settlement.thread_after``); a shadow record is kept once per key, as the table's conditional
    put keeps it.
    """

    def __init__(self) -> None:
        self.threads: dict[str, ThreadState] = {}
        self.ledger: dict[tuple[str, str], LedgerEntry] = {}
        self.records: dict[tuple[str, str], ShadowRecord] = {}
        self.claims: dict[str, str] = {}

    def ledger_entry(self, grant_id: str, message_id_: str) -> LedgerEntry | None:
        return self.ledger.get((grant_id, message_id_))

    def read_ledger(self, grant_id: str, message_id_: str) -> LedgerRead:
        return LedgerRead(self.ledger.get((grant_id, message_id_)))

    def take_lease(self, thread_key: str, duration_ms: int, table_began_ms: int = 0) -> Lease:
        token = uuid.uuid4().hex
        state = replace(self.threads.get(thread_key, ThreadState()), lease_owner=token)
        self.threads[thread_key] = state
        return Lease(thread_key, token, int(time.time() * 1000) + duration_ms, state)

    def release(self, lease: Lease) -> bool:
        lease.released = True
        self.threads[lease.key] = replace(self.threads[lease.key], lease_owner="")
        return True

    def claim_email(self, header_message_id: str, grant_id: str) -> str:
        return self.claims.setdefault(header_message_id, grant_id)

    def reserve(self, reservation: Reservation, intent_id: str) -> bool:
        return True  # shadow mode never reserves

    def store_intent(self, lease: Lease, intent: Intent, *, grant_alive: str = "") -> bool:
        raise ReplayWriteRefused("a replay stores no reply to send")

    def settle(self, lease: Lease, settlement: Settlement, grant_id: str) -> bool:
        if settlement.shadow is not None:
            self.records[(grant_id, settlement.shadow.record_id)] = settlement.shadow
        for entry in settlement.ledger_entries(0):
            self.ledger[(grant_id, entry.message_id)] = entry
        after = settlement.thread_after(self.threads.get(lease.key, ThreadState()))
        self.threads[lease.key] = replace(after, lease_owner="")
        lease.released = True
        return True

    def record_shadow(self, record: ShadowRecord) -> bool:
        key = (record.grant_id, record.record_id)
        if key in self.records:
            return False
        self.records[key] = record
        return True


@dataclass
class ReplayResult:
    """What a replay read and recorded: the report's input, and why it stopped."""

    records: list[ShadowRecord]
    threads: dict[str, list[Message]]
    own_addresses: tuple[str, ...]
    messages_replayed: int = 0
    sent_folders: frozenset[str] = frozenset()
    """The grant's Sent folder ids: where the report finds a person's answer
    (``replyonce.rules.evidence``)."""
    deferred: dict[str, int] = field(default_factory=dict)
    stopped: str = ""
    """``""`` (every thread listed), ``limit`` (``--limit`` threads reached) or ``time``
    (``--max-seconds`` reached: the threads replayed so far are reported)."""


def stack_policy(parameters: Mapping[str, str], template: Mapping[str, Any] | None = None) -> Policy:
    """The replier's policy as the deployed stack has it: ``template.yaml``'s environment of the
    ReplierFunction with the stack's parameter values, read by ``replyonce.config`` as at cold start.

    Why through the template and the config: a replay that decided with other bounds (another person
    hold, another exchange limit) than the stack would report decisions the stack does not make.
    Resources (tables, queues, secrets) are named by placeholders: a replay reads none of them.
    """
    environment = function_environment(template or load_template(), "ReplierFunction", parameters)
    return policy_of(ReplierSettings.from_environment(environment))


def recent_threads(lister: Any, grant_id: str, since: int, until: int, limit: int) -> list[str]:
    """The ids of the newest ``limit`` threads with a message received in ``[since, until)``."""
    found: dict[str, None] = {}
    for message in lister.received_messages(grant_id, since, until):
        thread_id = str(message.get("thread_id") or "")
        if thread_id:
            found.setdefault(thread_id)
        if len(found) >= limit:
            break
    return list(found)


def read_thread(mailbox: Any, grant_id: str, thread_id: str) -> list[Message]:
    """The whole thread as the replier reads it (with headers), newest first, page after page."""
    messages: list[Message] = []
    token: str | None = None
    for _ in range(MAX_THREAD_PAGES):
        page = mailbox.thread_page(grant_id, thread_id, PAGE_LIMIT, token)
        messages.extend(page.messages)
        token = page.next_cursor
        if not token:
            break
    return messages


@contextlib.contextmanager
def _quiet() -> Any:
    """The replier's log lines and metrics stay out of the replay's output (the report is the output)."""
    level = logger.log_level
    logger.setLevel(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logger.setLevel(level)


def replay(
    mailbox: Any,
    lister: Any,
    grant_id: str,
    agent: Agent,
    policy: Policy,
    *,
    since: int,
    until: int,
    limit: int,
    max_seconds: float,
    monotonic: Callable[[], float] = time.monotonic,
    advance: Callable[[int, int], None] | None = None,
) -> ReplayResult:
    """Replay the grant's newest ``limit`` threads of ``[since, until)`` through ``agent``, in shadow mode.

    Parameters
    ----------
    mailbox:
        The replier's Nylas reads (``replyonce.adapters.nylas.NylasMailbox``): the grants, the folders, the
        threads.
    lister:
        Lists the window's messages (``ops.nylas_admin.NylasAdmin.received_messages``).
    agent:
        The agent to replay (``--agent module:function``).
    policy:
        The stack's policy; shadow mode is forced on, and ``replay`` (``Conversation.mode == "replay"``).
    limit, max_seconds:
        At most this many threads, and this long (on ``monotonic``): the threads replayed when the time
        is up are reported, and ``stopped`` says so.
    advance:
        ``advance(done, total)`` after each thread (the progress bar).
    """
    started = monotonic()
    policy = replace(
        policy, agent_grant_ids=(grant_id, *(g for g in policy.agent_grant_ids if g != grant_id))
    )
    # Shadow mode, and told so: the agent is handed ``mode == "replay"`` and a replay key (never the live
    # one), so a ticket it would open for last week's customer is not opened, nor fenced by our run.
    policy = replace(policy, shadow_mode=True, review_mode=False, replay=True)
    grants = {g: mailbox.grant(g) for g in policy.agent_grant_ids}
    folders = {grant_id: tuple(mailbox.folders(grant_id))}
    # One thread more than the limit is listed, to tell "stopped at the limit" from "that was all".
    listed = recent_threads(lister, grant_id, since, until, limit + 1)
    thread_ids = listed[:limit]
    threads: dict[str, list[Message]] = {}  # read one by one, within the time bound
    own = tuple(g.email.lower() for g in grants.values() if g.email)
    history = HistoryMailbox(
        grant=lambda g: grants[g],
        folders=lambda g: folders.get(g, ()),
        threads=threads,
        download=getattr(mailbox, "download_attachment", None),
    )
    store = HistoryStore()
    replier = Replier(
        policy, store, history, agent, reconcile_later=lambda _due, _seconds: None, lease_wait_seconds=0
    )
    result = ReplayResult([], {}, own, sent_folders=sent_folder_ids(folders[grant_id]))
    with _quiet():
        for done, thread_id in enumerate(thread_ids, start=1):
            if monotonic() - started >= max_seconds:
                result.stopped = "time"
                break
            listing = threads[thread_id] = read_thread(mailbox, grant_id, thread_id)
            # Oldest first, in the listing's (arrival) order; the mailbox's own messages are its people's.
            for position in range(len(listing) - 1, -1, -1):
                message = listing[position]
                if sender_email(message) in own:
                    continue
                history.shown_from[thread_id] = position
                history.nylas_time[thread_id] = message.date
                job = MessageArrived(grant_id, message_id(message), thread_id, message)
                try:
                    replier.handle(job, remaining_seconds=lambda: float("inf"))
                except Deferred as deferred:
                    result.deferred[deferred.reason.value] = result.deferred.get(deferred.reason.value, 0) + 1
                result.messages_replayed += 1
            history.shown_from.pop(thread_id, None)
            result.threads[thread_id] = list(listing)
            if advance is not None:
                advance(done, len(thread_ids))
        else:
            if len(listed) > limit:
                result.stopped = "limit"
    result.records = list(store.records.values())
    return result
