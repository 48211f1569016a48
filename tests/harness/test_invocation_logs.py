"""Every line the local stack's handlers log names the function, service and invocation that wrote it.

The local stack runs both functions in one process with one Powertools Logger
(``devstack/invocation_logs.py`` explains why that mixed them up); these
tests overlap a webhook invocation with a replier invocation, as a running
stack does all the time, and check each line's stamp.
"""

import threading

import requests

from devstack.containers import load_handler
from devstack.events import AGENT_GRANT_ID, encode, envelope, load_event, message_created, sqs_event
from devstack.lambda_context import LocalLambdaContext
from devstack.nylas import Fault
from devstack.sample_mailbox import seed_sample_mailbox
from devstack.stack import LocalStack, StackSettings
from devstack.template import LOCAL_WEBHOOK_SECRET
from replyonce.rules.signature import sign


def test_replier_lines_written_while_the_webhook_runs_keep_the_replier_stamp():
    with LocalStack(StackSettings(pollers=0)) as stack:
        assert stack.emulator is not None
        seed_sample_mailbox(stack.emulator)
        replier = load_handler("ReplierFunction")
        context = LocalLambdaContext("ReplierFunction")
        # The send is slow: the webhook is invoked (on the gateway's thread) while the replier waits.
        stack.emulator.inject("POST", r"/messages/send$", Fault.delay(1.5))
        outcome: dict = {}
        worker = threading.Thread(
            target=lambda: outcome.update(
                response=replier(load_event("replier-message-created.json"), context)
            )
        )
        worker.start()
        while stack.emulator.count("POST", "/v3/grants/") == 0 and worker.is_alive():
            threading.Event().wait(0.02)
        body = encode(message_created(message_id="msg-overlap-0001"))
        webhook = requests.post(
            stack.webhook_url,
            data=body,
            headers={"X-Nylas-Signature": sign(body, LOCAL_WEBHOOK_SECRET)},
            timeout=10,
        )
        worker.join(timeout=30)
        records = list(stack.logs.records)

    assert webhook.status_code == 200
    assert outcome["response"] == {"batchItemFailures": []}
    [queued] = [r for r in records if r.get("message") == "notification queued"]
    [sent] = [r for r in records if r.get("message") == "reply sent"]
    assert (queued["function_name"], sent["function_name"]) == ("WebhookFunction", "ReplierFunction")
    assert sent["function_request_id"] == context.aws_request_id
    assert queued["function_request_id"] != context.aws_request_id
    # The webhook's correlation id (its notification id) is not stamped on the replier's line.
    assert sent.get("correlation_id") != queued["notification_id"]
    # Each function's POWERTOOLS_SERVICE_NAME from the template, though they share one process.
    assert (queued["service"], sent["service"]) == ("replyonce-webhook", "replyonce-replier")
    # The metrics, too: each EMF line holds its own invocation's metrics, under its own service.
    [accepted] = [r for r in records if "_aws" in r and "NotificationAccepted" in r]
    [replied] = [r for r in records if "_aws" in r and "ReplySent" in r]
    assert (accepted.get("service"), replied.get("service")) == ("replyonce-webhook", "replyonce-replier")
    assert "ReplySent" not in accepted
    assert "NotificationAccepted" not in replied


def test_a_batchs_threads_log_and_count_as_their_invocation():
    # The consumer runs the threads of a batch at once on its pool: their lines and metrics belong to
    # the invocation that received the batch, as in Lambda's one process.
    with LocalStack(StackSettings(pollers=0)) as stack:
        assert stack.emulator is not None
        messages = [
            stack.emulator.deliver_inbound(
                AGENT_GRANT_ID, from_email=f"c{n}@example.com", subject=f"Order {n}", body="<p>Late</p>"
            )
            for n in range(3)
        ]
        replier = load_handler("ReplierFunction")
        context = LocalLambdaContext("ReplierFunction")
        response = replier(sqs_event([envelope(m) for m in messages]), context)
        records = list(stack.logs.records)
    assert response == {"batchItemFailures": []}
    sent = [r for r in records if r.get("message") == "reply sent"]
    assert len(sent) == 3
    assert {(r["function_name"], r["function_request_id"], r["service"]) for r in sent} == {
        ("ReplierFunction", context.aws_request_id, "replyonce-replier")
    }
    [replied] = [r for r in records if "_aws" in r and "ReplySent" in r]
    assert replied["ReplySent"] == [1.0, 1.0, 1.0]
