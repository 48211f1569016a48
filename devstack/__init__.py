"""The local stack: ReplyOnce on one machine without AWS or Docker.

It builds the embedded AWS (moto server) from ``template.yaml`` so local runs,
tests and the deployed stack cannot drift apart.
"""

import sys as _sys
from types import TracebackType as _TracebackType


def _one_line_for_ctrl_c(
    kind: type[BaseException], value: BaseException, traceback: _TracebackType | None
) -> None:
    """Ctrl-C before a command's ``main`` runs (while its modules load) says one line, as after.

    Why here: ``devstack.cli_types.run_command`` turns Ctrl-C into "interrupted" once a command
    runs, but importing the local stack's modules takes a second or two in which a Ctrl-C would
    print a traceback through the imports. The package is imported first, so this covers them.
    Anything else goes to the hook that was there.
    """
    if issubclass(kind, KeyboardInterrupt):
        print("interrupted", file=_sys.stderr)
        return
    _previous_excepthook(kind, value, traceback)


_previous_excepthook = _sys.excepthook
_sys.excepthook = _one_line_for_ctrl_c
