"""Where unquoted history starts: for sure, by the phrase rules (a title, a header block, a helpdesk's
line), or maybe, by the structural signs of an older message whatever its language.

Why two kinds: each round's phrase lists fitted the mail measured and missed the next language; the
structural signs read the shape of an older message instead. None of them cuts: where one holds,
the rest goes behind :data:`~replyonce.rules.text.lines.UNSURE_MARKER` (the customer's words, if they
are there, still reach the agent, marked), unless the phrase rules already know the start for sure."""

from replyonce.rules.text.attribution import attribution_at, colon_attribution
from replyonce.rules.text.header_block import (
    REPLY_SUBJECT,
    answered_block,
    block_subject,
    block_under,
    glued_block,
    glued_block_sure,
    header_block,
    header_block_sure,
    header_run,
    header_subject_forwarded,
    label_line,
    sender_under,
)
from replyonce.rules.text.lines import ADDRESS, DOUBT_MARK, HISTORY_MARK, MARKS, line_under, quoted
from replyonce.rules.text.titles import (
    BARE_FORWARD,
    BARE_ORIGINAL,
    DASHED_TITLE,
    FORWARD,
    LOOSE_DASHED_TITLE,
    ORIGINAL_MESSAGE,
    OUTLOOK_DIVIDER,
    SEPARATOR_RULE,
    history_start,
    in_reply_to,
    reply_above_at,
    titled,
    titles_a_quote,
)
from replyonce.rules.text.trailer import MAILING_LIST, signature_like


def mark_doubts(lines: list[str], subject: str = "") -> list[str]:
    """Lines, with :data:`DOUBT_MARK` above the first place a structural sign says history may start:
    a header block whose breaks were lost (split off the words before it on its line), a run of
    "Field: value" lines with a date, a line ending in a colon that names an address or a date over
    unquoted text. Only below words of the sender's own, and only where the phrase rules find no start
    of their own there (they know their languages for sure). A run that names the subject the message
    answers (:func:`answered_block`) is history for sure: :data:`HISTORY_MARK` instead."""
    written = False
    for index, line in enumerate(lines):
        if not line.strip() or line.strip() in MARKS or quoted(line):
            continue
        if history_at(lines, index) is not None:
            # Unquoted history the phrase rules know starts here ("-----Original Message-----" over fields in
            # another language, a block of known fields over unknown ones): all below it is history.
            return lines
        glued = glued_block(line)
        known = attribution_at(lines, index) is not None
        if glued is not None and not known and (written or glued > 0):
            head, tail = line[:glued].rstrip(), line[glued:]
            mark = HISTORY_MARK if glued_block_sure(tail) else DOUBT_MARK
            return [*lines[:index], *([head] if head else []), mark, tail, *lines[index + 1 :]]
        fields = _fields_under_title(lines, index)
        if fields is not None and not known and history_at(lines, fields) is None:
            # Fields the phrase rules do not know (they decide the ones they know, a line further down).
            # Whether or not words of the sender's stand above: an older message's title over its sender's
            # field is history's start however the reply is written (bottom-posted, it opens the body).
            sure = answered_block(lines, fields, subject)
            return [*lines[:index], HISTORY_MARK if sure else DOUBT_MARK, *lines[index:]]
        if (
            written
            and not known
            and (
                header_run(lines, index)
                or colon_attribution(lines, index)
                or in_reply_to(lines, index)
                or _divider_alone(lines, index)
            )
        ):
            start = history_start(lines, index)
            sure = header_run(lines, index) and answered_block(lines, index, subject)
            return [*lines[:start], HISTORY_MARK if sure else DOUBT_MARK, *lines[start:]]
        written = True
    return lines


def _fields_under_title(lines: list[str], index: int) -> int | None:
    """Where the fields start when ``lines[index]`` is a title between dashes (any words, one dash or more
    each side) over a sender's field in any language ("Field: Name <address>", blank lines between): an
    older message's header, as a mail program writes it over the message quoted unquoted. ``None`` if
    not. A customer's own "--Shipping details-- / Email: bob@home.example" has the same shape: the sign
    only ever puts the rest behind the marker, unless the fields name the subject this message answers."""
    if not LOOSE_DASHED_TITLE.match(lines[index]):
        return None
    below = line_under(lines, index)
    if below is None or quoted(lines[below]):
        return None
    field = label_line(lines[below])
    return below if field and ADDRESS.search(field.group("value")) else None


def _divider_alone(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is Outlook's reply divider over sentences, with no header block (the
    phrase rules find those): the message replied to, its header lost (a relay, a copy), or the
    customer's own rule over more of their words. The reader cannot tell: the rest goes behind
    :data:`UNSURE_MARKER`. A few short lines under it (a name, a number, a link, a webmail's ad) are a
    signature or a footer drawn so, and stay as they are."""
    if not OUTLOOK_DIVIDER.match(lines[index]):
        return False
    under = line_under(lines, index)
    if under is None or quoted(lines[under]) or MAILING_LIST.search(lines[under]):
        return False
    if history_follows(lines, index) or attribution_at(lines, under) is not None:
        return False
    return not signature_like([line for line in lines[under:] if line.strip() and not quoted(line)])


def at_mark(lines: list[str], index: int) -> tuple[int, int | None, bool] | None:
    """Where the live text ends at a mark line: Outlook's divider (history, or a forward when its block's
    subject says so), or a structural sign's doubt (:func:`mark_doubts`)."""
    line = lines[index].strip()
    if line == HISTORY_MARK:
        return index, (index + 1 if header_subject_forwarded(lines, index + 1) else None), False
    if line == DOUBT_MARK:
        return index, None, True
    return None


def history_follows(lines: list[str], index: int) -> bool:
    """Whether unquoted history the rules know starts at ``lines[index]``, or below a divider there
    ("----------" above Outlook's block): then the reader is sure, not in doubt."""
    if history_at(lines, index) is not None:
        return True  # "-------- Original message --------" is history's title, whatever follows it
    if SEPARATOR_RULE.match(lines[index]) or DASHED_TITLE.match(lines[index]):
        under = line_under(lines, index)
        return under is not None and history_at(lines, under) is not None
    return False


def history_at(lines: list[str], index: int) -> tuple[int, int | None, bool] | None:
    """Where unquoted history starts, and forwarded content (if any), when the text line at ``index``
    begins it: a forward marker, "-----Original Message-----", a header block. ``None``: it does not."""
    line = lines[index]
    if titles_a_quote(lines, index):
        return None  # the quote's own title, read as its attribution (generic_attribution)
    if FORWARD.match(line) or (BARE_FORWARD.match(line) and block_under(lines, index)):
        return index, index, False
    if reply_above_at(lines, index):
        return titled(lines, index), None, False
    if ORIGINAL_MESSAGE.match(line):
        return index, (index if header_subject_forwarded(lines, index + 1) else None), False
    if BARE_ORIGINAL.match(line) and sender_under(lines, index):
        return index, None, False
    found, forwarded = header_block(lines, index)
    if found:
        start = history_start(lines, index)
        if forwarded:
            return start, start, False
        sure = header_block_sure(lines, index) or start != index  # a divider above it is Outlook's
        return start, None, not sure
    return None


def forward_by_subject(lines: list[str], forward: int, subject: str) -> str | None:
    """What the message's own subject says of a header block kept as a forward because its subject says
    "FW:": ``"history"`` when the message is a reply ("RE: FW: x": the block is the message replied to),
    ``"unsure"`` when the message's subject is the block's own ("FW: x" over "Subject: FW: x": a reply
    that kept the subject, or a forward of a forward) or empty, ``None`` (a forward, kept) otherwise. A
    forward's own marker ("---------- Forwarded message ---------") is the customer's word for it: not
    judged."""
    if FORWARD.match(lines[forward]) or BARE_FORWARD.match(lines[forward]) or quoted(lines[forward]):
        return None
    block = next((i for i in range(forward, min(forward + 6, len(lines))) if header_block(lines, i)[0]), None)
    if block is None:
        return None
    if not subject:
        # No subject known (an empty one, or a caller without it): nothing tells the two apart, and a
        # block kept as a sure forward was the message replied to there (issue 41, eleventh split).
        return "unsure"
    if REPLY_SUBJECT.match(subject):
        return "history"
    if " ".join(subject.split()).casefold() == " ".join(block_subject(lines, block).split()).casefold():
        return "unsure"
    return None
