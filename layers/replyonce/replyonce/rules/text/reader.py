"""The reader's passes: the body as lines, each line classified (quoted, attribution, history,
forward, signature, new text), and the new words kept in the order written with
:data:`~replyonce.rules.text.lines.QUOTE_MARKER` where a quote stood before them.

The rules each pass reads live in their own modules (markup, armor, titles, header_block,
attribution, trailer, history); this module decides only how their answers combine."""

import functools
import html
import re

from replyonce.rules.text.armor import without_armor
from replyonce.rules.text.attribution import (
    attribution_at,
    generic_attribution,
    past_attribution,
    split_mid_line_attributions,
    sure,
)
from replyonce.rules.text.header_block import lone_sender, split_run_together_headers
from replyonce.rules.text.history import at_mark, forward_by_subject, history_at, history_follows, mark_doubts
from replyonce.rules.text.lines import (
    BLANK_LINES,
    MARKS,
    QUOTE_MARKER,
    RFC_DELIMITER,
    UNSURE_MARKER,
    bar_quotes,
    quoted,
    unquote,
)
from replyonce.rules.text.markup import is_html, rendered
from replyonce.rules.text.titles import FORWARD, unwrapped_title
from replyonce.rules.text.trailer import client_signature, footer_link, trimmed_end, without_signature

_WRAP_WIDTH = 72  # where mail clients wrap plain text (RFC 3676 §4.2 recommends 66 to 78 characters)
_LINK_PIECE = re.compile(r"^\s*\(?[^\s()]*[/=_][^\s()]*\)?\s*(?P<close>>?)\s*$")  # a wrapped link's tail
_LINK_OR_URL = re.compile(r"\s*<[^<>]*>|\(?\b(?:https?://|www\.)\S+\)?")


def _classify(lines: list[str]) -> tuple[list[str], int, int | None, bool]:
    """Each line's class, where the live text ends, and where forwarded content starts (if it does).

    Classes: ``Q`` quoted, ``A`` attribution of a quote, ``T`` text. The live text is what comes
    before unquoted history (an Outlook block, "-----Original Message-----", an attribution followed
    by unquoted text); forwarded content is kept from its marker to the end. The last value says
    whether the live text ends where the reader is unsure (then the rest follows :data:`UNSURE_MARKER`).
    """
    kinds = _line_kinds(lines)
    attributed = False  # inside a quote that an attribution introduced
    index = 0
    while index < len(lines):
        line = lines[index]
        stop = at_mark(lines, index)
        if stop is not None:
            return kinds, *stop
        if kinds[index] == "Q":
            # A forward quoted whole (">> Begin forwarded message") is forwarded content, unless an
            # attribution introduced the quote it is in (then it is history).
            if FORWARD.match(unquote(line).strip()) and not attributed:
                return kinds, index, index, False
            index += 1
            continue
        if not line.strip():
            index += 1
            continue
        history = history_at(lines, index)
        if history is not None:
            return kinds, *history
        if lone_sender(lines, index) and _written(lines[:index], kinds[:index]):
            return kinds, index, None, True
        if _tail_in_quote(lines, kinds, index) and _written(lines[:index], kinds[:index]):
            return kinds, index, None, True
        if client_signature(line):
            after = next(
                (
                    i
                    for i in range(index + 1, len(lines))
                    if lines[i].strip() and not client_signature(lines[i]) and not footer_link(lines, i)
                ),
                None,
            )
            # A phone's footer, then unquoted text that starts nothing the rules know: history, most
            # likely (the client appended it), or the customer's postscript. Unsure. A lead-in directly
            # above a quote ("John wrote:" / "> …") is the quote's: the footer ends the new words. A
            # footer above everything the customer wrote ("Gesendet mit iPhone" first) ends nothing.
            if (
                after is not None
                and _written(lines[:index], kinds[:index])
                and kinds[after] == "T"
                and attribution_at(lines, after) is None
                and not generic_attribution(lines, after)
                and not history_follows(lines, after)
            ):
                return kinds, after, None, True
        index, attributed, live_ends = past_attribution(lines, kinds, index)
        if live_ends:
            return kinds, index, None, live_ends == "unsure"
    return kinds, len(lines), None, False


def _tail_in_quote(lines: list[str], kinds: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a piece in lower case between two lines of one quote, under a long
    quoted line that ends a clause: a quoted line's tail that lost its ``>`` although it would have fitted
    (see :func:`_line_kinds` for the tails that would not), or an answer typed into the quote. In a body
    whose new words stand above the quote the reader cannot tell: the rest goes behind
    :data:`UNSURE_MARKER`."""
    if not (0 < index < len(lines) - 1 and kinds[index - 1] == kinds[index + 1] == "Q"):
        return False
    above = lines[index - 1].rstrip()
    return lines[index].strip()[:1].islower() and len(above) >= 60 and above[-1:] in ",;."


def _line_kinds(lines: list[str]) -> list[str]:
    """Each line quoted (``Q``) or text (``T``), before attributions are recognised.

    A wrapped link's tail between two quoted lines belongs to the quote, not to an answer: the quoted
    line above leaves a bracket open, or the piece closes the quote's "<…" itself ("(http://…) >").
    """
    kinds = ["Q" if quoted(line) else "T" for line in lines]
    for index in range(1, len(lines) - 1):
        piece = _LINK_PIECE.match(lines[index])
        if not (piece and kinds[index] == "T" and kinds[index - 1] == kinds[index + 1] == "Q"):
            continue
        above = lines[index - 1]
        if piece.group("close") or above.count("(") > above.count(")") or above.count("<") > above.count(">"):
            kinds[index] = "Q"
    # A quoted line wrapped by a client after quoting: its tail lost the ">" ("> … or refund the full" /
    # "amount to your card …"): a long quoted line ending mid-sentence, continued in lower case.
    # Or after a comma or a full stop, when the quote goes on directly below the piece and its first word
    # would not have fitted on the quoted line (the client wrapped there): "> … ornare diam," /
    # "eget accumsan est." / ">". An answer typed between two quoted lines fits neither.
    for index in range(1, len(lines)):
        above, line = lines[index - 1].rstrip(), lines[index].strip()
        if not (kinds[index] == "T" and kinds[index - 1] == "Q" and line[:1].islower() and len(above) >= 60):
            continue
        below = lines[index + 1] if index + 1 < len(lines) else ""
        ends_mid_sentence = above[-1:].isalnum() and (not below.strip() or kinds[index + 1] == "Q")
        wrapped_there = (
            above[-1:] in ",;."
            and bool(below.strip())
            and kinds[index + 1] == "Q"
            and len(above) + 1 + len(line.split()[0]) > _WRAP_WIDTH
        )
        if ends_mid_sentence or wrapped_there:
            kinds[index] = "Q"
    _copies_of_quote(lines, kinds)
    return kinds


def _plain_words(line: str) -> str:
    """A line as words only, to compare one copy of a text with another: quote marks, links and case
    off ("… Cookie Policy <https://…>, Privacy Policy" reads as the quoted "… Cookie Policy, Privacy
    Policy")."""
    return " ".join(_LINK_OR_URL.sub("", re.sub(r"^[\s>]+", "", line)).split()).lower()


def _copies_of_quote(lines: list[str], kinds: list[str]) -> None:
    """Marks quoted (``Q``) each unquoted line under a quote that the quote already holds: the older
    message's own lines, copied again without ``>`` (a relay appends the quoted mail's footer under the
    quote), are history in any language. Only lines of four words or more: "Thanks a lot" may be typed
    twice."""
    first = next((i for i, kind in enumerate(kinds) if kind == "Q"), None)
    if first is None:
        return
    quoted = {
        words
        for line, kind in zip(lines, kinds, strict=True)
        if kind == "Q" and len((words := _plain_words(line)).split()) >= 4
    }
    for index in range(first + 1, len(lines)):
        if kinds[index] == "T" and _plain_words(lines[index]) in quoted:
            kinds[index] = "Q"


def _written(lines: list[str], kinds: list[str]) -> bool:
    """Whether the live text holds words of the sender (not only quotes, attributions, blank lines)."""
    return any(
        kind == "T" and line.strip() and line.strip() not in MARKS
        for line, kind in zip(lines, kinds, strict=True)
    )


def _with_quote_markers(lines: list[str], kinds: list[str]) -> list[str]:
    """The live lines as handed over: each run of quoted lines and attributions one :data:`QUOTE_MARKER`."""
    out: list[str] = []
    for line, kind in zip(lines, kinds, strict=True):
        if kind in ("Q", "A"):
            if not out or out[-1] != QUOTE_MARKER:
                out.append(QUOTE_MARKER)
        elif not (line.strip() == "" and out and out[-1] == QUOTE_MARKER):
            out.append(line)
    return out


def _nothing_written(lines: list[str], kinds: list[str], live_end: int) -> int | None:
    """Where the rest goes behind :data:`UNSURE_MARKER` when the live text holds nothing written: the
    customer's words are there or nowhere, so they are handed over, never dropped. ``None``: nothing to
    hand over (a reply sent without writing, above a quote)."""
    if any(kinds[i] == "T" and lines[i].strip() for i in range(live_end, len(lines))):
        # Nothing new above unquoted history ("On … wrote:" or a header block as the body's first line,
        # text below with no ">").
        return live_end
    lead_in = [i for i, kind in enumerate(kinds) if kind == "A"]
    if lead_in and "Q" not in kinds and not sure(" ".join(lines[i] for i in lead_in)):
        # An attribution naming no address and nothing else, no quote anywhere ("On or around May 26th, I
        # did something." / "wrote:"): a lead-in whose quote was cut off, or the customer's own sentence. One
        # naming an address is a mail program's, its quote cut off: nothing new.
        return lead_in[0]
    return None


def _new_words(text: str, subject: str | None = None) -> str:
    """The new words of a body already rendered as text (quotes as ``>`` lines)."""
    # The RFC 3676 delimiter keeps its space ("-- "): a sure signature; a bare "--" may separate a list.
    lines = split_mid_line_attributions(
        split_run_together_headers(
            [
                piece
                for line in bar_quotes(without_armor(text.splitlines()))
                for piece in (
                    [RFC_DELIMITER]
                    if line.startswith(RFC_DELIMITER) and not line.strip("- \t")
                    else unwrapped_title(line.rstrip())
                )
            ]
        )
    )
    lines = mark_doubts(lines, subject or "")
    kinds, live_end, forward, unsure = _classify(lines)
    if forward is not None:
        decided = forward_by_subject(lines, forward, subject or "")
        if decided is not None:
            forward, unsure = None, decided == "unsure"
    live, live_kinds = lines[:live_end], kinds[:live_end]
    live, live_kinds, signature_doubt, over_footer = without_signature(live, live_kinds)
    if signature_doubt is not None and (not unsure or over_footer) and forward is None:
        # "--" above words a signature does not hold (a request, a list): the customer's, maybe.
        live_end, unsure = signature_doubt, True
        live, live_kinds = live[:live_end], live_kinds[:live_end]
    end = trimmed_end(live, live_kinds)
    if not unsure and forward is None and not _written(live[:end], live_kinds[:end]):
        doubt = _nothing_written(lines, kinds, live_end)
        if doubt is not None:
            live_end, unsure = doubt, True
    out = _with_quote_markers(live[:end], live_kinds[:end])
    if unsure:
        rest = [line for line in lines[live_end:] if line.strip() not in MARKS]
        out.extend(["", UNSURE_MARKER, *rest])
    elif forward is not None:
        rest = lines[forward:]
        # Apple Mail quotes a forward (its marker too, in plain text): one level off.
        if all(quoted(line) or not line.strip() for line in rest[1:]):
            rest = [unquote(line) for line in rest]
        out.extend(["", *(line for line in rest if line.strip() not in MARKS)])
    return BLANK_LINES.sub("\n\n", "\n".join(out)).strip()


def new_text(body: str, subject: str | None = None) -> str:
    """What the sender wrote in this message: their new words wherever they stand, and what they forward.

    Parameters
    ----------
    body
        The message body as Nylas gives it: HTML, or plain text.
    subject
        The message's own subject, where the caller has it. Outlook's reply and forward differ only by
        it: an Outlook block whose Subject says "FW:" under "RE: FW: x" is the message replied to
        (history), under a subject equal to the block's, or with no subject, it may be either (behind
        :data:`UNSURE_MARKER`); under any other subject it is a forward, kept.

    Returns
    -------
    str
        The new words in the order written, quoted blocks between them as :data:`QUOTE_MARKER` lines,
        forwarded content after its marker; ``""`` when the body holds nothing new.
    """
    return _new_words(_plain(body), subject)


def full_text(body: str) -> str:
    """The whole body as plain text, quoted history included (``<blockquote>`` as ``>`` lines).

    What :attr:`replyonce.agent.Message.full_text` holds beside the new text: the agent can read what
    the reader was unsure of, or cut away, and treat it as possibly quoted.
    """
    return "\n".join(line for line in _plain(body).splitlines() if line.strip() not in MARKS).strip()


@functools.lru_cache(maxsize=4)
def _plain(body: str) -> str:
    """A body as the reader reads it: plain text, HTML rendered (``<blockquote>`` as ``>`` lines).

    Cached for the few bodies last read: the agent's view reads each message twice (:func:`new_text`
    and :func:`full_text`), and rendering a long HTML email is a good part of reading it."""
    body = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    return rendered(body, quotes=True) if is_html(body) else html.unescape(body)
