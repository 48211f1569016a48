"""``deploy``: ``sam build`` then ``sam deploy`` with ``samconfig.toml``, guided the first time.

The first deploy of a clone must ask for what only the operator knows (stack name, region, agent
grant ids, drafter, alert email); ``sam deploy --guided`` asks and saves the answers in
``samconfig.toml``, so every later ``make deploy`` — and every other operator command — reads
them from there. The commands are assembled here as plain argument lists and run through an
injectable runner, so tests check exactly what would run without AWS.
"""

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ops.errors import ConfigurationError, OpsError
from ops.samconfig import REPOSITORY_ROOT, SamConfig

TEMPLATE = "template.yaml"
# Parameters without a usable default: a deploy without them fails or answers nobody.
REQUIRED_PARAMETERS = ("AlertEmail",)

Runner = Callable[..., subprocess.CompletedProcess]


@dataclass(frozen=True)
class DeployPlan:
    """What ``deploy`` will run, in order, and why it is (not) guided."""

    commands: tuple[tuple[str, ...], ...]
    guided: bool
    reasons: tuple[str, ...] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = REPOSITORY_ROOT


def guided_reasons(config: SamConfig, region: str | None = None) -> list[str]:
    """Why a deploy must be guided: what ``samconfig.toml`` does not say yet (empty: nothing).

    ``region`` is the one found elsewhere (--region, the environment, the profile): with it, a
    missing ``region`` in the file is no reason to ask.
    """
    reasons = []
    if not config.path.exists():
        reasons.append(f"{config.path.name} does not exist")
    if not config.stack_name:
        reasons.append("no stack_name")
    if not (config.region or region):
        reasons.append("no region")
    overrides = config.parameter_overrides
    reasons += [
        f"no {name} in parameter_overrides" for name in REQUIRED_PARAMETERS if not overrides.get(name)
    ]
    if not overrides.get("AgentGrantIds"):
        reasons.append("no AgentGrantIds in parameter_overrides (the agent would answer nobody)")
    return reasons


def find_sam(executable: str = sys.executable) -> str:
    """The ``sam`` of this virtualenv (pinned in requirements-dev.txt), else the one on PATH."""
    beside = Path(executable).parent / "sam"
    if beside.exists():
        return str(beside)
    found = shutil.which("sam")
    if not found:
        raise ConfigurationError("sam CLI not found: run `make venv` (it installs the pinned aws-sam-cli)")
    return found


def plan_deploy(
    config: SamConfig,
    *,
    sam: str,
    guided: bool | None = None,
    build: bool = True,
    extra_deploy_args: Sequence[str] = (),
    environ: Mapping[str, str] = os.environ,
    python_bin: Path = Path(sys.executable).parent,
    region: str | None = None,
    profile: str | None = None,
) -> DeployPlan:
    """Assemble the ``sam`` commands.

    Parameters
    ----------
    config:
        The ``samconfig.toml`` environment to build and deploy with.
    sam:
        The ``sam`` executable.
    guided:
        Force (``True``) or forbid (``False``) ``--guided``; ``None`` decides from ``config``.
    build:
        Run ``sam build`` first (``--no-build`` redeploys the last build).
    extra_deploy_args:
        Passed to ``sam deploy`` as they are (e.g. ``--no-confirm-changeset``).
    python_bin:
        Put first on ``PATH`` so ``sam build`` finds Python 3.13 without Docker, as ``make build`` does.
    region:
        Where the checks ran and the stack goes (``None``: nowhere yet, the guided deploy asks).
        Passed to every ``sam`` command: SAM reads neither ``AWS_REGION`` nor the operator's
        --region on its own, and would otherwise deploy wherever its own defaults point.
    profile:
        The AWS profile of the checks, passed to every ``sam`` command for the same reason: the
        stack must go to the account that was checked, not the default credentials'.
    """
    reasons = tuple(guided_reasons(config, region))
    if guided is False and reasons:
        raise ConfigurationError(
            f"cannot deploy unguided: {'; '.join(reasons)} in {config.path}. Run `make deploy` once "
            "without --no-guided, or add them to samconfig.toml"
        )
    is_guided = bool(reasons) if guided is None else guided
    aws = (*(("--region", region) if region else ()), *(("--profile", profile) if profile else ()))
    common = ("--config-file", str(config.path), "--config-env", config.environment, *aws)
    commands: list[tuple[str, ...]] = []
    if build:
        commands.append((sam, "build", "--template", TEMPLATE, *common))
    deploy = [sam, "deploy", *common]
    if is_guided:
        deploy.append("--guided")
    deploy += list(extra_deploy_args)
    commands.append(tuple(deploy))
    environment = dict(environ)
    environment["PATH"] = f"{python_bin}{os.pathsep}{environ.get('PATH', '')}"
    environment.setdefault("SAM_CLI_TELEMETRY", "0")
    # Run from the repository root: template.yaml and .aws-sam/ are relative to it.
    return DeployPlan(tuple(commands), is_guided, reasons if is_guided else (), environment, REPOSITORY_ROOT)


def run_plan(plan: DeployPlan, runner: Runner = subprocess.run, say: Callable[[str], None] = print) -> None:
    """Run each command in turn; stop at the first failure."""
    if plan.guided:
        say(f"guided deploy ({'; '.join(plan.reasons) or 'asked for'}): answers are saved in samconfig.toml")
    for command in plan.commands:
        say("$ " + shlex.join(command))
        completed = runner(list(command), cwd=plan.cwd, env=dict(plan.environment), check=False)
        if completed.returncode != 0:
            raise OpsError(f"`sam {command[1]}` failed with exit code {completed.returncode}")
    say(
        "deployed. Next, the first time: `make set-api-key`, then `make register-webhook`, and confirm "
        "the SNS subscription email AWS sent to the alert address."
    )
