"""The configuration table, ``replyonce/config.py`` and ``template.yaml`` held to each other.

Why: a variable the code reads that the template never sets is a knob no deployer can reach; one the
template sets that nothing reads is a knob that does nothing; a row of ``docs/configuration.md`` that
names neither misleads. What the code reads is taken from what it does (the settings built from an
environment that records every name asked for), never from a pattern over its text.
"""

import re
from collections import Counter
from pathlib import Path

from devstack.template import declared_variables
from ops.template import load_template
from replyonce import config

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()
ROWS = re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \| (\w+) \| ([^|]*) \| .* \|$", CONFIGURATION, re.MULTILINE)
TEMPLATE = load_template()
# Set outside the template: Lambda sets AWS_REGION in every function; boto3 reads AWS_ENDPOINT_URL
# (unset in AWS; the tests and the local stack point it at moto).
NOT_THE_TEMPLATES = {"AWS_REGION": "Lambda", "AWS_ENDPOINT_URL": "boto3 (unset in AWS)"}


class _Recording(dict):
    """An environment that remembers every name read from it."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, name, default=None):
        self.read.add(name)
        return super().get(name, default)

    def __getitem__(self, name):
        self.read.add(name)
        return super().__getitem__(name)


def variables_read() -> dict[str, set[str]]:
    """Each function's variables, as its settings read them at cold start."""
    required = {
        "QUEUE_URL": "q",
        "NYLAS_SECRETS_ID": "s",
        "NYLAS_API_KEY_SECRET_ID": "k",
        "IDEMPOTENCY_TABLE": "i",
        "STATE_TABLE": "t",
        "AGENT_GRANT_IDS": "g",
    }
    webhook, replier = _Recording(required), _Recording(required)
    config.WebhookSettings.from_environment(webhook)
    config.ReplierSettings.from_environment(replier)
    return {"WebhookFunction": webhook.read, "ReplierFunction": replier.read}


def _set_by_template(function: str) -> dict[str, object]:
    return {
        name: value
        for name, value in declared_variables(TEMPLATE, function).items()
        if not name.startswith("POWERTOOLS_")  # Powertools' own, read by the library
    }


def test_every_variable_read_has_one_row_and_every_row_is_read():
    read = variables_read()
    rows = Counter(name for name, _, _ in ROWS)
    assert [name for name, times in rows.items() if times > 1] == []
    assert set(rows) == read["WebhookFunction"] | read["ReplierFunction"] | {"AWS_ENDPOINT_URL"}


def test_each_row_names_the_functions_that_read_it():
    read = variables_read()
    for name, function, _ in ROWS:
        if name in NOT_THE_TEMPLATES and name != "AWS_REGION":
            continue
        by = {f for f, names in read.items() if name in names}
        expected = {"both": {"WebhookFunction", "ReplierFunction"}, "webhook": {"WebhookFunction"}}.get(
            function, {"ReplierFunction"}
        )
        assert by == expected, f"{name}: the table says {function}"


def test_the_template_sets_every_variable_the_code_reads_and_nothing_else():
    # A variable read and never set is a knob no deployer can reach; one set and never read, a knob
    # that does nothing. Either is removed, not documented.
    for function, read in variables_read().items():
        assert set(_set_by_template(function)) == read - set(NOT_THE_TEMPLATES), function


def test_each_row_says_what_the_template_sets_it_from():
    for name, _, source in ROWS:
        if name in NOT_THE_TEMPLATES:
            assert source == NOT_THE_TEMPLATES[name], name
            continue
        values = [
            _set_by_template(f)[name]
            for f in ("WebhookFunction", "ReplierFunction")
            if name in _set_by_template(f)
        ]
        for value in values:
            if isinstance(value, dict):
                assert source == f"`{value['Ref']}`", name
            else:
                assert source == f"the template ({value})", name


def test_the_derived_values_are_the_templates():
    # Not variables: each must equal a setting of the template, and a variable could only disagree.
    resources = TEMPLATE["Resources"]
    queue = resources["NotificationQueue"]["Properties"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] == config.MAX_RECEIVE_COUNT
    assert queue["MaximumMessageSize"] == config.QUEUE_MAX_MESSAGE_BYTES
    assert resources["ReplierFunction"]["Properties"]["Timeout"] == config.REPLIER_TIMEOUT_SECONDS
    assert config.ReplierSettings.max_receive_count == config.MAX_RECEIVE_COUNT
    assert config.WebhookSettings.queue_max_message_bytes == config.QUEUE_MAX_MESSAGE_BYTES
    assert config.ReplierSettings.function_timeout_seconds == config.REPLIER_TIMEOUT_SECONDS


def test_the_largest_agent_timeout_a_deployer_may_choose_starts_records():
    # AgentTimeoutSeconds' MaxValue must pass the settings' own bound (the record budget in the Timeout).
    parameter = TEMPLATE["Parameters"]["AgentTimeoutSeconds"]
    environment = {
        "QUEUE_URL": "q",
        "NYLAS_API_KEY_SECRET_ID": "k",
        "IDEMPOTENCY_TABLE": "i",
        "STATE_TABLE": "t",
        "AGENT_GRANT_IDS": "g",
        "AGENT_TIMEOUT_SECONDS": str(parameter["MaxValue"]),
    }
    settings = config.ReplierSettings.from_environment(environment)
    assert settings.agent_timeout_seconds == parameter["MaxValue"]
