"""What people did with the review drafts (issue 43): the replier in review mode drafts four replies,
people send one as written, edit and send one, delete one and leave one; ``review-report`` counts each
fate from the mailbox, read-only, with every read counted.

Real parts: the replier's handler (review mode) through SQS on moto, the Nylas emulator (drafts; a
person's send of a draft, ``POST``-free; ``PUT``/``DELETE .../drafts/{id}`` as documented at
https://developer.nylas.com/docs/reference/api/drafts/), the command as ``make review-report`` runs it.
"""

import io
import json
from pathlib import Path

import pytest
import requests

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, envelope
from devstack.template import LOCAL_API_KEY
from functions.replier import app
from ops.cli import Runtime, main
from replyonce.agent import Conversation, Reply
from tests.conftest import register_mailbox_stack

STACK = "replyonce-review-test"
DAY = 24 * 3600


def order_agent(conversation: Conversation) -> Reply:
    """Five words, always: the test knows what each draft says."""
    return Reply(text="Your order ships on Friday")


@pytest.fixture
def stack(replier_env, nylas):
    register_mailbox_stack(STACK, replier_env, nylas.url)
    return replier_env


@pytest.fixture
def drafts(stack, pipeline, nylas, monkeypatch):
    """Four customers' questions, each drafted for review by the replier: the drafts, in that order."""
    monkeypatch.setenv("REPLY_MODE", "review")
    monkeypatch.setenv("REPLY_AGENT", f"{__name__}:order_agent")
    app.consumer.cache_clear()
    for n in range(4):
        question = nylas.deliver_inbound(
            AGENT_GRANT_ID, from_email=f"customer{n}@example.com", subject=f"Order {n}", body="<p>When?</p>"
        )
        pipeline.deliver(envelope(question))
        pipeline.drain()
    made = [record.draft for record in nylas.drafts]
    assert len(made) == 4
    assert nylas.sends == []
    return made


def review(tmp_path: Path, nylas, *extra: str) -> tuple[str, dict, list]:
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(
        out=out, err=err, interactive=lambda: False, environ={}, progress=lambda: None, clock=nylas.now
    )
    before = len(nylas.requests)
    argv = ["review-report", "--stack-name", STACK, "--region", "us-east-1"]
    path = tmp_path / "review.json"
    files = ["--drafts-file", str(tmp_path / "drafts.json"), "--json", str(path)]
    code = main([*argv, *files, *extra], runtime)
    assert code == 0, err.getvalue()
    return out.getvalue(), json.loads(path.read_text()), nylas.requests[before:]


def api(nylas, method: str, path: str, **kwargs) -> None:
    response = requests.request(
        method, nylas.url + path, headers={"Authorization": f"Bearer {LOCAL_API_KEY}"}, timeout=10, **kwargs
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("keeps_metadata", [True, False], ids=["sent-copy-keeps-metadata", "metadata-lost"])
def test_each_drafts_fate_is_counted_from_the_mailbox(drafts, nylas, tmp_path, keeps_metadata):
    nylas.modes.draft_send_keeps_metadata = keeps_metadata
    text, first, reads = review(tmp_path, nylas)
    # First sight: four drafts of ours, too young to call open; one read (the drafts listing).
    [grant] = first["grants"]
    assert grant["counts"] == {"sent_unchanged": 0, "sent_edited": 0, "deleted": 0, "open": 0, "pending": 4}
    assert reads == [("GET", f"/v3/grants/{AGENT_GRANT_ID}/drafts")]
    assert first["reads"] == 1

    unchanged, edited, deleted, left = drafts
    drafts_path = f"/v3/grants/{AGENT_GRANT_ID}/drafts"
    nylas.advance_clock(60)
    nylas.person_sends_draft(AGENT_GRANT_ID, unchanged["id"])
    # Five words drafted; the person changes "Friday" to "Monday" and adds "morning": 2 edits of 6 words.
    api(
        nylas,
        "PUT",
        f"{drafts_path}/{edited['id']}",
        json={"body": "<p>Your order ships on Monday morning</p>"},
    )
    nylas.person_sends_draft(AGENT_GRANT_ID, edited["id"])
    api(nylas, "DELETE", f"{drafts_path}/{deleted['id']}")
    nylas.advance_clock(DAY + 60)  # the last draft stays open past --open-hours 24

    text, second, reads = review(tmp_path, nylas)
    [grant] = second["grants"]
    assert grant["counts"] == {"sent_unchanged": 1, "sent_edited": 1, "deleted": 1, "open": 1, "pending": 0}
    assert [(r["fate"], r["count"], r["total"]) for r in grant["rates"]] == [
        ("sent_unchanged", 1, 4),
        ("sent_edited", 1, 4),
        ("deleted", 1, 4),
        ("open", 1, 4),
    ]
    [most] = grant["most_edited"]
    assert most["draft_id"] == edited["id"]
    assert most["distance"] == pytest.approx(2 / 6)
    assert most["matched_by"] == ("metadata" if keeps_metadata else "thread")
    assert "Monday morning" in most["sent_text"]
    # Read-only and bounded: the listing, the grant and its folders once, one thread per draft gone.
    grant_path = f"/v3/grants/{AGENT_GRANT_ID}"
    assert sorted(reads) == sorted(
        [("GET", f"{grant_path}/drafts"), ("GET", grant_path), ("GET", f"{grant_path}/folders")]
        + [("GET", f"{grant_path}/messages")] * 3
    )
    assert second["reads"] == 6
    assert "sent edited 1" in text
    assert left["id"] not in {m["draft_id"] for m in grant["most_edited"]}

    # A third run reads the listing only: every draft that left Drafts is decided for good.
    _, third, reads = review(tmp_path, nylas)
    assert reads == [("GET", f"{grant_path}/drafts")]
    assert third["grants"][0]["counts"] == grant["counts"]


def test_the_read_bound_leaves_the_rest_for_the_next_run(drafts, nylas, tmp_path):
    review(tmp_path, nylas)
    for draft in drafts:
        nylas.person_sends_draft(AGENT_GRANT_ID, draft["id"])
    # 1 listing + the grant + its folders + 2 threads: two of the four sent drafts are followed.
    text, report, reads = review(tmp_path, nylas, "--max-reads", "5")
    assert len(reads) == 5
    assert report["grants"][0]["counts"]["sent_unchanged"] == 2
    assert report["not_followed"] == 2
    assert "2 draft(s) left Drafts and are not followed yet" in text
    _, report, _ = review(tmp_path, nylas)
    assert report["grants"][0]["counts"]["sent_unchanged"] == 4
    assert report["not_followed"] == 0


def test_a_persons_own_draft_is_not_followed(stack, nylas, tmp_path):
    question = nylas.deliver_inbound(
        AGENT_GRANT_ID, from_email=CUSTOMER_EMAIL, subject="Hi", body="<p>Question</p>"
    )
    nylas.person_drafts(AGENT_GRANT_ID, question["id"])
    _, report, _ = review(tmp_path, nylas)
    assert report["grants"][0]["counts"]["pending"] == 0
    assert json.loads((tmp_path / "drafts.json").read_text()) == {"drafts": []}
