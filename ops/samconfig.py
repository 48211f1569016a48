"""Read ``samconfig.toml``: the stack name, region and parameters ``sam deploy`` uses.

Why the operator commands read it too: after ``make deploy`` (guided the first time, which saves
the answers there) every other command finds the same stack in the same region without flags.
"""

import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ops.errors import ConfigurationError

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SAMCONFIG = REPOSITORY_ROOT / "samconfig.toml"
DEFAULT_ENVIRONMENT = "default"


@dataclass(frozen=True)
class SamConfig:
    """One environment (``[default]`` unless told otherwise) of a ``samconfig.toml``.

    Attributes
    ----------
    path:
        The file; it may not exist yet (a fresh clone before its first guided deploy).
    environment:
        The config environment, ``sam ... --config-env``.
    data:
        That environment's tables, e.g. ``{"deploy": {"parameters": {...}}}``.
    """

    path: Path
    environment: str = DEFAULT_ENVIRONMENT
    data: dict[str, Any] = field(default_factory=dict)

    def parameters(self, command: str) -> dict[str, Any]:
        """The values SAM uses for ``command``: ``global`` overlaid with the command's own table."""
        merged = dict(self.data.get("global", {}).get("parameters", {}))
        merged.update(self.data.get(command, {}).get("parameters", {}))
        return merged

    @property
    def stack_name(self) -> str | None:
        return self.parameters("deploy").get("stack_name") or None

    @property
    def region(self) -> str | None:
        return self.parameters("deploy").get("region") or None

    @property
    def parameter_overrides(self) -> dict[str, str]:
        """``parameter_overrides`` as a mapping (SAM writes ``'Key="value" Other="v w"'``)."""
        return parse_parameter_overrides(self.parameters("deploy").get("parameter_overrides", ""))


def parse_parameter_overrides(value: str | list[str]) -> dict[str, str]:
    """Parse SAM's ``Key=Value`` pairs, from one shell-quoted string or a list of them."""
    # A list holds one pair per item; a string is shell-quoted pairs, as `sam deploy --guided` saves them.
    tokens = list(value) if isinstance(value, list) else shlex.split(value)
    pairs: dict[str, str] = {}
    for token in tokens:
        name, sep, parameter_value = token.partition("=")
        if not sep or not name:
            raise ConfigurationError(f"parameter_overrides entry {token!r} is not Key=Value")
        pairs[name] = parameter_value
    return pairs


def load_samconfig(path: Path = DEFAULT_SAMCONFIG, environment: str = DEFAULT_ENVIRONMENT) -> SamConfig:
    """Load ``path``; a missing file is an empty configuration, a malformed one an error."""
    if not path.exists():
        return SamConfig(path, environment)
    try:
        document = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path} is not valid TOML: {exc}") from None
    return SamConfig(path, environment, dict(document.get(environment, {})))
