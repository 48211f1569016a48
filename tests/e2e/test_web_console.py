"""``make serve``'s web console in a real headless Chromium: mail goes in, the agent's reply appears.

One real ``make serve`` process (``python -m devstack.serve``) on ephemeral
loopback ports; the browser is the OS's Chromium driven through its
chromedriver by selenium (``apt-get install chromium chromium-driver``;
nothing is downloaded). Without Chromium the test is skipped with that
command, except in CI (``CI=true``), where it fails: CI installs it
(``.ci/run``).

``CONSOLE_SCREENSHOT=docs/console.png`` keeps the browser's screenshot of the
page (the README's figure): ``CONSOLE_SCREENSHOT=docs/console.png make pytest
ARGS="tests/e2e/test_web_console.py -q"``.
"""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from devstack import trigger
from devstack.console import body_text
from devstack.events import AGENT_EMAIL
from tests.e2e.test_serve_trigger import ENVIRONMENT, ROOT, Serve

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Flags that work on a machine without a display or a sandbox, and reach nothing but loopback.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)
HOSTILE_SUBJECT = "<script>window.pwned = 1</script> Order 12 <b>late</b>"


def chromium_or_skip() -> None:
    """Skip with how to get Chromium when it is missing; in CI a missing Chromium is a failure."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    reason = f"{', '.join(missing)} missing: apt-get install chromium chromium-driver"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (.ci/run installs them; CI must run the browser test)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    running = Serve(tmp_path_factory.mktemp("serve") / "serve.log", "--console-port", "0")
    yield running
    running.stop()


def page_text(browser, selector: str) -> str | None:
    """The text the page shows in ``selector`` (its first match), read in one script; ``None``: absent."""
    return browser.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;", selector
    )


def console_url(serve: Serve) -> str:
    return re.search(r"console\s+(http://127\.0\.0\.1:\d+/)", serve.text()).group(1)


@pytest.fixture
def browser(tmp_path):
    chromium_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_mail_sent_through_the_stack_appears_in_the_open_page_with_the_agents_full_reply(
    serve, browser, capsys
):
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30, poll_frequency=0.2)
    browser.get(console_url(serve))
    wait.until(lambda b: "agent template" in (page_text(b, "#about") or ""))
    # A mark on this very page: still there after the reply appears, so the page was not reloaded.
    browser.execute_script("window.sameConsolePage = true;")

    code = trigger.main(
        [
            "mail",
            "--from",
            "dana@example.com",
            "--subject",
            HOSTILE_SUBJECT,
            "--body",
            "Where is order 12?",
            "--duplicates",
            "2",
            "--url",
            serve.base_url,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    message_id, thread_id = re.search(r"message (\S+) from dana@example.com on thread (\S+):", out).groups()
    [reply] = [
        m
        for m in trigger.ServeClient(serve.base_url).thread(thread_id)["data"]
        if m["from"][0]["email"] == AGENT_EMAIL
    ]

    # Read in one script each time: the page re-renders every second, so elements found in one call
    # may be replaced by the next.
    shown = f'[data-thread="{thread_id}"] [data-message="{reply["id"]}"] .body'
    wait.until(lambda b: page_text(b, shown) is not None)
    # The agent's whole reply, as text, every line of it.
    assert page_text(browser, shown) == body_text(reply["body"]).strip()
    # The customer's subject is shown as the text it is; none of it ran or became markup.
    assert page_text(browser, f'[data-message="{message_id}"] .subject') == HOSTILE_SUBJECT
    assert (
        browser.execute_script("return document.querySelectorAll('#threads script, #threads b').length") == 0
    )
    assert browser.execute_script("return window.pwned === undefined && window.sameConsolePage === true;")

    # The notification's way: two deliveries answered 200, the duplicate absorbed, the reply sent.
    def way(b):
        cells = b.execute_script(
            """
            const row = [...document.querySelectorAll("tr[data-notification]")]
              .find((r) => r.cells[2].innerText === arguments[0]);
            return row ? [...row.cells].map((c) => c.innerText) : null;
            """,
            message_id,
        )
        return cells if cells and cells[9].endswith(" sent") else None

    cells = wait.until(way)
    assert (cells[1], cells[3], cells[8], cells[9]) == (
        "message.created",
        "200, 200",
        "replied",
        f"reply {reply['id']} sent",
    )
    wait.until(lambda b: "1. at most one email per inbound message: holds" in page_text(b, "#invariants"))
    assert page_text(browser, "#shadow") == "no shadow records"

    # The grant's row: its address, mode and state, and its one message received and replied (the
    # duplicate is the same notification; the agent's own reply is not received mail).
    def grant_row(b):
        cells = b.execute_script(
            """
            const row = document.querySelector('tr[data-grant="grant-agent-0001"]');
            return row ? [...row.cells].map((c) => c.innerText) : null;
            """
        )
        return cells if cells and cells[4:6] == ["1", "1"] else None

    assert wait.until(grant_row) == [
        "grant-agent-0001",
        AGENT_EMAIL,
        "send",
        "enabled",
        "1",
        "1",
        "0",
        "0",
        "0",
    ]

    screenshot = os.environ.get("CONSOLE_SCREENSHOT")
    if screenshot:
        browser.save_screenshot(screenshot)


def test_the_console_is_read_only_and_answers_only_its_own_loopback_names(serve):
    url = console_url(serve)
    assert requests.get(f"{url}state", timeout=10).status_code == 200
    assert requests.post(f"{url}state", json={}, timeout=10).status_code == 405
    # A page elsewhere whose name resolves to 127.0.0.1 (DNS rebinding) reads nothing.
    assert requests.get(f"{url}state", headers={"Host": "attacker.example"}, timeout=10).status_code == 403
    assert "script-src 'self'" in requests.get(url, timeout=10).headers["Content-Security-Policy"]


def test_no_console_serves_none(tmp_path):
    running = Serve(tmp_path / "serve.log", "--no-console")
    try:
        assert "console " not in running.text()
    finally:
        running.stop()


def test_a_console_port_in_use_is_one_clear_line_before_anything_starts():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "devstack.serve", "--port", "0", "--console-port", str(port)],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: the console's port {port} is already in use: "
        f'pick another with ARGS="--console-port {port + 1}", or ARGS=--no-console'
    ]


def test_in_shadow_mode_the_page_shows_the_shadow_report_of_what_the_agent_would_have_sent(
    tmp_path, browser, capsys
):
    from selenium.webdriver.support.ui import WebDriverWait

    running = Serve(tmp_path / "serve.log", "--console-port", "0", environment={"REPLY_MODE": "shadow"})
    try:
        wait = WebDriverWait(browser, 30, poll_frequency=0.2)
        browser.get(console_url(running))
        wait.until(lambda b: "reply mode shadow" in (page_text(b, "#about") or ""))
        assert page_text(browser, "#shadow") == "no shadow records"
        code = trigger.main(
            [
                "mail",
                "--from",
                "erin@example.com",
                "--subject",
                "Invoice 7",
                "--body",
                "Could you resend invoice 7?",
                "--url",
                running.base_url,
            ]
        )
        out = capsys.readouterr().out
        assert code == 0, out
        message_id = re.search(r"message (\S+) from erin@example.com", out).group(1)
        # The report names the message the agent would have answered; nothing reached the mailbox.
        wait.until(lambda b: message_id in (page_text(b, "#shadow") or ""))
        assert "no shadow records" not in page_text(browser, "#shadow")
        thread_id = re.search(r"on thread (\S+):", out).group(1)
        thread = trigger.ServeClient(running.base_url).thread(thread_id)["data"]
        assert [m["from"][0]["email"] for m in thread] == ["erin@example.com"]
    finally:
        running.stop()


RAISING_AGENT = """def reply(conversation):
    orders = {}  # the order service is down
    return orders["9"]
"""


def test_a_dead_letter_a_forged_request_and_the_agents_traceback_are_shown_as_what_they_are(
    tmp_path, browser, capsys
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "raising_agent.py").write_text(RAISING_AGENT)
    # make serve's retries (seconds apart, devstack.stack.StackSettings.replier_tuning): the eight receives
    # before SQS dead-letters the record take seconds, not the template's minutes.
    running = Serve(
        tmp_path / "serve.log",
        "--console-port",
        "0",
        "--agent",
        "raising_agent:reply",
        importable=agents,
    )
    try:
        capsys.readouterr()
        assert trigger.main(["mail", "--from", "erin@example.com", "--body", "Order 9?", "--wait", "0",
                             "--url", running.base_url]) == 0  # fmt: skip
        message_id, thread_id = re.search(
            r"message (\S+) from erin@example.com on thread (\S+):", capsys.readouterr().out
        ).groups()
        assert trigger.main(["forged", "--wait", "0", "--url", running.base_url]) == 0
        forged_id = re.search(r"notification (\S+) message.created \(forged", capsys.readouterr().out).group(
            1
        )
        # A person of the team answers the customer from the mailbox's own address, in their mail client.
        assert trigger.main(["mail", "--from", AGENT_EMAIL, "--thread", thread_id, "--body", "On it. — Sam",
                             "--wait", "0", "--url", running.base_url]) == 0  # fmt: skip
        person_id = re.search(r"message (\S+) from", capsys.readouterr().out).group(1)

        wait = WebDriverWait(browser, 120, poll_frequency=0.5)
        browser.get(console_url(running))

        def row(b, key: str, column: int) -> list[str] | None:
            return b.execute_script(
                """
                const row = [...document.querySelectorAll("tr[data-notification]")]
                  .find((r) => r.cells[arguments[1]].innerText === arguments[0]);
                return row ? [...row.cells].map((c) => c.innerText) : null;
                """,
                key,
                column,
            )

        # The dead letter: labelled so, with the command that brings it back to this very stack.
        cells = wait.until(lambda b: (c := row(b, message_id, 2)) and c[9].startswith("dead-lettered") and c)
        assert cells[9] == (
            "dead-lettered: no reply until it is redriven; fix the cause, then "
            f'make redrive ARGS="--local {running.base_url}"'
        )
        assert cells[7] == "agent_failed, " * 7 + "agent_failed"  # eight receives, each deferred
        assert "raising_agent.py:3 in reply" in cells[8], cells[8]
        # A documented outcome, not a violation: invariant 5 holds and nothing is shown violated.
        wait.until(lambda b: "5. " in (page_text(b, "#invariants") or ""))
        invariants = page_text(browser, "#invariants")
        assert "violated" not in invariants, invariants
        assert re.search(r"^5\. .*: holds$", invariants, re.MULTILINE), invariants
        assert "1 dead-lettered" in page_text(browser, "#status")

        # The forged request: answered 401, never queued; nothing to redrive.
        forged = row(browser, forged_id, 0)
        assert forged[3] == "401 (forged signature)"
        assert forged[9] == "forged signature: answered 401, never queued (nothing to redrive)"

        # Its way, opened: every step with its time, and the traceback with the person's file and line.
        browser.execute_script(
            "[...document.querySelectorAll('tr[data-notification]')]"
            ".find((r) => r.cells[2].innerText === arguments[0]).querySelector('summary').click();",
            message_id,
        )
        opened = f'tr[data-notification="{row(browser, message_id, 2)[0]}"] details.way'
        wait.until(lambda b: b.execute_script(f"return document.querySelector('{opened}').open;"))
        way = page_text(browser, opened)
        steps = re.findall(r"^(\d\d:\d\d:\d\d\.\d{3}) (.*)$", way, re.MULTILINE)
        words = [what for _, what in steps]
        assert words[0] == "delivered: the webhook answered 200"
        assert words[1] == "queued by the webhook"
        assert len([w for w in words if w.startswith("agent raised KeyError: '9'")]) == 8
        assert len([w for w in words if w.startswith("deferred: agent_failed")]) == 8
        assert words[-1].startswith("dead-lettered by SQS")
        assert [at for at, _ in steps] == sorted(at for at, _ in steps)
        assert "the agent raised KeyError: '9' at raising_agent.py:3 in reply" in way
        assert 'return orders["9"]' in way  # the line that raised
        assert "from erin@example.com: Hello\nOrder 9?" in way  # the message it was about
        assert f'File "{agents / "raising_agent.py"}", line 3, in reply' in way  # the whole traceback
        # Still open a few renders later: the page keeps what a person opened.
        browser.find_element(By.TAG_NAME, "body")
        wait.until(lambda b: "1 dead-lettered" in (page_text(b, "#status") or ""))
        assert browser.execute_script(f"return document.querySelector('{opened}').open;")

        # Roles: the customer, and the person of the team (the mailbox's address, not ReplyOnce's reply).
        wait.until(lambda b: page_text(b, f'[data-message="{person_id}"]') is not None)
        assert browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.className);",
            f'[data-thread="{thread_id}"] .message',
        ) == ["message customer", "message person"]
        assert page_text(browser, f'[data-message="{person_id}"] .head').startswith("person " + AGENT_EMAIL)
    finally:
        running.stop()
