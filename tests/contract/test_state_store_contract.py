"""The state store port's contract: every case on ``FakeStateStore`` and on ``DynamoDBStateStore`` (moto).

What the replier may rely on, observed only through the port (``replyonce.ports.StateStore``): a
thread's state is what the next ``take_lease`` returns with the lease, a message's settlement what
``ledger_entry`` reads back. Each public method has a success and a refusal here; the recipient
budget's sliding hour is ``tests/contract/test_recipient_budget.py`` and the shadow records' once-per-key is
``tests/contract/test_shadow_store.py``, which run their tables on both sides the same way.
"""

import random
from base64 import b64encode
from dataclasses import replace

import boto3
import pytest

from replyonce.adapters.grant_registry import Change, not_deleted_check, read_life, write_life
from replyonce.adapters.state_items import BODY_CHUNK_BYTES, stored_request
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.exceptions import GrantLifeRefused, ThreadBusyError
from replyonce.rules.grant_life import GrantLife
from replyonce.state import (
    Intent,
    IntentState,
    LedgerEntry,
    LedgerRead,
    Reservation,
    Settlement,
    ShadowOutcome,
    ShadowRecord,
    Status,
    ThreadState,
)
from tests.contract.conftest import START, TTL_SECONDS
from tests.fakes import FakeStateStore

THREAD = "thread#g1#t1"
NOW = int(START)
NOW_MS = NOW * 1000


def thread_state(store, key: str = THREAD) -> ThreadState:
    """The thread's state as the next holder reads it (the lease taken and freed again)."""
    lease = store.take_lease(key, 1_000)
    assert store.release(lease)
    return replace(lease.state, lease_owner="", lease_expires_at_ms=0)


def intent(intent_id: str = "intent-1", covered=("m1", "m2"), request: str = '{"body": "Hello"}') -> Intent:
    return Intent(intent_id, "t1", covered[0], tuple(covered), request, created_at=NOW)


def sent(reply: Intent, message_id: str = "sent-1") -> Settlement:
    return Settlement(
        Status.REPLIED, reply.covered, NOW, intent=reply, counts_as_reply=True, reply_message_id=message_id
    )


def taken_over(store, clock, lease):
    """The lease's end passes and another worker takes the thread: ``lease`` is now a stale holder's."""
    clock.advance((lease.expires_at_ms - clock() * 1000) / 1000 + 0.001)
    return store.take_lease(lease.key, 30_000)


# ---- the lease ------------------------------------------------------------------------------------------


def test_a_free_thread_is_leased_with_its_empty_state(store):
    lease = store.take_lease(THREAD, 30_000)
    assert lease.key == THREAD
    assert lease.expires_at_ms == NOW_MS + 30_000
    # The first lease of an empty table begins it (its thread items keep when: ``since_ms``), and the
    # item it creates keeps its own creation (``created_ms``: new state whatever the table's beginning
    # says, issue 48).
    assert lease.state == ThreadState(
        lease_owner=lease.token, lease_expires_at_ms=NOW_MS + 30_000, since_ms=NOW_MS, created_ms=NOW_MS
    )


def test_a_lease_lasts_at_least_a_second(store):
    assert store.take_lease(THREAD, 10).expires_at_ms == NOW_MS + 1_000


def test_a_held_lease_is_refused_with_how_long_it_is_held(store, clock):
    store.take_lease(THREAD, 30_000)
    clock.advance(10.5)
    with pytest.raises(ThreadBusyError) as busy:
        store.take_lease(THREAD, 30_000)
    assert (busy.value.thread_key, busy.value.held_for_seconds) == (THREAD, 20)


def test_a_lease_is_held_up_to_its_last_millisecond(store, clock):
    store.take_lease(THREAD, 30_000)
    clock.advance(30)
    with pytest.raises(ThreadBusyError) as busy:
        store.take_lease(THREAD, 30_000)
    assert busy.value.held_for_seconds == 1


def test_a_look_at_the_lease_says_what_a_take_would_meet_and_takes_nothing(store, clock):
    # The read a waiting record polls with (issue 46): 0 for a thread nobody holds, the holder's time
    # left as a refused take says it, up to the last millisecond, and 0 once the lease expired or was freed.
    assert store.lease_held_for_seconds(THREAD) == 0
    lease = store.take_lease(THREAD, 30_000)
    clock.advance(10.5)
    assert store.lease_held_for_seconds(THREAD) == 20
    assert store.lease_held_for_seconds("thread#g1#t2") == 0
    clock.advance(19.5)
    assert store.lease_held_for_seconds(THREAD) == 1
    with pytest.raises(ThreadBusyError):
        store.take_lease(THREAD, 30_000)  # the look took nothing: the holder still holds it
    clock.advance(0.001)
    assert store.lease_held_for_seconds(THREAD) == 0
    assert store.take_lease(THREAD, 30_000).token != lease.token  # expired: the next take gets it


def test_a_lease_of_one_thread_leaves_another_free(store):
    store.take_lease(THREAD, 30_000)
    assert store.take_lease("thread#g1#t2", 30_000).key == "thread#g1#t2"


def test_an_expired_lease_is_taken_over_and_its_old_holder_cannot_release_it(store, clock):
    stale = store.take_lease(THREAD, 30_000)
    current = taken_over(store, clock, stale)
    assert current.token != stale.token
    assert current.state.lease_owner == current.token
    assert store.release(stale) is False
    with pytest.raises(ThreadBusyError):
        store.take_lease(THREAD, 30_000)  # the new holder's lease is untouched


def test_a_released_lease_frees_the_thread_at_once(store):
    lease = store.take_lease(THREAD, 30_000)
    assert store.release(lease) is True
    assert lease.released
    assert store.take_lease(THREAD, 30_000).token != lease.token


def test_releasing_a_released_lease_again_is_no_loss_and_frees_nobody_elses(store):
    lease = store.take_lease(THREAD, 30_000)
    assert store.release(lease) is True
    other = store.take_lease(THREAD, 30_000)
    assert store.release(lease) is True  # it was freed by us: nothing was lost
    with pytest.raises(ThreadBusyError):
        store.take_lease(THREAD, 30_000)
    assert store.release(other) is True


# ---- intents (the outbox) -------------------------------------------------------------------------------


def test_a_stored_intent_is_read_back_by_the_next_holder(store):
    lease = store.take_lease(THREAD, 30_000)
    assert store.store_intent(lease, intent()) is True
    attempted = replace(intent(), attempts=1, first_attempt_at=NOW, last_attempt_at=NOW)
    assert store.store_intent(lease, attempted) is True  # the next state of the same intent replaces it
    assert store.store_intent(lease, intent("intent-2", covered=("m3",))) is True
    store.release(lease)
    assert thread_state(store).outbox == {"intent-1": attempted, "intent-2": intent("intent-2", ("m3",))}


def test_a_large_request_is_read_back_byte_for_byte(store):
    # Incompressible text, larger than the thread item keeps even compressed: it goes to body items.
    text = b64encode(random.Random(7).randbytes(BODY_CHUNK_BYTES)).decode()
    large = intent(request=f'{{"body": "{text}"}}')
    assert stored_request(large.request).chunks, "the case must exercise the body items"
    lease = store.take_lease(THREAD, 30_000)
    assert store.store_intent(lease, large) is True
    store.release(lease)
    assert thread_state(store).outbox["intent-1"].request == large.request


def test_a_holder_that_lost_the_lease_stores_no_intent(store, clock):
    stale = store.take_lease(THREAD, 30_000)
    current = taken_over(store, clock, stale)
    assert store.store_intent(stale, intent()) is False
    store.release(current)
    assert thread_state(store).outbox == {}


# ---- an intent stored right before its send, with its grant's life (issues 42 and 46) -------------------


@pytest.fixture
def life_checked(request, store, clock):
    """``store`` wired to a grant registry's lives, and a function that says Nylas deleted a grant: the
    fake's set, or the life item written as ``make``'s replier writes it (``grant_registry.write_life``)."""
    if isinstance(store, FakeStateStore):
        store.deleted_grants = set()
        return store, store.deleted_grants.add
    aws = request.getfixturevalue("aws")
    table, client = aws.tables["GrantRegistryTable"], boto3.client("dynamodb")
    store = DynamoDBStateStore(
        aws.tables["StateTable"],
        client,
        ttl_seconds=TTL_SECONDS,
        clock=clock,
        grant_life=lambda grant_id: not_deleted_check(table, grant_id),
    )

    def write(grant_id: str, life: GrantLife) -> None:
        read = read_life(client, table, grant_id)
        write_life(client, table, grant_id, life, read, Change(grant_id, "2027-01-01", "life", "nylas:test"))

    def delete(grant_id: str) -> None:
        write(grant_id, GrantLife(created_at=NOW - 60, deleted_at=NOW))

    write("g-expired", GrantLife(created_at=NOW - 60, expired_at=NOW))
    return store, delete


def test_an_intent_is_stored_with_its_grants_life_unless_nylas_deleted_the_grant(life_checked):
    store, delete = life_checked
    lease = store.take_lease(THREAD, 30_000)
    assert store.store_intent(lease, intent(), grant_alive="g1") is True  # no life: Nylas said nothing
    assert store.store_intent(lease, intent("intent-3"), grant_alive="g-expired") is True  # not deleted
    delete("g1")
    with pytest.raises(GrantLifeRefused):
        store.store_intent(lease, intent("intent-2", covered=("m3",)), grant_alive="g1")
    assert store.store_intent(lease, intent("intent-4", covered=("m4",))) is True  # not asked: not checked
    store.release(lease)
    assert set(thread_state(store).outbox) == {"intent-1", "intent-3", "intent-4"}  # nothing of the refused


def test_a_holder_that_lost_the_lease_stores_no_intent_whatever_the_grants_life(life_checked, clock):
    store, delete = life_checked
    stale = store.take_lease(THREAD, 30_000)
    current = taken_over(store, clock, stale)
    assert store.store_intent(stale, intent(), grant_alive="g1") is False
    delete("g1")
    assert store.store_intent(stale, intent(), grant_alive="g1") is False  # the lease is what it lost
    store.release(current)
    assert thread_state(store).outbox == {}


# ---- settling and the ledger ----------------------------------------------------------------------------


def test_no_ledger_entry_for_a_message_never_settled(store):
    assert store.ledger_entry("g1", "m1") is None
    assert store.read_ledger("g1", "m1") == LedgerRead(None, 0)  # nor a beginning: the table is new


def test_the_ledger_is_read_with_the_tables_beginning_which_a_new_thread_item_is_dated_by(store, clock):
    thread_state(store, "thread#g1#first")  # the table's first lease begins it
    lease = store.take_lease(THREAD, 30_000)
    reply = intent(covered=("m1",))
    assert store.store_intent(lease, reply) is True
    assert store.settle(lease, sent(reply), "g1") is True
    clock.advance(600)
    assert store.read_ledger("g1", "m1") == LedgerRead(store.ledger_entry("g1", "m1"), NOW_MS)
    assert store.read_ledger("g1", "m2") == LedgerRead(None, NOW_MS)
    # A lease that creates its thread item dates it by the beginning the record read (a restore may have
    # raised it since: ``make restore-state`` stamps the thread items again), not by a read of its own.
    later = store.take_lease("thread#g1#later", 30_000, table_began_ms=NOW_MS + 5_000)
    assert (later.state.since_ms, later.state.created_ms) == (NOW_MS + 5_000, NOW_MS + 600_000)
    assert store.release(later)
    assert thread_state(store, "thread#g1#later").since_ms == NOW_MS + 5_000


def test_a_sent_reply_settles_its_messages_records_itself_and_frees_the_thread(store):
    reply = intent()
    lease = store.take_lease(THREAD, 30_000)
    store.store_intent(lease, reply)
    assert store.settle(lease, sent(reply), "g1") is True
    assert lease.released
    for message_id in ("m1", "m2"):
        assert store.ledger_entry("g1", message_id) == LedgerEntry(
            message_id, Status.REPLIED, "sent-1", "", "intent-1", "", NOW
        )
    assert store.ledger_entry("g1", "sent-1") == LedgerEntry(
        "sent-1", Status.OWN_REPLY, "", "", "intent-1", "", NOW
    )
    assert store.ledger_entry("g2", "m1") is None  # the ledger is per grant
    assert thread_state(store) == ThreadState(
        replies={"intent-1": NOW}, covered={"m1": NOW, "m2": NOW}, since_ms=NOW_MS, created_ms=NOW_MS
    )


def test_an_expired_lease_nobody_took_over_still_settles(store, clock):
    reply = intent()
    lease = store.take_lease(THREAD, 1_000)
    clock.advance(5)  # past its end, but the owner token is still ours: the write is conditioned on it
    assert store.settle(lease, sent(reply), "g1") is True
    assert store.ledger_entry("g1", "m2").status is Status.REPLIED


def test_a_burst_larger_than_one_transaction_settles_every_message(store):
    covered = tuple(f"m{n}" for n in range(150))  # DynamoDB takes 100 items in one transaction
    reply = intent(covered=covered)
    lease = store.take_lease(THREAD, 30_000)
    assert store.settle(lease, sent(reply), "g1") is True
    assert {store.ledger_entry("g1", m).status for m in covered} == {Status.REPLIED}
    assert len(thread_state(store).covered) == 50  # the thread item remembers the newest (COVERED_MEMORY)


def test_a_queued_reply_stays_in_the_outbox_as_it_now_is(store):
    reply = intent()
    queued = replace(reply, state=IntentState.QUEUED, accepted_at=NOW, reply_message_id="sent-1")
    lease = store.take_lease(THREAD, 30_000)
    store.store_intent(lease, reply)
    settlement = replace(sent(queued), status=Status.QUEUED, keep=True)
    assert store.settle(lease, settlement, "g1") is True
    assert store.ledger_entry("g1", "m1").status is Status.QUEUED
    assert thread_state(store).outbox == {"intent-1": queued}


def test_a_holder_that_lost_the_lease_still_records_what_nylas_did_and_leaves_the_new_holder_alone(
    store, clock
):
    reply = intent()
    stale = store.take_lease(THREAD, 30_000)
    store.store_intent(stale, reply)
    current = taken_over(store, clock, stale)
    store.store_intent(current, intent("intent-2", covered=("m3",)))
    assert store.settle(stale, sent(reply), "g1") is False
    assert store.ledger_entry("g1", "m1").status is Status.REPLIED  # the email went out either way
    with pytest.raises(ThreadBusyError):
        store.take_lease(THREAD, 30_000)  # still the new holder's
    store.release(current)
    after = thread_state(store)
    assert (after.covered, after.replies) == ({"m1": NOW, "m2": NOW}, {"intent-1": NOW})
    assert set(after.outbox) == {"intent-1", "intent-2"}  # the new holder's outbox, as it wrote it


def test_a_holder_that_lost_the_lease_writes_no_shadow_settlement(store, clock):
    record = ShadowRecord("g1", "intent-1", "t1", "m2", ("m2", "m1"), ShadowOutcome.REPLY, "", "hi", NOW)
    stale = store.take_lease(THREAD, 30_000)
    taken_over(store, clock, stale)
    shadowed = Settlement(Status.SHADOWED, record.covered, NOW, reason="reply", shadow=record)
    assert store.settle(stale, shadowed, "g1") is False
    assert store.ledger_entry("g1", "m1") is None
    assert store.record_shadow(record) is True  # its key is still free: nothing was recorded


def test_what_a_stale_holder_settled_survives_the_new_holders_settlement(store, clock):
    first, second = intent(), intent("intent-2", covered=("m3",))
    stale = store.take_lease(THREAD, 30_000)
    current = taken_over(store, clock, stale)
    assert store.settle(stale, sent(first), "g1") is False  # written by key, without the lease
    assert store.settle(current, sent(second, "sent-2"), "g1") is True
    after = thread_state(store)
    assert after.covered == {"m1": NOW, "m2": NOW, "m3": NOW}
    assert after.replies == {"intent-1": NOW, "intent-2": NOW}


def test_a_settled_shadow_burst_is_recorded_once_and_a_second_record_of_its_key_is_refused(store):
    record = ShadowRecord("g1", "intent-1", "t1", "m2", ("m2", "m1"), ShadowOutcome.REPLY, "", "hi", NOW)
    lease = store.take_lease(THREAD, 30_000)
    shadowed = Settlement(Status.SHADOWED, record.covered, NOW, reason="reply", shadow=record)
    assert store.settle(lease, shadowed, "g1") is True
    assert store.ledger_entry("g1", "m1").status is Status.SHADOWED
    assert store.record_shadow(replace(record, text="asked again")) is False
    skipped = ShadowRecord(
        "g1", "message:m3", "t1", "m3", ("m3",), ShadowOutcome.SKIPPED, "bulk_mail", at=NOW
    )
    assert store.record_shadow(skipped) is True  # a skipped message's record is a key of its own


# ---- one email, one answering grant ----------------------------------------------------------------------


def test_the_first_grant_to_claim_an_email_keeps_it_in_every_spelling_of_its_message_id(store):
    assert store.claim_email("<ABC.123@mail.example.com>", "grant-a") == "grant-a"
    assert store.claim_email("abc.123@mail.example.com", "grant-b") == "grant-a"
    assert store.claim_email(" <abc.123@MAIL.example.com> ", "grant-a") == "grant-a"  # a retry: still ours
    assert store.claim_email("<other@mail.example.com>", "grant-b") == "grant-b"


# ---- the recipient budget (its sliding hour: tests/contract/test_recipient_budget.py) -------------------


def test_one_recipients_budget_is_not_another_recipients(store):
    def reserve(email: str, intent_id: str) -> bool:
        return store.reserve(Reservation(email=email, at=NOW, budget=1), intent_id)

    assert reserve("alice@example.com", "i1") is True
    assert reserve("bob@example.com", "i2") is True
    assert reserve("alice@example.com", "i3") is False
    assert reserve("Alice@Example.com", "i1") is True  # the intent that holds the slot, again
