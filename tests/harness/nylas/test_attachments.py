"""Contract: attachments on messages, their download, and sends that carry files (JSON and multipart).

Sources: https://developer.nylas.com/docs/v3/email/attachments/ (messages list ``attachments``;
``GET .../attachments/{id}/download?message_id=…`` the bytes, ``GET .../attachments/{id}?message_id=…``
the metadata; a JSON request of at most 3 MB with base64 ``content``, ``multipart/form-data`` up to
25 MB), the send-attachments cookbook, and the rate-limits page (10 multipart sends a second per grant).
The multipart bodies here are built by ``requests`` (its ``files=``), not by ReplyOnce.
"""

import base64
import json

import requests

from tests.harness.nylas.client import GRANT, SEND_PATH, TIMEOUT, auth, error_of, get, inbound, reply_to, send

PDF = b"%PDF-1.4\n" + bytes(range(256)) * 10


def download(nylas, attachment_id: str, message_id: str | None) -> requests.Response:
    params = {"message_id": message_id} if message_id is not None else {}
    return get(nylas, f"/v3/grants/{GRANT}/attachments/{attachment_id}/download", params=params)


def multipart(nylas, message: dict, files: dict[str, tuple[str, bytes, str]], key: str | None = None):
    headers = auth() | ({"Idempotency-Key": key} if key else {})
    return requests.post(
        f"{nylas.url}{SEND_PATH}",
        data={"message": json.dumps(message)},
        files=files,
        headers=headers,
        timeout=TIMEOUT,
    )


def test_a_message_lists_its_files_and_each_downloads_with_its_message_id(nylas):
    message = inbound(
        nylas,
        attachments=[
            {"filename": "invoice.pdf", "content_type": "application/pdf", "content": PDF},
            {"filename": "logo.png", "content_type": "image/png", "content": b"\x89PNG", "content_id": "l1",
             "is_inline": True},
        ],
    )  # fmt: skip
    [pdf, logo] = message["attachments"]
    assert (pdf["filename"], pdf["content_type"], pdf["size"], pdf["is_inline"]) == (
        "invoice.pdf",
        "application/pdf",
        len(PDF),
        False,
    )
    assert (logo["content_id"], logo["is_inline"]) == ("l1", True)
    got = download(nylas, pdf["id"], message["id"])
    assert got.status_code == 200
    assert got.content == PDF
    assert got.headers["Content-Type"] == "application/pdf"
    metadata = get(nylas, f"/v3/grants/{GRANT}/attachments/{pdf['id']}", params={"message_id": message["id"]})
    assert metadata.json()["data"]["filename"] == "invoice.pdf"


def test_a_download_needs_its_own_message_id_and_a_lost_file_is_a_404(nylas):
    message = inbound(
        nylas, attachments=[{"filename": "a.pdf", "content_type": "application/pdf", "content": PDF}]
    )
    other = inbound(nylas)
    [listed] = message["attachments"]
    assert download(nylas, listed["id"], None).status_code == 400
    assert download(nylas, listed["id"], other["id"]).status_code == 404
    nylas.forget_attachment(listed["id"])
    gone = download(nylas, listed["id"], message["id"])
    assert gone.status_code == 404
    assert error_of(gone)["type"] == "not_found_error"


def test_a_listed_size_may_lie_the_bytes_do_not(nylas):
    message = inbound(
        nylas,
        attachments=[
            {"filename": "a.pdf", "content_type": "application/pdf", "content": PDF, "listed_size": 3}
        ],
    )
    [listed] = message["attachments"]
    assert listed["size"] == 3
    assert len(download(nylas, listed["id"], message["id"]).content) == len(PDF)


def test_a_json_send_with_base64_files_goes_out_with_them(nylas):
    message = inbound(nylas)
    payload = reply_to(message) | {
        "attachments": [
            {
                "filename": "a.pdf",
                "content_type": "application/pdf",
                "content": base64.b64encode(PDF).decode(),
            }
        ]
    }
    response = send(nylas, payload)
    assert response.status_code == 200
    [sent] = nylas.sent_messages()
    [file] = sent["attachments"]
    assert download(nylas, file["id"], sent["id"]).content == PDF
    assert nylas.send_attempts[-1].encoding == "json"


def test_a_json_send_over_3_mb_is_refused_and_nothing_goes_out(nylas):
    message = inbound(nylas)
    payload = reply_to(message) | {
        "attachments": [
            {
                "filename": "big.bin",
                "content_type": "application/zip",
                "content": base64.b64encode(bytes(2_300_000)).decode(),
            }
        ]
    }
    response = send(nylas, payload)
    assert response.status_code == 413
    assert nylas.sent_messages() == []


def test_a_json_file_that_is_not_base64_is_a_400(nylas):
    message = inbound(nylas)
    payload = reply_to(message) | {"attachments": [{"filename": "a.pdf", "content": "not base64!"}]}
    assert send(nylas, payload).status_code == 400


def test_a_multipart_send_goes_out_with_its_files(nylas):
    message = inbound(nylas)
    response = multipart(nylas, reply_to(message), {"file0": ("contract.pdf", PDF, "application/pdf")})
    assert response.status_code == 200
    [sent] = nylas.sent_messages()
    [file] = sent["attachments"]
    assert (file["filename"], file["content_type"]) == ("contract.pdf", "application/pdf")
    assert download(nylas, file["id"], sent["id"]).content == PDF
    assert nylas.send_attempts[-1].encoding == "multipart"


def test_a_multipart_send_over_25_mb_is_refused(nylas):
    message = inbound(nylas)
    response = multipart(
        nylas, reply_to(message), {"file0": ("big.bin", bytes(25_000_001), "application/zip")}
    )
    assert response.status_code == 413
    assert nylas.sent_messages() == []


def test_a_multipart_replay_under_its_key_must_be_the_same_bytes(nylas):
    message = inbound(nylas)
    first = multipart(nylas, reply_to(message), {"file0": ("a.pdf", PDF, "application/pdf")}, key="k1")
    # requests draws a new random boundary: the same files, other bytes on the wire.
    again = multipart(nylas, reply_to(message), {"file0": ("a.pdf", PDF, "application/pdf")}, key="k1")
    assert first.status_code == 200
    assert again.status_code == 409
    assert len(nylas.sent_messages()) == 1


def test_the_eleventh_multipart_send_of_a_grant_within_a_second_is_a_429(nylas):
    message = inbound(nylas)
    statuses = [
        multipart(
            nylas, reply_to(message, body=f"n{n}"), {"file0": ("a.pdf", PDF, "application/pdf")}
        ).status_code
        for n in range(11)
    ]
    assert statuses == [200] * 10 + [429]
    assert error_of(multipart(nylas, reply_to(message), {"f": ("a.pdf", PDF, "application/pdf")}))[
        "type"
    ] == ("nylas_rate_limit_exceeded")
    # JSON sends are not held back by it.
    assert send(nylas, reply_to(message, body="json")).status_code == 200
