"""The pure parts of ``make bench-flood`` (``bench/flood.py``): its schedule, its ratios and the registry's
cost arithmetic. The figures themselves are measurements (``docs/performance.md``), never asserted."""

import pytest

from bench.flood import (
    FLOOD_GRANT,
    FloodPlan,
    RegistryCost,
    Times,
    item_bytes,
    page_read_units,
    ratios,
    schedule,
)

PLAN = FloodPlan(grants=50, per_grant=2, flood_factor=50, seconds=60.0, seed=7)


def test_the_quiet_grants_arrivals_are_the_same_with_and_without_the_flood():
    calm, flooded = schedule(PLAN, flood=False), schedule(PLAN, flood=True)
    assert [a for a in calm if a.quiet] == [a for a in flooded if a.quiet]
    assert len([a for a in calm if a.quiet]) == (PLAN.grants - 1) * PLAN.per_grant


def test_the_flooding_grant_sends_like_the_others_when_calm_and_fifty_times_as_much_at_once_in_a_flood():
    calm = [a for a in schedule(PLAN, flood=False) if a.grant == FLOOD_GRANT]
    flood = [a for a in schedule(PLAN, flood=True) if a.grant == FLOOD_GRANT]
    assert len(calm) == PLAN.per_grant
    assert len(flood) == 50 * PLAN.per_grant
    start = PLAN.flood_at_fraction * PLAN.seconds
    assert all(start <= a.at <= start + PLAN.flood_seconds for a in flood)


def test_the_schedule_is_in_time_order_and_seeded():
    arrivals = schedule(PLAN, flood=True)
    assert [a.at for a in arrivals] == sorted(a.at for a in arrivals)
    assert schedule(PLAN, flood=True) == arrivals
    assert schedule(FloodPlan(grants=50, per_grant=2, seed=8), flood=True) != arrivals


def _times(quiet: list[float]) -> Times:
    return Times(quiet=quiet, flooding=[], unanswered_quiet=0, unanswered_flooding=0)


def test_the_ratios_are_the_flood_run_s_nearest_rank_percentiles_over_the_calm_run_s():
    calm = _times([1.0] * 98 + [2.0, 4.0])  # p50 1.0, p99 2.0 (nearest rank: the 99th of 100)
    flood = _times([1.5] * 98 + [2.4, 9.0])  # p50 1.5, p99 2.4
    found = ratios(flood, calm)
    assert (found.p50, found.p99) == pytest.approx((1.5, 1.2))
    assert found.met
    assert not ratios(_times([1.0] * 98 + [2.6, 9.0]), calm).met  # 1.3x


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        ([235] * 1000, (1, 29.0)),  # 235,000 bytes: 58 blocks of 4 KB at half a unit
        ([4096], (1, 0.5)),
        ([4097], (1, 1.0)),
        ([400_000] * 3, (2, 98.0 + 49.0)),  # two fit a 1 MB page (196 blocks), the third starts the next
    ],
)
def test_a_query_is_billed_per_4_kb_of_each_1_mb_page_at_half_a_unit(sizes, expected):
    assert page_read_units(sizes) == expected


def test_an_item_is_sized_by_its_names_and_values():
    item = {"pk": {"S": "grant"}, "sk": {"S": "g-1"}, "settings": {"S": "{}"}}
    assert item_bytes(item) == 2 + 5 + 2 + 3 + 8 + 2


def test_the_registry_s_cost_per_record_at_the_run_s_hit_rate():
    cost = RegistryCost(
        grants=1000,
        item_bytes=240,
        refresh_requests=1,
        refresh_read_units=29.0,
        refresh_ms=200.0,
        hit_ms=0.5,
        records=4000,
        refreshes=20,
    )
    assert cost.hit_rate == pytest.approx(1 - 20 / 4000)
    assert cost.requests_per_record == pytest.approx(0.005)
    assert cost.ms_per_record == pytest.approx(0.005 * 200.0 + 0.995 * 0.5)


def test_make_bench_flood_replaces_its_own_section_and_make_bench_keeps_it():
    from bench.flood import SECTION_BEGIN, SECTION_END, carry_over, with_section

    page = "# Performance\n\nintro\n\n## Scale\n\ntable\n"
    once = with_section(page, "## Fair\n\nfirst run\n")
    assert once.startswith(page.rstrip())
    assert once.count(SECTION_BEGIN) == once.count(SECTION_END) == 1
    twice = with_section(once, "## Fair\n\nsecond run\n")
    assert "second run" in twice
    assert "first run" not in twice
    assert twice.count(SECTION_BEGIN) == 1
    regenerated = "# Performance\n\nnew intro\n\n## Scale\n\nnew table\n"
    kept = carry_over(twice, regenerated)
    assert "new table" in kept
    assert "second run" in kept
    assert carry_over(page, regenerated) == regenerated  # nothing to keep


def test_a_grant_s_cost_from_the_registry_s_sizes_and_reads():
    from bench.flood import grant_cost

    cost = RegistryCost(1000, 235, 1, 29.0, 200.0, 0.5, records=4000, refreshes=20)
    g = grant_cost(cost, change_item_bytes=400)
    # (235 + 400 + 2 x 100 bytes) at $0.25 + $0.20 per GB-month.
    assert g.at_rest_per_month == pytest.approx(835e-9 * 0.45)
    # 43,200 refreshes a month of 29 units at $0.125 per million, shared by 1,000 grants.
    assert g.refresh_per_container_month == pytest.approx(43_200 * 29 * 0.125e-6 / 1000)
    # 0.005 pages per record x 29 units x $0.125 per million units, per million records.
    assert g.registry_per_million_replies == pytest.approx(0.005 * 29 * 0.125)
