"""``make promote`` end to end, as the other operator commands are tested: the stack looked up in moto's
CloudFormation, the registry and state tables from ``template.yaml``, the caller from moto's STS, the
unchanged replier handler answering in each mode the command sets, and the Nylas emulator the evidence is
read from (read-only: the shadow report's threads, the review report's drafts).
"""

import io
import itertools

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from functions.replier import app
from ops.cli import Runtime, main
from replyonce.adapters.grant_registry import changes_of, read_grant
from tests.conftest import register_stack
from tests.replier_harness import inbound

STACK = "replyonce-promote-test"
REGION = "us-east-1"


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def stack(replier_env, nylas, tuning):
    """The stack's parameters say send; the registry is read at once by the replier (a 0 s cache)."""
    tuning.update({"registry_max_age_seconds": 0})
    register_stack(
        STACK,
        {
            "GrantRegistryTableName": replier_env.tables["GrantRegistryTable"],
            "StateTableName": replier_env.tables["StateTable"],
            "NylasApiKeySecretArn": replier_env.secrets["NylasApiKeySecret"],
        },
        {"AgentGrantIds": AGENT_GRANT_ID, "NylasApiUri": nylas.url, "ReplyMode": "send"},
    )
    app.consumer.cache_clear()
    yield replier_env
    app.consumer.cache_clear()


@pytest.fixture
def ops(nylas, tmp_path):
    """``make COMMAND ARGS="..."`` in-process, on Nylas' clock (one second after the command before)."""
    ticks = itertools.count(1)

    def run(command: str, *argv: str) -> Run:
        out, err = io.StringIO(), io.StringIO()
        runtime = Runtime(
            out=out,
            err=err,
            environ={},
            interactive=lambda: False,
            progress=lambda: None,
            clock=lambda: nylas.now() + next(ticks),
        )
        head = [command, argv[0]] if command == "grants" else [command]
        rest = argv[1:] if command == "grants" else argv
        extra = ["--drafts-file", str(tmp_path / "drafts.json")] if command == "promote" else []
        code = main([*head, "--stack-name", STACK, "--region", REGION, *rest, *extra], runtime)
        return Run(code, out.getvalue(), err.getvalue())

    return run


def mode(resources) -> str:
    stored = read_grant(boto3.client("dynamodb"), resources.tables["GrantRegistryTable"], AGENT_GRANT_ID)
    return stored.record.get("reply_mode", "(parameter)") if stored else "(no record)"


def caller() -> str:
    return boto3.client("sts").get_caller_identity()["Arn"]


def answer(pipeline, nylas, subject: str) -> dict:
    message = inbound(nylas, subject=subject)
    pipeline.deliver(envelope(message))
    pipeline.drain()
    return message


def test_a_grant_is_promoted_from_shadow_to_review_to_send_each_step_on_its_own_evidence(
    stack, ops, pipeline, nylas
):
    assert ops("grants", "set", "--grant", AGENT_GRANT_ID, "--mode", "shadow").code == 0
    answer(pipeline, nylas, "Order 1042")
    assert nylas.sends == []
    assert nylas.drafts == []

    # A dry run shows the shadow report of this grant and the change, and writes nothing.
    dry = ops("promote", "--grant", AGENT_GRANT_ID, "--dry-run")
    assert dry.code == 0, dry.err
    assert f"grant {AGENT_GRANT_ID}: its shadow report (since " in dry.out
    assert "would answer  1 message(s) in 1 reply(ies)" in dry.out
    assert f"grant {AGENT_GRANT_ID}: shadow -> review" in dry.out
    assert f"dry run, nothing written: grant {AGENT_GRANT_ID}: promote by {caller()}" in dry.out
    assert mode(stack) == "shadow"

    promoted = ops("promote", "--grant", AGENT_GRANT_ID)
    assert promoted.code == 0, promoted.err
    assert mode(stack) == "review"
    [latest, *_] = changes_of(boto3.client("dynamodb"), stack.tables["GrantRegistryTable"], AGENT_GRANT_ID)
    assert (latest.action, latest.by, latest.before, latest.after) == (
        "promote",
        caller(),
        {"reply_mode": "shadow"},
        {"reply_mode": "review"},
    )

    # In review the replier drafts. No draft decided yet: nothing to promote on.
    answer(pipeline, nylas, "Order 1043")
    [draft] = [record.draft for record in nylas.drafts]
    early = ops("promote", "--grant", AGENT_GRANT_ID)
    assert early.code == 2
    assert "no evidence from review to promote it on (--force to promote anyway)" in early.err
    assert "no evidence: no draft of this grant decided yet" in early.out
    assert "(pending 1)" in early.out
    assert mode(stack) == "review"
    # A person sends the draft as written: the review report counts it, and the grant goes to send.
    nylas.advance_clock(60)
    nylas.person_sends_draft(AGENT_GRANT_ID, draft["id"])
    sent = ops("promote", "--grant", AGENT_GRANT_ID)
    assert sent.code == 0, sent.err
    assert f"grant {AGENT_GRANT_ID}: its review report (drafts followed in " in sent.out
    assert "sent unchanged 1" in sent.out
    assert mode(stack) == "send"
    answer(pipeline, nylas, "Order 1044")
    assert len(nylas.sends) == 1  # the replier sends now

    # No step beyond send.
    top = ops("promote", "--grant", AGENT_GRANT_ID)
    assert (top.code, "no step up from send" in top.err) == (2, True)


def test_a_skip_or_a_step_down_is_refused_before_nylas_is_read_unless_forced(stack, ops, nylas):
    assert ops("grants", "set", "--grant", AGENT_GRANT_ID, "--mode", "shadow").code == 0
    before = len(nylas.requests)
    skip = ops("promote", "--grant", AGENT_GRANT_ID, "--to", "send")
    assert skip.code == 2
    assert "shadow -> send skips review" in skip.err
    assert len(nylas.requests) == before  # decided before any read
    assert mode(stack) == "shadow"
    # No shadow record either: refused without evidence, even for the next step.
    empty = ops("promote", "--grant", AGENT_GRANT_ID)
    assert empty.code == 2
    assert "no evidence: no shadow record of this grant (since " in empty.out
    assert mode(stack) == "shadow"
    forced = ops("promote", "--grant", AGENT_GRANT_ID, "--to", "send", "--force")
    assert forced.code == 0, forced.err
    assert f"grant {AGENT_GRANT_ID}: shadow -> send (forced)" in forced.out
    assert mode(stack) == "send"
    down = ops("promote", "--grant", AGENT_GRANT_ID, "--to", "review")
    assert (down.code, "is a step down" in down.err) == (2, True)


def test_a_grant_that_is_not_one_of_the_stacks_is_refused(stack, ops):
    run = ops("promote", "--grant", "grant-stranger-0009")
    assert run.code == 2
    assert "not an agent grant of this stack" in run.err
