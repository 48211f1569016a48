"""``python -m tests.interleavings_report``: the interleaving table of ``docs/reliability.md``.

Every scenario of ``tests/integration/test_interleavings.py`` explored (schedules, violations, time),
then every mutant of ``chaos/mutants.py`` with the schedule that catches it. ``make interleavings`` runs it.
"""

import argparse
import contextlib
import io
import os
import time

# Before the product is imported: its Logger and Metrics read these once.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "ReplyOnce")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "CRITICAL")

from tests.interleavings import describe, explore


def _quiet() -> contextlib.AbstractContextManager:
    """The workers' metric lines (Powertools prints them to stdout) kept out of the printed tables."""
    return contextlib.redirect_stdout(io.StringIO())


def main(argv: list[str] | None = None) -> None:
    """``make interleavings``: the tables of ``docs/reliability.md`` (scenarios, then mutants)."""
    from chaos.mutants import MUTANTS, applied
    from tests.integration.test_interleavings import RACES, SCENARIOS, gate_preemptions

    parser = argparse.ArgumentParser(
        prog="make interleavings",
        description="Explore every scenario's interleavings and find each mutant's catching schedule; "
        "print the Markdown tables of docs/reliability.md.",
    )
    parser.add_argument(
        "--max-preemptions",
        type=int,
        default=None,
        help="preemptions per schedule for every scenario (default: the gate's, 3 or 2 for the largest)",
    )
    arguments = parser.parse_args(argv)

    print("| scenario | store | preemptions | schedules explored | violations | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in sorted(SCENARIOS):
        for on_dynamodb in (False, True) if name in RACES else (False,):
            bound = arguments.max_preemptions or gate_preemptions(name, on_dynamodb)
            started = time.monotonic()
            with _quiet():
                found = explore(SCENARIOS[name], on_dynamodb=on_dynamodb, max_preemptions=bound)
            store = "DynamoDB adapter (moto)" if on_dynamodb else "in-memory"
            broken = "; ".join(found.failing.violations) if found.failing else "none"
            seconds = time.monotonic() - started
            print(f"| `{name}` | {store} | ≤ {bound} | {found.schedules} | {broken} | {seconds:.1f} |")
    print()
    print("| mutant | scenario | caught after (schedules) | violation | the schedule that catches it |")
    print("| --- | --- | --- | --- | --- |")
    for name in sorted(MUTANTS):
        with applied(name) as mutant, _quiet():
            found = explore(SCENARIOS[mutant.scenario], on_dynamodb=mutant.in_the_store)
        if found.failing is None:
            print(f"| `{name}` | `{mutant.scenario}` | survived {found.schedules} | — | — |")
            continue
        print(
            f"| `{name}` | `{mutant.scenario}` | {found.schedules} | {found.failing.violations[0]} "
            f"| {describe(found.failing)} |"
        )


if __name__ == "__main__":
    main()
