"""Run a chaos experiment: stack + fault proxies + worker processes + workload → history → verdict."""

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import boto3
import requests

from chaos.faults import SEND, FaultPlan
from chaos.grant_checks import GRANT_CHECKS, GrantHistory, check_grants, per_grant, unowed_messages
from chaos.grants import GrantFleet
from chaos.mutants import ALL_MUTANTS as MUTANTS
from chaos.proxy import FaultProxy, Rule
from chaos.wiretap import WireTap
from chaos.workload import (
    AGENT_GRANTS,
    HANDOFF_FOLDER,
    HOSTILE_KNOBS,
    TRUSTED_LISTS,
    Workload,
    WorkloadSettings,
)
from devstack.console import make_console
from devstack.containers import load_handler
from devstack.embedded_aws import EPHEMERAL
from devstack.events import HUMAN_EMAIL, HUMAN_GRANT_ID
from devstack.gateway import ApiGatewayStandIn
from devstack.invariants import (
    INVARIANTS,
    History,
    check,
    leases_lost,
    sends_replayed,
    skips_by_reason,
)
from devstack.nylas import NylasEmulator
from devstack.nylas.mailbox import RECEIVING_AUTHSERV
from devstack.stack import LogCollector
from devstack.template import (
    LOCAL_API_KEY,
    LOCAL_WEBHOOK_SECRET,
    create_resources,
    create_restored_state_table,
    put_in_service,
)
from devstack.webhook_sender import WebhookSender
from ops import backfill, redrive
from ops import grants as operator_grants
from ops.nylas_admin import NylasAdmin
from ops.progress import progress_bar
from ops.restore_state import restore_state
from replyonce.adapters.grant_registry import read_life
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.config import ReplierSettings
from replyonce.grants import defaults_of

ROOT = Path(__file__).resolve().parent.parent
AUTOMATIC_EXCHANGES = 2  # max_automatic_exchanges of every run
# REPLY_BUDGET_PER_RECIPIENT_PER_HOUR of every run: below the spellings one inbox writes from
# (chaos/workload.py, SPELLINGS), above what any other correspondent of a run gets.
RECIPIENT_BUDGET = 4
# Issue 42: the registry's cache age in the run (the template's 60 s, scaled), and a paused grant's retry.
REGISTRY_MAX_AGE_SECONDS = 6
PAUSED_RETRY_SECONDS = 5


@dataclass
class ChaosSettings:
    seed: int = 1
    notifications: int = 300
    workers: int = 3
    function_timeout_seconds: float = 6.0
    fault_probability: float = 0.02
    clock_skew_seconds: float = 0.0
    faults: frozenset[str] | None = None  # None: every kind
    fuzz_requests: int = 200
    every_fault_once: bool = True
    timeout_seconds: float = 600.0
    workload: WorkloadSettings | None = None  # None: every hostile knob on (WorkloadSettings())
    mutant: str | None = None  # chaos/mutants.py: one guard disabled in every worker
    reply_budget: int = 3  # REPLY_BUDGET_PER_HOUR of the run
    thread_window: int = 8  # thread_window: one page of the thread read
    # The state-loss drill: the state and idempotency tables emptied halfway through the workload, then,
    # once drained, the state table restored to that moment, the mailbox clock moved past the key's hour,
    # every message backfilled and the dead letters redriven (operations.md, "Restoring the state table").
    state_loss: bool = False
    # With ``state_loss``, the restore while mail flows (issue 48): no tables emptied, no stop. Once a
    # twentieth of the notifications are answered a backup of the state table is taken; once half is
    # delivered and a tenth more answered, the state table is restored to it while the workers run
    # (every item put back as the backup held it, everything written since gone; the idempotency
    # table, which has no PITR, left as it is); once drained, the window is backfilled and the dead
    # letters redriven. The runbook's stop (operations.md, "Restoring the state table") is not taken.
    restore_old_backup: bool = False
    # Issue 42: this many registered grants beside the run's two, with their lives (chaos/grants.py);
    # 0: the workload's own setting (``WorkloadSettings.grant_fleet``).
    grants: int = 0
    # Write the handlers' log records here (JSON lines) and the checked history beside it
    # (``<path>.history.pickle``, :class:`devstack.invariants.History`), to diagnose a run.
    logs_path: Path | None = None


@dataclass
class ChaosReport:
    settings: ChaosSettings
    notifications: int = 0
    deliveries: int = 0
    webhook_statuses: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    replies_sent: int = 0
    skips: dict[str, int] = field(default_factory=dict)
    dead_lettered: int = 0
    drained: bool = True
    violations: dict[int, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    worker_skews: list[float] = field(default_factory=list)  # seconds, every worker that ran
    leases_lost: int = 0  # a holder found its lease taken over (the owner-token fence refused it)
    sends_replayed: int = 0  # a send answered from Nylas' Idempotency-Key cache, not sent again
    send_attempts: int = 0  # send requests seen on the wire
    thread_reads: int = 0  # thread reads seen on the wire
    unsupported_knobs: list[str] = field(default_factory=list)  # knobs this emulator cannot play
    mutant_pending: str = ""  # the mutant's target does not exist in the product
    clock_advanced_seconds: float = 0.0  # the mailbox clock moved ahead (redrive after the key's hour)
    redriven: int = 0  # dead letters moved back to the queue after the clock moved
    state_items_lost: int = 0  # state-loss drill: items of the state table emptied halfway
    backfilled: int = 0  # state-loss drill: notifications the backfill queued after the restore
    workload: WorkloadSettings | None = None  # the knobs the run played (a mutant's included)
    # Issue 42: what each per-grant check judged, the grants each violation names, the fleet's figures.
    grant_figures: dict[int, str] = field(default_factory=dict)
    grants_named: dict[int, set[str]] = field(default_factory=dict)
    fleet: dict[str, int] = field(default_factory=dict)

    @property
    def widest_clock_gap(self) -> float:
        """The largest difference between two workers' clocks in the run, seconds."""
        return max(self.worker_skews) - min(self.worker_skews) if self.worker_skews else 0.0

    @property
    def ok(self) -> bool:
        return self.drained and not self.mutant_pending and not any(self.violations.values())

    def caught(self) -> list[int]:
        """Invariants of the mutant's guard that the run saw broken (empty: the mutant survived)."""
        if not self.settings.mutant:
            return []
        return [n for n in MUTANTS[self.settings.mutant].guards if self.violations.get(n)]


def _wait_for(url: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


# SQS' approximate counts of a queue's messages (GetQueueAttributes).
VISIBLE = "ApproximateNumberOfMessages"
IN_FLIGHT = "ApproximateNumberOfMessagesNotVisible"
DELAYED = "ApproximateNumberOfMessagesDelayed"


class Experiment:
    """Everything one run needs; ``run()`` returns the report."""

    def __init__(self, settings: ChaosSettings, progress: Any = None) -> None:
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.logs = LogCollector()
        self._progress = progress
        self._processes: dict[int, subprocess.Popen] = {}
        self._stop = threading.Event()
        self.exits: Counter[str] = Counter()
        self.worker_stderr: list[str] = []
        self.worker_skews: list[float] = []
        self._saved_env = dict(os.environ)
        self.tap = WireTap()
        # The mailbox's clock (Nylas' time: dates, Idempotency-Key TTL, the Date header) can be moved
        # ahead without sleeping; (real time, seconds) of each move, for the checker.
        self.clock_offset = 0.0
        self.clock_advances: list[tuple[float, float]] = []
        self.clock_advances_done: list[tuple[float, float]] = []
        self.mutant_pending = ""

    def say(self, text: str) -> None:
        if self._progress is not None:
            print(f"[chaos] {text}", file=self._progress, flush=True)

    # ---- infrastructure ------------------------------------------------------------------------

    def _start_aws(self) -> None:
        # The server binds its own free port and says which: a port picked here and bound there could be
        # taken meanwhile by another run's server, and this run would use that other AWS unawares.
        self._moto = subprocess.Popen(
            [sys.executable, "-m", "devstack.embedded_aws", EPHEMERAL],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self._moto.stdout is not None
        self.moto_url = self._moto.stdout.readline().strip()
        if not self.moto_url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the embedded AWS did not start (it said {self.moto_url!r})")
        # Whatever else it prints is drained, so a full pipe never stalls it.
        threading.Thread(target=self._moto.stdout.read, name="embedded-aws-stdout", daemon=True).start()
        _wait_for(f"{self.moto_url}/moto-api/")
        os.environ.update(
            {
                "AWS_ACCESS_KEY_ID": "chaos",
                "AWS_SECRET_ACCESS_KEY": "chaos",
                "AWS_SESSION_TOKEN": "chaos",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_REGION": "us-east-1",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "AWS_ENDPOINT_URL": self.moto_url,
            }
        )
        self.resources = create_resources()
        put_in_service(self.resources)
        self.admin_sqs = boto3.client("sqs", endpoint_url=self.moto_url)
        self.admin_dynamodb = boto3.client("dynamodb", endpoint_url=self.moto_url)
        timeout = self.settings.function_timeout_seconds
        # Keep the template's ratio (visibility >= 6x the function timeout) at the chaos timeout.
        self.admin_sqs.set_queue_attributes(
            QueueUrl=self.resources.queues["NotificationQueue"],
            Attributes={"VisibilityTimeout": str(int(6 * timeout))},
        )
        boto3.client("secretsmanager", endpoint_url=self.moto_url).put_secret_value(
            SecretId=self.resources.secrets["NylasSecrets"],
            SecretString=json.dumps({"webhook_secret": LOCAL_WEBHOOK_SECRET, "api_key": LOCAL_API_KEY}),
        )
        self.aws_proxy = FaultProxy(self.moto_url, rng=random.Random(self.rng.random())).start()

    def _start_nylas(self) -> None:
        self.nylas = NylasEmulator(api_key=LOCAL_API_KEY).start()
        for grant, address in AGENT_GRANTS.items():
            self.nylas.add_grant(grant, address, name=f"Acme {address.split('@')[0].title()}")
        self.nylas.add_grant(HUMAN_GRANT_ID, HUMAN_EMAIL, name="Alice")
        self.nylas_proxy = FaultProxy(
            self.nylas.url, rng=random.Random(self.rng.random()), clock=self.nylas.now
        ).start()
        self.nylas_proxy.observer = self.tap.observe

    def advance_mailbox_clock(self, seconds: float) -> None:
        """Nylas' clock jumps ahead (the key's hour passes) without waiting."""
        self.clock_advances.append((time.time(), seconds))
        self.clock_offset += seconds
        self.nylas.advance_clock(seconds)
        # Requests the emulator answered meanwhile (its lock held) saw the clock before the jump.
        self.clock_advances_done.append((time.time(), seconds))

    def _environment(self) -> dict[str, str]:
        timeout = self.settings.function_timeout_seconds
        environment = {
            **self.resources.function_environment("WebhookFunction"),
            **self.resources.function_environment("ReplierFunction"),
            "AWS_ENDPOINT_URL": self.aws_proxy.url,
            "NYLAS_API_URI": self.nylas_proxy.url,
            "AGENT_GRANT_IDS": ",".join(self.workload_settings().agent_grant_ids()),
            "REPLY_BUDGET_PER_HOUR": str(self.settings.reply_budget),
            # The template's week: longer than any run, as the workload's ground truth assumes (a
            # customer in a thread a teammate wrote in may be answered, need not be).
            "PERSON_HOLD_SECONDS": str(7 * 24 * 3600),
            "REPLY_BUDGET_PER_RECIPIENT_PER_HOUR": str(RECIPIENT_BUDGET),
            # The support address the company runs as a group (the workload's group_relay): its relays
            # are customers; any other list's stay bulk mail.
            # In issue 40's `list-id=address` form: a relay is the customer's only from that address,
            # with the receiving provider's DMARC pass (else handed off, relay_unverified).
            "TRUSTED_LISTS": TRUSTED_LISTS,
            # The emulator is the receiving provider: only its Authentication-Results vouch for a From.
            "RECEIVING_AUTHSERV_IDS": RECEIVING_AUTHSERV,
            # Where hand-offs go (the template's default, named so the checker knows it: invariant 7).
            "HANDOFF_FOLDER": HANDOFF_FOLDER,
            # The run's deployer choice, scaled: see _tuning for the rest of a record's budget.
            "AGENT_TIMEOUT_SECONDS": str(max(1.0, timeout / 5)),
            "CHAOS_NONCE_DRAFTER": "1" if self.workload_settings().nonce_drafter else "0",
            "CHAOS_ECHO_DRAFTER": "1" if self.workload_settings().echo_drafter else "0",
            "CHAOS_DRAFT_SECONDS": str(self.workload_settings().draft_seconds),
            "CHAOS_MUTANT": self.settings.mutant or "",
            # What no variable sets, for chaos/worker.py to pass in-process (tune_container).
            "CHAOS_REPLIER_TUNING": json.dumps(self._tuning()),
            "CHAOS_FUNCTION_TIMEOUT_SECONDS": str(timeout),
            "CHAOS_QUEUE_ARN": self.resources.queue_arns["NotificationQueue"],
        }
        environment.pop("POWERTOOLS_SERVICE_NAME", None)
        return environment

    def _tuning(self) -> dict[str, float | int]:
        """The replier's settings no variable sets, at the run's scale (``ReplierSettings`` fields)."""
        timeout = self.settings.function_timeout_seconds
        return {
            # The template's default, set here so the checker knows it (a run of automatic exchanges).
            "max_automatic_exchanges": AUTOMATIC_EXCHANGES,
            "thread_window": self.settings.thread_window,
            "busy_retry_seconds": 1,
            "retry_base_seconds": 1,
            # Every "not now" comes back within this. The reconcile of a queued reply, due after
            # pending_confirm_seconds (94), arrives early and defers itself by at most this: at 14 s it
            # is due at its 7th receive of maxReceiveCount's 8 (at the function timeout + 2 s, the
            # old value, it dead-lettered before the Agent Account queue's 90 s were over). Longer
            # only slows a run: a record that keeps failing dead-letters after ~60 s of backoff.
            "retry_max_seconds": 14,
            # An account limit is retried after this (the template's 900 s, scaled to the run).
            "account_retry_seconds": 2,
            "nylas_timeout_seconds": 2,
            # A record starts only when a whole lease (agent + send + margin) fits in what is left of
            # the invocation, after a lease wait, and calls the agent only with agent + send left: keep
            # their sum under the (short) chaos function timeout, with room to spare. Why a third for the
            # send, not a half: at a half the lease was all but half a second of a 5 s timeout, and on a
            # machine several times oversubscribed a record's work before the lease, then its bookkeeping
            # before the agent, took longer: records were deferred for the deadline on every receive and
            # dead-lettered (the small run under two busy loops: 341 deadline deferrals, two customers'
            # records dead-lettered). A third cut that to 153, still with the two dead letters at 5 s; the
            # small run now runs at 10 s (16, none): docs/reliability.md, "The chaos runs on a busy machine".
            "nylas_send_timeout_seconds": max(1.0, timeout / 3),
            "record_margin_seconds": max(0.5, timeout / 5),
            "lease_wait_seconds": timeout / 10,
            "function_timeout_seconds": timeout,
            # The mailbox is trusted to show a reply after this: the emulator indexes at once and its
            # queue releases a send at once unless a mode holds it (3 s, the bound the settle must
            # exceed); a queued reply's reconcile keeps the real queue's 90 s and that (94 s).
            "agent_account_queue_seconds": 3,
            "mailbox_settle_seconds": 4,
            "pending_confirm_seconds": 94,
            # Issue 42: a registry change reaches records started 6 s after it (the template's 60 s);
            # a paused grant's record comes back every 5 s (its 3,600 s), so a pause dead-letters.
            "registry_max_age_seconds": REGISTRY_MAX_AGE_SECONDS,
            "paused_retry_seconds": PAUSED_RETRY_SECONDS,
            # A grant's sweep or backfill page starts only with this left (the template's 20 s): at the
            # run's timeout none would ever start, so it is the record's own margin here.
            "grant_page_margin_seconds": max(0.5, timeout / 5),
        }

    def _start_webhook(self) -> None:
        self.logs.capture()
        self.gateway = ApiGatewayStandIn(load_handler("WebhookFunction"), timeout_seconds=8.0).start()

    def function_errors(self) -> list[str]:
        """What the webhook function raised in this run (the gateway answered 502 for each)."""
        return list(self.gateway.function_errors)

    def restart_webhook_container(self) -> None:
        """A new webhook container: cold start, secret read again (through the fault proxy)."""
        self.gateway._handler = load_handler("WebhookFunction")

    def _spawn_worker(self) -> None:
        skew = 0.0
        if self.settings.clock_skew_seconds:
            skew = self.rng.uniform(-self.settings.clock_skew_seconds, self.settings.clock_skew_seconds)
        self.worker_skews.append(round(skew, 3))
        environment = {
            **os.environ,
            **self._environment(),
            "CHAOS_CLOCK_SKEW_SECONDS": f"{skew:.3f}",
            "PYTHONPATH": f"{ROOT}:{ROOT / 'layers' / 'replyonce'}",
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "chaos.worker"],
            env=environment,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self._processes[process.pid] = process
        threading.Thread(target=self._read_logs, args=(process,), daemon=True).start()

    def _read_logs(self, process: subprocess.Popen) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if not line.startswith("{"):
                self.worker_stderr.append(line.rstrip())
                del self.worker_stderr[:-50]
            self.logs.write(line)

    def _supervise(self) -> None:
        """Keep ``workers`` processes alive: a dead one is a crashed container, replaced by a cold one."""
        while not self._stop.is_set():
            for pid, process in list(self._processes.items()):
                code = process.poll()
                if code is None:
                    continue
                del self._processes[pid]
                self.exits[
                    "killed" if code == -signal.SIGKILL else "timed_out" if code == 3 else f"exit_{code}"
                ] += 1
                if code == 4:  # chaos/worker.py: the mutant's target does not exist in the product
                    self.mutant_pending = self.settings.mutant or "?"
                    self._stop.set()
                    continue
                if not self._stop.is_set():
                    self._spawn_worker()
            time.sleep(0.1)

    # ---- the run -------------------------------------------------------------------------------

    def _stand_up(self, workers: int) -> FaultPlan:
        """The embedded AWS, the emulator, the webhook, the fault plan installed and ``workers`` workers."""
        self._start_aws()
        self._start_nylas()
        os.environ.update(self._environment())
        self._start_webhook()
        plan = FaultPlan(self, self.settings)
        plan.install()
        for _ in range(workers):
            self._spawn_worker()
        return plan

    def run(self) -> ChaosReport:
        started = time.monotonic()
        try:
            plan = self._stand_up(self.settings.workers)
            threading.Thread(target=self._supervise, daemon=True).start()
            sender = WebhookSender(self.gateway.url, LOCAL_WEBHOOK_SECRET, retry_delays=(0.3, 0.8))
            workload = Workload(
                self.workload_settings(),
                self.nylas,
                sender,
                random.Random(self.rng.random()),
                queue_depth=self._depth,
                advance_clock=self.advance_mailbox_clock,
            )
            self.nylas.on_message_created = workload.on_message_created
            fleet = self._fleet(workload)
            redrive = self._lose_redrive_answers(workload)
            threading.Thread(target=self._report_progress, args=(workload,), daemon=True).start()
            self.say(
                f"{self.settings.workers} workers, {self.settings.notifications} notifications, "
                f"seed {self.settings.seed}, fault probability {self.settings.fault_probability}"
            )
            plan.start_outages()
            restore_point: dict[str, Any] = {}
            if self.settings.state_loss:
                midway = self._restore_old_backup_midway if self.settings.restore_old_backup else None
                threading.Thread(
                    target=midway or self._lose_state_midway, args=(sender, restore_point), daemon=True
                ).start()
            workload.play()
            fuzz = plan.fuzz(self.settings.fuzz_requests)
            if fleet is not None:
                fleet.wait(max(300.0, self.settings.timeout_seconds / 2))
            drained = self._wait(workload, started)
            plan.stop_outages()
            redriven = self._redrive_after_key_hour(workload, redrive) if drained else 0
            drained = drained and self._wait(workload, started)
            if fleet is not None and drained:
                # The runbook: the dead-letter alarm of a paused or expired grant, `make redrive --grant`.
                # A deleted grant's sweep that outlived its receives goes on from where it stopped.
                paused = fleet.role("paused") + fleet.role("expired") + fleet.role("deleted")
                if sum(self._redrive_grant(grant) for grant in paused):
                    drained = self._wait(workload, started)
            backfilled = 0
            if self.settings.state_loss and drained:
                if self.settings.restore_old_backup:  # the runbook's step 5 after a restore mid-run
                    backfilled = self._backfill(workload)
                else:
                    backfilled = self._restore_and_backfill(workload, restore_point.get("items", []))
                drained = self._wait(workload, started)
            workload.shutdown()
            report = self._report(workload, sender, plan, fuzz, drained, started)
            report.redriven = redriven
            report.state_items_lost = len(restore_point.get("items", []))
            report.backfilled = backfilled
            report.workload = workload.settings
            return report
        finally:
            self._teardown()

    def workload_settings(self) -> WorkloadSettings:
        settings = self.settings.workload or WorkloadSettings()
        if self.settings.mutant:
            settings = replace(settings, **MUTANTS[self.settings.mutant].knobs)
        if self.settings.grants:
            settings = replace(settings, grant_fleet=self.settings.grants)
        return replace(settings, notifications=self.settings.notifications)

    # ---- issue 42: many grants ------------------------------------------------------------------------

    def effect_seconds(self) -> float:
        """A registry change reaches every record started this long after it: the cache's age, a whole
        invocation begun before it, and a second for the workers' clocks."""
        return REGISTRY_MAX_AGE_SECONDS + self.settings.function_timeout_seconds + 1.0

    def _fleet(self, workload: Workload) -> GrantFleet | None:
        """The fleet's grants at Nylas and in the registry (``send``, by the operator), its lives started."""
        s = workload.settings
        if not s.grant_fleet:
            return None
        fleet = GrantFleet(s.grant_fleet, s.flood_share, workload, self, self.effect_seconds())
        workload.fleet = fleet
        for grant, address in fleet.grants.items():
            self.nylas.add_grant(grant, address, name=f"Fleet {grant[-3:]}")
            self.set_mode(grant, "send", "set")
        fleet.registered()
        self.say(f"{len(fleet.grants)} grants registered in send mode; the flood is {fleet.flood}")
        target = max(1, self.settings.notifications)
        fleet.start(lambda: len(workload.notifications) / target, self._stop)
        return fleet

    def _deployment(self) -> operator_grants.Deployment:
        settings = ReplierSettings.from_environment(os.environ)
        return operator_grants.Deployment(defaults_of(settings), settings.agent_grant_ids)

    def _change(self, grant_id: str, action: str, change: Any) -> None:
        operator_grants.apply_change(
            self.admin_dynamodb,
            self.resources.tables["GrantRegistryTable"],
            grant_id,
            action,
            change,
            deployment=self._deployment(),
            who=lambda: "chaos-operator",
            clock=time.time,
            dry_run=False,
        )

    def set_mode(self, grant_id: str, mode: str, action: str) -> None:
        """``make grants set --mode`` (or ``make promote``'s change)."""
        self._change(
            grant_id, action, operator_grants.set_record({"reply_mode": mode}, [], self._deployment())
        )

    def pause(self, grant_id: str) -> None:
        self._change(grant_id, "pause", operator_grants.enabled_record(grant_id, False, self._deployment()))

    def resume(self, grant_id: str) -> None:
        self._change(grant_id, "resume", operator_grants.enabled_record(grant_id, True, self._deployment()))

    def deletion_recorded(self, grant_id: str) -> bool:
        """The registry holds the grant's deletion (the replier processed ``grant.deleted``)."""
        stored = read_life(self.admin_dynamodb, self.resources.tables["GrantRegistryTable"], grant_id)
        return stored is not None and stored.life.deleted

    def redrive(self, grant_id: str) -> int:
        return self._redrive_grant(grant_id)

    def _redrive_grant(self, grant_id: str) -> int:
        """``make redrive ARGS="--grant G"``: the grant's dead letters back to the queue, the others stay."""
        queues = redrive.resolve_queues(
            self.admin_sqs,
            self.resources.queues["NotificationDeadLetterQueue"],
            self.resources.queues["NotificationQueue"],
        )
        moved = redrive.copy_messages(self.admin_sqs, queues, say=lambda line: None, grant=grant_id)
        if moved:
            self.say(f"{moved} dead letters of {grant_id} redriven")
        return moved

    def _lose_redrive_answers(self, workload: Workload) -> threading.Event:
        """Nylas unreachable for one reply until its record dead-letters: every answer to its send is
        lost (the email goes out), and every look-up of it by its intent id fails (503).
        :meth:`_redrive_after_key_hour` ends this after moving Nylas' clock past the key's hour."""
        targets = workload.redrive_message_ids
        intents: set[str] = set()

        def lost_send(request: Any) -> bool:
            if request.method != "POST" or not SEND.search(request.path):
                return False
            if not any(target.encode() in request.body for target in targets):
                return False
            intent = request.json.get("metadata", {}).get("key1")
            if intent:
                intents.add(str(intent))
            return True

        def lookup(request: Any) -> bool:
            return (
                request.method == "GET"
                and "metadata_pair" in request.path
                and any(intent in request.path for intent in list(intents))
            )

        before_redrive = threading.Event()
        before_redrive.set()
        unavailable = b'{"request_id":"chaos","error":{"type":"api_error","message":"injected: unreachable"}}'
        self.nylas_proxy.rules[:0] = [
            Rule("redrive_lost_answer", lost_send, "lose", active=before_redrive.is_set),
            Rule(
                "redrive_lookup_failed",
                lookup,
                "error",
                status=503,
                body=unavailable,
                headers={"Content-Type": "application/json"},
                active=before_redrive.is_set,
            ),
        ]
        return before_redrive

    def _redrive_after_key_hour(self, workload: Workload, before_redrive: threading.Event) -> int:
        """An operator redrives the dead-letter queue after the key's hour (Nylas' clock moved on)."""
        before_redrive.clear()
        if not workload.redrive_message_ids:
            return 0
        self.advance_mailbox_clock(3600 + 120)
        # The operator's own redrive (ops.redrive): it keeps each message's attributes, without which a
        # reconcile task (its ``task`` attribute) comes back as a record that is not a notification.
        queues = redrive.resolve_queues(
            self.admin_sqs,
            self.resources.queues["NotificationDeadLetterQueue"],
            self.resources.queues["NotificationQueue"],
        )
        moved = redrive.copy_messages(self.admin_sqs, queues, say=lambda line: None)
        self.say(f"mailbox clock moved 3720 s ahead; {moved} dead letters redriven")
        return moved

    # ---- the state-loss drill -----------------------------------------------------------------

    def _table_items(self, name: str) -> list[dict[str, Any]]:
        pages = self.admin_dynamodb.get_paginator("scan").paginate(
            TableName=self.resources.tables[name], ConsistentRead=True
        )
        return [item for page in pages for item in page["Items"]]

    def _empty_table(self, name: str, key: str) -> None:
        for item in self._table_items(name):
            self.admin_dynamodb.delete_item(TableName=self.resources.tables[name], Key={key: item[key]})

    def _lose_state_midway(self, sender: WebhookSender, restore_point: dict[str, Any]) -> None:
        """Once half the workload is delivered and a tenth of it answered, both tables lose every item
        while replies are queued and in flight; what the state table held then is the restore point."""
        while not self._stop.is_set() and (
            len(sender.deliveries) < self.settings.notifications // 2
            or len(self.nylas.sends) < max(1, self.settings.notifications // 10)
        ):
            time.sleep(0.1)
        restore_point["items"] = self._table_items("StateTable")
        self._empty_table("StateTable", "pk")
        self._empty_table("IdempotencyTable", "id")
        self.say(f"state lost: {len(restore_point['items'])} items of the state table emptied mid-run")

    def _restore_old_backup_midway(self, sender: WebhookSender, restore_point: dict[str, Any]) -> None:
        """The restore while mail flows (``restore_old_backup``): a backup of the state table once a
        twentieth of the notifications are answered, the table restored to it once half is delivered and
        a tenth more answered, the workers running all along; ``restore_point["items"]`` is the backup."""
        notifications, step = self.settings.notifications, max(1, self.settings.notifications // 20)
        while not self._stop.is_set() and len(self.nylas.sends) < step:
            time.sleep(0.1)
        backup, replies = self._table_items("StateTable"), len(self.nylas.sends)
        self.say(f"state table backed up: {len(backup)} items, {replies} emails out")
        while not self._stop.is_set() and (
            len(sender.deliveries) < notifications // 2 or len(self.nylas.sends) < replies + 2 * step
        ):
            time.sleep(0.1)
        # The runbook's restore while mail flows: the damaged table emptied, the backup (a table of its
        # own, as restore-table-to-point-in-time makes) put back by `make restore-state --from`, which
        # makes every thread's state begin again at the restore (ops.restore_state).
        backup_table = create_restored_state_table(
            self.admin_dynamodb, f"{self.resources.tables['StateTable']}-restored", backup
        )
        self._empty_table("StateTable", "pk")
        result = restore_state(
            self.admin_dynamodb,
            source=backup_table,
            target=self.resources.tables["StateTable"],
            clock=time.time,
        )
        restore_point["items"] = backup
        self.say(
            f"state table restored to the older backup while the replier runs ({result.copied} items, "
            f"{result.threads_begun_again} threads begun again)"
        )

    def _restore_and_backfill(self, workload: Workload, items: list[dict[str, Any]]) -> int:
        """The runbook after the run drained: the state table restored to the moment it was lost (what
        was written since is gone), the idempotency table empty, the mailbox clock past the key's hour;
        then every message backfilled and the dead letters redriven."""
        self._empty_table("StateTable", "pk")
        self._empty_table("IdempotencyTable", "id")
        for item in items:
            self.admin_dynamodb.put_item(TableName=self.resources.tables["StateTable"], Item=item)
        self.advance_mailbox_clock(3600 + 120)
        return self._backfill(workload)

    def _backfill(self, workload: Workload) -> int:
        """Every message of the agent grants backfilled, then the dead letters redriven."""
        grants = list(workload.agent_grants())
        plan = backfill.plan_backfill(
            NylasAdmin(self.nylas.url, LOCAL_API_KEY),
            DynamoDBStateStore(self.resources.tables["StateTable"], self.admin_dynamodb, ttl_seconds=0),
            grants,
            backfill.Window(0, int(self.nylas.now()) + 3600),
        )
        queue = NotificationQueue(self.resources.queues["NotificationQueue"], 1_048_576, self.admin_sqs)
        backfill.apply_backfill(plan, queue, clock=self.nylas.now)
        queues = redrive.resolve_queues(
            self.admin_sqs,
            self.resources.queues["NotificationDeadLetterQueue"],
            self.resources.queues["NotificationQueue"],
        )
        moved = redrive.copy_messages(self.admin_sqs, queues, say=lambda line: None)
        self.say(f"{len(plan.to_enqueue)} backfilled, {moved} redriven")
        return len(plan.to_enqueue)

    def _messages(self, url: str, *names: str) -> int:
        """The queue's approximate counts of ``names`` (:data:`VISIBLE`, :data:`IN_FLIGHT`,
        :data:`DELAYED`), added up."""
        attributes = self.admin_sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names))[
            "Attributes"
        ]
        return sum(int(attributes[name]) for name in names)

    def _depth(self) -> int:
        return self._messages(self.resources.queues["NotificationQueue"], VISIBLE, IN_FLIGHT)

    def _report_progress(self, workload: Workload) -> None:
        bar = progress_bar(make_console(self._progress)) if self._progress is not None else None
        if bar is not None:
            # On a terminal: a live bar of the workload's notifications, replies and queue depth.
            with bar:
                task = bar.add_task("notifications", total=self.settings.notifications)
                while not self._stop.wait(0.5):
                    bar.update(
                        task,
                        completed=min(len(workload.notifications), self.settings.notifications),
                        description=f"notifications (replies {len(self.nylas.sends)}, queue {self._depth()})",
                    )
            return
        while not self._stop.wait(10):
            self.say(
                f"notifications {len(workload.notifications)}, deliveries pending {workload.pending()}, "
                f"queue {self._depth()}, replies {len(self.nylas.sends)}, faults {self._injected()}, "
                f"worker exits {dict(self.exits)}"
            )
            if self.worker_stderr and not self.nylas.sends:
                self.say("worker output: " + " | ".join(self.worker_stderr[-5:]))

    def _wait(self, workload: Workload, started: float) -> bool:
        """Until nothing is left to happen: no delivery pending, nothing visible or in flight on the
        queue, nothing in Nylas' send queue, and -- while a reply Nylas failed has not gone out again
        -- no delayed message either (the replier's reconcile of a queued reply may be its way back).
        Delayed reconciles of replies that went out change nothing in the world: not waited for."""
        deadline = started + self.settings.timeout_seconds
        quiet_since: float | None = None
        while time.monotonic() < deadline:
            if (
                workload.pending() == 0
                and self._depth() == 0
                and not self.nylas.queued_sends
                and (not self._failed_replies_outstanding() or self._delayed() == 0)
            ):
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > 3:
                    return True
            else:
                quiet_since = None
            time.sleep(0.25)
        return False

    def _delayed(self) -> int:
        return self._messages(self.resources.queues["NotificationQueue"], DELAYED)

    def _failed_replies_outstanding(self) -> bool:
        """A reply (by the intent id in its metadata) that Nylas failed once and that has neither gone
        out since nor failed a second time (after which it is given up: ``_refused_twice``)."""
        failed = Counter(_intent_of(record) for record in self.nylas.failed_sends)
        sent = {_intent_of(record) for record in self.nylas.sends}
        return any(intent and intent not in sent and times < 2 for intent, times in failed.items())

    def _injected(self) -> int:
        return sum(self.aws_proxy.injected.values()) + sum(self.nylas_proxy.injected.values())

    def _dead_letters(self) -> list[str]:
        ids = []
        queue = self.resources.queues["NotificationDeadLetterQueue"]
        while True:
            batch = self.admin_sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
            if not batch:
                return ids
            for message in batch:
                try:
                    ids.append(json.loads(message["Body"])["id"])
                except (ValueError, KeyError, TypeError):
                    ids.append(message["MessageId"])

    def _report(
        self,
        workload: Workload,
        sender: WebhookSender,
        plan: "FaultPlan",
        fuzz: Any,
        drained: bool,
        started: float,
    ) -> ChaosReport:
        accepted = {d.notification_id for d in sender.deliveries if d.status == 200 and not d.forged}
        notified = {
            payload["data"]["object"]["id"]
            for notification_id, payload in workload.notifications.items()
            if notification_id in accepted and payload["type"].startswith("message.created")
        }
        dead = self._dead_letters()
        # Still dead-lettered at the end: lost unless answered (invariant 2).
        logs = list(self.logs.records)
        mailbox = self.nylas.mailbox()
        fleet = workload.fleet
        truth = dict(workload.truth)
        unowed: set[str] = set()
        if fleet is not None:
            # Ground truth from the lives' log: what a grant in shadow, review, not yet promoted or deleted
            # received while so may be answered, need not be (checked per grant below instead).
            unowed = unowed_messages(fleet.events, mailbox, self.effect_seconds())
            truth = {m: replace(t, must_answer=False) if m in unowed else t for m, t in truth.items()}
        history = History(
            agent_grants=workload.agent_grants(),
            mailbox=mailbox,
            truth=truth,
            sends=self.nylas.sends,
            deliveries=list(sender.deliveries) + list(fuzz.deliveries),
            logs=logs,
            reply_budget=self.settings.reply_budget,
            automatic_exchanges=AUTOMATIC_EXCHANGES,
            recipient_budget=RECIPIENT_BUDGET,
            inboxes=dict(workload.inboxes),
            agent_echoes=workload.settings.echo_drafter,
            harness_sent_ids=set(workload.harness_sent_ids),
            thread_reads=list(self.tap.thread_reads),
            send_attempts=list(self.tap.send_attempts),
            clock_advances=list(self.clock_advances),
            clock_advances_done=list(self.clock_advances_done),
            notified_message_ids=notified,
            failed_sends=self.nylas.failed_sends,
            listing_order=self.nylas.modes.listing_order,
            forged_notification_ids=workload.forged_ids | fuzz.notification_ids,
            function_errors=self.function_errors(),
            dead_lettered_notification_ids=set(dead),
            dead_lettered_message_ids={
                workload.notifications[n]["data"]["object"].get("id", "")
                for n in dead
                if n in workload.notifications
            },
            aliases={grant: list(aliases) for grant, aliases in workload.aliases.items()},
            handoff_folder=HANDOFF_FOLDER,
            unowed=unowed,
        )
        if self.settings.logs_path is not None:
            _record(self.settings.logs_path, history)
        faults = Counter(workload.features)
        faults.update(self.aws_proxy.injected)
        faults.update(self.nylas_proxy.injected)
        faults.update(plan.counts)
        faults["worker_killed"] = self.exits["killed"]
        faults["worker_timed_out"] = self.exits["timed_out"]
        violations = check(history)
        grant_figures: dict[int, str] = {}
        named: dict[int, set[str]] = {}
        fleet_figures: dict[str, int] = {}
        if fleet is not None:
            grant_history = GrantHistory(
                events=list(fleet.events),
                fleet=set(fleet.all_addresses()),
                mailbox=mailbox,
                truth=truth,
                sends=self.nylas.sends,
                send_attempts=list(self.tap.send_attempts),
                draft_requests=list(self.tap.draft_requests),
                effect_seconds=self.effect_seconds(),
                handoff_folder=HANDOFF_FOLDER,
                harness_sent_ids=set(workload.harness_sent_ids),
            )
            if self.settings.logs_path is not None:
                # Beside the history: what the per-grant checks read, to check a run again.
                path = self.settings.logs_path
                with path.with_name(path.name + ".grants.pickle").open("wb") as out:
                    pickle.dump(grant_history, out)
            verdict = check_grants(grant_history)
            violations.update(verdict.violations)
            grant_figures = verdict.figures
            named = per_grant(violations, mailbox)
            fleet_figures = fleet.figures(mailbox, self.nylas.sends, set(workload.harness_sent_ids))
            fleet_figures["messages no agent owed (shadow, review, unpromoted, deleted)"] = len(unowed)
            fleet_figures["dead letters of paused or expired grants redriven"] = fleet.redriven
        return ChaosReport(
            settings=self.settings,
            notifications=len(workload.notifications),
            deliveries=len(sender.deliveries),
            webhook_statuses=dict(Counter(str(d.status) for d in sender.deliveries)),
            faults=dict(sorted(faults.items())),
            replies_sent=len(self.nylas.sends) - len(workload.harness_sent_ids),
            skips=skips_by_reason(logs),
            dead_lettered=len(dead),
            drained=drained,
            violations=violations,
            seconds=time.monotonic() - started,
            worker_skews=list(self.worker_skews),
            leases_lost=leases_lost(logs),
            sends_replayed=sends_replayed(self.tap.send_attempts),
            send_attempts=len(self.tap.send_attempts),
            thread_reads=len(self.tap.thread_reads),
            unsupported_knobs=sorted(workload.unsupported),
            mutant_pending=self.mutant_pending,
            clock_advanced_seconds=self.clock_offset,
            grant_figures=grant_figures,
            grants_named=named,
            fleet=fleet_figures,
        )

    def _teardown(self) -> None:
        self._stop.set()
        for process in list(self._processes.values()):
            process.kill()
        for process in list(self._processes.values()):
            process.wait(timeout=10)
        for name in ("gateway", "aws_proxy", "nylas_proxy", "nylas"):
            component = getattr(self, name, None)
            if component is not None:
                component.stop()
        if getattr(self, "_moto", None) is not None:
            # A moto holding gigabytes can take longer than this to exit politely.
            self._moto.terminate()
            try:
                self._moto.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._moto.kill()
                self._moto.wait(timeout=10)
        self.logs.release()
        os.environ.clear()
        os.environ.update(self._saved_env)


def _record(path: Path, history: History) -> None:
    """The run's logs as JSON lines at ``path``, and its whole history pickled beside them."""
    with path.open("w") as out:
        out.writelines(json.dumps(record, default=str) + "\n" for record in history.logs)
    with path.with_name(path.name + ".history.pickle").open("wb") as out:
        pickle.dump(history, out)


def _intent_of(record: Any) -> str:
    """The intent id a send carries in its metadata (``key1``), ``""`` for others (teammates)."""
    metadata = record.payload.get("metadata") if isinstance(record.payload, dict) else None
    return str((metadata or {}).get("key1", ""))


def render(report: ChaosReport) -> str:
    """The markdown table of a run."""
    s = report.settings
    statuses = ", ".join(f"{k}: {v}" for k, v in sorted(report.webhook_statuses.items()))
    knobs = report.workload or s.workload or WorkloadSettings()
    lines = [
        *([f"Mutant `{s.mutant}`: {MUTANTS[s.mutant].what}."] if s.mutant else []),
        *(
            [f"Mutant `{report.mutant_pending}` is PENDING: its target is not in the product."]
            if report.mutant_pending
            else []
        ),
        "Hostile knobs: "
        + ", ".join(f"{k}={getattr(knobs, k)}" for k in HOSTILE_KNOBS)
        + (
            f"; not playable by this emulator: {', '.join(report.unsupported_knobs)}"
            if report.unsupported_knobs
            else ""
        ),
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| notifications | {report.notifications} |",
        f"| webhook deliveries | {report.deliveries} ({statuses}) |",
        f"| replies sent | {report.replies_sent} |",
        f"| send requests seen on the wire | {report.send_attempts} |",
        f"| sends answered by an `Idempotency-Key` replay | {report.sends_replayed} |",
        f"| thread reads seen on the wire | {report.thread_reads} |",
        f"| mailbox clock moved ahead, dead letters redriven | {report.clock_advanced_seconds:g} s, "
        f"{report.redriven} |",
        *(
            [
                (
                    f"| restore while mail flows: items of the older backup restored mid-run; "
                    f"backfilled after | {report.state_items_lost}, {report.backfilled} |"
                    if s.restore_old_backup
                    else f"| state-loss drill: items lost mid-run, restored; backfilled after | "
                    f"{report.state_items_lost}, {report.backfilled} |"
                )
            ]
            if s.state_loss
            else []
        ),
        f"| leases lost to another worker | {report.leases_lost} |",
        f"| dead-lettered | {report.dead_lettered} |",
        f"| queue drained | {'yes' if report.drained else 'NO'} |",
        f"| duration | {report.seconds:.0f} s ({s.workers} workers, "
        f"function timeout {s.function_timeout_seconds} s) |",
        "",
        "| fault or workload feature | injected |",
        "| --- | --- |",
        *[f"| {kind} | {count} |" for kind, count in report.faults.items()],
        "",
        "| skip reason | count |",
        "| --- | --- |",
        *[f"| {reason} | {count} |" for reason, count in sorted(report.skips.items())],
        "",
        *(
            ["| many grants (issue 42) | value |", "| --- | --- |"]
            + [f"| {name} | {value} |" for name, value in report.fleet.items()]
            + [""]
            if report.fleet
            else []
        ),
        "| invariant | violations |" + (" grants named | judged |" if report.fleet else ""),
        "| --- | --- |" + (" --- | --- |" if report.fleet else ""),
        *[
            f"| {number}. {({**INVARIANTS, **GRANT_CHECKS})[number]} | {len(found)} |"
            + (_per_grant_cells(report, number) if report.fleet else "")
            for number, found in report.violations.items()
        ],
    ]
    for number, found in report.violations.items():
        lines.extend(f"- [{number}] {sentence}" for sentence in found[:10])
    return "\n".join(lines)


def _per_grant_cells(report: ChaosReport, number: int) -> str:
    """The grants a check's violations name, and what it judged (issue 42's run)."""
    judged = report.grant_figures.get(number, "every grant")
    return f" {len(report.grants_named.get(number, ()))} | {judged} |"
