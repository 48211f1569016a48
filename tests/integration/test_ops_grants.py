"""``make grants`` end to end, as the other operator commands are tested (``tests/integration/test_ops.py``):
the stack looked up in moto's CloudFormation, the registry table built from ``template.yaml``, the
caller's identity from moto's STS, and for the last test the unchanged replier handler reading what
the command wrote.
"""

import io
import itertools
from datetime import UTC, datetime

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from functions.replier import app
from ops.cli import Runtime, main
from replyonce.adapters.grant_registry import changes_of, list_grants, read_grant
from tests.conftest import register_stack
from tests.replier_harness import deferrals, inbound

STACK = "replyonce-grants-test"
REGION = "us-east-1"
OTHER_GRANT = "grant-brand-0002"


START = datetime(2026, 12, 6, 10, 0, 0, tzinfo=UTC).timestamp()


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def grants():
    """``make grants ARGS="..."`` in-process against moto: the action first, the stack's options after.

    Each command a second after the one before: the operator's clock, which orders the change items.
    """
    times = itertools.count(START)

    def run(*argv: str) -> Run:
        out, err = io.StringIO(), io.StringIO()
        runtime = Runtime(out=out, err=err, environ={}, interactive=lambda: False, clock=lambda: next(times))
        action, *rest = argv
        code = main(["grants", action, "--stack-name", STACK, "--region", REGION, *rest], runtime)
        return Run(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def stack(aws):
    register_stack(
        STACK,
        {
            "GrantRegistryTableName": aws.tables["GrantRegistryTable"],
            "StateTableName": aws.tables["StateTable"],
        },
        {"AgentGrantIds": AGENT_GRANT_ID, "ReplyMode": "review", "ReplyBudgetPerHour": "4"},
    )
    return aws


def stored(aws, grant_id: str):
    return read_grant(boto3.client("dynamodb"), aws.tables["GrantRegistryTable"], grant_id)


def caller() -> str:
    return boto3.client("sts").get_caller_identity()["Arn"]


def test_set_registers_a_grant_with_who_set_it_and_list_and_show_say_where_each_setting_comes_from(
    grants, stack
):
    run = grants("set", "--grant", OTHER_GRANT, "--mode", "shadow", "--agent", "order_status_agent:reply")
    assert run.code == 0, run.err
    assert f"grant {OTHER_GRANT}: set by {caller()}: (no record) -> agent=order_status_agent:reply" in run.out
    assert "takes effect within 60 s" in run.out
    record = stored(stack, OTHER_GRANT)
    assert record.record == {"reply_mode": "shadow", "agent": "order_status_agent:reply"}
    assert record.updated_by == caller()
    assert record.updated_at == "2026-12-06T10:00:00.000000Z"
    listed = grants("list").out.splitlines()
    # The seeded grant runs with the stack's parameters; the registered one with its record.
    [seeded] = [line for line in listed if line.startswith(AGENT_GRANT_ID)]
    [registered] = [line for line in listed if line.startswith(OTHER_GRANT)]
    assert seeded.split()[1:4] == ["active", "review", "template"]
    assert seeded.endswith("AgentGrantIds")
    assert registered.split()[1:4] == ["active", "shadow", "order_status_agent:reply"]
    assert f"record by {caller()}" in registered
    shown = grants("show", "--grant", OTHER_GRANT).out
    assert [line.split()[1:] for line in shown.splitlines() if "reply_mode" in line] == [["shadow", "record"]]
    budget = [line.split()[1:] for line in shown.splitlines() if "reply_budget_per_hour" in line]
    assert budget == [["4", "parameter"]]
    assert f"set     by {caller()}" in shown


def test_every_change_has_a_dry_run_that_writes_nothing(grants, stack):
    assert grants("set", "--grant", OTHER_GRANT, "--mode", "shadow").code == 0
    table = stack.tables["GrantRegistryTable"]
    for argv in (
        ("set", "--grant", OTHER_GRANT, "--mode", "send", "--dry-run"),
        ("pause", "--grant", OTHER_GRANT, "--dry-run"),
        ("resume", "--grant", OTHER_GRANT, "--dry-run"),
        ("remove", "--grant", OTHER_GRANT, "--dry-run"),
        ("set", "--grant", "grant-new-0003", "--mode", "send", "--dry-run"),
    ):
        run = grants(*argv)
        assert run.code == 0, run.err
        assert run.out.startswith(f"dry run, nothing written: grant {argv[2]}: {argv[0]} by {caller()}")
    assert [(g.grant_id, g.record) for g in list_grants(boto3.client("dynamodb"), table)] == [
        (OTHER_GRANT, {"reply_mode": "shadow"})
    ]
    assert len(changes_of(boto3.client("dynamodb"), table, OTHER_GRANT)) == 1
    assert "-> reply_mode=send" in grants("set", "--grant", OTHER_GRANT, "--mode", "send", "--dry-run").out


def test_pause_resume_and_remove_change_only_what_they_say_each_with_its_change(grants, stack):
    assert grants("set", "--grant", OTHER_GRANT, "--mode", "send").code == 0
    paused = grants("pause", "--grant", OTHER_GRANT)
    assert "its mail waits (deferred grant_paused" in paused.out
    assert stored(stack, OTHER_GRANT).record == {"reply_mode": "send", "enabled": False}
    assert "paused" in next(line for line in grants("list").out.splitlines() if line.startswith(OTHER_GRANT))
    grants("resume", "--grant", OTHER_GRANT)
    # Resumed: the pause is gone, the grant's own mode stays (a grant is enabled by default).
    assert stored(stack, OTHER_GRANT).record == {"reply_mode": "send"}
    removed = grants("remove", "--grant", OTHER_GRANT)
    assert "no longer an agent grant" in removed.out
    assert stored(stack, OTHER_GRANT) is None
    table = stack.tables["GrantRegistryTable"]
    actions = [c.action for c in changes_of(boto3.client("dynamodb"), table, OTHER_GRANT)]
    assert actions == ["remove", "resume", "pause", "set"]
    # A seeded grant without a record is not paused; paused, then its record removed: answered with the
    # parameters again, as the command says.
    assert "is not paused" in grants("resume", "--grant", AGENT_GRANT_ID).err
    grants("pause", "--grant", AGENT_GRANT_ID)
    assert "still in AgentGrantIds" in grants("remove", "--grant", AGENT_GRANT_ID).out


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (("set", "--grant", OTHER_GRANT, "--agent", "nosuchagent"), "agent must be template, bedrock or"),
        (("set", "--grant", OTHER_GRANT, "--reply-budget-per-hour", "0"), "reply_budget_per_hour must be"),
        (("set", "--grant", OTHER_GRANT, "--handoff-folder", " "), "handoff_folder must be a non-empty"),
        (("set", "--grant", OTHER_GRANT, "--reset", "mode"), "no such grant setting to reset: mode"),
        (("remove", "--grant", OTHER_GRANT), "has no record in the registry: nothing to remove"),
        (("pause", "--grant", OTHER_GRANT), "is not an agent grant of this stack"),
        (("resume", "--grant", OTHER_GRANT, "--dry-run"), "is not an agent grant of this stack"),
    ],
)
def test_a_change_the_replier_could_not_run_is_refused_and_nothing_is_written(grants, stack, argv, refusal):
    run = grants(*argv)
    assert run.code == 2
    assert refusal in run.err
    assert stored(stack, OTHER_GRANT) is None


def test_reset_gives_a_setting_back_to_the_stacks_parameter(grants, stack):
    grants("set", "--grant", OTHER_GRANT, "--mode", "shadow", "--trusted-sender", "Forms@Brand.example")
    assert stored(stack, OTHER_GRANT).record == {
        "reply_mode": "shadow",
        "reply_to_trusted_senders": ["forms@brand.example"],
    }
    grants("set", "--grant", OTHER_GRANT, "--reset", "reply_mode")
    assert stored(stack, OTHER_GRANT).record == {"reply_to_trusted_senders": ["forms@brand.example"]}


def test_a_grant_paused_by_the_command_has_its_mail_wait_at_the_replier(
    grants, replier_env, nylas, tuning, pipeline, log_records
):
    tuning.update({"registry_max_age_seconds": 0})
    app.consumer.cache_clear()
    register_stack(
        STACK,
        {"GrantRegistryTableName": replier_env.tables["GrantRegistryTable"]},
        {"AgentGrantIds": AGENT_GRANT_ID},
    )
    assert grants("pause", "--grant", AGENT_GRANT_ID).code == 0
    pipeline.deliver(envelope(inbound(nylas, subject="Order 1042")))
    pipeline.drain()
    assert deferrals(log_records) == ["grant_paused"]
    assert nylas.sends == []
    assert pipeline.in_flight() == 1
    app.consumer.cache_clear()


def test_show_gives_the_daily_agent_call_cap_and_todays_count_from_the_state_table(grants, stack):
    from replyonce.adapters.store import DynamoDBStateStore

    assert "(no cap: nothing counted)" in grants("show", "--grant", AGENT_GRANT_ID).out
    assert grants("set", "--grant", AGENT_GRANT_ID, "--daily-agent-call-cap", "2").code == 0
    [line] = [ln for ln in grants("show", "--grant", AGENT_GRANT_ID).out.splitlines() if "daily_agent" in ln]
    assert line.split()[1:3] == ["2", "record"]
    # Nothing asked yet today (the operator's UTC day: START's).
    assert "today (2026-12-06 UTC): 0 of 2 agent calls" in line
    # The replier counts two bursts, then refuses a third at 10:00:09 UTC.
    store = DynamoDBStateStore(
        stack.tables["StateTable"], boto3.client("dynamodb"), ttl_seconds=0, clock=lambda: START + 9
    )
    for n in range(3):
        store.count_agent_call(AGENT_GRANT_ID, "2026-12-06", f"i{n}", 2)
    [line] = [ln for ln in grants("show", "--grant", AGENT_GRANT_ID).out.splitlines() if "daily_agent" in ln]
    assert line.endswith(
        "today (2026-12-06 UTC): 2 of 2 agent calls; over the cap since 10:00 UTC: "
        "its mail goes to a person until 00:00 UTC"
    )
    # Yesterday's count is not today's.
    store.count_agent_call(AGENT_GRANT_ID, "2026-12-05", "i9", 2)
    assert "2 of 2 agent calls" in grants("show", "--grant", AGENT_GRANT_ID).out


def test_an_expiry_whose_re_authentication_was_lost_is_lifted_by_hand_and_an_operators_pause_kept(
    grants, stack
):
    # Nylas said the grant expired (the life a grant.expired writes); its grant.updated never arrived.
    from replyonce.adapters.grant_registry import Change, read_life, write_life
    from replyonce.rules.grant_life import GrantLife

    client, table = boto3.client("dynamodb"), stack.tables["GrantRegistryTable"]
    expired = GrantLife(expired_at=int(START) - 3600)
    write_life(
        client,
        table,
        AGENT_GRANT_ID,
        expired,
        None,
        Change(AGENT_GRANT_ID, "2026-12-06T09:00:00.000000Z", "expire", "nylas:grant.expired"),
    )
    assert grants("pause", "--grant", AGENT_GRANT_ID).code == 0
    listed = grants("list").out
    assert any(AGENT_GRANT_ID in row and " expired " in row for row in listed.splitlines())
    dry = grants("resume", "--grant", AGENT_GRANT_ID, "--expiry", "--dry-run")
    assert "dry run, nothing written" in dry.out
    assert read_life(client, table, AGENT_GRANT_ID).life.expired
    lifted = grants("resume", "--grant", AGENT_GRANT_ID, "--expiry")
    assert lifted.code == 0, lifted.err
    assert f"--since {int(START) - 3600 - 600} --grant {AGENT_GRANT_ID} --apply" in lifted.out
    assert not read_life(client, table, AGENT_GRANT_ID).life.expired
    # The operator's own pause is another matter: still paused, listed so.
    assert read_grant(client, table, AGENT_GRANT_ID).record == {"enabled": False}
    assert any(AGENT_GRANT_ID in row and " paused " in row for row in grants("list").out.splitlines())
    assert [c.action for c in changes_of(client, table, AGENT_GRANT_ID)][:2] == ["reauthenticate", "pause"]
    again = grants("resume", "--grant", AGENT_GRANT_ID, "--expiry")
    assert "not paused by an expiry" in again.out
