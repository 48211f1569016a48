"""A message body as the agent should read it: plain text, without the quoted history.

Why both steps: Nylas gives the body as HTML (``body``), and a customer's
reply quotes everything before it ("On … wrote:", ``>`` lines, Outlook's
"From: … Sent: …" block). Shown as is, the agent would read the agent's own
earlier reply as if the customer had written it. HTML quotes are dropped
where the markup says so (``<blockquote>``, Gmail's ``gmail_quote``,
Outlook's reply divider); the rest is converted to text and the quoted
history found by ``quotequail`` (chosen by measurement on real-looking mail:
``docs/agents.md``, ``tests/unit/test_text.py``), then what neither candidate
removes: trailing ``>`` lines, the signature after ``-- `` (RFC 3676 section
4.3) and a mobile client's "Sent from my …".
"""

import html
import re
from html.parser import HTMLParser

import quotequail

_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre"}
)
_DROPPED_TAGS = frozenset({"script", "style", "head", "title", "blockquote"})
# Markup of quoted history: containers whose content is the quote (Gmail, Apple Mail), and markers after
# which everything is (Outlook's reply divider).
_QUOTE_MARKERS = re.compile(r"gmail_quote|AppleMailQuote")
_HISTORY_STARTS = re.compile(r"appendonsend|divRplyFwdMsg|OutlookMessageHeader")
_BLANK_LINES = re.compile(r"\n{3,}")
_SIGNATURE_DELIMITER = re.compile(r"^--\s?$")
_CLIENT_SIGNATURE = re.compile(r"^(sent from my |get outlook for |sent from (mail|yahoo mail) for )", re.I)
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")


class _TextExtractor(HTMLParser):
    """HTML → text with line breaks at block elements, quoted blocks dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping: list[str] = []  # the open tags whose content is dropped
        self._history = False  # past a marker after which everything is quoted history

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        markers = " ".join(value or "" for name, value in attrs if name in ("class", "id"))
        if _HISTORY_STARTS.search(markers):
            self._history = True
        if self._history:
            return
        if self._skipping:
            if tag not in ("br", "hr", "img", "meta", "link", "input"):
                self._skipping.append(tag)
            return
        if tag in _DROPPED_TAGS or _QUOTE_MARKERS.search(markers):
            self._skipping.append(tag)
            return
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self._history:
            return
        if self._skipping:
            if tag in self._skipping:
                while self._skipping and self._skipping.pop() != tag:
                    pass
            return
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping and not self._history:
            self.parts.append(data)


def html_to_text(body: str) -> str:
    """The text of an HTML body: block elements become line breaks; quoted blocks, scripts, styles go."""
    if "<" not in body:
        return html.unescape(body).strip()
    extractor = _TextExtractor()
    extractor.feed(body)
    extractor.close()
    lines = [_SPACES.sub(" ", line).strip() for line in "".join(extractor.parts).splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _top(text: str) -> str:
    """What quotequail finds above the quoted history (the whole text when nothing is quoted)."""
    unwrapped = quotequail.unwrap(text)
    if unwrapped and unwrapped.get("text_top") is not None:
        return str(unwrapped["text_top"])
    kept = []
    for is_new, part in quotequail.quote(text):
        if not is_new:
            break
        kept.append(part)
    return "\n".join(kept)


def _without_trailers(text: str) -> str:
    """``text`` without its signature, a client's "Sent from my …" and trailing ``>`` lines."""
    lines = text.strip().splitlines()
    for index, line in enumerate(lines):
        if _SIGNATURE_DELIMITER.match(line):
            lines = lines[:index]
            break
    quoted = False
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith(">")):
        quoted = quoted or lines[-1].lstrip().startswith(">")
        lines.pop()
    if quoted and lines and lines[-1].rstrip().endswith(":"):
        lines.pop()  # the attribution line of the quote ("Il giorno … ha scritto:")
    while lines and (not lines[-1].strip() or _CLIENT_SIGNATURE.match(lines[-1].strip())):
        lines.pop()
    return "\n".join(lines).strip()


def new_text(body: str) -> str:
    """What the sender wrote in this message: the body as text, without the quoted history."""
    text = html_to_text(body or "")
    if not text:
        return ""
    return _without_trailers(_top(text)) or text
