"""The local loop hides nothing a person needs: whole replies, why no reply came, what the replier decided.

Each command runs as a person runs it, on a pseudo-terminal (``tests/pseudo_terminal.py``):
``make serve`` (``python -m devstack.serve``) with a team agent whose replies are eight lines long,
which hands a refund off and declines a thank-you, and ``make mail`` / ``make thread`` /
``make trigger`` (``python -m devstack.trigger``) against it. ``make demo ARGS=--json`` runs as
``make`` itself, its stdout piped as into a file.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.e2e.test_serve_trigger import ENVIRONMENT, ROOT
from tests.pseudo_terminal import Terminal

AGENT = textwrap.dedent(
    """
    from replyonce.agent import Handoff, NoReply, Reply


    def reply(conversation):
        if "refund" in conversation.target.text:
            return Handoff("refunds are decided by a person")
        if "thank" in conversation.target.text:
            return NoReply("a thank-you needs no answer")
        return Reply(text="\\n\\n".join(f"answer line {n}" for n in range(1, 9)))
    """
)


@pytest.fixture(scope="module")
def agent_environment(tmp_path_factory):
    folder = tmp_path_factory.mktemp("agent")
    (folder / "long_agent.py").write_text(AGENT)
    return {**ENVIRONMENT, "PYTHONPATH": f"{ENVIRONMENT['PYTHONPATH']}{os.pathsep}{folder}"}


def serve_on_a_terminal(environment, *args):
    terminal = Terminal(
        [sys.executable, "-m", "devstack.serve", "--port", "0", "--pollers", "1", "--no-console",
         "--agent", "long_agent:reply", *args],
        cwd=ROOT,
        env=environment,
    )  # fmt: skip
    base_url = terminal.wait_for(r"webhook URL\s+(http://127\.0\.0\.1:\d+)/").group(1)
    return terminal, base_url


@pytest.fixture(scope="module")
def full_serve(agent_environment):
    terminal, base_url = serve_on_a_terminal(agent_environment, "--full")
    yield terminal, base_url
    terminal.close()


@pytest.fixture(scope="module")
def serve(agent_environment):
    terminal, base_url = serve_on_a_terminal(agent_environment)
    yield terminal, base_url
    terminal.close()


def command(base_url, *args):
    """``make mail`` / ``make thread`` / ``make trigger`` on a terminal: its exit status and its screen."""
    terminal = Terminal(
        [sys.executable, "-m", "devstack.trigger", *args, "--url", base_url], cwd=ROOT, env=ENVIRONMENT
    )
    try:
        code = terminal.wait(timeout=60)
    finally:
        terminal.close()
    return code, terminal.text()


def test_serve_full_and_mail_full_show_every_line_of_the_reply(full_serve):
    terminal, base_url = full_serve
    code, screen = command(base_url, "mail", "--from", "fay@example.com", "--body", "Where is it?", "--full")
    assert code == 0
    assert all(f"│ answer line {n}" in screen for n in range(1, 9))
    assert "more line" not in screen
    terminal.wait_for(r"reply sent(?s:.*)│ answer line 8")
    thread_id = re.search(r"on thread (\S+):", screen).group(1)
    code, listing = command(base_url, "thread", "--thread", thread_id, "--full")
    assert code == 0
    assert "│ answer line 8" in listing


def test_a_cut_reply_ends_with_how_many_lines_were_cut(serve):
    terminal, base_url = serve
    code, screen = command(base_url, "mail", "--from", "gil@example.com", "--body", "Where is it?")
    assert code == 0
    # make mail shows two lines of each message, then what it left out.
    assert "│ answer line 2" in screen
    assert "│ answer line 3" not in screen
    assert "│ … 6 more lines (--full shows the whole body)" in screen
    # make serve's panel shows three.
    panel = terminal.wait_for(r"reply sent(?s:.*?)│ … 5 more lines \(--full shows the whole body\)").group(0)
    assert "answer line 3" in panel
    assert "answer line 4" not in panel


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "I want a refund",
            r"reason=handed_off; the agent handed it off: refunds are decided by a person",
        ),
        (
            "thank you!",
            "skipped after [\\d.]+ s: reason=agent_declined; the agent declined: a thank-you needs no answer",
        ),
    ],
)
def test_make_mail_says_why_the_agent_sent_no_reply(serve, body, said):
    _, base_url = serve
    code, screen = command(base_url, "mail", "--from", "hal@example.com", "--body", body)
    assert code == 0
    assert re.search(said, screen), screen


def test_make_trigger_reports_the_decision_the_replier_reached(serve):
    _, base_url = serve
    code, screen = command(base_url, "mail", "--from", "ida@example.com", "--body", "Where is it?")
    assert code == 0
    message_id = re.search(r"message (\S+) from ida@example.com", screen).group(1)
    code, screen = command(base_url, "updated", "--message", message_id)
    assert (code, re.findall(r"decision: .*", screen)) == (0, ["decision: skipped, reason=unsupported_type"])
    code, screen = command(base_url, "created", "--message", message_id)
    assert (code, re.findall(r"decision: .*", screen)) == (0, ["decision: skipped, reason=already_replied"])
    code, screen = command(base_url, "forged", "--message", message_id)
    assert code == 0
    assert "the webhook queued nothing, so no decision" in screen
    code, screen = command(base_url, "unknown")
    assert (code, re.findall(r"decision: .*", screen)) == (0, ["decision: skipped, reason=message_gone"])


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_json_is_valid_json_on_stdout():
    # A person's shell, not a make recipe's: make would add its "Entering directory" lines.
    environment = {k: v for k, v in ENVIRONMENT.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    result = subprocess.run(  # noqa: S603 - make with our own arguments
        [shutil.which("make"), "demo", "ARGS=--json --customers 2"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["replies_sent"] == report["expected_replies"]
