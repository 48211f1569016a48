"""What a failed port call means for the record: the one place a Nylas status becomes a deferral.

Above :mod:`replyonce.core.situation` only. A Nylas ``401`` is our key
(rotated or revoked), a ``429`` a throttle; the alarms count them apart from
Nylas being unavailable, for a read and for a send's answer alike.
"""

from replyonce.reasons import DeferReason

_BY_STATUS = {401: DeferReason.UNAUTHORIZED, 429: DeferReason.RATE_LIMITED}


def nylas_deferral(status: int | None, otherwise: DeferReason) -> DeferReason:
    """The deferral reason of a Nylas call that failed with ``status`` (``otherwise`` for any other)."""
    return _BY_STATUS.get(status or 0, otherwise)
