"""Cold start: import and init time of each function in fresh interpreters, beside bare boto3.

Each sample is a new ``python`` process running ``bench/coldstart_child.py``,
which times importing the function's module and building what it keeps for
the container's life (``app.endpoint()``, ``app.consumer()``) — or, for the
baseline, ``import boto3`` and one client. Targets are interleaved run by run
so background load hits them alike; the first run of each is discarded (it
writes ``__pycache__`` and warms the page cache).

Two environments, because tracing changes the import path:

- **outside Lambda** — the tests, the local stack, ``sam local``: Powertools
  leaves tracing off, so no X-Ray SDK is loaded.
- **Lambda, Tracing: Active** — ``LAMBDA_TASK_ROOT`` set as in Lambda, so
  Powertools' Tracer is on: the X-Ray SDK is imported and patches libraries.

No network is touched: every endpoint points at a closed port on 127.0.0.1
and clients are only created, never called.
"""

import collections
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.stats import Spread
from devstack.template import TEMPLATE_PATH, LocalResources, load_template

ROOT = TEMPLATE_PATH.parent
CHILD = Path(__file__).resolve().parent / "coldstart_child.py"
LAYER = ROOT / "layers" / "replyonce"
TARGETS = ("baseline", "webhook", "replier")
FUNCTIONS = {"webhook": "WebhookFunction", "replier": "ReplierFunction"}
# Nothing answers here: a client that tried to call out would fail fast, on loopback.
_NOWHERE = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Profile:
    """An environment a cold start is measured in."""

    name: str
    in_lambda: bool


PROFILES = (Profile("outside Lambda (tracing off)", False), Profile("Lambda, Tracing: Active", True))


@dataclass(frozen=True)
class ColdStartResult:
    """Milliseconds per target and profile, as min/median/max over runs."""

    runs: int
    times: dict[str, dict[str, Spread]]  # profile name -> target -> spread
    heaviest_imports: list[tuple[str, float]]  # (package, ms) on the webhook's path beyond boto3


def _dummy_resources() -> LocalResources:
    """Names for every template resource, so the functions' environments resolve as deployed."""
    template = load_template()
    resources = LocalResources(template=template)
    for name, definition in template["Resources"].items():
        kind = definition["Type"]
        if kind == "AWS::DynamoDB::Table":
            resources.tables[name] = f"replyonce-{name}"
        elif kind == "AWS::SQS::Queue":
            resources.queues[name] = f"{_NOWHERE}/123456789012/replyonce-{name}"
            resources.queue_arns[name] = f"arn:aws:sqs:us-east-1:123456789012:replyonce-{name}"
        elif kind == "AWS::SecretsManager::Secret":
            resources.secrets[name] = f"arn:aws:secretsmanager:us-east-1:123456789012:secret:replyonce-{name}"
    return resources


def environment(target: str, profile: Profile, resources: LocalResources) -> dict[str, str]:
    """A clean environment: the function's variables from the template, dummy credentials, loopback only."""
    function = FUNCTIONS.get(target, "WebhookFunction")  # the baseline runs with the webhook's settings
    task_root = ROOT / "functions" / target if target in FUNCTIONS else ROOT / "functions" / "webhook"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "LANG": "C.UTF-8",
        "PYTHONPATH": f"{task_root}{os.pathsep}{LAYER}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_SESSION_TOKEN": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        # Credentials come from the variables above; never ask an instance metadata service.
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL": _NOWHERE,
        **resources.function_environment(function),
        "NYLAS_API_URI": _NOWHERE,
        "AGENT_GRANT_IDS": "grant-agent-0001",
    }
    if profile.in_lambda:
        env.update(
            {
                "LAMBDA_TASK_ROOT": str(task_root),
                "AWS_LAMBDA_FUNCTION_NAME": f"replyonce-{function}",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
                "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
                "_HANDLER": "app.lambda_handler",
                "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000",
                "AWS_XRAY_CONTEXT_MISSING": "IGNORE_ERROR",
            }
        )
    return env


def _run_child(
    target: str,
    env: dict[str, str],
    *,
    interpreter_flags: tuple[str, ...] = (),
    script_flags: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(  # noqa: S603 - our own interpreter and script, no shell
        [sys.executable, *interpreter_flags, str(CHILD), target, *script_flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"cold start of {target} failed:\n{completed.stderr[-2000:]}")
    return completed


def sample(target: str, profile: Profile, resources: LocalResources) -> float:
    """One cold start of ``target``, in milliseconds."""
    return float(_run_child(target, environment(target, profile, resources)).stdout.splitlines()[0])


def imported_modules(target: str, profile: Profile) -> set[str]:
    """Every module a cold start of ``target`` leaves in ``sys.modules``."""
    env = environment(target, profile, _dummy_resources())
    return set(json.loads(_run_child(target, env, script_flags=("--modules",)).stdout.splitlines()[-1]))


def _import_self_times(target: str, profile: Profile, resources: LocalResources) -> dict[str, float]:
    """Self time (ms) of each module imported, from ``-X importtime``."""
    stderr = _run_child(
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
    resources = _dummy_resources()
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
    return ColdStartResult(runs=runs, times=times, heaviest_imports=heaviest_imports(resources))
