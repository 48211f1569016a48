"""A message body as the agent should read it: plain text, without the quoted history.

Why both steps: Nylas gives the body as HTML (``body``), and a customer's
reply quotes everything before it ("On … wrote:", ``>`` lines, Outlook's
"From: … Sent: …" block). Shown as is, the agent would read the agent's own
earlier reply as if the customer had written it. HTML quotes are dropped
where the markup says so (``<blockquote>``, Gmail's ``gmail_quote``,
Outlook's reply divider); the rest is converted to text and the quoted
history found by ``mail-parser-reply`` (chosen by measurement on real-looking
mail: ``docs/agents.md``, ``tests/test_text.py``).
"""

import html
import re
from html.parser import HTMLParser

from mailparser_reply import EmailReplyParser

# The languages whose "On … wrote:" and "From:/Sent:" headers are recognised.
_LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "pl"]
_PARSER = EmailReplyParser(languages=_LANGUAGES)
_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre"}
)
_DROPPED_TAGS = frozenset({"script", "style", "head", "title", "blockquote"})
# Markup of quoted history: Gmail's quote container, Outlook's reply divider and Apple Mail's quote.
_QUOTE_MARKERS = re.compile(r"gmail_quote|appendonsend|divRplyFwdMsg|OutlookMessageHeader|AppleMailQuote")
_BLANK_LINES = re.compile(r"\n{3,}")
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")


class _TextExtractor(HTMLParser):
    """HTML → text with line breaks at block elements, quoted blocks dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping: list[str] = []  # the open tags whose content is dropped

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        markers = " ".join(value or "" for name, value in attrs if name in ("class", "id"))
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
        if self._skipping:
            if tag in self._skipping:
                while self._skipping and self._skipping.pop() != tag:
                    pass
            return
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
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


def new_text(body: str) -> str:
    """What the sender wrote in this message: the body as text, without the quoted history."""
    text = html_to_text(body or "")
    if not text:
        return ""
    reply = _PARSER.parse_reply(text=text)
    return (reply or text).strip()
