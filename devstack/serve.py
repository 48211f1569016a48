"""``make serve``: the local stack left running, for ``make mail``, ``curl``, a tunnel or real Nylas.

Against the emulator (the default), ``make mail ARGS="--from you@example.com
--subject Hi --body ..."`` in another terminal puts a customer message in
the agent's mailbox; the emulator notifies the webhook as Nylas does, and
this terminal shows every step: one line per log event (``--json-logs`` for
the raw JSON, ``--metrics`` for the EMF lines), each skip with its reason and
each reply as it is sent (its first lines; ``--full`` the whole body).

The web console, a read-only page on ``127.0.0.1`` (the webhook's port + 1;
``--console-port N``, ``--no-console``), shows the same live: each
notification's way, each thread with the agent's full replies, the
invariants' status and the shadow report (``devstack/web_console.py``).

With ``NYLAS_API_URI`` set, the replier talks to the real Nylas API instead,
which needs all four of ``NYLAS_API_URI``, ``NYLAS_API_KEY``,
``NYLAS_WEBHOOK_SECRET`` (the secret Nylas returned when the webhook was
created) and ``AGENT_GRANT_IDS``; point a tunnel at the printed URL. Without a
webhook of your own, ``make listen`` creates one for the tunnel while it runs.

``--grants N`` serves N mailboxes (``grant-agent-0001`` at ``support@replyonce.example``, then
``grant-agent-0002`` at ``support2@replyonce.example``...), ``--grants-file F`` the ones a file names with
their own mode and agent (``devstack/local_grants.py`` has its format): each a mailbox of the emulator and
a record of the local grant registry, written as ``make grants`` writes one. ``make mail ARGS="--grant
G"`` writes to one of them, ``make grants ARGS="list --local"`` (``set``, ``pause``, ``resume``) and
``make promote ARGS="--grant G --local"`` change them, within a second here; the console shows each
grant's mode, state and counts.

``--agent module:function`` runs the replier with your agent (``REPLY_AGENT``;
the module in ``functions/replier/`` or the layer) and gives the replier new
containers whenever the agent's file changes: edit it, ``make mail``, read the
reply. ``--review`` makes every reply a draft (``REPLY_MODE=review``).

The shell's value of every variable the functions declare in the template
is honoured, as ``sam local invoke`` does (``REPLY_MODE=review make serve``
makes drafts; ``REPLY_AGENT=my_agent:reply make serve`` is ``--agent``); an
option wins over its variable. A variable naming a deployed resource
(``QUEUE_URL``, the tables, the secrets) is refused, and so is a real-Nylas
variable without ``NYLAS_API_URI``. The banner names the agent, the mode
and each value taken from the shell; the replier's settings and agent are
checked before the banner, as a cold start would check them.
"""

import argparse
import contextlib
import dataclasses
import errno
import importlib.util
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devstack.cli_types import port_number, run_command, whole_number
from devstack.console import LogView, make_console, reply_panel
from devstack.control import MailControl
from devstack.invariants import REPLY_DRAFTED, REPLY_SENT
from devstack.local_grants import (
    GrantsFileError,
    LocalGrant,
    numbered_grants,
    parse_grants_file,
    seed_registry,
)
from devstack.sample_mailbox import seed_sample_mailbox
from devstack.stack import LocalStack, StackSettings
from devstack.template import LOCAL_WEBHOOK_SECRET, declared_variables
from devstack.web_console import ConsoleSource, WebConsole
from ops.errors import NylasApiError
from ops.make_usage import name_make_target
from ops.nylas_admin import NylasAdmin
from ops.template import load_template
from replyonce.config import ReplierSettings
from replyonce.exceptions import ConfigurationError

# The template's LogLevel parameter's AllowedValues.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def port_free(port: int) -> bool:
    """Whether ``127.0.0.1:port`` can be bound now by a server (0 always can).

    Probed as the stack's servers bind (``socketserver``'s ``allow_reuse_address``, ``SO_REUSEADDR``):
    a socket left in TIME_WAIT by the last run's connections does not stop them, nor the probe — on
    Linux only another socket listening on the port does. Without it, a ``make serve`` stopped while its
    console was open in a browser could not start again for a minute (issue 47).
    """
    if port == 0:
        return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def port_in_use_message(port: int) -> str:
    """What to do about a port another program listens on; the next free pair, since the console takes
    the port after the webhook's (``--port 3001`` next to a running ``make serve`` meets its console)."""
    return (
        f"port {port} is already in use by a program listening on it (another `make serve`? Ctrl-C "
        f'stops it): stop it, or pick another port with ARGS="--port {port + 2}"'
    )


REAL_NYLAS_VARIABLES = ("NYLAS_API_URI", "NYLAS_API_KEY", "NYLAS_WEBHOOK_SECRET", "AGENT_GRANT_IDS")
SIGNING_ADVICE = (
    "NYLAS_WEBHOOK_SECRET is the secret Nylas returned when the webhook was created (it shows it only "
    'then); without one, `make listen ARGS="--url https://<your tunnel>"` creates a webhook for your '
    "tunnel, keeps its secret in that process and deletes the webhook when it stops"
)


class ServeError(Exception):
    """``make serve`` cannot start as asked; one sentence for the person (exit 2)."""


@dataclass(frozen=True)
class Mode:
    """What the stack talks to, for the banner: never a secret, only where it comes from."""

    nylas: str
    secret: str
    agents: dict[str, str]  # agent grant -> its address
    real: bool
    # Who writes the replies and what becomes of them (the replier's REPLY_AGENT and REPLY_MODE).
    agent: str = ReplierSettings.reply_agent
    reply_mode: str = ReplierSettings.reply_mode
    # The shell's values the replier runs with, ``NAME=value`` (the banner lists them).
    from_shell: tuple[str, ...] = ()
    # The emulator's mailboxes, each registered in the local grant registry (``--grants``).
    grants: tuple[LocalGrant, ...] = ()


# Variables the local stack owns: the names of the resources it creates in its embedded AWS. A shell
# value (a deployed stack's, exported for `python -m ops`) names nothing here: refused, not ignored.
STACK_OWNED_VARIABLES = (
    "QUEUE_URL",
    "NYLAS_SECRETS_ID",
    "NYLAS_API_KEY_SECRET_ID",
    "IDEMPOTENCY_TABLE",
    "STATE_TABLE",
    "GRANT_REGISTRY_TABLE",
)
# Chosen by the mode (the emulator, or NYLAS_API_URI and its companions), not taken one by one.
MODE_VARIABLES = ("NYLAS_API_URI", "AGENT_GRANT_IDS")
# Which command-line option wins over which variable (the option is the more explicit of the two).
OPTION_VARIABLES = {"agent": "REPLY_AGENT", "review": "REPLY_MODE", "log_level": "POWERTOOLS_LOG_LEVEL"}


def emulator_mode_check(environ: Mapping[str, str]) -> None:
    """Without ``NYLAS_API_URI``: refuse the real API's other variables rather than ignore them.

    Why: ``NYLAS_API_KEY`` alone used to start the emulator without a word; whoever set it believed
    their agent was talking to their mailbox.
    """
    present = [name for name in REAL_NYLAS_VARIABLES[1:] if environ.get(name, "").strip()]
    if present:
        raise ServeError(
            f"{', '.join(present)} {'is' if len(present) == 1 else 'are'} set but NYLAS_API_URI is not: "
            "make serve uses the Nylas emulator without NYLAS_API_URI and would ignore "
            f"{'it' if len(present) == 1 else 'them'}. For the real Nylas API set all of "
            f"{', '.join(REAL_NYLAS_VARIABLES)}; for the emulator unset {', '.join(present)} "
            f"(e.g. `{' '.join(f'{name}=' for name in present)} make serve`)"
        )


def shell_overrides(
    environ: Mapping[str, str], declared: Mapping[str, Any], defaults: Mapping[str, str]
) -> dict[str, str]:
    """The shell's values of the functions' variables, as ``sam local invoke`` takes them.

    Parameters
    ----------
    environ:
        The shell's environment.
    declared:
        The variables the two functions declare in the template (only those are set, as in SAM).
    defaults:
        What the local stack sets on its own (its short retry delays): the shell wins over them too.

    Raises
    ------
    ServeError
        The shell sets a variable the local stack cannot honour (one naming a deployed resource).
    """
    owned = [name for name in STACK_OWNED_VARIABLES if environ.get(name, "").strip()]
    if owned:
        raise ServeError(
            f"{', '.join(owned)} set in the shell: make serve creates its own queue, tables and secrets "
            "in its embedded AWS and cannot use a deployed stack's; unset "
            f"{'it' if len(owned) == 1 else 'them'} "
            f"(e.g. `{' '.join(f'{name}=' for name in owned)} make serve`)"
        )
    names = [*declared, *(name for name in defaults if name not in declared)]
    values = {
        name: environ[name]
        for name in names
        if environ.get(name, "").strip() and name not in STACK_OWNED_VARIABLES and name not in MODE_VARIABLES
    }
    return values


def real_nylas_settings(environ: Mapping[str, str], args: argparse.Namespace) -> StackSettings:
    """The settings for the real Nylas API, or :class:`ServeError` naming every variable missing."""
    missing = [name for name in REAL_NYLAS_VARIABLES if not environ.get(name, "").strip()]
    if missing:
        raise ServeError(
            "NYLAS_API_URI is set, so make serve talks to the real Nylas API, which needs "
            f"{', '.join(REAL_NYLAS_VARIABLES)}; missing: {', '.join(missing)}. {SIGNING_ADVICE}. "
            "Unset NYLAS_API_URI to use the emulator"
        )
    return StackSettings(
        pollers=args.pollers,
        webhook_port=args.port,
        log_level=args.log_level,
        nylas_api_uri=environ["NYLAS_API_URI"].strip(),
        nylas_api_key=environ["NYLAS_API_KEY"].strip(),
        webhook_secret=environ["NYLAS_WEBHOOK_SECRET"].strip(),
        agent_grant_ids=environ["AGENT_GRANT_IDS"].strip(),
    )


def agent_addresses(nylas: NylasAdmin, agent_grant_ids: str) -> dict[str, str]:
    """Each agent grant's address, from Nylas (``GET /v3/grants/{id}``): what customers write to.

    Raises :class:`ServeError` with Nylas' own words when it refuses (wrong key, unknown grant):
    every delivery would fail the same way, so it is better said before anything starts.
    """
    addresses = {}
    for grant in (g.strip() for g in agent_grant_ids.split(",") if g.strip()):
        try:
            addresses[grant] = nylas.grant_email(grant) or "(no address)"
        except NylasApiError as error:
            raise ServeError(f"{error}; check NYLAS_API_KEY, NYLAS_API_URI and AGENT_GRANT_IDS") from None
    if not addresses:
        raise ServeError("AGENT_GRANT_IDS names no grant: the agent would answer nobody")
    return addresses


def parser(prog: str = "python -m devstack.serve", doc: str = __doc__) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=doc.split("\n\n")[0],
        epilog=doc.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=port_number, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--pollers", type=whole_number(1, 16), default=2, help="replier containers (1-16)")
    parser.add_argument("--json-logs", action="store_true", help="print the handlers' raw JSON log lines")
    parser.add_argument("--metrics", action="store_true", help="also print the EMF metric lines")
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help="POWERTOOLS_LOG_LEVEL of both functions (default: the template's LogLevel)",
    )
    parser.add_argument(
        "--agent",
        type=agent_name,
        help="REPLY_AGENT: your agent, module:function (functions/replier/ or the layer), reloaded on change",
    )
    parser.add_argument(
        "--review", action="store_true", help="REPLY_MODE=review: every reply becomes a draft"
    )
    parser.add_argument(
        "--console-port",
        type=port_number,
        help="the web console's port on 127.0.0.1 (default: --port + 1; 0 picks a free one)",
    )
    parser.add_argument("--no-console", action="store_true", help="serve no web console")
    parser.add_argument(
        "--full", action="store_true", help="show each reply's whole body, not its first lines"
    )
    many = parser.add_mutually_exclusive_group()
    many.add_argument(
        "--grants",
        type=whole_number(1, 50),
        metavar="N",
        help="serve N mailboxes, each an agent grant in the local grant registry (default 1)",
    )
    many.add_argument(
        "--grants-file",
        type=Path,
        metavar="FILE",
        help="serve the mailboxes FILE names, one a line: id=G address=A [mode=M] [agent=module:function]",
    )
    return parser


# How the local stack reads the grant registry and looks again at a paused grant's mail: in seconds
# rather than a deployed stack's minute and hour, so a `make grants --local` change shows at once and a
# resumed grant's waiting mail is answered while you watch (paused 8 receives, 4 minutes, it dead-letters).
LOCAL_REGISTRY_TUNING = {"registry_max_age_seconds": 1, "paused_retry_seconds": 30}


def local_grants(args: argparse.Namespace) -> list[LocalGrant] | None:
    """The mailboxes ``--grants`` or ``--grants-file`` asks for (``None``: neither, the one mailbox)."""
    try:
        if args.grants_file is not None:
            try:
                text = args.grants_file.read_text()
            except OSError as error:
                raise ServeError(f"cannot read --grants-file {args.grants_file}: {error.strerror}") from None
            grants = parse_grants_file(text, str(args.grants_file))
            for grant in grants:
                if grant.agent and ":" in grant.agent:
                    try:
                        agent_name(grant.agent)
                    except argparse.ArgumentTypeError as error:
                        raise ServeError(f"{args.grants_file}: grant {grant.grant_id}: {error}") from None
            return grants
        if args.grants is not None:
            return numbered_grants(args.grants)
    except GrantsFileError as error:
        raise ServeError(str(error)) from None
    return None


def console_port(args: argparse.Namespace) -> int | None:
    """The web console's port (``None``: no console): its own option, else the webhook's port + 1."""
    if args.no_console:
        return None
    if args.console_port is not None:
        return args.console_port
    return 0 if args.port == 0 else args.port + 1


def agent_name(value: str) -> str:
    """``module:function`` whose module can be found (on the replier's path): said before anything starts."""
    module, _, function = value.partition(":")
    if not module or not function:
        raise argparse.ArgumentTypeError(f"{value!r} is not module:function (e.g. order_status_agent:reply)")
    if agent_file(module) is None:
        raise argparse.ArgumentTypeError(f"no module {module!r} in {REPLIER_DIRECTORY} or the layer")
    return value


REPLIER_DIRECTORY = Path(__file__).resolve().parent.parent / "functions" / "replier"


def agent_file(module: str) -> Path | None:
    """Where the replier will import ``module`` from: its own directory first, as in Lambda."""
    if str(REPLIER_DIRECTORY) not in sys.path:
        sys.path.insert(0, str(REPLIER_DIRECTORY))
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def reload_on_change(stack: LocalStack, agent: str, console: Any, stopped: Any) -> None:
    """Give the replier new containers (the agent imported anew) each time the agent's file changes."""
    module = agent.partition(":")[0]
    path = agent_file(module)
    if path is None:
        return
    seen = path.stat().st_mtime
    while not stopped.wait(0.5):
        try:
            changed = path.stat().st_mtime
        except OSError:
            continue
        if changed != seen:
            seen = changed
            sys.modules.pop(module, None)
            stack.new_replier_containers()
            console.print(f"[agent] {path.name} changed: new replier containers load {agent} again")
            # What the old agent failed (a syntax error defers for the queue's 26 minutes) comes now.
            released = stack.release_deferred()
            if released:
                console.print(f"[agent] {released} record(s) the replier had failed are retried now")


def start_stack(
    settings: StackSettings, view: "ServeView", starting: str, console: int | None = None
) -> LocalStack | None:
    """The running stack, or ``None`` after one line saying why not (a port is taken)."""
    if not port_free(settings.webhook_port):
        print(f"error: {port_in_use_message(settings.webhook_port)}", file=sys.stderr)
        return None
    if console is not None and not port_free(console):
        print(
            f"error: the console's port {console} is already in use: "
            f'pick another with ARGS="--console-port {console + 1}", or ARGS=--no-console',
            file=sys.stderr,
        )
        return None
    try:
        # A spinner on a terminal; a piped run (a test, a log file) gets no control characters.
        with view.console.status(starting) if view.console.is_terminal else contextlib.nullcontext():
            return LocalStack(settings, log_echo=view).__enter__()
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            print(f"error: {port_in_use_message(settings.webhook_port)}", file=sys.stderr)
            return None
        raise


def replier_choices(
    settings: StackSettings, mode: Mode, environ: Mapping[str, str], args: argparse.Namespace
) -> tuple[StackSettings, Mode]:
    """The shell's variables and the options into the functions' environment; the banner told of them.

    Order, lowest first: the template, the local stack's short retry delays, the shell, the options
    (``--agent``, ``--review``, ``--log-level``). ``REPLY_AGENT=module:function`` from the shell is
    checked and reloaded on change as ``--agent`` is.
    """
    template = load_template()
    declared = {
        **declared_variables(template, "WebhookFunction"),
        **declared_variables(template, "ReplierFunction"),
    }
    from_shell = shell_overrides(environ, declared, settings.replier_environment)
    options = {
        OPTION_VARIABLES["agent"]: args.agent,
        OPTION_VARIABLES["review"]: "review" if args.review else None,
        OPTION_VARIABLES["log_level"]: args.log_level,
    }
    environment = {**settings.replier_environment, **from_shell}
    environment.update({name: value for name, value in options.items() if value})
    agent = environment.get("REPLY_AGENT", "").strip() or ReplierSettings.reply_agent
    if ":" in agent and not args.agent:
        try:
            agent_name(agent)
        except argparse.ArgumentTypeError as error:
            raise ServeError(f"REPLY_AGENT={agent} (from the shell): {error}") from None
    settings.replier_environment = environment
    if args.log_level is None and "POWERTOOLS_LOG_LEVEL" in from_shell:
        settings.log_level = from_shell["POWERTOOLS_LOG_LEVEL"].strip()
    shown = tuple(
        f"{name}={_short(value)}" for name, value in from_shell.items() if options.get(name) is None
    )
    reply_mode = environment.get("REPLY_MODE", "").strip() or "send"
    return settings, dataclasses.replace(mode, agent=agent, reply_mode=reply_mode, from_shell=shown)


def _short(value: str, width: int = 40) -> str:
    value = " ".join(value.split())
    return value if len(value) <= width else value[: width - 1] + "…"


def check_replier(environ: Mapping[str, str] = os.environ) -> None:
    """Build the replier's settings and load its agent as a cold start would: :class:`ServeError` if not.

    Why at start-up: a configuration error found by the first record defers every record for the
    queue's visibility timeout (26 minutes) and reads as silence; found here it is one line.
    """
    # Imported here, after the stack set the functions' variables: ``replyonce.adapters.agents`` imports the
    # layer's Powertools Metrics, which reads POWERTOOLS_METRICS_NAMESPACE once, at import; imported
    # before, every handler's metric flush raised and the webhook answered each delivery 502.
    from replyonce.adapters.agents import load_agent

    try:
        settings = ReplierSettings.from_environment(environ)
        if settings.reply_agent != "bedrock":  # Bedrock is reached only by a real call
            load_agent(settings.reply_agent, bedrock=lambda: None)  # type: ignore[arg-type, return-value]
    except ConfigurationError as error:
        raise ServeError(f"the replier cannot start: {error}") from None


def main(argv: list[str] | None = None) -> int:
    args = name_make_target(parser(), "serve").parse_args(argv)
    try:
        grants = local_grants(args)
        if os.environ.get("NYLAS_API_URI"):
            if grants is not None:
                raise ServeError(
                    "--grants and --grants-file make mailboxes in the Nylas emulator; with NYLAS_API_URI "
                    "the grants are AGENT_GRANT_IDS' (and your registry's: make grants)"
                )
            settings = real_nylas_settings(os.environ, args)
            assert settings.nylas_api_uri is not None
            agents = agent_addresses(
                NylasAdmin(settings.nylas_api_uri, settings.nylas_api_key), settings.agent_grant_ids
            )
            mode = Mode(settings.nylas_api_uri, "from NYLAS_WEBHOOK_SECRET (not printed)", agents, real=True)
        else:
            emulator_mode_check(os.environ)
            # Registered only when asked: a plain `make serve` keeps its one AGENT_GRANT_IDS grant, no record.
            asked, grants = grants or [], grants or numbered_grants(1)
            settings = StackSettings(
                pollers=args.pollers,
                webhook_port=args.port,
                log_level=args.log_level,
                # The first grant is the AgentGrantIds seed; every one has its record in the registry.
                agent_grant_ids=grants[0].grant_id,
            )
            settings.replier_tuning.update(LOCAL_REGISTRY_TUNING)
            mode = Mode(
                "",
                f"{LOCAL_WEBHOOK_SECRET} (local development secret)",
                {grant.grant_id: grant.address for grant in grants},
                False,
                grants=tuple(asked),
            )
        settings, mode = replier_choices(settings, mode, os.environ, args)
        settings.watch_dead_letters = True
    except ServeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    view = ServeView(make_console(), json_logs=args.json_logs, metrics=args.metrics, full=args.full)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    nylas = "the real Nylas API" if mode.real else "Nylas emulator"
    starting = f"starting the local stack (embedded AWS, {nylas}, webhook) ..."
    stack = start_stack(settings, view, starting, console_port(args))
    if stack is None:
        return 1
    try:
        check_replier()
    except ServeError as error:
        stack.stop()
        print(f"error: {error}", file=sys.stderr)
        return 2
    if ":" in mode.agent:
        threading.Thread(
            target=reload_on_change, args=(stack, mode.agent, view.console, stopped), daemon=True
        ).start()
    try:
        serve(stack, view, mode, stopped, console_port(args))
    finally:
        stopped.set()
        stack.stop()
    return 0


class ServeView(LogView):
    """The log view, plus each reply shown right after the replier's ``reply sent`` line (a draft too).

    ``full``: each reply's whole body (``--full``); else its first lines and how many were cut.
    """

    mailbox: MailControl | None = None

    def __init__(
        self, console: Any, *, json_logs: bool = False, metrics: bool = False, full: bool = False
    ) -> None:
        super().__init__(console, json_logs=json_logs, metrics=metrics)
        self.full = full

    def __call__(self, raw: str, record: dict[str, Any] | None) -> None:
        super().__call__(raw, record)
        if record is not None and record.get("message") in (REPLY_SENT, REPLY_DRAFTED):
            sent = self.mailbox.sent_message(record.get("reply_message_id")) if self.mailbox else None
            drafted = record.get("message") == REPLY_DRAFTED
            self.console.print(reply_panel(record, sent, drafted=drafted, full=self.full), soft_wrap=False)


def register_grants(stack: LocalStack, grants: Sequence[LocalGrant]) -> None:
    """Each grant a mailbox of the emulator and a record of the grant registry, before any mail arrives."""
    import boto3

    from ops.grants import Deployment
    from replyonce.grants import defaults_of

    assert stack.emulator is not None
    for number, grant in enumerate(grants, start=1):
        stack.emulator.add_grant(grant.grant_id, grant.address, name=f"Acme Support {number}")
    where = stack.embedded_aws()
    dynamodb = boto3.client("dynamodb", endpoint_url=where["endpoint_url"], region_name=where["region"])
    # The stack's own settings, as its replier reads them: the defaults a record overrides.
    deployment = Deployment(defaults_of(ReplierSettings.from_environment()), (grants[0].grant_id,))
    seed_registry(dynamodb, where["grant_registry_table"], grants, deployment, time.time)


def serve(
    stack: LocalStack, view: ServeView, mode: Mode, stopped: Any, console_port: int | None = None
) -> None:
    """Install the control routes and the web console, print how to use the stack, wait for Ctrl-C."""
    console = view.console
    if stack.emulator is not None:
        seed_sample_mailbox(stack.emulator)
        if mode.grants:
            register_grants(stack, mode.grants)
    [(agent_grant, agent_email), *_] = mode.agents.items()
    sender = stack.sender()
    control = MailControl(
        stack.emulator,
        sender,
        agent_grant_id=agent_grant,
        agent_email=agent_email,
        logs=stack.logs,
        aws=stack.embedded_aws(),
        agent_addresses=mode.agents,
    )
    view.mailbox = control
    stack.serve_control(control.handle)
    web = None
    if console_port is not None:
        source = ConsoleSource(
            stack, sender, mode.agents, {"agent": mode.agent, "reply_mode": mode.reply_mode}
        )
        web = WebConsole(source.snapshot, console_port).start()
    console.print(banner(stack, mode, web.url if web else None), highlight=False)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            # Why a timed wait: Python runs a signal's handler only when the main thread runs
            # bytecode; a wait with no timeout can sleep through a Ctrl-C the kernel handed to one
            # of the stack's threads.
            while not stopped.wait(0.5):
                pass
    finally:
        if web is not None:
            web.stop()
        stack.serve_control(None)
        control.close()


REPLY_MODE_LINES = {
    "send": "send: each reply is sent to the customer (REPLY_MODE=review or --review for drafts)",
    "review": "review: each reply becomes a draft for a person; nothing is sent",
    "shadow": "shadow: nothing is sent or drafted; what would be is recorded (make shadow-report)",
}


def agent_line(agent: str) -> str:
    """Who writes the replies, and where its code is (a team's agent is reloaded when it changes)."""
    if agent == "template":
        return "template (the built-in agent; --agent module:function for yours)"
    if agent == "bedrock":
        return "bedrock (BEDROCK_MODEL_ID)"
    path = agent_file(agent.partition(":")[0])
    return f"{agent} ({path}; reloaded when it changes)" if path else agent


def banner(stack: LocalStack, mode: Mode, console_url: str | None = None) -> str:
    """What is running, and what works in this mode (``make mail`` needs the emulator's mailbox)."""
    port = stack.webhook_url.split(":")[2].split("/")[0]
    port_arg = "" if port == "3000" else f" --port {port}"
    nylas = mode.nylas or f"emulator at {stack.emulator.url if stack.emulator else '?'}"
    agents = ", ".join(f"{grant} ({address})" for grant, address in mode.agents.items())
    if len(mode.grants) > 1:
        agents = f"{len(mode.grants)}, each with its record in the local grant registry (make grants):\n"
        agents += "\n".join(
            f"    {g.grant_id:<20} {g.address:<32} {g.mode or mode.reply_mode:<7} {g.agent or mode.agent}"
            for g in mode.grants
        )
    lines = [
        "ReplyOnce local stack" + (", against the real Nylas API" if mode.real else ""),
        f"  webhook URL     {stack.webhook_url}" + ("  (point your tunnel here)" if mode.real else ""),
        f"  webhook secret  {mode.secret}",
        f"  Nylas API       {nylas}",
        f"  agent grants    {agents}",
        f"  agent           {agent_line(mode.agent)}",
        f"  reply mode      {REPLY_MODE_LINES.get(mode.reply_mode, mode.reply_mode)}",
    ]
    if mode.from_shell:
        lines.append(f"  from the shell  {', '.join(mode.from_shell)}")
    if console_url:
        lines.append(f"  console         {console_url}  (read-only, live; --console-port, --no-console)")
    if mode.real:
        addresses = ", ".join(mode.agents.values())
        lines += [
            "What works in this mode:",
            f"  send an email to {addresses} from another mailbox: Nylas notifies the webhook through",
            "  your tunnel, and this terminal shows each event, each skip's reason and each reply",
            f"  curl '{stack.webhook_url}?challenge=hello'",
            "  make mail, make thread and make trigger need the emulator's mailbox: unset NYLAS_API_URI",
        ]
    else:
        lines += [
            "Try, in another terminal:",
            "  make mail ARGS=\"--from alice@example.com --subject Hi --body 'Where is my order?'"
            + f'{port_arg}"',
            f'  make thread ARGS="--thread THREAD{port_arg}"   (make mail prints the thread id)',
        ]
        if len(mode.grants) > 1:
            local = "" if port == "3000" else f" http://127.0.0.1:{port}"
            second = mode.grants[1].grant_id
            lines += [
                f'  make mail ARGS="--grant {second} --from bob@example.com --body Hi{port_arg}"',
                f'  make grants ARGS="list --local{local}"   (pause, resume, set --mode: within 1 s)',
            ]
        lines += [
            f"  curl '{stack.webhook_url}?challenge=hello'",
        ]
    lines.append("Ctrl-C stops it.")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(run_command(main))
