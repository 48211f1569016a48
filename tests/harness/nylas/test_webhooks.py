"""Contract: webhook destinations -- create (with the challenge), list, get, delete, rotate the secret.

Sources: https://developer.nylas.com/docs/v3/notifications/ (the challenge: a GET of
``webhook_url?challenge=...`` answered 200 with the exact value, not chunked, within 10 s, never
retried; a failed one fails the create with 400; the secret is returned by create and rotate only),
https://developer.nylas.com/docs/reference/api/webhook-notifications/ (the routes; delete answers
``{"status": "success"}``), https://developer.nylas.com/docs/reference/api/webhook-notifications/post-new-secret/
(no overlap window) and https://developer.nylas.com/docs/reference/notifications/ (the trigger names).
"""

import time

import pytest
import requests

from devstack.nylas import TRIGGER_TYPES, Fault, NylasEmulator
from tests.harness.nylas.client import TIMEOUT, auth, call, echo, error_of, get


def create_webhook(nylas: NylasEmulator, url: str, **fields) -> requests.Response:
    body = {
        "trigger_types": ["message.created"],
        "webhook_url": url,
        "description": "test",
        "notification_email_addresses": ["ops@example.com"],
        **fields,
    }
    return requests.post(f"{nylas.url}/v3/webhooks", json=body, headers=auth(), timeout=TIMEOUT + 10)


def test_create_webhook_gets_the_challenge_answered_then_returns_the_secret(nylas, endpoint):
    server = endpoint(echo)

    response = create_webhook(nylas, server.url)

    assert response.status_code == 200
    data = response.json()["data"]
    assert data["webhook_url"] == server.url
    assert data["trigger_types"] == ["message.created"]
    assert data["notification_email_addresses"] == ["ops@example.com"]
    assert data["status"] == "active"
    assert len(data["webhook_secret"]) == 64
    [query] = server.queries  # exactly one challenge, before the answer
    assert nylas.challenges == [
        {
            "url": f"{server.url}?challenge={query['challenge'][0]}",
            "status": 200,
            "verified": True,
            "error": None,
        }
    ]
    assert nylas.webhooks() == [data]


def test_create_webhook_keeps_the_urls_own_query(nylas, endpoint):
    server = endpoint(echo)

    assert create_webhook(nylas, server.url + "?tenant=acme").status_code == 200

    assert set(server.queries[0]) == {"tenant", "challenge"}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda c: (404, b"not here", False), "unable.verify.webhook_url : status is not ok, got 404"),
        (
            lambda c: (200, f'"{c}"'.encode(), False),
            "unable.verify.webhook_url : challenge response does not match",
        ),
        (
            lambda c: (200, c.encode(), True),
            "unable.verify.webhook_url : chunked transfer encoding is not supported",
        ),
        (lambda c: (302, b"", False), "unable.verify.webhook_url : status is not ok, got 302"),
    ],
    ids=["404", "quoted body", "chunked", "redirect"],
)
def test_create_webhook_fails_with_400_when_the_challenge_fails(nylas, endpoint, answer, message):
    server = endpoint(answer)

    response = create_webhook(nylas, server.url)

    assert response.status_code == 400
    assert error_of(response) == {"type": "70005", "message": message}
    assert nylas.webhooks() == []
    assert nylas.challenges[0]["verified"] is False


def test_create_webhook_fails_when_the_challenge_is_not_answered_in_time(nylas, endpoint):
    nylas.challenge_timeout_seconds = 0.3

    def slow(challenge: str) -> tuple[int, bytes, bool]:
        time.sleep(1.0)
        return echo(challenge)

    started = time.monotonic()
    response = create_webhook(nylas, endpoint(slow).url)

    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("unable.verify.webhook_url : ")
    assert time.monotonic() - started < 1.0  # gave up at the timeout, did not wait for the answer
    assert nylas.webhooks() == []


def test_create_webhook_fails_when_nothing_listens(nylas, endpoint):
    server = endpoint(echo)
    server.stop()

    response = create_webhook(nylas, server.url)

    assert response.status_code == 400
    assert "request failed" in response.json()["error"]["message"]


def test_create_webhook_never_reaches_beyond_loopback(nylas):
    response = create_webhook(nylas, "https://webhooks.example.com/v1/webhook")

    assert response.status_code == 400
    assert response.json()["error"]["message"].endswith("the emulator only reaches loopback addresses")
    assert nylas.challenges[0]["status"] == 0  # no request was made


@pytest.mark.parametrize(
    "fields",
    [{"trigger_types": []}, {"webhook_url": "ftp://127.0.0.1/x"}, {"notification_email_addresses": "a@b"}],
    ids=["no triggers", "not http", "emails not a list"],
)
def test_create_webhook_validates_the_request_before_any_challenge(nylas, fields):
    response = create_webhook(nylas, "http://127.0.0.1:9/v1/webhook", **fields)

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert nylas.challenges == []


def test_webhook_routes_need_the_api_key(nylas):
    response = requests.post(f"{nylas.url}/v3/webhooks", json={}, headers=auth("wrong"), timeout=TIMEOUT)

    assert response.status_code == 401


def test_get_webhook_never_returns_the_secret(nylas, endpoint):
    created = create_webhook(nylas, endpoint(echo).url).json()["data"]

    response = get(nylas, f"/v3/webhooks/{created['id']}")

    assert response.status_code == 200
    assert response.json()["data"] == {k: v for k, v in created.items() if k != "webhook_secret"}
    assert get(nylas, "/v3/webhooks/unknown").status_code == 404


def test_rotate_secret_returns_a_new_secret_and_forgets_the_old(nylas, endpoint, clock):
    created = create_webhook(nylas, endpoint(echo).url).json()["data"]
    clock.advance(60)

    response = requests.post(
        f"{nylas.url}/v3/webhooks/rotate-secret/{created['id']}", headers=auth(), timeout=TIMEOUT
    )

    assert response.status_code == 200
    rotated = response.json()["data"]
    assert rotated["id"] == created["id"]
    assert rotated["webhook_secret"] != created["webhook_secret"]
    assert rotated["updated_at"] == created["updated_at"] + 60
    assert nylas.webhook(created["id"])["webhook_secret"] == rotated["webhook_secret"]
    unknown = requests.post(f"{nylas.url}/v3/webhooks/rotate-secret/unknown", headers=auth(), timeout=TIMEOUT)
    assert unknown.status_code == 404


def test_faults_can_be_injected_on_webhook_routes(nylas, endpoint):
    nylas.inject("POST", r"^/v3/webhooks$", Fault.status(503))

    assert create_webhook(nylas, endpoint(echo).url).status_code == 503
    assert nylas.challenges == []  # answered without processing
    assert create_webhook(nylas, endpoint(echo).url).status_code == 200


def test_reset_forgets_webhooks_and_challenges(nylas, endpoint):
    create_webhook(nylas, endpoint(echo).url)

    nylas.reset()

    assert nylas.webhooks() == []
    assert nylas.challenges == []


def test_list_webhooks_returns_every_destination_without_its_secret(nylas, endpoint):
    first = create_webhook(nylas, endpoint(echo).url).json()["data"]
    second = create_webhook(nylas, endpoint(echo).url, trigger_types=["message.send_failed"]).json()["data"]

    response = get(nylas, "/v3/webhooks")

    assert response.status_code == 200
    assert response.json()["request_id"]
    listed = response.json()["data"]
    assert [w["id"] for w in listed] == [first["id"], second["id"]]
    assert all("webhook_secret" not in w for w in listed)


def test_delete_webhook_answers_success_and_forgets_it(nylas, endpoint):
    created = create_webhook(nylas, endpoint(echo).url).json()["data"]

    deleted = call(nylas, "DELETE", f"/v3/webhooks/{created['id']}")

    assert deleted.status_code == 200
    assert deleted.json()["data"] == {"status": "success"}
    assert nylas.webhooks() == []
    assert get(nylas, f"/v3/webhooks/{created['id']}").status_code == 404
    assert call(nylas, "DELETE", f"/v3/webhooks/{created['id']}").status_code == 404


def test_create_webhook_accepts_the_documented_triggers_and_refuses_others(nylas, endpoint):
    triggers = [
        "message.created",
        "message.updated",
        "message.send_failed",
        "message.delivered",
        "message.bounced",
        "message.complaint",
        "message.rejected",
    ]
    assert set(triggers) <= TRIGGER_TYPES
    assert create_webhook(nylas, endpoint(echo).url, trigger_types=triggers).status_code == 200

    refused = create_webhook(
        nylas, "http://127.0.0.1:9/v1/webhook", trigger_types=["message.created.truncated"]
    )

    assert refused.status_code == 400
    assert "message.created.truncated" in error_of(refused)["message"]
    assert len(nylas.challenges) == 1  # refused before any challenge
