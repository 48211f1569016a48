"""What ``register-webhook`` and ``rotate-secret`` share: the rotation flag and how to read Nylas' answer.

Nylas issues a webhook secret inside one call (create, rotate) and signs with it at once. If the
answer never reaches us (timeout, dropped connection, a 5xx from a gateway in front of Nylas), the
secret Nylas now signs with may be one nobody stored. Writing the old secret back and clearing the
flag then turns every delivery into a 401, which Nylas never retries. So, unless Nylas clearly
said no, both stored secrets are kept, the flag stays up (deliveries are answered 503 and retried)
and the operator is told the one command that recovers: rotating again stores a secret Nylas
signs with.
"""

import time

from devstack.template import load_template
from ops.errors import NylasApiError, OpsError


def _refresh_interval() -> int:
    variables = load_template()["Resources"]["WebhookFunction"]["Properties"]["Environment"]["Variables"]
    return int(variables["SECRETS_REFRESH_MIN_INTERVAL_SECONDS"])


# How long the webhook answers unverifiable signatures 503 after a rotation starts. A run that
# finishes clears the flag at once; this only matters when it did not (crash, unknown outcome): long
# enough for the alarm (docs/operations.md#rotation-unfinished) to reach an operator who re-runs the
# command, short enough that forged requests soon get their 401 again. Longer than the webhook's
# secret cache (300 s), so every warm container sees the flag.
ROTATION_WINDOW_SECONDS = 3600
# How long the flag is up before Nylas is asked for a secret: longer than the webhook's least time
# between forced secret reads. A container whose fresh read is refused by that rate limit then
# still read the flag in its last one, so a delivery signed with a secret it cannot know is
# answered 503 (retried), never 401 (dropped). Without the wait, a forged request that forced a
# read a moment before the flag was written would leave that container blind to the rotation.
SETTLE_SECONDS = _refresh_interval() + 1
# Answers that mean the request was not carried out: Nylas said no (bad id, scope, rate limit).
# 408 and every 5xx or missing answer leave the outcome unknown.
_NOT_CARRIED_OUT = frozenset(range(400, 500)) - {408}


class RotationOutcomeUnknownError(OpsError):
    """Nylas may have issued a new secret that is not stored; the flag stays up until recovery."""


def refused(exc: NylasApiError) -> bool:
    """Whether Nylas answered and clearly did not carry the request out."""
    return exc.status in _NOT_CARRIED_OUT


def until(rotating_until: str) -> str:
    """``rotating_until`` (epoch seconds) as a UTC time of day, for messages."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(rotating_until or 0)))


def outcome_unknown(exc: NylasApiError, recovery: str, flagged) -> RotationOutcomeUnknownError:
    """The error for an unknown outcome: what happened, what the webhook does meanwhile, how to recover."""
    return RotationOutcomeUnknownError(
        f"{exc}. The stored secrets are unchanged, and deliveries whose signature matches neither "
        f"are answered 503 (Nylas retries them) until {until(flagged.rotating_until)}. {recovery}."
    )
