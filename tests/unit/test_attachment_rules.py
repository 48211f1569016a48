"""The attachment rules, table by table: names shown, types sniffed, replies refused, requests sized.

Each expectation is written from Nylas' documented limits and RFC 7578's form
data, and the wire is read back with the standard library's MIME parser (not
our code) to check what it says.
"""

import base64
import email.parser
import email.policy
import json

import pytest

from replyonce.adapters.pacing import GrantPacer
from replyonce.agent import Reply, ReplyAttachment, ReplyAttachmentRefused
from replyonce.mail import read_message
from replyonce.outgoing import (
    MAX_ATTACHMENT_BYTES,
    MAX_REPLY_ATTACHMENTS,
    Encoding,
    FileMismatch,
    encoding_of,
    file_reference,
    json_bytes,
    multipart_bytes,
    refusal,
    wire,
)
from replyonce.rules.attachments import listed_attachments, safe_filename, sniffed_type
from replyonce.rules.outbox import MAX_REQUEST_BYTES


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("invoice.pdf", "invoice.pdf"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\scan.png", "scan.png"),
        ("report\r\n.pdf", "report.pdf"),
        ("nul\x00byte\x7f.txt", "nulbyte.txt"),
        ("..", ""),
        ("dir/", ""),
        (None, ""),
        ("a" * 300 + ".pdf", "a" * 251 + ".pdf"),
    ],
)
def test_the_name_the_agent_sees_has_no_path_and_no_control_character(given, shown):
    assert safe_filename(given) == shown


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"%PDF-1.7\n...", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n....", "image/png"),
        (b"\xff\xd8\xff\xe0....", "image/jpeg"),
        (b"GIF89a..", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"PK\x03\x04....", "application/zip"),
        (b"\x1f\x8b\x08...", "application/gzip"),
        (b"", "application/octet-stream"),
        (b"just text", "application/octet-stream"),
    ],
)
def test_the_bytes_say_what_a_file_is_whatever_its_listed_type(content, kind):
    assert sniffed_type(content) == kind


def test_a_listing_entry_without_an_id_cannot_be_read_and_is_left_out():
    message = {
        "id": "m1",
        "attachments": [
            {"filename": "a.pdf"},
            "junk",
            {"id": "a2", "filename": "b.pdf", "size": "n/a", "content_type": 7},
        ],
    }
    [only] = listed_attachments(read_message(message))
    assert (only.id, only.message_id, only.size, only.content_type) == (
        "a2",
        "m1",
        0,
        "application/octet-stream",
    )


PDF = ReplyAttachment(b"%PDF-1.7 x", "invoice.pdf", "application/pdf")


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ((PDF,), ""),
        ((ReplyAttachment(b"", "empty.txt", "text/plain"),), "is empty"),
        ((ReplyAttachment(b"x", "../x.pdf", "application/pdf"),), "path separator"),
        ((ReplyAttachment(b"x", "a\\b.pdf", "application/pdf"),), "path separator"),
        ((ReplyAttachment(b"x", "a\r\nBcc: x.pdf", "application/pdf"),), "control character"),
        ((ReplyAttachment(b"x", " ", "application/pdf"),), "no file name"),
        ((ReplyAttachment(b"x", "a" * 256, "application/pdf"),), "over 255"),
        ((ReplyAttachment(b"x", "a.pdf", "pdf"),), "not a MIME type"),
        ((ReplyAttachment(b"x", "a.pdf", "text/plain\r\nX: y"),), "not a MIME type"),
        ((PDF,) * (MAX_REPLY_ATTACHMENTS + 1), f"at most {MAX_REPLY_ATTACHMENTS}"),
        (
            (ReplyAttachment(b"\0" * (MAX_ATTACHMENT_BYTES + 1), "big.bin", "application/octet-stream"),),
            "25 MB",
        ),
        (("not a file",), "not a ReplyAttachment"),
    ],
)
def test_a_reply_that_nylas_cannot_send_is_refused_when_the_agent_builds_it(files, reason):
    assert (refusal(files) == "") == (reason == "")
    assert reason in refusal(files)
    if reason:
        with pytest.raises(ReplyAttachmentRefused, match=reason.replace("*", ".")):
            Reply(text="hi", attachments=files)


def _request(*files: ReplyAttachment) -> dict:
    return {"to": [{"email": "c@example.com"}], "subject": "Re: x", "body": "<p>hi</p>",
            "attachments": [file_reference(f) for f in files]}  # fmt: skip


def _text(request: dict) -> str:
    return json.dumps(request, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _files(*files: ReplyAttachment) -> dict[str, bytes]:
    return {file_reference(f)["sha256"]: f.content for f in files}


@pytest.mark.parametrize("size", [1, 2, 3, 1000, 100_001])
def test_the_json_size_is_computed_exactly_from_the_references(size):
    file = ReplyAttachment(bytes(range(256)) * (size // 256) + b"z" * (size % 256), "f.bin", "image/png")
    request = _request(file)
    sent = wire(_text(request), _files(file), MAX_REQUEST_BYTES)
    assert sent.encoding is Encoding.JSON
    assert json_bytes(request) == len(sent.body)
    body = json.loads(sent.body)
    assert base64.b64decode(body["attachments"][0]["content"]) == file.content
    assert "sha256" not in body["attachments"][0]


def test_over_3_mb_the_request_is_multipart_form_data_the_mime_parser_reads_back():
    big = ReplyAttachment(b"%PDF" + bytes(2_400_000), 'contract "final".pdf', "application/pdf")
    small = ReplyAttachment(b"\x89PNG\r\n\x1a\n", "sign.png", "image/png")
    request = _request(big, small)
    assert encoding_of(request, MAX_REQUEST_BYTES) is Encoding.MULTIPART
    sent = wire(_text(request), _files(big, small), MAX_REQUEST_BYTES)
    assert multipart_bytes(request) == len(sent.body)
    assert sent.content_type.startswith("multipart/form-data; boundary=")
    parsed = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {sent.content_type}\r\n\r\n".encode() + sent.body
    )
    parts = list(parsed.iter_parts())
    assert [p.get_param("name", header="content-disposition") for p in parts] == ["message", "file0", "file1"]
    message = json.loads(parts[0].get_payload(decode=True))
    assert "attachments" not in message
    assert message["body"] == "<p>hi</p>"
    assert [p.get_filename() for p in parts[1:]] == ['contract "final".pdf', "sign.png"]
    assert [p.get_payload(decode=True) for p in parts[1:]] == [big.content, small.content]
    # The same request is the same bytes every time: a replay under the key is the same payload.
    assert wire(_text(request), _files(big, small), MAX_REQUEST_BYTES).body == sent.body


def test_over_25_mb_the_request_is_never_sent():
    files = [ReplyAttachment(bytes(12_000_000) + bytes([n]), f"part{n}.bin", "application/octet-stream")
             for n in range(2)]  # fmt: skip
    request = _request(*files)
    request["body"] = "<p>" + "x" * 1_200_000 + "</p>"
    assert encoding_of(request, MAX_REQUEST_BYTES) is Encoding.TOO_LARGE


def test_bytes_that_are_not_the_file_the_intent_names_are_never_sent():
    request = _request(PDF)
    with pytest.raises(FileMismatch):
        wire(_text(request), {file_reference(PDF)["sha256"]: b"%PDF-1.7 y"}, MAX_REQUEST_BYTES)
    with pytest.raises(FileMismatch):
        wire(_text(request), {}, MAX_REQUEST_BYTES)


def test_a_request_without_files_is_sent_as_stored_byte_for_byte():
    text = _text({"to": [{"email": "c@example.com"}], "body": "<p>é</p>"})
    assert wire(text, {}, MAX_REQUEST_BYTES).body == text.encode()


# ---- pacing: Nylas allows a grant 10 multipart sends a second ----------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_the_eleventh_multipart_send_of_a_grant_in_a_second_waits_for_the_first_to_leave_the_window():
    clock = Clock()
    pacer = GrantPacer(monotonic=lambda: clock.now, sleep=clock.sleep)
    for n in range(10):
        clock.now = 100.0 + n * 0.01
        assert pacer.wait_turn("g1") == 0.0
    assert pacer.wait_turn("g2") == 0.0  # another grant has its own ten
    clock.now = 100.5
    assert pacer.wait_turn("g1") == pytest.approx(0.5)  # until the first send is a second old
    assert clock.slept == [0.5]
    clock.now = 102.0
    assert pacer.wait_turn("g1") == 0.0  # the window has passed
