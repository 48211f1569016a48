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
from collections.abc import Callable, Mapping
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


def tune_container(
    handler: Handler, tuning: Mapping[str, Any], *, clock: Callable[[], float] | None = None
) -> None:
    """Build a loaded container's replier (or webhook) with settings no variable sets, in-process.

    What only the harness changes (retry pacing, timeouts a compressed run scales down, a cap a test
    lowers) is a field of ``ReplierSettings``/``WebhookSettings`` passed as ``tuning`` (by field name),
    never a variable of the product; the settings' guards check it as they check the template's values.
    ``clock``: the replier's wall clock (a skewed worker's).
    """
    module = sys.modules[handler.__module__]
    if hasattr(module, "consumer"):
        module.consumer = tuned_consumer(Path(module.__file__).parent, tuning, clock=clock)
    else:
        module.endpoint = tuned_endpoint(tuning)


def tuned_endpoint(tuning: Mapping[str, Any]) -> Callable[[], Any]:
    """``functions/webhook/app.py``'s ``endpoint`` as the handler caches it, built with ``tuning``."""
    from replyonce.shell.webhook import WebhookEndpoint

    return functools.cache(lambda: WebhookEndpoint.from_environment(tuning=dict(tuning)))


def tuned_consumer(
    agent_path: Path, tuning: Mapping[str, Any], *, clock: Callable[[], float] | None = None
) -> Callable[[], Any]:
    """``functions/replier/app.py``'s ``consumer`` as the handler caches it, built with ``tuning``.

    ``tuning`` is read when the consumer is first built (a test may fill it after its fixture ran).
    The cached function's ``__wrapped__(**kwargs)`` builds another container with the same tuning
    (``aws``, ``http``, ``clock`` as ``NotificationConsumer.from_environment`` takes them).
    """
    from replyonce.shell.consumer import NotificationConsumer

    def build(**kwargs: Any) -> Any:
        extra = {"clock": clock} if clock is not None else {}
        return NotificationConsumer.from_environment(
            agent_path=agent_path, tuning=dict(tuning), **{**extra, **kwargs}
        )

    return functools.cache(build)
