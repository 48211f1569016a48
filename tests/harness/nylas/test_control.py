"""Harness contract: the ``/_emulator/`` control routes a local stack or a chaos worker (another
process) drives the emulator with -- the same as the Python API, over HTTP, without auth."""

from urllib.parse import quote

import pytest

from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    OTHER_EMAIL,
    OTHER_GRANT,
    control,
    get,
    header_names,
    inbound,
    reply_to,
    response_date,
    send,
)


def test_control_inbound_stores_and_announces_a_message_without_auth(nylas):
    created: list[dict] = []
    nylas.on_message_created = created.append

    response = control(
        nylas,
        "POST",
        "inbound",
        json={
            "grant_id": AGENT_EMAIL,  # the grant's address works like in the API path
            "from_email": CUSTOMER,
            "from_name": "Cus Tomer",
            "subject": "Order 42",
            "body": "Where is it?",
            "headers": [{"name": "Auto-Submitted", "value": "auto-replied"}],
            "reply_to": [{"email": "desk@example.com"}],
            "date": 1234,
        },
    )

    assert response.status_code == 201
    data = response.json()["data"]
    assert data["grant_id"] == GRANT
    assert data["from"] == [{"name": "Cus Tomer", "email": CUSTOMER}]
    assert data["reply_to"] == [{"name": "", "email": "desk@example.com"}]
    assert data["date"] == 1234
    assert header_names(data) == ["Message-ID", "Auto-Submitted"]
    assert [m["id"] for m in created] == [data["id"]]
    assert "headers" not in created[0]
    assert nylas.requests == []  # not a Nylas request

    follow_up = control(
        nylas,
        "POST",
        "inbound",
        json={"grant_email": AGENT_EMAIL, "from_email": CUSTOMER, "reply_to_message_id": data["id"]},
    )
    assert follow_up.status_code == 201
    assert follow_up.json()["data"]["thread_id"] == data["thread_id"]


def test_control_thread_lists_messages_in_arrival_order_with_headers(nylas):
    first = inbound(nylas, date=2000)
    reply = send(nylas, reply_to(first)).json()["data"]
    late = inbound(nylas, reply_to_message_id=reply["id"], date=1000)

    response = control(nylas, "GET", f"threads/{quote(first['thread_id'], safe='')}")

    assert response.status_code == 200
    messages = response.json()["data"]
    assert [m["id"] for m in messages] == [first["id"], reply["id"], late["id"]]
    assert all(header_names(m)[0] == "Message-ID" for m in messages)
    missing = control(nylas, "GET", "threads/thread-nope")
    assert missing.status_code == 404
    assert "thread-nope" in missing.json()["error"]["message"]


def test_control_clock_advances_the_emulator_clock(nylas, clock):
    response = control(nylas, "POST", "clock", json={"advance_seconds": 90})

    assert response.status_code == 200
    assert response.json()["data"]["now"] == clock.now + 90
    assert response_date(get(nylas, f"/v3/grants/{GRANT}")) == clock.now + 90
    for body in ({"advance_seconds": -5}, {"advance_seconds": "90"}, {"seconds": 90}, [90]):
        bad = control(nylas, "POST", "clock", json=body)
        assert bad.status_code == 400
        assert bad.json()["error"]["type"] == "invalid_request_error"
    assert nylas.now() == clock.now + 90


@pytest.mark.parametrize(
    ("body", "status", "wording"),
    [
        (b"not json", 400, "JSON object"),
        ({"grant_id": GRANT, "subject": "no sender"}, 400, "from_email"),
        ({"from_email": CUSTOMER}, 400, "grant_id"),
        ({"grant_id": "grant-nobody", "from_email": CUSTOMER}, 404, "grant-nobody"),
        ({"grant_id": GRANT, "from_email": CUSTOMER, "reply_to_message_id": "msg-nope"}, 404, "msg-nope"),
        ({"grant_id": GRANT, "from_email": CUSTOMER, "form_name": "typo"}, 400, "form_name"),
        ({"grant_id": GRANT, "from_email": CUSTOMER, "date": "yesterday"}, 400, "date"),
        ({"grant_id": GRANT, "from_email": CUSTOMER, "headers": [{"name": "X"}]}, 400, "headers"),
        ({"grant_id": GRANT, "from_email": CUSTOMER, "reply_to": [{"name": "n"}]}, 400, "reply_to"),
    ],
    ids=[
        "not json",
        "no sender",
        "no grant",
        "unknown grant",
        "unknown parent",
        "unknown field",
        "bad date",
        "bad headers",
        "bad reply_to",
    ],
)
def test_control_inbound_rejects_bad_input_and_stores_nothing(nylas, body, status, wording):
    kwargs = {"data": body} if isinstance(body, bytes) else {"json": body}

    response = control(nylas, "POST", "inbound", **kwargs)

    assert response.status_code == status
    assert wording in response.json()["error"]["message"]
    assert nylas.mailbox() == []


def test_control_inbound_reports_a_failed_callback_and_keeps_the_message(nylas):
    def broken(message: dict) -> None:
        raise RuntimeError("webhook down")

    nylas.on_message_created = broken

    response = control(nylas, "POST", "inbound", json={"grant_id": GRANT, "from_email": CUSTOMER})

    assert response.status_code == 502
    body = response.json()
    assert "webhook down" in body["error"]["message"]
    [(_, stored)] = nylas.mailbox()
    assert body["data"]["id"] == stored["id"]


def test_unknown_control_route_is_404(nylas):
    assert control(nylas, "GET", "inbound").status_code == 404
    assert control(nylas, "POST", "nothing").status_code == 404


def test_control_inbound_files_into_a_folder_and_into_several_mailboxes(nylas):
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL)

    response = control(
        nylas,
        "POST",
        "inbound",
        json={"grant_id": GRANT, "from_email": CUSTOMER, "folder": "junk", "also_to": [OTHER_GRANT]},
    )

    assert response.status_code == 201
    body = response.json()
    assert body["data"]["folders"] == ["junk"]
    [copy] = body["copies"]
    assert copy["grant_id"] == OTHER_GRANT
    for bad in ({"folder": "sent"}, {"also_to": OTHER_GRANT}, {"notify": "yes"}):
        assert (
            control(
                nylas, "POST", "inbound", json={"grant_id": GRANT, "from_email": CUSTOMER, **bad}
            ).status_code
            == 400
        )


def test_control_modes_reads_sets_and_resets_the_modes(nylas):
    assert control(nylas, "GET", "modes").json()["data"]["listing_order"] == "arrival"

    changed = control(nylas, "POST", "modes", json={"listing_order": "date", "latency": {"send": [0.5, 3]}})

    assert changed.status_code == 200
    assert changed.json()["data"]["latency"] == {"send": [0.5, 3.0]}
    assert nylas.modes.listing_order == "date"
    for bad in ({"listing_order": "random"}, {"no_such_mode": 1}, {"queue_fail_fraction": 2}, [1]):
        refused = control(nylas, "POST", "modes", json=bad)
        assert refused.status_code == 400
        assert refused.json()["error"]["message"]
    both = control(nylas, "POST", "modes", json={"custom_headers": "drop", "listing_order": "sideways"})
    assert both.status_code == 400
    assert nylas.modes.custom_headers == "accept"  # a bad request changes nothing
    limited = {"account_limit_shape": "rate_limit", "account_limit": "daily_quota"}
    assert control(nylas, "POST", "modes", json=limited).status_code == 200  # order does not matter
    assert control(nylas, "DELETE", "modes").json()["data"]["account_limit"] is None
    assert nylas.modes.listing_order == "arrival"


def test_control_queue_lists_and_releases_queued_sends(nylas):
    nylas.modes.send_queue = True
    message = inbound(nylas)
    queued = send(nylas, reply_to(message), key="k").json()["data"]

    listed = control(nylas, "GET", "queue").json()["data"]
    assert [(e["grant_id"], e["idempotency_key"], e["message"]["id"]) for e in listed] == [
        (GRANT, "k", queued["id"])
    ]
    assert control(nylas, "POST", "queue/release", json={"message_ids": ["msg-nope"]}).status_code == 404
    assert control(nylas, "POST", "queue/release", json={"fail": "yes"}).status_code == 400

    released = control(nylas, "POST", "queue/release", json={"fail": True, "reason": "bounced"})

    assert released.json()["data"] == {"released": [queued["id"]]}
    assert [r.message["id"] for r in nylas.failed_sends] == [queued["id"]]
    assert control(nylas, "GET", "queue").json()["data"] == []


def test_control_faults_injects_any_fault_by_its_builder(nylas):
    injected = control(
        nylas,
        "POST",
        "faults",
        json={
            "method": "post",
            "path_regex": "/messages/send$",
            "fault": {"kind": "provider_error", "sent": True},
        },
    )

    assert injected.status_code == 201
    assert send(nylas, reply_to(inbound(nylas)), key="k").status_code == 504
    assert len(nylas.sends) == 1
    for bad in (
        {"method": "GET", "path_regex": ".*", "fault": {"kind": "explode"}},
        {"method": "GET", "path_regex": ".*", "fault": {"kind": "status", "code": 99}},
        {"method": "GET", "path_regex": "(", "fault": {"kind": "lose_response"}},
        {"method": "GET", "path_regex": ".*", "fault": {"kind": "delay", "minutes": 1}},
        {"path_regex": ".*", "fault": {"kind": "lose_response"}},
    ):
        assert control(nylas, "POST", "faults", json=bad).status_code == 400
    assert nylas.requests == [("POST", f"/v3/grants/{GRANT}/messages/send")]
