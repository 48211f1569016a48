"""``make chaos``: run the harness, print the table, write docs/reliability.md."""

import argparse
import sys
from datetime import UTC, datetime

from chaos.faults import ALL_FAULTS
from chaos.run import ROOT, ChaosSettings, Experiment, render

DOC = ROOT / "docs" / "reliability.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fault injection and concurrency harness for ReplyOnce")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--notifications", type=int, default=300)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--fault-probability", type=float, default=0.02)
    parser.add_argument(
        "--timeout", type=float, default=6.0, help="the replier's function timeout in the run"
    )
    parser.add_argument(
        "--clock-skew", type=float, default=0.0, help="max |skew| of a worker's clock, seconds"
    )
    parser.add_argument(
        "--faults", default="", help=f"comma-separated subset of: {', '.join(sorted(ALL_FAULTS))}"
    )
    parser.add_argument("--max-seconds", type=float, default=0.0, help="stop waiting after this (0: scale)")
    parser.add_argument("--write", action="store_true", help="write the result to docs/reliability.md")
    args = parser.parse_args(argv)
    settings = ChaosSettings(
        seed=args.seed,
        notifications=args.notifications,
        workers=args.workers,
        fault_probability=args.fault_probability,
        function_timeout_seconds=args.timeout,
        clock_skew_seconds=args.clock_skew,
        faults=frozenset(args.faults.split(",")) if args.faults else None,
        timeout_seconds=args.max_seconds or max(600.0, args.notifications * 0.8),
    )
    report = Experiment(settings, progress=sys.stderr).run()
    table = render(report)
    print(table)
    if args.write:
        command = 'make chaos ARGS="' + " ".join(argv if argv is not None else sys.argv[1:]) + '"'
        DOC.parent.mkdir(exist_ok=True)
        section = f"## Run of {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n`{command}`\n\n{table}\n"
        _write(section)
    return 0 if report.ok else 1


def _write(section: str) -> None:
    intro = DOC.read_text().split("<!-- runs -->")[0] if DOC.exists() else "# Reliability\n\n"
    DOC.write_text(f"{intro}<!-- runs -->\n\n{section}")


if __name__ == "__main__":
    sys.exit(main())
