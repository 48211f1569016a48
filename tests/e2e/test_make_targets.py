"""Every documented ``make`` target, run through ``make`` as a person runs it, in a person's shell.

What a person's shell holds: ``PATH``, ``HOME``, ``LANG``, ``TERM`` — none of the suite's Powertools or
AWS variables (``tests/conftest.py`` sets them for the tests in this process) and no ``PYTHONPATH``.
Twice a suite variable hid a defect of a command a person runs: ``make serve`` answered every webhook
502 without ``POWERTOOLS_METRICS_NAMESPACE``, and ``make replay`` crashed on the first skipped message
for the same reason. So each command here is started by ``make`` from the repository's own layout, in
an environment built from nothing, against one ``make serve`` whose mailbox holds every kind of mail
the product skips (the agent's own replies, a bounce, an auto-reply, a list's mail, a person of the
mailbox writing in the thread) — and every command's output is checked for a traceback.

Which targets: every target ``README.md`` and ``docs/operations.md`` name (``DOCUMENTED``), each either
run here (``RUN_HERE``) or named in ``NOT_RUN_HERE`` with where it is run instead; a target the docs
gain later fails ``test_every_documented_target_is_run_here_or_says_where``.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.starting_environment import STARTING_ENVIRONMENT
from tests.static.test_readme import make_commands

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")

AGENT_EMAIL = "support@replyonce.example"  # make serve's agent grant, as its banner names it
TRACEBACK = "Traceback (most recent call last)"


def documented_targets() -> set[str]:
    """The targets of every ``make`` command README.md and docs/operations.md show."""
    found = set()
    for document in ("README.md", "docs/operations.md"):
        for command in make_commands((ROOT / document).read_text()):
            words = shlex.split(command)
            targets = [w for w in words[words.index("make") + 1 :] if "=" not in w and not w.startswith("-")]
            target = targets[0] if targets else "help"
            if re.fullmatch(r"[a-z][a-z0-9-]*", target):  # not a placeholder (`make <command>`)
                found.add(target)
    return found


# Targets not run by this module, and where each is run as a person runs it instead. Why not here:
# each is a test run or a measurement of its own (minutes), or writes into the repository.
NOT_RUN_HERE = {
    "test": "is the whole suite (.ci/run)",
    "test-unit": "is a tier of the suite",
    "test-static": "is a tier of the suite",
    "test-contract": "is a tier of the suite",
    "test-integration": "is a tier of the suite",
    "test-e2e": "is a tier of the suite, this module included",
    "test-harness": "is a tier of the suite",
    "pytest": "is the suite",
    "lint": "runs in .ci/run",
    "validate": "runs in .ci/run",
    "e2e": "is tests/e2e/test_end_to_end.py",
    "interleavings": "is tests/integration/test_interleavings.py",
    "chaos": "is tests/e2e/test_chaos.py",
    "failover-drill": "is tests/e2e/test_failover_drill.py",
    "bench": "measures for minutes and writes docs/performance.md",
    "bench-flood": "measures for minutes and writes its section of docs/performance.md",
    "build": "is sam build, minutes (tests/static checks its inputs)",
    "events": "writes events/ (tests/integration/test_webhook.py checks them against the generator)",
    "constraints": "rewrites constraints.txt",
    "clean": "removes .venv",
    "venv": "is every install (.ci/run does it)",
}


def person_shell(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a person's terminal: built from nothing, not copied from this process."""
    venv_bin = (ROOT / ".venv" / "bin").resolve()
    path = os.pathsep.join(
        p
        for p in STARTING_ENVIRONMENT.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
        if p and Path(p).resolve() != venv_bin
    )
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", "TERM": "xterm-256color", **extra}


@dataclass(frozen=True)
class Ran:
    command: str
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        tail = f"--- stdout\n{self.out[-3000:]}\n--- stderr\n{self.err[-3000:]}"
        return f"$ {self.command}\nexit {self.code}\n{tail}"


def make(
    environment: dict[str, str], target: str, args: str = "", *, timeout: float = 180, **variables: str
) -> Ran:
    """``make TARGET ARGS="..." NAME=VALUE``, typed at the shell in the repository's root."""
    argv = [MAKE, target, *([f"ARGS={args}"] if args else []), *(f"{k}={v}" for k, v in variables.items())]
    run = subprocess.run(  # noqa: S603 - make with our own arguments
        argv, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout, check=False
    )
    return Ran(shlex.join(["make", *argv[1:]]), run.returncode, run.stdout, run.stderr)


def succeeded(ran: Ran) -> Ran:
    assert ran.code == 0, str(ran)
    assert TRACEBACK not in ran.out + ran.err, str(ran)
    return ran


def refused_in_one_line(ran: Ran, words: str) -> Ran:
    """A mistake of the person's: a non-zero exit, their words for it, and no traceback."""
    assert ran.code != 0, str(ran)
    assert TRACEBACK not in ran.out + ran.err, str(ran)
    assert words in ran.err, str(ran)
    return ran


class MakeServe:
    """``make serve`` started by make in a person's shell, stopped as Ctrl-C stops it (SIGINT, the group)."""

    def __init__(self, environment: dict[str, str], log: Path, args: str = "--port 0 --pollers 1") -> None:
        self.log = log
        self.process = subprocess.Popen(  # noqa: S603 - make with our own arguments
            [MAKE, "serve", f"ARGS={args}"],
            cwd=ROOT,
            env=environment,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        deadline = time.monotonic() + 90
        while not (found := re.search(r"webhook URL\s+http://127\.0\.0\.1:(\d+)/", self.text())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"make serve did not start:\n{self.text()}")
            time.sleep(0.2)
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                return self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.wait(timeout=30)


@dataclass
class Stack:
    """The running ``make serve``, the shell that talks to it, and the mail put in its mailbox."""

    serve: MakeServe
    shell: dict[str, str]
    home: Path
    customer_thread: str
    customer_message: str
    skips: dict[str, str]
    since: str


def mail(stack_shell: dict[str, str], port: int, args: str) -> Ran:
    return succeeded(make(stack_shell, "mail", f"{args} --port {port}"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("home")
    shell = person_shell(home)
    serve = MakeServe(shell, tmp_path_factory.mktemp("serve") / "serve.log")
    try:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 600))
        # A customer's question: the agent answers it, and its reply is mail of our own in the mailbox.
        asked = mail(
            shell, serve.port, "--from alice@example.com --subject 'Order 1042' --body 'Where is order 1042?'"
        )
        thread, message = (
            re.search(r"on thread (\S+):", asked.out).group(1),
            re.search(r"message (\S+) from", asked.out).group(1),
        )
        assert "replied after" in asked.out, str(asked)
        skips = {}
        for reason, args in {
            "automated_sender": "--from mailer-daemon@example.com --subject 'Undelivered Mail' "
            "--body 'The mail system could not deliver your message.'",
            "auto_submitted": "--from bob@example.com --subject 'Out of office' --body 'I am away.' "
            "--header Auto-Submitted:auto-replied",
            # A newsletter as bulk senders send it today: List-Unsubscribe with RFC 8058's -Post beside it
            # (List-Unsubscribe alone is a person's hand-off, bulk_unconfirmed).
            "bulk_mail": "--from news@example.com --subject 'Our newsletter' --body 'Big sale.' "
            "--header 'List-Unsubscribe:<mailto:leave@example.com>' "
            "--header 'List-Unsubscribe-Post:List-Unsubscribe=One-Click'",
            # A person of the mailbox answering in the customer's thread, from the mailbox's own address.
            "own_outbound": f"--from {AGENT_EMAIL} --thread {thread} --body 'I will see to it. — Sam'",
        }.items():
            ran = mail(shell, serve.port, args)
            assert f"reason={reason}" in ran.out, str(ran)
            skips[reason] = re.search(r"message (\S+) from", ran.out).group(1)
        yield Stack(serve, shell, home, thread, message, skips, since)
    finally:
        serve.stop()


# ---- the targets -----------------------------------------------------------------------------------


def test_every_documented_target_is_run_here_or_says_where():
    documented = documented_targets()
    assert documented >= {"serve", "mail", "replay", "shadow-report", "redrive"}, documented
    unaccounted = documented - RUN_HERE - set(NOT_RUN_HERE)
    assert not unaccounted, f"documented targets neither run here nor named in NOT_RUN_HERE: {unaccounted}"


def test_make_alone_lists_the_targets(tmp_path):
    ran = succeeded(make(person_shell(tmp_path), "help"))
    assert re.search(r"^  replay ", ran.out, re.MULTILINE), str(ran)
    assert re.search(r"^  serve ", ran.out, re.MULTILINE), str(ran)


def test_make_mail_thread_and_trigger(stack):
    port = stack.serve.port
    ran = succeeded(make(stack.shell, "thread", f"--thread {stack.customer_thread} --port {port}"))
    assert "Where is order 1042?" in ran.out
    ran = succeeded(make(stack.shell, "trigger", f"updated --message {stack.customer_message} --port {port}"))
    assert "decision: skipped, reason=unsupported_type" in ran.out, str(ran)
    ran = succeeded(make(stack.shell, "trigger", f"forged --port {port}"))
    assert "401" in ran.out, str(ran)
    ran = succeeded(make(stack.shell, "trigger", f"unknown --port {port}"))
    assert "decision: skipped" in ran.out, str(ran)


def test_make_mail_from_a_display_name_with_duplicates_says_what_was_absorbed(stack):
    # A From as a mail client writes it; three deliveries, two of them absorbed, reported, one reply.
    ran = mail(
        stack.shell,
        stack.serve.port,
        "--from 'Carol Lee <carol@example.com>' --subject 'Order 1043' --body 'And 1043?' --duplicates 3",
    )
    assert re.search(r"replied after [\d.]+ s: \S+ to carol@example\.com, answers", ran.out), str(ran)
    assert "duplicates: 2 of 2 queued copies absorbed: the notification was handled once" in ran.out, str(ran)
    assert "no_recipient" not in ran.out


def test_make_replay_with_the_built_in_agent_on_a_mailbox_with_skips(stack):
    # Defect 1 of issue 47: the first skipped message crashed the replay (no metric namespace).
    ran = succeeded(
        make(stack.shell, "replay", f"--local {stack.serve.url} --agent template --since {stack.since}")
    )
    assert re.search(r"would answer  [12] message\(s\)", ran.out), str(ran)  # alice's, and carol's if sent
    for reason in ("automated_sender", "auto_submitted", "bulk_mail"):
        assert reason in ran.out, str(ran)


def test_make_replay_finds_an_agent_where_make_serve_finds_it(stack):
    # Defect 2 of issue 47: the README's own example, an agent of functions/replier/.
    ran = succeeded(
        make(
            stack.shell,
            "replay",
            f"--local {stack.serve.url} --agent order_status_agent:reply --since {stack.since}",
        )
    )
    assert "shipped on 28 November" in ran.out, str(ran)


def test_make_replay_keeps_the_persons_pythonpath(stack, tmp_path):
    # A team's agent in a folder of its own, named by the person's PYTHONPATH: the Makefile keeps it.
    (tmp_path / "team_agent.py").write_text(
        "from replyonce.agent import Reply\n\n"
        "def reply(conversation):\n"
        "    return Reply('Our team agent read your message.')\n"
    )
    shell = {**stack.shell, "PYTHONPATH": str(tmp_path)}
    ran = succeeded(
        make(shell, "replay", f"--local {stack.serve.url} --agent team_agent:reply --since {stack.since}")
    )
    assert "Our team agent read your message." in ran.out, str(ran)


def test_make_shadow_report_and_redrive_against_make_serve(stack):
    succeeded(make(stack.shell, "shadow-report", f"--local {stack.serve.url} --since {stack.since}"))
    ran = succeeded(make(stack.shell, "redrive", f"--local {stack.serve.url} --peek 5"))
    assert "dead-lettered notification(s) shown" in ran.out, str(ran)


def test_make_grants_and_promote_against_make_serve(stack):
    url = stack.serve.url
    ran = succeeded(make(stack.shell, "grants", f"list --local {url}"))
    assert re.search(r"^grant-agent-0001\s+active\s+send\s+template\s+AgentGrantIds$", ran.out, re.M), str(
        ran
    )
    ran = succeeded(
        make(stack.shell, "grants", f"set --grant grant-agent-0001 --mode shadow --dry-run --local {url}")
    )
    assert "dry run, nothing written: grant grant-agent-0001: set by " in ran.out, str(ran)
    ran = succeeded(make(stack.shell, "grants", f"show --grant grant-agent-0001 --local {url}"))
    assert re.search(r"reply_mode\s+send\s+parameter", ran.out), str(ran)
    # Already sending: nothing to promote to, said in one line (decided before any mailbox read).
    refused_in_one_line(
        make(stack.shell, "promote", f"--grant grant-agent-0001 --local {url}"), "already sends"
    )


def test_make_report_console_serves_two_replays(stack, tmp_path):
    for name in ("before", "after"):
        succeeded(
            make(
                stack.shell,
                "replay",
                f"--local {stack.serve.url} --agent template --since {stack.since} "
                f"--json {tmp_path / name}.json",
            )
        )
    log = tmp_path / "console.log"
    process = subprocess.Popen(  # noqa: S603 - make with our own arguments
        [MAKE, "report-console", f"ARGS={tmp_path / 'before.json'} {tmp_path / 'after.json'} --port 0"],
        cwd=ROOT,
        env=stack.shell,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while "http://127.0.0.1:" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)
    assert TRACEBACK not in log.read_text(), log.read_text()


def test_make_export_review_report_and_gate_against_make_serve(stack, tmp_path):
    # The export pseudonymises with the person's own key, which they set in their shell as documented.
    shell = {**stack.shell, "REPLYONCE_EXPORT_KEY": "a-key-of-the-teams-own"}
    out = tmp_path / "week.json"
    succeeded(make(shell, "export", f"--local {stack.serve.url} --since {stack.since} --out {out}"))
    assert out.exists()
    drafts = tmp_path / "drafts.json"
    succeeded(make(stack.shell, "review-report", f"--local {stack.serve.url} --drafts-file {drafts}"))
    for name in ("before", "after"):
        replay_report(stack, f"template --json {tmp_path / name}.json")
    # The same agent twice: nothing worse, exit 0.
    succeeded(make(stack.shell, "gate", f"--baseline {tmp_path / 'before.json'} {tmp_path / 'after.json'}"))


def test_make_invoke_and_make_demo(tmp_path):
    shell = person_shell(tmp_path)
    ran = succeeded(make(shell, "invoke"))
    assert "REPORT" in ran.out + ran.err, str(ran)
    ran = succeeded(make(shell, "demo", "--customers 2", timeout=300))
    assert "PASS" in ran.out, str(ran)


def test_make_deploy_dry_run_needs_nothing_of_aws(tmp_path):
    ran = succeeded(make(person_shell(tmp_path), "deploy", "--dry-run --region us-east-1"))
    assert "sam deploy" in ran.out, str(ran)


# The operator commands against a deployed stack, from a shell whose AWS profile does not exist: each
# stops with AWS's words and what to do, in one line, before any request leaves the machine.
DEPLOYED = {
    "set-api-key": "",
    "register-webhook": "",
    "rotate-secret": "",
    "thread-state": "--grant G --thread T",
    "grants": "list",
    "promote": "--grant G",
    "backfill": "--since 2026-11-30T08:00Z",
    "shadow-report": "--since 2026-11-30",
    "replay": "--agent order_status_agent:reply --since 2026-11-23",
    "failover": "--to us-west-2",
    "restore-state": "--mark-only",
}


@pytest.mark.parametrize("target", sorted(DEPLOYED))
def test_operator_commands_without_credentials_stop_in_one_line(target, tmp_path):
    args = f"{DEPLOYED[target]} --region us-east-1 --profile no-such-profile".strip()
    refused_in_one_line(make(person_shell(tmp_path), target, args), "no-such-profile")


def test_make_listen_without_a_nylas_key_stops_in_one_line(tmp_path):
    refused_in_one_line(
        make(person_shell(tmp_path), "listen", "--url https://abc.trycloudflare.com"), "NYLAS_API_KEY"
    )


RUN_HERE = {
    "help",
    "serve",
    "mail",
    "thread",
    "trigger",
    "replay",
    "shadow-report",
    "redrive",
    "report-console",
    "invoke",
    "demo",
    "deploy",
    "listen",
    "export",
    "review-report",
    "gate",
    *DEPLOYED,
}


# ---- the report alone on stdout, for `diff` and pipes -----------------------------------------------


def replay_report(stack: Stack, agent: str) -> Ran:
    # A fixed window, as the documented comparison gives one (--since and --until): the same report twice.
    until = time.strftime("%Y-%m-%dT%H:00:00Z", time.gmtime(time.time() + 7200))
    window = f"--since {stack.since} --until {until}"
    return succeeded(make(stack.shell, "replay", f"--local {stack.serve.url} --agent {agent} {window}"))


def test_make_replay_prints_the_report_alone_so_two_runs_diff_only_in_decisions(stack):
    one, again = replay_report(stack, "template"), replay_report(stack, "template")
    other = replay_report(stack, "order_status_agent:reply")
    # No make echo, no log line, no word about the run: the report's first line is its own.
    for ran in (one, other):
        assert ran.out.startswith("shadow report  "), str(ran)
        assert not [line for line in ran.out.splitlines() if line.lstrip().startswith("{")], str(ran)
        assert "nothing was written to Nylas" in ran.err, str(ran)
    assert one.out == again.out  # the same decisions: `diff` prints nothing
    changed = [line for line in other.out.splitlines() if line not in one.out.splitlines()]
    # What differs is what the agents decided: the counts and the customer's reply, never the header.
    assert changed, str(other)
    assert not [line for line in changed if line.startswith("shadow report")], changed


def test_the_report_covers_the_window_asked_for_by_the_mailboxs_dates(stack):
    # make serve's mailbox starts with the sample messages of events/ (dated 2025, arrived now): a
    # replay from ten minutes ago reports today's mail, its period is the window, not "- .. -".
    ran = replay_report(stack, "template")
    header = ran.out.splitlines()[0]
    assert " - .. - " not in header, header
    assert stack.since[:10] in header, header
    assert "2025-" not in ran.out, str(ran)


@pytest.mark.parametrize("target", ["replay", "shadow-report"])
def test_a_pipe_closed_early_ends_the_report_quietly(stack, target):
    # `| true` reads nothing and is gone before the report is written: the worst `| head` there is.
    args = f"--local {stack.serve.url} --since {stack.since}" + (
        " --agent template" if target == "replay" else ""
    )
    command = f"set -o pipefail; make {target} ARGS={shlex.quote(args)} | true"
    run = subprocess.run(  # noqa: S603 - bash with our own command line
        ["/bin/bash", "-c", command], cwd=ROOT, env=stack.shell, capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0, run.stderr
    assert "BrokenPipeError" not in run.stderr, run.stderr
    assert TRACEBACK not in run.stderr, run.stderr
    assert "make: ***" not in run.stderr, run.stderr


# ---- usage names the make command --------------------------------------------------------------------

HELPED = {
    "serve": "serve",
    "mail": "mail",
    "thread": "thread",
    "trigger": "trigger",
    "demo": "demo",
    "invoke": "invoke",
    "listen": "listen",
    "report-console": "report-console",
    "replay": "replay",
    "shadow-report": "shadow-report",
    "redrive": "redrive",
    "thread-state": "thread-state",
    "backfill": "backfill",
    "deploy": "deploy",
    "register-webhook": "register-webhook",
    "rotate-secret": "rotate-secret",
    "set-api-key": "set-api-key",
    "failover": "failover",
    "restore-state": "restore-state",
    "export": "export",
    "review-report": "review-report",
    "gate": "gate",
    "promote": "promote",
}


@pytest.mark.parametrize("target", sorted(HELPED))
def test_the_usage_of_each_command_names_the_make_command_to_type(target, tmp_path):
    args = "updated --help" if target == "trigger" else "--help"
    ran = succeeded(make(person_shell(tmp_path), target, args))
    assert ran.out.startswith(f"usage: make {target} "), str(ran)
    assert "python -m" not in ran.out.splitlines()[0], str(ran)
