"""The two-Region failover drill in CI: a small run, and its mutant (``chaos/failover.py``).

Two Regions' stacks in one embedded AWS, the state replicated one way with a lag, one Nylas
emulator, the webhook re-pointed at the failover, the old Region still running (and delivered to)
for a while. The world is checked as the chaos run's is (``devstack.invariants``), plus the fence's
own check: the old Region sends nothing its last read of the record before the failover did not
allow. The figures of a larger run are in docs/reliability.md ("Failover across Regions").

Issue 48's handover mutant (``handover_without_the_queue``) is caught on a named schedule by the
deterministic scheduler (``failover_during_a_slow_queued_send`` in tests/integration/test_interleavings.py),
not here: in the drill its catch depends on the held message's follow-up being answered inside wall-clock
windows, and on a loaded machine that follow-up was dead-lettered instead (CI, 17 dead letters in 65
notifications) and the verdict changed with the load. ``make failover-drill ARGS="--slow-queued-send 85
--mutant handover_without_the_queue"`` still plays it by hand.
"""

import pytest

from chaos.failover import REGIONS, DrillSettings, FailoverDrill, render_drill
from chaos.run import ChaosSettings


def drill(**chaos) -> DrillSettings:
    return DrillSettings(
        chaos=ChaosSettings(notifications=30, workers=2, timeout_seconds=400.0, **chaos),
        old_region_seconds=25.0,
    )


@pytest.mark.long_running
def test_a_failover_mid_run_loses_nothing_and_answers_nothing_twice():
    report = FailoverDrill(drill(seed=1)).run()
    assert report.ok, render_drill(report)
    assert report.chaos.violations[1] == []  # no message got two emails
    assert report.chaos.violations[2] == []  # none is lost, those the old Region held included
    assert report.split_brain == []
    # Both Regions answered: the old one before the failover, the new one after (its RTO measured).
    assert report.replies_by_region[REGIONS[0]] > 0
    assert report.replies_by_region[REGIONS[1]] > 0
    assert report.rto_first_reply_seconds is not None
    # Resolvers still holding the old answer: the old Region got its share after the failover.
    assert report.deliveries_to_old_region_after_failover == report.settings.stale_deliveries > 0


@pytest.mark.long_running
def test_the_drill_catches_the_old_region_sending_with_the_fence_off():
    report = FailoverDrill(drill(seed=1, mutant="fence_off")).run()
    assert report.caught(), render_drill(report)
