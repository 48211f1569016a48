"""Load a function's handler the way Lambda does: from the template's CodeUri and Handler.

Each call loads a fresh copy of the handler module under its own name: one
copy is one "container", with its own cached clients and Powertools state,
so several pollers behave like concurrent Lambda instances. Each invocation
logs under its own function's service name, function name and request id
(``devstack.invocation_logs``), as if it had its process to itself.
"""

import functools
import importlib.util
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devstack.invocation_logs import invocation_scope
from ops.template import TEMPLATE_PATH, load_template

_counter = itertools.count(1)

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def handler_location(logical_id: str, template: dict[str, Any] | None = None) -> tuple[Path, str]:
    """The module file and function name of a function's ``Handler``."""
    template = template or load_template()
    properties = template["Resources"][logical_id]["Properties"]
    module, function = properties["Handler"].rsplit(".", 1)
    path = TEMPLATE_PATH.parent / properties["CodeUri"] / f"{module.replace('.', '/')}.py"
    return path, function


def load_handler(logical_id: str, template: dict[str, Any] | None = None) -> Handler:
    """A new container's handler for the template function ``logical_id``."""
    template = template or load_template()
    path, function = handler_location(logical_id, template)
    name = f"replyonce_container_{logical_id}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would: the handler's module can be found by name
    spec.loader.exec_module(module)
    handler = getattr(module, function)
    service = function_environment_value(logical_id, "POWERTOOLS_SERVICE_NAME", template)

    @functools.wraps(handler)
    def invoke(event: dict[str, Any], context: Any) -> dict[str, Any]:
        with invocation_scope(service):
            return handler(event, context)

    return invoke


def function_environment_value(
    logical_id: str, name: str, template: dict[str, Any] | None = None
) -> str | None:
    """A literal variable of the function's ``Environment`` in the template (``None`` if absent)."""
    template = template or load_template()
    variables = template["Resources"][logical_id]["Properties"].get("Environment", {}).get("Variables", {})
    value = variables.get(name)
    return value if isinstance(value, str) else None
