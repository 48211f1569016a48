"""Contract: ``POST .../messages/send`` and its ``Idempotency-Key``, provider errors, header policy,
account limits.

Sources: https://developer.nylas.com/docs/v3/email/send-email/ (the body; ``reply_to_message_id``
threads the reply; the 200 answer ``{request_id, grant_id, data}``),
https://developer.nylas.com/docs/v3/email/idempotent-send/ and
https://developer.nylas.com/docs/changelogs/2026-04-28-idempotent-send/ (per grant, one hour,
success and error answers replayed with ``Idempotent-Response: true``, ``409
api.invalid_idempotent_request`` / ``api.concurrent_idempotent_request``, ``400
api.invalid_idempotency_key`` over 256 characters; a ``504`` may come back although the provider
sent), https://developer.nylas.com/docs/dev-guide/metadata/ (metadata limits),
https://developer.nylas.com/docs/v3/agent-accounts/send-limits/ (quotas, pauses; answers undocumented).
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from devstack.nylas import ACCOUNT_LIMITS, IDEMPOTENCY_TTL_SECONDS, Fault
from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    OTHER_EMAIL,
    OTHER_GRANT,
    SEND_PATH,
    error_of,
    get,
    header_names,
    inbound,
    reply_to,
    send,
)

NEW_MAIL = {"to": [{"email": CUSTOMER}], "subject": "Hello", "body": "Hi"}


def wait_for_first_send(nylas) -> None:
    deadline = time.monotonic() + 2
    while nylas.count("POST", SEND_PATH) == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)  # the first request has registered its key and is sleeping in the delay


# ---- the send itself ----------------------------------------------------------------------------


def test_send_stores_the_reply_in_the_thread_from_the_grant(nylas, clock):
    """A reply (``reply_to_message_id``) joins the thread, comes from the grant, is in ``sent``."""
    message = inbound(nylas)
    clock.advance(42)

    response = send(nylas, reply_to(message))

    assert response.status_code == 200
    assert "Idempotent-Response" not in response.headers
    body = response.json()
    assert body["request_id"]
    assert body["grant_id"] == GRANT
    data = body["data"]
    assert data["thread_id"] == message["thread_id"]
    assert data["reply_to_message_id"] == message["id"]
    assert data["from"] == [{"name": "Support Agent", "email": AGENT_EMAIL}]
    assert data["to"] == [{"name": "Customer", "email": CUSTOMER}]
    assert data["folders"] == [nylas.folder_id(GRANT, "sent")]
    assert data["date"] == int(clock.now)
    assert data["id"] != message["id"]
    stored = get(nylas, f"/v3/grants/{GRANT}/messages/{data['id']}").json()["data"]
    assert (stored["thread_id"], stored["unread"]) == (message["thread_id"], False)
    [record] = nylas.sends
    assert (record.grant_id, record.idempotency_key, record.payload) == (GRANT, None, reply_to(message))
    assert (record.message["id"], record.message["folders"]) == (data["id"], ["sent"])
    assert [m["id"] for m in nylas.sent_messages(thread_id=message["thread_id"])] == [data["id"]]
    assert nylas.sent_messages(grant_id=OTHER_GRANT) == []
    assert nylas.count("POST", SEND_PATH) == 1


def test_send_without_reply_to_starts_a_new_thread(nylas):
    """No ``thread_id`` on send: threading is only through ``reply_to_message_id``."""
    message = inbound(nylas)
    data = send(nylas, NEW_MAIL).json()["data"]

    assert data["thread_id"] != message["thread_id"]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{data['thread_id']}").json()["data"]
    assert thread["message_ids"] == [data["id"]]
    assert "latest_message_received_date" not in thread


@pytest.mark.parametrize(
    ("payload", "status", "error_type"),
    [
        ({"subject": "no recipient", "body": "x"}, 400, "invalid_request_error"),
        ({"to": [], "body": "x"}, 400, "invalid_request_error"),
        ({"to": [{"name": "no address"}]}, 400, "invalid_request_error"),
        ({"to": [{"email": CUSTOMER}], "custom_headers": [{"name": "X"}]}, 400, "invalid_request_error"),
        ({"to": [{"email": CUSTOMER}], "reply_to_message_id": "msg-unknown"}, 404, "not_found_error"),
    ],
    ids=["no to", "empty to", "to without email", "bad custom header", "unknown parent"],
)
def test_rejected_sends_send_nothing(nylas, payload, status, error_type):
    """``to`` is required; a bad field is ``400 invalid_request_error``; an unknown parent ``404``."""
    response = send(nylas, payload)

    assert response.status_code == status
    assert error_of(response)["type"] == error_type
    assert nylas.sends == []


def test_sent_replies_carry_threading_and_custom_headers(nylas):
    """Nylas adds ``In-Reply-To`` and ``References`` to a reply; ``custom_headers`` are added as given."""
    message = inbound(nylas)
    payload = {**reply_to(message), "custom_headers": [{"name": "X-Agent", "value": "replyonce"}]}
    sent = send(nylas, payload, key="k").json()["data"]

    stored = get(nylas, f"/v3/grants/{GRANT}/messages/{sent['id']}", params={"fields": "include_headers"})
    parent_id = f"<{message['id']}@emulator.nylas>"
    assert stored.json()["data"]["headers"] == [
        {"name": "Message-ID", "value": f"<{sent['id']}@emulator.nylas>"},
        {"name": "In-Reply-To", "value": parent_id},
        {"name": "References", "value": parent_id},
        {"name": "X-Agent", "value": "replyonce"},
    ]


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
    ids=["50 pairs", "51 pairs", "40-char key", "41-char key", "500-char value", "501-char value", "number",
         "nested", "list"],
)  # fmt: skip
def test_send_validates_metadata_like_nylas(nylas, metadata, accepted):
    """Metadata: at most 50 pairs, keys up to 40 characters, string values up to 500."""
    response = send(nylas, {**reply_to(inbound(nylas)), "metadata": metadata})

    assert response.status_code == (200 if accepted else 400)
    assert len(nylas.sends) == (1 if accepted else 0)
    if not accepted:
        assert error_of(response)["type"] == "invalid_request_error"
        assert "metadata" in error_of(response)["message"]


# ---- custom_headers policy ----------------------------------------------------------------------

AUTO_SUBMITTED = [{"name": "Auto-Submitted", "value": "auto-replied"}, {"name": "X-Agent", "value": "1"}]


def test_custom_headers_are_accepted_by_default(nylas):
    sent = send(nylas, {**reply_to(inbound(nylas)), "custom_headers": AUTO_SUBMITTED}).json()["data"]

    assert header_names(sent)[-2:] == ["Auto-Submitted", "X-Agent"]


def test_custom_headers_refuse_mode_answers_400_naming_custom_headers(nylas):
    """``modes.custom_headers = "refuse"``: Nylas says custom headers are "generally prefixed with X-"
    and Microsoft Graph requires it; a non-``X-`` header may be refused with a 400."""
    nylas.modes.custom_headers = "refuse"
    message = inbound(nylas)

    refused = send(nylas, {**reply_to(message), "custom_headers": AUTO_SUBMITTED}, key="k")

    assert refused.status_code == 400
    error = error_of(refused)
    assert error["type"] == "invalid_request_error"
    assert "custom_headers" in error["message"]
    assert "Auto-Submitted" in error["message"]
    assert nylas.sends == []
    x_only = {**reply_to(message), "custom_headers": AUTO_SUBMITTED[1:]}
    assert send(nylas, x_only, key="k2").status_code == 200


def test_custom_headers_drop_mode_accepts_and_stores_without_them(nylas):
    """``modes.custom_headers = "drop"``: accepted, the non-``X-`` header is not on the message."""
    nylas.modes.custom_headers = "drop"

    sent = send(nylas, {**reply_to(inbound(nylas)), "custom_headers": AUTO_SUBMITTED})

    assert sent.status_code == 200
    assert "Auto-Submitted" not in header_names(sent.json()["data"])
    assert "X-Agent" in header_names(nylas.sends[0].message)


# ---- idempotency --------------------------------------------------------------------------------


def test_same_key_and_payload_replays_the_first_response(nylas):
    """A replay returns the same status and body plus ``Idempotent-Response: true``; nothing is sent."""
    message = inbound(nylas)
    first = send(nylas, reply_to(message), key="key-1")
    second = send(nylas, reply_to(message), key="key-1")

    assert first.status_code == second.status_code == 200
    assert "Idempotent-Response" not in first.headers
    assert second.headers["Idempotent-Response"] == "true"
    assert second.content == first.content  # same request_id, same message id: byte for byte
    assert len(nylas.sends) == 1
    assert nylas.sends[0].idempotency_key == "key-1"
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert len(thread["message_ids"]) == 2


def test_same_key_with_a_different_payload_is_409_invalid_idempotent_request(nylas):
    message = inbound(nylas)
    assert send(nylas, reply_to(message, body="one"), key="key-1").status_code == 200

    conflict = send(nylas, reply_to(message, body="two"), key="key-1")

    assert conflict.status_code == 409
    assert error_of(conflict)["type"] == "api.invalid_idempotent_request"
    assert "Idempotent-Response" not in conflict.headers
    assert len(nylas.sends) == 1


def test_keys_are_scoped_per_grant(nylas):
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL)
    assert send(nylas, NEW_MAIL, key="shared").status_code == 200

    other = send(nylas, NEW_MAIL, key="shared", grant=OTHER_GRANT)

    assert other.status_code == 200
    assert "Idempotent-Response" not in other.headers
    assert [r.grant_id for r in nylas.sends] == [GRANT, OTHER_GRANT]
    assert other.json()["data"]["from"][0]["email"] == OTHER_EMAIL


def test_same_key_while_the_first_is_in_flight_is_409_concurrent(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.delay(0.5))
    results: dict[str, requests.Response] = {}
    slow = threading.Thread(target=lambda: results.update(first=send(nylas, reply_to(message), key="k")))
    slow.start()
    wait_for_first_send(nylas)

    concurrent = send(nylas, reply_to(message), key="k")
    assert concurrent.status_code == 409
    assert error_of(concurrent)["type"] == "api.concurrent_idempotent_request"
    assert nylas.sends == []  # nothing has gone out yet: the first request is still in flight

    slow.join(timeout=5)
    assert results["first"].status_code == 200
    retry = send(nylas, reply_to(message), key="k")
    assert retry.headers["Idempotent-Response"] == "true"
    assert retry.content == results["first"].content
    assert len(nylas.sends) == 1


def test_error_spelling_bare_mode_drops_the_api_prefix_of_the_emulators_own_errors(nylas):
    """``modes.error_spelling = "bare"``: Nylas' tables write ``api.invalid_idempotent_request``, its
    examples the bare name; a product must read both."""
    nylas.modes.error_spelling = "bare"
    message = inbound(nylas)
    send(nylas, reply_to(message, body="one"), key="k")

    assert (
        error_of(send(nylas, reply_to(message, body="two"), key="k"))["type"] == "invalid_idempotent_request"
    )
    assert error_of(send(nylas, reply_to(message), key="x" * 257))["type"] == "invalid_idempotency_key"
    nylas.inject("POST", r"/messages/send$", Fault.delay(0.5))
    slow = threading.Thread(target=lambda: send(nylas, NEW_MAIL, key="slow"))
    slow.start()
    time.sleep(0.2)
    assert error_of(send(nylas, NEW_MAIL, key="slow"))["type"] == "concurrent_idempotent_request"
    slow.join(timeout=5)


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
            assert error_of(r)["type"] == "api.concurrent_idempotent_request"


def test_distinct_keys_from_many_clients_all_send(nylas):
    message = inbound(nylas)
    with ThreadPoolExecutor(max_workers=10) as pool:
        responses = list(pool.map(lambda i: send(nylas, reply_to(message), key=f"key-{i}"), range(10)))

    assert [r.status_code for r in responses] == [200] * 10
    assert len({r.json()["data"]["id"] for r in responses}) == 10
    assert len(nylas.sent_messages(thread_id=message["thread_id"])) == 10


def test_key_can_be_reused_after_one_hour_from_the_first_request(nylas, clock):
    message = inbound(nylas)
    first = send(nylas, reply_to(message), key="hourly")
    clock.advance(IDEMPOTENCY_TTL_SECONDS - 1)
    within = send(nylas, reply_to(message), key="hourly")
    assert within.headers["Idempotent-Response"] == "true"
    assert within.content == first.content

    clock.advance(2)  # now past the hour since the *first* request
    later = send(nylas, reply_to(message), key="hourly")
    assert later.status_code == 200
    assert "Idempotent-Response" not in later.headers
    assert later.json()["data"]["id"] != first.json()["data"]["id"]
    assert len(nylas.sends) == 2


def test_key_longer_than_256_characters_is_400_invalid_idempotency_key(nylas):
    message = inbound(nylas)
    assert send(nylas, reply_to(message), key="k" * 256).status_code == 200

    too_long = send(nylas, reply_to(message, body="other"), key="k" * 257)

    assert too_long.status_code == 400
    assert error_of(too_long)["type"] == "api.invalid_idempotency_key"
    assert len(nylas.sends) == 1


def test_error_responses_are_cached_and_replayed(nylas):
    """ "Nylas caches the response -- success or error -- for 1 hour"."""
    payload = {"subject": "missing to", "body": "x"}
    first = send(nylas, payload, key="bad")
    replay = send(nylas, payload, key="bad")

    assert first.status_code == replay.status_code == 400
    assert "Idempotent-Response" not in first.headers
    assert replay.headers["Idempotent-Response"] == "true"
    assert replay.content == first.content
    assert nylas.sends == []


# ---- provider errors ----------------------------------------------------------------------------


def test_provider_error_is_cached_under_its_key_and_a_new_key_sends(nylas):
    """The spec's ``504``: ``provider_error``, "Provider request timed out.", with ``provider_error``."""
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(504), times=1)

    failed = send(nylas, reply_to(message), key="k1")
    assert failed.status_code == 504
    error = error_of(failed)
    assert (error["type"], error["message"]) == ("provider_error", "Provider request timed out.")
    assert isinstance(error["provider_error"], dict)
    assert "Idempotent-Response" not in failed.headers
    assert nylas.sends == []

    replay = send(nylas, reply_to(message), key="k1")  # the fault is spent, the answer is cached
    assert replay.status_code == 504
    assert replay.headers["Idempotent-Response"] == "true"
    assert replay.content == failed.content
    assert nylas.sends == []
    assert send(nylas, reply_to(message), key="k2").status_code == 200
    assert len(nylas.sends) == 1


def test_provider_error_sent_true_sends_and_answers_504(nylas):
    """``Fault.provider_error(sent=True)``: "Nylas returns a 504 Gateway Timeout however the provider
    completed the send but was delayed" -- the email is out, the answer (cached) says 504."""
    created: list[dict] = []
    nylas.on_message_created = created.append
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(sent=True))

    answer = send(nylas, {**reply_to(message), "metadata": {"key1": "intent"}}, key="k1")

    assert answer.status_code == 504
    assert error_of(answer)["type"] == "provider_error"
    [record] = nylas.sends
    assert record.idempotency_key == "k1"
    assert created[-1]["id"] == record.message["id"]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert thread["message_ids"] == [message["id"], record.message["id"]]
    replay = send(nylas, {**reply_to(message), "metadata": {"key1": "intent"}}, key="k1")
    assert (replay.status_code, replay.headers["Idempotent-Response"]) == (504, "true")
    assert len(nylas.sends) == 1


def test_provider_error_type_can_be_spelled_with_the_api_prefix(nylas):
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(error_type="api.provider_error"))

    assert error_of(send(nylas, NEW_MAIL))["type"] == "api.provider_error"


def test_provider_error_is_spent_only_on_a_first_request(nylas):
    message = inbound(nylas)
    assert send(nylas, reply_to(message), key="k1").status_code == 200
    nylas.inject("POST", r"/messages/send$", Fault.provider_error(502))

    assert send(nylas, reply_to(message), key="k1").headers["Idempotent-Response"] == "true"
    assert send(nylas, reply_to(message, body="other"), key="k1").status_code == 409
    assert send(nylas, NEW_MAIL).status_code == 502
    assert len(nylas.sends) == 1
    with pytest.raises(ValueError, match="5xx"):
        Fault.provider_error(429)


@pytest.mark.parametrize(("which", "spelling", "error_type"), [
    ("concurrent", "api", "api.concurrent_idempotent_request"),
    ("concurrent", "bare", "concurrent_idempotent_request"),
    ("invalid", "api", "api.invalid_idempotent_request"),
    ("invalid", "bare", "invalid_idempotent_request"),
])  # fmt: skip
def test_idempotency_error_faults_answer_either_spelling(nylas, which, spelling, error_type):
    nylas.inject("POST", r"/messages/send$", Fault.idempotency_error(which, spelling))

    answer = send(nylas, NEW_MAIL, key="k")

    assert answer.status_code == 409
    assert error_of(answer)["type"] == error_type
    assert nylas.sends == []
    assert send(nylas, NEW_MAIL, key="k").status_code == 200  # no key was recorded


# ---- on_send_started and send_attempts (harness hooks) -------------------------------------------


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
    def broken(grant_id: str, payload: dict) -> None:
        raise RuntimeError("hook bug")

    nylas.on_send_started = broken
    response = send(nylas, reply_to(inbound(nylas)), key="k")

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


# ---- account limits (answers not documented: every shape offered) --------------------------------

LIMIT_SHAPES = [(limit, shape) for limit, shapes in ACCOUNT_LIMITS.items() for shape in shapes]


@pytest.mark.parametrize(("limit", "shape"), LIMIT_SHAPES, ids=[f"{lim}-{s}" for lim, s in LIMIT_SHAPES])
def test_account_limit_answers_its_shape_and_sends_nothing(nylas, limit, shape):
    """``modes.account_limit`` / ``account_limit_shape``: quotas, a pause after bounces or complaints,
    an outbound ``block`` rule. Nylas documents the limits, not the answer: each shape is a guess a
    product must survive; the answer is cached under the key like any Nylas error."""
    nylas.modes.update({"account_limit": limit, "account_limit_shape": shape})
    expected = ACCOUNT_LIMITS[limit][shape]

    payload = reply_to(inbound(nylas))
    answer = send(nylas, payload, key="k")

    assert answer.status_code == expected.status
    assert error_of(answer)["type"] == expected.error_type
    assert ("Retry-After" in answer.headers) == (expected.retry_after is not None)
    assert nylas.sends == []
    assert send(nylas, payload, key="k").headers["Idempotent-Response"] == "true"


def test_account_limit_defaults_to_the_first_shape_and_can_be_scoped_to_grants(nylas):
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL)
    nylas.modes.account_limit = "sending_paused"
    nylas.modes.account_limit_grants = [OTHER_GRANT]

    assert send(nylas, NEW_MAIL).status_code == 200
    paused = send(nylas, NEW_MAIL, grant=OTHER_GRANT)
    assert (paused.status_code, error_of(paused)["type"]) == (403, "sending_paused")
    replay = send(nylas, NEW_MAIL, grant=OTHER_GRANT, key="k")
    assert send(nylas, NEW_MAIL, grant=OTHER_GRANT, key="k").content == replay.content  # cached
    with pytest.raises(ValueError, match="account_limit_shape"):
        nylas.modes.account_limit_shape = "rate_limit"  # a quota's shape, not a pause's
    with pytest.raises(ValueError, match="account_limit"):
        nylas.modes.account_limit = "weekly_quota"
