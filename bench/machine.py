"""Where a run happened: times mean little without the machine and its load."""

import datetime
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load_average() -> str:
    try:
        return " / ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "n/a"


@dataclass(frozen=True)
class Machine:
    """The facts ``docs/performance.md`` states next to every time."""

    date: str
    cpus: int
    cpu_model: str
    python: str
    platform: str
    load_at_start: str

    @classmethod
    def here(cls) -> "Machine":
        return cls(
            date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            cpus=os.cpu_count() or 0,
            cpu_model=_cpu_model(),
            python=f"{platform.python_implementation()} {platform.python_version()}",
            platform=f"{platform.system()} {platform.release()} {platform.machine()}",
            load_at_start=_load_average(),
        )

    @staticmethod
    def load_now() -> str:
        """1/5/15-minute load average: a loaded machine stretches every time."""
        return _load_average()

    @staticmethod
    def executable() -> str:
        return sys.executable
