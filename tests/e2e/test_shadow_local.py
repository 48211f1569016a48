"""``REPLY_MODE=shadow make serve``, ``make mail``, then ``make shadow-report ARGS=--local`` and ``make replay
ARGS=--local``: the loop a team tries shadow mode in before deploying it, run as users run it.

One real ``make serve`` process (its embedded AWS and Nylas emulator), ``make mail`` and the two
operator commands as processes of their own: they find the stack through ``GET /_local/aws``.
"""

import json
import re
import time

from devstack import trigger
from tests.e2e.test_serve_trigger import Serve, agent_messages, run_ops


def ops(*argv: str) -> tuple[str, str]:
    """The command's report (stdout) and what it said about the run (stderr)."""
    run = run_ops(*argv)
    return run.stdout, run.stderr


def test_shadow_mode_in_make_serve_records_what_make_shadow_report_and_make_replay_then_show(
    tmp_path, capsys
):
    serve = Serve(tmp_path / "serve.log", environment={"REPLY_MODE": "shadow"})
    try:
        assert "reply mode      shadow: nothing is sent or drafted" in serve.text()
        capsys.readouterr()
        code = trigger.main(
            [
                "mail",
                "--from",
                "alice@example.com",
                "--subject",
                "Order",
                "--body",
                "Where is it?",
                "--url",
                serve.base_url,
            ]
        )
        out = capsys.readouterr().out
        assert code == 0, out
        thread = re.search(r"on thread (thread-[0-9a-f]+)", out).group(1)
        assert "recorded in shadow mode after" in out, out
        assert agent_messages(serve, thread) == []  # nothing sent, nothing drafted
        since = str(int(time.time()) - 3600)
        report, _ = ops(
            "shadow-report", "--local", serve.base_url, "--since", since, "--json", str(tmp_path / "r.json")
        )
        assert "would answer  1 message(s) in 1 reply(ies); a person answered 0 of them too" in report
        [item] = json.loads((tmp_path / "r.json").read_text())["items"]
        assert (item["thread_id"], item["outcome"]) == (thread, "reply")
        replay = tmp_path / "replay.json"
        _, replayed = ops(
            "replay",
            "--local",
            serve.base_url,
            "--agent",
            "template",
            "--since",
            since,
            "--json",
            str(replay),
        )
        assert "thread(s) with template; nothing was written to Nylas" in replayed
        items = json.loads(replay.read_text())["items"]
        assert [i["outcome"] for i in items if i["thread_id"] == thread] == ["reply"]
        assert agent_messages(serve, thread) == []
    finally:
        serve.stop()
