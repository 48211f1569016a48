"""The replier's shell: carries out what ``replyonce.core`` decides, through the two ports, step by step.

Each turn of the loop asks :func:`replyonce.core.next_step` what to do with
everything known so far, does exactly that in one port call (one read, one
write, one call of the agent), hands what the call returned — failures
included, as the core's result values — to :func:`replyonce.core.learn`,
and asks again, until the core settles the record, skips it with a reason,
or defers it back to the queue. No rule lives here: what is decided here is
only *how* (calling the agent within its timeout on a thread of its own,
sleeping for the wait the core asked for, caching per container what does
not change: the agents' grants, the grant's folders), and what is logged and
counted.

This runs inside Powertools idempotency (``replyonce.shell.consumer``), so it sees
each notification once unless it raises — and :class:`~replyonce.exceptions.Deferred`,
raised for the core's :class:`~replyonce.core.Defer` and only for it, is how
every "not now" asks for a retry (invariant 2: a crash before the send is
retried, never recorded as handled).
"""

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from replyonce import core
from replyonce.adapters.agents import Agent
from replyonce.agent import Reply
from replyonce.answers import Answer
from replyonce.core import Situation
from replyonce.exceptions import (
    Deferred,
    GrantLifeRefused,
    NylasPermanentError,
    NylasRetryableError,
    ReplyFileLost,
    StateContended,
    ThreadBusyError,
)
from replyonce.jobs import Job, ReconcileDue
from replyonce.keys import idempotency_key
from replyonce.observability import count, count_by, logger, skipped
from replyonce.outgoing import digest, references
from replyonce.policy import Policy, policy_for
from replyonce.ports import Folder, Grant, Mailbox, RegionFence, ReplyFiles, StateStore
from replyonce.reasons import DeferReason, SkipReason
from replyonce.redaction import address_digest
from replyonce.rules.attachments import AttachmentReader, readable
from replyonce.rules.coverage import INTENT_KEY
from replyonce.shell.grants import GrantDirectory
from replyonce.state import IntentKind, Lease

# A record takes few steps (a first reply: ~9), besides two per look at a busy lease; a loop longer
# than that is a bug, not a thread.
_MAX_STEPS = 64

SLOWEST_STEP_KEYS = ("slowest_step", "slowest_step_seconds")
"""The log keys naming a record's slowest step and its seconds (``Replier._timed_step``)."""

ReconcileLater = Callable[[ReconcileDue, int], None]
"""Schedules our own check of a queued reply, ``seconds`` from now (an SQS message with a delay)."""


def _asked(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``'s value, or the failure it raised as a value: what every port call returns."""
    try:
        return call(*args)
    except NylasRetryableError as failed:
        after = failed.retry_after_seconds
        return core.NylasUnavailable(failed.status, failed.error_type, after, str(failed))
    except StateContended as contended:
        return core.StoreContended(contended.kind, str(contended))


def deferred(step: core.Defer) -> Deferred:
    """The exception that gives the record back to the queue, as the core's deferral says."""
    return Deferred(step.reason, step.seconds, hand_over=step.hand_over, **step.detail)


class Replier:
    """Turns one record into at most one reply, as the core decides.

    Parameters
    ----------
    policy:
        The pure configuration (``replyonce.policy.policy_of``).
    store, mailbox:
        The two ports.
    agent:
        The team's agent (``REPLY_AGENT``), called at most once per burst and record.
    reconcile_later:
        Schedules the check of a queued (``202``) reply.
    lease_wait_seconds:
        How long a record waits in-process for a busy thread (``lease_wait_seconds``): the policy's
        ``lease_wait_seconds`` for this replier.
    clock:
        The wall clock the store times leases with (the lease's end bounds every step).
    fence:
        The active-Region record (``ACTIVE_REGION_TABLE``); required when ``policy.fence_region`` is set.
    monotonic, sleep:
        Injectable clock and sleep: Nylas' time is advanced by the monotonic time since its last answer,
        and a wait for a busy lease sleeps.
    reply_files:
        Where a reply's files are kept (``REPLY_FILES_BUCKET``): written before the intent naming them
        is stored, read back for every attempt of a later record.
    attachment_max_bytes, attachments_max_bytes_per_record:
        The caps on the customer's files the agent reads (``attachment_max_bytes``,
        ``attachments_max_bytes_per_record``).
    grants:
        Each grant's settings and agent (the grant registry over the deployment's,
        ``replyonce.shell.grants``): the policy the core decides a record with is its grant's.
        ``None``: every record runs with ``policy`` and ``agent``.
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
        reply_files: ReplyFiles | None = None,
        attachment_max_bytes: int = 10_000_000,
        attachments_max_bytes_per_record: int = 25_000_000,
        grants: GrantDirectory | None = None,
    ) -> None:
        if policy.fence_region and fence is None:
            raise ValueError("a fenced policy (fence_region) needs the active-Region record (fence)")
        self._policy = replace(policy, lease_wait_seconds=lease_wait_seconds)
        self._fence = fence
        self._store = store
        self._mailbox = mailbox
        self._agent = agent
        self._reconcile_later = reconcile_later
        self._clock = clock
        self._monotonic = monotonic
        self._sleep = sleep
        self._reply_files = reply_files
        self._attachment_max_bytes = attachment_max_bytes
        self._attachments_max_bytes_per_record = attachments_max_bytes_per_record
        self._grants = grants
        # Per container: what Nylas says of the grants does not change between records.
        self._described: dict[str, Grant] = {}  # the agent grants Nylas described, kept as they come
        # Each grant's folders, once listed, by the hand-off folder it was listed for ("" in shadow mode,
        # which creates none): a grant whose record changes its folder or mode has it made then.
        self._folders: dict[tuple[str, str], tuple[Folder, ...]] = {}
        # What one record's run knows, per thread: the consumer runs a batch's threads at once.
        self._record = threading.local()
        # The container's knowledge is filled once, by the first thread that needs it.
        self._container_lock = threading.Lock()
        # Each step, carried out: one port call (or the agent, or a wait), its result returned.
        self._carry: dict[type, Callable[[Any, Situation], Any]] = {
            core.LookUpAgents: lambda step, s: core.GrantsDescribed(self._described_grants(s.policy)),
            core.LookUpFolders: lambda step, s: self._grant_folders(step.grant_id, s.policy),
            core.ReadActiveRegion: lambda step, s: self._fence_record(),
            core.ReadLedger: lambda step, s: self._store.read_ledger(step.grant_id, step.message_id),
            core.FetchMessage: lambda step, s: self._mailbox.message(step.grant_id, step.message_id),
            core.TakeLease: lambda step, s: self._take_lease(step),
            core.WaitForLease: lambda step, s: self._wait_for_lease(step),
            core.ReadThread: lambda step, s: self._timed(
                self._mailbox.thread_page(step.grant_id, step.thread_id, step.limit, step.page_token)
            ),
            core.ReadDrafts: lambda step, s: self._mailbox.drafts_in_thread(step.grant_id, step.thread_id),
            core.ClaimEmails: lambda step, s: self._claims(step),
            core.LookBeforeSend: lambda step, s: self._timed(
                self._mailbox.thread_page(step.grant_id, step.thread_id, step.limit, None)
            ),
            core.Search: lambda step, s: self._searched(step),
            core.Reserve: lambda step, s: [self._store.reserve(r, step.intent_id) for r in step.reservations],
            core.CountAgentCall: lambda step, s: self._store.count_agent_call(
                step.grant_id, step.day, step.intent_id, step.cap
            ),
            core.AskAgent: lambda step, s: self._ask_agent(step.conversation),
            core.Store: lambda step, s: self._store_intent(step, s),
            core.RecordShadow: lambda step, s: self._store.record_shadow(step.record),
            core.Attempt: lambda step, s: self._attempt(step.grant_id, step.intent),
            core.Settle: lambda step, s: self._settle(step, s),
            core.FileHandedOff: lambda step, s: self._move(step.grant_id, step.message_ids, step.folder_id),
            core.ReleaseLease: lambda step, s: self._store.release(self._lease_of(s, step)),
            core.Skip: lambda step, s: _skipped(step, s.job),
            core.FinishSkipped: lambda step, s: _skipped_settled(step, s.job),
            core.Finish: lambda step, s: _announce(step, s.job),
        }

    # ---- per-container knowledge --------------------------------------------------------------------------

    def _described_grants(self, policy: Policy) -> tuple[Grant, ...]:
        """The agent grants as far as Nylas described them; only the grants not described yet are asked.

        A configured grant Nylas refused is logged as an error and counted, not silently ignored: a
        mistyped ``AGENT_GRANT_IDS`` would otherwise answer nothing for it without a word. It is not
        kept (a 400 or 404 at a cold start may be a moment's hiccup): asked again on the next record.
        """
        with self._container_lock:
            for grant_id in policy.agent_grant_ids:
                if grant_id not in self._described:
                    self._describe(grant_id)
            return tuple(self._described[g] for g in policy.agent_grant_ids if g in self._described)

    def _describe(self, grant_id: str) -> None:
        try:
            self._described[grant_id] = self._mailbox.grant(grant_id)
        except NylasPermanentError as unknown:
            logger.error(
                "Nylas refused the look-up of a grant of AGENT_GRANT_IDS; its mail waits, and the "
                "grant is looked up again on the next record (a 404 that persists is a mistyped id)",
                extra={"grant_id": grant_id, "status": unknown.status},
            )
            count("AgentGrantUnknown")

    def _grant_folders(self, grant_id: str, policy: Policy) -> core.FoldersListed | core.FoldersRefused:
        """The grant's folders, listed once per container (a refused listing is asked again next record),
        with ``HANDOFF_FOLDER`` created when the grant has none of that name."""
        with self._container_lock:
            listed_for = (grant_id, "" if policy.shadow_mode else policy.handoff_folder)
            if listed_for in self._folders:
                return core.FoldersListed(self._folders[listed_for])
            try:
                folders = tuple(self._mailbox.folders(grant_id))
            except NylasPermanentError as refused:
                logger.error(
                    "cannot list the grant's folders; for this record junk and trash are recognised by "
                    "name only, and the folders are listed again on the next record",
                    extra={"grant_id": grant_id, "status": refused.status},
                )
                count("FoldersUnavailable")
                return core.FoldersRefused(refused.status)
            made = self._handoff_folder_made(grant_id, folders, policy)
            if made is not None:
                # Kept for the container only once the hand-off folder is there (or cannot be made).
                self._folders[listed_for] = folders + made
            return core.FoldersListed(folders + (made or ()))

    def _handoff_folder_made(
        self, grant_id: str, folders: tuple[Folder, ...], policy: Policy
    ) -> tuple[Folder, ...] | None:
        """The ``HANDOFF_FOLDER`` created in a grant that has none of that name (invariant 7: the hand-off
        folder exists by default): ``()`` when it exists or Nylas refuses it for good, ``None`` when the
        creation failed for now (asked again on the next record).

        Why the replier makes it: a hand-off nobody sees is a silent "no". A grant whose folder cannot
        be created (a scope, a provider's refusal) is logged and counted; its hand-offs are still
        settled, logged and counted, and the messages stay where they are.
        """
        wanted = policy.handoff_folder
        if not wanted or policy.shadow_mode or core.handoff_folder_id(folders, wanted):
            # Shadow mode (and a replay) writes nothing to the mailbox, a folder included.
            return ()
        try:
            made = self._mailbox.create_folder(grant_id, wanted)
        except NylasPermanentError as refused:
            # Another container may have made it a moment ago (a duplicate name is refused): look again.
            try:
                again = core.handoff_folder_id(tuple(self._mailbox.folders(grant_id)), wanted)
            except NylasPermanentError:
                again = ""
            if again:
                return (Folder(again, wanted),)
            logger.error(
                "Nylas refused to create HANDOFF_FOLDER in the grant; handed-off mail is logged and "
                "counted, and stays where it is",
                extra={"grant_id": grant_id, "handoff_folder": wanted, "status": refused.status},
            )
            count("HandoffFolderUnavailable")
            return ()
        except NylasRetryableError as failed:
            logger.warning(
                "could not create HANDOFF_FOLDER now; tried again on the next record",
                extra={"grant_id": grant_id, "handoff_folder": wanted, "detail": str(failed)},
            )
            return None
        logger.info(
            "HANDOFF_FOLDER created in the grant", extra={"grant_id": grant_id, "handoff_folder": wanted}
        )
        return (made,)

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

    def _timed(self, answer: Any) -> Any:
        """``answer`` (a page, an attempt's answer), its Nylas time kept as the record's clock."""
        self._saw_nylas_time(getattr(answer, "nylas_time", None))
        return answer

    # ---- one record ---------------------------------------------------------------------------------------

    def handle(
        self,
        job: Job,
        *,
        remaining_seconds: Callable[[], float],
        hold_record: Callable[[float], None] | None = None,
        receives: int = 1,
        first_received_at: int = 0,
    ) -> dict[str, Any]:
        """Carry ``job`` to its end; return its outcome (stored by Powertools idempotency).

        ``receives`` and ``first_received_at`` are the queue's word on the record (how often it was
        delivered, and when first, in epoch seconds): what the core hands off on and waits from.

        ``hold_record(seconds)`` is called right before the thread's lease is first taken: the record
        is then invisible for as long as this worker may hold the lease, and no longer — if the worker
        dies, its record comes back when the lease can have expired, not after the queue's
        visibility timeout.

        Raises
        ------
        Deferred
            Not now: the core deferred the record (the reason says why).
        botocore errors, anything unexpected
            The record is retried with backoff.
        """
        # Nylas' time is per record: an estimate carried over from an earlier one would only drift.
        self._record.nylas_time = None
        self._record.hold = hold_record
        # The reply's files this record holds (kept in the bucket already), by SHA-256.
        self._record.files = {}
        # The intent this record's last store checked the grant's life with (its send needs no read).
        self._record.life_checked = ""
        policy, self._record.agent = self._policy, self._agent
        if self._grants is not None and core.is_our_echo(job):
            # Our own reply's echo is skipped by its payload alone, whatever its grant's state: a paused
            # grant's echoes of what it sent before the pause are not held for hours, then dead-lettered.
            policy = replace(policy, agent_grant_ids=self._grants.agent_grant_ids())
        elif self._grants is not None:
            # The grant's own settings (its record in the grant registry, else the deployment's); a paused
            # grant, or one whose record or agent cannot be used, raises Deferred here: nothing is read.
            chosen = self._grants.choose(job.grant_id)
            if chosen.deleted:
                # Nylas deleted the grant (grant.deleted): nothing is read or sent for it any more.
                return skipped(SkipReason.GRANT_DELETED, **_job_fields(job))
            if chosen.settings is None:
                policy = replace(policy, agent_grant_ids=chosen.agent_grant_ids)
            else:
                policy = policy_for(policy, chosen.settings, chosen.agent_grant_ids)
                self._record.agent = chosen.agent
        s = Situation(job, policy, receives=receives, first_received_at=first_received_at)
        self._record.slowest_seconds = 0.0
        logger.thread_safe_remove_keys(SLOWEST_STEP_KEYS)
        # Two steps per look at a busy lease (the wait, the look) besides the record's own.
        bound = _MAX_STEPS + 2 * math.ceil(self._policy.lease_wait_seconds / core.LEASE_POLL_SECONDS)
        try:
            for _ in range(bound):
                now, left = self._now(), self._time_left(core.lease_of(s.phase), remaining_seconds)
                s = replace(s, now=now, time_left=left, clock=self._monotonic())
                step = core.next_step(s)
                logger.debug("next step", extra={"step": type(step).__name__, "detail": _describe(step)})
                if isinstance(step, core.Defer):
                    raise deferred(step)
                started = self._monotonic()
                result = _asked(self._carry[type(step)], step, s)
                self._timed_step(step, self._monotonic() - started)
                if isinstance(step, core.Skip | core.FinishSkipped | core.Finish):
                    return result
                s = core.learn(s, step, result)
                for notice in s.notices:
                    _notice(notice)
            raise RuntimeError(f"record took more than {bound} steps: a bug in replyonce.core")
        except Deferred:
            raise
        except BaseException:
            # A crash or a bug mid-record: the lease is freed for the next holder all the same.
            self._free_after_failure(s)
            raise

    def _timed_step(self, step: core.Step, seconds: float) -> None:
        """Name the record's slowest step so far on each of its later log lines (``SLOWEST_STEP_KEYS``).

        Why: the functions are traced by the Lambda service alone (no X-Ray SDK, so no subsegment per
        call); an invocation that took minutes must still say which call held the time — the send, the
        thread read, the agent, a lease wait — on the outcome or deferral line it ends with.
        """
        if seconds > self._record.slowest_seconds:
            self._record.slowest_seconds = seconds
            logger.thread_safe_append_keys(
                slowest_step=type(step).__name__, slowest_step_seconds=round(seconds, 3)
            )

    def _free_after_failure(self, s: Situation) -> None:
        """Free the lease of a record that failed unexpectedly (one the core settled or freed is not ours)."""
        lease = core.lease_of(s.phase)
        if lease is None or lease.released:
            return
        released = _asked(self._store.release, lease)
        failed = core.Defer(DeferReason.UNEXPECTED)  # the end: the failure itself, raised again below
        for notice in core.learn(s, core.ReleaseLease(lease.key, failed), released).notices:
            _notice(notice)

    def _time_left(self, lease: Lease | None, remaining_seconds: Callable[[], float]) -> float:
        left = remaining_seconds()
        if lease is not None and not lease.released:
            left = min(left, lease.expires_at_ms / 1000 - self._clock())
        return left

    def _lease_of(self, s: Situation, step: core.Step) -> Lease:
        """The lease the core holds for ``step``, with the thread state it knows (what the store's writes
        rely on)."""
        held = core.holding(s.phase, step)
        held.lease.state = held.state
        return held.lease

    def _fence_record(self) -> Any:
        assert self._fence is not None
        return self._fence.read()

    def _take_lease(self, step: core.TakeLease) -> Lease | core.ThreadBusy:
        """The record held invisible for as long as this worker may hold the lease, then the lease."""
        hold = self._record.hold
        if hold is not None:
            hold(self._policy.lease_wait_seconds + step.duration_seconds + self._policy.margin_seconds)
        return self._lease(step)

    def _wait_for_lease(self, step: core.WaitForLease) -> Lease | core.ThreadBusy:
        """The wait the core asked for (another worker holds the thread), then a look at the lease: taken
        when free, else the holder's time left, as a refused take says it.

        Why look before taking (issue 46): DynamoDB bills a refused conditional write as a write, and a
        record polls every ``LEASE_POLL_SECONDS`` while the holder works; a read costs one read unit.
        """
        self._sleep(step.seconds)
        held_for = self._store.lease_held_for_seconds(step.thread_key)
        if held_for:
            return core.ThreadBusy(held_for)
        return self._lease(step)

    def _lease(self, step: core.TakeLease | core.WaitForLease) -> Lease | core.ThreadBusy:
        try:
            return self._store.take_lease(
                step.thread_key, int(step.duration_seconds * 1000), step.table_began_ms
            )
        except ThreadBusyError as busy:
            return core.ThreadBusy(busy.held_for_seconds)

    def _claims(self, step: core.ClaimEmails) -> dict[str, str]:
        return {email: self._store.claim_email(email, step.grant_id) for email in step.email_ids}

    def _searched(self, step: core.Search) -> core.Searched:
        found = self._timed(self._mailbox.search(step.grant_id, step.kind, INTENT_KEY, step.intent_id))
        return core.Searched(found, self._now())

    def _ask_agent(self, conversation: Any) -> core.AgentReturned | core.AgentRaised | core.AgentOutlived:
        """What the agent did within ``AGENT_TIMEOUT_SECONDS``, as a value (the core decides what it means).

        Every call is counted (``AgentAsked``): the share of them that fail, ``RecordDeferred{reason=
        agent_failed}`` over it, is what the agent-failing alarm reads (a Bedrock model throttled, down
        or slower than the timeout).
        """
        count("AgentAsked")
        agent = self._record.agent
        result: dict[str, Any] = {}
        # The customer's files read within the agent's own time: no read outlives the call.
        conversation = readable(
            conversation,
            AttachmentReader(
                self._mailbox.download_attachment,
                conversation.agent.grant_id,
                max_bytes=self._attachment_max_bytes,
                max_record_bytes=self._attachments_max_bytes_per_record,
                deadline=self._monotonic() + self._policy.agent_timeout_seconds,
                monotonic=self._monotonic,
            ),
        )

        def call() -> None:
            try:
                result["outcome"] = agent(conversation)
            except BaseException as failure:
                result["failure"] = failure

        worker = threading.Thread(target=call, name="replyonce-agent", daemon=True)
        worker.start()
        worker.join(self._policy.agent_timeout_seconds)
        if worker.is_alive():
            return core.AgentOutlived()
        if "failure" in result:
            return core.AgentRaised(result["failure"])
        logger.debug("agent answered", extra={"outcome": type(result.get("outcome")).__name__})
        return core.AgentReturned(result.get("outcome"))

    def _store_intent(self, step: core.Store, s: Situation) -> Any:
        """Keep the reply's files in the bucket (the first time this record stores it), then the intent.

        Why first: an intent is replayed after any crash, and the intent must never name a file that
        is not there. The files come from the agent's ``Reply`` this record holds; an intent stored by
        an earlier record had its files kept then.
        """
        named = {ref["sha256"] for ref in references(step.intent.payload)}
        outcome = core.answer_of(s.phase)
        if named and isinstance(outcome, Reply):
            for file in outcome.attachments:
                file_digest = digest(bytes(file.content))
                if file_digest in named and file_digest not in self._record.files:
                    self._files().put(step.intent.id, bytes(file.content), file.content_type)
                    self._record.files[file_digest] = bytes(file.content)
        lease = self._lease_of(s, step)
        if not (step.attempt and self._grants is not None and self._grants.knows_lives):
            return self._store.store_intent(lease, step.intent)
        # The send follows: the grant's life is checked in the store's own write (issue 46), where it was
        # a strongly consistent read of its own right before the send (issue 42).
        grant_id = s.job.grant_id
        try:
            stored = self._store.store_intent(lease, step.intent, grant_alive=grant_id)
        except GrantLifeRefused:
            # Deleted: deferred grant_deleted (nothing stored). A life the check could not read as alive
            # but not deleted: stored without the check, and read before the send as before.
            self._grants.refuse_if_deleted(grant_id)
            return self._store.store_intent(lease, step.intent)
        if stored is True:
            self._record.life_checked = step.intent.id
        return stored

    def _files(self) -> ReplyFiles:
        if self._reply_files is None:
            raise ReplyFileLost("a reply with files, and no REPLY_FILES_BUCKET to keep them in")
        return self._reply_files

    def _files_of(self, intent: Any) -> dict[str, bytes]:
        """The bytes of every file the intent names: this record's, else read back from the bucket."""
        files: dict[str, bytes] = {}
        for ref in references(intent.payload):
            file_digest = ref["sha256"]
            if file_digest not in self._record.files:
                self._record.files[file_digest] = self._files().get(intent.id, file_digest)
            files[file_digest] = self._record.files[file_digest]
        return files

    def _attempt(self, grant_id: str, intent: Any) -> Answer:
        checked, self._record.life_checked = self._record.life_checked, ""
        if self._grants is not None and checked != intent.id:
            # A grant Nylas deleted after this record began sends nothing (a strongly consistent read),
            # unless the write that stored this intent, right before, checked the grant's life.
            self._grants.refuse_if_deleted(grant_id)
        # Files, when the intent names any, go as the port's last argument (a reply without is as before).
        files = (self._files_of(intent),) if references(intent.payload) else ()
        if intent.kind is IntentKind.DRAFT:
            answer = self._mailbox.create_draft(grant_id, intent.request, *files)
        else:
            key = idempotency_key(grant_id, intent.target_id, intent.generation, intent.key_scheme)
            answer = self._mailbox.send(grant_id, intent.request, key, *files)
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
        return self._timed(answer)

    def _settle(self, step: core.Settle, s: Situation) -> bool:
        """Write the settlement (after scheduling the reconcile it asks for); whether the lease held."""
        settlement = step.settlement
        if step.reconcile_after is not None and settlement.intent is not None:
            # Scheduled before the settlement is written: if this fails, the record retries the same key.
            self._reconcile_later(
                ReconcileDue(s.job.grant_id, settlement.intent.thread_id, settlement.intent.id),
                step.reconcile_after,
            )
        return self._store.settle(self._lease_of(s, step), settlement, s.job.grant_id)

    def _move(self, grant_id: str, message_ids: tuple[str, ...], folder: str) -> None:
        """File handed-off messages in ``HANDOFF_FOLDER``, once the hand-off is settled.

        A move Nylas refuses for good is logged and counted (``HandoffMoveFailed``); one that failed
        for now raises, so the record is tried again, and its redelivery, finding the message settled
        ``handed_off``, files it again (the arrival flow's ledger check): a hand-off the mailbox does not
        show is a silent "no" (invariant 7).
        """
        for message_id in message_ids:
            try:
                self._mailbox.move(grant_id, message_id, folder)
            except NylasPermanentError as refused:
                logger.warning(
                    "handed-off message not moved to HANDOFF_FOLDER",
                    extra={"message_id": message_id, "status": refused.status, "detail": str(refused)},
                )
                count("HandoffMoveFailed")


def _skipped(step: core.Skip, job: Job) -> dict[str, Any]:
    """The record's outcome: a skip with its reason (logged and counted)."""
    if step.unsent_reply:
        # Dropped after the agent answered (a person answered meanwhile): its text, for a developer
        # only, never at INFO (it is about a customer).
        logger.debug("the agent's reply, not sent", extra={"text": step.unsent_reply})
    return skipped(step.reason, **{**_job_fields(job), **step.detail})


def _skipped_settled(step: core.FinishSkipped, job: Job) -> dict[str, Any]:
    """The record's outcome: a settlement that is a skip (declined, handed off, failed), counted."""
    for notice in step.notices:
        _notice(notice)
    settlement = step.settle.settlement
    fields = _job_fields(job)
    if step.settle.move_to:
        fields["handed_off"] = True
    return skipped(step.reason, **fields, covered=list(settlement.covered), detail=settlement.reason)


def _announce(step: core.Finish, job: Job) -> dict[str, Any]:
    """The record's outcome: a reply's settlement, said at INFO (no customer's address) and counted."""
    for notice in step.notices:
        _notice(notice)
    settlement = step.settle.settlement
    intent = settlement.intent
    request = intent.payload if intent is not None else {}
    to = [str(r.get("email", "")) for r in request.get("to", [])]
    intent_id = intent.id if intent is not None else ""
    # Logs are kept LogRetentionDays (90 by default) and not encrypted with a key of ours: no
    # customer's address or subject at INFO. The address's digest correlates a customer's lines
    # (replyonce.redaction.address_digest); the real values only at DEBUG, for a developer.
    logger.info(
        step.said,
        extra={
            **_job_fields(job),
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
    return {
        "outcome": settlement.status.value,
        "replied_to": settlement.replied_to,
        "reply_message_id": settlement.reply_message_id,
        "covered": list(settlement.covered),
    }


def _notice(notice: core.Notice) -> None:
    """Log and count what the core noticed, as it says."""
    if notice.message:
        getattr(logger, notice.level)(notice.message, extra=dict(notice.fields))
    if notice.metric and notice.metric_status:
        count_by(notice.metric, "status", notice.metric_status)
    elif notice.metric:
        count(notice.metric, notice.value)


def _job_fields(job: Job) -> dict[str, Any]:
    fields = {"grant_id": job.grant_id, "thread_id": job.thread_id}
    message_id = getattr(job, "message_id", "")
    if message_id:
        fields["message_id"] = message_id
    intent_id = getattr(job, "intent_id", "")
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
                "target": burst.target.id,
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
        case core.CountAgentCall(day=day, intent_id=intent_id, cap=cap):
            return {"intent_id": intent_id, "day": day, "daily_agent_call_cap": cap}
        case core.Settle(settlement=settlement):
            return {"status": settlement.status.value, "covered": list(settlement.covered)}
        case core.RecordShadow(record=record):
            return {"record_id": record.record_id, "outcome": record.outcome.value}
        case core.ReadThread(page_token=token):
            return {"page_token": bool(token)}
    return {}
