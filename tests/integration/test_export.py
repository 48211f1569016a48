"""The frozen export (issue 43): a grant's threads to a file, people pseudonymised, read-only, and
``replay --from-export`` deciding as the replay of the live threads does, without Nylas.

Real parts: the Nylas emulator (the mail; it logs every request), moto (the stack, the API key's
secret), the replier's shell and core in both replays, the commands as ``make`` runs them.
"""

import io
import json
import re
import time
from pathlib import Path

import pytest

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, CUSTOMER_EMAIL
from devstack.nylas.mailbox import RECEIVING_AUTHSERV, authentication_results
from ops.cli import Runtime, main
from ops.export import Pseudonyms
from tests.conftest import register_mailbox_stack

STACK = "replyonce-export-test"
KEY = "a-key-the-team-keeps-in-its-vault"
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@pytest.fixture
def stack(replier_env, nylas):
    register_mailbox_stack(
        STACK,
        replier_env,
        nylas.url,
        # A contact form whose Reply-To is answered when the receiving provider authenticated it.
        ReplyToTrustedSenders="forms@mail.shop.example",
        ReceivingAuthservIds=RECEIVING_AUTHSERV,
    )
    return replier_env


@pytest.fixture
def week(nylas):
    """A conversation a colleague answered and the customer followed up on, a sender authenticated by
    DKIM on a parent domain, a machine's receipt, a message naming another address in its body."""
    question = nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email=CUSTOMER_EMAIL,
        from_name="Alice Liddell",
        subject="Order 1042",
        body="<p>Hi, where is my order? Alice Liddell</p>",
    )
    answer = nylas.person_replies(AGENT_GRANT_ID, question["id"], "<p>Alice, it ships today. — Sam</p>")
    nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email=CUSTOMER_EMAIL,
        from_name="Alice Liddell",
        subject="Re: Order 1042",
        body="<p>Thanks! Please also write to alice.home@wonderland.example</p>",
        reply_to_message_id=answer["id"],
    )
    nylas.deliver_inbound(
        AGENT_GRANT_ID,
        from_email="bob@mail.builder.example",
        from_name="Bob Builder",
        subject="Invoice question",
        body="<p>Can I get an invoice?</p>",
        authentication_results=authentication_results(dmarc=None, dkim="pass", dkim_domain="builder.example"),
    )
    nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email="no-reply@shop.example", subject="Your receipt", body="<p>Paid</p>"
    )
    # The contact form, signed by its parent domain (answered to its Reply-To), and once unsigned
    # (handed off): a pseudonymisation that broke DKIM alignment or the trusted sender would differ.
    for signed in (True, False):
        nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email="forms@mail.shop.example",
            subject="Contact form: where is my parcel?",
            body="<p>Carol asks where her parcel is.</p>",
            reply_to=[{"name": "Carol", "email": "carol@example.org"}],
            authentication_results=authentication_results(dmarc=None, dkim="pass", dkim_domain="shop.example")
            if signed
            else None,
        )
    return question


ORIGINALS = (
    CUSTOMER_EMAIL,
    AGENT_EMAIL,
    "alice.home@wonderland.example",
    "bob@mail.builder.example",
    "no-reply@shop.example",
    "Alice",
    "Liddell",
    "Bob Builder",
    "carol@example.org",
    "mail.shop.example",
)


def run(argv: list[str], environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(
        out=out, err=err, interactive=lambda: False, environ=environ or {}, progress=lambda: None
    )
    return main(argv, runtime), out.getvalue(), err.getvalue()


# One window for every export of a test run: an export names its window, and a window ending "now"
# would differ between two exports a second apart.
UNTIL = int(time.time()) + 3600


def export(tmp_path: Path, name: str = "week.json", key: str = KEY) -> tuple[Path, str]:
    path = tmp_path / name
    window = ["--since", str(UNTIL - 3 * 3600), "--until", str(UNTIL)]
    code, out, err = run(
        ["export", "--stack-name", STACK, "--region", "us-east-1", *window, "--out", str(path)],
        {"REPLYONCE_EXPORT_KEY": key},
    )
    assert code == 0, err
    return path, out


def replay(tmp_path: Path, name: str, *source: str) -> dict:
    path = tmp_path / name
    argv = ["replay", "--stack-name", STACK, "--region", "us-east-1", "--agent", "template", *source]
    code, _, err = run([*argv, "--json", str(path)])
    assert code == 0, err
    return json.loads(path.read_text())


def test_the_export_holds_no_original_address_or_name_and_reads_only(stack, nylas, week, tmp_path):
    before = len(nylas.requests)
    path, said = export(tmp_path)
    requests = nylas.requests[before:]
    text = path.read_text()
    for original in ORIGINALS:
        assert original.lower() not in text.lower(), original
    assert KEY not in text
    # Every address left is a pseudonym of one of ours.
    pseudonyms = Pseudonyms(KEY.encode())
    assert set(ADDRESS.findall(text)) >= {pseudonyms.address(CUSTOMER_EMAIL), pseudonyms.address(AGENT_EMAIL)}
    assert all(
        a.startswith(("c-", "no-reply-")) for a in ADDRESS.findall(text) if "@" in a and "msg-" not in a
    )
    # Read-only, and each read counted: the grant, its folders, one page of the window, one per thread.
    assert {method for method, _ in requests} == {"GET"}
    grant = f"/v3/grants/{AGENT_GRANT_ID}"
    assert sorted(requests) == sorted(
        [("GET", grant), ("GET", f"{grant}/folders"), ("GET", f"{grant}/messages")]
        + [("GET", f"{grant}/messages")] * 5
    )
    assert "exported 5 thread(s), 7 message(s)" in said


def test_the_export_keeps_threads_their_order_ids_and_replies(stack, nylas, week, tmp_path):
    path, _ = export(tmp_path)
    exported = json.loads(path.read_text())
    live = {}
    for _, message in nylas.mailbox(AGENT_GRANT_ID):
        live.setdefault(message["thread_id"], []).append(message)
    assert [t["id"] for t in exported["threads"]] == [
        t for t in dict.fromkeys(m["thread_id"] for _, m in reversed(nylas.mailbox(AGENT_GRANT_ID)))
    ]
    for thread in exported["threads"]:
        # Newest first, as Nylas lists a thread; the same ids.
        assert [m["id"] for m in thread["messages"]] == [m["id"] for m in reversed(live[thread["id"]])]

    # The reply structure: each In-Reply-To still names its parent's Message-ID.
    def header(message, name):
        return next((h["value"] for h in message.get("headers") or [] if h["name"].lower() == name), None)

    [conversation] = [t for t in exported["threads"] if len(t["messages"]) == 3]
    follow_up, answer, question = conversation["messages"]
    assert header(follow_up, "in-reply-to") == header(answer, "message-id")
    assert header(answer, "in-reply-to") == header(question, "message-id")
    assert question["id"] == week["id"]


def test_the_same_key_gives_the_same_export_and_another_key_other_pseudonyms(stack, nylas, week, tmp_path):
    first, _ = export(tmp_path, "first.json")
    again, _ = export(tmp_path, "again.json")
    other, _ = export(tmp_path, "other.json", key="another-key-of-another-team")
    assert first.read_text() == again.read_text()
    assert Pseudonyms(KEY.encode()).address(CUSTOMER_EMAIL) in first.read_text()
    assert Pseudonyms(KEY.encode()).address(CUSTOMER_EMAIL) not in other.read_text()


def test_the_replay_of_the_export_decides_as_the_replay_of_the_live_threads_without_nylas(
    stack, nylas, week, tmp_path
):
    path, _ = export(tmp_path)
    live = replay(tmp_path, "live.json", "--since", str(int(time.time()) - 3600))
    before = len(nylas.requests)
    frozen = replay(tmp_path, "frozen.json", "--from-export", str(path))
    assert nylas.requests[before:] == []

    def decisions(report):
        return sorted(
            (i["trigger_id"], tuple(i["covered"]), i["outcome"], i["reason"], i["person_message_id"])
            for i in report["items"]
        )

    assert decisions(frozen) == decisions(live)
    # What the rules decided differs in kind (a machine skipped, a colleague's answer matched, DKIM
    # on the parent domain): a pseudonymisation that lost any of them would change a decision above.
    assert {i["outcome"] for i in live["items"]} == {"reply", "skipped"}
    assert {i["reason"] for i in live["items"]} >= {"automated_sender", "relay_unverified"}
    assert any(i["person_message_id"] for i in live["items"])
    assert frozen["score"]["table"] == live["score"]["table"]


@pytest.mark.parametrize(
    ("environ", "said"),
    [({}, "REPLYONCE_EXPORT_KEY is not set"), ({"REPLYONCE_EXPORT_KEY": "short"}, "at least 16 are needed")],
)
def test_no_key_or_a_short_one_is_one_line_and_exit_2_before_anything_is_read(stack, nylas, environ, said):
    before = len(nylas.requests)
    code, _, err = run(
        ["export", "--stack-name", STACK, "--region", "us-east-1", "--since", "0", "--out", "x.json"], environ
    )
    assert code == 2
    assert said in err
    assert len(nylas.requests) == before
