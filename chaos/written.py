"""What customers really write when they answer: the bodies of the workload's written replies.

Each body is built around ground truth the checker can hold the product to:
the customer's own words (tokens that must reach the agent, wherever they
stand in the body) and the quoted history (tokens that must not, because the
customer did not write them now). The agent of a chaos run echoes what it was
given as ``Message.text`` into its reply (``chaos/mutants.py``,
``echo_agent``), so the email on the wire shows what the agent read.

The shapes are the classes the public fixture sets hold (``docs/reliability.md``,
"Real mail"), written here from their descriptions, not copied: bottom-posted
and interleaved answers, attribution lines and Outlook header blocks in the
languages mail clients write them in, and forwards whose content the customer
means the agent to read.
"""

import base64
import html
import random
from dataclasses import dataclass

# Attribution lines as the mail clients of each language write them above a quote ("On ... wrote:").
ATTRIBUTIONS = {
    "en": "On Tue, 1 Dec 2026 at 10:00, Support <{agent}> wrote:",
    "de": "Am Di., 1. Dez. 2026 um 10:00 Uhr schrieb Support <{agent}>:",
    "fr": "Le mar. 1 déc. 2026 à 10:00, Support <{agent}> a écrit :",
    "es": "El mar, 1 dic 2026 a las 10:00, Support (<{agent}>) escribió:",
    "it": "Il giorno mar 1 dic 2026 alle ore 10:00 Support <{agent}> ha scritto:",
    "nl": "Op di 1 dec 2026 om 10:00 schreef Support <{agent}>:",
    "pt": "Em ter., 1 de dez. de 2026 às 10:00, Support <{agent}> escreveu:",
    "sv": "Den tis 1 dec. 2026 kl 10:00 skrev Support <{agent}>:",
    "da": "Den tirs. 1. dec. 2026 kl. 10.00 skrev Support <{agent}>:",
    "pl": "wt., 1 gru 2026 o 10:00 Support <{agent}> napisał(a):",
    "ru": "1 декабря 2026 г., в 10:00, Support <{agent}> написал:",  # noqa: RUF001 (Cyrillic, as written)
}
# Outlook's header block above unquoted history, in the languages Outlook writes it in.
OUTLOOK_BLOCKS = {
    "en": ("From", "Sent", "To", "Subject"),
    "fr": ("De", "Envoyé", "À", "Objet"),
    "it": ("Da", "Inviato", "A", "Oggetto"),
    "de": ("Von", "Gesendet", "An", "Betreff"),
    "es": ("De", "Enviado el", "Para", "Asunto"),
    "da": ("Fra", "Sendt", "Til", "Emne"),
    "pl": ("Od", "Wysłane", "Do", "Temat"),
}
SHAPES = ("bottom_posted", "interleaved", "top_posted_attribution", "outlook_block", "forwarded")


@dataclass(frozen=True)
class WrittenReply:
    """A customer's answer: its HTML body, and the ground truth of what in it is theirs.

    Attributes
    ----------
    shape : str
        One of :data:`SHAPES`, with the language where it has one (``top_posted_attribution:it``).
    body : str
        The HTML body as the mailbox holds it.
    words : tuple of str
        Tokens the customer wrote now, or forwarded for the agent to read: each must reach the agent.
    quoted : tuple of str
        Tokens of the quoted history: none may reach the agent as the customer's words.
    """

    shape: str
    body: str
    words: tuple[str, ...]
    quoted: tuple[str, ...]


def written_reply(shape: str, language: str, tag: str, agent: str, answered: str) -> WrittenReply:
    """The customer's answer to the agent's email, in ``shape``.

    Parameters
    ----------
    shape : str
        One of :data:`SHAPES`.
    language : str
        A key of :data:`ATTRIBUTIONS` (and, for ``outlook_block``, of :data:`OUTLOOK_BLOCKS`; any
        other falls back to English there).
    tag : str
        Makes the tokens unique in the run (the message's sequence number).
    agent : str
        The agent's address, as the attribution names it.
    answered : str
        The subject of the email answered.
    """
    said = [f"said{tag}{letter}" for letter in "abc"]
    quote = [f"quote{tag}{letter}" for letter in "ab"]
    e = html.escape
    attribution = e(ATTRIBUTIONS[language].format(agent=agent))
    if shape == "bottom_posted":
        body = (
            f'<div class="gmail_quote"><div class="gmail_attr">{attribution}</div>'
            f"<blockquote>Thanks for your message, ref {quote[0]}.<br>{quote[1]}</blockquote></div>"
            f"<div>I still need help: {said[0]}</div><div>Best, Chris</div>"
        )
        return WrittenReply(f"{shape}:{language}", body, (said[0],), tuple(quote))
    if shape == "interleaved":
        body = (
            f"<div>{attribution}<br>&gt; Which order is it about? ref {quote[0]}<br>"
            f"The one from Monday, {said[0]}<br>&gt; Is the address right? {quote[1]}<br>"
            f"No, it is {said[1]}<br><br>Thanks</div>"
        )
        return WrittenReply(f"{shape}:{language}", body, (said[0], said[1]), tuple(quote))
    if shape == "top_posted_attribution":
        body = (
            f"<div>{said[0]} is what I meant.</div><div><br></div>"
            f'<div class="gmail_quote"><div class="gmail_attr">{attribution}<br></div>'
            f"<blockquote>We have received it, ref {quote[0]}.<br>{quote[1]}</blockquote></div>"
        )
        return WrittenReply(f"{shape}:{language}", body, (said[0],), tuple(quote))
    if shape == "outlook_block":
        names = OUTLOOK_BLOCKS.get(language, OUTLOOK_BLOCKS["en"])
        language = language if language in OUTLOOK_BLOCKS else "en"
        sent = "Tuesday, 1 December 2026 10:00"
        values = (f"Support &lt;{e(agent)}&gt;", sent, "Chris", f"RE: {e(answered)}")
        block = "<br>".join(f"<b>{name}:</b> {value}" for name, value in zip(names, values, strict=True))
        body = (
            f"<div>Here you go: {said[0]}</div>"
            f'<div id="divRplyFwdMsg"><hr>{block}</div>'
            f"<div>We have received it, ref {quote[0]}.<br>{quote[1]}</div>"
        )
        return WrittenReply(f"{shape}:{language}", body, (said[0],), tuple(quote))
    if shape == "forwarded":
        body = (
            f"<div>See below, {said[0]}</div><div><br></div>"
            "<div>---------- Forwarded message ---------<br>"
            "From: Parcel Desk &lt;desk@carrier.example&gt;<br>Date: Mon, 30 Nov 2026 at 09:00<br>"
            "Subject: Your parcel<br>To: Chris &lt;chris@example.com&gt;<br><br>"
            f"Your parcel is held at the depot, case {said[1]}.</div>"
        )
        return WrittenReply(shape, body, (said[0], said[1]), ())
    raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")


# ---- replies of any size ------------------------------------------------------------------------------
# A customer asking for these gets, from the chaos agent, a reply with an inline image: the logo makes it
# about 440 KB (more than a DynamoDB item holds, less than Nylas takes), the brochure over 3 MB (more
# than Nylas takes in one JSON request: https://developer.nylas.com/docs/v3/email/attachments/).
LOGO_REQUEST = "Could you send me your logo?"
BROCHURE_REQUEST = "Could you send me the whole brochure?"
INLINE_IMAGE_BYTES = {LOGO_REQUEST: 330_000, BROCHURE_REQUEST: 2_300_000}


def inline_image(raw_bytes: int) -> str:
    """An ``<img>`` of ``raw_bytes`` random bytes as a ``data:`` URI (compression cannot shrink it)."""
    data = base64.b64encode(random.Random(raw_bytes).randbytes(raw_bytes)).decode()
    return f'<img alt="Acme" src="data:image/png;base64,{data}">'
