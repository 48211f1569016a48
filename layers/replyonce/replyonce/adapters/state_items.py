"""The state table's item layout (``STATE_TABLE``): keys, attribute names, DynamoDB's attribute values.

Eight kinds of item share the table, told apart by the ``pk`` prefix:

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
        the replies decided and not yet settled (:class:`~replyonce.state.Intent`), each
        stored before its first attempt. Its request is in ``body#`` items named
        by its digest (:func:`stored_request`; issue 46: the thread item stays
        small, its writes a unit or two); an earlier version's, as text or compressed.
    ``settled_by`` (S)
        the lease token of the last settlement written under the lease: a retry of that write
        whose first answer was lost finds its own token, and knows it was written.
    ``expires_at`` (N) DynamoDB TTL.

``message#{grant}#{message}`` — the reply ledger, one per inbound message settled
    ``status`` (:class:`~replyonce.state.Status`), ``reply_message_id``, ``replied_to``,
    ``intent_id``, ``reason``, ``recorded_at`` (N), ``expires_at`` (N, TTL).

``recipient#{digest}#{hour}`` — the per-recipient budget of one hour of Nylas time
    ``intents`` (SS: the intents that reserved a reply to this address),
    ``expires_at`` (N, TTL). The address itself is not stored, only a digest.

``email#{digest of the Message-ID}`` — the claim of one email by the agent grant that answers it
    ``grant_id`` (S), ``expires_at`` (N, TTL).

``body#{intent}#{digest}#{index}`` — one chunk of an intent's request (:func:`stored_request`)
    ``chunk`` (B: at most :data:`BODY_CHUNK_BYTES` of the zlib-compressed request),
    ``expires_at`` (N, TTL: the thread item's and :data:`BODY_TTL_GRACE_SECONDS` more).
    Written before the intent that names it; content-addressed, so never changed.

``shadow#{grant}#{record}`` — what the agent would have done in shadow mode (``state.ShadowRecord``)
    ``record`` is the burst's intent id (the key that makes a send once makes its record once) or
    ``message:{id}`` for a message a rule skipped; ``thread_id``, ``trigger_id``, ``covered`` (L of S),
    ``outcome``, ``reason``, ``text`` (the agent's reply, at most :data:`SHADOW_TEXT_CHARS`),
    ``at`` (N, Nylas time), ``expires_at`` (N, TTL). A burst's is written in the transaction that
    settles it (under the lease), a skipped message's by a conditional put: each once.

``calls#{grant}#{day}`` — a grant's agent calls of one UTC day, under its ``daily_agent_call_cap``
    ``calls`` (N: the bursts counted), ``cap`` (N: the cap they were counted under), ``refused_at`` (N,
    worker clock: the day's first burst refused over the cap; absent until then), ``expires_at`` (N, TTL:
    the day's end and :data:`AGENT_CALLS_GRACE_SECONDS`). Written only for a grant with a cap.

``call#{grant}#{day}#{intent}`` — one burst counted that day (``expires_at``, as its day's count): written
    in the count's transaction, it makes the count idempotent per burst (a retry finds it, counts nothing).

Why one module: the store, its in-memory fake and the ``thread-state`` ops
command all read these items; a layout known in one place cannot drift
between its readers. What the items *mean* — the values the core decides
with (:class:`~replyonce.state.Intent`, :class:`~replyonce.state.ThreadState`,
:class:`~replyonce.state.LedgerEntry`, :class:`~replyonce.state.ShadowRecord`)
— is ``replyonce.state``, which knows nothing of DynamoDB; this module turns
them into items and back. Items written by earlier versions (``reply_times`` and
``answered`` lists, a single-intent ``outbox``) are still read.
"""

import functools
import hashlib
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replyonce.exceptions import StoredRequestLost
from replyonce.keys import KEY_SCHEME, LEGACY_KEY_SCHEME
from replyonce.rules.recipients import mailbox_key
from replyonce.state import (
    THREAD_PREFIX,
    Intent,
    IntentKind,
    IntentState,
    LedgerEntry,
    ShadowOutcome,
    ShadowRecord,
    Status,
    ThreadState,
)

MESSAGE_PREFIX = "message#"
RECIPIENT_PREFIX = "recipient#"
EMAIL_PREFIX = "email#"
BODY_PREFIX = "body#"
SHADOW_PREFIX = "shadow#"
AGENT_CALLS_PREFIX = "calls#"
AGENT_CALL_PREFIX = "call#"
AGENT_CALLS_GRACE_SECONDS = 86_400
"""How long a day's agent-call items outlive the day: ``make grants show`` reads yesterday's count too, and
DynamoDB's TTL deletes late anyway (never read as today's: the day is in the key)."""
CALLS = "calls"
CALLS_CAP = "cap"
REFUSED_AT = "refused_at"
SHADOW_TEXT_CHARS = 20_000
"""The most of the agent's reply text a shadow record keeps: enough to read beside a person's answer, and a
record stays a small item whatever the agent writes."""
CLAIMED_BY = "grant_id"

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
SETTLED_BY = "settled_by"
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


def message_key(grant_id: str, message_id: str) -> str:
    return f"{MESSAGE_PREFIX}{grant_id}#{message_id}"


def email_key(header_message_id: str) -> str:
    """The claim item of one email (its ``Message-ID`` header, the same in every mailbox it reached)."""
    normalised = header_message_id.strip().strip("<>").strip().lower()
    return f"{EMAIL_PREFIX}{hashlib.sha256(normalised.encode()).hexdigest()[:32]}"


def recipient_key(email: str) -> str:
    """The budget item of the inbox ``email`` reaches: a digest, never the address itself.

    A digest of :func:`replyonce.rules.recipients.mailbox_key`, not of the
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


def agent_calls_key(grant_id: str, day: str) -> str:
    """A grant's agent-call count of the UTC ``day`` (``YYYY-MM-DD``)."""
    return f"{AGENT_CALLS_PREFIX}{grant_id}#{day}"


def agent_call_key(grant_id: str, day: str, intent_id: str) -> str:
    """The mark that the burst ``intent_id`` is counted in its grant's ``day``."""
    return f"{AGENT_CALL_PREFIX}{grant_id}#{day}#{intent_id}"


@dataclass(frozen=True)
class AgentCallDay:
    """A grant's agent calls of one day as the count item holds them (``make grants show``)."""

    calls: int = 0
    cap: int = 0
    refused_at: int = 0


def agent_call_day_of(item: Mapping[str, Any] | None) -> AgentCallDay:
    """The count item (``None``: no call counted that day) as a value."""
    item = item or {}
    return AgentCallDay(_number(item.get(CALLS)), _number(item.get(CALLS_CAP)), _number(item.get(REFUSED_AT)))


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


ONE_WRITE_UNIT_BYTES = 1024
"""The largest item one write unit writes (DynamoDB bills a write a unit per KB of the item)."""


def item_bytes(item: Mapping[str, Any]) -> int:
    """An item's size as DynamoDB bills it: each attribute's name and value (strings as UTF-8, binary as
    its bytes, a number a byte per two digits and one), for the flat items this module writes."""
    size = 0
    for name, value in item.items():
        size += len(name.encode())
        if "S" in value:
            size += len(value["S"].encode())
        elif "B" in value:
            size += len(value["B"])
        elif "N" in value:
            size += (len(value["N"].lstrip("-").replace(".", "")) + 1) // 2 + 1
        else:
            return ONE_WRITE_UNIT_BYTES + 1  # not flat: never counted as small
    return size


@functools.lru_cache(maxsize=4)
def stored_request(request: str) -> StoredRequest:
    """The form ``request`` is kept in: zlib-compressed in body items of :data:`BODY_CHUNK_BYTES`, the
    thread item naming them (``request_body``); an empty request as itself.

    Why every request out of the thread item (issue 46): each write of the thread item under the lease
    (the lease itself, the intent stored, attempted, settled) is billed by the item's size, a unit per
    KB; a request kept in it (a reply's HTML, a few KB) made each of them several units. A body item is
    written once, before the intent that names it, and the thread item stays within a unit or two.
    Cached: one record writes one intent several times (stored, attempted, queued), and compressing
    3 MB each time would cost tens of milliseconds. Items an earlier version wrote (``request`` text,
    ``request_z`` compressed in the thread item) are still read.
    """
    text = request.encode()
    digest = hashlib.sha256(text).hexdigest()
    if not text:
        return StoredRequest({REQUEST: {"S": request}}, digest)
    compressed = zlib.compress(text)
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


def intent_attribute(intent: Intent) -> dict[str, Any]:
    """One intent as its attribute in the outbox map (its request kept as :func:`stored_request` says)."""
    return {
        "M": {
            "intent_id": {"S": intent.id},
            "thread_id": {"S": intent.thread_id},
            "target_id": {"S": intent.target_id},
            "covered": {"L": [{"S": m} for m in intent.covered]},
            **stored_request(intent.request).fields,
            "kind": {"S": intent.kind.value},
            "generation": {"N": str(intent.generation)},
            "key_scheme": {"N": str(intent.key_scheme)},
            "created_at": {"N": str(intent.created_at)},
            "attempts": {"N": str(intent.attempts)},
            "first_attempt_at": {"N": str(intent.first_attempt_at)},
            "last_attempt_at": {"N": str(intent.last_attempt_at)},
            "state": {"S": intent.state.value},
            "accepted_at": {"N": str(intent.accepted_at)},
            "reply_message_id": {"S": intent.reply_message_id},
            "reopened": {"N": str(intent.reopened)},
            "key_stuck": {"BOOL": intent.key_stuck},
            "drop_headers": {"BOOL": intent.drop_headers},
        }
    }


def intent_of(attribute: Mapping[str, Any] | None, thread_id: str = "") -> Intent | None:
    """The intent an outbox entry holds; ``None`` for one that holds none."""
    fields = (attribute or {}).get("M")
    if not fields or "intent_id" not in fields:
        return None
    legacy = "key_scheme" not in fields
    return Intent(
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
    return {"M": {intent_id: intent_attribute(intent) for intent_id, intent in intents.items()}}


def _outbox(attribute: Mapping[str, Any] | None, thread_id: str) -> dict[str, Intent]:
    """The outbox map; an earlier version's single intent becomes a map of one."""
    single = intent_of(attribute, thread_id)
    if single is not None:
        return {single.id: single}
    intents: dict[str, Intent] = {}
    for value in ((attribute or {}).get("M") or {}).values():
        intent = intent_of(value, thread_id)
        if intent is not None:
            intents[intent.id] = intent
    return intents


def is_legacy_outbox(item: Mapping[str, Any]) -> bool:
    """Whether the item holds an earlier version's single-intent outbox (rewritten as a map on lease)."""
    return "intent_id" in ((item.get(OUTBOX) or {}).get("M") or {})


def thread_of(key: str) -> str:
    """The thread id of a ``thread#{grant}#{thread}`` key (thread ids may contain ``#``)."""
    return key.split("#", 2)[2] if key.count("#") >= 2 else ""


def thread_state_of(item: Mapping[str, Any]) -> ThreadState:
    """What a ``thread#`` item says (an earlier version's ``reply_times``, ``answered``, one intent too)."""
    thread_id = thread_of(_string(item.get("pk")))
    return ThreadState(
        replies=_times(item.get(REPLIES)) or _times(item.get(_LEGACY_REPLY_TIMES)),
        covered=_times(item.get(COVERED)) or _times(item.get(_LEGACY_ANSWERED)),
        outbox=_outbox(item.get(OUTBOX), thread_id),
        lease_owner=_string(item.get(LEASE_OWNER)),
        lease_expires_at_ms=_number(item.get(LEASE_EXPIRES_AT)),
        since_ms=_number(item.get(SINCE)),
        created_ms=_number(item.get(CREATED)),
    )


def ledger_entry_of(message_id: str, item: Mapping[str, Any]) -> LedgerEntry:
    """What a ``message#`` item says of ``message_id``."""
    try:
        status = Status(_string(item.get("status")))
    except ValueError:
        # Written by a newer version: settled somehow, so never answered again by this one.
        status = Status.FAILED
    return LedgerEntry(
        message_id=message_id,
        status=status,
        reply_message_id=_string(item.get("reply_message_id")),
        replied_to=_string(item.get("replied_to")),
        intent_id=_string(item.get("intent_id")),
        reason=_string(item.get("reason")),
        recorded_at=_number(item.get("recorded_at")),
    )


def ledger_item(entry: LedgerEntry, grant_id: str, expires_at: int) -> dict[str, Any]:
    """The ``message#`` item of one ledger entry."""
    item: dict[str, Any] = {
        "pk": {"S": message_key(grant_id, entry.message_id)},
        "status": {"S": entry.status.value},
        "reply_message_id": {"S": entry.reply_message_id},
        "recorded_at": {"N": str(entry.recorded_at)},
        TTL: {"N": str(expires_at)},
    }
    for name in ("replied_to", "intent_id", "reason"):
        value = getattr(entry, name)
        if value:
            item[name] = {"S": value}
    return item


def shadow_key(grant_id: str, record_id: str) -> str:
    return f"{SHADOW_PREFIX}{grant_id}#{record_id}"


def shadow_item(record: ShadowRecord, expires_at: int) -> dict[str, Any]:
    """The ``shadow#`` item of one record (its reason and text cut to what an item keeps)."""
    item: dict[str, Any] = {
        "pk": {"S": shadow_key(record.grant_id, record.record_id)},
        "thread_id": {"S": record.thread_id},
        "trigger_id": {"S": record.trigger_id},
        "covered": {"L": [{"S": m} for m in record.covered]},
        "outcome": {"S": record.outcome.value},
        "at": {"N": str(record.at)},
        TTL: {"N": str(expires_at)},
    }
    if record.reason:
        item["reason"] = {"S": record.reason[:500]}
    if record.text:
        item["text"] = {"S": record.text[:SHADOW_TEXT_CHARS]}
    return item


def shadow_record_of(item: Mapping[str, Any]) -> ShadowRecord:
    """What a ``shadow#`` item says."""
    key = _string(item.get("pk"))
    grant_id, _, record_id = key.removeprefix(SHADOW_PREFIX).partition("#")
    try:
        outcome = ShadowOutcome(_string(item.get("outcome")))
    except ValueError:
        outcome = ShadowOutcome.SKIPPED
    covered = tuple(_string(v) for v in (item.get("covered") or {}).get("L", []))
    return ShadowRecord(
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


# ---- a deleted grant's items (issue 42: its state removed) ----------------------------------------------


def grant_items_filter(grant_id: str) -> dict[str, Any]:
    """A ``Scan``'s filter for every item of one grant: its threads (leases, outboxes), its ledger, its
    shadow records and the emails it claimed. Its request bodies are named by its threads' outboxes
    (:func:`grant_item_keys`); recipient budgets are per address across grants and expire within hours."""
    return {
        "FilterExpression": (
            "begins_with(#pk, :thread) OR begins_with(#pk, :message) OR begins_with(#pk, :shadow) "
            "OR (begins_with(#pk, :email) AND #claimed = :grant)"
        ),
        "ExpressionAttributeNames": {"#pk": "pk", "#claimed": CLAIMED_BY},
        "ExpressionAttributeValues": {
            ":thread": {"S": f"{THREAD_PREFIX}{grant_id}#"},
            ":message": {"S": f"{MESSAGE_PREFIX}{grant_id}#"},
            ":shadow": {"S": f"{SHADOW_PREFIX}{grant_id}#"},
            ":email": {"S": EMAIL_PREFIX},
            ":grant": {"S": grant_id},
        },
    }


def grant_item_keys(item: Mapping[str, Any]) -> list[str]:
    """The keys a swept item takes with it: its own, and a thread's request bodies."""
    return [item["pk"]["S"], *(key for ref in body_refs(item) for key in ref.item_keys())]
