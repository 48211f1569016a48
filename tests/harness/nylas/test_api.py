"""Contract: what every Nylas call shares -- bearer auth, the error envelope, the grant, the clock.

Sources: https://developer.nylas.com/docs/api/v3/ (``Authorization: Bearer <NYLAS_API_KEY>``; the
``{grant_id}`` segment also takes the grant's email address), https://developer.nylas.com/docs/api/errors/
(``{"request_id", "error": {"type", "message"}}``), and
https://developer.nylas.com/docs/reference/api/manage-grants/get_grant_by_id/.
"""

import pytest
import requests

from devstack.nylas import IDEMPOTENCY_TTL_SECONDS, Fault, NylasEmulator
from tests.harness.nylas.client import (
    AGENT_EMAIL,
    API_KEY,
    GRANT,
    SEND_PATH,
    TIMEOUT,
    auth,
    error_of,
    get,
    inbound,
    reply_to,
    response_date,
    send,
)


def test_serves_on_an_ephemeral_loopback_port_until_stopped():
    # Harness: the emulator binds loopback only, so nothing outside this machine can reach it.
    emulator = NylasEmulator().start()
    url = emulator.url
    host, port = url.removeprefix("http://").split(":")
    assert host == "127.0.0.1"
    assert int(port) > 0
    emulator.add_grant("g", "a@example.com")
    assert requests.get(f"{url}/v3/grants/g", headers=auth(), timeout=TIMEOUT).status_code == 200
    emulator.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/v3/grants/g", headers=auth(), timeout=TIMEOUT)


@pytest.mark.parametrize("headers", [{}, auth("wrong-key"), {"Authorization": API_KEY}])
def test_missing_or_wrong_bearer_token_is_401_unauthorized(nylas, headers):
    """A call without ``Bearer <API key>`` is ``401`` ``unauthorized`` in the error envelope."""
    response = requests.get(f"{nylas.url}/v3/grants/{GRANT}", headers=headers, timeout=TIMEOUT)

    assert response.status_code == 401
    assert response.headers["Content-Type"] == "application/json"
    assert error_of(response)["type"] == "unauthorized"


def test_an_unauthorized_send_sends_nothing(nylas):
    message = inbound(nylas)
    response = requests.post(
        f"{nylas.url}{SEND_PATH}", json=reply_to(message), headers=auth("wrong"), timeout=TIMEOUT
    )

    assert response.status_code == 401
    assert nylas.sends == []


def test_get_grant_by_id_or_email_and_an_unknown_grant_is_404(nylas):
    """``GET /v3/grants/{grant_id}``: ``{request_id, data: {id, email, provider: "nylas", grant_status,
    name, ...}}``; the segment may be the grant's address; an Agent Account's provider is ``nylas``."""
    for segment in (GRANT, AGENT_EMAIL):
        response = get(nylas, f"/v3/grants/{segment}")
        assert response.status_code == 200
        body = response.json()
        assert body["request_id"]
        assert {k: body["data"][k] for k in ("id", "email", "name", "provider", "grant_status")} == {
            "id": GRANT,
            "email": AGENT_EMAIL,
            "name": "Support Agent",
            "provider": "nylas",
            "grant_status": "valid",
        }
    missing = get(nylas, "/v3/grants/grant-nobody")
    assert missing.status_code == 404
    assert error_of(missing)["type"] == "not_found_error"


def test_an_unknown_route_is_404_not_found_error(nylas):
    response = get(nylas, f"/v3/grants/{GRANT}/calendars")

    assert response.status_code == 404
    assert error_of(response)["type"] == "not_found_error"


# ---- Nylas' clock: the HTTP Date header -----------------------------------------------------------


def test_every_response_has_a_date_header_from_the_emulator_clock(nylas, clock):
    """Every HTTP answer carries ``Date`` (RFC 9110); Nylas' time is the emulator's, not this machine's."""
    clock.now = 1_000_000_000.0  # 2001: far from this machine's clock
    assert response_date(get(nylas, f"/v3/grants/{GRANT}")) == clock.now
    unauthorized = requests.get(f"{nylas.url}/v3/grants/{GRANT}", timeout=TIMEOUT)
    assert response_date(unauthorized) == clock.now
    nylas.inject("GET", r".*", Fault.status(503))
    assert response_date(get(nylas, f"/v3/grants/{GRANT}")) == clock.now


def test_advance_clock_moves_dates_the_date_header_and_the_keys_hour(nylas, clock):
    # Harness: advance_clock stands for time passing at Nylas; reset() puts it back.
    message = inbound(nylas)
    first = send(nylas, reply_to(message), key="hourly")

    assert nylas.advance_clock(IDEMPOTENCY_TTL_SECONDS) == clock.now + IDEMPOTENCY_TTL_SECONDS
    later = send(nylas, reply_to(message), key="hourly")
    assert "Idempotent-Response" not in later.headers  # the key's hour is over: a new send
    assert len(nylas.sends) == 2
    assert later.json()["data"]["date"] == first.json()["data"]["date"] + IDEMPOTENCY_TTL_SECONDS
    assert response_date(later) == clock.now + IDEMPOTENCY_TTL_SECONDS
    assert nylas.now() == clock.now + IDEMPOTENCY_TTL_SECONDS
    with pytest.raises(ValueError, match="advance_seconds"):
        nylas.advance_clock(-1)

    nylas.reset()
    assert nylas.now() == clock.now


def test_reset_forgets_everything_and_turns_every_mode_off(nylas):
    # Harness: one emulator serves a whole session; reset() must leave nothing behind.
    message = inbound(nylas)
    send(nylas, reply_to(message), key="k")
    nylas.inject("GET", r".*", Fault.status(500))
    nylas.modes.update({"send_queue": True, "listing_order": "date", "latency": {"send": [0, 0]}})
    nylas.webhook_includes_headers = True
    hooked = []
    nylas.on_message_created = hooked.append

    nylas.reset()

    assert nylas.sends == []
    assert nylas.requests == []
    assert nylas.modes.to_json() == type(nylas.modes)().to_json()
    assert nylas.send_accepts_with_202 is False
    assert nylas.webhook_includes_headers is False
    assert nylas.on_message_created == hooked.append  # wiring is kept
    assert get(nylas, f"/v3/grants/{GRANT}").status_code == 404  # grant gone, fault gone
    assert nylas.requests == [("GET", f"/v3/grants/{GRANT}")]
    nylas.add_grant(GRANT, AGENT_EMAIL)
    again = send(nylas, {"to": [{"email": "c@example.com"}], "subject": "s", "body": "b"}, key="k")
    assert again.status_code == 200  # neither 202 nor a replay of the old key
    assert "Idempotent-Response" not in again.headers
