"""A function's container as Lambda runs it: peak memory, CPU per notification, and the bytes it logs.

Each function runs in a fresh interpreter (``bench/container_child.py``) with
its template environment as in Lambda (``LAMBDA_TASK_ROOT`` set, so the
replier's Tracer imports the X-Ray SDK and patches its libraries), pointed at
the running local stack, and handles a warm-up notification and then
``events`` more. Measured there, where nothing else shares the process:

- **peak memory** (``VmHWM``, what Lambda's REPORT line calls Max Memory
  Used) after init and after the events: what ``MemorySize`` must hold;
- **CPU seconds per notification** (user + system): at 256 MB Lambda gives a
  function 256/1,769 of a vCPU, so this is the part of a record's time that
  a smaller memory size stretches;
- **what the handler writes to stdout** per notification — Powertools' JSON
  log lines and the EMF metric lines, which is what CloudWatch Logs ingests
  and bills — bytes and lines, at the template's log level.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.stack import clear_tables, parts, scratch_queue
from devstack.counting import function_timeout, inbound
from devstack.events import envelope, signed_post, sqs_event
from devstack.stack import LocalStack
from ops.template import TEMPLATE_PATH, load_template
from replyonce.rules.notification import Notification

ROOT = TEMPLATE_PATH.parent
CHILD = Path(__file__).resolve().parent / "container_child.py"
MARKER = "@@bench-event@@"
FUNCTION_DIRS = {"WebhookFunction": "webhook", "ReplierFunction": "replier"}
# As Lambda sets it for an invocation that X-Ray samples (the SDK then records and emits segments).
_TRACE_HEADER = "Root=1-6748a4c0-0123456789abcdef01234567;Parent=4a3d2c1b0f9e8d7c;Sampled=1"


@dataclass(frozen=True)
class ContainerResult:
    """One function on one path: memory, CPU and log output per notification (medians over events)."""

    function: str
    path: str
    memory_size_mb: int  # the template's MemorySize
    init_rss_mb: float
    peak_rss_mb: float
    cpu_ms: float
    log_bytes: float
    log_lines: float
    events: int


def memory_size_mb(function: str) -> int:
    """The function's ``MemorySize``: its own, else the Globals'."""
    template = load_template()
    own = template["Resources"][function]["Properties"].get("MemorySize")
    return int(own or template["Globals"]["Function"]["MemorySize"])


def _environment(stack: LocalStack, function: str) -> dict[str, str]:
    resources, _ = parts(stack)
    task_root = ROOT / "functions" / FUNCTION_DIRS[function]
    return {
        "PATH": os.environ.get("PATH", ""),
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join([str(task_root), str(ROOT / "layers" / "replyonce"), str(ROOT)]),
        **{k: v for k, v in os.environ.items() if k.startswith("AWS_") and not k.startswith("AWS_LAMBDA")},
        **resources.function_environment(function),
        "QUEUE_URL": os.environ["QUEUE_URL"],  # the scratch queue while the webhook runs
        "NYLAS_API_URI": os.environ["NYLAS_API_URI"],
        "AGENT_GRANT_IDS": os.environ["AGENT_GRANT_IDS"],
        "AWS_EC2_METADATA_DISABLED": "true",
        # As in Lambda: Powertools traces (the replier's Tracer imports the X-Ray SDK), and the SDK
        # sends its segments over UDP to a daemon address nothing listens on.
        "LAMBDA_TASK_ROOT": str(task_root),
        "AWS_LAMBDA_FUNCTION_NAME": f"replyonce-{function}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_size_mb(function)),
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "_HANDLER": "app.lambda_handler",
        "_X_AMZN_TRACE_ID": _TRACE_HEADER,
        "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000",
        "AWS_XRAY_CONTEXT_MISSING": "IGNORE_ERROR",
    }


def _run(stack: LocalStack, function: str, path: str, events: list[dict[str, Any]]) -> ContainerResult:
    with tempfile.TemporaryDirectory(prefix="replyonce-bench-") as directory:
        events_file, result_file = Path(directory, "events.json"), Path(directory, "result.json")
        events_file.write_text(json.dumps(events))
        completed = subprocess.run(  # noqa: S603 - our own interpreter and script, no shell
            [
                sys.executable,
                str(CHILD),
                function,
                str(events_file),
                str(result_file),
                str(function_timeout(function)),
                str(memory_size_mb(function)),
            ],
            env=_environment(stack, function),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if completed.returncode != 0 or not result_file.exists():
            raise RuntimeError(f"{function} container failed:\n{completed.stderr[-3000:]}")
        result = json.loads(result_file.read_text())
    # Split stdout by event; the first segment is import time, the second the warm-up.
    segments = completed.stdout.split(MARKER + "\n")[2:]
    sizes = [len(segment.encode()) for segment in segments]
    lines = [sum(1 for line in segment.splitlines() if line.strip()) for segment in segments]
    return ContainerResult(
        function=function,
        path=path,
        memory_size_mb=memory_size_mb(function),
        init_rss_mb=result["init"]["rss_mb"],
        peak_rss_mb=result["peak_rss_mb"],
        cpu_ms=statistics.median(result["cpu_seconds_per_event"][1:]) * 1000,
        log_bytes=statistics.median(sizes),
        log_lines=statistics.median(lines),
        events=len(segments),
    )


def measure(stack: LocalStack, events: int = 20) -> list[ContainerResult]:
    """The webhook accepting notifications, the replier answering them and skipping its own replies."""
    resources, nylas = parts(stack)
    clear_tables(stack)
    queue_arn = resources.queue_arns["NotificationQueue"]
    # A customer each: one address gets ``ReplyBudgetPerRecipientPerHour`` replies an hour.
    messages = [
        inbound(nylas, thread_id=f"bench-container-{os.getpid()}-{i}", from_email=f"container{i}@example.com")
        for i in range(events + 1)
    ]
    notifications = [envelope(m) for m in messages]
    with scratch_queue(stack):
        webhook = _run(
            stack,
            "WebhookFunction",
            "accepted notification",
            [
                signed_post(Notification(n).to_json().encode(), base64_encoded=True)
                for n in (envelope(m, notification_id=f"bench-webhook-{m['id']}") for m in messages)
            ],
        )
    replies = _run(
        stack, "ReplierFunction", "first reply", [sqs_event([n], queue_arn=queue_arn) for n in notifications]
    )
    sent = [m for m in nylas.sent_messages() if m.get("in_reply_to") in {x["id"] for x in messages}]
    outbound = _run(
        stack,
        "ReplierFunction",
        "own outbound message",
        [sqs_event([envelope(m)], queue_arn=queue_arn) for m in sent],
    )
    clear_tables(stack)
    return [webhook, replies, outbound]
