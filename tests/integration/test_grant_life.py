"""A grant's life, from Nylas (issue 42): the emulator's grant notifications through the real replier handler.

Real parts: the tables and the queue built from ``template.yaml`` on moto, the unchanged replier handler
behind the event source stand-in, Powertools idempotency and Parameters (with their own caches), and the
Nylas emulator, which fires ``grant.created``/``.expired``/``.updated``/``.deleted`` as documented
(``devstack/nylas/grant_life.py``) and counts what each grant was sent. The expectations come from what the
issue asks (a new grant registered in the new grants' mode; an expired one's mail waiting, then answered
once; nothing sent after a deletion; its state gone), read at the emulator and in the tables, never from
the code under test.
"""

import time
from collections import Counter
from datetime import datetime, timedelta

import boto3
import pytest
from aws_lambda_powertools.utilities.parameters import base as parameters_base

from devstack.events import envelope, notification_envelope
from devstack.nylas import Fault
from functions.replier import app
from ops.grants import Deployment, render_list, render_show
from replyonce.adapters.grant_registry import (
    Change,
    changes_of,
    list_grants,
    list_lives,
    read_grant,
    read_life,
    write_change,
    write_life,
)
from replyonce.adapters.store import sweep_grant
from replyonce.grants import GrantSettings
from replyonce.rules.grant_life import GrantLife
from tests.replier_harness import deferrals, new_container, skip_reasons

GRANT = "grant-life-0001"
EMAIL = "help@life.example"
OTHER = "grant-other-0002"
OTHER_EMAIL = "sales@life.example"
OPERATOR = "arn:aws:iam::123456789012:user/operator"


class _Clock:
    """``datetime`` as Powertools' cache reads it, at a time the test moves."""

    def __init__(self) -> None:
        self.at = datetime(2026, 12, 6, 10, 0, 0)

    def now(self) -> datetime:
        return self.at


@pytest.fixture
def heard(nylas):
    """Every notification the emulator fires for grants (and send outcomes), as Nylas' envelopes."""
    fired: list[dict] = []
    nylas.on_notification = lambda trigger, data: fired.append(notification_envelope(trigger, data))
    yield fired
    nylas.on_notification = None


@pytest.fixture
def lives(replier_env, nylas, tuning, monkeypatch):
    """The registry with its cache of 60 s (the template's), on a clock the test moves; a paused grant's
    record back in 1 s."""
    tuning.update({"paused_retry_seconds": 1})
    clock = _Clock()
    monkeypatch.setattr(parameters_base, "datetime", clock)
    app.consumer.cache_clear()
    yield clock
    app.consumer.cache_clear()


def table(resources) -> str:
    return resources.tables["GrantRegistryTable"]


def registry():
    return boto3.client("dynamodb")


def put_record(resources, grant_id: str, record: dict) -> None:
    client, name = registry(), table(resources)
    read = read_grant(client, name, grant_id)
    write_change(
        client,
        name,
        Change(grant_id, "2026-12-06T09:00:00Z", "set", OPERATOR, read.record if read else None, record),
        read,
    )


def sends_of(nylas, grant_id: str) -> int:
    return nylas.count("POST", f"/v3/grants/{grant_id}/messages/send")


def state_keys(resources) -> list[str]:
    items = boto3.client("dynamodb").scan(TableName=resources.tables["StateTable"])["Items"]
    return sorted(i["pk"]["S"] for i in items)


def owned_by(resources, grant_id: str) -> list[str]:
    """The state items of one grant: keyed by it, or an email it claimed (``grant_id`` on the claim)."""
    items = boto3.client("dynamodb").scan(TableName=resources.tables["StateTable"])["Items"]
    return sorted(
        i["pk"]["S"] for i in items if grant_id in i["pk"]["S"] or i.get("grant_id", {}).get("S") == grant_id
    )


def mail(nylas, grant_id: str, sender: str, subject: str) -> dict:
    return nylas.deliver_inbound(grant_id, from_email=sender, subject=subject, body=f"About {subject}?")


def log_lines(log_records, message: str) -> list[dict]:
    return [r for r in log_records() if r.get("message") == message]


# ---- created ------------------------------------------------------------------------------------------


def test_a_grant_nylas_creates_is_registered_in_shadow_and_answers_nothing_until_promoted(
    lives, pipeline, nylas, heard, log_records
):
    nylas.create_grant(GRANT, EMAIL, name="Life Help")
    [created] = heard
    assert created["type"] == "grant.created"
    assert created["source"] == "/nylas/system"
    pipeline.deliver(created, times=2)  # delivered twice: registered once
    pipeline.drain()
    stored = read_grant(registry(), table(pipeline.resources), GRANT)
    assert stored.record == {"reply_mode": "shadow"}  # NewGrantReplyMode's default
    assert [c.action for c in changes_of(registry(), table(pipeline.resources), GRANT)] == [
        "created",
        "register",
    ]
    assert {c.by for c in changes_of(registry(), table(pipeline.resources), GRANT)} == {"nylas:grant.created"}
    assert skip_reasons(log_records) == ["duplicate_notification"]
    # Its mail goes through the pipeline and nothing is sent: shadow. The cache (60 s) has not read the
    # new record yet: a minute later it has.
    lives.at += timedelta(seconds=61)
    pipeline.deliver(envelope(mail(nylas, GRANT, "ann@customer.example", "Order 1")))
    pipeline.drain()
    assert sends_of(nylas, GRANT) == 0
    assert nylas.drafts == []


def test_a_created_grant_never_overwrites_an_operators_record(lives, pipeline, nylas, heard):
    put_record(pipeline.resources, GRANT, {"reply_mode": "send", "agent": "template"})
    nylas.create_grant(GRANT, EMAIL)
    pipeline.deliver(heard[0])
    pipeline.drain()
    assert read_grant(registry(), table(pipeline.resources), GRANT).record == {
        "reply_mode": "send",
        "agent": "template",
    }
    assert [c.action for c in changes_of(registry(), table(pipeline.resources), GRANT)] == ["created", "set"]


def test_new_grants_are_registered_in_the_mode_the_operator_chose(lives, pipeline, nylas, heard, monkeypatch):
    monkeypatch.setenv("NEW_GRANT_REPLY_MODE", "review")
    app.consumer.cache_clear()
    nylas.create_grant(GRANT, EMAIL)
    pipeline.deliver(heard[0])
    pipeline.drain()
    assert read_grant(registry(), table(pipeline.resources), GRANT).record == {"reply_mode": "review"}


# ---- expired, then re-authenticated -------------------------------------------------------------------


@pytest.fixture
def sending(lives, pipeline, nylas):
    """GRANT answers in send mode (an operator's record, read by the cache before the test begins)."""
    nylas.add_grant(GRANT, EMAIL, name="Life Help")
    put_record(pipeline.resources, GRANT, {"reply_mode": "send"})
    return pipeline


@pytest.mark.parametrize("replays", [True, False], ids=["nylas-replays-held-mail", "nylas-does-not"])
def test_an_expired_grants_mail_waits_and_is_answered_once_after_its_re_authentication(
    sending, nylas, heard, log_records, replays
):
    pipeline = sending
    nylas.modes.reauthentication_replays = replays
    before = mail(nylas, GRANT, "ann@customer.example", "Before")
    nylas.expire_grant(GRANT)
    [expired] = heard
    pipeline.deliver(expired)
    pipeline.drain()
    # The alarm's metric and the line that names the grant; make grants list/show say it is expired.
    [line] = log_lines(
        log_records, "grant expired: paused; its mail waits until Nylas says it was re-authenticated"
    )
    assert (line["grant_id"], line["paused_by"]) == (GRANT, "expiry")
    deployment = Deployment(GrantSettings(), ())
    lives_now = list_lives(registry(), table(pipeline.resources))
    listed = render_list(deployment, list_grants(registry(), table(pipeline.resources)), lives_now)
    assert any(GRANT in row and "expired" in row for row in listed)
    shown = render_show(
        GRANT,
        deployment,
        read_grant(registry(), table(pipeline.resources), GRANT),
        changes_of(registry(), table(pipeline.resources), GRANT),
        life=lives_now.get(GRANT),
    )
    assert any("expired" in row and "grant.expired" in row for row in shown)
    # A notification Nylas sent before it found the expiry (up to 10 minutes late) waits: deferred
    # grant_paused, its grant named; mail that arrives meanwhile is held by Nylas, not notified.
    pipeline.deliver(envelope(before))
    during = mail(nylas, GRANT, "bob@customer.example", "During")
    pipeline.poller().poll_once()
    [waiting] = [r for r in log_records() if r.get("message") == "record deferred; it will be retried"]
    assert (waiting["reason"], waiting["grant_id"], waiting["paused_by"]) == ("grant_paused", GRANT, "expiry")
    assert sends_of(nylas, GRANT) == 0
    # Re-authenticated: resumed at once (not after the cache's minute), and the window's mail answered.
    nylas.reauthenticate_grant(GRANT)
    for notification in heard[1:]:
        pipeline.deliver(notification)
    pipeline.drain()
    # The notification deferred grant_paused comes back (paused_retry_seconds, 1 s here) and finds its
    # message answered.
    time.sleep(1.5)
    pipeline.drain()
    answered = sorted(m["to"][0]["email"] for m in nylas.sent_messages(grant_id=GRANT))
    assert answered == ["ann@customer.example", "bob@customer.example"]  # each once
    assert pipeline.dead_letters() == []
    assert pipeline.in_flight() == 0
    assert before["id"] != during["id"]


def test_a_redelivered_expiry_pauses_once_and_a_late_one_pauses_nothing(sending, nylas, log_records):
    pipeline = sending
    at = int(nylas.now())
    expired = notification_envelope("grant.expired", {"object": {"grant_id": GRANT, "code": 25009}})
    reauthenticated = notification_envelope(
        "grant.updated", {"object": {"grant_id": GRANT, "code": 25027, "reauthentication_flag": True}}
    )
    expired["time"], reauthenticated["time"] = at - 60, at - 30
    late_copy = {**expired, "id": "another-id-of-the-same-expiry"}
    # Out of order: the re-authentication first, then the expiry before it (twice, under two ids).
    pipeline.deliver(reauthenticated)
    pipeline.drain()
    pipeline.deliver(expired)
    pipeline.deliver(late_copy)
    pipeline.drain()
    assert (
        log_lines(
            log_records, "grant expired: paused; its mail waits until Nylas says it was re-authenticated"
        )
        == []
    )
    assert not read_life(registry(), table(pipeline.resources), GRANT).life.expired
    # A real expiry after it pauses, once however often it is delivered.
    newer = {**expired, "id": "newer", "time": at}
    pipeline.deliver(newer, times=2)
    pipeline.deliver({**newer, "id": "newer-again"})
    pipeline.drain()
    assert (
        len(
            log_lines(
                log_records, "grant expired: paused; its mail waits until Nylas says it was re-authenticated"
            )
        )
        == 1
    )
    pipeline.deliver(envelope(mail(nylas, GRANT, "cy@customer.example", "Hello")))
    pipeline.poller().poll_once()
    assert "grant_paused" in deferrals(log_records)
    assert sends_of(nylas, GRANT) == 0


def test_an_operators_pause_is_not_lifted_by_a_re_authentication(sending, nylas, heard, log_records, lives):
    pipeline = sending
    put_record(pipeline.resources, GRANT, {"reply_mode": "send", "enabled": False})
    nylas.expire_grant(GRANT)
    nylas.reauthenticate_grant(GRANT)
    for notification in heard:
        pipeline.deliver(notification)
    pipeline.drain()
    assert read_grant(registry(), table(pipeline.resources), GRANT).record == {
        "reply_mode": "send",
        "enabled": False,
    }
    lives.at += timedelta(seconds=61)  # the operator's pause read by the cache
    pipeline.deliver(envelope(mail(nylas, GRANT, "dee@customer.example", "Still paused?")))
    pipeline.poller().poll_once()
    assert deferrals(log_records)[-1] == "grant_paused"
    assert sends_of(nylas, GRANT) == 0


# ---- deleted ------------------------------------------------------------------------------------------


def test_a_grant_deleted_while_the_cache_is_stale_sends_nothing_after_its_notification(
    sending, nylas, heard, log_records, lives
):
    pipeline = sending
    # The replier's container has read the registry (the cache holds GRANT active for a minute).
    pipeline.deliver(envelope(mail(nylas, GRANT, "ann@customer.example", "First")))
    pipeline.drain()
    assert sends_of(nylas, GRANT) == 1
    # Another container handles the deletion; Nylas' own refusal is left out (the emulator keeps the grant
    # answering), so only the replier's own read can stop the send.
    other = new_container()
    pipeline.deliver(notification_envelope("grant.deleted", {"object": {"grant_id": GRANT, "code": 25013}}))
    pipeline.poller(lambda event, context: other.handle_batch(event, context)).drain()
    assert read_life(registry(), table(pipeline.resources), GRANT).life.deleted
    message = mail(nylas, GRANT, "bob@customer.example", "Second")
    pipeline.deliver(envelope(message))
    pipeline.poller().poll_once()
    assert sends_of(nylas, GRANT) == 1  # no send after the notification
    assert deferrals(log_records)[-1] == "grant_deleted"
    # Once the cache knows, the record is skipped with its reason, and nothing of it is read at Nylas.
    lives.at += timedelta(seconds=61)
    reads = nylas.count("GET", f"/v3/grants/{GRANT}/")
    pipeline.drain()
    assert skip_reasons(log_records)[-1] == "grant_deleted"
    assert nylas.count("GET", f"/v3/grants/{GRANT}/") == reads
    assert sends_of(nylas, GRANT) == 1
    assert pipeline.in_flight() == 0


def test_a_reply_stored_before_the_grants_deletion_is_not_sent_after_it(sending, nylas, log_records):
    # The write that stores a reply right before its send checks the grant's life (issue 46); a reply an
    # earlier record stored, whose send may have gone (a 503), is stored again with its next attempt
    # counted before it is sent again, and that write checks the life too.
    pipeline = sending
    nylas.inject("POST", rf"^/v3/grants/{GRANT}/messages/send$", Fault.status(503))
    pipeline.deliver(envelope(mail(nylas, GRANT, "cy@customer.example", "Stored")))
    pipeline.poller().poll_once()
    assert deferrals(log_records)[-1] == "send_retry"  # stored, and its key tried once: the same key later
    attempts = sends_of(nylas, GRANT)
    # Nylas' deletion, as the replier writes it from grant.deleted (the replier's cache still stale).
    client, name = registry(), table(pipeline.resources)
    read = read_life(client, name, GRANT)
    deleted = GrantLife(created_at=1, deleted_at=int(time.time()))
    write_life(
        client, name, GRANT, deleted, read, Change(GRANT, "2026-12-06T10:00:00Z", "life", "nylas:test")
    )
    pipeline.poller().poll_once()
    assert deferrals(log_records)[-1] == "grant_deleted"
    assert sends_of(nylas, GRANT) == attempts  # no send after the deletion


def test_a_deleted_grants_state_is_removed_and_another_grants_kept(sending, nylas, heard, log_records):
    pipeline = sending
    nylas.add_grant(OTHER, OTHER_EMAIL)
    put_record(pipeline.resources, OTHER, {"reply_mode": "send"})
    app.consumer.cache_clear()
    for grant in (GRANT, OTHER):
        pipeline.deliver(envelope(mail(nylas, grant, "ann@customer.example", f"Hello {grant}")))
    pipeline.drain()
    keys, theirs = owned_by(pipeline.resources, GRANT), owned_by(pipeline.resources, OTHER)
    assert any(k.startswith(f"thread#{GRANT}#") for k in keys)
    assert any(k.startswith(f"message#{GRANT}#") for k in keys)
    nylas.delete_grant(GRANT)
    pipeline.deliver(heard[-1])
    pipeline.drain()
    assert owned_by(pipeline.resources, GRANT) == []
    assert owned_by(pipeline.resources, OTHER) == theirs != []
    [removed] = log_lines(log_records, "deleted grant's state removed")
    assert removed["grant_id"] == GRANT
    assert removed["items"] == len(keys)
    assert read_life(registry(), table(pipeline.resources), GRANT).life.swept
    # The deleted grant answers 404 at Nylas (the emulator's default): its mail is skipped, never read.
    pipeline.deliver(envelope(mail(nylas, OTHER, "x@customer.example", "Still here")))
    pipeline.drain()
    assert sends_of(nylas, OTHER) == 2


def test_a_sweep_too_large_for_one_try_goes_on_where_it_stopped(sending, nylas, monkeypatch):
    pipeline = sending
    for n in range(4):
        pipeline.deliver(envelope(mail(nylas, GRANT, f"c{n}@customer.example", f"Order {n}")))
    pipeline.drain()
    mine = owned_by(pipeline.resources, GRANT)
    assert len(mine) >= 8  # a thread and a ledger entry each
    monkeypatch.setattr("replyonce.adapters.store.SWEEP_PAGE_ITEMS", 2)
    client, name = boto3.client("dynamodb"), pipeline.resources.tables["StateTable"]
    pages = iter([True, True, False])
    go_on_from, deleted = sweep_grant(client, name, GRANT, "", lambda: next(pages))
    assert go_on_from  # stopped before the table's end: where it goes on from
    assert deleted < len(mine)
    go_on_from, rest = sweep_grant(client, name, GRANT, go_on_from, lambda: True)
    assert go_on_from == ""
    assert deleted + rest == len(mine)
    assert owned_by(pipeline.resources, GRANT) == []


def test_another_applications_grant_neither_pages_nor_sweeps(lives, pipeline, nylas, heard, log_records):
    # Nylas tells of every grant of the application; one that is no agent grant of this stack (no record,
    # not in AgentGrantIds, NewGrantReplyMode off) expires and is deleted without a page or a Scan.
    nylas.add_grant("grant-stranger-0009", "someone@else.example")
    nylas.deliver_inbound("grant-stranger-0009", from_email="a@customer.example", subject="Hi", body="Hi")
    nylas.modes.reauthentication_replays = False
    nylas.expire_grant("grant-stranger-0009")
    nylas.reauthenticate_grant("grant-stranger-0009")
    nylas.delete_grant("grant-stranger-0009")
    for notification in heard:
        pipeline.deliver(notification)
    pipeline.drain()
    assert (
        log_lines(
            log_records, "grant expired: paused; its mail waits until Nylas says it was re-authenticated"
        )
        == []
    )
    assert [
        r["grant_id"]
        for r in log_lines(log_records, "grant expired: not an agent grant of this stack; nothing waits")
    ] == ["grant-stranger-0009"]
    assert log_lines(log_records, "grant re-authenticated: not an agent grant of this stack; no backfill")
    assert nylas.count("GET", "/v3/grants/grant-stranger-0009/messages") == 0
    assert log_lines(log_records, "grant deleted: not an agent grant of this stack; no state to remove")
    assert log_lines(log_records, "deleted grant's state removed") == []
    assert read_life(registry(), table(pipeline.resources), "grant-stranger-0009").life.swept


def test_a_deleted_grant_is_no_longer_looked_up_for_the_other_grants_records(
    sending, nylas, heard, log_records
):
    pipeline = sending
    nylas.add_grant(OTHER, OTHER_EMAIL)
    put_record(pipeline.resources, OTHER, {"reply_mode": "send"})
    nylas.delete_grant(GRANT)
    pipeline.deliver(heard[-1])
    pipeline.drain()
    # A new container (its first record describes every agent grant at Nylas): the deleted one is not.
    app.consumer.cache_clear()
    pipeline.deliver(envelope(mail(nylas, OTHER, "ann@customer.example", "Hello")))
    pipeline.drain()
    assert sends_of(nylas, OTHER) == 1
    assert nylas.count("GET", f"/v3/grants/{GRANT}") == 0
    assert [r for r in log_records() if r.get("grant_id") == GRANT and r.get("level") == "ERROR"] == []


def test_other_grant_notifications_stay_skipped_with_their_reason(lives, pipeline, nylas, log_records):
    # grant.imap_sync_completed (and any type the replier does not act on) is skipped, logged, counted.
    pipeline.deliver(notification_envelope("grant.imap_sync_completed", {"object": {"grant_id": GRANT}}))
    pipeline.drain()
    assert skip_reasons(log_records) == ["unsupported_type"]
    assert read_life(registry(), table(pipeline.resources), GRANT) is None


def test_what_an_expiry_and_a_deletion_cost_in_requests(sending, nylas, heard):
    # Counted at the wire (a botocore hook on the container's own session), asserted exactly: an expiry is
    # the idempotency record (put, completed), the life read and written with its change item (one
    # transaction), and the look at the grant's record (an agent grant's: the alarm); no Nylas call. A
    # deletion of a grant with no state: the same, and the sweep's one Scan page and the life marked swept.
    pipeline = sending
    session = boto3.session.Session()
    calls: Counter = Counter()
    session.events.register("before-call.dynamodb.*", lambda model, **_: calls.update([model.name]))
    container = new_container(aws=session)
    handler = lambda event, context: container.handle_batch(event, context)  # noqa: E731
    nylas.expire_grant(GRANT)
    nylas_before = len(nylas.requests)
    pipeline.deliver(heard[-1])
    pipeline.poller(handler).drain()
    assert calls == Counter({"PutItem": 1, "UpdateItem": 1, "GetItem": 2, "TransactWriteItems": 1})
    calls.clear()
    nylas.delete_grant(GRANT)
    pipeline.deliver(heard[-1])
    pipeline.poller(handler).drain()
    assert calls == Counter({"PutItem": 1, "UpdateItem": 1, "GetItem": 3, "TransactWriteItems": 2, "Scan": 1})
    assert len(nylas.requests) == nylas_before
