"""The two-Region failover drill: active-passive across Regions, run in the local stack, then checked.

Two "Regions" are two stacks' worth of the template's resources in one
embedded AWS (each Region's tables, queues and secrets under its own prefix),
each with its own webhook and its own replier workers (``chaos.worker``, each
told its Region in-process, as Lambda's ``AWS_REGION`` tells it); one Nylas
emulator both reach (each through a proxy of its own, so the drill knows which
Region sent what); one active-Region table
both read — the multi-Region strongly consistent table of ``template.yaml``,
whose strongly consistent reads in any Region return the last failover
written in any Region, which one table read by both is locally. The state
tables and the idempotency tables are replicated one way, from the first
Region to the second, with a lag (:class:`Replicator`: what a global table
with multi-Region eventual consistency does, item by item, last writer
wins). The webhook URL is one name resolved to one Region at a time
(:class:`RoutedSender`: Route 53 failover), and resolvers hold the old answer
for a while after the failover.

Mid-run the operator does what ``docs/operations.md`` ("Across Regions") says:
``failover --to`` the second Region (the record's conditional write), the DNS
answer moves (the old Region is still delivered to ``stale_deliveries``
times), then ``backfill`` in the new Region of everything its lagging replica
may not know was answered. The old Region keeps running for
``old_region_seconds`` and until it has taken up every record in its queue
(its workers alive, its queue full of what it will never send), then is gone.
The checker is the chaos run's (``devstack.invariants``), on the whole world:
zero double replies (1), nothing lost (2)... plus the fence's own: no send by
the old Region that started after the handover. Measured: the RTO, from the
failover command to the new Region's first reply and to the last reply of the
backlog (every message that reached the old Region).

``make failover-drill`` (``python -m chaos.failover``); ``--mutant fence_off``
must be caught.
"""

if __name__ == "__main__":  # `make failover-drill`: a container's process first (chaos/__main__.py says why)
    from ops.replier_process import prepare

    prepare()

import argparse
import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import boto3

from chaos.faults import FuzzResult
from chaos.proxy import FaultProxy, Request, Rule
from chaos.run import DELAYED, IN_FLIGHT, VISIBLE, ChaosReport, ChaosSettings, Experiment, render
from chaos.workload import TRUSTED_LIST_ID, SendQueueSwitch, Workload
from devstack.containers import load_handler
from devstack.gateway import ApiGatewayStandIn
from devstack.template import (
    LOCAL_API_KEY,
    LOCAL_WEBHOOK_SECRET,
    create_active_region_table,
    create_resources,
)
from devstack.webhook_sender import WebhookSender
from ops import backfill
from ops.nylas_admin import NylasAdmin
from replyonce.adapters.active_region import fail_over
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.config import DEFAULT_QUEUE_MAX_MESSAGE_BYTES, ReplierSettings, trusted_lists
from replyonce.policy import Policy, policy_of

# How long the drill waits for a send by the old Region to hold (--slow-queued-send).
_MAX_HOLD_SECONDS = 60.0
REGIONS = ("us-east-1", "us-west-2")
"""The old (first active) Region and the one the drill fails over to."""
ACTIVE_REGION_TABLE = "replyonce-active-region"
# Each Region's resources, by prefix (create_resources): the first Region keeps the chaos run's names.
_PREFIXES = ("replyonce", "replyonce-west")
# The variables naming a Region's own resources (the rest of the environment is the same in both).
_RESOURCE_VARIABLES = (
    "QUEUE_URL",
    "STATE_TABLE",
    "IDEMPOTENCY_TABLE",
    "NYLAS_SECRETS_ID",
    "NYLAS_API_KEY_SECRET_ID",
)


@dataclass
class DrillSettings:
    """One drill: the chaos run's settings, and when and how the failover happens.

    Attributes
    ----------
    chaos:
        The run (notifications, workers per Region, faults, seed, mutant).
    failover_after:
        Share of the notifications played before the operator fails over (and not before the old Region
        has sent ``old_region_replies_first`` replies: a failover in the middle of its work).
    replication_lag_seconds:
        How far the new Region's replica of the state trails the old Region's (global tables: typically
        within a second; the drill's default is longer, to catch what a lag lets through).
    stale_deliveries:
        After the failover, this many customers write for the first time and their notifications reach
        the old Region: resolvers holding the old answer for the record's TTL.
    old_region_seconds:
        The old Region's workers keep running at least this long after the failover, and until its queue
        is empty (they must send nothing).
    slow_queued_send_seconds:
        Issue 48's first route (``0``: off). At the failover point a new customer writes to the old
        Region; its send of the reply (or whichever send it makes first) is held at Nylas' door until
        the operator has failed over — a slow send, answered within the send timeout — and answered
        ``202``: the Agent Account queue sends the email this many seconds later (Nylas: up to 90 s).
        From the failover on, the new Region's replica gets none of the old Region's writes, the last
        ``replication_lag_seconds`` of them included (lost with the old Region): only the mailbox tells
        the new Region that the customer was answered, and only once the queue has sent the reply.
    """

    chaos: ChaosSettings = field(default_factory=ChaosSettings)
    failover_after: float = 0.5
    old_region_replies_first: int = 5
    replication_lag_seconds: float = 2.0
    stale_deliveries: int = 3
    old_region_seconds: float = 30.0
    slow_queued_send_seconds: float = 0.0


HANDED_OVER = "record handed over to the active Region's queue"
"""The consumer's log line for a record a passive Region moved to the active Region's queue."""


@dataclass
class DrillReport:
    """The chaos run's report, and what the failover did."""

    settings: DrillSettings
    chaos: ChaosReport
    handover_seconds: float = 0.0
    rto_first_reply_seconds: float | None = None  # failover command → the new Region's first reply
    rto_backlog_seconds: float | None = None  # failover command → the backlog's last reply
    replies_by_region: dict[str, int] = field(default_factory=dict)
    old_region_sends_after_failover: int = 0  # sends the old Region started after the failover command
    # Sends the old Region started after the failover and the margin: no fence read before the failover
    # can have allowed them (a send follows its read at once; record_margin_seconds is the slack).
    split_brain: list[str] = field(default_factory=list)
    deliveries_to_old_region_after_failover: int = 0
    # Records the old Region held at the failover and moved to the new Region's queue (issue 48).
    handed_over: int = 0
    backfilled: int = 0
    items_replicated: int = 0
    replication_conflicts: int = 0  # the new Region had written the item since: its write kept
    # The old Region's send held across the failover: its answer (202: queued, sent
    # ``slow_queued_send_seconds`` later), how long it was held, and its reply's target.
    held_send_status: int | None = None
    held_send_seconds: float = 0.0
    held_send_target: str = ""

    @property
    def ok(self) -> bool:
        return self.chaos.ok and not self.split_brain and self.rto_first_reply_seconds is not None

    def caught(self) -> bool:
        """The mutant's run broke an invariant of its guard, or the fence's own check."""
        return bool(self.chaos.caught() or self.split_brain)


# ---- the pieces the drill adds to a chaos run --------------------------------------------------


class Replicator:
    """Copies the old Region's items into the new Region's tables, ``lag_seconds`` late, one way.

    Each pass snapshots the source tables (a consistent scan) and applies the snapshot taken
    ``lag_seconds`` ago: an item changed since the last copy is written to the target, unless the
    target's item is no longer what was last copied there — the new Region wrote it itself since,
    and its write is the newer one (a global table's last-writer-wins). An item deleted at the source
    is deleted at the target on the same terms.
    """

    def __init__(self, dynamodb: Any, pairs: list[tuple[str, str, list[str]]], lag_seconds: float) -> None:
        self._dynamodb = dynamodb
        self._pairs = pairs  # (source table, target table, key attribute names)
        self._lag = lag_seconds
        self._copied: dict[str, dict[str, Any]] = {target: {} for _, target, _ in pairs}
        self._conflicted: set[str] = set()
        self._snapshots: list[tuple[float, list[dict[str, Any]]]] = []
        self._cut = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replicator", daemon=True)
        self.copied = 0
        self.conflicts = 0

    def start(self) -> "Replicator":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def cut(self) -> None:
        """The source Region is lost: nothing more is copied, not even what it wrote in the last
        ``lag_seconds`` (the snapshots not applied yet are dropped). At once: a pass under way stops
        before its next snapshot is applied (the drill's failover does not wait for it)."""
        self._cut = True

    def _scan(self, table: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for page in self._dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
            items.extend(page["Items"])
        return items

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                if self._cut:
                    continue
                self._snapshots.append(
                    (time.monotonic(), [self._scan(source) for source, _, _ in self._pairs])
                )
                while (
                    not self._cut
                    and self._snapshots
                    and self._snapshots[0][0] <= time.monotonic() - self._lag
                ):
                    _, snapshot = self._snapshots.pop(0)
                    for (_, target, keys), items in zip(self._pairs, snapshot, strict=True):
                        self._apply(target, keys, items)
            except Exception as failure:  # the embedded AWS busy: the next pass copies what this one missed
                print(json.dumps({"message": "replicator pass failed", "detail": str(failure)}), flush=True)

    def _apply(self, table: str, keys: list[str], items: list[dict[str, Any]]) -> None:
        copied = self._copied[table]
        current = {json.dumps([item[k] for k in keys], sort_keys=True): item for item in items}
        for name, item in current.items():
            if copied.get(name) == item:
                continue
            key = {k: item[k] for k in keys}
            there = self._dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
            if there != copied.get(name):
                self._conflicted.add(f"{table}:{name}")
                self.conflicts = len(self._conflicted)
                continue
            self._dynamodb.put_item(TableName=table, Item=item)
            copied[name] = item
            self.copied += 1
        for name in [n for n in copied if n not in current]:
            key = {k: copied[name][k] for k in keys}
            there = self._dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
            if there == copied[name]:
                self._dynamodb.delete_item(TableName=table, Key=key)
            del copied[name]


class RoutedSender(WebhookSender):
    """Nylas' one webhook URL, resolved by Route 53 failover: the first Region, then the second.

    After :meth:`fail_over` every delivery reaches the new Region, except those :meth:`deliver_stale`
    makes: a resolver still holding the old answer for the record's TTL, so the old Region. The drill
    chooses which deliveries those are (fresh mail, so the old Region has something it must not send)
    and how many: a window in seconds would hold none on a machine slow to play the workload.
    """

    def __init__(self, urls: tuple[str, str], secret: str, **options: Any) -> None:
        self._urls = urls
        self._failed_over = False
        self._stale = threading.local()
        self.to_old_after_failover = 0
        super().__init__(urls[0], secret, **options)

    @property
    def url(self) -> str:
        if self._failed_over and not getattr(self._stale, "on", False):
            return self._urls[1]
        return self._urls[0]

    @url.setter
    def url(self, value: str) -> None:
        """Set once by the base class: the first Region's URL (``urls[0]``)."""

    def fail_over(self) -> None:
        self._failed_over = True

    def deliver_stale(self, payload: dict[str, Any]) -> int | None:
        """Deliver ``payload`` (its retries too) where a resolver holding the old answer sends it."""
        self._stale.on = True
        try:
            self.to_old_after_failover += 1
            return self.deliver(payload)
        finally:
            self._stale.on = False


@dataclass(frozen=True)
class RegionSend:
    """A send request one Region made (seen on its proxy to Nylas)."""

    region: int
    started: float
    status: int | None
    target: str
    replayed: bool = False  # answered from Nylas' Idempotency-Key cache: no new email

    @property
    def emailed(self) -> bool:
        """Nylas accepted it as a new email (sent or queued), not a replay of an earlier answer."""
        return self.status in (200, 202) and not self.replayed


class HeldSend:
    """The old Region's first send after :meth:`arm`, held at Nylas' door (its proxy's ``delay`` rule)
    until :meth:`release`, then answered ``202`` by Nylas' Agent Account queue, which sends the email
    ``queue_seconds`` later: issue 48's slow ``202`` across a failover."""

    def __init__(
        self, nylas: Any, switch: SendQueueSwitch, queue_seconds: float, *, longest_hold: float
    ) -> None:
        self._nylas = nylas
        self._switch = switch  # the run's one owner of modes.send_queue
        self._queue_seconds = queue_seconds
        self._longest_hold = longest_hold  # under the send timeout: the worker gets its answer
        self._lock = threading.Lock()
        self._armed = False
        self._before: tuple[Any, ...] | None = None
        self.request: Request | None = None
        self.arrived = threading.Event()
        self._go = threading.Event()
        self.answered = threading.Event()
        self.status: int | None = None
        self.held_seconds = 0.0
        self.target = ""

    def arm(self) -> None:
        with self._lock:
            self._armed = True

    def release(self) -> None:
        self._go.set()

    def matches(self, request: Request) -> bool:
        """The rule's match: the first send after :meth:`arm` that Nylas would take, taken here (one send
        only). Not one whose custom headers the run's Nylas refuses (``400`` before any queue: the
        200-notification run's second try held such a send, and no ``202`` was played)."""
        if request.method != "POST" or not request.path.split("?", 1)[0].endswith("/messages/send"):
            return False
        try:
            headers = json.loads(request.body or b"{}").get("custom_headers") or []
        except ValueError:
            return False
        if any(not str(h.get("name", "")).lower().startswith("x-") for h in headers if isinstance(h, dict)):
            return False
        with self._lock:
            if not self._armed or self.request is not None:
                return False
            self.request = request
        return True

    def hold(self, request: Request) -> float:
        """The rule's delay: held until released (at most ``longest_hold``), then the queue on for it."""
        started = time.monotonic()
        self.arrived.set()
        self._go.wait(timeout=self._longest_hold)
        modes = self._nylas.modes
        with self._lock:
            self._before = (modes.queue_release_after_seconds, modes.queue_fail_fraction)
            self._switch.hold("held send")
            modes.update(
                {
                    "queue_release_after_seconds": self._queue_seconds,
                    "queue_fail_fraction": 0.0,
                }
            )
        self.held_seconds = time.monotonic() - started
        try:
            self.target = str(json.loads(request.body or b"{}").get("reply_to_message_id") or "")
        except ValueError:
            self.target = ""
        return 0.0

    def answer(self, status: int | None) -> None:
        """The observer saw the held send's answer: the queue back as the run had it."""
        with self._lock:
            if self._before is not None:
                release_after, fail_fraction = self._before
                self._switch.let_go("held send")
                self._nylas.modes.update(
                    {
                        "queue_release_after_seconds": release_after,
                        "queue_fail_fraction": fail_fraction,
                    }
                )
                self._before = None
        self.status = status
        self.answered.set()


# ---- the drill ---------------------------------------------------------------------------------


class FailoverDrill(Experiment):
    """A chaos run over two Regions with a failover in the middle; ``run()`` returns the drill's report."""

    def __init__(self, drill: DrillSettings, progress: Any = None) -> None:
        super().__init__(replace(drill.chaos, fuzz_requests=0), progress)
        self.drill = drill
        self.regions: list[Any] = []
        self._region_of: dict[int, int] = {}
        self._retired: set[int] = set()
        self._spawn_lock = threading.Lock()
        self._region_sends: list[RegionSend] = []
        self._sends_lock = threading.Lock()
        self.failed_over_at: float | None = None
        self._held_since: float | None = None
        self.stale_until: float | None = None  # when no delivery could reach the old Region any more
        self.backfilled = 0
        self.held: HeldSend | None = None

    # ---- infrastructure -------------------------------------------------------------------------

    def _start_aws(self) -> None:
        super()._start_aws()  # the first Region: the chaos run's resources and proxy
        self.regions = [self.resources, create_resources(_PREFIXES[1])]
        second = self.regions[1]
        self.admin_sqs.set_queue_attributes(
            QueueUrl=second.queues["NotificationQueue"],
            Attributes={"VisibilityTimeout": str(int(6 * self.settings.function_timeout_seconds))},
        )
        boto3.client("secretsmanager", endpoint_url=self.moto_url).put_secret_value(
            SecretId=second.secrets["NylasSecrets"],
            SecretString=json.dumps({"webhook_secret": LOCAL_WEBHOOK_SECRET, "api_key": LOCAL_API_KEY}),
        )
        self.admin_dynamodb = boto3.client("dynamodb", endpoint_url=self.moto_url)
        create_active_region_table(ACTIVE_REGION_TABLE, boto3.session.Session())
        # The deployment's first activation: the first Region, no handover.
        fail_over(self.admin_dynamodb, ACTIVE_REGION_TABLE, REGIONS[0], expected_epoch=0)
        definitions = self.resources.template["Resources"]
        pairs = [
            (
                self.regions[0].tables[name],
                second.tables[name],
                [k["AttributeName"] for k in definitions[name]["Properties"]["KeySchema"]],
            )
            for name in ("StateTable", "IdempotencyTable")
        ]
        self.replicator = Replicator(self.admin_dynamodb, pairs, self.drill.replication_lag_seconds).start()

    def _start_nylas(self) -> None:
        super()._start_nylas()
        # Each Region reaches the one emulator (through the run's faults) by a proxy of its own.
        self.region_proxies = []
        for index in range(len(REGIONS)):
            proxy = FaultProxy(
                self.nylas_proxy.url, rng=random.Random(self.rng.random()), clock=self.nylas.now
            )
            proxy.observer = self._observer(index)
            self.region_proxies.append(proxy.start())

    def _observer(self, region: int) -> Any:
        def observe(
            request: Request, status: int | None, headers: dict, started: float, finished: float
        ) -> None:
            if request.method != "POST" or not request.path.split("?", 1)[0].endswith("/messages/send"):
                return
            if self.held is not None and self.held.request is request:
                self.held.answer(status)
            try:
                target = str(json.loads(request.body or b"{}").get("reply_to_message_id") or "")
            except ValueError:
                target = ""
            replayed = any(k.lower() == "idempotent-response" and v == "true" for k, v in headers.items())
            with self._sends_lock:
                self._region_sends.append(RegionSend(region, started, status, target, replayed))

        return observe

    def _region_environment(self, region: int) -> dict[str, str]:
        environment = super()._environment()
        resources = self.regions[region]
        for logical_id in ("WebhookFunction", "ReplierFunction"):
            own = resources.function_environment(logical_id)
            environment.update({name: own[name] for name in _RESOURCE_VARIABLES if name in own})
        environment.update(
            {
                "CHAOS_QUEUE_ARN": resources.queue_arns["NotificationQueue"],
                "NYLAS_API_URI": self.region_proxies[region].url,
                "ACTIVE_REGION_TABLE": ACTIVE_REGION_TABLE,
                # Both Regions share one embedded AWS (one AWS_REGION): each worker's Region is named
                # in-process, as Lambda's AWS_REGION names it in a real deploy.
                "CHAOS_REPLIER_TUNING": json.dumps(self._region_tuning(region)),
            }
        )
        return environment

    def _region_tuning(self, region: int) -> dict[str, Any]:
        return {**self._tuning(), "region": REGIONS[region]}

    def _region_policy(self, region: int) -> Policy:
        """The replier's policy in ``region``, as its workers build it."""
        environment = self._region_environment(region)
        return policy_of(ReplierSettings.from_environment(environment, tuning=self._region_tuning(region)))

    def _environment(self) -> dict[str, str]:
        """The Region of the worker being spawned; else the first's (this process's webhook)."""
        return self._region_environment(getattr(self, "_spawning", 0))

    def _start_webhook(self) -> None:
        super()._start_webhook()  # the first Region's, in this process's environment
        # The second Region's webhook container is built under its own environment, then kept.
        saved = dict(os.environ)
        os.environ.update(self._region_environment(1))
        try:
            handler = load_handler("WebhookFunction")
            sys.modules[handler.__module__].endpoint()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.second_gateway = ApiGatewayStandIn(handler, timeout_seconds=8.0).start()

    def _spawn_worker(self) -> None:
        with self._spawn_lock:
            alive = [self._region_of.get(pid) for pid in self._processes]
            wanted = [r for r in range(len(REGIONS)) if r not in self._retired]
            if not wanted:
                return
            region = min(wanted, key=lambda r: alive.count(r))
            if alive.count(region) >= self.settings.workers:
                return
            self._spawning = region
            before = set(self._processes)
            super()._spawn_worker()
            for pid in set(self._processes) - before:
                self._region_of[pid] = region

    def _retire(self, region: int) -> None:
        """The old Region is gone: its workers end, nothing replaces them."""
        with self._spawn_lock:
            self._retired.add(region)
        for pid, process in list(self._processes.items()):
            if self._region_of.get(pid) == region:
                process.kill()

    def _queues(self, name: str, *, retired_too: bool = False) -> list[str]:
        return [
            resources.queues[name]
            for index, resources in enumerate(self.regions)
            if retired_too or index not in self._retired
        ]

    def _depth(self) -> int:
        return sum(self._messages(url, VISIBLE, IN_FLIGHT) for url in self._queues("NotificationQueue"))

    def _delayed(self) -> int:
        return sum(self._messages(url, DELAYED) for url in self._queues("NotificationQueue"))

    def _dead_letters(self) -> list[str]:
        """Every Region's dead letters, and what the old Region's queue still held when it was gone."""
        ids = []
        for region in sorted(self._retired):
            # What its killed workers held comes back when the visibility timeout ends.
            self._until_visible(self.regions[region].queues["NotificationQueue"])
        queues = self._queues("NotificationDeadLetterQueue", retired_too=True)
        queues += [self.regions[r].queues["NotificationQueue"] for r in sorted(self._retired)]
        for queue in queues:
            while True:
                batch = self.admin_sqs.receive_message(
                    QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=300
                ).get("Messages", [])
                if not batch:
                    break
                for message in batch:
                    try:
                        ids.append(json.loads(message["Body"])["id"])
                    except (ValueError, KeyError, TypeError):
                        ids.append(message["MessageId"])
        return ids

    def _until_visible(self, url: str) -> None:
        deadline = time.monotonic() + 6 * self.settings.function_timeout_seconds + 5
        while time.monotonic() < deadline:
            if self._messages(url, IN_FLIGHT) == 0:
                return
            time.sleep(0.5)

    # ---- the operator ---------------------------------------------------------------------------

    def _at_the_failover_point(self, workload: Workload) -> bool:
        return len(workload.notifications) >= int(self.drill.failover_after * self.settings.notifications)

    def _paced_depth(self, workload: Workload) -> int:
        """The workload's backpressure, holding it at the failover point until the operator has failed
        over: the failover then always comes mid-run, with notifications still to deliver while the DNS
        answer settles (to both Regions)."""
        waiting = self.failed_over_at is None and self.operator_failure is None
        if waiting and self._at_the_failover_point(workload):
            return sys.maxsize
        return self._depth()

    def _ready_to_fail_over(self, workload: Workload) -> bool:
        """At the failover point, once the old Region has answered ``old_region_replies_first``, or has
        done everything it was given (the first half may hold fewer to answer).

        Why no wait in seconds: the drill checks that both Regions answered, and how long the old
        Region takes to answer its first customers is the machine's load. A fresh-clone CI run failed
        over after a 60 s wait in which the old Region had answered nobody yet, and found it had sent
        no reply. The run's timeout bounds the wait (then the report says the old Region answered none).
        """
        if not self._at_the_failover_point(workload):
            return False
        if self._replies_by(0) >= self.drill.old_region_replies_first:
            return True
        if self._held_since is None:
            self._held_since = time.monotonic()
        if time.monotonic() - self._held_since > self.settings.timeout_seconds:
            return True
        return self._old_region_has_nothing_left(workload)

    def _old_region_has_nothing_left(self, workload: Workload) -> bool:
        """No delivery pending, nothing on the old Region's queue (visible, in flight or delayed),
        nothing waiting in Nylas' send queue: what it was given is answered, refused or dead-lettered."""
        url = self.regions[0].queues["NotificationQueue"]
        return (
            workload.pending() == 0
            and self._messages(url, VISIBLE, IN_FLIGHT, DELAYED) == 0
            and not self.nylas.queued_sends
        )

    def _replies_by(self, region: int) -> int:
        with self._sends_lock:
            return sum(1 for s in self._region_sends if s.region == region and s.emailed)

    # What stopped the operator's thread, if anything did: the workload waits at the failover point for
    # the failover, so a raising operator would otherwise hold the drill there until its test times out.
    operator_failure: BaseException | None = None

    def _operate_or_stop(self, workload: Workload, sender: RoutedSender) -> None:
        try:
            self._operate(workload, sender)
        except BaseException as failure:
            self.operator_failure = failure

    def _operate(self, workload: Workload, sender: RoutedSender) -> None:
        """Fail over mid-run, re-point the webhook, backfill the new Region, retire the old one."""
        while not self._stop.is_set() and not self._ready_to_fail_over(workload):
            time.sleep(0.1)
        if self.drill.slow_queued_send_seconds:
            self._hold_a_send(workload, sender)
        self.failed_over_at = time.time()  # before the write: the fence check counts from the command
        if self.held is not None:
            self.replicator.cut()  # the old Region is lost: its last writes never reach the new one
        # As `make failover` run in the new Region records it: the old Region hands over what it holds.
        new_queue = self.regions[1].queues["NotificationQueue"]
        fail_over(self.admin_dynamodb, ACTIVE_REGION_TABLE, REGIONS[1], expected_epoch=1, queue_url=new_queue)
        if self.held is not None:
            self.held.release()
        sender.fail_over()
        # Resolvers holding the old answer: the next customers' notifications reach the old Region,
        # which must not answer them (the backfill below finds them in the mailbox for the new one).
        # They come after the record's margin: any send of theirs by the old Region is then one no
        # read of the record before the failover allowed (the fence's own check, split_brain).
        margin = self._region_policy(0).margin_seconds
        time.sleep(margin)
        for payload in workload.new_customers(self.drill.stale_deliveries):
            sender.deliver_stale(payload)
        self.say(
            f"failed over to {REGIONS[1]} (epoch 2); {self.drill.stale_deliveries} new customers' "
            "notifications still reached the old Region"
        )
        # A delivery in flight to the old Region given two seconds to land there; the backfill reads the
        # mailbox, so it covers every message either way.
        time.sleep(2.0)
        self.stale_until = time.time()
        grants = list(self.workload_settings().agent_grant_ids())
        second = self.regions[1]
        plan = backfill.plan_backfill(
            NylasAdmin(self.nylas.url, LOCAL_API_KEY),
            DynamoDBStateStore(second.tables["StateTable"], self.admin_dynamodb, ttl_seconds=0),
            grants,
            backfill.Window(0, int(self.nylas.now()) + 1),
            agent_grant_ids=grants,
            trusted_lists=trusted_lists(
                TRUSTED_LIST_ID
            ),  # the run's TRUSTED_LISTS, as the stack's TrustedLists
        )
        queue = NotificationQueue(
            second.queues["NotificationQueue"], DEFAULT_QUEUE_MAX_MESSAGE_BYTES, self.admin_sqs
        )
        backfill.apply_backfill(plan, queue)
        self.backfilled = len(plan.to_enqueue)
        self.say(f"backfilled {self.backfilled} messages into {REGIONS[1]}")
        remaining = self.failed_over_at + self.drill.old_region_seconds - time.time()
        if remaining > 0:
            self._stop.wait(remaining)
        self._until_the_old_queue_is_empty()
        self._retire(0)
        self.say(f"{REGIONS[0]} retired")

    def _until_the_old_queue_is_empty(self) -> None:
        """Keep the old Region running until it has taken up every record its queue holds.

        Why: what the drill checks (and what ``fence_off`` must break) is what the old Region does with
        the records it gets after the failover. A window in seconds decides nothing on a loaded machine:
        a worker killed while holding the stale deliveries leaves them invisible for a visibility
        timeout (six function timeouts), longer than ``old_region_seconds``, and the old Region was
        gone before it saw them (CI: the mutant survived so). Each record is handed over, answered
        (the mutant), dead-lettered or deferred and taken up again; the run's timeout bounds the wait.
        """
        url = self.regions[0].queues["NotificationQueue"]
        deadline = time.monotonic() + self.settings.timeout_seconds
        while not self._stop.is_set() and time.monotonic() < deadline:
            if self._messages(url, VISIBLE, IN_FLIGHT, DELAYED) == 0:
                return
            self._stop.wait(0.5)
        self.say(f"{REGIONS[0]} retired with records still in its queue (the run's timeout)")

    def _hold_a_send(self, workload: Workload, sender: RoutedSender) -> None:
        """Issue 48's slow ``202``: a new customer writes to the old Region, and its next send (the
        reply, or one already on its way) is held until the failover is written, then queued."""
        policy = self._region_policy(0)
        # Held at most half the send timeout: the worker gets its 202, as in the issue (140 s of 150).
        self.held = HeldSend(
            self.nylas,
            workload.send_queue,
            self.drill.slow_queued_send_seconds,
            longest_hold=policy.send_timeout_seconds / 2,
        )
        self.region_proxies[0].rules.insert(
            0, Rule("slow_queued_send", self.held.matches, "delay", seconds=self.held.hold)
        )
        self.held.arm()
        for payload in workload.new_customers(1):
            sender.deliver(payload)
        if not self.held.arrived.wait(timeout=_MAX_HOLD_SECONDS):
            self.say("no send by the old Region to hold: the failover goes on without the slow 202")
            return
        self.say("the old Region's send held at Nylas' door: failing over now")

    def function_errors(self) -> list[str]:
        """What either Region's webhook function raised in this run."""
        return [*self.gateway.function_errors, *self.second_gateway.function_errors]

    # ---- the run --------------------------------------------------------------------------------

    def run(self) -> DrillReport:  # type: ignore[override]
        started = time.monotonic()
        try:
            plan = self._stand_up(self.settings.workers * len(REGIONS))
            threading.Thread(target=self._supervise, daemon=True).start()
            sender = RoutedSender(
                (self.gateway.url, self.second_gateway.url),
                LOCAL_WEBHOOK_SECRET,
                retry_delays=(0.3, 0.8),
            )
            workload = Workload(
                self.workload_settings(),
                self.nylas,
                sender,
                random.Random(self.rng.random()),
                queue_depth=lambda: self._paced_depth(workload),
                advance_clock=self.advance_mailbox_clock,
            )
            self.nylas.on_message_created = workload.on_message_created
            operator = threading.Thread(target=self._operate_or_stop, args=(workload, sender), daemon=True)
            operator.start()
            threading.Thread(target=self._report_progress, args=(workload,), daemon=True).start()
            self.say(
                f"{len(REGIONS)} Regions x {self.settings.workers} workers, {self.settings.notifications} "
                f"notifications, seed {self.settings.seed}, failover after {self.drill.failover_after:.0%}"
            )
            plan.start_outages()
            workload.play()
            operator.join(timeout=self.settings.timeout_seconds)
            if self.operator_failure is not None:
                failure = self.operator_failure
                raise RuntimeError("the drill's operator failed before the failover") from failure
            drained = self._wait(workload, started)
            plan.stop_outages()
            workload.shutdown()
            self.replicator.stop()
            chaos = self._report(workload, sender, plan, FuzzResult(), drained, started)
            chaos.workload = workload.settings
            return self._drill_report(chaos, sender)
        finally:
            self._teardown()

    def _drill_report(self, chaos: ChaosReport, sender: RoutedSender) -> DrillReport:
        policy = self._region_policy(1)
        handover = policy.handover_seconds
        report = DrillReport(
            self.drill,
            chaos,
            handover_seconds=handover,
            deliveries_to_old_region_after_failover=sender.to_old_after_failover,
            handed_over=sum(1 for r in self.logs.records if r.get("message") == HANDED_OVER),
            backfilled=self.backfilled,
            items_replicated=self.replicator.copied,
            replication_conflicts=self.replicator.conflicts,
        )
        if self.held is not None and self.held.answered.is_set():
            report.held_send_status = self.held.status
            report.held_send_seconds = self.held.held_seconds
            report.held_send_target = self.held.target
        sent = [s for s in self._region_sends if s.emailed]
        report.replies_by_region = {
            REGIONS[r]: sum(1 for s in sent if s.region == r) for r in range(len(REGIONS))
        }
        failed_over = self.failed_over_at
        if failed_over is None:
            return report
        old = [s for s in self._region_sends if s.region == 0 and s.started >= failed_over]
        report.old_region_sends_after_failover = len(old)
        report.split_brain = [
            f"{REGIONS[0]} sent a reply to {s.target or '?'} {s.started - failed_over:.1f} s after the "
            f"failover (a send follows its fence read within {policy.margin_seconds:.1f} s)"
            for s in old
            if s.started > failed_over + policy.margin_seconds
        ]
        new = sorted(s.started for s in sent if s.region == 1)
        if new:
            report.rto_first_reply_seconds = new[0] - failed_over
        arrived = {str(message.get("id")): at for at, message in self.nylas.mailbox()}
        backlog_ends = self.stale_until or failed_over  # the last message the old Region was sent
        backlog = [
            s.started for s in sent if s.region == 1 and arrived.get(s.target, float("inf")) <= backlog_ends
        ]
        if backlog:
            report.rto_backlog_seconds = max(backlog) - failed_over
        return report

    def _teardown(self) -> None:
        replicator = getattr(self, "replicator", None)
        if replicator is not None:
            replicator.stop()
        for component in [getattr(self, "second_gateway", None), *getattr(self, "region_proxies", [])]:
            if component is not None:
                component.stop()
        super()._teardown()


def render_drill(report: DrillReport) -> str:
    """The drill's verdict and figures, for a terminal and for docs/reliability.md."""
    first = report.rto_first_reply_seconds
    backlog = report.rto_backlog_seconds
    lines = [
        render(report.chaos),
        "",
        f"failover drill: {'OK' if report.ok else 'FAILED'}",
        f"  handover {report.handover_seconds:.1f} s; RTO to the new Region's first reply "
        f"{'-' if first is None else f'{first:.1f} s'}, to the backlog's last reply "
        f"{'-' if backlog is None else f'{backlog:.1f} s'}",
        f"  replies by Region: {report.replies_by_region}; old Region's sends after the failover "
        f"{report.old_region_sends_after_failover}, not allowed by a read before it "
        f"{len(report.split_brain)}",
        "  deliveries to the old Region after the failover "
        f"{report.deliveries_to_old_region_after_failover}; handed over to the new Region's queue "
        f"{report.handed_over}; backfilled {report.backfilled}; items replicated {report.items_replicated} "
        f"(kept the new Region's write {report.replication_conflicts})",
    ]
    if report.settings.slow_queued_send_seconds:
        lines.append(
            "  the old Region's send held across the failover: "
            + (
                f"answered {report.held_send_status} after {report.held_send_seconds:.1f} s (reply to "
                f"{report.held_send_target or '?'}), queued {report.settings.slow_queued_send_seconds:g} s; "
                "the new Region's replica cut at the failover"
                if report.held_send_status is not None
                else "none (no send by the old Region to hold)"
            )
        )
    lines += [f"  split brain: {line}" for line in report.split_brain]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chaos.failover", description=__doc__.split("\n")[0])
    parser.add_argument("--notifications", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2, help="replier workers per Region")
    parser.add_argument("--fault-probability", type=float, default=0.02)
    parser.add_argument("--failover-after", type=float, default=0.5, help="share of the notifications")
    parser.add_argument("--old-region-replies", type=int, default=5, help="its replies before the failover")
    parser.add_argument("--replication-lag", type=float, default=2.0)
    parser.add_argument(
        "--stale-deliveries",
        type=int,
        default=3,
        help="deliveries still reaching the old Region after the failover",
    )
    parser.add_argument("--old-region-seconds", type=float, default=30.0)
    parser.add_argument(
        "--slow-queued-send",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="issue 48: the old Region's send held across the failover and answered 202, sent by the "
        "queue SECONDS later (at most 90); the new Region's replica cut at the failover (0: off)",
    )
    parser.add_argument("--mutant", default=None, help="fence_off: the drill must catch it")
    parser.add_argument("--timeout", type=float, default=900.0, help="the whole run's limit, seconds")
    parser.add_argument(
        "--logs", default="", help="write the handlers' log records to this file (JSON lines), as make chaos"
    )
    args = parser.parse_args(argv)
    drill = DrillSettings(
        chaos=ChaosSettings(
            seed=args.seed,
            notifications=args.notifications,
            workers=args.workers,
            fault_probability=args.fault_probability,
            mutant=args.mutant,
            timeout_seconds=args.timeout,
            logs_path=Path(args.logs) if args.logs else None,
        ),
        failover_after=args.failover_after,
        old_region_replies_first=args.old_region_replies,
        replication_lag_seconds=args.replication_lag,
        stale_deliveries=args.stale_deliveries,
        old_region_seconds=args.old_region_seconds,
        slow_queued_send_seconds=args.slow_queued_send,
    )
    report = FailoverDrill(drill, progress=sys.stderr).run()
    print(render_drill(report))
    if args.mutant:
        return 0 if report.caught() else 1
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
