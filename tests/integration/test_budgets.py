"""Request budgets per notification (issue 6), counted at the wire and asserted exactly.

Counts are deterministic, so CI enforces them; times are not, so nothing here
is timed (``make bench`` reports times in ``docs/performance.md``). Every test
runs the real consumer or endpoint built from a boto3 Session whose botocore
``before-send`` hook counts each HTTP request, and reads the Nylas emulator's
request log. An exact ``==`` on the whole tally means a new request anywhere
on a path fails the build until the budget and the report are revisited.

Budgets:

- duplicate delivery: 1 DynamoDB request, 0 Nylas calls;
- first reply: 9 DynamoDB requests, on a new thread as on one the table knows (issue 46: 12 and 11
  before), one more to a recipient answered within the hour (``FIRST_REPLY_DYNAMODB``), and their
  write units, 14 (``FIRST_REPLY_WRITE_UNITS``; issue 46: 10 in 12 requests before, 16 in 10 before
  that); exactly 1 send and 2 thread reads (the
  thread is read inside the lease, with headers, to decide the burst and its
  newest message; it carries the body, so a truncated notification costs no
  extra fetch; and the look before the send, one small page of the newest
  messages, after the agent answered: a person may have answered meanwhile),
  plus 1 grant lookup per agent grant, 1 folders lookup per grant (and 1
  secret read, and 1 DynamoDB Query of the grant registry: ``REGISTRY_READ``, again once its 60 s
  cache has aged) per container, on its first notification; a reconcile, a
  search or a second page is extra and counted where it happens;
- a reply with files (issue 44): 1 Nylas download per file the agent reads (none for a file it does not),
  1 S3 PutObject per file the reply carries (before its intent is stored) and none to send it from the
  same record, 1 S3 GetObject per file when a later record sends it; a reply over 3 MB is one
  multipart send;
- our own reply's echo (``message.created`` of a reply we sent, by its metadata): nothing;
- webhook: exactly 1 SQS SendMessage per accepted notification and no Secrets
  Manager call once warm;
- webhook cold start: nothing heavy on the import path (what a fresh
  interpreter loads is deterministic; how long it takes is ``make bench``'s).
"""

import random
import time
from collections import Counter

import boto3
import pytest

from devstack.cold_start import LAYER, PROFILES, Profile, imported_modules
from devstack.counting import (
    ATTACHMENT_READ,
    FOLDER_CREATED,
    FOLDERS_LOOKUP,
    GRANT_LOOKUP,
    MESSAGE_FETCH,
    SEND,
    THREAD_READ,
    ReplierHarness,
    WebhookHarness,
    already_replied,
    busy_thread,
    duplicate_delivery,
    first_reply,
    ignored_type,
    inbound,
    own_outbound,
    truncated_first_reply,
    warm,
)
from devstack.events import AGENT_GRANT_ID, envelope, message_created
from devstack.nylas import Fault
from replyonce.adapters.state_items import LEASE_EXPIRES_AT, LEASE_OWNER
from replyonce.agent import Conversation, Reply, ReplyAttachment
from replyonce.state import thread_key

# What a first reply costs in DynamoDB, in order: idempotency record put; the ledger read, with the
# table's beginning (``table#began``, which dates a thread item the lease creates: issue 32) in the same
# ``BatchGetItem`` (issue 46: a GetItem each, the second once per new thread); the lease update (returns
# the thread state); the email's claim (a conditional put on its Message-ID); the recipient's hourly
# budget; the send intent stored, right before the send, in one ``TransactWriteItems`` of three items:
# the outbox entry (conditioned on the lease, and dating a new thread item), the intent's request in its
# body item, and a ``ConditionCheck`` that the grant's life in the grant registry does not say deleted
# (issue 42: a grant Nylas deleted sends nothing after its notification, whatever the registry's cache
# says; issue 46: a strongly consistent GetItem of its own before, and the body item a put of its own);
# the ledger entries (one batch of plain puts) and then the thread's update under the lease (no
# transaction); the idempotency record completed. 9, on a new thread as on one the table knows.
FIRST_REPLY_DYNAMODB = {
    "PutItem": 2,
    "BatchGetItem": 1,
    "UpdateItem": 4,
    "TransactWriteItems": 1,
    "BatchWriteItem": 1,
}
# The grant registry, read whole by one Query per container and cache period (registry_max_age_seconds,
# 60 s; issue 42): on a cold container's first record, and not again within the minute.
REGISTRY_READ = {"Query": 1}
# And one SQS request: before the lease, the record's visibility is set to what the lease may last, so
# a worker that dies holding it gives its record back when the lease can have expired.
FIRST_REPLY_AWS = Counter(
    {("dynamodb", operation): n for operation, n in FIRST_REPLY_DYNAMODB.items()}
) + Counter({("sqs", "ChangeMessageVisibility"): 1})
# Its DynamoDB write units (``devstack.counting.WriteUnitCounter``: a unit per KB of the larger of an
# item's images, a refused conditional write too, twice for an item of a transaction), by operation:
# the idempotency record put and the email's claim (1 each); the lease, the recipient's hour, the
# settlement's thread update and the idempotency record completed (1 each: the thread item, its request
# elsewhere, stays under 1 KB); the intent's transaction, 2 for each of its three items (the outbox
# entry, the body item within 1 KB, the grant life's check: 6, where the body's put and the entry's
# update were 1 each and the life's read a read unit); the ledger entry and the reply's own (1 each).
# 14: fewer requests cost write units (issue 46's done-when: under 10 requests and under 20 units).
# Before: 10 in 12 requests; 16 before that, the settlement one transaction (2 x (1 + 1 + 2) = 8), the
# intent stored 2 (the thread item held its request and passed 1 KB), the new thread's dating an update
# of its own (1). A body over 1 KB is put by itself before the transaction (a unit per KB, once), so a
# larger reply adds to its body item only.
FIRST_REPLY_WRITE_UNITS = Counter(
    {"PutItem": 2, "UpdateItem": 4, "TransactWriteItems": 6, "BatchWriteItem": 2}
)

# The thread read that plans the burst, and the look before the send (core.LookBeforeSend).
FIRST_REPLY_NYLAS = Counter({THREAD_READ: 2, SEND: 1})


@pytest.fixture
def cold(replier_env, nylas, tuning) -> ReplierHarness:
    """A container that has handled nothing yet."""
    return ReplierHarness(replier_env, nylas, tuning, write_units=True)


@pytest.fixture
def container(cold) -> ReplierHarness:
    """A warm container: one reply made, so the grant's address and the API key are cached."""
    return warm(cold)


@pytest.fixture
def webhook(aws, monkeypatch) -> WebhookHarness:
    """A webhook container (its own copy of functions/webhook/app.py) with the template's environment."""
    for name, value in aws.function_environment("WebhookFunction").items():
        monkeypatch.setenv(name, value)
    return WebhookHarness()


# ---- replier -------------------------------------------------------------------------------------------


def test_duplicate_delivery_costs_one_dynamodb_request_and_no_nylas_call(container):
    step = duplicate_delivery(container)
    assert not step.failed
    assert step.tally.aws == Counter({("dynamodb", "PutItem"): 1})
    assert step.tally.write_units == Counter({"PutItem": 1})  # refused, and billed
    assert step.tally.nylas_total == 0


# The warm-up reply went to the same customer within the hour: its recipient slot is taken, and the
# reservation's first conditional write, refused, returns the item, which names a free slot: one more.
SAME_RECIPIENT_AGAIN = Counter({("dynamodb", "UpdateItem"): 1})
SAME_RECIPIENT_AGAIN_UNITS = Counter({"UpdateItem": 1})  # the refused write is billed


def test_first_reply_on_a_warm_container_stays_within_budget(container):
    step = first_reply(container)
    assert not step.failed
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN  # no Secrets Manager once warm
    assert step.tally.write_units == FIRST_REPLY_WRITE_UNITS + SAME_RECIPIENT_AGAIN_UNITS
    assert step.tally.service("dynamodb") == 10  # 9 and the refused slot; 13 before issue 46's diet
    assert step.tally.nylas == FIRST_REPLY_NYLAS


def test_first_reply_on_a_cold_container_adds_one_grant_and_one_folders_lookup_and_one_secret_read(cold):
    step = first_reply(cold)
    assert not step.failed
    assert step.tally.operations("dynamodb") == {**FIRST_REPLY_DYNAMODB, **REGISTRY_READ}
    assert step.tally.write_units == FIRST_REPLY_WRITE_UNITS
    assert step.tally.operations("secrets-manager") == {"GetSecretValue": 1}
    # The folders tell which are junk, trash and Sent (their ids), once per container and grant; a grant
    # without the hand-off folder gets it once, ever (invariant 7: a hand-off the mailbox shows).
    assert step.tally.nylas == FIRST_REPLY_NYLAS + Counter(
        {GRANT_LOOKUP: 1, FOLDERS_LOOKUP: 1, FOLDER_CREATED: 1}
    )
    # And only once: the next reply of the same container looks nothing up again.
    again = first_reply(cold)
    assert again.tally.nylas == FIRST_REPLY_NYLAS
    assert "Query" not in again.tally.operations("dynamodb")  # the registry as read, within its 60 s
    assert again.tally.service("secrets-manager") == 0


def test_a_reply_on_a_thread_the_table_knows_costs_what_a_first_reply_costs(container, nylas):
    # Issue 46: the table's beginning is read with the ledger whether or not the thread is new (no
    # request more for a new thread, where it was a GetItem of its own), and the thread item is there.
    message = inbound(nylas)
    assert not container.process(envelope(message)).failed
    step = container.process(envelope(inbound(nylas, thread_id=message["thread_id"], subject="Re: order")))
    assert not step.failed
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN
    assert step.tally.write_units == FIRST_REPLY_WRITE_UNITS + SAME_RECIPIENT_AGAIN_UNITS
    assert step.tally.nylas == FIRST_REPLY_NYLAS


def test_truncated_notification_costs_what_a_first_reply_costs(container):
    # The thread read inside the lease carries the full message: no separate fetch.
    step = truncated_first_reply(container)
    assert not step.failed
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN
    assert step.tally.nylas == FIRST_REPLY_NYLAS
    assert step.tally.nylas[MESSAGE_FETCH] == 0


def test_ignored_type_costs_the_idempotency_record_only(container):
    step = ignored_type(container)
    assert step.tally.aws == Counter({("dynamodb", "PutItem"): 1, ("dynamodb", "UpdateItem"): 1})
    assert step.tally.nylas_total == 0


def test_own_outbound_message_costs_nothing(container):
    # Our reply's echo, known by the metadata our send set (the payload alone): skipped before the
    # idempotency record, which no side effect needs (issue 46: it was a put and an update, 2 units).
    step = own_outbound(container)
    assert step.tally.aws == Counter()
    assert step.tally.write_units == Counter()
    assert step.tally.nylas_total == 0


def test_already_replied_message_stops_at_the_ledger(container):
    step = already_replied(container)
    assert step.tally.operations("dynamodb") == {"BatchGetItem": 1, "PutItem": 1, "UpdateItem": 1}
    assert step.tally.nylas_total == 0


def test_busy_thread_fails_fast_without_calling_nylas(container, replier_env):
    step = busy_thread(container, replier_env.tables["StateTable"])
    assert step.failed
    # Idempotency put, ledger read, refused lease, idempotency record deleted so the retry can run.
    assert step.tally.operations("dynamodb") == {
        "DeleteItem": 1,
        "BatchGetItem": 1,
        "PutItem": 1,
        "UpdateItem": 1,
    }
    # Held for the lease it was about to take, then made visible again in busy_retry_seconds rather
    # than after the queue's visibility timeout.
    assert step.tally.operations("sqs") == {"ChangeMessageVisibility": 2}
    assert step.tally.nylas_total == 0


def test_a_record_waiting_on_a_busy_thread_polls_with_reads_and_takes_the_lease_once_free(
    replier_env, nylas, tuning
):
    # Issue 46: each look at a held lease is a consistent read; the conditional write that takes it is
    # sent once the read shows it free (a refused write is billed as a write).
    waiting = warm(ReplierHarness(replier_env, nylas, {**tuning, "lease_wait_seconds": 5}, write_units=True))
    table = replier_env.tables["StateTable"]
    message = inbound(nylas)
    key = {"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}}
    dynamodb = boto3.client("dynamodb")  # the other worker's: not counted
    dynamodb.put_item(
        TableName=table,
        Item={
            **key,
            LEASE_OWNER: {"S": "another-worker"},
            LEASE_EXPIRES_AT: {"N": str(int(time.time() * 1000) + 60_000)},
        },
    )
    polls = []

    def wait(seconds: float) -> None:  # the holder settles during the third wait
        polls.append(seconds)
        if len(polls) == 3:
            dynamodb.update_item(
                TableName=table, Key=key, UpdateExpression=f"REMOVE {LEASE_OWNER}, {LEASE_EXPIRES_AT}"
            )

    waiting.consumer._replier._sleep = wait
    step = waiting.process(envelope(message))
    assert not step.failed
    assert len(polls) == 3
    # A first reply's requests, and: the refused take that began the wait (one billed write), three looks
    # (reads), and no write for any of them.
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN + Counter(
        {("dynamodb", "UpdateItem"): 1, ("dynamodb", "GetItem"): 3}
    )
    assert step.tally.write_units == FIRST_REPLY_WRITE_UNITS + SAME_RECIPIENT_AGAIN_UNITS + Counter(
        {"UpdateItem": 1}
    )


WORDS = [
    "order",
    "parcel",
    "delivery",
    "tracking",
    "refund",
    "invoice",
    "address",
    "courier",
    "warehouse",
    "shipped",
    "arrives",
    "week",
]
reply_size = {"chars": 0}


def answers_at_length(conversation: Conversation) -> Reply:
    """Answers with ``reply_size["chars"]`` characters of varied prose (it compresses as text does)."""
    rng = random.Random(reply_size["chars"])
    text = ""
    while len(text) < reply_size["chars"]:
        text += " ".join(rng.choice(WORDS) for _ in range(12)) + ".\n"
    return Reply(text=text[: reply_size["chars"]])


@pytest.mark.parametrize(
    ("chars", "body_units"),
    [
        (3_000, 1),  # a few KB of reply: its body item, compressed, stays within one unit
        (8_000, 2),  # compressed past 1 KB: its body item is 2 units, written once, by itself
    ],
)
def test_a_longer_reply_costs_write_units_in_its_body_item_only(
    replier_env, nylas, tuning, monkeypatch, chars, body_units
):
    # Issue 46: the request is out of the thread item, so no write of the thread grows with the reply.
    # (Before, with it in the thread item: 25 units at 3,000 characters and 40 at 8,000, measured with
    # this counter on 47b69ed.)
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:answers_at_length")
    reply_size["chars"] = chars
    step = first_reply(ReplierHarness(replier_env, nylas, tuning, write_units=True))
    assert not step.failed
    put_items = FIRST_REPLY_DYNAMODB["PutItem"] + (body_units > 1)  # a body over 1 KB: put by itself
    assert step.tally.operations("dynamodb") == {
        **FIRST_REPLY_DYNAMODB,
        **REGISTRY_READ,
        "PutItem": put_items,
    }
    assert step.tally.write_units == longer_reply(body_units)


def longer_reply(body_units: int) -> Counter:
    """A first reply's write units with a body item of ``body_units``: within one unit it rides in the
    intent's transaction (2 units there); over it, it is put by itself first (its units once)."""
    if body_units == 1:
        return FIRST_REPLY_WRITE_UNITS
    return FIRST_REPLY_WRITE_UNITS + Counter({"PutItem": body_units, "TransactWriteItems": -2})


def test_counts_are_deterministic(container, nylas):
    # The same path twice gives the same tally: a budget that flickers could not be enforced.
    first, second = first_reply(container), first_reply(container)
    assert first.tally == second.tally
    assert len(nylas.sends) == 3  # warm-up and the two replies


def test_the_write_unit_counter_bills_as_dynamodb_does(container, replier_env):
    # Guard the unit counter: by the item's size, a refused conditional write too, a transaction twice.
    client = container.aws.session.client("dynamodb")
    table = replier_env.tables["StateTable"]
    big = {"pk": {"S": "units#guard"}, "text": {"S": "x" * 2500}}  # 2.5 KB and a few bytes: 3 units
    with container.meter.measure() as tally:
        client.put_item(TableName=table, Item=big)
    assert tally.write_units == Counter({"PutItem": 3})
    with container.meter.measure() as tally, pytest.raises(client.exceptions.ConditionalCheckFailedException):
        client.put_item(TableName=table, Item=big, ConditionExpression="attribute_not_exists(pk)")
    assert tally.write_units == Counter({"PutItem": 3})
    with container.meter.measure() as tally:  # the larger image: 3 units before, 1 after
        client.put_item(TableName=table, Item={"pk": {"S": "units#guard"}})
    assert tally.write_units == Counter({"PutItem": 3})
    with container.meter.measure() as tally:
        client.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": big}}])
    assert tally.write_units == Counter({"TransactWriteItems": 6})


# ---- webhook -------------------------------------------------------------------------------------------


def test_webhook_queues_each_notification_with_one_send_message(webhook):
    cold = webhook.post(message_created(notification_id="budget-0001"))
    assert cold.status == 200
    # The first request reads the secret once; Powertools Parameters caches it for the container.
    assert cold.tally.aws == Counter({("sqs", "SendMessage"): 1, ("secrets-manager", "GetSecretValue"): 1})
    for index in range(2, 5):
        warm_step = webhook.post(message_created(notification_id=f"budget-000{index}"))
        assert warm_step.status == 200
        assert warm_step.tally.aws == Counter({("sqs", "SendMessage"): 1})


def test_forged_requests_queue_nothing_and_cannot_multiply_secret_reads(webhook):
    webhook.post(message_created())  # warm: the secret is cached
    first = webhook.post(message_created(), forged=True)
    assert first.status == 401
    # One fresh read in case the secret was rotated, then none for the refresh interval: meanwhile an
    # unverifiable signature may be a genuine one under a newer secret, so it gets a 503 Nylas retries.
    assert first.tally.aws == Counter({("secrets-manager", "GetSecretValue"): 1})
    for _ in range(3):
        again = webhook.post(message_created(), forged=True)
        assert again.status == 503
        assert again.tally.aws == Counter()


def test_the_counter_sees_every_request(container, replier_env):
    # Guard the counter itself: a hook that missed requests would let every budget pass.
    client = container.aws.session.client("dynamodb")
    with container.meter.measure() as tally:
        client.describe_table(TableName=replier_env.tables["StateTable"])
    assert tally.aws == Counter({("dynamodb", "DescribeTable"): 1})


# ---- webhook import path -------------------------------------------------------------------------------

# What the webhook must never load at cold start: the replier's machinery and the Powertools
# utilities only the replier uses. (Powertools' event data classes stay: parsing the proxy event is
# what they are for, at ~9 ms of the cold start.)
NOT_ON_THE_WEBHOOK_PATH = (
    "requests",
    "aws_lambda_powertools.utilities.idempotency",
    "aws_lambda_powertools.utilities.batch",
    "replyonce.shell.consumer",
    "replyonce.shell.replier",
)


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: "lambda" if p.in_lambda else "outside-lambda")
def test_webhook_import_path_carries_nothing_heavy(profile: Profile):
    modules = imported_modules("webhook", profile)
    assert [name for name in NOT_ON_THE_WEBHOOK_PATH if name in modules] == []


@pytest.mark.parametrize("target", ["webhook", "replier"])
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: "lambda" if p.in_lambda else "outside-lambda")
def test_no_function_loads_the_x_ray_sdk(target: str, profile: Profile):
    # Both functions are traced by the Lambda service (template.yaml, Tracing: Active), so the X-Ray
    # SDK (end of support 2027-02-25) is neither shipped in the layer nor imported: where it is still
    # installed (an old virtualenv) this catches an import of it; where it is not, such an import
    # would fail the child's cold start and so this test.
    modules = imported_modules(target, profile)
    assert [name for name in modules if name.split(".")[0] == "aws_xray_sdk"] == []
    layer = (LAYER / "requirements.txt").read_text()
    assert "aws-xray-sdk" not in layer
    assert "aws-lambda-powertools[tracer]" not in layer


# ---- attachments (issue 44) ----------------------------------------------------------------------------

PDF = b"%PDF-1.4\n" + bytes(20_000)
PHOTO = b"\x89PNG\r\n\x1a\n" + bytes(30_000)
LARGE_PDF = b"%PDF-1.7\n" + bytes(3_000_000)  # over 3 MB as base64 JSON: multipart
answer_with = {"file": PDF}


def reads_the_pdf_and_answers_with_a_file(conversation: Conversation) -> Reply:
    """Reads the customer's PDFs (not their photos) and answers with ``answer_with["file"]``."""
    for attachment in (a for m in conversation.to_answer for a in m.attachments):
        if attachment.content_type == "application/pdf":
            attachment.read()
    file = ReplyAttachment(answer_with["file"], "answer.pdf", "application/pdf")
    return Reply(text="Here it is.", attachments=(file,))


@pytest.fixture
def with_files(replier_env, nylas, tuning, monkeypatch) -> ReplierHarness:
    """A warm container whose agent reads the customer's PDFs and answers with a file."""
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:reads_the_pdf_and_answers_with_a_file")
    answer_with["file"] = PDF
    return warm(ReplierHarness(replier_env, nylas, tuning))


def customer_sends_files(nylas):
    return inbound(
        nylas,
        attachments=[
            {"filename": "a.pdf", "content_type": "application/pdf", "content": PDF},
            {"filename": "b.pdf", "content_type": "application/pdf", "content": PDF + b"b"},
            {"filename": "c.png", "content_type": "image/png", "content": PHOTO},
        ],
    )


def test_a_reply_with_a_file_costs_a_download_per_file_read_and_one_put_per_file_sent(with_files, nylas):
    step = with_files.process(envelope(customer_sends_files(nylas)))
    assert not step.failed
    assert step.tally.nylas == FIRST_REPLY_NYLAS + Counter({ATTACHMENT_READ: 2})  # the photo is not read
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN + Counter({("s3", "PutObject"): 1})
    assert nylas.send_attempts[-1].encoding == "json"


def test_a_reply_over_3_mb_is_one_multipart_send(with_files, nylas):
    answer_with["file"] = LARGE_PDF
    step = with_files.process(envelope(inbound(nylas)))
    assert not step.failed
    assert step.tally.nylas == FIRST_REPLY_NYLAS
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN + Counter({("s3", "PutObject"): 1})
    assert [a.encoding for a in nylas.send_attempts[-1:]] == ["multipart"]


def test_a_later_record_that_sends_the_stored_reply_reads_its_file_back_once(with_files, nylas):
    message = inbound(nylas)
    nylas.inject("POST", rf"^/v3/grants/{message['grant_id']}/messages/send$", Fault.status(503))
    first = with_files.process(envelope(message))
    assert first.failed  # not sent: the record comes back, its intent stored
    again = with_files.process(envelope(message))
    assert not again.failed
    assert again.tally.aws[("s3", "GetObject")] == 1
    assert again.tally.aws[("s3", "PutObject")] == 0
    assert again.tally.nylas[SEND] == 1


# ---- a grant's daily agent-call cap (issue 42) ---------------------------------------------------------

# A grant with a cap counts each burst before the agent is asked: one TransactWriteItems of the day's
# count (ADD, conditioned below the cap) and the burst's mark (a conditional put), each item under 1 KB
# and billed twice in a transaction. A grant without one (0, the default) costs nothing more.
AGENT_CALL_COUNTED = Counter({("dynamodb", "TransactWriteItems"): 1})
AGENT_CALL_COUNTED_UNITS = Counter({"TransactWriteItems": 4})


@pytest.mark.parametrize(
    ("cap", "extra", "extra_units"),
    [(0, Counter(), Counter()), (5, AGENT_CALL_COUNTED, AGENT_CALL_COUNTED_UNITS)],
)
def test_a_grants_daily_agent_call_cap_costs_one_transaction_per_reply_and_no_cap_nothing(
    replier_env, nylas, tuning, cap, extra, extra_units
):
    from tests.integration.test_agent_call_cap import put_record

    put_record(replier_env, {"daily_agent_call_cap": cap})
    container = warm(ReplierHarness(replier_env, nylas, tuning, write_units=True))
    step = first_reply(container)
    assert not step.failed
    assert step.tally.aws == FIRST_REPLY_AWS + SAME_RECIPIENT_AGAIN + extra
    assert step.tally.write_units == FIRST_REPLY_WRITE_UNITS + SAME_RECIPIENT_AGAIN_UNITS + extra_units
    assert step.tally.nylas == FIRST_REPLY_NYLAS


def test_a_burst_over_the_cap_costs_its_refused_count_and_a_hand_off_and_the_first_refusal_one_write(
    replier_env, nylas, tuning
):
    from tests.integration.test_agent_call_cap import put_record

    put_record(replier_env, {"daily_agent_call_cap": 1})
    container = warm(ReplierHarness(replier_env, nylas, tuning, write_units=True))  # the one call
    first_over, second_over = first_reply(container), first_reply(container)
    # Each, as a first reply up to the recipients' budget (the idempotency record, the ledger read with
    # the table's beginning, the lease, the email's claim), then the refused transaction (billed),
    # then the hand-off's settlement (the ledger entries, the thread under the lease), the idempotency
    # record completed, and its move to the hand-off folder instead of a reply; the first refusal of the
    # day also marks the count (refused_at: the one log line and metric).
    handed_off = Counter(
        {
            ("dynamodb", "PutItem"): 2,
            ("dynamodb", "BatchGetItem"): 1,
            ("dynamodb", "UpdateItem"): 3,
            ("dynamodb", "BatchWriteItem"): 1,
            ("dynamodb", "TransactWriteItems"): 1,
            ("sqs", "ChangeMessageVisibility"): 1,
        }
    )
    assert second_over.tally.aws == handed_off
    assert first_over.tally.aws == handed_off + Counter({("dynamodb", "UpdateItem"): 1})
    assert second_over.tally.nylas_total == 2  # the thread read, and the move: no send, no look before it
    assert second_over.tally.nylas[THREAD_READ] == 1
    assert len(nylas.sends) == 1  # the warm-up's: the one call of the day
