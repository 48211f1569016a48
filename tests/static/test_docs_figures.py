"""The failover figures the runbook quotes, read from the policy (issue 48): the handover and the RTO in
``docs/operations.md`` and ``docs/reliability.md`` are what ``Policy.handover_seconds`` computes at the
template's timings, not numbers of their own."""

from pathlib import Path

from ops.template import load_template
from replyonce.policy import Policy

DOCS = Path(__file__).resolve().parents[2] / "docs"


def template_handover() -> Policy:
    agent_timeout = load_template()["Parameters"]["AgentTimeoutSeconds"]["Default"]
    return Policy(agent_grant_ids=(), agent_timeout_seconds=float(agent_timeout))


def test_the_runbook_quotes_the_handover_the_policy_computes():
    policy = template_handover()
    handover = int(policy.handover_seconds)
    operations = (DOCS / "operations.md").read_text()
    terms = (
        f"`AgentTimeoutSeconds` + {int(policy.send_timeout_seconds)} + {int(policy.margin_seconds)} + "
        f"{policy.pending_confirm_seconds} = {handover} s"
    )
    assert terms in " ".join(operations.split())
    assert f"the handover ({handover} s)" in operations  # the RTO's term
    reliability = " ".join((DOCS / "reliability.md").read_text().split())
    assert f"the handover is {handover} s" in reliability


def test_the_handover_covers_the_lease_the_agent_account_queue_and_the_settle():
    policy = template_handover()
    assert policy.handover_seconds == policy.lease_seconds + policy.pending_confirm_seconds


def test_the_restore_promise_quotes_the_new_state_wait_the_core_uses():
    # A new thread state waits pending_confirm_seconds (the queue and the settle), not the settle alone:
    # core.arrival passes the policy's pending_confirm_seconds to state_settles_in.
    policy = template_handover()
    operations = " ".join((DOCS / "operations.md").read_text().split())
    assert f"within `pending_confirm_seconds` ({policy.pending_confirm_seconds} s" in operations
    assert policy.pending_confirm_seconds >= 90 + policy.settle_seconds
