"""A value exactly-once delivery rests on is refused out of bounds, with the reason, however it was set.

Why: ``mailbox_settle_seconds=0`` used to be accepted, and with it the replier read the mailbox in the
instant after a send that may have gone out, found nothing and sent again. Each row is one bound: a
value just past it is refused with the sentence that says why, the value at it is accepted. Bad values
reach the settings both ways a deployment or a harness can set them: the template's variables
(``from_environment``) and the harness's in-process tuning.
"""

import pytest

from replyonce.config import ReplierSettings, WebhookSettings
from replyonce.exceptions import ConfigurationError

WIRING = {
    "QUEUE_URL": "q",
    "NYLAS_API_KEY_SECRET_ID": "k",
    "IDEMPOTENCY_TABLE": "i",
    "STATE_TABLE": "t",
    "AGENT_GRANT_IDS": "g",
}

# (what is set, a value past the bound, the value at it, the reason the refusal gives)
BOUNDS = [
    (
        {},
        {"mailbox_settle_seconds": 0},
        {"mailbox_settle_seconds": 91},
        "must exceed the Agent Account queue's 90 s: a reply that may have gone out can wait that long",
    ),
    (
        {},
        {"mailbox_settle_seconds": 90},
        {"mailbox_settle_seconds": 91},
        "a mailbox read before then finds nothing and sends it again",
    ),
    (
        {},
        {"pending_confirm_seconds": 389},
        {"pending_confirm_seconds": 390},
        "must be at least the Agent Account queue's 90 s plus mailbox_settle_seconds (300): a queued reply "
        "is looked for in the mailbox only once it can be listed, else it is taken for lost and sent again",
    ),
    (
        {},
        {"record_margin_seconds": 0},
        {"record_margin_seconds": 0.1},
        "a lease shorter than its holder's work lets a second record send too",
    ),
    (
        {},
        {"nylas_send_timeout_seconds": 0},
        {"nylas_send_timeout_seconds": 0.1},
        "a lease shorter than its holder's work lets a second record send too",
    ),
    (
        {},
        {"lease_wait_seconds": -1},
        {"lease_wait_seconds": 0},
        "lease_wait_seconds (-1) must be 0 or more",
    ),
    (
        {},
        {"nylas_send_timeout_seconds": 191},
        {"nylas_send_timeout_seconds": 190},
        "must fit in the replier's Timeout (260 s): a record starts only with a whole lease left of its "
        "invocation, so a longer budget starts none",
    ),
    (
        {"AGENT_TIMEOUT_SECONDS": "71"},
        {},
        {"lease_wait_seconds": 29},
        "AGENT_TIMEOUT_SECONDS (71) with the send timeout (150), the margin (10) and the lease wait (30) "
        "must fit in the replier's Timeout (260 s)",
    ),
    (
        {},
        {"ledger_ttl_seconds": 86_400},
        {"ledger_ttl_seconds": 86_401},
        "must exceed the idempotency record's 86400 s and the Nylas key's hour: a redelivery both have "
        "forgotten is known as answered only by the ledger",
    ),
    (
        {},
        {"idempotency_expiry_seconds": 60, "ledger_ttl_seconds": 3600},
        {"idempotency_expiry_seconds": 60, "ledger_ttl_seconds": 3601},
        "the Nylas key's hour",
    ),
    (
        {},
        {"max_receive_count": 0},
        {"max_receive_count": 1},
        "must be the queue's maxReceiveCount, 1 to 1000",
    ),
    (
        {},
        {"thread_window": 201},
        {"thread_window": 200},
        "Nylas lists at most 200 messages per page",
    ),
]


@pytest.mark.parametrize(("variables", "past", "at", "reason"), BOUNDS)
def test_a_value_past_its_bound_is_refused_with_the_reason(variables, past, at, reason):
    with pytest.raises(ConfigurationError) as refused:
        ReplierSettings.from_environment({**WIRING, **variables}, tuning=past)
    assert reason in str(refused.value)
    ReplierSettings.from_environment({**WIRING, **variables}, tuning=at)


@pytest.mark.parametrize(("variables", "past", "at", "reason"), [b for b in BOUNDS if not b[0]])
def test_the_bound_holds_however_the_settings_are_made(variables, past, at, reason):
    # A harness that builds the settings itself (dataclasses.replace of the deployed ones) meets it too.
    import dataclasses

    deployed = ReplierSettings.from_environment(WIRING)
    with pytest.raises(ConfigurationError) as refused:
        dataclasses.replace(deployed, **past)
    assert reason in str(refused.value)


def test_a_harness_that_compresses_time_says_how_fast_its_queue_releases():
    # The chaos harness settles in 4 s: its mailbox lists a queued send at once, and it says so.
    settings = ReplierSettings.from_environment(
        WIRING,
        tuning={"agent_account_queue_seconds": 3, "mailbox_settle_seconds": 4, "pending_confirm_seconds": 94},
    )
    assert (settings.mailbox_settle_seconds, settings.pending_confirm_seconds) == (4, 94)


def test_a_misspelt_tuning_is_refused_not_ignored():
    with pytest.raises(ConfigurationError, match="no such setting to tune: mailbox_settle"):
        ReplierSettings.from_environment(WIRING, tuning={"mailbox_settle": 400})


def test_a_tuning_of_a_nested_setting_changes_only_that_field():
    settings = WebhookSettings.from_environment(
        {"QUEUE_URL": "q", "NYLAS_SECRETS_ID": "s"}, tuning={"secrets": {"refresh_min_interval_seconds": 0}}
    )
    assert (settings.secrets.secrets_id, settings.secrets.refresh_min_interval_seconds) == ("s", 0)
