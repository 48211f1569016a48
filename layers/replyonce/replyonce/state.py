"""The state table (``STATE_TABLE``): what the replier remembers, and its item layout, in one place.

Six kinds of item share the table, told apart by the ``pk`` prefix:

``thread#{grant}#{thread}`` — one per thread, written under the thread's lease
    ``lease_owner`` (S), ``lease_expires_at`` (N, ms, worker clock)
        the lease; both absent when free.
    ``replies`` (M: intent id → N, Nylas time)
        the loop guard's memory: when each reply went out (or was queued).
        Keyed by intent, so recording one reply twice counts it once.
    ``covered`` (M: message id → N, Nylas time)
        messages settled by a reply, a draft, a decline, a hand-off or a
        refusal, newest :data:`COVERED_MEMORY` kept (older ones: the ledger
        and the replies' own metadata in the mailbox).
    ``outbox`` (M: intent id → M)
        the replies decided and not yet settled (:class:`Intent`), each
        stored before its first attempt. Its request is kept as text, or
        compressed, or — when even compressed it would crowd the item — in
        ``body#`` items named by its digest (:func:`stored_request`).
    ``expires_at`` (N) DynamoDB TTL.

``message#{grant}#{message}`` — the reply ledger, one per inbound message settled
    ``status`` (:class:`Status`), ``reply_message_id``, ``replied_to``,
    ``intent_id``, ``reason``, ``recorded_at`` (N), ``expires_at`` (N, TTL).

``recipient#{digest}#{hour}`` — the per-recipient budget of one hour of Nylas time
    ``intents`` (SS: the intents that reserved a reply to this address),
    ``expires_at`` (N, TTL). The address itself is not stored, only a digest.

``email#{digest of the Message-ID}`` — the claim of one email by the agent grant that answers it
    ``grant_id`` (S), ``expires_at`` (N, TTL).

``body#{intent}#{digest}#{index}`` — one chunk of a large intent's request (:func:`stored_request`)
    ``chunk`` (B: at most :data:`BODY_CHUNK_BYTES` of the zlib-compressed request),
    ``expires_at`` (N, TTL: the thread item's and :data:`BODY_TTL_GRACE_SECONDS` more).
    Written before the intent that names it; content-addressed, so never changed.

``shadow#{grant}#{record}`` — what the agent would have done, in shadow mode (:class:`ShadowRecord`)
    ``record`` is the burst's intent id (the key that makes a send once makes its record once) or
    ``message:{id}`` for a message a rule skipped; ``thread_id``, ``trigger_id``, ``covered`` (L of S),
    ``outcome``, ``reason``, ``text`` (the agent's reply, at most :data:`SHADOW_TEXT_CHARS`),
    ``at`` (N, Nylas time), ``expires_at`` (N, TTL). A burst's is written in the transaction that
    settles it (under the lease), a skipped message's by a conditional put: each once.

Why one module: the store, its in-memory fake and the ``thread-state`` ops
command all read these items; a layout known in one place cannot drift
between its readers. Items written by earlier versions (``reply_times`` and
``answered`` lists, a single-intent ``outbox``) are still read.
"""

import functools
import hashlib
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from replyonce.exceptions import StoredRequestLost
from replyonce.keys import KEY_SCHEME, LEGACY_KEY_SCHEME
from replyonce.recipients import mailbox_key

THREAD_PREFIX = "thread#"
MESSAGE_PREFIX = "message#"
RECIPIENT_PREFIX = "recipient#"
EMAIL_PREFIX = "email#"
BODY_PREFIX = "body#"
SHADOW_PREFIX = "shadow#"
SHADOW_TEXT_CHARS = 20_000
"""The most of the agent's reply text a shadow record keeps: enough to read beside a person's answer, and a
record stays a small item whatever the agent writes."""
CLAIMED_BY = "grant_id"

COVERED_MEMORY = 50
"""How many recently settled message ids the thread item remembers."""
REPLY_BUDGET_WINDOW_SECONDS = 3600
"""The loop guard's window (``REPLY_BUDGET_PER_HOUR``) and the per-recipient budget's hour."""
INLINE_REQUEST_BYTES = 16_384
"""The most a request takes of its thread item, as text or compressed; a larger one goes to body items.

Why this bound: the thread item (400 KB at most, as every DynamoDB item)
holds every unsettled intent of its thread besides its ``covered`` and
``replies`` maps, so each intent must stay small; and a typical reply, a few
KB of HTML, keeps the plain ``request`` text every earlier version reads.
"""
BODY_CHUNK_BYTES = 240_000
"""The compressed bytes one body item holds: under 350 KB an item however its binary is counted (raw, as
DynamoDB counts it, or as base64, as moto does: 320 KB)."""
BODY_TTL_GRACE_SECONDS = 7 * 24 * 3600
"""How much longer a body item is kept than its thread item. DynamoDB deletes an expired item "within a
few days", and a lease taken on a thread item past its TTL but not deleted yet keeps its outbox (and
renews its TTL and its bodies'): the bodies must still be there then."""

# Attribute names, for the expressions of the store that writes them.
LEASE_OWNER = "lease_owner"
LEASE_EXPIRES_AT = "lease_expires_at"
SINCE = "since"
CREATED = "created"
REPLIES = "replies"
COVERED = "covered"
OUTBOX = "outbox"
TTL = "expires_at"
REQUEST = "request"
REQUEST_COMPRESSED = "request_z"
REQUEST_BODY = "request_body"
CHUNK = "chunk"
_LEGACY_REPLY_TIMES = "reply_times"
_LEGACY_ANSWERED = "answered"


class Status(StrEnum):
    """How an inbound message was settled (the ledger's ``status``)."""

    REPLIED = "replied"
    """A reply covering it went out (a ``200``, the reply found in the mailbox, or ``message.delivered``)."""
    QUEUED = "queued"
    """Nylas accepted a reply covering it (``202``) and has not confirmed it went out."""
    DRAFTED = "drafted"
    """A draft covering it waits in the mailbox for a person (review mode)."""
    DECLINED = "declined"
    """The agent chose not to answer (``NoReply``)."""
    HANDED_OFF = "handed_off"
    """The agent left it for a person (``Handoff``)."""
    FAILED = "failed"
    """Its reply was refused for good (by Nylas or by the agent)."""
    SHADOWED = "shadowed"
    """Shadow mode decided it (a reply, a decline, a hand-off, a refusal) and recorded that, sending
    nothing (``REPLY_MODE=shadow``): never offered to the agent again, in shadow mode or after the switch."""
    OWN_REPLY = "own_reply"
    """It *is* one of our replies (the id the send returned): its own notification is never answered,
    whatever its ``from`` says (a provider's rewrite, a send-as alias)."""


class IntentKind(StrEnum):
    SEND = "send"
    """``POST /messages/send`` with an ``Idempotency-Key``."""
    DRAFT = "draft"
    """``POST /drafts`` (review mode): no key exists, so only the mailbox can tell a draft was made."""


class IntentState(StrEnum):
    SENDING = "sending"
    """Being sent: no answer has settled it."""
    QUEUED = "queued"
    """Nylas answered ``202``: waiting for ``message.delivered``, ``message.send_failed`` or the reconcile."""


def body_key(intent_id: str, digest: str, index: int) -> str:
    """The body item holding chunk ``index`` of the request whose SHA-256 is ``digest``, for ``intent_id``.

    Why the digest in the key: two workers can hold the same burst's intent
    id with different replies (a lost lease, an agent asked twice), and one's
    unconditioned body write must never change the bytes another's stored
    intent names. Content-addressed, a body item is written once and never
    changes; a write of the same request again writes the same chunk.
    """
    return f"{BODY_PREFIX}{intent_id}#{digest[:32]}#{index}"


TABLE_BEGAN_KEY = "table#began"
"""The item that says when the state table began (``since``, ms, worker clock): written by the first lease
of a table that has none — a new table, or one whose items were all deleted."""


def table_began_item(began_ms: int) -> dict[str, Any]:
    """The ``table#began`` item (never expires: it outlives every thread item)."""
    return {"pk": {"S": TABLE_BEGAN_KEY}, SINCE: {"N": str(began_ms)}}


def since_ms(item: Mapping[str, Any]) -> int:
    """A ``thread#`` or ``table#began`` item's ``since`` (ms), ``0`` when it has none."""
    return _number(item.get(SINCE))


def lease_expiry_ms(item: Mapping[str, Any]) -> int:
    """The lease's end on a ``thread#`` item (ms, worker clock), ``0`` when free: read without its outbox."""
    return _number(item.get(LEASE_EXPIRES_AT))


def thread_key(grant_id: str, thread_id: str) -> str:
    return f"{THREAD_PREFIX}{grant_id}#{thread_id}"


def _is_x_header(header: Any) -> bool:
    return isinstance(header, Mapping) and str(header.get("name", "")).lower().startswith("x-")


def message_key(grant_id: str, message_id: str) -> str:
    return f"{MESSAGE_PREFIX}{grant_id}#{message_id}"


def email_key(header_message_id: str) -> str:
    """The claim item of one email (its ``Message-ID`` header, the same in every mailbox it reached)."""
    normalised = header_message_id.strip().strip("<>").strip().lower()
    return f"{EMAIL_PREFIX}{hashlib.sha256(normalised.encode()).hexdigest()[:32]}"


def recipient_key(email: str) -> str:
    """The budget item of the inbox ``email`` reaches: a digest, never the address itself.

    A digest of :func:`replyonce.recipients.mailbox_key`, not of the
    address: every spelling of one inbox (case, ``+tags``, Gmail's dots,
    ``googlemail.com``, a Unicode or an A-label domain) counts against one
    budget. The item holds the replies of the last hour as slots
    (:func:`recipient_slot`): a sliding hour, so twice the budget never fits
    across a clock hour's edge. Items of the earlier layout
    (``recipient#{digest}#{hour}``) are other keys, counters of an hour that
    DynamoDB's TTL removes by the end of the next: a deploy counts one
    recipient's current hour from zero, at worst once.
    """
    digest = hashlib.sha256(mailbox_key(email).encode()).hexdigest()[:32]
    return f"{RECIPIENT_PREFIX}{digest}"


def recipient_slot(index: int) -> str:
    """The attribute of a recipient item's ``index``-th slot: ``{"i": intent id, "t": Nylas time}``."""
    return f"slot{index}"


def _number(value: Mapping[str, Any] | None, default: int = 0) -> int:
    try:
        return int((value or {}).get("N", default))
    except (TypeError, ValueError):
        return default


def _string(value: Mapping[str, Any] | None) -> str:
    return str((value or {}).get("S", ""))


def _times(attribute: Mapping[str, Any] | None) -> dict[str, int]:
    """A ``M`` of id → N; an old list of N (times without ids) is keyed by position."""
    if not attribute:
        return {}
    if "M" in attribute:
        return {key: _number(value) for key, value in attribute["M"].items()}
    if "L" in attribute:
        values = attribute["L"]
        if values and "S" in values[0]:  # old ``answered``: ids, no times
            return {_string(v): 0 for v in values}
        return {f"legacy-{i}": _number(v) for i, v in enumerate(values)}
    return {}


def request_digest(request: str) -> str:
    """SHA-256 (hex) of the request's UTF-8 bytes: what a body read back must hash to."""
    return hashlib.sha256(request.encode()).hexdigest()


@dataclass(frozen=True)
class StoredRequest:
    """How one request is kept: the fields its intent's attribute holds, and its body items' chunks.

    Attributes
    ----------
    fields:
        The request's fields of the intent attribute: ``request`` (S, the text itself),
        ``request_z`` (B, zlib-compressed) or ``request_body`` (M: ``digest``, ``chunks``,
        ``bytes``: where the body items are, and what they must hash to).
    digest:
        :func:`request_digest` of the request.
    chunks:
        The compressed request in body-item chunks, in order; empty when it fits in the thread item.
    """

    fields: Mapping[str, Any]
    digest: str
    chunks: tuple[bytes, ...] = ()

    def body_items(self, intent_id: str, expires_at: int) -> list[dict[str, Any]]:
        """The ``body#`` items to write before an intent naming this request is."""
        return [
            {
                "pk": {"S": body_key(intent_id, self.digest, index)},
                CHUNK: {"B": chunk},
                TTL: {"N": str(expires_at)},
            }
            for index, chunk in enumerate(self.chunks)
        ]


@functools.lru_cache(maxsize=4)
def stored_request(request: str) -> StoredRequest:
    """The form ``request`` is kept in: as text, compressed in the thread item, or in body items.

    Up to :data:`INLINE_REQUEST_BYTES` the text itself (what earlier versions
    wrote and read); then zlib, in the thread item while the compressed bytes
    fit the same bound; beyond, in body items of :data:`BODY_CHUNK_BYTES`.
    Cached: one record writes one intent several times (stored, attempted,
    queued), and compressing 3 MB each time would cost tens of milliseconds.
    """
    text = request.encode()
    digest = hashlib.sha256(text).hexdigest()
    if len(text) <= INLINE_REQUEST_BYTES:
        return StoredRequest({REQUEST: {"S": request}}, digest)
    compressed = zlib.compress(text)
    if len(compressed) <= INLINE_REQUEST_BYTES:
        return StoredRequest({REQUEST_COMPRESSED: {"B": compressed}}, digest)
    chunks = tuple(
        compressed[start : start + BODY_CHUNK_BYTES] for start in range(0, len(compressed), BODY_CHUNK_BYTES)
    )
    reference = {
        "digest": {"S": digest},
        "chunks": {"N": str(len(chunks))},
        "bytes": {"N": str(len(text))},
    }
    return StoredRequest({REQUEST_BODY: {"M": reference}}, digest, chunks)


@dataclass(frozen=True)
class BodyRef:
    """An intent's request kept in body items: which items, and the digest their bytes must have."""

    intent_id: str
    digest: str
    chunks: int

    def item_keys(self) -> list[str]:
        return [body_key(self.intent_id, self.digest, index) for index in range(self.chunks)]


def _outbox_entries(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """The outbox map's entries (an earlier version's single intent has no body items: none)."""
    if is_legacy_outbox(item):
        return {}
    return (item.get(OUTBOX) or {}).get("M") or {}


def body_refs(item: Mapping[str, Any]) -> tuple[BodyRef, ...]:
    """The requests a ``thread#`` item's outbox keeps in body items, to be read before the item is."""
    refs = []
    for entry in _outbox_entries(item).values():
        fields = entry.get("M") or {}
        reference = (fields.get(REQUEST_BODY) or {}).get("M")
        if reference and REQUEST not in fields:
            refs.append(
                BodyRef(
                    _string(fields.get("intent_id")),
                    _string(reference.get("digest")),
                    _number(reference.get("chunks")),
                )
            )
    return tuple(refs)


def request_of(ref: BodyRef, chunks: Sequence[bytes]) -> str:
    """The request the chunks read back hold, checked against the digest its intent names.

    Why the check: a send must carry the stored bytes exactly or not at all;
    a chunk missing, cut or not this request's raises instead.
    """
    try:
        text = zlib.decompress(b"".join(chunks))
    except zlib.error as exc:
        raise StoredRequestLost(f"intent {ref.intent_id}: its request body does not decompress") from exc
    if len(chunks) != ref.chunks or hashlib.sha256(text).hexdigest() != ref.digest:
        raise StoredRequestLost(f"intent {ref.intent_id}: its request body is not the bytes it names")
    return text.decode()


def with_requests(item: Mapping[str, Any], requests: Mapping[str, str]) -> dict[str, Any]:
    """The ``thread#`` item with each body-kept request (by digest) in its intent, as if kept inline."""
    entries = dict(_outbox_entries(item))
    for intent_id, entry in entries.items():
        fields = entry.get("M") or {}
        reference = (fields.get(REQUEST_BODY) or {}).get("M")
        digest = _string((reference or {}).get("digest"))
        if reference and digest in requests:
            entries[intent_id] = {"M": {**fields, REQUEST: {"S": requests[digest]}}}
    return {**item, OUTBOX: {"M": entries}} if entries else dict(item)


def _request(fields: Mapping[str, Any]) -> str:
    """The request an intent attribute holds, inline or compressed; a body-kept one must be read first."""
    if REQUEST in fields:
        return _string(fields.get(REQUEST))
    if REQUEST_COMPRESSED in fields:
        return zlib.decompress(bytes(fields[REQUEST_COMPRESSED]["B"])).decode()
    if REQUEST_BODY in fields:
        raise StoredRequestLost(
            f"intent {_string(fields.get('intent_id'))}: its request is in body items not read"
        )
    return ""


@dataclass(frozen=True)
class Intent:
    """A reply decided and stored before its first attempt: one entry of the outbox.

    Every attempt — by this worker, another one, after a crash, a timeout or a
    DLQ redrive hours later — sends ``request`` byte for byte, so an agent
    that answers differently each time can never produce a second, different
    email. What the attempts so far may have done is kept with it, so a later
    worker decides as the first one would have.

    Attributes
    ----------
    id:
        The intent's id, sent in the reply's metadata (``key1``).
    thread_id, target_id:
        The thread, and the message replied to (``reply_to_message_id``).
    covered:
        Every message id the reply answers (the burst the agent saw).
    request:
        The exact JSON body of ``POST /messages/send`` (or ``POST /drafts``), whatever its size: the
        store keeps it apart from the thread item when large (:func:`stored_request`) and reads it
        back, checked against its digest, before an intent is ever built from the item.
    kind:
        A send or a draft.
    generation, key_scheme:
        The ``Idempotency-Key``'s parts besides grant and target.
    created_at:
        Nylas time the intent was stored.
    attempts, first_attempt_at, last_attempt_at:
        Attempts made under this generation (each stored *before* it is made),
        and their Nylas times: the key lives one hour from the first; "may
        have sent" dates from the last.
    state, accepted_at, reply_message_id:
        ``queued`` after a ``202`` (when and which message Nylas queued).
    reopened:
        How often a ``message.send_failed`` re-opened it (it is sent again once).
    key_stuck:
        The key can only replay an answer that may have sent (a replayed error, a ``409
        invalid_idempotent_request``): only the mailbox can tell, after the settle time.
    drop_headers:
        Nylas refused a request with ``custom_headers``: the next generation goes without them.
    """

    id: str
    thread_id: str
    target_id: str
    covered: tuple[str, ...]
    request: str
    kind: IntentKind = IntentKind.SEND
    generation: int = 0
    key_scheme: int = KEY_SCHEME
    created_at: int = 0
    attempts: int = 0
    first_attempt_at: int = 0
    last_attempt_at: int = 0
    state: IntentState = IntentState.SENDING
    accepted_at: int = 0
    reply_message_id: str = ""
    reopened: int = 0
    key_stuck: bool = False
    drop_headers: bool = False

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.request)

    @property
    def has_custom_headers(self) -> bool:
        """Whether the request carries a custom header a provider may refuse: one without the ``X-``
        prefix (Microsoft Graph accepts only ``X-`` names); ``X-`` headers are kept on every retry."""
        return any(not _is_x_header(h) for h in self.payload.get("custom_headers") or [])

    def attempting(self, now: int) -> "Intent":
        """This intent with one more attempt about to be made at Nylas time ``now``."""
        return replace(
            self,
            attempts=self.attempts + 1,
            first_attempt_at=self.first_attempt_at or now,
            last_attempt_at=now,
        )

    def stuck(self, *, drop_headers: bool = False) -> "Intent":
        """This intent once its key can only replay: the next generation waits for the mailbox's word."""
        return replace(self, key_stuck=True, drop_headers=self.drop_headers or drop_headers)

    def next_generation(self, *, without_custom_headers: bool = False) -> "Intent":
        """The same reply under the next key, nothing attempted yet (only once nothing can be out)."""
        request = self.request
        if without_custom_headers or self.drop_headers:
            # Only the headers a provider may refuse go: the X- marks stay, so other robots still see
            # an automatic reply (Exchange's X-Auto-Response-Suppress, ReplyOnce's own X-ReplyOnce).
            payload = self.payload
            kept = [h for h in payload.pop("custom_headers", None) or [] if _is_x_header(h)]
            if kept:
                payload["custom_headers"] = kept
            request = json.dumps(payload, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        return replace(
            self,
            request=request,
            generation=self.generation + 1,
            attempts=0,
            first_attempt_at=0,
            last_attempt_at=0,
            state=IntentState.SENDING,
            accepted_at=0,
            reply_message_id="",
            key_stuck=False,
            drop_headers=False,
        )

    def queued(self, accepted_at: int, reply_message_id: str) -> "Intent":
        """This intent after a ``202``: accepted by Nylas' queue, not sent."""
        return replace(
            self, state=IntentState.QUEUED, accepted_at=accepted_at, reply_message_id=reply_message_id
        )

    def reopen(self) -> "Intent":
        """Sent again after Nylas said the queued reply failed (``message.send_failed``)."""
        return replace(self.next_generation(), reopened=self.reopened + 1)

    def to_attribute(self) -> dict[str, Any]:
        return {
            "M": {
                "intent_id": {"S": self.id},
                "thread_id": {"S": self.thread_id},
                "target_id": {"S": self.target_id},
                "covered": {"L": [{"S": m} for m in self.covered]},
                **stored_request(self.request).fields,
                "kind": {"S": self.kind.value},
                "generation": {"N": str(self.generation)},
                "key_scheme": {"N": str(self.key_scheme)},
                "created_at": {"N": str(self.created_at)},
                "attempts": {"N": str(self.attempts)},
                "first_attempt_at": {"N": str(self.first_attempt_at)},
                "last_attempt_at": {"N": str(self.last_attempt_at)},
                "state": {"S": self.state.value},
                "accepted_at": {"N": str(self.accepted_at)},
                "reply_message_id": {"S": self.reply_message_id},
                "reopened": {"N": str(self.reopened)},
                "key_stuck": {"BOOL": self.key_stuck},
                "drop_headers": {"BOOL": self.drop_headers},
            }
        }

    @classmethod
    def from_attribute(cls, attribute: Mapping[str, Any] | None, thread_id: str = "") -> "Intent | None":
        fields = (attribute or {}).get("M")
        if not fields or "intent_id" not in fields:
            return None
        legacy = "key_scheme" not in fields
        return cls(
            id=_string(fields.get("intent_id")),
            thread_id=_string(fields.get("thread_id")) or thread_id,
            target_id=_string(fields.get("target_id")),
            covered=tuple(_string(m) for m in fields.get("covered", {}).get("L", [])),
            request=_request(fields),
            kind=IntentKind(_string(fields.get("kind")) or IntentKind.SEND),
            generation=_number(fields.get("generation")),
            key_scheme=LEGACY_KEY_SCHEME if legacy else _number(fields.get("key_scheme"), KEY_SCHEME),
            created_at=_number(fields.get("created_at")),
            # An intent of an earlier version was stored before its first attempt, which may have been made.
            attempts=1 if legacy else _number(fields.get("attempts")),
            first_attempt_at=_number(fields.get("first_attempt_at"), _number(fields.get("created_at"))),
            last_attempt_at=_number(fields.get("last_attempt_at"), _number(fields.get("created_at"))),
            state=IntentState(_string(fields.get("state")) or IntentState.SENDING),
            accepted_at=_number(fields.get("accepted_at")),
            reply_message_id=_string(fields.get("reply_message_id")),
            reopened=_number(fields.get("reopened")),
            key_stuck=bool((fields.get("key_stuck") or {}).get("BOOL", False)),
            drop_headers=bool((fields.get("drop_headers") or {}).get("BOOL", False)),
        )


def outbox_attribute(intents: Mapping[str, Intent]) -> dict[str, Any]:
    return {"M": {intent_id: intent.to_attribute() for intent_id, intent in intents.items()}}


def _outbox(attribute: Mapping[str, Any] | None, thread_id: str) -> dict[str, Intent]:
    """The outbox map; an earlier version's single intent becomes a map of one."""
    single = Intent.from_attribute(attribute, thread_id)
    if single is not None:
        return {single.id: single}
    intents: dict[str, Intent] = {}
    for value in ((attribute or {}).get("M") or {}).values():
        intent = Intent.from_attribute(value, thread_id)
        if intent is not None:
            intents[intent.id] = intent
    return intents


def is_legacy_outbox(item: Mapping[str, Any]) -> bool:
    """Whether the item holds an earlier version's single-intent outbox (rewritten as a map on lease)."""
    return "intent_id" in ((item.get(OUTBOX) or {}).get("M") or {})


def thread_of(key: str) -> str:
    """The thread id of a ``thread#{grant}#{thread}`` key (thread ids may contain ``#``)."""
    return key.split("#", 2)[2] if key.count("#") >= 2 else ""


@dataclass(frozen=True)
class ThreadState:
    """What a ``thread#`` item says (read in the same request that took the lease)."""

    replies: Mapping[str, int] = field(default_factory=dict)
    covered: Mapping[str, int] = field(default_factory=dict)
    outbox: Mapping[str, Intent] = field(default_factory=dict)
    lease_owner: str = ""
    lease_expires_at_ms: int = 0
    since_ms: int = 0
    """When the state table this item was created in began (``table#began`` as the item's first lease
    found it; ms, the worker's clock, as the lease's); ``0`` for an item older than the attribute. A table
    emptied or recreated begins again: what it knew before is only in the mailbox, or still on its way."""
    created_ms: int = 0
    """When this item was created (ms, the worker's clock): by the lease that found no item — a new
    thread, or one whose item a restore, a hand deletion or a replica that lacks it took away. ``0`` for
    an item older than the attribute (or created in a table that began with it: ``since_ms`` says it)."""

    @property
    def began_ms(self) -> int:
        """Since when the thread's state is known to be whole: its table's beginning. Before it, a reply of
        the thread may be known only to a state that is gone.

        Why not the item's own creation (issue 48 built that, and took it back before it shipped): a
        thread no lease has seen and one whose item a restore took away read the same, so every new
        thread's first burst of two messages, a customer writing twice seconds apart, waited
        ``PENDING_CONFIRM_SECONDS`` (600 s) for its reply, and ``make demo`` could not answer its
        bursts. A restore while mail flows, or items deleted by hand, is left to the runbook's stop
        (``docs/operations.md``); ``created_ms`` is kept on the item for the day a restore can be told
        apart from a new thread.
        """
        return self.since_ms

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> "ThreadState":
        thread_id = thread_of(_string(item.get("pk")))
        return cls(
            replies=_times(item.get(REPLIES)) or _times(item.get(_LEGACY_REPLY_TIMES)),
            covered=_times(item.get(COVERED)) or _times(item.get(_LEGACY_ANSWERED)),
            outbox=_outbox(item.get(OUTBOX), thread_id),
            lease_owner=_string(item.get(LEASE_OWNER)),
            lease_expires_at_ms=_number(item.get(LEASE_EXPIRES_AT)),
            since_ms=_number(item.get(SINCE)),
            created_ms=_number(item.get(CREATED)),
        )

    def intent_covering(self, message_id: str) -> Intent | None:
        """The stored intent whose reply answers ``message_id``, if any."""
        return next((i for i in self.outbox.values() if message_id in i.covered), None)

    def settled_ids(self) -> frozenset[str]:
        """Every message id our state says is settled or about to be: covered, or in a stored intent."""
        pending = {m for intent in self.outbox.values() for m in intent.covered}
        return frozenset(self.covered) | pending


@dataclass(frozen=True)
class LedgerEntry:
    """What a ``message#`` item says: how the agent settled one inbound message."""

    message_id: str
    status: Status
    reply_message_id: str = ""
    replied_to: str = ""
    intent_id: str = ""
    reason: str = ""
    recorded_at: int = 0

    @classmethod
    def from_item(cls, message_id: str, item: Mapping[str, Any]) -> "LedgerEntry":
        try:
            status = Status(_string(item.get("status")))
        except ValueError:
            # Written by a newer version: settled somehow, so never answered again by this one.
            status = Status.FAILED
        return cls(
            message_id=message_id,
            status=status,
            reply_message_id=_string(item.get("reply_message_id")),
            replied_to=_string(item.get("replied_to")),
            intent_id=_string(item.get("intent_id")),
            reason=_string(item.get("reason")),
            recorded_at=_number(item.get("recorded_at")),
        )

    def to_item(self, grant_id: str, expires_at: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "pk": {"S": message_key(grant_id, self.message_id)},
            "status": {"S": self.status.value},
            "reply_message_id": {"S": self.reply_message_id},
            "recorded_at": {"N": str(self.recorded_at)},
            TTL: {"N": str(expires_at)},
        }
        for name in ("replied_to", "intent_id", "reason"):
            value = getattr(self, name)
            if value:
                item[name] = {"S": value}
        return item


@dataclass
class Lease:
    """A held thread lease: the token proves ownership in every later write.

    ``state`` is the thread item as the lease acquisition returned it, kept up
    to date by the shell as it stores intents. ``bodies`` names (by their
    first item's key) the request bodies read with the lease or written under
    it: they stay in the table far longer than any lease, so storing their
    intent again (its attempt, its queued state) writes no body item again.
    """

    key: str
    token: str
    expires_at_ms: int
    state: ThreadState = field(default_factory=ThreadState)
    released: bool = False
    bodies: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Reservation:
    """A reply to ``email`` at Nylas time ``at``, counted against ``budget`` replies in the hour before it."""

    email: str
    at: int
    budget: int

    @property
    def since(self) -> int:
        """Replies before this moment no longer count (the sliding hour)."""
        return self.at - REPLY_BUDGET_WINDOW_SECONDS


class ShadowOutcome(StrEnum):
    """What the agent would have done with a burst or a message, in shadow mode."""

    REPLY = "reply"
    """It would have sent (or drafted) this reply."""
    DECLINED = "declined"
    """The agent returned ``NoReply``."""
    HANDED_OFF = "handed_off"
    """The agent returned ``Handoff`` (or a reply too large for Nylas)."""
    REJECTED = "rejected"
    """The agent refused the burst for good (``AgentRejected``)."""
    SKIPPED = "skipped"
    """A rule skipped the message before or instead of the agent (``reason``: the skip reason)."""


def shadow_key(grant_id: str, record_id: str) -> str:
    return f"{SHADOW_PREFIX}{grant_id}#{record_id}"


def skipped_record_id(message_id: str) -> str:
    """The record id of a message a rule skipped: one record per message, however often it is delivered."""
    return f"message:{message_id}"


@dataclass(frozen=True)
class ShadowRecord:
    """What shadow mode recorded for one burst (``record_id``: its intent id) or one skipped message.

    Attributes
    ----------
    grant_id, thread_id:
        Where.
    record_id:
        The burst's intent id, or :func:`skipped_record_id` of the skipped message.
    trigger_id:
        The message the reply would have answered (the burst's newest), or the skipped message.
    covered:
        The messages the reply would have answered (the skipped message alone for a skip).
    outcome, reason:
        What the agent or the rules decided, and why (a skip reason, the agent's own reason).
    text:
        The agent's reply (also for a reply dropped because a person answered while it drafted).
    at:
        Nylas' time of the decision (the thread read), else the message's ``date``: the report's period.
    """

    grant_id: str
    record_id: str
    thread_id: str
    trigger_id: str
    covered: tuple[str, ...]
    outcome: ShadowOutcome
    reason: str = ""
    text: str = ""
    at: int = 0

    def to_item(self, expires_at: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "pk": {"S": shadow_key(self.grant_id, self.record_id)},
            "thread_id": {"S": self.thread_id},
            "trigger_id": {"S": self.trigger_id},
            "covered": {"L": [{"S": m} for m in self.covered]},
            "outcome": {"S": self.outcome.value},
            "at": {"N": str(self.at)},
            TTL: {"N": str(expires_at)},
        }
        if self.reason:
            item["reason"] = {"S": self.reason[:500]}
        if self.text:
            item["text"] = {"S": self.text[:SHADOW_TEXT_CHARS]}
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> "ShadowRecord":
        key = _string(item.get("pk"))
        grant_id, _, record_id = key.removeprefix(SHADOW_PREFIX).partition("#")
        try:
            outcome = ShadowOutcome(_string(item.get("outcome")))
        except ValueError:
            outcome = ShadowOutcome.SKIPPED
        covered = tuple(_string(v) for v in (item.get("covered") or {}).get("L", []))
        return cls(
            grant_id=grant_id,
            record_id=record_id,
            thread_id=_string(item.get("thread_id")),
            trigger_id=_string(item.get("trigger_id")),
            covered=covered,
            outcome=outcome,
            reason=_string(item.get("reason")),
            text=_string(item.get("text")),
            at=_number(item.get("at")),
        )


@dataclass(frozen=True)
class Settlement:
    """How a burst (or a stored intent) ends: what the store writes in one transaction.

    Attributes
    ----------
    status:
        The ledger status of every ``covered`` message.
    covered:
        The messages settled.
    at:
        Nylas time (the thread item's ``covered`` map, and the loop guard when ``counts_as_reply``).
    intent:
        The intent this settles: removed from the outbox, or kept (``keep``) as it now is.
    keep:
        Keep ``intent`` in the outbox (a queued reply waits for its confirmation).
    counts_as_reply:
        Counted by the loop guard (a reply sent or queued).
    reply_message_id, replied_to, reason:
        For the ledger entries.
    shadow:
        Shadow mode: the burst's :class:`ShadowRecord`, written in the same transaction as the ledger
        entries, so a burst is recorded exactly when it is settled.
    """

    status: Status
    covered: tuple[str, ...]
    at: int
    intent: Intent | None = None
    keep: bool = False
    counts_as_reply: bool = False
    reply_message_id: str = ""
    replied_to: str = ""
    reason: str = ""
    shadow: ShadowRecord | None = None

    @property
    def writes_without_lease(self) -> bool:
        """Whether a holder that lost the lease still writes this settlement (by key, without the lease).

        A reply's yes: what happened at Nylas happened either way. A shadow settlement's no: nothing
        happened at Nylas, and the new holder plans the thread again and records what it decides; a
        stale holder's record beside it would record the burst's messages twice.
        """
        return self.shadow is None

    def ledger_entries(self, recorded_at: int) -> list[LedgerEntry]:
        """The covered messages' entries, and one for the reply itself when the send returned its id."""
        intent_id = self.intent.id if self.intent is not None else ""
        entries = [
            LedgerEntry(
                m, self.status, self.reply_message_id, self.replied_to, intent_id, self.reason, recorded_at
            )
            for m in dict.fromkeys(self.covered)
        ]
        if self.reply_message_id and self.status in (Status.REPLIED, Status.QUEUED):
            entries.append(
                LedgerEntry(self.reply_message_id, Status.OWN_REPLY, "", "", intent_id, "", recorded_at)
            )
        return entries

    def thread_after(self, state: ThreadState) -> ThreadState:
        """The thread state this settlement leaves (lease fields untouched)."""
        replies = dict(state.replies)
        if self.counts_as_reply and self.intent is not None:
            since = self.at - REPLY_BUDGET_WINDOW_SECONDS
            replies = {rid: t for rid, t in replies.items() if t >= since and rid != self.intent.id}
            replies[self.intent.id] = self.at
        elif self.intent is not None:
            # It never went out (a queued reply Nylas failed twice, a final refusal): not a reply.
            replies.pop(self.intent.id, None)
        covered = dict(state.covered) | dict.fromkeys(self.covered, self.at)
        newest = dict(sorted(covered.items(), key=lambda pair: pair[1])[-COVERED_MEMORY:])
        outbox = dict(state.outbox)
        if self.intent is not None:
            outbox.pop(self.intent.id, None)
            if self.keep:
                outbox[self.intent.id] = self.intent
        return replace(state, replies=replies, covered=newest, outbox=outbox)
