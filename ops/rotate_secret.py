"""``rotate-secret``: a new webhook secret from Nylas, the old one kept as ``previous_webhook_secret``.

Nylas stops signing with the old secret the moment it answers (no overlap window), so the new one
is stored immediately after, before anything is printed. The webhook function accepts the current
and the previous secret and re-reads the secret when a signature fails, so deliveries signed either
way are accepted during the switch. ``--clear-previous`` later drops the old secret, which matters
when the rotation was because the old one leaked.

Failure handling (``ops/rotation.py``): the flag ``rotating_until`` is written before Nylas is
asked, and cleared only when the new secret is stored, or when Nylas clearly refused. A timeout, a
5xx, an answer without a secret, a failed store or a crash leaves the flag and both stored secrets
as they are: deliveries are answered 503 until the flag expires, and running the command again
finishes the job (it rotates once more and stores what Nylas answers).
"""

import time
from collections.abc import Callable

from ops.errors import ConfigurationError, SecretError
from ops.nylas_admin import NylasAdmin
from ops.rotation import issue_under_flag, until
from ops.secret_store import SecretStore

RECOVERY = "Run `make rotate-secret` again now: it rotates once more and stores the secret Nylas answers"


def rotate_secret(
    store: SecretStore,
    nylas: NylasAdmin,
    *,
    webhook_id: str | None = None,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Rotate the webhook's secret at Nylas and store it; returns the webhook id.

    Parameters
    ----------
    store:
        The webhook's secret.
    nylas:
        The Nylas client (built with the API key from the replier's secret).
    webhook_id:
        Overrides the ``webhook_id`` recorded by ``register-webhook`` (e.g. a webhook created in
        the Nylas dashboard).
    """
    current = store.read()
    target = webhook_id or current.webhook_id
    if not target:
        raise ConfigurationError(
            f"secret {store.secret_id} records no webhook_id: run `make register-webhook`, or pass "
            "--webhook-id with the id shown in the Nylas dashboard"
        )
    if current.rotating_until:
        say(
            f"an earlier rotation did not finish (flag set until {until(current.rotating_until)}): "
            "rotating again stores the secret Nylas signs with from now on"
        )
    rotated, flagged = issue_under_flag(
        store,
        current,
        lambda: nylas.rotate_secret(target),
        operation="rotate the webhook secret",
        recovery=f"Nylas may already sign with a new secret. {RECOVERY}",
        recovery_without_secret=lambda rotated: f"Nylas has probably rotated. {RECOVERY}",
        clock=clock,
        sleep=sleep,
    )
    try:
        store.write(
            current.with_changes(
                webhook_secret=rotated.secret,
                previous_webhook_secret=current.webhook_secret,
                webhook_id=target,
                rotating_until="",
            )
        )
    except SecretError as exc:
        # The new secret exists only in this process and must not be printed: rotating again is the
        # way out. The flag stays up, so until it expires deliveries are retried, not dropped.
        raise SecretError(
            f"{exc}. Nylas already signs with a new secret that could not be stored; deliveries are "
            f"answered 503 (retried) until {until(flagged.rotating_until)}. Run `make rotate-secret` "
            "again as soon as the secret is writable"
        ) from None
    say(
        f"rotated the secret of webhook {target}: stored as webhook_secret, the old one kept as "
        "previous_webhook_secret (both accepted). Once Nylas' retries of older notifications are "
        "over (30 minutes), drop it: `make rotate-secret ARGS=--clear-previous`."
    )
    return target


def clear_previous_secret(store: SecretStore, *, say: Callable[[str], None] = print) -> bool:
    """Remove ``previous_webhook_secret``; ``False`` when there was none."""
    current = store.read()
    if not current.previous_webhook_secret:
        say("no previous_webhook_secret to clear")
        return False
    store.write(current.with_changes(previous_webhook_secret=""))
    say("cleared previous_webhook_secret: only the current webhook secret is accepted now")
    return True
