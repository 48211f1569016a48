"""Traffic shaped like real mail, against the real replier handler, counted at the Nylas emulator.

Each test is one way real mail broke the invariants of ``docs/design.md`` before the send
outbox, coverage by message and key generations: messages arriving mid-send, headers Nylas
omits, errors cached under an ``Idempotency-Key``, sender clocks and worker clocks, a lost
answer to the ledger's transaction, several agent grants, a batch slower than its invocation.
"""

import dataclasses
import json
import time

import boto3
import pytest
import requests
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ConnectionClosedError

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, envelope, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault
from functions.replier import app
from replyonce.adapters.agents import template_agent
from replyonce.adapters.state_items import body_refs, thread_state_of, with_requests
from replyonce.adapters.store import read_request_bodies
from replyonce.exceptions import ConfigurationError
from replyonce.keys import idempotency_key
from replyonce.rules.text import UNSURE_MARKER
from replyonce.state import ThreadState, thread_key
from tests.converse import converse_answer
from tests.replier_harness import (
    HANDOFF_FOLDER,
    SEND_PATH,
    Pipeline,
    container_recording_visibility,
    folders_of,
    handed_off,
    inbound,
    new_container,
    skip_reasons,
)


@pytest.fixture
def pipeline(replier_env, sqs):
    app.consumer.cache_clear()
    yield Pipeline(replier_env, sqs)
    app.consumer.cache_clear()


def as_nylas_sends_it(message: dict, **kwargs) -> dict:
    """The notification Nylas delivers by default: no ``headers`` in the payload."""
    return envelope({k: v for k, v in message.items() if k != "headers"}, **kwargs)


def thread_state(resources, thread_id: str) -> ThreadState:
    item = boto3.client("dynamodb").get_item(
        TableName=resources.tables["StateTable"],
        Key={"pk": {"S": thread_key(AGENT_GRANT_ID, thread_id)}},
        ConsistentRead=True,
    )["Item"]
    # The outbox's requests are in body items (issue 46): read back as the replier's lease reads them.
    table = resources.tables["StateTable"]
    return thread_state_of(
        with_requests(item, read_request_bodies(boto3.client("dynamodb"), table, body_refs(item)))
    )


# ---- 1. a message arriving while the reply is drafted or sent ------------------------------------------


def test_message_arriving_during_the_send_gets_its_own_reply(pipeline, nylas):
    first = inbound(nylas)
    late = {}

    def customer_writes_again(grant_id, payload):
        if not late:
            late.update(inbound(nylas, reply_to_message_id=first["id"], subject="Also: wrong address"))
            nylas.advance_clock(2)  # the send finishes after the new message arrived

    nylas.on_send_started = customer_writes_again
    try:
        pipeline.deliver(as_nylas_sends_it(first))
        pipeline.drain()
        pipeline.deliver(as_nylas_sends_it(late))
        pipeline.drain()
    finally:
        nylas.on_send_started = None
    replies = [s.payload["reply_to_message_id"] for s in nylas.sends]
    assert replies == [first["id"], late["id"]]


# ---- 2. headers Nylas omits ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Auto-Submitted": "auto-replied", "Subject-Prefix": "Out of office"}, "auto_submitted"),
        ({"List-Unsubscribe": "<https://shop.example/u>", "Precedence": "bulk"}, "bulk_mail"),
    ],
)
def test_automatons_are_recognised_although_the_payload_has_no_headers(
    pipeline, nylas, log_records, headers, reason
):
    # From human-looking addresses: only the headers tell, and Nylas sends them only when asked.
    message = inbound(nylas, from_email="jordan.miller@partner.example", headers=headers)
    notification = as_nylas_sends_it(message)
    assert "headers" not in notification["data"]["object"]
    pipeline.deliver(notification)
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == [reason]


def test_every_reply_says_it_is_automatic(pipeline, nylas):
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    [sent] = nylas.sends
    assert {"name": "Auto-Submitted", "value": "auto-replied"} in sent.payload["custom_headers"]


# ---- 3. errors cached under the Idempotency-Key --------------------------------------------------------


def test_provider_error_cached_under_the_key_is_followed_by_the_next_key(pipeline, nylas, log_records):
    # A 504 provider_error may have sent (idempotent-send guide): the same key first, which replays
    # it; then, once the mailbox could show the reply and does not, the next key.
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.provider_error(504))
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    pipeline.poller().poll_once()
    assert nylas.sends == []
    nylas.advance_clock(400)  # past mailbox_settle_seconds (Nylas' time)
    pipeline.drain()
    [sent] = nylas.sends
    assert sent.idempotency_key == idempotency_key(AGENT_GRANT_ID, message["id"], 1)
    assert [(a.status, a.replayed) for a in nylas.send_attempts] == [(504, False), (504, True), (200, False)]
    assert pipeline.dead_letters() == []


CHANGING_AGENT_CALLS: list[int] = []


def changing_agent(conversation):
    """An agent whose answer differs between calls (a language model's does): the built-in one, numbered."""
    CHANGING_AGENT_CALLS.append(1)
    reply = template_agent(conversation)
    return dataclasses.replace(reply, text=f"{reply.text}\n\ndraft {len(CHANGING_AGENT_CALLS)}")


def test_a_retry_sends_the_stored_request_not_a_new_draft(pipeline, nylas, monkeypatch):
    # The agent goes in as a team's does (REPLY_AGENT=module:function), not by patching the product.
    calls = CHANGING_AGENT_CALLS
    calls.clear()
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:changing_agent")
    app.consumer.cache_clear()
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.provider_error(503))
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    pipeline.poller().poll_once()
    nylas.advance_clock(400)
    pipeline.drain()
    # Never 409 invalid_idempotent_request recorded as "sent": one email, with the first answer.
    [sent] = nylas.sends
    assert sent.payload["body"].endswith("<p>draft 1</p>")
    assert calls == [1]
    bodies = {json.dumps(a.payload, sort_keys=True) for a in nylas.send_attempts}
    assert len(bodies) == 1
    assert all(a.status != 409 for a in nylas.send_attempts)


def test_reply_lost_with_its_answer_is_found_after_the_keys_hour_not_sent_again(pipeline, nylas):
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.lose_response())
    pipeline.deliver(as_nylas_sends_it(message))
    assert pipeline.poller().poll_once().failed == 1
    assert len(nylas.sends) == 1
    # The record comes back after the key's hour (a DLQ redrive, a long outage): the key no
    # longer fences, the stored intent's id finds the reply in the mailbox.
    nylas.advance_clock(3700)
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert nylas.count("POST", f"/v3/grants/{AGENT_GRANT_ID}/messages/send") == 1


def test_reply_never_sent_is_sent_after_the_keys_hour(pipeline, nylas):
    message = inbound(nylas)
    nylas.inject("POST", SEND_PATH, Fault.status(503))  # refused before Nylas: nothing cached, nothing sent
    pipeline.deliver(as_nylas_sends_it(message))
    assert pipeline.poller().poll_once().failed == 1
    nylas.advance_clock(3700)
    pipeline.drain()
    [sent] = nylas.sends
    assert sent.payload["reply_to_message_id"] == message["id"]


# ---- 4. sender clocks and worker clocks ----------------------------------------------------------------


def test_back_dated_follow_up_is_answered(pipeline, nylas):
    first = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(first))
    pipeline.drain()
    nylas.advance_clock(60)
    follow_up = inbound(nylas, reply_to_message_id=first["id"], date=first["date"] - 3600)
    pipeline.deliver(as_nylas_sends_it(follow_up))
    pipeline.drain()
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [first["id"], follow_up["id"]]


def test_future_dated_message_does_not_take_later_replies(pipeline, nylas):
    future = inbound(nylas, date=time.time() + 86_400)
    pipeline.deliver(as_nylas_sends_it(future))
    pipeline.drain()
    nylas.advance_clock(60)
    later = inbound(nylas, reply_to_message_id=future["id"])
    pipeline.deliver(as_nylas_sends_it(later))
    pipeline.drain()
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [future["id"], later["id"]]


def test_loop_guard_holds_on_a_worker_whose_clock_is_two_hours_fast(
    replier_env, nylas, monkeypatch, log_records, tuning
):
    # Another bot answers every reply at once; two replies an hour at most, whatever the clocks (the
    # exchange limit off: with it, the same bot is stopped by it first).
    monkeypatch.setenv("REPLY_BUDGET_PER_HOUR", "2")
    tuning["max_automatic_exchanges"] = 0
    on_time = new_container()
    fast = new_container(clock=lambda: time.time() + 7200)
    previous = None
    for container in (on_time, on_time, fast):
        message = inbound(
            nylas, from_email="bot@other.example", reply_to_message_id=previous and previous["id"]
        )
        container.handle_batch(sqs_event([as_nylas_sends_it(message)]), LocalLambdaContext("ReplierFunction"))
        previous = message
        nylas.advance_clock(5)
    assert len(nylas.sends) == 2
    assert skip_reasons(log_records)[-1] == "reply_budget_exhausted"


# ---- 5. a lost answer to the settlement's write -----------------------------------------------------


def test_settlement_retried_after_a_lost_answer_counts_the_reply_once(replier_env, nylas, monkeypatch):
    monkeypatch.setenv("REPLY_BUDGET_PER_HOUR", "2")
    session = boto3.session.Session()
    lost = []

    def apply_then_lose_the_answer(request, **_):
        # The settlement's thread update (it frees the lease): its retry meets its own write's result.
        if lost or b"REMOVE lease_owner" not in request.body or b"#outbox" not in request.body:
            return None
        lost.append(request.url)
        # DynamoDB applies the update; the answer never reaches us; botocore retries it.
        requests.post(request.url, data=request.body, headers=dict(request.headers), timeout=10)
        raise ConnectionClosedError(endpoint_url=request.url)

    session.events.register("before-send.dynamodb.UpdateItem", apply_then_lose_the_answer)
    container = new_container(aws=session)
    first = inbound(nylas)
    response = container.handle_batch(
        sqs_event([as_nylas_sends_it(first)]), LocalLambdaContext("ReplierFunction")
    )
    assert response["batchItemFailures"] == []
    assert lost
    assert len(thread_state(replier_env, first["thread_id"]).replies) == 1
    # The loop guard (2 an hour) still allows the customer's next message its reply.
    nylas.advance_clock(30)
    second = inbound(nylas, reply_to_message_id=first["id"])
    container.handle_batch(sqs_event([as_nylas_sends_it(second)]), LocalLambdaContext("ReplierFunction"))
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [first["id"], second["id"]]


# ---- 6. several agent grants, and whom a reply goes to: decisions, on the in-memory ports --------------
# (tests/unit/test_replier_decisions.py: two agent grants never answer each other; a Reply-To aimed at a
# stranger is not mailed, a trusted contact form's is)


# ---- 7. a batch slower than its invocation -------------------------------------------------------------


def test_records_that_cannot_finish_in_time_are_not_started(replier_env, nylas, monkeypatch, tuning):
    tuning["nylas_send_timeout_seconds"] = 2
    tuning["record_margin_seconds"] = 0.5
    monkeypatch.setenv("AGENT_TIMEOUT_SECONDS", "1")
    # One thread's records run one after another (another thread's would start at once, beside it).
    # The thread's item is in service (an earlier exchange, answered long ago): a brand-new thread item's
    # burst would wait the settle first (issue 48), and no record would send.
    earlier = inbound(nylas, subject="Order 1042")
    new_container().handle_batch(
        sqs_event([as_nylas_sends_it(earlier)]), LocalLambdaContext("ReplierFunction")
    )
    assert len(nylas.sends) == 1
    nylas.advance_clock(700)  # past the settle and the automatic-exchange window
    messages = [inbound(nylas, subject="Re: Order 1042", thread_id=earlier["thread_id"]) for _ in range(3)]
    nylas.inject("POST", SEND_PATH, Fault.delay(1.6), times=3)
    # 3.6 s: the first record fits (its 3.5 s lease); after its slow send the thread's others no longer do.
    # The invocation's clock and the replier's (its lease's expiry) move only with the sends Nylas held
    # (1.6 s each), not with the machine: on a loaded machine a wall clock spent the first record's 0.1 s
    # of slack before it started, or its lease's time before its send.
    sent_before = len(nylas.sends)
    started = time.time()
    held = lambda: 1.6 * (len(nylas.sends) - sent_before)  # noqa: E731 - the sends' time, as a clock
    container, visibility = container_recording_visibility(clock=lambda: started + held())
    event = sqs_event([as_nylas_sends_it(m) for m in messages])
    context = LocalLambdaContext("ReplierFunction", timeout_seconds=3.6)
    context.get_remaining_time_in_millis = lambda: int(max(0.0, 3.6 - held()) * 1000)
    response = container.handle_batch(event, context)
    assert len(nylas.sends) == 2  # the earlier exchange's, and this batch's one
    assert len(response["batchItemFailures"]) == 2
    # The started record was held for its lease; the two not started are back on the queue at once,
    # not after the queue's timeout.
    held, *returned = visibility
    assert held > 0
    assert returned == [0, 0]


# ---- configuration -------------------------------------------------------------------------------------


def test_an_empty_agent_grant_list_without_a_registry_is_a_configuration_error(replier_env, monkeypatch):
    # With a registry (the template's), its grants may be all there is (make grants set).
    monkeypatch.setenv("AGENT_GRANT_IDS", " , ")
    new_container()
    monkeypatch.setenv("GRANT_REGISTRY_TABLE", "")
    with pytest.raises(ConfigurationError, match="AGENT_GRANT_IDS is empty"):
        new_container()


def test_an_agent_grant_nylas_does_not_know_is_logged_as_an_error(pipeline, nylas, monkeypatch, log_records):
    monkeypatch.setenv("AGENT_GRANT_IDS", f"{AGENT_GRANT_ID},grant-mistyped")
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert len(nylas.sends) == 1  # the known grant still answers
    errors = [r for r in log_records() if r.get("level") == "ERROR"]
    # Said on every record while it lasts (the look-up is not kept: a refusal may be a moment's).
    assert {(r["message"], r["grant_id"]) for r in errors} == {
        (
            "Nylas refused the look-up of a grant of AGENT_GRANT_IDS; its mail waits, and the grant is "
            "looked up again on the next record (a 404 that persists is a mistyped id)",
            "grant-mistyped",
        )
    }
    # Only the refused grant is asked again on later records; the known one was described once.
    pipeline.deliver(as_nylas_sends_it(inbound(nylas)))
    pipeline.drain()
    assert len(nylas.sends) == 2
    assert (
        nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}")
        - nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}/")
        == 1
    )
    assert nylas.count("GET", "/v3/grants/grant-mistyped") >= 2


def test_own_address_is_compared_case_insensitively(pipeline, nylas, log_records):
    message = inbound(nylas, from_email=AGENT_EMAIL.upper())
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["own_outbound"]


# ---- a model that refuses for good ---------------------------------------------------------------------


class _Body:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_):
        yield self._body


def test_a_bedrock_refusal_is_recorded_as_failed_not_retried_into_the_dead_letter_queue(
    replier_env, nylas, monkeypatch, log_records
):
    monkeypatch.setenv("REPLY_AGENT", "bedrock")
    monkeypatch.setenv("BEDROCK_MODEL_ID", "us.anthropic.claude-sonnet-4-20250514-v1:0")
    session = boto3.session.Session()

    def access_denied(request, **_):
        headers = {"x-amzn-ErrorType": "AccessDeniedException:", "Content-Type": "application/json"}
        return AWSResponse(request.url, 403, headers, _Body(b'{"message":"no access to this model"}'))

    session.events.register("before-send.bedrock-runtime.Converse", access_denied)
    container = new_container(aws=session)
    message = inbound(nylas)
    event = sqs_event([as_nylas_sends_it(message)])
    first = container.handle_batch(event, LocalLambdaContext("ReplierFunction"))
    again = container.handle_batch(
        sqs_event([as_nylas_sends_it(message)]), LocalLambdaContext("ReplierFunction")
    )
    assert first == again == {"batchItemFailures": []}
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["agent_rejected", "reply_previously_failed"]


# ---- a notice with no machine sign, which the rules let through, handed to a person by the model ---------
# Whether the model calls it a machine's mail (NO_REPLY) or one a person should answer (HAND_OFF), nothing is
# sent and the mailbox shows it in Needs a person: a model that mistook a customer for a robot leaves no
# silent no (invariant 7).


@pytest.mark.parametrize(
    "answer", ["NO_REPLY: a shop's shipping notice", "HAND_OFF: only a person can say when it ships"]
)
def test_the_bedrock_models_no_sends_nothing_and_shows_in_the_hand_off_folder(
    replier_env, nylas, monkeypatch, log_records, answer
):
    monkeypatch.setenv("REPLY_AGENT", "bedrock")
    monkeypatch.setenv("BEDROCK_MODEL_ID", "us.anthropic.claude-sonnet-4-20250514-v1:0")
    session = boto3.session.Session()
    asked: list[dict] = []

    def model(request, **_):
        asked.append(json.loads(request.body))
        headers = {"Content-Type": "application/json"}
        return AWSResponse(request.url, 200, headers, _Body(json.dumps(converse_answer(answer)).encode()))

    session.events.register("before-send.bedrock-runtime.Converse", model)
    container = new_container(aws=session)
    # A shop's notice as the old ones come: no machine word in its From, no header a machine writes.
    notice = inbound(
        nylas,
        from_email="ship-confirm@shop.example",
        subject="Your order has shipped (#888-4444444)",
        body="<p>Your order 888-4444444 has shipped and will arrive Friday.</p>",
    )
    result = container.handle_batch(
        sqs_event([as_nylas_sends_it(notice)]), LocalLambdaContext("ReplierFunction")
    )
    assert result == {"batchItemFailures": []}
    assert nylas.sends == []
    assert skip_reasons(log_records) == ["handed_off"]
    assert handed_off(log_records, "handed_off")
    assert folders_of(nylas, notice["id"]) == [HANDOFF_FOLDER]
    [request] = asked
    assert request["messages"][-1]["content"][0]["text"].startswith("From: ")
    assert "<ship-confirm@shop.example>" in request["messages"][-1]["content"][0]["text"]


# ---- ordinary bodies a customer types reach the agent whole (issue #41) ---------------------------------

SEEN_BY_AGENT: list = []


def recording_order_agent(conversation):
    """The example order agent, recording what it was handed (as a team's agent goes in: REPLY_AGENT)."""
    from functions.replier.order_status_agent import reply

    SEEN_BY_AGENT.append(conversation.target)
    return reply(conversation)


ORDER_DETAILS = (
    "Hi, my order details:<br>Date: 3 December 2026<br>Subject: Order 1042, blue mug<br>Quantity: 2"
)
ORDINARY_BODIES = [
    pytest.param(
        f"{ORDER_DETAILS}<br><br>Please redeliver order 1042, nobody was home.",
        False,
        id="order details pasted as Date:/Subject: lines",
    ),
    pytest.param(
        "Hi,<br><br>On 3 December at 10:15 your courier wrote:<br>Parcel could not be delivered.<br>"
        "Please redeliver order 1042 on Friday, I will be home.",
        True,  # an attribution naming no sender: the customer's, or history with its quotes lost
        id="'On 3 December at 10:15 your courier wrote:' and the customer's own text",
    ),
    pytest.param(
        "Hi, my order:<br>--<br>Order 1042<br>Blue mug x2<br>--<br>Please redeliver order 1042 to 5 Elm St.",
        False,
        id="a list separated by '--' lines",
    ),
    pytest.param(
        "Hi, my order:<br>--<br>Order 1042<br>Blue mug x2<br><br>Please redeliver order 1042 to 5 Elm St.",
        True,  # a lone '--' above words no signature holds: the customer's, or a signature
        id="a list under one '--' line",
    ),
    pytest.param(
        "On Thursday.<br>Please redeliver order 1042 then.<br><br>"
        "On Mon, 30 Nov 2026 at 10:02, Acme Support &lt;support@acme.example&gt; wrote:"
        "<blockquote>When can we deliver?</blockquote>",
        False,
        id="a reply beginning 'On Thursday.' above a quote",
    ),
]


@pytest.mark.parametrize(("body", "in_doubt"), ORDINARY_BODIES)
def test_an_ordinary_body_reaches_the_agent_whole(pipeline, nylas, monkeypatch, body, in_doubt):
    SEEN_BY_AGENT.clear()
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:recording_order_agent")
    app.consumer.cache_clear()
    message = inbound(nylas, subject="Redelivery", body=f"<div>{body}</div>")
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    [seen] = SEEN_BY_AGENT
    assert "Please redeliver order 1042" in seen.text  # never cut away: kept, behind the unsure marker
    assert (UNSURE_MARKER in seen.text) is in_doubt  # the doubt only where a customer's words may be history
    assert "When can we deliver?" not in seen.text.split(UNSURE_MARKER)[0]
    assert "Please redeliver order 1042" in seen.full_text
    [sent] = nylas.sends
    assert "Order 1042 is shipped" in sent.payload["body"]  # answered, not handed off as "no order number"
