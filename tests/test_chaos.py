"""The chaos harness in its small configurations: the product holds, and every mutant is caught.

The full run (>= 10,000 notifications) is a command; docs/reliability.md has its
figures and the exact `make chaos` line that reproduces them. These keep CI honest:

- a small run with every fault kind and the hostile mail the product holds must
  show zero violations (if a change breaks an invariant under faults, it fails
  with the violations listed);
- each mutant (one guard disabled inside the worker processes, chaos/mutants.py)
  must break the invariant its guard protects: a checker that catches no mutant
  proves nothing.
"""

import pytest

from chaos import __main__ as chaos_main
from chaos.faults import ALL_FAULTS
from chaos.mutants import MUTANT_TIMEOUT_SECONDS, MUTANTS
from chaos.run import ChaosSettings, Experiment, render
from chaos.workload import HOSTILE_KNOBS, WorkloadSettings

# Hostile knobs kept off in CI until the product holds them. Empty: since the outbox, coverage by
# message, key generations and headers-from-the-read replier (issue 11), it holds all of them.
KNOBS_NOT_YET_HELD: frozenset[str] = frozenset()


def test_small_chaos_run_holds_every_invariant():
    settings = ChaosSettings(
        seed=5,
        notifications=120,
        workers=3,
        fault_probability=0.05,
        function_timeout_seconds=5.0,
        clock_skew_seconds=0.5,
        fuzz_requests=60,
        timeout_seconds=400,
        workload=WorkloadSettings().gentle(keep=frozenset(HOSTILE_KNOBS) - KNOBS_NOT_YET_HELD),
    )
    report = Experiment(settings).run()
    table = render(report)
    assert report.drained, table
    assert report.violations == {number: [] for number in report.violations}, table
    assert report.dead_lettered == 0, table
    injected = {kind for kind, count in report.faults.items() if count}
    injected |= {kind.removesuffix("_window") for kind in injected}
    assert injected >= ALL_FAULTS, f"never injected: {sorted(ALL_FAULTS - injected)}\n{table}"
    assert report.replies_sent > 0
    assert report.faults["worker_killed"] > 0
    # The hostile mail was played, not just configured.
    assert report.unsupported_knobs == [], table
    assert report.faults["skewed_date"] > 0, table
    assert report.faults["slow_send"] > 0, table
    assert report.redriven > 0, table
    # Every worker that ran (respawns included) had its own clock within ±Δ.
    assert len(report.worker_skews) >= settings.workers
    assert 0 < report.widest_clock_gap <= 2 * settings.clock_skew_seconds


# Breaks that need two workers on one thread at the right moment are caught in most runs, not all
# (no_ledger_owner_check, with its 1 s drafter: 4 of 6 runs here; no_lease: 4 of 4 here, but it
# survived one CI run on a loaded machine; docs/reliability.md). Such a mutant gets further seeds:
# it passes once one run catches it and fails when every run survives.
_RUNS = {"no_ledger_owner_check": 5, "no_lease": 3}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_caught(name):
    mutant = MUTANTS[name]
    tables = []
    for attempt in range(_RUNS.get(name, 1)):
        settings = ChaosSettings(
            seed=mutant.seed + attempt,
            notifications=mutant.notifications,
            workers=mutant.workers,
            function_timeout_seconds=MUTANT_TIMEOUT_SECONDS,
            clock_skew_seconds=mutant.clock_skew_seconds,
            faults=mutant.faults,
            fuzz_requests=0,
            timeout_seconds=300,
            mutant=name,
        )
        report = Experiment(settings).run()
        table = render(report)
        assert not report.mutant_pending, table
        if report.caught():
            return
        tables.append(table)
    pytest.fail(
        f"mutant {name} survived {len(tables)} run(s): none of invariants {mutant.guards} broken\n"
        + "\n".join(tables)
    )


def test_skew_series_refuses_to_start_when_the_doc_has_no_place_for_it(tmp_path, monkeypatch, capsys):
    # The series runs for minutes: a doc it cannot write to must stop it before the first run.
    doc = tmp_path / "reliability.md"
    doc.write_text("# Reliability\n\n<!-- runs -->\n")
    monkeypatch.setattr(chaos_main, "DOC", doc)
    with pytest.raises(SystemExit) as exited:
        chaos_main.main(["--skew-series", "1,2", "--write"])
    assert exited.value.code == 2
    assert "<!-- skew-series -->" in capsys.readouterr().err
    assert doc.read_text() == "# Reliability\n\n<!-- runs -->\n"


def test_a_mutant_whose_target_is_missing_is_pending_not_silently_a_no_op(monkeypatch):
    # The product renamed the guard's function: the mutant must say so, not run the intact product.
    from chaos import mutants
    from replyonce import decisions

    monkeypatch.delattr(decisions, "loop_guard_exhausted")
    with pytest.raises(mutants.MutantPending, match="loop_guard_exhausted"):
        mutants.apply("no_loop_guard")
