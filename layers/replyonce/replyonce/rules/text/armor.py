"""OpenPGP's cleartext signature (RFC 4880 §7): the armor around signed text is no one's words.

A clear-signed message (GnuPG's ``--clearsign``, Enigmail, Mutt) opens with "-----BEGIN PGP SIGNED
MESSAGE-----" and its armor headers ("Hash: SHA256") down to a blank line, writes each line of the text
that opens with a dash as "- -…" (dash-escaped), and closes with the signature block, "-----BEGIN PGP
SIGNATURE-----" to "-----END PGP SIGNATURE-----". Why it matters to the reader: the block's "Version:"
and "Comment:" lines are the same in every message one program signs, so read as words they are text an
earlier message of the thread holds; and "- --" is a delimiter the reader would not see."""

_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_END = "-----END PGP SIGNATURE-----"
_DASH_ESCAPE = "- "


def _opens_signed_part(line: str) -> bool:
    """Whether ``line`` opens a clear-signed part: the armor line alone, never quoted ("> -----BEGIN …")."""
    return line.strip() == _SIGNED


def without_armor(lines: list[str]) -> list[str]:
    """``lines`` with each clear-signed part's armor taken off: its opening line and armor headers, its
    signature block, and the dash-escape of its lines. A quoted armor ("> -----BEGIN …") is the quote's
    and stays; lines outside a signed part stay as they are."""
    if not any(_opens_signed_part(line) for line in lines):
        return lines
    out: list[str] = []
    phase = "outside"
    for line in lines:
        mark = line.strip()
        if phase == "outside" and _opens_signed_part(line):
            phase = "armor headers"
        elif phase == "armor headers":
            phase = "armor headers" if mark else "signed"
        elif phase == "signed" and mark == _SIGNATURE:
            phase = "signature"
        elif phase == "signed":
            out.append(line.removeprefix(_DASH_ESCAPE) if line.startswith(_DASH_ESCAPE + "-") else line)
        elif phase == "signature":
            phase = "outside" if mark == _END else "signature"
        else:
            out.append(line)
    return out
