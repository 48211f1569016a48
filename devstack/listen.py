"""``make listen``: the local stack behind your tunnel, with a Nylas webhook of its own while it runs.

Like ``stripe listen``: give it the public HTTPS URL of a tunnel to this
machine's port (``cloudflared tunnel --url http://127.0.0.1:3000``; Nylas
blocks ngrok URLs) and it starts the local stack against the real Nylas API,
registers a webhook for that URL (Nylas checks it with a challenge through
the tunnel first) for the triggers the replier needs, keeps the webhook's
secret in this process only, and deletes the webhook when it stops (Ctrl-C).
Mail to the agent grants then reaches this terminal: each event, each skip's
reason, each reply.

Needs ``NYLAS_API_KEY`` and ``AGENT_GRANT_IDS``; ``NYLAS_API_URI`` defaults to
the US region (``https://api.eu.nylas.com`` for the EU).
"""

import dataclasses
import os
import signal
import sys
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import boto3

from devstack.cli_types import run_command
from devstack.console import make_console
from devstack.events import STAGE, WEBHOOK_PATH
from devstack.serve import (
    Mode,
    ServeError,
    ServeView,
    agent_addresses,
    check_replier,
    parser,
    replier_choices,
    serve,
    start_stack,
)
from devstack.stack import LocalStack, StackSettings
from ops.errors import OpsError
from ops.make_usage import name_make_target
from ops.nylas_admin import NylasAdmin
from ops.register_webhook import TRIGGER_TYPES, Registration, register_webhook
from ops.secret_store import SecretStore
from replyonce.config import DEFAULT_NYLAS_API_URI

REQUIRED_VARIABLES = ("NYLAS_API_KEY", "AGENT_GRANT_IDS")
# Where the API Gateway stand-in serves the webhook, as the deployed stage does (/v1/webhook).
LOCAL_WEBHOOK_PATH = f"/{STAGE}{WEBHOOK_PATH}"
# Loopback may be plain HTTP: the emulator (the tests) and nothing else reaches it that way.
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def webhook_url(public_url: str) -> str:
    """The URL Nylas delivers to: the tunnel's, with the stack's webhook path if it has no path.

    Raises :class:`ServeError` for anything Nylas could not deliver to: not HTTPS (Nylas requires
    it; plain HTTP only to loopback, for the emulator), or no host.
    """
    split = urlsplit(public_url.strip())
    if not split.netloc or split.scheme not in ("https", "http"):
        raise ServeError(
            f"--url {public_url!r} is not a URL: give the tunnel's, e.g. https://abc.trycloudflare.com"
        )
    if split.scheme != "https" and (split.hostname or "") not in _LOOPBACK:
        raise ServeError(f"--url {public_url!r}: Nylas delivers only to public HTTPS URLs (a tunnel's)")
    if split.path in ("", "/"):
        split = split._replace(path=LOCAL_WEBHOOK_PATH)
    return urlunsplit(split)


def listen_settings(
    environ: Mapping[str, str], port: int, pollers: int, log_level: str | None
) -> StackSettings:
    """The stack's settings for the real Nylas API; :class:`ServeError` naming what is missing."""
    missing = [name for name in REQUIRED_VARIABLES if not environ.get(name, "").strip()]
    if missing:
        raise ServeError(
            f"make listen needs {', '.join(REQUIRED_VARIABLES)} (and NYLAS_API_URI for the EU region); "
            f"missing: {', '.join(missing)}"
        )
    return StackSettings(
        pollers=pollers,
        webhook_port=port,
        log_level=log_level,
        nylas_api_uri=environ.get("NYLAS_API_URI", "").strip() or DEFAULT_NYLAS_API_URI,
        nylas_api_key=environ["NYLAS_API_KEY"].strip(),
        # No secret until Nylas issues one: the webhook answers 503 (retried) meanwhile.
        webhook_secret="",
        agent_grant_ids=environ["AGENT_GRANT_IDS"].strip(),
    )


def register(stack: LocalStack, nylas: NylasAdmin, url: str, emails: list[str], say) -> Registration:
    """Create the webhook for ``url``; its secret goes into the local stack's secret, nowhere else.

    The same sequence as ``make register-webhook`` (``ops.register_webhook``): the rotation flag
    first, so a delivery Nylas signs before the secret is stored is answered 503, not 401.
    """
    assert stack.resources is not None
    store = SecretStore(stack.resources.secrets["NylasSecrets"], boto3.client("secretsmanager"))
    return register_webhook(store, nylas, url, emails, say=say)


def main(argv: list[str] | None = None) -> int:
    cli = parser("python -m devstack.listen", __doc__)
    cli.add_argument("--url", required=True, help="the tunnel's public HTTPS URL (to this machine's --port)")
    cli.add_argument(
        "--notification-email",
        action="append",
        default=[],
        metavar="EMAIL",
        help="where Nylas mails the webhook's status changes (failing, failed)",
    )
    args = name_make_target(cli, "listen").parse_args(argv)
    console = make_console()
    try:
        url = webhook_url(args.url)
        settings = listen_settings(os.environ, args.port, args.pollers, args.log_level)
        assert settings.nylas_api_uri is not None
        nylas = NylasAdmin(settings.nylas_api_uri, settings.nylas_api_key)
        # Before anything starts: a wrong key or grant would fail every delivery the same way.
        agents = agent_addresses(nylas, settings.agent_grant_ids)
        # The shell's REPLY_MODE, REPLY_AGENT, ... and --review, --agent, as make serve takes them.
        settings, mode = replier_choices(
            settings, Mode(settings.nylas_api_uri, "", agents, real=True), os.environ, args
        )
    except ServeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    view = ServeView(console, json_logs=args.json_logs, metrics=args.metrics)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stack = start_stack(
        settings, view, "starting the local stack (embedded AWS, the real Nylas API, webhook) ..."
    )
    if stack is None:
        return 1
    try:
        check_replier()
    except ServeError as error:
        stack.stop()
        print(f"error: {error}", file=sys.stderr)
        return 2
    registration: Registration | None = None
    try:
        say = lambda line: console.print(line, highlight=False)  # noqa: E731
        try:
            registration = register(stack, nylas, url, args.notification_email, say)
        except OpsError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        secret = f"of webhook {registration.webhook_id}: kept in this process only, deleted with the webhook"
        say(f"Nylas delivers {', '.join(TRIGGER_TYPES)} to {url} until this stops")
        serve(stack, view, dataclasses.replace(mode, secret=secret), stopped)
    finally:
        if registration is not None:
            delete(nylas, registration.webhook_id, say=lambda line: console.print(line, highlight=False))
        stack.stop()
    return 0


def delete(nylas: NylasAdmin, webhook_id: str, *, say) -> None:
    """Delete the webhook this run created; if Nylas cannot be told, say how to finish by hand."""
    try:
        nylas.delete_webhook(webhook_id)
    except OpsError as error:
        say(
            f"error: {error}. Webhook {webhook_id} still exists at Nylas and delivers to a URL nobody "
            "answers: delete it in the Nylas dashboard (Webhooks)"
        )
        return
    say(f"deleted webhook {webhook_id} at Nylas")


if __name__ == "__main__":
    sys.exit(run_command(main))
