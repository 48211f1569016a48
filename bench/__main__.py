"""``python -m bench`` (``make bench``): run every benchmark and write ``docs/performance.md``.

The order is chosen for fairness: cold starts first (fresh interpreters, while
nothing else of ours runs), then everything that needs the local stack, and
the ``sam build`` last so its CPU use disturbs no timing.
"""

import os

# Before Powertools is imported (devstack.counting imports the layer): the template's metric
# namespace, as in Lambda, and no X-Ray outside Lambda. tests/conftest.py does the same.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "ReplyOnce")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

import argparse
import pickle
import shlex
import sys
import time
from pathlib import Path

from bench import (
    artifacts,
    batches,
    bill,
    budgets,
    capacity_report,
    coldstart,
    container,
    paths,
    real_latency,
    report,
    throughput,
    time_to_reply,
    warm_path,
)
from bench.latency import LatencyModel
from bench.machine import Machine
from bench.run import Run
from bench.stack import local_stack
from devstack.events import message_created
from devstack.stack import LocalStack
from ops.template import TEMPLATE_PATH
from replyonce.rules.notification import Notification

DEFAULT_OUTPUT = TEMPLATE_PATH.parent / "docs" / "performance.md"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=400, help="webhook requests per round (400)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every timed benchmark (3)")
    parser.add_argument("--cold-runs", type=int, default=15, help="fresh interpreters per target (15)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each counted path (5)")
    parser.add_argument("--notifications", type=int, default=100, help="replies per throughput round (100)")
    parser.add_argument(
        "--batch-notifications", type=int, default=30, help="replies per batch-size round (30)"
    )
    parser.add_argument("--seed", type=int, default=14, help="seed of the time-to-reply mix (14)")
    parser.add_argument(
        "--mix-seconds", type=float, default=60.0, help="length of the time-to-reply mix in seconds (60)"
    )
    parser.add_argument("--pollers", type=int, default=2, help="event source pollers in the mix (2)")
    parser.add_argument("--floor-samples", type=int, default=30, help="direct invocations for the floor (30)")
    parser.add_argument(
        "--time-to-reply-only",
        action="store_true",
        help="run the real-latency mixes, their floor and saturation only; print, do not write the page",
    )
    parser.add_argument(
        "--real-mix-seconds", type=float, default=90.0, help="length of the real-latency mix in seconds (90)"
    )
    parser.add_argument(
        "--real-concurrency",
        type=int,
        default=20,
        help="MaximumConcurrency of every option in the real-latency mix (20)",
    )
    parser.add_argument(
        "--floor-workers", type=int, default=6, help="containers running the paired floor (6)"
    )
    parser.add_argument(
        "--saturation", type=int, default=30, help="first replies queued for each saturation round (30)"
    )
    parser.add_argument("--latency-seed", type=int, default=23, help="seed of the latency draws (23)")
    parser.add_argument(
        "--latency-scale",
        type=float,
        default=1.0,
        help="multiply every injected latency (1; below it the page is not representative)",
    )
    parser.add_argument(
        "--container-events", type=int, default=20, help="notifications per container run (20)"
    )
    parser.add_argument("--skip-build", action="store_true", help="leave out sam build and artifact sizes")
    parser.add_argument(
        "--skip-bill",
        action="store_true",
        help="leave out the bill at real batch fill (mixed stream, long thread, memory sizes)",
    )
    parser.add_argument("--memory-batches", type=int, default=2, help="full batches per memory size (2)")
    parser.add_argument("--memory-singles", type=int, default=4, help="single records per memory size (4)")
    parser.add_argument(
        "--mixed-singles", type=int, default=24, help="first replies of their own in the mixed stream (24)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run with small numbers (its page is not representative)"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where the report goes")
    parser.add_argument(
        "--save-run", type=Path, help="also keep the measurements (pickle), to render the page again later"
    )
    parser.add_argument(
        "--render", type=Path, help="measure nothing: render the page from a --save-run file of this checkout"
    )
    arguments = parser.parse_args(argv)
    if arguments.quick:
        arguments.iterations, arguments.rounds, arguments.cold_runs = 40, 1, 2
        arguments.repeats, arguments.notifications, arguments.batch_notifications = 2, 10, 10
        arguments.mix_seconds, arguments.floor_samples = 15.0, 8
        arguments.real_mix_seconds, arguments.saturation, arguments.latency_scale = 20.0, 8, 0.2
        arguments.container_events = 5
        arguments.memory_batches, arguments.memory_singles, arguments.mixed_singles = 1, 1, 6
    return arguments


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def _command(argv: list[str] | None) -> str:
    given = sys.argv[1:] if argv is None else argv
    return "make bench" + (f" ARGS={shlex.quote(shlex.join(given))}" if given else "")


def _time_to_reply(stack: LocalStack, arguments: argparse.Namespace) -> time_to_reply.TimeToReplyResult:
    mix = time_to_reply.Mix().scaled(arguments.mix_seconds / time_to_reply.Mix().seconds)
    return time_to_reply.measure(
        stack,
        seed=arguments.seed,
        pollers=arguments.pollers,
        mix=mix,
        floor_samples=arguments.floor_samples,
        # The template has no batching window any more: the what-if run would be the same run again.
        what_if=False,
        progress=_progress,
    )


def _real_latency(stack: LocalStack, arguments: argparse.Namespace) -> real_latency.RealLatencyResult:
    mix = time_to_reply.Mix().scaled(arguments.real_mix_seconds / time_to_reply.Mix().seconds)
    return real_latency.measure(
        stack,
        seed=arguments.seed,
        pollers=arguments.pollers,
        mix=mix,
        model=LatencyModel(seed=arguments.latency_seed, scale=arguments.latency_scale),
        concurrency=arguments.real_concurrency,
        floor_workers=arguments.floor_workers,
        saturation_notifications=arguments.saturation,
        progress=_progress,
    )


def _bill(stack: LocalStack, arguments: argparse.Namespace) -> bill.BillResult:
    return bill.measure(
        stack,
        LatencyModel(seed=arguments.latency_seed, scale=arguments.latency_scale),
        singles=arguments.mixed_singles,
        bursts=max(1, arguments.mixed_singles // 6),
        pollers=arguments.pollers,
        seed=arguments.seed,
        memory_batches=arguments.memory_batches,
        memory_singles=arguments.memory_singles,
        progress=_progress,
    )


def _print_real_latency(result: real_latency.RealLatencyResult) -> None:
    """What ``make bench`` shows on the terminal: time to reply at real latency, the options, the budgets."""
    print(capacity_report.real_latency_section(result))
    print()
    print(capacity_report.batch_concurrency_section(result))
    print()
    print(report.budgets_section(budgets.real_latency(result)))


def _keeping_bench_flood(page: Path, rendered: str) -> str:
    """The new page, with the section ``make bench-flood`` wrote into the old one (a run of its own)."""
    from bench.flood import carry_over

    return carry_over(page.read_text() if page.exists() else "", rendered)


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    if arguments.render is not None:
        # Our own file, written by --save-run from this checkout's classes.
        saved = pickle.loads(arguments.render.read_bytes())  # noqa: S301
        arguments.output.write_text(_keeping_bench_flood(arguments.output, report.render(saved)))
        _progress(f"rendered {arguments.output} from {arguments.render}")
        return 0
    if arguments.time_to_reply_only:
        with local_stack() as stack:
            result = _real_latency(stack, arguments)
        _print_real_latency(result)
        return 0
    machine = Machine.here()
    started = time.monotonic()
    _progress(f"cold starts: {arguments.cold_runs} fresh interpreters per target and environment")
    cold = coldstart.measure(arguments.cold_runs, progress=_progress)
    with local_stack() as stack:
        _progress(f"webhook warm path: {arguments.rounds} rounds of {arguments.iterations} requests")
        warm = warm_path.measure(stack, iterations=arguments.iterations, rounds=arguments.rounds)
        _progress(f"requests per notification: every path {arguments.repeats} times")
        counted = paths.measure(stack, arguments.repeats)
        _progress(f"containers: memory, CPU and log bytes, {arguments.container_events} notifications each")
        containers = container.measure(stack, events=arguments.container_events)
        _progress("cost against batch size: 1, 5, 10")
        batched = batches.measure(stack, notifications=arguments.batch_notifications, rounds=arguments.rounds)
        _progress("replier throughput: 1, 2, 4 pollers")
        drained = throughput.measure(stack, notifications=arguments.notifications, rounds=arguments.rounds)
        replied = _time_to_reply(stack, arguments)
        real = _real_latency(stack, arguments)
        billed = None if arguments.skip_bill else _bill(stack, arguments)
    built = None
    if not arguments.skip_build:
        _progress("sam build (into a temporary directory)")
        built = artifacts.measure()
    run = Run(
        command=_command(argv),
        machine=machine,
        load_at_end=Machine.load_now(),
        seconds=time.monotonic() - started,
        warm_path=warm,
        cold_start=cold,
        paths=counted,
        throughput=drained,
        batches=batched,
        artifacts=built,
        message_bytes=len(Notification(message_created()).to_json().encode()),
        time_to_reply=replied,
        real_latency=real,
        containers=tuple(containers),
        bill=billed,
    )
    if arguments.save_run is not None:
        arguments.save_run.write_bytes(pickle.dumps(run))
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    arguments.output.write_text(_keeping_bench_flood(arguments.output, report.render(run)))
    _progress(f"wrote {arguments.output} in {run.seconds:.0f} s")
    _print_real_latency(real)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
