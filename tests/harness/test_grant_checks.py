"""The per-grant checker (chaos/grant_checks.py) on hand-made histories: each check fails the history that
breaks it and passes the one that keeps it; and it imports nothing of the product."""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from chaos.grant_checks import GrantHistory, check_grants, per_grant, unowed_messages
from chaos.grants import LifeEvent
from devstack.invariants import HANDOFF_FOLDER, Truth, payload_digest

ROOT = Path(__file__).resolve().parents[2]
G = "grant-fleet-001"
EFFECT = 3.0


def message(message_id: str, thread: str = "t1", folders: tuple[str, ...] = ("inbox",)) -> dict:
    return {
        "id": message_id,
        "grant_id": G,
        "thread_id": thread,
        "folders": list(folders),
        "from": [{"email": "c@customers.example"}],
    }


def history(events, inbound=(), emails=(), drafts=()) -> GrantHistory:
    """``inbound``: (arrived, message); ``emails``: (first request started, arrived, target, thread)."""
    mailbox = list(inbound)
    sends, attempts = [], []
    for number, (started, arrived, target, thread) in enumerate(emails):
        payload = {"reply_to_message_id": target, "body": f"reply {number}"}
        sent = {"id": f"e{number}", "grant_id": G, "thread_id": thread, "folders": ["sent"]}
        mailbox.append((arrived, sent))
        sends.append(SimpleNamespace(grant_id=G, payload=payload, message=sent))
        attempts.append(
            SimpleNamespace(
                grant_id=G,
                payload_digest=payload_digest(payload),
                started=started,
                status=200,
                replayed=False,
            )
        )
    requests = [SimpleNamespace(grant_id=G, reply_to_message_id=t, started=s, status=200) for s, t in drafts]
    return GrantHistory(
        events=[LifeEvent(G, kind, at, mode) for kind, at, mode in events],
        fleet={G},
        mailbox=sorted(mailbox, key=lambda pair: pair[0]),
        truth={m["id"]: Truth.human("customer", "c@customers.example") for _, m in inbound},
        sends=sends,
        send_attempts=attempts,
        draft_requests=requests,
        effect_seconds=EFFECT,
        handoff_folder=HANDOFF_FOLDER,
    )


def broken(h: GrantHistory) -> dict[int, int]:
    return {n: len(found) for n, found in check_grants(h).violations.items() if found}


DELETED = [("registered", 0.0, "send"), ("delete_notified", 10.0, ""), ("delete_recorded", 11.0, "")]
SHADOW = [("registered", 0.0, "send"), ("mode", 10.0, "shadow"), ("mode", 30.0, "send")]
REVIEW = [("registered", 0.0, "send"), ("mode", 10.0, "review"), ("mode", 30.0, "send")]
CREATED = [("created", 10.0, "shadow"), ("mode", 30.0, "send")]
PAUSED = [("registered", 0.0, "send"), ("pause", 10.0, ""), ("resume", 30.0, "")]


@pytest.mark.parametrize(
    ("events", "emails", "drafts", "expected"),
    [
        # 8: a send that began after the deletion was recorded; one that began before is no violation.
        (DELETED, [(11.5, 12.0, "m1", "t1")], [], {8: 1}),
        (DELETED, [(10.5, 12.0, "m1", "t1")], [], {}),
        (DELETED, [], [(12.0, "m1")], {8: 1}),
        # A retry of a draft first sent before the deletion is a send after it all the same.
        (DELETED, [(10.5, 12.0, "m1", "t1"), (11.5, 12.0, "m1", "t1")], [], {8: 1}),
        # 9: shadow's window begins once the change reached every record (EFFECT) and ends at send.
        (SHADOW, [(14.0, 14.5, "m1", "t1")], [], {9: 1}),
        (SHADOW, [(12.0, 12.5, "m1", "t1")], [], {}),  # begun on the cache before the change
        (SHADOW, [(31.0, 31.5, "m1", "t1")], [], {}),
        (SHADOW, [], [(20.0, "m1")], {9: 1}),  # shadow drafts nothing either
        (REVIEW, [(20.0, 20.5, "m1", "t1")], [], {9: 1}),
        (REVIEW, [], [(20.0, "m1")], {}),  # review's replies are drafts
        # A grant Nylas created is in shadow from its creation until promoted.
        (CREATED, [(10.5, 11.0, "m1", "t1")], [], {9: 1}),
        (CREATED, [(34.0, 34.5, "m1", "t1")], [], {}),
        # 10: a draft in review, then an email to the same message once back in send.
        (REVIEW, [(40.0, 40.5, "m1", "t1")], [(20.0, "m1")], {10: 1}),
        (REVIEW, [(40.0, 40.5, "m2", "t2")], [(20.0, "m1")], {}),
        # 11: an email while paused (after the change took effect).
        (PAUSED, [(20.0, 20.5, "m0", "t0")], [], {9: 0, 11: 1}),
    ],
)
def test_each_check_fails_what_breaks_it_and_passes_what_keeps_it(events, emails, drafts, expected):
    expected = {n: c for n, c in expected.items() if c}
    assert broken(history(events, emails=emails, drafts=drafts)) == expected


def test_a_person_s_message_to_a_paused_grant_is_lost_unless_answered_or_handed_off_after_it():
    inbound = [(15.0, message("m1"))]
    assert broken(history(PAUSED, inbound)) == {11: 1}
    assert broken(history(PAUSED, inbound, emails=[(35.0, 35.5, "m1", "t1")])) == {}
    # An email in its thread that went out before it arrived answers nothing of it.
    assert broken(history(PAUSED, [(15.0, message("m1"))], emails=[(5.0, 5.5, "m0", "t1")])) == {11: 1}
    handed_off = [(15.0, message("m1", folders=(HANDOFF_FOLDER,)))]
    assert broken(history(PAUSED, handed_off)) == {}
    # A message that arrived after the resume is not this check's (the seven invariants hold it).
    assert broken(history(PAUSED, [(31.0, message("m2"))])) == {}


def test_what_no_agent_owes_comes_from_the_lives_log_alone():
    mailbox = [(5.0, {**message("early"), "grant_id": G}), (32.0, message("late")), (34.0, message("later"))]
    # Back to send at 30: records of messages that arrived before 30 + EFFECT may have run in shadow.
    events = [LifeEvent(G, kind, at, mode) for kind, at, mode in SHADOW]
    assert unowed_messages(events, mailbox, EFFECT) == {"early", "late"}
    deleted = [LifeEvent(G, kind, at, mode) for kind, at, mode in DELETED]
    assert unowed_messages(deleted, mailbox, EFFECT) == {"early", "late", "later"}
    paused = [LifeEvent(G, kind, at, mode) for kind, at, mode in PAUSED]
    assert unowed_messages(paused, mailbox, EFFECT) == set()  # a pause owes every message its end


def test_violations_of_the_seven_are_counted_per_grant_by_the_ids_they_name():
    mailbox = [(1.0, message("m1")), (2.0, {**message("m9", thread="t9"), "grant_id": "grant-fleet-002"})]
    named = per_grant({2: ["message m1 (customer) was lost"], 7: ["thread t9: silent"], 1: []}, mailbox)
    assert named == {2: {G}, 7: {"grant-fleet-002"}, 1: set()}


def test_the_grant_checker_imports_nothing_from_the_product():
    probe = (
        "import sys, chaos.grant_checks; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('replyonce', 'functions', 'ops')))"
    )
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'replyonce'}"}
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environment, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"
