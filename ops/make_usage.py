"""Usage and error lines that name the ``make`` command a person types, not the Python module it runs.

Why: ``make mail ARGS=--bogus`` answered ``usage: python -m devstack.trigger ...``, a command nobody
types (issue 47). The operator commands (``python -m ops``) and the local stack's (``devstack``) name
their targets through this one function.
"""

import argparse


def name_make_target(
    parser: argparse.ArgumentParser,
    target: str,
    *,
    before: str = "",
    first: str = "",
    leave_out: tuple[str, ...] = (),
) -> argparse.ArgumentParser:
    """Make ``parser``'s usage and error lines name the ``make`` command a person types, not the module.

    ``usage: make mail ARGS="[-h] [--port PORT] ..."`` and ``make mail: error: ...``: what ``-h`` and a
    mistake print is the command to type again. ``before``: make variables written before ``ARGS``
    (``FN=... EVENT=...`` for ``make invoke``); ``first``: a word ``ARGS`` starts with (a subcommand of
    ``make trigger``); ``leave_out``: arguments the Makefile gives from its own variables (their
    ``dest``). Call it once every argument is added.
    """
    formatter = argparse.HelpFormatter(prog="", width=10_000)
    actions = [action for action in parser._actions if action.dest not in leave_out]
    formatter.add_usage(None, actions, parser._mutually_exclusive_groups, prefix="")
    arguments = " ".join(part for part in (first, formatter.format_help().strip()) if part)
    words = " ".join(part for part in (f"make {target}", before) if part)
    parser.prog = f"make {target}"
    parser.usage = f'{words} ARGS="{arguments}"' if arguments else words
    return parser
