"""``make serve`` + ``make mail``: your own message in by one command, its reply visible in both terminals.

One real ``make serve`` process (``python -m devstack.serve``) for the module,
on an ephemeral loopback port; the trigger command runs as ``make mail``
runs it. What is asserted is what a person sees: the reply on the thread,
the conversation printed, the serve terminal's reply and skip lines, and one
clear line (no traceback) for each mistake.
"""

import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from devstack import trigger
from devstack.events import AGENT_EMAIL
from tests.pseudo_terminal import Terminal, ctrl_c_as_in_a_terminal
from tests.starting_environment import STARTING_ENVIRONMENT

ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENT = {
    **os.environ,
    "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}",
    "COLUMNS": "200",
}
for name in ("NYLAS_API_URI", "NYLAS_API_KEY", "NYLAS_WEBHOOK_SECRET", "AGENT_GRANT_IDS", "PORT"):
    ENVIRONMENT.pop(name, None)
# The suite's own Powertools settings (tests/conftest.py) are no part of a person's shell: `make serve`
# must set what the functions need itself. Why it matters: with the suite's namespace inherited, a
# `make serve` that imported the layer before setting the template's variables answered every
# webhook delivery 502 for everyone but the tests.
for name in ("POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_DEV", "POWERTOOLS_TRACE_DISABLED"):
    if name not in STARTING_ENVIRONMENT:
        ENVIRONMENT.pop(name, None)


class Serve:
    """A running ``make serve`` and everything it printed so far."""

    def __init__(
        self,
        output: Path,
        *args: str,
        importable: Path | None = None,
        environment: dict[str, str] | None = None,
    ) -> None:
        """Start ``make serve`` with ``args``; ``importable``: a folder its agent can be imported from.

        ``environment``: variables the shell sets beside the suite's own (``REPLY_MODE=review``).
        """
        self.output = output
        environment = {**ENVIRONMENT, **(environment or {})}
        if importable is not None:
            environment["PYTHONPATH"] = f"{ENVIRONMENT['PYTHONPATH']}{os.pathsep}{importable}"
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "devstack.serve", "--port", "0", "--pollers", "1", *args],
            cwd=ROOT,
            env=environment,
            stdout=output.open("w"),
            stderr=subprocess.STDOUT,
            preexec_fn=ctrl_c_as_in_a_terminal,  # Ctrl-C works from a backgrounded suite too
        )
        deadline = time.monotonic() + 60
        while not (found := re.search(r"webhook URL\s+(http://127\.0\.0\.1:\d+)/", self.text())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"make serve did not start:\n{self.text()}")
            time.sleep(0.1)
        self.base_url = found.group(1)

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text()):
            assert time.monotonic() < deadline, f"{pattern!r} never printed:\n{self.text()[-3000:]}"
            time.sleep(0.1)
        return self.text()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    running = Serve(tmp_path_factory.mktemp("serve") / "serve.log")
    yield running
    running.stop()


def run_trigger(serve: Serve, capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = trigger.main([*args, "--url", serve.base_url])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_ops(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """An operator's command (``python -m ops ...``, as ``make grants``/``redrive``/``shadow-report`` run
    it) as a process of its own against a ``make serve`` stack; it must succeed."""
    run = subprocess.run(  # noqa: S603 - our own interpreter and module, as make runs it
        [sys.executable, "-m", "ops", *argv],
        cwd=ROOT,
        env=ENVIRONMENT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stderr
    return run


def agent_messages(serve: Serve, thread_id: str) -> list[dict]:
    thread = trigger.ServeClient(serve.base_url).thread(thread_id)["data"]
    return [m for m in thread if m["from"][0]["email"] == AGENT_EMAIL]


def test_your_own_message_gets_one_reply_shown_in_both_terminals(serve, capsys):
    code, out, _ = run_trigger(
        serve,
        capsys,
        "mail",
        "--from",
        "alice@example.com",
        "--subject",
        "Invoice 77",
        "--body",
        "Could you resend invoice 77?",
        "--duplicates",
        "3",
        "--concurrent",
    )
    assert code == 0
    message_id, thread_id = re.search(r"message (\S+) from alice@example.com on thread (\S+):", out).groups()
    assert "3 deliveries, webhook answered 200, 200, 200" in out
    assert re.search(
        r"replied after [\d.]+ s: \S+ to alice@example\.com, answers " + re.escape(message_id), out
    )
    # The trigger printed the conversation with the agent's reply.
    assert re.search(r"agent\s+\S+\s+" + re.escape(AGENT_EMAIL) + r"\s+Re: Invoice 77", out)
    # Three deliveries of one notification, one reply.
    [reply] = agent_messages(serve, thread_id)
    assert reply["to"][0]["email"] == "alice@example.com"
    # The serve terminal showed the reply as it was sent: to, subject, what it answers.
    serve.wait_for(
        r"reply sent.*\n.*to\s+alice@example\.com.*\n.*subject\s+Re: Invoice 77.*\n.*answers\s+"
        + re.escape(message_id)
    )
    serve.wait_for(r"duplicate delivery absorbed")


def test_a_follow_up_on_the_thread_gets_its_own_reply(serve, capsys):
    _, first, _ = run_trigger(serve, capsys, "mail", "--from", "bob@example.com", "--subject", "Hello")
    thread_id = re.search(r"on thread (\S+):", first).group(1)
    code, out, _ = run_trigger(
        serve, capsys, "mail", "--from", "bob@example.com", "--thread", thread_id, "--body", "One more thing"
    )
    assert code == 0
    assert re.search(r"on thread " + re.escape(thread_id) + r": 'Re: Hello'", out)
    assert "1 delivery, webhook answered 200" in out
    assert len(agent_messages(serve, thread_id)) == 2
    code, listing, _ = run_trigger(serve, capsys, "thread", "--thread", thread_id)
    assert code == 0
    assert f"thread {thread_id}: 4 messages" in listing
    assert listing.count("customer ") == 2
    assert listing.count("agent ") == 2


def test_a_skipped_message_is_reported_with_its_reason_as_soon_as_it_is_skipped(serve, capsys):
    started = time.monotonic()
    code, out, _ = run_trigger(
        serve, capsys, "mail", "--from", "no-reply@shop.example", "--subject", "Receipt", "--wait", "15"
    )
    took = time.monotonic() - started
    assert code == 0
    assert re.search(r"skipped after [\d.]+ s: reason=automated_sender \(no reply will be sent for it\)", out)
    assert took < 8, f"make mail took {took:.1f} s for a skip (it waited for a reply that never comes)"


def test_message_updated_truncated_forged_and_unknown_deliveries(serve, capsys):
    _, first, _ = run_trigger(serve, capsys, "mail", "--from", "carol@example.com", "--wait", "0")
    message_id = re.search(r"message (\S+) from", first).group(1)

    code, out, _ = run_trigger(serve, capsys, "updated", "--message", message_id)
    assert code == 0
    updated = re.search(r"notification (\S+) message.updated for", out).group(1)
    serve.wait_for(re.escape(updated) + r" notification skipped\s+reason=unsupported_type")

    code, out, _ = run_trigger(serve, capsys, "forged", "--message", message_id)
    assert code == 0
    assert "(forged signature)" in out
    assert "webhook answered 401" in out

    code, out, _ = run_trigger(serve, capsys, "truncated", "--message", message_id)
    assert code == 0
    assert "message.created.truncated" in out
    assert "webhook answered 200" in out

    code, out, _ = run_trigger(serve, capsys, "unknown")
    assert code == 0
    assert "webhook answered 200" in out
    unknown = re.search(r"notification (\S+) message.created for", out).group(1)
    # The replier's answer is one readable line with a reason, not a traceback.
    serve.wait_for(re.escape(unknown) + r" notification skipped\s+reason=\w+")
    assert "Traceback" not in serve.text()


def test_a_grants_life_from_the_emulated_nylas_reaches_the_replier(serve, capsys):
    # Issue 42: make trigger ARGS="grant ..." has the emulator fire grant.* as Nylas does; make serve's
    # replier registers the new grant (shadow), then pauses it by its expiry.
    code, out, _ = run_trigger(
        serve, capsys, "grant", "create", "--grant", "grant-trigger-0007", "--email", "desk@example.com"
    )
    assert code == 0
    assert "grant grant-trigger-0007: valid; Nylas' grant.created delivered" in out
    serve.wait_for(r"grant created: registered")
    code, out, _ = run_trigger(serve, capsys, "grant", "expire", "--grant", "grant-trigger-0007")
    assert code == 0
    assert "expired" in out
    serve.wait_for(r"grant expired: paused")
    code, out, err = run_trigger(serve, capsys, "grant", "expire", "--grant", "grant-nobody")
    assert code == 1
    assert "unknown grant" in err
    assert "Traceback" not in serve.text()


def test_serve_prints_one_readable_line_per_event_without_metrics_or_moto(serve, capsys):
    assert run_trigger(serve, capsys, "mail", "--from", "dave@example.com")[0] == 0
    text = serve.wait_for(r"replier .* reply sent")
    event_lines = [line for line in text.splitlines() if re.match(r"\d\d:\d\d:\d\d (webhook|replier) ", line)]
    assert any(" webhook " in line and "notification queued" in line for line in event_lines)
    assert any(" replier " in line and "reply sent" in line for line in event_lines)
    assert '"_aws"' not in text  # EMF metric lines hidden
    assert '{"level"' not in text  # no raw JSON
    assert "HTTP/1.1" not in text  # moto's request lines quiet
    assert "service_undefined" not in text


def test_serve_in_a_terminal_shows_each_event_and_no_metric_lines(capsys):
    """``make serve`` as a person runs it: its start-up spinner on a terminal, then the events."""
    terminal = Terminal(
        [sys.executable, "-m", "devstack.serve", "--port", "0", "--pollers", "1"], cwd=ROOT, env=ENVIRONMENT
    )
    try:
        base_url = terminal.wait_for(r"webhook URL\s+(http://127\.0\.0\.1:\d+)/").group(1)
        assert trigger.main(["mail", "--from", "erin@example.com", "--url", base_url]) == 0
        terminal.wait_for(r"replier .* reply sent")
        # The agent's own reply fires message.created too: once it is skipped, both invocations flushed.
        terminal.wait_for(r"notification skipped\s+reason=own_outbound")
    finally:
        terminal.close()
    screen = terminal.text()
    assert "starting the local stack" in screen  # the spinner was drawn: this was a terminal
    assert '"_aws"' not in screen, "raw EMF metric lines reached the terminal"


def test_mistakes_get_one_clear_line(serve, capsys, tmp_path):
    code, out, err = run_trigger(serve, capsys, "updated", "--message", "msg-nobody-has")
    assert code == 1
    assert out == ""
    # The hint names make serve's port (an ephemeral one here): `--port` alone would read another's stack.
    port = serve.base_url.rsplit(":", 1)[1]
    assert err.strip().splitlines() == [
        "error: the mailbox holds no message msg-nobody-has; "
        f'`make thread ARGS="--thread T --port {port}"` lists a thread'
    ]
    code, _, err = run_trigger(serve, capsys, "thread", "--thread", "thread-nobody-has")
    assert (code, err.strip()) == (1, "error: the mailbox holds no thread thread-nobody-has")
    code, _, err = run_trigger(serve, capsys, "mail", "--from", "not-an-address")
    assert (code, err.strip()) == (1, "error: from_email 'not-an-address' is not an email address")
    code, _, err = run_trigger(
        serve, capsys, "mail", "--from", "a@example.com", "--subject", "Hi", "--thread", "thread-typo"
    )
    assert (code, err.strip()) == (
        1,
        "error: the mailbox holds no thread thread-typo; leave out --thread to start one",
    )

    capsys.readouterr()
    assert trigger.main(["thread", "--thread", "t", "--url", "http://127.0.0.1:9"]) == 1
    assert capsys.readouterr().err.startswith("error: nothing answers at http://127.0.0.1:9: start")

    port = serve.base_url.rsplit(":", 1)[1]
    taken = subprocess.run(  # noqa: S603 - our own command, argv list
        [sys.executable, "-m", "devstack.serve", "--port", port],
        cwd=ROOT,
        env=ENVIRONMENT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert taken.returncode == 1
    # The port after it is the running stack's console: the advice skips it.
    assert taken.stderr.strip().splitlines() == [
        f"error: port {port} is already in use by a program listening on it (another `make serve`? "
        f'Ctrl-C stops it): stop it, or pick another port with ARGS="--port {int(port) + 2}"'
    ]


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--pollers", "0"], "argument --pollers: must be from 1 to 16, not 0"),
        (["--port", "70000"], "argument --port: must be from 0 to 65535, not 70000"),
        (["--pollers", "two"], "argument --pollers: 'two' is not a whole number"),
    ],
)
def test_serve_rejects_nonsense_up_front(argv, complaint, capsys):
    from devstack.serve import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().endswith(complaint)


def test_trigger_rejects_nonsense_up_front(capsys):
    with pytest.raises(SystemExit) as exited:
        trigger.main(["mail", "--from", "a@example.com", "--duplicates", "0"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().endswith("argument --duplicates: must be from 1 to 20, not 0")


def test_ctrl_c_stops_serve_without_a_traceback(tmp_path):
    running = Serve(tmp_path / "serve.log")
    running.process.send_signal(signal.SIGINT)
    assert running.process.wait(timeout=30) == 0
    assert "Traceback" not in running.text()


def _time_wait_ports() -> set[int]:
    """Local ports of this machine's TCP sockets in TIME_WAIT (Linux's /proc/net/tcp: state 06)."""
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "06":
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _free_port_pair() -> int:
    """A port P with P and P + 1 free on loopback now (the webhook's and the console's), below the
    kernel's ephemeral range.

    Why below it: between the first server's exit and the restart, any process of the machine (another
    test worker's client, moto's) may be given P or P + 1 as the local port of an outgoing connection if
    they lie in the ephemeral range, and the restart then finds the port taken by "another program" (it
    happened in CI: the console's port). Below the range, only an explicit bind can take them.
    """
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(50):
        port = random.randrange(max(1024, low - 12_000), low - 2)
        with socket.socket() as console, socket.socket() as webhook:
            try:
                webhook.bind(("127.0.0.1", port))
                console.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two free neighbouring ports")


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads TIME_WAIT sockets from /proc/net/tcp")
def test_serve_restarts_at_once_on_the_same_ports_after_ctrl_c_with_the_console_open(tmp_path):
    # Edit, Ctrl-C, restart, reload: the loop people live in. The console's page polls each second, and
    # the server closes each answered connection first (HTTP/1.0), so after Ctrl-C its ports hold sockets
    # in TIME_WAIT for a minute; the real servers bind over them (SO_REUSEADDR), and so must the check.
    port = _free_port_pair()
    first = Serve(tmp_path / "first.log", "--port", str(port))
    browser = requests.Session()  # a browser's page: its connections kept alive between polls
    try:
        console = re.search(r"console\s+(http://127\.0\.0\.1:\d+/)", first.text()).group(1)
        assert console == f"http://127.0.0.1:{port + 1}/"
        for _ in range(3):  # the open page's polls, and a curl of the webhook
            assert browser.get(console, timeout=10).status_code == 200
            assert browser.get(f"{first.base_url}/v1/webhook?challenge=x", timeout=10).status_code == 200
    finally:
        first.process.send_signal(signal.SIGINT)
        assert first.process.wait(timeout=30) == 0
        browser.close()  # the page notices the server went away: the server's side closed first
    assert {port, port + 1} & _time_wait_ports(), "no TIME_WAIT socket on the ports: nothing was tested"
    started = time.monotonic()
    second = Serve(tmp_path / "second.log", "--port", str(port))
    try:
        assert second.base_url == f"http://127.0.0.1:{port}"
        assert time.monotonic() - started < 30  # at once, not after TIME_WAIT's 60 s
        assert f"console         http://127.0.0.1:{port + 1}/" in second.text()
    finally:
        second.stop()
