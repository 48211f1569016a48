"""The replier's memory size by measurement: 160, 192 and 256 MB of CPU and memory, at real latency.

Lambda gives a function CPU in proportion to its memory (1,769 MB is one
vCPU) and kills it past its memory. Here the replier runs in a process of its
own (``bench/memory_child.py``, the template environment as ``bench.container``
builds it), capped by cgroup v1 at each size's share of a CPU
(``cpu.cfs_quota_us`` over a 100 ms period) and at the size itself
(``memory.limit_in_bytes``, and the same with swap), with Nylas behind the
latency proxy and the agent taking the agent's time (``bench.latency``,
``bench.slow_agent``). It runs the template's batch (``BatchSize`` threads
at once in one invocation) and one record alone, the same messages (the same
latency draws) at every size, and reports billed time per invocation and per
notification, time to reply (the invocation handed its batch to the reply
reaching the emulator), peak memory (``VmHWM``) and any OOM kill.

The cgroups are made for the run and removed after it, failure or not (any
process left in one is moved back to the root first). Where cgroups are not
writable (not root, cgroup v2 only) the part is skipped and the page says why.
"""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench.container import _environment
from bench.latency import LatencyModel, LatencyProxy, through
from bench.stack import clear_tables, parts
from devstack.counting import function_timeout
from devstack.events import AGENT_GRANT_ID, envelope, sqs_event
from devstack.stack import LocalStack

CGROUP_ROOT = Path("/sys/fs/cgroup")
# Issue 46: the template's 256 MB and the two sizes below it worth a saving (128 MB was measured before and
# ruled out: its CPU share stretched time to reply; 512 MB only bills more for a process that waits).
SIZES_MB = (160, 192, 256)
ONE_VCPU_MB = 1769
PERIOD_US = 100_000
CHILD = Path(__file__).resolve().parent / "memory_child.py"
# The heavy batch: threads whose messages are long HTML emails (quoted history, inline styles), as the
# thread read returns them; the notification arrives truncated (``message.created.truncated``), as Nylas
# sends one over its limit, so the body reaches the replier only through the thread read.
HEAVY_MESSAGES_PER_THREAD = 2
HEAVY_BODY_BYTES = 500_000


def cpu_quota_us(memory_mb: int, period_us: int = PERIOD_US) -> int:
    """The CFS quota that gives ``memory_mb`` its share of one vCPU (Lambda: 1,769 MB = one vCPU)."""
    return max(1000, round(period_us * memory_mb / ONE_VCPU_MB))


def oom_kills(oom_control: str) -> int:
    """``oom_kill N`` of a cgroup v1 ``memory.oom_control`` (0 when the kernel does not count them)."""
    for line in oom_control.splitlines():
        name, _, value = line.partition(" ")
        if name == "oom_kill":
            return int(value)
    return 0


def cgroups_unavailable(root: Path = CGROUP_ROOT) -> str | None:
    """Why the part cannot run here, or None when cgroup v1 CPU and memory control is writable."""
    for controller in ("cpu", "memory"):
        directory = root / controller
        if not (directory / "cgroup.procs").exists():
            return f"no cgroup v1 {controller} controller at {directory}"
        if not os.access(directory, os.W_OK):
            return f"{directory} is not writable (the part needs root)"
    return None


@contextmanager
def capped(name: str, memory_mb: int, root: Path = CGROUP_ROOT) -> Iterator[tuple[Path, Path]]:
    """A CPU cgroup at ``memory_mb``'s share of a vCPU and a memory cgroup of ``memory_mb``; removed after."""
    cpu, memory = root / "cpu" / name, root / "memory" / name
    made: list[Path] = []
    try:
        for directory in (cpu, memory):
            directory.mkdir()
            made.append(directory)
        (cpu / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (cpu / "cpu.cfs_quota_us").write_text(str(cpu_quota_us(memory_mb)))
        # What the process was charged before it joined (its interpreter's start-up) moves with it, where
        # the kernel still allows it (newer kernels refuse: VmHWM, not the cgroup's peak, is the figure).
        with contextlib.suppress(OSError):
            (memory / "memory.move_charge_at_immigrate").write_text("3")
        limit = str(memory_mb * 1024 * 1024)
        (memory / "memory.limit_in_bytes").write_text(limit)
        swap = memory / "memory.memsw.limit_in_bytes"
        if swap.exists():
            swap.write_text(limit)
        yield cpu, memory
    finally:
        for directory in reversed(made):
            _release(directory)


def _release(directory: Path) -> None:
    """Move whatever is left in ``directory`` back to its controller's root, then remove it."""
    procs = directory.parent / "cgroup.procs"
    for attempt in range(50):
        try:
            left = (directory / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in left:
            with contextlib.suppress(OSError):  # gone meanwhile
                procs.write_text(pid)
        try:
            directory.rmdir()
            return
        except OSError:
            time.sleep(0.1 * (attempt + 1))
    print(f"[bench] could not remove cgroup {directory}", file=sys.stderr)


@dataclass(frozen=True)
class Invoked:
    """One invocation of the capped replier."""

    kind: str  # "warm-up", "batch" or "single"
    records: int
    billed_ms: int
    failed: int
    hwm_mb: float
    reply_seconds: tuple[float, ...]  # per record answered: the invocation's start to its reply at Nylas
    unanswered: int


@dataclass(frozen=True)
class SizeRun:
    """One memory size: its cap, its invocations, and how the process ended."""

    memory_mb: int
    quota_us: int
    init_seconds: float
    init_hwm_mb: float
    invocations: tuple[Invoked, ...]
    returncode: int
    oom_kills: int
    cgroup_peak_mb: float  # memory.max_usage_in_bytes: the cgroup's peak, page cache included
    error: str = ""

    @property
    def heavy_hwm_mb(self) -> float:
        """Peak memory once the heavy batch (long emails) has run: it runs last."""
        heavy = self.of("heavy")
        return max((i.hwm_mb for i in heavy), default=float("nan"))

    def of(self, kind: str) -> list[Invoked]:
        return [i for i in self.invocations if i.kind == kind]

    @property
    def oom(self) -> bool:
        return self.oom_kills > 0 or self.returncode == -9

    @property
    def batch_hwm_mb(self) -> float:
        """Peak memory once every full batch has run (VmHWM only grows; singles run after the batches)."""
        batches = self.of("batch")
        return max((i.hwm_mb for i in batches), default=float("nan"))


@dataclass(frozen=True)
class MemoryResult:
    sizes: tuple[SizeRun, ...] = ()
    batch_size: int = 10
    skipped: str = ""  # why the part did not run (cgroups not writable), else ""
    load_before: str = ""
    load_after: str = ""
    model: LatencyModel = field(default_factory=LatencyModel)


def _plan(batches: int, singles: int, batch_size: int) -> list[tuple[str, list[str]]]:
    """The invocations, as (kind, latency keys): the warm-up, the full batches, the singles, the heavy."""
    plan = [("warm-up", ["w0"])]
    plan += [("batch", [f"b{b}r{r}" for r in range(batch_size)]) for b in range(batches)]
    plan += [("single", [f"s{s}"]) for s in range(singles)]
    plan += [("heavy", [f"h{r}" for r in range(batch_size)])]
    return plan


def _long_email(index: int) -> str:
    """A long HTML email of about ``HEAVY_BODY_BYTES``: paragraphs of quoted history."""
    paragraph = (
        f'<p style="margin:0 0 12px 0;font-family:Arial">Message {index}: following up on the order, the '
        "tracking page still shows it at the depot; below is everything we wrote so far.</p>\n"
    )
    return "<html><body>" + paragraph * (HEAVY_BODY_BYTES // len(paragraph)) + "</body></html>"


def _one_size(
    stack: LocalStack,
    memory_mb: int,
    model: LatencyModel,
    plan: list[tuple[str, list[str]]],
) -> SizeRun:
    resources, nylas = parts(stack)
    clear_tables(stack)
    queue_arn = resources.queue_arns["NotificationQueue"]
    run_id = time.time_ns()
    events, ids = [], []
    for kind, keys in plan:
        heavy = kind == "heavy"
        messages = []
        for index, key in enumerate(keys):
            for position in range(HEAVY_MESSAGES_PER_THREAD if heavy else 1):
                message = nylas.deliver_inbound(
                    AGENT_GRANT_ID,
                    from_email=f"mem{memory_mb}-{key}@example.com",
                    subject=f"Order {4000 + index} #mem{key}",
                    body=_long_email(position) if heavy else "<p>Where is my order?</p>",
                    thread_id=f"bench-mem-{memory_mb}-{run_id}-{key}~mem{key}",
                    notify=False,
                )
            messages.append(message)  # the thread's newest: the one its notification is about
        ids.append([m["id"] for m in messages])
        notification_type = "message.created.truncated" if heavy else "message.created"
        events.append(
            sqs_event(
                [envelope(m, notification_type=notification_type) for m in messages], queue_arn=queue_arn
            )
        )
    name = f"replyonce-bench-{memory_mb}mb-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="replyonce-mem-") as directory, capped(name, memory_mb) as groups:
        events_file, result_file = Path(directory, "events.json"), Path(directory, "result.json")
        events_file.write_text(json.dumps(events))
        environment = _environment(stack, "ReplierFunction")
        environment["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(memory_mb)
        environment["MEMORY_CGROUPS"] = os.pathsep.join(str(g) for g in groups)
        error = ""
        try:
            completed = subprocess.run(  # noqa: S603 - our own interpreter and script, no shell
                [
                    sys.executable,
                    str(CHILD),
                    str(events_file),
                    str(result_file),
                    str(function_timeout("ReplierFunction")),
                    str(memory_mb),
                    str(model.seed),
                    str(model.scale),
                ],
                env=environment,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                timeout=1200,
                check=False,
            )
            returncode = completed.returncode
            if returncode != 0:
                error = completed.stderr[-2000:]
        except subprocess.TimeoutExpired as expired:
            returncode, error = -1, f"timed out after {expired.timeout:.0f} s"
        memory = groups[1]
        kills = oom_kills((memory / "memory.oom_control").read_text())
        peak = int((memory / "memory.max_usage_in_bytes").read_text()) / 1024 / 1024
        result = json.loads(result_file.read_text()) if result_file.exists() else {"events": []}
    time.sleep(0.5)  # the last replies' arrival
    replies: dict[str, float] = {}
    for at, message in nylas.mailbox():
        target = message.get("in_reply_to")
        if target and "sent" in message.get("folders", []):
            replies.setdefault(target, at)
    invoked = []
    for (kind, _), message_ids, ran in zip(plan, ids, result["events"], strict=False):
        answered = [replies[m] - ran["started"] for m in message_ids if m in replies]
        invoked.append(
            Invoked(
                kind=kind,
                records=ran["records"],
                billed_ms=ran["billed_ms"],
                failed=ran["failed"],
                hwm_mb=ran["hwm_mb"],
                reply_seconds=tuple(answered),
                unanswered=len(message_ids) - len(answered),
            )
        )
    return SizeRun(
        memory_mb=memory_mb,
        quota_us=cpu_quota_us(memory_mb),
        init_seconds=result.get("init_seconds", float("nan")),
        init_hwm_mb=result.get("init_hwm_mb", float("nan")),
        invocations=tuple(invoked),
        returncode=returncode,
        oom_kills=kills,
        cgroup_peak_mb=peak,
        error=error,
    )


def measure(
    stack: LocalStack,
    proxy: LatencyProxy,
    model: LatencyModel,
    *,
    batches: int = 2,
    singles: int = 4,
    batch_size: int = 10,
    sizes: tuple[int, ...] = SIZES_MB,
    progress: Callable[[str], None] | None = None,
) -> MemoryResult:
    """Each size in turn, the same plan of invocations at each (so the same latency draws)."""
    from bench.machine import Machine

    reason = cgroups_unavailable()
    if reason is not None:
        if progress:
            progress(f"memory size: skipped, {reason}")
        return MemoryResult(batch_size=batch_size, skipped=reason, model=model)
    plan = _plan(batches, singles, batch_size)
    load_before = Machine.load_now()
    runs = []
    with through(proxy):
        for size in sizes:
            if progress:
                progress(
                    f"memory size: {size} MB ({cpu_quota_us(size)}/{PERIOD_US} us of CPU), "
                    f"{batches} batches of {batch_size} and {singles} single records"
                )
            runs.append(_one_size(stack, size, model, plan))
    return MemoryResult(
        sizes=tuple(runs),
        batch_size=batch_size,
        load_before=load_before,
        load_after=Machine.load_now(),
        model=model,
    )
