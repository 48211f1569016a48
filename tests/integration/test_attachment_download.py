"""The download's cap against a real peer: a loopback HTTP server that streams a file without
``Content-Length`` (chunked, as a proxy may), so the cap must hold by the bytes read."""

import http.server
import threading

import pytest

from replyonce.adapters.nylas import NylasMailbox
from replyonce.agent import AttachmentGone, AttachmentTooLarge, AttachmentUnavailable

FILE = bytes(range(256)) * 1_000  # 256,000 bytes


class _Chunked(http.server.BaseHTTPRequestHandler):
    """Streams FILE in 10 KB chunks, no Content-Length; 404 for any other attachment id."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if "/attachments/a1/download" not in self.path or "message_id=m1" not in self.path:
            body = b'{"error": {"type": "not_found_error", "message": "not found"}}'
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/pdf")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(FILE), 10_000):
            chunk = FILE[start : start + 10_000]
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def mailbox():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Chunked)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield NylasMailbox(
        f"http://127.0.0.1:{server.server_address[1]}",
        lambda: "key",
        timeout_seconds=5,
        send_timeout_seconds=5,
    )
    server.shutdown()


def test_a_streamed_file_within_the_cap_is_read_whole(mailbox):
    assert mailbox.download_attachment("g1", "a1", "m1", len(FILE), 5.0) == FILE


def test_a_streamed_file_without_a_length_is_cut_off_by_the_bytes_read(mailbox):
    with pytest.raises(AttachmentTooLarge, match="over 100000 bytes"):
        mailbox.download_attachment("g1", "a1", "m1", 100_000, 5.0)


def test_a_file_of_another_message_is_gone(mailbox):
    with pytest.raises(AttachmentGone, match="404"):
        mailbox.download_attachment("g1", "a1", "m2", len(FILE), 5.0)


def test_nothing_listening_is_not_now_not_gone():
    closed = NylasMailbox("http://127.0.0.1:9", lambda: "key", timeout_seconds=1, send_timeout_seconds=1)
    with pytest.raises(AttachmentUnavailable):
        closed.download_attachment("g1", "a1", "m1", 10, 1.0)
