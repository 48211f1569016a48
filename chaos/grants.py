"""Many grants in one chaos run (issue 42): a fleet of registered mailboxes, their lives, one flooding.

``make chaos ARGS="--grants 100"`` adds a fleet of agent grants to the run's two: each registered in the
grant registry in ``send`` mode by the operator's own code (``ops.grants``, as ``make grants set`` does)
before the workload starts, each a mailbox of the emulator. Customers write to them (a share of the
run's conversations, ``--grant-share``), one grant taking ``--flood-share`` of those (the flood) and the
others the rest evenly, and while mail flows the grants live:

- **created**: Nylas creates new grants (``grant.created``, the emulator's): the stack registers them in
  its new-grant mode (shadow); the operator promotes them to ``send`` later;
- **re-moded**: the operator moves grants ``send -> shadow -> send`` and ``send -> review -> send``;
- **paused**: the operator pauses grants (``enabled: false``) and resumes them, then redrives their dead
  letters (the runbook: operations.md, "Pausing");
- **expired**: Nylas expires grants (``grant.expired``; their new mail held un-notified, their calls
  ``401``) and they are re-authenticated (``grant.updated``, the held mail notified again);
- **deleted**: the grant's ``grant.deleted`` is delivered while Nylas still takes its calls (the worst
  case: the stack must not rest on Nylas refusing at once); once the stack has recorded the deletion
  the emulator keeps taking the grant's calls for a lag (``DELETION_LAG_SECONDS``), then deletes it.

Every event goes into :attr:`GrantFleet.events` with its real time: the run's own log of what happened,
which the per-grant checker (``chaos/grant_checks.py``) reads as ground truth with the emulator's record
of what was sent and drafted. Events fire at fractions of the run's notifications (:data:`SCHEDULE`), so
a short run plays each one.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from devstack.events import envelope, notification_envelope
from devstack.nylas.grant_life import grant_object

FLEET_DOMAIN = "fleet.replyonce.example"

# The lives the fleet plays, at a fraction of the run's notifications each: (fraction, kind, role).
# A role names a few grants (``GrantFleet._roles``); each kind is one event of each of its grants.
SCHEDULE: tuple[tuple[float, str, str], ...] = (
    (0.10, "create", "created"),
    (0.15, "shadow", "shadowed"),
    (0.15, "review", "reviewed"),
    (0.20, "pause", "paused"),
    (0.25, "expire", "expired"),
    (0.35, "delete", "deleted"),
    (0.45, "resume", "paused"),
    (0.45, "reauthenticate", "expired"),
    (0.55, "send", "shadowed"),
    (0.55, "send", "reviewed"),
    (0.60, "send", "created"),
)
# After the stack recorded a deletion, Nylas keeps taking the grant's calls this long (then deletes it
# at the emulator), longer than the run's registry cache: a record started on a cache that does not know
# yet meets only the send-time check.
DELETION_LAG_SECONDS = 12.0
# Messages to a grant right before its deletion is notified, and as many right after: in flight while it is
# processed.
LAST_BURST = 10
# Messages to a grant once a change of its mode has reached every record (shadow, review, created).
PROBES = 3


def fleet_grant(index: int) -> str:
    return f"grant-fleet-{index:03d}"


def fleet_address(index: int) -> str:
    return f"mailbox{index:03d}@{FLEET_DOMAIN}"


@dataclass(frozen=True)
class LifeEvent:
    """One thing that happened to a grant, when (real time), and the mode it answers in from then on.

    ``kind``: ``registered`` (by the operator, before the run), ``created`` (Nylas; the stack's new-grant
    mode), ``mode`` (the operator set ``mode``), ``pause``/``resume`` (the operator), ``expire``/
    ``reauthenticate`` (Nylas), ``delete_notified`` (``grant.deleted`` accepted by the webhook),
    ``delete_recorded`` (the stack's registry shows the deletion: its processing is over by then),
    ``delete_at_nylas`` (the emulator refuses the grant's calls from now on).
    """

    grant_id: str
    kind: str
    at: float
    mode: str = ""


class Operator(Protocol):
    """What the fleet asks of the run's operator (``chaos.run``): the registry and the dead letters."""

    def set_mode(self, grant_id: str, mode: str, action: str) -> None: ...
    def pause(self, grant_id: str) -> None: ...
    def resume(self, grant_id: str) -> None: ...
    def deletion_recorded(self, grant_id: str) -> bool: ...
    def redrive(self, grant_id: str) -> int: ...


@dataclass
class GrantFleet:
    """The fleet's grants, who writes to them, and their lives; ``events`` is the run's log of them."""

    count: int
    flood_share: float
    workload: Any  # chaos.workload.Workload: its mailbox writes and deliveries
    operator: Operator | None = None
    effect_seconds: float = 0.0  # a registry change reaches every record started this long after it
    events: list[LifeEvent] = field(default_factory=list)
    redriven: int = 0

    def __post_init__(self) -> None:
        self.grants = {fleet_grant(i): fleet_address(i) for i in range(self.count)}
        per_role = max(1, self.count // 50)
        ids = list(self.grants)
        # The flood is the first grant; each role takes its own grants from the end (never the flood).
        self.flood = ids[0]
        roles = ("shadowed", "reviewed", "paused", "expired", "deleted")
        self._roles: dict[str, list[str]] = {}
        for number, role in enumerate(roles):
            self._roles[role] = ids[len(ids) - (number + 1) * per_role : len(ids) - number * per_role]
        # Grants Nylas creates mid-run: not in the emulator, nor the registry, until then.
        self._roles["created"] = [f"grant-fleet-new-{i:02d}" for i in range(per_role)]
        self.created_addresses = {
            g: f"new{i:02d}@{FLEET_DOMAIN}" for i, g in enumerate(self._roles["created"])
        }
        self._lock = threading.Lock()
        self._done: set[int] = set()
        self._replaying = threading.local()
        self._threads: list[threading.Thread] = []
        self._customers = 0

    # ---- who the fleet is -------------------------------------------------------------------------

    def addresses(self) -> dict[str, str]:
        """Every fleet grant that exists now (at Nylas) and its address."""
        with self._lock:
            created = {g for e in self.events if e.kind == "created" for g in [e.grant_id]}
        return {**self.grants, **{g: a for g, a in self.created_addresses.items() if g in created}}

    def all_addresses(self) -> dict[str, str]:
        """Every grant the fleet may ever hold, created ones included."""
        return {**self.grants, **self.created_addresses}

    def role(self, name: str) -> list[str]:
        return list(self._roles[name])

    def log(self, grant_id: str, kind: str, mode: str = "") -> None:
        with self._lock:
            self.events.append(LifeEvent(grant_id, kind, time.time(), mode))

    def registered(self) -> None:
        """The operator registered every grant in send mode before the workload started."""
        for grant_id in self.grants:
            self.log(grant_id, "registered", "send")

    # ---- mail -------------------------------------------------------------------------------------

    def converse(self) -> None:
        """One customer writes to a fleet grant (the flood's share to the flood): a question, sometimes a
        burst; followed up like any customer thread when the agent answers."""
        w = self.workload
        live = self.addresses()
        nylas = w.nylas
        grants = [g for g in live if nylas.grant_state(g) != "deleted"]
        if w._random() < self.flood_share and self.flood in grants:
            grant = self.flood
        else:
            grant = w._choice(sorted(g for g in grants if g != self.flood))
        with self._lock:
            self._customers += 1
            customer = f"fleet{self._customers}-{uuid.uuid4().hex[:4]}@customers.example"
        w.features["fleet_conversation"] += 1
        if grant == self.flood:
            w.features["fleet_flood"] += 1
        first = w._inbound(grant, customer, label="customer")
        messages = [first]
        if w._random() < w.settings.burst_probability:
            messages += [
                w._inbound(grant, customer, label="customer", thread_id=first["thread_id"])
                for _ in range(w._randint(1, 2))
            ]
        w._customer_threads[first["thread_id"]] = (grant, customer)
        for message in messages:
            self.notify(message)

    def notify(self, message: dict[str, Any]) -> None:
        """Nylas notifies a fleet grant's new message unless the grant is expired (held until it is
        re-authenticated, then notified) or deleted (never)."""
        if self.workload.nylas.grant_state(message["grant_id"]) != "valid":
            self.workload.features["fleet_held"] += 1
            return
        self.workload._notify(message)

    def on_inbound_created(self, message: dict[str, Any]) -> None:
        """The emulator's ``message.created`` of an inbound message: delivered only when it replays the
        mail an expired grant held, at its re-authentication (every other is the workload's to notify)."""
        if getattr(self._replaying, "on", False):
            self.workload.features["fleet_replayed"] += 1
            self.workload.deliver(envelope(message))

    # ---- lives ------------------------------------------------------------------------------------

    def start(self, progress: Callable[[], float], stopped: threading.Event) -> None:
        """Play :data:`SCHEDULE` as the run's notifications reach each fraction (a thread of its own)."""
        thread = threading.Thread(target=self._play, args=(progress, stopped), daemon=True, name="fleet")
        thread.start()
        self._threads.append(thread)

    def _play(self, progress: Callable[[], float], stopped: threading.Event) -> None:
        # Steps at least two registry bounds apart, however fast the run's mail comes: a mode's window is
        # then longer than the margin the checker leaves on each side of a change.
        gap, last = 2 * self.effect_seconds, 0.0
        for number, (fraction, kind, role) in enumerate(SCHEDULE):
            if number and fraction != SCHEDULE[number - 1][0]:
                last = time.monotonic()
            while not stopped.is_set() and (progress() < fraction or time.monotonic() < last + gap):
                time.sleep(0.2)
            if stopped.is_set():
                return
            for grant_id in self._roles[role]:
                self._submit(kind, grant_id)
            with self._lock:
                self._done.add(number)

    def _submit(self, kind: str, grant_id: str) -> None:
        # Each event on its own thread: a deletion waits for the stack, the others must not wait for it.
        thread = threading.Thread(target=self._event, args=(kind, grant_id), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _event(self, kind: str, grant_id: str) -> None:
        w, operator = self.workload, self.operator
        assert operator is not None
        w.features[f"grant_{kind}"] += 1
        if kind == "create":
            address = self.created_addresses[grant_id]
            w.nylas.create_grant(grant_id, address, name=f"Fleet {grant_id[-2:]}")
            self.log(grant_id, "created", "shadow")
            self._probe(grant_id)
        elif kind in ("shadow", "review", "send"):
            operator.set_mode(grant_id, kind, "promote" if kind == "send" else "set")
            self.log(grant_id, "mode", kind)
            if kind != "send":
                self._probe(grant_id)
        elif kind == "pause":
            operator.pause(grant_id)
            self.log(grant_id, "pause")
        elif kind == "resume":
            operator.resume(grant_id)
            self.log(grant_id, "resume")
            # The runbook: once resumed, what dead-lettered while paused goes back to the queue.
            self.redriven += operator.redrive(grant_id)
        elif kind == "expire":
            w.nylas.expire_grant(grant_id)
            self.log(grant_id, "expire")
        elif kind == "reauthenticate":
            self._replaying.on = True
            try:
                w.nylas.reauthenticate_grant(grant_id)
            finally:
                self._replaying.on = False
            self.log(grant_id, "reauthenticate")
            self.redriven += operator.redrive(grant_id)
        elif kind == "delete":
            self._delete(grant_id)

    def _probe(self, grant_id: str) -> None:
        """Once the change has reached every record, a few customers write to the grant: mail its new mode
        must handle, however the run's other mail falls."""
        time.sleep(self.effect_seconds)
        w = self.workload
        for _ in range(PROBES):
            message = w._inbound(grant_id, f"probe{uuid.uuid4().hex[:6]}@customers.example", label="customer")
            w.features["fleet_mode_probe"] += 1
            self.notify(message)

    def _delete(self, grant_id: str) -> None:
        """``grant.deleted`` delivered while Nylas still takes the grant's calls; once the stack has
        recorded it, the calls go on for :data:`DELETION_LAG_SECONDS` (mail keeps arriving), then Nylas
        deletes the grant."""
        w, operator = self.workload, self.operator
        assert operator is not None
        grant = {"id": grant_id, "provider": "nylas", "email": self.grants[grant_id]}
        # A last burst of mail just before: records in flight when the deletion is processed.
        for _ in range(LAST_BURST):
            message = w._inbound(grant_id, f"last{uuid.uuid4().hex[:6]}@customers.example", label="customer")
            w.features["fleet_before_deletion"] += 1
            self.notify(message)
        payload = notification_envelope("grant.deleted", {"object": grant_object(grant, "grant.deleted")})
        w.deliver(payload)
        self.log(grant_id, "delete_notified")
        # And as many right after: queued behind the deletion, run beside it or just after it, by containers
        # whose cache of the registry does not know yet.
        for _ in range(LAST_BURST):
            message = w._inbound(grant_id, f"last{uuid.uuid4().hex[:6]}@customers.example", label="customer")
            w.features["fleet_before_deletion"] += 1
            self.notify(message)
        deadline = time.monotonic() + 600
        while not operator.deletion_recorded(grant_id) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.log(grant_id, "delete_recorded")
        lag_ends = time.monotonic() + DELETION_LAG_SECONDS
        while time.monotonic() < lag_ends:
            # Mail keeps coming to the deleted grant while Nylas still notifies it.
            customer = f"late{uuid.uuid4().hex[:6]}@customers.example"
            message = w._inbound(grant_id, customer, label="customer")
            w.features["fleet_after_deletion"] += 1
            self.notify(message)
            time.sleep(0.5)
        w.nylas.delete_grant(grant_id)
        self.log(grant_id, "delete_at_nylas")

    def finished(self) -> bool:
        """Every scheduled event has fired and finished."""
        with self._lock:
            scheduled = len(self._done) == len(SCHEDULE)
        return scheduled and not any(t.is_alive() for t in self._threads)

    def wait(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))

    def figures(
        self, mailbox: list[tuple[float, dict[str, Any]]], sends: list[Any], ours: set[str]
    ) -> dict[str, int]:
        """What the fleet played, for the run's table."""
        fleet = self.all_addresses()
        inbound = [
            m for _, m in mailbox if m.get("grant_id") in fleet and "sent" not in (m.get("folders") or [])
        ]
        emails = [r for r in sends if r.grant_id in fleet and r.message["id"] not in ours]
        with self._lock:
            kinds = Counter(e.kind for e in self.events if e.kind != "registered")
        figures = {
            "grants registered in send mode before the run": len(self.grants),
            "grants created by Nylas mid-run (shadow)": kinds["created"],
            "messages to the fleet's grants": len(inbound),
            f"messages to the flooding grant ({self.flood})": sum(
                m["grant_id"] == self.flood for m in inbound
            ),
            "quiet grants that received mail": len({m["grant_id"] for m in inbound} - {self.flood}),
            "emails the fleet's grants sent": len(emails),
        }
        figures.update({f"life events: {kind}": count for kind, count in sorted(kinds.items())})
        return figures
