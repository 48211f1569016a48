"""A message body as the agent should read it: the customer's new words, without the quoted history.

Why: Nylas gives the body as HTML (sometimes plain text), and a customer's
reply quotes everything before it ("On … wrote:", ``>`` lines, Outlook's
"From: … Sent: …" block). Shown as is, the agent would read its own earlier
reply as if the customer had written it. Cut naively at the first quote, the
agent loses what a customer wrote *below* or *between* quoted blocks.

What :func:`new_text` keeps, in the order written:

- top-posted: the words above the quote; the quote and its attribution go;
- bottom-posted and interleaved: every block of new words; each quoted block
  that stands *before* new words becomes one line ``[quoted text]``
  (:data:`QUOTE_MARKER`), so the agent knows the customer is answering
  something, without reading the quote as theirs; quoted history after the
  last new words goes without a marker;
- forwarded: the note *and* the forwarded message from its marker
  ("---------- Forwarded message ---------", "Begin forwarded message:", an
  Outlook block whose Subject says FW:/WG:/TR:…), the customer means the
  agent to read it;
- nothing new (only quoted history): ``""``, never the quote.

Signatures go only when they are signatures: the RFC 3676 section 4.3
delimiter line ``-- `` (``--`` too) and a mail client's trailing line ("Sent
from my iPhone", "Von meinem iPhone gesendet", "Get Outlook for iOS", and what
phones write in other languages and scripts: "iPhoneから送信", "發自我的iPhone",
"나의 iPhone에서 보냄", "iPhone'umdan gönderildi" …, where a sentence could begin
the same way only with a phone's or a mail program's name) at the very end of
the new words; "Sent from my desk, which …" in a sentence stays.

How: the body becomes lines (HTML: block elements are line breaks,
``<blockquote>`` becomes ``>`` lines, Outlook's reply divider a history
mark), and each line is classified: quoted, attribution (localised "On …
wrote:" forms in English, German, French, Spanish, Italian, Dutch,
Portuguese, Swedish, Danish, Norwegian, Polish, Russian, Ukrainian,
Vietnamese and more, a bare "Name wrote:" over a quote, in scripts without
capitals too: "田中さんは書きました", "홍길동님이 작성", "张三写道"; wrapped over up
to five lines or standing after text on the same line), the start of
unquoted history (an Outlook header block in those languages,
"-----Original Message-----", an attribution followed by unquoted text), a
forward marker, a signature, or new text.

Why these rules and not a library, by measurement (``scripts/measure_new_text.py``
on the public fixture sets of talon, github/email_reply_parser and
discourse/email_reply_trimmer, 150 bodies; figures and command in
``docs/agents.md``): exact on 136 (91 %; the 14 misses are all where the peer
expects what this contract does not: a forward dropped, a client footer kept,
a sign-off taken for a signature), and no quoted history returned as new
text. The previous version, quotequail plus trailer rules, was exact on 78
(52 %, bodies as Nylas gives them) and returned quoted history as new text for
25; quotequail alone 73, mail-parser-reply 61. Both libraries keep only the text
above the first quote, which is what loses a bottom-posted or interleaved
answer and a forward; quotequail also misses the Italian, Danish and Polish
Outlook blocks and a Polish or Russian attribution over unquoted history
(rows in ``tests/unit/test_text.py``). So nothing here imports either.
"""

import functools
import html
import itertools
import re
import unicodedata
from html.parser import HTMLParser

QUOTE_MARKER = "[quoted text]"
"""The line that stands in the new text where the customer quoted something and then wrote below it."""

UNSURE_MARKER = "[not sure where the quoted text starts; the rest of the message follows]"
"""The line below which the reader could not tell the customer's words from quoted history.

Above it: the customer's new words, for sure. Below it, as received: what may be history (an
attribution with no address, a header block with no sender, text after a phone's footer) or may be
the customer's own words. The reader never drops those words and never hands history over as new:
it hands the doubt over."""

# ---------------------------------------------------------------------------------------------------------
# HTML → lines

_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre"}
)
_VOID_TAGS = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "col", "area", "base", "source"})
_DROPPED_TAGS = frozenset({"script", "style", "head", "title"})
# Outlook's container of the sender's signature (<div id="Signature">, "x_Signature" once quoted): the
# program's own word that a signature starts there, written as the "-- " line (RFC 3676 §4.3) it stands for.
_SIGNATURE_BLOCK = re.compile(r"(?:^|\s)(?:x_)?Signature(?:-\w+)?(?=\s|$)")
_PRE_STYLE = re.compile(r"white-space\s*:\s*pre", re.I)  # pre, pre-wrap, pre-line: the source's breaks show
# Markup of quoted history for html_to_text: containers whose content is the quote (Gmail, Apple Mail),
# and markers after which everything is (Outlook's reply divider).
_QUOTE_MARKERS = re.compile(r"gmail_quote|AppleMailQuote")
_HISTORY_STARTS = re.compile(r"appendonsend|divRplyFwdMsg|OutlookMessageHeader")
# Where Outlook's divider stood, for new_text: history from here on, unless the header says forward.
# A private-use character: it cannot come from a real body's text.
_HISTORY_MARK = "\ue000"
# Where a structural sign says history may start (:func:`_mark_doubts`): the rest goes behind
# UNSURE_MARKER. A private-use character, as the history mark is: no mail holds it as a line.
_DOUBT_MARK = "\ue001"
_MARKS = (_HISTORY_MARK, _DOUBT_MARK)
# Only real markup makes a body HTML: a plain-text body is full of "<alice@example.com>".
_LOOKS_HTML = re.compile(
    r"<(?:!doctype|html|head|body|div|p|br|span|table|tr|td|blockquote|a|b|i|u|font|meta|style|ul|ol|li|"
    r"h[1-6]|hr|pre|img|strong|em|center|o:p)(?=[\s/>])[^<>]*>|</[a-z][a-z0-9:]*\s*>",
    re.I,
)
# A document's own tags: a body holding one is HTML, whatever else it holds.
_DOCUMENT_TAG = re.compile(r"<(?:!doctype|html|head|body|meta|style)(?=[\s/>])", re.I)
# Tags that break lines: an HTML body without one has no lines to read (a plain body may name one).
_LINE_TAG = re.compile(r"<(?:br|p|div|tr|li|table|blockquote|pre|h[1-6]|hr)(?=[\s/>])", re.I)
# Outlook's and Word's bookmarks ("<a name=\"_MailEndCompose\">", "<a name=\"OLE_LINK1\">"): anchors no
# reader sees, that only a mail program writes. A body holding one is HTML, a fragment without its document.
_BOOKMARK = re.compile(r"<a\s+name=[\"']?(?:_Mail[A-Za-z]+|OLE_LINK\d+)[\"']?\s*>", re.I)
# What real HTML never holds, because its writer escapes "<" as "&lt;": an address or a link in angle
# brackets ("Acked-by: Mel <mel@csn.ul.ie>", "<https://…>"), or a bare word no HTML element is named
# ("use <drivername> there"). A body holding one is plain text that happens to hold a tag.
_PLAIN_SIGN = re.compile(
    r"<[^<>\s\"'=/]+@[^<>\s\"'=]+>|<(?:https?|mailto|ftp):[^<>\s]+>|<(?P<word>[a-z][a-z0-9_-]*)>", re.I
)
# fmt: off
_HTML_ELEMENTS = frozenset((
    "a", "abbr", "address", "article", "aside", "audio", "b", "bdi", "bdo", "big", "blockquote",
    "body", "br", "button", "caption", "center", "cite", "code", "col", "colgroup", "data", "dd",
    "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "font", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "i", "iframe", "img", "input",
    "ins", "kbd", "label", "legend", "li", "link", "main", "mark", "meta", "nav", "noscript", "ol",
    "option", "p", "picture", "pre", "q", "s", "samp", "section", "select", "small", "source", "span",
    "strike", "strong", "style", "sub", "summary", "sup", "svg", "table", "tbody", "td", "template",
    "textarea", "tfoot", "th", "thead", "time", "title", "tr", "tt", "u", "ul", "var", "video", "wbr",
    "xml", "script", "object", "param", "embed", "canvas", "frame", "frameset", "applet", "basefont",
    "blink", "marquee", "nobr", "acronym", "dir", "menu", "ruby", "rt", "rp", "output", "progress",
    "meter", "fieldset", "optgroup", "datalist", "math", "listing", "xmp", "dialog", "hgroup", "area",
    "base", "abbr", "figure", "map", "caption", "tbody",
))
# fmt: on
_BLANK_LINES = re.compile(r"\n{3,}")
_SPACES = re.compile(r"[ \t\f\v\u00a0\u200b\u200c\u200d\ufeff]+")
_HTML_DELIMITER = re.compile(r"[\t ]*--[ \u00a0][ \t\u00a0]*")  # a source's line break is a tab (_Renderer)


class _Renderer(HTMLParser):
    """HTML → lines, each with how deeply it is quoted (open ``<blockquote>`` elements).

    A line break in the HTML source is a space, as a browser shows it, except inside ``<pre>`` or an
    element styled ``white-space: pre…`` (a program that formats its source, or wraps it at 76 columns,
    would otherwise cut a sentence, or a footer from the program it names, in two).

    ``quotes=False`` is :func:`html_to_text`: quoted containers and everything after Outlook's divider
    are dropped. ``quotes=True`` is :func:`new_text`: a blockquote's lines are kept as quoted lines and
    Outlook's divider becomes :data:`_HISTORY_MARK`, because the line rules decide what is new — a
    customer's words after a blockquote, an Outlook *forward* after the divider.
    """

    def __init__(self, *, quotes: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[tuple[int, str]] = []
        self._quotes = quotes
        self._line: list[str] = []
        self._line_depth = 0
        self._depth = 0
        self._skipping: list[str] = []  # the open tags whose content is dropped
        self._history = False  # past a marker after which everything is quoted history (quotes=False)
        self._pre: list[str] = []  # open <pre> (or white-space: pre) elements: the source breaks lines

    def _break(self) -> None:
        self.lines.append((self._line_depth, "".join(self._line)))
        self._line = []
        self._line_depth = self._depth

    def _end_line(self) -> None:
        """End the line being written, if any: a block boundary is a line break, not a blank line
        (Gmail writes every line as a ``<div>``, a blank one as ``<div><br></div>``)."""
        if self._line:
            self._break()

    def _text(self, data: str) -> None:
        for index, piece in enumerate(data.split("\n")):
            if index:
                self._break()
            if piece:
                if not self._line:
                    self._line_depth = self._depth
                self._line.append(piece)

    def _mark(self, markers: str) -> None:
        """What a program's class or id marks at this element: Outlook's reply divider (history from here
        on), or its signature container (written as the RFC 3676 "-- " line the line rules know)."""
        if self._skipping:
            return
        if _HISTORY_STARTS.search(markers):
            if not self._quotes:
                self._history = True
            elif not self._depth:
                self._end_line()
                self._text(_HISTORY_MARK + "\n")
        if not self._history and not self._depth and _SIGNATURE_BLOCK.search(markers):
            self._end_line()
            self._text("-- \n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        markers = " ".join(value or "" for name, value in attrs if name in ("class", "id"))
        self._mark(markers)
        if self._history:
            return
        if self._skipping:
            if tag not in _VOID_TAGS:
                self._skipping.append(tag)
            return
        quote = tag == "blockquote" or (not self._quotes and _QUOTE_MARKERS.search(markers))
        if tag in _DROPPED_TAGS or (quote and not self._quotes):
            self._skipping.append(tag)
            return
        style = " ".join(value or "" for name, value in attrs if name == "style")
        if (tag == "pre" or _PRE_STYLE.search(style)) and tag not in _VOID_TAGS:
            self._pre.append(tag)
        if tag == "br":
            self._break()
        elif tag in _BLOCK_TAGS or tag == "blockquote":
            self._end_line()
        if quote:
            self._depth += 1
            self._line_depth = self._depth

    def handle_endtag(self, tag: str) -> None:
        if self._history:
            return
        if self._skipping:
            if tag in self._skipping:
                while self._skipping and self._skipping.pop() != tag:
                    pass
            return
        if self._pre and self._pre[-1] == tag:
            self._pre.pop()
        if tag in _BLOCK_TAGS or tag == "blockquote":
            self._end_line()
            if tag == "p":
                self._break()  # a paragraph ends with a blank line
        if tag == "blockquote" and self._depth:
            self._depth -= 1
            self._line_depth = self._depth

    def handle_data(self, data: str) -> None:
        if not self._skipping and not self._history:
            # A line break in HTML's source is white space, as a browser shows it (not in <pre>); a tab, so
            # that a space the sender's program wrote stays apart from one the source's layout made.
            self._text(data if self._pre else data.replace("\n", "\t"))


def _is_html(body: str) -> bool:
    """Whether a body is HTML (as Nylas gives HTML mail) rather than plain text that holds a tag.

    Why: a plain-text body read as HTML loses every word in angle brackets ("<mel@csn.ul.ie>",
    "<drivername>") and its line breaks; a list's footer with an ``<a href=…>`` line, or a developer
    naming ``<br>``, must not make it HTML. Markup makes a body HTML only when the document's own tags
    say so (or a mail program's bookmark, :data:`_BOOKMARK`), or when it breaks lines with tags and holds
    nothing real HTML escapes.
    """
    if not _LOOKS_HTML.search(body):
        return False
    if _DOCUMENT_TAG.search(body) or _BOOKMARK.search(body):
        return True
    if not _LINE_TAG.search(body):
        return False  # no tag breaks a line: its lines are the text's own (one line of HTML reads the same)
    return not any(
        not match.group("word") or match.group("word").lower() not in _HTML_ELEMENTS
        for match in _PLAIN_SIGN.finditer(body)
    )


def _rendered(body: str, *, quotes: bool) -> str:
    renderer = _Renderer(quotes=quotes)
    renderer.feed(body)
    renderer.close()
    renderer._end_line()
    lines = []
    for depth, line in renderer.lines:
        # "-- <br>" (or Gmail's "--&nbsp;") is the RFC 3676 delimiter the sender's program wrote: a browser
        # does not show its space, but the space is there, and the line rules cut at "-- " as in plain text.
        delimiter = not depth and _HTML_DELIMITER.fullmatch(line)
        line = _RFC_DELIMITER if delimiter else _SPACES.sub(" ", line).strip()
        lines.append((">" * depth + " " + line).rstrip() if depth else line)
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def html_to_text(body: str) -> str:
    """The text of an HTML body: block elements become line breaks; quoted blocks, scripts, styles go.

    Parameters
    ----------
    body
        An HTML body; a body without markup is returned as it is, entities decoded (Nylas gives
        plain-text mail as is, and its "<alice@example.com>" is no tag).

    Returns
    -------
    str
        The text, without ``<blockquote>``, Gmail's and Apple Mail's quote containers and what follows
        Outlook's reply divider. Unlike :func:`new_text`, it does not look at the text itself.
    """
    if not _is_html(body):
        return html.unescape(body).strip()
    return _rendered(body, quotes=False)


# ---------------------------------------------------------------------------------------------------------
# Line classes

_QUOTED = re.compile(r"^\s*(?:>|[A-Z][A-Za-z]{0,9}>(?=\s|$))")  # "> …", and Supercite's "Bob> …"
_ONE_LEVEL = re.compile(r"^(\s*)> ?")
_WRAP_WIDTH = 72  # where mail clients wrap plain text (RFC 3676 §4.2 recommends 66 to 78 characters)
_LINK_PIECE = re.compile(r"^\s*\(?[^\s()]*[/=_][^\s()]*\)?\s*(?P<close>>?)\s*$")  # a wrapped link's tail

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
_TIME = re.compile(r"\b\d{1,2}[:.]\d{2}\b")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|mailto:")
# A date in digits ("2025-12-01", "1/12/25", "01.12.25"), as a client writes the quoted message's.
_NUMERIC_DATE = re.compile(r"(?<!\d)\d{1,4}[./-]\d{1,2}[./-]\d{2,4}(?!\d)")
# A date as a mail program writes a Date header (RFC 5322 §3.3): "Mon, 01 Dec 2025 10:05:00 +0000".
_MAIL_DATE = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s+\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+"
    r"\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?:[+-]\d{4}|\(?[A-Z]{2,5}\)?))*"
)
_DIGIT = re.compile(r"\d")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_MAX_ATTR_LINES = 5

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
_SEPARATOR_RULE = re.compile(r"^\s*(?:[-_]{10,}|\*?-{10,}\*?)\s*$")  # Outlook's divider above its block
# Outlook's reply divider in plain text: a line of 32 underscores (30 or more), longer than the rules people
# and signature programs draw under their words ("_______________").
_OUTLOOK_DIVIDER = re.compile(r"^\s*_{30,}\s*$")
# A dashed title above a header block or a quote, in any words ("-------- Oprindelig besked --------",
# "-------- Original-Message --------", "-------- Pôvodná správa --- Original Message --------").
_DASHED_TITLE = re.compile(r"^\s*[*_]*-{3,}\s*[^\W\d_].{1,80}?\s*-{3,}[*_]*\s*$")
_ORIGINAL_TITLES = (
    r"(?:original message|reply message|ursprüngliche nachricht|original-nachricht|"
    r"antwort nachricht|oprindelig meddelelse|mensaje original|message d'origine|messaggio originale|"
    r"oorspronkelijk bericht|origineel bericht|mensagem original|ursprungligt meddelande|"
    r"opprinnelig melding|alkuperäinen viesti|wiadomość oryginalna|oryginalna wiadomość|"
    r"исходное сообщение)"
)
# "-----Original Message-----", also with one dash left of the title when three or more follow it (a
# phone's "-----Reply message-----" whose line was wrapped: "-Reply message -----").
_ORIGINAL_MESSAGE = re.compile(
    rf"^\s*[*_]*\s*(?:-{{2,}}\s*{_ORIGINAL_TITLES}\s*-{{2,}}|-\s*{_ORIGINAL_TITLES}\s*-{{3,}})\s*[*_]*\s*$",
    re.I,
)
# That title with the block's first field run together on its line ("-Reply message ----- From: …").
_ORIGINAL_THEN_FIELD = re.compile(rf"^(\s*[*_]*\s*-+\s*{_ORIGINAL_TITLES}\s*-{{3,}}[*_]*)[ \t]*(\S.*)$", re.I)
_FORWARD_TITLES = (
    r"forwarded message|weitergeleitete nachricht|message transféré|"
    r"mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|mensagem encaminhada|"
    r"videresendt meddelelse|vidarebefordrat meddelande|videresendt melding|przekazana wiadomość|"
    r"wiadomość przekazana|пересылаемое сообщение|forwarded message from.*"
)
_FORWARD = re.compile(
    rf"^\s*[*_]*\s*(?:-{{2,}}\s*(?:{_FORWARD_TITLES})\s*-{{2,}}|"
    r"begin forwarded message:|début du message réexpédié\s?:|anfang der weitergeleiteten nachricht:|"
    r"inicio del mensaje reenviado:|inizio messaggio inoltrato:|begin doorgestuurd bericht:|"
    r"início da mensagem reencaminhada:|vidarebefordrat brev:|videresendt besked:|"
    r"początek przekazywanej wiadomości:|начало переадресованного сообщения:)\s*[*_]*\s*$",
    re.I,
)
# The same title without its dashes ("Forwarded message" alone on its line, as a webmail or a helpdesk's
# converter leaves it): a forward's title only directly above the forwarded header block.
_BARE_FORWARD = re.compile(rf"^\s*[*_]*\s*(?:{_FORWARD_TITLES})\s*:?\s*[*_]*\s*$", re.I)
# A helpdesk's line over its notification ("##- Please type your reply above this line -##", "-- REPLY
# ABOVE THIS LINE --"), alone on its line: what follows it is the message the customer answers.
_REPLY_ABOVE = re.compile(
    r"^\W*(?:please\s+)?(?:(?:type|write|enter|add|put)\s+)?(?:your\s+)?(?:reply|response|answer)\s+"
    r"above\s+this\s+line\W*$",
    re.I,
)
# "Original Message" alone, its dashes lost (as a webmail or a converter leaves it): history's title when a
# from-field naming an address stands directly under it (alone, or the first of a header block).
_BARE_ORIGINAL = re.compile(rf"^\s*[*_]*\s*{_ORIGINAL_TITLES}\s*:?\s*[*_]*\s*$", re.I)
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
# "On Tue, 15 Mar 2016 12:30:19 +0000": a lead word and a date as a mail program writes it (a year, and a
# time with its seconds or its zone), nothing after it; no person ends a sentence with "12:30:19 +0000".
_MACHINE_DATE_LEAD = re.compile(
    rf"^(?:{_LEADS})\s+[^:]{{0,40}}?(?:19|20)\d{{2}}\b[^:]{{0,8}}?\d{{1,2}}:\d{{2}}"
    r"(?::\d{2}(?:\s*[AaPp][Mm])?(?:\s*(?:[+-]\d{4}|\(?[A-Z]{2,5}\)?))?"
    r"|(?:\s*[AaPp][Mm])?\s*(?:[+-]\d{4}(?:\s*\(?[A-Z]{2,5}\)?)?|\(?[A-Z]{3,5}\)?))\s*$"
)
_IN_REPLY_TO = re.compile(r"^\s*in reply to\s*:\s*$", re.I)
# A subject that says its message is a reply ("RE: FW: x", "AW: x", "Odp: x"): the message's own.
_REPLY_SUBJECT = re.compile(
    r"^\W*(?:re|aw|sv|antw|odp|ris|rif|ynt|отв|回复|答复|回覆)(?:\[\d+\])?\s*[:\uff1a]", re.I
)

_SIGNATURE_DELIMITER = re.compile(r"^--\s?$")
_RFC_DELIMITER = "-- "
# A phone's, a tablet's or a mail program's name, as footers name them.
_DEVICE = (
    r"(?:iphone|ipad|ipod|android|galaxy|samsung|huawei|honor|xiaomi|redmi|oppo|vivo|oneplus|pixel|xperia|"
    r"aquos|outlook|blackberry|华为|華為|荣耀|榮耀|小米|一加|魅族|갤럭시|삼성|手机|手機|携帯|ケータイ|"
    r"スマートフォン|スマホ|스마트폰|휴대폰|모바일|モバイル|邮箱|郵箱|邮件|郵件|メール|mail|网易|網易|qq|平板)"
)
_DEVICE_FOOTER = (
    # Dutch, Portuguese, Catalan, Italian, Scandinavian, Finnish, Estonian, the Slavic and Baltic
    # languages, Greek, Vietnamese, Indonesian, Malay, Thai: "sent from" and a phone or program.
    r"verstuurd (?:met|vanaf|vanuit|van) .+|enviado de (?:o )?meu .+|enviat des de(?:l)? .+|"
    r"inviato dal(?:l[ao]|la)? .+|sendt fra (?:mi|mitt) .+|sendt fra \S*" + _DEVICE + r"\S*|"
    r"lähetetty (?:minun )?\S+(?:sta|stä|lta|ltä)|saadetud (?:minu )?\S+|"
    r"wysłano z .+|odesláno z .+|odoslané z .+|poslan[oa]? (?:s|sa|iz) .+|poslato (?:s|sa|iz) .+|"
    r"отправлено из .+|надіслано з .+|изпратено от .+|послато са .+|išsiųsta iš .+|nosūtīts no .+|"  # noqa: RUF001
    r"στάλθηκε από .+|εστάλη από .+|(?:được )?gửi từ .+|dikirim dari .+|dihantar dari .+|ส่งจาก .+|"
    # Turkish, Hungarian, Hebrew, Arabic: the device's name comes first, or the verb alone means "sent".
    r"\S*" + _DEVICE + r"(?:\S* ){0,3}\S*(?:dan|den|tan|ten) gönderildi|"
    r"(?:az? )?\S*" + _DEVICE + r"(?:\S* ){0,3}\S*r[óő]l küldve|"
    r"נשלח מ\S*" + _DEVICE + r".*|"
    r"(?:أُرسلت|أرسلت|ارسلت|مرسل|أرسل)\s+من\s+(?:\S+\s+){0,2}\S*" + _DEVICE + r".*|"
    # Japanese ("iPhoneから送信"), Korean ("나의 iPhone에서 보냄"), Chinese ("发自我的iPhone",
    # "發自我的 iPhone", "来自网易邮箱大师", "从我的iPhone发送").
    r"[^。\uff01\uff1f]{0,30}" + _DEVICE + r"[^。\uff01\uff1f]{0,20}から送信(?:しました|されました)?|"
    r"[^.!?]{0,30}" + _DEVICE + r"[^.!?]{0,20}에서\s*(?:보냄|보냈습니다|전송됨|발송)|"
    r"(?:发自|發自|寄自|来自|來自|发送自|發送自)\s*(?:我的)?\s*[^\uff0c。\uff01\uff1f,]{0,30}?"
    + _DEVICE
    + r"[^\uff0c。\uff01\uff1f,]{0,20}|"
    r"(?:从|從)我的\s*\S.{0,30}?\s*(?:发送|傳送|發送)|"
    # "Get Outlook for iOS" in other languages: the program, the system and a verb of getting, alone.
    r"(?=[^.!?。]{0,60}$)(?=.*outlook)(?=.*(?:ios|android))"
    r".*(?:scarica|ottieni|obter|obtenha|baixe|descarga|skaffa|hämta|hent|last ned|pobierz|загрузите|"
    r"скачайте|получите|получить|lataa|indir|télécharger|herunterladen|downloaden|入手|받기|获取|獲取|取得|"
    r"下载|下載).*"
)
# A client's footer, as the last line(s) of the new words. Why the remainder rule below: "Sent from my
# cell, please excuse typos" is a footer, "Sent from my desk, is much easier" is a sentence.
_CLIENT_SIGNATURE = re.compile(
    r"^(?:sent (?:from|with|via|using|by) .+|(?:get|download) outlook for .+|outlook für .+ beziehen|"
    r"obtenir outlook pour .+|obtener outlook para .+|"
    r"envoyé (?:de|depuis) (?:mon|ma) .+|von meinem .+ gesendet|gesendet von (?:meinem )?.+|"
    r"diese nachricht wurde von meinem .+ gesendet|enviado (?:desde|de) mi .+|enviado do meu .+|"
    r"inviato da .+|verzonden (?:met|vanaf|vanuit|van) .+|sendt fra min .+|skickat från min .+|"
    r"gesendet mit (?:der |dem |meinem )?.{0,40}?(?:app|iphone|ipad|android|outlook|mail|handy|smartphone)|"
    r"trimis de pe (?:iphone|ipad|android|galaxy|samsung|mobil|telefon|outlook)\S*(?: .+)?|"
    r"(?:az? )?(?:iphone|ipad|android|galaxy|samsung|mobil|telefon|outlook)\S*r[óő]l küldve|"
    r"wysłane z .+|отправлено с .+|從我的 .+ 傳送|从我的 .+ 发送|"  # noqa: RUF001 - Cyrillic: the words' own letters
    r"\S+ from (?:my )?(?:mobile|phone|iphone|ipad|android)|from my (?:iphone|ipad|android|mobile|phone).*|"
    # An antivirus program's line under what it scanned ("… checked for viruses by Avast antivirus software").
    r"this (?:e-?mail|message) has been (?:checked|scanned) for viruses(?: and malware)? by .{1,60}|"
    # What mobile mail programs write in other languages (iOS, Samsung, Huawei, Xiaomi, Outlook's apps).
    rf"{_DEVICE_FOOTER})$",
    re.I,
)
_CLIENT_SIGNATURE_WRAPPED = re.compile(r"^(?:<<(?P<a>.+)>>|\((?P<b>.+)\))$")
_LINKS = re.compile(r"\[([^\]]*)\]\([^)]*\)|<[^>]*>|\(?\b(?:https?://|www\.)\S+\)?")
# A program's slogan after its name ("Sent from Mailspring, the extensible, open source mail client"),
# ending the line: "Sent from my office, the mail app keeps crashing" does not end with the program.
_TAGLINE = re.compile(r"^the\b[^.!?]{0,60}\b(?:e-?mail|mail)\s+(?:client|app|application|program)\s*$", re.I)
_APOLOGY = re.compile(r"^(?:please|pls|excuse|sorry|pardon|apologies|forgive)\b", re.I)
_MAILING_LIST = re.compile(r"mailing list\s*$", re.I)
# Google Groups' footer under a post ("You received this message because you are subscribed to the Google
# Groups …" / "To unsubscribe from this group …"): a list's words, never the sender's.
_GROUPS_FOOTER = re.compile(r"^\s*you received this (?:message|email) because you are subscribed\b", re.I)
_GROUPS_FOOTER_WORDS = re.compile(r"\bgoogle groups\b|\bunsubscribe\b", re.I)
# A line that ends on the sender's address in angle brackets, a colon of any script or none after it.
_SENDER_LAST = re.compile(r"<[\w.+-]+@[\w-]+\.[\w.-]+>\s*[:\uff1a\u17d6]?\s*$")
# A sender's name and address alone on a line ("Alice Example <alice@x.example>"), as some clients write
# the sender above the fields of the message they quote.
_SENDER_LINE = re.compile(r"^\s*[*_]*[^\s<>@:*_][^<>@:]{0,60}<[\w.+-]+@[\w-]+\.[\w.-]+>[*_]*\s*$")
# A list's footer under its own "--" line (LKML's "To unsubscribe … majordomo@…", Mailman's listinfo):
# one of these words, and the list's address or link.
_LIST_FOOTER_WORDS = re.compile(r"\bunsubscribe\b|\bmailing list\b|/listinfo\b|\bmajordomo\b", re.I)
_ADDRESS_OR_LINK = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|https?://\S+", re.I)
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
# Zero-width space, non-joiner, joiner, word joiner, soft hyphen: invisible inside a word.
_JOINERS = frozenset("\u200b\u200c\u200d\u2060\u00ad")
_TRACKER = "\u1427"  # "ᐧ", the alt text of a mail-tracking extension's pixel


def _quoted(line: str) -> bool:
    return bool(_QUOTED.match(line))


def _unquote(line: str) -> str:
    """One level of ``>`` off a quoted line."""
    return _ONE_LEVEL.sub(r"\1", line, count=1)


def _attribution(text: str) -> bool:
    """Whether ``text`` (one line, or a wrapped attribution joined) reads as "On … wrote:"."""
    core = " ".join(text.split()).strip(" *_")
    if not 8 <= len(core) <= 400:
        return False
    if not (core[-1] in ":-\uff1a" or core[0].isdigit()):
        # Cheap first: every form ends with a colon or dashes, or opens with a date; or it is
        # "On … <a@x> wrote" with the colon lost (a lead word, an address and a time make it sure).
        return bool(
            _VERB_AT_END.search(core) and _LEAD.match(core) and _ADDRESS.search(core) and _TIME.search(core)
        )
    if _ATTR_DASHED.match(core):
        return True
    bare = core.strip("-").strip().replace("mailto:", "")  # Outlook's "<a@x<mailto:a@x>>" holds a colon
    if _ADDRESS_LAST.search(bare) and _TIME.search(bare) and len(bare) <= 200:
        return True  # a date and time, a name, the address, a colon: "30.11.2026 10:02, Alice <a@x>:"
    date_first = _DATE_FIRST.match(bare)
    if date_first:  # Gmail in some locales: "2026-12-01 10:00 GMT+01:00 Alice <a@x>:"
        return bool(date_first.group("gmt") or _ADDRESS.search(bare))
    match = _ATTR_END.search(bare)
    if not match:
        return False
    if match.group(0).lower().startswith("sent"):
        return bool(_ADDRESS.search(bare))  # "On Monday I sent:" is a sentence; "Alice <a@x> sent:" is not
    return bool(_LEAD.match(bare) or _DIGIT.search(bare) or _ADDRESS.search(bare))


def _sure(text: str) -> bool:
    """Whether an attribution names its sender's address (or is a client's dashed form): sure enough to
    cut what follows as history even with no ``>``. Without one ("On 3 December at 10:15 your courier
    wrote:", "On Monday you wrote:") a customer may have typed it: the rest goes behind
    :data:`UNSURE_MARKER`."""
    bare = " ".join(text.split()).strip(" *_-")
    date_first = _DATE_FIRST.match(bare)
    return bool(
        _ADDRESS.search(bare)
        or _ATTR_DASHED.match(" ".join(text.split()).strip(" *_"))
        or (date_first and date_first.group("gmt"))  # Gmail's own form in some locales
        # A client's full date: a lead word or a date first, a time and a year ("W dniu 1.12.2026 o 10:00
        # … pisze:"); a customer's "On 3 December at 10:15 your courier wrote:" names no year.
        or ((_LEAD.match(bare) or _DATE_START.match(bare)) and _TIME.search(bare) and _YEAR.search(bare))
    )


def _strong(text: str) -> bool:
    """Whether an attribution is sure enough that the unquoted text after it is history, not new words."""
    bare = " ".join(text.split()).strip(" *_-")
    return bool(
        _ADDRESS.search(bare)
        or _ATTR_DASHED.match(" ".join(text.split()).strip(" *_"))
        # A time, as a client writes it: "On 3 December you wrote:" may be the customer's own sentence.
        or ((_LEAD.match(bare) or _DATE_START.match(bare)) and _TIME.search(bare))
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


def _attribution_at(lines: list[str], start: int) -> int | None:
    """The last line of an attribution starting at ``lines[start]``, if one does (shortest first)."""
    first = lines[start].strip()
    if not first or _quoted(first) or not (first[0].isdigit() or _ends_within(lines, start)):
        return None
    for end in range(start, min(start + _MAX_ATTR_LINES, len(lines))):
        if end > start and not lines[end].strip():
            continue
        if end > start and _quoted(lines[end]) and _starts(_unquote(lines[end])):
            # "On Thursday." above "> On May 17, … wrote:" is the customer's line, not the start of that
            # quoted attribution (a wrapped one may end on "> wrote:" or ">:", which starts nothing).
            return None
        if end > start and not (_starts(first) or "@" in first or "<" in first or _TIME.search(first)):
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


def _split_mid_line_attributions(lines: list[str]) -> list[str]:
    """Lines, with an attribution that starts after text on its line moved to a line of its own.

    Why: "Thanks! On Mon, … wrote:" must keep "Thanks!". Only a sure attribution (a date, an
    address) is split off, so "I answered On call duty wrote:" stays a sentence.
    """
    out: list[str] = []
    for index, line in enumerate(lines):
        if not _quoted(line) and _ends_within(lines, index):
            for match in _MID_LINE_LEAD.finditer(line):
                head, tail = line[: match.start()], line[match.end() :]
                following = [tail, *lines[index + 1 : index + _MAX_ATTR_LINES]]
                end = _attribution_at(following, 0)
                if end is not None and _strong(" ".join(following[: end + 1])):
                    out.extend([head.rstrip(" -"), tail])
                    break
            else:
                out.append(line)
        else:
            out.append(line)
    return out


def _field_kind(line: str) -> str | None:
    """The kind of header field a line is (``from``, ``sent``, …), or ``None``. A value that is a
    sentence is no field: "From: the beginning, I thought this was a good idea." is the customer's (a
    field's value names, dates or titles; it does not end five words or more with a full stop)."""
    field = _FIELD.match(line)
    if not field:
        return None
    value = line[field.end() :].strip()
    words = value.split()
    if len(words) >= 5 and value.endswith(".") and not (_ADDRESS.search(value) or _DIGIT.search(value)):
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


def _split_run_together_headers(lines: list[str]) -> list[str]:
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
        titled = None if _quoted(line) else _ORIGINAL_THEN_FIELD.match(line)
        addressed = titled and _ADDRESS.search(" ".join([titled.group(2), *lines[index + 1 : index + 2]]))
        if (
            titled
            and addressed
            and _field_kind(titled.group(2)) == "from"
            and _ORIGINAL_MESSAGE.match(titled.group(1))
        ):
            out.extend([titled.group(1).strip(), titled.group(2)])  # the title, then the block under it
            continue
        field = None if _quoted(line) else _FIELD.match(line)
        glued = list(_GLUED_FIELD.finditer(line, field.end())) if field and _field_kind(line) else []
        names = [_FIELD_KIND[m.group(0).rstrip(" :\uff1a").lower()] for m in glued]
        lost_break = any(not line[m.start() - 1].isspace() for m in glued)  # "13:46Nadawca:"
        if lost_break and len(glued) >= 2 and _ADDRESS.search(line) and "from" in [_field_kind(line), *names]:
            cuts = [0, *(m.start() for m in glued), len(line)]
            out.extend(line[a:b].strip() for a, b in itertools.pairwise(cuts))
        else:
            out.append(line)
    return out


# ---------------------------------------------------------------------------------------------------------
# Structural signs of history, whatever the language (issue #41). Each round's phrase lists fitted the
# mail measured and missed the next language; these read the shape of an older message instead. None of
# them cuts: where one holds, the rest goes behind UNSURE_MARKER (the customer's words, if they are
# there, still reach the agent, marked), unless the phrase rules above already know the start for sure.

_WORD_COLON = re.compile(r"[^\W_]+ ?[:\uff1a](?=\s|$)")  # "Sent:", "bodyFrom:", "PMTo:", "Lähetetty:"
_LABEL_LINE = re.compile(  # "Field: value", the field one to three words of letters ("A-berzh"), any script
    r"^\s*[*_]{0,2}(?P<label>[^\W\d_]+(?:-[^\W\d_]+)*(?: [^\W\d_]+(?:-[^\W\d_]+)*){0,2})[*_]{0,2} ?"
    r"[:\uff1a\u055d][*_]{0,2}\s*(?P<value>\S.*)$"
)  # Armenian marks a label with its own sign (U+055D, after "Ումից"), where others write a colon.
_NOT_LABELS = frozenset({"http", "https", "mailto", "ftp", "tel", "re", "fw", "fwd", "aw", "wg", "sv", "vs"})
_LINK_OR_URL = re.compile(r"\s*<[^<>]*>|\(?\b(?:https?://|www\.)\S+\)?")


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


def _glued_block(line: str) -> int | None:
    """Where an older message's header block starts on a line whose breaks were lost: three field-like
    words or more, two of them glued to the text before ("New email bodyFrom: … Sent: … PMTo: …"), and
    a date, a time or an address among them (or four fields). A customer's sentence does not glue two
    fields; a pasted error ("Errors: JavaScript: TypeError: …") names no date."""
    names = _field_names(line)
    glued = [start for start, is_glued in names if is_glued]
    if len(names) < 3 or len(glued) < 2:
        return None
    if len(names) < 4 and not (_TIME.search(line) or _YEAR.search(line) or _ADDRESS.search(line)):
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


def _label_line(line: str) -> re.Match[str] | None:
    """``line`` as a "Field: value" line (:data:`_LABEL_LINE`), its letters read by :func:`_letters`."""
    return _LABEL_LINE.match(_letters(line))


def _glued_block_sure(text: str) -> bool:
    """Whether a header block whose breaks were lost names a sender for sure: a from-field, two more fields
    of other kinds the table knows, and an address ("From: a@x.exampleDate: …To: …Subject: …", Outlook's
    compressed block). A customer's sentence glues no three known fields around an address."""
    names = (text[start:].split(":", 1)[0].strip().lower() for start, _ in _field_names(text))
    kinds = {_FIELD_KIND[name] for name in names if name in _FIELD_KIND}
    return "from" in kinds and len(kinds) >= 3 and bool(_ADDRESS.search(text))


def _label_run(lines: list[str], start: int) -> int:
    """How many "Field: value" lines in a row start at ``lines[start]`` (no blank line between)."""
    end = start
    while end < len(lines):
        label = _label_line(lines[end])
        if not label or _quoted(lines[end]) or label.group("label").lower() in _NOT_LABELS:
            break
        if label.group("value").startswith("//"):
            break
        end += 1
    return end - start


def _header_run(lines: list[str], start: int) -> bool:
    """Whether an older message's header block in a language the field table does not hold starts at
    ``lines[start]``: three "Field: value" lines or more in a row, one value a date or a time, and one an
    address (or four fields or more). Order details a customer pastes ("Date: … / Subject: Order 1042")
    are two fields; a contact form names no date."""
    run = _label_run(lines, start)
    if run < 3:
        return False
    values = [_label_line(line).group("value") for line in lines[start : start + run]]
    dated = any(_YEAR.search(value) or _TIME.search(value) for value in values)
    return dated and (run >= 4 or any(_ADDRESS.search(value) for value in values))


def _answered_block(lines: list[str], start: int, subject: str) -> bool:
    """Whether the "Field: value" run at ``lines[start]`` heads the message this one answers: the message's
    own subject says it is a reply ("Re: x", "AW: x") and a value of the run is the subject it answers
    ("x"). A run in a language the field table does not hold is then history for sure: a forward's
    subject says "Fwd:", and order details a customer pastes do not repeat the subject they answer."""
    answered = subject
    while prefix := _REPLY_SUBJECT.match(answered):
        answered = answered[prefix.end() :]
    if answered == subject or not answered.strip():
        return False
    key = " ".join(_letters(answered).split()).casefold()
    values = (_label_line(line).group("value") for line in lines[start : start + _label_run(lines, start)])
    return any(" ".join(value.strip(" *_").split()).casefold() == key for value in values)


def _colon_attribution(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` introduces older text in a language the rules do not know: it ends with
    a colon, names an address (or a date with its time), and unquoted text follows. (Followed by a
    quote it is an attribution: :func:`_generic_attribution`.)"""
    line = lines[index].strip()
    if not line.endswith((":", "\uff1a")) or len(line.split()) < 2:
        return False
    if not (_ADDRESS.search(line) or (_YEAR.search(line) and _TIME.search(line))):
        return False
    after = _line_under(lines, index)
    return after is not None and not _quoted(lines[after])


def _mark_doubts(lines: list[str], subject: str = "") -> list[str]:
    """Lines, with :data:`_DOUBT_MARK` above the first place a structural sign says history may start:
    a header block whose breaks were lost (split off the words before it on its line), a run of
    "Field: value" lines with a date, a line ending in a colon that names an address or a date over
    unquoted text. Only below words of the sender's own, and only where the phrase rules find no start
    of their own there (they know their languages for sure). A run that names the subject the message
    answers (:func:`_answered_block`) is history for sure: :data:`_HISTORY_MARK` instead."""
    written = False
    for index, line in enumerate(lines):
        if not line.strip() or line.strip() in _MARKS or _quoted(line):
            continue
        if _history_at(lines, index) is not None:
            # Unquoted history the phrase rules know starts here ("-----Original Message-----" over fields in
            # another language, a block of known fields over unknown ones): all below it is history.
            return lines
        glued = _glued_block(line)
        known = _attribution_at(lines, index) is not None
        if glued is not None and not known and (written or glued > 0):
            head, tail = line[:glued].rstrip(), line[glued:]
            mark = _HISTORY_MARK if _glued_block_sure(tail) else _DOUBT_MARK
            return [*lines[:index], *([head] if head else []), mark, tail, *lines[index + 1 :]]
        if (
            written
            and not known
            and (
                _header_run(lines, index)
                or _colon_attribution(lines, index)
                or _in_reply_to(lines, index)
                or _divider_alone(lines, index)
            )
        ):
            start = _history_start(lines, index)
            sure = _header_run(lines, index) and _answered_block(lines, index, subject)
            return [*lines[:start], _HISTORY_MARK if sure else _DOUBT_MARK, *lines[start:]]
        written = True
    return lines


def _in_reply_to(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is "In reply to:" alone, with unquoted text under it: a tracker's or a
    client's lead-in to the message answered, or the customer's own ("In reply to:" / "your question
    about the refund, …"). The reader cannot tell: the rest goes behind :data:`UNSURE_MARKER`."""
    if not _IN_REPLY_TO.match(lines[index]):
        return False
    return any(line.strip() and not _quoted(line) for line in lines[index + 1 :])


def _divider_alone(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is Outlook's reply divider over sentences, with no header block (the
    phrase rules find those): the message replied to, its header lost (a relay, a copy), or the
    customer's own rule over more of their words. The reader cannot tell: the rest goes behind
    :data:`UNSURE_MARKER`. A few short lines under it (a name, a number, a link, a webmail's ad) are a
    signature or a footer drawn so, and stay as they are."""
    if not _OUTLOOK_DIVIDER.match(lines[index]):
        return False
    under = _line_under(lines, index)
    if under is None or _quoted(lines[under]) or _MAILING_LIST.search(lines[under]):
        return False
    if _history_follows(lines, index) or _attribution_at(lines, under) is not None:
        return False
    return not _signature_like([line for line in lines[under:] if line.strip() and not _quoted(line)])


def _header_block_sure(lines: list[str], start: int) -> bool:
    """Whether a header block found at ``lines[start]`` names a sender: a from-field with an address, or
    a from-field and a "Sent" field. Pasted order details ("Date: … / Subject: Order 1042") have neither."""
    kinds, addressed = set(), False
    for line in _block_lines(lines, start):
        field = _FIELD.match(line)
        kind = _FIELD_KIND.get(field.group("name").lower()) if field else None
        if kind:
            kinds.add(kind)
            addressed = addressed or (kind in ("from", "to", "cc") and bool(_ADDRESS.search(line)))
    return addressed or ("from" in kinds and ("sent" in kinds or "date" in kinds))


def _header_block(lines: list[str], start: int) -> tuple[bool, bool]:
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
    sure = "sent" in kinds or "subject" in kinds or any(_ADDRESS.search(v) for v in values)
    # A client writes who sent the message it quotes: a from-field, or an address in the block. Without
    # either, "Date: 3 December / Subject: Order 1042" is what the customer pasted, not a header block.
    sender = "from" in kinds or any(_ADDRESS.search(v) for v in values)
    # Some clients open the block with the recipient ("To: … / From: … / Subject: …"): a block, when a
    # from-field names its sender; "To: Paris / From: Berlin / Date: 1 Dec" has no "Sent" or subject.
    if opening in ("to", "cc") and "from" not in kinds:
        return False, False
    if len(kinds) >= 2 and sure and sender:
        return True, bool(_FORWARDED_SUBJECT.match(subject))
    return False, False


def _header_subject_forwarded(lines: list[str], start: int) -> bool:
    """Whether the first header block within a few lines below ``start`` heads a forward."""
    for index in range(start, min(start + 6, len(lines))):
        found, forwarded = _header_block(lines, index)
        if found:
            return forwarded
    return False


# ---------------------------------------------------------------------------------------------------------
# The new words


def _client_signature(line: str) -> bool:
    """Whether a line is a mail client's footer ("Sent from my iPhone", "Get Outlook for iOS")."""
    text = line.strip()
    wrapped = _CLIENT_SIGNATURE_WRAPPED.match(text)
    if wrapped:
        text = (wrapped.group("a") or wrapped.group("b")).strip()
    text = " ".join(_LINKS.sub(lambda m: m.group(1) or " ", text).split()).rstrip(".!")
    if not text or len(text) > 120 or not _CLIENT_SIGNATURE.match(text):
        return False
    head, *rest = re.split(r"[,.;:!]\s", text + " ", maxsplit=1)
    if len(head.split()) > 8 and text[:5].lower() == "sent ":
        return False  # "Sent from my phone the photo would not upload" is a sentence
    return not rest or not rest[0].strip() or bool(_APOLOGY.match(rest[0].strip()) or _TAGLINE.match(rest[0]))


def _footer_link(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a link alone, directly under a client's footer: the footer's own
    ("This email has been checked for viruses by Avast antivirus software." / "https://www.avast.com/…")."""
    return (
        index > 0
        and bool(lines[index].strip())
        and not _LINKS.sub("", lines[index]).strip()
        and _client_signature(lines[index - 1])
    )


def _decoration(line: str) -> bool:
    """A line with no letter or digit ("***", "====", a tracker's "ᐧ"), meaningless at the end."""
    return not _LETTER_OR_DIGIT.search(line.replace(_TRACKER, ""))


def _mailing_list_footer(lines: list[str]) -> int | None:
    """Where a trailing mailing-list footer ("____ / riak-users mailing list / …", Google Groups' "You
    received this message because you are subscribed to …") starts, if any."""
    for index in range(max(0, len(lines) - 8), len(lines)):
        footer = " ".join(lines[index : index + 3])
        if _GROUPS_FOOTER.match(lines[index]) and _GROUPS_FOOTER_WORDS.search(footer):
            return index
        ruled = index + 1 < len(lines) and re.match(r"^_{2,}$", lines[index].strip())
        if ruled and _MAILING_LIST.search(lines[index + 1]):
            return index
    return None


def _trimmed_end(lines: list[str], kinds: list[str]) -> int:
    """The end of the new words: trailing quotes, attributions, footers and decoration dropped."""
    end = len(lines)
    while end:
        line = lines[end - 1].strip()
        if (
            not line
            or kinds[end - 1] in ("Q", "A")
            or _client_signature(line)
            or _decoration(line)
            or _footer_link(lines, end - 1)
        ):
            end -= 1
            continue
        footer = _mailing_list_footer(lines[:end])
        if footer is not None:
            end = footer
            continue
        break
    return end


def _history_start(lines: list[str], index: int) -> int:
    """Where unquoted history found at ``lines[index]`` starts: above it, the sender's name and address
    alone on the line directly above the fields, and Outlook's divider if any."""
    if index > 0 and _SENDER_LINE.match(lines[index - 1]):
        index -= 1
    above = index - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and (
        _SEPARATOR_RULE.match(lines[above])
        or _ORIGINAL_MESSAGE.match(lines[above])
        or _DASHED_TITLE.match(lines[above])
    ):
        return above
    return index


def _at_mark(lines: list[str], index: int) -> tuple[int, int | None, bool] | None:
    """Where the live text ends at a mark line: Outlook's divider (history, or a forward when its block's
    subject says so), or a structural sign's doubt (:func:`_mark_doubts`)."""
    line = lines[index].strip()
    if line == _HISTORY_MARK:
        return index, (index + 1 if _header_subject_forwarded(lines, index + 1) else None), False
    if line == _DOUBT_MARK:
        return index, None, True
    return None


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
        stop = _at_mark(lines, index)
        if stop is not None:
            return kinds, *stop
        if kinds[index] == "Q":
            # A forward quoted whole (">> Begin forwarded message") is forwarded content, unless an
            # attribution introduced the quote it is in (then it is history).
            if _FORWARD.match(_unquote(line).strip()) and not attributed:
                return kinds, index, index, False
            index += 1
            continue
        if not line.strip():
            index += 1
            continue
        history = _history_at(lines, index)
        if history is not None:
            return kinds, *history
        if _lone_sender(lines, index) and _written(lines[:index], kinds[:index]):
            return kinds, index, None, True
        if _tail_in_quote(lines, kinds, index) and _written(lines[:index], kinds[:index]):
            return kinds, index, None, True
        if _client_signature(line):
            after = next(
                (
                    i
                    for i in range(index + 1, len(lines))
                    if lines[i].strip() and not _client_signature(lines[i]) and not _footer_link(lines, i)
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
                and _attribution_at(lines, after) is None
                and not _generic_attribution(lines, after)
                and not _history_follows(lines, after)
            ):
                return kinds, after, None, True
        index, attributed, live_ends = _past_attribution(lines, kinds, index)
        if live_ends:
            return kinds, index, None, live_ends == "unsure"
    return kinds, len(lines), None, False


def _titles_a_quote(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a title between dashes directly over a quote (blank lines between): the
    quote's own title, as an attribution is ("-------- Original Message --------" / "> …", Thunderbird's
    reply header as its translators write it). A forward's title is not: what it forwards is kept."""
    if not _DASHED_TITLE.match(lines[index]) or _FORWARD.match(lines[index]):
        return False
    under = _line_under(lines, index)
    return under is not None and _quoted(lines[under])


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


def _lone_sender(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a from-field naming an address, alone ("From: a@x"), with more under
    it or as a paragraph of its own at the end (Yahoo's "From: …-noreply@yahoogroups.com" under a blank
    line): a client's remnant of an older message's header, or what the customer typed ("From:
    scam@example.com" above their own account of it). One field is no header block, so the reader cannot
    tell: the rest goes behind :data:`UNSURE_MARKER`. "From: Berlin" names no address and stays, and so
    does a last line that ends the customer's paragraph ("Please write back to me at" / "From: a@x")."""
    line = lines[index]
    if _field_kind(line) != "from" or not _ADDRESS.search(line):
        return False
    return any(line.strip() for line in lines[index + 1 :]) or (index > 0 and not lines[index - 1].strip())


def _history_follows(lines: list[str], index: int) -> bool:
    """Whether unquoted history the rules know starts at ``lines[index]``, or below a divider there
    ("----------" above Outlook's block): then the reader is sure, not in doubt."""
    if _history_at(lines, index) is not None:
        return True  # "-------- Original message --------" is history's title, whatever follows it
    if _SEPARATOR_RULE.match(lines[index]) or _DASHED_TITLE.match(lines[index]):
        under = _line_under(lines, index)
        return under is not None and _history_at(lines, under) is not None
    return False


def _line_kinds(lines: list[str]) -> list[str]:
    """Each line quoted (``Q``) or text (``T``), before attributions are recognised.

    A wrapped link's tail between two quoted lines belongs to the quote, not to an answer: the quoted
    line above leaves a bracket open, or the piece closes the quote's "<…" itself ("(http://…) >").
    """
    kinds = ["Q" if _quoted(line) else "T" for line in lines]
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


def _history_at(lines: list[str], index: int) -> tuple[int, int | None, bool] | None:
    """Where unquoted history starts, and forwarded content (if any), when the text line at ``index``
    begins it: a forward marker, "-----Original Message-----", a header block. ``None``: it does not."""
    line = lines[index]
    if _titles_a_quote(lines, index):
        return None  # the quote's own title, read as its attribution (_generic_attribution)
    if _FORWARD.match(line) or (_BARE_FORWARD.match(line) and _block_under(lines, index)):
        return index, index, False
    if _reply_above_at(lines, index):
        return _titled(lines, index), None, False
    if _ORIGINAL_MESSAGE.match(line):
        return index, (index if _header_subject_forwarded(lines, index + 1) else None), False
    if _BARE_ORIGINAL.match(line) and _sender_under(lines, index):
        return index, None, False
    found, forwarded = _header_block(lines, index)
    if found:
        start = _history_start(lines, index)
        if forwarded:
            return start, start, False
        sure = _header_block_sure(lines, index) or start != index  # a divider above it is Outlook's
        return start, None, not sure
    return None


def _reply_above_at(lines: list[str], index: int) -> bool:
    """Whether a helpdesk's "reply above this line" stands at ``lines[index]``, or directly under the
    square-bracketed tokens that start there ("[ALGA-REPLY-TOKEN …]": the helpdesk's, not the sender's)."""
    while index < len(lines) and _BRACKETED.match(lines[index]):
        index += 1
    return index < len(lines) and bool(_REPLY_ABOVE.match(lines[index]))


def _line_under(lines: list[str], index: int) -> int | None:
    """The first line under ``lines[index]`` that holds anything; ``None`` when only blank lines follow."""
    return next((i for i in range(index + 1, len(lines)) if lines[i].strip()), None)


def _sender_under(lines: list[str], index: int) -> bool:
    """Whether the first line under ``lines[index]`` that holds anything is a from-field naming an address
    (an older message's header, or its remnant, starts there)."""
    after = _line_under(lines, index)
    return after is not None and _field_kind(lines[after]) == "from" and bool(_ADDRESS.search(lines[after]))


def _block_under(lines: list[str], index: int) -> bool:
    """Whether a header block starts on the first line under ``lines[index]`` that holds anything."""
    after = _line_under(lines, index)
    return after is not None and _header_block(lines, after)[0]


def _titled(lines: list[str], start: int) -> int:
    """Where sure history found at ``lines[start]`` starts: above it, a title whose dashes were lost
    ("-Original Message" over "On … wrote:"), if it stands directly above (blank lines aside)."""
    above = start - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    return above if above >= 0 and _LOOSE_ORIGINAL.match(lines[above]) else start


def _past_attribution(lines: list[str], kinds: list[str], index: int) -> tuple[int, bool, str | None]:
    """The text line at ``index`` read as an attribution, if it is one: the next line to read, whether
    a quote it introduced follows, and whether the live text ends here (a strong attribution followed
    by unquoted text: history). Marks the attribution's lines ``A`` in ``kinds``."""
    end = _attribution_at(lines, index)
    if end is None:
        if _generic_attribution(lines, index):
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
    if _sure(" ".join(lines[index : end + 1])):
        return _titled(lines, index), False, "history"
    return index, False, "unsure"


def _generic_attribution(lines: list[str], index: int) -> bool:
    """A line in a language not listed above that still reads as an attribution: it ends with ":",
    holds an address or a date, and a quote follows it directly (so a sentence is never taken). Or a
    bare lead-in, a name and the verb only ("John wrote:", "Jim Bob a écrit :"), directly above a quote:
    it belongs to the older message the quote holds."""
    line = lines[index].strip()
    if _titles_a_quote(lines, index) or _mail_date_lead(lines, index):
        return True
    if _MACHINE_DATE_LEAD.match(line):
        # "On Tue, 15 Mar 2016 12:30:19 +0000" over a quote (blank lines between): a client's attribution
        # that lost its name and verb.
        after = _line_under(lines, index)
        return after is not None and _quoted(lines[after])
    following = index + 1 < len(lines) and _quoted(lines[index + 1])
    under = _line_under(lines, index)
    quote_under = under is not None and _quoted(lines[under])
    if _dated(line) and ((quote_under and _ADDRESS.search(line)) or (following and _ANY_VERB.search(line))):
        # A date with its time of day and an address, or an attribution's verb, directly over the quote,
        # however the line ends (Armenian ends on its own sign or a full stop, Malayalam on its verb after
        # the address, Malay and Slovenian with no colon, Hebrew with it first): a mail program's
        # attribution. A customer's sentence above a quote names no sender's address and the time the
        # quoted message was sent; "On 3 Dec 2026 at 10:15" alone names no writer and stays.
        return True
    if quote_under and len(line.split()) <= 8 and _SENDER_LAST.search(line) and not _label_line(line):
        # A word or two and the sender's "Name <address>" last over the quote, a colon of any script or none
        # (Horde IMP's "Quoting %f:" as its translators write it: "Alinti Alice <a@x>", "សម្រង់ Alice <a@x> ៖").
        # Not a field ("Signed-off-by: Alice <a@x>" over the quote a patch's writer answers).
        return True
    if not following and _ADDRESS.search(line):
        # An address and a colon: blank lines may stand between it and the quote ("… <john@x> napisao je:"
        # / "" / "> …"), as Gmail writes it in every language. A sentence names no address at its end.
        following = quote_under
    if not following:
        return False
    if line.endswith((":", "\uff1a")) and (_ADDRESS.search(line) or _DIGIT.search(line)):
        return True
    return _bare_lead_in(line)  # its verb's own ending: a colon, or a language's own sign


def _dated(line: str) -> bool:
    """Whether a line names a date (a year, or a date in digits) and a time of day."""
    return bool(_TIME.search(line) and (_YEAR.search(line) or _NUMERIC_DATE.search(line)))


def _mail_date_lead(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a Date header's value with a word or two before it ("El Mon, 01 Dec 2025
    10:05:00 +0000"), directly over an attribution or a quote: the first line of Claws Mail's "On %d" /
    "%f wrote:" in any language. No person types a date as a mail program writes it."""
    date = _MAIL_DATE.search(lines[index])
    if not date or len((lines[index][: date.start()] + lines[index][date.end() :]).split()) > 3:
        return False
    under = _line_under(lines, index)
    return under is not None and (_quoted(lines[under]) or _generic_attribution(lines, under))


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
    return _a_name(line[: verb.start()].split())


def _a_name(words: list[str]) -> bool:
    """One to four words, each capitalised or of a script without capitals: a name, not a sentence."""
    return 1 <= len(words) <= 4 and all(word[0].isupper() or _caseless_letter(word[0]) for word in words)


def _caseless_letter(char: str) -> bool:
    """A letter of a script without capitals (Chinese, Japanese, Korean, Hebrew, Arabic …)."""
    return char.isalpha() and not char.isupper() and not char.islower()


def _signature_like(lines: list[str]) -> bool:
    """Whether the lines under a lone ``--`` read as a signature: a few short lines (a name, a title, a
    number, a link), none of them a sentence that asks or tells ("Please redeliver order 1042.")."""
    if len(lines) > 8:
        return False
    return not any("?" in line or (len(line.split()) >= 4 and line.rstrip()[-1:] in ".!") for line in lines)


def _list_footer(lines: list[str]) -> bool:
    """Whether the lines under a ``--`` are a mailing list's footer: a few lines naming the list's
    unsubscribe words and its address or link ("To unsubscribe, send … to majordomo@kvack.org")."""
    text = [line for line in lines if line.strip()]
    if not text or len(text) > 8:
        return False
    joined = " ".join(text)
    return bool(_LIST_FOOTER_WORDS.search(joined) and _ADDRESS_OR_LINK.search(joined))


def _written(lines: list[str], kinds: list[str]) -> bool:
    """Whether the live text holds words of the sender (not only quotes, attributions, blank lines)."""
    return any(
        kind == "T" and line.strip() and line.strip() not in _MARKS
        for line, kind in zip(lines, kinds, strict=True)
    )


def _without_signature(lines: list[str], kinds: list[str]) -> tuple[list[str], list[str], int | None, bool]:
    """The live lines without their signature, where a doubtful one starts (None: no doubt), and whether
    that doubt stands over a list's footer (then it holds even where an earlier doubt was found).

    A lone ``-- `` (RFC 3676) starts a signature; a lone bare ``--`` does when what follows reads as
    one (:func:`_signature_like`), else it is a doubt. Two or more ``--`` lines separate a list, unless
    the last stands over a list's footer (:func:`_list_footer`): that footer is a doubt (the list's
    words, or a sender's who wrote like one), and the ``--`` above it is judged alone.
    """
    delimiters = [i for i, line in enumerate(lines) if kinds[i] == "T" and _SIGNATURE_DELIMITER.match(line)]
    footer = None
    if len(delimiters) >= 2:
        after = delimiters[-1] + 1
        stop = next((i for i in range(after, len(lines)) if kinds[i] != "T"), len(lines))
        if _list_footer(lines[after:stop]):
            # LKML's review: "-- / name, title / -- / To unsubscribe … majordomo@…": the footer goes behind
            # the doubt, never above it as the reviewer's words, never dropped.
            footer = delimiters.pop()
    if len(delimiters) != 1:  # two or more "--" lines separate a list, not a signature
        return lines, kinds, footer, footer is not None
    after = delimiters[0] + 1
    stop = next((i for i in range(after, len(lines)) if kinds[i] != "T"), len(lines))
    below = [line for line in lines[after:stop] if line.strip() and not _client_signature(line)]
    if lines[delimiters[0]] == _RFC_DELIMITER or (footer is None and _signature_like(below)):
        return lines[: delimiters[0]], kinds[: delimiters[0]], footer, footer is not None
    # A bare "--" over a footer's "--" may be one item of a list: from it on, in doubt.
    return lines, kinds, delimiters[0], footer is not None


def _unwrapped_title(line: str) -> list[str]:
    """A line of plain text that opens with a client's markup around a dashed title, as the title and the
    rest of the line below it ("<div>-------- Original message --------</div><div>From: …" reads as the
    title over "From: …"); any other line as it is."""
    tagged = _TAGGED_TITLE.match(line) if line.lstrip().startswith("<") else None
    if tagged is None or not (_ORIGINAL_MESSAGE.match(tagged["title"]) or _FORWARD.match(tagged["title"])):
        return [line]
    return [tagged["title"], *([tagged["rest"]] if tagged["rest"].strip() else [])]


def _block_subject(lines: list[str], start: int) -> str:
    """The subject field's value of the header block at ``lines[start]`` (``""``: none)."""
    for line in _block_lines(lines, start):
        field = _FIELD.match(line)
        if field and _field_kind(line) == "subject":
            return line[field.end() :].strip(" *_")
    return ""


def _forward_by_subject(lines: list[str], forward: int, subject: str) -> str | None:
    """What the message's own subject says of a header block kept as a forward because its subject says
    "FW:": ``"history"`` when the message is a reply ("RE: FW: x": the block is the message replied to),
    ``"unsure"`` when the message's subject is the block's own ("FW: x" over "Subject: FW: x": a reply
    that kept the subject, or a forward of a forward) or empty, ``None`` (a forward, kept) otherwise. A
    forward's own marker ("---------- Forwarded message ---------") is the customer's word for it: not
    judged."""
    if _FORWARD.match(lines[forward]) or _BARE_FORWARD.match(lines[forward]) or _quoted(lines[forward]):
        return None
    block = next(
        (i for i in range(forward, min(forward + 6, len(lines))) if _header_block(lines, i)[0]), None
    )
    if block is None:
        return None
    if not subject:
        # No subject known (an empty one, or a caller without it): nothing tells the two apart, and a
        # block kept as a sure forward was the message replied to there (issue 41, eleventh split).
        return "unsure"
    if _REPLY_SUBJECT.match(subject):
        return "history"
    if " ".join(subject.split()).casefold() == " ".join(_block_subject(lines, block).split()).casefold():
        return "unsure"
    return None


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
    if lead_in and "Q" not in kinds and not _sure(" ".join(lines[i] for i in lead_in)):
        # An attribution naming no address and nothing else, no quote anywhere ("On or around May 26th, I
        # did something." / "wrote:"): a lead-in whose quote was cut off, or the customer's own sentence. One
        # naming an address is a mail program's, its quote cut off: nothing new.
        return lead_in[0]
    return None


def _new_words(text: str, subject: str | None = None) -> str:
    """The new words of a body already rendered as text (quotes as ``>`` lines)."""
    # The RFC 3676 delimiter keeps its space ("-- "): a sure signature; a bare "--" may separate a list.
    lines = _split_mid_line_attributions(
        _split_run_together_headers(
            [
                piece
                for line in text.splitlines()
                for piece in (
                    [_RFC_DELIMITER]
                    if line.startswith(_RFC_DELIMITER) and not line.strip("- \t")
                    else _unwrapped_title(line.rstrip())
                )
            ]
        )
    )
    lines = _mark_doubts(lines, subject or "")
    kinds, live_end, forward, unsure = _classify(lines)
    if forward is not None:
        decided = _forward_by_subject(lines, forward, subject or "")
        if decided is not None:
            forward, unsure = None, decided == "unsure"
    live, live_kinds = lines[:live_end], kinds[:live_end]
    live, live_kinds, signature_doubt, over_footer = _without_signature(live, live_kinds)
    if signature_doubt is not None and (not unsure or over_footer) and forward is None:
        # "--" above words a signature does not hold (a request, a list): the customer's, maybe.
        live_end, unsure = signature_doubt, True
        live, live_kinds = live[:live_end], live_kinds[:live_end]
    end = _trimmed_end(live, live_kinds)
    if not unsure and forward is None and not _written(live[:end], live_kinds[:end]):
        doubt = _nothing_written(lines, kinds, live_end)
        if doubt is not None:
            live_end, unsure = doubt, True
    out = _with_quote_markers(live[:end], live_kinds[:end])
    if unsure:
        rest = [line for line in lines[live_end:] if line.strip() not in _MARKS]
        out.extend(["", UNSURE_MARKER, *rest])
    elif forward is not None:
        rest = lines[forward:]
        # Apple Mail quotes a forward (its marker too, in plain text): one level off.
        if all(_quoted(line) or not line.strip() for line in rest[1:]):
            rest = [_unquote(line) for line in rest]
        out.extend(["", *(line for line in rest if line.strip() not in _MARKS)])
    return _BLANK_LINES.sub("\n\n", "\n".join(out)).strip()


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
    return "\n".join(line for line in _plain(body).splitlines() if line.strip() not in _MARKS).strip()


@functools.lru_cache(maxsize=4)
def _plain(body: str) -> str:
    """A body as the reader reads it: plain text, HTML rendered (``<blockquote>`` as ``>`` lines).

    Cached for the few bodies last read: the agent's view reads each message twice (:func:`new_text`
    and :func:`full_text`), and rendering a long HTML email is a good part of reading it."""
    body = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    return _rendered(body, quotes=True) if _is_html(body) else html.unescape(body)
