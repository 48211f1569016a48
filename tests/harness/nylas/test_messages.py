"""Contract: reading messages and threads, folders, moving a message, finding it by metadata.

Sources: https://developer.nylas.com/docs/reference/api/messages/ (the message object; ``folders``
holds folder IDs; ``headers`` only with ``fields=include_headers`` or ``include_basic_headers``),
https://developer.nylas.com/docs/reference/api/messages/get-messages/ (``limit`` 50/200,
``next_cursor``/``page_token``, ``thread_id``, ``in``), https://developer.nylas.com/docs/reference/api/threads/,
https://developer.nylas.com/docs/reference/api/folders/get-folder/ and
https://developer.nylas.com/docs/v3/agent-accounts/mailboxes/ (six system folders),
https://developer.nylas.com/docs/dev-guide/metadata/ (``metadata_pair`` on ``key1``..``key5``, no
provider filter with it).
"""

from urllib.parse import quote

import pytest

from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    OTHER_EMAIL,
    OTHER_GRANT,
    call,
    error_of,
    get,
    header_names,
    inbound,
    list_messages,
    reply_to,
    send,
)

SYSTEM_FOLDERS = ["inbox", "sent", "drafts", "trash", "junk", "archive"]


def ids(response) -> list[str]:
    return [m["id"] for m in response.json()["data"]]


# ---- GET a message ------------------------------------------------------------------------------


def test_get_message_decodes_a_url_encoded_id(nylas, clock):
    """``message_id`` must be URL-encoded (an IMAP-style id holds ``/``): the path is decoded."""
    message_id = "<CAF+x/y@mail.example.com>"
    message = inbound(nylas, headers={"Auto-Submitted": "auto-replied"}, message_id=message_id)
    encoded = quote(message_id, safe="")
    assert "%2F" in encoded

    response = get(nylas, f"/v3/grants/{GRANT}/messages/{encoded}", params={"fields": "include_headers"})

    assert response.status_code == 200
    data = response.json()["data"]
    assert data == {**message, "folders": [nylas.folder_id(GRANT, "inbox")]}
    assert (data["id"], data["object"], data["grant_id"]) == (message_id, "message", GRANT)
    assert data["from"] == [{"name": "", "email": CUSTOMER}]
    assert data["to"][0]["email"] == AGENT_EMAIL
    assert data["date"] == int(clock.now)
    assert data["snippet"] == "Where is my order?"
    assert data["unread"] is True
    # An IMAP-style id is the message's Message-ID; the given headers are kept as they came.
    assert data["headers"] == [
        {"name": "Message-ID", "value": message_id},
        {"name": "Auto-Submitted", "value": "auto-replied"},
    ]
    missing = get(nylas, f"/v3/grants/{GRANT}/messages/msg-nope")
    assert missing.status_code == 404
    assert error_of(missing)["type"] == "not_found_error"


def test_messages_of_another_grant_are_not_visible(nylas):
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL)
    message = inbound(nylas)
    assert get(nylas, f"/v3/grants/{OTHER_GRANT}/messages/{message['id']}").status_code == 404
    assert get(nylas, f"/v3/grants/{OTHER_GRANT}/threads/{message['thread_id']}").status_code == 404


def test_message_reads_return_headers_only_when_asked(nylas):
    """``fields=include_headers`` adds every header, ``include_basic_headers`` only ``Message-ID``,
    ``In-Reply-To`` and ``References``; ``standard`` none; any other value is a 400."""
    first = inbound(nylas, headers={"Auto-Submitted": "auto-replied", "List-Id": "<news.example.com>"})
    follow_up = inbound(nylas, reply_to_message_id=first["id"], headers={"message-id": "<own@mail.example>"})
    path = f"/v3/grants/{GRANT}/messages/{follow_up['id']}"

    assert "headers" not in get(nylas, path).json()["data"]
    assert (
        get(nylas, path, params={"fields": "include_headers"}).json()["data"]["headers"]
        == follow_up["headers"]
    )
    basic = get(nylas, path, params={"fields": "include_basic_headers"}).json()["data"]
    # Matched case-insensitively; the follow-up's own Message-ID is kept, threading headers derived.
    assert basic["headers"] == [
        {"name": "In-Reply-To", "value": f"<{first['id']}@emulator.nylas>"},
        {"name": "References", "value": f"<{first['id']}@emulator.nylas>"},
        {"name": "message-id", "value": "<own@mail.example>"},
    ]
    listed = list_messages(nylas, thread_id=first["thread_id"]).json()["data"]
    assert all("headers" not in m for m in listed)
    listed = list_messages(nylas, thread_id=first["thread_id"], fields="include_basic_headers").json()["data"]
    assert [header_names(m) for m in listed] == [["In-Reply-To", "References", "message-id"], ["Message-ID"]]
    listed = list_messages(nylas, thread_id=first["thread_id"], fields="include_headers").json()["data"]
    assert header_names(listed[1]) == ["Message-ID", "Auto-Submitted", "List-Id"]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{first['thread_id']}").json()["data"]
    assert "headers" not in thread["latest_draft_or_message"]
    bad = get(nylas, path, params={"fields": "headers"})
    assert bad.status_code == 400
    assert error_of(bad)["type"] == "invalid_request_error"
    assert list_messages(nylas, fields="everything").status_code == 400


# ---- listing ------------------------------------------------------------------------------------


def test_list_by_thread_is_newest_first_limited_and_paginated(nylas):
    """``{request_id, data: [...], next_cursor}``; ``page_token`` takes ``next_cursor``, null on the
    last page; ``limit`` at most 200."""
    first = inbound(nylas, date=1000)
    thread_id = first["thread_id"]
    middle = inbound(nylas, thread_id=thread_id, date=2000)
    newest = inbound(nylas, reply_to_message_id=first["id"], date=3000)
    inbound(nylas, subject="Another thread", date=4000)

    everything = list_messages(nylas, thread_id=thread_id)
    assert everything.status_code == 200
    assert everything.json()["request_id"]
    assert ids(everything) == [newest["id"], middle["id"], first["id"]]
    assert everything.json()["next_cursor"] is None
    page1 = list_messages(nylas, thread_id=thread_id, limit=2).json()
    assert [m["id"] for m in page1["data"]] == [newest["id"], middle["id"]]
    assert isinstance(page1["next_cursor"], str)
    page2 = list_messages(nylas, thread_id=thread_id, limit=2, page_token=page1["next_cursor"]).json()
    assert [m["id"] for m in page2["data"]] == [first["id"]]
    assert page2["next_cursor"] is None
    too_many = list_messages(nylas, thread_id=thread_id, limit=201)
    assert too_many.status_code == 400
    assert error_of(too_many)["type"] == "invalid_request_error"
    assert list_messages(nylas, limit=200).status_code == 200
    assert list_messages(nylas, page_token="not-a-cursor").status_code == 400


def test_list_is_newest_first_by_arrival_never_by_the_senders_date(nylas):
    """The order is "reverse chronological", its key undocumented; by default the emulator orders by
    arrival so a product that trusts the sender-supplied ``date`` is caught."""
    first = inbound(nylas, date=5000)
    second = inbound(nylas, thread_id=first["thread_id"], date=1000)
    third = inbound(nylas, reply_to_message_id=first["id"], date=9000)
    other = inbound(nylas, subject="Another thread", date=10)

    assert ids(list_messages(nylas, thread_id=first["thread_id"])) == [third["id"], second["id"], first["id"]]
    assert ids(list_messages(nylas)) == [other["id"], third["id"], second["id"], first["id"]]
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{first['thread_id']}").json()["data"]
    assert thread["message_ids"] == [first["id"], second["id"], third["id"]]
    assert thread["latest_draft_or_message"]["id"] == third["id"]
    assert thread["earliest_message_date"] == 1000


def test_listing_order_date_mode_orders_by_the_senders_date(nylas):
    """``modes.listing_order = "date"``: the other reading of "reverse chronological" (ties by arrival);
    a thread's ``message_ids`` stay in arrival order."""
    nylas.modes.listing_order = "date"
    first = inbound(nylas, date=5000)
    second = inbound(nylas, thread_id=first["thread_id"], date=1000)
    third = inbound(nylas, thread_id=first["thread_id"], date=9000)
    tie = inbound(nylas, thread_id=first["thread_id"], date=5000)

    in_thread = list_messages(nylas, thread_id=first["thread_id"])
    assert ids(in_thread) == [third["id"], tie["id"], first["id"], second["id"]]
    page = list_messages(nylas, thread_id=first["thread_id"], limit=3).json()
    rest = list_messages(nylas, thread_id=first["thread_id"], limit=3, page_token=page["next_cursor"])
    assert [m["id"] for m in page["data"]] + ids(rest) == ids(in_thread)
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{first['thread_id']}").json()["data"]
    assert thread["message_ids"] == [first["id"], second["id"], third["id"], tie["id"]]
    with pytest.raises(ValueError, match="listing_order"):
        nylas.modes.listing_order = "subject"


def test_received_after_and_before_filter_on_arrival(nylas):
    """``received_after`` / ``received_before``: Unix seconds (here, when the message reached the mailbox)."""
    first = inbound(nylas)
    [(arrived, _)] = nylas.mailbox()

    assert ids(list_messages(nylas, received_after=int(arrived) - 1)) == [first["id"]]
    assert ids(list_messages(nylas, received_before=int(arrived) - 1)) == []


# ---- threads -------------------------------------------------------------------------------------


def test_thread_reports_received_and_sent_dates_and_the_latest_message(nylas, clock):
    """The thread object: ``message_ids``, ``participants``, ``latest_message_received_date`` (incoming),
    ``latest_message_sent_date`` (outgoing; absent when there is none, as in the docs' example),
    ``latest_draft_or_message``, ``folders`` (ids)."""
    first = inbound(nylas, date=1000)
    second = inbound(nylas, thread_id=first["thread_id"], date=2000)
    path = f"/v3/grants/{GRANT}/threads/{first['thread_id']}"

    before = get(nylas, path).json()["data"]
    assert (before["object"], before["id"], before["grant_id"]) == ("thread", first["thread_id"], GRANT)
    assert before["subject"] == "Order 42"
    assert before["message_ids"] == [first["id"], second["id"]]
    assert before["latest_message_received_date"] == 2000
    assert "latest_message_sent_date" not in before
    assert before["latest_draft_or_message"]["id"] == second["id"]
    assert (before["has_drafts"], before["draft_ids"]) == (False, [])

    clock.now = 3000
    sent = send(nylas, reply_to(second, body="Shipped today")).json()["data"]
    after = get(nylas, path).json()["data"]
    assert after["message_ids"] == [first["id"], second["id"], sent["id"]]
    assert after["latest_message_received_date"] == 2000
    assert after["latest_message_sent_date"] == 3000
    assert after["latest_draft_or_message"]["id"] == sent["id"]
    assert after["latest_draft_or_message"]["body"] == "Shipped today"
    assert {p["email"] for p in after["participants"]} == {CUSTOMER, AGENT_EMAIL}
    assert sorted(after["folders"]) == sorted(nylas.folder_id(GRANT, f) for f in ("inbox", "sent"))
    assert get(nylas, f"/v3/grants/{GRANT}/threads/thread-nope").status_code == 404


# ---- folders ------------------------------------------------------------------------------------


def test_folders_lists_the_six_agent_account_system_folders_with_opaque_ids(nylas):
    """Each Agent Account mailbox has ``inbox, sent, drafts, trash, junk, archive``; folder objects have
    ``id``, ``name``, ``system_folder``, ``attributes``; ids are not the names."""
    inbound(nylas)
    inbound(nylas, folder="junk")

    response = get(nylas, f"/v3/grants/{GRANT}/folders")

    assert response.status_code == 200
    folders = response.json()["data"]
    assert [f["name"] for f in folders] == SYSTEM_FOLDERS
    assert all(
        f["id"] != f["name"] and f["system_folder"] is True and f["object"] == "folder" for f in folders
    )
    assert {f["name"]: f["attributes"] for f in folders}["junk"] == ["\\Junk"]
    assert {f["name"]: f["total_count"] for f in folders}["junk"] == 1
    assert {f["id"] for f in folders} == {nylas.folder_id(GRANT, n) for n in SYSTEM_FOLDERS}
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL)
    others = get(nylas, f"/v3/grants/{OTHER_GRANT}/folders").json()["data"]
    assert not {f["id"] for f in others} & {f["id"] for f in folders}  # ids are per mailbox
    junk = nylas.folder_id(GRANT, "junk")
    assert get(nylas, f"/v3/grants/{GRANT}/folders/{junk}").json()["data"]["name"] == "junk"
    assert get(nylas, f"/v3/grants/{GRANT}/folders/junk").status_code == 404  # a name is not an id


def test_messages_carry_folder_ids_and_in_filters_on_one(nylas):
    """``folders`` holds folder IDs in REST answers; ``in`` takes a folder ID, a name is a 400."""
    ordinary = inbound(nylas)
    spam = inbound(nylas, folder="junk")
    binned = inbound(nylas, folder="trash")
    junk = nylas.folder_id(GRANT, "junk")

    assert get(nylas, f"/v3/grants/{GRANT}/messages/{spam['id']}").json()["data"]["folders"] == [junk]
    assert spam["folders"] == ["junk"]  # the test-facing copy shows names
    assert ids(list_messages(nylas, **{"in": junk})) == [spam["id"]]
    assert ids(list_messages(nylas, **{"in": nylas.folder_id(GRANT, "trash")})) == [binned["id"]]
    assert ids(list_messages(nylas, **{"in": nylas.folder_id(GRANT, "inbox")})) == [ordinary["id"]]
    assert list_messages(nylas, **{"in": "junk"}).status_code == 400
    with pytest.raises(ValueError, match="folder"):
        inbound(nylas, folder="sent")


def test_put_message_moves_it_between_folders_and_fires_message_updated(nylas):
    """``PUT .../messages/{id}`` with ``folders`` (ids) moves a message; ``unread``, ``starred`` and
    ``metadata`` (replaced whole) update it; a folder move fires ``message.updated``."""
    notified: list[tuple[str, dict]] = []
    nylas.on_notification = lambda trigger, data: notified.append((trigger, data))
    message = inbound(nylas)
    archive = nylas.folder_id(GRANT, "archive")
    path = f"/v3/grants/{GRANT}/messages/{message['id']}"

    moved = call(nylas, "PUT", path, json={"folders": [archive], "unread": False, "metadata": {"key1": "a"}})

    assert moved.status_code == 200
    data = moved.json()["data"]
    assert (data["folders"], data["unread"], data["metadata"]) == ([archive], False, {"key1": "a"})
    assert get(nylas, path).json()["data"]["folders"] == [archive]
    assert ids(list_messages(nylas, metadata_pair="key1:a")) == [message["id"]]
    [(trigger, payload)] = notified
    assert trigger == "message.updated"
    assert payload["application_id"] == "app-replyonce-local"
    assert payload["object"]["id"] == message["id"]
    assert payload["object"]["folders"] == ["archive"]  # notifications carry names unless asked for ids
    replaced = call(nylas, "PUT", path, json={"metadata": {"key2": "b"}})
    assert replaced.json()["data"]["metadata"] == {"key2": "b"}
    assert ids(list_messages(nylas, metadata_pair="key1:a")) == []
    for bad in ({"folders": ["archive"]}, {"folders": []}, {"subject": "x"}, {"unread": "no"}):
        assert call(nylas, "PUT", path, json=bad).status_code == 400
    assert (
        call(nylas, "PUT", f"/v3/grants/{GRANT}/messages/msg-nope", json={"unread": True}).status_code == 404
    )


# ---- metadata -----------------------------------------------------------------------------------


def test_send_stores_metadata_and_lists_by_metadata_pair(nylas):
    """Metadata set on send is on the message and in its notification; ``metadata_pair=key1:<v>``
    finds it, per grant."""
    created: list[dict] = []
    nylas.on_message_created = created.append
    message = inbound(nylas)
    metadata = {"key1": "intent-1", "note": "a: b"}
    sent = send(nylas, {**reply_to(message), "metadata": metadata}, key="k").json()["data"]
    other = send(nylas, {**reply_to(message), "metadata": {"key1": "intent-2"}}, key="k2").json()["data"]

    assert get(nylas, f"/v3/grants/{GRANT}/messages/{sent['id']}").json()["data"]["metadata"] == metadata
    assert created[1]["metadata"] == metadata
    assert message["metadata"] == {}
    found = list_messages(nylas, metadata_pair="key1:intent-1").json()
    assert [m["id"] for m in found["data"]] == [sent["id"]]
    assert found["next_cursor"] is None
    assert ids(list_messages(nylas, metadata_pair="key1:intent-2")) == [other["id"]]
    assert ids(list_messages(nylas, metadata_pair="key1:intent-3")) == []
    nylas.add_grant(OTHER_GRANT, OTHER_EMAIL)
    assert ids(list_messages(nylas, OTHER_GRANT, metadata_pair="key1:intent-1")) == []


@pytest.mark.parametrize(
    "params",
    [
        {"metadata_pair": "note:a"},  # not an indexed key
        {"metadata_pair": "key6:x"},
        {"metadata_pair": "key1"},  # no value
        {"metadata_pair": "key1:x", "thread_id": "thread-1"},  # Nylas: no provider + metadata filter
        {"metadata_pair": "key1:x", "in": "folder"},
    ],
    ids=["unindexed key", "key6", "no colon", "with thread_id", "with in"],
)
def test_metadata_pair_rejects_what_nylas_rejects(nylas, params):
    response = list_messages(nylas, **params)

    assert response.status_code == 400
    assert error_of(response)["type"] == "invalid_request_error"


def test_metadata_search_lag_finds_a_message_only_after_the_lag(nylas, clock):
    """``modes.metadata_search_lag_seconds``: Nylas documents no indexing delay, so a product must not
    read an empty search as "never sent"; the thread listing still returns ``metadata`` at once."""
    nylas.modes.metadata_search_lag_seconds = 30
    message = inbound(nylas)
    sent = send(nylas, {**reply_to(message), "metadata": {"key1": "intent-1"}}).json()["data"]

    assert ids(list_messages(nylas, metadata_pair="key1:intent-1")) == []
    listed = list_messages(nylas, thread_id=message["thread_id"]).json()["data"]
    assert listed[0]["metadata"] == {"key1": "intent-1"}
    clock.advance(29)
    assert ids(list_messages(nylas, metadata_pair="key1:intent-1")) == []
    nylas.advance_clock(1)
    assert ids(list_messages(nylas, metadata_pair="key1:intent-1")) == [sent["id"]]


@pytest.mark.parametrize(
    ("status", "error_type"), [(400, "invalid_request_error"), (503, "service_unavailable")]
)
def test_metadata_search_failure_answers_the_chosen_status(nylas, status, error_type):
    """``modes.metadata_search_failure``: the search fails; other listings do not."""
    nylas.modes.metadata_search_failure = status
    message = inbound(nylas)

    failed = list_messages(nylas, metadata_pair="key1:anything")

    assert failed.status_code == status
    assert error_of(failed)["type"] == error_type
    assert ids(list_messages(nylas, thread_id=message["thread_id"])) == [message["id"]]
