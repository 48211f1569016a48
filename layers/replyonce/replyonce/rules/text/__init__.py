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

from replyonce.rules.text.lines import QUOTE_MARKER, UNSURE_MARKER
from replyonce.rules.text.markup import html_to_text
from replyonce.rules.text.reader import full_text, new_text

__all__ = ["QUOTE_MARKER", "UNSURE_MARKER", "full_text", "html_to_text", "new_text"]
