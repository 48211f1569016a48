"""What ``register-webhook`` and ``rotate-secret`` share: the rotation flag and how to read Nylas' answer.

Nylas issues a webhook secret inside one call (create, rotate) and signs with it at once. If the
answer never reaches us (timeout, dropped connection, a 5xx from a gateway in front of Nylas), the
secret Nylas now signs with may be one nobody stored. Writing the old secret back and clearing the
flag then turns every delivery into a 401, which Nylas never retries. So, unless Nylas clearly
said no, both stored secrets are kept, the flag stays up (deliveries are answered 503 and retried)
and the operator is told the one command that recovers: rotating again stores a secret Nylas
signs with.
"""

import functools
import time
from collections.abc import Callable

from ops.errors import NylasApiError, OpsError
from ops.nylas_admin import Webhook
from ops.secret_store import SecretStore, WebhookSecretValue
from replyonce.config import SecretsSettings

# How long the webhook answers unverifiable signatures 503 after a rotation starts. A run that
# finishes clears the flag at once; this only matters when it did not (crash, unknown outcome): long
# enough for the alarm (docs/operations.md#rotation-unfinished) to reach an operator who re-runs the
# command, short enough that forged requests soon get their 401 again. Longer than the webhook's
# secret cache (300 s), so every warm container sees the flag.
ROTATION_WINDOW_SECONDS = 3600
# Answers that mean the request was not carried out: Nylas said no (bad id, scope, rate limit).
# 408 and every 5xx or missing answer leave the outcome unknown.
_NOT_CARRIED_OUT = frozenset(range(400, 500)) - {408}


class RotationOutcomeUnknownError(OpsError):
    """Nylas may have issued a new secret that is not stored; the flag stays up until recovery."""


@functools.cache
def settle_seconds() -> int:
    """How long the flag is up before Nylas is asked for a secret.

    Longer than the webhook's least time between forced secret reads
    (``SecretsSettings.refresh_min_interval_seconds``, replyonce/config.py). A container whose fresh read is
    refused by that rate limit then still read the flag in its last one, so a delivery signed with
    a secret it cannot know is answered 503 (retried), never 401 (dropped). Without the wait, a
    forged request that forced a read a moment before the flag was written would leave that
    container blind to the rotation.

    """
    return SecretsSettings.refresh_min_interval_seconds + 1


def refused(exc: NylasApiError) -> bool:
    """Whether Nylas answered and clearly did not carry the request out."""
    return exc.status in _NOT_CARRIED_OUT


def until(rotating_until: str) -> str:
    """``rotating_until`` (epoch seconds) as a UTC time of day, for messages."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(rotating_until or 0)))


def outcome_unknown(
    exc: NylasApiError, recovery: str, flagged: WebhookSecretValue
) -> RotationOutcomeUnknownError:
    """The error for an unknown outcome: what happened, what the webhook does meanwhile, how to recover."""
    return RotationOutcomeUnknownError(
        f"{exc}. The stored secrets are unchanged, and deliveries whose signature matches neither "
        f"are answered 503 (Nylas retries them) until {until(flagged.rotating_until)}. {recovery}."
    )


def issue_under_flag(
    store: SecretStore,
    current: WebhookSecretValue,
    ask_nylas: Callable[[], Webhook],
    *,
    operation: str,
    recovery: str,
    recovery_without_secret: Callable[[Webhook], str],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    announce: Callable[[], None] = lambda: None,
) -> tuple[Webhook, WebhookSecretValue]:
    """Raise the rotation flag, wait, then let Nylas issue a secret; the flag stays up on return.

    The sequence ``register-webhook`` and ``rotate-secret`` share: from Nylas' answer until the
    caller stores the new secret, deliveries are signed with a secret the webhook cannot know yet,
    and must be answered 503 (retried), not 401 (dropped).

    Parameters
    ----------
    store:
        The webhook's secret.
    current:
        Its value as read before the rotation (restored when Nylas clearly refused).
    ask_nylas:
        The Nylas call that issues the secret (create the webhook, rotate its secret).
    operation:
        What that call does, in Nylas errors' words (``"create the webhook"``).
    recovery:
        What the operator does when Nylas' answer never arrived.
    recovery_without_secret:
        What the operator does when the answer carries no secret; given that answer.
    clock, sleep:
        Time, injectable for tests.
    announce:
        Progress output once the flag is written, before the wait.

    Returns
    -------
    tuple[Webhook, WebhookSecretValue]
        Nylas' answer (its ``secret`` is set) and the flagged value now stored: the caller stores
        the new secret and clears the flag.

    Raises
    ------
    NylasApiError
        Nylas clearly refused; ``current`` is stored again (nothing exists to sign with).
    RotationOutcomeUnknownError
        No usable answer (timeout, 5xx, no secret): both stored secrets are kept and the flag stays
        up until it expires or the operator recovers.
    """
    flagged = current.with_changes(rotating_until=str(int(clock()) + ROTATION_WINDOW_SECONDS))
    store.write(flagged)
    announce()
    sleep(settle_seconds())  # every webhook container sees the flag before Nylas issues a secret
    try:
        issued = ask_nylas()
    except NylasApiError as exc:
        if refused(exc):
            store.write(current)  # Nylas said no: nothing changed at its side, nothing to sign with
            raise
        raise outcome_unknown(exc, recovery, flagged) from None
    if not issued.secret:
        raise outcome_unknown(
            NylasApiError(operation, 200, message="the answer carries no webhook_secret"),
            recovery_without_secret(issued),
            flagged,
        )
    return issued, flagged
