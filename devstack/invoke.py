"""``make invoke FN=WebhookFunction EVENT=events/<file>.json``: ``sam local invoke`` without Docker.

Starts the local stack (embedded AWS from ``template.yaml``, the Nylas
emulator with the sample mailbox the events refer to), invokes the
function's handler once with the event, and prints what ``sam local
invoke`` prints: the handler's log lines, ``START``/``END``/``REPORT``
(duration, init duration, peak memory) on stderr and the response on
stdout; then what the invocation did: the notifications it queued or the
emails it sent.

The environment is SAM's: the template's variables, the shell's values for
them (``AGENT_GRANT_IDS=... make invoke ...``), and ``--env-vars FILE``
(``{"ReplierFunction": {"REPLY_BUDGET_PER_HOUR": "1"}, "Parameters": {...}}``)
above both. Below those, the local stack points ``NYLAS_API_URI`` at the
emulator and ``AGENT_GRANT_IDS`` at the sample mailbox's agent. Every value
that differs from the template's is listed, with where it came from. The
files of ``events/`` are dated 2025, older than the webhook's replay bound:
``make invoke`` passes ``--env-vars events/env.json`` (the one override they
need) unless told ``ENV_VARS=other.json``.
"""

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3

from devstack.cli_types import run_command
from devstack.console import LogView, make_console
from devstack.containers import load_handler
from devstack.env_vars import EnvVarsError, ResolvedEnvironment, load_env_vars_file, resolve_environment
from devstack.lambda_context import LocalLambdaContext, function_memory
from devstack.sample_mailbox import seed_sample_mailbox
from devstack.stack import LineEcho, LocalStack, StackSettings
from ops.make_usage import name_make_target

FUNCTIONS = ("WebhookFunction", "ReplierFunction")


class EventError(ValueError):
    """The event cannot be given to the function; one sentence for the person."""


def check_event(function: str, event: Any) -> dict[str, Any]:
    """The event, if it has the shape the function's trigger delivers; else :class:`EventError`."""
    hint = "`make events` writes examples in events/"
    if not isinstance(event, dict):
        raise EventError(f"the event must be a JSON object, not {type(event).__name__}; {hint}")
    if function == "WebhookFunction":
        if not isinstance(event.get("httpMethod"), str):
            raise EventError(f"WebhookFunction takes an API Gateway proxy event (with httpMethod); {hint}")
        if not isinstance(event.get("headers") or {}, dict) or not isinstance(event.get("body") or "", str):
            raise EventError(f"the proxy event's headers must be an object and its body a string; {hint}")
    else:
        records = event.get("Records")
        if not isinstance(records, list) or not records:
            raise EventError(f"ReplierFunction takes an SQS event (a non-empty Records list); {hint}")
        for index, record in enumerate(records):
            if not isinstance(record, dict) or not isinstance(record.get("body"), str):
                raise EventError(f"Records[{index}] is not an SQS record with a string body; {hint}")
            if not isinstance(record.get("messageId"), str):
                raise EventError(f"Records[{index}] has no messageId (the batch response names it); {hint}")
    return event


def read_event(path: Path, function: str) -> dict[str, Any]:
    """Read, parse and check an event file (``-``: standard input, as ``sam local invoke -e -``)."""
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text()
    except OSError as error:
        raise EventError(f"cannot read event file {path}: {error.strerror or error}") from None
    try:
        event = json.loads(text)
    except ValueError as error:
        raise EventError(f"event file {path} is not JSON: {error}") from None
    return check_event(function, event)


def with_receipt_handles(event: dict[str, Any], queue_url: str) -> dict[str, Any]:
    """The SQS event with each record received from the local queue, so its receipt handle is real.

    Why: the replier sets a deferred record's visibility with its receipt handle; an event file's
    made-up handle made every replier invocation warn ``ReceiptHandleIsInvalid``, which no deployed
    invocation does. The records keep their ``messageId`` (the batch response names it).
    """
    sqs = boto3.client("sqs")
    records = []
    for record in event["Records"]:
        sqs.send_message(QueueUrl=queue_url, MessageBody=record["body"])
        [received] = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=1, WaitTimeSeconds=1)[
            "Messages"
        ]
        records.append({**record, "receiptHandle": received["ReceiptHandle"]})
    return {**event, "Records": records}


def _report(
    request_id: str, duration_ms: float, init_ms: float, memory_mb: int, peak_python: int | None
) -> str:
    # The fields and tab separators of Lambda's REPORT line. Max Memory Used is this process's peak
    # resident set (it holds the local stack too: an upper bound); the allocations peak is extra.
    line = (
        f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
        f"Billed Duration: {int(duration_ms) + 1} ms\tMemory Size: {memory_mb} MB\t"
        f"Max Memory Used: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB\t"
        f"Init Duration: {init_ms:.2f} ms"
    )
    if peak_python is not None:
        line += f"\tPeak Python allocations: {peak_python / 2**20:.1f} MB"
    return line


def invoke(
    function: str,
    event: dict[str, Any],
    *,
    env_vars: Mapping[str, Mapping[str, Any]] | None = None,
    shell_environment: Mapping[str, str] | None = None,
    log_echo: LineEcho | None = None,
    lifecycle: Any = None,
    trace_allocations: bool = False,
) -> dict[str, Any]:
    """Invoke ``function`` (a template logical id) once; return its response, effects and environment.

    Parameters
    ----------
    env_vars:
        The ``--env-vars`` file's content (SAM's format).
    shell_environment:
        The shell's variables (default: this process's environment before the stack starts).
    log_echo:
        Shows each handler log line as it is written (``devstack.console.LogView``).
    lifecycle:
        Called with each ``START``/``END``/``REPORT`` line.
    trace_allocations:
        Measure the invocation's peak of Python allocations (``tracemalloc``); it slows the
        invocation several times, so the reported duration is then not the function's.
    """
    check_event(function, event)
    shell = dict(os.environ if shell_environment is None else shell_environment)
    # One invocation, no redelivery to wait for: the template's retry delays, not the demo's.
    with LocalStack(StackSettings(pollers=0), log_echo=log_echo) as stack:
        assert stack.emulator is not None
        assert stack.resources is not None
        seed_sample_mailbox(stack.emulator)
        properties = stack.resources.template["Resources"][function]["Properties"]
        template_values = stack.function_environment(function)
        declared = {name: stack.overrides.get(name, value) for name, value in template_values.items()}
        environment: ResolvedEnvironment = resolve_environment(function, declared, env_vars, shell)
        stack.set_environment(environment.values)
        sources = {
            **{name: "local stack" for name in declared if declared[name] != template_values[name]},
            **{name: "shell" for name in environment.from_shell},
            **{name: "--env-vars" for name in environment.from_file},
        }
        overrides = {
            name: (environment.values[name], source)
            for name, source in sources.items()
            if environment.values[name] != template_values[name]
        }
        if function == "ReplierFunction":
            event = with_receipt_handles(event, stack.resources.queues["NotificationQueue"])
        started = time.perf_counter()
        handler = load_handler(function)
        init_ms = (time.perf_counter() - started) * 1000
        memory_mb = function_memory(function)
        context = LocalLambdaContext(
            function, timeout_seconds=float(properties["Timeout"]), memory_limit_in_mb=memory_mb
        )
        say = lifecycle or (lambda _line: None)
        say(f"START RequestId: {context.aws_request_id} Version: $LATEST")
        if trace_allocations:
            tracemalloc.start()
        started = time.perf_counter()
        try:
            response: Any = handler(event, context)
            error = None
        except Exception as exc:  # reported as Lambda reports an unhandled error, not as a traceback
            response = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
            error = exc
        duration_ms = (time.perf_counter() - started) * 1000
        peak = tracemalloc.get_traced_memory()[1] if trace_allocations else None
        tracemalloc.stop()
        say(f"END RequestId: {context.aws_request_id}")
        say(_report(context.aws_request_id, duration_ms, init_ms, memory_mb, peak))
        queued = (
            boto3.client("sqs")
            .receive_message(
                QueueUrl=stack.resources.queues["NotificationQueue"],
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
            )
            .get("Messages", [])
        )
        return {
            "response": response,
            "error": error,
            "queued": [json.loads(m["Body"])["id"] for m in queued],
            "sent": [s.payload for s in stack.emulator.sends],
            "logs": [r for r in stack.logs.records if "message" in r and "level" in r],
            "environment": environment,
            "overrides": overrides,
            "template_environment": template_values,
            "duration_ms": duration_ms,
            "peak_python_bytes": peak,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.invoke",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("function", choices=FUNCTIONS, help="the template's logical id")
    parser.add_argument(
        "event", type=Path, help="a JSON event file (e.g. events/webhook-gzip.json); - reads standard input"
    )
    parser.add_argument(
        "--env-vars",
        "-n",
        type=Path,
        metavar="FILE",
        help="JSON file with environment overrides (SAM's format)",
    )
    parser.add_argument("--json-logs", action="store_true", help="print the handler's raw JSON log lines")
    parser.add_argument("--metrics", action="store_true", help="also print the EMF metric lines")
    parser.add_argument(
        "--trace-allocations",
        action="store_true",
        help="report the peak of Python allocations (tracemalloc; slows the invocation)",
    )
    # make invoke gives the function, the event and the --env-vars file from its own variables.
    before = f"FN={'|'.join(FUNCTIONS)} EVENT=FILE ENV_VARS=FILE"
    name_make_target(parser, "invoke", before=before, leave_out=("function", "event", "env_vars"))
    args = parser.parse_args(argv)
    console = make_console()
    try:
        event = read_event(args.event, args.function)
        env_vars = load_env_vars_file(args.env_vars) if args.env_vars else None
    except (EventError, EnvVarsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    result = invoke(
        args.function,
        event,
        env_vars=env_vars,
        log_echo=LogView(console, json_logs=args.json_logs, metrics=args.metrics),
        lifecycle=lambda line: console.out(line, highlight=False),
        trace_allocations=args.trace_allocations,
    )
    environment: ResolvedEnvironment = result["environment"]
    for name in environment.ignored:
        console.out(
            f"ignored {name} from --env-vars: {args.function} does not declare it in template.yaml "
            "(sam local invoke ignores it too)",
            highlight=False,
        )
    changed = [f"{name}={value} ({source})" for name, (value, source) in result["overrides"].items()]
    if changed:
        console.out(f"environment overrides of template.yaml: {', '.join(changed)}", highlight=False)
    print(json.dumps(result["response"], indent=2))
    if args.function == "WebhookFunction":
        console.out(f"queued notifications: {result['queued'] or 'none'}", highlight=False)
    else:
        replies = [f"{s['subject']!r} → {s['to'][0]['email']}" for s in result["sent"]]
        console.out(f"emails sent: {replies or 'none'}", highlight=False)
    return 1 if result["error"] is not None else 0


if __name__ == "__main__":
    sys.exit(run_command(main))
