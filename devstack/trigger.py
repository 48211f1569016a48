"""``make mail`` / ``make thread`` / ``make trigger``: mail in and notifications for a running ``make serve``.

Like ``stripe trigger``: each command asks the running stack (its control
routes on the webhook's port, ``devstack/control.py``) to put a customer
message in the emulated mailbox and deliver the signed notification the way
Nylas does, then waits for the replier's decision — the reply, or the skip
and its reason, as soon as the stack has it — and prints the conversation.

Examples::

    python -m devstack.trigger mail --from alice@example.com --subject "Hi" --body "Where is my order?"
    python -m devstack.trigger mail --from alice@example.com --thread THREAD --body "More" --duplicates 3
    python -m devstack.trigger updated --message MESSAGE_ID
    python -m devstack.trigger forged --message MESSAGE_ID
    python -m devstack.trigger unknown
    python -m devstack.trigger thread --thread THREAD
    python -m devstack.trigger grant expire --grant GRANT
"""

import argparse
import base64
import email.utils
import mimetypes
import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from devstack.cli_types import port_number, whole_number
from devstack.console import conversation, make_console
from devstack.events import CUSTOMER_EMAIL
from devstack.hints import DEFAULT_PORT, local_option, port_option
from devstack.invariants import DUPLICATE_ABSORBED, REPLY_DRAFTED, REPLY_QUEUED, REPLY_SENT, REPLY_SHADOWED
from ops.make_usage import name_make_target


class TriggerError(Exception):
    """One sentence for the person; the command exits 1 after printing it."""


class ServeClient:
    """Talks to ``make serve``'s control routes at ``base_url`` (``http://127.0.0.1:3000``)."""

    def __init__(self, base_url: str, *, timeout_seconds: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout = timeout_seconds
        self._session = requests.Session()

    def call(self, method: str, route: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        url = f"{self.base_url}/_local/{route}"
        try:
            response = self._session.request(method, url, json=body, timeout=self._timeout)
        except requests.ConnectionError:
            raise TriggerError(
                f"nothing answers at {self.base_url}: start the local stack with `make serve` "
                "(or pass the port it printed with --port)"
            ) from None
        except requests.Timeout:
            raise TriggerError(f"{self.base_url} did not answer within {self._timeout:.0f} s") from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise TriggerError(
                f"{url} answered {response.status_code} without JSON: "
                "is `make serve` the program on that port?"
            )
        if response.status_code >= 400:
            raise TriggerError(str(answer.get("error") or f"{url} answered {response.status_code}"))
        return answer

    def thread(self, thread_id: str) -> dict[str, Any]:
        return self.call("GET", f"threads/{thread_id}")

    def wait_for_decision(self, notification_id: str, wait_seconds: float) -> dict[str, Any] | None:
        """The replier's decision about one notification (its record) as soon as it has one, or ``None``."""
        deadline = time.monotonic() + wait_seconds
        while True:
            answer = self.call("GET", f"decisions/{quote(notification_id, safe='')}")
            if answer.get("decision"):
                return answer["decision"]
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)

    def wait_for_outcome(
        self, message_id: str, wait_seconds: float, notification_ids: tuple[str, ...] = ()
    ) -> dict[str, Any] | None:
        """The replier's decision about ``message_id`` (reply or skip) as soon as it has one; or, as
        soon as the agent raised on one of ``notification_ids``, that failure (``failure``).

        ``None`` after ``wait_seconds`` without one (still queued, or coming back after a retry).
        """
        deadline = time.monotonic() + wait_seconds
        while True:
            answer = self.call("GET", f"outcomes/{quote(message_id, safe='')}")
            if answer.get("reply") or answer.get("skip"):
                return answer
            # The agent raised: said at once, not after the whole wait as "no decision".
            for notification_id in notification_ids:
                decision = self.call("GET", f"decisions/{quote(notification_id, safe='')}")
                if decision.get("failure"):
                    return {**answer, "failure": decision["failure"]}
                # Its grant is paused (make grants pause): it waits for the resume, not for this wait.
                if decision.get("paused"):
                    return {**answer, "paused": decision["paused"]}
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)


def _describe(notifications: list[dict[str, Any]]) -> list[str]:
    lines = []
    for n in notifications:
        statuses = ", ".join("timeout" if s is None else str(s) for s in n["statuses"]) or "none"
        kind = f"{n['type']} (forged signature)" if n.get("forged") else n["type"]
        count = len(n["statuses"])
        lines.append(
            f"notification {n['id']} {kind} for {n['message_id']}: "
            f"{count} {'delivery' if count == 1 else 'deliveries'}, webhook answered {statuses}"
        )
    return lines


def _describe_outcome(
    outcome: dict[str, Any] | None, took: float, wait: float, thread_id: str, base_url: str = ""
) -> str:
    """One line: the reply that answers the message, or why it was skipped, or that nothing came yet."""
    if outcome is None:
        return (
            f"no decision within {wait:.0f} s: the record may be coming back after a retry; the "
            f'`make serve` terminal shows why (later: `make thread ARGS="--thread {thread_id}'
            f'{port_option(base_url)}"`)'
        )
    if outcome.get("failure") and not outcome.get("reply") and not outcome.get("skip"):
        return _describe_failure(outcome["failure"], took)
    if outcome.get("paused") and not outcome.get("reply") and not outcome.get("skip"):
        return _describe_paused(outcome["paused"], took, base_url)
    if outcome.get("reply"):
        reply = outcome["reply"]
        to = ", ".join(reply.get("to") or reply.get("to_digest") or [])
        answers = ", ".join(reply.get("covered") or [])
        if reply.get("message") == REPLY_SHADOWED:
            today = time.strftime("%Y-%m-%d", time.gmtime())
            return (
                f"recorded in shadow mode after {took:.1f} s: the agent would have answered {answers}; "
                "nothing was sent (make shadow-report "
                f'ARGS="{local_option(base_url)} --since {today}" shows it)'
            )
        if reply.get("message") == REPLY_DRAFTED:
            return (
                f"drafted for review after {took:.1f} s: draft {reply.get('reply_message_id')} to {to}, "
                f"answers {answers}; nothing was sent (REPLY_MODE=review: a person sends it)"
            )
        return f"replied after {took:.1f} s: {reply.get('reply_message_id')} to {to}, answers {answers}"
    skip = outcome["skip"]
    return f"skipped after {took:.1f} s: {_skip_words(skip)} (no reply will be sent for it)"


def _describe_paused(paused: dict[str, Any], took: float, base_url: str) -> str:
    """The message's grant is paused: it waits, and what answers it."""
    grant = paused.get("grant_id") or "G"
    if paused.get("paused_by") == "expiry":
        why = f"grant {grant} expired at Nylas: it waits until Nylas says it was re-authenticated"
    else:
        why = (
            f'grant {grant} is paused: it waits until `make grants ARGS="resume --grant {grant}'
            f' {local_option(base_url)}"`'
        )
    return f"waiting after {took:.1f} s: {why} (looked at again every {paused.get('retry_in_seconds')} s)"


def _describe_failure(failure: dict[str, Any], took: float) -> str:
    """The agent raised: what, where in the person's code, and what happens to the record next."""
    where = f" at {failure['where']}" if failure.get("where") else ""
    receives, most = failure.get("receives"), failure.get("max_receives")
    comes_back = (
        f"; retry {int(receives) + 1} of {most} in {failure.get('retry_in_seconds')} s"
        if receives and most and int(receives) < int(most)
        else "; that was its last receive: SQS dead-letters it (make redrive brings it back)"
        if receives and most
        else ""
    )
    return (
        f"the agent raised {failure.get('detail')}{where} after {took:.1f} s{comes_back}; "
        "fix it (saving the file reloads it) and the record is retried at once"
    )


# Skips the agent itself decided, and what its ``reason`` (the skip's ``detail``) is called.
_AGENT_DECISIONS = {"agent_declined": "the agent declined", "handed_off": "the agent handed it off"}


def _skip_words(skip: dict[str, Any]) -> str:
    """``reason=...``, and for a decline or a hand-off the agent's own reason (why no reply came)."""
    reason = str(skip.get("reason"))
    words = f"reason={reason}"
    if reason in _AGENT_DECISIONS:
        words += f"; {_AGENT_DECISIONS[reason]}: {skip.get('detail') or '(no reason given)'}"
    elif skip.get("detail"):
        words += f" ({skip['detail']})"
    return words


def _describe_decision(decision: dict[str, Any] | None, wait: float) -> str:
    """One line: what the replier decided about a notification (reply, draft, skip and why)."""
    if decision is None:
        return (
            f"no decision within {wait:.0f} s: the record may be coming back after a retry; "
            "the `make serve` terminal shows why"
        )
    message = decision.get("message")
    if message == REPLY_DRAFTED:
        return f"decision: drafted for review, draft {decision.get('reply_message_id')} (nothing sent)"
    if message == REPLY_SHADOWED:
        answers = ", ".join(decision.get("covered") or [])
        return f"decision: recorded in shadow mode, would answer {answers} (nothing sent)"
    if message in (REPLY_SENT, REPLY_QUEUED):
        answers = ", ".join(decision.get("covered") or [])
        return f"decision: {message}, {decision.get('reply_message_id')}, answers {answers}"
    if message == DUPLICATE_ABSORBED:
        return "decision: duplicate delivery absorbed (the notification was already handled)"
    return f"decision: skipped, {_skip_words(decision)}"


def _absorbed(client: ServeClient, notifications: list[dict[str, Any]], wait: float) -> str:
    """``make mail --duplicates N``: how many of the queued copies the replier absorbed, once it has.

    Every delivery the webhook answered 200 queued a copy; all but the first to run are duplicates,
    absorbed as each comes off the queue (a copy that met the first one running waits for it, so this
    can take a few seconds after the reply).
    """
    lines = []
    deadline = time.monotonic() + wait
    for notification in notifications:
        queued = sum(1 for status in notification["statuses"] if status == 200)
        expected = max(queued - 1, 0)
        absorbed = 0
        while True:
            absorbed = int(
                client.call("GET", f"decisions/{quote(notification['id'], safe='')}").get("absorbed") or 0
            )
            if absorbed >= expected or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        words = f"duplicates: {absorbed} of {expected} queued copies absorbed"
        if absorbed >= expected:
            lines.append(f"{words}: the notification was handled once")
        else:
            lines.append(
                f"{words} so far; the `make serve` terminal shows the rest as they come off the queue"
            )
    return "\n".join(lines)


def split_sender(text: str) -> tuple[str, str]:
    """``(display name, address)`` of a From as written: ``Ann <ann@example.com>`` or ``ann@example.com``."""
    return email.utils.parseaddr(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.trigger",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[2:]),
    )
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument(
        "--port",
        type=port_number,
        default=int(os.environ.get("PORT", DEFAULT_PORT)),
        help="the port `make serve` listens on (default 3000)",
    )
    target.add_argument("--url", help="the stack's base URL instead of --port (e.g. http://127.0.0.1:3000)")
    delivery = argparse.ArgumentParser(add_help=False)
    delivery.add_argument(
        "--duplicates",
        type=whole_number(1, 20),
        default=1,
        metavar="N",
        help="deliver the notification this many times (Nylas is at-least-once)",
    )
    delivery.add_argument("--concurrent", action="store_true", help="deliver the duplicates all at once")
    waiting = argparse.ArgumentParser(add_help=False)
    waiting.add_argument(
        "--wait",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="wait at most this long for the replier's decision, reply or skip (0: do not)",
    )
    showing = argparse.ArgumentParser(add_help=False)
    showing.add_argument(
        "--full", action="store_true", help="every message's whole body (default: the first lines)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    mail = commands.add_parser(
        "mail", parents=[target, delivery, waiting, showing], help="a customer message in; wait for the reply"
    )
    mail.add_argument(
        "--from",
        dest="from_email",
        default=CUSTOMER_EMAIL,
        help=f"the customer's address, or 'Name <address>' (default {CUSTOMER_EMAIL})",
    )
    mail.add_argument("--subject", default="", help="the subject (default: Re: the thread's subject)")
    mail.add_argument("--body", default="Hello, can you help me?", help="the message text")
    mail.add_argument("--thread", help="add the message to this thread (default: a new thread)")
    mail.add_argument("--name", dest="from_name", default="", help="the customer's display name")
    mail.add_argument(
        "--in-reply-to", dest="reply_to_message_id", help="answer this message id (joins its thread)"
    )
    mail.add_argument(
        "--reply-to", dest="reply_to", metavar="EMAIL", help="a Reply-To address (contact forms set one)"
    )
    mail.add_argument(
        "--date-skew",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the sender's clock is this far off (the date header lies; arrival order does not)",
    )
    mail.add_argument("--grant", help="the receiving grant (default: the agent's)")
    mail.add_argument(
        "--attach",
        action="append",
        default=[],
        metavar="FILE",
        help="attach this file (again for more): the agent reads it with attachment.read()",
    )
    mail.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="a header, e.g. Auto-Submitted:auto-replied",
    )
    mail.add_argument(
        "--truncated",
        action="store_true",
        help="notify with message.created.truncated (no body, as Nylas does over 1 MB)",
    )

    for name, kind, text in (
        ("updated", "message.updated", "a message.updated notification (the replier skips it)"),
        ("truncated", "message.created.truncated", "a message.created.truncated notification (no body)"),
        ("created", "message.created", "another message.created notification for a message"),
    ):
        command = commands.add_parser(name, parents=[target, delivery, waiting], help=text)
        command.add_argument("--message", required=True, help="a message id the mailbox holds")
        command.set_defaults(notification_type=kind)
    forged = commands.add_parser(
        "forged",
        parents=[target, delivery, waiting],
        help="a notification signed with the wrong secret (401)",
    )
    forged.add_argument("--message", help="a message id (default: a message nobody holds)")
    unknown = commands.add_parser(
        "unknown",
        parents=[target, delivery, waiting],
        help="a well-formed, signed message.created for a message the mailbox does not hold",
    )
    unknown.add_argument("--message", help="the message id to name (default: a fresh one)")
    grant = commands.add_parser(
        "grant",
        parents=[target],
        help="a grant's life in the emulated Nylas: create, expire, reauthenticate, delete (grant.* fired)",
    )
    grant.add_argument("action", choices=("create", "expire", "reauthenticate", "delete"))
    grant.add_argument("--grant", dest="grant_id", required=True, help="the grant id")
    grant.add_argument("--email", help="create: the grant's address")
    grant.add_argument("--name", help="create: its display name")
    thread = commands.add_parser(
        "thread", parents=[target, showing], help="a thread's conversation as the mailbox holds it"
    )
    thread.add_argument("--thread", required=True, help="the thread id (`make mail` prints it)")
    # Each command's usage names what a person types: make mail, make thread, make trigger ARGS="updated ...".
    name_make_target(mail, "mail")
    name_make_target(thread, "thread")
    for name, command in commands.choices.items():
        if name not in ("mail", "thread"):
            name_make_target(command, "trigger", first=name)
    others = "|".join(name for name in commands.choices if name not in ("mail", "thread"))
    # An argument no command knows is reported by this parser (argparse's way): it names all three.
    parser.prog = "make"
    parser.usage = f'make mail ARGS="...", make thread ARGS="--thread T", make trigger ARGS="{others} ..."'
    return parser


def run(args: argparse.Namespace) -> int:
    console = make_console(sys.stdout)
    client = ServeClient(args.url or f"http://127.0.0.1:{args.port}")
    if args.command == "thread":
        answer = client.thread(args.thread)
        console.print(f"thread {args.thread}: {len(answer['data'])} messages, oldest first")
        console.print(conversation(answer["data"], answer.get("agent_email"), full=args.full))
        return 0
    if args.command == "grant":
        request = {k: v for k, v in (("email", args.email), ("name", args.name)) if v}
        answer = client.call("POST", f"grants/{quote(args.grant_id, safe='')}/{args.action}", request)
        console.print(
            f"grant {answer['grant_id']}: {answer['state']}; Nylas' grant.{_FIRED[args.action]} delivered "
            "to the webhook (the `make serve` terminal shows what the replier made of it)"
        )
        return 0
    delivery = {"copies": args.duplicates, "concurrent": args.concurrent}
    if args.command == "mail":
        # 'Ann Lee <ann@example.com>': the address is the sender, the name its display name (--name wins).
        display_name, args.from_email = split_sender(args.from_email)
        args.from_name = args.from_name or display_name
        headers = []
        for header in args.header:
            name, separator, value = header.partition(":")
            if not separator or not name.strip():
                raise TriggerError(f"--header {header!r} is not NAME:VALUE")
            headers.append({"name": name.strip(), "value": value.strip()})
        subject = args.subject
        if not subject and (args.thread or args.reply_to_message_id):
            existing = client.thread(args.thread) if args.thread else None
            subject = f"Re: {existing['data'][0]['subject']}" if existing else "Re:"
        answer = client.call(
            "POST",
            "mail",
            {
                "from_email": args.from_email,
                "subject": subject or "Hello",
                "body": args.body,
                "thread_id": args.thread,
                "reply_to_message_id": args.reply_to_message_id,
                "from_name": args.from_name,
                "reply_to": [{"email": args.reply_to}] if args.reply_to else None,
                "date": int(time.time() + args.date_skew) if args.date_skew else None,
                "grant_id": args.grant,
                "headers": headers,
                "attachments": [_attachment(path) for path in args.attach],
                "notification_type": "message.created.truncated" if args.truncated else "message.created",
                **delivery,
            },
        )
        message = answer["message"]
        console.print(
            f"message {message['id']} from {args.from_email} on thread {message['thread_id']}: "
            f"{message['subject']!r}"
        )
        for line in _describe(answer["notifications"]):
            console.print(line)
        if args.wait <= 0:
            return 0
        if not any(status == 200 for n in answer["notifications"] for status in n["statuses"]):
            console.print("the webhook queued nothing (no delivery was answered 200): no reply will come")
        else:
            console.print(f"waiting up to {args.wait:.0f} s for the replier ...")
            started = time.monotonic()
            notified = tuple(n["id"] for n in answer["notifications"])
            outcome = client.wait_for_outcome(message["id"], args.wait, notified)
            took = time.monotonic() - started
            console.print(_describe_outcome(outcome, took, args.wait, message["thread_id"], client.base_url))
            if args.duplicates > 1:
                console.print(_absorbed(client, answer["notifications"], max(args.wait - took, 0.0)))
        thread = client.thread(message["thread_id"])
        console.print(conversation(thread["data"], thread.get("agent_email"), full=args.full))
        return 0
    body: dict[str, Any] = {**delivery}
    if args.command in ("updated", "truncated", "created"):
        body.update(message_id=args.message, notification_type=args.notification_type)
    elif args.command == "forged":
        body.update(message_id=args.message, unknown=not args.message, forged=True)
    elif args.command == "unknown":
        body.update(message_id=args.message, unknown=True)
    answer = client.call("POST", "notify", body)
    for line in _describe(answer["notifications"]):
        console.print(line)
    if args.command == "unknown":
        console.print("the mailbox does not hold that message: the replier's decision follows")
    if args.wait <= 0:
        return 0
    for notification in answer["notifications"]:
        if not any(status == 200 for status in notification["statuses"]):
            console.print(f"notification {notification['id']}: the webhook queued nothing, so no decision")
            continue
        decision = client.wait_for_decision(notification["id"], args.wait)
        console.print(_describe_decision(decision, args.wait))
    return 0


_FIRED = {"create": "created", "expire": "expired", "reauthenticate": "updated", "delete": "deleted"}
"""The notification each ``make trigger ARGS="grant ..."`` action fires."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except TriggerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())


def _attachment(path: str) -> dict[str, str]:
    """A file for ``--attach``: its name, its type by extension, its bytes in base64."""
    file = Path(path)
    if not file.is_file():
        raise TriggerError(f"--attach {path}: no such file")
    kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    return {
        "filename": file.name,
        "content_type": kind,
        "content": base64.b64encode(file.read_bytes()).decode(),
    }
