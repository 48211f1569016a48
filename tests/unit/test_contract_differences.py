"""The declared contract differences of ``scripts/measure_new_text.py`` (issue 41, twelfth split).

Each is a pure function of (the peer's expected text, our output) that returns the pair compared for
"exact under our contract". A table per difference: a row where it applies changes only what its name says;
a row where it does not apply leaves both texts as they were. The raw exact figure never goes through them.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import mail_sets
import measure_new_text as m

FORWARD = "Please see below.\n\n---------- Forwarded message ---------\nFrom: A <a@x.org>\n\nOld words."


# hides_forwards: cuts ours only at a forward marker the peer does not keep.
HIDES_FORWARDS = [
    # The peer stops at the forward; ours keeps it: ours is compared up to the marker.
    ("Please see below.", FORWARD, ("Please see below.", "Please see below.\n\n")),
    ("See it.", "See it.\nBegin forwarded message:\n\nOld.", ("See it.", "See it.\n")),
    ("Look.", "Look.\n-------- Forwarded Message --------\nOld.", ("Look.", "Look.\n")),
    # The peer keeps the forward too: nothing changes.
    (FORWARD, FORWARD, (FORWARD, FORWARD)),
    # No forward in ours: nothing changes.
    ("Hi.", "Hi.\nThanks,\nJane", ("Hi.", "Hi.\nThanks,\nJane")),
    # A reply's "Original Message" is no forward.
    ("Hi.", "Hi.\n-----Original Message-----\nOld", ("Hi.", "Hi.\n-----Original Message-----\nOld")),
    # Words about a forward in a sentence are no marker.
    ("I forwarded message 3 to you.", "I forwarded message 3 to you.", None),
]

# strips_signoff: cuts ours only at a closing line the peer does not keep.
STRIPS_SIGNOFF = [
    # The peer drops "Thanks,\nJane"; ours keeps it: ours is compared up to the sign-off.
    ("Hi,\n\nIt works.", "Hi,\n\nIt works.\n\nThanks,\nJane", ("Hi,\n\nIt works.", "Hi,\n\nIt works.\n")),
    ("It works.", "It works.\nBest regards,\nJohn\nACME", ("It works.", "It works.")),
    ("Fine.", "Fine.\n\nCheers!\nBo", ("Fine.", "Fine.\n")),
    # The peer keeps the sign-off: nothing changes.
    ("It works.\nThanks,\nJane", "It works.\nThanks,\nJane", None),
    # "Thanks" inside a sentence is no sign-off.
    ("Thanks for the fix, it works.", "Thanks for the fix, it works.", None),
    ("A.", "A.\nThanks for the fix, it works.", None),
    # A closing word above the last twelve lines is not looked at.
    ("Thanks,", "Thanks,\n" + "\n".join(f"line {i}" for i in range(12)), None),
]

# keeps_inline_quotes: drops only an attribution over a quote from the expected.
KEEPS_INLINE_QUOTES = [
    # The peer keeps an attribution over an inline quote; ours writes the marker: the line goes.
    (
        "On May 8, 2012, at 12:13 PM, Andy wrote:\n> Ready?\nYes.",
        "[quoted text]\nYes.",
        ("> Ready?\nYes.", "[quoted text]\nYes."),
    ),
    (
        "Hi\n----- 'Jo' <jo@x.org> wrote:\n\n> Q1\nA1",
        "Hi\nA1",
        ("Hi\n\n> Q1\nA1", "Hi\nA1"),
    ),
    # "wrote:" over unquoted text is not an inline quote's attribution: nothing changes.
    ("I wrote:\nthe list below", "I wrote:\nthe list below", None),
    # No quote at all: nothing changes.
    ("Plain reply.", "Plain reply.", None),
]

# keeps_rfc_signature: cuts the expected only at the delimiter ours lacks.
KEEPS_RFC_SIGNATURE = [
    # The peer keeps "-- \nsig"; ours cuts it: the expectation is compared up to the delimiter.
    ("Done.\n-- \nConfigure bugmail: x", "Done.", ("Done.", "Done.")),
    ("Done.\n--\nBob", "Done.", ("Done.", "Done.")),
    # Ours keeps a "--" line too: nothing changes.
    ("Done.\n-- \nBob", "Done.\n-- \nBob", None),
    # "---" and "-- x" are not the delimiter: nothing changes.
    ("Done.\n---\nBob", "Done.", None),
    ("Done.\n-- x\nBob", "Done.", None),
]

# folds_disclaimers: takes out of ours only a legal footer between rule lines that the peer does not keep.
FOOTER = "*" * 20 + "\nThis email is confidential and intended solely for the addressee.\n" + "*" * 20
FOLDS_DISCLAIMERS = [
    # The peer folds the footer; ours keeps it: ours is compared without it and its rule lines.
    (
        "Please see attached.",
        "Please see attached.\n\n" + FOOTER,
        ("Please see attached.", "Please see attached.\n"),
    ),
    # A footer with no closing rule runs to the end; a rule of spaced dashes is a rule too.
    ("Reply.", "Reply.\n- - - - - - - -\nScanned for viruses by X.", ("Reply.", "Reply.")),
    # Text after the closing rule stays.
    ("A.\nrest", "A.\n--------\nconfidential\n--------\nrest", ("A.\nrest", "A.\nrest")),
    # The peer keeps the footer: nothing changes.
    ("Hi.\n" + FOOTER, "Hi.\n" + FOOTER, None),
    # A rule over ordinary words is no footer: nothing changes.
    ("Hi.\n--------\nMeeting notes below.", "Hi.\n--------\nMeeting notes below.", None),
    # "Confidential" with no rule line above it is not folded: nothing changes.
    ("Hi.", "Hi.\nThis is confidential.", None),
]


@pytest.mark.parametrize(
    ("difference", "expected", "ours", "result"),
    [
        (name, *row)
        for name, table in (
            ("hides_forwards", HIDES_FORWARDS),
            ("strips_signoff", STRIPS_SIGNOFF),
            ("keeps_inline_quotes", KEEPS_INLINE_QUOTES),
            ("keeps_rfc_signature", KEEPS_RFC_SIGNATURE),
            ("folds_disclaimers", FOLDS_DISCLAIMERS),
        )
        for row in table
    ],
)
def test_a_declared_difference_changes_only_what_its_name_says(difference, expected, ours, result):
    # ``result`` None: the difference does not apply, and both texts stay as they were.
    assert m.DIFFERENCES[difference](expected, ours) == (result or (expected, ours))


def test_each_declared_difference_is_one_the_scorer_knows():
    for name, differences in mail_sets.CONTRACT_DIFFERENCES.items():
        assert name in mail_sets.SOURCES
        assert set(differences) <= set(m.DIFFERENCES)


def test_a_source_that_declares_nothing_is_compared_as_it_is():
    assert "askbot" not in mail_sets.CONTRACT_DIFFERENCES
    pair = ("Hi.", "Hi.\n---------- Forwarded message ---------\nOld\nThanks,\nJane")
    assert m.under_contract("askbot", *pair) == pair
    assert m.under_contract("alga-psa", *pair) == ("Hi.", "Hi.\n")
