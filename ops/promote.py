"""``make promote``: a grant one step up shadow → review → send, on the strength of its own evidence.

Each step shows the grant's evidence for the mode it leaves before it is taken: leaving shadow, its
shadow report (``ops.shadow.report_from_records``, the ``shadow-report`` command's figures, for this
grant alone, since it entered shadow); leaving review, its review report (``ops.review_report``, the
``review-report`` command's, for this grant). The change itself is ``make grants set --mode``'s
(``ops.grants.apply_change``): checked with the replier's reader, written with who made it and a change
item (action ``promote``), conditioned on the record as read, and ``--dry-run`` writes nothing.

The step is decided before anything is read from Nylas (:func:`next_mode`, a table): one step up, never
a skip (shadow straight to send would answer customers with drafts nobody ever read) and never down,
unless ``--force``; a grant without evidence for its mode (no shadow record, no review draft decided)
is refused too unless ``--force``: a report of nothing is no reason to go on.
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from ops.errors import ConfigurationError
from replyonce.adapters.grant_registry import Change

LADDER: tuple[str, ...] = ("shadow", "review", "send")
"""The modes in the order a grant is promoted through them."""

DEFAULT_SINCE_SECONDS = 7 * 86_400
"""The shadow report's window when the registry does not say when the grant entered shadow (a grant
that is in shadow by the stack's parameter): the last week."""


CLOCK_SKEW_SECONDS = 60
"""How much earlier than its change item says the shadow report of a grant starts: the change is dated by
the operator's clock, the shadow records by Nylas' time."""


def next_mode(current: str, to: str | None, *, force: bool = False) -> str:
    """The mode the grant is promoted to from ``current`` (``to``: asked for; ``None``: the next step).

    Raises
    ------
    ConfigurationError
        Already sending (no step left), already in ``to``, a skip of a step, or a step down, unless
        ``force`` (a skip or a step down, said so): nothing is read or written.
    """
    if current not in LADDER or (to is not None and to not in LADDER):
        raise ConfigurationError(f"reply modes are {', '.join(LADDER)}; got {current!r} -> {to!r}")
    step = LADDER.index(current)
    if to is None:
        if step + 1 == len(LADDER):
            raise ConfigurationError("the grant already sends: there is no step up from send")
        return LADDER[step + 1]
    if to == current:
        raise ConfigurationError(f"the grant is already in {current}: nothing to promote")
    if force:
        return to
    if LADDER.index(to) < step:
        raise ConfigurationError(
            f"{current} -> {to} is a step down: `make grants set --mode {to}` (or promote --force)"
        )
    if LADDER.index(to) > step + 1:
        raise ConfigurationError(
            f"{current} -> {to} skips {LADDER[step + 1]}: one step at a time, each on its own evidence "
            "(--force to skip)"
        )
    return to


def entered_at(changes: Sequence[Change], mode: str) -> int | None:
    """When the grant last entered ``mode`` (epoch seconds, :data:`CLOCK_SKEW_SECONDS` early), from its
    change items (newest first): the newest change whose record has that mode and whose record before did
    not; ``None``: none says."""
    for change in changes:
        after = _mode_of(change.after)
        if after == mode and _mode_of(change.before) != mode:
            at = _epoch(change.at)
            if at is not None:
                return at - CLOCK_SKEW_SECONDS
    return None


def _epoch(at: str) -> int | None:
    """A change item's time (``make grants`` writes microseconds; a record written by hand may not)."""
    for layout in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return int(datetime.strptime(at, layout).replace(tzinfo=UTC).timestamp())
        except ValueError:
            continue
    return None


def _mode_of(record: object) -> str | None:
    return record.get("reply_mode") if isinstance(record, Mapping) else None


def evidence_lines(leaving: str, grant_id: str, evidence_count: int, window: str) -> list[str]:
    """The heading the grant's report is printed under, and what an empty one means."""
    what = "shadow report" if leaving == "shadow" else "review report"
    lines = [f"grant {grant_id}: its {what} ({window}), the evidence for leaving {leaving}:"]
    if evidence_count == 0 and leaving == "shadow":
        lines.append(f"  no evidence: no shadow record of this grant ({window})")
    elif evidence_count == 0:
        lines.append("  no evidence: no draft of this grant decided yet (sent, edited, deleted or left open)")
    return lines
