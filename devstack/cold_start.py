"""Fresh interpreters that import and build a function as a Lambda container's init does.

Shared by ``tests/integration/test_budgets.py`` (what the webhook's import path loads is
deterministic, so it is asserted) and ``bench.coldstart`` (how long it takes,
which is only reported). Each run is a new ``python`` process executing
``devstack/cold_start_child.py`` with a clean environment: the function's
variables from ``template.yaml``, dummy credentials, every endpoint on a
closed loopback port, so nothing is ever called.

Two environments, because tracing changes the import path:

- **outside Lambda** — the tests, the local stack, ``sam local``: Powertools
  leaves tracing off, so no X-Ray SDK is loaded.
- **Lambda, Tracing: Active** — ``LAMBDA_TASK_ROOT`` set as in Lambda, so
  Powertools' Tracer is on: the X-Ray SDK is imported and patches libraries.
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from devstack.template import LocalResources
from ops.template import TEMPLATE_PATH, load_template

ROOT = TEMPLATE_PATH.parent
CHILD = Path(__file__).resolve().parent / "cold_start_child.py"
LAYER = ROOT / "layers" / "replyonce"
TARGETS = ("baseline", "webhook", "replier")
FUNCTIONS = {"webhook": "WebhookFunction", "replier": "ReplierFunction"}
# Nothing answers here: a client that tried to call out would fail fast, on loopback.
NOWHERE = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Profile:
    """An environment a cold start is measured in.

    ``extra_environment`` is laid over the function's variables: how an option
    (say ``POWERTOOLS_TRACE_DISABLED``) would be set in the template.
    """

    name: str
    in_lambda: bool
    extra_environment: dict[str, str] = field(default_factory=dict)


PROFILES = (Profile("outside Lambda (tracing off)", False), Profile("Lambda, Tracing: Active", True))


def dummy_resources() -> LocalResources:
    """Names for every template resource, so the functions' environments resolve as deployed."""
    template = load_template()
    resources = LocalResources(template=template)
    for name, definition in template["Resources"].items():
        kind = definition["Type"]
        if kind == "AWS::DynamoDB::Table":
            resources.tables[name] = f"replyonce-{name}"
        elif kind == "AWS::SQS::Queue":
            resources.queues[name] = f"{NOWHERE}/123456789012/replyonce-{name}"
            resources.queue_arns[name] = f"arn:aws:sqs:us-east-1:123456789012:replyonce-{name}"
        elif kind == "AWS::SecretsManager::Secret":
            resources.secrets[name] = f"arn:aws:secretsmanager:us-east-1:123456789012:secret:replyonce-{name}"
        elif kind == "AWS::S3::Bucket":
            resources.buckets[name] = f"replyonce-{name}".lower()
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
        "AWS_ENDPOINT_URL": NOWHERE,
        **resources.function_environment(function),
        "NYLAS_API_URI": NOWHERE,
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
    env.update(profile.extra_environment)
    return env


def run_child(
    target: str,
    env: dict[str, str],
    *,
    interpreter_flags: tuple[str, ...] = (),
    script_flags: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """Run one fresh interpreter on ``target``; its first stdout line is the import + init ms."""
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


def imported_modules(target: str, profile: Profile) -> set[str]:
    """Every module a cold start of ``target`` leaves in ``sys.modules``."""
    env = environment(target, profile, dummy_resources())
    return set(json.loads(run_child(target, env, script_flags=("--modules",)).stdout.splitlines()[-1]))
