"""This process as a replier container: what Lambda gives one, given here once, before the layer is imported.

The operator commands run the replier's own code in this process (``make replay`` runs the agent
through :class:`replyonce.shell.replier.Replier`), so they need what Lambda gives every replier container and
a person's shell does not:

- the function's directory first on the path, as Lambda's task root (``/var/task``), and the layer's
  after it (``/opt/python``): ``ReplyAgent=order_status_agent:reply`` names a module of
  ``functions/replier/``, found there as ``make serve`` finds it (``devstack.serve.agent_file``);
- the template's Powertools variables (``POWERTOOLS_METRICS_NAMESPACE``, ``POWERTOOLS_SERVICE_NAME``,
  ``POWERTOOLS_LOG_LEVEL``): Powertools reads them once, when ``replyonce.observability`` is imported,
  and a skip's metric cannot be written without a namespace (``SchemaValidationError: Must contain a
  metric namespace`` on the first skipped message, issue 47).

Why here and not in the Makefile: ``python -m ops`` is the command (the Makefile only starts it), and a
variable only the Makefile set was how the suite, which sets its own, hid the defect. A value the shell
already holds wins, as ``sam local invoke`` lets a shell's value win. Only the standard library and the
template reader are imported: nothing of the layer may be imported before :func:`prepare` ran.
"""

import os
import sys
from collections.abc import MutableMapping, MutableSequence
from pathlib import Path

from ops.template import function_environment, load_template

ROOT = Path(__file__).resolve().parent.parent
REPLIER_DIRECTORY = ROOT / "functions" / "replier"
LAYER_DIRECTORY = ROOT / "layers" / "replyonce"


def prepare(
    environ: MutableMapping[str, str] = os.environ,
    path: MutableSequence[str] = sys.path,
    template: dict | None = None,
) -> None:
    """Put the replier's directory and the layer on ``path`` and the template's Powertools variables in
    ``environ`` (those the shell does not set already)."""
    # The task root first, the layer right after it: the order Lambda imports in.
    for position, directory in enumerate((REPLIER_DIRECTORY, LAYER_DIRECTORY)):
        if str(directory) in path:
            path.remove(str(directory))
        path.insert(position, str(directory))
    environment = function_environment(template or load_template(), "ReplierFunction")
    for name, value in environment.items():
        if name.startswith("POWERTOOLS_"):
            environ.setdefault(name, value)
