"""The replier's container in a fresh interpreter, capped to a memory size's CPU and memory, at real latency.

Run by ``bench.memory_size`` as ``python bench/memory_child.py EVENTS RESULT TIMEOUT MB SEED SCALE``,
never imported. ``MEMORY_CGROUPS`` (``os.pathsep``-separated cgroup directories) is read first: this
process writes its own pid into each one's ``cgroup.procs`` before it imports anything of the replier,
so its init and every invocation run capped (the interpreter's own start-up does not). The agent is
``bench.slow_agent``'s (the draft takes the model's time); Nylas is reached through the parent's latency
proxy (``NYLAS_API_URI``). After each event the RESULT file is written again, so what ran before an OOM
kill is still there. Everything the handler prints goes to stdout, which the parent discards.
"""

import json
import math
import os
import resource
import sys
import time


def _join_cgroups() -> None:
    for directory in filter(None, os.environ.get("MEMORY_CGROUPS", "").split(os.pathsep)):
        with open(os.path.join(directory, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))


def _hwm_mb() -> float:
    """``VmHWM``: this program's peak resident memory (what Lambda's REPORT calls Max Memory Used)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(events_path: str, result_path: str, timeout: str, memory: str, seed: str, scale: str) -> None:
    _join_cgroups()
    started = time.perf_counter()
    import app  # the replier's module, first on PYTHONPATH

    from bench import slow_agent
    from bench.latency import LatencyModel
    from devstack.lambda_context import LocalLambdaContext

    slow_agent.install(app.consumer(), LatencyModel(seed=int(seed), scale=float(scale)))
    result: dict = {"init_seconds": time.perf_counter() - started, "init_hwm_mb": _hwm_mb(), "events": []}
    with open(events_path) as source:
        events = json.load(source)
    for event in events:
        context = LocalLambdaContext(
            "ReplierFunction", timeout_seconds=float(timeout), memory_limit_in_mb=int(memory)
        )
        wall, before = time.time(), time.perf_counter()
        response = app.lambda_handler(event, context) or {}
        billed = math.ceil((time.perf_counter() - before) * 1000)
        sys.stdout.flush()
        result["events"].append(
            {
                "started": wall,
                "billed_ms": billed,
                "records": len(event["Records"]),
                "failed": len(response.get("batchItemFailures", [])),
                "hwm_mb": _hwm_mb(),
            }
        )
        with open(result_path + ".tmp", "w") as out:
            json.dump(result, out)
        os.replace(result_path + ".tmp", result_path)


if __name__ == "__main__":
    main(*sys.argv[1:7])
