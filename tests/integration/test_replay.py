"""``ops replay``: a grant's recent threads run through an agent in shadow mode, read-only, and reported.

Real parts: the Nylas emulator (the mail, listed and read with ``GET``; it counts every request),
moto (the stack the command finds, the secret with the API key), the replier's own shell and core.
The command is run as ``make replay`` runs it; two agents over the same mail give two reports a
``diff`` tells apart.
"""

import io
import json
import sys
import time
from pathlib import Path

import pytest

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from devstack.template import LOCAL_API_KEY
from functions.replier import app
from ops import replay
from ops.cli import Runtime, main
from ops.nylas_admin import NylasAdmin
from replyonce.adapters.agents import template_agent
from replyonce.adapters.nylas import NylasMailbox
from replyonce.agent import Conversation, Reply
from replyonce.keys import REPLAY_KEY_PREFIX
from replyonce.policy import Policy
from tests.conftest import register_mailbox_stack

STACK = "replyonce-replay-test"
WRITES = ("POST", "PUT", "PATCH", "DELETE")


@pytest.fixture
def stack(replier_env, nylas):
    register_mailbox_stack(STACK, replier_env, nylas.url)
    return replier_env


@pytest.fixture
def last_week(nylas):
    """Three threads: a question a colleague answered later, one to decline, a machine's receipt."""
    question = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Order 1042", body="<p>Where is it?</p>"
    )
    person = nylas.person_replies(AGENT_GRANT_ID, question["id"], "<p>It ships today. — Sam</p>")
    declined = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email="carol@example.com", subject="Please decline this", body="<p>Hi</p>"
    )
    machine = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email="no-reply@shop.example", subject="Your receipt", body="<p>Paid</p>"
    )
    return {"question": question, "person": person, "declined": declined, "machine": machine}


def run_replay(tmp_path: Path, agent: str, *argv: str) -> tuple[str, str, dict]:
    """The report (stdout), what the run said about itself (stderr), and the ``--json`` file."""
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={}, progress=lambda: None)
    path = tmp_path / f"{agent.replace(':', '_')}.json"
    since = str(int(time.time()) - 3600)
    argv = ("--stack-name", STACK, "--region", "us-east-1", "--since", since, "--json", str(path), *argv)
    code = main(["replay", "--agent", agent, *argv], runtime)
    assert code == 0, err.getvalue()
    return out.getvalue(), err.getvalue(), json.loads(path.read_text())


def test_replay_reads_only_and_reports_what_the_agent_would_have_done(stack, nylas, last_week, tmp_path):
    writes_before = [r for r in nylas.requests if r[0] in WRITES]
    text, said, report = run_replay(tmp_path, "tests.integration.test_shadow:by_subject")
    assert [r for r in nylas.requests if r[0] in WRITES] == writes_before
    assert report["threads"] == 3
    assert report["stopped"] == ""
    [period] = report["periods"]
    # The colleague's answer came after the question: the agent, as of its arrival, would have answered.
    assert (period["replies"], period["answered"], period["answered_by_person_too"]) == (1, 1, 1)
    assert period["declined"] == 1
    assert period["skipped"] == {"automated_sender": 1}
    [reply] = [item for item in report["items"] if item["outcome"] == "reply"]
    assert reply["trigger_id"] == last_week["question"]["id"]
    assert reply["person_message_id"] == last_week["person"]["id"]
    assert reply["person_text"] == "It ships today. — Sam"
    assert "nothing was written to Nylas" in said
    # The report alone on stdout: what the run said is not in it, so two runs' reports `diff` cleanly.
    assert text.startswith("shadow report  ")
    assert "nothing was written" not in text


def test_two_agents_over_the_same_mail_give_two_reports_that_diff(stack, nylas, last_week, tmp_path):
    one, _, first = run_replay(tmp_path, "tests.integration.test_shadow:by_subject")
    other, _, second = run_replay(tmp_path, "template")
    # The template agent answers what the other declines; everything else is the same.
    assert (first["periods"][0]["declined"], second["periods"][0]["declined"]) == (1, 0)
    assert (first["periods"][0]["answered"], second["periods"][0]["answered"]) == (1, 2)
    assert first["periods"][0]["skipped"] == second["periods"][0]["skipped"]
    # What an operator's diff of the two texts shows: the decline became a reply.
    assert "declined 1  handed off 0  rejected 0" in one
    assert "declined 0  handed off 0  rejected 0" in other
    assert "would answer  2 message(s) in 2 reply(ies)" in other
    assert (
        one.count("skipped       automated_sender 1") == other.count("skipped       automated_sender 1") == 1
    )


def test_replay_stops_at_its_thread_limit_and_says_so(stack, nylas, last_week, tmp_path):
    _, said, report = run_replay(tmp_path, "template", "--limit", "2")
    assert report["threads"] == 2
    assert report["stopped"] == "limit"
    assert "stopped at --limit 2" in said


def test_replay_stops_when_its_time_is_up_and_reports_the_threads_replayed(nylas, last_week):
    mailbox = NylasMailbox(nylas.url, lambda: LOCAL_API_KEY, timeout_seconds=10, send_timeout_seconds=10)
    lister = NylasAdmin(nylas.url, LOCAL_API_KEY)
    ticks = iter(range(1000))  # each look at the clock is one second later: a deterministic clock
    result = replay.replay(
        mailbox,
        lister,
        AGENT_GRANT_ID,
        template_agent,
        Policy(agent_grant_ids=(AGENT_GRANT_ID,)),
        since=0,
        until=int(time.time()) + 1,
        limit=10,
        max_seconds=2,
        monotonic=lambda: float(next(ticks)),
    )
    assert result.stopped == "time"
    assert len(result.threads) == 1


def test_the_progress_bar_advances_once_per_thread_replayed(nylas, last_week):
    mailbox = NylasMailbox(nylas.url, lambda: LOCAL_API_KEY, timeout_seconds=10, send_timeout_seconds=10)
    advanced: list[tuple[int, int]] = []
    result = replay.replay(
        mailbox,
        NylasAdmin(nylas.url, LOCAL_API_KEY),
        AGENT_GRANT_ID,
        template_agent,
        Policy(agent_grant_ids=(AGENT_GRANT_ID,)),
        since=0,
        until=int(time.time()) + 1,
        limit=10,
        max_seconds=600,
        advance=lambda done, total: advanced.append((done, total)),
    )
    assert advanced == [(1, 3), (2, 3), (3, 3)]
    assert (result.stopped, result.messages_replayed) == ("", 3)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ("--agent", "no_such_module:reply"),
            "--agent: REPLY_AGENT=no_such_module:reply: module 'no_such_module'",
        ),
        (("--agent", "template", "--limit", "0"), "--limit and --period-hours must be at least 1"),
        (("--agent", "template", "--since", "last tuesday"), "not a time: 'last tuesday'"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2_before_anything_is_read(stack, nylas, argv, said):
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={}, progress=lambda: None)
    since = ("--since", str(int(time.time()) - 3600)) if "--since" not in argv else ()
    requests_before = len(nylas.requests)
    code = main(["replay", "--stack-name", STACK, "--region", "us-east-1", *since, *argv], runtime)
    assert code == 2
    assert said in err.getvalue()
    assert err.getvalue().count("\n") == 1
    assert len(nylas.requests) == requests_before


def test_the_replay_decides_with_the_stacks_parameters_read_as_the_replier_reads_them():
    policy = replay.stack_policy(
        {
            "AgentGrantIds": "g1,g2",
            "PersonHoldSeconds": "0",
            "ReplyBudgetPerHour": "5",
            "ReplyMode": "send",
        }
    )
    assert policy.agent_grant_ids == ("g1", "g2")
    assert (policy.person_hold_seconds, policy.reply_budget_per_hour) == (0, 5)
    # A parameter the stack does not set takes the template's default, as a deploy does.
    assert policy.max_recipients == Policy(agent_grant_ids=("g1",)).max_recipients


# ---- the agent knows it is a replay (issue 40) -----------------------------------------------------------


def test_a_replay_tells_the_agent_so_with_a_key_the_live_replier_never_gives_the_burst(
    replier, pipeline, nylas, monkeypatch
):
    question = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Order 1042", body="<p>Where is it?</p>"
    )
    replayed: list[Conversation] = []

    def watching_the_replay(conversation: Conversation) -> Reply:
        replayed.append(conversation)
        return template_agent(conversation)

    replay.replay(
        NylasMailbox(nylas.url, lambda: LOCAL_API_KEY, timeout_seconds=10, send_timeout_seconds=10),
        NylasAdmin(nylas.url, LOCAL_API_KEY),
        AGENT_GRANT_ID,
        watching_the_replay,
        Policy(agent_grant_ids=(AGENT_GRANT_ID,)),  # a stack in send mode: the replay is still a replay
        since=0,
        until=int(time.time()) + 1,
        limit=10,
        max_seconds=600,
    )
    # The same burst, live, through the real handler in send mode.
    live: list[Conversation] = []

    def watching_live(conversation: Conversation) -> Reply:
        live.append(conversation)
        return template_agent(conversation)

    monkeypatch.setattr(sys.modules[__name__], "watching_live", watching_live, raising=False)
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:watching_live")
    app.consumer.cache_clear()
    pipeline.deliver(envelope(question))
    pipeline.drain()
    [in_replay], [for_real] = replayed, live
    assert [m.id for m in in_replay.to_answer] == [m.id for m in for_real.to_answer] == [question["id"]]
    assert (in_replay.mode, in_replay.acts_for_real) == ("replay", False)
    assert (for_real.mode, for_real.acts_for_real) == ("send", True)
    # A ticket the replay's agent keyed on its key can never stand in for (or block) the live one.
    assert in_replay.key != for_real.key
    assert in_replay.key.startswith(REPLAY_KEY_PREFIX)
    assert len(nylas.sends) == 1  # only the live run sent


def test_a_replay_policy_cannot_send():
    with pytest.raises(ValueError, match="shadow mode"):
        Policy(agent_grant_ids=(AGENT_GRANT_ID,), replay=True)
