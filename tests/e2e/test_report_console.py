"""``make report-console``: two replays of the same mail, side by side in a real headless Chromium.

The reports are the ones ``make replay`` writes (``ops replay --json``, over the Nylas emulator, as
``tests/integration/test_replay.py`` runs it); the console is a real process (``python -m
devstack.report_console``) on a loopback port, read by the OS's Chromium.
"""

import re
import subprocess
import sys

import pytest
import requests

from tests.e2e.test_serve_trigger import ENVIRONMENT, ROOT
from tests.e2e.test_web_console import browser, page_text  # noqa: F401 - fixture
from tests.integration.test_replay import last_week, run_replay, stack  # noqa: F401 - fixtures


def start_console(*argv: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "devstack.report_console", *argv, "--port", "0"],
        cwd=ROOT,
        env=ENVIRONMENT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    line = process.stdout.readline()
    found = re.search(r"report console (http://127\.0\.0\.1:\d+/)", line)
    if found is None:
        process.kill()
        pytest.fail(f"the report console did not start: {line!r}{process.stdout.read()}")
    return process, found.group(1)


def test_two_agents_replayed_over_the_same_mail_are_shown_side_by_side(
    stack,  # noqa: F811
    nylas,
    last_week,  # noqa: F811
    tmp_path,
    browser,  # noqa: F811
):
    from selenium.webdriver.support.ui import WebDriverWait

    run_replay(tmp_path, "tests.integration.test_shadow:by_subject")
    run_replay(tmp_path, "template")
    first, second = tmp_path / "tests.integration.test_shadow_by_subject.json", tmp_path / "template.json"
    process, url = start_console(str(first), str(second))
    try:
        assert requests.post(f"{url}state", json={}, timeout=10).status_code == 405  # read-only
        browser.get(url)
        wait = WebDriverWait(browser, 30, poll_frequency=0.2)
        declined = f'tr[data-message="{last_week["declined"]["id"]}"]'
        wait.until(lambda b: page_text(b, declined) is not None)
        # The message one agent declines and the other answers: marked, with both decisions.
        cells = browser.execute_script(
            "return [...document.querySelector(arguments[0]).cells].map((c) => c.innerText);", declined
        )
        # The customer's words first, then each report's decision, then what changed between them.
        assert cells[2] == "Hi"
        assert cells[3].startswith("declined")
        assert cells[4].startswith("reply")
        assert "outcome" in cells[5]
        assert browser.execute_script("return document.querySelector(arguments[0]).className;", declined) == (
            "differs"
        )
        # The question both would have answered, beside the customer's words and the colleague's answer;
        # its two replies' texts differ (one agent's words are not the other's): marked as changed.
        question = f'tr[data-message="{last_week["question"]["id"]}"]'
        assert "Where is it?" in page_text(browser, question)
        assert "It ships today. — Sam" in page_text(browser, question)
        assert "1 decided differently" in page_text(browser, "#about")
        # The score: the template agent would have answered the message nobody answered, by_subject not.
        left_alone = browser.execute_script(
            "return [...document.querySelectorAll('#scores tr')].map((r) => r.cells[2].innerText);"
        )
        assert [text.split()[:2] for text in left_alone] == [["0.0%", "0/1"], ["100.0%", "1/1"]]
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("{not json", "not a JSON report"),
        ('{"threads": 3}', "not a shadow report or a replay"),
    ],
)
def test_a_report_it_cannot_show_is_one_line_and_exit_2(tmp_path, content, says):
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "devstack.report_console", str(path), "--port", "0"],
        cwd=ROOT,
        env=ENVIRONMENT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}: {says}")
