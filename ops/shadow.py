"""``shadow-report``: what shadow mode recorded in a window, beside what the mailbox's people sent.

Read-only: the shadow records come from the state table (their layout is
``replyonce.adapters.state_items``'), the
threads from Nylas (``GET``), and the report is built by the layer's pure function
(``replyonce.rules.shadow_report.build_report``), the same for the replay (``ops.replay``).
"""

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from replyonce.mail import read_messages
from replyonce.rules.shadow_report import DAY_SECONDS, ShadowReport, build_report
from replyonce.state import ShadowRecord

THREAD_LIMIT = 200


def report_from_records(
    records: Iterable[ShadowRecord],
    inbox: Any,
    agent_grant_ids: Sequence[str],
    *,
    since: int | None,
    until: int | None,
    period_seconds: int = DAY_SECONDS,
) -> ShadowReport:
    """The report of ``records`` in the window, each thread read once from Nylas for a person's answer.

    ``inbox`` is ``ops.nylas_admin.NylasAdmin`` (``thread_messages``, ``grant_email``): the threads as
    Nylas lists them now, newest first.
    """
    chosen = [
        r
        for r in records
        if r.grant_id in agent_grant_ids
        and (since is None or r.at >= since)
        and (until is None or r.at < until)
    ]
    own = [inbox.grant_email(g) for g in agent_grant_ids]
    sent = frozenset().union(*(inbox.sent_folder_ids(g) for g in agent_grant_ids))
    threads = {}
    for grant_id, thread_id in dict.fromkeys((r.grant_id, r.thread_id) for r in chosen if r.thread_id):
        threads[thread_id] = read_messages(inbox.thread_messages(grant_id, thread_id, limit=THREAD_LIMIT))
    return build_report(
        chosen, threads, own, since=since, until=until, period_seconds=period_seconds, sent_folders=sent
    )


def write_json(report: ShadowReport, path: Path, extra: dict[str, Any] | None = None) -> None:
    """The report as JSON (``--json FILE``): sorted keys, so two reports compare with ``diff``."""
    document = {**report.to_dict(), **(extra or {})}
    path.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
