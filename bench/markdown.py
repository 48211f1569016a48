"""Markdown helpers shared by the report's sections."""

import math
from collections.abc import Sequence


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def usd(value: float) -> str:
    """Dollars: cents, or four decimals below ten cents; from the 4 decimals a JSON block keeps."""
    if math.isnan(value):
        return "-"
    return f"${round(value, 4):,.2f}" if value >= 0.1 else f"${value:,.4f}"


def in_seconds(value: float) -> str:
    """Seconds with two decimals ("-" where nothing was measured)."""
    return "-" if math.isnan(value) else f"{value:.2f}"
