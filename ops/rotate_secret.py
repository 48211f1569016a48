"""``rotate-secret``: a new webhook secret from Nylas, the old one kept as ``previous_webhook_secret``.

Nylas stops signing with the old secret the moment it answers (no overlap window), so the new one
is stored immediately after, before anything is printed. The webhook function accepts the current
and the previous secret and re-reads the secret when a signature fails, so deliveries signed either
way are accepted during the switch. ``--clear-previous`` later drops the old secret, which matters
when the rotation was because the old one leaked.
"""

import time
from collections.abc import Callable

from ops.errors import ConfigurationError, NylasApiError, SecretError
from ops.register_webhook import NylasFactory, require_api_key
from ops.secret_store import SecretStore

# Longer than the Powertools cache of the webhook's secret (300 s): a warm container that read the
# flag answers 503 for unverifiable signatures until it expires, even if this process dies midway.
ROTATION_WINDOW_SECONDS = 360


def rotate_secret(
    store: SecretStore,
    nylas_for: NylasFactory,
    *,
    webhook_id: str | None = None,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.time,
) -> str:
    """Rotate the webhook's secret at Nylas and store it; returns the webhook id.

    Parameters
    ----------
    store:
        The stack's Nylas secret.
    nylas_for:
        Builds the Nylas client from the API key read from ``store``.
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
    api_key = require_api_key(current, store)
    # Announce the rotation first: from Nylas' answer until the store below, deliveries are signed
    # with a secret the webhook cannot know yet, and must be answered 503 (retried), not 401 (dropped).
    store.write(current.with_changes(rotating_until=str(int(clock()) + ROTATION_WINDOW_SECONDS)))
    try:
        rotated = nylas_for(api_key).rotate_secret(target)
    except Exception:
        store.write(current)  # nothing changed at Nylas' side: back to normal
        raise
    if not rotated.secret:
        store.write(current)
        raise NylasApiError("rotate the webhook secret", 200, message="the answer carries no webhook_secret")
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
        # way out, and until then Nylas' deliveries fail their signature check.
        raise SecretError(
            f"{exc}. Nylas already signs with a new secret that could not be stored: run "
            "`make rotate-secret` again as soon as the secret is writable"
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
