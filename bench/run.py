"""One ``python -m bench`` run: every measurement the page is rendered from (``--save-run`` pickles it)."""

from dataclasses import dataclass

from bench.artifacts import Artifact
from bench.batches import BatchResult
from bench.bill import BillResult
from bench.coldstart import ColdStartResult
from bench.container import ContainerResult
from bench.machine import Machine
from bench.paths import PathsResult
from bench.real_latency import RealLatencyResult
from bench.throughput import ThroughputResult
from bench.time_to_reply import TimeToReplyResult
from bench.warm_path import WarmPathResult


@dataclass(frozen=True)
class Run:
    """Everything one ``python -m bench`` measured."""

    command: str
    machine: Machine
    load_at_end: str
    seconds: float
    warm_path: WarmPathResult
    cold_start: ColdStartResult
    paths: PathsResult
    throughput: list[ThroughputResult]
    batches: list[BatchResult]
    artifacts: list[Artifact] | None
    message_bytes: int
    time_to_reply: TimeToReplyResult
    real_latency: RealLatencyResult | None = None
    containers: tuple[ContainerResult, ...] = ()
    # The bill at real batch fill: the mixed stream at saturation, a long thread, the memory sizes.
    bill: BillResult | None = None
