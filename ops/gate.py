"""The gate: is a candidate agent worse than the baseline, by the numbers the team set?

``make replay ARGS="... --baseline before.json"`` (or ``make shadow-report``, or ``make gate`` on two
saved reports) compares the candidate's score (``ops.score``) with the baseline's, rate by rate, and
exits 1 when one of them is worse than the baseline by more than ``--max-drop`` (rate points: 0.05 is
five points), or past an absolute bound: ``--floor`` for a rate where higher is better (at least),
``--ceiling`` for one where lower is better (at most); 0 otherwise. It prints every check and every
message whose decision changed, with the reasons the two reports give.

Decided by the numbers, never by a model alone: the rates count decisions; the closeness of replies
(a judge's) is checked only when the team sets ``--max-drop closeness=...`` and both reports used the
same judge. Pure: reports in, a :class:`Verdict` out (``tests/unit/test_gate.py``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ops.errors import ConfigurationError
from ops.json_files import read_json
from ops.score import RATE_NAMES, decision_of, items_of, rate_spec, score_items, team_of

DEFAULT_MAX_DROP = 0.05
"""Five rate points: a team that sets nothing fails a candidate that loses more than that on any rate."""
CLOSENESS = "closeness"


@dataclass(frozen=True)
class Thresholds:
    """What the team allows: per rate the largest worsening, and absolute bounds on the bad side."""

    max_drop: Mapping[str, float]
    floors: Mapping[str, float]
    ceilings: Mapping[str, float]
    closeness_drop: float | None = None


def _pair(raw: str, flag: str) -> tuple[str, float]:
    name, equals, value = raw.partition("=")
    if not equals:
        raise ConfigurationError(f"{flag} {raw!r}: expected RATE=VALUE")
    try:
        number = float(value)
    except ValueError:
        raise ConfigurationError(f"{flag} {raw!r}: {value!r} is not a number") from None
    if not 0.0 <= number <= 1.0:
        raise ConfigurationError(f"{flag} {raw!r}: a rate is between 0 and 1")
    return name.strip(), number


def parse_thresholds(
    max_drop: Sequence[str] = (), floors: Sequence[str] = (), ceilings: Sequence[str] = ()
) -> Thresholds:
    """``--max-drop [RATE=]X`` (a bare X for every rate), ``--floor RATE=X``, ``--ceiling RATE=X``.

    Raises
    ------
    ConfigurationError
        An unknown rate, a value outside [0, 1], a floor on a rate where lower is better (or a ceiling
        where higher is): one line naming the flag.
    """
    drops = dict.fromkeys(RATE_NAMES, DEFAULT_MAX_DROP)
    closeness: float | None = None
    for raw in max_drop:
        if "=" not in raw:
            _, value = _pair(f"all={raw}", "--max-drop")
            drops = dict.fromkeys(RATE_NAMES, value)
            continue
        name, value = _pair(raw, "--max-drop")
        if name == CLOSENESS:
            closeness = value
        elif name in drops:
            drops[name] = value
        else:
            raise ConfigurationError(
                f"--max-drop {raw!r}: no rate {name!r} ({', '.join(RATE_NAMES)}, closeness)"
            )
    bounds: dict[str, dict[str, float]] = {"--floor": {}, "--ceiling": {}}
    for flag, raws in (("--floor", floors), ("--ceiling", ceilings)):
        for raw in raws:
            name, value = _pair(raw, flag)
            try:
                spec = rate_spec(name)
            except KeyError:
                raise ConfigurationError(
                    f"{flag} {raw!r}: no rate {name!r} ({', '.join(RATE_NAMES)})"
                ) from None
            if (flag == "--floor") != spec.higher_is_better:
                other = "--ceiling" if flag == "--floor" else "--floor"
                better = "higher" if spec.higher_is_better else "lower"
                raise ConfigurationError(
                    f"{flag} {raw!r}: {better} is better for {name}; bound it with {other}"
                )
            bounds[flag][name] = value
    return Thresholds(drops, bounds["--floor"], bounds["--ceiling"], closeness)


@dataclass(frozen=True)
class Change:
    """A message the two reports decided differently (or only one of them decided)."""

    message_id: str
    thread_id: str
    before: str
    after: str
    person_answered: bool


@dataclass(frozen=True)
class Verdict:
    """The gate's answer: every check made (``ok`` or not), the failures, the changed messages."""

    checks: tuple[tuple[bool, str], ...]
    changes: tuple[Change, ...]

    @property
    def failures(self) -> tuple[str, ...]:
        return tuple(line for ok, line in self.checks if not ok)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def _decisions(report: Mapping[str, Any]) -> dict[str, tuple[str, str, bool]]:
    """Message id → (thread, "decision (reason)", a person answered it), each message in its first item."""
    found: dict[str, tuple[str, str, bool]] = {}
    for item in sorted(items_of(report), key=lambda i: int(i.get("at") or 0)):
        why = f" ({item['reason']})" if item.get("reason") else ""
        said = f"{decision_of(item)}{why}"
        for mid in item.get("covered") or [item.get("trigger_id")]:
            found.setdefault(
                str(mid), (str(item.get("thread_id") or ""), said, team_of(item) == "person_answered")
            )
    return found


def changed_decisions(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[Change]:
    """Every message whose decision (or its reason) differs, in message order; ``-``: not in that report."""
    before, after = _decisions(baseline), _decisions(candidate)
    changes = []
    for mid in dict.fromkeys([*before, *after]):
        old, new = before.get(mid), after.get(mid)
        if old is not None and new is not None and old[1] == new[1]:
            continue
        thread = (old or new)[0]  # type: ignore[index]
        answered = bool((old and old[2]) or (new and new[2]))
        changes.append(Change(mid, thread, old[1] if old else "-", new[1] if new else "-", answered))
    return changes


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def gate(baseline: Mapping[str, Any], candidate: Mapping[str, Any], thresholds: Thresholds) -> Verdict:
    """Compare ``candidate`` with ``baseline`` (reports as ``--json`` writes them) under ``thresholds``."""
    old = score_items(items_of(baseline))
    new = score_items(items_of(candidate))
    checks: list[tuple[bool, str]] = []
    for name in RATE_NAMES:
        was, now = old.rate(name), new.rate(name)
        allowed = thresholds.max_drop[name]
        if was.value is None or now.value is None:
            checks.append((True, f"{name}: not compared (no decision in its column in one report)"))
        else:
            worse = was.value - now.value if now.higher_is_better else now.value - was.value
            line = (
                f"{name}: {_percent(was.value)} ({was.count}/{was.total}) -> {_percent(now.value)} "
                f"({now.count}/{now.total}), worse by {_percent(max(0.0, worse))}, "
                f"allowed {_percent(allowed)}"
            )
            checks.append((worse <= allowed + 1e-12, line))
        for bound, value, ok in (
            ("floor", thresholds.floors.get(name), lambda v, b: v >= b),
            ("ceiling", thresholds.ceilings.get(name), lambda v, b: v <= b),
        ):
            if value is None:
                continue
            if now.value is None:
                checks.append((False, f"{name}: no decision to hold to its {bound} {_percent(value)}"))
            else:
                checks.append(
                    (
                        ok(now.value, value),
                        f"{name}: {_percent(now.value)} against its {bound} {_percent(value)}",
                    )
                )
    if thresholds.closeness_drop is not None:
        checks.append(_closeness_check(baseline, candidate, thresholds.closeness_drop))
    return Verdict(tuple(checks), tuple(changed_decisions(baseline, candidate)))


def _closeness_check(
    baseline: Mapping[str, Any], candidate: Mapping[str, Any], allowed: float
) -> tuple[bool, str]:
    was = baseline.get("score") or {}
    now = candidate.get("score") or {}
    if not was.get("judge") or was.get("judge") != now.get("judge"):
        return (
            False,
            f"closeness: not comparable (judges {was.get('judge') or '-'} and {now.get('judge') or '-'})",
        )
    before, after = was.get("closeness_mean"), now.get("closeness_mean")
    if before is None or after is None:
        return (True, "closeness: not compared (no message both answered in one report)")
    worse = float(before) - float(after)
    return (
        worse <= allowed + 1e-12,
        f"closeness ({now['judge']}): {before:.3f} -> {after:.3f}, worse by {max(0.0, worse):.3f}, "
        f"allowed {allowed:.3f}",
    )


def render_verdict(verdict: Verdict, *, baseline: str = "baseline") -> str:
    """The gate as a CI log shows it: each check, the messages that changed, then the verdict."""
    lines = [f"gate against {baseline}"]
    lines.extend(f"  {'ok  ' if ok else 'FAIL'}  {line}" for ok, line in verdict.checks)
    if verdict.changes:
        lines.append(f"  {len(verdict.changes)} message(s) decided differently:")
        for change in verdict.changes:
            who = "a person answered it" if change.person_answered else "nobody answered it"
            lines.append(
                f"    message {change.message_id} (thread {change.thread_id}): "
                f"{change.before} -> {change.after}; {who}"
            )
    else:
        lines.append("  no message decided differently")
    lines.append("gate: pass" if verdict.passed else f"gate: FAIL ({len(verdict.failures)} check(s))")
    return "\n".join(lines)


def load_report(path: Path) -> dict[str, Any]:
    """A report ``--json`` wrote.

    Raises
    ------
    ConfigurationError
        Missing, not JSON, or not a report (no items): one line naming the file.
    """
    document = read_json(path, "report", f'make replay ARGS="... --json {path}"')
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise ConfigurationError(f"{path}: not a shadow report or a replay (it has no items)")
    return document
