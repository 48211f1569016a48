"""What ``make deploy`` checks before it builds or asks anything.

Why first: a deploy that finds missing credentials after a build and twenty prompts wastes the
operator's minutes and leaves a half-answered ``samconfig.toml``. Each failed check is one line
that says what to do.

The concurrency check, the same model as ``docs/performance.md`` ("Scale on paper"):

- The webhook is the one path where a failure loses notifications (Nylas tries three times), so by
  default it reserves ``WebhookReservedConcurrency`` executions of its own. Lambda keeps at least
  100 of the account's concurrency unreserved, so a reservation needs ``reserved + 100`` unreserved
  executions; new accounts can have a quota of 10, where the only way is a reservation of 0.
- The replier's SQS event source starts up to ``ReplierMaximumConcurrency`` invocations from the
  unreserved pool. Above what the pool holds its batches are throttled, and a throttled batch
  spends one of its records' receives toward the dead-letter queue: the maximum must fit in the
  pool that is left. With a webhook reservation that is the whole unreserved pool less the
  reservation; without one the webhook shares the pool, so the replier may take at most half.

``UnreservedConcurrentExecutions`` already excludes a reservation this stack made on an earlier
deploy; the check subtracts it again, which errs by that reservation on the safe side.
"""

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ops.errors import ConfigurationError
from ops.samconfig import SamConfig
from ops.template import load_template

RUNTIME_PYTHON = "python3.13"
CONCURRENCY_PARAMETER = "ReplierMaximumConcurrency"
RESERVATION_PARAMETER = "WebhookReservedConcurrency"
# Lambda keeps this much of an account's concurrency for functions without a reservation.
LAMBDA_UNRESERVED_MINIMUM = 100


@dataclass(frozen=True)
class Preflight:
    """What the checks found: where the stack goes and as whom."""

    region: str | None  # None: none yet, the guided deploy asks
    account: str
    identity: str
    unreserved_concurrency: int | None  # None: not checked (no region)
    replier_maximum_concurrency: int
    webhook_reserved_concurrency: int = 0


def _number_parameter(config: SamConfig, name: str) -> int:
    """A number parameter as deployed: samconfig.toml's override, else the template's default."""
    value = config.parameter_overrides.get(name)
    if value is None:
        value = load_template()["Parameters"][name]["Default"]
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(f"{name} in samconfig.toml is not a number: {value!r}") from None


def replier_maximum_concurrency(config: SamConfig) -> int:
    """``ReplierMaximumConcurrency`` as deployed: samconfig.toml's override, else the template's default."""
    return _number_parameter(config, CONCURRENCY_PARAMETER)


def webhook_reserved_concurrency(config: SamConfig) -> int:
    """``WebhookReservedConcurrency`` as deployed: samconfig.toml's override, else the template's default."""
    return _number_parameter(config, RESERVATION_PARAMETER)


def check_concurrency(unreserved: int, quota: object, region: str, *, reserved: int, maximum: int) -> None:
    """Refuse a webhook reservation Lambda would reject, or a replier maximum the pool cannot hold.

    Parameters
    ----------
    unreserved:
        The account's ``UnreservedConcurrentExecutions`` in the region.
    quota:
        Its ``ConcurrentExecutions`` (only quoted in the message).
    reserved, maximum:
        ``WebhookReservedConcurrency`` and ``ReplierMaximumConcurrency`` as they would be deployed.

    Raises
    ------
    ConfigurationError
        With the setting to change, in samconfig.toml's ``parameter_overrides``.
    """
    where = f"({unreserved} unreserved in {region}; quota {quota})"
    quota_hint = "request a higher quota: Service Quotas → AWS Lambda → Concurrent executions"
    if reserved and unreserved - reserved < LAMBDA_UNRESERVED_MINIMUM:
        raise ConfigurationError(
            f"{RESERVATION_PARAMETER}={reserved} needs {reserved + LAMBDA_UNRESERVED_MINIMUM} unreserved "
            f"Lambda concurrency (Lambda keeps {LAMBDA_UNRESERVED_MINIMUM} unreserved) {where}. Set "
            f"{RESERVATION_PARAMETER}=0 in samconfig.toml's parameter_overrides (the webhook then shares "
            f"the pool and the replier is held to half of it: {CONCURRENCY_PARAMETER}="
            f"{max(unreserved // 2, 2)} at most), or {quota_hint}"
        )
    # With its own reservation the webhook cannot be starved: the replier may use the pool that is
    # left. Without one the two share it, and a backlog must not take the webhook's half.
    pool = unreserved - reserved if reserved else unreserved // 2
    if maximum > pool:
        share = (
            f"the {pool} unreserved executions left beside the webhook's reservation of {reserved}"
            if reserved
            else f"half of this account's unreserved concurrency ({pool}), which it shares with the webhook"
        )
        raise ConfigurationError(
            f"{CONCURRENCY_PARAMETER}={maximum} is more than {share} {where}: its batches would be "
            f"throttled and spend their receives toward the dead-letter queue. Set "
            f"{CONCURRENCY_PARAMETER}={max(pool, 2)} in samconfig.toml's parameter_overrides "
            f"(or deploy with ARGS=--guided), or {quota_hint}"
        )


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
        No Python 3.13, a webhook reservation Lambda would refuse, or a replier maximum the
        unreserved pool cannot hold.
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
    reserved = webhook_reserved_concurrency(config)
    check_concurrency(
        unreserved, limits.get("ConcurrentExecutions"), region, reserved=reserved, maximum=maximum
    )
    found = Preflight(region, identity["Account"], identity["Arn"], unreserved, maximum, reserved)
    say(
        f"checked: {found.identity} in {region}; Python 3.13; Lambda concurrency {unreserved} unreserved, "
        f"webhook reserves {reserved}, replier at most {maximum}"
    )
    return found
