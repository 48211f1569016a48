"""``make mail --attach FILE``: a person's file reaches the agent's mailbox as Nylas lists it; one reply.

A real ``make serve`` process (the template agent) and the trigger command, as
a person types them. (That the listed file downloads byte for byte, and that
an agent reads it, is tests/integration/test_attachments.py's.)
"""

import re

import pytest

from devstack import trigger
from tests.e2e.test_serve_trigger import Serve, agent_messages, run_trigger


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    running = Serve(tmp_path_factory.mktemp("serve") / "serve.log")
    yield running
    running.stop()


def test_a_file_attached_with_make_mail_is_listed_downloadable_and_answered(serve, capsys, tmp_path):
    scan = tmp_path / "broken parcel.pdf"
    scan.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 40)
    code, out, _ = run_trigger(
        serve, capsys, "mail", "--from", "dora@example.com", "--subject", "Damaged", "--attach", str(scan)
    )
    assert code == 0
    thread_id = re.search(r"on thread (\S+):", out).group(1)
    assert f"+ broken parcel.pdf (application/pdf, {scan.stat().st_size} bytes)" in out
    [customer] = [
        m for m in trigger.ServeClient(serve.base_url).thread(thread_id)["data"] if m["attachments"]
    ]
    [listed] = customer["attachments"]
    assert (listed["filename"], listed["content_type"]) == ("broken parcel.pdf", "application/pdf")
    assert listed["size"] == scan.stat().st_size
    assert len(agent_messages(serve, thread_id)) == 1


def test_a_file_that_does_not_exist_is_one_clear_line(serve, capsys, tmp_path):
    code, out, err = run_trigger(serve, capsys, "mail", "--attach", str(tmp_path / "missing.pdf"))
    assert code != 0
    assert "--attach" in out + err
    assert "no such file" in out + err
