"""A progress bar for a person at a terminal: the replay's, the demo's and the chaos run's.

In ``ops`` (which an operator runs against a deployed stack) so that the operator commands stand on
the layer and ``rich`` alone; the local stack's tools import it from here.
"""

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)


def progress_bar(console: Console | None) -> Progress | None:
    """A live bar (spinner, description, bar, done/total, elapsed) on a terminal; ``None`` elsewhere.

    Why ``None`` off a terminal: a piped run (CI, a log file) wants lines it can read later,
    not redraws. The demo uses it for webhook deliveries; the chaos harness can for its workload.
    """
    if console is None or not console.is_terminal:
        return None
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
