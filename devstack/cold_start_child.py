"""One cold start, in the fresh interpreter ``devstack.cold_start`` spawns: import, build, print the time.

Run as a script (``python devstack/cold_start_child.py TARGET [--modules]``), never imported:
the clock starts before anything but ``time`` is imported, so the interpreter's
own start-up is left out and only what the function's module costs is timed.
``PYTHONPATH`` puts the function's directory first, as Lambda's task root.
"""

import time

_started = time.perf_counter()


def _build(target: str) -> None:
    """Import and initialise one contender, as Lambda's init plus the first request's set-up."""
    if target == "baseline":
        import boto3

        boto3.client("sqs")
    elif target == "webhook":
        import app  # functions/webhook/app.py, first on PYTHONPATH

        app.endpoint()
    elif target == "replier":
        import app  # functions/replier/app.py, first on PYTHONPATH

        app.consumer()
    else:
        raise SystemExit(f"unknown target {target!r}")


if __name__ == "__main__":
    import sys

    _build(sys.argv[1])
    elapsed_ms = (time.perf_counter() - _started) * 1000
    print(f"{elapsed_ms:.3f}")
    if "--modules" in sys.argv[2:]:
        # What the import path loaded, for tests/integration/test_budgets.py (after the clock stopped).
        import json

        print(json.dumps(sorted(sys.modules)))
