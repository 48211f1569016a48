"""An HTML body as the reader's lines: block elements are line breaks, ``<blockquote>`` becomes ``>``
lines, Gmail's and Apple Mail's quote containers are quotes, Outlook's reply divider is
:data:`~replyonce.rules.text.lines.HISTORY_MARK`, and a signature container is the ``-- `` line it stands for.

Why a renderer of our own rather than a library's text conversion: the reader needs the program's own
marks of history (which containers quote, where Outlook's divider stands), and those are what a
generic HTML-to-text conversion throws away."""

import html
import re
from html.parser import HTMLParser

from replyonce.rules.text.lines import BLANK_LINES, HISTORY_MARK, RFC_DELIMITER

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
_SPACES = re.compile(r"[ \t\f\v\u00a0\u200b\u200c\u200d\ufeff]+")
_HTML_DELIMITER = re.compile(r"[\t ]*--[ \u00a0][ \t\u00a0]*")  # a source's line break is a tab (_Renderer)


class _Renderer(HTMLParser):
    """HTML → lines, each with how deeply it is quoted (open ``<blockquote>`` elements).

    A line break in the HTML source is a space, as a browser shows it, except inside ``<pre>`` or an
    element styled ``white-space: pre…`` (a program that formats its source, or wraps it at 76 columns,
    would otherwise cut a sentence, or a footer from the program it names, in two).

    ``quotes=False`` is :func:`html_to_text`: quoted containers and everything after Outlook's divider
    are dropped. ``quotes=True`` is :func:`new_text`: a blockquote's lines are kept as quoted lines and
    Outlook's divider becomes :data:`HISTORY_MARK`, because the line rules decide what is new — a
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
                self._text(HISTORY_MARK + "\n")
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


def is_html(body: str) -> bool:
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


def rendered(body: str, *, quotes: bool) -> str:
    renderer = _Renderer(quotes=quotes)
    renderer.feed(body)
    renderer.close()
    renderer._end_line()
    lines = []
    for depth, line in renderer.lines:
        # "-- <br>" (or Gmail's "--&nbsp;") is the RFC 3676 delimiter the sender's program wrote: a browser
        # does not show its space, but the space is there, and the line rules cut at "-- " as in plain text.
        delimiter = not depth and _HTML_DELIMITER.fullmatch(line)
        line = RFC_DELIMITER if delimiter else _SPACES.sub(" ", line).strip()
        lines.append((">" * depth + " " + line).rstrip() if depth else line)
    return BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


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
    if not is_html(body):
        return html.unescape(body).strip()
    return rendered(body, quotes=False)
