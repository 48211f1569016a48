"""``make serve`` against a real Nylas API, and ``make listen``: the emulator plays Nylas over HTTP.

The emulator here is the Nylas API the commands are pointed at (``NYLAS_API_URI``), not the
stack's built-in one: each command runs as its own process, as a person runs it, and reaches
"Nylas" only through its public routes (grants, messages, send, webhooks). What is asserted is
what that person sees and what Nylas was left with: the banner's real agent address, a reply to
mail that arrived at the real mailbox, a webhook created for the tunnel and deleted on exit.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from devstack.events import encode, envelope
from devstack.template import LOCAL_API_KEY, LOCAL_WEBHOOK_SECRET
from ops.register_webhook import TRIGGER_TYPES
from replyonce.rules.signature import sign
from tests.pseudo_terminal import ctrl_c_as_in_a_terminal

ROOT = Path(__file__).resolve().parents[2]
REAL_GRANT = "grant-real-0042"
REAL_ADDRESS = "agent@acme-real.example"
ISSUED_SECRET = "secret-nylas-returned-on-create"


def environment(**variables: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NYLAS_", "AGENT_GRANT_IDS"))}
    return {
        **base,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}",
        "COLUMNS": "200",
        "PYTHONFAULTHANDLER": "1",  # a process that hangs on Ctrl-C prints its threads (see Command.stop)
        **variables,
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Command:
    """A ``python -m MODULE`` process and everything it printed."""

    def __init__(self, module: str, argv: list[str], env: dict[str, str], output: Path) -> None:
        self.output = output
        self.process = subprocess.Popen(  # noqa: S603 - our own command
            [sys.executable, "-m", module, *argv],
            cwd=ROOT,
            env=env,
            stdout=output.open("w"),
            stderr=subprocess.STDOUT,
            preexec_fn=ctrl_c_as_in_a_terminal,  # Ctrl-C works from a backgrounded suite too
        )

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while not (found := re.search(pattern, self.text())):
            assert self.process.poll() is None, f"exited {self.process.returncode}:\n{self.text()}"
            assert time.monotonic() < deadline, f"{pattern!r} never printed:\n{self.text()[-3000:]}"
            time.sleep(0.1)
        return found

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # SIGABRT makes faulthandler print every thread's stack: the failure says where it hung.
            self.process.send_signal(signal.SIGABRT)
            self.process.wait(timeout=10)
            raise AssertionError(f"still running 30 s after signal {sig}:\n{self.text()[-6000:]}") from None


@pytest.fixture
def real_nylas(nylas):
    """The emulator as "the real Nylas": an agent grant with an address of its own."""
    nylas.add_grant(REAL_GRANT, REAL_ADDRESS, name="Acme Real")
    return nylas


@pytest.mark.parametrize(
    "missing",
    [("NYLAS_WEBHOOK_SECRET",), ("NYLAS_API_KEY", "AGENT_GRANT_IDS")],
    ids=["no webhook secret", "no key and no grants"],
)
def test_serve_for_the_real_nylas_refuses_to_start_without_its_four_variables(missing):
    given = {
        "NYLAS_API_URI": "https://api.us.nylas.com",
        "NYLAS_API_KEY": "key",
        "NYLAS_WEBHOOK_SECRET": "secret",
        "AGENT_GRANT_IDS": REAL_GRANT,
    }
    for name in missing:
        del given[name]
    run = subprocess.run(
        [sys.executable, "-m", "devstack.serve", "--port", "0"],
        cwd=ROOT,
        env=environment(**given),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert f"missing: {', '.join(missing)}." in line
    assert "NYLAS_API_URI, NYLAS_API_KEY, NYLAS_WEBHOOK_SECRET, AGENT_GRANT_IDS" in line
    assert 'make listen ARGS="--url https://<your tunnel>"' in line  # how to get a secret without a stack


def test_serve_for_the_real_nylas_refuses_a_key_nylas_refuses(real_nylas):
    run = subprocess.run(
        [sys.executable, "-m", "devstack.serve", "--port", "0"],
        cwd=ROOT,
        env=environment(
            NYLAS_API_URI=real_nylas.url,
            NYLAS_API_KEY="not-the-key",
            NYLAS_WEBHOOK_SECRET=ISSUED_SECRET,
            AGENT_GRANT_IDS=REAL_GRANT,
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("error: Nylas answered 401 when trying to read the grant")
    assert line.endswith("check NYLAS_API_KEY, NYLAS_API_URI and AGENT_GRANT_IDS")


def test_serve_for_the_real_nylas_shows_the_agents_address_and_answers_its_mail(real_nylas, tmp_path):
    serve = Command(
        "devstack.serve",
        ["--port", "0", "--pollers", "1"],
        environment(
            NYLAS_API_URI=real_nylas.url,
            NYLAS_API_KEY=LOCAL_API_KEY,
            NYLAS_WEBHOOK_SECRET=ISSUED_SECRET,
            AGENT_GRANT_IDS=REAL_GRANT,
        ),
        tmp_path / "serve.log",
    )
    try:
        webhook = serve.wait_for(r"webhook URL\s+(http://127\.0\.0\.1:\d+/v1/webhook)").group(1)
        banner = serve.wait_for(r"Ctrl-C stops it").string
        assert f"agent grants    {REAL_GRANT} ({REAL_ADDRESS})" in banner
        assert f"send an email to {REAL_ADDRESS} from another mailbox" in banner
        assert "support@replyonce.example" not in banner
        assert "make mail ARGS" not in banner  # it needs the emulator's mailbox
        assert ISSUED_SECRET not in banner
        assert LOCAL_WEBHOOK_SECRET not in banner

        # Mail reaches the real mailbox; Nylas signs its notification with the webhook's secret.
        message = real_nylas.deliver_inbound(
            REAL_GRANT, from_email="carol@example.com", subject="Refund?", body="Hi"
        )
        body = encode(envelope(message))
        headers = {"Content-Type": "application/json", "X-Nylas-Signature": sign(body, ISSUED_SECRET)}
        assert requests.post(webhook, data=body, headers=headers, timeout=10).status_code == 200
        serve.wait_for(r"replier .* reply sent")
        [reply] = real_nylas.sends
        assert reply.payload["to"][0]["email"] == "carol@example.com"
        assert reply.grant_id == REAL_GRANT
        # The local development secret signs nothing here.
        headers["X-Nylas-Signature"] = sign(body, LOCAL_WEBHOOK_SECRET)
        assert requests.post(webhook, data=body, headers=headers, timeout=10).status_code == 401
    finally:
        assert serve.stop() == 0
    assert "Traceback" not in serve.text()


def test_listen_registers_a_webhook_for_the_tunnel_keeps_its_secret_and_deletes_it_on_exit(
    real_nylas, tmp_path
):
    port = free_port()
    tunnel = f"http://127.0.0.1:{port}"  # loopback stands for the tunnel: the emulator reaches nothing else
    listen = Command(
        "devstack.listen",
        ["--url", tunnel, "--port", str(port), "--pollers", "1", "--notification-email", "ops@example.com"],
        environment(NYLAS_API_URI=real_nylas.url, NYLAS_API_KEY=LOCAL_API_KEY, AGENT_GRANT_IDS=REAL_GRANT),
        tmp_path / "listen.log",
    )
    try:
        listen.wait_for(r"Ctrl-C stops it", timeout=90)
        [webhook] = real_nylas.webhooks()
        assert webhook["webhook_url"] == f"{tunnel}/v1/webhook"
        assert webhook["trigger_types"] == list(TRIGGER_TYPES)
        assert webhook["notification_email_addresses"] == ["ops@example.com"]
        assert real_nylas.challenges[-1]["verified"] is True  # Nylas' challenge came through "the tunnel"
        assert f"agent grants    {REAL_GRANT} ({REAL_ADDRESS})" in listen.text()
        # Deliveries signed with the secret Nylas issued are accepted: this process holds it.
        message = real_nylas.deliver_inbound(
            REAL_GRANT, from_email="dan@example.com", subject="Hello", body="Hi"
        )
        body = encode(envelope(message))
        signed = {
            "Content-Type": "application/json",
            "X-Nylas-Signature": sign(body, webhook["webhook_secret"]),
        }
        assert requests.post(webhook["webhook_url"], data=body, headers=signed, timeout=10).status_code == 200
        listen.wait_for(r"replier .* reply sent")
    finally:
        assert listen.stop() == 0  # Ctrl-C
    text = listen.text()
    assert f"deleted webhook {webhook['id']} at Nylas" in text
    assert real_nylas.webhooks() == []
    assert webhook["webhook_secret"] not in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("http://abc.trycloudflare.com", "Nylas delivers only to public HTTPS URLs"),
        ("abc.trycloudflare.com", "is not a URL"),
    ],
)
def test_listen_refuses_a_url_nylas_could_not_deliver_to(url, complaint):
    run = subprocess.run(  # noqa: S603 - our own command
        [sys.executable, "-m", "devstack.listen", "--url", url, "--port", "0"],
        cwd=ROOT,
        env=environment(NYLAS_API_URI="http://127.0.0.1:9", NYLAS_API_KEY="k", AGENT_GRANT_IDS=REAL_GRANT),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert complaint in line
