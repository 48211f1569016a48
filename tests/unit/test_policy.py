"""The core's policy decides as the deployed settings do: each default written once, in ``replyonce.config``.

Why: the rules' tests build ``Policy(agent_grant_ids=...)`` and trust it to be
a deployment left at its defaults. A default written twice (the settings' and
the policy's) drifts, and then every table test checks a policy nobody deploys.
"""

import dataclasses

from replyonce.config import ReplierSettings, SecretsSettings
from replyonce.policy import Policy, policy_of

GRANTS = ("grant-1",)


def settings_at_their_defaults() -> ReplierSettings:
    return ReplierSettings(
        queue_url="q",
        secrets=SecretsSettings(secrets_id="s"),
        idempotency_table="i",
        state_table="t",
        agent_grant_ids=GRANTS,
    )


def test_a_policy_left_at_its_defaults_is_the_policy_of_settings_left_at_theirs():
    assert Policy(agent_grant_ids=GRANTS) == policy_of(settings_at_their_defaults())


def test_every_setting_the_policy_takes_is_passed_on_not_left_at_its_default():
    # Each policy field (but those the settings do not have) must come from a setting: with every
    # setting away from its default, no policy field may still hold its own default.
    changed = {
        field.name: (
            field.default * 2 + 1
            if isinstance(field.default, int | float) and not isinstance(field.default, bool)
            else frozenset({"changed@example.com"})
            if isinstance(field.default, frozenset)
            else "changed"
        )
        for field in dataclasses.fields(ReplierSettings)
        if field.default is not dataclasses.MISSING and field.name != "reply_mode"
    }
    # REPLY_MODE sets two fields (review_mode, shadow_mode): each must follow it in one of the modes.
    policies = [
        policy_of(dataclasses.replace(settings_at_their_defaults(), **changed, reply_mode=mode))
        for mode in ("review", "shadow")
    ]
    defaults = Policy(agent_grant_ids=GRANTS)
    still_default = [
        field.name
        for field in dataclasses.fields(Policy)
        # daily_agent_call_cap is a grant's setting only (the registry's; policy_for passes it on).
        if field.name not in ("agent_grant_ids", "key_margin_seconds", "replay", "daily_agent_call_cap")
        and all(getattr(policy, field.name) == getattr(defaults, field.name) for policy in policies)
    ]
    assert still_default == []
