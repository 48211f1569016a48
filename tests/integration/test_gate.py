"""The gate over real replays (issue 43): two agents replayed on the emulator's threads give two scores,
and ``replay --baseline`` (or ``gate`` on the saved reports) exits 0 or 1 as the thresholds say.

Real parts: the Nylas emulator (the mail), moto (the stack the command finds, the API key's secret),
the replier's shell and core in the replay, the command as ``make replay`` runs it.
"""

import io
import json
import time
from pathlib import Path

import pytest

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL
from ops.cli import Runtime, main
from replyonce.agent import Conversation, NoReply, Reply
from tests.conftest import register_mailbox_stack

STACK = "replyonce-gate-test"


def answers_orders(conversation: Conversation) -> Reply | NoReply:
    """Answers what is about an order, declines the rest."""
    if "order" in (conversation.target.subject or "").lower():
        return Reply(text="Thanks for writing: your order ships today.")
    return NoReply("not about an order")


def declines_everything(conversation: Conversation) -> NoReply:
    return NoReply("a broken version: it answers nothing")


@pytest.fixture
def stack(replier_env, nylas):
    register_mailbox_stack(STACK, replier_env, nylas.url)
    return replier_env


@pytest.fixture
def week(nylas):
    """Two order questions a colleague answered, two messages nobody answered, a machine's receipt."""
    for subject in ("Order 1042", "Order 1043"):
        asked = nylas.deliver_inbound(
            AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject=subject, body="<p>Where is it?</p>"
        )
        nylas.person_replies(AGENT_GRANT_ID, asked["id"], "<p>Your order ships today. — Sam</p>")
    for sender, subject in (("carol@example.com", "Thanks!"), ("dave@example.com", "Hello there")):
        nylas.deliver_inbound(AGENT_GRANT_ID, from_email=sender, subject=subject, body="<p>Hi</p>")
    nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email="no-reply@shop.example", subject="Your receipt", body="<p>Paid</p>"
    )


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(out=out, err=err, interactive=lambda: False, environ={}, progress=lambda: None)
    code = main(argv, runtime)
    return code, out.getvalue(), err.getvalue()


def replay(tmp_path: Path, agent: str, *extra: str) -> tuple[int, str, dict]:
    path = tmp_path / f"{agent.rpartition(':')[2]}.json"
    since = str(int(time.time()) - 3600)
    argv = ["replay", "--stack-name", STACK, "--region", "us-east-1", "--agent", agent, "--since", since]
    code, out, err = run([*argv, "--json", str(path), *extra])
    # stderr holds only what the run did (stdout is the report alone, for diff): no error.
    assert err.splitlines() == [
        f"replayed 5 message(s) of 5 thread(s) with {agent}; nothing was written to Nylas"
    ], err
    return code, out, json.loads(path.read_text())


def rates(report: dict) -> dict[str, tuple[int, int]]:
    return {r["name"]: (r["count"], r["total"]) for r in report["score"]["rates"]}


def test_two_agents_replayed_give_two_scores_and_the_gate_turns_their_difference_into_an_exit_code(
    stack, nylas, week, tmp_path
):
    code, text, baseline = replay(tmp_path, "template")
    assert code == 0
    # The template agent answers the four messages it is asked about; the receipt is a rule's skip.
    assert baseline["score"]["table"]["answer"] == {"person_answered": 2, "nobody_answered": 2}
    assert baseline["score"]["table"]["skipped"] == {"person_answered": 0, "nobody_answered": 1}
    assert rates(baseline)["answered_when_answered"] == (2, 2)
    assert rates(baseline)["answered_when_left_alone"] == (2, 2)
    assert "score  5 decision(s)" in text
    base = str(tmp_path / "template.json")

    # Better: answers what people answered, leaves alone what they left alone.
    code, text, better = replay(tmp_path, f"{__name__}:answers_orders", "--baseline", base)
    assert rates(better)["answered_when_left_alone"] == (0, 2)
    assert code == 0, text
    assert "gate: pass" in text
    assert "decline (not about an order)" in text, text  # the messages that changed are named, with why

    # Worse: answers nothing people answered (100% -> 0%), by far more than the 5 points allowed.
    code, text, worse = replay(tmp_path, f"{__name__}:declines_everything", "--baseline", base)
    assert rates(worse)["answered_when_answered"] == (0, 2)
    assert code == 1
    assert "FAIL  answered_when_answered: 100.0% (2/2) -> 0.0% (0/2), worse by 100.0%, allowed 5.0%" in text
    assert text.rstrip().endswith("gate: FAIL (1 check(s))")

    # The same drop, allowed by the team: exit 0; the same reports compared as saved files: the same verdict.
    code, text, _ = replay(
        tmp_path,
        f"{__name__}:declines_everything",
        "--baseline",
        base,
        "--max-drop",
        "answered_when_answered=1",
    )
    assert code == 0, text
    saved = str(tmp_path / "declines_everything.json")
    assert run(["gate", "--baseline", base, saved, "--max-drop", "answered_when_answered=1"])[0] == 0
    assert run(["gate", "--baseline", base, saved])[0] == 1
    assert run(["gate", "--baseline", base, str(tmp_path / "answers_orders.json")])[0] == 0


def test_a_floor_fails_a_candidate_no_worse_than_its_baseline(stack, nylas, week, tmp_path):
    replay(tmp_path, f"{__name__}:declines_everything")
    base = str(tmp_path / "declines_everything.json")
    code, text, _ = replay(
        tmp_path,
        f"{__name__}:declines_everything",
        "--baseline",
        base,
        "--floor",
        "answered_when_answered=0.5",
    )
    assert code == 1
    assert "FAIL  answered_when_answered: 0.0% against its floor 50.0%" in text


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--baseline", "no-such-report.json"), "no-such-report.json: no such report"),
        (("--max-drop", "answered=0.1"), "no rate 'answered'"),
        (("--floor", "answered_when_left_alone=0.1"), "bound it with --ceiling"),
        (("--judge", "no_such_module:judge"), "--judge no_such_module:judge"),
    ],
)
def test_bad_gate_input_is_one_line_and_exit_2_before_anything_is_read(stack, nylas, extra, said):
    before = len(nylas.requests)
    since = str(int(time.time()) - 3600)
    code, _, err = run(
        [
            "replay",
            "--stack-name",
            STACK,
            "--region",
            "us-east-1",
            "--agent",
            "template",
            "--since",
            since,
            *extra,
        ]
    )
    assert code == 2
    assert said in err
    assert err.count("\n") == 1
    assert len(nylas.requests) == before
