"""In-memory fakes of the replier's two ports, for the rules' tests and the interleaving scheduler.

Each fake keeps the documented behaviour its port promises, and nothing of
ours: the state store's conditional writes (a lease only when free or
expired, writes only by the owner, reservations bounded by the budget), and
the mailbox's Nylas semantics (``Idempotency-Key`` per grant for one hour,
cached answers replayed with ``Idempotent-Response``, a ``409`` for another
payload under a key, ``metadata_pair`` only on ``key1``…``key5``, listings
newest first). ``tests/contract/test_recipient_budget.py`` runs one table on
``FakeStateStore`` and on the DynamoDB adapter (moto), so the fake's
reservations cannot drift from the table's conditions; ``tests/contract/`` does the same for every
method of both ports (the mailbox against the Nylas emulator), and names each deliberate difference.

A fake never raises by itself; a test scripts what a call answers with
:meth:`FakeMailbox.script_send`.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from replyonce.adapters.state_items import (
    CHUNK,
    OUTBOX,
    body_refs,
    email_key,
    intent_attribute,
    intent_of,
    recipient_key,
    request_of,
    shadow_key,
    stored_request,
    with_requests,
)
from replyonce.agent import AttachmentGone, AttachmentTooLarge
from replyonce.answers import Answer
from replyonce.exceptions import GrantLifeRefused, NylasPermanentError, ThreadBusyError
from replyonce.mail import Mail, read_message, read_messages
from replyonce.ports import ActiveRegion, Folder, Grant, SearchResult, ThreadPage
from replyonce.state import (
    AgentCalls,
    Intent,
    Lease,
    LedgerEntry,
    LedgerRead,
    Reservation,
    Settlement,
    ShadowRecord,
    ThreadState,
)

KEY_LIFETIME_SECONDS = 3600
INDEXED_KEYS = ("key1", "key2", "key3", "key4", "key5")
SYSTEM_FOLDERS = ("inbox", "sent", "drafts", "trash", "junk", "archive")


def folder_id(name: str) -> str:
    """The id :meth:`FakeMailbox.folders` gives a system folder: a message's ``folders`` hold ids, as
    Nylas' do (``tests/contract`` holds the fake to the emulator), and a name given for one is mapped."""
    return f"folder-{name}" if name in SYSTEM_FOLDERS else name


class Clock:
    """One settable clock for a scenario: the store's wall clock and Nylas' clock, in seconds."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeStateStore:
    """:class:`replyonce.ports.StateStore` in memory, with the conditional writes of the DynamoDB store.

    Every intent kept goes through the table's layout (``replyonce.adapters.state_items``): a large request's
    body items are written before its entry, whether or not the lease still holds, and what is kept is
    what the entry and those items give back, byte for byte.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.threads: dict[str, ThreadState] = {}
        self.ledger: dict[tuple[str, str], LedgerEntry] = {}
        self.budgets: dict[str, dict[str, int]] = {}
        self.claims: dict[str, str] = {}  # email key -> the grant that answers it
        self.bodies: dict[str, dict[str, Any]] = {}  # body key -> the body item, as the table holds it
        self.shadow: dict[str, ShadowRecord] = {}  # shadow key -> the first record written under it
        self.after_store: Callable[[Intent], None] | None = None  # a scenario's look at each intent kept
        self.began_ms: int | None = None  # the ``table#began`` item: none in a new (or emptied) table
        # A grant's agent calls per UTC day: (grant, day) -> the bursts counted, and the days refused.
        self.agent_calls: dict[tuple[str, str], set[str]] = {}
        self.agent_calls_refused: set[tuple[str, str]] = set()
        # The grants whose life says Nylas deleted them (the grant registry's, which the store's check of
        # ``store_intent(..., grant_alive=)`` reads in the same write); ``None``: no registry wired.
        self.deleted_grants: set[str] | None = None

    def ledger_entry(self, grant_id: str, message_id: str) -> LedgerEntry | None:
        with self._lock:
            return self.ledger.get((grant_id, message_id))

    def read_ledger(self, grant_id: str, message_id: str) -> LedgerRead:
        with self._lock:
            return LedgerRead(self.ledger.get((grant_id, message_id)), self.began_ms or 0)

    def take_lease(self, thread_key: str, duration_ms: int, table_began_ms: int = 0) -> Lease:
        with self._lock:
            now_ms = int(self._clock() * 1000)
            state = self.threads.get(thread_key, ThreadState())
            if state.lease_owner and state.lease_expires_at_ms >= now_ms:
                raise ThreadBusyError(thread_key, max(0, (state.lease_expires_at_ms - now_ms) // 1000 + 1))
            token = uuid.uuid4().hex
            expires = now_ms + max(duration_ms, 1000)
            since, created = state.since_ms, state.created_ms
            if thread_key not in self.threads:  # a new thread item: the table's beginning, and its own
                if not table_began_ms:  # not read with the ledger: read (or begun) here
                    self.began_ms = self.began_ms or now_ms
                since, created = table_began_ms or self.began_ms, now_ms
            state = replace(
                state, lease_owner=token, lease_expires_at_ms=expires, since_ms=since, created_ms=created
            )
            self.threads[thread_key] = state
            return Lease(thread_key, token, expires, state)

    def lease_held_for_seconds(self, thread_key: str) -> int:
        with self._lock:
            now_ms = int(self._clock() * 1000)
            state = self.threads.get(thread_key, ThreadState())
            if state.lease_owner and state.lease_expires_at_ms >= now_ms:
                return max(0, (state.lease_expires_at_ms - now_ms) // 1000 + 1)
            return 0

    def _owned(self, lease: Lease) -> bool:
        return self.threads.get(lease.key, ThreadState()).lease_owner == lease.token

    def release(self, lease: Lease) -> bool:
        with self._lock:
            if lease.released:  # freed already (released, or settled): nothing lost, as the store answers
                return True
            lease.released = True
            if not self._owned(lease):
                return False
            self.threads[lease.key] = replace(self.threads[lease.key], lease_owner="", lease_expires_at_ms=0)
            return True

    def claim_email(self, header_message_id: str, grant_id: str) -> str:
        with self._lock:
            return self.claims.setdefault(email_key(header_message_id), grant_id)

    def reserve(self, reservation: Reservation, intent_id: str) -> bool:
        with self._lock:
            slots = self.budgets.setdefault(recipient_key(reservation.email), {})  # intent id -> Nylas time
            if intent_id in slots:
                return True
            live = {i: t for i, t in slots.items() if t >= reservation.since}
            if len(live) >= reservation.budget:
                return False
            live[intent_id] = reservation.at
            self.budgets[recipient_key(reservation.email)] = live
            return True

    def count_agent_call(self, grant_id: str, day: str, intent_id: str, cap: int) -> AgentCalls:
        with self._lock:
            counted = self.agent_calls.setdefault((grant_id, day), set())
            if intent_id in counted:
                return AgentCalls(intent_id, allowed=True)
            if len(counted) >= cap:
                first = (grant_id, day) not in self.agent_calls_refused
                self.agent_calls_refused.add((grant_id, day))
                return AgentCalls(intent_id, allowed=False, first_refusal=first)
            counted.add(intent_id)
            return AgentCalls(intent_id, allowed=True)

    def _kept(self, intent: Intent) -> Intent:
        """The intent as a later reader gets it back: its body items written first (unconditioned, as the
        store writes them), its entry read back through the layout, large requests from those items."""
        for item in stored_request(intent.request).body_items(intent.id, 0):
            self.bodies[item["pk"]["S"]] = item
        thread = {OUTBOX: {"M": {intent.id: intent_attribute(intent)}}}
        requests = {
            ref.digest: request_of(ref, [self.bodies[key][CHUNK]["B"] for key in ref.item_keys()])
            for ref in body_refs(thread)
        }
        kept = intent_of(with_requests(thread, requests)[OUTBOX]["M"][intent.id])
        assert kept == intent, "the layout must give back the intent stored"
        return kept

    def store_intent(self, lease: Lease, intent: Intent, *, grant_alive: str = "") -> bool:
        with self._lock:
            checked = grant_alive and self.deleted_grants is not None
            if checked and self._owned(lease) and grant_alive in self.deleted_grants:
                raise GrantLifeRefused(grant_alive)  # one write with the entry: nothing written
            kept = self._kept(intent)
            if not self._owned(lease):
                return False
            state = self.threads[lease.key]
            self.threads[lease.key] = replace(state, outbox={**state.outbox, intent.id: kept})
        if self.after_store is not None:
            self.after_store(kept)
        return True

    def settle(self, lease: Lease, settlement: Settlement, grant_id: str) -> bool:
        with self._lock:
            held = self.threads.get(lease.key, ThreadState()).lease_owner == lease.token
            if not held and not settlement.writes_without_lease:
                lease.released = True
                return False
            if settlement.shadow is not None:  # in the settlement's write, as the store's transaction
                record = settlement.shadow
                self.shadow[shadow_key(record.grant_id, record.record_id)] = record
            for entry in settlement.ledger_entries(int(self._clock())):
                self.ledger[(grant_id, entry.message_id)] = entry
            state = self.threads.get(lease.key, ThreadState())
            held = state.lease_owner == lease.token
            if held:
                if settlement.keep and settlement.intent is not None:
                    settlement = replace(settlement, intent=self._kept(settlement.intent))
                after = settlement.thread_after(state)
                self.threads[lease.key] = replace(after, lease_owner="", lease_expires_at_ms=0)
            else:
                # Without the lease, only what is set by key: the covered ids and the reply's time.
                covered = dict(state.covered) | dict.fromkeys(settlement.covered, settlement.at)
                replies = dict(state.replies)
                if settlement.counts_as_reply and settlement.intent is not None:
                    replies[settlement.intent.id] = settlement.at
                self.threads[lease.key] = replace(state, covered=covered, replies=replies)
            lease.released = True
            return held

    def record_shadow(self, record: ShadowRecord) -> bool:
        with self._lock:
            key = shadow_key(record.grant_id, record.record_id)
            if key in self.shadow:
                return False
            self.shadow[key] = record
            return True

    def snapshot(self) -> Any:
        """Every item as it is now (what a point-in-time restore to this moment brings back)."""
        with self._lock:
            return copy.deepcopy(
                (
                    self.threads,
                    self.ledger,
                    self.budgets,
                    self.claims,
                    self.bodies,
                    self.shadow,
                    self.began_ms,
                )
            )

    def restore(self, snapshot: Any) -> None:
        """The table restored to the moment of ``snapshot``: what happened since is forgotten."""
        with self._lock:
            (
                self.threads,
                self.ledger,
                self.budgets,
                self.claims,
                self.bodies,
                self.shadow,
                self.began_ms,
            ) = copy.deepcopy(snapshot)

    def forget_everything(self) -> None:
        """A table recreated (or restored from before the replies): every item gone."""
        with self._lock:
            self.threads.clear()
            self.ledger.clear()
            self.budgets.clear()
            self.claims.clear()
            self.bodies.clear()
            self.shadow.clear()
            self.began_ms = None


class FakeRegionFence:
    """:class:`replyonce.ports.RegionFence` in memory: one active-Region record every Region reads.

    One object for every Region models the multi-Region strongly consistent table: a read anywhere
    sees the last failover written anywhere (``replyonce.adapters.active_region`` on DynamoDB).
    """

    def __init__(self, clock: Callable[[], float], region: str) -> None:
        self._clock = clock
        self._record = ActiveRegion(region=region, epoch=1, since=0, read_at=0)

    def read(self) -> ActiveRegion:
        return replace(self._record, read_at=int(self._clock()))

    def fail_over(self, region: str) -> None:
        """The operator's failover: the next epoch, its handover starting now."""
        self._record = ActiveRegion(region, self._record.epoch + 1, int(self._clock()), 0)


@dataclass
class _Key:
    fingerprint: str
    first_seen: float
    answer: Answer | None = None


@dataclass
class SentEmail:
    """One email that went out (a send, or a draft a person sent): what the world saw."""

    grant_id: str
    key: str | None
    request: dict[str, Any]
    message: dict[str, Any]
    at: float


@dataclass
class FakeMailbox:
    """:class:`replyonce.ports.Mailbox` in memory: one Nylas application with its grants.

    Attributes
    ----------
    messages:
        Every message in every mailbox, in arrival order (what a listing reads, newest first).
    sent:
        Every email that went out (the world's record, for the checkers).
    drafts:
        Every draft created.
    search_lag_seconds:
        ``metadata_pair`` finds a message only this long after it arrived (Nylas documents no delay).
    queue_sends:
        Agent Account send queueing: a send answers ``202`` and goes out (or fails) only at
        :meth:`release_queued`.
    queue_release_seconds:
        With ``queue_sends``: the queue sends each email this long after it was queued (the Agent
        Account queue's 90 s), seen at the next listing or search; ``None``: only at :meth:`release_queued`.
    reply_list_lag_seconds:
        A reply that went out is in the thread's listing only this long after (a provider grant's sync;
        Nylas documents no delay): meanwhile only our own state knows it was sent.
    """

    clock: Callable[[], float]
    grants: dict[str, Grant] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    sent: list[SentEmail] = field(default_factory=list)
    drafts: list[dict[str, Any]] = field(default_factory=list)
    user_folders: dict[str, list[str]] = field(default_factory=dict)
    search_lag_seconds: float = 0.0
    queue_sends: bool = False
    reply_list_lag_seconds: float = 0.0
    queue_release_seconds: float | None = None
    queued: list[SentEmail] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    on_send_started: Callable[[str, dict[str, Any]], None] | None = None
    """Called with the grant and the request while a first send's key is in flight (the emulator's hook
    of the same name): a send under that key meanwhile is answered ``409`` concurrent."""
    _keys: dict[tuple[str, str], _Key] = field(default_factory=dict)
    _scripted: list[Callable[[str, str, str], Answer | None]] = field(default_factory=list)
    _arrived: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def _id(self, prefix: str) -> str:
        """A readable id, the same in every run of a scenario (the interleaving report names them)."""
        return f"{prefix}-{next(self._ids):04d}"

    # ---- the world's side --------------------------------------------------------------------------

    def add_grant(
        self,
        grant_id: str,
        email: str,
        name: str = "Agent",
        provider: str = "nylas",
        aliases: tuple[str, ...] = (),
    ) -> None:
        """A grant: an Agent Account (``provider`` ``"nylas"``) unless told, as the emulator's; ``aliases``
        as ``GET /grants/{id}?expose_aliases=true`` lists them."""
        self.grants[grant_id] = Grant(
            grant_id, email.lower(), name, provider, tuple(a.lower() for a in aliases)
        )

    def deliver(
        self,
        grant_id: str,
        *,
        sender: str,
        subject: str = "Hi",
        body: str = "<p>?</p>",
        thread_id: str | None = None,
        headers: list[dict[str, str]] | None = None,
        message_id: str | None = None,
        folders: list[str] | None = None,
        reply_to: list[dict[str, str]] | None = None,
        date: int | None = None,
        to: list[str] | None = None,
    ) -> dict[str, Any]:
        """An inbound message arrives in ``grant_id``'s mailbox."""
        grant = self.grants[grant_id]
        message = {
            "id": message_id or self._id("msg"),
            "object": "message",
            "grant_id": grant_id,
            "thread_id": thread_id or self._id("thread"),
            "subject": subject,
            "from": [{"name": sender.split("@")[0].title(), "email": sender}],
            "to": [{"email": a} for a in (to or [grant.email])],
            "reply_to": list(reply_to or []),
            "date": int(self.clock()) if date is None else date,
            "body": body,
            "folders": [folder_id(f) for f in folders or ["inbox"]],
            "headers": list(headers or []),
            "metadata": {},
        }
        self._store(message)
        return copy.deepcopy(message)

    def _store(self, message: dict[str, Any], at: float | None = None) -> None:
        with self._lock:
            self.messages.append(message)
            self._arrived[message["id"]] = self.clock() if at is None else at

    def script_send(self, answer: Callable[[str, str, str], Answer | None]) -> None:
        """The next send is answered by ``answer(grant, request, key)``; ``None``: as Nylas would."""
        self._scripted.append(answer)

    # ---- the port ----------------------------------------------------------------------------------

    def grant(self, grant_id: str) -> Grant:
        self.calls.append("grant")
        if grant_id not in self.grants:
            raise NylasPermanentError(f"grant {grant_id} not found", status=404)
        return self.grants[grant_id]

    def folders(self, grant_id: str) -> list[Folder]:
        self.calls.append("folders")
        # With their IMAP special-use ``attributes``, as Nylas gives system folders (the replier finds junk
        # and trash by either): https://developer.nylas.com/docs/reference/api/folders/
        system = [Folder(folder_id(name), name, (f"\\{name.title()}",)) for name in SYSTEM_FOLDERS]
        return system + [Folder(folder_id(name), name) for name in self.user_folders.get(grant_id, [])]

    def create_folder(self, grant_id: str, name: str) -> Folder:
        self.calls.append("create_folder")
        self.user_folders.setdefault(grant_id, []).append(name)
        return Folder(folder_id(name), name)

    def message(self, grant_id: str, message_id: str) -> Mail | None:
        self.calls.append("message")
        found = next((m for m in self.messages if m["id"] == message_id and m["grant_id"] == grant_id), None)
        return read_message(found)

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        self.calls.append("thread")
        self._release_due()
        with self._lock:
            thread = [m for m in self.messages if m["grant_id"] == grant_id and m["thread_id"] == thread_id]
        now = self.clock()
        newest_first = [
            m
            for m in reversed(thread)
            if not (m.get("metadata") or {}).get("key1")
            or now - self._arrived.get(m["id"], now) >= self.reply_list_lag_seconds
        ]
        offset = int(page_token or 0)
        page = newest_first[offset : offset + limit]
        more = offset + limit < len(newest_first)
        return ThreadPage(read_messages(page), str(offset + limit) if more else None, int(self.clock()))

    def search(self, grant_id: str, kind: str, key: str, value: str) -> SearchResult:
        self.calls.append(f"search:{kind}")
        self._release_due()
        if key not in INDEXED_KEYS:
            return SearchResult(failed=f"400: {key} is not an indexed metadata key")
        pool = self.drafts if kind == "drafts" else self.messages
        now = self.clock()
        found = read_messages(
            [
                m
                for m in pool
                if m["grant_id"] == grant_id
                and m.get("metadata", {}).get(key) == value
                and now - self._arrived.get(m["id"], now) >= self.search_lag_seconds
            ]
        )
        return SearchResult(found, nylas_time=int(now))

    def download_attachment(
        self, grant_id: str, attachment_id: str, message_id: str, max_bytes: int, timeout_seconds: float
    ) -> bytes:
        """The bytes ``files[attachment_id]`` holds (set by a test); gone when it holds none."""
        self.calls.append("download")
        content = getattr(self, "files", {}).get(attachment_id)
        if content is None:
            raise AttachmentGone(f"attachment {attachment_id}: 404")
        if len(content) > max_bytes:
            raise AttachmentTooLarge(f"attachment {attachment_id}: over {max_bytes}")
        return content

    def send(self, grant_id: str, request: str, key: str, files: Mapping[str, bytes] | None = None) -> Answer:
        self.calls.append("send")
        scripted = self._scripted.pop(0) if self._scripted else None
        if scripted is not None:
            answer = scripted(grant_id, request, key)
            if answer is not None:
                return answer
        now = self.clock()
        with self._lock:
            slot = (grant_id, key)
            existing = self._keys.get(slot)
            fingerprint = json.dumps(json.loads(request), sort_keys=True)
            if existing is not None and now - existing.first_seen < KEY_LIFETIME_SECONDS:
                if existing.fingerprint != fingerprint:
                    return Answer(409, "api.invalid_idempotent_request", nylas_time=int(now))
                if existing.answer is None:
                    return Answer(409, "api.concurrent_idempotent_request", nylas_time=int(now))
                return replace(existing.answer, replayed=True, nylas_time=int(now))
            record = _Key(fingerprint, now)
            self._keys[slot] = record
        if self.on_send_started is not None:
            self.on_send_started(grant_id, json.loads(request))
        answer = self._deliver_reply(grant_id, json.loads(request), key)
        record.answer = answer
        return answer

    def lose_answer(self) -> Callable[[str, str, str], Answer | None]:
        """A scripted send: Nylas does it (or queues it), the answer never reaches the caller."""

        def script(grant_id: str, request: str, key: str) -> Answer:
            self._scripted.insert(0, lambda g, r, k: None)  # let this very call run as Nylas would
            self.send(grant_id, request, key)
            return Answer(None, detail="connection reset after the request was sent")

        return script

    def error_cached_not_sent(self, answer: Answer) -> Callable[[str, str, str], Answer | None]:
        """A scripted send: nothing goes out and the key caches ``answer`` (a provider error, say)."""

        def script(grant_id: str, request: str, key: str) -> Answer:
            with self._lock:
                self._keys[(grant_id, key)] = _Key(
                    json.dumps(json.loads(request), sort_keys=True), self.clock(), answer
                )
            return answer

        return script

    def _release_due(self) -> None:
        """The queue sends what it has held ``queue_release_seconds`` (a Nylas-side moment)."""
        if self.queue_release_seconds is None:
            return
        now = self.clock()
        with self._lock:
            due = [e for e in self.queued if now - e.at >= self.queue_release_seconds]
            self.queued = [e for e in self.queued if e not in due]
        for email in due:
            # Sent when the queue sent it (not when someone next looked): the listing's lag counts from then.
            at = email.at + self.queue_release_seconds
            self._store(email.message, at)
            self.sent.append(replace(email, at=at))

    def release_queued(self, *, fail: bool = False) -> list[SentEmail]:
        """The Agent Account queue decides: every queued email goes out (or fails); returns them."""
        with self._lock:
            released, self.queued = self.queued, []
        for email in released if not fail else []:
            self._store(email.message)
            self.sent.append(replace(email, at=self.clock()))
        return released

    def send_went_out_but_answer(self, answer: Answer) -> Callable[[str, str, str], Answer | None]:
        """A scripted send: the email goes out and the key caches ``answer`` (a ``504`` after the send)."""

        def script(grant_id: str, request: str, key: str) -> Answer:
            self._deliver_reply(grant_id, json.loads(request), key)
            with self._lock:
                self._keys[(grant_id, key)] = _Key(
                    json.dumps(json.loads(request), sort_keys=True), self.clock(), answer
                )
            return answer

        return script

    def _deliver_reply(self, grant_id: str, request: dict[str, Any], key: str | None) -> Answer:
        message = self._reply_message(grant_id, request)
        if self.queue_sends:
            self.queued.append(SentEmail(grant_id, key, request, copy.deepcopy(message), self.clock()))
            return Answer(202, message_id=message["id"], nylas_time=int(self.clock()))
        self._store(message)
        self.sent.append(SentEmail(grant_id, key, request, copy.deepcopy(message), self.clock()))
        return Answer(200, message_id=message["id"], nylas_time=int(self.clock()))

    def _reply_message(self, grant_id: str, request: dict[str, Any]) -> dict[str, Any]:
        grant = self.grants[grant_id]
        target = next((m for m in self.messages if m["id"] == request.get("reply_to_message_id")), None)
        message = {
            "id": self._id("sent"),
            "object": "message",
            "grant_id": grant_id,
            "thread_id": target["thread_id"] if target else self._id("thread"),
            "subject": request.get("subject", ""),
            "from": [{"name": grant.name, "email": grant.email}],
            "to": request.get("to", []),
            "date": int(self.clock()),
            "body": request.get("body", ""),
            "folders": [folder_id("sent")],
            "headers": list(request.get("custom_headers") or []),
            "metadata": dict(request.get("metadata") or {}),
        }
        return message

    def create_draft(self, grant_id: str, request: str, files: Mapping[str, bytes] | None = None) -> Answer:
        self.calls.append("draft")
        payload = json.loads(request)
        grant = self.grants[grant_id]
        target = next((m for m in self.messages if m["id"] == payload.get("reply_to_message_id")), None)
        draft = {
            "id": self._id("draft"),
            "object": "draft",
            "grant_id": grant_id,
            "thread_id": target["thread_id"] if target else "",
            "from": [{"name": grant.name, "email": grant.email}],
            "to": payload.get("to", []),
            "subject": payload.get("subject", ""),
            "body": payload.get("body", ""),
            "metadata": dict(payload.get("metadata") or {}),
        }
        with self._lock:
            self.drafts.append(draft)
            self._arrived[draft["id"]] = self.clock()
        return Answer(200, message_id=draft["id"], nylas_time=int(self.clock()))

    def drafts_in_thread(self, grant_id: str, thread_id: str) -> list[Mail]:
        self.calls.append("drafts")
        return list(
            read_messages(
                [d for d in self.drafts if d["grant_id"] == grant_id and d["thread_id"] == thread_id]
            )
        )

    def move(self, grant_id: str, message_id: str, folder_id: str) -> None:
        self.calls.append("move")
        for message in self.messages:
            if message["id"] == message_id:
                message["folders"] = [folder_id]
