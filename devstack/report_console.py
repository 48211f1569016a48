"""``make report-console``: shadow reports and replays side by side on a read-only page on loopback.

``make replay ARGS="--agent ... --json a.json"`` and ``make shadow-report ARGS="--json b.json"`` write
their reports as JSON; a ``diff`` of two tells what changed, this page shows it message by message:
each report's counts, and for every inbound message each report's decision (reply, decline, hand-off,
skip and its reason) with the agent's full text, beside what a person of the mailbox answered. Rows
where the reports decided differently are marked. What it shows is decided by
:func:`devstack.web_view.compare_reports`; the page is served as ``make serve``'s console is
(:class:`devstack.web_console.WebConsole`: ``127.0.0.1`` only, every route a ``GET``, text only).

    make report-console ARGS="last-week-v1.json last-week-v2.json [--port 3100]"
"""

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from devstack import web_view
from devstack.cli_types import port_number
from devstack.web_console import WebConsole
from ops.make_usage import name_make_target

PAGE_DIRECTORY = Path(__file__).resolve().parent / "report_page"
DEFAULT_PORT = 3100


class ReportError(Exception):
    """A report file that cannot be shown: missing, not JSON, or not a shadow report."""


def load_report(path: Path) -> dict[str, Any]:
    """The report ``--json`` wrote to ``path``.

    Raises
    ------
    ReportError
        With one line that names the file and what is wrong with it.
    """
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise ReportError(f'{path}: no such file (make replay ARGS="... --json {path}" writes one)') from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportError(f"{path}: not a JSON report ({error})") from None
    if not isinstance(document, dict) or not {"periods", "items"} <= document.keys():
        raise ReportError(f"{path}: not a shadow report or a replay (it has no periods and items)")
    return document


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="make report-console", description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="report files written with --json")
    parser.add_argument(
        "--port", type=port_number, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT})"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = name_make_target(_parser(), "report-console").parse_args(argv)
    try:
        reports = [(path.name, load_report(path)) for path in args.reports]
    except ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    state = web_view.compare_reports(reports)
    try:
        console = WebConsole(lambda: state, args.port, page_directory=PAGE_DIRECTORY).start()
    except OSError:
        print(
            f"error: port {args.port} on 127.0.0.1 is already in use: pick another with --port",
            file=sys.stderr,
        )
        return 1
    differ = sum(1 for row in state["messages"] if row["differs"])
    print(
        f"report console {console.url}  ({len(reports)} report(s), {len(state['messages'])} message(s), "
        f"{differ} decided differently); Ctrl-C stops it",
        flush=True,
    )
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        console.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
