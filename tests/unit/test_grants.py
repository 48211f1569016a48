"""A grant's settings: its record overlaid on the deployment's defaults (``replyonce.grants``), and the
policy the core decides its records with (``replyonce.policy.policy_for``)."""

from dataclasses import fields, replace

import pytest

from replyonce.config import ReplierSettings, TrustedList
from replyonce.grants import (
    FIELDS,
    GrantRecordInvalid,
    GrantSettings,
    agent_grant_ids,
    as_record,
    defaults_of,
    overlay,
)
from replyonce.policy import Policy, policy_for, policy_of

ENVIRONMENT = {
    "QUEUE_URL": "q",
    "NYLAS_API_KEY_SECRET_ID": "k",
    "IDEMPOTENCY_TABLE": "i",
    "STATE_TABLE": "t",
    "AGENT_GRANT_IDS": "grant-a,grant-b",
    "REPLY_MODE": "review",
    "REPLY_AGENT": "order_status_agent:reply",
    "REPLY_BUDGET_PER_HOUR": "5",
    "REPLY_BUDGET_PER_RECIPIENT_PER_HOUR": "7",
    "PERSON_HOLD_SECONDS": "60",
    "HANDOFF_FOLDER": "Team",
    "TRUSTED_LISTS": "support.acme.example=support@acme.example",
    "REPLY_TO_TRUSTED_SENDERS": "forms@acme.example",
}
SETTINGS = ReplierSettings.from_environment(ENVIRONMENT)
DEFAULTS = defaults_of(SETTINGS)


def test_a_grant_without_a_record_runs_with_every_parameter_of_the_deployment():
    assert (
        GrantSettings(
            enabled=True,
            reply_mode="review",
            agent="order_status_agent:reply",
            reply_budget_per_hour=5,
            reply_budget_per_recipient_per_hour=7,
            person_hold_seconds=60,
            reply_to_trusted_senders=frozenset({"forms@acme.example"}),
            trusted_lists=(TrustedList("support.acme.example", "support@acme.example"),),
            handoff_folder="Team",
            daily_agent_call_cap=0,
        )
        == DEFAULTS
    )
    # ... and the core decides its records exactly as it decided them before the registry.
    assert policy_for(policy_of(SETTINGS), DEFAULTS, SETTINGS.agent_grant_ids) == policy_of(SETTINGS)


@pytest.mark.parametrize(
    ("record", "changed"),
    [
        ({}, {}),
        ({"enabled": False}, {"enabled": False}),
        ({"reply_mode": "shadow"}, {"reply_mode": "shadow"}),
        ({"reply_mode": "send", "agent": "template"}, {"reply_mode": "send", "agent": "template"}),
        ({"agent": "my_agents:billing"}, {"agent": "my_agents:billing"}),
        ({"reply_budget_per_hour": 1}, {"reply_budget_per_hour": 1}),
        ({"reply_budget_per_recipient_per_hour": 30}, {"reply_budget_per_recipient_per_hour": 30}),
        ({"person_hold_seconds": 0}, {"person_hold_seconds": 0}),
        (
            {"reply_to_trusted_senders": ["Forms@Brand.example", " "]},
            {"reply_to_trusted_senders": frozenset({"forms@brand.example"})},
        ),
        ({"reply_to_trusted_senders": []}, {"reply_to_trusted_senders": frozenset()}),
        (
            {"trusted_lists": ["<help.brand.example>=Help@Brand.example", "news.brand.example"]},
            {
                "trusted_lists": (
                    TrustedList("help.brand.example", "help@brand.example"),
                    TrustedList("news.brand.example", ""),
                )
            },
        ),
        ({"handoff_folder": " Brand team "}, {"handoff_folder": "Brand team"}),
        ({"daily_agent_call_cap": 500}, {"daily_agent_call_cap": 500}),
    ],
)
def test_a_record_overrides_exactly_the_settings_it_names(record, changed):
    assert overlay(DEFAULTS, record) == replace(DEFAULTS, **changed)


@pytest.mark.parametrize(
    ("record", "refusal"),
    [
        (["reply_mode", "send"], "must be a JSON object"),
        ("not json {", "must be a JSON object"),
        ({"mode": "send"}, "no such grant setting: mode"),
        ({"enabled": "false"}, "enabled must be true or false"),
        ({"enabled": 0}, "enabled must be true or false"),
        ({"reply_mode": "draft"}, "reply_mode must be one of send, review, shadow"),
        ({"agent": "nosuchagent"}, "agent must be template, bedrock or module:function"),
        ({"agent": ":reply"}, "agent must be"),
        ({"agent": 7}, "agent must be"),
        ({"reply_budget_per_hour": 0}, "reply_budget_per_hour must be an integer >= 1"),
        ({"reply_budget_per_hour": True}, "reply_budget_per_hour must be an integer >= 1"),
        ({"reply_budget_per_hour": 2.5}, "reply_budget_per_hour must be an integer >= 1"),
        ({"reply_budget_per_recipient_per_hour": "10"}, "must be an integer >= 1"),
        ({"person_hold_seconds": -1}, "person_hold_seconds must be an integer >= 0"),
        ({"reply_to_trusted_senders": "a@b.example"}, "must be a list of strings"),
        ({"trusted_lists": [3]}, "trusted_lists must be a list of strings"),
        ({"handoff_folder": ""}, "handoff_folder must be a non-empty string"),
        ({"daily_agent_call_cap": -5}, "daily_agent_call_cap must be an integer >= 0"),
        # One bad setting refuses the whole record: a grant never runs half its record.
        ({"reply_mode": "shadow", "reply_budget_per_hour": 0}, "reply_budget_per_hour"),
    ],
)
def test_a_record_the_replier_cannot_use_is_refused_with_the_reason(record, refusal):
    with pytest.raises(GrantRecordInvalid, match=refusal):
        overlay(DEFAULTS, record)


def test_a_record_written_from_settings_reads_back_to_the_same_settings():
    settings = overlay(
        DEFAULTS,
        {
            "reply_mode": "shadow",
            "reply_to_trusted_senders": ["b@x.example", "a@x.example"],
            "trusted_lists": ["l.x.example=l@x.example", "bare.x.example"],
        },
    )
    record = as_record(settings, FIELDS)
    assert overlay(GrantSettings(), record) == settings
    assert record["reply_to_trusted_senders"] == ["a@x.example", "b@x.example"]


@pytest.mark.parametrize(
    ("mode", "review", "shadow"), [("send", False, False), ("review", True, False), ("shadow", False, True)]
)
def test_the_grants_policy_carries_its_mode_budgets_lists_and_cap_and_nothing_else(mode, review, shadow):
    base = policy_of(SETTINGS)
    grant = overlay(
        DEFAULTS,
        {
            "reply_mode": mode,
            "reply_budget_per_hour": 2,
            "reply_budget_per_recipient_per_hour": 4,
            "person_hold_seconds": 9,
            "reply_to_trusted_senders": ["f@brand.example"],
            "trusted_lists": ["l.brand.example=l@brand.example"],
            "handoff_folder": "Brand",
            "daily_agent_call_cap": 25,
        },
    )
    policy = policy_for(base, grant, ("grant-a", "grant-b", "grant-c"))
    expected = {
        "agent_grant_ids": ("grant-a", "grant-b", "grant-c"),
        "review_mode": review,
        "shadow_mode": shadow,
        "reply_budget_per_hour": 2,
        "recipient_budget_per_hour": 4,
        "person_hold_seconds": 9,
        "trusted_senders": frozenset({"f@brand.example"}),
        "trusted_lists": (TrustedList("l.brand.example", "l@brand.example"),),
        "handoff_folder": "Brand",
        "daily_agent_call_cap": 25,
    }
    assert {name: getattr(policy, name) for name in expected} == expected
    # Every other field (the timings exactly-once rests on, the fence) is the deployment's.
    others = [f.name for f in fields(Policy) if f.name not in expected]
    assert {n: getattr(policy, n) for n in others} == {n: getattr(base, n) for n in others}


@pytest.mark.parametrize(
    ("seeded", "registered", "expected"),
    [
        (("a",), {}, ("a",)),
        (("b", "a"), {"c": {}, "a": {}}, ("b", "a", "c")),
        ((), {"z": {}, "m": {}}, ("m", "z")),
        (("a", "a"), {}, ("a",)),
    ],
)
def test_the_seeded_grants_come_first_in_their_order_then_the_registrys(seeded, registered, expected):
    assert agent_grant_ids(seeded, registered) == expected


def test_without_agent_grant_ids_the_registry_alone_is_enough_but_one_of_them_is_needed():
    alone = {k: v for k, v in ENVIRONMENT.items() if k != "AGENT_GRANT_IDS"}
    assert ReplierSettings.from_environment({**alone, "GRANT_REGISTRY_TABLE": "r"}).agent_grant_ids == ()
    from replyonce.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match="AGENT_GRANT_IDS is empty and there is no GRANT_REGISTRY"):
        ReplierSettings.from_environment(alone)
