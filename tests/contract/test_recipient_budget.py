"""What any one inbox can draw from the agent: a budget over a sliding hour, on DynamoDB and in the fake.

The same table runs against the product's adapter (``replyonce.adapters.store.DynamoDBStateStore`` on the
moto server, the template's state table) and the in-memory fake the interleaving scheduler uses
(``tests/fakes.FakeStateStore``), so the fake cannot drift from what DynamoDB's conditions do.
"""

import boto3
import pytest

from replyonce.adapters.store import DynamoDBStateStore
from replyonce.state import Reservation
from tests.fakes import FakeStateStore

HOUR = 3600
START = 1_800_003_540  # 60 s before a clock hour's edge


@pytest.fixture(params=["dynamodb", "fake"])
def store(request):
    if request.param == "fake":
        return FakeStateStore(lambda: START)
    aws = request.getfixturevalue("aws")
    return DynamoDBStateStore(aws.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=HOUR)


def reserve(store, intent: str, at: int, email: str = "victim@gmail.com", budget: int = 3) -> bool:
    return store.reserve(Reservation(email=email, at=at, budget=budget), intent)


def test_the_budget_is_a_sliding_hour_not_a_clock_hour(store):
    # Three replies just before a clock hour's edge, then more just after it: a clock-hour budget let
    # six through in two minutes; a sliding one lets none until the first leaves the hour.
    assert [reserve(store, f"i{n}", START + n) for n in range(3)] == [True, True, True]
    assert [reserve(store, f"j{n}", START + 61 + n) for n in range(3)] == [False, False, False]
    assert reserve(store, "k0", START + HOUR + 1) is True  # i0 left the hour
    assert reserve(store, "k1", START + HOUR + 1) is False


def test_a_retry_of_the_same_burst_spends_no_second_slot(store):
    assert reserve(store, "i0", START) is True
    assert reserve(store, "i0", START + 5) is True
    assert reserve(store, "i1", START + 6) is True
    assert reserve(store, "i2", START + 7) is True
    assert reserve(store, "i0", START + 8) is True  # still its own slot, at a full budget
    assert reserve(store, "i3", START + 9) is False


def test_every_spelling_of_one_inbox_draws_on_one_budget(store):
    spellings = ["victim@gmail.com", "victim+1@gmail.com", "v.ictim@gmail.com", "Victim@googlemail.com"]
    assert [reserve(store, f"i{n}", START + n, email=e) for n, e in enumerate(spellings)] == [
        True,
        True,
        True,
        False,
    ]
    assert reserve(store, "other", START + 10, email="someone.else@gmail.com") is True
