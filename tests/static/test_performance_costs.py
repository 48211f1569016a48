"""The cost section of docs/performance.md, re-derived from its own inputs by a second, independent model.

Why: the bill is computed by ``bench`` from counts, measured times and prices, and written into the
page with its inputs as one JSON block. A figure in the page that its inputs cannot reproduce — an
edited total, a line dropped from the model, a unit slip — is a wrong number someone will budget
with. This test reads only the page (never ``bench``, see ``tests/static/test_support_imports.py``),
recomputes each total from the block's inputs in its own words, and asks for agreement within 20 %.
It also checks that the bill has what issue 23 asked of it: the replier's compute at real latency,
CloudWatch Logs and X-Ray.
"""

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "performance.md"
TOLERANCE = 0.20
MONTH_SECONDS = 30 * 24 * 3600


@pytest.fixture(scope="module")
def block() -> dict[str, Any]:
    text = PAGE.read_text()
    section = text[text.index("## Cost: the bill as it will be") :]
    match = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert match, "docs/performance.md has no JSON block of the cost inputs"
    return json.loads(match.group(1))


def _per_million(path: dict[str, Any], block: dict[str, Any], replier_mb: int | None = None) -> float:
    """USD per million notifications of one path: each service's units times its price."""
    price, memory = block["prices"], dict(block["memory_mb"])
    if replier_mb is not None:
        memory["replier"] = replier_mb
    invocations = 1 + path["replier_invocations"]  # the webhook, then the replier's share
    gb_seconds = (
        math.ceil(path["webhook_ms"]) / 1000 * memory["webhook"] / 1024
        + path["replier_ms"] / 1000 * memory["replier"] / 1024
    )
    log_gb = (path["log_bytes"] + invocations * block["platform_bytes_per_invocation"]) / 1e9
    per_notification = (
        price["api_rest"] / 1e6
        + invocations * price["lambda_request"] / 1e6
        + gb_seconds * price["lambda_gb_s"]
        + path["sqs_requests"] * price["sqs_request"] / 1e6
        + path["wru"] * price["ddb_wru"] / 1e6
        + path["rru"] * price["ddb_rru"] / 1e6
        + log_gb * price["logs_ingest"]
    )
    return per_notification * 1e6


def _month(per_day: float, block: dict[str, Any]) -> float:
    """USD a month: the notifications (half first replies, half own outbound) and the month's own lines."""
    price, month = block["prices"], block["month"]
    paths = block["paths"]
    notifications = per_day * 30
    average = (
        _per_million(paths["first reply"], block) + _per_million(paths["own outbound message"], block)
    ) / 2
    reservoir = min(notifications, block["sampling"]["reservoir_per_second"] * MONTH_SECONDS)
    traces = (reservoir + block["sampling"]["fixed_rate"] * (notifications - reservoir)) * month[
        "traces_per_sampled_notification"
    ]
    per_second = per_day / 86_400
    warm = max(1, per_second * month["webhook_seconds"]) + max(1, per_second * month["replier_seconds"])
    secrets = warm * MONTH_SECONDS / block["secrets_max_age_seconds"] / 10_000 * price["secrets_calls"]
    state_gb = notifications / 2 * month["state_bytes_per_reply"] / 1e9
    logs_gb = notifications * month["log_bytes_per_notification"] / 1e9
    return (
        notifications / 1e6 * average
        + traces / 1e6 * price["xray_trace"]
        + secrets
        + 2 * price["secret_month"]
        + state_gb * (price["ddb_storage"] + price["ddb_pitr"])
        + per_day * month["idempotency_bytes"] / 1e9 * price["ddb_storage"]
        + logs_gb * block["log_retention_days"] / 30 * price["logs_storage"]
        + month["custom_metrics"] * price["metric_month"]
        + month["alarm_metrics"] * price["alarm_metric_month"]
        + price["dashboard_month"]
        + price["insight_rule_month"]
        + price["kms_key_month"]
    )


def _close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= TOLERANCE * theirs


def test_per_million_figures_are_re_derived_from_their_inputs(block):
    results = block["results"]
    for name, key in (
        ("first reply", "per_million_first_replies"),
        ("own outbound message", "per_million_own_outbound"),
    ):
        ours = _per_million(block["paths"][name], block)
        assert _close(ours, results[key]), (
            f"{name}: re-derived ${ours:.2f}, the page says ${results[key]:.2f}"
        )


def test_monthly_figures_are_re_derived_from_their_inputs(block):
    for volume, usd in block["results"]["monthly"].items():
        ours = _month(float(volume), block)
        assert _close(ours, usd), f"{volume}/day: re-derived ${ours:,.2f} a month, the page says ${usd:,.2f}"
    assert set(block["results"]["monthly"]) == {"1000000", "10000000"}


def test_the_tables_show_the_figures_of_the_block(block):
    section = PAGE.read_text().split("## Cost: the bill as it will be", 1)[1].split("## Scale on paper", 1)[0]
    first = block["results"]["per_million_first_replies"]
    assert f"**${first:,.2f}**" in section
    for usd in block["results"]["monthly"].values():
        assert f"**${usd:,.2f}**" in section


def test_the_bill_has_compute_at_real_latency_logs_and_x_ray(block):
    first = block["paths"]["first reply"]
    # A first reply waits on Nylas and the agent for seconds: a loopback handler time would be ~30 ms.
    assert first["replier_ms"] >= 1000
    assert first["log_bytes"] > 0
    assert block["platform_bytes_per_invocation"] > 0
    assert block["month"]["traces_per_sampled_notification"] >= 1
    section = PAGE.read_text().split("## Cost: the bill as it will be", 1)[1].split("## Scale on paper", 1)[0]
    for line in ("Lambda GB-s, replier", "CloudWatch Logs ingestion", "X-Ray traces", "Secrets Manager"):
        assert f"| {line}" in section or f"|  | {line}" in section, line
    # Every price has its source.
    assert all(
        re.search(r"\| https://aws\.amazon\.com/", row)
        for row in section.splitlines()
        if row.startswith("| api_rest")
    )


# ---- the bill at real batch fill (the page's first section) -----------------------------------------


def _lead() -> str:
    text = PAGE.read_text()
    return text.split("## The bill at real batch fill", 1)[1].split("\n## ", 1)[0]


@pytest.fixture
def at_fill(block) -> dict[str, Any]:
    """The bill at real batch fill, when the page's run measured it (without ``--skip-bill``)."""
    if "at_fill" not in block:
        assert "Not measured in this run (`--skip-bill`" in _lead(), "the bill at real batch fill is missing"
        pytest.skip("the page's run left the bill at real batch fill out (--skip-bill); its section says so")
    return block["at_fill"]


def test_the_cost_at_each_fill_and_memory_size_is_re_derived_from_its_inputs(block, at_fill):
    # Below capacity, mixed at saturation, a long thread, and the saturated floor beside them.
    assert {"below_capacity", "mixed_saturation", "long_thread", "full_batches"} <= set(at_fill["fills"])
    rows = {**at_fill["fills"], **at_fill["memory_sizes"]}
    for name, row in rows.items():
        ours = _per_million(row["path"], block, row["replier_mb"])
        assert _close(ours, row["usd_per_million"]), (
            f"{name}: re-derived ${ours:.2f}, the page says ${row['usd_per_million']:.2f}"
        )
    # The saturated floor is the bill's own first reply.
    assert _close(
        at_fill["fills"]["full_batches"]["usd_per_million"], block["results"]["per_million_first_replies"]
    )
    # At about one record per invocation the replier bills each record's whole wait: more than full batches.
    below = at_fill["fills"]["below_capacity"]
    assert below["records_per_invocation"] < 2
    assert below["usd_per_million"] > at_fill["fills"]["full_batches"]["usd_per_million"]
    # A long thread's item is larger than a new thread's: its follow-up writes more units.
    assert at_fill["fills"]["long_thread"]["path"]["wru"] > 0
    sizes = {int(name.split()[0]) for name in at_fill["memory_sizes"]}
    assert sizes == {160, 192, 256}  # issue 46: the two sizes below the template's 256 MB


def test_the_lead_section_shows_the_figures_of_the_block(at_fill):
    lead = _lead()
    for row in at_fill["fills"].values():
        assert f"**${row['usd_per_million']:,.2f}**" in lead
    for row in at_fill["memory_sizes"].values():
        assert f"${row['usd_per_million']:,.2f}" in lead
    below = at_fill["fills"]["below_capacity"]["usd_per_million"]
    verdict = "met" if below <= at_fill["goal_usd_per_million"] else "not met"
    assert f"The ${at_fill['goal_usd_per_million']:g} goal, against (i): {verdict}**" in lead


def test_the_advised_concurrency_is_the_mixed_streams_peak_need(at_fill):
    c = at_fill["concurrency"]
    peak = c["per_day"] / 86_400 * c["peak_factor"]
    assert c["advised"] == math.ceil(peak * c["billed_seconds_per_notification"] * c["headroom"])
    assert f"`ReplierMaximumConcurrency` for 10 M notifications a day: {c['advised']}**" in _lead()
    assert f"**{c['advised']}** (the mixed stream)" in PAGE.read_text().split("## Scale on paper", 1)[1]
