"""``make serve ARGS="--agent module:function"``: your agent in the local stack, reloaded when you edit it.

The loop a team works in: edit the agent, ``make mail``, read the reply (or
the draft, with ``--review``). One real ``make serve`` process with an agent
module of the test's own (on ``PYTHONPATH``, as the layer's modules are);
``make mail`` runs as users run it.
"""

import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from devstack import trigger
from tests.e2e.test_serve_trigger import ENVIRONMENT, ROOT, Serve, agent_messages, run_ops

AGENT = textwrap.dedent(
    """
    from replyonce.agent import Handoff, Reply


    def reply(conversation):
        if "refund" in conversation.target.text:
            return Handoff("refunds are for a person")
        return Reply(text="{version}: " + " | ".join(m.text for m in conversation.to_answer))
    """
)


@pytest.fixture
def agent_dir(tmp_path):
    (tmp_path / "team_agent.py").write_text(AGENT.replace("{version}", "version 1"))
    return tmp_path


def mail(serve, capsys, body: str) -> str:
    capsys.readouterr()
    code = trigger.main(
        ["mail", "--from", "alice@example.com", "--subject", "Hi", "--body", body, "--url", serve.base_url]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    return re.search(r"on thread (thread-[0-9a-f]+)", out).group(1)


def test_make_mail_is_answered_by_your_agent_and_an_edit_is_picked_up(agent_dir, tmp_path, capsys):
    serve = Serve(tmp_path / "serve.log", "--agent", "team_agent:reply", importable=agent_dir)
    try:
        thread = mail(serve, capsys, "Where is my order?")
        [reply] = agent_messages(serve, thread)
        assert "version 1: Where is my order?" in reply["body"]
        source = agent_dir / "team_agent.py"
        source.write_text(AGENT.replace("{version}", "version 2"))
        os.utime(source, (time.time() + 5, time.time() + 5))
        serve.wait_for(r"team_agent\.py changed")
        thread = mail(serve, capsys, "And now?")
        [reply] = agent_messages(serve, thread)
        assert "version 2: And now?" in reply["body"]
        thread = mail(serve, capsys, "I want a refund")
        assert agent_messages(serve, thread) == []
        serve.wait_for(r"notification skipped\s+reason=handed_off")
    finally:
        serve.stop()


def test_review_makes_a_draft_instead_of_a_reply(agent_dir, tmp_path, capsys):
    serve = Serve(tmp_path / "serve.log", "--agent", "team_agent:reply", "--review", importable=agent_dir)
    try:
        capsys.readouterr()
        trigger.main(
            ["mail", "--from", "alice@example.com", "--body", "Please check this", "--url", serve.base_url]
        )
        out = capsys.readouterr().out
        thread = re.search(r"on thread (thread-[0-9a-f]+)", out).group(1)
        # make mail reports the draft as the decision it is, not "no decision ... after a retry".
        assert re.search(r"drafted for review after [\d.]+ s: draft \S+ to alice@example\.com", out), out
        assert "no decision" not in out
        # The serve pane shows the draft as it shows a send: its own panel.
        serve.wait_for(r"reply drafted for review: nothing sent.*\n.*to\s+alice@example\.com")
        serve.wait_for(r"│ version 1: Please check this")
        [draft] = agent_messages(serve, thread)
        assert draft["object"] == "draft"  # in the mailbox's drafts, for a person to send
        assert "version 1: Please check this" in draft["body"]
    finally:
        serve.stop()


def test_an_agent_that_is_not_there_is_refused_before_anything_starts():
    run = subprocess.run(
        [sys.executable, "-m", "devstack.serve", "--port", "0", "--agent", "nowhere_to_be_found:reply"],
        cwd=ROOT,
        env=ENVIRONMENT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "no module 'nowhere_to_be_found'" in run.stderr
    assert "Traceback" not in run.stderr


def test_review_mode_and_agent_from_the_shell_make_a_draft_and_send_nothing(agent_dir, tmp_path, capsys):
    # As a person types it: REPLY_MODE=review REPLY_AGENT=team_agent:reply make serve. The replies
    # used to be sent: the template's REPLY_MODE=send overwrote the shell's.
    serve = Serve(
        tmp_path / "serve.log",
        importable=agent_dir,
        environment={"REPLY_MODE": "review", "REPLY_AGENT": "team_agent:reply"},
    )
    try:
        banner = serve.wait_for(r"Ctrl-C stops it")
        assert re.search(r"agent\s+team_agent:reply \(.*team_agent\.py; reloaded when it changes\)", banner)
        assert re.search(
            r"reply mode\s+review: each reply becomes a draft for a person; nothing is sent", banner
        )
        assert re.search(r"from the shell\s+.*REPLY_MODE=review", banner)
        thread = mail(serve, capsys, "Please check this")
        serve.wait_for(r"reply drafted for review")
        messages = agent_messages(serve, thread)
        assert [m["object"] for m in messages] == ["draft"]  # one draft, no message sent
        assert "version 1: Please check this" in messages[0]["body"]
        assert "reply sent" not in serve.text()
    finally:
        serve.stop()


def run_serve(*args: str, environment: dict[str, str] | None = None, importable=None):
    env = {**ENVIRONMENT, **(environment or {})}
    if importable is not None:
        env["PYTHONPATH"] = f"{env['PYTHONPATH']}{os.pathsep}{importable}"
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "devstack.serve", "--port", "0", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_function_that_is_not_there_is_refused_at_start(agent_dir):
    run = run_serve("--agent", "team_agent:nosuchfn", importable=agent_dir)
    assert run.returncode == 2
    assert "REPLY_AGENT=team_agent:nosuchfn: module 'team_agent' has no 'nosuchfn'" in run.stderr
    assert "Ctrl-C stops it" not in run.stdout
    assert "Traceback" not in run.stderr


def test_a_mode_the_replier_does_not_know_is_refused_at_start():
    run = run_serve(environment={"REPLY_MODE": "draft"})
    assert run.returncode == 2
    assert "REPLY_MODE must be 'send', 'review' or 'shadow', got 'draft'" in run.stderr


def test_the_api_key_alone_is_refused_not_ignored():
    run = run_serve(environment={"NYLAS_API_KEY": "nyk_live_key"})
    assert run.returncode == 2
    assert "NYLAS_API_KEY is set but NYLAS_API_URI is not" in run.stderr
    assert "NYLAS_API_KEY= make serve" in run.stderr
    assert "nyk_live_key" not in run.stderr


def test_a_deployed_stack_resource_is_refused():
    run = run_serve(environment={"QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/replyonce"})
    assert run.returncode == 2
    assert "QUEUE_URL set in the shell" in run.stderr


FAILING_AGENT = textwrap.dedent(
    """
    def reply(conversation):
        raise RuntimeError("the order service is down")
    """
)


@pytest.mark.long_running
def test_a_record_the_agent_keeps_failing_is_said_dead_lettered_and_make_redrive_brings_it_back(
    agent_dir, tmp_path, capsys
):
    source = agent_dir / "team_agent.py"
    source.write_text(FAILING_AGENT)
    serve = Serve(tmp_path / "serve.log", "--agent", "team_agent:reply", importable=agent_dir)
    try:
        capsys.readouterr()
        trigger.main(
            [
                "mail",
                "--from",
                "alice@example.com",
                "--body",
                "Order 7?",
                "--wait",
                "0",
                "--url",
                serve.base_url,
            ]
        )
        message_id, thread = re.search(
            r"message (\S+) from .* on thread (\S+):", capsys.readouterr().out
        ).groups()
        # Eight receives (maxReceiveCount), 1 + 2 + 4 + 4 ... s apart, then SQS dead-letters it.
        pane = serve.wait_for(r"notification dead-lettered.*message_id=" + re.escape(message_id), timeout=90)
        # The command that brings it back names this stack's port: `--local` alone would read port 3000.
        assert f'make redrive ARGS="--local {serve.base_url}"' in pane
        assert agent_messages(serve, thread) == []
        source.write_text(AGENT.replace("{version}", "fixed"))
        os.utime(source, (time.time() + 5, time.time() + 5))
        serve.wait_for(r"team_agent\.py changed")
        redrive = run_ops("redrive", "--local", serve.base_url, timeout=60)
        assert "moved 1 message(s) to the notification queue" in redrive.stdout
        serve.wait_for(r"reply sent")
        [reply] = agent_messages(serve, thread)
        assert "fixed: Order 7?" in reply["body"]
    finally:
        serve.stop()


def test_mail_deferred_by_a_broken_agent_is_answered_as_soon_as_the_agent_is_fixed(
    agent_dir, tmp_path, capsys
):
    serve = Serve(tmp_path / "serve.log", "--agent", "team_agent:reply", importable=agent_dir)
    source = agent_dir / "team_agent.py"
    try:
        source.write_text("def reply(conversation:\n")  # saved half-typed: a syntax error
        os.utime(source, (time.time() + 5, time.time() + 5))
        serve.wait_for(r"team_agent\.py changed")
        capsys.readouterr()
        trigger.main(
            ["mail", "--from", "bob@example.com", "--body", "Hello?", "--wait", "0", "--url", serve.base_url]
        )
        thread = re.search(r"on thread (\S+):", capsys.readouterr().out).group(1)
        serve.wait_for(r"replier cannot start: configuration error")
        source.write_text(AGENT.replace("{version}", "fixed"))
        os.utime(source, (time.time() + 10, time.time() + 10))
        # Not the queue's 1,560 s visibility: the record the broken agent failed comes back at once.
        serve.wait_for(r"1 record\(s\) the replier had failed are retried now")
        serve.wait_for(r"reply sent")
        [reply] = agent_messages(serve, thread)
        assert "fixed: Hello?" in reply["body"]
    finally:
        serve.stop()


def test_make_mail_says_at_once_that_the_agent_raised_where_and_when_the_record_comes_back(
    agent_dir, tmp_path, capsys
):
    (agent_dir / "team_agent.py").write_text(FAILING_AGENT)
    serve = Serve(tmp_path / "serve.log", "--agent", "team_agent:reply", importable=agent_dir)
    try:
        capsys.readouterr()
        started = time.monotonic()
        code = trigger.main(
            ["mail", "--from", "alice@example.com", "--body", "Order 7?", "--url", serve.base_url]
        )
        out = capsys.readouterr().out
        assert code == 0, out
        # Not "no decision within 15 s": the first failure, in the person's words and file, at once.
        assert time.monotonic() - started < 10, out
        assert re.search(
            r"the agent raised RuntimeError: the order service is down at team_agent\.py:3 in reply "
            r"after [\d.]+ s; retry 2 of 8 in \d+ s; fix it \(saving the file reloads it\)",
            out,
        ), out
        assert "no decision" not in out
        # The serve pane names the same line of the person's code.
        serve.wait_for(r"the agent failed.*at=team_agent\.py:3 in reply")
    finally:
        serve.stop()
