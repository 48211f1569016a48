"""What a person sees of the local stack: one readable line per log event, replies and skips in full.

In Lambda the handlers' JSON lines go to CloudWatch, where they are queried;
on a terminal the same lines are unreadable. :class:`LogView` turns each
Powertools line into ``time  function  notification  message  reason=...``
(``--json-logs`` keeps the raw JSON), hides the CloudWatch EMF metric lines
unless asked (``--metrics``), and :func:`reply_panel` shows a reply the agent
sent as an email: to, subject, the messages it answers (from the replier's
own ``reply sent`` record) and the first lines of the body. Built on ``rich``.
"""

import html
import re
import textwrap
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from devstack.agent_failures import where_it_raised

# The keys worth a person's attention, in this order; the rest stay in --json-logs.
_DETAIL_KEYS = (
    "step",
    "reason",
    "message_id",
    "replied_to",
    "covered",
    "status",
    "error_type",
    "retry_in_seconds",
    "notification_type",
    "detail",
    "exception_name",
)
_LEVEL_STYLE = {"DEBUG": "dim", "INFO": "", "WARNING": "yellow", "ERROR": "bold red", "CRITICAL": "bold red"}
_FUNCTION_STYLE = {"webhook": "cyan", "replier": "magenta"}


def make_console(stream: TextIO | None = None, *, width: int | None = None) -> Console:
    """A rich console on ``stream`` (stderr by default), plain text when it is not a terminal.

    Markup is off: subjects, addresses and log text are printed as written (``[URGENT]`` stays).
    """
    return Console(
        file=stream, stderr=stream is None, width=width, highlight=False, soft_wrap=True, markup=False
    )


def is_metric_line(record: Mapping[str, Any]) -> bool:
    """A CloudWatch embedded-metric-format record (Powertools Metrics' flush), not a log event.

    A log event may carry its own metric (a skip's count travels in its log line): it has a
    ``message`` and is shown as the log event it is.
    """
    return "_aws" in record and "message" not in record


def function_label(record: Mapping[str, Any]) -> str:
    """``webhook`` or ``replier`` from the record's service or function name."""
    service = str(record.get("service") or "")
    if service.startswith("replyonce-"):
        return service.removeprefix("replyonce-")
    name = str(record.get("function_name") or "")
    return name.removesuffix("Function").lower() or "local"


def readable_line(record: Mapping[str, Any]) -> Text:
    """One log event as one line: time, function, notification id, message, the details that matter."""
    timestamp = str(record.get("timestamp") or "")
    clock = timestamp[11:19] if len(timestamp) >= 19 else timestamp
    label = function_label(record)
    level = str(record.get("level") or "INFO")
    notification = str(record.get("notification_id") or record.get("correlation_id") or "-")
    line = Text()
    line.append(f"{clock} ", style="dim")
    line.append(f"{label:<8}", style=_FUNCTION_STYLE.get(label, ""))
    line.append(f" {notification[:36]:<36} ", style="dim")
    message = str(record.get("message", ""))
    style = _LEVEL_STYLE.get(level, "")
    if message == "notification skipped":
        style = "yellow"
    elif message == "reply sent":
        style = "bold green"
    line.append(message, style=style)
    for key in _DETAIL_KEYS:
        value = record.get(key)
        # An empty mapping or list says nothing ("next step detail={}" named no step).
        if value not in (None, "", False, {}, []):
            line.append(f"  {key}=", style="dim")
            line.append(",".join(map(str, value)) if isinstance(value, list) else str(value))
    # Where the person's own code raised (the agent's traceback is logged whole; its frames in the layer
    # and the thread say nothing a person can fix): `at=my_agent.py:12 in reply`.
    frame = where_it_raised(str(record.get("traceback") or ""))
    if frame is not None:
        line.append("  at=", style="dim")
        line.append(frame.short())
        if frame.code:
            line.append(f"  {frame.code}", style="dim")
    request = str(record.get("function_request_id") or "")
    if request:
        line.append(f"  [{request[:8]}]", style="dim")
    return line


class LogView:
    """Where the handlers' lines go when a person is watching.

    Parameters
    ----------
    console:
        The rich console to print on.
    json_logs:
        Print each line as the raw JSON Powertools wrote (what CloudWatch would hold).
    metrics:
        Also print the EMF metric lines (hidden by default: they are for CloudWatch).
    """

    def __init__(self, console: Console, *, json_logs: bool = False, metrics: bool = False) -> None:
        self.console = console
        self.json_logs = json_logs
        self.metrics = metrics

    def __call__(self, raw: str, record: Mapping[str, Any] | None) -> None:
        metric = record is not None and is_metric_line(record)
        if metric and not self.metrics:
            return
        if self.json_logs or record is None or metric:
            self.console.out(raw, highlight=False)
            return
        self.console.print(readable_line(record))


def body_text(body: str) -> str:
    """An email body as the text a person reads: HTML's line breaks kept, its tags dropped, unescaped."""
    text = re.sub(r"<br\s*/?>|</p>|</div>", "\n", body, flags=re.IGNORECASE)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def body_lines(body: str) -> list[str]:
    """Every non-empty line of an email body, HTML turned into text."""
    return [line.strip() for line in body_text(body).splitlines() if line.strip()]


def body_preview(body: str, lines: int = 3) -> list[str]:
    """The first ``lines`` non-empty lines of an email body, HTML turned into text."""
    return body_lines(body)[:lines]


def shown_lines(body: str, lines: int, *, full: bool) -> list[str]:
    """The body's lines a panel shows: all (``full``), or the first ``lines`` and one saying what was cut.

    Why the closing line: a reply cut at its third line read as the whole reply; the ellipsis says
    how much more there is and how to see it.
    """
    every = body_lines(body)
    if full or len(every) <= lines:
        return every
    cut = len(every) - lines
    return [*every[:lines], f"… {cut} more line{'s' if cut != 1 else ''} (--full shows the whole body)"]


def _addresses(participants: Iterable[Mapping[str, Any]]) -> str:
    return ", ".join(str(p.get("email", "")) for p in participants) or "-"


def reply_panel(
    record: Mapping[str, Any],
    message: Mapping[str, Any] | None = None,
    *,
    drafted: bool = False,
    full: bool = False,
) -> Panel:
    """A reply as a person reads an email: to, subject, what it answers, the first lines.

    Parameters
    ----------
    record:
        The replier's ``reply sent`` log record: the message replied to and the ids the reply
        covers — what the replier decided, not a guess from the mailbox. At INFO it holds the
        recipients' digests only (``to_digest``); a record with ``to`` and ``subject`` (a DEBUG
        run, a test) shows them.
    message:
        The sent message as the mailbox holds it, for its recipients, subject, body and thread
        (``None`` when the mailbox is the real Nylas one: the digests are shown).
    drafted:
        The replier's ``reply drafted for review`` record (``REPLY_MODE=review``): the same panel,
        titled as the draft it is, so review mode is as visible as a send.
    full:
        The whole body (``make serve --full``); else its first lines and a line saying how many more.
    """
    message = message or {}
    to = (
        record.get("to")
        or [p.get("email", "") for p in message.get("to") or []]
        or record.get("to_digest")
        or []
    )
    body = Text()
    body.append("to       ", style="dim")
    body.append((", ".join(str(a) for a in to) or "-") + "\n")
    body.append("subject  ", style="dim")
    body.append(str(record.get("subject") or message.get("subject") or "") + "\n")
    body.append("answers  ", style="dim")
    body.append((", ".join(str(c) for c in record.get("covered") or []) or "-") + "\n")
    body.append("draft    " if drafted else "reply    ", style="dim")
    body.append(f"{record.get('reply_message_id') or '-'}\n")
    if message.get("thread_id"):
        body.append("thread   ", style="dim")
        body.append(f"{message['thread_id']}\n")
    for line in shown_lines(str(message.get("body") or ""), 3, full=full):
        # Wrapped here so every piece keeps the quote bar when the panel is narrower than the line.
        for piece in textwrap.wrap(line, 68) or [""]:
            body.append(f"  │ {piece}\n")
    body.rstrip()
    if drafted:
        title = "reply drafted for review: nothing sent; a person sends it from the drafts"
        return Panel(body, title=title, title_align="left", border_style="yellow")
    return Panel(body, title="reply sent", title_align="left", border_style="green")


def files_shown(message: Mapping[str, Any]) -> list[str]:
    """A message's attachments as the consoles show them: name, type, size."""
    return [
        f"{f.get('filename')} ({f.get('content_type')}, {f.get('size')} bytes)"
        for f in message.get("attachments") or []
        if isinstance(f, Mapping)
    ]


def conversation(
    messages: list[Mapping[str, Any]], agent_email: str | None = None, *, full: bool = False
) -> Text:
    """A thread as the mailbox holds it, in arrival order: who wrote, subject, first lines (all: ``full``)."""
    out = Text()
    for message in messages:
        sender = _addresses(message.get("from") or [])
        mine = agent_email is not None and sender.lower() == agent_email.lower()
        out.append("agent    " if mine else "customer ", style="green" if mine else "cyan")
        out.append(f"{message.get('id', '')}  ", style="dim")
        out.append(f"{sender}  ")
        out.append(str(message.get("subject", "")), style="bold")
        for line in shown_lines(str(message.get("body") or ""), 2, full=full):
            out.append(f"\n           │ {line}")
        for file in files_shown(message):
            out.append(f"\n           + {file}")
        out.append("\n")
    return out
