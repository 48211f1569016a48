"""The team's agent behind the real handler: what it is given, and what each of its outcomes does at Nylas.

``REPLY_AGENT`` names a module of ``functions/replier/`` (the example agent,
whose function a test wraps to watch its calls); the handler is the real one,
counted at the Nylas emulator.
"""

import json
import re
import sys
import time

import pytest

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, envelope, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault
from functions.replier import app
from replyonce.agent import AgentRejected, Handoff, NoReply, Reply
from tests.replier_harness import deferrals, inbound, metrics_emitted, skip_reasons

sys.path.insert(0, "functions/replier")
import order_status_agent


def as_nylas_sends_it(message: dict) -> dict:
    return envelope({k: v for k, v in message.items() if k != "headers"})


@pytest.fixture
def agent(replier, monkeypatch):
    """The example agent as ``REPLY_AGENT``, its calls recorded; ``agent.answer`` replaces what it returns."""
    calls = []
    answer = {}

    def watched(conversation):
        calls.append(conversation)
        return (
            answer["outcome"](conversation)
            if "outcome" in answer
            else order_status_agent.ORIGINAL(conversation)
        )

    monkeypatch.setattr(order_status_agent, "ORIGINAL", order_status_agent.reply, raising=False)
    monkeypatch.setattr(order_status_agent, "reply", watched)
    monkeypatch.setenv("REPLY_AGENT", "order_status_agent:reply")
    app.consumer.cache_clear()
    watched.calls = calls
    watched.answer = answer
    yield watched
    app.consumer.cache_clear()


def test_a_burst_reaches_the_agent_once_with_the_whole_conversation(pipeline, nylas, agent):
    first = inbound(nylas, subject="Order 1042", body="<p>Where is order 1042?</p>")
    pipeline.deliver(as_nylas_sends_it(first))
    pipeline.drain()
    [earlier_reply] = nylas.sent_messages(thread_id=first["thread_id"])
    # Past a new thread item's wait (issue 48: a burst of more than one message on an item younger than
    # pending_confirm_seconds waits that long).
    nylas.advance_clock(700)
    burst = [
        inbound(
            nylas, reply_to_message_id=earlier_reply["id"], subject="Re: Order 1042", body=f"<p>{text}</p>"
        )
        for text in (
            "Still not here.",
            "And order 1043?",
            "Also 1044.</p><p>On Mon, Acme wrote:<br>&gt; old text",
        )
    ]
    for message in burst:
        pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    assert len(agent.calls) == 2  # the first message, then the burst: once
    conversation = agent.calls[1]
    assert [m.id for m in conversation.to_answer] == [m["id"] for m in burst]
    assert conversation.target.id == burst[-1]["id"]
    assert [m.from_agent for m in conversation.messages] == [False, True, False, False, False]
    assert conversation.messages[1].id == earlier_reply["id"]
    assert conversation.messages[1].sender == AGENT_EMAIL
    assert conversation.to_answer[2].text == "Also 1044."  # the quoted history is not the customer's
    assert len(nylas.sends) == 2
    assert "Order 1043 is being packed" in nylas.sends[1].payload["body"]
    # The thread fit one page: the conversation cost no Nylas request of its own (two replies, each one
    # thread read and one look before its send).
    assert nylas.count("GET", f"/v3/grants/{AGENT_GRANT_ID}/messages") == 4


def test_no_reply_sends_nothing_and_is_a_skip_with_the_agents_reason(pipeline, nylas, agent, log_records):
    agent.answer["outcome"] = lambda conversation: NoReply("just a thank-you")
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    pipeline.deliver(as_nylas_sends_it(message))  # a second notification for it: not asked again
    pipeline.drain()
    assert nylas.sends == []
    assert len(agent.calls) == 1
    assert skip_reasons(log_records) == ["agent_declined", "agent_declined"]
    [declined] = [r for r in log_records() if r.get("reason") == "agent_declined" and r.get("detail")]
    assert declined["detail"] == "just a thank-you"


def test_a_handoff_sends_nothing_is_counted_never_offered_again_and_files_the_message(
    pipeline, nylas, agent, log_records, monkeypatch, capsys
):
    monkeypatch.setenv("HANDOFF_FOLDER", "archive")
    app.consumer.cache_clear()
    message = inbound(nylas, subject="Refund", body="<p>I want a refund for order 1042</p>")
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.drain()
    follow_up = inbound(nylas, reply_to_message_id=message["id"], body="<p>Also, order 1043?</p>")
    pipeline.deliver(as_nylas_sends_it(follow_up))
    pipeline.drain()
    assert len(agent.calls) == 2
    assert [m.id for m in agent.calls[1].to_answer] == [
        follow_up["id"]
    ]  # the handed-off one is not offered again
    assert skip_reasons(log_records)[0] == "handed_off"
    assert "HandedOff" in capsys.readouterr().out
    moved = nylas.requests.count(("PUT", f"/v3/grants/{AGENT_GRANT_ID}/messages/{message['id']}"))
    assert moved == 1
    assert [s.payload["reply_to_message_id"] for s in nylas.sends] == [follow_up["id"]]


@pytest.mark.parametrize("how", ["reply", "mode"])
def test_review_makes_exactly_one_draft_and_no_send_across_a_crash_and_a_redelivery(
    pipeline, nylas, agent, monkeypatch, how
):
    if how == "mode":
        monkeypatch.setenv("REPLY_MODE", "review")
        app.consumer.cache_clear()
    else:
        agent.answer["outcome"] = lambda conversation: Reply(text="Refund approved?", review=True)
    message = inbound(nylas)
    # The first creation's answer is lost: the draft exists, the replier does not know.
    nylas.inject("POST", rf"^/v3/grants/{AGENT_GRANT_ID}/drafts$", Fault.lose_response())
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    nylas.advance_clock(400)  # past the settle time: the mailbox is asked, not Nylas again
    pipeline.drain()
    pipeline.deliver(as_nylas_sends_it(message))  # a redelivery later
    pipeline.drain()
    assert nylas.sends == []
    assert len(nylas.drafts) == 1
    [draft] = nylas.drafts
    assert draft.payload["metadata"]["key1"]
    assert draft.payload["reply_to_message_id"] == message["id"]
    assert len(agent.calls) == 1


def test_a_slow_agent_is_a_retry_never_a_half_stored_reply(pipeline, nylas, agent, monkeypatch, log_records):
    monkeypatch.setenv("AGENT_TIMEOUT_SECONDS", "1")
    app.consumer.cache_clear()
    slow = {"left": 1}

    def sometimes_slow(conversation):
        if slow["left"]:
            slow["left"] -= 1
            time.sleep(1.5)
        return Reply(text="Here you are.")

    agent.answer["outcome"] = sometimes_slow
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    assert nylas.sends == []
    assert deferrals(log_records) == ["agent_failed"]
    pipeline.drain()
    assert len(nylas.sends) == 1
    assert len(agent.calls) == 2


def test_an_agent_that_cannot_be_loaded_sends_every_record_back_with_one_clear_line(
    replier, nylas, monkeypatch, log_records
):
    monkeypatch.setenv("REPLY_AGENT", "no_such_module:reply")
    app.consumer.cache_clear()
    message = inbound(nylas)
    event = sqs_event([as_nylas_sends_it(message), as_nylas_sends_it(inbound(nylas))])
    response = app.lambda_handler(event, LocalLambdaContext("ReplierFunction"))
    assert len(response["batchItemFailures"]) == 2
    [line] = [r for r in log_records() if r.get("reason") == "configuration"]
    assert line["message"].startswith("replier cannot start")
    assert "no_such_module" in line["detail"]
    assert skip_reasons(log_records) == []


def test_an_agent_answer_of_the_wrong_type_is_retried_not_sent(pipeline, nylas, agent, log_records):
    agent.answer["outcome"] = lambda conversation: "hello"
    pipeline.deliver(as_nylas_sends_it(inbound(nylas)))
    pipeline.poller().poll_once()
    assert nylas.sends == []
    [line] = [r for r in log_records() if r.get("reason") == "agent_failed"]
    assert "not Reply, NoReply or Handoff" in json.dumps(line)


def test_the_conversation_key_is_the_same_on_every_retry_of_a_burst(pipeline, nylas, agent):
    flaky = {"left": 1}

    def fails_once(conversation):
        if flaky["left"]:
            flaky["left"] -= 1
            raise RuntimeError("the helpdesk timed out")
        return Handoff("a person decides")

    agent.answer["outcome"] = fails_once
    pipeline.deliver(as_nylas_sends_it(inbound(nylas)))
    pipeline.drain()
    assert len(agent.calls) == 2
    assert agent.calls[0].key == agent.calls[1].key


def test_every_call_of_the_agent_is_counted_beside_its_failures(pipeline, nylas, agent, capsys):
    # The agent-failing alarm divides the failed calls by the calls: both must be counted, each once.
    flaky = {"left": 2}

    def throttled_twice(conversation):
        if flaky["left"]:
            flaky["left"] -= 1
            raise RuntimeError("ThrottlingException: too many tokens, please wait before trying again")
        return Reply(text="Here you are.")

    agent.answer["outcome"] = throttled_twice
    capsys.readouterr()
    pipeline.deliver(as_nylas_sends_it(inbound(nylas)))
    pipeline.drain()
    emitted = metrics_emitted(capsys.readouterr().out)
    assert len(nylas.sends) == 1
    assert [name for name, _ in emitted].count("AgentAsked") == len(agent.calls) == 3
    failed = [d for name, d in emitted if name == "RecordDeferred" and d.get("reason") == "agent_failed"]
    assert len(failed) == 2


ADDRESS = re.compile(r"[\w.+'-]+@[\w-]+(\.[\w-]+)+")


def test_an_agents_exception_text_reaches_no_log_line_with_the_customers_address(
    pipeline, nylas, agent, log_records
):
    # A team's agent (or Bedrock) may quote the customer in its error: the retry's detail, the error
    # line and its traceback, and a final refusal's skip detail carry the text, the address redacted.
    told = {"left": 1}

    def quotes_the_customer(conversation):
        if told["left"]:
            told["left"] -= 1
            raise RuntimeError(f"CRM lookup failed for {conversation.target.sender}")
        raise AgentRejected(f"no account for {conversation.target.sender} in the CRM")

    agent.answer["outcome"] = quotes_the_customer
    pipeline.deliver(as_nylas_sends_it(inbound(nylas, from_email="carol.smith@customer.example")))
    pipeline.drain()
    assert nylas.sends == []
    records = log_records()
    [retried] = [r for r in records if r.get("reason") == "agent_failed"]
    assert retried["detail"] == "RuntimeError: CRM lookup failed for <email>"
    [failed] = [r for r in records if r.get("message") == "the agent failed; the record will be retried"]
    assert "CRM lookup failed for <email>" in failed["traceback"]
    [refused] = [r for r in records if r.get("reason") == "agent_rejected"]
    assert refused["detail"].endswith("no account for <email> in the CRM")
    assert [json.dumps(r) for r in records if ADDRESS.search(json.dumps(r))] == []
