"""What an answer of Nylas proves about a reply, and nothing more (invariant 1).

Nylas' documentation (idempotent-send guide, send-email guide, the changelog
of Agent Account send queueing, the sending-errors guide) decides each row of
the table in ``docs/design.md`` ("What a Nylas answer proves"), the one place
it is written; ``tests/unit/test_answers.py`` holds :func:`proof_of` to it.

Error types are matched in both spellings the docs use (``api.provider_error``
and ``provider_error``); a status or type the table does not know falls to
the side that can neither send twice nor lose the reply.
"""

from dataclasses import dataclass
from enum import Enum

# 429 types that are the rate limit, not the account: the same key later sends.
_RATE_LIMIT_TYPES = frozenset({"rate_limit_error", "nylas_rate_limit_exceeded", "too_many_requests"})
# Words an account limit's answer may carry (quota, pause, outbound rule), in its type or its message.
# Neither is documented, so the match is on words; an unknown 4xx is treated as an account limit anyway.
_ACCOUNT_WORDS = ("quota", "limit_exceeded", "paused", "pause", "suspend", "block", "rule", "forbidden")
_ACCOUNT_PHRASES = ("quota", "paused", "suspended", "blocked", "not allowed to send", "sending limit")
_MESSAGE_REJECTED_STATUSES = frozenset({400, 402, 404, 413, 422})
INVALID_IDEMPOTENT_REQUEST = "invalid_idempotent_request"


class Proof(Enum):
    """What one answer to a send (or a draft creation) proves."""

    SENT = "sent"
    QUEUED = "queued"
    MAY_HAVE_SENT = "may_have_sent"
    KEY_STUCK = "key_stuck"
    NOT_SENT = "not_sent"
    HEADERS_REFUSED = "headers_refused"
    REJECTED = "rejected"
    ACCOUNT_LIMITED = "account_limited"

    @property
    def may_have_sent(self) -> bool:
        """Whether the email may be out (or go out) after this answer."""
        return self in (Proof.SENT, Proof.QUEUED, Proof.MAY_HAVE_SENT, Proof.KEY_STUCK)


@dataclass(frozen=True)
class Answer:
    """What Nylas answered to one send attempt (``status`` ``None``: no answer at all).

    Attributes
    ----------
    status:
        The HTTP status, or ``None`` when the request failed before any answer (timeout, reset).
    error_type:
        ``error.type`` as Nylas spelled it (``""`` for a success).
    detail:
        A log-safe description (addresses redacted).
    replayed:
        ``Idempotent-Response: true``: a cached answer of an earlier request under the same key.
    message_id:
        ``data.id`` of a ``200``/``202``: the sent (or queued) message, or the draft.
    retry_after_seconds:
        ``Retry-After`` of a ``429``, when present.
    nylas_time:
        Nylas' clock (the answer's ``Date``), ``None`` when there was no answer or no header.
    """

    status: int | None
    error_type: str = ""
    detail: str = ""
    replayed: bool = False
    message_id: str = ""
    retry_after_seconds: int | None = None
    nylas_time: int | None = None


def error_type_name(error_type: str) -> str:
    """``api.provider_error`` and ``provider_error`` are one type: the bare name, lower case."""
    name = error_type.strip().lower()
    return name.removeprefix("api.")


def _account_type(name: str) -> bool:
    return any(word in name for word in _ACCOUNT_WORDS)


def proof_of(answer: Answer, *, had_custom_headers: bool = False) -> Proof:
    """What ``answer`` proves (the table of ``docs/design.md``, "What a Nylas answer proves")."""
    status = answer.status
    name = error_type_name(answer.error_type)
    if status is None:
        return Proof.MAY_HAVE_SENT
    if status == 200:
        return Proof.SENT
    if status == 202:
        return Proof.QUEUED
    if status == 409:
        if name == INVALID_IDEMPOTENT_REQUEST:
            return Proof.KEY_STUCK
        return Proof.KEY_STUCK if answer.replayed else Proof.MAY_HAVE_SENT
    if not 400 <= status < 500:
        # 5xx (provider_error included), and any 1xx/2xx/3xx this table does not know.
        return Proof.KEY_STUCK if answer.replayed else Proof.MAY_HAVE_SENT
    if status == 429:
        return Proof.NOT_SENT if not name or name in _RATE_LIMIT_TYPES else Proof.ACCOUNT_LIMITED
    if status in (401, 408):
        return Proof.NOT_SENT
    if status == 403 or _account_type(name) or any(p in answer.detail.lower() for p in _ACCOUNT_PHRASES):
        return Proof.ACCOUNT_LIMITED
    if status in _MESSAGE_REJECTED_STATUSES:
        if status == 400 and had_custom_headers:
            return Proof.HEADERS_REFUSED
        return Proof.REJECTED
    return Proof.ACCOUNT_LIMITED


def proves_generation_unsent(answer: Answer, attempts: int) -> bool:
    """Whether nothing went out under this answer's key, by any attempt of it.

    A replayed answer is the *first* request's answer: when it is a "not
    sent", no request under the key sent anything. A fresh "not sent" speaks
    only for its own request, so it proves the key unsent only when it was
    the key's only attempt.
    """
    proof = proof_of(answer)
    if proof.may_have_sent:
        return False
    return answer.replayed or attempts <= 1
