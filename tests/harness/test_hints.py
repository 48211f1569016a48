"""The commands ``make serve``'s hints print name its port unless it is the default (issue 47).

A hint without the port sends the next command to port 3000: nothing there, or another person's stack.
"""

import shlex

import pytest

from devstack.hints import local_option, port_option, redrive_command
from ops.cli import build_parser
from ops.redrive import DEFAULT_LOCAL_URL


@pytest.mark.parametrize(
    ("base_url", "port", "local", "redrive"),
    [
        ("http://127.0.0.1:3000", "", "--local", "make redrive ARGS=--local"),
        ("http://127.0.0.1:3000/v1/webhook", "", "--local", "make redrive ARGS=--local"),
        (
            "http://127.0.0.1:3710",
            " --port 3710",
            "--local http://127.0.0.1:3710",
            'make redrive ARGS="--local http://127.0.0.1:3710"',
        ),
        (
            "http://127.0.0.1:41234/v1/webhook",
            " --port 41234",
            "--local http://127.0.0.1:41234",
            'make redrive ARGS="--local http://127.0.0.1:41234"',
        ),
    ],
)
def test_a_hint_names_the_port_of_the_stack_that_printed_it(base_url, port, local, redrive):
    hint = (port_option(base_url), local_option(base_url), redrive_command(base_url))
    assert hint == (port, local, redrive)


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:3000", "http://127.0.0.1:3710/v1/webhook"])
def test_the_local_option_reaches_the_stack_it_names(base_url):
    # What the operator command makes of the hint's words: the very stack that printed it.
    words = shlex.split(shlex.split(redrive_command(base_url))[2].removeprefix("ARGS="))
    args = build_parser().parse_args(["redrive", *words])
    expected = DEFAULT_LOCAL_URL if base_url.startswith(DEFAULT_LOCAL_URL) else "http://127.0.0.1:3710"
    assert args.local == expected
