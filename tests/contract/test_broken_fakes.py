"""The contract catches a broken fake: each deliberately broken variant of a port's fake fails a case.

Why: the contract suite is what keeps ``tests/fakes.py`` honest, and the unit tier and the
interleaving scheduler trust the fakes as far as the contract holds them. A contract that passed on a
fake whose lease is granted while held, whose conditional write does not condition or whose send
ignores its ``Idempotency-Key`` would let such a fake pass every rule's test while the product breaks on
DynamoDB or Nylas. So each variant below breaks one promise of its port (a subclass of the fake: the
product's fakes are untouched), and every case of the port's contract modules runs on it exactly as
its fixture builds the fake (``tests/contract/conftest.py``). A variant is caught by a case that passes
on the correct fake and fails on the broken one; each must be caught by at least one.
"""

import inspect
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

import pytest

from replyonce.adapters.state_items import email_key, shadow_key
from replyonce.answers import Answer
from replyonce.ports import SearchResult, ThreadPage
from replyonce.state import Lease, Reservation, Settlement, ShadowRecord, ThreadState
from tests.contract import (
    conftest,
    test_mailbox_contract,
    test_recipient_budget,
    test_shadow_store,
    test_state_store_contract,
)
from tests.fakes import Clock, FakeMailbox, FakeStateStore

# ---- the state store, broken one promise at a time ------------------------------------------------------


class LeaseGrantedWhileHeld(FakeStateStore):
    """A lease is granted to the next caller while another worker holds it."""

    def take_lease(self, thread_key: str, duration_ms: int, table_began_ms: int = 0) -> Lease:
        with self._lock:
            state = self.threads.get(thread_key)
            if state is not None:
                self.threads[thread_key] = replace(state, lease_owner="")
        return super().take_lease(thread_key, duration_ms, table_began_ms)


class LeaseEndsAMillisecondEarly(FakeStateStore):
    """A lease is free again at its last millisecond (``>`` for ``>=`` in the condition)."""

    def take_lease(self, thread_key: str, duration_ms: int, table_began_ms: int = 0) -> Lease:
        with self._lock:
            state = self.threads.get(thread_key)
            if state is not None and state.lease_expires_at_ms == int(self._clock() * 1000):
                self.threads[thread_key] = replace(state, lease_owner="")
        return super().take_lease(thread_key, duration_ms, table_began_ms)


class IntentStoredWithoutTheLease(FakeStateStore):
    """The intent's conditional write does not condition: a holder that lost the lease still stores."""

    def store_intent(self, lease: Lease, intent: Any, *, grant_alive: str = "") -> bool:
        with self._lock:
            kept = self._kept(intent)
            state = self.threads.get(lease.key, ThreadState())
            self.threads[lease.key] = replace(state, outbox={**state.outbox, intent.id: kept})
        return True


class ReleaseFreesAnotherHolder(FakeStateStore):
    """A stale holder's release frees the thread its new holder has."""

    def release(self, lease: Lease) -> bool:
        with self._lock:
            state = self.threads.get(lease.key)
            if state is not None and not lease.released:
                self.threads[lease.key] = replace(state, lease_owner=lease.token)
        return super().release(lease)


class SettlementWithoutTheLease(FakeStateStore):
    """The settlement's condition is not checked: a stale holder settles as if it still held the thread."""

    def settle(self, lease: Lease, settlement: Settlement, grant_id: str) -> bool:
        with self._lock:
            state = self.threads.get(lease.key, ThreadState())
            self.threads[lease.key] = replace(state, lease_owner=lease.token)
        return super().settle(lease, settlement, grant_id)


class BudgetNeverFull(FakeStateStore):
    """Every reservation is granted, however many replies the inbox had this hour."""

    def reserve(self, reservation: Reservation, intent_id: str) -> bool:
        super().reserve(reservation, intent_id)
        return True


class LastClaimWins(FakeStateStore):
    """The email is claimed by whichever grant asks last, not the first."""

    def claim_email(self, header_message_id: str, grant_id: str) -> str:
        with self._lock:
            self.claims[email_key(header_message_id)] = grant_id
            return grant_id


class LeaseLooksFreeWhileHeld(FakeStateStore):
    """The look a waiting record polls with sees a held lease as free (its owner not read)."""

    def lease_held_for_seconds(self, thread_key: str) -> int:
        return 0


class ShadowRecordOverwritten(FakeStateStore):
    """A second shadow record under a key replaces the first and says it was written."""

    def record_shadow(self, record: ShadowRecord) -> bool:
        with self._lock:
            self.shadow[shadow_key(record.grant_id, record.record_id)] = record
            return True


# ---- the mailbox, broken one promise at a time ----------------------------------------------------------


class ThreadPageDropsTheNewest(FakeMailbox):
    """A thread's first page leaves out its newest message (an off-by-one in the cursor)."""

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        page = super().thread_page(grant_id, thread_id, limit, page_token)
        return replace(page, messages=page.messages[1:]) if page_token is None else page


class ThreadPageOldestFirst(FakeMailbox):
    """A page lists its messages oldest first."""

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        page = super().thread_page(grant_id, thread_id, limit, page_token)
        return replace(page, messages=tuple(reversed(page.messages)))


class SendIgnoresTheIdempotencyKey(FakeMailbox):
    """Every send is a new email: a retry under the same ``Idempotency-Key`` is not replayed."""

    def send(self, grant_id: str, request: str, key: str) -> Answer:
        return super().send(grant_id, request, f"{key}#{uuid.uuid4().hex}")


@dataclass
class KeyKeptForever(FakeMailbox):
    """An ``Idempotency-Key`` is replayed after its hour too, so a send after the hour never goes out."""

    answered: dict[tuple[str, str], Answer] = field(default_factory=dict)

    def send(self, grant_id: str, request: str, key: str) -> Answer:
        if (grant_id, key) in self.answered:
            return replace(self.answered[(grant_id, key)], replayed=True)
        answer = super().send(grant_id, request, key)
        self.answered[(grant_id, key)] = answer
        return answer


class UnindexedSearchSaysNotThere(FakeMailbox):
    """A ``metadata_pair`` search on a key Nylas does not index answers "none found", not a failure."""

    def search(self, grant_id: str, kind: str, key: str, value: str) -> SearchResult:
        answer = super().search(grant_id, kind, key, value)
        return replace(answer, failed="", nylas_time=int(self.clock())) if answer.failed else answer


class DraftGoesOut(FakeMailbox):
    """A draft is sent as it is created (a review mode that is not one)."""

    def create_draft(self, grant_id: str, request: str) -> Answer:
        answer = super().create_draft(grant_id, request)
        self._deliver_reply(grant_id, json.loads(request), None)
        return answer


STORE_VARIANTS = [
    LeaseGrantedWhileHeld,
    LeaseEndsAMillisecondEarly,
    IntentStoredWithoutTheLease,
    ReleaseFreesAnotherHolder,
    SettlementWithoutTheLease,
    BudgetNeverFull,
    LastClaimWins,
    LeaseLooksFreeWhileHeld,
    ShadowRecordOverwritten,
]
MAILBOX_VARIANTS = [
    ThreadPageDropsTheNewest,
    ThreadPageOldestFirst,
    SendIgnoresTheIdempotencyKey,
    KeyKeptForever,
    UnindexedSearchSaysNotThere,
    DraftGoesOut,
]
STORE_CONTRACT = (test_state_store_contract, test_recipient_budget, test_shadow_store)
MAILBOX_CONTRACT = (test_mailbox_contract,)


# ---- the contract's cases, run on a fake as their fixtures build it ------------------------------------


def cases(modules: tuple[ModuleType, ...]) -> list[Callable[..., Any]]:
    """Every case of the modules that takes a port (``store`` or ``world``)."""
    found = [
        case
        for module in modules
        for name, case in vars(module).items()
        if name.startswith("test_") and callable(case)
    ]
    return [case for case in found if {"store", "world"} & set(inspect.signature(case).parameters)]


def passes(case: Callable[..., Any], fake: type) -> bool:
    """Whether ``case`` passes on ``fake``, built as the contract's fixtures build the fake side."""
    module = inspect.getmodule(case)
    clock = Clock(float(getattr(module, "START", conftest.START)))
    available: dict[str, Any] = {"clock": clock}
    if issubclass(fake, FakeStateStore):
        available["store"] = fake(clock)
    else:
        available["world"] = conftest._fake_world(clock, fake)
    try:
        case(**{name: available[name] for name in inspect.signature(case).parameters})
    except (Exception, pytest.fail.Exception):  # an assertion, an error, a pytest.raises not met
        return False
    return True


def xfailed_on_the_fake(case: Callable[..., Any]) -> bool:
    """Whether the contract marks ``case`` as an expected failure on the fake side (a named difference)."""
    for mark in getattr(case, "pytestmark", []):
        if mark.name == "parametrize":
            for value in mark.args[1]:
                if getattr(value, "values", None) == ("fake",):
                    return any(m.name == "xfail" for m in value.marks)
    return False


def caught_by(variant: type, correct: type, modules: tuple[ModuleType, ...]) -> list[str]:
    return [case.__name__ for case in cases(modules) if passes(case, correct) and not passes(case, variant)]


def test_the_correct_fakes_pass_every_case_run_this_way_but_the_named_differences():
    # What makes "caught" mean something: run this way, the product's fakes fail exactly the cases the
    # contract itself expects them to fail (its strict xfails), and pass the rest.
    for correct, modules in ((FakeStateStore, STORE_CONTRACT), (FakeMailbox, MAILBOX_CONTRACT)):
        ran = cases(modules)
        assert len(ran) >= 10
        failed = sorted(case.__name__ for case in ran if not passes(case, correct))
        assert failed == sorted(case.__name__ for case in ran if xfailed_on_the_fake(case))


@pytest.mark.parametrize("variant", STORE_VARIANTS, ids=lambda v: v.__name__)
def test_a_broken_state_store_fake_fails_the_contract(variant):
    assert caught_by(variant, FakeStateStore, STORE_CONTRACT) != [], variant.__doc__


@pytest.mark.parametrize("variant", MAILBOX_VARIANTS, ids=lambda v: v.__name__)
def test_a_broken_mailbox_fake_fails_the_contract(variant):
    assert caught_by(variant, FakeMailbox, MAILBOX_CONTRACT) != [], variant.__doc__
