"""The checker of held-out bodies against independent labels (``scripts/measure_new_text.py``, issue 41).

A label names the lines of a body that are the customer's new text (``scripts/labels/``); the checker
compares the reader's output with them alone, never with the reader's own rules. A table: each row a
body, its label and an output, and the three verdicts (exact, history passed as new, words dropped).
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import measure_new_text as m

BODY = (
    "Hi, my order 1042 has not arrived yet.\n"
    "Thanks, Ana\n"
    "\n"
    "On Mon, 3 Dec 2026, Support <help@shop.example> wrote:\n"
    "> Your order 1042 left our warehouse today.\n"
    "> Kind regards from the shop"
)
NEW = {"new": [[1, 2]], "partial": [], "confidence": "high"}
UNSURE = m._UNSURE

ROWS = [
    # The reader's cut where the label's: exact, nothing else.
    (
        "the cut where the label's",
        BODY,
        NEW,
        "Hi, my order 1042 has not arrived yet.\nThanks, Ana",
        (True, False, False),
    ),
    # The quoted history handed over as new: history as new, and not exact.
    ("history above the marker", BODY, NEW, BODY, (False, True, False)),
    # The history behind the unsure marker: not exact (the output is more than the new text), but
    # neither error: what is behind the marker is not handed over as the customer's.
    (
        "history behind the marker",
        BODY,
        NEW,
        "Hi, my order 1042 has not arrived yet.\nThanks, Ana\n"
        + UNSURE
        + "\n"
        + "\n".join(BODY.splitlines()[3:]),
        (False, False, False),
    ),
    # The sign-off cut as if a signature: the customer's words dropped.
    ("sign-off dropped", BODY, NEW, "Hi, my order 1042 has not arrived yet.", (False, False, True)),
    # Empty output for a body with new words: dropped.
    ("nothing", BODY, NEW, "", (False, False, True)),
    # A label naming part of a line (lost line breaks): only that part is the new text.
    (
        "part of a line",
        "Please call me.On Mon, Support <help@shop.example> wrote:\n> Old words of the shop here",
        {"new": [], "partial": [{"line": 1, "start": 0, "end": 15}], "confidence": "medium"},
        "Please call me.",
        (True, False, False),
    ),
    # A line the new text holds again further down (a greeting quoted back) is no history when kept.
    (
        "a quoted line the new text also holds",
        "Thanks for the quick reply\n\n> Thanks for the quick reply\n> old words here too",
        {"new": [[1, 1]], "partial": [], "confidence": "high"},
        "Thanks for the quick reply",
        (True, False, False),
    ),
]


@pytest.mark.parametrize(("name", "body", "label", "got", "verdicts"), ROWS, ids=[row[0] for row in ROWS])
def test_the_reader_is_judged_by_the_label_alone(name, body, label, got, verdicts):
    case = m.Case("held-out", name, body, expected=None)
    assert m.against_label(case, label, got) == verdicts


def test_every_label_names_lines_its_set_can_hold():
    """A label file that names a line 0 or a range backwards is a labelling slip, caught before any figure."""
    for path in sorted(m.LABELS.glob("*.json")):
        for name, label in m.labels(path.stem).items():
            # "unsure": the line ranges the labeller was unsure of (already in or out of "new" by its call).
            required, allowed = {"new", "partial", "confidence"}, {"new", "partial", "confidence", "unsure"}
            assert required <= set(label) <= allowed, (path.name, name)
            assert label["confidence"] in {"high", "medium", "low"}, (path.name, name)
            for first, last in [*label["new"], *label.get("unsure", [])]:
                assert 1 <= first <= last, (path.name, name)
            for part in label["partial"]:
                assert part["line"] >= 1, (path.name, name)
                assert 0 <= part["start"] < part["end"], (path.name, name)
