"""What ends the new words without being the customer's: the RFC 3676 ``-- `` signature, a mail
client's footer ("Sent from my iPhone" in its languages), a mailing list's footer.

Why the remainder rule for footers: "Sent from my cell, please excuse typos" is a footer, "Sent from my
desk, is much easier" is a sentence; only a device's or a program's name (and an apology or a
program's slogan after it) makes the line a footer."""

import re

from replyonce.rules.text.lines import RFC_DELIMITER

_SIGNATURE_DELIMITER = re.compile(r"^--\s?$")
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
MAILING_LIST = re.compile(r"mailing list\s*$", re.I)
# Google Groups' footer under a post ("You received this message because you are subscribed to the Google
# Groups …" / "To unsubscribe from this group …"): a list's words, never the sender's.
_GROUPS_FOOTER = re.compile(r"^\s*you received this (?:message|email) because you are subscribed\b", re.I)
_GROUPS_FOOTER_WORDS = re.compile(r"\bgoogle groups\b|\bunsubscribe\b", re.I)
# A list's footer under its own "--" line (LKML's "To unsubscribe … majordomo@…", Mailman's listinfo):
# one of these words, and the list's address or link.
_LIST_FOOTER_WORDS = re.compile(r"\bunsubscribe\b|\bmailing list\b|/listinfo\b|\bmajordomo\b", re.I)
# LISTSERV's rule over the footer it appends to a list's posts (72 "#"), and longer rules of "#".
_LIST_RULE = re.compile(r"^\s*#{20,}\s*$")
_LISTSERV_UNSUBSCRIBE = re.compile(r"^to unsubscribe from the \S+ list, click the following link:", re.I)
_ADDRESS_OR_LINK = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|https?://\S+", re.I)
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
_TRACKER = "\u1427"  # "ᐧ", the alt text of a mail-tracking extension's pixel


def client_signature(line: str) -> bool:
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


def footer_link(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a link alone, directly under a client's footer: the footer's own
    ("This email has been checked for viruses by Avast antivirus software." / "https://www.avast.com/…")."""
    return (
        index > 0
        and bool(lines[index].strip())
        and not _LINKS.sub("", lines[index]).strip()
        and client_signature(lines[index - 1])
    )


def _decoration(line: str) -> bool:
    """A line with no letter or digit ("***", "====", a tracker's "ᐧ"), meaningless at the end."""
    return not _LETTER_OR_DIGIT.search(line.replace(_TRACKER, ""))


def _mailing_list_footer(lines: list[str]) -> int | None:
    """Where a trailing mailing-list footer ("____ / riak-users mailing list / …", Google Groups' "You
    received this message because you are subscribed to …", LISTSERV's "#####…" rule over "To unsubscribe
    from the … list, click the following link:" and its link) starts, if any."""
    for index in range(max(0, len(lines) - 8), len(lines)):
        footer = " ".join(lines[index : index + 3])
        if _GROUPS_FOOTER.match(lines[index]) and _GROUPS_FOOTER_WORDS.search(footer):
            return index
        ruled = index + 1 < len(lines) and re.match(r"^_{2,}$", lines[index].strip())
        if ruled and MAILING_LIST.search(lines[index + 1]):
            return index
        if _LIST_RULE.match(lines[index]) and _listserv_footer(lines[index + 1 :]):
            return index
    return None


def _listserv_footer(lines: list[str]) -> bool:
    """Whether the lines under a rule of "#" are LISTSERV's footer and nothing else: "To unsubscribe from
    the … list, click the following link:" and the link. Why its own words and not any unsubscribe line:
    a rule is also what people draw between their words, and "To unsubscribe me, …" is a customer's."""
    text = [line.strip() for line in lines if line.strip()]
    return (
        1 <= len(text) <= 3
        and bool(_LISTSERV_UNSUBSCRIBE.match(text[0]))
        and all(_ADDRESS_OR_LINK.search(line) for line in text[1:])
    )


def trimmed_end(lines: list[str], kinds: list[str]) -> int:
    """The end of the new words: trailing quotes, attributions, footers and decoration dropped."""
    end = len(lines)
    while end:
        line = lines[end - 1].strip()
        if (
            not line
            or kinds[end - 1] in ("Q", "A")
            or client_signature(line)
            or _decoration(line)
            or footer_link(lines, end - 1)
        ):
            end -= 1
            continue
        footer = _mailing_list_footer(lines[:end])
        if footer is not None:
            end = footer
            continue
        break
    return end


def signature_like(lines: list[str]) -> bool:
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


def without_signature(lines: list[str], kinds: list[str]) -> tuple[list[str], list[str], int | None, bool]:
    """The live lines without their signature, where a doubtful one starts (None: no doubt), and whether
    that doubt stands over a list's footer (then it holds even where an earlier doubt was found).

    A lone ``-- `` (RFC 3676) starts a signature; a lone bare ``--`` does when what follows reads as
    one (:func:`signature_like`), else it is a doubt. Two or more ``--`` lines separate a list, unless
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
    below = [line for line in lines[after:stop] if line.strip() and not client_signature(line)]
    if lines[delimiters[0]] == RFC_DELIMITER or (footer is None and signature_like(below)):
        return lines[: delimiters[0]], kinds[: delimiters[0]], footer, footer is not None
    # A bare "--" over a footer's "--" may be one item of a list: from it on, in doubt.
    return lines, kinds, delimiters[0], footer is not None
