"""The shadow report: what the agent would have done, per period, beside what a person did.

Shadow mode (``REPLY_MODE=shadow``) and the replay of history (``python -m ops replay``) both leave
:class:`~replyonce.state.ShadowRecord` s; this module turns them, and the threads as Nylas lists them
now, into plain data (:func:`build_report`), and that data into text (:func:`render_text`). Pure: no
I/O, no clock, so a web page (the console) and the operator command show the same figures, and the
rules are table-driven tests (``tests/unit/test_shadow_report.py``).

Why the person's answer is matched here, from the thread read at report time, and not recorded by the
replier when it next sees the thread: a person's reply fires a notification the replier skips before
any lease (``own_outbound``: it never reads the thread for it), and a thread nobody writes in again is
never seen again; the thread as Nylas lists it when the report is made holds every answer a person
sent since, for live shadow mode and for a replay alike.
"""

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from replyonce.ports import Message
from replyonce.rules.plan import from_a_person, message_id
from replyonce.rules.text import new_text
from replyonce.state import ShadowOutcome, ShadowRecord

DAY_SECONDS = 24 * 3600


@dataclass(frozen=True)
class ShadowItem:
    """One record as the report shows it: the agent's decision and, when there is one, a person's answer.

    ``person_message_id`` is the first message a person of the mailbox wrote in the thread after the
    record's trigger (in the listing's order), ``""`` when none did; ``person_text`` its new words;
    ``customer_text`` the new words of the messages the record covers, oldest first (what a judge of
    the agent's reply reads beside the person's: ``ops.judge``).
    """

    grant_id: str
    thread_id: str
    trigger_id: str
    covered: tuple[str, ...]
    at: int
    outcome: str
    reason: str
    agent_text: str
    person_message_id: str = ""
    person_text: str = ""
    customer_text: str = ""


def customer_text(record: ShadowRecord, thread: Sequence[Message]) -> str:
    """The new words of the messages ``record`` covers that the listing holds, oldest first."""
    covered = set(record.covered)
    asked = [m for m in reversed(thread) if message_id(m) in covered]
    return "\n\n".join(new_text(m.body or "", m.subject) for m in asked)


@dataclass(frozen=True)
class PeriodSummary:
    """Counts of one period (``[start, end)``, Nylas time), each of inbound messages, not of records.

    ``answered``: messages a reply of the agent would have covered (``replies``: the replies);
    ``declined``, ``handed_off``, ``rejected``: messages of bursts the agent did not answer;
    ``skipped``: messages a rule skipped, by skip reason; ``answered_by_person_too``: of the
    ``answered``, those a person answered as well (their thread's person answer came after them).
    """

    start: int
    end: int
    replies: int = 0
    answered: int = 0
    declined: int = 0
    handed_off: int = 0
    rejected: int = 0
    skipped: Mapping[str, int] = field(default_factory=dict)
    answered_by_person_too: int = 0


@dataclass(frozen=True)
class ShadowReport:
    """The whole report: its window, its periods (oldest first) and its items (oldest first)."""

    since: int | None
    until: int | None
    period_seconds: int
    periods: tuple[PeriodSummary, ...]
    items: tuple[ShadowItem, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (``--json``; the console's page)."""
        return asdict(self)


def person_answer(
    record: ShadowRecord,
    thread: Sequence[Message],
    own_addresses: Iterable[str],
    sent_folders: Collection[str] = (),
) -> Message | None:
    """The first message a person of the mailbox wrote in the thread after the record's trigger
    (``replyonce.rules.plan.from_a_person``: in the grant's Sent folder, ``sent_folders``, and not ours).

    ``thread`` is in the listing's order, newest first, as Nylas lists it: "after" is that order,
    never the sender's ``date`` (``replyonce.rules.plan`` reads it the same way). A trigger the listing no
    longer holds (deleted, or beyond the page read) matches no answer rather than a guessed one.
    """
    own = frozenset(own_addresses)
    position = next((i for i, m in enumerate(thread) if message_id(m) == record.trigger_id), None)
    if position is None:
        return None
    later = [m for m in thread[:position] if from_a_person(m, own, sent_folders)]
    return later[-1] if later else None


def build_report(
    records: Iterable[ShadowRecord],
    threads: Mapping[str, Sequence[Message]],
    own_addresses: Iterable[str],
    *,
    since: int | None = None,
    until: int | None = None,
    period_seconds: int = DAY_SECONDS,
    sent_folders: Collection[str] = (),
) -> ShadowReport:
    """The report of ``records`` in ``[since, until)`` (by each record's Nylas time), per period.

    Parameters
    ----------
    records:
        Shadow records (of the state table, or of a replay).
    threads:
        Thread id → its messages as Nylas lists them now (newest first), for the person's answers; a
        thread missing here matches no answer.
    own_addresses:
        The agent grants' addresses: a message from one without ReplyOnce's metadata is a person's.
    since, until:
        The window (``None``: open).
    period_seconds:
        The length of a period (a day by default), aligned on multiples of it (UTC midnight for a day).

    Each inbound message counts once: a message a burst's record covers is counted there, not among
    the skips a record of its own may have said earlier (a message first skipped, then answered with
    a later one); a message two bursts' records cover is counted in the earlier one (every record
    is still an item).
    """
    if period_seconds < 1:
        raise ValueError(f"period_seconds must be at least 1, got {period_seconds}")
    own = frozenset(own_addresses)
    chosen = sorted(
        (r for r in records if (since is None or r.at >= since) and (until is None or r.at < until)),
        key=lambda r: (r.at, r.record_id),
    )
    in_bursts = {m for r in chosen if r.outcome is not ShadowOutcome.SKIPPED for m in r.covered}
    counted: set[str] = set()
    items: list[ShadowItem] = []
    periods: dict[int, dict[str, Any]] = {}
    for record in chosen:
        if record.outcome is ShadowOutcome.SKIPPED and set(record.covered) <= in_bursts:
            continue
        thread = threads.get(record.thread_id, ())
        answer = person_answer(record, thread, own, sent_folders)
        item = ShadowItem(
            grant_id=record.grant_id,
            thread_id=record.thread_id,
            trigger_id=record.trigger_id,
            covered=record.covered,
            at=record.at,
            outcome=record.outcome.value,
            reason=record.reason,
            agent_text=record.text,
            person_message_id=message_id(answer) if answer is not None else "",
            person_text=new_text(answer.body or "", answer.subject) if answer is not None else "",
            customer_text=customer_text(record, thread),
        )
        items.append(item)
        # A message two bursts' records cover (the replier never writes that; a table restored from
        # before a settlement, two deployments' records merged, could) is counted in the first only.
        fresh = [m for m in dict.fromkeys(record.covered) if m not in counted]
        counted.update(fresh)
        if not fresh:
            continue
        start = record.at - record.at % period_seconds
        counts = periods.setdefault(start, {"skipped": {}})
        messages = len(fresh)
        match record.outcome:
            case ShadowOutcome.REPLY:
                counts["replies"] = counts.get("replies", 0) + 1
                counts["answered"] = counts.get("answered", 0) + messages
                if answer is not None:
                    counts["answered_by_person_too"] = counts.get("answered_by_person_too", 0) + messages
            case ShadowOutcome.SKIPPED:
                counts["skipped"][record.reason] = counts["skipped"].get(record.reason, 0) + messages
            case _:
                counts[record.outcome.value] = counts.get(record.outcome.value, 0) + messages
    summaries = tuple(
        PeriodSummary(
            start=start,
            end=start + period_seconds,
            **{k: v for k, v in counts.items() if k != "skipped"},
            skipped=dict(sorted(counts["skipped"].items())),
        )
        for start, counts in sorted(periods.items())
    )
    return ShadowReport(since, until, period_seconds, summaries, tuple(items))


def _when(epoch: int | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _excerpt(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def render_text(report: ShadowReport, *, text_width: int = 100) -> str:
    """The report as an operator reads it on a terminal: a block per period, then each record.

    The same text for the same report, line for line: two reports (two agents replayed over the same
    week) compare with ``diff``.
    """
    lines = [f"shadow report  {_when(report.since)} .. {_when(report.until)}  ({len(report.items)} records)"]
    if not report.periods:
        lines.append("  nothing recorded in this window")
    for period in report.periods:
        lines.append(f"period {_when(period.start)} .. {_when(period.end)}")
        lines.append(
            f"  would answer  {period.answered} message(s) in {period.replies} reply(ies); "
            f"a person answered {period.answered_by_person_too} of them too"
        )
        lines.append(
            f"  declined {period.declined}  handed off {period.handed_off}  rejected {period.rejected}"
        )
        skipped = ", ".join(f"{reason} {n}" for reason, n in period.skipped.items()) or "none"
        lines.append(f"  skipped       {skipped}")
    for item in report.items:
        why = f" ({item.reason})" if item.reason else ""
        lines.append(
            f"{_when(item.at)}  thread {item.thread_id}  message {item.trigger_id}  {item.outcome}{why}"
        )
        if item.agent_text:
            lines.append(f"    agent:  {_excerpt(item.agent_text, text_width)}")
        if item.person_message_id:
            lines.append(f"    person: {_excerpt(item.person_text, text_width)}  [{item.person_message_id}]")
    return "\n".join(lines)


__all__ = ["PeriodSummary", "ShadowItem", "ShadowReport", "build_report", "person_answer", "render_text"]
