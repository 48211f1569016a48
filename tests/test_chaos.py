"""The chaos harness in its small configuration: every fault kind injected, zero violations.

The full run (>= 10,000 notifications) is a command; docs/reliability.md has its
figures and the exact `make chaos` line that reproduces them. This one keeps CI honest: if a change breaks an
invariant under faults, this test fails with the violations listed.
"""

import pytest

from chaos import __main__ as chaos_main
from chaos.faults import ALL_FAULTS
from chaos.run import ChaosSettings, Experiment, render


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
    )
    report = Experiment(settings).run()
    table = render(report)
    assert report.drained, table
    assert report.violations == {number: [] for number in report.violations}, table
    injected = {kind for kind, count in report.faults.items() if count}
    injected |= {kind.removesuffix("_window") for kind in injected}
    assert injected >= ALL_FAULTS, f"never injected: {sorted(ALL_FAULTS - injected)}\n{table}"
    assert report.replies_sent > 0
    assert report.faults["worker_killed"] > 0
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
