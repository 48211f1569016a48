"""A replier worker process: one Lambda container of ``ReplierFunction``.

The harness starts several of these and kills, pauses and restarts them.
Each polls the queue (``devstack.poller``), invokes the real
``functions/replier/app.py:lambda_handler``, and — as Lambda does — ends the
whole process when an invocation outlives its deadline. Its clock for leases
and the ledger may be skewed (``CHAOS_CLOCK_SKEW_SECONDS``); it may run one
mutant (``CHAOS_MUTANT``, ``chaos/mutants.py``) and a drafter whose output
differs between calls (``CHAOS_NONCE_DRAFTER``), says back what it read
(``CHAOS_ECHO_DRAFTER``) or takes its time
(``CHAOS_DRAFT_SECONDS``); the replier's settings no variable sets come as
``CHAOS_REPLIER_TUNING`` (JSON, read here only). Its AWS
User-Agent carries ``app/chaos-worker-<pid>`` so the fault proxy can find it.
"""

import json
import os
import sys
import threading
import time

from chaos import mutants
from devstack.containers import load_handler, tune_container
from devstack.poller import EventSourcePoller
from devstack.template import LocalResources
from ops.template import load_template


def main() -> int:
    os.environ["AWS_SDK_UA_APP_ID"] = f"chaos-worker-{os.getpid()}"
    skew = float(os.environ.get("CHAOS_CLOCK_SKEW_SECONDS", "0"))
    timeout = float(os.environ.get("CHAOS_FUNCTION_TIMEOUT_SECONDS", "6"))
    # The template's batches (10, no window): the consumer runs a batch's threads at once, so only a
    # thread's later records in one batch can meet the deadline rule.
    template = load_template()
    resources = LocalResources(
        queues={"NotificationQueue": os.environ["QUEUE_URL"]},
        queue_arns={"NotificationQueue": os.environ["CHAOS_QUEUE_ARN"]},
        template=template,
    )
    handler = load_handler("ReplierFunction")
    try:
        if os.environ.get("CHAOS_ECHO_DRAFTER") == "1":
            mutants.echo_agent()
        if os.environ.get("CHAOS_NONCE_DRAFTER") == "1":
            mutants.nonce_agent()
        if float(os.environ.get("CHAOS_DRAFT_SECONDS", "0")) > 0:
            mutants.slow_agent(float(os.environ["CHAOS_DRAFT_SECONDS"]))
        if os.environ.get("CHAOS_MUTANT"):
            mutants.apply(os.environ["CHAOS_MUTANT"])
    except mutants.MutantPending as pending:
        print(json.dumps({"message": "mutant pending", "detail": str(pending)}), flush=True)
        return 4
    # The settings no variable sets, at the run's scale (chaos.run.ChaosRun._tuning), in-process.
    tuning = json.loads(os.environ.get("CHAOS_REPLIER_TUNING", "{}"))
    tune_container(handler, tuning, clock=(lambda: time.time() + skew) if skew else None)

    def invoke_within_deadline(event: dict, context: object) -> dict:
        # Lambda ends the sandbox at the deadline: so do we, mid-flight.
        timer = threading.Timer(timeout, lambda: os._exit(3))
        timer.start()
        try:
            return handler(event, context)
        finally:
            timer.cancel()

    poller = EventSourcePoller(invoke_within_deadline, resources, timeout_seconds=timeout)
    stop_after = time.monotonic() + float(os.environ.get("CHAOS_WORKER_LIFETIME_SECONDS", "3600"))
    while time.monotonic() < stop_after:
        try:
            poller.poll_once(wait_seconds=1)
        except Exception as exc:  # the embedded AWS refusing a receive: try again, like the mapping
            print(json.dumps({"message": "poller error", "detail": str(exc)}), flush=True)
            time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
