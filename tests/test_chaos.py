"""The chaos harness in CI: one small run with every fault kind and every hostile knob.

The full run (>= 10,000 notifications) is a command; docs/reliability.md has its
figures and the exact `make chaos` line that reproduces them. That each guard
matters is proved elsewhere, deterministically: every interleaving of small
scenarios and every mutant caught on a named schedule (tests/test_interleavings.py).
Here, if a change breaks an invariant under faults and hostile mail, the run
fails with the violations listed. One seed, no retries.
"""

import pytest

from chaos import __main__ as chaos_main
from chaos.faults import ALL_FAULTS
from chaos.run import ChaosSettings, Experiment, render
from chaos.workload import HOSTILE_KNOBS, WorkloadSettings


def test_small_chaos_run_holds_every_invariant(tmp_path):
    # As small as it can be while every fault kind fires (each probabilistic rule fires on its first
    # match, so a low probability suffices) and every knob plays (the workload plays each kind of
    # mail and each window once early).
    knobs = WorkloadSettings().gentle(keep=frozenset(HOSTILE_KNOBS))
    settings = ChaosSettings(
        seed=5,
        notifications=40,
        workers=3,
        fault_probability=0.01,
        function_timeout_seconds=5.0,
        clock_skew_seconds=0.5,
        fuzz_requests=18,
        timeout_seconds=300,
        workload=knobs,
        logs_path=tmp_path / "chaos-logs.jsonl",  # and its history, to diagnose a failure
    )
    report = Experiment(settings).run()
    table = render(report) + f"\n(logs and history: {settings.logs_path}*)"
    assert report.drained, table
    assert report.violations == {number: [] for number in report.violations}, table
    assert report.dead_lettered == 0, table
    injected = {kind for kind, count in report.faults.items() if count}
    injected |= {kind.removesuffix("_window") for kind in injected}
    assert injected >= ALL_FAULTS, f"never injected: {sorted(ALL_FAULTS - injected)}\n{table}"
    assert report.replies_sent > 0
    assert report.faults["worker_killed"] > 0
    # The hostile mail and the documented Nylas behaviours were played, not just configured.
    assert report.unsupported_knobs == [], table
    played = {
        "skewed_date",
        "slow_send",
        "provider_error",
        "provider_error_sent",
        "send_queue_window",
        "message_delivered",
        "search_failure_window",
        "account_limit_window",
        "junk",
        "two_agents",
    }
    assert {kind for kind in played if report.faults.get(kind)} == played, table
    # Every worker that ran (respawns included) had its own clock within ±Δ.
    assert len(report.worker_skews) >= settings.workers
    assert 0 < report.widest_clock_gap <= 2 * settings.clock_skew_seconds


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
    from replyonce import core, plan  # core first: it imports the name from plan

    assert core.loop_guard_exhausted is plan.loop_guard_exhausted
    monkeypatch.delattr(plan, "loop_guard_exhausted")
    with pytest.raises(mutants.MutantPending, match="loop_guard_exhausted"):
        mutants.apply("no_loop_guard")
