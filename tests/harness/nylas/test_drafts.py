"""Contract: drafts -- create, list, read, update, delete, send.

Sources: https://developer.nylas.com/docs/reference/api/drafts/ (the routes; a draft takes a send's
body), https://developer.nylas.com/docs/reference/api/drafts/send-draft-id/ (``POST
.../drafts/{id}`` sends it), https://developer.nylas.com/docs/v3/email/send-email/ (a draft lives in
the Drafts folder), https://developer.nylas.com/docs/dev-guide/metadata/ (drafts carry metadata,
searched with ``metadata_pair``),
https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/ (a draft send
queues; a failed one stays in Drafts).
"""

import pytest

from devstack.nylas import Fault
from tests.harness.nylas.client import (
    AGENT_EMAIL,
    CUSTOMER,
    GRANT,
    call,
    error_of,
    get,
    inbound,
    list_messages,
    reply_to,
)

DRAFTS = f"/v3/grants/{GRANT}/drafts"


def create(nylas, payload: dict):
    return call(nylas, "POST", DRAFTS, json=payload)


def draft_reply(nylas, **extra) -> tuple[dict, dict]:
    message = inbound(nylas)
    payload = {**reply_to(message), "metadata": {"key1": "intent-1"}, **extra}
    response = create(nylas, payload)
    assert response.status_code == 200
    return message, response.json()["data"]


def test_create_draft_stores_it_in_drafts_and_in_its_thread(nylas):
    message, draft = draft_reply(nylas)

    assert draft["object"] == "draft"
    assert draft["grant_id"] == GRANT
    assert (draft["thread_id"], draft["reply_to_message_id"]) == (message["thread_id"], message["id"])
    assert draft["from"] == [{"name": "Support Agent", "email": AGENT_EMAIL}]
    assert draft["folders"] == [nylas.folder_id(GRANT, "drafts")]
    assert draft["metadata"] == {"key1": "intent-1"}
    assert "headers" not in draft
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert (thread["has_drafts"], thread["draft_ids"], thread["message_ids"]) == (
        True,
        [draft["id"]],
        [message["id"]],
    )
    assert thread["latest_draft_or_message"]["id"] == draft["id"]
    # A draft is not a message: the messages listing never shows it, nor is anything sent.
    assert [m["id"] for m in list_messages(nylas, thread_id=message["thread_id"]).json()["data"]] == [
        message["id"]
    ]
    assert nylas.sends == []
    [record] = nylas.drafts
    assert (record.grant_id, record.draft["id"], record.payload["metadata"]) == (
        GRANT,
        draft["id"],
        {"key1": "intent-1"},
    )


def test_a_draft_needs_no_recipient_but_validates_like_a_send(nylas):
    assert create(nylas, {"subject": "Notes", "body": "later"}).status_code == 200
    assert create(nylas, {"to": [{"name": "nobody"}]}).status_code == 400
    assert create(nylas, {"metadata": {"key1": 7}}).status_code == 400
    assert create(nylas, {"reply_to_message_id": "msg-nope"}).status_code == 404


def test_list_drafts_by_thread_and_metadata_pair(nylas):
    message, draft = draft_reply(nylas)
    other = create(nylas, {"subject": "Elsewhere", "metadata": {"key1": "intent-2"}}).json()["data"]

    def listed(**params) -> list[str]:
        response = get(nylas, DRAFTS, params=params)
        assert response.status_code == 200
        return [d["id"] for d in response.json()["data"]]

    assert listed() == [other["id"], draft["id"]]
    assert listed(thread_id=message["thread_id"]) == [draft["id"]]
    assert listed(metadata_pair="key1:intent-1") == [draft["id"]]
    assert listed(metadata_pair="key1:intent-3") == []
    assert listed(limit=1) == [other["id"]]
    assert get(nylas, DRAFTS, params={"metadata_pair": "key1:x", "thread_id": "t"}).status_code == 400


def test_draft_search_lags_and_fails_like_the_message_search(nylas, clock):
    nylas.modes.metadata_search_lag_seconds = 10
    _, draft = draft_reply(nylas)

    assert get(nylas, DRAFTS, params={"metadata_pair": "key1:intent-1"}).json()["data"] == []
    clock.advance(10)
    assert [
        d["id"] for d in get(nylas, DRAFTS, params={"metadata_pair": "key1:intent-1"}).json()["data"]
    ] == [draft["id"]]
    nylas.modes.metadata_search_failure = 503
    assert get(nylas, DRAFTS, params={"metadata_pair": "key1:intent-1"}).status_code == 503


def test_get_update_and_delete_a_draft(nylas):
    _, draft = draft_reply(nylas, custom_headers=[{"name": "X-Agent", "value": "1"}])
    path = f"{DRAFTS}/{draft['id']}"

    assert get(nylas, path).json()["data"] == draft
    with_headers = get(nylas, path, params={"fields": "include_headers"}).json()["data"]
    assert [h["name"] for h in with_headers["headers"]][-1] == "X-Agent"
    updated = call(nylas, "PUT", path, json={"body": "<p>Better</p>", "metadata": {"key2": "v"}})
    assert updated.status_code == 200
    assert (updated.json()["data"]["snippet"], updated.json()["data"]["metadata"]) == (
        "Better",
        {"key2": "v"},
    )
    assert call(nylas, "PUT", path, json={"thread_id": "elsewhere"}).status_code == 400
    deleted = call(nylas, "DELETE", path)
    assert (deleted.status_code, deleted.json()["data"]) == (200, {"status": "success"})
    assert get(nylas, path).status_code == 404
    assert call(nylas, "DELETE", path).status_code == 404
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{draft['thread_id']}").json()["data"]
    assert thread["draft_ids"] == []


def test_sending_a_draft_makes_a_sent_message_that_keeps_its_metadata(nylas):
    created: list[dict] = []
    nylas.on_message_created = created.append
    message, draft = draft_reply(nylas)

    response = call(nylas, "POST", f"{DRAFTS}/{draft['id']}")

    assert response.status_code == 200
    sent = response.json()["data"]
    assert sent["object"] == "message"
    assert sent["id"] != draft["id"]
    assert (sent["thread_id"], sent["metadata"]) == (message["thread_id"], {"key1": "intent-1"})
    assert sent["folders"] == [nylas.folder_id(GRANT, "sent")]
    assert created[-1]["id"] == sent["id"]
    assert created[-1]["from"][0]["email"] == AGENT_EMAIL
    [record] = nylas.sends
    assert (record.draft_id, record.idempotency_key) == (draft["id"], None)
    assert get(nylas, f"{DRAFTS}/{draft['id']}").status_code == 404
    thread = get(nylas, f"/v3/grants/{GRANT}/threads/{message['thread_id']}").json()["data"]
    assert (thread["message_ids"], thread["draft_ids"]) == ([message["id"], sent["id"]], [])
    found = list_messages(nylas, metadata_pair="key1:intent-1").json()["data"]
    assert [m["id"] for m in found] == [sent["id"]]
    assert nylas.send_attempts == []  # not the send endpoint


def test_draft_send_new_id_off_keeps_the_drafts_id(nylas):
    nylas.modes.draft_send_new_id = False
    _, draft = draft_reply(nylas)

    assert call(nylas, "POST", f"{DRAFTS}/{draft['id']}").json()["data"]["id"] == draft["id"]


def test_a_draft_without_recipient_or_under_a_limit_is_not_sent(nylas):
    empty = create(nylas, {"subject": "no one"}).json()["data"]
    assert call(nylas, "POST", f"{DRAFTS}/{empty['id']}").status_code == 400
    _, draft = draft_reply(nylas)
    nylas.modes.account_limit = "daily_quota"
    assert call(nylas, "POST", f"{DRAFTS}/{draft['id']}").status_code == 429
    assert call(nylas, "POST", f"{DRAFTS}/draft-nope").status_code == 404
    assert nylas.sends == []


@pytest.mark.parametrize("fail", [False, True])
def test_a_queued_draft_send_goes_out_or_stays_in_drafts(nylas, fail):
    nylas.modes.send_queue = True
    _, draft = draft_reply(nylas)

    queued = call(nylas, "POST", f"{DRAFTS}/{draft['id']}")
    assert queued.status_code == 202
    assert "headers" not in queued.json()["data"]
    nylas.release_queued(fail=fail)

    assert len(nylas.sends) == (0 if fail else 1)
    assert (get(nylas, f"{DRAFTS}/{draft['id']}").status_code == 200) is fail


def test_a_provider_error_on_a_draft_send_may_have_sent(nylas):
    _, draft = draft_reply(nylas)
    nylas.inject("POST", r"/drafts/", Fault.provider_error(sent=True))

    answer = call(nylas, "POST", f"{DRAFTS}/{draft['id']}")

    assert (answer.status_code, error_of(answer)["type"]) == (504, "provider_error")
    assert len(nylas.sends) == 1


def test_custom_header_policy_applies_to_drafts(nylas):
    nylas.modes.custom_headers = "refuse"

    refused = create(
        nylas, {"to": [{"email": CUSTOMER}], "custom_headers": [{"name": "Auto-Submitted", "value": "x"}]}
    )

    assert refused.status_code == 400
    assert "custom_headers" in error_of(refused)["message"]
