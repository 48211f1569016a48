"""The text the agent reads (replyonce.rules.text): the customer's new words, wherever they stand.

Three tables, each row a body and what the customer actually wrote:

- ``CORPUS``, real-looking top-posted mail (Gmail, Outlook, Apple Mail, mobile
  clients, seven languages, ``>`` quoting, signatures, a forward);
- ``PEER_CLASSES``, one row per class of mail learned from other parsers'
  fixture sets (talon, github/email_reply_parser, discourse/email_reply_trimmer:
  ``scripts/measure_new_text.py``), each id naming the peer case it comes from;
  written here, not copied. Rows of a class the previous module broke (bottom-
  posted, interleaved, forwarded, the languages, wrapped attributions, "Sent
  from my" in a sentence, text on the "wrote:" line, nothing new) fail on it::

      git show 4207bc4:layers/replyonce/replyonce/text.py > /tmp/text_before.py

  and run the rows against ``/tmp/text_before.py``; rows whose id says
  ``guard`` were already right and must stay right;
- ``HTML_CORPUS``, bodies as Nylas gives them, markup and all.

The candidate comparison: the two maintained libraries (quotequail, which the
previous module was built on, and mail-parser-reply) are scored on the same
rows; ``new_text`` must be exact on every row and beat both. The figures on the
peers' own sets are in ``docs/agents.md``.
"""

import html

import pytest
import quotequail
from mailparser_reply import EmailReplyParser

from replyonce.rules.text import QUOTE_MARKER, UNSURE_MARKER, full_text, html_to_text, new_text

ACME = "Acme Support <support@acme.example>"
ON = f"On Mon, 30 Nov 2026 at 10:02, {ACME} wrote:"

CORPUS = [
    (
        "gmail, english",
        "My order 1042 is late.\n\nOn Mon, Nov 30, 2026 at 10:02 AM Acme Support <support@acme.example> wrote:\n"
        "> Hi Alice,\n> Thanks for your message.\n",
        "My order 1042 is late.",
    ),
    (
        "outlook header block",
        "Please change my delivery address to 5 Elm St.\n\n"
        "From: Acme Support <support@acme.example>\nSent: Monday, November 30, 2026 10:02 AM\n"
        "To: Alice <alice@example.com>\nSubject: Re: Order 1042\n\nHi Alice, thanks for your message.\n",
        "Please change my delivery address to 5 Elm St.",
    ),
    (
        "apple mail",
        "Any news?\n\n> On 30 Nov 2026, at 10:02, Acme Support <support@acme.example> wrote:\n>\n> Hi Alice,\n",
        "Any news?",
    ),
    (
        "german",
        "Wo bleibt meine Bestellung 1042?\n\nAm Mo., 30. Nov. 2026 um 10:02 Uhr schrieb Acme Support "
        "<support@acme.example>:\n> Hallo Alice,\n",
        "Wo bleibt meine Bestellung 1042?",
    ),
    (
        "french",
        "Ma commande 1042 n'est pas arrivée.\n\nLe lun. 30 nov. 2026 à 10:02, Acme Support "
        "<support@acme.example> a écrit :\n> Bonjour Alice,\n",
        "Ma commande 1042 n'est pas arrivée.",
    ),
    (
        "spanish",
        "¿Dónde está mi pedido 1042?\n\nEl lun, 30 nov 2026 a las 10:02, Acme Support "
        "(<support@acme.example>) escribió:\n> Hola Alice,\n",
        "¿Dónde está mi pedido 1042?",
    ),
    ("plain, nothing quoted", "Where is order 1043?\nThanks, Bob", "Where is order 1043?\nThanks, Bob"),
    (
        "bare > quoting",
        "Yes, that address is right.\n\n> Could you confirm your address?\n> Acme\n",
        "Yes, that address is right.",
    ),
    (
        "signature dashes",
        "Can I get a refund for order 1044?\n\n-- \nBob Smith\nSenior Buyer, Smith & Co\n",
        "Can I get a refund for order 1044?",
    ),
    (
        "mobile",
        "Still waiting for 1042\n\nSent from my iPhone\n\nOn Nov 30, 2026, at 10:02, Acme Support "
        "<support@acme.example> wrote:\n> Hi\n",
        "Still waiting for 1042",
    ),
    (
        "outlook divider line",
        "Thanks, that solved it.\n\n________________________________\nFrom: Acme Support\n"
        "Sent: 30 November 2026 10:02\nTo: Alice\nSubject: Re: Order 1042\n\nHi Alice,\n",
        "Thanks, that solved it.",
    ),
    (
        "gmail, header wrapped",
        "Any update on 1043?\n\nOn Mon, Nov 30, 2026 at 10:02 AM Acme Support <\nsupport@acme.example> wrote:\n"
        "> Hi Bob,\n",
        "Any update on 1043?",
    ),
    (
        "italian",
        "Dov'è il mio ordine 1042?\n\nIl giorno lun 30 nov 2026 alle ore 10:02 Acme Support "
        "<support@acme.example> ha scritto:\n> Ciao Alice,\n",
        "Dov'è il mio ordine 1042?",
    ),
    (
        "dutch",
        "Waar blijft bestelling 1042?\n\nOp ma 30 nov. 2026 om 10:02 schreef Acme Support "
        "<support@acme.example>:\n> Hallo Alice,\n",
        "Waar blijft bestelling 1042?",
    ),
    (
        "portuguese",
        "Onde está o pedido 1042?\n\nEm seg., 30 de nov. de 2026 às 10:02, Acme Support "
        "<support@acme.example> escreveu:\n> Olá Alice,\n",
        "Onde está o pedido 1042?",
    ),
    (
        "outlook, german",
        "Bitte die Adresse ändern.\n\nVon: Acme Support <support@acme.example>\nGesendet: Montag, 30. November "
        "2026 10:02\nAn: Alice <alice@example.com>\nBetreff: AW: Bestellung 1042\n\nHallo Alice,\n",
        "Bitte die Adresse ändern.",
    ),
    (
        # Was expected to be the note alone: the forwarded order is what the customer means the agent to
        # read ("this is the order I meant"), so the forward is kept, from its marker on.
        "forward",
        "FYI, this is the order I meant.\n\n---------- Forwarded message ---------\nFrom: Shop <shop@x.example>\n"
        "Date: Mon, Nov 30, 2026\nSubject: Order 1042\n\nYour order is confirmed.\n",
        "FYI, this is the order I meant.\n\n---------- Forwarded message ---------\nFrom: Shop <shop@x.example>\n"
        "Date: Mon, Nov 30, 2026\nSubject: Order 1042\n\nYour order is confirmed.",
    ),
    (
        "original message marker",
        "See below, the invoice is wrong.\n\n-----Original Message-----\nFrom: Acme Support\n"
        "Sent: Monday, November 30, 2026 10:02 AM\nSubject: Invoice 77\n\nHere is your invoice.\n",
        "See below, the invoice is wrong.",
    ),
]

PEER_CLASSES = [
    # --- the customer writes below or between quoted blocks
    (
        "bottom-posted (talon test_reply_after_quotations, erp email_1_2)",
        f"{ON}\n> Could you send the serial number?\n\nThe serial number is SN-4471.\n",
        "[quoted text]\nThe serial number is SN-4471.",
    ),
    (
        "bottom-posted right under the quote (talon standard_replies/thunderbird)",
        "On 30/11/2026 10:02, Acme Support wrote:\n> Which day suits you?\nTuesday.\n",
        "[quoted text]\nTuesday.",
    ),
    (
        "interleaved answers (erp email_1_8)",
        f"{ON}\n> Which colour would you like?\nBlue.\n\n> And which size?\nLarge, please.\n",
        "[quoted text]\nBlue.\n\n[quoted text]\nLarge, please.",
    ),
    (
        "above and below one quote (talon test_reply_wraps_quotations)",
        f"Answers below.\n\n{ON}\n> Is the parcel damaged?\n\nYes, the corner is crushed.\n",
        "Answers below.\n\n[quoted text]\nYes, the corner is crushed.",
    ),
    (
        "below a quote that ends in the quoted sender's signature (erp email_1_8)",
        f"{ON}\n> Anything else?\n> -- \n> Acme Support\n\nNo, thank you.\n",
        "[quoted text]\nNo, thank you.",
    ),
    # --- forwards: the customer means the agent to read them
    (
        "forward with a note, Gmail (talon test_dont_parse_quotations_for_forwarded_messages)",
        "Can you help? The courier says this.\n\n---------- Forwarded message ---------\n"
        "From: Courier <track@courier.example>\nDate: Mon, Nov 30, 2026 at 9:00 AM\nSubject: Delivery failed\n"
        "To: <alice@example.com>\n\nWe could not deliver parcel 77.\n",
        "Can you help? The courier says this.\n\n---------- Forwarded message ---------\n"
        "From: Courier <track@courier.example>\nDate: Mon, Nov 30, 2026 at 9:00 AM\nSubject: Delivery failed\n"
        "To: <alice@example.com>\n\nWe could not deliver parcel 77.",
    ),
    (
        "forward without a note (trimmer forwarded_message)",
        "---------- Forwarded message ---------\nFrom: Courier <track@courier.example>\nSubject: Delivery failed\n"
        "\nWe could not deliver parcel 77.\n",
        "---------- Forwarded message ---------\nFrom: Courier <track@courier.example>\nSubject: Delivery failed\n"
        "\nWe could not deliver parcel 77.",
    ),
    (
        "forward, Apple Mail quotes it (trimmer forwarded_apple)",
        "Here is what the courier sent me.\n\n> Begin forwarded message:\n>\n"
        "> From: Courier <track@courier.example>\n> Subject: Delivery failed\n>\n> We could not deliver parcel 77.\n",
        "Here is what the courier sent me.\n\nBegin forwarded message:\n\n"
        "From: Courier <track@courier.example>\nSubject: Delivery failed\n\nWe could not deliver parcel 77.",
    ),
    (
        "Outlook's original message with a FW: subject and no subject of the message's own: a forward or the "
        "message replied to, behind the marker (talon test_english_original_message; after the eleventh split)",
        "See the invoice below, the total is wrong.\n\n-----Original Message-----\n"
        "From: Billing <billing@shop.example>\nSent: Monday, November 30, 2026 10:02 AM\nTo: Alice\n"
        "Subject: FW: Invoice 77\n\nTotal: 120 EUR\n",
        f"See the invoice below, the total is wrong.\n\n{UNSURE_MARKER}\n-----Original Message-----\n"
        "From: Billing <billing@shop.example>\nSent: Monday, November 30, 2026 10:02 AM\nTo: Alice\n"
        "Subject: FW: Invoice 77\n\nTotal: 120 EUR",
    ),
    # --- what only looks like a signature or a quote
    (
        "'Sent from my' in a sentence at the end (erp email_sent_from_my_not_signature)",
        "Here is the photo.\n\nSent from my desk, which is easier than from my phone.\n",
        "Here is the photo.\n\nSent from my desk, which is easier than from my phone.",
    ),
    (
        "'Sent from my' starting the answer above a quote (erp email_sent_from_my_not_signature)",
        f"Sent from my laptop: the invoice you asked for is attached.\n\n{ON}\n> Please send the invoice.\n",
        "Sent from my laptop: the invoice you asked for is attached.",
    ),
    (
        "text on the 'wrote:' line (talon test_reply_and_quotation_splitter_share_line)",
        f"Yes, Tuesday works. {ON}\n> Does Tuesday work?\n",
        "Yes, Tuesday works.",
    ),
    (
        "text with dashes on the '--- On … wrote:' line (talon test_reply_and_quotation_splitter_share_line)",
        f"Noted.\nThe code is A-7 - not A-1--- {ON}\n> Which code?\n",
        "Noted.\nThe code is A-7 - not A-1",
    ),
    # --- attributions in other languages (the forms the previous module missed)
    (
        "german attribution, Gmail's 'schrieb am', wrapped (trimmer embedded_email_german_4)",
        "Passt so.\n\nAlice Example <alice@example.com> schrieb am Di., 1. Dez.\n2026 um 10:00 Uhr:\n\n> Hallo,\n",
        "Passt so.",
    ),
    (
        "french attribution over three lines (trimmer embedded_email_french_1)",
        'Merci, c\'est réglé.\n\nLe 1 déc. 2026 10:00, "Acme Support"\n<support@acme.example>\na écrit :\n\n'
        "> Bonjour Alice,\n",
        "Merci, c'est réglé.",
    ),
    (
        "spanish attribution, answer below (trimmer embedded_email_quote_text, in Spanish)",
        f"El 1 dic 2026, a las 10:00, {ACME} escribió:\n> ¿Qué talla necesita?\n\nLa talla M, por favor.\n",
        "[quoted text]\nLa talla M, por favor.",
    ),
    (
        "italian attribution, unquoted history (talon test_pattern_on_date_wrote_somebody, in Italian)",
        f"Grazie, risolto.\n\nIl giorno 1 dic 2026, alle ore 10:00 {ACME} ha scritto:\n\n"
        "Ciao Alice, il suo ordine è partito.\n",
        "Grazie, risolto.",
    ),
    (
        "dutch attribution, answer below (trimmer embedded_email_dutch_1)",
        f"Op 1 dec. 2026 om 10:00 schreef {ACME}:\n> Welke maat?\n\nMaat M graag.\n",
        "[quoted text]\nMaat M graag.",
    ),
    (
        "portuguese attribution, answer below (trimmer embedded_email_portuguese)",
        f"Em 1 de dez. de 2026, às 10:00, {ACME} escreveu:\n> Qual tamanho?\n\nTamanho M, por favor.\n",
        "[quoted text]\nTamanho M, por favor.",
    ),
    (
        "swedish attribution, address in parentheses, unquoted history (talon test_swedish_from_line)",
        "Tack, det är löst.\n\nDen 1 dec. 2026 10:00:00, Acme Support (support@acme.example) skrev:\n\nHej Alice,\n",
        "Tack, det är löst.",
    ),
    (
        "danish attribution, answer below (trimmer embedded_email_norwegian)",
        f"Den 1. dec. 2026 kl. 10.00 skrev {ACME}:\n> Hvilken størrelse?\n\nStørrelse M, tak.\n",
        "[quoted text]\nStørrelse M, tak.",
    ),
    (
        "polish attribution wrapped before 'napisał:' (talon test_polish_from_block)",
        "Dziękuję, załatwione.\n\nW dniu 1.12.2026 o 10:00 Acme Support <support@acme.example>\nnapisał:\n\n"
        "> Witaj Alice,\n",
        "Dziękuję, załatwione.",
    ),
    (
        "polish 'pisze:', unquoted history (trimmer embedded_email_polish_1)",
        "Dziękuję, załatwione.\n\nW dniu 1.12.2026 o 10:00 Acme Support pisze:\n\nWitaj Alice, zamówienie wysłane.\n",
        "Dziękuję, załatwione.",
    ),
    (
        "russian attribution, unquoted history (trimmer embedded_email_russian_1)",
        "Спасибо, всё решено.\n\n1 дек. 2026 г., в 10:00, Acme Support написал:\n\nЗдравствуйте, заказ отправлен.\n",  # noqa: RUF001
        "Спасибо, всё решено.",
    ),
    (
        "russian attribution wrapped (trimmer embedded_email_russian_2)",
        "Спасибо, всё решено.\n\n1 дек. 2026 г., в 10:00, Acme Support <\nsupport@acme.example> написал:\n\n"  # noqa: RUF001
        "> Здравствуйте,\n",
        "Спасибо, всё решено.",
    ),
    # --- Outlook header blocks in other languages
    (
        "italian outlook block (trimmer email_headers_4)",
        f"Grazie.\n\nDa: {ACME}\nInviato: martedì 1 dicembre 2026 10:00\nA: Alice\nOggetto: R: Ordine 1042\n\n"
        "Ciao Alice,\n",
        "Grazie.",
    ),
    (
        "danish outlook block (talon test_danish_from_block)",
        f"Tak.\n\nFra: {ACME}\nSendt: 1. december 2026 10:00\nTil: Alice\nEmne: SV: Ordre 1042\n\nHej Alice,\n",
        "Tak.",
    ),
    (
        "polish outlook block (talon test_polish_from_block, Outlook form)",
        f"Dziękuję.\n\nOd: {ACME}\nWysłano: wtorek, 1 grudnia 2026 10:00\nDo: Alice\nTemat: RE: Zamówienie 1042\n\n"
        "Witaj Alice,\n",
        "Dziękuję.",
    ),
    (
        "german outlook block (guard; talon test_german_from_block)",
        f"Danke.\n\nVon: {ACME}\nGesendet: Dienstag, 1. Dezember 2026 10:00\nAn: Alice\nBetreff: AW: Bestellung 1042\n\n"
        "Hallo Alice,\n",
        "Danke.",
    ),
    (
        "french outlook block (guard; talon test_french_multiline_from_block)",
        f"Merci.\n\nDe : {ACME}\nEnvoyé : mardi 1 décembre 2026 10:00\nÀ : Alice\nObjet : RE: Commande 1042\n\n"
        "Bonjour Alice,\n",
        "Merci.",
    ),
    (
        "swedish outlook block, no blank line above (guard; talon test_swedish_from_block)",
        f"Tack.\nFrån: {ACME}\nSkickat: den 1 december 2026 10:00\nTill: Alice\nÄmne: SV: Order 1042\n\nHej Alice,\n",
        "Tack.",
    ),
    (
        "russian outlook block (guard; trimmer embedded_email_russian_1, Outlook form)",
        f"Спасибо.\n\nОт: {ACME}\nОтправлено: 1 декабря 2026 г. 10:00\nКому: Alice\nТема: RE: Заказ 1042\n\n"  # noqa: RUF001
        "Здравствуйте,\n",
        "Спасибо.",
    ),
    (
        "outlook dashes divider, then a bold block (erp email_2_1)",
        "Thanks.\n\n ------------------------------\n\n*From:* Acme Support [mailto:support@acme.example]\n"
        "*Sent:* Monday, November 30, 2026 10:02 AM\n*To:* Alice\n*Subject:* Re: Order 1042\n\nHi Alice,\n",
        "Thanks.",
    ),
    (
        "original message marker alone, danish (talon test_danish_original_message)",
        "Tak.\n\n-----Oprindelig meddelelse-----\n\nHej Alice,\n",
        "Tak.",
    ),
    # --- attributions that wrap
    (
        "attribution over three lines (talon test_quotation_separator_takes_3_lines)",
        "Tuesday is fine.\n\nOn 30 Nov 2026, at 10:02, Acme Support <\nsupport@acme.example>\nwrote:\n\n"
        "Does Tuesday work for you?\n",
        "Tuesday is fine.",
    ),
    (
        "attribution over five lines, Polymail (talon test_pattern_on_date_polymail)",
        "Tuesday is fine.\n\nOn Mon, Nov 30, 2026 at 10:02 AM Acme Support\n\n<\nmailto:Acme Support "
        "<support@acme.example>\n> wrote:\nDoes Tuesday work for you?\n",
        "Tuesday is fine.",
    ),
    # --- signatures only when they are signatures
    (
        "client footer in German (trimmer signatures)",
        "Please cancel order 1045.\n\nVon meinem iPhone gesendet\n",
        "Please cancel order 1045.",
    ),
    (
        "client footer with an apology (guard; trimmer signatures)",
        "Please cancel order 1045.\n\nSent from my phone, please excuse typos\n",
        "Please cancel order 1045.",
    ),
    (
        "signature delimiter, then the quote (guard; talon standard_replies/sparrow)",
        f"Please cancel order 1045.\n\n-- \nAlice\nSent with Sparrow\n\n{ON}\n> Hi\n",
        "Please cancel order 1045.",
    ),
    (
        "two dashes inside a line are no delimiter (guard; erp email_sig_delimiter_in_middle_of_line)",
        "Use the code -- it is on the label.\n\nThanks, Alice\n",
        "Use the code -- it is on the label.\n\nThanks, Alice",
    ),
    (
        "a mailing list's footer after the quote (erp email_1_2)",
        f"Hi,\n{ON}\n> Which version?\n\nVersion 2.\n\n> -- \n> Acme\n\n"
        "_______________________________________________\nacme-users mailing list\nacme-users@lists.example\n",
        "Hi,\n[quoted text]\nVersion 2.",
    ),
    # --- what a customer writes that only looks like history
    (
        "the customer's own 'On … you wrote:', no time, no address: every word, behind the doubt "
        "(talon test_line_starts_with_on; #41: it may as well be history)",
        'On 3 December you wrote:\n\n"Your refund is on its way"\n\nIt never arrived.\n',
        f'{UNSURE_MARKER}\nOn 3 December you wrote:\n\n"Your refund is on its way"\n\nIt never arrived.',
    ),
    (
        "an itinerary's From/To/Date is no header block (guard; talon test_appointment_2)",
        "From: Berlin\nTo: Paris\nDate: 1 Dec 2026\n\nI need the train tickets.\n",
        "From: Berlin\nTo: Paris\nDate: 1 Dec 2026\n\nI need the train tickets.",
    ),
    # --- nothing new: never the quote
    (
        "nothing new: a quote only (trimmer quote_only)",
        "> Your order has shipped.\n",
        "",
    ),
    (
        "nothing new: a reply sent without writing (talon test_short_quotation, nothing above)",
        f"{ON}\n> Hi Alice,\n> your order has shipped.\n",
        "",
    ),
    (
        # #41: unquoted, with nothing new above it, it may as well be what the customer means the agent to
        # read (a forward that lost its marker; mail-parser-reply's email_pl_1_1 expects its text): handed over.
        "nothing new above an Outlook block (erp email_2_3, nothing above): the doubt handed over",
        "From: Acme Support <support@acme.example>\nSent: Monday, November 30, 2026 10:02 AM\nTo: Alice\n"
        "Subject: Re: Order 1042\n\nHi Alice,\n",
        f"{UNSURE_MARKER}\nFrom: Acme Support <support@acme.example>\nSent: Monday, November 30, 2026 10:02 AM\n"
        "To: Alice\nSubject: Re: Order 1042\n\nHi Alice,",
    ),
    # The seventh split's tuning sets (gaia, quotequail's tests).
    (
        "a phone footer, then a bare 'John wrote:' above the quote (gaia's product boilerplate on top-posting)",
        "Yes, Thursday.\n\nSent from my iPad\n\nJohn wrote:\n> Shall we deliver order 1042 on Thursday?\n",
        "Yes, Thursday.",
    ),
    (
        "a lead word alone, its attribution wrapped after it (quotequail's test_quote_html#5, as text)",
        f"Thanks.\n\nOn\nMon, 30 Nov 2026 at 10:02, {ACME} wrote:\n> Your order 1042 shipped.\n",
        "Thanks.",
    ),
]

HTML_CORPUS = [
    (
        "gmail html",
        '<div dir="ltr">Also, please change my delivery address.</div><br><div class="gmail_quote">'
        '<div dir="ltr" class="gmail_attr">On Mon, Nov 30, 2026 at 10:02 AM Acme Support wrote:<br></div>'
        "<blockquote>Hi Alice, thanks for your message.</blockquote></div>",
        "Also, please change my delivery address.",
    ),
    (
        "outlook html",
        '<html><body><p>Order 1042 please.</p><div id="appendonsend"></div><hr>'
        '<div id="divRplyFwdMsg"><b>From:</b> Acme Support<br><b>Sent:</b> Monday</div>'
        "<div>Hi Alice,</div></body></html>",
        "Order 1042 please.",
    ),
    (
        "blockquote",
        "<p>Yes, 5 Elm St.</p><p>On Monday Acme wrote:</p><blockquote><p>Your address?</p></blockquote>",
        "Yes, 5 Elm St.",
    ),
    ("html entities", "<p>Fish &amp; chips &lt;3</p>", "Fish & chips <3"),
    (
        "html bottom-posted: the answer after the blockquote",
        f"<div>{html.escape(ON)}</div><blockquote>Which colour would you like?</blockquote><div>Blue, please.</div>",
        "[quoted text]\nBlue, please.",
    ),
    (
        "html interleaved, Gmail",
        '<div dir="ltr"><div class="gmail_quote"><div class="gmail_attr">' + html.escape(ON) + "</div>"
        '<blockquote class="gmail_quote">Which colour?</blockquote><div>Blue.</div>'
        '<blockquote class="gmail_quote">Which size?</blockquote><div>Large.</div></div></div>',
        "[quoted text]\nBlue.\n[quoted text]\nLarge.",
    ),
    (
        "html forward, Gmail (the forward sits in gmail_quote, no blockquote)",
        '<div dir="ltr">See below.<br><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
        "---------- Forwarded message ---------<br>From: <b>Courier</b> &lt;track@courier.example&gt;<br>"
        "Date: Mon, Nov 30, 2026<br>Subject: Delivery failed<br></div><br><div>We could not deliver parcel 77.</div>"
        "</div></div>",
        "See below.\n\n---------- Forwarded message ---------\nFrom: Courier <track@courier.example>\n"
        "Date: Mon, Nov 30, 2026\nSubject: Delivery failed\n\nWe could not deliver parcel 77.",
    ),
    (
        "html, Outlook (divRplyFwdMsg, Subject FW:) with no subject of the message's own: behind the marker",
        '<html><body><p>The total is wrong.</p><div id="appendonsend"></div><hr><div id="divRplyFwdMsg">'
        "<b>From:</b> Billing &lt;billing@shop.example&gt;<br><b>Sent:</b> Monday, November 30, 2026<br>"
        "<b>Subject:</b> FW: Invoice 77</div><div>Total: 120 EUR</div></body></html>",
        f"The total is wrong.\n\n{UNSURE_MARKER}\nFrom: Billing <billing@shop.example>\n"
        "Sent: Monday, November 30, 2026\n"
        "Subject: FW: Invoice 77\nTotal: 120 EUR",
    ),
    (
        "html forward, Apple Mail (blockquote type=cite after 'Begin forwarded message:')",
        "<div>FYI.</div><div><br><div>Begin forwarded message:</div><br>"
        '<blockquote type="cite"><div><b>From: </b>Courier &lt;track@courier.example&gt;</div>'
        "<div><b>Subject: </b>Delivery failed</div><br><div>We could not deliver parcel 77.</div></blockquote></div>",
        "FYI.\n\nBegin forwarded message:\n\nFrom: Courier <track@courier.example>\nSubject: Delivery failed\n\n"
        "We could not deliver parcel 77.",
    ),
    (
        "html, nothing new: Gmail's quote only",
        '<div class="gmail_quote"><div class="gmail_attr">' + html.escape(ON) + "</div>"
        "<blockquote>Hi Alice, your order has shipped.</blockquote></div>",
        "",
    ),
    (
        "html: a lead word alone on its source line, 'Am' / '30. Nov. 2026 … schrieb …:' (quotequail's "
        "test_quote_html#5)",
        '<div><p>Bitte liefern Sie Bestellung 1042.</p></div><div><p style="margin: 10pt 0;">Am\n'
        "30. Nov. 2026 10:02:17 schrieb Acme &lt;support@acme.example&gt;:</p>"
        '<blockquote type="cite">Wann sind Sie zu Hause?</blockquote></div>',
        "Bitte liefern Sie Bestellung 1042.",
    ),
]


def as_html(text: str) -> str:
    """A plain-text mail as Nylas gives its ``body``: HTML (a plain part escaped, lines broken)."""
    return "<div>" + html.escape(text).replace("\n", "<br>") + "</div>"


def mail_parser_reply(text: str) -> str:
    languages = ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "da", "pl", "ru"]
    return (EmailReplyParser(languages=languages).parse_reply(text=text) or "").strip()


def quotequail_top(text: str) -> str:
    unwrapped = quotequail.unwrap(text)
    if unwrapped and unwrapped.get("text_top") is not None:
        return unwrapped["text_top"].strip()
    kept = []
    for is_new, part in quotequail.quote(text):
        if not is_new:
            break
        kept.append(part)
    return "\n".join(kept).strip()


def new_words(text: str) -> str:
    """The new words without the markers: what the libraries, which do not mark quotes, can match."""
    return "\n".join(line for line in text.splitlines() if line not in (QUOTE_MARKER, UNSURE_MARKER)).strip()


def score(remover) -> int:
    rows = CORPUS + PEER_CLASSES
    return sum(
        1
        for _, text, expected in rows
        if " ".join(remover(text).split()) == " ".join(new_words(expected).split())
    )


def test_new_text_does_better_than_either_library_on_every_row():
    # Measured here: new_text 64 of 64, quotequail 21, mail-parser-reply 24 (whitespace-normalised, markers
    # aside); on the peers' own sets, scripts/measure_new_text.py (docs/agents.md).
    shipped = score(lambda text: new_words(new_text(text)))
    assert shipped == len(CORPUS) + len(PEER_CLASSES)
    assert shipped > score(quotequail_top)
    assert shipped > score(mail_parser_reply)


def rows(table):
    """A table's rows as pytest parameters, each named by its id."""
    return [pytest.param(body, expected, id=name) for name, body, expected in table]


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(("text", "expected"), rows(CORPUS + PEER_CLASSES))
def test_new_text_keeps_the_new_words(form, text, expected):
    body = as_html(text) if form.startswith("as Nylas") else text
    assert new_text(body) == expected


@pytest.mark.parametrize(("body", "expected"), rows(HTML_CORPUS))
def test_new_text_reads_html_the_same_way(body, expected):
    assert new_text(body) == expected


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("<p>one</p><p>two<br>three</p><script>x()</script>", "one\n\ntwo\nthree"),
        (
            '<p>Yes.</p><div class="gmail_quote">On Monday Acme wrote:<blockquote>Hi</blockquote></div>',
            "Yes.",
        ),
        # A plain-text body is no markup, its addresses are no tags (they were parsed away before).
        ("Hello <alice@example.com>,\n> quoted", "Hello <alice@example.com>,\n> quoted"),
    ],
)
def test_html_to_text_keeps_line_structure_and_drops_quotes_and_scripts(body, text):
    assert html_to_text(body) == text


# ---- issue #41: forms the reader did not know, and the doubt handed over, never resolved wrongly -----------
# Each row: a body, the customer's words (must be in the output), and the history (must never stand above
# UNSURE_MARKER, the line below which the reader hands its doubt over with the rest of the message).

SURE = " Acme Support <support@acme.example>"
HISTORY_FORMS = [
    ("catalan 'ha escrit:'", f"D'acord.\n\nEl dl., 30 de nov. 2026 a les 10:02,{SURE} ha escrit:\nLa comanda 1042 ha sortit.\n",
     "D'acord.", "La comanda 1042"),
    ("korean '님이 작성:'", f"감사합니다.\n\n2026년 11월 30일 (월) 오전 10:02,{SURE}님이 작성:\n주문 1042가 발송되었습니다.\n",
     "감사합니다.", "주문 1042"),
    ("finnish 'kirjoitti:' wrapped", "Kiitos!\n\nma 30. marrask. 2026 klo 10.02 Acme Support\n<support@acme.example> kirjoitti:\n"
     "Tilauksesi 1042 on lähetetty.\n", "Kiitos!", "Tilauksesi"),
    ("russian date form, no verb", f"Спасибо!\n\nПн, 30 нояб. 2026 г. в 10:02,{SURE}:\nЗаказ 1042 отправлен.\n",  # noqa: RUF001
     "Спасибо!", "Заказ 1042"),
    ("'... wrote' without a colon", f"Thanks.\n\nOn Mon, 30 Nov 2026 at 10:02,{SURE} wrote\n> Your order 1042 shipped.\n",
     "Thanks.", "Your order 1042"),
    ("date first, ending in <address>:", f"Thanks.\n\n30.11.2026 10:02,{SURE}:\nYour order 1042 shipped today.\n",
     "Thanks.", "shipped today"),
    ("a lone from-field under a blank line, the body's last (Yahoo's remnant; freegle notif_reply_text11)",
     "Ok, here's a reply\n\n    From: group-noreply@groups.example\n", "Ok, here's a reply", "group-noreply"),
    ("'On ... you wrote:' over unquoted history", "Still waiting.\n\nOn Monday you wrote:\nYour order 1042 shipped on Friday.\n",
     "Still waiting.", "shipped on Friday"),
    ("chinese outlook block, full-width colons", "好的。\n\n发件人：Acme Support <support@acme.example>\n发送时间：2026年11月30日 10:02\n"  # noqa: RUF001
     "收件人：Alice <alice@example.com>\n主题：Re: 订单 1042\n\n订单已发货。\n", "好的。", "订单已发货"),  # noqa: RUF001
    ("french webmail block", "Merci.\n\nMessage du : 30/11/2026 10:02\nDe : \"Acme\" <support@acme.example>\nA : alice@example.com\n"
     "Sujet : Re: Commande 1042\n\nLa commande 1042 est partie.\n", "Merci.", "est partie"),
    ("text after a mobile footer", "Ok thanks\n\nSent from my iPhone\n\nYour order 1042 shipped on Friday.\n",
     "Ok thanks", "shipped on Friday"),
    ("text after 'Gesendet von Outlook für Android'", "Danke\n\nGesendet von Outlook für Android\n\nIhre Bestellung wurde versandt.\n",
     "Danke", "wurde versandt"),
    ("a quoted line that lost its '>' when wrapped", f"Yes please.\n\nOn Mon, 30 Nov 2026 at 10:02,{SURE} wrote:\n"
     "> We can send a replacement for order 1042 or refund the full\namount to your card, whichever you prefer.\n> Thanks.\n",
     "Yes please.", "whichever you prefer"),
    ("a dashed title above a block, any language (crisp's Danish 'Oprindelig besked')",
     "Tak.\n\n-------- Oprindelig besked --------\nFra: Acme <support@acme.example>\nDato: 30.11.2026 10:02\n"
     "Til: alice@example.com\nEmne: Ordre 1042\n\nDin ordre er sendt.\n", "Tak.", "Oprindelig besked"),
    ("a list's footer under a quote, short rule (crisp's riak-users '__')",
     f"Thanks.\n\nOn Mon, 30 Nov 2026 at 10:02,{SURE} wrote:\n> Use the bucket API.\n>> ____\n>> riak-users mailing list\n"
     "\n__\nriak-users mailing list\nriak-users@lists.example.com\n", "Thanks.", "mailing list"),
    # The fourth split's tuning sets (t2bot, EdgeTier, extended_email_reply_parser, huan086).
    ("spanish plural 'escribieron:' over unquoted history (t2bot)",
     f"Muchas gracias.\n\nEl 30/11/2026 10:02,{SURE} escribieron:\n\nSu pedido 1042 ha salido.\n",
     "Muchas gracias.", "ha salido"),
    ("polish 'Wiadomość napisana przez … w dniu …:' over unquoted history (EdgeTier)",
     "Dziękuję.\nWiadomość napisana przez Acme support@acme.example w dniu 30.11.2026, o godz. 10:02:\n"
     "Zamówienie 1042 zostało wysłane.\n", "Dziękuję.", "zostało wysłane"),
    ("polish header block run together on one line (EdgeTier)",
     "Dziękuję.\nTemat: RE: Zamówienie 1042 Data: 2026-11-30 10:02Nadawca: \"Acme\" support@acme.example Adresat:\n"
     "Zamówienie 1042 zostało wysłane.\n", "Dziękuję.", "zostało wysłane"),
    ("german header block, each field a paragraph (extended_email_reply_parser's HTML mail)",
     "Viele Grüße\n\nJörg\n\nGesendet: Montag, 30. November 2026 um 10:02 Uhr\n\nVon: support@acme.example\n\n"
     "An: joerg@example.com\n\nBetreff: Bestellung 1042\n\nIhre Bestellung 1042 ist unterwegs.\n",
     "Jörg", "ist unterwegs"),
    ("romanian phone footer, then unquoted history (EdgeTier)",
     "Da, e bine.\n\nTrimis de pe iPhone-ul meu\n\nComanda 1042 a fost expediată.\n", "Da, e bine.", "a fost expediată"),
    ("a phone footer above Outlook's divider and block (huan086)",
     "I am fine, thanks.\n\nGet Outlook for Android <https://example.com/app>\n\n------------------------------\n"
     "*From:* Acme Support\n*Sent:* Monday, November 30, 2026 10:02 AM\n*To:* Alice\n*Subject:* Order 1042\n\n"
     "Your order 1042 shipped.\n", "I am fine, thanks.", "Your order 1042"),
    # The fifth split's tuning sets (flutter, huan086, crisp, t2bot).
    ("a header block opening with 'To:' (flutter's abnormal_quote_header_5)",
     "Hello from outlook.com!\n\nTo: alice@example.com\nFrom: support@acme.example\nSubject: Re: Order 1042\n"
     "Date: Mon, 30 Nov 2026 10:02:00 +0000\n\nYour order 1042 shipped.\n", "Hello from outlook.com!", "To: alice"),
    ("'To:' first, the sender a name, 'Sent' below (flutter's abnormal_quote_header_long)",
     "Long story short.\n\n\nTo: Alice Smith\nFrom: Support [mailto:support@acme.example]\n"
     "Sent: Monday, November 30, 2026 10:02 AM\nSubject: Re: Order 1042\n\nYour order 1042 shipped.\n",
     "Long story short.", "To: Alice Smith"),
    ("a quoted line wrapped after a comma, its tail without '>' (huan086's email_8)",
     f"Thanks.\n\nOn Mon, 30 Nov 2026 at 10:02,{SURE} wrote:\n> Your replacement for order 1042 left our warehouse today, as promised,\n"
     "and should reach you by Friday.\n>\n", "Thanks.", "reach you by Friday"),
    # The sixth split's tuning sets (gaia, mailstrip).
    ("a bare 'Name wrote:' lead-in under the new text, above the quote (gaia's simple top posting)",
     "Hats are where it is at.\n\nJim Bob wrote:\n> I like hats.\n> Yes I do!\n", "Hats are where it is at.",
     "Jim Bob wrote:"),
    ("a bare 'Name wrote:' above a quote, the answer under it (gaia's simple bottom posting)",
     "John wrote:\n> Order 1042 left the warehouse today.\nThanks, and when will it arrive?\n",
     "when will it arrive?", "John wrote:"),
    ("a lone 'From: <address>' line over unquoted text (mailstrip's test_1)",
     "Please check.\nFrom: support@acme.example\nYour order 1042 shipped on Friday.\n", "Please check.",
     "shipped on Friday"),
    ("a quoted line's tail in lower case that lost its '>' though it fitted, new words above (unquotemail's email_7)",
     f"Thanks.\n\nOn Mon, 30 Nov 2026 at 10:02,{SURE} wrote:\n> We shipped your order 1042 from our warehouse this morning.\n"
     "it should reach you by Friday.\n>\n", "Thanks.", "reach you by Friday"),
    # The seventh split's tuning sets (phabricator).
    ("a phone's long footer, then '-Reply message ----- From: …' run together (phabricator's getEmailBodies#8)",
     "Fine by me.\n\nSent from my HTC smartphone on the Now Network from Sprint!\n\n"
     "-Reply message ----- From: \"Acme Support\" <\nsupport@acme.example>\nTo: <alice@example.com>\n"
     "Subject: Order 1042 Date: Mon, Nov 30, 2026 10:02 am\n\nYour order 1042 shipped.\n", "Fine by me.",
     "Your order 1042 shipped"),
    # The eighth split: structural signs, whatever the language (tuned on the seventh split's sets, now tuning).
    ("an address and a colon, a blank line, then the quote (Teamtailor's Croatian Gmail)",
     f"Hvala.\n\npon, 30. stu 2026. u 10:02{SURE} napisao je:\n\n> Vaša narudžba 1042 je poslana.\n",
     "Hvala.", "napisao je"),
    ("an address and a colon over unquoted history, the verb unknown (Croatian)",
     f"Hvala.\n\npon, 30. stu 2026. u 10:02{SURE} napisao je:\nVaša narudžba 1042 je poslana.\n",
     "Hvala.", "je poslana"),
    ("a header block whose line breaks were lost, glued to the new words (ScultureAI's email_body)",
     "Thanks, see below.From: Acme Support Sent: Monday, 30 November 2026 10:02 AMTo: Alice Subject: Re: Order 1042\n"
     "Your order 1042 shipped.\n", "Thanks, see below.", "Your order 1042 shipped"),
    ("a glued header block on a line of its own, placeholders for its values (ScultureAI's dashes2)",
     "Here is my draft.\n\nFrom: SENDER_NAME SENDER_EMAILSent: DATE TIMETo: RECIPIENT_NAMESubject: Draft\n"
     "How about this wording for the post?\n", "Here is my draft.", "How about this wording"),
    ("a header block in a language the field table does not hold (Indonesian)",
     "Terima kasih.\n\nDari: Acme Support <support@acme.example>\nTanggal: Senin, 30 November 2026 10.02\n"
     "Kepada: alice@example.com\nPerihal: Pesanan 1042\n\nPesanan 1042 sudah dikirim.\n", "Terima kasih.", "sudah dikirim"),
    ("a relay's footer copied again under the quote, links added (Landwirtcom's email_indeed)",
     f"Thanks, done.\n\n{ON}\n> Please complete the form.\n>\n> By replying you agree that this email is processed"
     " by Acme.\n\nBy replying you agree that this email is processed by Acme <https://acme.example/terms>.\n",
     "Thanks, done.", "By replying"),
    ("a block whose subject is a sentence with a full stop: still a block (From, Sent, To)",
     "Ok.\n\nFrom: Acme Support <support@acme.example>\nSent: Monday, 30 November 2026 10:02\nTo: Alice\n"
     "Subject: Your order has left our warehouse today.\n\nYour order 1042 shipped.\n", "Ok.", "Your order 1042 shipped"),
    # The eighteenth split (k9-locales: K-9 Mail's own words in its languages, read after its one measurement).
    ("a block whose field names hold combining marks (Hindi vowel signs)",
     "धन्यवाद।\n\n-------- पुराना मैसेज--------\nसे: Acme Support <support@acme.example>\nतारीख: 30 नवंबर 2026 को 10:02\n"
     "को: alice@example.com\nसबजेक्ट: ऑर्डर 1042\n\nआपका ऑर्डर 1042 भेज दिया गया है।\n", "धन्यवाद।", "भेज दिया"),
    ("a field name whose caron was typed apart from its letter (Lithuanian 'Išsiųsta', decomposed)",
     "Ačiū.\n\nNuo: Acme <support@acme.example>\nIs\u030ciu\u0328sta: 2026 m. lapkričio 30 d. 10:02\n"
     "Kam: alice@example.com\nTema: Užsakymas 1042\n\nUžsakymas 1042 jau išsiųstas.\n", "Ačiū.", "jau išsiųstas"),
    ("field names marked with Armenian's own sign, not a colon",
     "Շնորհակալություն\n\nՈւմից\u055d Acme <support@acme.example>\nՈւղարկուած\u055d 30 նոյեմբերի 2026, 10:02\n"  # noqa: RUF001
     "Ում\u055d alice@example.com\nՎերնագիր\u055d Պատվեր 1042\n\nՊատվերը ճանապարհին է\n",  # noqa: RUF001
     "Շնորհակալություն", "ճանապարհին"),
    ("a hyphenated field name (Breton 'A-berzh')",
     "Trugarez.\n\nA-berzh: Acme <support@acme.example>\nKaset: 30 Du 2026 10:02\nDanvez: Urzh 1042\n\n"
     "Kaset eo bet hoc'h urzh.\n", "Trugarez.", "Kaset eo bet"),
    ("the sender's name and address alone on the line above the fields (tachikoma's Swedish helpdesk)",
     "Thanks.\n\nAcme Support <support@acme.example>\nÄrende: 1042\nSkickat: 2026-11-30, 10:02\n"
     "Till: Alice <alice@example.com>\n\nYour order shipped.\n", "Thanks.", "Acme Support"),
    ("a field name holding a zero-width joiner (Malayalam, Roundcube's translators)",
     "നന്ദി.\n\nവിഷയം: Order 1042\nതീയതി: 2025-12-01 10:05\nപ്രേഷിതന്\u200d: Acme <support@acme.example>\n"  # noqa: RUF001
     "സ്വീകര്\u200dത്താവ്: Bob <bob@home.example>\n\nYour order 1042 shipped on Friday.\n", "നന്ദി.", "shipped on Friday"),
    ("an address, a year and a time over the quote, no colon at the end (Malayalam's verb last)",
     "നന്ദി.\n\n2026, നവംബർ 30 10:02 AM, Acme Support <support@acme.example>ൽ എഴുതി\n> Your order 1042 shipped.\n",
     "നന്ദി.", "എഴുതി"),
]  # fmt: skip

# Lines a customer types that the rules above must leave in the new text, above any doubt.
KEPT_ABOVE_THE_DOUBT = [
    ("'Here is what John wrote:' above a quote the customer pasted",
     "Here is what John wrote:\n> Parcel left at the door.\nIt was not there.\n", "Here is what John wrote:"),
    ("'Your courier wrote:' above a pasted quote", "Your courier wrote:\n> Delivered.\nIt was not.\n",
     "Your courier wrote:"),
    ("a Title Case sentence of five words ending 'Wrote:'", "And Then The Courier Clearly Wrote:\n> Delivered.\nNo.\n",
     "And Then The Courier Clearly Wrote:"),
    ("'From: Berlin' (no address) above the customer's own text", "My trip:\nFrom: Berlin\nI need a ticket to Paris.\n",
     "I need a ticket to Paris."),
    ("a note that opens with 'From: <address>', nothing above it",
     "From: alice@example.com\nPlease change my delivery address to 5 Elm St.\n", "Please change my delivery address"),
    ("'From: <address>' as the last line", "Please write back to me at\nFrom: alice@example.com\n",
     "From: alice@example.com"),
    ("an answer in lower case typed into a quote, nothing written above it",
     "> Shall we deliver order 1042 on Thursday afternoon, or Friday,\nyes, Thursday is fine.\n> whichever suits you?\n",
     "yes, Thursday is fine."),
    ("a capitalised answer typed into a quote under new words",
     f"See below.\n\n{ON}\n> Shall we deliver order 1042 on Thursday afternoon or on Friday morning.\n"
     "Thursday, please.\n> Or next week?\n", "Thursday, please."),
    ("an answer in lower case under a quoted question",
     f"See below.\n\n{ON}\n> Shall we deliver order 1042 on Thursday afternoon or on Friday morning?\n"
     "thursday, please.\n> Or next week?\n", "thursday, please."),
    ("an answer in lower case under the quote's last line",
     f"See below.\n\n{ON}\n> We shipped your order 1042 from our warehouse this morning.\nthanks, that is great.\n",
     "thanks, that is great."),
    ("an answer in lower case under a short quoted line", f"See below.\n\n{ON}\n> Thursday afternoon,\nyes please.\n> or Friday?\n",
     "yes please."),
    ("an answer under a quote that a phone footer and a bare lead-in precede",
     "Ok.\n\nSent from my iPad\n\nJohn wrote:\n> Shall we deliver on Thursday?\nThursday is fine.\n", "Thursday is fine."),
    ("a lone 'On' the customer typed, above a line that is no attribution",
     "Delivery days:\nOn\nMonday and Thursday, please.\n", "Monday and Thursday, please."),
    ("a bottom-posted answer under the quote repeats no quoted line",
     f"See below.\n\n{ON}\n> Please confirm the delivery address for order 1042.\nIt is 5 Elm St, please confirm.\n",
     "It is 5 Elm St, please confirm."),
    ("a sentence opening with 'From:' above a real block (ScultureAI's email_with_from_in_body)",
     "Here is my reply.\n\nFrom: the beginning, I thought this was a good idea. I sent you an email about it.\n\n"
     "From: support@acme.example\nSent: Monday, 30 November 2026 10:02\nTo: alice@example.com\nSubject: Order 1042\n\n"
     "Your order shipped.\n", "From: the beginning, I thought this was a good idea."),
    ("lower-case sentences opening 'from: / sent: / to:' (ScultureAI's email_all_lowercase_headers)",
     "Here is my reply.\n\nfrom: the beginning, I thought this was a good idea.\nsent: you an email yesterday about this "
     "topic.\nto: summarize what we discussed, I think we should proceed.\n", "to: summarize what we discussed"),
    ("a short line typed again under a quote that holds it ('Thanks a lot')",
     f"{ON}\n> Your mug is on its way. Thanks a lot\n> Thanks a lot\nThanks a lot\n", "Thanks a lot"),
]  # fmt: skip

# Bodies a customer types: every word reaches the agent (behind the marker where the reader doubts).
ORDINARY = [
    ("order details pasted as Date:/Subject: lines",
     "Hi, my order details:\nDate: 3 December 2026\nSubject: Order 1042\n\nPlease redeliver order 1042.\n"),
    ("'On 3 December at 10:15 your courier wrote:' and the customer's own text",
     "Hi,\n\nOn 3 December at 10:15 your courier wrote:\nParcel not delivered.\nPlease redeliver order 1042.\n"),
    ("a list separated by '--' lines", "Hi, my order:\n--\nOrder 1042\nBlue mug x2\n--\nPlease redeliver order 1042.\n"),
    ("a reply beginning 'On Thursday.' above a quote",
     f"On Thursday.\n\nOn Mon, 30 Nov 2026 at 10:02,{SURE} wrote:\n> When can we deliver order 1042?\n"),
    ("a list under one '--' line", "Hi, my order:\n--\nOrder 1042\nBlue mug x2\n\nPlease redeliver order 1042 to 5 Elm St.\n"),
    ("'On Thursday.' above a quote that opens with its own attribution (t2bot's email_20)",
     f"On Thursday.\n\n> On Mon, 30 Nov 2026 at 10:02,{SURE} wrote:\n>\n> When can we deliver order 1042?\n"),
    ("a courier's 'escribieron:' in the customer's own words, no address",
     "Hola,\n\nEl 3 de diciembre los repartidores escribieron:\nPaquete no entregado.\nPor favor, entreguen el pedido 1042.\n"),
    ("a courier's 'Wiadomość napisana przez …:' in the customer's own words, no address",
     "Dzień dobry,\nWiadomość napisana przez kuriera w dniu 3 grudnia:\nPaczka nie dostarczona.\nProszę o ponowną dostawę.\n"),
    ("an answer typed between two quoted lines, in lower case, that the quoted line had room for",
     "> Shall we deliver order 1042 on Thursday afternoon, or Friday,\nyes, Thursday is fine.\n"
     "> whichever suits you?\n"),
    ("a header block as the first line, no new words above it (mail-parser-reply's email_pl_1_1)",
     "Od: Jan <jan@example.com>\nWysłano: środa, 1 marca 2026 12:00\nTemat: Zamówienie 1042\n\nCześć,\nproszę o zwrot.\n"),
    ("'Am' alone above the customer's own 'Montag um 10:15 schrieb der Kurier:' (no year, no address)",
     "Hallo,\nAm\nMontag um 10:15 schrieb der Kurier:\nPaket nicht zugestellt.\nBitte erneut liefern.\n"),
    ("order details of four fields with a date and a time (a header run's shape: in doubt, every word kept)",
     "Hi, my order:\nOrder: 1042\nPlaced: 30 Nov 2026 10:02\nItem: blue mug\nTotal: 12.50\n\nPlease redeliver it.\n"),
    ("a sentence naming an address and ending in a colon, the customer's text under it",
     "Hi,\nplease forward this to my colleague bob@example.com:\nThe mug arrived broken.\n"),
    ("a list between '--' lines whose last item reads like a list's footer (in doubt, every word kept)",
     "Hi, two things:\n--\nOrder 1042 is late\n--\nPlease unsubscribe me from the mailing list: alice@example.com\n"),
    ("a pasted table whose rows open with '|', one cell opening with '>' (a table, not a quote written with '|')",
     "Your rates:\n| Weight | Price |\n| >5 kg | 12.50 |\nWhich one applies to order 1042?\n"),
    ("a pasted log whose lines open with '| ' (no quote's sign: no '| >', no 'wrote:')",
     "The tracking page says:\n| 30 Nov: parcel sorted\n| 1 Dec: delivery failed\nPlease redeliver order 1042.\n"),
]  # fmt: skip

# The same bodies, where nothing is in doubt: every word, no marker.
WHOLE = [
    ("order details pasted as Date:/Subject: lines (no sender: no header block)",
     "Hi, my order details:\nDate: 3 December 2026\nSubject: Order 1042, blue mug\nQuantity: 2\n\n"
     "Please redeliver order 1042, nobody was home."),
    ("a list between two '--' lines", "Hi, my order:\n--\nOrder 1042\nBlue mug x2\n--\nPlease redeliver order 1042."),
    ("'On Thursday.' above a quote", "On Thursday."),
    ("fields typed on one line, nothing glued ('Subject: … From: … To: …')",
     "Subject: order 1042 From: Alice alice@example.com To: the courier\nPlease redeliver order 1042."),
    ("German lines as paragraphs, no sender's block (Von/An/Datum without Gesendet or Betreff)",
     "Von: Berlin\n\nAn: Paris\n\nDatum: 3. Dezember 2026\n\nBitte liefern Sie Bestellung 1042."),
    ("a phone's footer as the first line ends nothing (EdgeTier's email_iphone_start_german)",
     "Gesendet mit iPhone\n\nHallo,\nbitte liefern Sie Bestellung 1042."),
    ("'Gesendet mit DHL' as the last line is no phone footer", "Bitte prüfen Sie die Sendung.\nGesendet mit DHL"),
    ("'A boltról küldve' (sent from the shop) as the last line is no phone footer",
     "Kérem, ellenőrizze a csomagot.\nA boltról küldve"),
    ("'To: Paris / From: Berlin / Date:' is no header block (no 'Sent', no subject)",
     "To: Paris\nFrom: Berlin\nDate: 1 Dec 2026\n\nI need the train tickets."),
    ("a note typed as 'To: <address> / Subject: …' names no sender: no header block",
     "Please pass this on:\nTo: warehouse@acme.example\nSubject: Return of order 1042\n\nThe mug arrived broken."),
    ("'Outlook für iOS beziehen' inside a sentence is no footer",
     "Bitte helfen Sie mir.\nOutlook für iOS beziehen geht nicht, der Link ist kaputt."),
    ("'-Reply message ----- From: Alice' naming no address is no header's title",
     "-Reply message ----- From: Alice\nPlease redeliver order 1042."),
    ("a pasted error with glued names but no date ('Errors: JavaScript: TypeError: …')",
     "Hi,\nthe shop says:\nErrors: JavaScript: TypeError: basket is undefined\nPlease help me pay for order 1042."),
    ("a contact form's fields under the customer's words, no date",
     "Hi, here are my details.\nName: Alice Smith\nEmail: alice@example.com\nPhone: +1 555 0100\nOrder: 1042\n\n"
     "Please call me."),
    ("three fields with a date, no address (pasted order details)",
     "Hi,\nOrder: 1042\nDate: 30 Nov 2026\nItem: blue mug\n\nPlease redeliver it."),
    # Plain text that holds something tag-like is still plain text (notmuch's LKML corpus: a reviewer's
    # "<drivername>", an Acked-by's "<mel@…>" lost when the body was read as HTML).
    ("a plain body naming a tag and a placeholder ('<b>', '<drivername>'), no line-breaking tag",
     "Please mount it under /dev/<drivername> and tell me\nwhat <b>dmesg</b> says about order 1042."),
    ("a plain body with a link typed as markup ('<a href=…>…</a>'), no line-breaking tag",
     "To see the broken mug, open <a href=\"https://example.com/mug\">my photo</a>\nand tell me what you think."),
    ("a plain body naming '<br>' and '</div>', with an address in angle brackets",
     "The invoice shows a stray <br> after my name and </div> at the end.\n"
     "Please send it again to Alice <alice@example.com>."),
    ("a plain body naming '<p>' beside a placeholder no element is named",
     "Your shop page prints <p> before <ordernumber>\nin the confirmation mail for order 1042."),
    # Two "--" lines over words that are not a list's footer: a list, whole.
    ("a list between '--' lines, the last item asking to unsubscribe (no list address or link)",
     "Hi, two things:\n--\nOrder 1042 is late\n--\nPlease unsubscribe me from your mailing list, I moved."),
    ("a list between '--' lines, the last item naming an address (no unsubscribe words)",
     "Hi, two things:\n--\nOrder 1042 is late\n--\nPlease send the invoice to alice@example.com."),
]  # fmt: skip

# Signatures still go: the RFC 3676 delimiter "-- " whatever follows, a bare "--" above a name and a number.
SIGNATURES = [
    ("the RFC 3676 delimiter", "Thanks!\n\n-- \nAlice Smith\nAcme Inc. We make mugs for everyone.\n", "Thanks!"),
    ("a bare '--' above a name and a number", "Thanks!\n--\nAlice Smith\n+1 555 0100\n", "Thanks!"),
    ("hungarian phone footer (EdgeTier)", "Yes that would be fine\n\nAz iPhone-omról küldve\n", "Yes that would be fine"),
    ("dutch 'Verzonden vanuit Outlook voor iOS' (EdgeTier)", "Prima\n\nVerzonden vanuit Outlook voor iOS\n", "Prima"),
    ("romanian phone footer (EdgeTier)", "Da\n\nTrimis de pe iPhone\u2011ul meu\n", "Da"),
    ("german 'Gesendet mit der mobilen Mail App' (EdgeTier)", "Danke\nGesendet mit der mobilen Mail App\n", "Danke"),
    ("german 'Outlook für iOS beziehen' (hellogustav's german_get_outlook)",
     "Gut, und dir?\n\nLG, Eva\n\nOutlook für iOS beziehen <https://example.com/app>\n", "Gut, und dir?\n\nLG, Eva"),
]  # fmt: skip


def above_the_doubt(text: str) -> str:
    return text.split(UNSURE_MARKER)[0]


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(
    ("body", "said", "history"), [pytest.param(b, s, h, id=i) for i, b, s, h in HISTORY_FORMS]
)
def test_history_is_never_handed_over_as_new(form, body, said, history):
    text = new_text(as_html(body) if form.startswith("as Nylas") else body)
    assert said in text
    assert history not in above_the_doubt(text)


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(("body", "typed"), [pytest.param(b, t, id=i) for i, b, t in KEPT_ABOVE_THE_DOUBT])
def test_a_line_the_customer_typed_stays_above_the_doubt(form, body, typed):
    text = new_text(as_html(body) if form.startswith("as Nylas") else body)
    assert typed in above_the_doubt(text)


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize("body", [pytest.param(b, id=i) for i, b in ORDINARY])
def test_an_ordinary_body_keeps_every_word(form, body):
    text = new_text(as_html(body) if form.startswith("as Nylas") else body)
    words = [
        w for line in text.splitlines() if line not in (QUOTE_MARKER, UNSURE_MARKER) for w in line.split()
    ]
    typed = [
        w
        for line in body.splitlines()
        if (not line.startswith(">") and "wrote:" not in line) or "courier" in line
        for w in line.split()
    ]
    assert words == typed


@pytest.mark.parametrize(("name", "body"), WHOLE)
def test_an_ordinary_body_with_nothing_in_doubt_reaches_the_agent_whole(name, body):
    quoted = "\n\nOn Mon, 30 Nov 2026 at 10:02, Acme Support <support@acme.example> wrote:\n> Older words.\n"
    assert new_text(body + quoted) == body
    assert new_text(as_html(body + quoted)) == body


@pytest.mark.parametrize(("name", "body", "expected"), SIGNATURES)
def test_a_signature_still_goes(name, body, expected):
    assert new_text(body) == expected


def test_full_text_keeps_the_quote():
    body = "<p>Yes.</p><blockquote>Your order 1042?</blockquote>"
    assert full_text(body) == "Yes.\n\n> Your order 1042?"


# ---- issue #41, ninth split: a list's footer under a second "--", and plain text that holds a tag --------


LIST_FOOTERS = [
    ("LKML review: a signature, then the list's footer under a second '--' (notmuch's LKML corpus)",
     "Looks good to me.\n\nAcked-by: Mel <mel@example.org>\n\n--\nMel\nUniversity of Limerick\n--\n"
     "To unsubscribe, send a message with 'unsubscribe linux-mm' in\nthe body to majordomo@kvack.org.\n"
     "Don't email: <a href=mailto:\"dont@kvack.org\"> email@kvack.org </a>\n",
     "Looks good to me.\n\nAcked-by: Mel <mel@example.org>", "unsubscribe"),
    ("Mailman's footer under a second '--'",
     "Order 1042 arrived, thanks.\n--\nAlice\n--\nshop-users mailing list\nhttps://lists.example.org/listinfo/shop-users\n",
     "Order 1042 arrived, thanks.", "listinfo"),
    ("a list's footer, then 'On Monday you wrote:' over unquoted text (a doubt found first, further down)",
     "Looks good to me.\n--\nMel\n--\nTo unsubscribe, send 'unsubscribe linux-mm' to majordomo@kvack.org.\n\n"
     "On Monday you wrote:\nYour patch is applied.\n",
     "Looks good to me.", "unsubscribe"),
]  # fmt: skip


# Twenty-fourth split (real lists' mail, jwzthreading and mail-thread): a clear-signed reply (RFC 4880 §7,
# Enigmail's armor, whose "Comment:" line every message it signs repeats) and a quote written with "|" for
# ">" (an indent string Mutt and Gnus let a user set). The armor is no one's words; the "|" quote is a quote.
SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA1\n\n"
SIGNATURE_BLOCK = (
    "-----BEGIN PGP SIGNATURE-----\nVersion: GnuPG v1.4.10 (GNU/Linux)\n"
    "Comment: Using GnuPG with Fedora - http://enigmail.mozdev.org/\n\niEYEARECAAYFAktB\n=Xy1Z\n"
    "-----END PGP SIGNATURE-----\n"
)
ARMOR_AND_BAR_QUOTES = [
    ("a clear-signed reply above a quote: the armor headers and the signature block go",
     f"{SIGNED}Thanks, order 1042 arrived.\n\n{ON}\n> Your order 1042 shipped.\n{SIGNATURE_BLOCK}",
     "Thanks, order 1042 arrived."),
    ("a clear-signed reply whose dash-escaped lines ('- - Alex') are read unescaped",
     f"{SIGNED}> Your order 1042 shipped.\n\nIt has not arrived yet.\n\n- - Alex\n{SIGNATURE_BLOCK}",
     f"{QUOTE_MARKER}\nIt has not arrived yet.\n\n- Alex"),
    ("a quoted clear-signed message stays the quote's; the answer under it is the new text",
     f"{ON}\n> -----BEGIN PGP SIGNED MESSAGE-----\n> Hash: SHA1\n>\n> Your order 1042 shipped.\n\n"
     "Thanks, it arrived.\n",
     f"{QUOTE_MARKER}\nThanks, it arrived."),
    ("a quote written with '|', quoting in turn ('| >'), the answer under it",
     "* Acme Support\n| > Where is my order 1042?\n|\n| Your order 1042 shipped on Monday.\n\n"
     "It has not arrived yet.\n",
     f"* Acme Support\n{QUOTE_MARKER}\nIt has not arrived yet."),
    ("a quote written with '|', answered in between: a one-line run is a quote too once one run is sure",
     "| > Where is my order 1042?\n| Your order 1042 shipped on Monday.\n\nIt has not arrived yet.\n\n"
     "| Did you ask your neighbours?\n\nYes, nobody has it.\n",
     f"{QUOTE_MARKER}\nIt has not arrived yet.\n\n{QUOTE_MARKER}\nYes, nobody has it."),
    ("a quote written with '|' that holds its own attribution, the answer under it (mail-thread's testbox-6)",
     f"| {ACME} wrote:\n| Your order 1042 shipped on Monday.\n\nIt has not arrived yet.\nPlease check.\n",
     f"{QUOTE_MARKER}\nIt has not arrived yet.\nPlease check."),
]  # fmt: skip


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(("body", "expected"), [pytest.param(b, e, id=i) for i, b, e in ARMOR_AND_BAR_QUOTES])
def test_a_signatures_armor_is_no_ones_words_and_a_bar_quote_is_a_quote(form, body, expected):
    assert new_text(as_html(body) if form.startswith("as Nylas") else body) == expected


# Seventeenth split (comrade's test_outlook_alternative): Outlook's divider, 32 underscores, over sentences and
# no header block: the message replied to, its header lost, or more of the customer's words. Behind the
# marker, never handed over as theirs, never dropped.
DIVIDER = "_" * 32
DIVIDER_ALONE = [
    ("Outlook's divider over an older message's sentences, its header lost",
     f"Thursday is fine.\n\n{DIVIDER}\nWe shipped your order on Monday. It should arrive by Friday.\n",
     "Thursday is fine.", "We shipped your order on Monday."),
]  # fmt: skip


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(
    ("body", "said", "rest"), [pytest.param(b, s, r, id=i) for i, b, s, r in LIST_FOOTERS + DIVIDER_ALONE]
)
def test_a_list_footer_or_sentences_under_a_divider_are_never_the_senders_words(form, body, said, rest):
    text = new_text(as_html(body) if form.startswith("as Nylas") else body)
    assert above_the_doubt(text).strip() == said
    assert rest in text.split(UNSURE_MARKER)[1]  # behind the doubt: the reader drops no word it is unsure of


# Real HTML stays HTML: its document tags, and elements written bare ("<p>", "<b>") are no plain sign.
REAL_HTML = [
    ("a document with no line-breaking tag", "<html><body>Thanks, that works for order 1042.</body></html>",
     "Thanks, that works for order 1042."),
    ("bare '<p>' and '<b>' over a blockquote",
     "<p>Yes, <b>Thursday</b> is fine.</p><blockquote>Shall we deliver order 1042 on Thursday?</blockquote>",
     "Yes, Thursday is fine."),
    # Thirteenth split (tempo): a line break in HTML's source is a space, as a browser shows it; inside
    # <pre>, or an element styled "white-space: pre…", it is the text's own.
    ("a line break in the source inside a paragraph",
     "<html><body><p>Order 1042 is\nstill missing.</p></body></html>", "Order 1042 is still missing."),
    ("a line break in the source inside <pre>",
     "<html><body><pre>Order 1042\nstill missing.</pre></body></html>", "Order 1042\nstill missing."),
    ("a line break in the source of a 'white-space: pre-wrap' div",
     '<html><body><div style="white-space: pre-wrap">Order 1042\nstill missing.</div></body></html>',
     "Order 1042\nstill missing."),
    ("a footer link split over source lines (Mailspring's, as tempo's fixture holds it)",
     '<html><body>and again<br><br><signature>Sent from\n<a href="https://example.com/n1">\nMailspring</a\n>, '
     "the extensible, open source mail client.</signature></body></html>", "and again"),
    # Fourteenth split (inbox-zero): Outlook's signature container is the program's word that a signature
    # starts there; the customer's words above it stay.
    ("Outlook's <div id=\"Signature\"> under the new words",
     '<html><body><div>Thursday is fine.</div><br><div id="Signature"><div>Jane Doe</div>'
     "<div>Acme Inc. | 555-0100</div></div></body></html>", "Thursday is fine."),
    ("a div whose id only holds the word ('OrderSignatureNeeded')",
     '<html><body><div>Thursday is fine.</div><div id="OrderSignatureNeeded">Please sign for order 1042.</div>'
     "</body></html>", "Thursday is fine.\nPlease sign for order 1042."),
    # Twelfth split's miss (gitlab): a fragment without its document, but for Outlook's bookmark.
    ("Outlook's bookmark anchor around the text, no document", '<a name="_MailEndCompose">Thursday is fine.</a>',
     "Thursday is fine."),
    # Sixteenth split's miss (write-it, as HTML): "-- <br>" is the RFC 3676 delimiter; a browser hides its
    # space, the source holds it. The signature under it holds a sentence, so only the delimiter cuts it.
    ("'-- <br>' over a signature holding a sentence",
     "<div>Thursday is fine.<br><br>-- <br>Jane Doe<br>Ask me anything, I will answer it for you.</div>",
     "Thursday is fine."),
    ("Gmail's '--&nbsp;' signature prefix",
     '<div dir="ltr">Thursday is fine.<br><span class="gmail_signature_prefix">--&nbsp;</span><br>'
     "<div>Jane Doe<br>Ask me anything, I will answer it for you.</div></div>", "Thursday is fine."),
]  # fmt: skip

# The same lines as HTML and as plain text are read alike: a "--" line is the delimiter in HTML only where
# the sender's program wrote its space, never where a line break of the source follows the dashes.
DELIMITER_AS_PLAIN = [
    ("'-- <br>'", "<div>Thursday is fine.<br>-- <br>Jane Doe<br>Ask me anything, I will answer it.</div>",
     "Thursday is fine.\n-- \nJane Doe\nAsk me anything, I will answer it."),
    ("'--<br>', a bare separator the customer typed",
     "<div>Thursday is fine.<br>--<br>Jane Doe<br>Ask me anything, I will answer it.</div>",
     "Thursday is fine.\n--\nJane Doe\nAsk me anything, I will answer it."),
    ("'--' with a line break of the source after it",
     "<div>Thursday is fine.<br>--\n<br>Jane Doe<br>Ask me anything, I will answer it.</div>",
     "Thursday is fine.\n--\nJane Doe\nAsk me anything, I will answer it."),
]  # fmt: skip


@pytest.mark.parametrize(("name", "markup", "plain"), DELIMITER_AS_PLAIN)
def test_a_dashed_line_reads_in_html_as_in_plain_text(name, markup, plain):
    assert new_text(markup) == new_text(plain)


@pytest.mark.parametrize(("body", "expected"), rows(REAL_HTML))
def test_real_html_is_read_as_html(body, expected):
    assert new_text(body) == expected


# Plain text as a customer types it, holding something tag-like and nothing else (no address, no
# quote): every word reaches the agent, the "tags" included.
PLAIN_WITH_TAGS = [
    ("a link typed as markup, no line-breaking tag",
     "To see the broken mug, open <a href=\"https://example.com/mug\">my photo</a>\nand tell me what you think."),
    ("'<b>' around a word, no line-breaking tag", "Order 1042 is <b>still</b> missing.\nPlease check."),
    ("an anchor typed with a name no mail program writes", 'See <a name="top">the top</a>\nof my last mail.'),
]  # fmt: skip


@pytest.mark.parametrize(("name", "body"), PLAIN_WITH_TAGS)
def test_plain_text_holding_a_tag_reaches_the_agent_whole(name, body):
    assert new_text(body) == body


# ---- issue #41, tenth split: the ninth split's held-out misses, read and tuned on ---------------------------

OUTLOOK_FW_BLOCK = (
    "From: Acme Support <support@acme.example>\nSent: Monday, November 30, 2026 10:02 AM\n"
    "To: Alice <alice@example.com>\nSubject: FW: Order 1042\n\nYour order 1042 shipped on Friday.\n"
)

# Each row: a body, and the new text exact (plain text and as Nylas gives it, HTML).
TENTH = [
    ("a helpdesk's '##- Please type your reply above this line -##' (JetBrains phrases/17407)",
     "Can you check order 1042?\n##- Please type your reply above this line -##\n\nYour request 1042 was received.\n",
     "Can you check order 1042?"),
    ("'-- REPLY ABOVE THIS LINE --' over a notification (griddler)",
     "Thursday is fine.\n\n-- REPLY ABOVE THIS LINE --\n\nWhen can we deliver order 1042?\n", "Thursday is fine."),
    ("'-Original Message' run together with an attribution over unquoted history (JetBrains SL/427)",
     "Thank you.\n\n-Original Message-On 30/11/2026 10:02 AM, \"Acme Support\" <support@acme.example> wrote:\n\n"
     "Your order 1042 shipped on Friday.\n", "Thank you."),
    ("Samsung's '<div>-------- Original message --------</div>' in a text/plain part (JetBrains ML/4298)",
     "Yes, Thursday.\n\n<div>-------- Original message --------</div><div>From: Acme Support "
     "<support@acme.example> </div><div>Date:30/11/2026 10:02 (GMT+01:00) </div><div>Subject: Re: Order 1042"
     "</div>\nWhen can we deliver order 1042?\n", "Yes, Thursday."),
    ("Samsung's title under a phone footer the reader knows ('Sent from my Galaxy')",
     "Yes, Thursday.\n\nSent from my Galaxy\n\n<div>-------- Original message --------</div><div>From: Acme Support "
     "<support@acme.example> </div><div>Date:30/11/2026 10:02 (GMT+01:00) </div>\nWhen can we deliver order 1042?\n",
     "Yes, Thursday."),
    ("'On Mon, 30 Nov 2026 10:02:19 +0000' over a quote: an attribution without name or verb (JetBrains SL/21086)",
     "Thursday is fine.\n\nOn Mon, 30 Nov 2026 10:02:19 +0000\n\n> When can we deliver order 1042?\n",
     "Thursday is fine."),
]  # fmt: skip

# Each row: a body a person could type, that these rules must leave whole.
TENTH_WHOLE = [
    ("'reply above this line' inside a sentence", "I put my reply above this line of the form, sorry.\nOrder 1042."),
    ("a bullet '- original message' as the last line", "Problems:\n- wrong mug\n- original message"),
    ("a dashed title of the customer's own inside '<div>' tags in plain text",
     "<div>---- Order 1042 ----</div><div>Blue mug x2</div>\nPlease redeliver it to <alice@example.com>."),
    ("'On 3 Dec 2026 at 10:15' typed alone on a line, no seconds or zone",
     "On 3 Dec 2026 at 10:15\nthe courier rang and left."),
    ("a machine date over the customer's own text, no quote", "On Mon, 30 Nov 2026 10:02:19 +0000\nthe parcel was scanned."),
    ("'In reply to:' with words on its line", "Hi,\nIn reply to: your question about the refund, yes please."),
]  # fmt: skip


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
def test_in_reply_to_over_text_is_a_doubt(form):
    body = "Still waiting.\n\nIn reply to:\n\nYour order 1042 shipped on Friday.\n"
    text = new_text(as_html(body) if form.startswith("as Nylas") else body)
    assert above_the_doubt(text).strip() == "Still waiting."
    assert "shipped on Friday" in text  # behind the doubt, not dropped


# The message's own subject decides what an Outlook block whose Subject says "FW:" is (JetBrains ML/158).
NOTE = "Please see below, thanks.\n\n"
BY_SUBJECT = [
    ("a reply to a forward ('RE: FW:'): the block is history", "RE: FW: Order 1042", "history"),
    ("'AW: FW:' (German reply)", "AW: FW: Order 1042", "history"),
    ("the block's own subject: a reply that kept it, or a forward of a forward", "FW: Order 1042", "unsure"),
    ("a forward of that message ('FW: FW:')", "FW: FW: Order 1042", "forward"),
    # After the eleventh split (Zimbra 32, JetBrains ML/158): without the message's own subject nothing
    # tells a forward from the message replied to, and a block kept as a sure forward was history there.
    ("no subject known: either, behind the marker", None, "unsure"),
    ("an empty subject: no word on it, behind the marker", "", "unsure"),
    ("a subject neither a reply's nor the block's own: a forward, kept", "FW: Order 1041", "forward"),
]  # fmt: skip


def test_outlooks_html_divider_is_judged_by_the_subject_too():
    body = (
        '<p>Please see below, thanks.</p><div id="divRplyFwdMsg"><b>From:</b> Acme Support '
        "&lt;support@acme.example&gt;<br><b>Sent:</b> Monday, November 30, 2026 10:02 AM<br><b>To:</b> Alice"
        "<br><b>Subject:</b> FW: Order 1042</div><div>Your order 1042 shipped on Friday.</div>"
    )
    assert above_the_doubt(new_text(body)).strip() == "Please see below, thanks."  # no subject: in doubt
    assert "shipped on Friday" in new_text(body, "FW: Order 1041")  # a forward's subject: kept
    assert new_text(body, "RE: FW: Order 1042") == "Please see below, thanks."


def test_a_forward_marked_as_one_is_kept_whatever_the_subject():
    body = NOTE + "---------- Forwarded message ---------\n" + OUTLOOK_FW_BLOCK
    assert "shipped on Friday" in new_text(body, "RE: FW: Order 1042")


# Eighteenth split (k9-locales): a header block in a language the field table does not hold is in doubt, unless
# the message's own subject says it is a reply and the block names the subject it answers: then it is the
# message answered, cut for sure. A known title above such a block decides alone.
UNKNOWN_BLOCK = (
    "-------- Originalna poruka --------\nOd: Acme Support <support@acme.example>\n"
    "Poslano: 30. studenoga 2026. u 10:02\nZa: alice@example.com\nPredmet: Order 1042\n\n"
    "Your order 1042 shipped on Friday.\n"
)
UNKNOWN_BY_SUBJECT = [
    ("a reply to it ('Re:' and its subject): history", "Re: Order 1042", "history"),
    ("a reply in German ('AW:') to it: history", "AW: Order 1042", "history"),
    ("a reply to another message: in doubt", "Re: Order 1041", "unsure"),
    ("its own subject, no reply's prefix: in doubt", "Order 1042", "unsure"),
    ("a forward of it: in doubt", "Fwd: Order 1042", "unsure"),
    ("no subject known: in doubt", None, "unsure"),
]  # fmt: skip


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(
    ("block", "subject", "kind"),
    [pytest.param(OUTLOOK_FW_BLOCK, subject, kind, id=name) for name, subject, kind in BY_SUBJECT]
    + [
        pytest.param(UNKNOWN_BLOCK, subject, kind, id=f"unknown language: {name}")
        for name, subject, kind in UNKNOWN_BY_SUBJECT
    ],
)
def test_the_messages_own_subject_tells_history_from_a_forward(form, block, subject, kind):
    body = NOTE + block
    text = new_text(as_html(body) if form.startswith("as Nylas") else body, subject)
    if kind == "history":
        assert text == "Please see below, thanks."
    elif kind == "unsure":
        assert above_the_doubt(text).strip() == "Please see below, thanks."
        assert "shipped on Friday" in text
    else:
        assert UNSURE_MARKER not in text
        assert "shipped on Friday" in text


def test_a_known_title_over_fields_in_another_language_is_history_for_sure():
    body = NOTE + UNKNOWN_BLOCK.replace("Originalna poruka", "Original Message")
    assert new_text(body) == "Please see below, thanks."


def test_a_field_naming_an_address_over_a_quote_stays():
    # A patch's trailer over the quote its writer answers is the writer's (notmuch's LKML threads).
    body = "Looks good.\nSigned-off-by: Alice Example <alice@shop.example>\n\n> Fix the parser.\nThanks."
    assert (
        new_text(body)
        == f"Looks good.\nSigned-off-by: Alice Example <alice@shop.example>\n\n{QUOTE_MARKER}\nThanks."
    )


def test_a_customers_date_and_heading_over_a_quote_without_a_writer_stay():
    # A date and a time alone name no writer; "Your courier schrieb:" is no name's lead-in.
    for line in ("On 3 Dec 2026 at 10:15", "Your courier schrieb:"):
        assert new_text(f"{line}\n> Delivered.\nIt was not.") == f"{line}\n{QUOTE_MARKER}\nIt was not."


def test_a_customer_who_quotes_the_groups_sentence_keeps_it():
    body = "Why this mail?\n\nYou received this message because you are subscribed, the courier said.\n"
    assert new_text(body) == body.strip()


def test_a_date_a_person_types_over_a_quote_stays():
    body = "On 3 Dec 2026 at 10:15\n\n> Your parcel is out for delivery.\n\nNobody came."
    assert new_text(body) == f"On 3 Dec 2026 at 10:15\n\n{QUOTE_MARKER}\nNobody came."


# ---- issue #41, eleventh split: the tenth split's held-out misses, read and tuned on ---------------------
# Classes, not strings: what mobile mail programs (iOS, Samsung, Huawei, Xiaomi, NetEase, Outlook's apps)
# write under the new words in many languages, and attributions in scripts without capitals.

PHONE_FOOTERS = [
    "發自我的iPhone", "发自我的iPhone", "寄自我的 iPhone", "从我的iPhone发送", "发自我的华为手机", "来自网易邮箱大师",
    "iPhoneから送信", "Galaxy スマートフォンから送信", "나의 iPhone에서 보냄", "Samsung Galaxy 스마트폰에서 보냈습니다.",
    "Verstuurd vanaf mijn iPhone", "Enviado de meu iPhone", "Enviat des del meu iPhone",
    "Inviato dal mio dispositivo Galaxy", "Lähetetty iPhonesta", "Odesláno z iPhonu", "Odoslané z môjho iPhonu",
    "Poslano s mog iPhonea", "Wysłano z iPhone'a", "Отправлено из мобильной Почты Mail.ru", "Надіслано з iPhone",
    "Изпратено от моя iPhone", "Στάλθηκε από το iPhone μου", "Gửi từ iPhone của tôi", "Dikirim dari iPhone saya",
    "ส่งจาก iPhone ของฉัน", "iPhone'umdan gönderildi", "Samsung Galaxy akıllı telefonumdan gönderildi",  # noqa: RUF001
    "Samsung Galaxy okostelefonomról küldve", "נשלח מה-iPhone שלי", "أرسلت من الـ iPhone الخاص بي",
    "Išsiųsta iš mano iPhone", "Scarica Outlook per iOS", "Hent Outlook til Android", "iOS 版 Outlook を入手",
    "获取 Outlook for iOS",
]  # fmt: skip

# Each row: a body, and the new text exact (plain text and as Nylas gives it, HTML).
ELEVENTH = [
    *((f"phone footer {footer!r}", f"Yes, Thursday is fine.\n\n{footer}\n", "Yes, Thursday is fine.")
      for footer in PHONE_FOOTERS),
    *((f"phone footer {footer!r} over a quote", f"Yes, Thursday.\n\n{footer}\n\n{ON}\n> When can we deliver?\n",
       "Yes, Thursday.") for footer in ("發自我的iPhone", "iPhoneから送信", "나의 iPhone에서 보냄")),
    ("Thunderbird's Japanese bare lead-in over a quote (gitea)",
     "木曜日で大丈夫です。\n\n田中さんは書きました：\n> 注文1042はいつ届きますか？\n", "木曜日で大丈夫です。"),  # noqa: RUF001
    ("a Korean bare lead-in over a quote (gitea)",
     "목요일 괜찮습니다.\n\n홍길동님이 작성:\n> 주문 1042는 언제 도착하나요?\n", "목요일 괜찮습니다."),
    ("a Chinese bare lead-in with no space before the verb",
     "星期四可以。\n\n张三写道：\n> 订单1042什么时候到？\n", "星期四可以。"),  # noqa: RUF001
    ("a traditional Chinese lead-in with its date (guard)",
     "星期四可以。\n\n2026年11月30日 上午10:02，王小明寫道：\n> 訂單1042什麼時候到？\n", "星期四可以。"),  # noqa: RUF001
    ("iOS's Japanese attribution ('… <a@x>のメール:', guard)",
     "木曜日で大丈夫です。\n\n2026/11/30 10:02、田中 太郎 <tanaka@example.jp>のメール:\n\n注文1042はいつ届きますか？\n",  # noqa: RUF001
     "木曜日で大丈夫です。"),
    ("a Croatian Gmail attribution over unquoted history",
     "Četvrtak je u redu.\n\npon, 30. stu 2026. u 10:02 Acme Support <support@acme.example> je napisao:\n\n"
     "Kada možemo isporučiti narudžbu 1042?\n", "Četvrtak je u redu."),
    ("an Indonesian Gmail attribution over unquoted history",
     "Kamis bisa.\n\nPada Sen, 30 Nov 2026 pukul 10.02 Acme Support <support@acme.example> menulis:\n\n"
     "Kapan pesanan 1042 bisa dikirim?\n", "Kamis bisa."),
]  # fmt: skip

# Each row: a body a person could type, that these rules must leave whole (and whole above a quote).
ELEVENTH_WHOLE = [
    ("Turkish 'my order was sent' as the last line", "Merhaba,\nSiparişim gönderildi"),
    ("Hebrew 'will be sent tomorrow' as the last line", "שלום,\nנשלח מחר"),
    ("Arabic 'I sent from home' as the last line", "مرحبا،\nأرسلت من البيت"),
    ("Japanese 'sending from next week' as the last line", "お世話になっております。\n来週から送信"),
    ("Korean 'sent from Seoul' as the last line", "안녕하세요.\n서울에서 보냄"),
    ("Chinese 'from the heart' as the last line", "谢谢你们。\n发自内心"),
    ("Outlook and iOS named, no verb of getting", "Hallo,\nich nutze Outlook auf iOS"),
    ("a Japanese sentence ending 'I wrote as follows:' above a pasted quote", "以下のように書きました："),  # noqa: RUF001
    ("a Latin sentence before a Japanese lead-in's verb", "Please read what 田中さんは書きました："),  # noqa: RUF001
]  # fmt: skip


# ---- issue #41, thirteenth split: the twelfth split's held-out misses, read and tuned on ------------------

FORWARDED_BLOCK = (
    "From: Acme Support <support@acme.example>\nSubject: Order 1042\nDate: Mon, 30 Nov 2026 10:02\n"
    "To: alice@example.com\n\nYour order 1042 shipped on Friday."
)

# Each row: a body, and the new text exact (plain text and as Nylas gives it, HTML).
THIRTEENTH = [
    ("a helpdesk's token line directly over 'reply above this line' (alga-psa)",
     "Thursday is fine.\n\n[ACME-REPLY-TOKEN T-1042 ticketId=42]\n--- Please reply above this line ---\n\n"
     "When can we deliver order 1042?\n", "Thursday is fine."),
    ("the token under a phone footer, a quote under the line (alga-psa)",
     f"Thursday is fine.\n\nSent from my iPhone\n\n[ACME-REPLY-TOKEN T-1042]\n--- Please reply above this line ---\n\n"
     f"{ON}\n> When can we deliver order 1042?\n", "Thursday is fine."),
    ("'Forwarded message' without its dashes over the forwarded block: kept, as every forward (alga-psa)",
     f"Please see below.\n\nForwarded message\n{FORWARDED_BLOCK}\n",
     f"Please see below.\n\nForwarded message\n{FORWARDED_BLOCK}"),
]  # fmt: skip

# ---- issue #41, fourteenth round: the thirteenth split's held-out misses, read and tuned on --------------
FOURTEENTH = [
    ("a program's slogan after its name ('Sent from Mailspring, the … mail client'; tempo email_19)",
     "and again\n\nSent from Mailspring, the extensible, open source mail client.\n", "and again"),
    ("an antivirus footer and its link under a dashed line (freegle notif_reply_text10)",
     "Ok, here's a reply\n\n---\nThis email has been checked for viruses by Avast antivirus software.\n"
     "https://www.avast.com/antivirus\n", "Ok, here's a reply"),
]  # fmt: skip

FOURTEENTH += [
    ("'Original Message' without its dashes over a from-field (inbox-zero's 'Outlook-style' forward)",
     "My comments\n\nOriginal Message\nFrom: sender@example.com\n", "My comments"),
    ("'Original Message' without its dashes over a header block",
     "Thursday is fine.\n\nOriginal Message\nFrom: Acme Support <support@acme.example>\n"
     "Sent: Monday, November 30, 2026 10:02 AM\nTo: Alice <alice@example.com>\nSubject: Order 1042\n\n"
     "When can we deliver order 1042?\n", "Thursday is fine."),
]  # fmt: skip

# Fifteenth split (triage): a body that reads as an attribution and nothing else, no quote anywhere. Naming no
# address it may be the customer's sentence: handed over behind the marker, never dropped; naming an address
# it is a mail program's lead-in whose quote was cut off: nothing new.
ATTRIBUTION_ALONE = [
    ("a sentence that ends in a line 'wrote:' (triage's 'bad' string)",
     "On or around May 26th, I did something.\nwrote:\n", "On or around May 26th, I did something."),
    ("'On Monday you wrote:' alone", "On Monday you wrote:\n", "On Monday you wrote:"),
]  # fmt: skip


# Under the same divider, a few short lines are a signature drawn so (unloved's, edgetier's): they stay as they
# were; a shorter rule a person draws between their own sentences stays too.
DIVIDER_KEPT = [
    ("a signature under Outlook's divider", f"Thanks,\nPerrin Aybara\n\n{DIVIDER}\nperrin@example.com\n+1 555 0100"),
    ("a person's rule of 15 underscores between their sentences",
     "Thursday is fine.\n_______________\nPlease send it to the back door. I will be home after six."),
]  # fmt: skip


@pytest.mark.parametrize(("name", "body"), DIVIDER_KEPT)
def test_a_signature_or_a_short_rule_under_a_divider_stays(name, body):
    assert new_text(body) == body


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(("body", "words"), rows(ATTRIBUTION_ALONE))
def test_an_attribution_alone_naming_no_address_is_handed_over(form, body, words):
    text = new_text(as_html(body) if form.startswith("as Nylas") else body)
    assert above_the_doubt(text).strip() == ""
    assert words in text


# Nothing new, as before: a program's attribution (it names an address) whose quote was cut off, and any
# attribution over a quote with nothing written (a reply sent without writing).
NOTHING_NEW = [f"{ON}\n", "On Monday you wrote:\n> When can we deliver order 1042?\n"]


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize("body", NOTHING_NEW)
def test_an_attribution_a_program_wrote_or_over_a_quote_is_nothing_new(form, body):
    assert new_text(as_html(body) if form.startswith("as Nylas") else body) == ""


# Each row: a body a person could type, that the thirteenth and fourteenth rounds' rules must leave whole (and
# whole above a quote).
THIRTEENTH_WHOLE = [
    ("'Forwarded message' typed over the customer's own words", "Forwarded message\nI got order 1042 twice."),
    ("a line in square brackets typed above the request", "[urgent]\nOrder 1042 is missing."),
    ("a token-like line with no helpdesk line under it", "Thursday is fine.\n[REF-1042 id=42]\nSee you then."),
    ("'Sent from my office,' and a complaint about a mail app", "Sent from my office, the mail app keeps crashing"),
    ("'Original message' typed over the customer's words, no sender under it",
     "Problems:\nOriginal message\nwas lost, please resend order 1042."),
    ("a sentence on a virus check, then a request",
     "Hi,\nThis email has been checked for viruses by our IT team, it is safe. Please open the invoice."),
]  # fmt: skip


# Eighteenth split (pinenlime, tachikoma: read after its one measurement).
EIGHTEENTH = [
    ("Outlook's compressed block: from, date, to and subject glued around an address (pinenlime)",
     "Can you help with this?\n\nFrom: support@acme.exampleDate: Monday, November 30, 2026To: alice@example.com"
     "Subject: Order 1042\nYour order 1042 shipped.\n", "Can you help with this?"),
    ("Google Groups' footer under the new words, no delimiter above it (pinenlime)",
     "Thanks for the update.\n\nYou received this message because you are subscribed to the Google Groups \"team\" group.\n"
     "To unsubscribe from this group and stop receiving emails from it, send an email to team+unsubscribe@example.com.\n",
     "Thanks for the update."),
]  # fmt: skip


# Nineteenth split (other clients' own words in their languages: Roundcube, Thunderbird, Claws Mail; read
# after its one measurement). Q is the quote every row's attribution stands over.
Q = "\n> Your order 1042 shipped today.\n"
NINETEENTH = [
    ("'Name schrieb:', a verb that may also stand mid-line (Thunderbird's German default)",
     f"Thanks.\n\nAlice Example schrieb:{Q}", "Thanks."),
    ("a verb of Thunderbird's translators' not listed before (Belarusian)", f"Thanks.\n\nAlice Example напісаў:{Q}", "Thanks."),
    ("the verb before the name (Welsh)", f"Thanks.\n\nYsgrifennodd Alice Example:{Q}", "Thanks."),
    ("the verb before the name, a phrase after it (Scottish Gaelic)", f"Thanks.\n\nSgrìobh Alice Example na leanas:{Q}", "Thanks."),
    ("a Latin name before a verb of a script without capitals", f"Thanks.\n\nAlice Example 写道:{Q}", "Thanks."),
    ("Khmer's own sign for the colon", f"Thanks.\n\nAlice Example បាន\u200bសរសេរ៖{Q}", "Thanks."),
    ("Korean's Thunderbird: no colon", f"Thanks.\n\nAlice Example 이(가) 쓴 글{Q}", "Thanks."),
    ("a title between dashes over the quote, dashes inside it (Slovak)",
     f"Thanks.\n\n-------- Pôvodná správa --- Original Message --------{Q}", "Thanks."),
    ("a known title over the quote, the answer under it",
     f"-------- Original Message --------{Q}\nThanks.", f"{QUOTE_MARKER}\nThanks."),
    ("a date in digits, a time and a known verb, no colon (Malay)",
     f"Thanks.\n\nPada 2025-12-01 10:05, Alice Example menulis{Q}", "Thanks."),
    ("a two-digit year's date, a time and a verb (Khmer)",
     f"Thanks.\n\nនៅ\u200bលើ 1/12/25 10:05 AM, Alice Example បាន\u200bសរសេរ៖{Q}", "Thanks."),
    ("a Date header's value on its own line over the attribution (Claws Mail's 'On %d' / '%f wrote:', Catalan)",
     f"Thanks.\n\nEl Mon, 01 Dec 2025 10:05:00 +0000\nAlice Example <alice@shop.example> va escriure el següent:\n{Q}",
     "Thanks."),
    ("another verb of Thunderbird's translators' (Malay)", f"Thanks.\n\nAlice Example membalas:{Q}", "Thanks."),
    # Twentieth split (SOGo's, Horde IMP's and Cypht's words), read after its one measurement.
    ("a date, its time and an address, no colon, a blank line before the quote (Cypht's Italian)",
     f"Thanks.\n\nIn data Mon, 01 Dec 2025 10:05:00 +0000Alice Example alice@shop.example ha scritto\n{Q}", "Thanks."),
    ("a word and the sender's 'Name <address>' last, a blank line before the quote (Horde IMP's Turkish)",
     f"Thanks.\nAlinti Alice Example <alice@shop.example>\n{Q}", "Thanks."),
    ("the same with Khmer's own colon (Horde IMP's Khmer)",
     f"Thanks.\nសម្រង់ Alice Example <alice@shop.example>\u00a0៖\n{Q}", "Thanks."),
    ("a hyphenated title over a header block (Roundcube's Luxembourgish)",
     "Thanks.\n\n-------- Original-Message --------\nSujet: Order 1042\nDatum: 2025-12-01 10:05\n"
     "Vun: Alice Example <alice@shop.example>\nUn: Bob <bob@home.example>\n\nYour order 1042 shipped today.\n", "Thanks."),
    # Twenty-first split (real lists' mail: BigBang's 3GPP and Numpy lists), read after its one measurement.
    ("a name in double quotes before the verb (Netscape's German, the Numpy list)",
     f"Thanks.\n\n\"Alice Example\" schrieb:{Q}", "Thanks."),
    ("LISTSERV's footer under the new words: a rule of '#', the unsubscribe line and its link (3GPP's lists)",
     "Thanks for the note.\n\nBest regards,\nStefan\n\n" + "#" * 72 + "\n\nTo unsubscribe from the EVS list, click the "
     "following link:\nhttps://list.example.org/scripts/wa.exe?SUBED1=EVS&A=1\n", "Thanks for the note.\n\nBest regards,\nStefan"),
    ("a rule of '#' a person draws over words of their own stays, an address under them",
     "Thanks.\n\n" + "#" * 30 + "\nPlease unsubscribe me from the list, this address:\nalice@example.com\n",
     "Thanks.\n\n" + "#" * 30 + "\nPlease unsubscribe me from the list, this address:\nalice@example.com"),
]  # fmt: skip


@pytest.mark.parametrize("form", ["as Nylas gives it (HTML)", "plain text"])
@pytest.mark.parametrize(
    ("body", "expected"), rows(TENTH + ELEVENTH + THIRTEENTH + FOURTEENTH + EIGHTEENTH + NINETEENTH)
)
def test_each_rounds_forms_are_cut(form, body, expected):
    assert new_text(as_html(body) if form.startswith("as Nylas") else body) == expected


# Each person's body of those splits, whole alone and above the history its split's rules met: the tenth's
# unquoted (an attribution and older words), the eleventh's quoted.
UNQUOTED_HISTORY = (
    "\n\nOn Mon, 30 Nov 2026 at 10:02, Acme Support <support@acme.example> wrote:\nOlder words.\n"
)
QUOTED_HISTORY = "\n> Older words the customer pasted.\n"


@pytest.mark.parametrize(
    ("name", "body", "history"),
    [(name, body, UNQUOTED_HISTORY) for name, body in TENTH_WHOLE]
    + [(name, body, QUOTED_HISTORY) for name, body in ELEVENTH_WHOLE + THIRTEENTH_WHOLE],
)
def test_each_rounds_rules_leave_a_persons_body_whole(name, body, history):
    assert new_text(body) == body
    assert new_text(body + history) == body


# Twenty-second split (NOCC's own words in its languages: its reply with the older message unquoted under a
# title between dashes and its fields), read after its one measurement. A title between dashes (one dash or
# more each side) over a sender's field ("Field: Name <address>") in a language the field table does not
# hold is an older message's start: for sure when its fields name the subject the message answers, else the
# rest goes behind the marker. Each row: the subject the message carries, the body, what the agent is handed.
PERSIAN = "--\u067e\u06cc\u0627\u0645 \u0627\u0635\u0644\u06cc--"  # "--پیام اصلی--", NOCC's Persian title
ARABIC = "--  \u0627\u0644\u0631\u0633\u0627\u0644\u0629 \u0627\u0644\u0623\u0635\u0644\u064a\u0629  --"  # Arabic's, spaced
FROM, TO, SUBJECT = "\u0627\u0632:", "\u0628\u0647:", "\u0645\u0648\u0636\u0648\u0639:"  # Persian's labels
OLDER = (
    f"{FROM} Alice Example <alice@shop.example>\n{TO} Bob Customer <bob@home.example>\n"
    f"{SUBJECT} Your order 1042 has shipped\n\nHello Bob,\nyour order 1042 has shipped today.\n"
)
ANSWERED = "Re: Your order 1042 has shipped"
TWENTY_SECOND = [
    pytest.param(ANSWERED, f"Thanks, it arrived.\n\n{PERSIAN}\n{OLDER}", "Thanks, it arrived.",
                 id="its fields name the subject answered: cut (Persian)"),
    pytest.param(ANSWERED, f"Thanks, it arrived.\n\n{ARABIC}\n\n{OLDER}", "Thanks, it arrived.",
                 id="spaces inside the dashes, a blank line under the title (Arabic)"),
    pytest.param("Your order 1042 has shipped", f"Thanks, it arrived.\n\n{PERSIAN}\n{OLDER}",
                 f"Thanks, it arrived.\n\n{UNSURE_MARKER}\n{PERSIAN}\n{OLDER.rstrip()}",
                 id="no subject saying what it answers: the older message behind the marker, never as new"),
    pytest.param(ANSWERED, f"{PERSIAN}\n{OLDER}\nThanks, it arrived.\n",
                 f"{UNSURE_MARKER}\n{PERSIAN}\n{OLDER}\nThanks, it arrived.",
                 id="bottom-posted under it: everything behind the marker, the answer not dropped"),
    pytest.param("Your order 1042 has shipped",
                 "Thanks, it arrived.\n\n-- Original Nachricht --\nVon: Alice Example <alice@shop.example>\n"
                 "An: Bob <bob@home.example>\nGesendet: 01.12.2025 10:05\nBetreff: Your order 1042 has shipped\n\nHi.\n",
                 "Thanks, it arrived.", id="a known block under a two-dash title: the title goes with it (German)"),
    pytest.param("Order 1042",
                 "Please change my delivery.\n\n--Shipping details--\nEmail: bob@home.example\nStreet: 1 High St\n",
                 f"Please change my delivery.\n\n{UNSURE_MARKER}\n--Shipping details--\nEmail: bob@home.example\n"
                 "Street: 1 High St", id="a customer's own title over an address field: kept, behind the marker"),
    pytest.param("\u0631\u062f: Your order 1042 has shipped", f"Thanks, it arrived.\n\n{ARABIC}\n\n{OLDER}",
                 "Thanks, it arrived.", id="the reply's prefix as the language writes it (Arabic): cut"),
    pytest.param("Odg: Your order 1042 has shipped",
                 "\u2013 izvorna poruka \u2013\nOd: Alice Example <alice@shop.example>\nZa: Bob <bob@home.example>\n"
                 "Predmet: Your order 1042 has shipped\n\nHello Bob.\n\nThanks, it arrived.\n",
                 f"{UNSURE_MARKER}\n\u2013 izvorna poruka \u2013\nOd: Alice Example <alice@shop.example>\n"
                 "Za: Bob <bob@home.example>\nPredmet: Your order 1042 has shipped\n\nHello Bob.\n\nThanks, it arrived.",
                 id="an en dash's title opening the body, its subject answered: behind the marker, never cut (Serbian)"),
    pytest.param("Order 1042", "Please change my delivery.\n\n--Notes--\nDoor: the blue one\n",
                 "Please change my delivery.\n\n--Notes--\nDoor: the blue one",
                 id="a title over a field naming no address: the customer's, as written"),
]  # fmt: skip


@pytest.mark.parametrize(("subject", "body", "expected"), TWENTY_SECOND)
def test_a_title_over_an_older_messages_sender_starts_its_history(subject, body, expected):
    assert new_text(body, subject) == expected
