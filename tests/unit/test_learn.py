"""What each result teaches (replyonce.core.learn): a situation, a step and what its port call answered in;
the situation after, out. Then what the core does with it (replyonce.core.next_step).

Each row names the fields the fold must set and their values: a fold that forgets, or sets the wrong
value, fails its row. The shell only carries steps out; every decision about what a result means — a
lease refused, an intent stored or the lease lost, an agent's failure, the grant's junk folders — is
one of these rows.
"""

from dataclasses import replace

import pytest

from replyonce import core
from replyonce.agent import AgentRejected, Handoff, NoReply, Reply
from replyonce.answers import Answer
from replyonce.core import (
    AgentFailed,
    AgentOutlived,
    AgentRaised,
    AgentReturned,
    FoldersListed,
    FoldersRefused,
    GrantsDescribed,
    NylasUnavailable,
    Searched,
    Situation,
    StoreContended,
    ThreadBusy,
    learn,
    next_step,
)
from replyonce.jobs import MessageArrived
from replyonce.policy import Policy
from replyonce.ports import ActiveRegion, Folder, Grant, Listing, SearchResult, ThreadPage
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.screening import Agents
from replyonce.state import (
    Intent,
    Lease,
    LedgerEntry,
    LedgerRead,
    Settlement,
    ShadowOutcome,
    ShadowRecord,
    Status,
    ThreadState,
)

GRANT, THREAD, AGENT = "g1", "t1", "support@acme.example"
KEY = f"thread#{GRANT}#{THREAD}"
POLICY = Policy(agent_grant_ids=(GRANT,), handoff_folder="Needs a person", lease_wait_seconds=10.0)
AGENTS = Agents((GRANT,), {GRANT: AGENT}, {GRANT: "Acme"})
NOW = 1_800_000_000
INTENT = Intent(
    id="i1",
    thread_id=THREAD,
    target_id="m1",
    covered=("m1",),
    request='{"to":[{"email":"alice@example.com"}]}',
    created_at=NOW - 100,
)
PAGE = ThreadPage(({"id": "m1", "thread_id": THREAD},), "cursor-2", NOW)
NEXT_PAGE = ThreadPage(({"id": "m0", "thread_id": THREAD},), None, NOW + 1)
ANSWER = Answer(200, message_id="r1", nylas_time=NOW)
SENT = Settlement(Status.REPLIED, ("m1",), NOW, INTENT, counts_as_reply=True, reply_message_id="r1")
SHADOW_REPLY = ShadowRecord(GRANT, "i1", THREAD, "m1", ("m1",), ShadowOutcome.REPLY, text="Hello")
SHADOWED = Settlement(Status.SHADOWED, ("m1",), NOW, reason="reply", shadow=SHADOW_REPLY)
JUNK = Folder("f-junk", "Junk")
SPAM_BY_ATTRIBUTE = Folder("f-7", "Unwanted", ("\\Spam",))
INBOX = Folder("f-inbox", "Inbox", ("\\Inbox",))
HANDOFF = Folder("f-person", "Needs a person")
SKIPPED = ShadowRecord(GRANT, "message:m1", THREAD, "m1", ("m1",), ShadowOutcome.SKIPPED)
FETCHED = core.Notice(metric="MessageFetched")
ESCALATIONS = Folder("Needs a person", "Escalations")  # HANDOFF_FOLDER may name a folder by its id


def situation(**known):
    base = dict(job=MessageArrived(GRANT, "m1", THREAD, {}), policy=POLICY, now=NOW, time_left=900.0)
    base.update(known)
    return Situation(**base)


def leased(state=None, **known):
    lease = Lease(KEY, "token", (NOW + 200) * 1000, state or ThreadState())
    held = {"agents": AGENTS, "closed_folders": frozenset(), "phase": core.Leased(lease, lease.state)}
    return situation(**{**held, "ledger": None, **known})


def fold(s, step, result):
    return learn(s, step, result)


# ---- reads: what each one found is what is known -------------------------------------------------------

STORED = ThreadState(outbox={"i1": INTENT})
REGION = ActiveRegion("eu-west-1", 2, 0, NOW)


@pytest.mark.parametrize(
    ("s", "step", "result", "expected"),
    [
        (
            situation(),
            core.LookUpAgents(),
            GrantsDescribed((Grant(GRANT, AGENT, "Acme", "nylas"),)),
            {"agents": Agents((GRANT,), {GRANT: AGENT}, {GRANT: "Acme"}, {GRANT: "nylas"})},
        ),
        # A grant Nylas refused is missing, and has no address: the core defers its mail until it has one.
        (situation(), core.LookUpAgents(), GrantsDescribed(()), {"agents": Agents((GRANT,), {}, {}, {})}),
        (situation(), core.ReadActiveRegion(), REGION, {"active_region": REGION}),
        (situation(), core.ReadLedger(GRANT, "m1"), LedgerRead(None), {"ledger": None, "table_began_ms": 0}),
        (
            situation(),
            core.ReadLedger(GRANT, "m1"),
            LedgerRead(LedgerEntry("m1", Status.REPLIED), NOW * 1000),
            {"ledger": LedgerEntry("m1", Status.REPLIED), "table_began_ms": NOW * 1000},
        ),
        # Gone at Nylas is known as GONE (not "unread", which would fetch it again), and earns no count.
        (situation(), core.FetchMessage(GRANT, "m1"), None, {"fetched": core.GONE, "notices": ()}),
        (
            situation(),
            core.FetchMessage(GRANT, "m1"),
            {"id": "m1", "thread_id": THREAD},
            {
                "fetched": {"id": "m1", "thread_id": THREAD},
                "notices": (core.Notice(metric="MessageFetched"),),
            },
        ),
        # A page without a token starts a listing afresh (whatever an earlier read held); with one, it is
        # the next page of the listing being read.
        (
            leased(listing=Listing((NEXT_PAGE,))),
            core.ReadThread(GRANT, THREAD, 10, None),
            PAGE,
            {"listing": Listing((PAGE,))},
        ),
        (
            leased(listing=Listing((PAGE,))),
            core.ReadThread(GRANT, THREAD, 10, "cursor-2"),
            NEXT_PAGE,
            {"listing": Listing((PAGE, NEXT_PAGE))},
        ),
        (leased(), core.ReadDrafts(GRANT, THREAD), [{"id": "d1"}], {"drafts": ({"id": "d1"},)}),
        (leased(), core.LookBeforeSend(GRANT, THREAD, 5), PAGE, {"looked_before_send": PAGE}),
        (
            leased(),
            core.ClaimEmails(GRANT, ("<a@x>", "<b@x>")),
            {"<a@x>": GRANT, "<b@x>": "g2"},
            {"claims": {"<a@x>": GRANT, "<b@x>": "g2"}},
        ),
        # Every recipient must have room: one budget spent is no reservation.
        (leased(), core.Reserve((), "i1"), [True, True], {"reserved": True}),
        (leased(), core.Reserve((), "i1"), [True, False], {"reserved": False}),
        (
            leased(),
            core.RecordShadow(
                ShadowRecord(GRANT, "message:m1", THREAD, "m1", ("m1",), ShadowOutcome.SKIPPED)
            ),
            False,
            {"shadow_recorded": False},
        ),
    ],
    ids=lambda value: type(value).__name__,
)
def test_a_read_or_a_write_is_known_as_it_answered(s, step, result, expected):
    after = fold(s, step, result)
    assert {name: getattr(after, name) for name in expected} == expected


# ---- searches: a time for absence, never for a failure --------------------------------------------------


@pytest.mark.parametrize(
    ("searched", "kept"),
    [
        # Nylas' time of the answer, when it came with one.
        (Searched(SearchResult((), nylas_time=NOW - 5), NOW), SearchResult((), nylas_time=NOW - 5)),
        # Else the shell's reckoning of Nylas' time when it answered: an absence counts as of then.
        (Searched(SearchResult(()), NOW + 3), SearchResult((), nylas_time=NOW + 3)),
        # A failed search is unknown: no time makes it "absent as of then".
        (Searched(SearchResult(failed="503"), NOW + 3), SearchResult(failed="503")),
    ],
)
def test_a_search_is_known_with_the_time_it_can_vouch_for(searched, kept):
    after = fold(leased(), core.Search(GRANT, "messages", "i1"), searched)
    assert after.searches == {"i1": kept}


# ---- the grant's folders: the junk-folder rule ----------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "closed", "handoff"),
    [
        (FoldersListed((JUNK, INBOX, HANDOFF)), frozenset({"f-junk"}), "f-person"),
        # Junk by its attribute, whatever its name; HANDOFF_FOLDER matched by id as well as by name.
        (
            FoldersListed((SPAM_BY_ATTRIBUTE, Folder("Needs a person", "Escalations"))),
            {"f-7"},
            "Needs a person",
        ),
        # No folder of that name: the hand-off stays where it is ("").
        (FoldersListed((INBOX,)), frozenset(), ""),
        # Refused: junk and trash by name only for this record, the hand-off folder unknown (None).
        (FoldersRefused(403), frozenset(), None),
    ],
)
def test_the_grants_folders_teach_its_junk_folders_and_its_hand_off_folder(result, closed, handoff):
    after = fold(situation(agents=AGENTS), core.LookUpFolders(GRANT), result)
    assert (after.closed_folders, after.handoff_folder_id, after.folder_listings) == (closed, handoff, 1)


# ---- the agent: an outcome, a refusal for good, or a retry ---------------------------------------------


@pytest.mark.parametrize(
    ("result", "outcome", "deferred"),
    [
        (AgentReturned(Reply(text="Hello")), Reply(text="Hello"), None),
        (AgentReturned(NoReply("spam")), NoReply("spam"), None),
        (AgentReturned(Handoff("refund")), Handoff("refund"), None),
        # A refusal for good is the agent's outcome (settled failed), its text redacted.
        (AgentRaised(AgentRejected("not for alice@example.com")), AgentFailed("not for <email>"), None),
        # Anything else is a retry: the record is deferred, nothing settled.
        (AgentRaised(KeyError("x")), None, "KeyError: 'x'"),
        (AgentRaised(TimeoutError("bob@example.com")), None, "TimeoutError: <email>"),
        (AgentOutlived(), None, "agent outlived AGENT_TIMEOUT_SECONDS"),
        (AgentReturned("Hello"), None, "the agent returned str, not Reply, NoReply or Handoff"),
        (AgentReturned(None), None, "the agent returned NoneType, not Reply, NoReply or Handoff"),
    ],
)
def test_the_agents_result_is_an_outcome_or_a_retry(result, outcome, deferred):
    # The burst is planned from the thread read, then the agent is asked about it.
    s = replace(fold(leased(), core.ReadThread(GRANT, THREAD, 10, None), PAGE), reserved=True)
    after = fold(s, core.AskAgent(None, None), result)
    assert core.answer_of(after.phase) == outcome
    if deferred is None:
        assert after.failure is None
        return
    # A retry: the lease is freed first, then the record is deferred (agent_failed, with what failed).
    step = next_step(after)
    assert isinstance(step, core.ReleaseLease)
    assert (step.then.reason, step.then.seconds, step.then.detail) == (
        DeferReason.AGENT_FAILED,
        None,
        {"detail": deferred},
    )


def test_an_agent_failure_is_logged_at_error_with_its_redacted_traceback():
    failure = ValueError("alice@example.com")
    after = fold(leased(), core.AskAgent(None, None), AgentRaised(failure))
    [notice] = after.notices
    assert (notice.level, notice.message, notice.metric) == (
        "error",
        "the agent failed; the record will be retried",
        "",
    )
    assert notice.fields["detail"] == "ValueError: <email>"
    assert "alice@example.com" not in notice.fields["traceback"]


# ---- the lease: taken, or waited for within the bound, then deferred ------------------------------------


def test_a_lease_taken_is_the_thread_state_and_a_fresh_fence_read():
    lease = Lease(KEY, "token", (NOW + 200) * 1000, ThreadState(outbox={"i1": INTENT}))
    s = situation(agents=AGENTS, active_region=REGION, lease_refused=ThreadBusy(3), lease_wait_ends=5.0)
    after = fold(s, core.TakeLease(KEY, 200.0), lease)
    assert (after.phase, after.active_region, after.lease_refused) == (
        core.Leased(lease, lease.state),
        core.UNREAD,
        None,
    )


@pytest.mark.parametrize(
    ("time_left", "clock_after", "expected"),
    [
        # lease_wait_seconds (10 s) from the first refusal: wait and look again until it is over.
        (900.0, 100.0, "WaitForLease"),
        (900.0, 109.4, "WaitForLease"),
        (900.0, 109.6, "Defer"),
        # Late in the invocation the wait is what is left beyond a lease: here none at all.
        (POLICY.lease_seconds + 0.2, 100.0, "Defer"),
        (POLICY.lease_seconds + 4.0, 103.0, "WaitForLease"),
        (POLICY.lease_seconds + 4.0, 103.6, "Defer"),
    ],
)
def test_a_busy_thread_is_waited_for_within_the_bound_then_deferred_until_its_holder_can_be_done(
    time_left, clock_after, expected
):
    s = situation(agents=AGENTS, ledger=None, closed_folders=frozenset(), clock=100.0, time_left=time_left)
    assert isinstance(next_step(s), core.TakeLease)
    refused = fold(s, core.TakeLease(KEY, POLICY.lease_seconds), ThreadBusy(40))
    assert refused.lease_refused == ThreadBusy(40)
    step = next_step(replace(refused, clock=clock_after))
    assert type(step).__name__ == expected
    if expected == "Defer":
        assert (step.reason, step.seconds, step.detail) == (DeferReason.THREAD_BUSY, 41, {"thread_key": KEY})
    else:
        assert step == core.WaitForLease(KEY, POLICY.lease_seconds, core.LEASE_POLL_SECONDS)


def test_a_wait_for_the_lease_carries_the_tables_beginning_read_with_the_ledger():
    # Issue 46: the lease taken after the wait dates a new thread item by it, as the first take would.
    s = situation(agents=AGENTS, ledger=None, closed_folders=frozenset(), clock=100.0, table_began_ms=NOW)
    take = next_step(s)
    assert take == core.TakeLease(KEY, POLICY.lease_seconds, NOW)
    refused = fold(s, take, ThreadBusy(40))
    assert next_step(refused) == core.WaitForLease(KEY, POLICY.lease_seconds, core.LEASE_POLL_SECONDS, NOW)


def test_the_wait_is_bounded_from_the_first_refusal_not_renewed_by_each():
    s = situation(agents=AGENTS, ledger=None, closed_folders=frozenset(), clock=100.0)
    first = fold(s, core.TakeLease(KEY, POLICY.lease_seconds), ThreadBusy(40))
    again = fold(
        replace(first, clock=105.0), core.WaitForLease(KEY, POLICY.lease_seconds, 0.5), ThreadBusy(35)
    )
    assert (again.lease_wait_ends, again.lease_refused) == (110.0, ThreadBusy(35))


# ---- an intent stored: what the next attempt is, or the lease lost --------------------------------------


def test_an_intent_stored_with_an_attempt_is_attempted_next_and_forgets_an_earlier_answer():
    s = leased(answers={"i1": ANSWER, "i2": ANSWER})
    counted = INTENT.attempting(NOW)
    after = fold(s, core.Store(counted, metric="KeyGenerationAdvanced"), True)
    assert (after.attempting, after.answers, after.phase.state.outbox) == (
        frozenset({"i1"}),
        {"i2": ANSWER},
        {"i1": counted},
    )
    assert after.notices == (core.Notice(metric="KeyGenerationAdvanced"),)
    assert next_step(after) == core.Attempt(GRANT, counted)


def test_an_intent_stored_without_an_attempt_is_no_longer_about_to_be_attempted():
    s = leased(attempting=frozenset({"i1"}))
    after = fold(s, core.Store(INTENT.stuck(), attempt=False), True)
    assert (after.attempting, after.notices) == (frozenset(), ())


def test_an_intent_the_lease_no_longer_covers_is_not_stored_and_the_record_comes_back_at_once():
    s = leased()
    after = fold(s, core.Store(INTENT.attempting(NOW), metric="KeyGenerationAdvanced"), False)
    # Nothing counted, nothing known stored.
    assert (after.attempting, after.phase.state.outbox, after.notices) == (frozenset(), {}, ())
    step = next_step(after)
    assert step == core.ReleaseLease(KEY, core.Defer(DeferReason.LEASE_LOST, 0, {"thread_key": KEY}))


def test_an_attempts_answer_is_known_and_the_next_send_needs_its_own_fence_read():
    s = leased(state=STORED, attempting=frozenset({"i1"}), active_region=REGION)
    after = fold(s, core.Attempt(GRANT, INTENT), ANSWER)
    assert (after.attempting, after.answers, after.active_region) == (
        frozenset(),
        {"i1": ANSWER},
        core.UNREAD,
    )


# ---- a settlement: written, written by key without the lease, or not at all -----------------------------


@pytest.mark.parametrize(
    ("settlement", "held", "settled", "notices"),
    [
        (SENT, True, True, ()),
        # A reply's settlement is written by key without the lease: what happened at Nylas happened.
        (
            SENT,
            False,
            True,
            (
                core.Notice(
                    metric="LeaseLost",
                    message="thread lease was lost before the reply was recorded; recorded without it",
                    fields={"thread_key": KEY},
                ),
            ),
        ),
        # A shadow settlement is not: the record comes back and finds the thread as the new holder left it.
        (SHADOWED, False, False, ()),
    ],
)
def test_a_settlement_ends_the_record_unless_nothing_was_written(settlement, held, settled, notices):
    settle = core.Settle(settlement)
    after = fold(leased(state=STORED), settle, held)
    # Written or not, the lease is no longer the record's: settled, or released with the lease lost.
    freed = (
        core.Settled(settle)
        if settled
        else core.Released(core.Defer(DeferReason.LEASE_LOST, 0, {"thread_key": KEY}))
    )
    assert (after.phase, core.lease_of(after.phase), after.notices) == (freed, None, notices)
    step = next_step(after)
    if settled:
        assert isinstance(step, core.Finish)
        assert step.settle == settle
    else:
        # The settlement freed the lease already: no release, the deferral at once.
        assert step == core.Defer(DeferReason.LEASE_LOST, 0, {"thread_key": KEY})


@pytest.mark.parametrize(
    ("handoff_folder_id", "listings", "expected"),
    [
        ("f-person", 1, core.FileHandedOff(GRANT, ("m1",), "f-person")),
        ("", 1, None),  # HANDOFF_FOLDER names no folder: nothing to file
        (None, 1, core.LookUpFolders(GRANT)),  # the listing was refused: asked once more
        (None, 2, None),  # refused again: the messages stay where they are
    ],
)
def test_a_hand_off_is_filed_once_settled_then_the_record_finishes(handoff_folder_id, listings, expected):
    settlement = Settlement(Status.HANDED_OFF, ("m1",), NOW, reason="refund")
    handed_off = core.Settle(
        settlement, skip=SkipReason.HANDED_OFF, move_to="Needs a person", metric="HandedOff"
    )
    finished = core.FinishSkipped(handed_off, SkipReason.HANDED_OFF, (core.Notice(metric="HandedOff"),))
    s = fold(
        leased(handoff_folder_id=handoff_folder_id, folder_listings=listings),
        handed_off,
        True,
    )
    assert next_step(s) == (expected or finished)
    assert next_step(fold(s, core.FileHandedOff(GRANT, ("m1",), "f"), None)) == finished


# ---- the record's end: its lease freed first, then the same end --------------------------------------


def test_a_skip_under_the_lease_frees_it_first_and_then_is_the_records_end():
    s = leased(job=MessageArrived("not-an-agent", "m1", THREAD, {}))
    skip = next_step(replace(s, phase=core.Arrived()))
    assert skip == core.Skip(SkipReason.GRANT_NOT_AGENT)
    assert next_step(s) == core.ReleaseLease(KEY, skip)
    freed = fold(s, core.ReleaseLease(KEY, skip), True)
    assert (freed.phase, freed.notices, next_step(freed)) == (core.Released(skip), (), skip)


def test_a_lease_found_taken_over_at_release_is_counted_and_the_end_stays():
    skip = core.Skip(SkipReason.GRANT_NOT_AGENT)
    freed = fold(leased(), core.ReleaseLease(KEY, skip), False)
    assert freed.notices == (
        core.Notice(
            metric="LeaseLost",
            message="thread lease expired and was taken over before release",
            fields={"thread_key": KEY},
        ),
    )
    assert next_step(freed) == skip


def test_a_release_that_meets_contention_defers_the_record_as_a_busy_thread():
    skip = core.Skip(SkipReason.GRANT_NOT_AGENT)
    freed = fold(leased(), core.ReleaseLease(KEY, skip), StoreContended("TransactionConflict", "hot"))
    assert next_step(freed) == core.Defer(
        DeferReason.THREAD_BUSY, None, {"detail": "hot", "contention": "TransactionConflict"}
    )


# ---- a port's failure, whatever the step: the one mapping to a deferral ---------------------------------


@pytest.mark.parametrize(
    ("failure", "reason", "seconds"),
    [
        (NylasUnavailable(503, "service_unavailable", None, "down"), DeferReason.NYLAS_UNAVAILABLE, None),
        (NylasUnavailable(None, None, None, "timeout"), DeferReason.NYLAS_UNAVAILABLE, None),
        (NylasUnavailable(429, "rate_limit", 7, "slow down"), DeferReason.RATE_LIMITED, 7),
        (NylasUnavailable(401, "unauthorized", None, "key"), DeferReason.UNAUTHORIZED, None),
        (StoreContended("TransactionConflict", "hot"), DeferReason.THREAD_BUSY, None),
    ],
)
@pytest.mark.parametrize(
    "step",
    [
        core.LookUpAgents(),
        core.LookUpFolders(GRANT),
        core.FetchMessage(GRANT, "m1"),
        core.TakeLease(KEY, 1.0),
    ],
    ids=lambda step: type(step).__name__,
)
def test_a_failed_port_call_defers_the_record_whatever_the_step(failure, reason, seconds, step):
    s = situation(agents=AGENTS, ledger=None, closed_folders=frozenset())
    after = fold(s, step, failure)
    assert after.failure == failure
    deferred = next_step(after)
    assert (deferred.reason, deferred.seconds) == (reason, seconds)


def test_a_nylas_failure_keeps_what_nylas_said_in_the_deferrals_log_fields():
    failure = NylasUnavailable(429, "rate_limit", 7, "slow down")
    deferred = next_step(fold(situation(), core.LookUpAgents(), failure))
    assert deferred.detail == {"status": 429, "error_type": "rate_limit", "detail": "slow down"}


# ---- before a record starts ----------------------------------------------------------------------------


def test_a_record_starts_only_with_a_whole_lease_left():
    whole = POLICY.lease_seconds
    assert core.before_start(whole, POLICY) is None
    late = core.before_start(whole - 0.5, POLICY)
    assert late == core.Defer(DeferReason.DEADLINE, 0, {"remaining_seconds": round(whole - 0.5, 1)})


def test_a_skip_after_the_agent_replied_carries_the_dropped_text_for_the_debug_line_only():
    person = {
        "id": "p1",
        "thread_id": THREAD,
        "from": [{"email": AGENT}],
        "to": [{"email": "a@x.example"}],
        "folders": ["sent"],
        "date": NOW,
    }
    customer = {"id": "m1", "thread_id": THREAD, "from": [{"email": "a@x.example"}]}
    looked = leased(reserved=True, looked_before_send=ThreadPage((person,), None, NOW))
    planned = fold(looked, core.ReadThread(GRANT, THREAD, 10, None), ThreadPage((customer,), None, NOW))
    s = fold(planned, core.AskAgent(None, None), AgentReturned(Reply(text="Hello")))
    released = next_step(s)
    assert isinstance(released, core.ReleaseLease)
    step = released.then
    assert (step.reason, step.unsent_reply) == (SkipReason.ANSWERED_BY_PERSON, "Hello")
    assert step == core.Skip(step.reason, step.detail)  # no part of the skip itself
