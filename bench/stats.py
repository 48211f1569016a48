"""Small statistics helpers: percentiles of one round, min/median/max over rounds."""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` percentile (0..1) by the nearest-rank method.

    Why nearest-rank: a reported p99 is then a latency that really happened,
    not an interpolation between two samples.
    """
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def p(values: Sequence[float], fraction: float) -> float:
    """:func:`percentile`, or NaN when nothing was measured (a table shows "-")."""
    return percentile(values, fraction) if values else float("nan")


@dataclass(frozen=True)
class Spread:
    """Min, median and max of one quantity over repeated rounds."""

    low: float
    median: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> "Spread":
        if not values:
            raise ValueError("no values")
        return cls(min(values), statistics.median(values), max(values))

    def render(self, digits: int = 1) -> str:
        """``median (min..max)``: the median leads because ratios and costs use it."""
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}..{self.high:.{digits}f})"


def ratio(numerator: Spread, denominator: Spread) -> float:
    """Ratio of medians: each median is already robust to one noisy round."""
    return numerator.median / denominator.median
