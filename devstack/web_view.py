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
from collections.abc import Iterable, Mapping
from typing import Any

from devstack.console import body_text, files_shown
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
from replyonce.shadow_report import ShadowReport, render_text

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


def _outcome(records: list[Mapping[str, Any]]) -> Json:
    """The notification's final word: send, draft, queued send, shadow or skip, with its reason."""
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
    if any(r.get("message") == DUPLICATE_ABSORBED for r in records):
        return {"kind": "duplicate", "text": "every delivery was a duplicate of one already handled"}
    return {"kind": "pending", "text": "no outcome yet (queued or retrying)"}


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
        return f"failed {len(failures)} time(s): {failures[-1].get('detail', '')}"
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


def notification_ways(records: Iterable[Mapping[str, Any]], deliveries: Iterable[Any]) -> list[Json]:
    """Each notification's way through the stack, newest first.

    Parameters
    ----------
    records:
        The handlers' parsed log records (the local stack's :class:`devstack.stack.LogCollector`).
    deliveries:
        The webhook deliveries made (objects with ``notification_id``, ``status``, ``forged``).

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
    forged: dict[str, bool] = {}
    for delivery in deliveries:
        order.setdefault(delivery.notification_id, len(order))
        statuses[delivery.notification_id].append(delivery.status)
        forged[delivery.notification_id] = forged.get(delivery.notification_id, False) or delivery.forged
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
                "outcome": _outcome(mine),
            }
        )
    return ways


def _first(records: list[Mapping[str, Any]], key: str) -> str:
    return str(next((r[key] for r in records if r.get(key)), ""))


def conversations(
    mailbox: Iterable[tuple[float, Mapping[str, Any]]],
    drafts: Iterable[Mapping[str, Any]],
    agent_emails: Iterable[str],
) -> list[Json]:
    """Each thread of the agents' mailboxes, most recently active first, its messages in arrival order.

    A message is ``customer`` (anyone else), ``agent`` (from an agent's address) or ``draft`` (a
    review draft nobody sent); bodies are whole, as text.
    """
    agents = {address.lower() for address in agent_emails}
    threads: dict[str, list[Json]] = defaultdict(list)
    last: dict[str, float] = {}
    for at, message in mailbox:
        sender = ", ".join(str(p.get("email", "")) for p in message.get("from") or [])
        threads[str(message.get("thread_id"))].append(
            {
                "id": message.get("id"),
                "role": "agent" if sender.lower() in agents else "customer",
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

    ``report`` is built by the layer's pure ``replyonce.shadow_report.build_report`` from the state
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
    record of it), a person's answer from whichever report matched one, and ``differs`` when the
    reports decided differently — what a team reads before it deploys a new version of its agent.
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
    for row in rows.values():
        row["differs"] = len({(d or {}).get("outcome") for d in row["decisions"]}) > 1
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
