"""What the web console shows, decided from what the local stack already produced: pure functions.

The console (``devstack/web_console.py``) adds no code path to the Lambda
layer: each notification's way is read back from the handlers' own
Powertools JSON log records (the lines ``make serve`` prints) and the
webhook deliveries the sender made; each thread's conversation from the Nylas
emulator's mailbox and drafts, with the agent's replies in full. Everything
here is data in, JSON-ready data out, so the page only renders text and the
rules are tested in a table (``tests/unit/test_web_view.py``).
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from devstack.agent_failures import raised_words, where_it_raised
from devstack.console import body_text, files_shown
from devstack.dead_letters import DEAD_LETTERED
from devstack.invariants import (
    DUPLICATE_ABSORBED,
    INVARIANTS,
    LEASE_LOST,
    QUEUED,
    REPLY_DRAFTED,
    REPLY_QUEUED,
    REPLY_SENT,
    REPLY_SHADOWED,
    SKIPPED,
    Truth,
)
from ops.score import items_of, score_items
from replyonce.mail import read_message
from replyonce.rules.coverage import carries_intent_id
from replyonce.rules.shadow_report import ShadowReport, render_text

Json = dict[str, Any]

DEFERRED = "record deferred; it will be retried"
# The replier's records about the agent (its failure, its refusal; its answer at DEBUG).
AGENT_FAILED = "the agent failed; the record will be retried"
AGENT_REJECTED = "the agent rejected the burst; not retried"
AGENT_ANSWERED = "agent answered"
NEXT_STEP = "next step"  # DEBUG: each step of the replier's plan, by name
# Skips the agent decided (its NoReply or Handoff); any other skip came before the agent was asked.
AGENT_SKIPS = {"agent_declined": "declined", "handed_off": "handed off"}
# Invariants the console cannot judge: they need the workload's ground truth (who is a person, who
# a machine), which `make demo` and `make chaos` have and a mailbox you type into does not.
NEEDS_GROUND_TRUTH = {
    2: "needs ground truth (which sender is a person): judged by make demo and make chaos",
    7: "needs ground truth (which sender is a person): judged by make chaos",
}
NO_SHADOW_RECORDS = "no shadow records"


def _outcome(
    records: list[Mapping[str, Any]], statuses: Sequence[int | None] = (), forged: bool = False
) -> Json:
    """The notification's final word: send, draft, queued send, shadow or skip, with its reason; else a
    dead letter (with the command that redrives it), a forged or refused request (never queued), or a
    record on its way (the agent's last failure, when it raised)."""
    for record in records:
        message = record.get("message")
        if message == REPLY_SENT:
            return {"kind": "send", "text": f"reply {record.get('reply_message_id')} sent"}
        if message == REPLY_DRAFTED:
            return {"kind": "draft", "text": f"draft {record.get('reply_message_id')} for review"}
        if message == REPLY_QUEUED:
            return {"kind": "send", "text": f"reply {record.get('reply_message_id')} queued by Nylas"}
        if message == REPLY_SHADOWED:
            return {"kind": "shadow", "text": "shadow: the reply was recorded, not sent"}
        if message == SKIPPED:
            detail = f": {record['detail']}" if record.get("detail") else ""
            return {"kind": "skip", "text": f"skipped, reason={record.get('reason')}{detail}"}
    letters = [r for r in records if r.get("message") == DEAD_LETTERED]
    if letters:
        # The documented end of a record that kept failing (docs/agents.md): not lost, waiting for
        # `make redrive` on the dead-letter queue; what it takes to bring it back is on the row.
        command = str(letters[-1].get("redrive") or "make redrive ARGS=--local")
        return {
            "kind": "dead-letter",
            "text": "dead-lettered: no reply until it is redriven; fix the cause, then " + command,
            "command": command,
        }
    if any(r.get("message") == DUPLICATE_ABSORBED for r in records):
        return {"kind": "duplicate", "text": "every delivery was a duplicate of one already handled"}
    if forged and not any(r.get("message") == QUEUED for r in records):
        return {
            "kind": "forged",
            "text": f"forged signature: answered {_statuses(statuses)}, never queued (nothing to redrive)",
        }
    if (
        statuses
        and not any(s == 200 for s in statuses)
        and not any(r.get("message") == QUEUED for r in records)
    ):
        return {
            "kind": "refused",
            "text": f"refused by the webhook: answered {_statuses(statuses)}, never queued",
        }
    failures = [r for r in records if r.get("message") == AGENT_FAILED]
    if failures:
        return {"kind": "retrying", "text": f"retrying: the agent raised {raised_words(failures[-1])}"}
    return {"kind": "pending", "text": "no outcome yet (queued or retrying)"}


def _statuses(statuses: Iterable[int | None]) -> str:
    return ", ".join("timeout" if s is None else str(s) for s in statuses) or "nothing"


def _agent_call(records: list[Mapping[str, Any]]) -> str:
    """What the agent was asked and answered, as far as the records say."""
    for record in records:
        message = record.get("message")
        if message in (REPLY_SENT, REPLY_DRAFTED, REPLY_QUEUED):
            return "replied"
        if message == REPLY_SHADOWED:
            return "replied (shadow: recorded)"
        if message == AGENT_REJECTED:
            return f"rejected the burst: {record.get('detail', '')}"
        if message == SKIPPED and record.get("reason") in AGENT_SKIPS:
            detail = f": {record['detail']}" if record.get("detail") else ""
            return f"{AGENT_SKIPS[record['reason']]}{detail}"
        if message == SKIPPED:
            return f"not asked ({record.get('reason')})"
    failures = [r for r in records if r.get("message") == AGENT_FAILED]
    if failures:
        return f"raised {len(failures)} time(s): {raised_words(failures[-1])}"
    answered = [r for r in records if r.get("message") == AGENT_ANSWERED]
    if answered:
        return f"answered {answered[-1].get('outcome', '')}"
    return "-"


def _lease(records: list[Mapping[str, Any]]) -> str:
    """The thread lease: waited for (another worker held it), lost, or taken for the outcome.

    At INFO the lease shows in its effects (a reply or the agent's decision needs it, a busy thread
    defers the record); at DEBUG each ``TakeLease`` step is logged too.
    """
    waits = sum(1 for r in records if r.get("message") == DEFERRED and r.get("reason") == "thread_busy")
    lost = sum(1 for r in records if r.get("message") in LEASE_LOST)
    takes = sum(1 for r in records if r.get("message") == NEXT_STEP and r.get("step") == "TakeLease")
    decided = any(
        r.get("message") in (REPLY_SENT, REPLY_DRAFTED, REPLY_QUEUED)
        or (r.get("message") == SKIPPED and r.get("reason") in AGENT_SKIPS)
        for r in records
    )
    parts = []
    if waits:
        parts.append(f"waited {waits} time(s): the thread was busy")
    if lost:
        parts.append(f"lost {lost} time(s)")
    if decided or takes > waits:
        parts.append("taken")
    return ", ".join(parts) or "-"


def notification_ways(
    records: Iterable[Mapping[str, Any]],
    deliveries: Iterable[Any],
    mailbox: Iterable[tuple[float, Mapping[str, Any]]] = (),
) -> list[Json]:
    """Each notification's way through the stack, newest first.

    Parameters
    ----------
    records:
        The handlers' parsed log records (the local stack's :class:`devstack.stack.LogCollector`).
    deliveries:
        The webhook deliveries made (objects with ``notification_id``, ``status``, ``forged``, ``at``).
    mailbox:
        The emulator's messages: each way shows its message's sender, subject and first line.

    Returns
    -------
    list of dict
        ``notification_id``, ``type``, ``message_id``, ``thread_id``, ``deliveries`` (statuses, ``None``
        a timeout), ``forged``, ``queued``, ``duplicates_absorbed``, ``deferred`` (reasons), ``lease``,
        ``agent``, ``outcome`` (``kind`` and ``text``).
    """
    by_notification: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    order: dict[str, int] = {}
    for record in records:
        notification_id = str(record.get("notification_id") or "")
        if not notification_id or "message" not in record:
            continue
        order.setdefault(notification_id, len(order))
        by_notification[notification_id].append(record)
    statuses: dict[str, list[int | None]] = defaultdict(list)
    times: dict[str, list[tuple[float, int | None, bool]]] = defaultdict(list)
    forged: dict[str, bool] = {}
    for delivery in deliveries:
        order.setdefault(delivery.notification_id, len(order))
        statuses[delivery.notification_id].append(delivery.status)
        times[delivery.notification_id].append(
            (getattr(delivery, "at", 0.0), delivery.status, delivery.forged)
        )
        forged[delivery.notification_id] = forged.get(delivery.notification_id, False) or delivery.forged
    messages = {str(m.get("id")): m for _, m in mailbox}
    ways = []
    for notification_id in sorted(order, key=order.__getitem__, reverse=True):
        mine = by_notification.get(notification_id, [])
        ways.append(
            {
                "notification_id": notification_id,
                "type": _first(mine, "notification_type"),
                "message_id": _first(mine, "message_id"),
                "thread_id": _first(mine, "thread_id"),
                "deliveries": statuses.get(notification_id, []),
                "forged": forged.get(notification_id, False),
                "queued": sum(1 for r in mine if r.get("message") == QUEUED),
                "duplicates_absorbed": sum(1 for r in mine if r.get("message") == DUPLICATE_ABSORBED),
                "deferred": [str(r.get("reason")) for r in mine if r.get("message") == DEFERRED],
                "lease": _lease(mine),
                "agent": _agent_call(mine),
                "outcome": _outcome(
                    mine, statuses.get(notification_id, []), forged.get(notification_id, False)
                ),
                "timeline": timeline(mine, times.get(notification_id, [])),
                "message": _message_summary(messages.get(_first(mine, "message_id"))),
                "agent_failure": _agent_failure(mine),
            }
        )
    return ways


def _message_summary(message: Mapping[str, Any] | None) -> Json | None:
    """The notified message as a person recognises it: who wrote it, its subject, its first line."""
    if message is None:
        return None
    lines = [line for line in body_text(str(message.get("body") or "")).splitlines() if line.strip()]
    return {
        "from": ", ".join(str(p.get("email", "")) for p in message.get("from") or []),
        "subject": str(message.get("subject") or ""),
        "first_line": lines[0].strip() if lines else "",
    }


def _epoch(value: Any) -> float | None:
    """A log record's ``timestamp`` (Powertools' ``2026-12-06 08:48:18,250+0000`` or ISO 8601) in seconds."""
    text = str(value or "")
    for pattern in ("%Y-%m-%d %H:%M:%S,%f%z", "%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(text, pattern).timestamp()
        except ValueError:
            continue
    return None


def _clock(epoch: float) -> str:
    """``08:48:18.250`` (UTC, as the serve pane's times)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M:%S.%f")[:-3]


def _step(record: Mapping[str, Any]) -> str | None:
    """What one record says happened, in the words of the timeline (``None``: not a step of the way)."""
    message = str(record.get("message") or "")
    reason = record.get("reason")
    if message == QUEUED:
        return "queued by the webhook"
    if message == DEFERRED:
        receives = f", receive {record['receives']}" if record.get("receives") else ""
        return f"deferred: {reason}, back in {record.get('retry_in_seconds', '?')} s{receives}"
    if message == AGENT_FAILED:
        return f"agent raised {raised_words(dict(record))}"
    if message == AGENT_REJECTED:
        return f"agent rejected the burst: {record.get('detail', '')}"
    if message == NEXT_STEP and record.get("step") == "AskAgent":
        return "agent asked"
    if message == AGENT_ANSWERED:
        return f"agent answered {record.get('outcome', '')}"
    if message == DEAD_LETTERED:
        return f"dead-lettered by SQS: {record.get('detail', '')}"
    if message == NEXT_STEP:
        return None  # DEBUG: every step of the plan; the ones above are the way
    if message in (REPLY_SENT, REPLY_DRAFTED, REPLY_QUEUED, REPLY_SHADOWED, SKIPPED, DUPLICATE_ABSORBED):
        return _outcome([record])["text"] if message != DUPLICATE_ABSORBED else "duplicate delivery absorbed"
    return message + (f" ({reason})" if reason else "")


def timeline(
    records: Iterable[Mapping[str, Any]], deliveries: Iterable[tuple[float, int | None, bool]]
) -> list[Json]:
    """The notification's way in time order: each delivery and the webhook's answer, each log record's
    step (queued, deferred and why, the agent asked and answering or raising, the outcome), with its
    time and, for the agent's answer, how long it took from the question (records at DEBUG only)."""
    steps: list[tuple[float, int, str]] = []
    for order, (at, status, forged) in enumerate(deliveries):
        kind = "forged delivery" if forged else "delivered"
        steps.append((at, order, f"{kind}: the webhook answered {_statuses([status])}"))
    asked: float | None = None
    for order, record in enumerate(records, start=len(steps)):
        at = _epoch(record.get("timestamp"))
        words = _step(record)
        if at is None or words is None:
            continue
        if words == "agent asked":
            asked = at
        elif record.get("message") in (AGENT_ANSWERED, AGENT_FAILED) and asked is not None:
            words += f" after {at - asked:.3f} s"
            asked = None
        steps.append((at, order, words))
    return [{"at": _clock(at), "what": words} for at, _, words in sorted(steps)]


def _agent_failure(records: list[Mapping[str, Any]]) -> Json | None:
    """The agent's last exception: its words, where in the person's code it raised, the whole traceback."""
    failures = [r for r in records if r.get("message") == AGENT_FAILED]
    if not failures:
        return None
    last = failures[-1]
    frame = where_it_raised(str(last.get("traceback") or ""))
    return {
        "detail": str(last.get("detail") or ""),
        "where": frame.short() if frame else "",
        "code": frame.code if frame else "",
        "file": frame.path if frame else "",
        "traceback": str(last.get("traceback") or ""),
        "times": len(failures),
    }


def _first(records: list[Mapping[str, Any]], key: str) -> str:
    return str(next((r[key] for r in records if r.get(key)), ""))


def conversations(
    mailbox: Iterable[tuple[float, Mapping[str, Any]]],
    drafts: Iterable[Mapping[str, Any]],
    agent_emails: Iterable[str],
) -> list[Json]:
    """Each thread of the agents' mailboxes, most recently active first, its messages in arrival order.

    A message is ``agent`` (ReplyOnce's reply: from an agent's address, carrying its intent id),
    ``person`` (from the mailbox's own address without it: a person of the team answering from their
    mail client), ``customer`` (anyone else) or ``draft`` (a review draft nobody sent); bodies are
    whole, as text.
    """
    agents = {address.lower() for address in agent_emails}
    threads: dict[str, list[Json]] = defaultdict(list)
    last: dict[str, float] = {}
    for at, message in mailbox:
        sender = ", ".join(str(p.get("email", "")) for p in message.get("from") or [])
        threads[str(message.get("thread_id"))].append(
            {
                "id": message.get("id"),
                "role": role(sender, message, agents),
                "from": sender,
                "to": ", ".join(str(p.get("email", "")) for p in message.get("to") or []),
                "subject": str(message.get("subject") or ""),
                "body": body_text(str(message.get("body") or "")).strip(),
                "attachments": files_shown(message),
            }
        )
        last[str(message.get("thread_id"))] = at
    for draft in drafts:
        thread_id = str(draft.get("thread_id") or "")
        if thread_id not in threads:
            continue
        threads[thread_id].append(
            {
                "id": draft.get("id"),
                "role": "draft",
                "from": ", ".join(str(p.get("email", "")) for p in draft.get("from") or []),
                "to": ", ".join(str(p.get("email", "")) for p in draft.get("to") or []),
                "subject": str(draft.get("subject") or ""),
                "body": body_text(str(draft.get("body") or "")).strip(),
                "attachments": files_shown(draft),
            }
        )
    return [
        {"thread_id": thread_id, "messages": threads[thread_id]}
        for thread_id in sorted(threads, key=last.__getitem__, reverse=True)
    ]


def role(sender: str, message: Mapping[str, Any], agents: Iterable[str]) -> str:
    """``agent``, ``person`` or ``customer``: who wrote ``message`` (see :func:`conversations`)."""
    if sender.lower() not in set(agents):
        return "customer"
    # Only the API sets metadata, and every reply ReplyOnce makes carries its intent id in it.
    return "agent" if carries_intent_id(read_message(message)) else "person"


def invariant_status(
    violations: Mapping[int, list[str]], in_queue: int, not_judged: Mapping[int, str] = NEEDS_GROUND_TRUTH
) -> list[Json]:
    """Each invariant: ``holds``, ``violated`` (with its sentences), ``pending`` or ``not judged``.

    Parameters
    ----------
    violations:
        :func:`devstack.invariants.check`'s answer on what the stack saw so far.
    in_queue:
        Records visible or in flight: while some are, a notification without an outcome yet is on
        its way, not lost (invariant 5 says ``pending`` rather than a violation).
    not_judged:
        Invariants the console cannot decide here, with why.
    """
    rows = []
    for number, text in INVARIANTS.items():
        found = list(violations.get(number, []))
        if number in not_judged:
            rows.append(
                {"number": number, "text": text, "status": "not judged", "detail": [not_judged[number]]}
            )
            continue
        if number == 5 and in_queue:
            waiting = [v for v in found if "has no logged outcome" in v]
            found = [v for v in found if v not in waiting]
            if waiting and not found:
                rows.append(
                    {
                        "number": number,
                        "text": text,
                        "status": "pending",
                        "detail": [f"{in_queue} in the queue"],
                    }
                )
                continue
        rows.append(
            {"number": number, "text": text, "status": "violated" if found else "holds", "detail": found}
        )
    return rows


def live_truth(
    mailbox: Iterable[tuple[float, Mapping[str, Any]]], agent_emails: Iterable[str]
) -> dict[str, Truth]:
    """The ground truth a live mailbox allows: every message from elsewhere may be answered, at its sender.

    Why "may", not "must": the console cannot know whether a sender is a person (invariant 2 is
    left to the demo and the chaos run), but a reply may only ever go back to whoever wrote (or their
    Reply-To), never to an agent, and at most once (invariants 1, 3, 4).
    """
    agents = {address.lower() for address in agent_emails}
    truth = {}
    for _, message in mailbox:
        senders = [str(p.get("email", "")) for p in message.get("from") or []]
        if not senders or any(sender.lower() in agents for sender in senders):
            continue
        reply_to = [str(p.get("email", "")) for p in message.get("reply_to") or []]
        truth[str(message["id"])] = Truth.optional("mail in", *senders, *reply_to)
    return truth


def shadow_report(report: ShadowReport | None) -> Json:
    """The shadow report panel: ``REPLY_MODE=shadow``'s records as ``make shadow-report`` reports them.

    ``report`` is built by the layer's pure ``replyonce.rules.shadow_report.build_report`` from the state
    table's shadow records and the mailbox (``None``: no record yet). The page shows the same text
    the command prints, and the items as data.
    """
    if report is None or not report.items:
        return {"records": [], "summary": NO_SHADOW_RECORDS}
    return {"records": report.to_dict()["items"], "summary": render_text(report)}


# ---- the report console: shadow reports and replays side by side (devstack/report_console.py) ----

_COUNTS = ("replies", "answered", "declined", "handed_off", "rejected", "answered_by_person_too")


def report_totals(report: Mapping[str, Any]) -> Json:
    """One report's counts over all its periods (``PeriodSummary`` fields), skips merged by reason."""
    totals: Json = {name: 0 for name in _COUNTS}
    skipped: dict[str, int] = defaultdict(int)
    for period in report.get("periods") or []:
        for name in _COUNTS:
            totals[name] += int(period.get(name) or 0)
        for reason, count in (period.get("skipped") or {}).items():
            skipped[reason] += int(count)
    totals["skipped"] = dict(sorted(skipped.items()))
    return totals


def report_score(report: Mapping[str, Any]) -> Json:
    """One report's score (``ops.score``): its confusion table and rates, computed from its items, and the
    closeness its judge gave when it was made (the console runs no judge)."""
    scored = score_items(items_of(report)).to_dict()
    saved = report.get("score") if isinstance(report.get("score"), Mapping) else {}
    return {
        "table": scored["table"],
        "rates": scored["rates"],
        "judge": saved.get("judge", ""),
        "closeness_mean": saved.get("closeness_mean"),
    }


def compare_reports(named: Iterable[tuple[str, Mapping[str, Any]]]) -> Json:
    """Reports side by side: each one's totals, and per inbound message each report's decision.

    ``named`` is ``(name, report)`` pairs, the report as ``--json`` writes it (``make shadow-report``
    or ``make replay``). A message is every id a record covers (a burst's reply covers several); its
    row holds, per report, the outcome, reason and the agent's text (``None``: that report has no
    record of it), the customer's words and a person's answer from whichever report carries them,
    ``differs`` when the reports decided differently, and ``changed``: which of the decision's parts
    (``outcome``, ``reason``, ``text``) are not the same in every report — a reply reworded, or the same
    decline for another reason, is what a team reads before it deploys a new version of its agent.
    """
    reports = list(named)
    rows: dict[str, Json] = {}
    for index, (_, report) in enumerate(reports):
        for item in sorted(report.get("items") or [], key=lambda i: int(i.get("at") or 0)):
            for mid in item.get("covered") or [item.get("trigger_id")]:
                row = rows.setdefault(
                    mid,
                    {
                        "message_id": mid,
                        "thread_id": item.get("thread_id", ""),
                        "at": int(item.get("at") or 0),
                        "customer_text": "",
                        "person_text": "",
                        "decisions": [None] * len(reports),
                    },
                )
                row["decisions"][index] = {
                    "outcome": item.get("outcome", ""),
                    "reason": item.get("reason", ""),
                    "text": item.get("agent_text", ""),
                }
                row["person_text"] = row["person_text"] or item.get("person_text", "")
                row["customer_text"] = row["customer_text"] or item.get("customer_text", "")
    for row in rows.values():
        row["differs"] = len({(d or {}).get("outcome") for d in row["decisions"]}) > 1
        parts = ("outcome", "reason", "text")
        row["changed"] = [p for p in parts if len({(d or {}).get(p) for d in row["decisions"]}) > 1]
    return {
        "reports": [
            {
                "name": name,
                "agent": report.get("agent", ""),
                "threads": report.get("threads"),
                "stopped": report.get("stopped", ""),
                "totals": report_totals(report),
                "score": report_score(report),
            }
            for name, report in reports
        ],
        "messages": sorted(rows.values(), key=lambda r: (r["at"], r["message_id"])),
    }


# ---- each grant: its mode, its state and what became of its mail (make serve --grants N, issue 42) -----

# The replier's final words on a notification, by the console's column.
_REPLIED = (REPLY_SENT, REPLY_DRAFTED, REPLY_QUEUED, REPLY_SHADOWED)
# Mail from the mailbox itself (the agent's own replies come back as message.created): not received mail.
OWN_OUTBOUND = "own_outbound"
GRANT_COUNTS = ("received", "replied", "handed_off", "skipped", "deferred")


def grant_rows(grants: Sequence[Mapping[str, Any]], records: Iterable[Mapping[str, Any]]) -> list[Json]:
    """One row per grant: its id, address, mode and state as given, and its mail counted from the logs.

    ``grants``: ``grant_id``, ``address``, ``mode`` and ``state`` (enabled, paused, expired, deleted) of
    each grant, in the order shown. Which grant a notification is about is what the webhook logged when
    it queued it; what became of it, the replier's first final record naming it. Counted per
    notification of a message (never per copy: duplicates are one):

    - ``received``: the grant's message notifications, but the mailbox's own sends (``own_outbound``);
    - ``replied``: answered (sent, queued by Nylas, drafted for review, or recorded in shadow);
    - ``handed_off``: skipped with ``handed_off`` (moved to the hand-off folder for a person);
    - ``skipped``: any other skip with its reason (``skip_reasons``);
    - ``deferred``: not decided yet and deferred at least once (waiting: a paused grant's mail).
    """
    grant_of: dict[str, str] = {}
    decided: dict[str, Mapping[str, Any]] = {}
    deferred: dict[str, str] = {}
    for record in records:
        notification = str(record.get("notification_id") or "")
        if not notification:
            continue
        message = record.get("message")
        if message == QUEUED and str(record.get("notification_type", "")).startswith("message."):
            grant_of.setdefault(notification, str(record.get("grant_id") or ""))
        elif message in (*_REPLIED, SKIPPED):
            decided.setdefault(notification, record)
        elif message == DEFERRED:
            deferred[notification] = str(record.get("reason") or "")
    rows = []
    for grant in grants:
        counts = dict.fromkeys(GRANT_COUNTS, 0)
        reasons: dict[str, int] = defaultdict(int)
        waiting: dict[str, int] = defaultdict(int)
        for notification, grant_id in grant_of.items():
            if grant_id != grant["grant_id"]:
                continue
            outcome = decided.get(notification)
            if outcome is not None and outcome.get("reason") == OWN_OUTBOUND:
                continue
            counts["received"] += 1
            if outcome is None:
                if notification in deferred:
                    counts["deferred"] += 1
                    waiting[deferred[notification]] += 1
            elif outcome.get("message") in _REPLIED:
                counts["replied"] += 1
            elif outcome.get("handed_off"):
                counts["handed_off"] += 1
            else:
                counts["skipped"] += 1
                reasons[str(outcome.get("reason"))] += 1
        rows.append(
            {
                "grant_id": grant["grant_id"],
                "address": grant.get("address", ""),
                "mode": grant.get("mode", ""),
                "state": grant.get("state", ""),
                **counts,
                "skip_reasons": ", ".join(f"{reason} x{n}" for reason, n in sorted(reasons.items())),
                "deferred_reasons": ", ".join(f"{reason} x{n}" for reason, n in sorted(waiting.items())),
            }
        )
    return rows
