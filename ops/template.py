"""template.yaml as plain data: what the operator commands, the local stack and the tests read from it.

Why read ``template.yaml`` rather than declare values again: a parameter
default, a table key or a timeout changed in the template changes every
reader with it.
"""

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

TEMPLATE_PATH = Path(__file__).resolve().parent.parent / "template.yaml"


class _CloudFormationLoader(yaml.SafeLoader):
    """YAML loader that turns short-form intrinsics (``!Ref X``) into their long form."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    return {name: value}


_CloudFormationLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    """The template as plain data, intrinsics in long form (a fresh copy: callers may change it).

    Why parsed once per file and content: YAML parsing of the template takes ~150 ms, and the
    tests, the local stack and the operator commands read it often; a changed file is read again.
    """
    text = path.read_text()
    return copy.deepcopy(_parsed(text))


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> dict[str, Any]:
    return yaml.load(text, Loader=_CloudFormationLoader)  # noqa: S506 - SafeLoader subclass


def sqs_event_source(
    template: dict[str, Any], function_logical_id: str = "ReplierFunction"
) -> dict[str, Any]:
    """The ``Properties`` of the function's SQS event: ``BatchSize``, batching window, ``ScalingConfig``."""
    events = template["Resources"][function_logical_id]["Properties"]["Events"]
    return next(e["Properties"] for e in events.values() if e["Type"] == "SQS")


def function_environment(
    template: Mapping[str, Any], function_logical_id: str, parameters: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment Lambda gives ``function_logical_id``: ``Globals``, then the function's own variables.

    A ``!Ref`` to a parameter is the stack's value (``parameters``), else the template's default; a
    ``!Ref`` to a resource, or any other intrinsic, is ``replay-<name>``: a placeholder, since a
    process that runs the function's code outside Lambda (``make replay``) reads none of them.
    """
    globals_ = template.get("Globals", {}).get("Function", {})
    declared = dict(globals_.get("Environment", {}).get("Variables", {}))
    function = template["Resources"][function_logical_id]["Properties"]
    declared.update(function.get("Environment", {}).get("Variables", {}))
    defaults = template.get("Parameters", {})
    parameters = parameters or {}
    environment: dict[str, str] = {}
    for name, value in declared.items():
        if isinstance(value, dict) and "Ref" in value:
            ref = value["Ref"]
            if ref in defaults:
                environment[name] = str(parameters.get(ref, defaults[ref].get("Default", "")))
            else:
                environment[name] = f"replay-{ref}"
        elif isinstance(value, str | int | float):
            environment[name] = str(value)
        else:
            environment[name] = f"replay-{name}"
    return environment
