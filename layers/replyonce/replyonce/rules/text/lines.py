"""The reader's vocabulary: the markers it writes, the marks it leaves between its passes, and the
patterns every rule reads (a quoted line, an address, a time, a year).

Why a module of its own: each of the reader's rules (markup, titles, header blocks, attributions,
trailers, history) reads these, and none of them owns them."""

import re

QUOTE_MARKER = "[quoted text]"
"""The line that stands in the new text where the customer quoted something and then wrote below it."""

UNSURE_MARKER = "[not sure where the quoted text starts; the rest of the message follows]"
"""The line below which the reader could not tell the customer's words from quoted history.

Above it: the customer's new words, for sure. Below it, as received: what may be history (an
attribution with no address, a header block with no sender, text after a phone's footer) or may be
the customer's own words. The reader never drops those words and never hands history over as new:
it hands the doubt over."""

# Where Outlook's divider stood, for new_text: history from here on, unless the header says forward.
# A private-use character: it cannot come from a real body's text.
HISTORY_MARK = "\ue000"
# Where a structural sign says history may start (:func:`mark_doubts`): the rest goes behind
# UNSURE_MARKER. A private-use character, as the history mark is: no mail holds it as a line.
DOUBT_MARK = "\ue001"
MARKS = (HISTORY_MARK, DOUBT_MARK)
BLANK_LINES = re.compile(r"\n{3,}")
_QUOTED = re.compile(r"^\s*(?:>|[A-Z][A-Za-z]{0,9}>(?=\s|$))")  # "> …", and Supercite's "Bob> …"
_ONE_LEVEL = re.compile(r"^(\s*)> ?")
# A quote written with "|" for ">" (Mutt's or Gnus's indent string set to "| "): its lines, and the signs
# that make a run of them a quote rather than a table or a log the customer pasted.
_BAR_LINE = re.compile(r"^\|(?: |$)")
_BAR_QUOTE_SIGN = re.compile(r"^\|\s*>|wrote:\s*$")
TIME = re.compile(r"\b\d{1,2}[:.]\d{2}\b")
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|mailto:")
DIGIT = re.compile(r"\d")
YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
RFC_DELIMITER = "-- "


def quoted(line: str) -> bool:
    return bool(_QUOTED.match(line))


def bar_quotes(lines: list[str]) -> list[str]:
    """``lines`` with each quote written with "|" instead of ">" written with ">".

    A run of lines opening with "| " (or a bare "|") is a quote when it quotes in turn ("| > …") or holds
    the attribution of what it quotes ("| Bob <bob@…> wrote:"): a mail program's quote with another
    indent string. Once one run of a body is such a quote, every other run of it is one too (an answer
    between two quoted lines: "| Why?" alone): a program quotes with one indent string. Why not every
    such run: a customer pastes tables ("| Weight | Price |", each row closed by "|") and logs whose lines
    open with "|"; a run with a row closed by "|" stays as it is.
    """
    runs = []
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and _BAR_LINE.match(lines[end]):
            end += 1
        if end > start:
            run = lines[start:end]
            if not any(line.rstrip().endswith("|") and line.strip() != "|" for line in run):
                runs.append((start, end, any(_BAR_QUOTE_SIGN.search(line) for line in run)))
        start = max(end, start + 1)
    if not any(sure for _, _, sure in runs):
        return lines
    out = list(lines)
    for start, end, _ in runs:
        out[start:end] = [">" + line[1:] for line in lines[start:end]]
    return out


def unquote(line: str) -> str:
    """One level of ``>`` off a quoted line."""
    return _ONE_LEVEL.sub(r"\1", line, count=1)


def line_under(lines: list[str], index: int) -> int | None:
    """The first line under ``lines[index]`` that holds anything; ``None`` when only blank lines follow."""
    return next((i for i in range(index + 1, len(lines)) if lines[i].strip()), None)
