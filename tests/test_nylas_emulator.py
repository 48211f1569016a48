"""The Nylas emulator behaves like the documented Nylas v3 API, over real HTTP on loopback.

Why these tests matter: every exactly-once test of ReplyOnce counts sends through this emulator. If
the emulator replayed too eagerly, or never reported a lost response, those tests would prove
nothing. So each documented behaviour is checked here from the client's side, with ``requests``.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from email.utils import parsedate_to_datetime
from urllib.parse import quote

import pytest
import requests

from devstack.nylas import IDEMPOTENCY_TTL_SECONDS, Fault, NylasEmulator

API_KEY = "test-api-key"
GRANT = "grant-agent"
AGENT_EMAIL = "agent@example.com"
CUSTOMER = "customer@example.com"
SEND_PATH = f"/v3/grants/{GRANT}/messages/send"
TIMEOUT = 5


class FakeClock:
    """A settable clock, so the one-hour key TTL is tested without waiting an hour."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def nylas(clock):
    with NylasEmulator(api_key=API_KEY, clock=clock) as emulator:
        emulator.add_grant(GRANT, AGENT_EMAIL, name="Support Agent")
        yield emulator


def auth(key: str = API_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def get(nylas: NylasEmulator, path: str, **kwargs) -> requests.Response:
    return requests.get(f"{nylas.url}{path}", headers=auth(), timeout=TIMEOUT, **kwargs)


def send(
    nylas: NylasEmulator, payload: dict, key: str | None = None, grant: str = GRANT
) -> requests.Response:
    headers = auth()
    if key is not None:
        headers["Idempotency-Key"] = key
    return requests.post(
        f"{nylas.url}/v3/grants/{grant}/messages/send", json=payload, headers=headers, timeout=TIMEOUT
    )


def reply_to(message: dict, body: str = "Thanks, we are on it.") -> dict:
    return {
        "to": [{"name": "Customer", "email": message["from"][0]["email"]}],
        "subject": "Re: " + message["subject"],
        "body": body,
        "reply_to_message_id": message["id"],
    }


def inbound(nylas: NylasEmulator, **kwargs) -> dict:
    fields = {"from_email": CUSTOMER, "subject": "Order 42", "body": "<p>Where is my order?</p>", **kwargs}
    return nylas.deliver_inbound(GRANT, **fields)


# ---- lifecycle and auth ---------------------------------------------------------------------------


def test_serves_on_an_ephemeral_loopback_port_until_stopped():
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
def test_missing_or_wrong_bearer_token_is_401(nylas, headers):
    response = requests.get(f"{nylas.url}/v3/grants/{GRANT}", headers=headers, timeout=TIMEOUT)
    assert response.status_code == 401
    body = response.json()
    assert body["error"]["type"] == "unauthorized"
    assert body["error"]["message"]
    assert body["request_id"]


def test_unauthorized_send_sends_nothing(nylas):
    message = inbound(nylas)
    response = requests.post(
        f"{nylas.url}{SEND_PATH}", json=reply_to(message), headers=auth("wrong"), timeout=TIMEOUT
    )
    assert response.status_code == 401
    assert nylas.sends == []


# ---- grants, messages, threads ------------------------------------------------------------------


def test_get_grant_by_id_or_email_and_unknown_grant_is_404(nylas):
    for segment in (GRANT, AGENT_EMAIL):
        response = get(nylas, f"/v3/grants/{segment}")
        assert response.status_code == 200
        data = response.json()["data"]
        assert data["id"] == GRANT
        assert data["email"] == AGENT_EMAIL
        assert data["name"] == "Support Agent"
        assert data["provider"] == "nylas"
        assert data["grant_status"] == "valid"
    missing = get(nylas, "/v3/grants/grant-nobody")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


def test_get_message_decodes_a_url_encoded_id(nylas, clock):
    # An IMAP-style id with reserved characters: requests keeps their escapes (it only normalises
    # unreserved ones), so the id matches only if the server decodes the path segment.
    message_id = "<CAF+x/y@mail.example.com>"
    message = inbound(nylas, headers={"Auto-Submitted": "auto-replied"}, message_id=message_id)
    encoded = quote(message_id, safe="")
    assert "%2F" in encoded
    response = get(nylas, f"/v3/grants/{GRANT}/messages/{encoded}", params={"fields": "include_headers"})
    assert response.status_code == 200
    data = response.json()["data"]
    assert data == message
    assert data["id"] == message_id
    assert data["object"] == "message"
    assert data["grant_id"] == GRANT
    assert data["from"] == [{"name": "", "email": CUSTOMER}]
    assert data["to"][0]["email"] == AGENT_EMAIL
    assert data["folders"] == ["inbox"]
    assert data["date"] == int(clock.now)
    assert data["snippet"] == "Where is my order?"
    # An IMAP-style id is the message's Message-ID; the given headers are kept as they came.
    assert data["headers"] == [
        {"name": "Message-ID", "value": message_id},
        {"name": "Auto-Submitted", "value": "auto-replied"},
    ]

    missing = get(nylas, f"/v3/grants/{GRANT}/messages/msg-nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


def test_messages_of_another_grant_are_not_visible(nylas):
    nylas.add_grant("grant-other", "other@example.com")
    message = inbound(nylas)
    assert get(nylas, f"/v3/grants/grant-other/messages/{message['id']}").status_code == 404
    assert get(nylas, f"/v3/grants/grant-other/threads/{message['thread_id']}").status_code == 404


def test_list_by_thread_is_newest_first_limited_and_paginated(nylas):
    first = inbound(nylas, date=1000)
    thread_id = first["thread_id"]
    middle = inbound(nylas, thread_id=thread_id, date=2000)
    newest = inbound(nylas, reply_to_message_id=first["id"], date=3000)
    inbound(nylas, subject="Another thread", date=4000)

    everything = get(nylas, f"/v3/grants/{GRANT}/messages", params={"thread_id": thread_id})
    assert everything.status_code == 200
    body = everything.json()
    assert [m["id"] for m in body["data"]] == [newest["id"], middle["id"], first["id"]]
    assert body["next_cursor"] is None

    page1 = get(nylas, f"/v3/grants/{GRANT}/messages", params={"thread_id": thread_id, "limit": 2}).json()
    assert [m["id"] for m in page1["data"]] == [newest["id"], middle["id"]]
    assert isinstance(page1["next_cursor"], str)
    page2 = get(
        nylas,
        f"/v3/grants/{GRANT}/messages",
        params={"thread_id": thread_id, "limit": 2, "page_token": page1["next_cursor"]},
    ).json()
    assert [m["id"] for m in page2["data"]] == [first["id"]]
    assert page2["next_cursor"] is None

    too_many = get(nylas, f"/v3/grants/{GRANT}/messages", params={"thread_id": thread_id, "limit": 201})
    assert too_many.status_code == 400
    assert too_many.json()["error"]["type"] == "invalid_request_error"
    assert get(nylas, f"/v3/grants/{GRANT}/messages", params={"limit": 200}).status_code == 200


def test_thread_reports_received_and_sent_dates_and_latest_message(nylas, clock):
    first = inbound(nylas, date=1000)
    second = inbound(nylas, thread_id=first["thread_id"], date=2000)
    path = f"/v3/grants/{GRANT}/threads/{first['thread_id']}"

    before = get(nylas, path).json()["data"]
    assert before["object"] == "thread"
    assert before["id"] == first["thread_id"]
    assert before["grant_id"] == GRANT
    assert before["subject"] == "Order 42"
    assert before["message_ids"] == [first["id"], second["id"]]
    assert before["latest_message_received_date"] == 2000
    assert "latest_message_sent_date" not in before
    assert before["latest_draft_or_message"]["id"] == second["id"]

    clock.now = 3000
    sent = send(nylas, reply_to(second, body="Shipped today")).json()["data"]
    after = get(nylas, path).json()["data"]
    assert after["message_ids"] == [first["id"], second["id"], sent["id"]]
    assert after["latest_message_received_date"] == 2000
    assert after["latest_message_sent_date"] == 3000
    assert after["latest_draft_or_message"]["id"] == sent["id"]
    assert after["latest_draft_or_message"]["body"] == "Shipped today"
    assert {p["email"] for p in after["participants"]} == {CUSTOMER, AGENT_EMAIL}

    assert get(nylas, f"/v3/grants/{GRANT}/threads/thread-nope").status_code == 404


# ---- send ---------------------------------------------------------------------------------------


def test_send_stores_the_reply_in_the_thread_from_the_grant(nylas, clock):
    message = inbound(nylas)
    clock.advance(42)
    response = send(nylas, reply_to(message))
    assert response.status_code == 200
    assert "Idempotent-Response" not in response.headers
    body = response.json()
    assert body["grant_id"] == GRANT
    data = body["data"]
    assert data["thread_id"] == message["thread_id"]
    assert data["reply_to_message_id"] == message["id"]
    assert data["from"] == [{"name": "Support Agent", "email": AGENT_EMAIL}]
    assert data["to"] == [{"name": "Customer", "email": CUSTOMER}]
    assert data["folders"] == ["sent"]
    assert data["date"] == int(clock.now)
    assert data["id"] != message["id"]

    stored = get(nylas, f"/v3/grants/{GRANT}/messages/{data['id']}").json()["data"]
    assert stored["thread_id"] == message["thread_id"]
    assert stored["folders"] == ["sent"]
    [record] = nylas.sends
    assert record.grant_id == GRANT
    assert record.idempotency_key is None
    assert record.payload == reply_to(message)
    assert record.message["id"] == data["id"]
    assert [m["id"] for m in nylas.sent_messages(thread_id=message["thread_id"])] == [data["id"]]
    assert nylas.sent_messages(grant_id="grant-other") == []
    assert nylas.count("POST", SEND_PATH) == 1
    assert nylas.count("GET", f"/v3/grants/{GRANT}/messages/") == 1


def test_send_without_reply_to_starts_a_new_thread(nylas):
    message = inbound(nylas)
    data = send(nylas, {"to": [{"email": CUSTOMER}], "subject": "Hello", "body": "Hi"}).json()["data"]
    assert data["thread_id"] != message["thread_id"]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{data['thread_id']}").json()["data"]
    assert thread["message_ids"] == [data["id"]]
    assert "latest_message_received_date" not in thread


@pytest.mark.parametrize(
    ("payload", "status", "error_type"),
    [
        ({"subject": "no recipient", "body": "x"}, 400, "invalid_request_error"),
        ({"to": [], "body": "x"}, 400, "invalid_request_error"),
        ({"to": [{"email": CUSTOMER}], "reply_to_message_id": "msg-unknown"}, 404, "not_found_error"),
    ],
)
def test_rejected_sends_send_nothing(nylas, payload, status, error_type):
    response = send(nylas, payload)
    assert response.status_code == status
    assert response.json()["error"]["type"] == error_type
    assert nylas.sends == []


def test_send_accepts_with_202_when_queueing(nylas):
    nylas.send_accepts_with_202 = True
    message = inbound(nylas)
    first = send(nylas, reply_to(message), key="k-202")
    assert first.status_code == 202
    assert first.json()["data"]["thread_id"] == message["thread_id"]
    replay = send(nylas, reply_to(message), key="k-202")
    assert replay.status_code == 202
    assert replay.headers["Idempotent-Response"] == "true"
    assert len(nylas.sends) == 1


# ---- idempotency --------------------------------------------------------------------------------


def test_same_key_and_payload_replays_the_first_response(nylas):
    message = inbound(nylas)
    first = send(nylas, reply_to(message), key="key-1")
    second = send(nylas, reply_to(message), key="key-1")
    assert first.status_code == second.status_code == 200
    assert "Idempotent-Response" not in first.headers
    assert second.headers["Idempotent-Response"] == "true"
    assert second.content == first.content  # same request_id, same message id: byte for byte
    assert len(nylas.sends) == 1
    assert nylas.sends[0].idempotency_key == "key-1"
    assert nylas.count("POST", SEND_PATH) == 2
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert len(thread["message_ids"]) == 2


def test_same_key_with_a_different_payload_is_409(nylas):
    message = inbound(nylas)
    assert send(nylas, reply_to(message, body="one"), key="key-1").status_code == 200
    conflict = send(nylas, reply_to(message, body="two"), key="key-1")
    assert conflict.status_code == 409
    assert conflict.json()["error"]["type"] == "api.invalid_idempotent_request"
    assert "Idempotent-Response" not in conflict.headers
    assert len(nylas.sends) == 1


def test_keys_are_scoped_per_grant(nylas):
    nylas.add_grant("grant-other", "other@example.com")
    payload = {"to": [{"email": CUSTOMER}], "subject": "s", "body": "b"}
    assert send(nylas, payload, key="shared").status_code == 200
    other = send(nylas, payload, key="shared", grant="grant-other")
    assert other.status_code == 200
    assert "Idempotent-Response" not in other.headers
    assert [r.grant_id for r in nylas.sends] == [GRANT, "grant-other"]
    assert other.json()["data"]["from"][0]["email"] == "other@example.com"


def test_same_key_while_the_first_is_in_flight_is_409_concurrent(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.delay(0.5))
    results: dict[str, requests.Response] = {}
    slow = threading.Thread(target=lambda: results.update(first=send(nylas, reply_to(message), key="k")))
    slow.start()
    deadline = time.monotonic() + 2
    while nylas.count("POST", SEND_PATH) == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)  # the first request has registered its key and is sleeping in the delay

    concurrent = send(nylas, reply_to(message), key="k")
    assert concurrent.status_code == 409
    assert concurrent.json()["error"]["type"] == "api.concurrent_idempotent_request"
    assert nylas.sends == []  # nothing has gone out yet: the first request is still in flight

    slow.join(timeout=5)
    assert results["first"].status_code == 200
    retry = send(nylas, reply_to(message), key="k")
    assert retry.status_code == 200
    assert retry.headers["Idempotent-Response"] == "true"
    assert retry.content == results["first"].content
    assert len(nylas.sends) == 1


def test_racing_duplicates_send_exactly_once(nylas):
    message = inbound(nylas)
    start = threading.Barrier(12)

    def racer(_: int) -> requests.Response:
        start.wait()
        return send(nylas, reply_to(message), key="race")

    with ThreadPoolExecutor(max_workers=12) as pool:
        responses = list(pool.map(racer, range(12)))

    assert len(nylas.sends) == 1
    ok = [r for r in responses if r.status_code == 200]
    assert {r.content for r in ok} == {ok[0].content}
    assert sum("Idempotent-Response" not in r.headers for r in ok) == 1
    for r in responses:
        if r.status_code != 200:
            assert r.status_code == 409
            assert r.json()["error"]["type"] == "api.concurrent_idempotent_request"


def test_distinct_keys_from_many_clients_all_send(nylas):
    message = inbound(nylas)
    with ThreadPoolExecutor(max_workers=10) as pool:
        responses = list(pool.map(lambda i: send(nylas, reply_to(message), key=f"key-{i}"), range(10)))
    assert [r.status_code for r in responses] == [200] * 10
    assert len({r.json()["data"]["id"] for r in responses}) == 10
    assert len(nylas.sent_messages(thread_id=message["thread_id"])) == 10


def test_key_can_be_reused_after_one_hour_of_the_emulator_clock(nylas, clock):
    message = inbound(nylas)
    first = send(nylas, reply_to(message), key="hourly")
    clock.advance(IDEMPOTENCY_TTL_SECONDS - 1)
    within = send(nylas, reply_to(message), key="hourly")
    assert within.headers["Idempotent-Response"] == "true"
    assert within.content == first.content
    assert len(nylas.sends) == 1

    clock.advance(2)  # now past the hour since the *first* request
    later = send(nylas, reply_to(message), key="hourly")
    assert later.status_code == 200
    assert "Idempotent-Response" not in later.headers
    assert later.json()["data"]["id"] != first.json()["data"]["id"]
    assert len(nylas.sends) == 2


def test_key_longer_than_256_characters_is_400(nylas):
    message = inbound(nylas)
    assert send(nylas, reply_to(message), key="k" * 256).status_code == 200
    too_long = send(nylas, reply_to(message, body="other"), key="k" * 257)
    assert too_long.status_code == 400
    assert too_long.json()["error"]["type"] == "api.invalid_idempotency_key"
    assert len(nylas.sends) == 1


def test_error_responses_are_cached_and_replayed(nylas):
    payload = {"subject": "missing to", "body": "x"}
    first = send(nylas, payload, key="bad")
    replay = send(nylas, payload, key="bad")
    assert first.status_code == replay.status_code == 400
    assert "Idempotent-Response" not in first.headers
    assert replay.headers["Idempotent-Response"] == "true"
    assert replay.content == first.content
    assert nylas.sends == []


# ---- fault injection ----------------------------------------------------------------------------


def test_injected_status_is_answered_without_processing(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.status(503))
    nylas.inject("POST", r"/messages/send$", Fault.status(429, headers={"Retry-After": "2"}))

    unavailable = send(nylas, reply_to(message), key="k")
    assert unavailable.status_code == 503
    assert unavailable.json()["error"]["type"]
    throttled = send(nylas, reply_to(message), key="k")
    assert throttled.status_code == 429
    assert throttled.headers["Retry-After"] == "2"
    assert nylas.sends == []

    # The faulted attempts recorded no key, so the retry with the same key is a first request.
    retry = send(nylas, reply_to(message), key="k")
    assert retry.status_code == 200
    assert "Idempotent-Response" not in retry.headers
    assert len(nylas.sends) == 1
    assert nylas.count("POST", SEND_PATH) == 3


def test_faults_match_method_and_path_and_are_used_times_times(nylas):
    message = inbound(nylas)
    nylas.inject("GET", r"/messages/", Fault.status(500, body={"custom": True}), times=2)
    path = f"/v3/grants/{GRANT}/messages/{message['id']}"
    assert get(nylas, f"/v3/grants/{GRANT}").status_code == 200  # path does not match
    assert send(nylas, reply_to(message)).status_code == 200  # method does not match
    first, second, third = (get(nylas, path) for _ in range(3))
    assert (first.status_code, second.status_code, third.status_code) == (500, 500, 200)
    assert first.json() == {"custom": True}


def test_delay_fault_slows_the_response(nylas):
    nylas.inject("GET", rf"^/v3/grants/{GRANT}$", Fault.delay(0.2))
    started = time.monotonic()
    response = get(nylas, f"/v3/grants/{GRANT}")
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.2


def test_lost_response_sends_the_email_and_the_retry_replays_it(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.lose_response())
    with pytest.raises(requests.ConnectionError):
        send(nylas, reply_to(message), key="lost")
    [sent] = nylas.sent_messages(thread_id=message["thread_id"])  # the email did go out
    assert nylas.sends[0].idempotency_key == "lost"

    retry = send(nylas, reply_to(message), key="lost")
    assert retry.status_code == 200
    assert retry.headers["Idempotent-Response"] == "true"
    assert retry.json()["data"]["id"] == sent["id"]
    assert len(nylas.sends) == 1


def test_lost_response_without_a_key_means_a_retry_sends_twice(nylas):
    # The reason ReplyOnce always sends with a key: without one, Nylas cannot tell a retry apart.
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.lose_response())
    with pytest.raises(requests.ConnectionError):
        send(nylas, reply_to(message))
    assert send(nylas, reply_to(message)).status_code == 200
    assert len(nylas.sends) == 2


# ---- message.created callback -------------------------------------------------------------------


def test_message_created_fires_for_inbound_and_outbound_mail_once(nylas):
    created: list[dict] = []
    nylas.on_message_created = created.append
    message = inbound(nylas)
    assert created == [{k: v for k, v in message.items() if k != "headers"}]

    response = send(nylas, reply_to(message), key="k")
    assert len(created) == 2  # already fired when the client has the answer
    assert created[1]["id"] == response.json()["data"]["id"]
    assert created[1]["folders"] == ["sent"]
    assert created[1]["from"][0]["email"] == AGENT_EMAIL

    send(nylas, reply_to(message), key="k")  # replay: nothing new in the mailbox
    send(nylas, {"subject": "no to"})  # rejected
    assert len(created) == 2


# ---- reset --------------------------------------------------------------------------------------


def test_reset_forgets_everything(nylas):
    message = inbound(nylas)
    send(nylas, reply_to(message), key="k")
    nylas.inject("GET", r".*", Fault.status(500))
    nylas.send_accepts_with_202 = True

    nylas.reset()

    assert nylas.sends == []
    assert nylas.requests == []
    assert get(nylas, f"/v3/grants/{GRANT}").status_code == 404  # grant gone, fault gone
    assert nylas.requests == [("GET", f"/v3/grants/{GRANT}")]
    nylas.add_grant(GRANT, AGENT_EMAIL)
    again = send(nylas, {"to": [{"email": CUSTOMER}], "subject": "s", "body": "b"}, key="k")
    assert again.status_code == 200  # neither 202 nor a replay of the old key
    assert "Idempotent-Response" not in again.headers


# ==================================================================================================
# Webhook destinations: POST /v3/webhooks (with the challenge), GET /v3/webhooks/{id},
# POST /v3/webhooks/rotate-secret/{id}. The operator commands (tests/test_ops.py) rely on these.
# ==================================================================================================


class ChallengeEndpoint:
    """A loopback HTTP endpoint whose answer to Nylas' challenge GET each test chooses.

    ``answer(challenge)`` returns ``(status, body, chunked)``; every request's query is recorded.
    """

    def __init__(self, answer) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qs, urlsplit

        endpoint = self
        self.answer = answer
        self.queries: list[dict[str, list[str]]] = []

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                endpoint.queries.append(query)
                status, body, chunked = endpoint.answer(query.get("challenge", [""])[0])
                self.send_response(status)
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
                else:
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1/webhook"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def endpoint():
    running: list[ChallengeEndpoint] = []

    def start(answer) -> ChallengeEndpoint:
        running.append(ChallengeEndpoint(answer))
        return running[-1]

    yield start
    for server in running:
        server.stop()


def echo(challenge: str) -> tuple[int, bytes, bool]:
    return 200, challenge.encode(), False


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
    assert response.json()["error"] == {"type": "70005", "message": message}
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


# ==================================================================================================
# What the product relies on to reply exactly once: headers only when asked, arrival order, Nylas'
# own clock, provider errors cached under the key, metadata, and every send attempt counted.
# ==================================================================================================


def list_messages(nylas: NylasEmulator, **params) -> requests.Response:
    return get(nylas, f"/v3/grants/{GRANT}/messages", params=params)


def header_names(message: dict) -> list[str]:
    return [h["name"] for h in message["headers"]]


def test_list_is_newest_first_by_arrival_never_by_the_senders_date(nylas):
    # Sender clocks are skewed: the second message claims to be the oldest, the third the newest.
    first = inbound(nylas, date=5000)
    second = inbound(nylas, thread_id=first["thread_id"], date=1000)
    third = inbound(nylas, reply_to_message_id=first["id"], date=9000)
    other = inbound(nylas, subject="Another thread", date=10)

    in_thread = list_messages(nylas, thread_id=first["thread_id"]).json()["data"]
    assert [m["id"] for m in in_thread] == [third["id"], second["id"], first["id"]]
    everything = list_messages(nylas).json()["data"]
    assert [m["id"] for m in everything] == [other["id"], third["id"], second["id"], first["id"]]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{first['thread_id']}").json()["data"]
    assert thread["message_ids"] == [first["id"], second["id"], third["id"]]
    assert thread["latest_draft_or_message"]["id"] == third["id"]
    assert thread["earliest_message_date"] == 1000


def test_message_reads_return_headers_only_when_asked(nylas):
    first = inbound(nylas, headers={"Auto-Submitted": "auto-replied", "List-Id": "<news.example.com>"})
    follow_up = inbound(nylas, reply_to_message_id=first["id"], headers={"message-id": "<own@mail.example>"})
    path = f"/v3/grants/{GRANT}/messages/{follow_up['id']}"

    standard = get(nylas, path).json()["data"]
    assert "headers" not in standard
    assert standard["id"] == follow_up["id"]
    everything = get(nylas, path, params={"fields": "include_headers"}).json()["data"]
    assert everything["headers"] == follow_up["headers"]
    basic = get(nylas, path, params={"fields": "include_basic_headers"}).json()["data"]
    # Matched case-insensitively; the follow-up's own Message-ID is kept, threading headers derived.
    assert basic["headers"] == [
        {"name": "In-Reply-To", "value": f"<{first['id']}@emulator.nylas>"},
        {"name": "References", "value": f"<{first['id']}@emulator.nylas>"},
        {"name": "message-id", "value": "<own@mail.example>"},
    ]

    listed = list_messages(nylas, thread_id=first["thread_id"]).json()["data"]
    assert all("headers" not in m for m in listed)
    listed = list_messages(nylas, thread_id=first["thread_id"], fields="include_basic_headers").json()["data"]
    assert [header_names(m) for m in listed] == [
        ["In-Reply-To", "References", "message-id"],
        ["Message-ID"],  # Auto-Submitted and List-Id are not basic headers
    ]
    listed = list_messages(nylas, thread_id=first["thread_id"], fields="include_headers").json()["data"]
    assert header_names(listed[1]) == ["Message-ID", "Auto-Submitted", "List-Id"]

    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{first['thread_id']}").json()["data"]
    assert "headers" not in thread["latest_draft_or_message"]
    bad = get(nylas, path, params={"fields": "headers"})
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
    assert list_messages(nylas, fields="everything").status_code == 400


def test_sent_replies_carry_threading_and_custom_headers(nylas):
    message = inbound(nylas)
    payload = {**reply_to(message), "custom_headers": [{"name": "Auto-Submitted", "value": "auto-replied"}]}
    sent = send(nylas, payload, key="k").json()["data"]

    stored = get(
        nylas, f"/v3/grants/{GRANT}/messages/{sent['id']}", params={"fields": "include_headers"}
    ).json()["data"]
    parent_id = f"<{message['id']}@emulator.nylas>"
    assert stored["headers"] == [
        {"name": "Message-ID", "value": f"<{sent['id']}@emulator.nylas>"},
        {"name": "In-Reply-To", "value": parent_id},
        {"name": "References", "value": parent_id},
        {"name": "Auto-Submitted", "value": "auto-replied"},
    ]


def test_message_created_callback_has_no_headers_unless_the_webhook_includes_them(nylas):
    created: list[dict] = []
    nylas.on_message_created = created.append

    message = inbound(nylas, headers={"Auto-Submitted": "auto-generated"})
    send(nylas, reply_to(message))
    assert len(created) == 2
    assert all("headers" not in m for m in created)
    assert header_names(message) == ["Message-ID", "Auto-Submitted"]  # the test-facing return keeps them

    nylas.webhook_includes_headers = True
    with_headers = inbound(nylas, headers={"Auto-Submitted": "auto-generated"})
    assert created[2]["headers"] == with_headers["headers"]
    nylas.reset()
    assert nylas.webhook_includes_headers is False


def test_deliver_inbound_sets_sender_name_and_reply_to(nylas):
    message = inbound(nylas, from_name="Cus Tomer", reply_to=[{"name": "Desk", "email": "desk@example.com"}])
    data = get(nylas, f"/v3/grants/{GRANT}/messages/{message['id']}").json()["data"]
    assert data["from"] == [{"name": "Cus Tomer", "email": CUSTOMER}]
    assert data["reply_to"] == [{"name": "Desk", "email": "desk@example.com"}]
    assert message["from"] == data["from"]


# ---- Nylas' clock -------------------------------------------------------------------------------


def response_date(response: requests.Response) -> float:
    # One Date header only: the server's own (real-time) one would be a second, conflicting value.
    [value] = response.raw.headers.getlist("Date")
    return parsedate_to_datetime(value).timestamp()


def test_every_response_has_a_date_header_from_the_emulator_clock(nylas, clock):
    clock.now = 1_000_000_000.0  # 2001: far from this machine's clock
    assert response_date(get(nylas, f"/v3/grants/{GRANT}")) == clock.now
    unauthorized = requests.get(f"{nylas.url}/v3/grants/{GRANT}", timeout=TIMEOUT)
    assert response_date(unauthorized) == clock.now
    nylas.inject("GET", r".*", Fault.status(503))
    assert response_date(get(nylas, f"/v3/grants/{GRANT}")) == clock.now


def test_advance_clock_moves_dates_date_header_and_key_hour(nylas, clock):
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


# ---- provider errors, on_send_started, send attempts -------------------------------------------


def test_provider_error_is_cached_under_its_key_and_a_new_key_sends(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(504), times=1)

    failed = send(nylas, reply_to(message), key="k1")
    assert failed.status_code == 504
    error = failed.json()["error"]
    assert error["type"] == "provider_error"
    assert error["message"]
    assert isinstance(error["provider_error"], dict)
    assert failed.json()["request_id"]
    assert "Idempotent-Response" not in failed.headers
    assert nylas.sends == []

    replay = send(nylas, reply_to(message), key="k1")  # the fault is spent, the answer is cached
    assert replay.status_code == 504
    assert replay.headers["Idempotent-Response"] == "true"
    assert replay.content == failed.content
    assert nylas.sends == []

    fresh = send(nylas, reply_to(message), key="k2")
    assert fresh.status_code == 200
    assert len(nylas.sends) == 1


def test_provider_error_is_spent_only_on_a_first_request(nylas):
    message = inbound(nylas)
    assert send(nylas, reply_to(message), key="k1").status_code == 200
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(502))

    assert send(nylas, reply_to(message), key="k1").headers["Idempotent-Response"] == "true"
    assert send(nylas, reply_to(message, body="other"), key="k1").status_code == 409
    assert send(nylas, {"to": [{"email": CUSTOMER}], "subject": "s", "body": "b"}).status_code == 502
    assert len(nylas.sends) == 1
    with pytest.raises(ValueError, match="5xx"):
        Fault.provider_error(429)


def test_on_send_started_runs_while_the_key_is_in_flight(nylas):
    message = inbound(nylas)
    seen: list[tuple] = []

    def during_send(grant_id: str, payload: dict) -> None:
        # What the product meets if a customer writes while its send is in flight.
        follow_up = inbound(nylas, reply_to_message_id=message["id"], body="one more thing")
        concurrent = send(nylas, payload, key="k")
        seen.append((grant_id, payload, len(nylas.sends), concurrent.status_code, follow_up["id"]))

    nylas.on_send_started = during_send
    response = send(nylas, reply_to(message), key="k")

    assert response.status_code == 200
    [(grant_id, payload, sends_then, concurrent_status, follow_up_id)] = seen
    assert (grant_id, payload, sends_then, concurrent_status) == (GRANT, reply_to(message), 0, 409)
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert thread["message_ids"] == [message["id"], follow_up_id, response.json()["data"]["id"]]
    send(nylas, reply_to(message), key="k")  # a replay starts no send
    assert len(seen) == 1


def test_on_send_started_failure_is_logged_and_the_send_goes_on(nylas, caplog):
    message = inbound(nylas)

    def broken(grant_id: str, payload: dict) -> None:
        raise RuntimeError("hook bug")

    nylas.on_send_started = broken
    response = send(nylas, reply_to(message), key="k")

    assert response.status_code == 200
    assert len(nylas.sends) == 1
    assert "on_send_started callback failed" in caplog.text


def test_send_attempts_record_every_request_that_reached_send(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.status(503))  # a gateway: never reaches send
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(504))

    assert send(nylas, reply_to(message), key="a").status_code == 503
    assert send(nylas, reply_to(message), key="a").status_code == 504
    assert send(nylas, reply_to(message), key="a").status_code == 504
    assert send(nylas, reply_to(message), key="b").status_code == 200
    assert send(nylas, reply_to(message), key="b").status_code == 200
    assert send(nylas, reply_to(message, body="changed"), key="b").status_code == 409
    assert send(nylas, reply_to(message), key="x" * 257).status_code == 400
    assert send(nylas, {"subject": "no to"}).status_code == 400

    attempts = nylas.send_attempts
    assert [(a.idempotency_key, a.status, a.replayed) for a in attempts] == [
        ("a", 504, False),
        ("a", 504, True),
        ("b", 200, False),
        ("b", 200, True),
        ("b", 409, False),
        ("x" * 257, 400, False),
        (None, 400, False),
    ]
    assert {a.grant_id for a in attempts} == {GRANT}
    assert attempts[0].payload == reply_to(message)
    assert attempts[-1].payload == {"subject": "no to"}
    nylas.reset()
    assert nylas.send_attempts == []


# ---- metadata -----------------------------------------------------------------------------------


def test_send_stores_metadata_and_lists_by_metadata_pair(nylas):
    created: list[dict] = []
    nylas.on_message_created = created.append
    message = inbound(nylas)
    metadata = {"key1": "intent-1", "note": "a: b"}
    sent = send(nylas, {**reply_to(message), "metadata": metadata}, key="k").json()["data"]
    other = send(nylas, {**reply_to(message), "metadata": {"key1": "intent-2"}}, key="k2").json()["data"]

    stored = get(nylas, f"/v3/grants/{GRANT}/messages/{sent['id']}").json()["data"]
    assert stored["metadata"] == metadata
    assert created[1]["metadata"] == metadata  # the notification carries it
    assert message["metadata"] == {}

    found = list_messages(nylas, metadata_pair="key1:intent-1").json()
    assert [m["id"] for m in found["data"]] == [sent["id"]]
    assert found["next_cursor"] is None
    assert [m["id"] for m in list_messages(nylas, metadata_pair="key1:intent-2").json()["data"]] == [
        other["id"]
    ]
    assert list_messages(nylas, metadata_pair="key1:intent-3").json()["data"] == []
    nylas.add_grant("grant-other", "other@example.com")
    elsewhere = get(nylas, "/v3/grants/grant-other/messages", params={"metadata_pair": "key1:intent-1"})
    assert elsewhere.json()["data"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"metadata_pair": "note:a"},  # not an indexed key
        {"metadata_pair": "key6:x"},
        {"metadata_pair": "key1"},  # no value
        {"metadata_pair": "key1:x", "thread_id": "thread-1"},  # Nylas: no provider + metadata filter
    ],
    ids=["unindexed key", "key6", "no colon", "with thread_id"],
)
def test_metadata_pair_rejects_what_nylas_rejects(nylas, params):
    response = list_messages(nylas, **params)

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("metadata", "accepted"),
    [
        ({f"k{i}": "v" for i in range(50)}, True),
        ({f"k{i}": "v" for i in range(51)}, False),
        ({"k" * 40: "v"}, True),
        ({"k" * 41: "v"}, False),
        ({"key1": "v" * 500}, True),
        ({"key1": "v" * 501}, False),
        ({"key1": 7}, False),
        ({"key1": {"nested": "no"}}, False),
        (["key1", "v"], False),
    ],
    ids=[
        "50 pairs",
        "51 pairs",
        "40-char key",
        "41-char key",
        "500-char value",
        "501-char value",
        "number",
        "nested",
        "list",
    ],
)
def test_send_validates_metadata_like_nylas(nylas, metadata, accepted):
    message = inbound(nylas)

    response = send(nylas, {**reply_to(message), "metadata": metadata})

    assert response.status_code == (200 if accepted else 400)
    assert len(nylas.sends) == (1 if accepted else 0)
    if not accepted:
        assert response.json()["error"]["type"] == "invalid_request_error"
        assert "metadata" in response.json()["error"]["message"]


# ---- control routes for the local stack ---------------------------------------------------------


def control(nylas: NylasEmulator, method: str, route: str, **kwargs) -> requests.Response:
    return requests.request(method, f"{nylas.url}/_emulator/{route}", timeout=TIMEOUT, **kwargs)


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
