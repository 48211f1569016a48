"""``python -m ops``: the operator command line (see ``ops.cli``).

Before ``ops.cli`` imports the layer, :func:`ops.replier_process.prepare` makes this process what a
replier container is (the function's directory and the layer on the path, the template's Powertools
variables): run by ``make`` or by hand from the repository root, from any shell. The command's report
is its standard output, alone (``make replay ... > before.txt``, then ``diff``); every log line goes to
standard error, and a reader that stops early (``| head``) ends the command quietly.
"""

import sys

from ops.replier_process import prepare

prepare()

from ops.cli import main  # noqa: E402 - after the process is a replier's
from ops.output import end_quietly_on_closed_pipe  # noqa: E402
from replyonce.observability import logger  # noqa: E402

logger.registered_handler.setStream(sys.stderr)  # type: ignore[attr-defined]
raise SystemExit(end_quietly_on_closed_pipe(main))
