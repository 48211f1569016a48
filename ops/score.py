"""The score of a replay or a shadow report: what the agent decided against what the team did.

A report's items (``replyonce.rules.shadow_report.ShadowItem``, or the ``items`` of its ``--json``) say, per
decision, what the agent would have done and whether a person of the mailbox answered the message
afterwards. This module turns them into what a team needs to decide whether an agent is good enough,
or better than the last version:

- a confusion table, decision x what the team did: the agent ``answer`` ed, ``decline`` d, ``hand_off``
  ed (a hand-off or a refusal for good: both leave the message to a person), or a rule ``skipped`` it
  before the agent; a person of the mailbox answered the message after it arrived, or nobody did;
- three rates, each with its count and a 95 % Wilson interval (a week of mail is a small sample):
  ``answered_when_answered`` (would have answered what people answered: higher is better),
  ``answered_when_left_alone`` (would have answered what people left alone: lower is better),
  ``handed_off_when_answered`` (handed off what people answered: lower is better);
- where both answered, how close the agent's reply came to the person's, through a judge
  (``ops.judge``).

One row per decision, not per inbound message: a burst of three messages is one decision of the agent
and one answer of a person (the report's periods count its messages). A message a rule skipped is in
the table but in no rate's denominator: the rates are of the agent's decisions, which two agents
replayed over the same mail are compared on (the rules are the stack's, the same for both).

What the team did is only "answered" or "not": a person's hand-on (a forward to a colleague) reads as
an answer when it is a message of the mailbox in the thread, and nothing else is visible in a report.
Per category: the agent contract (``replyonce.agent.Reply``) carries no category today, so there is
none to split by.

Pure: no I/O, no clock; the judge is passed in. Table-driven tests: ``tests/unit/test_score.py``.
"""

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

DECISIONS = ("answer", "decline", "hand_off", "skipped")
"""The confusion table's rows: what the agent (or a rule before it) decided."""
TEAM = ("person_answered", "nobody_answered")
"""Its columns: what the mailbox's people did."""

_DECISION_OF_OUTCOME = {
    "reply": "answer",
    "declined": "decline",
    "handed_off": "hand_off",
    # AgentRejected: the replier hands the message to a person as it does a Handoff (its folder, the
    # HandedOff metric), so for the team it is a hand-off.
    "rejected": "hand_off",
    "skipped": "skipped",
}

Z_95 = 1.959963984540054
"""The standard normal quantile of 0.975: a two-sided 95 % interval."""


@dataclass(frozen=True)
class RateSpec:
    """One rate: ``numerator`` decisions among the ``denominator`` column, and which way is better."""

    name: str
    decision: str
    team: str
    higher_is_better: bool
    meaning: str


RATES: tuple[RateSpec, ...] = (
    RateSpec(
        "answered_when_answered",
        "answer",
        "person_answered",
        True,
        "would have answered what people answered",
    ),
    RateSpec(
        "answered_when_left_alone",
        "answer",
        "nobody_answered",
        False,
        "would have answered what people left alone",
    ),
    RateSpec(
        "handed_off_when_answered",
        "hand_off",
        "person_answered",
        False,
        "handed off what people answered",
    ),
)
RATE_NAMES = tuple(r.name for r in RATES)


def rate_spec(name: str) -> RateSpec:
    """The rate called ``name``.

    Raises
    ------
    KeyError
        No rate has that name.
    """
    for spec in RATES:
        if spec.name == name:
            return spec
    raise KeyError(name)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``successes`` of ``trials``).

    E. B. Wilson, "Probable inference, the law of succession, and statistical inference", Journal of
    the American Statistical Association 22 (158), 1927, pp. 209-212; recommended over the usual
    ``p ± z·sqrt(p(1-p)/n)`` for small ``n`` and rates near 0 or 1 by L. D. Brown, T. T. Cai and
    A. DasGupta, "Interval Estimation for a Binomial Proportion", Statistical Science 16 (2), 2001.
    With ``p = successes / trials``::

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) · sqrt(p(1-p)/n + z²/4n²)

    Why Wilson: 3 of 3 gives ``[0.44, 1]`` rather than the usual formula's ``[1, 1]``, which a team would
    read as certainty. No trials: ``(0, 1)``, nothing is known.
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Rate:
    """A rate as measured: ``count`` of ``total``, its value (``None`` without data) and 95 % interval."""

    name: str
    count: int
    total: int
    value: float | None
    low: float
    high: float
    higher_is_better: bool
    meaning: str


@dataclass(frozen=True)
class Judgement:
    """What a judge says of an agent's reply beside a person's: ``score`` in [0, 1] and why."""

    score: float
    reason: str


Judge = Callable[[str, str, str], Any]
"""``judge(agent_text, person_text, customer_text)`` → :class:`Judgement` (or ``(score, reason)``)."""


class JudgeError(ValueError):
    """A judge answered something that is not a score in [0, 1] with a reason."""


def judged(answer: Any) -> Judgement:
    """A judge's answer as a :class:`Judgement`, checked.

    Raises
    ------
    JudgeError
        Not a :class:`Judgement` or a ``(score, reason)`` pair, or a score outside [0, 1] (or NaN).
    """
    if isinstance(answer, Judgement):
        score, reason = answer.score, answer.reason
    elif isinstance(answer, tuple) and len(answer) == 2:
        score, reason = answer
    else:
        raise JudgeError(f"a judge returns a Judgement or (score, reason), not {answer!r:.80}")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0.0 <= float(score) <= 1.0:
        raise JudgeError(f"a judge's score is a number in [0, 1], not {score!r:.80}")
    return Judgement(float(score), str(reason))


@dataclass(frozen=True)
class Closeness:
    """One decision both answered: the judge's score of the agent's reply against the person's."""

    trigger_id: str
    thread_id: str
    score: float
    reason: str


@dataclass(frozen=True)
class Score:
    """The score of one report's items."""

    decisions: int
    table: Mapping[str, Mapping[str, int]]
    rates: tuple[Rate, ...]
    judge: str = ""
    closeness: tuple[Closeness, ...] = ()
    closeness_mean: float | None = None
    categories: str = "none: the agent contract (replyonce.agent.Reply) reports no category"
    cost: Mapping[str, Any] = field(default_factory=dict)

    def rate(self, name: str) -> Rate:
        return next(r for r in self.rates if r.name == name)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data: the report's ``score`` (``--json``)."""
        return asdict(self)


def decision_of(item: Mapping[str, Any]) -> str:
    """The table row of a report item (its ``outcome``); an outcome of a newer version is a skip."""
    return _DECISION_OF_OUTCOME.get(str(item.get("outcome") or ""), "skipped")


def team_of(item: Mapping[str, Any]) -> str:
    """The table column of a report item: a person of the mailbox answered it after it arrived, or not."""
    return "person_answered" if item.get("person_message_id") else "nobody_answered"


def _as_mapping(item: Any) -> Mapping[str, Any]:
    return item if isinstance(item, Mapping) else asdict(item)


def confusion_table(items: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Decision x team: how many of ``items`` fall in each cell (every cell present, zeros too)."""
    table = {d: dict.fromkeys(TEAM, 0) for d in DECISIONS}
    for item in items:
        table[decision_of(item)][team_of(item)] += 1
    return table


def rates_of(table: Mapping[str, Mapping[str, int]]) -> tuple[Rate, ...]:
    """Each rate of :data:`RATES` from a confusion table, with its Wilson interval."""
    rates = []
    for spec in RATES:
        total = sum(table[d][spec.team] for d in DECISIONS if d != "skipped")
        count = table[spec.decision][spec.team]
        low, high = wilson_interval(count, total)
        rates.append(
            Rate(
                spec.name,
                count,
                total,
                count / total if total else None,
                low,
                high,
                spec.higher_is_better,
                spec.meaning,
            )
        )
    return tuple(rates)


def score_items(
    items: Iterable[Any],
    judge: Judge | None = None,
    *,
    judge_name: str = "",
    cost: Callable[[], Mapping[str, Any]] | None = None,
) -> Score:
    """The score of a report's items (``ShadowItem`` s or their JSON).

    Parameters
    ----------
    judge:
        Asked once per decision both answered (agent reply and a person's answer), with the agent's
        text, the person's and the customer's; ``None``: no closeness.
    judge_name:
        How the report names the judge (``ops.judge:rouge_l``).
    cost:
        Called after the judging: what the judge spent (the Bedrock judge's tokens and dollars).

    Raises
    ------
    JudgeError
        The judge answered something that is not a score in [0, 1] with a reason.
    """
    chosen = [_as_mapping(i) for i in items]
    table = confusion_table(chosen)
    closeness: list[Closeness] = []
    if judge is not None:
        for item in chosen:
            if decision_of(item) == "answer" and team_of(item) == "person_answered":
                verdict = judged(
                    judge(
                        str(item.get("agent_text") or ""),
                        str(item.get("person_text") or ""),
                        str(item.get("customer_text") or ""),
                    )
                )
                closeness.append(
                    Closeness(
                        str(item.get("trigger_id") or ""),
                        str(item.get("thread_id") or ""),
                        verdict.score,
                        verdict.reason,
                    )
                )
    mean = sum(c.score for c in closeness) / len(closeness) if closeness else None
    return Score(
        decisions=len(chosen),
        table=table,
        rates=rates_of(table),
        judge=judge_name if judge is not None else "",
        closeness=tuple(closeness),
        closeness_mean=mean,
        cost=dict(cost()) if cost is not None else {},
    )


def _percent(value: float | None) -> str:
    return "  -  " if value is None else f"{value * 100:5.1f}%"


def render_score(score: Score, *, worst: int = 5) -> str:
    """The score as an operator reads it: the table, the rates with their intervals, the closeness."""
    width = max(len(d) for d in DECISIONS)
    lines = [
        f"score  {score.decisions} decision(s)",
        f"  {'':{width}}  {'person answered':>15}  {'nobody answered':>15}",
    ]
    for decision in DECISIONS:
        row = score.table[decision]
        lines.append(f"  {decision:{width}}  {row['person_answered']:>15}  {row['nobody_answered']:>15}")
    for rate in score.rates:
        better = "higher" if rate.higher_is_better else "lower"
        lines.append(
            f"  {rate.name:26} {_percent(rate.value)}  {rate.count}/{rate.total}  "
            f"95% [{rate.low * 100:.1f}%, {rate.high * 100:.1f}%]  ({rate.meaning}; {better} is better)"
        )
    if score.judge:
        mean = "-" if score.closeness_mean is None else f"{score.closeness_mean:.3f}"
        lines.append(f"  closeness ({score.judge})  mean {mean} over {len(score.closeness)} both answered")
        for close in sorted(score.closeness, key=lambda c: (c.score, c.trigger_id))[:worst]:
            lines.append(f"    {close.score:.3f}  message {close.trigger_id}  {close.reason}")
    if score.cost:
        lines.append("  judge cost  " + ", ".join(f"{k} {v}" for k, v in score.cost.items()))
    lines.append(f"  per category: {score.categories}")
    return "\n".join(lines)


def items_of(report: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """A report's items as its ``--json`` holds them (``[]`` when it has none)."""
    items = report.get("items")
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list | tuple) else []


__all__ = [
    "DECISIONS",
    "RATES",
    "RATE_NAMES",
    "TEAM",
    "Closeness",
    "Judge",
    "JudgeError",
    "Judgement",
    "Rate",
    "RateSpec",
    "Score",
    "confusion_table",
    "decision_of",
    "items_of",
    "judged",
    "rate_spec",
    "rates_of",
    "render_score",
    "score_items",
    "team_of",
    "wilson_interval",
]
