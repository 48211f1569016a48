"""``make invoke FN=WebhookFunction EVENT=events/<file>.json``: ``sam local invoke`` without Docker.

Starts the local stack (embedded AWS from ``template.yaml``, the Nylas
emulator with the sample mailbox the events refer to), invokes the
function's handler once with the event, and prints the handler's response
and what it did: the queued notifications, or the emails sent.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import boto3

from devstack.containers import load_handler
from devstack.lambda_context import LocalLambdaContext
from devstack.sample_mailbox import seed_sample_mailbox
from devstack.stack import LocalStack, StackSettings


def invoke(function: str, event: dict[str, Any]) -> dict[str, Any]:
    """Invoke ``function`` (a template logical id) once; return its response and effects."""
    with LocalStack(StackSettings(pollers=0)) as stack:
        assert stack.emulator is not None
        assert stack.resources is not None
        seed_sample_mailbox(stack.emulator)
        properties = stack.resources.template["Resources"][function]["Properties"]
        handler = load_handler(function)
        response = handler(event, LocalLambdaContext(function, timeout_seconds=float(properties["Timeout"])))
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
            "queued": [json.loads(m["Body"])["id"] for m in queued],
            "sent": [s.payload for s in stack.emulator.sends],
            "logs": [r for r in stack.logs.records if "message" in r and "level" in r],
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("function", choices=["WebhookFunction", "ReplierFunction"])
    parser.add_argument("event", type=Path)
    parser.add_argument("--logs", action="store_true", help="also print the handler's log lines")
    args = parser.parse_args(argv)
    if not args.event.is_file():
        parser.error(f"no event file {args.event}")
    result = invoke(args.function, json.loads(args.event.read_text()))
    print(json.dumps(result["response"], indent=2))
    if args.function == "WebhookFunction":
        print(f"queued notifications: {result['queued'] or 'none'}", file=sys.stderr)
    else:
        replies = [f"{s['subject']!r} → {s['to'][0]['email']}" for s in result["sent"]]
        print(f"emails sent: {replies or 'none'}", file=sys.stderr)
    if args.logs:
        for record in result["logs"]:
            print(json.dumps(record), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
