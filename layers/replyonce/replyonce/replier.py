"""The replier's shell: carries out what ``replyonce.core`` decides, through the two ports, step by step.

Each turn of the loop asks :func:`replyonce.core.next_step` what to do with
everything known so far, does exactly that (one read, one write, one call of
the agent), adds what it learned, and asks again — until the core settles the
record, skips it with a reason, or defers it back to the queue. No rule lives
here: what is decided here is only *how* (waiting in-process for a busy
lease, calling the agent within its timeout, caching per container what
does not change: the agents' addresses, the grant's folders).

This runs inside Powertools idempotency (``replyonce.consumer``), so it sees
each notification once unless it raises — and :class:`~replyonce.exceptions.Deferred`
is how every "not now" asks for a retry (invariant 2: a crash before the
send is retried, never recorded as handled).
"""

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from traceback import format_exception
from typing import Any

from replyonce import core
from replyonce.agent import AgentRejected, Handoff, NoReply, Reply
from replyonce.agents import Agent
from replyonce.answers import Answer
from replyonce.core import GONE, UNREAD, AgentFailed, Situation
from replyonce.coverage import INTENT_KEY
from replyonce.exceptions import Deferred, NylasPermanentError, ThreadBusyError
from replyonce.keys import idempotency_key
from replyonce.observability import count, count_by, logger, skipped
from replyonce.policy import Policy
from replyonce.ports import Grant, Listing, Mailbox, RegionFence, SearchResult, StateStore
from replyonce.reasons import DeferReason
from replyonce.redaction import address_digest, redact_addresses
from replyonce.screening import CLOSED_FOLDER_NAMES, Agents
from replyonce.state import IntentKind, Lease, Status
from replyonce.subjects import ReconcileDue, Subject

# While another worker holds the thread, look again this often (one conditional write each).
LEASE_POLL_SECONDS = 0.5
# A record takes few steps (a first reply: ~9); a loop this long is a bug, not a thread.
_MAX_STEPS = 64
_CLOSED_FOLDER_ATTRIBUTES = frozenset({"\\junk", "\\trash", "\\spam"})

ReconcileLater = Callable[[ReconcileDue, int], None]
"""Schedules our own check of a queued reply, ``seconds`` from now (an SQS message with a delay)."""


class Replier:
    """Turns one record into at most one reply, as the core decides.

    Parameters
    ----------
    policy:
        The pure configuration (``ReplierSettings.policy``).
    store, mailbox:
        The two ports.
    agent:
        The team's agent (``REPLY_AGENT``), called at most once per burst and record.
    reconcile_later:
        Schedules the check of a queued (``202``) reply.
    lease_wait_seconds:
        How long a record waits in-process for a busy thread (``LEASE_WAIT_SECONDS``).
    clock:
        The wall clock the store times leases with (the lease's end bounds every step).
    fence:
        The active-Region record (``ACTIVE_REGION_TABLE``); required when ``policy.fence_region`` is set.
    monotonic, sleep:
        Injectable clock and sleep: Nylas' time is advanced by the monotonic time since its last answer.
    """

    def __init__(
        self,
        policy: Policy,
        store: StateStore,
        mailbox: Mailbox,
        agent: Agent,
        *,
        reconcile_later: ReconcileLater,
        lease_wait_seconds: float = 10.0,
        clock: Callable[[], float] = time.time,
        fence: RegionFence | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if policy.fence_region and fence is None:
            raise ValueError("a fenced policy (fence_region) needs the active-Region record (fence)")
        self._policy = policy
        self._fence = fence
        self._store = store
        self._mailbox = mailbox
        self._agent = agent
        self._reconcile_later = reconcile_later
        self._lease_wait_seconds = lease_wait_seconds
        self._clock = clock
        self._monotonic = monotonic
        self._sleep = sleep
        # Per container: what Nylas says of the grants does not change between records.
        self._agents: Agents | None = None
        self._grants: dict[str, Grant] = {}  # the agent grants Nylas described, kept as they come
        self._folders: dict[str, tuple[frozenset[str], str]] = {}
        # What one record's run knows, per thread: the consumer runs a batch's threads at once.
        self._record = threading.local()
        # The container's knowledge is filled once, by the first thread that needs it.
        self._container_lock = threading.Lock()

    # ---- per-container knowledge --------------------------------------------------------------------------

    def agents(self) -> Agents:
        """Every agent grant's address and name, looked up once per container.

        A configured grant Nylas does not know is logged as an error and
        counted, not silently ignored: a mistyped ``AGENT_GRANT_IDS`` would
        otherwise answer nothing for it without a word.

        Only a complete answer is kept for the container's life: a grant Nylas
        refused (a 400 or 404 at a cold start, perhaps a moment's hiccup) is
        looked up again on the next record, never remembered as "not an
        agent" — without its address the agent would not recognise its own
        sent replies, and the core defers the grant's mail until it is known.
        """
        with self._container_lock:
            if self._agents is not None:
                return self._agents
            agents, complete = self._look_up_agents()
            if complete:
                self._agents = agents
        return agents

    def _look_up_agents(self) -> tuple[Agents, bool]:
        """The agents as far as Nylas described them; only the grants not described yet are asked."""
        for grant_id in self._policy.agent_grant_ids:
            if grant_id in self._grants:
                continue
            try:
                self._grants[grant_id] = self._mailbox.grant(grant_id)
            except NylasPermanentError as unknown:
                logger.error(
                    "Nylas refused the look-up of a grant of AGENT_GRANT_IDS; its mail waits, and the "
                    "grant is looked up again on the next record (a 404 that persists is a mistyped id)",
                    extra={"grant_id": grant_id, "status": unknown.status},
                )
                count("AgentGrantUnknown")
        known = self._grants
        agents = Agents(
            self._policy.agent_grant_ids,
            {g: known[g].email for g in known if known[g].email},
            {g: known[g].name for g in known},
            {g: known[g].provider for g in known},
        )
        return agents, all(g in known for g in self._policy.agent_grant_ids)

    def _grant_folders(self, grant_id: str) -> tuple[frozenset[str], str]:
        """The grant's junk and trash folder ids, and the hand-off folder's id (``""``: none)."""
        with self._container_lock:
            if grant_id in self._folders:
                return self._folders[grant_id]
            found, complete = self._look_up_folders(grant_id)
            if complete:  # a refused listing is asked again next record, never kept as "no folders"
                self._folders[grant_id] = found
        return found

    def _look_up_folders(self, grant_id: str) -> tuple[tuple[frozenset[str], str], bool]:
        try:
            folders = list(self._mailbox.folders(grant_id))
        except NylasPermanentError as refused:
            logger.error(
                "cannot list the grant's folders; for this record junk and trash are recognised by name "
                "only, and the folders are listed again on the next record",
                extra={"grant_id": grant_id, "status": refused.status},
            )
            count("FoldersUnavailable")
            return (frozenset(), ""), False
        closed = frozenset(
            f.id
            for f in folders
            if f.name.lower() in CLOSED_FOLDER_NAMES
            or {a.lower() for a in f.attributes} & _CLOSED_FOLDER_ATTRIBUTES
        )
        wanted = self._policy.handoff_folder
        handoff = next((f.id for f in folders if wanted and wanted in (f.id, f.name)), "")
        if wanted and not handoff:
            logger.error(
                "HANDOFF_FOLDER names no folder of the grant; handed-off mail stays where it is",
                extra={"grant_id": grant_id, "handoff_folder": wanted},
            )
        return (closed, handoff), True

    def _now(self) -> int | None:
        """Nylas' time now: its last answer's ``Date`` plus the monotonic time since (never a wall clock)."""
        seen_at = getattr(self._record, "nylas_time", None)
        if seen_at is None:
            return None
        at, seen = seen_at
        return at + int(self._monotonic() - seen)

    def _saw_nylas_time(self, nylas_time: int | None) -> None:
        if nylas_time is not None:
            self._record.nylas_time = (nylas_time, self._monotonic())

    # ---- one record ---------------------------------------------------------------------------------------

    def handle(
        self,
        subject: Subject,
        *,
        remaining_seconds: Callable[[], float],
        hold_record: Callable[[float], None] | None = None,
    ) -> dict[str, Any]:
        """Carry ``subject`` to its end; return its outcome (stored by Powertools idempotency).

        ``hold_record(seconds)`` is called right before the thread's lease is taken: the record is
        then invisible for as long as this worker may hold the lease, and no longer — if the worker
        dies, its record comes back when the lease can have expired, not after the queue's
        visibility timeout.

        Raises
        ------
        Deferred
            Not now: the record goes back to the queue (the reason says why).
        NylasRetryableError, botocore errors
            Transient failures: the record is retried with backoff.
        """
        # Nylas' time is per record: an estimate carried over from an earlier one would only drift.
        self._record.nylas_time = None
        s = Situation(subject, self._policy, agents=self._agents)
        if hasattr(subject, "grant_id") and subject.grant_id in self._folders:
            s = replace(s, closed_folders=self._folders[subject.grant_id][0])
        lease: Lease | None = None
        self._record.hold = hold_record
        try:
            for _ in range(_MAX_STEPS):
                s = replace(s, now=self._now(), time_left=self._time_left(lease, remaining_seconds))
                step = core.next_step(s)
                logger.debug("next step", extra={"step": type(step).__name__, "detail": _describe(step)})
                s, lease, outcome = self._carry_out(step, s, lease, subject)
                if outcome is not None:
                    return outcome
            raise RuntimeError(f"record took more than {_MAX_STEPS} steps: a bug in replyonce.core")
        finally:
            if lease is not None and not lease.released and not self._store.release(lease):
                logger.warning(
                    "thread lease expired and was taken over before release", extra={"thread_key": lease.key}
                )
                count("LeaseLost")

    def _time_left(self, lease: Lease | None, remaining_seconds: Callable[[], float]) -> float:
        left = remaining_seconds()
        if lease is not None and not lease.released:
            left = min(left, lease.expires_at_ms / 1000 - self._clock())
        return left

    def _carry_out(
        self, step: core.Step, s: Situation, lease: Lease | None, subject: Subject
    ) -> tuple[Situation, Lease | None, dict[str, Any] | None]:
        """Do ``step``; return what is known after it, the lease, and the outcome when the record ends."""
        match step:
            case core.LookUpAgents():
                return replace(s, agents=self.agents()), lease, None
            case core.LookUpFolders(grant_id=grant_id):
                return replace(s, closed_folders=self._grant_folders(grant_id)[0]), lease, None
            case core.ReadActiveRegion():
                assert self._fence is not None
                return replace(s, active_region=self._fence.read()), lease, None
            case core.ReadLedger(grant_id=grant_id, message_id=message_id):
                return replace(s, ledger=self._store.ledger_entry(grant_id, message_id)), lease, None
            case core.FetchMessage(grant_id=grant_id, message_id=message_id):
                fetched = self._mailbox.message(grant_id, message_id)
                if fetched is not None:
                    count("MessageFetched")
                return replace(s, fetched=GONE if fetched is None else fetched), lease, None
            case core.TakeLease(thread_key=key, duration_seconds=seconds):
                if self._record.hold is not None:
                    self._record.hold(self._lease_wait_seconds + seconds + self._policy.margin_seconds)
                lease = self._take_lease(key, seconds, s)
                # The fence read was for this lease; the send needs its own.
                return replace(s, state=lease.state, active_region=UNREAD), lease, None
            case core.ReadThread(grant_id=grant_id, thread_id=thread_id, limit=limit, page_token=token):
                page = self._mailbox.thread_page(grant_id, thread_id, limit, token)
                self._saw_nylas_time(page.nylas_time)
                listing = (s.listing or Listing()) if token else Listing()
                return replace(s, listing=listing.with_page(page)), lease, None
            case core.ReadDrafts(grant_id=grant_id, thread_id=thread_id):
                return (
                    replace(s, drafts=tuple(self._mailbox.drafts_in_thread(grant_id, thread_id))),
                    lease,
                    None,
                )
            case core.ClaimEmails(grant_id=grant_id, email_ids=email_ids):
                claims = {email: self._store.claim_email(email, grant_id) for email in email_ids}
                return replace(s, claims=claims), lease, None
            case core.LookBeforeSend(grant_id=grant_id, thread_id=thread_id, limit=limit):
                page = self._mailbox.thread_page(grant_id, thread_id, limit, None)
                self._saw_nylas_time(page.nylas_time)
                return replace(s, looked_before_send=page), lease, None
            case core.Search(grant_id=grant_id, kind=kind, intent_id=intent_id):
                found = self._mailbox.search(grant_id, kind, INTENT_KEY, intent_id)
                self._saw_nylas_time(found.nylas_time)
                if found.nylas_time is None and not found.failed:
                    found = SearchResult(found.found, nylas_time=self._now())
                return replace(s, searches={**s.searches, intent_id: found}), lease, None
            case core.Reserve(reservations=reservations, intent_id=intent_id):
                reserved = [self._store.reserve(reservation, intent_id) for reservation in reservations]
                return replace(s, reserved=all(reserved)), lease, None
            case core.AskAgent(conversation=conversation):
                return replace(s, agent_outcome=self._ask_agent(conversation)), lease, None
            case core.Store(intent=intent, attempt=attempt, metric=metric):
                assert lease is not None
                if not self._store.store_intent(lease, intent):
                    raise Deferred(DeferReason.LEASE_LOST, 0, thread_key=lease.key)
                if metric:
                    count(metric)
                lease.state = replace(lease.state, outbox={**lease.state.outbox, intent.id: intent})
                logger.debug(
                    "intent stored",
                    extra={
                        "intent_id": intent.id,
                        "generation": intent.generation,
                        "attempts": intent.attempts,
                    },
                )
                attempting = s.attempting | {intent.id} if attempt else s.attempting - {intent.id}
                answers = {k: v for k, v in s.answers.items() if k != intent.id}
                return replace(s, state=lease.state, attempting=attempting, answers=answers), lease, None
            case core.RecordShadow(record=record):
                written = self._store.record_shadow(record)
                logger.debug(
                    "shadow record",
                    extra={"record_id": record.record_id, "outcome": record.outcome, "written": written},
                )
                return replace(s, shadow_recorded=written), lease, None
            case core.Attempt(grant_id=grant_id, intent=intent):
                answer = self._attempt(grant_id, intent)
                self._saw_nylas_time(answer.nylas_time)
                attempting = s.attempting - {intent.id}
                answers = {**s.answers, intent.id: answer}
                return (
                    replace(s, attempting=attempting, answers=answers, active_region=UNREAD),
                    lease,
                    None,
                )
            case core.Settle():
                assert lease is not None
                return s, lease, self._settle(step, lease, subject)
            case core.Skip(reason=reason, detail=detail):
                if isinstance(s.agent_outcome, Reply):
                    # Dropped after the agent answered (a person answered meanwhile): its text, for a
                    # developer only, never at INFO (it is about a customer).
                    logger.debug("the agent's reply, not sent", extra={"text": s.agent_outcome.text or ""})
                return s, lease, skipped(reason, **{**_subject_fields(subject), **detail})
            case core.Defer(reason=reason, seconds=seconds, detail=detail):
                raise Deferred(reason, seconds, **detail)
        raise AssertionError(f"unknown step {step!r}")

    def _take_lease(self, key: str, seconds: float, s: Situation) -> Lease:
        """The thread's lease, waiting up to ``LEASE_WAIT_SECONDS`` for a holder (bounded by the time left).

        Why wait here rather than only send the record back: a burst's later
        notifications meet the holder of the first one, whose reply usually
        covers them seconds later.
        """
        wait = max(0.0, min(self._lease_wait_seconds, s.time_left - self._policy.lease_seconds))
        deadline = self._monotonic() + wait
        while True:
            try:
                return self._store.take_lease(key, int(seconds * 1000))
            except ThreadBusyError as busy:
                if self._monotonic() + LEASE_POLL_SECONDS > deadline:
                    raise Deferred(
                        DeferReason.THREAD_BUSY, busy.held_for_seconds + 1, thread_key=key
                    ) from None
                self._sleep(LEASE_POLL_SECONDS)

    def _ask_agent(self, conversation: Any) -> Reply | NoReply | Handoff | AgentFailed:
        """The agent's outcome within ``AGENT_TIMEOUT_SECONDS``; anything else is a retry or a refusal.

        Every call is counted (``AgentAsked``): the share of them that fail, ``RecordDeferred{reason=
        agent_failed}`` over it, is what the agent-failing alarm reads (a Bedrock model throttled, down
        or slower than the timeout).
        """
        count("AgentAsked")
        result: dict[str, Any] = {}

        def call() -> None:
            try:
                result["outcome"] = self._agent(conversation)
            except BaseException as failure:
                result["failure"] = failure

        worker = threading.Thread(target=call, name="replyonce-agent", daemon=True)
        worker.start()
        worker.join(self._policy.agent_timeout_seconds)
        if worker.is_alive():
            # Abandoned, never stored: what it returns later is dropped with its thread.
            raise Deferred(DeferReason.AGENT_FAILED, None, detail="agent outlived AGENT_TIMEOUT_SECONDS")
        failure = result.get("failure")
        # An agent's exception text may quote the customer (an address, a line of the mail): redacted
        # before it reaches a log line, a skip's detail or the ledger's reason.
        if isinstance(failure, AgentRejected):
            refusal = redact_addresses(str(failure))
            logger.error("the agent rejected the burst; not retried", extra={"detail": refusal})
            return AgentFailed(refusal)
        if failure is not None:
            detail = redact_addresses(f"{type(failure).__name__}: {failure}")
            logger.error(
                "the agent failed; the record will be retried",
                extra={"detail": detail, "traceback": redact_addresses("".join(format_exception(failure)))},
            )
            raise Deferred(DeferReason.AGENT_FAILED, None, detail=detail)
        outcome = result.get("outcome")
        if not isinstance(outcome, Reply | NoReply | Handoff):
            raise Deferred(
                DeferReason.AGENT_FAILED,
                None,
                detail=f"the agent returned {type(outcome).__name__}, not Reply, NoReply or Handoff",
            )
        logger.debug("agent answered", extra={"outcome": type(outcome).__name__})
        return outcome

    def _attempt(self, grant_id: str, intent: Any) -> Answer:
        if intent.kind is IntentKind.DRAFT:
            answer = self._mailbox.create_draft(grant_id, intent.request)
        else:
            key = idempotency_key(grant_id, intent.target_id, intent.generation, intent.key_scheme)
            answer = self._mailbox.send(grant_id, intent.request, key)
        logger.debug(
            "attempt answered",
            extra={
                "intent_id": intent.id,
                "generation": intent.generation,
                "status": answer.status,
                "error_type": answer.error_type,
                "replayed": answer.replayed,
            },
        )
        if (answer.status is not None and answer.status >= 400) or answer.status is None:
            count_by("NylasAnswer", "status", str(answer.status or "none"))
        return answer

    def _settle(self, step: core.Settle, lease: Lease, subject: Subject) -> dict[str, Any]:
        settlement = step.settlement
        grant_id = subject.grant_id
        if step.reconcile_after is not None and settlement.intent is not None:
            # Scheduled before the settlement is written: if this fails, the record retries the same key.
            self._reconcile_later(
                ReconcileDue(grant_id, settlement.intent.thread_id, settlement.intent.id),
                step.reconcile_after,
            )
        held = self._store.settle(lease, settlement, grant_id)
        if not held and not settlement.writes_without_lease:
            # Nothing was written (a shadow settlement): the record comes back and finds the thread as
            # the new holder left it, so its messages are recorded once, by whoever settles them.
            raise Deferred(DeferReason.LEASE_LOST, 0, thread_key=lease.key)
        if not held:
            logger.warning(
                "thread lease was lost before the reply was recorded; recorded without it",
                extra={"thread_key": lease.key},
            )
            count("LeaseLost")
        if step.metric and step.metric_status:
            count_by(step.metric, "status", step.metric_status)
        elif step.metric:
            count(step.metric)
        if len(settlement.covered) > 1 and settlement.status in (Status.REPLIED, Status.QUEUED):
            count("BurstCoalesced", len(settlement.covered) - 1)
        if step.move_to:
            self._move(grant_id, settlement.covered)
        fields = _subject_fields(subject)
        if step.skip is not None:
            return skipped(step.skip, **fields, covered=list(settlement.covered), detail=settlement.reason)
        return self._announce(step, fields)

    def _move(self, grant_id: str, message_ids: tuple[str, ...]) -> None:
        """File handed-off messages in ``HANDOFF_FOLDER``: best effort, after the hand-off is settled."""
        folder = self._grant_folders(grant_id)[1]
        if not folder:
            return
        for message_id in message_ids:
            try:
                self._mailbox.move(grant_id, message_id, folder)
            except Exception as exc:
                logger.warning(
                    "handed-off message not moved to HANDOFF_FOLDER",
                    extra={"message_id": message_id, "detail": str(exc)},
                )
                count("HandoffMoveFailed")

    def _announce(self, step: core.Settle, fields: Mapping[str, Any]) -> dict[str, Any]:
        settlement = step.settlement
        intent = settlement.intent
        request = intent.payload if intent is not None else {}
        message = {
            Status.REPLIED: "reply sent",
            Status.QUEUED: "reply queued by Nylas",
            Status.DRAFTED: "reply drafted for review",
            Status.SHADOWED: "shadow mode: reply recorded, nothing sent",
        }[settlement.status]
        to = [str(r.get("email", "")) for r in request.get("to", [])]
        intent_id = intent.id if intent is not None else ""
        # Logs are kept LogRetentionDays (90 by default) and not encrypted with a key of ours: no
        # customer's address or subject at INFO. The address's digest correlates a customer's lines
        # (replyonce.redaction.address_digest); the real values only at DEBUG, for a developer.
        logger.info(
            message,
            extra={
                **fields,
                "replied_to": settlement.replied_to,
                "reply_message_id": settlement.reply_message_id,
                "covered": list(settlement.covered),
                "to_digest": [address_digest(address) for address in to],
                "generation": intent.generation if intent is not None else 0,
                "intent_id": intent_id,
            },
        )
        logger.debug(
            "reply addressed",
            extra={"intent_id": intent_id, "to": to, "subject": request.get("subject", "")},
        )
        if settlement.status is Status.REPLIED:
            count("ReplySent")
        return {
            "outcome": settlement.status.value,
            "replied_to": settlement.replied_to,
            "reply_message_id": settlement.reply_message_id,
            "covered": list(settlement.covered),
        }


def _subject_fields(subject: Subject) -> dict[str, Any]:
    fields = {"grant_id": subject.grant_id, "thread_id": subject.thread_id}
    message_id = getattr(subject, "message_id", "")
    if message_id:
        fields["message_id"] = message_id
    intent_id = getattr(subject, "intent_id", "")
    if intent_id:
        fields["intent_id"] = intent_id
    return fields


def _describe(step: core.Step) -> Mapping[str, Any]:
    """A step's log-safe fields for the debug line (no bodies, no addresses)."""
    match step:
        case core.Skip(reason=reason):
            return {"reason": reason.value}
        case core.Defer(reason=reason, seconds=seconds):
            return {"reason": reason.value, "seconds": seconds}
        case core.Store(intent=intent) | core.Attempt(intent=intent):
            return {"intent_id": intent.id, "generation": intent.generation, "covered": list(intent.covered)}
        case core.AskAgent(burst=burst):
            # The plan: the burst (coverage left these uncovered), its target, its recipients.
            return {
                "to_answer": list(burst.covered),
                "target": burst.target.get("id"),
                "recipients": [r.get("email") for r in burst.recipients],
            }
        case core.Reserve(reservations=reservations, intent_id=intent_id):
            first = reservations[0]
            return {
                "intent_id": intent_id,
                "at": first.at,
                "budget": first.budget,
                "recipients": len(reservations),
            }
        case core.Settle(settlement=settlement):
            return {"status": settlement.status.value, "covered": list(settlement.covered)}
        case core.RecordShadow(record=record):
            return {"record_id": record.record_id, "outcome": record.outcome.value}
        case core.ReadThread(page_token=token):
            return {"page_token": bool(token)}
    return {}
