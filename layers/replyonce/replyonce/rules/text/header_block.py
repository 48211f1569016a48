"""Header blocks of quoted messages: Outlook's "From: … Sent: … To: … Subject: …", localised, and the
"Field: value" runs of any language.

Why a table of field *kinds* rather than one pattern per language: a block is recognised by the kinds
of its fields (from, date, to, subject), whatever language each is in. Where the language is
unknown, the shape decides instead (a run of label lines with a date and an address), and a shape
only ever marks a doubt (:func:`~replyonce.rules.text.history.mark_doubts`), it never cuts."""

import functools
import itertools
import re
import unicodedata

from replyonce.rules.text.lines import ADDRESS, DIGIT, TIME, YEAR, line_under, quoted
from replyonce.rules.text.titles import ORIGINAL_MESSAGE, ORIGINAL_THEN_FIELD

# Outlook's header block, localised. Why a table rather than one regex per language: a block is
# recognised by the *kinds* of its fields (from, date, to, subject), whatever language each is in.
_FIELD_KINDS = {
    "from": (
        "from", "von", "de", "da", "från", "fra", "od", "от", "van", "lähettäjä", "feladó", "kimden",
        "发件人", "寄件者", "寄件人", "差出人", "보낸 사람", "expéditeur", "nadawca",
    ),
    "sent": (
        "sent", "gesendet", "envoyé", "envoye", "enviado", "enviada", "enviada em", "inviato", "skickat",
        "sendt", "wysłano", "wysłane", "отправлено", "verzonden", "verstuurd", "sent on", "lähetetty",
        "发送时间", "傳送時間", "寄件日期", "送信日時", "보낸 날짜", "envoyé le",
    ),
    "date": ("date", "datum", "data", "fecha", "дата", "日期", "날짜", "message du"),
    "to": (
        "to", "an", "à", "a", "para", "till", "til", "do", "кому", "aan", "vastaanottaja", "收件人", "收件者",
        "宛先", "받는 사람", "destinataire", "adresat",
    ),
    "cc": ("cc", "kopie", "copie à", "kopia", "копия", "dw", "kopio", "抄送", "副本", "참조"),
    "subject": (
        "subject", "betreff", "objet", "asunto", "oggetto", "ämne", "emne", "temat", "тема", "onderwerp",
        "assunto", "aihe", "tárgy", "konu", "sujet", "主题", "主旨", "件名", "제목",
    ),
    "reply-to": ("reply-to", "risposta", "antwort an", "responder a"),
}  # fmt: skip
_FIELD_KIND = {name: kind for kind, names in _FIELD_KINDS.items() for name in names}
_FIELD = re.compile(
    r"^\s*[*_]{0,2}(?P<name>[^\W\d_][^\W\d_ -]*(?:[- ][^\W\d_]+)?)[*_]{0,2}\s*[:\uff1a][*_]{0,2}\s*"
)
# A field name glued to the value before it, on one line ("… 13:46Nadawca: … Adresat:"): only names of
# four letters or more, so "a:" or "to:" inside a sentence never splits one.
_GLUED_FIELD = re.compile(
    r"(?<![^\W\d_])(?:"
    + "|".join(re.escape(name) for name in sorted(_FIELD_KIND, key=len, reverse=True) if len(name) >= 4)
    + r")\s*[:\uff1a]",
    re.I,
)
_FORWARDED_SUBJECT = re.compile(r"^\W*(?:fwd?|wg|tr|rv|i|vs|vb|pd|enc|doorst|trs|пересл|fw)\s*:", re.I)
# A subject that says its message is a reply ("RE: FW: x", "AW: x", "Odp: x"): the message's own. The
# prefixes mail programs' translators write for "Re:" (NOCC's among them): Arabic, Persian, Hebrew,
# Bulgarian, Serbian and Croatian, Ukrainian, Brazilian Portuguese, Turkish, Italian, Korean, Japanese,
# Tamil, Greek.
REPLY_SUBJECT = re.compile(
    r"^\W*(?:re|aw|sv|antw|odp|ris|rif|ynt|отв|回复|答复|回覆"
    r"|رد|پاسخ|תגובה|отг|одг|odg|відп|res|yanıt|risposta|회신|返信|பதில்|απ|σχετ)(?:\[\d+\])?\s*[:\uff1a]",  # noqa: RUF001
    re.I,
)
# Zero-width space, non-joiner, joiner, word joiner, soft hyphen: invisible inside a word.
_JOINERS = frozenset("\u200b\u200c\u200d\u2060\u00ad")


def _field_kind(line: str) -> str | None:
    """The kind of header field a line is (``from``, ``sent``, …), or ``None``. A value that is a
    sentence is no field: "From: the beginning, I thought this was a good idea." is the customer's (a
    field's value names, dates or titles; it does not end five words or more with a full stop)."""
    field = _FIELD.match(line)
    if not field:
        return None
    value = line[field.end() :].strip()
    words = value.split()
    if len(words) >= 5 and value.endswith(".") and not (ADDRESS.search(value) or DIGIT.search(value)):
        return None
    return _FIELD_KIND.get(field.group("name").lower())


def _block_lines(lines: list[str], start: int) -> list[str]:
    """The lines of a header block from ``start``: up to a blank line, unless a field follows it (an HTML
    client writes each field as a paragraph: "Gesendet: …", "", "Von: …", "", "An: …")."""
    block: list[str] = []
    index = start
    while index < len(lines) and index < start + 12:
        if not lines[index].strip():
            following = next((i for i in range(index, len(lines)) if lines[i].strip()), len(lines))
            if not (block and following < len(lines) and _field_kind(lines[following])):
                break
            index = following
        block.append(lines[index])
        index += 1
    return block


def split_run_together_headers(lines: list[str]) -> list[str]:
    """Lines, with a header block written on one line split into its fields.

    Why: a client may lose the line breaks of the block it quotes ("Temat: RE: … 13:46Nadawca: "x"
    <a@x> Adresat:"), or the one under its dashed title ("-Reply message ----- From: …": the title
    goes on a line of its own when a from-field naming an address, on it or the next line, follows
    it). Only a line that opens with a field, holds an address and two more fields, one of them a
    sender and one glued to the text before it (the lost break), is split: "Subject: order 1042 From:
    Alice <a@x> To: the courier" typed by a customer stays whole.
    """
    out: list[str] = []
    for index, line in enumerate(lines):
        titled = None if quoted(line) else ORIGINAL_THEN_FIELD.match(line)
        addressed = titled and ADDRESS.search(" ".join([titled.group(2), *lines[index + 1 : index + 2]]))
        if (
            titled
            and addressed
            and _field_kind(titled.group(2)) == "from"
            and ORIGINAL_MESSAGE.match(titled.group(1))
        ):
            out.extend([titled.group(1).strip(), titled.group(2)])  # the title, then the block under it
            continue
        field = None if quoted(line) else _FIELD.match(line)
        glued = list(_GLUED_FIELD.finditer(line, field.end())) if field and _field_kind(line) else []
        names = [_FIELD_KIND[m.group(0).rstrip(" :\uff1a").lower()] for m in glued]
        lost_break = any(not line[m.start() - 1].isspace() for m in glued)  # "13:46Nadawca:"
        if lost_break and len(glued) >= 2 and ADDRESS.search(line) and "from" in [_field_kind(line), *names]:
            cuts = [0, *(m.start() for m in glued), len(line)]
            out.extend(line[a:b].strip() for a, b in itertools.pairwise(cuts))
        else:
            out.append(line)
    return out


_WORD_COLON = re.compile(r"[^\W_]+ ?[:\uff1a](?=\s|$)")  # "Sent:", "bodyFrom:", "PMTo:", "Lähetetty:"
_LABEL_LINE = re.compile(  # "Field: value", the field one to three words of letters ("A-berzh"), any script
    r"^\s*[*_]{0,2}(?P<label>[^\W\d_]+(?:-[^\W\d_]+)*(?: [^\W\d_]+(?:-[^\W\d_]+)*){0,2})[*_]{0,2} ?"
    r"[:\uff1a\u055d][*_]{0,2}\s*(?P<value>\S.*)$"
)  # Armenian marks a label with its own sign (U+055D, after "Ումից"), where others write a colon.
_NOT_LABELS = frozenset({"http", "https", "mailto", "ftp", "tel", "re", "fw", "fwd", "aw", "wg", "sv", "vs"})


def _field_names(line: str) -> list[tuple[int, bool]]:
    """The field-like words of a line ("Word:", capitalised, in any script): where each starts, and
    whether it is glued to the text before it ("bodyFrom:", "PMTo:", "EMAILSent:", "below.From:"), a line
    break lost."""
    found = []
    for match in _WORD_COLON.finditer(line):
        word = match.group(0).rstrip(" :\uff1a")
        # The name is the last capitalised run: "bodyFrom" -> "From", "EMAILSent" -> "Sent".
        start = next(
            (
                i
                for i in range(len(word) - 2, -1, -1)
                if word[i].isupper() and word[i + 1].islower() and word[i:].isalpha()
            ),
            None,
        )
        if start is not None:
            touching = match.start() > 0 and not line[match.start() - 1].isspace()  # "below.From:"
            found.append((match.start() + start, start > 0 or touching))
    return found


def glued_block(line: str) -> int | None:
    """Where an older message's header block starts on a line whose breaks were lost: three field-like
    words or more, two of them glued to the text before ("New email bodyFrom: … Sent: … PMTo: …"), and
    a date, a time or an address among them (or four fields). A customer's sentence does not glue two
    fields; a pasted error ("Errors: JavaScript: TypeError: …") names no date."""
    names = _field_names(line)
    glued = [start for start, is_glued in names if is_glued]
    if len(names) < 3 or len(glued) < 2:
        return None
    if len(names) < 4 and not (TIME.search(line) or YEAR.search(line) or ADDRESS.search(line)):
        return None
    first = names[0][0]
    return first if line[:first].strip() else 0


@functools.lru_cache(maxsize=4096)
def _letters(line: str) -> str:
    """A line as a pattern of letters reads it: composed (NFC), its combining marks and joiners left out.

    Why: a combining mark is no letter to a pattern. A vowel sign of Devanagari, Tamil or Malayalam, an
    Arabic vowel mark, a caron a translator typed apart from its "s" ("Išsiųsta"), Malayalam's zero-width
    joiner would end a field's name mid-word, and the block under it would pass as the customer's words.
    """
    if line.isascii():
        return line
    composed = unicodedata.normalize("NFC", line)
    return "".join(c for c in composed if not unicodedata.category(c).startswith("M") and c not in _JOINERS)


def label_line(line: str) -> re.Match[str] | None:
    """``line`` as a "Field: value" line (:data:`_LABEL_LINE`), its letters read by :func:`_letters`."""
    return _LABEL_LINE.match(_letters(line))


def glued_block_sure(text: str) -> bool:
    """Whether a header block whose breaks were lost names a sender for sure: a from-field, two more fields
    of other kinds the table knows, and an address ("From: a@x.exampleDate: …To: …Subject: …", Outlook's
    compressed block). A customer's sentence glues no three known fields around an address."""
    names = (text[start:].split(":", 1)[0].strip().lower() for start, _ in _field_names(text))
    kinds = {_FIELD_KIND[name] for name in names if name in _FIELD_KIND}
    return "from" in kinds and len(kinds) >= 3 and bool(ADDRESS.search(text))


def _label_run(lines: list[str], start: int) -> int:
    """How many "Field: value" lines in a row start at ``lines[start]`` (no blank line between)."""
    end = start
    while end < len(lines):
        label = label_line(lines[end])
        if not label or quoted(lines[end]) or label.group("label").lower() in _NOT_LABELS:
            break
        if label.group("value").startswith("//"):
            break
        end += 1
    return end - start


def header_run(lines: list[str], start: int) -> bool:
    """Whether an older message's header block in a language the field table does not hold starts at
    ``lines[start]``: three "Field: value" lines or more in a row, one value a date or a time, and one an
    address (or four fields or more). Order details a customer pastes ("Date: … / Subject: Order 1042")
    are two fields; a contact form names no date."""
    run = _label_run(lines, start)
    if run < 3:
        return False
    values = [label_line(line).group("value") for line in lines[start : start + run]]
    dated = any(YEAR.search(value) or TIME.search(value) for value in values)
    return dated and (run >= 4 or any(ADDRESS.search(value) for value in values))


def answered_block(lines: list[str], start: int, subject: str) -> bool:
    """Whether the "Field: value" run at ``lines[start]`` heads the message this one answers: the message's
    own subject says it is a reply ("Re: x", "AW: x") and a value of the run is the subject it answers
    ("x"). A run in a language the field table does not hold is then history for sure: a forward's
    subject says "Fwd:", and order details a customer pastes do not repeat the subject they answer."""
    answered = subject
    while prefix := REPLY_SUBJECT.match(answered):
        answered = answered[prefix.end() :]
    if answered == subject or not answered.strip():
        return False
    key = " ".join(_letters(answered).split()).casefold()
    values = (label_line(line).group("value") for line in lines[start : start + _label_run(lines, start)])
    return any(" ".join(value.strip(" *_").split()).casefold() == key for value in values)


def header_block_sure(lines: list[str], start: int) -> bool:
    """Whether a header block found at ``lines[start]`` names a sender: a from-field with an address, or
    a from-field and a "Sent" field. Pasted order details ("Date: … / Subject: Order 1042") have neither."""
    kinds, addressed = set(), False
    for line in _block_lines(lines, start):
        field = _FIELD.match(line)
        kind = _FIELD_KIND.get(field.group("name").lower()) if field else None
        if kind:
            kinds.add(kind)
            addressed = addressed or (kind in ("from", "to", "cc") and bool(ADDRESS.search(line)))
    return addressed or ("from" in kinds and ("sent" in kinds or "date" in kinds))


def header_block(lines: list[str], start: int) -> tuple[bool, bool]:
    """Whether an Outlook header block starts at ``lines[start]``, and whether it heads a forward.

    A block is two or more header fields of different kinds, in a row (a field's value may wrap),
    the first a sender, date or subject (or a recipient, with a sender below it), with an address, a
    "Sent" or a subject among them.
    Why that much: "From: Berlin / To: Paris / Date: 1 Dec" in a customer's own words is no header block.
    """
    opening = _field_kind(lines[start])
    if opening not in ("from", "sent", "date", "subject", "to", "cc"):
        return False, False
    kinds: set[str] = set()
    values: list[str] = []
    subject = ""
    wrapped = 0
    for line in _block_lines(lines, start):
        field = _FIELD.match(line)
        kind = _field_kind(line)
        if kind and field:
            kinds.add(kind)
            value = line[field.end() :].strip(" *_")
            values.append(value)
            subject = value if kind == "subject" and not subject else subject
            wrapped = 0
        else:
            wrapped += 1
            if wrapped > 2:
                break
            values.append(line)
    sure = "sent" in kinds or "subject" in kinds or any(ADDRESS.search(v) for v in values)
    # A client writes who sent the message it quotes: a from-field, or an address in the block. Without
    # either, "Date: 3 December / Subject: Order 1042" is what the customer pasted, not a header block.
    sender = "from" in kinds or any(ADDRESS.search(v) for v in values)
    # Some clients open the block with the recipient ("To: … / From: … / Subject: …"): a block, when a
    # from-field names its sender; "To: Paris / From: Berlin / Date: 1 Dec" has no "Sent" or subject.
    if opening in ("to", "cc") and "from" not in kinds:
        return False, False
    if len(kinds) >= 2 and sure and sender:
        return True, bool(_FORWARDED_SUBJECT.match(subject))
    return False, False


def header_subject_forwarded(lines: list[str], start: int) -> bool:
    """Whether the first header block within a few lines below ``start`` heads a forward."""
    for index in range(start, min(start + 6, len(lines))):
        found, forwarded = header_block(lines, index)
        if found:
            return forwarded
    return False


def lone_sender(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a from-field naming an address, alone ("From: a@x"), with more under
    it or as a paragraph of its own at the end (Yahoo's "From: …-noreply@yahoogroups.com" under a blank
    line): a client's remnant of an older message's header, or what the customer typed ("From:
    scam@example.com" above their own account of it). One field is no header block, so the reader cannot
    tell: the rest goes behind :data:`UNSURE_MARKER`. "From: Berlin" names no address and stays, and so
    does a last line that ends the customer's paragraph ("Please write back to me at" / "From: a@x")."""
    line = lines[index]
    if _field_kind(line) != "from" or not ADDRESS.search(line):
        return False
    return any(line.strip() for line in lines[index + 1 :]) or (index > 0 and not lines[index - 1].strip())


def sender_under(lines: list[str], index: int) -> bool:
    """Whether the first line under ``lines[index]`` that holds anything is a from-field naming an address
    (an older message's header, or its remnant, starts there)."""
    after = line_under(lines, index)
    return after is not None and _field_kind(lines[after]) == "from" and bool(ADDRESS.search(lines[after]))


def block_under(lines: list[str], index: int) -> bool:
    """Whether a header block starts on the first line under ``lines[index]`` that holds anything."""
    after = line_under(lines, index)
    return after is not None and header_block(lines, after)[0]


def block_subject(lines: list[str], start: int) -> str:
    """The subject field's value of the header block at ``lines[start]`` (``""``: none)."""
    for line in _block_lines(lines, start):
        field = _FIELD.match(line)
        if field and _field_kind(line) == "subject":
            return line[field.end() :].strip(" *_")
    return ""
