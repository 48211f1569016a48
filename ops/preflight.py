"""What ``make deploy`` checks before it builds or asks anything.

Why first: a deploy that finds missing credentials after a build and twenty prompts wastes the
operator's minutes and leaves a half-answered ``samconfig.toml``. Each failed check is one line
that says what to do.

The concurrency check: new accounts can have a Lambda concurrency quota of 10. The replier's SQS
event source may start up to ``ReplierMaximumConcurrency`` invocations; if that is most of the
account's unreserved concurrency, a backlog leaves the webhook throttled (503 to Nylas, retried only
a few times). So the maximum must be at most half of the unreserved concurrency.
"""

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from devstack.template import load_template
from ops.errors import ConfigurationError
from ops.samconfig import SamConfig

RUNTIME_PYTHON = "python3.13"
CONCURRENCY_PARAMETER = "ReplierMaximumConcurrency"


@dataclass(frozen=True)
class Preflight:
    """What the checks found: where the stack goes and as whom."""

    region: str | None  # None: none yet, the guided deploy asks
    account: str
    identity: str
    unreserved_concurrency: int | None  # None: not checked (no region)
    replier_maximum_concurrency: int


def replier_maximum_concurrency(config: SamConfig) -> int:
    """``ReplierMaximumConcurrency`` as deployed: samconfig.toml's override, else the template's default."""
    value = config.parameter_overrides.get(CONCURRENCY_PARAMETER)
    if value is None:
        value = load_template()["Parameters"][CONCURRENCY_PARAMETER]["Default"]
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(
            f"{CONCURRENCY_PARAMETER} in samconfig.toml is not a number: {value!r}"
        ) from None


def check_python(path: str) -> None:
    """``sam build`` without Docker builds with the runtime's Python, found on ``path``."""
    if not shutil.which(RUNTIME_PYTHON, path=path):
        raise ConfigurationError(
            f"{RUNTIME_PYTHON} not found: the functions run on Python 3.13 and `sam build` needs it on PATH. "
            "Run `make venv` (scripts/find-python.sh finds or names one to install)"
        )


def run_preflight(
    config: SamConfig,
    region: str | None,
    client: Callable[[str], Any],
    *,
    environ: Mapping[str, str],
    say: Callable[[str], None] = print,
) -> Preflight:
    """Check Python, credentials and Lambda concurrency, in that order; raise at the first failure.

    Parameters
    ----------
    config:
        The ``samconfig.toml`` environment being deployed.
    region:
        The region the deploy goes to (``--region``, ``samconfig.toml``, ``AWS_REGION``,
        ``AWS_DEFAULT_REGION``, the profile's); ``None`` on a first deploy that names none, which
        ``sam deploy --guided`` then asks for: only the checks that need no region run.
    client:
        Makes a boto3 client for a service in that region.
    environ:
        The deploy's environment (its ``PATH`` is searched for Python 3.13).

    Raises
    ------
    ConfigurationError
        No Python 3.13, or a replier concurrency that could starve the webhook.
    botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError
        AWS refused or could not be reached (credentials, permissions); the CLI adds the hint.
    """
    check_python(environ.get("PATH", ""))
    # A credentials or permission error propagates as botocore raised it: ``ops.cli.main`` prints
    # it with the hint for the same region, exactly as for every other command. STS answers
    # without a region (its global endpoint), so credentials are checked on a first deploy too.
    identity = client("sts").get_caller_identity()
    if not region:
        say(
            f"checked: {identity['Arn']}; Python 3.13. No region yet: `sam deploy --guided` asks for one "
            "(the Lambda concurrency of that region is checked on the next deploy)"
        )
        return Preflight(
            None, identity["Account"], identity["Arn"], None, replier_maximum_concurrency(config)
        )
    limits = client("lambda").get_account_settings()["AccountLimit"]
    unreserved = int(limits["UnreservedConcurrentExecutions"])
    maximum = replier_maximum_concurrency(config)
    if maximum > unreserved // 2:
        raise ConfigurationError(
            f"{CONCURRENCY_PARAMETER}={maximum} would leave the webhook less than half of this account's "
            f"unreserved Lambda concurrency ({unreserved} in {region}; "
            f"quota {limits.get('ConcurrentExecutions')}). "
            f"Set {CONCURRENCY_PARAMETER}={max(unreserved // 2, 2)} in samconfig.toml's parameter_overrides "
            "(or deploy with ARGS=--guided), or request a higher quota: Service Quotas → AWS Lambda → "
            "Concurrent executions"
        )
    found = Preflight(region, identity["Account"], identity["Arn"], unreserved, maximum)
    say(
        f"checked: {found.identity} in {region}; Python 3.13; Lambda concurrency {unreserved} unreserved, "
        f"replier at most {maximum}"
    )
    return found
