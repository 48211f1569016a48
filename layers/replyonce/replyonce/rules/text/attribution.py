"""Attribution lines over a quote: "On … wrote:" in its languages (the verb last, mid-line, or first),
wrapped over up to five lines or after text on the same line; a bare "Name wrote:"; the dated and
addressed forms ("30.11.2026 10:02, Alice <a@x>:") and a title between dashes.

Why two verb lists: in English, French, Spanish, Italian, Portuguese, Polish and Russian the verb ends
the line ("… a écrit :"); in German, Dutch and the Scandinavian languages the name may follow it
("Am … schrieb Alice <a@x>:")."""

import functools
import re

from replyonce.rules.text.header_block import label_line
from replyonce.rules.text.lines import ADDRESS, DIGIT, TIME, YEAR, line_under, quoted, unquote
from replyonce.rules.text.titles import titled, titles_a_quote

# Attribution lines ("On … wrote:"). Why two verb lists: in English, French, Spanish, Italian,
# Portuguese, Polish and Russian the verb ends the line ("… a écrit :"); in German, Dutch and the
# Scandinavian languages the name may follow it ("Am … schrieb Alice <a@x>:").
_VERB_LAST = (
    r"wrote|writes|a\s+écrit|a\s+ecrit|escribieron|escribió|escribio|ha\s+scritto|scrisse|escreveram|escreveu|"
    r"geschreven|"
    r"napisał\(a\)|napisała|napisał|napisal|pisze|написал\(а\)|написала|написал|пишет|написав|пише|"  # noqa: RUF001 - Cyrillic: the words' own letters
    r"đã\s+viết|写道|kirjoitti|írta|a\s+scris|ha\s+escrit|va\s+escriure|님이\s*작성|작성|"
    r"napsal\(a\)|napsala|napsal|yazdı|έγραψε|כתב|كتب|"  # noqa: RUF001 - Greek: the word's own letters
    # Other scripts and languages: Japanese (Thunderbird's "…さんは書きました:", iOS's "… <a@x>のメール:"),
    # traditional Chinese, Croatian and Serbian, Slovak, Bulgarian, the Baltic languages, Icelandic,
    # Galician, Albanian, Indonesian, Thai, Hindi, Persian.
    r"書きました|寫道|のメール|napisao\s+je|napisala\s+je|je\s+napisao|je\s+napisala|napísal\(a\)|napísala|"
    r"napísal|написа|написао|rašė|rakstīja|kirjutas|skrifaði|escribiu|shkroi|menulis|เขียนว่า|ने\s+लिखा|نوشت|"
    # Thunderbird's "#1 wrote:" as its translators write it (thunderbird-l10n's composeMsgs.properties):
    # Interlingua, Friulian, Slovenian, Bosnian, Lower Sorbian, Malay, Macedonian, Romansh, Uzbek, Quechua,
    # Kazakh, Belarusian, Georgian, Kaqchikel, Basque, Khmer.
    r"ha\s+scribite|ha\s+scrit|je\s+napisal\(a\)|je\s+napisao/la|jo\s+napisał|membalas|napisa|piše|skreau|"
    r"yozdi|yura|жазған|напісаў|წერს|xutz'ib'aj|idatzi\s+zuen|បាន[\u200b\s]?សរសេរ|գրել\s+է|գրեց"
)
# The verb before the name ("Ysgrifennodd Alice:", "كتب Alice:"): Irish, Scottish Gaelic, Breton, Welsh,
# Norwegian Nynorsk, Hebrew, Arabic (Thunderbird's translators again).
_VERB_FIRST = r"Scríobh|Sgrìobh|Skrivet\s+eo\s+bet\s+gant|Ysgrifennodd|skrev|נכתב\s+על\s+ידי|كتب"
_BARE_VERB_FIRST = re.compile(rf"^(?:{_VERB_FIRST})\s+(?P<name>[^:\uff1a]+?)(?:\s+na\s+leanas)?\s*[:\uff1a]$")
_VERB_MID = r"schrieb|schreef|skrev|skreiv|napisana\s+przez"
# After a mid verb, the name and the date may follow, times ("11:53") included.
_ATTR_END = re.compile(
    rf"(?:(?<!\w)(?:{_VERB_LAST})\s*|(?<!\w)sent\s*"
    rf"|(?<!\w)(?:{_VERB_MID})(?!\w)(?:[^:\uff1a]|(?<=\d):(?=\d)){{0,160}})"
    r"[:\uff1a]$",
    re.I,
)
_ANY_VERB = re.compile(rf"(?<!\w)(?:{_VERB_LAST}|{_VERB_MID}|sent)(?!\w)", re.I)
# A bare lead-in's verb, last on its line with its colon: "John wrote:" (see _bare_lead_in).
# Khmer ends it on its own sign (U+17D6); Korean's Thunderbird writes no colon, Armenian's a full stop.
_BARE_VERB = re.compile(
    rf"(?<!\w)(?:(?:{_VERB_LAST}|{_VERB_MID})\s*[:\uff1a\u17d6]|이\(가\)\s*쓴\s*글\s*:?|գրել\s+է\s*[.:\u0589])$",
    re.I,
)
# A bare lead-in in a script without capitals, where a name cannot be told by its first letter: the
# verb's own form names a person (an honorific, さん or 님, or the verb of a named writer, 写道).
_CASELESS_BARE = re.compile(
    r"(?:(?:さん)?[はが]書きました|写道|寫道|님이\s*(?:작성|씀)|כתב(?:ה)?|كتب|نوشت)\s*[:\uff1a]$"
)
# "On … <a@x> wrote" with the colon lost: the verb ends the line.
_VERB_AT_END = re.compile(rf"(?<!\w)(?:{_VERB_LAST})\s*$", re.I)
# "30.11.2026 10:02, Alice <a@x>:" (Russian clients write the day and month in words first): no verb,
# an address last.
_ADDRESS_LAST = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+\s*>?\s*\)?\s*[:\uff1a]$")
_ATTR_DASHED = re.compile(rf"^-{{2,}}.{{0,200}}(?<!\w)(?:wrote|{_VERB_LAST})\s*-{{2,}}$", re.I)
_LEADS = r"On|Am|Le|El|Il|Op|Em|Den|På|W\s+dniu|Dnia|At|Vào|Pada|Dne|En"
_LEAD = re.compile(rf"^(?:{_LEADS})\s", re.I)
_LONE_LEAD = re.compile(rf"^(?:{_LEADS})$", re.I)  # "Am" alone: an HTML source's line break after it
_MID_LINE_LEAD = re.compile(rf"(?<=\S)\s*-*\s*(?=(?:{_LEADS})\s)")
_DATE_FIRST = re.compile(
    r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?(?P<gmt>\s*GMT[+-]\d{1,2}:?\d{2})?"
    r"\s+\S.{0,150}$"
)
_DATE_START = re.compile(r"^\d{1,4}(?:[-/.]|\s)")  # "02.04.2012 …", "20 окт. 2016 …", not "416ffd…@"
# A date in digits ("2025-12-01", "1/12/25", "01.12.25"), as a client writes the quoted message's.
_NUMERIC_DATE = re.compile(r"(?<!\d)\d{1,4}[./-]\d{1,2}[./-]\d{2,4}(?!\d)")
# A date as a mail program writes a Date header (RFC 5322 §3.3): "Mon, 01 Dec 2025 10:05:00 +0000".
_MAIL_DATE = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s+\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+"
    r"\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?:[+-]\d{4}|\(?[A-Z]{2,5}\)?))*"
)
_MAX_ATTR_LINES = 5
# "On Tue, 15 Mar 2016 12:30:19 +0000": a lead word and a date as a mail program writes it (a year, and a
# time with its seconds or its zone), nothing after it; no person ends a sentence with "12:30:19 +0000".
_MACHINE_DATE_LEAD = re.compile(
    rf"^(?:{_LEADS})\s+[^:]{{0,40}}?(?:19|20)\d{{2}}\b[^:]{{0,8}}?\d{{1,2}}:\d{{2}}"
    r"(?::\d{2}(?:\s*[AaPp][Mm])?(?:\s*(?:[+-]\d{4}|\(?[A-Z]{2,5}\)?))?"
    r"|(?:\s*[AaPp][Mm])?\s*(?:[+-]\d{4}(?:\s*\(?[A-Z]{2,5}\)?)?|\(?[A-Z]{3,5}\)?))\s*$"
)
# A line that ends on the sender's address in angle brackets, a colon of any script or none after it.
_SENDER_LAST = re.compile(r"<[\w.+-]+@[\w-]+\.[\w.-]+>\s*[:\uff1a\u17d6]?\s*$")


def _attribution(text: str) -> bool:
    """Whether ``text`` (one line, or a wrapped attribution joined) reads as "On … wrote:"."""
    core = " ".join(text.split()).strip(" *_")
    if not 8 <= len(core) <= 400:
        return False
    if not (core[-1] in ":-\uff1a" or core[0].isdigit()):
        # Cheap first: every form ends with a colon or dashes, or opens with a date; or it is
        # "On … <a@x> wrote" with the colon lost (a lead word, an address and a time make it sure).
        return bool(
            _VERB_AT_END.search(core) and _LEAD.match(core) and ADDRESS.search(core) and TIME.search(core)
        )
    if _ATTR_DASHED.match(core):
        return True
    bare = core.strip("-").strip().replace("mailto:", "")  # Outlook's "<a@x<mailto:a@x>>" holds a colon
    if _ADDRESS_LAST.search(bare) and TIME.search(bare) and len(bare) <= 200:
        return True  # a date and time, a name, the address, a colon: "30.11.2026 10:02, Alice <a@x>:"
    date_first = _DATE_FIRST.match(bare)
    if date_first:  # Gmail in some locales: "2026-12-01 10:00 GMT+01:00 Alice <a@x>:"
        return bool(date_first.group("gmt") or ADDRESS.search(bare))
    match = _ATTR_END.search(bare)
    if not match:
        return False
    if match.group(0).lower().startswith("sent"):
        return bool(ADDRESS.search(bare))  # "On Monday I sent:" is a sentence; "Alice <a@x> sent:" is not
    return bool(_LEAD.match(bare) or DIGIT.search(bare) or ADDRESS.search(bare))


def sure(text: str) -> bool:
    """Whether an attribution names its sender's address (or is a client's dashed form): sure enough to
    cut what follows as history even with no ``>``. Without one ("On 3 December at 10:15 your courier
    wrote:", "On Monday you wrote:") a customer may have typed it: the rest goes behind
    :data:`UNSURE_MARKER`."""
    bare = " ".join(text.split()).strip(" *_-")
    date_first = _DATE_FIRST.match(bare)
    return bool(
        ADDRESS.search(bare)
        or _ATTR_DASHED.match(" ".join(text.split()).strip(" *_"))
        or (date_first and date_first.group("gmt"))  # Gmail's own form in some locales
        # A client's full date: a lead word or a date first, a time and a year ("W dniu 1.12.2026 o 10:00
        # … pisze:"); a customer's "On 3 December at 10:15 your courier wrote:" names no year.
        or ((_LEAD.match(bare) or _DATE_START.match(bare)) and TIME.search(bare) and YEAR.search(bare))
    )


def _strong(text: str) -> bool:
    """Whether an attribution is sure enough that the unquoted text after it is history, not new words."""
    bare = " ".join(text.split()).strip(" *_-")
    return bool(
        ADDRESS.search(bare)
        or _ATTR_DASHED.match(" ".join(text.split()).strip(" *_"))
        # A time, as a client writes it: "On 3 December you wrote:" may be the customer's own sentence.
        or ((_LEAD.match(bare) or _DATE_START.match(bare)) and TIME.search(bare))
        or _DATE_FIRST.match(bare)
    )


def _starts(line: str) -> bool:
    """Whether a line opens like an attribution: a lead word ("On", "Am", "Le" …), alone or not, or a
    date."""
    bare = line.strip().lstrip(" -*")
    return bool(_LEAD.match(bare) or _LONE_LEAD.match(bare) or _DATE_START.match(bare))


@functools.lru_cache(maxsize=4096)
def _may_end_attribution(line: str) -> bool:
    """Whether a line ends as an attribution can: a verb ("wrote", "schrieb" …) or an address and a colon.

    Why cached: every line is looked at from each start within reach of it, in each pass over the body,
    and the verb pattern is an alternation of a hundred words in many scripts tried at every position of
    the line: a 500 KB email's thousands of lines took over half a second of CPU (seconds at a Lambda
    size's share of a vCPU), most of it here. A line's answer depends on the line alone."""
    return bool(_VERB_AT_END.search(line) or ("@" in line and _ADDRESS_LAST.search(line.rstrip())))


def _ends_within(lines: list[str], start: int) -> bool:
    """Whether an attribution could end within reach of ``start``: a line ending in a colon or dashes,
    and a verb ("wrote", "schrieb" …) on the way. Cheap, so a long body is not searched line by line."""
    window = lines[start : start + _MAX_ATTR_LINES]
    if any(_may_end_attribution(line) for line in window):
        return True
    return any(line.rstrip()[-1:] in (":", "-", "\uff1a") for line in window) and bool(
        _ANY_VERB.search(" ".join(window))
    )


def attribution_at(lines: list[str], start: int) -> int | None:
    """The last line of an attribution starting at ``lines[start]``, if one does (shortest first)."""
    first = lines[start].strip()
    if not first or quoted(first) or not (first[0].isdigit() or _ends_within(lines, start)):
        return None
    for end in range(start, min(start + _MAX_ATTR_LINES, len(lines))):
        if end > start and not lines[end].strip():
            continue
        if end > start and quoted(lines[end]) and _starts(unquote(lines[end])):
            # "On Thursday." above "> On May 17, … wrote:" is the customer's line, not the start of that
            # quoted attribution (a wrapped one may end on "> wrote:" or ">:", which starts nothing).
            return None
        if end > start and not (_starts(first) or "@" in first or "<" in first or TIME.search(first)):
            return None  # only a line that looks like an attribution's start may wrap onto the next
        joined = " ".join(line.strip() for line in lines[start : end + 1])
        if _attribution(joined):
            # A later line may be the real start ("On this day …" above "On Mon, … wrote:"); not under a
            # lead word alone ("Am" / "26. Mai 2015 19:20 schrieb …:"), which the line below completes.
            if not _LONE_LEAD.match(first.lstrip(" -*")) and any(
                _starts(lines[k]) and _attribution(" ".join(x.strip() for x in lines[k : end + 1]))
                for k in range(start + 1, end + 1)
            ):
                return None
            return end
    return None


def split_mid_line_attributions(lines: list[str]) -> list[str]:
    """Lines, with an attribution that starts after text on its line moved to a line of its own.

    Why: "Thanks! On Mon, … wrote:" must keep "Thanks!". Only a sure attribution (a date, an
    address) is split off, so "I answered On call duty wrote:" stays a sentence.
    """
    out: list[str] = []
    for index, line in enumerate(lines):
        if not quoted(line) and _ends_within(lines, index):
            for match in _MID_LINE_LEAD.finditer(line):
                head, tail = line[: match.start()], line[match.end() :]
                following = [tail, *lines[index + 1 : index + _MAX_ATTR_LINES]]
                end = attribution_at(following, 0)
                if end is not None and _strong(" ".join(following[: end + 1])):
                    out.extend([head.rstrip(" -"), tail])
                    break
            else:
                out.append(line)
        else:
            out.append(line)
    return out


def colon_attribution(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` introduces older text in a language the rules do not know: it ends with
    a colon, names an address (or a date with its time), and unquoted text follows. (Followed by a
    quote it is an attribution: :func:`generic_attribution`.)"""
    line = lines[index].strip()
    if not line.endswith((":", "\uff1a")) or len(line.split()) < 2:
        return False
    if not (ADDRESS.search(line) or (YEAR.search(line) and TIME.search(line))):
        return False
    after = line_under(lines, index)
    return after is not None and not quoted(lines[after])


def past_attribution(lines: list[str], kinds: list[str], index: int) -> tuple[int, bool, str | None]:
    """The text line at ``index`` read as an attribution, if it is one: the next line to read, whether
    a quote it introduced follows, and whether the live text ends here (a strong attribution followed
    by unquoted text: history). Marks the attribution's lines ``A`` in ``kinds``."""
    end = attribution_at(lines, index)
    if end is None:
        if generic_attribution(lines, index):
            kinds[index] = "A"
            return index + 1, True, None
        return index + 1, False, None
    after = end + 1
    while after < len(lines) and not lines[after].strip():
        after += 1
    if after == len(lines) or kinds[after] == "Q":
        kinds[index : end + 1] = ["A"] * (end + 1 - index)
        return after, True, None
    # Unquoted text under an attribution: history when the attribution names an address; otherwise
    # the customer may have typed both ("On 3 December at 10:15 your courier wrote: …"): unsure.
    if sure(" ".join(lines[index : end + 1])):
        return titled(lines, index), False, "history"
    return index, False, "unsure"


def generic_attribution(lines: list[str], index: int) -> bool:
    """A line in a language not listed above that still reads as an attribution: it ends with ":",
    holds an address or a date, and a quote follows it directly (so a sentence is never taken). Or a
    bare lead-in, a name and the verb only ("John wrote:", "Jim Bob a écrit :"), directly above a quote:
    it belongs to the older message the quote holds."""
    line = lines[index].strip()
    if titles_a_quote(lines, index) or _mail_date_lead(lines, index):
        return True
    if _MACHINE_DATE_LEAD.match(line):
        # "On Tue, 15 Mar 2016 12:30:19 +0000" over a quote (blank lines between): a client's attribution
        # that lost its name and verb.
        after = line_under(lines, index)
        return after is not None and quoted(lines[after])
    following = index + 1 < len(lines) and quoted(lines[index + 1])
    under = line_under(lines, index)
    quote_under = under is not None and quoted(lines[under])
    if _dated(line) and ((quote_under and ADDRESS.search(line)) or (following and _ANY_VERB.search(line))):
        # A date with its time of day and an address, or an attribution's verb, directly over the quote,
        # however the line ends (Armenian ends on its own sign or a full stop, Malayalam on its verb after
        # the address, Malay and Slovenian with no colon, Hebrew with it first): a mail program's
        # attribution. A customer's sentence above a quote names no sender's address and the time the
        # quoted message was sent; "On 3 Dec 2026 at 10:15" alone names no writer and stays.
        return True
    if quote_under and len(line.split()) <= 8 and _SENDER_LAST.search(line) and not label_line(line):
        # A word or two and the sender's "Name <address>" last over the quote, a colon of any script or none
        # (Horde IMP's "Quoting %f:" as its translators write it: "Alinti Alice <a@x>", "សម្រង់ Alice <a@x> ៖").
        # Not a field ("Signed-off-by: Alice <a@x>" over the quote a patch's writer answers).
        return True
    if not following and ADDRESS.search(line):
        # An address and a colon: blank lines may stand between it and the quote ("… <john@x> napisao je:"
        # / "" / "> …"), as Gmail writes it in every language. A sentence names no address at its end.
        following = quote_under
    if not following:
        return False
    if line.endswith((":", "\uff1a")) and (ADDRESS.search(line) or DIGIT.search(line)):
        return True
    return _bare_lead_in(line)  # its verb's own ending: a colon, or a language's own sign


def _dated(line: str) -> bool:
    """Whether a line names a date (a year, or a date in digits) and a time of day."""
    return bool(TIME.search(line) and (YEAR.search(line) or _NUMERIC_DATE.search(line)))


def _mail_date_lead(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a Date header's value with a word or two before it ("El Mon, 01 Dec 2025
    10:05:00 +0000"), directly over an attribution or a quote: the first line of Claws Mail's "On %d" /
    "%f wrote:" in any language. No person types a date as a mail program writes it."""
    date = _MAIL_DATE.search(lines[index])
    if not date or len((lines[index][: date.start()] + lines[index][date.end() :]).split()) > 3:
        return False
    under = line_under(lines, index)
    return under is not None and (quoted(lines[under]) or generic_attribution(lines, under))


def _bare_lead_in(line: str) -> bool:
    """Whether a line is a name and an attribution's verb, nothing else: "John wrote:", "Ysgrifennodd
    John:" (the verb first). Why a name only (one to four words, each capitalised or of a script without
    capitals): "Here is what John wrote:" or "Your courier wrote:" above a quote the customer pasted is
    the customer's own sentence, and stays."""
    caseless = _CASELESS_BARE.search(line)
    if caseless:
        # "田中さんは書きました:", "홍길동님이 작성:", "张三写道:": a name in a script without capitals,
        # one to four words of its letters (no sentence of Latin words: "Our team 写道:" is not a name).
        name = line[: caseless.start()].split()
        if 1 <= len(name) <= 4 and all(_caseless_letter(word[0]) for word in name):
            return True
    first = _BARE_VERB_FIRST.match(line.strip())
    if first:
        return _a_name(first.group("name").split())
    verb = _BARE_VERB.search(line)
    if not verb:
        return False
    name = line[: verb.start()].strip()
    if len(name) > 2 and name[0] == name[-1] == '"':  # '"Paul F. Dubois" schrieb:' (Netscape's German)
        name = name[1:-1]
    return _a_name(name.split())


def _a_name(words: list[str]) -> bool:
    """One to four words, each capitalised or of a script without capitals: a name, not a sentence."""
    return 1 <= len(words) <= 4 and all(word[0].isupper() or _caseless_letter(word[0]) for word in words)


def _caseless_letter(char: str) -> bool:
    """A letter of a script without capitals (Chinese, Japanese, Korean, Hebrew, Arabic …)."""
    return char.isalpha() and not char.isupper() and not char.islower()
