"""The local stack: `make demo`, `make invoke` on every file of events/, and the API Gateway stand-in.

These run the same code paths as the README's commands, so CI fails when the
embedded default stops working.
"""

import gzip
import io
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
import requests

from devstack.demo import DemoSettings, run_demo, short_id
from devstack.events import (
    EVENTS_DIR,
    SAMPLE_EVENTS_ENV_VARS,
    encode,
    event_file_names,
    message_created,
    sample_message_created,
)
from devstack.invariants import INVARIANTS
from devstack.invoke import invoke
from devstack.stack import LocalStack, LogCollector, StackSettings
from devstack.template import LOCAL_WEBHOOK_SECRET
from replyonce.rules.signature import sign
from tests.pseudo_terminal import Terminal

ROOT = Path(__file__).resolve().parents[2]

WEBHOOK_STATUS = {
    "webhook-challenge.json": 200,
    "webhook-message-created.json": 200,
    "webhook-base64.json": 200,
    "webhook-gzip.json": 200,
    "webhook-truncated.json": 200,
    "webhook-previous-secret.json": 200,
    "webhook-forged-signature.json": 401,
    "webhook-missing-signature.json": 401,
    "webhook-grant-expired.json": 200,
}


def test_demo_scenario_replies_once_per_message_or_burst():
    report = run_demo(DemoSettings(seed=11, customers=4, pollers=2), progress_out=None)
    assert report.violations == {number: [] for number in INVARIANTS}
    assert report.replies_sent == report.expected_replies == 5  # 4 customers + 1 follow-up
    assert report.duplicates_absorbed > 0
    # The agent's own replies fired message.created and were skipped: each delivery of one by its payload
    # alone (no idempotency record for our own echo, issue 46), so once per delivery Nylas made of it.
    assert report.skips["own_outbound"] == report.own_reply_deliveries_queued >= report.replies_sent
    assert report.skips["automated_sender"] == 1
    assert report.skips["grant_not_agent"] == 1
    assert report.webhook_statuses.get("401") == 1
    assert "500" not in report.webhook_statuses
    assert report.dead_lettered == 0
    assert report.ok
    # The report shows every reply: to whom, and which inbound messages it answers.
    assert len(report.replies) == report.replies_sent
    answered = [message_id for reply in report.replies for message_id in reply["answers"]]
    assert len(answered) == len(set(answered)) >= report.replies_sent
    rendered = report.render()
    for reply in report.replies:
        answers = ", ".join(short_id(message_id) for message_id in reply["answers"])
        assert f"to {reply['to']:<24} {reply['subject']!r}  answers {answers}" in rendered
    # Every notification is accounted for: the scenario's, the follow-up, the agent's own replies'.
    assert sum(report.notification_sources.values()) == report.notifications
    assert report.notification_sources["from the agent's own replies"] == report.replies_sent


def test_the_demo_in_a_terminal_passes_and_shows_no_metric_lines():
    """``make demo`` as a person runs it: a live progress bar on the terminal while replies go out."""
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}"}
    terminal = Terminal(
        [sys.executable, "-m", "devstack.demo", "--seed", "11", "--customers", "4"], cwd=ROOT, env=environment
    )
    try:
        code = terminal.wait(timeout=180)
    finally:
        terminal.close()
    screen = terminal.text()
    assert re.search(r"webhook deliveries .*\d+/\d+", screen), "no progress bar was drawn:\n" + screen
    assert '"_aws"' not in screen, "raw EMF metric lines reached the terminal"
    assert "5. every skip logged with a reason and counted" in screen
    assert code == 0, screen[-3000:]
    assert re.search(r"took [\d.]+ s — PASS", screen)
    # What a person reads adds up: the count announced is the scenario's share of the report's.
    announced = int(re.search(r"delivering the scenario's (\d+) notifications", screen).group(1))
    total, scenario, follow_up, own = map(
        int,
        re.search(
            r"notifications +(\d+) +\((\d+) from the scenario, (\d+) follow-up, (\d+) from the agent's own",
            screen,
        ).groups(),
    )
    assert announced == scenario
    assert total == scenario + follow_up + own
    assert not re.search(r"msg-[0-9a-f]{32}", screen), "the report prints ids no one can read"


@pytest.mark.parametrize("after_seconds", [0.3, 3.0], ids=["while its modules load", "while it delivers"])
def test_ctrl_c_stops_the_demo_with_one_line(after_seconds):
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}"}
    terminal = Terminal([sys.executable, "-m", "devstack.demo"], cwd=ROOT, env=environment)
    try:
        time.sleep(after_seconds)
        terminal.interrupt()
        code = terminal.wait(timeout=60)
    finally:
        terminal.close()
    screen = terminal.text()
    assert code in (130, -signal.SIGINT), screen  # -SIGINT: stopped by the signal, as the shell expects
    assert "Traceback" not in screen
    assert '"_aws"' not in screen
    assert '{"level"' not in screen
    assert screen.strip().splitlines()[-1].endswith("interrupted")


def test_metric_lines_reach_the_collector_whatever_sys_stdout_is(monkeypatch):
    """Powertools prints its EMF documents; a progress display owns ``sys.stdout`` meanwhile."""
    from replyonce.observability import count, count_by, metrics

    collector = LogCollector()
    collector.capture()
    screen = io.StringIO()
    try:
        monkeypatch.setattr(sys, "stdout", screen)  # what rich's Live does while it draws
        count("NotificationAccepted")
        metrics.flush_metrics()
        count_by("NotificationSkipped", "reason", "own_outbound")
    finally:
        collector.release()
    assert screen.getvalue() == ""
    documents = [r for r in collector.records if "_aws" in r]
    assert [d.get("NotificationAccepted") for d in documents] == [[1.0], None]
    assert documents[1]["reason"] == "own_outbound"
    # Released: Powertools prints to sys.stdout again, as in Lambda.
    count_by("NotificationSkipped", "reason", "after_release")
    assert '"reason":"after_release"' in screen.getvalue()


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--customers", "0"], "argument --customers: must be from 1 to 500, not 0"),
        (["--pollers", "0"], "argument --pollers: must be from 1 to 16, not 0"),
    ],
)
def test_demo_rejects_nonsense_before_starting(argv, complaint, capsys):
    from devstack.demo import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().endswith(complaint)


@pytest.mark.parametrize("event_file", event_file_names())
def test_make_invoke_runs_every_event_file(event_file):
    event = json.loads((EVENTS_DIR / event_file).read_text())
    if event_file.startswith("webhook-"):
        # As `make invoke` runs it: with events/env.json, the override the 2025-dated events need.
        result = invoke("WebhookFunction", event, env_vars=SAMPLE_EVENTS_ENV_VARS)
        status = WEBHOOK_STATUS[event_file]
        assert result["response"]["statusCode"] == status
        notification_posted = status == 200 and event["httpMethod"] == "POST"
        assert len(result["queued"]) == (1 if notification_posted else 0)
    else:
        result = invoke("ReplierFunction", event, env_vars=SAMPLE_EVENTS_ENV_VARS)
        assert result["response"] == {"batchItemFailures": []}
        if event_file == "replier-grant-expired.json":
            # A grant's life, not a message: the grant paused (its mail waits), nothing sent, said in a line.
            assert result["sent"] == []
            assert [line["paused_by"] for line in result["logs"] if "paused_by" in line] == ["expiry"]
            return
        # Each replier event is about one customer message of the sample mailbox: one reply.
        assert len(result["sent"]) == 1
        assert result["sent"][0]["to"][0]["email"] == "customer@example.com"


def test_every_event_file_has_an_expectation():
    webhook_files = {p.name for p in EVENTS_DIR.glob("webhook-*.json")}
    assert webhook_files == set(WEBHOOK_STATUS)


@pytest.fixture(scope="module")
def stack():
    with LocalStack(StackSettings(pollers=1)) as running:
        yield running


def test_gateway_answers_the_challenge_with_the_bare_value_not_chunked(stack):
    response = requests.get(stack.webhook_url, params={"challenge": "bc609b38-c81f"}, timeout=10)
    assert response.status_code == 200
    assert response.text == "bc609b38-c81f"
    assert response.headers["Content-Length"] == str(len("bc609b38-c81f"))
    assert "Transfer-Encoding" not in response.headers


def test_gateway_keeps_gzip_bytes_for_the_signature(stack):
    body = gzip.compress(encode(message_created(notification_id="gateway-gzip-0001")))
    headers = {
        "Content-Encoding": "gzip",
        "Content-Type": "application/json",
        "X-Nylas-Signature": sign(body, LOCAL_WEBHOOK_SECRET),
    }
    assert requests.post(stack.webhook_url, data=body, headers=headers, timeout=10).status_code == 200
    headers["X-Nylas-Signature"] = sign(gzip.decompress(body), LOCAL_WEBHOOK_SECRET)
    assert requests.post(stack.webhook_url, data=body, headers=headers, timeout=10).status_code == 401


def test_the_local_stack_refuses_replays_with_the_templates_bound(stack):
    # Its notifications are fresh (`make mail`, the demo), so the bound stays on, as deployed: a body
    # dated like the sample events is a replay, the same message notified now is not.
    for notification, status in (
        (sample_message_created(notification_id="replayed-0001"), 401),
        (message_created(notification_id="fresh-0001"), 200),
    ):
        body = encode(notification)
        headers = {"Content-Type": "application/json", "X-Nylas-Signature": sign(body, LOCAL_WEBHOOK_SECRET)}
        assert requests.post(stack.webhook_url, data=body, headers=headers, timeout=10).status_code == status
    reasons = [r["reason"] for r in stack.logs.messages("request rejected")]
    assert reasons.count("notification_too_old") == 1


def test_sender_retries_only_what_nylas_retries(stack):
    # A fresh webhook container: its first unverifiable signature gets the fresh secret read (401);
    # within the refresh interval after one, the next would be a 503 that Nylas retries.
    stack.new_webhook_container()
    sender = stack.sender(retry_delays=(0, 0))
    assert sender.deliver(message_created(notification_id="sender-forged-0001"), forged=True) == 401
    assert [d.attempt for d in sender.deliveries] == [1]  # 401 is not retried


def test_readme_documents_the_commands():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for command in ("make test", "make demo", "make serve", "make invoke"):
        assert command in readme
