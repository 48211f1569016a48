"""make serve's control routes answer every mistake with a status and one sentence (no server needed)."""

import json

import pytest

from devstack.control import MailControl
from devstack.webhook_sender import WebhookSender


@pytest.fixture
def real_nylas_control():
    """The control routes of a `make serve` pointed at the real Nylas API: no emulator."""
    control = MailControl(None, WebhookSender("http://127.0.0.1:9/v1/webhook", "secret"))
    yield control
    control.close()


def test_against_real_nylas_mail_in_says_what_to_do_instead(real_nylas_control):
    status, answer = real_nylas_control.handle("POST", "/_local/mail", b'{"from_email": "a@example.com"}')
    assert status == 409
    assert answer["error"].endswith("send an email to the agent's address instead")
    assert real_nylas_control.handle("GET", "/_local/health", b"")[1]["nylas"] == "real"


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "error"),
    [
        ("POST", "/_local/mail", b"{not json", 400, "the request body is not JSON"),
        ("POST", "/_local/mail", b"[1]", 400, "the request body must be a JSON object"),
        (
            "POST",
            "/_local/notify",
            b'{"unknown": true, "copies": 0}',
            400,
            "copies must be a whole number from 1 to 20",
        ),
        (
            "POST",
            "/_local/notify",
            b'{"unknown": true, "notification_type": "grant.created"}',
            400,
            "notification_type must be one of message.created, message.created.truncated, message.updated",
        ),
        ("DELETE", "/_local/mail", b"", 404, "no control route DELETE /_local/mail"),
    ],
)
def test_mistakes_get_a_status_and_a_sentence(real_nylas_control, method, path, body, status, error):
    assert real_nylas_control.handle(method, path, body) == (status, {"error": error})


def test_a_failure_inside_a_route_is_one_line_not_a_traceback():
    class StoppedEmulator:
        url = "http://127.0.0.1:9"  # nothing listens: the emulator went away
        on_message_created = None

    control = MailControl(StoppedEmulator(), WebhookSender("http://127.0.0.1:9/v1/webhook", "secret"))
    try:
        status, answer = control.handle("GET", "/_local/threads/thread-1", b"")
    finally:
        control.close()
    assert status == 503
    assert answer["error"].startswith("the local stack could not do that: ConnectionError")


def test_an_agent_failure_is_reported_with_its_retry_once_the_deferral_is_logged():
    # The replier logs the failure, then the deferral that says when the record comes back; `make mail`
    # polling between the two must wait, not print a failure with no retry in it.
    from devstack.stack import LogCollector

    logs = LogCollector()
    control = MailControl(None, WebhookSender("http://127.0.0.1:9/v1/webhook", "secret"), logs=logs)
    try:
        failed = {"message": "the agent failed; the record will be retried", "notification_id": "n-1"}
        logs.write(json.dumps({**failed, "detail": "RuntimeError: down"}) + "\n")
        assert control.agent_failure("n-1") is None
        deferral = {"message": "record deferred; it will be retried", "notification_id": "n-1"}
        logs.write(json.dumps({**deferral, "receives": 1, "retry_in_seconds": 4}) + "\n")
        failure = control.agent_failure("n-1")
    finally:
        control.close()
    assert failure is not None
    assert (failure["detail"], failure["receives"], failure["retry_in_seconds"]) == (
        "RuntimeError: down",
        1,
        4,
    )
