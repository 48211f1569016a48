"""template.yaml as plain data: what the operator commands, the local stack and the tests read from it.

Why read ``template.yaml`` rather than declare values again: a parameter
default, a table key or a timeout changed in the template changes every
reader with it.
"""

import copy
import functools
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
