"""argparse types that reject nonsense up front, with one clear line (argparse exits 2, no traceback)."""

import argparse
import sys
from collections.abc import Callable


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An ``int`` argument within ``[low, high]``: ``--pollers 0`` is refused before anything starts."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, not {value}")
        return value

    parse.__name__ = "whole number"
    return parse


def port_number(text: str) -> int:
    """A TCP port, 0 meaning "any free port"."""
    return whole_number(0, 65535)(text)


def run_command(main: Callable[[], int]) -> int:
    """Run a command's ``main``; Ctrl-C ends it with one line and exit 130, not a traceback."""
    try:
        return main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
