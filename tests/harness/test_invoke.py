"""``make invoke`` as close to ``sam local invoke`` as Docker-free allows.

The environment follows SAM's rules (``--env-vars`` file over the shell over
the template, only declared variables), each invocation prints
START/END/REPORT, and a bad event or file gets one line and exit 1.
"""

import io
import json
import logging
import re

import pytest

from devstack.env_vars import resolve_environment
from devstack.events import AGENT_GRANT_ID, ENV_VARS_FILE, EVENTS_DIR, SAMPLE_EVENTS_ENV_VARS, load_event
from devstack.invoke import invoke, main

REPLIER_EVENT = load_event("replier-message-created.json")


@pytest.fixture(autouse=True)
def _no_real_nylas_from_the_shell(monkeypatch):
    """make invoke takes the shell's value of declared variables (as SAM does): never a real Nylas here."""
    for name in ("NYLAS_API_URI", "AGENT_GRANT_IDS", "QUEUE_URL", "NYLAS_SECRETS_ID"):
        monkeypatch.delenv(name, raising=False)


def test_env_vars_file_changes_the_invocation():
    untouched = invoke("ReplierFunction", REPLIER_EVENT, shell_environment={})
    assert len(untouched["sent"]) == 1

    other_grant = invoke(
        "ReplierFunction",
        REPLIER_EVENT,
        env_vars={"ReplierFunction": {"AGENT_GRANT_IDS": "grant-someone-else"}},
        shell_environment={},
    )
    assert other_grant["sent"] == []
    assert [r["reason"] for r in other_grant["logs"] if r["message"] == "notification skipped"] == [
        "grant_not_agent"
    ]
    assert other_grant["environment"].from_file == ("AGENT_GRANT_IDS",)


def test_the_functions_own_entry_wins_over_parameters_and_the_shell():
    result = invoke(
        "ReplierFunction",
        REPLIER_EVENT,
        env_vars={
            "Parameters": {"AGENT_GRANT_IDS": "grant-someone-else"},
            "ReplierFunction": {"AGENT_GRANT_IDS": AGENT_GRANT_ID, "NOT_DECLARED": "x"},
        },
        shell_environment={"AGENT_GRANT_IDS": "grant-from-the-shell"},
    )
    assert len(result["sent"]) == 1
    assert result["environment"].ignored == ("NOT_DECLARED",)


def test_the_shell_environment_is_respected_for_declared_variables():
    result = invoke(
        "ReplierFunction", REPLIER_EVENT, shell_environment={"AGENT_GRANT_IDS": "grant-someone-else"}
    )
    assert result["sent"] == []
    assert result["environment"].from_shell == ("AGENT_GRANT_IDS",)


def test_resolve_environment_follows_sams_precedence_and_stringification():
    resolved = resolve_environment(
        "ReplierFunction",
        {"A": "template", "B": "template", "C": "template", "D": "template"},
        {"Parameters": {"A": "parameters", "B": True}, "ReplierFunction": {"A": "function", "E": "x"}},
        {"C": "shell", "A": "shell", "F": "shell"},
    )
    assert resolved.values == {"A": "function", "B": "true", "C": "shell", "D": "template"}
    assert resolved.ignored == ("E",)


def test_every_value_that_differs_from_the_template_is_listed_with_its_source():
    result = invoke(
        "ReplierFunction",
        REPLIER_EVENT,
        env_vars={"Parameters": {"POWERTOOLS_LOG_LEVEL": "DEBUG"}},
        shell_environment={"REPLY_BUDGET_PER_HOUR": "7"},
    )
    overrides = result["overrides"]
    assert overrides["POWERTOOLS_LOG_LEVEL"] == ("DEBUG", "--env-vars")
    assert overrides["REPLY_BUDGET_PER_HOUR"] == ("7", "shell")
    assert overrides["AGENT_GRANT_IDS"] == (AGENT_GRANT_ID, "local stack")
    assert overrides["NYLAS_API_URI"][1] == "local stack"
    # Nothing else differs from the template (its resources resolved in the embedded AWS).
    values, template = result["environment"].values, result["template_environment"]
    assert {name for name in values if values[name] != template[name]} == set(overrides)


def test_a_log_level_from_the_environment_reaches_the_functions_logger():
    from replyonce.observability import logger

    levels = []
    for level in ("DEBUG", "INFO"):
        seen = []
        invoke(
            "ReplierFunction",
            REPLIER_EVENT,
            env_vars={"Parameters": {"POWERTOOLS_LOG_LEVEL": level}},
            shell_environment={},
            log_echo=lambda _raw, _record, seen=seen: seen.append(logger.isEnabledFor(logging.DEBUG)),
        )
        levels.append(set(seen))
    assert levels == [{True}, {False}]


def test_the_sample_webhook_events_need_their_env_vars_file(capsys):
    event = str(EVENTS_DIR / "webhook-message-created.json")
    assert main(["WebhookFunction", event]) == 0
    assert json.loads(capsys.readouterr().out)["statusCode"] == 401  # the template's replay bound
    assert main(["WebhookFunction", event, "--env-vars", str(ENV_VARS_FILE)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["statusCode"] == 200
    overrides = {f"{n}={v} (--env-vars)" for n, v in SAMPLE_EVENTS_ENV_VARS["WebhookFunction"].items()}
    assert f"environment overrides of template.yaml: {', '.join(sorted(overrides))}" in captured.err


def test_invoke_prints_start_end_report_and_the_response(capsys):
    event = str(EVENTS_DIR / "webhook-message-created.json")
    assert main(["WebhookFunction", event, "-n", str(ENV_VARS_FILE)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["statusCode"] == 200
    request_ids = re.findall(r"^START RequestId: (\S+) Version: \$LATEST$", captured.err, re.MULTILINE)
    assert len(request_ids) == 1
    assert f"END RequestId: {request_ids[0]}" in captured.err
    [report] = [line for line in captured.err.splitlines() if line.startswith("REPORT")]
    assert re.fullmatch(
        rf"REPORT RequestId: {request_ids[0]}\s+Duration: [\d.]+ ms\s+Billed Duration: \d+ ms\s+"
        r"Memory Size: 512 MB\s+Max Memory Used: \d+ MB\s+Init Duration: [\d.]+ ms",
        report,
    )
    # The handler's log line, readable, between START and END.
    assert re.search(r"webhook\s+\S+ notification queued", captured.err)


def test_env_vars_from_a_file_on_the_command_line(tmp_path, capsys):
    env_file = tmp_path / "env.json"
    env_file.write_text(json.dumps({"ReplierFunction": {"AGENT_GRANT_IDS": "grant-someone-else"}}))
    assert (
        main(
            ["ReplierFunction", str(EVENTS_DIR / "replier-message-created.json"), "--env-vars", str(env_file)]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "AGENT_GRANT_IDS=grant-someone-else (--env-vars)" in err
    assert "emails sent: none" in err


@pytest.mark.parametrize(
    ("content", "function", "complaint"),
    [
        ("not json", "WebhookFunction", r"error: event file \S+ is not JSON: Expecting value"),
        ("[1, 2]", "WebhookFunction", "error: the event must be a JSON object, not list"),
        ('{"body": "x"}', "WebhookFunction", "error: WebhookFunction takes an API Gateway proxy event"),
        ('{"httpMethod": "POST"}', "ReplierFunction", "error: ReplierFunction takes an SQS event"),
        ('{"Records": [{"messageId": "m"}]}', "ReplierFunction", r"error: Records\[0\] is not an SQS record"),
    ],
)
def test_a_bad_event_gets_one_line_and_exit_1(tmp_path, capsys, content, function, complaint):
    event = tmp_path / "event.json"
    event.write_text(content)
    assert main([function, str(event)]) == 1
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert re.match(complaint, line)
    assert captured.out == ""


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("{", "is not JSON"),
        ('{"ReplierFunction": "AGENT_GRANT_IDS=x"}', "must look like"),
    ],
)
def test_a_bad_env_vars_file_gets_one_line_and_exit_1(tmp_path, capsys, content, complaint):
    env_file = tmp_path / "env.json"
    env_file.write_text(content)
    assert (
        main(["ReplierFunction", str(EVENTS_DIR / "replier-message-created.json"), "-n", str(env_file)]) == 1
    )
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: --env-vars file")
    assert complaint in line


def test_a_missing_event_file_gets_one_line(capsys):
    assert main(["WebhookFunction", "events/no-such-event.json"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == "error: cannot read event file events/no-such-event.json: No such file or directory"


def test_a_replier_that_cannot_start_sends_every_record_back_with_one_line(tmp_path, capsys):
    env_file = tmp_path / "env.json"
    env_file.write_text(json.dumps({"ReplierFunction": {"REPLY_BUDGET_PER_HOUR": "0"}}))
    event = EVENTS_DIR / "replier-message-created.json"
    assert main(["ReplierFunction", str(event), "-n", str(env_file)]) == 0
    captured = capsys.readouterr()
    records = json.loads(event.read_text())["Records"]
    assert json.loads(captured.out) == {
        "batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records]
    }
    assert "replier cannot start: configuration error" in captured.err
    assert "REPLY_BUDGET_PER_HOUR must be" in captured.err
    assert "Traceback" not in captured.err


def test_a_raising_handler_is_reported_as_lambda_does(monkeypatch, capsys):
    # No handler of ours raises (each answers what Nylas or SQS retries): a stand-in one does.
    def raising(event, context):
        raise RuntimeError("the function crashed")

    monkeypatch.setattr("devstack.invoke.load_handler", lambda logical_id, template=None: raising)
    assert main(["ReplierFunction", str(EVENTS_DIR / "replier-message-created.json")]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"errorType": "RuntimeError", "errorMessage": "the function crashed"}
    assert "Traceback" not in captured.err
    assert "REPORT RequestId:" in captured.err


def test_the_event_can_come_from_standard_input(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO((EVENTS_DIR / "webhook-challenge.json").read_text()))
    assert main(["WebhookFunction", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["statusCode"] == 200


@pytest.mark.parametrize("event", ["replier-message-created.json", "replier-duplicate-batch.json"])
def test_a_replier_invocation_sets_its_records_visibility_without_a_warning(event, capsys):
    # The event file's receipt handles are made up; each record is received from the local queue
    # first, so a deferral's ChangeMessageVisibility works as it does deployed.
    code = main(["ReplierFunction", str(EVENTS_DIR / event), "-n", str(ENV_VARS_FILE)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "ReceiptHandleIsInvalid" not in err
    assert "could not set the record's visibility" not in err
