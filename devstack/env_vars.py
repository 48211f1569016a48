"""``--env-vars FILE`` as ``sam local invoke`` reads it, and the shell's environment as SAM respects it.

SAM's rules (``samcli/commands/local/lib/local_lambda.py`` and
``samcli/local/lambdafn/env_vars.py``): the file is a JSON object whose
values are objects: ``{"FunctionLogicalId": {"VAR": "value"}, "Parameters":
{"VAR": "value"}}``; ``Parameters`` applies to every function and the
function's own entry wins over it. Only variables the function declares in
the template (its ``Environment`` and ``Globals``) are set; for each of
them the file wins over the shell's environment, which wins over the
template's value. ``true``/``false`` become ``"true"``/``"false"``; lists,
objects and ``null`` become ``""``.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class EnvVarsError(ValueError):
    """The ``--env-vars`` file cannot be used; the message is one sentence for the person."""


@dataclass(frozen=True)
class ResolvedEnvironment:
    """The variables an invocation gets, where each came from, and what was ignored."""

    values: dict[str, str]
    from_file: tuple[str, ...] = ()
    from_shell: tuple[str, ...] = ()
    ignored: tuple[str, ...] = field(default=())


def load_env_vars_file(path: Path) -> dict[str, dict[str, Any]]:
    """Read and check an ``--env-vars`` file (SAM's format)."""
    try:
        text = path.read_text()
    except OSError as error:
        raise EnvVarsError(f"cannot read --env-vars file {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise EnvVarsError(f"--env-vars file {path} is not JSON: {error}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise EnvVarsError(
            f"--env-vars file {path} must look like "
            '{"FunctionLogicalId": {"VAR": "value"}, "Parameters": {"VAR": "value"}}'
        )
    return data


def stringify(value: Any) -> str:
    """A value as Lambda's runtime receives it (SAM's ``_stringify_value``)."""
    if isinstance(value, (dict, list, tuple)) or value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def resolve_environment(
    logical_id: str,
    declared: Mapping[str, str],
    env_vars: Mapping[str, Mapping[str, Any]] | None = None,
    shell: Mapping[str, str] | None = None,
) -> ResolvedEnvironment:
    """The environment of one invocation of ``logical_id``.

    Parameters
    ----------
    logical_id:
        The template's function.
    declared:
        The variables the function declares, with their (locally resolved) template values.
    env_vars:
        The ``--env-vars`` file's content.
    shell:
        The shell's environment as it was before the local stack set anything.
    """
    env_vars = env_vars or {}
    shell = shell or {}
    overrides = {**env_vars.get("Parameters", {}), **env_vars.get(logical_id, {})}
    values, from_file, from_shell = {}, [], []
    for name, default in declared.items():
        if name in overrides:
            values[name] = stringify(overrides[name])
            from_file.append(name)
        elif name in shell:
            values[name] = shell[name]
            if shell[name] != default:
                from_shell.append(name)
        else:
            values[name] = default
    ignored = tuple(sorted(name for name in env_vars.get(logical_id, {}) if name not in declared))
    return ResolvedEnvironment(values, tuple(from_file), tuple(from_shell), ignored)
