"""Cold start: import and init time of each function in fresh interpreters, beside bare boto3.

Each sample is a new ``python`` process (``devstack.cold_start``, shared with
``tests/integration/test_budgets.py``) which times importing the function's module and
building what it keeps for the container's life (``app.endpoint()``,
``app.consumer()``) — or, for the baseline, ``import boto3`` and one client.
Targets are interleaved run by run so background load hits them alike; the
first run of each is discarded (it writes ``__pycache__`` and warms the page
cache). The environments are ``devstack.cold_start.PROFILES``: outside Lambda
and Lambda with ``Tracing: Active`` (traced by the Lambda service: neither
function imports the X-Ray SDK, so the two differ only by what Powertools reads
from ``LAMBDA_TASK_ROOT``).

No network is touched: every endpoint points at a closed port on 127.0.0.1
and clients are only created, never called.
"""

import collections
from collections.abc import Callable
from dataclasses import dataclass

from bench.stats import Spread
from devstack.cold_start import PROFILES, TARGETS, Profile, dummy_resources, environment, run_child
from devstack.template import LocalResources


@dataclass(frozen=True)
class ColdStartResult:
    """Milliseconds per target and profile, as min/median/max over runs."""

    runs: int
    times: dict[str, dict[str, Spread]]  # profile name -> target -> spread
    heaviest_imports: list[tuple[str, float]]  # (package, ms) on the webhook's path beyond boto3


def sample(target: str, profile: Profile, resources: LocalResources) -> float:
    """One cold start of ``target``, in milliseconds."""
    return float(run_child(target, environment(target, profile, resources)).stdout.splitlines()[0])


def _import_self_times(target: str, profile: Profile, resources: LocalResources) -> dict[str, float]:
    """Self time (ms) of each module imported, from ``-X importtime``."""
    stderr = run_child(
        target, environment(target, profile, resources), interpreter_flags=("-X", "importtime")
    ).stderr
    times: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, module = line.removeprefix("import time:").split("|")
        times[module.strip()] = int(self_us) / 1000
    return times


def heaviest_imports(resources: LocalResources, top: int = 8) -> list[tuple[str, float]]:
    """The packages the webhook imports beyond the baseline, heaviest first (Lambda profile).

    ``-X importtime`` inflates every figure; use them to rank, not to add up.
    """
    profile = PROFILES[1]
    baseline = _import_self_times("baseline", profile, resources)
    webhook = _import_self_times("webhook", profile, resources)
    packages: collections.Counter[str] = collections.Counter()
    for module, ms in webhook.items():
        if module not in baseline:
            packages[".".join(module.split(".")[:2])] += ms
    return [(name, round(ms, 1)) for name, ms in packages.most_common(top)]


def measure(runs: int, progress: Callable[[str], None] | None = None) -> ColdStartResult:
    """``runs`` cold starts of every target in every profile (plus one discarded warm-up each).

    Profiles and targets are interleaved within each run, so a burst of
    background load lands on all of them rather than on one column.
    """
    resources = dummy_resources()
    samples: dict[str, dict[str, list[float]]] = {p.name: {t: [] for t in TARGETS} for p in PROFILES}
    for run in range(runs + 1):
        for profile in PROFILES:
            for target in TARGETS:
                elapsed = sample(target, profile, resources)
                if run:  # run 0 compiles bytecode and fills the page cache
                    samples[profile.name][target].append(elapsed)
        if progress and run:
            progress(f"cold starts: run {run}/{runs}")
    times = {
        profile: {target: Spread.of(values) for target, values in by_target.items()}
        for profile, by_target in samples.items()
    }
    return ColdStartResult(
        runs=runs,
        times=times,
        heaviest_imports=heaviest_imports(resources),
    )
