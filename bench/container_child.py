"""One function's container in a fresh interpreter: run its events, report its memory, CPU and output.

Run by ``bench.container`` as ``python bench/container_child.py FUNCTION EVENTS RESULT TIMEOUT MB``, never
imported: ``PYTHONPATH`` puts the function's directory first (Lambda's task root), the environment
is the function's from the template, pointed at the running local stack. Everything the handler
prints — the Powertools log lines and EMF metric lines, what Lambda would send to CloudWatch Logs —
is this process's stdout, which the parent counts; the measurements go to the RESULT file.
"""

import json
import resource
import sys

MARKER = "@@bench-event@@"


def _rss_mb() -> float:
    """Peak resident set of this process so far: what Lambda calls Max Memory Used.

    Why ``VmHWM`` and not ``ru_maxrss``: Linux carries ``ru_maxrss`` across ``exec``, so a child of a
    large parent reports the parent's size; ``VmHWM`` is the high-water mark of this program's own
    memory.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(function: str, events_path: str, result_path: str, timeout: str, memory: str) -> None:
    from devstack.lambda_context import LocalLambdaContext

    with open(events_path) as source:
        events = json.load(source)
    started_cpu = _cpu_seconds()
    import app  # the function's module, first on PYTHONPATH

    built = app.consumer() if function == "ReplierFunction" else app.endpoint()
    del built
    init = {"rss_mb": _rss_mb(), "cpu_seconds": _cpu_seconds() - started_cpu}
    # The first event warms the container (secret, grant address); the parent leaves it out. A marker
    # line before each event lets the parent split the output by event (and drop the markers).
    cpu = []
    for event in events:
        print(MARKER, flush=True)
        before = _cpu_seconds()
        context = LocalLambdaContext(function, timeout_seconds=float(timeout), memory_limit_in_mb=int(memory))
        app.lambda_handler(event, context)
        cpu.append(_cpu_seconds() - before)
        sys.stdout.flush()
    with open(result_path, "w") as out:
        json.dump({"init": init, "peak_rss_mb": _rss_mb(), "cpu_seconds_per_event": cpu}, out)


if __name__ == "__main__":
    main(*sys.argv[1:6])
