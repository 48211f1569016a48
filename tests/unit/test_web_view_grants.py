"""The console's grants table (``make serve --grants N``): each grant's mail counted from the log records."""

import pytest

from devstack.web_view import grant_rows

GRANTS = [
    {"grant_id": "g1", "address": "one@example.com", "mode": "send", "state": "enabled"},
    {"grant_id": "g2", "address": "two@example.com", "mode": "shadow", "state": "paused"},
]


def queued(n, grant, notification_type="message.created"):
    return {
        "message": "notification queued",
        "notification_id": n,
        "notification_type": notification_type,
        "grant_id": grant,
    }


def skipped(n, reason, **fields):
    return {"message": "notification skipped", "notification_id": n, "reason": reason, **fields}


def deferred(n, reason):
    return {"message": "record deferred; it will be retried", "notification_id": n, "reason": reason}


def counts(rows, grant):
    [row] = [r for r in rows if r["grant_id"] == grant]
    return {k: row[k] for k in ("received", "replied", "handed_off", "skipped", "deferred")}


NOTHING = {"received": 0, "replied": 0, "handed_off": 0, "skipped": 0, "deferred": 0}


@pytest.mark.parametrize(
    ("records", "g1", "g2"),
    [
        pytest.param([], NOTHING, NOTHING, id="no mail: every grant shown, nothing counted"),
        pytest.param(
            [queued("n1", "g1"), {"message": "reply sent", "notification_id": "n1"}],
            {**NOTHING, "received": 1, "replied": 1},
            NOTHING,
            id="a reply counts for the grant the webhook queued it for, not the other",
        ),
        pytest.param(
            [
                queued("n1", "g2"),
                queued("n1", "g2"),  # a duplicate delivery of the same notification: one message
                {"message": "shadow mode: reply recorded, nothing sent", "notification_id": "n1"},
            ],
            NOTHING,
            {**NOTHING, "received": 1, "replied": 1},
            id="duplicates are one notification; shadow counts as its reply",
        ),
        pytest.param(
            [queued("n1", "g1"), skipped("n1", "handed_off", handed_off=True)],
            {**NOTHING, "received": 1, "handed_off": 1},
            NOTHING,
            id="a hand-off is not a plain skip",
        ),
        pytest.param(
            [queued("n1", "g1"), skipped("n1", "automated_sender")],
            {**NOTHING, "received": 1, "skipped": 1},
            NOTHING,
            id="a skip with its reason",
        ),
        pytest.param(
            [queued("n1", "g1"), skipped("n1", "own_outbound")],
            NOTHING,
            NOTHING,
            id="the mailbox's own send is not received mail",
        ),
        pytest.param(
            [queued("n1", "g2"), deferred("n1", "grant_paused"), deferred("n1", "grant_paused")],
            NOTHING,
            {**NOTHING, "received": 1, "deferred": 1},
            id="a paused grant's message waits: deferred once however often it came back",
        ),
        pytest.param(
            [
                queued("n1", "g2"),
                deferred("n1", "grant_paused"),
                {"message": "reply sent", "notification_id": "n1"},
            ],
            NOTHING,
            {**NOTHING, "received": 1, "replied": 1},
            id="answered after its wait: replied, no longer deferred",
        ),
        pytest.param(
            [
                queued("n1", "g1"),
                skipped("n1", "automated_sender"),
                {"message": "reply sent", "notification_id": "n1"},
            ],
            {**NOTHING, "received": 1, "skipped": 1},
            NOTHING,
            id="the first final word decides",
        ),
        pytest.param(
            [queued("n1", "g1", "grant.expired"), deferred("n1", "grant_paused")],
            NOTHING,
            NOTHING,
            id="a grant notification is not mail",
        ),
        pytest.param(
            [queued("n1", "g3"), {"message": "reply sent", "notification_id": "n1"}],
            NOTHING,
            NOTHING,
            id="mail of a grant not shown counts for none shown",
        ),
    ],
)
def test_each_grants_mail_is_counted_once_in_one_column(records, g1, g2):
    rows = grant_rows(GRANTS, records)
    assert [r["grant_id"] for r in rows] == ["g1", "g2"]
    assert (counts(rows, "g1"), counts(rows, "g2")) == (g1, g2)


def test_a_row_says_the_grants_mode_state_and_the_reasons_behind_its_counts():
    records = [
        queued("n1", "g2"),
        skipped("n1", "automated_sender"),
        queued("n2", "g2"),
        skipped("n2", "automated_sender"),
        queued("n3", "g2"),
        skipped("n3", "already_replied"),
        queued("n4", "g2"),
        deferred("n4", "grant_paused"),
    ]
    [_, row] = grant_rows(GRANTS, records)
    assert (row["address"], row["mode"], row["state"]) == ("two@example.com", "shadow", "paused")
    assert row["skip_reasons"] == "already_replied x1, automated_sender x2"
    assert row["deferred_reasons"] == "grant_paused x1"
