"""A command's report on standard output, read by a pipe that may close early (``make replay | head``).

Why a function of its own: Python raises ``BrokenPipeError`` at the first write after the reader has
gone, and again when the interpreter flushes stdout at exit, so a ``| head`` ended in a traceback. The
reader that stopped reading wanted no more; the command ends with status 0 and says nothing (as
``git log | head`` does), since ``make`` would print an error for any other status. What the command
wrote to files (``--json``) was written before its report.
"""

import os
import sys
from collections.abc import Callable


def end_quietly_on_closed_pipe(main: Callable[[], int]) -> int:
    """``main()``'s status, or 0 when standard output's reader went away before it finished."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's advice (the signal module's docs, "Note on SIGPIPE"): point stdout at devnull, so the
        # flush at exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return status
