"""``shadow-report``: what shadow mode recorded in a window, beside what the mailbox's people sent.

Read-only: the shadow records come from the state table (their layout is
``replyonce.adapters.state_items``'), the
threads from Nylas (``GET``), and the report is built by the layer's pure function
(``replyonce.rules.shadow_report.build_report``), the same for the replay (``ops.replay``).
"""

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ops.errors import NylasApiError
from replyonce.mail import read_messages
from replyonce.rules.shadow_report import DAY_SECONDS, ShadowReport, build_report
from replyonce.state import ShadowRecord

THREAD_LIMIT = 200
# What Nylas answers for a grant it will not read: expired (401), its scopes gone (403), deleted (404).
GRANT_REFUSED = frozenset({401, 403, 404})


def report_from_records(
    records: Iterable[ShadowRecord],
    inbox: Any,
    agent_grant_ids: Sequence[str],
    *,
    since: int | None,
    until: int | None,
    period_seconds: int = DAY_SECONDS,
    say: Callable[[str], None] = lambda line: None,
) -> ShadowReport:
    """The report of ``records`` in the window, each thread read once from Nylas for a person's answer.

    ``inbox`` is ``ops.nylas_admin.NylasAdmin`` (``thread_messages``, ``grant_email``): the threads as
    Nylas lists them now, newest first. A grant Nylas refuses to read (expired, deleted: ``401``, ``403``,
    ``404``) keeps its records in the report without their threads, and ``say`` names it: one grant gone
    must not hide every other grant's evidence. Any other failure of Nylas stops the report
    (:class:`ops.errors.NylasApiError`).
    """
    chosen = [
        r
        for r in records
        if r.grant_id in agent_grant_ids
        and (since is None or r.at >= since)
        and (until is None or r.at < until)
    ]
    own: list[str] = []
    sent: frozenset[str] = frozenset()
    refused: dict[str, NylasApiError] = {}
    for grant_id in agent_grant_ids:
        try:
            own.append(inbox.grant_email(grant_id))
            sent |= inbox.sent_folder_ids(grant_id)
        except NylasApiError as error:
            if error.status not in GRANT_REFUSED:
                raise
            refused[grant_id] = error
    threads = {}
    for grant_id, thread_id in dict.fromkeys((r.grant_id, r.thread_id) for r in chosen if r.thread_id):
        if grant_id not in refused:
            threads[thread_id] = read_messages(inbox.thread_messages(grant_id, thread_id, limit=THREAD_LIMIT))
    for grant_id, error in refused.items():
        held = sum(1 for r in chosen if r.grant_id == grant_id)
        say(
            f"grant {grant_id}: Nylas refused to read it ({error}): expired or deleted; its {held} record(s) "
            "are counted without their threads, so a person's answer there is not seen"
        )
    return build_report(
        chosen, threads, own, since=since, until=until, period_seconds=period_seconds, sent_folders=sent
    )


def write_json(report: ShadowReport, path: Path, extra: dict[str, Any] | None = None) -> None:
    """The report as JSON (``--json FILE``): sorted keys, so two reports compare with ``diff``."""
    document = {**report.to_dict(), **(extra or {})}
    path.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
