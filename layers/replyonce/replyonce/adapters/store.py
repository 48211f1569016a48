"""The state store on DynamoDB (``STATE_TABLE``): the lease, the outbox, the ledger, the recipient budget.

Every write that only the lease holder may make is conditioned on the owner
token, compared in the condition itself — never on DynamoDB's TTL, which
deletes expired items up to days late. The lease serialises work on a
thread; what makes a stale holder harmless is the stored intent and its
``Idempotency-Key`` (``replyonce.core``). The item layout is
``replyonce.adapters.state_items``'.
"""

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from botocore.exceptions import ClientError

from replyonce.adapters.contention import retry_contended
from replyonce.adapters.state_items import (
    AGENT_CALLS_GRACE_SECONDS,
    BODY_TTL_GRACE_SECONDS,
    CALLS,
    CALLS_CAP,
    CHUNK,
    CLAIMED_BY,
    COVERED,
    CREATED,
    LEASE_EXPIRES_AT,
    LEASE_OWNER,
    ONE_WRITE_UNIT_BYTES,
    OUTBOX,
    REFUSED_AT,
    REPLIES,
    SETTLED_BY,
    SHADOW_PREFIX,
    SINCE,
    TABLE_BEGAN_KEY,
    TTL,
    BodyRef,
    agent_call_key,
    agent_calls_key,
    body_key,
    body_refs,
    email_key,
    grant_item_keys,
    grant_items_filter,
    intent_attribute,
    is_legacy_outbox,
    item_bytes,
    lease_expiry_ms,
    ledger_entry_of,
    ledger_item,
    message_key,
    outbox_attribute,
    recipient_key,
    recipient_slot,
    request_of,
    shadow_item,
    shadow_record_of,
    since_ms,
    stored_request,
    table_began_item,
    thread_state_of,
    with_requests,
)
from replyonce.exceptions import GrantLifeRefused, StateContended, StoredRequestLost, ThreadBusyError
from replyonce.rules.agent_calls import day_ends_at
from replyonce.state import (
    COVERED_MEMORY,
    REPLY_BUDGET_WINDOW_SECONDS,
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

# DynamoDB's limits on the items of one TransactWriteItems and of one BatchWriteItem.
_MAX_TRANSACTION_ITEMS = 100
_MAX_BATCH_ITEMS = 25
# Leases a container remembers to date their new thread item with their next write (far more than the
# records one container holds at once).
_UNDATED_KEPT = 256


def _map_changes(
    maps: Mapping[str, tuple[Mapping[str, int], Mapping[str, int]]],
    names: dict[str, str],
    values: dict[str, Any],
) -> tuple[list[str], list[str]]:
    """The ``SET`` and ``REMOVE`` clauses that turn each map from what the lease read into what it
    should be, key by key (placeholders added to ``names`` and ``values``).

    Why by key, not the whole map: while this holder held the lease, a stale holder (one whose lease
    ran out before its settlement) may have set its own covered ids and reply time in the same maps,
    by key and without the lease (:meth:`DynamoDBStateStore._settle_without_lease`). Writing the map
    this holder read would erase them; the loop guard would then count one reply fewer. Keys this
    holder's state dropped (the reply window, the covered memory) are removed by name.
    """
    sets: list[str] = []
    removes: list[str] = []
    for attribute, (before, after) in maps.items():
        short = f"#{attribute[:1]}"
        changed = [k for k in after if before.get(k) != after[k]]
        dropped = [k for k in before if k not in after]
        if changed or dropped:
            names[short] = attribute  # DynamoDB refuses a name no clause uses
        for index, key in enumerate(changed):
            names[f"{short}s{index}"] = key
            values[f":{attribute[:1]}s{index}"] = {"N": str(after[key])}
            sets.append(f"{short}.{short}s{index} = :{attribute[:1]}s{index}")
        for index, key in enumerate(dropped):
            names[f"{short}r{index}"] = key
            removes.append(f"{short}.{short}r{index}")
    return sets, removes


def _request_token(lease_token: str, intent_or_burst: str, purpose: str, attempt: int) -> str:
    """A ``ClientRequestToken`` (≤ 36 characters) per settlement, lease and try.

    Why a token: botocore retries a transaction whose response was lost; with
    the token, DynamoDB answers the retry with the first outcome instead of
    running it again (for 10 minutes), so a lost response cannot make the
    owner condition fail and send us down the "lease lost" path. Why per lease
    and per try: DynamoDB answers a token used again within 10 minutes with
    other parameters ``IdempotentParameterMismatchException``, and a
    settlement's parameters differ from one lease to the next (the owner
    token, the times); a try after a transaction conflict (which wrote
    nothing) is a new request, not a replay. botocore's own retries of one
    try send the same bytes, token included.
    """
    return uuid.uuid5(uuid.NAMESPACE_OID, f"{intent_or_burst}:{purpose}:{lease_token}:{attempt}").hex


def held_for_seconds(held_until_ms: int, now_ms: int) -> int:
    """Whole seconds a lease ending at ``held_until_ms`` is still held, rounded up past its end (what a
    waiting record is told: ``ThreadBusyError``, ``lease_held_for_seconds``)."""
    return max(0, (held_until_ms - now_ms) // 1000 + 1)


def _slot(item: Mapping[str, Any], index: int) -> Mapping[str, Any]:
    """The ``{"i", "t"}`` map of a recipient item's slot, empty when the slot was never used."""
    return (item.get(recipient_slot(index)) or {}).get("M") or {}


def _string_value(attribute: Mapping[str, Any] | None) -> str:
    value = (attribute or {}).get("S")
    return value if isinstance(value, str) else ""


def read_request_bodies(
    dynamodb: Any, table: str, refs: Sequence[BodyRef], *, renew_until: int | None = None
) -> dict[str, str]:
    """The requests kept in body items (digest → request), read consistently and checked.

    With ``renew_until`` (the replier, as it takes a lease), each chunk is read
    by an ``UpdateItem`` that sets its TTL to that time and returns the item as
    it now is: one request reads the chunk strongly consistently and keeps it
    as long as the thread item that names it. Without (``ops thread-state``),
    a consistent ``GetItem`` that changes nothing.

    Raises
    ------
    StoredRequestLost
        A chunk is missing, or the chunks are not the bytes the intent names.
    """
    requests: dict[str, str] = {}
    for ref in refs:
        chunks = [_body_chunk(dynamodb, table, key, renew_until, ref) for key in ref.item_keys()]
        requests[ref.digest] = request_of(ref, chunks)
    return requests


def _body_chunk(dynamodb: Any, table: str, key: str, renew_until: int | None, ref: BodyRef) -> bytes:
    if renew_until is None:
        item = dynamodb.get_item(TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    else:
        try:
            item = dynamodb.update_item(
                TableName=table,
                Key={"pk": {"S": key}},
                UpdateExpression=f"SET {TTL} = :ttl",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":ttl": {"N": str(renew_until)}},
                ReturnValues="ALL_NEW",
            )["Attributes"]
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            item = None
    if not item or CHUNK not in item:
        raise StoredRequestLost(f"intent {ref.intent_id}: body item {key} is missing")
    return bytes(item[CHUNK]["B"])


def _condition_failed(exc: ClientError) -> bool:
    code = exc.response["Error"]["Code"]
    if code == "ConditionalCheckFailedException":
        return True
    reasons: list[Mapping[str, Any]] = exc.response.get("CancellationReasons", [])
    return code == "TransactionCanceledException" and any(
        r.get("Code") == "ConditionalCheckFailed" for r in reasons
    )


class DynamoDBStateStore:
    """:class:`replyonce.ports.StateStore` on one DynamoDB table.

    Parameters
    ----------
    table_name:
        ``STATE_TABLE``.
    dynamodb_client:
        Injectable boto3 DynamoDB client.
    ttl_seconds:
        How long thread items and ledger entries are kept (``ledger_ttl_seconds``).
    clock:
        Wall clock in seconds: the lease's expiry and ``recorded_at`` / TTLs only — no decision about a
        reply rests on it (those use Nylas' time).
    sleep:
        The wait between two tries of a contended write (``replyonce.adapters.contention``).
    grant_life:
        The grant registry's condition that a grant's life does not say deleted, as a transaction's
        ``ConditionCheck`` (``GrantRegistry.not_deleted_check``: that module owns the item), for an intent
        stored right before its send (``store_intent``'s ``grant_alive``); ``None``: no registry.

    Every write of a thread or ledger item — the items a settlement's
    transaction writes — is retried in place when DynamoDB answers it with
    contention; writes of items no transaction touches (a recipient's budget,
    an email's claim, a request body) cannot meet one.
    """

    def __init__(
        self,
        table_name: str,
        dynamodb_client: Any,
        *,
        ttl_seconds: int,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        grant_life: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        self._table = table_name
        self._grant_life = grant_life
        self._dynamodb = dynamodb_client
        self._ttl = ttl_seconds
        self._clock = clock
        self._sleep = sleep
        # Leases (by token) that created their thread item, and the dates that item is to get with the
        # holder's next write of it: (the table's beginning, the item's own creation), ms.
        self._undated: dict[str, tuple[int, int]] = {}

    def _write(self, operation: str, what: str, **params: Any) -> Any:
        """One write request (the same parameters every try), retried while DynamoDB answers contention."""
        send = getattr(self._dynamodb, operation)
        return retry_contended(lambda _attempt: send(**params), what=what, sleep=self._sleep)

    def _transact(self, items: list[dict[str, Any]], what: str, token: Callable[[int], str] | None) -> None:
        """A ``TransactWriteItems`` retried on contention, each try under its own ``token(attempt)``."""

        def send(attempt: int) -> Any:
            extra = {"ClientRequestToken": token(attempt)} if token is not None else {}
            return self._dynamodb.transact_write_items(TransactItems=items, **extra)

        retry_contended(send, what=what, sleep=self._sleep)

    # ---- ledger ----------------------------------------------------------------------------------------

    def ledger_entry(self, grant_id: str, message_id: str) -> LedgerEntry | None:
        item = self._dynamodb.get_item(
            TableName=self._table, Key={"pk": {"S": message_key(grant_id, message_id)}}, ConsistentRead=True
        ).get("Item")
        return ledger_entry_of(message_id, item) if item else None

    def read_ledger(self, grant_id: str, message_id: str) -> LedgerRead:
        """The message's ledger entry and ``table#began``, both read consistently in one ``BatchGetItem``.

        Why both (issue 46): a new thread's lease dates its item by the table's beginning; read with the
        ledger, that costs a read unit on every new message's record and no request, where a read of its
        own was a request on every new thread. Read before the lease rather than in it: a beginning a
        ``make restore-state`` raises meanwhile is stamped on the thread items again once its copy is
        done (``ops/restore_state.py``), as for a lease that read it just before the raise.
        """
        entry_key = message_key(grant_id, message_id)
        keys = [{"pk": {"S": entry_key}}, {"pk": {"S": TABLE_BEGAN_KEY}}]
        found: dict[str, Mapping[str, Any]] = {}
        for _ in range(8):
            response = self._dynamodb.batch_get_item(
                RequestItems={self._table: {"Keys": keys, "ConsistentRead": True}}
            )
            for item in response.get("Responses", {}).get(self._table, []):
                found[item["pk"]["S"]] = item
            keys = response.get("UnprocessedKeys", {}).get(self._table, {}).get("Keys", [])
            if not keys:
                break
            self._sleep(0.05)
        else:
            raise StateContended("the ledger's read", "unprocessed keys", 8)
        entry = found.get(entry_key)
        return LedgerRead(
            ledger_entry_of(message_id, entry) if entry else None,
            since_ms(found.get(TABLE_BEGAN_KEY) or {}),
        )

    # ---- lease -----------------------------------------------------------------------------------------

    def take_lease(self, thread_key: str, duration_ms: int, table_began_ms: int = 0) -> Lease:
        """Take the lease when nobody holds it or its expiry has passed; the thread state comes back with it.

        The state returns in the same request (``ALL_NEW``), so the checks
        inside the lease cost no extra read.
        """
        now_ms = int(self._clock() * 1000)
        token = uuid.uuid4().hex
        expires_at_ms = now_ms + max(duration_ms, 1000)
        thread_ttl = int(self._clock()) + self._ttl
        try:
            response = self._write(
                "update_item",
                "the thread's lease",
                TableName=self._table,
                Key={"pk": {"S": thread_key}},
                UpdateExpression=f"SET {LEASE_OWNER} = :token, {LEASE_EXPIRES_AT} = :expires, {TTL} = :ttl, "
                f"{REPLIES} = if_not_exists({REPLIES}, :empty), "
                f"{COVERED} = if_not_exists({COVERED}, :empty), "
                f"{OUTBOX} = if_not_exists({OUTBOX}, :empty), "
                f"{SINCE} = if_not_exists({SINCE}, :now)",
                ConditionExpression=f"attribute_not_exists({LEASE_OWNER}) OR {LEASE_EXPIRES_AT} < :now",
                ExpressionAttributeValues={
                    ":token": {"S": token},
                    ":expires": {"N": str(expires_at_ms)},
                    ":now": {"N": str(now_ms)},
                    ":ttl": {"N": str(thread_ttl)},
                    ":empty": {"M": {}},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            held_until = lease_expiry_ms(exc.response.get("Item", {})) or now_ms
            raise ThreadBusyError(thread_key, held_for_seconds(held_until, now_ms)) from None
        item = response["Attributes"]
        if since_ms(item) == now_ms:
            # This lease created the item: it is new state, whatever the table's beginning says.
            began = table_began_ms or self._table_since(now_ms)
            self._undated[token] = (began, now_ms)
            if len(self._undated) > _UNDATED_KEPT:  # a holder that died before writing: forgotten in time
                self._undated.pop(next(iter(self._undated)))
            item = {**item, SINCE: {"N": str(began)}, CREATED: {"N": str(now_ms)}}
        item, bodies = self._with_bodies(thread_key, token, item, thread_ttl)
        lease = Lease(thread_key, token, expires_at_ms, thread_state_of(item), bodies=bodies)
        if is_legacy_outbox(item):
            # An earlier version's single intent: rewritten as a map of one, so entries can be set by id.
            self._write_outbox(lease, dict(lease.state.outbox))
        return lease

    def lease_held_for_seconds(self, thread_key: str) -> int:
        """How long the thread's lease is still held (``ThreadBusyError``'s seconds); ``0``: free or expired.

        Why a read (issue 46): a record waiting on a busy thread looks again every
        ``core.lease.LEASE_POLL_SECONDS``; a conditional write refused is billed as a write (the bench's 27
        covered or skipped attempts wrote 788 times), a consistent read of the lease's two attributes
        one read unit. The lease is then taken by the conditional write, only when this shows it free.
        """
        item = (
            self._dynamodb.get_item(
                TableName=self._table,
                Key={"pk": {"S": thread_key}},
                ConsistentRead=True,
                ProjectionExpression="#owner, #expires",
                ExpressionAttributeNames={"#owner": LEASE_OWNER, "#expires": LEASE_EXPIRES_AT},
            ).get("Item")
            or {}
        )
        now_ms = int(self._clock() * 1000)
        held_until = lease_expiry_ms(item)
        if not _string_value(item.get(LEASE_OWNER)) or held_until < now_ms:
            return 0
        return held_for_seconds(held_until, now_ms)

    def _table_since(self, now_ms: int) -> int:
        """When the table began, for a thread item this lease just created (its ``since`` is ``now_ms``).

        Why: a thread item created within ``mailbox_settle_seconds`` may stand for one a lost state
        held, whose reply may still be in flight (``core.arrival.state_settles_in``) — whether the table
        was emptied (``table#began``, which the first lease of a table without one writes), restored to
        a backup from before the thread, or the item deleted by hand (``created``). A new message's
        record read ``table#began`` with its ledger entry (:meth:`read_ledger`, issue 46) and hands it
        to the lease; this is for a lease without it (a send outcome, a reconcile) and a table not begun
        yet: ``table#began`` read, and in a table without one (its first lease, once per table) the
        conditional put that begins it. The thread item gets the date with the holder's next
        write of it (:meth:`_dates`): a lease always ends in one (an intent stored, a settlement, a
        release), and a holder dead before it leaves the item dated by its lease, later than the table
        began — a longer wait, never a shorter one (issue 46: the separate update was a request and a
        write unit per new thread).

        Why read first (issue 46): ``table#began`` exists in every table in service, so a conditional
        put of it was refused for every new thread, and DynamoDB bills a refused write as a write; a
        consistent read of the small item costs one read unit.
        """
        began = self._began_item()
        if began:
            return began
        try:
            self._dynamodb.put_item(
                TableName=self._table,
                Item=table_began_item(now_ms),
                ConditionExpression="attribute_not_exists(pk)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            return now_ms
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            # Another thread's first lease began the table meanwhile: its beginning is this one's.
            return since_ms(exc.response.get("Item") or {}) or self._began_item()

    def _dates(self, lease: Lease, values: dict[str, Any]) -> list[str]:
        """The ``SET`` clauses that date a thread item its lease created (none once dated), values added.

        Called for each write of the thread item under the lease; the dates are forgotten once a write
        carried them, whether or not its condition held (a lease lost: the new holder's item is its own).
        """
        dates = self._undated.pop(lease.token, None)
        if dates is None:
            return []
        values[":began"] = {"N": str(dates[0])}
        values[":created"] = {"N": str(dates[1])}
        return [f"{SINCE} = :began", f"{CREATED} = :created"]

    def _began_item(self) -> int:
        """``table#began``'s ``since`` (``0``: the table has not begun)."""
        item = self._dynamodb.get_item(
            TableName=self._table, Key={"pk": {"S": TABLE_BEGAN_KEY}}, ConsistentRead=True
        ).get("Item")
        return since_ms(item or {})

    def _with_bodies(
        self, thread_key: str, token: str, item: Mapping[str, Any], thread_ttl: int
    ) -> tuple[Mapping[str, Any], set[str]]:
        """The thread item with its large intents' requests read back, their bodies kept as long as it,
        and the digests of the bodies read.

        A thread without such an intent costs nothing more. A body that cannot
        be read frees the lease just taken before raising: nothing was decided
        under it, and the next holder need not wait for it to expire.
        """
        refs = body_refs(item)
        if not refs:
            return item, set()
        try:
            requests = read_request_bodies(
                self._dynamodb, self._table, refs, renew_until=thread_ttl + BODY_TTL_GRACE_SECONDS
            )
        except StoredRequestLost:
            self.release(Lease(thread_key, token, 0))
            raise
        return with_requests(item, requests), {body_key(r.intent_id, r.digest, 0) for r in refs}

    def release(self, lease: Lease) -> bool:
        if lease.released:
            return True
        values: dict[str, Any] = {":token": {"S": lease.token}}
        dates = self._dates(lease, values)
        try:
            self._write(
                "update_item",
                "the lease's release",
                TableName=self._table,
                Key={"pk": {"S": lease.key}},
                UpdateExpression=(f"SET {', '.join(dates)} " if dates else "")
                + f"REMOVE {LEASE_OWNER}, {LEASE_EXPIRES_AT}",
                ConditionExpression=f"{LEASE_OWNER} = :token",
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            return False
        finally:
            lease.released = True
        return True

    # ---- one email, one answering grant -------------------------------------------------------------------

    def claim_email(self, header_message_id: str, grant_id: str) -> str:
        """Claim the email for ``grant_id``; return the grant that holds it (``grant_id`` when we do).

        A conditional put on the email's ``Message-ID``: the first grant of the deployment to claim
        it answers it, in whichever mailbox; a claim is kept (the holder's record is retried until it
        settles), and claiming again for the same grant is a no-op.
        """
        try:
            self._dynamodb.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": email_key(header_message_id)},
                    CLAIMED_BY: {"S": grant_id},
                    TTL: {"N": str(int(self._clock()) + self._ttl)},
                },
                ConditionExpression=f"attribute_not_exists(pk) OR {CLAIMED_BY} = :grant",
                ExpressionAttributeValues={":grant": {"S": grant_id}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            held = exc.response.get("Item") or {}
            return _string_value(held.get(CLAIMED_BY)) or "another grant"
        return grant_id

    # ---- shadow mode ------------------------------------------------------------------------------------

    def record_shadow(self, record: ShadowRecord) -> bool:
        """Put the record unless its key exists: ``True`` when written now, ``False`` when it was there.

        For a message a rule skipped (a burst's record goes with its settlement): keyed by the message,
        so three deliveries of one notification or a redelivered SQS record leave one record, the first
        one written.
        """
        try:
            self._dynamodb.put_item(
                TableName=self._table,
                Item=shadow_item(record, int(self._clock()) + self._ttl),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            return False
        return True

    def shadow_records(self) -> list[ShadowRecord]:
        """Every shadow record of the table (a paginated scan: an operator's report, never the replier's)."""
        records = []
        paginator = self._dynamodb.get_paginator("scan")
        pages = paginator.paginate(
            TableName=self._table,
            FilterExpression="begins_with(pk, :prefix)",
            ExpressionAttributeValues={":prefix": {"S": SHADOW_PREFIX}},
        )
        for page in pages:
            records.extend(shadow_record_of(item) for item in page.get("Items", []))
        return records

    # ---- the per-recipient budget -------------------------------------------------------------------------

    def reserve(self, reservation: Reservation, intent_id: str) -> bool:
        """Give ``intent_id`` a slot of the recipient's item, unless ``budget`` other intents hold one in
        the hour before ``reservation.at`` (a sliding hour); idempotent per intent id.

        Why slots: DynamoDB cannot count a map's entries by their time in a
        condition, but it can check one slot. A slot is taken when it is free
        (never used, or its reply is older than the hour) and no other slot is
        this intent's; a refusal returns the item (``ALL_OLD``), which says
        whether the intent holds a slot already and which slot is free, so a
        first reply costs one request and a contended one a few.
        """
        key = {"pk": {"S": recipient_key(reservation.email)}}
        values = {
            ":entry": {"M": {"i": {"S": intent_id}, "t": {"N": str(reservation.at)}}},
            ":id": {"S": intent_id},
            ":since": {"N": str(reservation.since)},
            ":ttl": {"N": str(reservation.at + 2 * REPLY_BUDGET_WINDOW_SECONDS)},
        }
        names = {f"#s{k}": recipient_slot(k) for k in range(reservation.budget)}
        candidates = list(range(reservation.budget))
        while candidates:
            k = candidates.pop(0)
            condition = f"(attribute_not_exists(#s{k}) OR #s{k}.t < :since OR #s{k}.i = :id)"
            others = [f"#s{j}.i = :id" for j in range(reservation.budget) if j != k]
            if others:
                condition += f" AND NOT ({' OR '.join(others)})"
            try:
                self._dynamodb.update_item(
                    TableName=self._table,
                    Key=key,
                    UpdateExpression=f"SET #s{k} = :entry, {TTL} = :ttl",
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            except ClientError as exc:
                if not _condition_failed(exc):
                    raise
                held = exc.response.get("Item") or {}
                slots = [_slot(held, j) for j in range(reservation.budget)]
                if any(_string_value(slot.get("i")) == intent_id for slot in slots):
                    return True  # a retry of the same burst: its slot is counted already
                free = [
                    j
                    for j, slot in enumerate(slots)
                    if not slot or int((slot.get("t") or {}).get("N", "0")) < reservation.since
                ]
                candidates = [j for j in free if j != k]
                continue
            return True
        return False

    # ---- a grant's daily agent calls -----------------------------------------------------------------------

    def count_agent_call(self, grant_id: str, day: str, intent_id: str, cap: int) -> AgentCalls:
        """Count the burst ``intent_id`` in the grant's ``day`` unless ``cap`` bursts are counted already.

        One ``TransactWriteItems`` of two items: the day's count, ``ADD calls 1`` conditioned on
        ``calls < cap`` (two records at the cap at once: DynamoDB serialises the two conditions, one is
        refused); and the burst's mark, put conditioned on its absence (a retry of a counted burst finds
        it: the transaction is cancelled, nothing counted twice, the agent asked). Why a mark item and
        not the ids in the count item: DynamoDB bills a write by the item's size, and a day's ids would
        make every count of a busy grant cost kilobytes. A burst refused over the cap costs one more
        write, once per grant and day: the conditional ``refused_at`` that tells the first refusal (the
        one log line and metric) from the others; a later refusal sees it in the cancelled count item
        (``ALL_OLD``) and writes nothing. Contention between two counts of one grant (a
        ``TransactionConflict``) is retried in place.
        """
        expires_at = day_ends_at(day) + AGENT_CALLS_GRACE_SECONDS
        count = {
            "Update": {
                "TableName": self._table,
                "Key": {"pk": {"S": agent_calls_key(grant_id, day)}},
                "UpdateExpression": f"ADD {CALLS} :one SET {CALLS_CAP} = :cap, {TTL} = :ttl",
                "ConditionExpression": f"attribute_not_exists({CALLS}) OR {CALLS} < :cap",
                "ExpressionAttributeValues": {
                    ":one": {"N": "1"},
                    ":cap": {"N": str(cap)},
                    ":ttl": {"N": str(expires_at)},
                },
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }
        mark = {
            "Put": {
                "TableName": self._table,
                "Item": {"pk": {"S": agent_call_key(grant_id, day, intent_id)}, TTL: {"N": str(expires_at)}},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
        try:
            self._transact([count, mark], "the grant's agent-call count", None)
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            reasons = exc.response.get("CancellationReasons") or [{}, {}]
            if reasons[1].get("Code") == "ConditionalCheckFailed":
                return AgentCalls(intent_id, allowed=True)  # counted by an earlier try of this burst
            if REFUSED_AT in (reasons[0].get("Item") or {}):
                return AgentCalls(intent_id, allowed=False)
            return AgentCalls(intent_id, allowed=False, first_refusal=self._first_refusal(grant_id, day))
        return AgentCalls(intent_id, allowed=True)

    def _first_refusal(self, grant_id: str, day: str) -> bool:
        """Mark the day's count refused (``refused_at``) unless it is: ``True`` for the one write that did."""
        try:
            self._dynamodb.update_item(
                TableName=self._table,
                Key={"pk": {"S": agent_calls_key(grant_id, day)}},
                UpdateExpression=f"SET {REFUSED_AT} = :now",
                ConditionExpression=f"attribute_exists(pk) AND attribute_not_exists({REFUSED_AT})",
                ExpressionAttributeValues={":now": {"N": str(int(self._clock()))}},
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            return False
        return True

    # ---- the outbox --------------------------------------------------------------------------------------

    def store_intent(self, lease: Lease, intent: Intent, *, grant_alive: str = "") -> bool:
        """Set one outbox entry (a new intent, or the next state of one), conditioned on the lease.

        A large request's body items are written first (:meth:`_intent_attribute`). With ``grant_alive``
        (and a registry wired: ``grant_life``), the entry is written in one ``TransactWriteItems`` with the
        grant life's ``ConditionCheck`` and, when it is one write unit's item, the request's body item.

        Why one transaction (issue 46): the store is followed by the send, which the grant's life, read
        strongly consistent, must precede (issue 42); and the body item is written before its entry.
        Three requests become one; a transaction bills each item twice (2 units for each, where the
        body's put and the entry's update were 1 each, and the life's read 1 read unit), so a body over
        one unit is still written first by itself, its units once.

        Raises
        ------
        GrantLifeRefused
            The grant's life failed the check (nothing was written).
        """
        check = self._grant_life(grant_alive) if grant_alive and self._grant_life is not None else None
        bodies = self._bodies_written(lease, intent, inline=check is not None)
        values: dict[str, Any] = {":intent": intent_attribute(intent), ":token": {"S": lease.token}}
        sets = [f"{OUTBOX}.#intent = :intent", *self._dates(lease, values)]
        update = {
            "TableName": self._table,
            "Key": {"pk": {"S": lease.key}},
            "UpdateExpression": f"SET {', '.join(sets)}",
            "ConditionExpression": f"{LEASE_OWNER} = :token",
            "ExpressionAttributeNames": {"#intent": intent.id},
            "ExpressionAttributeValues": values,
        }
        if check is None:
            try:
                self._write("update_item", "the outbox entry", **update)
            except ClientError as exc:
                if not _condition_failed(exc):
                    raise
                return False
            return True
        return self._store_checked(lease, bodies, update, check, grant_alive)

    def _store_checked(
        self,
        lease: Lease,
        bodies: list[dict[str, Any]],
        update: dict[str, Any],
        check: dict[str, Any],
        grant_id: str,
    ) -> bool:
        """The outbox entry, the small body item (if any) and the grant life's check in one transaction."""
        items = [*({"Put": {"TableName": self._table, "Item": b}} for b in bodies), {"Update": update}, check]
        try:
            self._transact(items, "the outbox entry", None)
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            reasons = exc.response.get("CancellationReasons") or []
            failed = [i for i, r in enumerate(reasons) if r.get("Code") == "ConditionalCheckFailed"]
            if len(items) - 1 in failed and len(items) - 2 not in failed:
                raise GrantLifeRefused(grant_id) from None
            return False  # the lease was lost (the body items, unconditioned, cannot fail)
        if bodies:
            lease.bodies.add(bodies[0]["pk"]["S"])
        return True

    def _intent_attribute(self, lease: Lease, intent: Intent) -> dict[str, Any]:
        """The intent's outbox entry, once the body items its request needs (if any) are in the table."""
        self._bodies_written(lease, intent, inline=False)
        return intent_attribute(intent)

    def _bodies_written(self, lease: Lease, intent: Intent, *, inline: bool) -> list[dict[str, Any]]:
        """Write the body items the intent's request needs (if any) and this lease has not; the items left
        for the entry's own transaction to write (``inline``: a body of one item within one write unit,
        :meth:`_store_checked`, which names it in ``lease.bodies`` once written).

        Why before, and why by plain puts: an entry naming a body is never
        written before the body, so whoever reads the entry finds its bytes; a
        crash between the two leaves body items nothing names, which their TTL
        removes. The items are named by the request's digest, so writing them
        again (a retry in another lease) writes the same bytes; within one
        lease, a body read or written already is not written again.
        """
        stored = stored_request(intent.request)
        first = body_key(intent.id, stored.digest, 0)
        if not stored.chunks or first in lease.bodies:
            return []
        expires_at = int(self._clock()) + self._ttl + BODY_TTL_GRACE_SECONDS
        items = stored.body_items(intent.id, expires_at)
        if inline and len(items) == 1 and item_bytes(items[0]) <= ONE_WRITE_UNIT_BYTES:
            return items
        for item in items:
            self._dynamodb.put_item(TableName=self._table, Item=item)
        lease.bodies.add(first)
        return []

    def _write_outbox(self, lease: Lease, intents: Mapping[str, Intent]) -> None:
        for intent in intents.values():
            self._intent_attribute(lease, intent)
        values: dict[str, Any] = {":outbox": outbox_attribute(intents), ":token": {"S": lease.token}}
        sets = [f"{OUTBOX} = :outbox", *self._dates(lease, values)]
        self._write(
            "update_item",
            "the outbox",
            TableName=self._table,
            Key={"pk": {"S": lease.key}},
            UpdateExpression=f"SET {', '.join(sets)}",
            ConditionExpression=f"{LEASE_OWNER} = :token",
            ExpressionAttributeValues=values,
        )

    # ---- settling ----------------------------------------------------------------------------------------

    def settle(self, lease: Lease, settlement: Settlement, grant_id: str) -> bool:
        """The ledger entries of every covered message, then the thread's new state conditioned on the lease.

        Why not one transaction (issue 46): a transaction bills each of its items twice, and the thread
        item is the largest a reply writes. The ledger entries are plain puts, idempotent (the same
        entries whoever writes them, and a holder that lost the lease writes them too: what happened at
        Nylas happened either way), so they go first, in one ``BatchWriteItem``; then the thread's
        update, conditioned on the lease. A crash between the two leaves the ledger saying what
        happened and the thread's outbox still holding the intent: a redelivery of a covered message
        stops at the ledger, and the thread's next record drives the intent nobody drives to its
        settlement (``core.delivery.drive_undriven``; it counts as a reply in flight meanwhile).

        When the lease was lost (a paused worker), the covered ids and the reply's time are set by key
        without the lease, and the new holder's lease and outbox are left alone. A shadow settlement
        (nothing happened at Nylas) stays one transaction with its record, conditioned on the lease:
        recorded exactly when the burst is settled, by the one holder that settles it.
        """
        now = int(self._clock())
        expires_at = now + self._ttl
        ledger = [ledger_item(e, grant_id, expires_at) for e in settlement.ledger_entries(now)]
        after = settlement.thread_after(lease.state)
        update = self._settlement_update(lease, settlement, after)
        if not settlement.writes_without_lease:
            return self._settle_in_one_transaction(lease, settlement, ledger, update, after, expires_at)
        if (
            settlement.shadow is not None
        ):  # only when the rule says a shadow record is written without the lease
            ledger = [*ledger, shadow_item(settlement.shadow, expires_at)]
        self._put_all(ledger, "the ledger entries")
        try:
            self._write(
                "update_item", "the settlement", **update, ReturnValuesOnConditionCheckFailure="ALL_OLD"
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            if _string_value((exc.response.get("Item") or {}).get(SETTLED_BY)) != lease.token:
                self._settle_without_lease(lease, settlement)
                lease.released = True
                return False
            # Our own update, applied, its answer lost and the request sent again by botocore: the
            # retry's condition met the lease it had freed. Settled (no transaction token since issue 46).
        lease.released = True
        lease.state = after
        return True

    def _settlement_update(self, lease: Lease, settlement: Settlement, after: ThreadState) -> dict[str, Any]:
        """The thread item's update a settlement makes under the lease: its maps by key, the lease freed."""
        names: dict[str, str] = {}
        values: dict[str, Any] = {":token": {"S": lease.token}}
        sets, removes = _map_changes(
            {REPLIES: (lease.state.replies, after.replies), COVERED: (lease.state.covered, after.covered)},
            names,
            values,
        )
        removes = [LEASE_OWNER, LEASE_EXPIRES_AT, *removes]
        # Who settled last: a retry whose first answer was lost knows its own write by it (``settle``).
        sets += [f"{SETTLED_BY} = :token", *self._dates(lease, values)]
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": {"pk": {"S": lease.key}},
            "ConditionExpression": f"{LEASE_OWNER} = :token",
            "ExpressionAttributeValues": values,
        }
        if names:
            update["ExpressionAttributeNames"] = names
        if settlement.intent is not None:
            update["ExpressionAttributeNames"] = {
                **names,
                "#outbox": OUTBOX,
                "#intent": settlement.intent.id,
            }
            if settlement.keep:
                sets.append("#outbox.#intent = :intent")
                update["ExpressionAttributeValues"][":intent"] = self._intent_attribute(
                    lease, settlement.intent
                )
            else:
                removes.append("#outbox.#intent")
        update["UpdateExpression"] = (
            f"SET {', '.join(sets)} " if sets else ""
        ) + f"REMOVE {', '.join(removes)}"
        return update

    def _put_all(self, items: Sequence[Mapping[str, Any]], what: str) -> None:
        """Plain puts of ``items`` in ``BatchWriteItem`` requests (25 items each), until none is left.

        Why a batch: one request for a reply's ledger entries (the message's, and the reply's own).
        DynamoDB may leave some unprocessed (throttling): those are sent again after the contention
        wait, as botocore does not.
        """
        for start in range(0, len(items), _MAX_BATCH_ITEMS):
            pending: Any = {
                self._table: [{"PutRequest": {"Item": i}} for i in items[start : start + _MAX_BATCH_ITEMS]]
            }
            attempt = 0
            while pending:
                pending = self._write("batch_write_item", what, RequestItems=pending).get("UnprocessedItems")
                if pending:
                    self._sleep(min(1.0, 0.05 * 2**attempt))
                    attempt += 1

    def _settle_in_one_transaction(
        self,
        lease: Lease,
        settlement: Settlement,
        ledger: list[dict[str, Any]],
        update: dict[str, Any],
        after: ThreadState,
        expires_at: int,
    ) -> bool:
        """A settlement only the holder writes (a shadow burst's): its ledger entries, its record and the
        thread, in one transaction conditioned on the lease."""
        shadow = (
            [{"Put": {"TableName": self._table, "Item": shadow_item(settlement.shadow, expires_at)}}]
            if settlement.shadow is not None
            else []
        )
        puts = self._write_all_but_last([{"Put": {"TableName": self._table, "Item": i}} for i in ledger])
        token_base = settlement.intent.id if settlement.intent is not None else ",".join(settlement.covered)
        purpose = (
            f"settle:{settlement.status.value}:{settlement.intent.generation if settlement.intent else 0}"
        )
        try:
            self._transact(
                [*puts, *shadow, {"Update": update}],
                "the settlement",
                lambda attempt: _request_token(lease.token, token_base, purpose, attempt),
            )
        except ClientError as exc:
            if not _condition_failed(exc):
                raise
            lease.released = True
            return False
        lease.released = True
        lease.state = after
        return True

    def _write_all_but_last(self, puts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Write ledger puts a transaction cannot hold (100 items at most); return the ones it can.

        Plain puts of a burst's ledger entries are idempotent, so writing the
        overflow first changes nothing if the transaction then fails.
        """
        room = _MAX_TRANSACTION_ITEMS - 2
        overflow, kept = puts[:-room] if len(puts) > room else [], puts[-room:]
        for start in range(0, len(overflow), _MAX_TRANSACTION_ITEMS):
            chunk = overflow[start : start + _MAX_TRANSACTION_ITEMS]
            self._transact(chunk, "the ledger entries", None)
        return kept

    def _settle_without_lease(self, lease: Lease, settlement: Settlement) -> None:
        """The covered ids and the reply's time, each set by key (the ledger is written already): twice
        changes nothing."""
        names: dict[str, str] = {"#covered": COVERED}
        sets = []
        values: dict[str, Any] = {":at": {"N": str(settlement.at)}}
        # Newest first, bounded like the thread item's memory: an update expression has a size limit.
        for index, message_id in enumerate(list(dict.fromkeys(settlement.covered))[:COVERED_MEMORY]):
            names[f"#m{index}"] = message_id
            sets.append(f"#covered.#m{index} = :at")
        if settlement.counts_as_reply and settlement.intent is not None:
            names["#replies"] = REPLIES
            names["#reply"] = settlement.intent.id
            sets.append("#replies.#reply = :at")
        if not sets:
            return
        # The maps may be gone with the item (a restore, a recreated table): create them, then set by key.
        self._write(
            "update_item",
            "the thread's maps",
            TableName=self._table,
            Key={"pk": {"S": lease.key}},
            UpdateExpression="SET #covered = if_not_exists(#covered, :empty), "
            "#replies = if_not_exists(#replies, :empty), #ttl = if_not_exists(#ttl, :ttl)",
            ExpressionAttributeNames={"#covered": COVERED, "#replies": REPLIES, "#ttl": TTL},
            ExpressionAttributeValues={
                ":empty": {"M": {}},
                ":ttl": {"N": str(int(self._clock()) + self._ttl)},
            },
        )
        self._write(
            "update_item",
            "the covered ids",
            TableName=self._table,
            Key={"pk": {"S": lease.key}},
            UpdateExpression="SET " + ", ".join(sets),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )


# ---- a deleted grant's state, removed (issue 42) ------------------------------------------------------

SWEEP_PAGE_ITEMS = 1000
"""Items one ``Scan`` request reads at most (each page is also capped at 1 MB by DynamoDB)."""


def sweep_grant(
    dynamodb: Any, table: str, grant_id: str, start_after: str, keep_going: Callable[[], bool]
) -> tuple[str, int]:
    """Delete every item of a deleted grant from the state table, page by page; where to go on from.

    A ``Scan`` of the whole table filtered to the grant's items (``state_items.grant_items_filter``): the
    table is keyed by its items' own ids, so no index names a grant's items, and a grant is deleted rarely
    enough that reading the table once for it (half a read unit per 4 KB, eventually consistent) is
    cheaper than an index every write would pay for. Each item found is deleted with the request bodies
    its outbox names (``BatchWriteItem``, 25 at a time, unprocessed ones sent again).

    Parameters
    ----------
    start_after:
        The last key a previous sweep read (``""``: from the start).
    keep_going:
        Asked before each page: ``False`` stops the sweep there (the invocation's time is running out).

    Returns
    -------
    tuple[str, int]
        Where to go on from (``""``: the whole table was read, the grant's state is gone) and how many
        items were deleted.
    """
    deleted = 0
    start = start_after
    while True:
        if not keep_going():
            return start or _NOT_STARTED, deleted
        params: dict[str, Any] = {
            "TableName": table,
            "Limit": SWEEP_PAGE_ITEMS,
            **grant_items_filter(grant_id),
        }
        if start and start != _NOT_STARTED:
            params["ExclusiveStartKey"] = {"pk": {"S": start}}
        page = dynamodb.scan(**params)
        keys = [key for item in page.get("Items", []) for key in grant_item_keys(item)]
        for first in range(0, len(keys), 25):
            _delete_all(dynamodb, table, keys[first : first + 25])
        deleted += len(keys)
        last = page.get("LastEvaluatedKey")
        if not last:
            return "", deleted
        start = last["pk"]["S"]


_NOT_STARTED = "#"
"""``sweep_grant``'s answer when it stopped before its first page (no key of the table is ``#``)."""


def _delete_all(dynamodb: Any, table: str, keys: Sequence[str]) -> None:
    requests = [{"DeleteRequest": {"Key": {"pk": {"S": key}}}} for key in dict.fromkeys(keys)]
    for _ in range(8):
        if not requests:
            return
        answer = dynamodb.batch_write_item(RequestItems={table: requests})
        requests = answer.get("UnprocessedItems", {}).get(table, [])
        if requests:
            time.sleep(0.1)
    raise RuntimeError(f"{len(requests)} item(s) of the deleted grant not deleted after 8 tries: tried again")
