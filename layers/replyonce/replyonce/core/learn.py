"""What a step's result teaches: :func:`learn` folds one port call's answer into the situation, purely.

The shell (``replyonce.shell.replier``) carries a step out in one line and hands the
result here; then it asks :func:`replyonce.core.next_step` again. Every bit
of bookkeeping a rule depends on is done here, not in the shell: which
stored intent is about to be attempted (``attempting``, invariant 1), that a
re-stored intent's old answer is forgotten, which folders are junk, whether
the agent's failure is a refusal (settled) or a retry (deferred), that a
write found the lease lost. A failure of any port call becomes the
situation's ``failure``, which :func:`replyonce.core.failure.deferral` turns
into the record's deferral.

Above :mod:`replyonce.core.situation`, :mod:`replyonce.core.results` and
:mod:`replyonce.core.lease`; nothing in the core imports it.
"""

from collections.abc import Sequence
from dataclasses import replace
from traceback import format_exception
from typing import Any, assert_never

from replyonce.agent import AgentRejected, Handoff, NoReply, Reply
from replyonce.answers import Answer
from replyonce.core.failure import deferral
from replyonce.core.lease import wait_bound
from replyonce.core.phases import Leased, Released, Settled, answered, holding, moved
from replyonce.core.planning import replanned
from replyonce.core.results import (
    AgentOutlived,
    AgentRaised,
    AgentReturned,
    FoldersListed,
    FoldersRefused,
    GrantsDescribed,
    NylasUnavailable,
    Searched,
    StoreContended,
    ThreadBusy,
)
from replyonce.core.situation import (
    GONE,
    UNREAD,
    Situation,
)
from replyonce.core.steps import (
    AgentFailed,
    AgentTrouble,
    AskAgent,
    Attempt,
    ClaimEmails,
    CountAgentCall,
    Defer,
    FetchMessage,
    FileHandedOff,
    Finish,
    FinishSkipped,
    LeaseLost,
    LookBeforeSend,
    LookUpAgents,
    LookUpFolders,
    Notice,
    ReadActiveRegion,
    ReadDrafts,
    ReadLedger,
    ReadThread,
    RecordShadow,
    ReleaseLease,
    Reserve,
    Search,
    Settle,
    Skip,
    Step,
    Store,
    TakeLease,
    WaitForLease,
)
from replyonce.policy import Policy
from replyonce.ports import Folder, Grant, Listing, SearchResult
from replyonce.redaction import redact_addresses
from replyonce.rules.evidence import sent_folder_ids
from replyonce.rules.screening import CLOSED_FOLDER_NAMES, Agents
from replyonce.state import AgentCalls, Lease

CLOSED_FOLDER_ATTRIBUTES = frozenset({"\\junk", "\\trash", "\\spam"})
"""The folder attributes (IMAP special-use, as Nylas lists them) of a junk or trash folder."""


def learn(s: Situation, step: Step, result: Any) -> Situation:
    """``s`` with what carrying out ``step`` answered (``result``) folded in.

    Parameters
    ----------
    s:
        The situation ``step`` was decided from.
    step:
        The step the shell carried out.
    result:
        What its port call returned, failures included as values (:mod:`replyonce.core.results`).
    """
    # A notice is earned by one result only: the shell counts what this one earned.
    before = replace(s, notices=())
    after = _learnt(before, step, result)
    # A new read is planned once, here; a plan whose reads did not change is carried (core.planning).
    phase = replanned(after, step)
    return replace(after, phase=moved(before.phase, step, phase))


def _learnt(s: Situation, step: Step, result: Any) -> Situation:
    """``s`` with ``result`` folded in, before the plan is carried or decided again."""
    if isinstance(step, ReleaseLease):
        # Before the failures of any step: a release that fails still leaves the lease not ours to free.
        return _learn_released(s, step, result)
    if isinstance(result, NylasUnavailable | StoreContended):
        # Whatever the step: nothing was learnt but that the record cannot go on now.
        return replace(s, failure=result)
    match step:
        case LookUpAgents() | LookUpFolders() | AskAgent():
            return _learn_about_parties(s, step, result)
        case TakeLease() | WaitForLease():
            return _learn_lease(s, step, result)
        case Store() | Attempt() | Settle() | RecordShadow() | Reserve() | ClaimEmails():
            return _learn_written(s, step, result)
        case CountAgentCall():
            return _learn_agent_calls(s, step, result)
        case ReadActiveRegion() | ReadLedger() | FetchMessage() | ReadThread() | ReadDrafts():
            return _learn_read(s, step, result)
        case LookBeforeSend() | Search():
            return _learn_read(s, step, result)
        case FileHandedOff():
            return replace(s, filed=True)
        case ReleaseLease():
            return _learn_released(s, step, result)
        case Skip() | Defer() | Finish() | FinishSkipped():
            # The record ends with these: nothing comes back to learn.
            return s
        case unknown:
            assert_never(unknown)


def _learn_about_parties(
    s: Situation, step: LookUpAgents | LookUpFolders | AskAgent, result: Any
) -> Situation:
    """The agents' addresses, the grant's folders, the agent's outcome."""
    match step:
        case LookUpAgents():
            assert isinstance(result, GrantsDescribed)
            return replace(s, agents=agents_of(result.grants, s.policy))
        case LookUpFolders():
            return _learn_folders(s, result)
        case AskAgent():
            return _learn_agent(s, step, result)
        case unknown:
            assert_never(unknown)


def agents_of(grants: Sequence[Grant], policy: Policy) -> Agents:
    """The deployment's agents as far as Nylas described their grants (a refused one has no address yet:
    the core defers its mail until it does)."""
    return Agents(
        policy.agent_grant_ids,
        {g.id: g.email for g in grants if g.email},
        {g.id: g.name for g in grants},
        {g.id: g.provider for g in grants},
        {g.id: g.aliases for g in grants if g.aliases},
    )


def _learn_folders(s: Situation, result: FoldersListed | FoldersRefused) -> Situation:
    """The grant's junk and trash folder ids and its hand-off folder; a refused listing knows none.

    Why a refusal is not "no junk folder" for good: junk and trash are still recognised by name
    (``replyonce.rules.screening.in_closed_folder``), and the listing is asked again on the next record.
    """
    listings = s.folder_listings + 1
    match result:
        case FoldersListed(folders=folders):
            return replace(
                s,
                closed_folders=closed_folder_ids(folders),
                sent_folders=sent_folder_ids(folders),
                handoff_folder_id=handoff_folder_id(folders, s.policy.handoff_folder),
                folder_listings=listings,
            )
        case FoldersRefused():
            return replace(s, closed_folders=frozenset(), handoff_folder_id=None, folder_listings=listings)
        case unknown:
            assert_never(unknown)


def closed_folder_ids(folders: Sequence[Folder]) -> frozenset[str]:
    """The ids of the grant's junk and trash folders, by name or by attribute: mail filed there is never
    answered (answering spam feeds the complaint rate)."""
    return frozenset(
        f.id
        for f in folders
        if f.name.lower() in CLOSED_FOLDER_NAMES
        or {a.lower() for a in f.attributes} & CLOSED_FOLDER_ATTRIBUTES
    )


def handoff_folder_id(folders: Sequence[Folder], wanted: str) -> str:
    """The id of the folder ``HANDOFF_FOLDER`` names (by id or name); ``""``: none set, or no such folder."""
    return next((f.id for f in folders if wanted and wanted in (f.id, f.name)), "")


def _learn_agent(
    s: Situation, step: AskAgent, result: AgentReturned | AgentRaised | AgentOutlived
) -> Situation:
    """The agent's outcome; a refusal for good is settled, any other failure of it is retried.

    An agent's exception text may quote the customer (an address, a line of the mail): redacted
    before it reaches a log line, a skip's detail or the ledger's reason.
    """
    match result:
        case AgentReturned(value=Reply() | NoReply() | Handoff() as outcome):
            return replace(s, phase=answered(s.phase, step, outcome))
        case AgentReturned(value=value):
            returned = f"the agent returned {type(value).__name__}, not Reply, NoReply or Handoff"
            return replace(s, failure=AgentTrouble(returned))
        case AgentRaised(failure=AgentRejected() as refusal):
            detail = redact_addresses(str(refusal))
            logged = Notice(message="the agent rejected the burst; not retried", fields={"detail": detail})
            refused = answered(s.phase, step, AgentFailed(detail))
            return replace(s, phase=refused, notices=(replace(logged, level="error"),))
        case AgentRaised(failure=failure):
            detail = redact_addresses(f"{type(failure).__name__}: {failure}")
            trace = redact_addresses("".join(format_exception(failure)))
            logged = Notice(
                message="the agent failed; the record will be retried",
                fields={"detail": detail, "traceback": trace},
                level="error",
            )
            return replace(s, failure=AgentTrouble(detail), notices=(logged,))
        case AgentOutlived():
            # Abandoned, never stored: what it returns later is dropped with its thread.
            return replace(s, failure=AgentTrouble("agent outlived AGENT_TIMEOUT_SECONDS"))
        case unknown:
            assert_never(unknown)


def _learn_lease(s: Situation, step: TakeLease | WaitForLease, result: Lease | ThreadBusy) -> Situation:
    """The lease and the thread state it returned; or a refusal, and when the wait for it ends."""
    match result:
        case Lease():
            # The fence read was for this lease; the send needs its own.
            leased = Leased(result, result.state)
            return replace(s, phase=leased, active_region=UNREAD, lease_refused=None)
        case ThreadBusy():
            ends = s.lease_wait_ends
            if ends is None:
                ends = s.clock + wait_bound(s.time_left, s.policy)
            return replace(s, lease_refused=result, lease_wait_ends=ends)
        case unknown:
            assert_never(unknown)


def _learn_written(
    s: Situation, step: Store | Attempt | Settle | RecordShadow | Reserve | ClaimEmails, result: Any
) -> Situation:
    """What a write answered: an intent stored (or the lease lost), an attempt's answer, a settlement."""
    match step:
        case Store():
            return _learn_stored(s, step, result)
        case Attempt(intent=intent):
            answers = {**s.answers, intent.id: result}
            # The fence read was for this send; another needs its own.
            known = replace(s, attempting=s.attempting - {intent.id}, answers=answers, active_region=UNREAD)
            return replace(known, notices=_answer_notices(result))
        case Settle():
            return _learn_settled(s, step, result)
        case RecordShadow():
            return replace(s, shadow_recorded=result)
        case Reserve():
            return replace(s, reserved=all(result))
        case ClaimEmails():
            return replace(s, claims=dict(result))
        case unknown:
            assert_never(unknown)


def _learn_agent_calls(s: Situation, step: CountAgentCall, counted: AgentCalls) -> Situation:
    """The grant's daily count answered the burst; its first refusal of the day is said once.

    Why once and not per message: every burst of a grant over its cap is refused until 00:00 UTC, and
    each is already logged and counted as its hand-off (``agent_call_cap``); the operator is told once
    per grant and day that the grant crossed its cap (``AgentCallCapReached``, the alarm's metric).
    """
    if not counted.first_refusal:
        return replace(s, agent_calls=counted)
    crossed = Notice(
        metric="AgentCallCapReached",
        message="the grant reached its daily agent-call cap: its mail is handed to a person, not the agent, "
        "until 00:00 UTC (make grants show; set --daily-agent-call-cap to change it)",
        fields={"grant_id": step.grant_id, "daily_agent_call_cap": step.cap, "day": step.day},
    )
    return replace(s, agent_calls=counted, notices=(crossed,))


def _learn_stored(s: Situation, step: Store, written: bool) -> Situation:
    """The intent is in the outbox (and about to be attempted, when the step counted an attempt), or the
    lease was lost before it could be.

    Why ``attempting`` and the old answer: an intent stored with an attempt counted is attempted next
    (checked again against the time left: ``replyonce.core.delivery.drive``); an answer of an earlier
    attempt in this lease belongs to the intent as it was, and the re-stored one (a new key, stuck) is
    decided afresh.
    """
    held = holding(s.phase, step)
    intent = step.intent
    if not written:
        return replace(s, failure=LeaseLost(held.lease.key))
    attempting = s.attempting | {intent.id} if step.attempt else s.attempting - {intent.id}
    answers = {k: v for k, v in s.answers.items() if k != intent.id}
    state = replace(held.state, outbox={**held.state.outbox, intent.id: intent})
    counted = (Notice(metric=step.metric),) if step.metric else ()
    return replace(
        s, phase=replace(held, state=state), attempting=attempting, answers=answers, notices=counted
    )


def _answer_notices(answer: Answer) -> tuple[Notice, ...]:
    """Every refusal or silence of Nylas to a send, counted by its status (the alarms read them)."""
    if answer.status is not None and answer.status < 400:
        return ()
    return (Notice(metric="NylasAnswer", metric_status=str(answer.status or "none")),)


def _learn_settled(s: Situation, step: Settle, held: bool) -> Situation:
    """The settlement was written under the lease; or without it, by key (what happened at Nylas
    happened either way); or not at all (a shadow settlement: the record comes back and finds the thread
    as the new holder left it, so its messages are recorded once, by whoever settles them)."""
    key = holding(s.phase, step).lease.key
    # A settlement frees the lease, written or not (the store releases it with the write).
    if not held and not step.settlement.writes_without_lease:
        lost = LeaseLost(key)
        return replace(s, failure=lost, phase=Released(deferral(lost)))
    if held:
        return replace(s, phase=Settled(step))
    lost_notice = Notice(
        metric="LeaseLost",
        message="thread lease was lost before the reply was recorded; recorded without it",
        fields={"thread_key": key},
    )
    return replace(s, phase=Settled(step), notices=(lost_notice,))


def _learn_released(s: Situation, step: ReleaseLease, released: bool | StoreContended) -> Situation:
    """The lease is freed (or found another's: it had expired and was taken over), or the release met
    contention on every retry: deferred as any contended write is, the lease no longer ours to free."""
    s = replace(s, phase=Released(step.then))
    match released:
        case StoreContended():
            return replace(s, failure=released)
        case True:
            return s
        case False:
            lost = Notice(
                metric="LeaseLost",
                message="thread lease expired and was taken over before release",
                fields={"thread_key": step.thread_key},
            )
            return replace(s, notices=(lost,))
        case unknown:
            assert_never(unknown)


def _learn_read(
    s: Situation,
    step: ReadActiveRegion | ReadLedger | FetchMessage | ReadThread | ReadDrafts | LookBeforeSend | Search,
    result: Any,
) -> Situation:
    """What a read found: the active Region, the ledger, the message, the thread, drafts, a search."""
    match step:
        case ReadActiveRegion():
            return replace(s, active_region=result)
        case ReadLedger():
            return replace(s, ledger=result.entry, table_began_ms=result.table_began_ms)
        case FetchMessage():
            if result is None:
                return replace(s, fetched=GONE)
            return replace(s, fetched=result, notices=(Notice(metric="MessageFetched"),))
        case ReadThread(page_token=token):
            listing = (s.listing or Listing()) if token else Listing()
            return replace(s, listing=listing.with_page(result))
        case ReadDrafts():
            return replace(s, drafts=tuple(result))
        case LookBeforeSend():
            return replace(s, looked_before_send=result)
        case Search(intent_id=intent_id):
            return replace(s, searches={**s.searches, intent_id: _search_at(result)})
        case unknown:
            assert_never(unknown)


def _search_at(searched: Searched) -> SearchResult:
    """The search with Nylas' time: its answer's, else the shell's reckoning when it answered (a failed
    search keeps none: it is *unknown*, never "absent as of then")."""
    found = searched.result
    if found.nylas_time is None and not found.failed:
        return SearchResult(found.found, nylas_time=searched.now)
    return found
