"""``make serve``: the local stack left running, for ``make mail``, ``curl``, a tunnel or real Nylas.

Against the emulator (the default), ``make mail ARGS="--from you@example.com
--subject Hi --body ..."`` in another terminal puts a customer message in
the agent's mailbox; the emulator notifies the webhook as Nylas does, and
this terminal shows every step: one line per log event (``--json-logs`` for
the raw JSON, ``--metrics`` for the EMF lines), each skip with its reason and
each reply as it is sent.

With ``NYLAS_API_URI`` and ``NYLAS_API_KEY`` set, the replier talks to the
real Nylas API instead of the emulator; set ``NYLAS_WEBHOOK_SECRET`` to the
secret Nylas returned when you registered the webhook, and
``AGENT_GRANT_IDS`` to your agent's grants.
"""

import argparse
import contextlib
import errno
import os
import signal
import socket
import sys
import threading
from typing import Any

from devstack.cli_types import port_number, run_command, whole_number
from devstack.console import LogView, make_console, reply_panel
from devstack.control import MailControl
from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID
from devstack.invariants import REPLY_SENT
from devstack.sample_mailbox import seed_sample_mailbox
from devstack.stack import LocalStack, StackSettings
from devstack.template import LOCAL_API_KEY, LOCAL_WEBHOOK_SECRET


def port_free(port: int) -> bool:
    """Whether ``127.0.0.1:port`` can be bound now (0 always can)."""
    if port == 0:
        return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def port_in_use_message(port: int) -> str:
    return (
        f"port {port} is already in use (another `make serve`?): "
        f'stop it, or pick another port with ARGS="--port {port + 1}"'
    )


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.serve",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=port_number, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--pollers", type=whole_number(1, 16), default=2, help="replier containers (1-16)")
    parser.add_argument("--json-logs", action="store_true", help="print the handlers' raw JSON log lines")
    parser.add_argument("--metrics", action="store_true", help="also print the EMF metric lines")
    return parser


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    real_nylas = os.environ.get("NYLAS_API_URI")
    if real_nylas and not os.environ.get("NYLAS_API_KEY"):
        cli.error("NYLAS_API_URI is set: NYLAS_API_KEY is needed too")
    if not port_free(args.port):
        print(f"error: {port_in_use_message(args.port)}", file=sys.stderr)
        return 1
    settings = StackSettings(
        pollers=args.pollers,
        webhook_port=args.port,
        nylas_api_uri=real_nylas,
        nylas_api_key=os.environ.get("NYLAS_API_KEY", LOCAL_API_KEY),
        webhook_secret=os.environ.get("NYLAS_WEBHOOK_SECRET", LOCAL_WEBHOOK_SECRET),
        **({"agent_grant_ids": os.environ["AGENT_GRANT_IDS"]} if os.environ.get("AGENT_GRANT_IDS") else {}),
    )
    console = make_console()
    view = ServeView(console, json_logs=args.json_logs, metrics=args.metrics)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    starting = "starting the local stack (embedded AWS, Nylas emulator, webhook) ..."
    try:
        # A spinner on a terminal; a piped run (a test, a log file) gets no control characters.
        with console.status(starting) if console.is_terminal else contextlib.nullcontext():
            stack = LocalStack(settings, log_echo=view).__enter__()
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            print(f"error: {port_in_use_message(args.port)}", file=sys.stderr)
            return 1
        raise
    try:
        serve(stack, settings, view, real_nylas, stopped)
    finally:
        stack.stop()
    return 0


class ServeView(LogView):
    """The log view, plus each reply shown in full right after the replier's ``reply sent`` line."""

    mailbox: MailControl | None = None

    def __call__(self, raw: str, record: dict[str, Any] | None) -> None:
        super().__call__(raw, record)
        if record is not None and record.get("message") == REPLY_SENT:
            sent = self.mailbox.sent_message(record.get("reply_message_id")) if self.mailbox else None
            self.console.print(reply_panel(record, sent), soft_wrap=False)


def serve(
    stack: LocalStack, settings: StackSettings, view: ServeView, real_nylas: str | None, stopped: Any
) -> None:
    """Install the control routes, print how to use the stack, wait for Ctrl-C or SIGTERM."""
    console = view.console
    if stack.emulator is not None:
        seed_sample_mailbox(stack.emulator)
    control = MailControl(
        stack.emulator,
        stack.sender(),
        agent_grant_id=AGENT_GRANT_ID,
        agent_email=AGENT_EMAIL,
        logs=stack.logs,
    )
    view.mailbox = control
    stack.serve_control(control.handle)
    secret = (
        f"{LOCAL_WEBHOOK_SECRET} (local development secret)"
        if settings.webhook_secret == LOCAL_WEBHOOK_SECRET
        else "from NYLAS_WEBHOOK_SECRET (not printed)"
    )
    nylas = real_nylas or f"emulator at {stack.emulator.url if stack.emulator else '?'}"
    port = stack.webhook_url.split(":")[2].split("/")[0]
    port_arg = "" if port == "3000" else f" --port {port}"
    console.print(
        f"ReplyOnce local stack\n  webhook URL     {stack.webhook_url}\n"
        f"  webhook secret  {secret}\n  Nylas API       {nylas}\n"
        f"  agent grants    {settings.agent_grant_ids} ({AGENT_EMAIL})\n"
        f"Try, in another terminal:\n"
        f"  make mail ARGS=\"--from alice@example.com --subject Hi --body 'Where is my order?'{port_arg}\"\n"
        f'  make thread ARGS="--thread THREAD{port_arg}"   (make mail prints the thread id)\n'
        f"  curl '{stack.webhook_url}?challenge=hello'\n"
        "Ctrl-C stops it.",
        highlight=False,
    )
    try:
        with contextlib.suppress(KeyboardInterrupt):
            stopped.wait()
    finally:
        stack.serve_control(None)
        control.close()


if __name__ == "__main__":
    sys.exit(run_command(main))
