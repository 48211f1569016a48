"""Bad attachments, one row each: every one is read, refused to the agent with a reason, or handed off.

The real replier handler against moto and the emulator. The customer's files
come as real mail brings them (a size the listing lies about, a type that
is not the bytes', an empty file, a name with a path and control characters,
an archive, a hundred files, a file the provider lost); the agent reads
every one. What is checked is what the agent got for each, and that the
record ended in a reply or a hand-off: never a crash, never a dead letter.
"""

import io
import zipfile

import pytest

from devstack.events import envelope
from functions.replier import app
from replyonce.agent import AttachmentError, Conversation, Reply
from tests.replier_harness import inbound, skip_reasons

PDF = b"%PDF-1.4\n" + b"1 0 obj << >> endobj\n" * 50
ZIP = io.BytesIO()
with zipfile.ZipFile(ZIP, "w") as archive:
    archive.writestr("invoice.pdf", PDF)
ZIP_BYTES = ZIP.getvalue()

CAP = 100_000
"""``attachment_max_bytes`` in these tests; ``attachments_max_bytes_per_record`` is twice it."""

seen: list[dict[str, tuple[str, str]]] = []
"""Per agent call: for each file (by its listed name as the agent sees it), what ``read()`` gave."""
listed: list[tuple[str, str, int, bool, str]] = []
"""Every file the agent was shown: name, type, listed size, inline, content id."""


def _what_read_gave(attachment) -> tuple[str, str]:
    try:
        content = attachment.read()
    except AttachmentError as refused:
        return type(refused).__name__, str(refused)
    return "read", f"{len(content)} bytes"


def reads_every_file(conversation: Conversation) -> Reply:
    """Reads each file, catches what it cannot read, and says so in its reply."""
    files = [a for m in conversation.to_answer for a in m.attachments]
    listed.extend((a.filename, a.content_type, a.size, a.inline, a.content_id) for a in files)
    outcomes = {f"{i}:{a.filename}": _what_read_gave(a) for i, a in enumerate(files)}
    seen.append(outcomes)
    lines = [f"{name}: {outcome}" for name, (outcome, _) in outcomes.items()]
    return Reply(text="Thanks. What I could read:\n" + "\n".join(lines))


def reads_without_catching(conversation: Conversation) -> Reply:
    """Reads each file and lets a refusal through: a refusal for good hands the burst off."""
    files = [a for m in conversation.to_answer for a in m.attachments]
    seen.append({a.filename: ("read", f"{len(a.read())} bytes") for a in files})
    return Reply(text="Thanks, all read.")


@pytest.fixture
def agent_named(replier, tuning, monkeypatch):
    def use(function: str) -> None:
        seen.clear()
        listed.clear()
        monkeypatch.setenv("REPLY_AGENT", f"{__name__}:{function}")
        tuning.update(attachment_max_bytes=CAP, attachments_max_bytes_per_record=2 * CAP)
        app.consumer.cache_clear()

    yield use
    app.consumer.cache_clear()


def file(name: str, content: bytes, content_type: str = "application/octet-stream", **extra) -> dict:
    return {"filename": name, "content_type": content_type, "content": content, **extra}


# name, the files the customer sends, what the agent's read() gives for each (in order)
CASES = [
    (
        "a listed size that lies low: counted by the bytes read",
        [file("scan.pdf", b"%PDF" + b"\0" * (CAP + 1), "application/pdf", listed_size=10)],
        [("AttachmentTooLarge", "attachment_max_bytes")],
    ),
    (
        "a listed size that lies high: read all the same",
        [file("note.pdf", PDF, "application/pdf", listed_size=50_000_000)],
        [("read", f"{len(PDF)} bytes")],
    ),
    (
        "a type that is not the bytes': read, the bytes say what it is",
        [file("invoice.pdf", ZIP_BYTES, "application/pdf")],
        [("read", f"{len(ZIP_BYTES)} bytes")],
    ),
    ("a zero-byte file: read, empty", [file("empty.txt", b"", "text/plain")], [("read", "0 bytes")]),
    (
        "a name with path separators and control characters: a safe name, read",
        [file("..\\..//etc/pass\r\nwd\x00.pdf", PDF, "application/pdf")],
        [("read", f"{len(PDF)} bytes")],
    ),
    (
        "an archive: read as bytes, never opened",
        [file("documents.zip", ZIP_BYTES, "application/zip")],
        [("read", f"{len(ZIP_BYTES)} bytes")],
    ),
    (
        "a hundred files: each listed, read until the record's cap, then refused with the reason",
        [file(f"page{n:03}.txt", b"x" * 5_000, "text/plain") for n in range(100)],
        [("read", "5000 bytes")] * 40 + [("AttachmentTooLarge", "attachments_max_bytes_per_record")] * 60,
    ),
]


@pytest.mark.parametrize(("case", "files", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_bad_attachment_is_read_or_refused_to_the_agent_and_the_customer_is_answered(
    pipeline, nylas, agent_named, log_records, case, files, expected
):
    agent_named("reads_every_file")
    message = inbound(nylas, subject="Files", attachments=files)
    pipeline.deliver(envelope(message))
    pipeline.drain()
    [outcomes] = seen
    got = list(outcomes.values())
    assert [outcome for outcome, _ in got] == [outcome for outcome, _ in expected]
    for (_, detail), (_, expected_detail) in zip(got, expected, strict=True):
        assert expected_detail in detail
    assert len(nylas.sent_messages(thread_id=message["thread_id"])) == 1
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0


def test_the_agent_sees_a_safe_name_and_the_listed_type_and_size(pipeline, nylas, agent_named):
    agent_named("reads_every_file")
    message = inbound(
        nylas,
        attachments=[file("..\\..//etc/pass\r\nwd\x00.pdf", PDF, "Application/PDF; name=x", listed_size=7)],
    )
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert list(seen[0]) == ["0:passwd.pdf"]


def test_a_file_the_provider_lost_is_refused_to_the_agent_as_gone(pipeline, nylas, agent_named):
    agent_named("reads_every_file")
    message = inbound(nylas, attachments=[file("photo.png", b"\x89PNG\r\n\x1a\n", "image/png")])
    nylas.forget_attachment(message["attachments"][0]["id"])
    pipeline.deliver(envelope(message))
    pipeline.drain()
    [(outcome, _)] = seen[0].values()
    assert outcome == "AttachmentGone"
    assert len(nylas.sent_messages(thread_id=message["thread_id"])) == 1
    assert pipeline.dead_letters() == []


@pytest.mark.parametrize(
    "files",
    [
        [file("huge.pdf", b"%PDF" + b"\0" * (CAP + 1), "application/pdf", listed_size=10)],
        [file("lost.png", b"\x89PNG\r\n\x1a\n", "image/png", lost=True)],
    ],
    ids=["over the cap", "gone"],
)
def test_a_refusal_the_agent_lets_through_hands_the_burst_off_never_a_dead_letter(
    pipeline, nylas, agent_named, log_records, monkeypatch, files
):
    monkeypatch.setenv("HANDOFF_FOLDER", "archive")
    agent_named("reads_without_catching")
    lost = [f.pop("lost", False) for f in files]
    message = inbound(nylas, attachments=files)
    for listed, is_lost in zip(message["attachments"], lost, strict=True):
        if is_lost:
            nylas.forget_attachment(listed["id"])
    pipeline.deliver(envelope(message))
    pipeline.drain()
    assert seen == []  # the agent never got past the read
    assert nylas.sent_messages(thread_id=message["thread_id"]) == []
    assert skip_reasons(log_records) == ["agent_rejected"]
    assert message["id"] in [m["id"] for _, m in nylas.mailbox() if "archive" in str(m.get("folders"))]
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0
