"""``make chaos``: run the harness, print the table, write docs/reliability.md."""

from ops.replier_process import prepare

# This process runs the webhook function and the operator's commands in-process: it is made what a
# container is (the template's Powertools variables) before the layer is imported, as `python -m ops`
# is. Without it every webhook invocation's metric flush raised ("Must contain a metric namespace") and
# each delivery was answered 502: the suite, which sets the variables itself, never saw it. Only when run
# (`python -m chaos`): a test that imports this module keeps its own environment.
if __name__ == "__main__":
    prepare()

import argparse
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

from chaos.faults import ALL_FAULTS
from chaos.mutants import ALL_MUTANTS as MUTANTS
from chaos.mutants import MUTANT_TIMEOUT_SECONDS
from chaos.run import ROOT, ChaosSettings, Experiment, render
from chaos.workload import HOSTILE_KNOBS, WorkloadSettings

DOC = ROOT / "docs" / "reliability.md"
# Markers in DOC: a run replaces everything after RUNS; a skew series the block between its two.
RUNS = "<!-- runs -->"
SKEW_SERIES = "<!-- skew-series -->"
SKEW_SERIES_END = "<!-- /skew-series -->"


def main(argv: list[str] | None = None) -> int:
    # A terminated run (timeout, CI cancel) still stops its moto server and worker processes.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description="Fault injection and concurrency harness for ReplyOnce")
    parser.add_argument("--seed", type=int, default=None, help="default 1 (a mutant's: its own)")
    parser.add_argument("--notifications", type=int, default=None, help="default 300 (a mutant's: its own)")
    parser.add_argument("--workers", type=int, default=None, help="default 3 (a mutant's: its own)")
    parser.add_argument("--fault-probability", type=float, default=0.02)
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="the replier's function timeout in the run (6; a mutant's 5)",
    )
    parser.add_argument(
        "--clock-skew", type=float, default=0.0, help="max |skew| of a worker's clock, seconds"
    )
    parser.add_argument(
        "--faults", default="", help=f"comma-separated subset of: {', '.join(sorted(ALL_FAULTS))}"
    )
    parser.add_argument("--max-seconds", type=float, default=0.0, help="stop waiting after this (0: scale)")
    parser.add_argument(
        "--skew-series",
        default="",
        help="comma-separated clock skews (s): one run per value, clock_skew the only fault unless "
        "--faults says otherwise, same seed and workload for every value",
    )
    parser.add_argument(
        "--mutant",
        default="",
        choices=["", *MUTANTS],
        help="disable one guard in every worker (chaos/mutants.py); the run must then break its invariant",
    )
    parser.add_argument(
        "--knobs",
        default="",
        help="hostile knobs to keep on, comma-separated, the others off (none: all off); "
        f"default: all of {', '.join(HOSTILE_KNOBS)}",
    )
    parser.add_argument(
        "--fuzz", type=int, default=200, help="malformed, forged and odd requests sent at the endpoint"
    )
    parser.add_argument(
        "--state-loss",
        action="store_true",
        help="the state-loss drill: both tables emptied halfway, then the state table restored to that "
        "moment past the key's hour, every message backfilled and the dead letters redriven",
    )
    parser.add_argument(
        "--restore-old-backup",
        action="store_true",
        help="with --state-loss: the state table restored mid-run, the replier running, to a backup taken "
        "once a twentieth of the notifications were answered; drained, backfilled, redriven (issue 48)",
    )
    parser.add_argument(
        "--grants",
        type=int,
        default=0,
        help="issue 42: this many registered grants beside the run's two, created, re-moded, paused, expired "
        "and deleted mid-run, one flooding (chaos/grants.py); checked per grant (chaos/grant_checks.py)",
    )
    parser.add_argument("--write", action="store_true", help="write the result to docs/reliability.md")
    parser.add_argument(
        "--logs", default="", help="write the handlers' log records to this file (JSON lines)"
    )
    args = parser.parse_args(argv)
    # A mutant's small configuration (chaos/mutants.py) fills what the command line leaves out.
    mutant = MUTANTS.get(args.mutant)
    defaults = ChaosSettings()
    for name in ("seed", "notifications", "workers"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(mutant or defaults, name))
    if args.timeout is None:
        args.timeout = MUTANT_TIMEOUT_SECONDS if mutant else defaults.function_timeout_seconds
    command = 'make chaos ARGS="' + " ".join(argv if argv is not None else sys.argv[1:]) + '"'
    if args.skew_series:
        doc = DOC.read_text() if DOC.exists() else ""
        if args.write and not (SKEW_SERIES in doc and SKEW_SERIES_END in doc):
            # Say so now, not after the series has run for minutes.
            parser.error(f"--write needs the lines {SKEW_SERIES} and {SKEW_SERIES_END} in {DOC}")
        return _skew_series(args, command)
    report = Experiment(_settings(args, args.clock_skew), progress=sys.stderr).run()
    table = render(report)
    print(table)
    if args.mutant:
        caught = report.caught()
        print(f"mutant {args.mutant}: " + (f"caught (invariants {caught})" if caught else "SURVIVED"))
        return 0 if caught else 1
    if args.write:
        section = f"## Run of {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n`{command}`\n\n{table}\n"
        intro = DOC.read_text().split(RUNS)[0] if DOC.exists() else "# Reliability\n\n"
        DOC.write_text(f"{intro}{RUNS}\n\n{section}")
    return 0 if report.ok else 1


def _settings(args: argparse.Namespace, clock_skew: float, default_faults: str = "") -> ChaosSettings:
    faults = args.faults or default_faults
    if args.mutant and not faults:
        # The mutant's own small set of faults and skew (chaos/mutants.py); --faults overrides them.
        faults = ",".join(sorted(MUTANTS[args.mutant].faults or ())) or "none"
        clock_skew = clock_skew or MUTANTS[args.mutant].clock_skew_seconds
    return ChaosSettings(
        seed=args.seed,
        notifications=args.notifications,
        workers=args.workers,
        fault_probability=args.fault_probability,
        fuzz_requests=args.fuzz,
        function_timeout_seconds=args.timeout,
        clock_skew_seconds=clock_skew,
        faults=frozenset(faults.split(",")) if faults else None,
        timeout_seconds=args.max_seconds or max(600.0, args.notifications * 0.8),
        mutant=args.mutant or None,
        workload=_knobs(args.knobs),
        logs_path=Path(args.logs) if args.logs else None,
        state_loss=args.state_loss or args.restore_old_backup,
        restore_old_backup=args.restore_old_backup,
        grants=args.grants,
    )


def _knobs(keep: str) -> WorkloadSettings | None:
    """Every hostile knob on (None), or only those named."""
    if not keep:
        return None
    names = frozenset(k.strip() for k in keep.split(",") if k.strip())
    unknown = names - set(HOSTILE_KNOBS) - {"none"}
    if unknown:
        raise SystemExit(f"unknown knobs: {', '.join(sorted(unknown))}; known: {', '.join(HOSTILE_KNOBS)}")
    return WorkloadSettings().gentle(keep=names)


def _skew_series(args: argparse.Namespace, command: str) -> int:
    """One run per skew; the same seed gives the same workload and skews proportional to the value."""
    rows = [
        "| Δ (each worker's clock off by up to ±Δ) | workers' clock offsets | leases lost "
        "| sends answered by a key replay | replies sent | dead-lettered | violations |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    details: list[str] = []
    failed = False
    for skew in (float(value) for value in args.skew_series.split(",")):
        report = Experiment(_settings(args, skew, default_faults="clock_skew"), progress=sys.stderr).run()
        failed |= not report.ok
        broken = ", ".join(
            f"{len(found)} of invariant {number}" for number, found in report.violations.items() if found
        )
        offsets = ", ".join(f"{offset:+g} s" for offset in report.worker_skews)
        rows.append(
            f"| {skew:g} s | {offsets} | {report.leases_lost} "
            f"| {report.sends_replayed} | {report.replies_sent} | {report.dead_lettered} "
            f"| {broken or 'none'} |"
        )
        print(rows[-1], flush=True)
        for number, found in report.violations.items():
            details.extend(f"- Δ {skew:g} s, invariant {number}: {sentence}" for sentence in found[:3])
    table = "\n".join(rows + (["", *details] if details else []))
    print(table)
    if args.write:
        text = DOC.read_text()
        before, rest = text.split(SKEW_SERIES, 1)
        after = rest.split(SKEW_SERIES_END, 1)[1]
        block = f"{SKEW_SERIES}\n\n`{command}`\n\n{table}\n\n{SKEW_SERIES_END}"
        DOC.write_text(f"{before}{block}{after}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
