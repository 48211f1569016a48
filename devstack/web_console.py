"""``make serve``'s web console: a read-only page on loopback showing the stack's work as it happens.

Built on Flask (already in the local stack's requirements, with moto's server)
and served by werkzeug on ``127.0.0.1`` only. The page
(``devstack/console_page/``) asks ``GET /state`` once a second and renders
it as text (never as markup: subjects and bodies are whatever a sender
wrote); a Content-Security-Policy allows no script but the page's own file.
Nothing is written through it: every route is a ``GET`` and any other method
is answered 405; a request naming another host (DNS rebinding) gets 403.

What ``/state`` holds is decided by :mod:`devstack.web_view` from what the
stack already produced: the handlers' log records, the webhook deliveries and
the Nylas emulator's mailbox.
"""

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, jsonify, request
from werkzeug.serving import BaseWSGIServer, make_server

from devstack import web_view
from devstack.dead_letters import DEAD_LETTERED
from devstack.invariants import History, check

Json = dict[str, Any]
PAGE_DIRECTORY = Path(__file__).resolve().parent / "console_page"
# What every console page shares (common.css, common.js), served beside the page's own files.
COMMON_DIRECTORY = Path(__file__).resolve().parent / "console_common"
# The page's own files only; no inline script or style, no other origin.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'"
)


class ConsoleSource:
    """Everything the console reads, gathered into one snapshot per request.

    Parameters
    ----------
    stack:
        The running :class:`devstack.stack.LocalStack` (its log records, emulator and queues).
    sender:
        The :class:`devstack.webhook_sender.WebhookSender` every notification is delivered with.
    agents:
        Agent grant id -> address.
    about:
        What the banner says (agent, reply mode), shown at the top of the page.
    """

    def __init__(self, stack: Any, sender: Any, agents: Mapping[str, str], about: Mapping[str, str]) -> None:
        self._stack = stack
        self._sender = sender
        self._agents = dict(agents)
        self._about = dict(about)
        self._dynamodb_client: Any = None

    def snapshot(self) -> Json:
        from replyonce.config import ReplierSettings  # the replier's budgets, as the stack set them

        records = list(self._stack.logs.records)
        deliveries = list(self._sender.deliveries)
        emulator = self._stack.emulator
        mailbox = emulator.mailbox() if emulator is not None else []
        drafts = [record.draft for record in emulator.drafts] if emulator is not None else []
        visible, in_flight, dead = self._stack.queue_depth()
        not_judged = dict(web_view.NEEDS_GROUND_TRUTH)
        violations: Mapping[int, list[str]] = {}
        if emulator is not None:
            settings = ReplierSettings.from_environment()
            truth = web_view.live_truth(mailbox, self._agents.values())
            violations = check(
                History(
                    agent_grants=self._agents,
                    mailbox=mailbox,
                    truth=truth,
                    sends=emulator.sends,
                    deliveries=deliveries,
                    logs=records,
                    reply_budget=settings.reply_budget_per_hour,
                    automatic_exchanges=settings.max_automatic_exchanges,
                    notified_message_ids=set(truth),
                    forged_notification_ids={d.notification_id for d in deliveries if d.forged},
                    # A dead letter is the documented end of a record that kept failing (docs/agents.md):
                    # an outcome waiting for `make redrive`, not a notification lost (invariant 5).
                    dead_lettered_notification_ids={
                        str(r.get("notification_id")) for r in records if r.get("message") == DEAD_LETTERED
                    },
                )
            )
        else:
            for number in (1, 3, 4):
                not_judged[number] = "the real Nylas mailbox is not read by the console"
        return {
            "about": {**self._about, "agents": ", ".join(self._agents.values())},
            "queue": {"visible": visible, "in_flight": in_flight, "dead_lettered": dead},
            "notifications": web_view.notification_ways(records, deliveries, mailbox),
            "threads": web_view.conversations(mailbox, drafts, self._agents.values()),
            "invariants": web_view.invariant_status(violations, visible + in_flight, not_judged),
            "shadow": self._shadow_panel(),
            "grants": web_view.grant_rows(self._grants(), records),
        }

    def _grants(self) -> list[Json]:
        """Each agent grant (the stack's, then any the registry added), its mode and state, as ``make grants
        ARGS="list --local"`` reads them: the registry's records over the stack's settings, and what
        Nylas' grant notifications made of it (expired, deleted)."""
        from ops.grants import Deployment, effective
        from replyonce.adapters.grant_registry import list_grants, list_lives
        from replyonce.config import ReplierSettings
        from replyonce.grants import defaults_of

        where = self._stack.embedded_aws()
        table = where.get("grant_registry_table")
        dynamodb = self._dynamodb(where)
        stored = {g.grant_id: g for g in list_grants(dynamodb, table)} if table else {}
        lives = list_lives(dynamodb, table) if table else {}
        settings = ReplierSettings.from_environment()
        deployment = Deployment(defaults_of(settings), settings.agent_grant_ids)
        rows = []
        for grant_id in dict.fromkeys([*self._agents, *settings.agent_grant_ids, *stored]):
            grant = effective(deployment, stored.get(grant_id))
            life = lives.get(grant_id)
            if isinstance(grant, str):  # a record the replier cannot read: its mail waits
                mode, state = "-", "unreadable record"
            else:
                mode, state = grant.reply_mode, "enabled" if grant.enabled else "paused"
            if life is not None and life.life.deleted:
                state = "deleted"
            elif life is not None and life.life.expired:
                state = "expired"
            address = self._agents.get(grant_id) or self._address(grant_id)
            rows.append({"grant_id": grant_id, "address": address, "mode": mode, "state": state})
        return rows

    def _address(self, grant_id: str) -> str:
        """The address Nylas gives a grant added since the start (``make trigger ARGS="grant create"``)."""
        from ops.errors import NylasApiError
        from ops.nylas_admin import NylasAdmin

        where = self._stack.embedded_aws()
        nylas = NylasAdmin(where["nylas_api_uri"], self._stack.settings.nylas_api_key)
        try:
            return nylas.grant_email(grant_id) or ""
        except NylasApiError:
            return ""

    def _shadow_panel(self) -> Json:
        """The shadow panel; what stopped it when Nylas refuses a read (an expired grant answers 401), so
        the rest of the page still shows."""
        from ops.errors import NylasApiError

        try:
            return web_view.shadow_report(self._shadow())
        except NylasApiError as refused:
            return {"records": [], "summary": f"the shadow report could not read the mailbox: {refused}"}

    def _shadow(self) -> Any:
        """The shadow report of the stack's state table, or ``None`` while it holds no shadow record.

        The same reads as ``make shadow-report ARGS=--local``: the table's shadow records, and each
        of their threads from the Nylas the replier reads, for a person's later answer.
        """
        from ops.nylas_admin import NylasAdmin
        from ops.shadow import report_from_records
        from replyonce.adapters.store import DynamoDBStateStore

        where = self._stack.embedded_aws()
        # Read only: the records' lifetime is the replier's to set (ttl 0 writes nothing here).
        store = DynamoDBStateStore(where["state_table"], self._dynamodb(where), ttl_seconds=0)
        records = store.shadow_records()
        if not records:
            return None
        inbox = NylasAdmin(where["nylas_api_uri"], self._stack.settings.nylas_api_key)
        # The grants with a shadow record only: each grant costs reads, and another grant may have expired.
        shadowed = [grant for grant in self._agents if any(r.grant_id == grant for r in records)]
        return report_from_records(records, inbox, shadowed, since=None, until=None)

    def _dynamodb(self, where: Mapping[str, str]) -> Any:
        if self._dynamodb_client is None:
            import boto3

            self._dynamodb_client = boto3.client(
                "dynamodb", endpoint_url=where["endpoint_url"], region_name=where["region"]
            )
        return self._dynamodb_client


def create_app(
    snapshot: Callable[[], Json],
    *,
    allowed_hosts: Callable[[], set[str]],
    page_directory: Path = PAGE_DIRECTORY,
) -> Flask:
    """The console's Flask app: the page, its two files and ``GET /state``.

    ``page_directory`` holds the page (``index.html``, ``console.js``, ``console.css``): ``make
    serve``'s, or the report console's (``devstack/report_console.py``); both load what they share
    (``common.js``, ``common.css``) from ``devstack/console_common``.
    """
    app = Flask(__name__, static_folder=None)

    @app.before_request
    def loopback_names_only() -> None:
        # A page elsewhere could point a name of its own at 127.0.0.1 (DNS rebinding) and read this.
        if request.host not in allowed_hosts():
            abort(403)

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-store"
        return response

    def page_file(name: str, mimetype: str, directory: Path = page_directory) -> Response:
        return Response((directory / name).read_bytes(), mimetype=mimetype)

    @app.get("/")
    def index() -> Response:
        return page_file("index.html", "text/html")

    @app.get("/console.js")
    def script() -> Response:
        return page_file("console.js", "text/javascript")

    @app.get("/console.css")
    def style() -> Response:
        return page_file("console.css", "text/css")

    @app.get("/common.js")
    def common_script() -> Response:
        return page_file("common.js", "text/javascript", COMMON_DIRECTORY)

    @app.get("/common.css")
    def common_style() -> Response:
        return page_file("common.css", "text/css", COMMON_DIRECTORY)

    @app.get("/state")
    def state() -> Response:
        return jsonify(snapshot())

    return app


class WebConsole:
    """The console served on ``127.0.0.1:port`` (0: a free port) from a thread of its own."""

    def __init__(
        self, snapshot: Callable[[], Json], port: int = 0, *, page_directory: Path = PAGE_DIRECTORY
    ) -> None:
        self._server: BaseWSGIServer | None = None
        app = create_app(snapshot, allowed_hosts=self._hosts, page_directory=page_directory)
        self._server = make_server("127.0.0.1", port, app, threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="web-console", daemon=True)

    def _hosts(self) -> set[str]:
        port = self.port
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> "WebConsole":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
