"""What people did with the agent's drafts (``REPLY_MODE=review``): sent as written, edited, deleted, open.

In review mode every reply is a Nylas draft a person of the mailbox reads and sends; what they then do
with it is the best evidence there is of when the agent may send alone. ``make review-report`` follows
each ReplyOnce draft (its metadata carries the intent id, ``key1``, and ``replyonce_review``) to its
end, from the mailbox, read-only:

``sent_unchanged``
    the draft left Drafts and the message sent in its place has the same words (case, spacing and
    punctuation aside; a client's quoted history is not counted: ``replyonce.rules.text.new_text``);
``sent_edited``
    it was sent with other words: :func:`normalised_edit_distance` says how much (0 the same, 1 nothing
    kept);
``deleted``
    it left Drafts and nothing was sent from the mailbox in its thread since;
``open``
    it is still a draft ``--open-hours`` after it was made (``pending`` before that: not counted).

The sent message is the thread's message carrying the draft's intent id (the provider kept the
metadata: ``matched_by`` ``metadata``), else the first message a person of the mailbox sent in the
thread after the draft was made (``thread``: providers are not documented to keep a sent draft's
metadata). A draft a person deleted before writing an answer of their own reads as ``sent_edited``
with a large distance: the mailbox cannot tell the two apart once the metadata is gone.

Why a file (``--drafts-file``): the text the agent drafted is nowhere once the draft is sent (the
replier keeps its request only until it settles; the Sent copy holds what the person sent). The report
records each draft's text the first time it lists it, in that file, and compares later; run it at
least as often as people act on drafts (a draft edited before the report first saw it is measured
from its edited text: the distance is then a lower bound). A decided draft is never read again.

Bounded: per grant one drafts listing (pages of 200) and, for each draft that left Drafts since the
last run, one read of its thread (plus the grant and its folders once); at most ``--max-reads`` in all,
the rest followed on the next run. Every read is counted and shown.

Per category: the agent contract (``replyonce.agent.Reply``) carries no category, so there is none.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ops.errors import ConfigurationError
from ops.judge import words
from ops.score import wilson_interval
from replyonce.mail import read_messages
from replyonce.rules.coverage import INTENT_KEY, is_reviewed_draft, metadata_of
from replyonce.rules.plan import from_a_person, message_id
from replyonce.rules.text import new_text

FATES = ("sent_unchanged", "sent_edited", "deleted", "open")
"""The decided fates, the rates' denominator; ``pending`` (too early to tell) is shown, not counted."""
PENDING = "pending"
DRAFTS_PAGE_LIMIT = 200
MAX_DRAFT_PAGES = 10
THREAD_LIMIT = 50
CLOCK_SLACK_SECONDS = 60
"""A message dated up to this much before the draft was made still counts as sent after it (clocks)."""


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two word sequences (insert, delete, substitute a word: 1 each)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def normalised_edit_distance(drafted: str, sent: str) -> float:
    """The word-level Levenshtein distance over the longer text's words: 0 the same words, 1 none kept.

    Words, not characters: a person who rewrites a sentence changes its words, and a fixed typo is one
    edit rather than one per letter; dividing by the longer text keeps it in [0, 1] whatever the lengths.
    """
    a, b = words(drafted), words(sent)
    if not a and not b:
        return 0.0
    return edit_distance(a, b) / max(len(a), len(b))


@dataclass(frozen=True)
class TrackedDraft:
    """One draft of ours as the file remembers it, and its fate once decided (``fate`` ``""``: followed)."""

    grant_id: str
    draft_id: str
    intent_id: str
    thread_id: str
    drafted_text: str
    created_at: int
    first_seen: int
    fate: str = ""
    distance: float | None = None
    sent_message_id: str = ""
    sent_text: str = ""
    matched_by: str = ""


def seen_draft(grant_id: str, draft: Mapping[str, Any], now: int) -> TrackedDraft:
    """A listed draft of ours as first seen: its text, and when it was made (its ``date``, else now)."""
    created = draft.date if draft.date > 0 else now
    return TrackedDraft(
        grant_id=grant_id,
        draft_id=message_id(draft),
        intent_id=str(metadata_of(draft).get(INTENT_KEY) or ""),
        thread_id=draft.thread_id,
        drafted_text=new_text(draft.body or "", draft.subject),
        created_at=min(created, now),
        first_seen=now,
    )


def fate_after_drafts(
    tracked: TrackedDraft,
    thread: Sequence[Mapping[str, Any]],
    own: Iterable[str],
    sent_folders: Iterable[str],
) -> TrackedDraft:
    """The fate of a draft that left Drafts, from its thread as listed now (newest first)."""
    by_metadata = [m for m in thread if metadata_of(m).get(INTENT_KEY) == tracked.intent_id]
    own_set, sent = frozenset(own), frozenset(sent_folders)
    since = tracked.created_at - CLOCK_SLACK_SECONDS
    by_thread = [
        m
        for m in thread
        if from_a_person(m, own_set, sent) and m.date >= since and message_id(m) != tracked.draft_id
    ]
    if by_metadata:
        sent_message, how = by_metadata[-1], "metadata"
    elif by_thread:
        sent_message, how = by_thread[-1], "thread"  # the oldest after the draft: the listing is newest first
    else:
        return replace(tracked, fate="deleted")
    text = new_text(sent_message.body or "", sent_message.subject)
    distance = normalised_edit_distance(tracked.drafted_text, text)
    return replace(
        tracked,
        fate="sent_unchanged" if distance == 0 else "sent_edited",
        distance=distance,
        sent_message_id=message_id(sent_message),
        sent_text=text,
        matched_by=how,
    )


def status_of(tracked: TrackedDraft, listed: bool, now: int, open_after_seconds: int) -> str:
    """A draft's status now: its decided fate, or ``open`` / ``pending`` while it is still listed."""
    if tracked.fate:
        return tracked.fate
    if listed:
        return "open" if now - tracked.created_at >= open_after_seconds else PENDING
    return ""  # left Drafts, not yet followed (the read budget ran out)


@dataclass(frozen=True)
class FateRate:
    fate: str
    count: int
    total: int
    value: float | None
    low: float
    high: float


@dataclass(frozen=True)
class GrantReview:
    """One grant's drafts: how many ended each way, the rates over the decided ones, the most edited."""

    grant_id: str
    counts: Mapping[str, int]
    rates: tuple[FateRate, ...]
    most_edited: tuple[TrackedDraft, ...]
    mean_distance_sent: float | None


@dataclass(frozen=True)
class ReviewReport:
    grants: tuple[GrantReview, ...]
    reads: int
    not_followed: int
    open_after_seconds: int
    categories: str = "none: the agent contract (replyonce.agent.Reply) reports no category"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise(
    statuses: Mapping[str, Sequence[tuple[TrackedDraft, str]]],
    *,
    reads: int,
    open_after_seconds: int,
    most_edited: int = 5,
) -> ReviewReport:
    """Per grant: each status counted, the decided fates' rates (95 % Wilson intervals), the most edited."""
    grants = []
    not_followed = 0
    for grant_id, entries in sorted(statuses.items()):
        counts = dict.fromkeys((*FATES, PENDING), 0)
        for _, status in entries:
            if status:
                counts[status] += 1
            else:
                not_followed += 1
        total = sum(counts[f] for f in FATES)
        rates = []
        for fate in FATES:
            low, high = wilson_interval(counts[fate], total)
            rates.append(
                FateRate(fate, counts[fate], total, counts[fate] / total if total else None, low, high)
            )
        sent = [t for t, s in entries if s in ("sent_unchanged", "sent_edited")]
        edited = sorted(
            (t for t, s in entries if s == "sent_edited"), key=lambda t: (-(t.distance or 0), t.draft_id)
        )
        mean = sum(t.distance or 0.0 for t in sent) / len(sent) if sent else None
        grants.append(GrantReview(grant_id, counts, tuple(rates), tuple(edited[:most_edited]), mean))
    return ReviewReport(tuple(grants), reads, not_followed, open_after_seconds)


def _excerpt(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def render_review(report: ReviewReport) -> str:
    """The report as an operator reads it: per grant the fates, their rates, the most edited drafts."""
    hours = report.open_after_seconds / 3600
    lines = [
        f"review report  ({report.reads} read(s) of the mailbox; open means still a draft after {hours:g} h)"
    ]
    for grant in report.grants:
        counts = grant.counts
        lines.append(
            f"grant {grant.grant_id}  sent unchanged {counts['sent_unchanged']}  "
            f"sent edited {counts['sent_edited']}  deleted {counts['deleted']}  open {counts['open']}  "
            f"(pending {counts[PENDING]})"
        )
        for rate in grant.rates:
            value = "  -  " if rate.value is None else f"{rate.value * 100:5.1f}%"
            lines.append(
                f"  {rate.fate:15} {value}  {rate.count}/{rate.total}  "
                f"95% [{rate.low * 100:.1f}%, {rate.high * 100:.1f}%]"
            )
        if grant.mean_distance_sent is not None:
            lines.append(f"  mean edit distance of the sent drafts {grant.mean_distance_sent:.3f}")
        for tracked in grant.most_edited:
            lines.append(
                f"  edited {tracked.distance:.3f}  draft {tracked.draft_id} (thread {tracked.thread_id}, "
                f"matched by {tracked.matched_by})"
            )
            lines.append(f"    drafted: {_excerpt(tracked.drafted_text)}")
            lines.append(f"    sent:    {_excerpt(tracked.sent_text)}")
    if report.not_followed:
        lines.append(
            f"{report.not_followed} draft(s) left Drafts and are not followed yet (--max-reads): next run"
        )
    lines.append(f"per category: {report.categories}")
    return "\n".join(lines)


# ---- the shell: the drafts file and the mailbox's reads --------------------------------------------


def load_tracked(path: Path) -> dict[str, TrackedDraft]:
    """The drafts file (none yet: empty), by ``grant_id/draft_id``.

    Raises
    ------
    ConfigurationError
        A file that is not one this command wrote.
    """
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigurationError(f"{path}: not a drafts file ({error})") from None
    try:
        drafts = [TrackedDraft(**d) for d in document["drafts"]]
    except (TypeError, KeyError) as error:
        raise ConfigurationError(f"{path}: not a drafts file of make review-report ({error})") from None
    return {f"{d.grant_id}/{d.draft_id}": d for d in drafts}


def save_tracked(tracked: Mapping[str, TrackedDraft], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"drafts": [asdict(d) for _, d in sorted(tracked.items())]}
    path.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


@dataclass
class Reads:
    """Every request the report makes of the mailbox, counted against its bound."""

    limit: int
    made: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def take(self, kind: str) -> bool:
        if self.made >= self.limit:
            return False
        self.made += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        return True


def follow_drafts(
    mailbox: Any,
    grant_ids: Sequence[str],
    tracked: dict[str, TrackedDraft],
    *,
    now: int,
    open_after_seconds: int,
    max_reads: int,
) -> tuple[dict[str, list[tuple[TrackedDraft, str]]], Reads]:
    """Follow every draft of ours in ``grant_ids`` one step; ``tracked`` is updated in place.

    ``mailbox`` is ``ops.nylas_admin.NylasAdmin`` (``drafts_page``, ``thread_messages``, ``grant_email``,
    ``sent_folder_ids``): ``GET`` only.
    """
    reads = Reads(max_reads)
    statuses: dict[str, list[tuple[TrackedDraft, str]]] = {}
    for grant_id in grant_ids:
        listed: set[str] = set()
        token: str | None = None
        for _ in range(MAX_DRAFT_PAGES):
            if not reads.take("drafts"):
                break
            page, token = mailbox.drafts_page(grant_id, DRAFTS_PAGE_LIMIT, token)
            for draft in read_messages(page):
                if not is_reviewed_draft(draft):
                    continue  # a person's own draft
                key = f"{grant_id}/{message_id(draft)}"
                listed.add(key)
                tracked.setdefault(key, seen_draft(grant_id, draft, now))
            if not token:
                break
        else:
            raise ConfigurationError(
                f"the drafts listing of {grant_id} did not end in {MAX_DRAFT_PAGES} pages"
            )
        if token:
            # The listing was cut by the read bound: a draft not listed may still be there. Decide nothing.
            statuses[grant_id] = [(t, "") for k, t in tracked.items() if t.grant_id == grant_id]
            continue
        gone = [k for k, t in tracked.items() if t.grant_id == grant_id and not t.fate and k not in listed]
        own: list[str] = []
        sent: frozenset[str] = frozenset()
        if gone and reads.limit - reads.made >= 3:
            reads.take("grant")
            own = [mailbox.grant_email(grant_id)]
            reads.take("folders")
            sent = mailbox.sent_folder_ids(grant_id)
            for key in gone:
                if not reads.take("thread"):
                    break
                draft = tracked[key]
                thread = read_messages(mailbox.thread_messages(grant_id, draft.thread_id, limit=THREAD_LIMIT))
                tracked[key] = fate_after_drafts(draft, thread, own, sent)
        statuses[grant_id] = [
            (t, status_of(t, k in listed, now, open_after_seconds))
            for k, t in sorted(tracked.items())
            if t.grant_id == grant_id
        ]
    return statuses, reads
