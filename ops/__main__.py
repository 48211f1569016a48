"""``python -m ops``: the operator command line (see ``ops.cli``).

Before ``ops.cli`` imports the layer, :func:`ops.replier_process.prepare` makes this process what a
replier container is (the function's directory and the layer on the path, the template's Powertools
variables): run by ``make`` or by hand from the repository root, from any shell.
"""

from ops.replier_process import prepare

prepare()

from ops.cli import main  # noqa: E402 - after the process is a replier's

raise SystemExit(main())
