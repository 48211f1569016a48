"""The local Lambda context gives each function what Lambda gives it: its own timeout and memory."""

import pytest
import yaml

from devstack.lambda_context import LocalLambdaContext
from ops.template import TEMPLATE_PATH


def _loader() -> type[yaml.SafeLoader]:
    """A YAML loader that reads the template's intrinsics as plain values (this test reads numbers only)."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return Loader


TEMPLATE = yaml.load(TEMPLATE_PATH.read_text(), Loader=_loader())  # noqa: S506 - SafeLoader subclass


@pytest.mark.parametrize("function", ["WebhookFunction", "ReplierFunction"])
def test_each_function_has_the_memory_and_timeout_the_template_gives_it(function):
    properties = TEMPLATE["Resources"][function]["Properties"]
    memory = properties.get("MemorySize", TEMPLATE["Globals"]["Function"]["MemorySize"])
    context = LocalLambdaContext(function)
    assert (context.memory_limit_in_mb, context.timeout_seconds) == (memory, properties["Timeout"])


def test_the_replier_is_not_given_the_globals_memory():
    # The template's replier has a MemorySize of its own, below the Globals' (docs/performance.md).
    own = TEMPLATE["Resources"]["ReplierFunction"]["Properties"]["MemorySize"]
    assert own != TEMPLATE["Globals"]["Function"]["MemorySize"]
    assert LocalLambdaContext("ReplierFunction").memory_limit_in_mb == own
