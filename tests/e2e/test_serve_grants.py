"""``make serve ARGS="--grants 5"``: five mailboxes in one stack, each changed by ``make grants --local``.

One real ``make serve`` process with five grants (each a mailbox of the Nylas emulator and a record of the
local grant registry), ``make mail --grant G`` and ``make grants ARGS="... --local URL"`` as processes of
their own, and the console's ``GET /state`` read as the page reads it. What is asserted is counted: the
replies each mailbox sent, the records the registry holds, the console's per-grant counts. Each test that
changes a grant's life or mode has a grant of its own (0003 paused, 0004 set to shadow and promoted, 0005
expired and deleted): the tests share one ``make serve`` per xdist worker and may run in any order.
"""

import re
import subprocess
import sys
import time

import pytest
import requests

from devstack import trigger
from tests.e2e.test_serve_trigger import ENVIRONMENT, ROOT, Serve, run_ops

GRANTS = {
    "grant-agent-0001": "support@replyonce.example",
    "grant-agent-0002": "support2@replyonce.example",
    "grant-agent-0003": "support3@replyonce.example",
    "grant-agent-0004": "support4@replyonce.example",
    "grant-agent-0005": "support5@replyonce.example",
}


def ops(*argv: str) -> str:
    """``make grants`` / ``make promote`` as a process of its own; its report."""
    return run_ops(*argv).stdout


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    running = Serve(tmp_path_factory.mktemp("serve") / "serve.log", "--grants", str(len(GRANTS)))
    yield running
    running.stop()


def console_url(serve: Serve) -> str:
    return re.search(r"console\s+(http://127\.0\.0\.1:\d+/)", serve.text()).group(1)


COUNTED = ("received", "replied", "handed_off", "skipped", "deferred")


def settled_counts(serve: Serve, grant_id: str, expected: dict[str, int]) -> dict[str, int]:
    """The grant's counts once they are ``expected`` (or after 30 s, what they are): the agent's own reply
    comes back as a notification the console counts as received until the replier skips it own_outbound."""
    deadline = time.monotonic() + 30
    while True:
        row = grant_row(serve, grant_id)
        counts = {name: row[name] for name in COUNTED}
        if counts == expected or time.monotonic() > deadline:
            return counts
        time.sleep(0.25)


def grant_row(serve: Serve, grant_id: str) -> dict:
    rows = requests.get(f"{console_url(serve)}state", timeout=10).json()["grants"]
    [row] = [r for r in rows if r["grant_id"] == grant_id]
    return row


def mail(serve: Serve, capsys, grant: str, sender: str, *more: str) -> tuple[str, str]:
    """``make mail --grant G``: what it printed and the thread it started."""
    capsys.readouterr()
    asked = ["--grant", grant, "--from", sender, "--subject", "Order", "--body", "Where is it?"]
    code = trigger.main(["mail", *asked, *more, "--url", serve.base_url])
    out = capsys.readouterr().out
    assert code == 0, out
    return out, re.search(r"on thread (thread-[0-9a-f]+)", out).group(1)


def replies_from(serve: Serve, thread: str) -> list[str]:
    """The address of each agent message on the thread (any of the three mailboxes)."""
    messages = trigger.ServeClient(serve.base_url).thread(thread)["data"]
    return [m["from"][0]["email"] for m in messages if m["from"][0]["email"] in GRANTS.values()]


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.25)


def test_each_grant_is_a_mailbox_and_a_record_of_the_registry_written_as_make_grants_writes(serve):
    text = serve.text()
    for grant_id, address in GRANTS.items():
        assert re.search(rf"{grant_id}\s+{re.escape(address)}\s+send\s+template", text), text
    listed = ops("grants", "list", "--local", serve.base_url)
    rows = [line for line in listed.splitlines() if line.startswith("grant-agent-")]
    assert [row.split()[0] for row in rows] == list(GRANTS)
    # The grants no other test changes still hold make serve's records (the others' hold who changed them).
    assert all("record by make serve (local stack)" in row for row in rows[:2]), listed
    # The first is the AgentGrantIds seed, as a deployed stack's; the others the registry's alone.
    assert ["AgentGrantIds" in row for row in rows] == [True, False, False, False, False], listed


def test_a_message_to_the_second_grant_is_answered_once_from_its_own_address(serve, capsys):
    out, thread = mail(serve, capsys, "grant-agent-0002", "bob@example.com")
    assert "replied after" in out, out
    assert replies_from(serve, thread) == ["support2@replyonce.example"]
    row = grant_row(serve, "grant-agent-0002")
    assert (row["mode"], row["state"]) == ("send", "enabled")
    # Its own reply came back as message.created and was skipped own_outbound: not counted as received.
    expected = {"received": 1, "replied": 1, "handed_off": 0, "skipped": 0, "deferred": 0}
    assert settled_counts(serve, "grant-agent-0002", expected) == expected


def test_a_grant_paused_by_make_grants_local_keeps_its_next_message_waiting_then_answers_it_on_resume(
    serve, capsys
):
    paused = ops("grants", "pause", "--grant", "grant-agent-0003", "--local", serve.base_url)
    assert "pause by" in paused, paused
    assert "takes effect within 1 s" in paused, paused
    assert grant_row(serve, "grant-agent-0003")["state"] == "paused"
    time.sleep(1.5)  # the replier's cache of the registry, as the command said
    out, thread = mail(serve, capsys, "grant-agent-0003", "carol@example.com")
    # Said as soon as the replier deferred it, not after make mail's whole wait.
    assert re.search(
        r"waiting after [\d.]+ s: grant grant-agent-0003 is paused: it waits until "
        rf'`make grants ARGS="resume --grant grant-agent-0003 --local {serve.base_url}"` '
        r"\(looked at again every 30 s\)",
        out,
    ), out
    assert replies_from(serve, thread) == []
    row = grant_row(serve, "grant-agent-0003")
    assert (row["received"], row["replied"], row["deferred"]) == (1, 0, 1)
    assert row["deferred_reasons"] == "grant_paused x1"
    # The other grants answer meanwhile: one grant's pause is its own.
    _, other = mail(serve, capsys, "grant-agent-0001", "dan@example.com")
    assert replies_from(serve, other) == ["support@replyonce.example"]

    resumed = ops("grants", "resume", "--grant", "grant-agent-0003", "--local", serve.base_url)
    assert "resume by" in resumed, resumed
    assert "waiting records come back within 30 s" in resumed, resumed
    wait_until(
        lambda: replies_from(serve, thread), 90, f"never answered after resume:\n{serve.text()[-3000:]}"
    )
    assert replies_from(serve, thread) == ["support3@replyonce.example"]
    expected = {"received": 1, "replied": 1, "handed_off": 0, "skipped": 0, "deferred": 0}
    assert settled_counts(serve, "grant-agent-0003", expected) == expected
    assert grant_row(serve, "grant-agent-0003")["state"] == "enabled"


def test_make_grants_set_local_changes_one_grants_mode_and_the_console_shows_it(serve, capsys):
    changed = ops(
        "grants", "set", "--grant", "grant-agent-0004", "--mode", "shadow", "--local", serve.base_url
    )
    assert "reply_mode=shadow" in changed, changed
    assert grant_row(serve, "grant-agent-0004")["mode"] == "shadow"
    time.sleep(1.5)
    out, thread = mail(serve, capsys, "grant-agent-0004", "erin@example.com")
    assert "recorded in shadow mode after" in out, out
    assert replies_from(serve, thread) == []  # shadow: nothing sent or drafted
    assert grant_row(serve, "grant-agent-0001")["mode"] == "send"  # the others keep theirs
    shown = ops("grants", "show", "--grant", "grant-agent-0004", "--local", serve.base_url)
    assert re.search(r"reply_mode\s+shadow\s+record", shown), shown
    assert re.search(r"set\s+by arn:aws:sts::\d+:user/\S+", shown), shown
    # make shadow-report --local covers the registry's grants too, not only the AgentGrantIds seed.
    report = ops("shadow-report", "--local", serve.base_url, "--since", str(int(time.time()) - 3600))
    assert "would answer  1 message(s) in 1 reply(ies)" in report, report
    # Promoted on its own shadow evidence: the one message it would have answered.
    promoted = ops("promote", "--grant", "grant-agent-0004", "--local", serve.base_url)
    assert "grant grant-agent-0004: shadow -> review" in promoted, promoted
    assert re.search(r"would answer\s+1 message\(s\)", promoted), promoted
    assert grant_row(serve, "grant-agent-0004")["mode"] == "review"


def test_a_grants_file_serves_each_grant_in_its_own_mode(tmp_path, capsys):
    grants_file = tmp_path / "grants.txt"
    grants_file.write_text(
        "# two brands\n"
        "id=grant-sales   address=sales@acme.example   mode=send\n"
        "id=grant-billing address=billing@acme.example mode=review   # drafts first\n"
    )
    serve = Serve(tmp_path / "serve.log", "--grants-file", str(grants_file), "--no-console")
    try:
        capsys.readouterr()
        # make mail without --grant: the file's first grant.
        code = trigger.main(["mail", "--from", "fay@example.com", "--body", "Hi", "--url", serve.base_url])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "replied after" in out, out
        sales = re.search(r"on thread (thread-[0-9a-f]+)", out).group(1)
        messages = trigger.ServeClient(serve.base_url).thread(sales)["data"]
        assert [m["from"][0]["email"] for m in messages][1:] == ["sales@acme.example"]
        code = trigger.main(
            [
                "mail",
                "--grant",
                "grant-billing",
                "--from",
                "gus@example.com",
                "--body",
                "Hi",
                "--url",
                serve.base_url,
            ]
        )
        out = capsys.readouterr().out
        assert code == 0, out
        assert "drafted for review" in out, out
        listed = ops("grants", "list", "--local", serve.base_url)
        assert re.search(r"grant-billing\s+active\s+review", listed), listed
    finally:
        serve.stop()


def test_a_grants_file_mistake_stops_make_serve_in_one_line(tmp_path):
    grants_file = tmp_path / "grants.txt"
    grants_file.write_text("id=grant-sales address=sales@acme.example mode=draft\n")
    run = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "devstack.serve", "--port", "0", "--grants-file", str(grants_file)],
        cwd=ROOT,
        env=ENVIRONMENT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"error: {grants_file}, line 1: mode must be one of send, review, shadow, not 'draft'"
    ]


def test_nylas_expiring_then_deleting_a_grant_shows_in_its_console_row(serve, capsys):
    def state_becomes(state: str) -> None:
        wait_until(
            lambda: grant_row(serve, "grant-agent-0005")["state"] == state,
            30,
            f"never {state}:\n{serve.text()[-3000:]}",
        )

    for action, state in (("expire", "expired"), ("delete", "deleted")):
        capsys.readouterr()
        code = trigger.main(["grant", action, "--grant", "grant-agent-0005", "--url", serve.base_url])
        out = capsys.readouterr().out
        assert code == 0, out
        state_becomes(state)
    # The other grants are untouched by this one's life.
    assert [grant_row(serve, g)["state"] for g in ("grant-agent-0001", "grant-agent-0002")] == [
        "enabled",
        "enabled",
    ]


def test_grants_against_the_real_nylas_api_are_refused_in_one_line():
    run = subprocess.run(
        [sys.executable, "-m", "devstack.serve", "--port", "0", "--grants", "2"],
        cwd=ROOT,
        env={**ENVIRONMENT, "NYLAS_API_URI": "https://api.us.nylas.com"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("error: --grants and --grants-file make mailboxes in the Nylas emulator"), line
