"""``thread-state``: one thread's lease, reply history and ledger entries, for support questions.

Read-only. The keys and the item layout come from the layer (``replyonce.state``), so this view
cannot drift from what the replier writes. With
``--nylas`` the thread's newest messages are listed too, each with its ledger status: the answer to
"did the agent reply to this customer, and if not, why?".
"""

import datetime
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from replyonce.adapters.state_items import (
    body_refs,
    ledger_entry_of,
    message_key,
    thread_state_of,
    with_requests,
)
from replyonce.adapters.store import read_request_bodies
from replyonce.state import REPLY_BUDGET_WINDOW_SECONDS, LedgerEntry, thread_key

_BATCH_GET_LIMIT = 100


# One ``message#...`` item: what the replier did about that message.
LedgerRecord = LedgerEntry


@dataclass(frozen=True)
class ThreadMessage:
    """One message of the thread as Nylas lists it, with its ledger status (``""``: none)."""

    id: str
    date: int
    sender: str
    folders: tuple[str, ...]
    ledger_status: str


@dataclass(frozen=True)
class ThreadReport:
    """The thread item, the ledger entries found, and (optionally) the thread's messages."""

    grant_id: str
    thread_id: str
    found: bool
    lease_owner: str = ""
    lease_expires_at_ms: int = 0
    lease_held: bool = False
    reply_times: tuple[int, ...] = ()
    last_reply_at: int = 0
    answered: tuple[str, ...] = ()
    # The replies stored before their first attempt and not yet settled (in flight, queued or stuck).
    outbox: tuple[dict[str, Any], ...] = ()
    ledger: tuple[LedgerRecord, ...] = ()
    messages: tuple[ThreadMessage, ...] | None = None
    read_at: float = field(default=0.0)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def read_ledger(dynamodb: Any, table: str, grant_id: str, message_ids: Iterable[str]) -> list[LedgerRecord]:
    """The ledger entries of ``message_ids`` that exist, in the order asked."""
    wanted = list(dict.fromkeys(message_ids))
    items: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), _BATCH_GET_LIMIT):
        keys = [{"pk": {"S": message_key(grant_id, m)}} for m in wanted[start : start + _BATCH_GET_LIMIT]]
        request: dict[str, Any] = {table: {"Keys": keys, "ConsistentRead": True}}
        while request:
            response = dynamodb.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(table, []):
                items[item["pk"]["S"]] = item
            request = response.get("UnprocessedKeys") or {}
    return [
        ledger_entry_of(m, items[message_key(grant_id, m)])
        for m in wanted
        if message_key(grant_id, m) in items
    ]


def read_thread_state(
    dynamodb: Any,
    table: str,
    grant_id: str,
    thread_id: str,
    *,
    message_ids: Iterable[str] = (),
    thread_messages: list[dict[str, Any]] | None = None,
    clock: Callable[[], float] = time.time,
) -> ThreadReport:
    """Read the thread item and the ledger entries of its answered (and any named) messages.

    Parameters
    ----------
    dynamodb:
        A boto3 DynamoDB client.
    table:
        ``STATE_TABLE`` (stack output ``StateTableName``).
    message_ids:
        More messages to look up in the ledger (e.g. the one a customer asks about).
    thread_messages:
        The thread's messages from Nylas (``--nylas``), newest first; each is looked up too.
    """
    now = clock()
    item = (
        dynamodb.get_item(
            TableName=table, Key={"pk": {"S": thread_key(grant_id, thread_id)}}, ConsistentRead=True
        ).get("Item")
        or {}
    )
    # A large reply's request is in body items: read (never renewed) so its intent can be shown.
    state = thread_state_of(with_requests(item, read_request_bodies(dynamodb, table, body_refs(item))))
    answered = tuple(sorted(state.covered, key=lambda m: state.covered[m]))
    listed = [str(m.get("id", "")) for m in thread_messages or []]
    ledger = read_ledger(dynamodb, table, grant_id, [*answered, *message_ids, *listed])
    expires_ms = state.lease_expires_at_ms
    messages = None
    if thread_messages is not None:
        status = {record.message_id: record.status for record in ledger}
        messages = tuple(
            ThreadMessage(
                id=str(m.get("id", "")),
                date=int(m.get("date") or 0),
                sender=", ".join(str(p.get("email", "")) for p in m.get("from") or []),
                folders=tuple(str(f) for f in m.get("folders") or []),
                ledger_status=status.get(str(m.get("id", "")), ""),
            )
            for m in thread_messages
        )
    return ThreadReport(
        grant_id=grant_id,
        thread_id=thread_id,
        found=bool(item),
        lease_owner=state.lease_owner,
        lease_expires_at_ms=expires_ms,
        # The replier's own rule: a lease is held while lease_expires_at is in the future.
        lease_held=bool(state.lease_owner) and expires_ms > now * 1000,
        reply_times=tuple(sorted(state.replies.values())),
        last_reply_at=max(state.replies.values(), default=0),
        answered=answered,
        outbox=tuple(
            {
                "intent_id": intent.id,
                "replying_to": intent.target_id,
                "covered": list(intent.covered),
                "kind": intent.kind.value,
                "state": intent.state.value,
                "generation": intent.generation,
                "attempts": intent.attempts,
                "stored_at": intent.created_at,
            }
            for intent in state.outbox.values()
        ),
        ledger=tuple(ledger),
        messages=messages,
        read_at=now,
    )


def format_epoch(epoch_seconds: float) -> str:
    """UTC time of an epoch-seconds value, ``-`` for zero (never set)."""
    if not epoch_seconds:
        return "-"
    return datetime.datetime.fromtimestamp(epoch_seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def render(report: ThreadReport) -> str:
    """The report as text for a terminal."""
    lines = [f"thread {report.thread_id} of grant {report.grant_id}"]
    if not report.found:
        lines.append("  no state item: the replier has never taken a lease or replied on this thread")
    else:
        if report.lease_held:
            until = report.lease_expires_at_ms / 1000
            lease = (
                f"HELD by {report.lease_owner} until {format_epoch(until)} ({until - report.read_at:.0f} s)"
            )
        elif report.lease_owner:
            lease = f"free (last holder's lease expired {format_epoch(report.lease_expires_at_ms / 1000)})"
        else:
            lease = "free"
        window_start = report.read_at - REPLY_BUDGET_WINDOW_SECONDS
        lines += [
            f"  lease:         {lease}",
            f"  last reply:    {format_epoch(report.last_reply_at)}",
            f"  replies (1 h): {sum(1 for t in report.reply_times if t >= window_start)}"
            f"  [{', '.join(format_epoch(t) for t in report.reply_times) or 'none recorded'}]",
            f"  answered:      {', '.join(report.answered) or 'none'}",
        ]
        for intent in report.outbox:
            waiting = (
                "Nylas queued it (202); message.delivered, message.send_failed or the reconcile settles it"
                if intent["state"] == "queued"
                else "the next notification on the thread sends it, or finds it in the mailbox"
            )
            lines.append(
                f"  outbox:        {intent['kind']} replying to {intent['replying_to']} not yet settled "
                f"(intent {intent['intent_id']}, key generation {intent['generation']}, "
                f"{intent['attempts']} attempt(s), stored {format_epoch(intent['stored_at'])}): {waiting}"
            )
    lines.append("ledger:")
    if not report.ledger:
        lines.append("  no entries")
    for record in report.ledger:
        if record.status == "replied":
            detail = f"reply {record.reply_message_id or '?'} (answering {record.replied_to or '?'})"
        else:
            detail = record.reason or "-"
        lines.append(
            f"  {record.message_id}  {record.status:<8} {detail}  at {format_epoch(record.recorded_at)}"
        )
    if report.messages is not None:
        lines.append("messages (Nylas, newest first):")
        for message in report.messages:
            folders = ",".join(message.folders)
            lines.append(
                f"  {message.id}  {format_epoch(message.date)}  from {message.sender}  [{folders}]  "
                f"ledger: {message.ledger_status or 'none'}"
            )
    return "\n".join(lines)
