"""``X-Nylas-Signature``: hex HMAC-SHA256 of the exact bytes Nylas sent."""

import hashlib
import hmac
import string

SIGNATURE_HEADER = "x-nylas-signature"
_HEX_DIGITS = frozenset(string.hexdigits)
_DIGEST_HEX_LENGTH = hashlib.sha256().digest_size * 2


def sign(body: bytes, secret: str) -> str:
    """Return the signature Nylas would send for ``body`` (lowercase hex)."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_matches(body: bytes, signature: str | None, secrets: tuple[str, ...]) -> bool:
    """Whether ``signature`` is the HMAC of ``body`` under any of ``secrets``.

    Parameters
    ----------
    body:
        The raw request bytes, before any decompression or JSON parsing:
        for compressed delivery Nylas signs the gzip bytes.
    signature:
        The header value; Nylas does not state its letter case, so it is
        compared lowercased.
    secrets:
        The current secret and, during a rotation, the previous one.
    """
    if not signature:
        return False
    candidate = signature.strip().lower()
    # Length and alphabet first: compare_digest is constant-time only for
    # equal lengths, and a malformed header needs no HMAC at all.
    if len(candidate) != _DIGEST_HEX_LENGTH or not set(candidate) <= _HEX_DIGITS:
        return False
    return any(hmac.compare_digest(sign(body, secret), candidate) for secret in secrets if secret)
