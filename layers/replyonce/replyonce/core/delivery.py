"""Getting a stored intent out exactly once: attempt it, learn what an attempt did, or ask the mailbox.

Invariant 1 is decided here (:func:`drive`). Above
:mod:`replyonce.core.situation` and :mod:`replyonce.core.failure`; the
arrival flow and the send-outcome flow both hand a stored intent to
:func:`drive`.
"""

from typing import Any, assert_never

from replyonce.answers import Answer, Proof, proof_of, proves_generation_unsent
from replyonce.core.failure import nylas_deferral
from replyonce.core.phases import Answered, Leased, Planned
from replyonce.core.situation import (
    Situation,
)
from replyonce.core.steps import (
    Attempt,
    Defer,
    ReadThread,
    Search,
    Settle,
    Step,
    Store,
)
from replyonce.jobs import MessageArrived
from replyonce.policy import Policy
from replyonce.ports import Message
from replyonce.reasons import DeferReason, SkipReason
from replyonce.rules.coverage import is_reply_of
from replyonce.rules.plan import message_id
from replyonce.state import Intent, IntentKind, IntentState, Settlement, Status, ThreadState

KEY_LIFETIME_SECONDS = 3600
"""Nylas keeps an ``Idempotency-Key``'s answer for one hour from the first request."""


def drive(s: Situation, grant_id: str, intent: Intent) -> Step:
    """The next step for a stored intent: attempt it, learn what an attempt did, or ask the mailbox.

    Invariant 1 is decided here. An attempt is made only when nothing can
    be out yet, or under the same ``Idempotency-Key`` while it lives (Nylas
    then replays the first answer instead of sending). Anything else that
    may have sent — no answer, a 5xx, a replay, a 409, a crash mid-attempt,
    the key's hour gone — is settled by the mailbox alone: the reply found
    (thread listing or ``metadata_pair``), or absent from both *after the
    settle time*, and only then the next key.
    """
    answer = s.answers.get(intent.id)
    if answer is not None:
        return after_answer(s, grant_id, intent, answer)
    if intent.id in s.attempting:
        # Checked again, not only before the attempt was stored: the write itself can take long
        # (a slow or paused store). A send that starts with less than a whole send left may land
        # after the lease ends, when the next holder has read the thread without it (invariant 3).
        # The counted attempt is then what a crash before the send leaves: the same key, later.
        if not send_fits(s):
            return Defer(DeferReason.DEADLINE, 0)
        return Attempt(grant_id, intent)
    found = evidence(s, intent)
    if found is not None:
        return found_in_mailbox(s, intent, found)
    if intent.attempts == 0:
        if not fate_unknown(intent, s.now, s.policy):
            return attempt(s, intent)
        if s.now is None:
            # Whether its key's hour is over is Nylas' time; the read also shows the thread as it is.
            return ReadThread(grant_id, intent.thread_id, s.policy.thread_page_size, None)
        return after_settle(
            s,
            grant_id,
            intent,
            now=s.now,
            wait_until=intent.created_at + s.policy.settle_seconds,
            on_absent=lambda: attempt(s, intent),
        )
    if s.now is None:
        # Nylas' time decides whether the key still lives; the read also shows the thread as it is.
        return ReadThread(grant_id, intent.thread_id, s.policy.thread_page_size, None)
    if intent.kind is IntentKind.SEND and not intent.key_stuck and key_alive(intent, s.now, s.policy):
        return attempt(s, intent)
    return after_settle(
        s,
        grant_id,
        intent,
        now=s.now,
        wait_until=intent.last_attempt_at + s.policy.settle_seconds,
        on_absent=lambda: attempt(s, intent.next_generation(), metric="KeyGenerationAdvanced"),
    )


def fate_unknown(intent: Intent, now: int | None, policy: Policy) -> bool:
    """Whether an intent stored with no attempt counted must be looked for in the mailbox before a send
    (``now`` ``None``: Nylas' time not known yet, so it may be past its key's hour).

    Why: a table restored to a moment between the intent's store and its
    attempt (routine when the agent takes the ~20 s that leave no time for a
    send in the same lease) brings it back with no attempt, while the state
    that was lost may have sent it. Within its key's hour — counted from its
    store, the earliest any lost attempt could be — the same key only
    replays what such an attempt did; after it, only the mailbox can tell.
    """
    if intent.attempts or not intent.created_at:
        return False
    return now is None or not key_alive(intent, now, policy, intent.created_at)


def key_alive(intent: Intent, now: int, policy: Policy, first_request_at: int | None = None) -> bool:
    """Whether the key still fences: Nylas forgets it an hour after its first request (a margin earlier).

    ``first_request_at`` defaults to the intent's first counted attempt; for an intent with none, its
    storing is the earliest any lost attempt of it could have been made.
    """
    first = intent.first_attempt_at if first_request_at is None else first_request_at
    return now < first + KEY_LIFETIME_SECONDS - policy.key_margin_seconds


def send_fits(s: Situation) -> bool:
    """Whether a whole send (its timeout and the margin) ends before the lease or the invocation does."""
    return s.time_left >= s.policy.send_timeout_seconds + s.policy.margin_seconds


def attempt(s: Situation, intent: Intent, *, stored: bool = True, metric: str = "") -> Step:
    """Store ``intent`` with one more attempt counted, if a whole attempt fits in the time left."""
    if not send_fits(s):
        if not stored:
            return Store(intent, attempt=False, metric=metric)
        return Defer(DeferReason.DEADLINE, 0)
    now = s.now if s.now is not None else intent.created_at
    return Store(intent.attempting(now), metric=metric)


def after_answer(s: Situation, grant_id: str, intent: Intent, answer: Answer) -> Step:
    """What the answer to this lease's attempt proves, and the step it leads to (``replyonce.answers``)."""
    now = answer.nylas_time or s.now or intent.last_attempt_at
    proof = proof_of(answer, had_custom_headers=intent.has_custom_headers)
    match proof:
        case Proof.SENT:
            status = Status.DRAFTED if intent.kind is IntentKind.DRAFT else Status.REPLIED
            return Settle(sent(intent, status, now, answer.message_id))
        case Proof.QUEUED:
            return _queued(s, intent, answer, now)
        case Proof.MAY_HAVE_SENT if intent.kind is IntentKind.SEND:
            return Defer(DeferReason.SEND_RETRY, answer.retry_after_seconds, _answer_detail(intent, answer))
        case Proof.MAY_HAVE_SENT | Proof.KEY_STUCK:
            # The key can only replay this answer (or a draft has no key at all): only the mailbox can tell.
            return Store(intent.stuck(), attempt=False)
        case Proof.HEADERS_REFUSED:
            return _headers_refused(s, intent, answer)
        case Proof.NOT_SENT | Proof.ACCOUNT_LIMITED:
            return _not_sent(s, intent, answer, proof)
        case Proof.REJECTED:
            reason = f"{answer.status} {answer.error_type}".strip()
            settlement = Settlement(Status.FAILED, intent.covered, now, intent, reason=reason)
            # Refused for good: the customer is owed an answer nobody can send now (invariant 7: handed off).
            return Settle(
                settlement,
                skip=SkipReason.SEND_REJECTED,
                move_to=s.policy.handoff_folder,
                metric="ReplyFailed",
                metric_status=str(answer.status),
            )
        case unknown:
            assert_never(unknown)


def _answer_detail(intent: Intent, answer: Answer) -> dict[str, Any]:
    """A deferral's log fields for an answer: what Nylas said, to which generation of which intent."""
    return {
        "status": answer.status,
        "error_type": answer.error_type,
        "replayed": answer.replayed,
        "generation": intent.generation,
        "intent_id": intent.id,
    }


def _queued(s: Situation, intent: Intent, answer: Answer, now: int) -> Step:
    """A ``202``: accepted by the Agent Account queue, not sent; settled ``queued`` and reconciled later."""
    settlement = Settlement(
        Status.QUEUED,
        intent.covered,
        now,
        intent.queued(now, answer.message_id),
        keep=True,
        counts_as_reply=True,
        reply_message_id=answer.message_id,
        replied_to=intent.target_id,
    )
    return Settle(settlement, reconcile_after=s.policy.pending_confirm_seconds, metric="ReplyQueued")


def _headers_refused(s: Situation, intent: Intent, answer: Answer) -> Step:
    """A ``400`` of a request with custom headers: the next key without them, once nothing can be out."""
    if proves_generation_unsent(answer, intent.attempts):
        # Nothing went out under this key, and it would refuse the headers again for its hour.
        next_intent = intent.next_generation(without_custom_headers=True)
        return attempt(s, next_intent, metric="CustomHeadersRefused")
    # Refused, but an earlier attempt under this key may have sent: the mailbox first.
    return Store(intent.stuck(drop_headers=True), attempt=False, metric="CustomHeadersRefused")


def _not_sent(s: Situation, intent: Intent, answer: Answer, proof: Proof) -> Step:
    """Not sent (a rate limit, a refused key, an account limit): the same key later, or the next key now."""
    if answer.replayed and proves_generation_unsent(answer, intent.attempts):
        # Nothing went out under this key, and it would replay the refusal for its hour (a rate limit or
        # an account limit the operator may have cleared since): the next key.
        return attempt(s, intent.next_generation(), metric="KeyGenerationAdvanced")
    detail = _answer_detail(intent, answer)
    if proof is Proof.NOT_SENT:
        return Defer(
            nylas_deferral(answer.status, DeferReason.RATE_LIMITED), answer.retry_after_seconds, detail
        )
    return Defer(DeferReason.ACCOUNT_LIMITED, s.policy.account_retry_seconds, detail)


def sent(intent: Intent, status: Status, at: int, reply_message_id: str) -> Settlement:
    return Settlement(
        status,
        intent.covered,
        at,
        intent,
        counts_as_reply=status is Status.REPLIED,
        reply_message_id=reply_message_id,
        replied_to=intent.target_id,
    )


def evidence(s: Situation, intent: Intent) -> Message | None:
    """The intent's reply (or draft) as the mailbox shows it: in the listing, or found by its id."""
    candidates = list(s.listing.messages if s.listing else ())
    search = s.searches.get(intent.id)
    if search is not None:
        candidates.extend(search.found)
    return next((m for m in candidates if is_reply_of(m, intent.id)), None)


def found_in_mailbox(s: Situation, intent: Intent, message: Message) -> Step:
    """The reply is in the mailbox: settle it as what the mailbox shows (a draft, or a sent reply)."""
    at = message.date or s.now or intent.last_attempt_at
    is_draft = message.object == "draft"
    status = Status.DRAFTED if is_draft else Status.REPLIED
    return Settle(sent(intent, status, at, message_id(message)), metric="ReplyFoundInMailbox")


def after_settle(
    s: Situation, grant_id: str, intent: Intent, *, now: int, wait_until: int, on_absent: Any
) -> Step:
    """Whether the reply is out, asked of the mailbox once it could show it (Nylas documents no index delay).

    Absence counts only when both the thread listing and the
    ``metadata_pair`` search were read after ``wait_until``; a failed search
    is *unknown* and defers this intent only. ``now``: Nylas' time, read.
    """
    if now < wait_until:
        return Defer(DeferReason.SEND_UNCERTAIN, wait_until - now, {"intent_id": intent.id})
    if s.listing is None or (s.listing.read_at or 0) < wait_until:
        return ReadThread(grant_id, intent.thread_id, s.policy.thread_page_size, None)
    search = s.searches.get(intent.id)
    if search is None or (not search.failed and (search.nylas_time or 0) < wait_until):
        kind = "drafts" if intent.kind is IntentKind.DRAFT else "messages"
        return Search(grant_id, kind, intent.id)
    if search.failed:
        return Defer(DeferReason.SEARCH_FAILED, None, {"intent_id": intent.id, "detail": search.failed})
    return on_absent()


# ---- an intent nobody drives (issue 48) ----------------------------------------------------------------


def last_touched(intent: Intent) -> int:
    """The Nylas time a record last did something with ``intent``: its last attempt, else its store."""
    return intent.last_attempt_at or intent.created_at


def undriven(state: ThreadState, trigger_id: str, now: int, policy: Policy) -> Intent | None:
    """An intent of the thread's outbox that no record drives any more, or ``None``.

    Not queued (a ``202``'s intent has its reconcile, and Nylas' report), not
    the trigger's own (the arrival flow drives that one), and untouched for
    more than a lease: the record that stored or last attempted it is over
    (crashed, deferred, dead-lettered — perhaps never to come back: a purged
    or expired dead letter, a redrive declined). Such an intent counts as a
    reply in flight and its messages as covered; without a driver it would
    hold the thread for good.
    """
    for intent in state.outbox.values():
        if intent.state is IntentState.QUEUED or trigger_id in intent.covered:
            continue
        if last_touched(intent) + policy.lease_seconds < now:
            return intent
    return None


def drive_undriven(s: Situation) -> Step | None:
    """A new message's record, holding the thread's lease and having read it, drives an intent nobody
    drives to its settlement first (through :func:`drive`: the same key while it lives, else the mailbox),
    then comes back for its own message (``replyonce.core.outcome.after_settlement``). ``None``: none, or
    this record is past the point where it could (it reserved, claimed, counted or asked the agent for its
    own).

    Why here: every later message of the thread meets the intent, so each is a driver; one record at a
    time holds the lease, and :func:`drive` is safe to run from any of them. A lost dead letter is then a
    delay, never a thread closed for good. Not in shadow mode, which sends nothing.
    """
    arrived = s.job
    if not isinstance(arrived, MessageArrived) or s.policy.shadow_mode:
        return None
    match s.phase:
        case Leased(state=state) | Planned(state=state) | Answered(state=state) if (
            s.listing is not None and s.listing.pages
        ):
            read_at = s.listing.read_at or 0
        case _:
            return None
    driving = next(
        (
            i
            for i in state.outbox.values()
            if (i.id in s.attempting or i.id in s.answers) and arrived.message_id not in i.covered
        ),
        None,
    )
    if driving is not None:
        return drive(s, arrived.grant_id, driving)
    if (
        s.reserved is not None
        or s.claims is not None
        or s.agent_calls is not None
        or isinstance(s.phase, Answered)
    ):
        return None
    intent = undriven(state, arrived.message_id, read_at, s.policy)
    if intent is None:
        return None
    step = drive(s, arrived.grant_id, intent)
    # An intent that cannot be settled now (its search failed: unknown; its key in flight; the mailbox
    # not settled yet) stays where it is, its messages covered, and this record goes on with its own
    # message: a lost intent must not hold the thread's new mail either.
    return None if isinstance(step, Defer) else step


def settled_for_another(s: Situation, settlement: Settlement) -> Intent | None:
    """The intent nobody drove (:func:`drive_undriven`) a new message's record just settled, not its own
    message's (it comes back for its own); ``None``: its own."""
    arrived, intent = s.job, settlement.intent
    if not isinstance(arrived, MessageArrived) or intent is None or arrived.message_id in intent.covered:
        return None
    read_at = s.listing.read_at if s.listing is not None else None
    if read_at is not None and intent.created_at + s.policy.lease_seconds < read_at:
        return intent
    return None
