"""Attachments in and out, exactly once: the real replier handler, moto (DynamoDB, SQS, S3) and the emulator.

The customer sends a PDF and a photo; this module's agent reads both and
answers with a PDF. What is checked is what the customer gets (the emails
at the emulator, their files downloaded back) and what Nylas was asked (the
attempts, their encoding and their ``Idempotency-Key``): exactly one email
with the same bytes, also when the invocation dies after Nylas accepted the
send, and after a ``504`` that did send.
"""

import base64
import hashlib
import json
import random
import time
import zlib

import boto3
import pytest

from devstack.events import AGENT_GRANT_ID, envelope
from devstack.nylas import Fault
from functions.replier import app
from replyonce.agent import AttachmentError, Conversation, Handoff, Reply, ReplyAttachment
from replyonce.state import thread_key
from tests.replier_harness import SEND_PATH, inbound, skip_reasons

_random = random.Random(44)
CUSTOMER_PDF = b"%PDF-1.4\n" + _random.randbytes(40_000)
CUSTOMER_PHOTO = b"\x89PNG\r\n\x1a\n" + _random.randbytes(60_000)
INVOICE = b"%PDF-1.7\n" + _random.randbytes(150_000)
"""The corrected invoice the agent answers with: small, so it goes as JSON with base64."""
LARGE_INVOICE = b"%PDF-1.7\n" + _random.randbytes(4_000_000)
"""Over Nylas' 3 MB JSON request once base64: it goes as multipart form data."""

read_by_agent: list[dict[str, bytes]] = []
"""What each agent call read, by file name."""


def _files_of(conversation: Conversation):
    return [a for m in conversation.to_answer for a in m.attachments]


def reads_and_answers_with_a_pdf(conversation: Conversation) -> Reply:
    read_by_agent.append({a.filename: a.read() for a in _files_of(conversation)})
    return Reply(
        text="Here is your corrected invoice.",
        attachments=(ReplyAttachment(INVOICE, "invoice-1042.pdf", "application/pdf"),),
    )


def answers_with_a_large_pdf(conversation: Conversation) -> Reply:
    read_by_agent.append({a.filename: a.read() for a in _files_of(conversation)})
    return Reply(
        text="Here is the signed contract.",
        attachments=(ReplyAttachment(LARGE_INVOICE, "contract.pdf", "application/pdf"),),
    )


def answers_with_too_much(conversation: Conversation) -> Reply:
    """Lets the refusal of a 26 MB reply through: the burst is handed off."""
    read_by_agent.append({})
    return Reply(
        text="Here are the scans.",
        attachments=(ReplyAttachment(b"\0" * 26_000_000, "scans.pdf", "application/pdf"),),
    )


def hands_off_what_it_cannot_send(conversation: Conversation) -> Reply | Handoff:
    """Catches the refusal and hands off with its reason."""
    try:
        return answers_with_too_much(conversation)
    except AttachmentError as refused:
        return Handoff(f"cannot send the scans: {refused}")


@pytest.fixture
def agent_named(replier, monkeypatch):
    """Set ``REPLY_AGENT`` to one of this module's agents, for a fresh container."""

    def use(function: str) -> None:
        read_by_agent.clear()
        monkeypatch.setenv("REPLY_AGENT", f"{__name__}:{function}")
        app.consumer.cache_clear()

    yield use
    app.consumer.cache_clear()


def customer_writes(nylas) -> dict:
    return inbound(
        nylas,
        subject="Invoice 1042 is wrong",
        body='<p>See the invoice and the photo.</p><img src="cid:photo1">',
        attachments=[
            {"filename": "invoice.pdf", "content_type": "application/pdf", "content": CUSTOMER_PDF},
            {
                "filename": "parcel.png",
                "content_type": "image/png",
                "content": CUSTOMER_PHOTO,
                "content_id": "photo1",
                "is_inline": True,
            },
        ],
    )


def downloaded(nylas, message: dict) -> dict[str, bytes]:
    """The files of a message as its recipient downloads them from the emulator (not our client)."""
    import requests

    files = {}
    for listed in message["attachments"]:
        response = requests.get(
            f"{nylas.url}/v3/grants/{message['grant_id']}/attachments/{listed['id']}/download",
            params={"message_id": message["id"]},
            headers={"Authorization": f"Bearer {nylas.api_key}"},
            timeout=10,
        )
        response.raise_for_status()
        files[listed["filename"]] = response.content
    return files


def sent_attempts(nylas) -> list:
    return [a for a in nylas.send_attempts if a.grant_id == AGENT_GRANT_ID]


def kept_in_bucket(resources) -> dict[str, bytes]:
    s3 = boto3.client("s3")
    bucket = resources.buckets["ReplyFilesBucket"]
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}


def state_items_text(resources) -> str:
    """Every state item as text, the requests kept in body items (compressed) decompressed beside them."""
    items = boto3.client("dynamodb").scan(TableName=resources.tables["StateTable"])["Items"]
    chunks: dict[str, list[tuple[int, bytes]]] = {}
    for item in items:
        if "chunk" in item:  # body#{intent}#{digest}#{index}
            request, _, index = item["pk"]["S"].rpartition("#")
            chunks.setdefault(request, []).append((int(index), bytes(item["chunk"]["B"])))
    bodies = [zlib.decompress(b"".join(c for _, c in sorted(parts))).decode() for parts in chunks.values()]
    return json.dumps(items, default=lambda b: base64.b64encode(b).decode()) + "".join(bodies)


def test_the_agent_reads_a_pdf_and_a_photo_and_the_customer_gets_one_email_with_its_pdf(
    pipeline, nylas, agent_named, replier
):
    agent_named("reads_and_answers_with_a_pdf")
    message = customer_writes(nylas)
    pipeline.deliver(envelope(message), times=2)
    pipeline.drain()
    assert read_by_agent == [{"invoice.pdf": CUSTOMER_PDF, "parcel.png": CUSTOMER_PHOTO}]
    [email] = nylas.sent_messages(thread_id=message["thread_id"])
    assert downloaded(nylas, email) == {"invoice-1042.pdf": INVOICE}
    [attempt] = sent_attempts(nylas)
    assert attempt.encoding == "json"
    # Kept in the bucket under the intent and the digest.
    digest = hashlib.sha256(INVOICE).hexdigest()
    [(key, content)] = kept_in_bucket(replier).items()
    assert key.startswith("replies/")
    assert key.endswith("/" + digest)
    assert content == INVOICE
    assert pipeline.dead_letters() == []


def lose_the_sends_answer(nylas, message: dict):
    """Nylas sends the reply and its answer never arrives; the next thread listing shows only the
    customer's message, so the stored intent is sent again. Returns what hides the reply once more."""
    nylas.inject("POST", SEND_PATH, Fault.lose_response())
    listing = rf"/v3/grants/{AGENT_GRANT_ID}/messages$"
    only_the_customer = {"request_id": "r", "data": [message], "next_cursor": None}

    def hide_the_reply() -> None:
        nylas.inject("GET", listing, Fault.status(200, body=only_the_customer), times=1)

    hide_the_reply()
    return hide_the_reply


def test_an_invocation_that_dies_after_the_send_was_accepted_replays_the_same_bytes_under_the_same_key(
    pipeline, nylas, agent_named, replier
):
    agent_named("reads_and_answers_with_a_pdf")
    message = customer_writes(nylas)
    # Nylas sends, the answer never arrives (the invocation is as good as dead); the retry's thread
    # listing does not show the reply yet, so the stored intent is sent again, from the bucket.
    hide_the_reply = lose_the_sends_answer(nylas, message)
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    # The stored intent names the file by its digest and holds none of its bytes.
    stored = state_items_text(replier)
    assert hashlib.sha256(INVOICE).hexdigest() in stored
    assert base64.b64encode(INVOICE[:3000]).decode()[:2000] not in stored
    # As if the worker had died holding the lease: a new container takes the record once the lease has
    # run out, with nothing of the dead one's memory (the file comes from the bucket).
    app.consumer.cache_clear()
    boto3.client("dynamodb").update_item(
        TableName=replier.tables["StateTable"],
        Key={"pk": {"S": thread_key(AGENT_GRANT_ID, message["thread_id"])}},
        UpdateExpression="SET lease_owner = :o, lease_expires_at = :e",
        ExpressionAttributeValues={":o": {"S": "dead-worker"}, ":e": {"N": str(int(time.time() * 1000) - 1)}},
    )
    hide_the_reply()
    pipeline.drain()
    first, replay = sent_attempts(nylas)
    assert replay.replayed is True  # the emulator compared the two bodies: any other byte is a 409
    assert first.idempotency_key == replay.idempotency_key
    assert first.payload == replay.payload
    [file] = replay.payload["attachments"]
    assert base64.b64decode(file["content"]) == INVOICE
    assert len(read_by_agent) == 1  # the agent is not asked again for a stored reply
    [email] = nylas.sent_messages(thread_id=message["thread_id"])
    assert downloaded(nylas, email) == {"invoice-1042.pdf": INVOICE}
    assert pipeline.dead_letters() == []


def test_a_504_that_did_send_leaves_one_email_with_its_file(pipeline, nylas, agent_named, log_records):
    agent_named("reads_and_answers_with_a_pdf")
    message = customer_writes(nylas)
    nylas.inject("POST", SEND_PATH, Fault.provider_error(504, sent=True))
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    pipeline.drain()
    [email] = nylas.sent_messages(thread_id=message["thread_id"])
    assert downloaded(nylas, email) == {"invoice-1042.pdf": INVOICE}
    assert len(sent_attempts(nylas)) == 1
    assert pipeline.dead_letters() == []


def test_a_reply_over_3_mb_goes_as_multipart_once_and_replays_as_multipart(pipeline, nylas, agent_named):
    agent_named("answers_with_a_large_pdf")
    message = customer_writes(nylas)
    hide_the_reply = lose_the_sends_answer(nylas, message)
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    hide_the_reply()
    pipeline.drain()
    attempts = sent_attempts(nylas)
    assert [a.encoding for a in attempts] == ["multipart", "multipart"]
    assert attempts[1].replayed is True
    assert attempts[0].idempotency_key == attempts[1].idempotency_key
    [email] = nylas.sent_messages(thread_id=message["thread_id"])
    assert downloaded(nylas, email) == {"contract.pdf": LARGE_INVOICE}


@pytest.mark.parametrize("agent", ["answers_with_too_much", "hands_off_what_it_cannot_send"])
def test_a_reply_over_25_mb_is_refused_to_the_agent_and_handed_off_never_sent(
    pipeline, nylas, agent_named, log_records, agent
):
    agent_named(agent)
    message = customer_writes(nylas)
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert nylas.sent_messages(thread_id=message["thread_id"]) == []
    assert sent_attempts(nylas) == []
    reasons = skip_reasons(log_records)
    assert reasons[-1] in ("agent_rejected", "handed_off")
    details = " ".join(str(r.get("detail", "")) for r in log_records())
    assert "25 MB" in details
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0


def test_review_mode_makes_one_draft_carrying_the_file(pipeline, nylas, agent_named, monkeypatch):
    monkeypatch.setenv("REPLY_MODE", "review")
    agent_named("reads_and_answers_with_a_pdf")
    message = customer_writes(nylas)
    pipeline.deliver(envelope(message), times=2)
    pipeline.drain()
    [draft] = nylas.drafts
    assert [(a["filename"], base64.b64decode(a["content"])) for a in draft.payload["attachments"]] == [
        ("invoice-1042.pdf", INVOICE)
    ]
    assert [a["filename"] for a in draft.draft["attachments"]] == ["invoice-1042.pdf"]
    assert sent_attempts(nylas) == []
    assert pipeline.dead_letters() == []
