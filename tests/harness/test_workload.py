"""The chaos workload's conversations of issue 40, played against the emulator without a stack.

Each hostile case must put in the mailbox what it claims to (the headers, folders and addresses the
product will read) and mark ground truth precisely: who wrote each message, whether it must or may be
answered, and to whom. A case whose ground truth is wrong makes the checker judge the product wrongly.
"""

import random
from typing import Any

import pytest

from chaos.workload import (
    AGENT_GRANTS,
    SECOND_AGENT_ALIAS,
    SECOND_AGENT_GRANT_ID,
    TRUSTED_GROUP,
    TRUSTED_LIST_ID,
    TRUSTED_LISTS,
    WAREHOUSE,
    SendQueueSwitch,
    Workload,
    WorkloadSettings,
)
from devstack.events import AGENT_GRANT_ID, HUMAN_EMAIL, HUMAN_GRANT_ID
from devstack.invariants import MACHINE, OURS, PERSON, History, check
from devstack.nylas import NylasEmulator

CUSTOMER = "customer1@example.com"


class Sender:
    """Stands for the webhook sender: records what would be delivered."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []

    def deliver_many(self, payload: dict[str, Any], **_: Any) -> None:
        self.payloads.append(payload)

    def deliver(self, payload: dict[str, Any], **_: Any) -> None:
        self.payloads.append(payload)


@pytest.fixture
def workload():
    with NylasEmulator() as nylas:
        for grant, address in AGENT_GRANTS.items():
            nylas.add_grant(grant, address)
        nylas.add_grant(HUMAN_GRANT_ID, HUMAN_EMAIL)
        played = Workload(WorkloadSettings(notifications=10), nylas, Sender(), random.Random(3))
        nylas.on_message_created = played.on_message_created
        yield played
        played.shutdown()


def headers_of(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [(h["name"], h["value"]) for h in message["headers"]]


def stored(workload: Workload, grant: str = AGENT_GRANT_ID) -> list[dict[str, Any]]:
    return [m for _, m in workload.nylas.mailbox(grant)]


def test_the_run_trusts_the_list_by_its_address():
    assert f"{TRUSTED_LIST_ID}={TRUSTED_GROUP}" == TRUSTED_LISTS


def test_every_knob_of_issue_40_is_on_by_default_and_off_when_gentle():
    settings = WorkloadSettings()
    knobs = (
        "forged_own_address_probability",
        "forged_list_probability",
        "genuine_group_post_probability",
        "relay_verification_probability",
        "colleague_forward_probability",
        "slow_customer_threads",
        "person_draft_probability",
        "stranger_joins_probability",
        "preempted_message_id_probability",
        "alias_sent_from",
        "drafts_without_date",
    )
    assert all(getattr(settings, knob) for knob in knobs)
    gentle = settings.gentle()
    assert not any(getattr(gentle, knob) for knob in knobs)


def test_the_second_agent_has_an_alias_its_sent_copies_show(workload):
    assert workload.aliases == {SECOND_AGENT_GRANT_ID: [SECOND_AGENT_ALIAS]}
    assert workload.nylas.modes.sent_from_by_grant == {SECOND_AGENT_GRANT_ID: SECOND_AGENT_ALIAS}
    assert workload.nylas.modes.draft_date is False


@pytest.mark.parametrize("folder", ["inbox", "junk"])
def test_mail_forged_from_the_agent_is_nobodys_answer(workload, folder):
    workload.features["forged_own_address"] = 0 if folder == "inbox" else 1
    workload._forged_own_address(AGENT_GRANT_ID, CUSTOMER)
    question, forged = stored(workload)
    assert forged["from"][0]["email"] == AGENT_GRANTS[AGENT_GRANT_ID]
    assert forged["folders"] == [folder]
    assert forged["thread_id"] == question["thread_id"]
    assert ("In-Reply-To", dict(headers_of(question))["Message-ID"]) in headers_of(forged)
    assert workload.truth[question["id"]].must_answer
    truth = workload.truth[forged["id"]]
    assert (truth.may_answer, truth.author, truth.filed) == (False, MACHINE, folder)


def test_a_forged_list_id_on_direct_mail_is_the_senders_alone(workload):
    workload._forged_list(AGENT_GRANT_ID, CUSTOMER)
    [message] = stored(workload)
    names = dict(headers_of(message))
    assert names["List-Id"] == f"<{TRUSTED_LIST_ID}>"
    assert "stranger" in names["X-Original-From"]
    assert workload.truth[message["id"]].recipients == {CUSTOMER}


def test_a_genuine_group_post_keeps_its_from(workload):
    workload._genuine_group_post(AGENT_GRANT_ID, CUSTOMER)
    [message] = stored(workload)
    sender = message["from"][0]["email"]
    assert sender.endswith("@smallco.example")
    assert message["to"] == [{"name": "", "email": TRUSTED_GROUP}]
    assert "dmarc=none" in dict(headers_of(message))["Authentication-Results"]
    truth = workload.truth[message["id"]]
    assert truth.must_answer
    assert truth.recipients == {sender}


def test_a_verified_relay_is_the_persons(workload):
    workload._relay_verified(AGENT_GRANT_ID, CUSTOMER)
    [message] = stored(workload)
    assert message["from"][0]["email"] == TRUSTED_GROUP
    [topmost, *_] = [v for n, v in headers_of(message) if n == "Authentication-Results"]
    assert "dmarc=pass" in topmost
    truth = workload.truth[message["id"]]
    assert truth.must_answer
    assert truth.recipients == {CUSTOMER}


@pytest.mark.parametrize(
    ("variant", "results"),
    [(0, ["fail"]), (1, []), (2, ["fail", "pass"])],
    ids=["dmarc_fail", "no_results", "forged_pass_below"],
)
def test_an_unverified_relay_is_handed_off_and_never_mailed(workload, variant, results):
    workload.features["relay_unverified"] = variant + 1
    workload._relay_unverified(AGENT_GRANT_ID, CUSTOMER)
    [message] = stored(workload)
    stamped = [v for n, v in headers_of(message) if n == "Authentication-Results"]
    assert [("pass" if "dmarc=pass" in v else "fail") for v in stamped] == results
    truth = workload.truth[message["id"]]
    assert (truth.may_answer, truth.author, truth.recipients) == (False, PERSON, frozenset())


@pytest.mark.parametrize(("count", "to"), [(0, "sam@replyonce.example"), (1, WAREHOUSE)])
def test_a_colleagues_forward_or_note_answers_nobody(workload, count, to):
    workload.features["colleague_forward"] = count
    workload._colleague_forward(AGENT_GRANT_ID, CUSTOMER)
    question, written = stored(workload)[:2]
    assert written["folders"] == ["sent"]
    assert written["to"] == [{"name": "", "email": to}]
    assert workload.truth[written["id"]].author == OURS
    truth = workload.truth[question["id"]]
    assert (truth.must_answer, truth.may_answer, truth.author) == (False, True, PERSON)


def test_a_persons_draft_holds_the_question(workload):
    workload._person_draft(AGENT_GRANT_ID, CUSTOMER)
    [question] = stored(workload)
    thread = workload.nylas._mailbox.threads[question["thread_id"]]
    assert len(thread.draft_ids) == 1
    assert workload.truth[question["id"]].label == "held_by_a_draft"


def test_a_stranger_joining_a_thread_is_answered_alone(workload):
    workload._stranger_joins(AGENT_GRANT_ID, CUSTOMER)
    question, joined = stored(workload)
    assert joined["thread_id"] == question["thread_id"]
    truth = workload.truth[joined["id"]]
    assert truth.alone
    assert truth.recipients == {joined["from"][0]["email"]}
    assert workload.truth[question["id"]].recipients == {CUSTOMER}


def test_a_preempted_message_id_names_the_customers_email_in_the_other_mailbox(workload):
    workload._preempted_message_id(AGENT_GRANT_ID, CUSTOMER)
    [attack] = stored(workload, SECOND_AGENT_GRANT_ID)
    [question] = stored(workload)
    assert dict(headers_of(attack))["Message-ID"] == dict(headers_of(question))["Message-ID"]
    assert attack["subject"] == question["subject"]
    assert workload.truth[question["id"]].must_answer
    assert workload.truth[attack["id"]].recipients == {attack["from"][0]["email"]}


def test_a_slow_customer_asks_each_day_on_one_thread(workload, monkeypatch):
    monkeypatch.setattr("chaos.workload.SLOW_CUSTOMER_WAIT_SECONDS", 0.0)
    before = workload.nylas.now()
    workload._slow_customer(AGENT_GRANT_ID, "slow@example.com")
    questions = stored(workload)
    assert len(questions) == 5
    assert len({m["thread_id"] for m in questions}) == 1
    assert workload.nylas.now() - before >= 4 * 86_400
    assert all(workload.truth[m["id"]].label == "slow_customer" for m in questions)


def test_the_checker_holds_a_silent_product_to_every_person_of_issue_40(workload):
    # Nothing answers and nothing is handed off: every person's message is invariant 7's.
    for kind in ("forged_own_address", "colleague_forward", "person_draft", "relay_unverified"):
        getattr(workload, f"_{kind}")(AGENT_GRANT_ID, CUSTOMER.replace("1", kind[:4]))
    truth = dict(workload.truth)
    history = History(
        agent_grants=workload.agent_grants(),
        mailbox=workload.nylas.mailbox(),
        truth=truth,
        sends=[],
        deliveries=[],
        logs=[],
        reply_budget=3,
        notified_message_ids=set(truth),
        aliases=workload.aliases,
    )
    silent = check(history)[7]
    people = {m for m, t in truth.items() if t.author == PERSON and t.filed == "inbox"}
    assert len(silent) == len(people) >= 4  # a customer may have answered the forward too
    assert all(any(m in line for line in silent) for m in people)


def test_the_send_queue_stays_on_while_anyone_still_holds_it():
    # The failover drill holds the queue for its slow send while a workload window opens and closes:
    # the window's end must not switch the queue off under the held send.
    with NylasEmulator() as nylas:
        switch = SendQueueSwitch(nylas.modes)
        switch.hold("held send")
        switch.hold("window")
        switch.let_go("window")
        assert nylas.modes.send_queue is True
        switch.let_go("held send")
        assert nylas.modes.send_queue is False
