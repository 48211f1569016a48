"""Harness contract: a grant's life in the emulator, as Nylas documents it (devstack/nylas/grant_life.py cites
each source): the four notifications and their ``data.object``, an expired grant's ``401`` and held mail,
the re-authentication's replay (or not), a deleted grant's refusal (``404`` or ``401``); from Python and
over the control route."""

import pytest

from tests.harness.nylas.client import CUSTOMER, GRANT, control, error_of, get, inbound, send

NEW_GRANT = "grant-new"


@pytest.fixture
def fired(nylas):
    heard: list[tuple[str, dict]] = []
    created: list[dict] = []
    nylas.on_notification = lambda trigger, data: heard.append((trigger, data))
    nylas.on_message_created = created.append
    return heard, created


def test_a_created_grant_is_notified_with_the_documented_object(nylas, fired):
    heard, _ = fired
    nylas.create_grant(NEW_GRANT, "new@example.com", name="New Desk")
    [(trigger, data)] = heard
    assert trigger == "grant.created"
    obj = data["object"]
    assert (obj["grant_id"], obj["email"], obj["provider"], obj["name"]) == (
        NEW_GRANT,
        "new@example.com",
        "nylas",
        "New Desk",
    )
    assert {"integration_id", "login_id", "scope", "code"} <= set(obj)
    assert data["application_id"]
    assert get(nylas, f"/v3/grants/{NEW_GRANT}").json()["data"]["grant_status"] == "valid"


def test_an_expired_grant_answers_401_holds_its_mail_and_replays_it_on_re_authentication(nylas, fired):
    heard, created = fired
    nylas.expire_grant(GRANT)
    assert heard[-1][0] == "grant.expired"
    assert "grant_updated_at" in heard[-1][1]["object"]
    # Its data refused; the grant itself still answers, invalid.
    refused = get(nylas, f"/v3/grants/{GRANT}/messages")
    assert refused.status_code == 401
    assert error_of(refused)["type"] == "unauthorized"
    assert get(nylas, f"/v3/grants/{GRANT}").json()["data"]["grant_status"] == "invalid"
    assert send(nylas, {"to": [{"email": CUSTOMER}], "body": "hi"}).status_code == 401
    # Mail arriving meanwhile is stored by the provider, not notified.
    held = inbound(nylas, subject="While expired")
    assert created == []
    nylas.reauthenticate_grant(GRANT)
    trigger, data = heard[-1]
    assert trigger == "grant.updated"
    assert data["object"]["reauthentication_flag"] is True
    assert data["object"]["code"] == 25027
    assert [m["id"] for m in created] == [held["id"]]  # replayed, as the sync-failures page says
    assert get(nylas, f"/v3/grants/{GRANT}/messages").status_code == 200


def test_the_other_reading_held_mail_is_never_notified(nylas, fired):
    _, created = fired
    nylas.modes.reauthentication_replays = False
    nylas.expire_grant(GRANT)
    inbound(nylas, subject="While expired")
    nylas.reauthenticate_grant(GRANT)
    assert created == []


@pytest.mark.parametrize(("answer", "status"), [("not_found", 404), ("unauthorized", 401)])
def test_a_deleted_grant_is_refused_and_never_re_authenticated(nylas, fired, answer, status):
    heard, created = fired
    nylas.modes.deleted_grant_answer = answer
    nylas.delete_grant(GRANT)
    assert heard[-1][0] == "grant.deleted"
    assert heard[-1][1]["object"]["code"] == 25013
    assert get(nylas, f"/v3/grants/{GRANT}").status_code == status
    assert send(nylas, {"to": [{"email": CUSTOMER}], "body": "hi"}).status_code == status
    inbound(nylas, subject="After deletion")
    assert created == []
    with pytest.raises(KeyError, match="deleted"):
        nylas.reauthenticate_grant(GRANT)


def test_the_control_route_drives_a_grants_life_from_another_process(nylas, fired):
    heard, _ = fired
    made = control(nylas, "POST", f"grants/{NEW_GRANT}/create", json={"email": "new@example.com"})
    assert made.status_code == 200
    assert made.json()["data"] == {"grant_id": NEW_GRANT, "state": "valid"}
    for action, state in (("expire", "expired"), ("reauthenticate", "valid"), ("delete", "deleted")):
        answer = control(nylas, "POST", f"grants/{NEW_GRANT}/{action}")
        assert answer.json()["data"]["state"] == state
    assert [t for t, _ in heard] == ["grant.created", "grant.expired", "grant.updated", "grant.deleted"]
    assert control(nylas, "POST", f"grants/{NEW_GRANT}/reauthenticate").status_code == 409
    assert control(nylas, "POST", "grants/nobody/expire").status_code == 404
    assert control(nylas, "POST", f"grants/{NEW_GRANT}/create", json={}).status_code == 400
    assert nylas.requests == []  # not Nylas requests
