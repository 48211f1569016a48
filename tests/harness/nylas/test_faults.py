"""Harness contract: injected faults and latency profiles -- how Nylas (or the path to it) misbehaves.

What each stands for: a gateway answering in front of Nylas (:meth:`Fault.status`; Nylas' errors at
https://developer.nylas.com/docs/api/errors/, ``429`` with ``Retry-After`` from
https://developer.nylas.com/docs/dev-guide/platform/rate-limits/), a slow answer (:meth:`Fault.delay`;
Nylas recommends a client timeout of 150 s, https://developer.nylas.com/docs/v3/email/send-email/),
a lost answer (:meth:`Fault.lose_response`: "Network failure (no response received): Same key",
https://developer.nylas.com/docs/v3/email/idempotent-send/).
"""

import threading
import time

import pytest
import requests

from devstack.nylas import Fault
from devstack.nylas.faults import Latency
from tests.harness.nylas.client import GRANT, SEND_PATH, error_of, get, inbound, reply_to, send


def test_an_injected_status_is_answered_without_processing(nylas):
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.status(503))
    nylas.inject("POST", r"/messages/send$", Fault.status(429, headers={"Retry-After": "2"}))

    unavailable = send(nylas, reply_to(message), key="k")
    assert unavailable.status_code == 503
    assert error_of(unavailable)["type"]
    throttled = send(nylas, reply_to(message), key="k")
    assert (throttled.status_code, throttled.headers["Retry-After"]) == (429, "2")
    assert error_of(throttled)["type"] == "rate_limit_error"
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
    with pytest.raises(ValueError, match="times"):
        nylas.inject("GET", r".*", Fault.status(500), times=0)


def test_a_delay_fault_slows_the_response(nylas):
    nylas.inject("GET", rf"^/v3/grants/{GRANT}$", Fault.delay(0.2))
    started = time.monotonic()

    assert get(nylas, f"/v3/grants/{GRANT}").status_code == 200
    assert time.monotonic() - started >= 0.2


def test_a_lost_response_sends_the_email_and_the_retry_replays_it(nylas):
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


def test_a_lost_response_without_a_key_means_a_retry_sends_twice(nylas):
    # The reason ReplyOnce always sends with a key: without one, Nylas cannot tell a retry apart.
    message = inbound(nylas)
    nylas.inject("POST", r"/messages/send$", Fault.lose_response())
    with pytest.raises(requests.ConnectionError):
        send(nylas, reply_to(message))

    assert send(nylas, reply_to(message)).status_code == 200
    assert len(nylas.sends) == 2


def test_a_latency_profile_delays_its_route_with_the_key_in_flight(nylas):
    """``modes.latency`` (benchmarks): a send's delay is spent after its key is reserved."""
    nylas.modes.update({"latency": {"send": [0.3, 0.3], "grant": [0, 0]}, "latency_seed": 7})
    message = inbound(nylas)
    started = time.monotonic()
    results: list[requests.Response] = []

    slow = threading.Thread(target=lambda: results.append(send(nylas, reply_to(message), key="k")))
    slow.start()
    time.sleep(0.1)
    concurrent = send(nylas, reply_to(message), key="k")
    slow.join(timeout=5)

    assert concurrent.status_code == 409
    assert results[0].status_code == 200
    assert time.monotonic() - started >= 0.3
    quick = time.monotonic()
    get(nylas, f"/v3/grants/{GRANT}")
    assert time.monotonic() - quick < 0.25


def test_latency_draws_are_seeded(nylas):
    profile = {"send": (0.5, 3.0)}
    first, second = Latency(), Latency()
    draws = [first.draw(profile, 3, "send") for _ in range(5)]

    assert draws == [second.draw(profile, 3, "send") for _ in range(5)]
    assert all(0.5 <= d <= 3.0 for d in draws)
    assert first.draw(profile, 3, "thread") == 0.0
    with pytest.raises(ValueError, match="latency route"):
        nylas.modes.latency = {"everything": (1, 2)}
    with pytest.raises(ValueError, match="above high"):
        nylas.modes.latency = {"send": (3, 1)}
