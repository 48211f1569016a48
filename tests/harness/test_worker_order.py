"""The suite's long runs start first, one per xdist worker (``tests/worker_order.py``)."""

import itertools

import pytest

from tests.worker_order import long_runs_first, share_starts


@pytest.mark.parametrize(
    ("count", "workers", "starts"),
    [
        (8, 4, [0, 2, 4, 6]),
        (10, 4, [0, 2, 4, 7]),  # 10 // 4 = 2, then 8 // 3 = 2, then 6 // 2 = 3, then the last 3
        (10, 3, [0, 3, 6]),
        (3, 4, [0, 0, 1, 2]),
        (5, 1, [0]),
    ],
)
def test_shares_are_cut_as_work_stealing_cuts_them(count, workers, starts):
    assert share_starts(count, workers) == starts


def shares(order, workers):
    starts = [*share_starts(len(order), workers), len(order)]
    return [order[a:b] for a, b in itertools.pairwise(starts)]


def test_each_long_run_heads_a_share_of_its_own_and_the_rest_keep_their_order():
    items = [f"t{n}" for n in range(12)]
    long = {"t5", "t6", "t7"}
    order = long_runs_first(items, [item in long for item in items], workers=4)
    assert sorted(order) == sorted(items)  # nothing lost or doubled
    heads = [share[0] for share in shares(order, 4)]
    assert heads[:3] == ["t5", "t6", "t7"]
    assert [item for item in order if item not in long] == [item for item in items if item not in long]


def test_more_long_runs_than_workers_start_the_first_shares_and_the_others_stay_in_place():
    items = ["a", "L1", "L2", "L3", "b", "c"]
    order = long_runs_first(items, [item.startswith("L") for item in items], workers=2)
    assert [share[0] for share in shares(order, 2)] == ["L1", "L2"]
    assert sorted(order) == sorted(items)


def test_one_process_keeps_the_collection_as_it_is():
    items = ["a", "L", "b"]
    assert long_runs_first(items, [False, True, False], workers=1) == items
