"""The titles and dividers a mail program writes over an older message: "-----Original Message-----",
"-------- Forwarded message ---------", a dashed title in any words, Outlook's divider, a helpdesk's
"reply above this line", a sender's "Name <address>" line over a header block.

Why together: each says "an older message starts here" by its shape or its words, before any field
of that message is read."""

import re

from replyonce.rules.text.lines import line_under, quoted

SEPARATOR_RULE = re.compile(r"^\s*(?:[-_]{10,}|\*?-{10,}\*?)\s*$")  # Outlook's divider above its block
# Outlook's reply divider in plain text: a line of 32 underscores (30 or more), longer than the rules people
# and signature programs draw under their words ("_______________").
OUTLOOK_DIVIDER = re.compile(r"^\s*_{30,}\s*$")
# A dashed title above a header block or a quote, in any words ("-------- Oprindelig besked --------",
# "-------- Original-Message --------", "-------- Pôvodná správa --- Original Message --------").
DASHED_TITLE = re.compile(r"^\s*[*_]*-{3,}\s*[^\W\d_].{1,80}?\s*-{3,}[*_]*\s*$")
# The same with fewer dashes ("-- Original Nachricht --", "--پیام اصلی--", "- Die oorspronklike boodskap --",
# as NOCC's translators write its title; en or em dashes too, as its Serbian one): a title only where an
# older message's fields stand under it.
LOOSE_DASHED_TITLE = re.compile(r"^\s*[*_]*[-\u2013\u2014]+\s*[^\W\d_].{1,80}?\s*[-\u2013\u2014]+[*_]*\s*$")
_ORIGINAL_TITLES = (
    r"(?:original message|reply message|ursprüngliche nachricht|original-nachricht|"
    r"antwort nachricht|oprindelig meddelelse|mensaje original|message d'origine|messaggio originale|"
    r"oorspronkelijk bericht|origineel bericht|mensagem original|ursprungligt meddelande|"
    r"opprinnelig melding|alkuperäinen viesti|wiadomość oryginalna|oryginalna wiadomość|"
    r"исходное сообщение)"
)
# "-----Original Message-----", also with one dash left of the title when three or more follow it (a
# phone's "-----Reply message-----" whose line was wrapped: "-Reply message -----").
ORIGINAL_MESSAGE = re.compile(
    rf"^\s*[*_]*\s*(?:-{{2,}}\s*{_ORIGINAL_TITLES}\s*-{{2,}}|-\s*{_ORIGINAL_TITLES}\s*-{{3,}})\s*[*_]*\s*$",
    re.I,
)
# That title with the block's first field run together on its line ("-Reply message ----- From: …").
ORIGINAL_THEN_FIELD = re.compile(rf"^(\s*[*_]*\s*-+\s*{_ORIGINAL_TITLES}\s*-{{3,}}[*_]*)[ \t]*(\S.*)$", re.I)
_FORWARD_TITLES = (
    r"forwarded message|weitergeleitete nachricht|message transféré|"
    r"mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|mensagem encaminhada|"
    r"videresendt meddelelse|vidarebefordrat meddelande|videresendt melding|przekazana wiadomość|"
    r"wiadomość przekazana|пересылаемое сообщение|forwarded message from.*"
)
FORWARD = re.compile(
    rf"^\s*[*_]*\s*(?:-{{2,}}\s*(?:{_FORWARD_TITLES})\s*-{{2,}}|"
    r"begin forwarded message:|début du message réexpédié\s?:|anfang der weitergeleiteten nachricht:|"
    r"inicio del mensaje reenviado:|inizio messaggio inoltrato:|begin doorgestuurd bericht:|"
    r"início da mensagem reencaminhada:|vidarebefordrat brev:|videresendt besked:|"
    r"początek przekazywanej wiadomości:|начало переадресованного сообщения:)\s*[*_]*\s*$",
    re.I,
)
# The same title without its dashes ("Forwarded message" alone on its line, as a webmail or a helpdesk's
# converter leaves it): a forward's title only directly above the forwarded header block.
BARE_FORWARD = re.compile(rf"^\s*[*_]*\s*(?:{_FORWARD_TITLES})\s*:?\s*[*_]*\s*$", re.I)
# A helpdesk's line over its notification ("##- Please type your reply above this line -##", "-- REPLY
# ABOVE THIS LINE --"), alone on its line: what follows it is the message the customer answers.
_REPLY_ABOVE = re.compile(
    r"^\W*(?:please\s+)?(?:(?:type|write|enter|add|put)\s+)?(?:your\s+)?(?:reply|response|answer)\s+"
    r"above\s+this\s+line\W*$",
    re.I,
)
# "Original Message" alone, its dashes lost (as a webmail or a converter leaves it): history's title when a
# from-field naming an address stands directly under it (alone, or the first of a header block).
BARE_ORIGINAL = re.compile(rf"^\s*[*_]*\s*{_ORIGINAL_TITLES}\s*:?\s*[*_]*\s*$", re.I)
# A line in square brackets and nothing else: directly above a helpdesk's "reply above this line", the
# token that helpdesk hides there to find its ticket ("[ALGA-REPLY-TOKEN GHFTK-123 ticketId=…]").
_BRACKETED = re.compile(r"^\s*\[[^\[\]]+\]\s*$")
# A title whose dashes were lost on one side ("-Original Message", "-----Original Message"), directly
# above a sure start of history: the title of that history, not the sender's words.
_LOOSE_ORIGINAL = re.compile(rf"^\s*(?:-+(?=\S)|-{{2,}}\s*){_ORIGINAL_TITLES}\s*-*\s*$", re.I)
# A client's markup around a dashed title at the start of a line of plain text (Samsung mail's
# "<div>-------- Original message --------</div><div>From: …" in a text/plain part).
_TAGGED_TITLE = re.compile(
    r"^(?:\s*<(?:div|p|span|font|b|br)\b[^<>]*>)+\s*(?P<title>-{2,}[^<>]{3,60}?-{2,})\s*"
    r"(?:</?(?:div|p|span|font|b|br)\b[^<>]*>\s*)*(?P<rest>.*)$",
    re.I,
)
_IN_REPLY_TO = re.compile(r"^\s*in reply to\s*:\s*$", re.I)
# A sender's name and address alone on a line ("Alice Example <alice@x.example>"), as some clients write
# the sender above the fields of the message they quote.
_SENDER_LINE = re.compile(r"^\s*[*_]*[^\s<>@:*_][^<>@:]{0,60}<[\w.+-]+@[\w-]+\.[\w.-]+>[*_]*\s*$")


def in_reply_to(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is "In reply to:" alone, with unquoted text under it: a tracker's or a
    client's lead-in to the message answered, or the customer's own ("In reply to:" / "your question
    about the refund, …"). The reader cannot tell: the rest goes behind :data:`UNSURE_MARKER`."""
    if not _IN_REPLY_TO.match(lines[index]):
        return False
    return any(line.strip() and not quoted(line) for line in lines[index + 1 :])


def history_start(lines: list[str], index: int) -> int:
    """Where unquoted history found at ``lines[index]`` starts: above it, the sender's name and address
    alone on the line directly above the fields, and Outlook's divider if any."""
    if index > 0 and _SENDER_LINE.match(lines[index - 1]):
        index -= 1
    above = index - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and (
        SEPARATOR_RULE.match(lines[above])
        or ORIGINAL_MESSAGE.match(lines[above])
        or LOOSE_DASHED_TITLE.match(lines[above])
    ):
        return above
    return index


def titles_a_quote(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a title between dashes directly over a quote (blank lines between): the
    quote's own title, as an attribution is ("-------- Original Message --------" / "> …", Thunderbird's
    reply header as its translators write it). A forward's title is not: what it forwards is kept."""
    if not DASHED_TITLE.match(lines[index]) or FORWARD.match(lines[index]):
        return False
    under = line_under(lines, index)
    return under is not None and quoted(lines[under])


def reply_above_at(lines: list[str], index: int) -> bool:
    """Whether a helpdesk's "reply above this line" stands at ``lines[index]``, or directly under the
    square-bracketed tokens that start there ("[ALGA-REPLY-TOKEN …]": the helpdesk's, not the sender's)."""
    while index < len(lines) and _BRACKETED.match(lines[index]):
        index += 1
    return index < len(lines) and bool(_REPLY_ABOVE.match(lines[index]))


def titled(lines: list[str], start: int) -> int:
    """Where sure history found at ``lines[start]`` starts: above it, a title whose dashes were lost
    ("-Original Message" over "On … wrote:"), if it stands directly above (blank lines aside)."""
    above = start - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    return above if above >= 0 and _LOOSE_ORIGINAL.match(lines[above]) else start


def unwrapped_title(line: str) -> list[str]:
    """A line of plain text that opens with a client's markup around a dashed title, as the title and the
    rest of the line below it ("<div>-------- Original message --------</div><div>From: …" reads as the
    title over "From: …"); any other line as it is."""
    tagged = _TAGGED_TITLE.match(line) if line.lstrip().startswith("<") else None
    if tagged is None or not (ORIGINAL_MESSAGE.match(tagged["title"]) or FORWARD.match(tagged["title"])):
        return [line]
    return [tagged["title"], *([tagged["rest"]] if tagged["rest"].strip() else [])]
