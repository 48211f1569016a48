"""A batch of queue records split by conversation thread.

Why: a record waits seconds on Nylas and the agent. Run one after another, a
batch's records wait for each other's waits, and the function's ``Timeout``
must hold them all. Run by thread, the threads of a batch go at once while a
thread's own records keep their queue order: the second of a burst is seen
after the first (its reply covers it, or it gets its own), never beside it.
The thread lease would serialise them anyway, but only by making one wait.

The key is what the lease is taken on: the grant and the thread. A record the
consumer cannot read (not JSON, not a notification, a task it does not know)
is a group of its own, so its failure touches nothing else; a notification of
a type the replier skips goes with its message when it names one.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from replyonce.adapters.queue import ATTR_TASK, reconcile_task
from replyonce.exceptions import InvalidNotificationError
from replyonce.jobs import GrantChanged, MessageArrived, ReconcileDue, SendReported
from replyonce.rules.notification import Notification

Record = Mapping[str, Any]


def thread_of(record: Record) -> tuple[str, ...]:
    """The conversation a raw SQS record belongs to: ``("thread", grant, thread)`` when it names one.

    ``("message", grant, message)`` for a message without a thread id, and
    ``("record", message_id)`` (the SQS ``messageId``) for a record that names
    neither: it shares its group with nothing.
    """
    alone = ("record", str(record.get("messageId", "")))
    body = record.get("body") or ""
    try:
        job: MessageArrived | SendReported | ReconcileDue | GrantChanged | None
        if ATTR_TASK in (record.get("messageAttributes") or {}):
            job = reconcile_task(body)
        else:
            job = Notification.parse(body).job()
    except InvalidNotificationError:
        return alone
    if job is None or not job.grant_id:
        return alone
    if isinstance(job, GrantChanged):
        # A grant's lifecycle notifications of one batch run one after the other, in queue order.
        return ("grant", job.grant_id)
    if job.thread_id:
        return ("thread", job.grant_id, job.thread_id)
    if isinstance(job, MessageArrived) and job.message_id:
        return ("message", job.grant_id, job.message_id)
    return alone


def thread_groups(records: Sequence[Record]) -> list[list[Record]]:
    """The records grouped by :func:`thread_of`: groups in order of first appearance, queue order inside."""
    groups: dict[tuple[str, ...], list[Record]] = {}
    for record in records:
        groups.setdefault(thread_of(record), []).append(record)
    return list(groups.values())
