"""``register-webhook``: create the Nylas webhook for the stack's URL and store its secret.

Nylas verifies the URL inside the create call (a GET with ``?challenge=``, answered by the
deployed WebhookFunction), then returns the ``webhook_secret`` once. The secret goes straight into
the stack's secret; it is never printed or written anywhere else.
"""

from collections.abc import Callable
from dataclasses import dataclass

from ops.errors import ConfigurationError, NylasApiError, SecretError
from ops.nylas_admin import NylasAdmin
from ops.secret_store import NylasSecretValue, SecretStore

# ReplyOnce answers new mail only; every other trigger would be skipped as unsupported_type anyway.
TRIGGER_TYPES = ("message.created",)
DESCRIPTION = "ReplyOnce"

NylasFactory = Callable[[str], NylasAdmin]
"""Builds the Nylas client for an API key (the region is bound by the caller)."""


@dataclass(frozen=True)
class Registration:
    """The outcome: the webhook's id and URL, and whether this run created it."""

    webhook_id: str
    webhook_url: str
    created: bool


def require_api_key(value: NylasSecretValue, store: SecretStore) -> str:
    """The API key from the secret, or an error that says how to put it there."""
    if not value.api_key:
        raise SecretError(
            f"secret {store.secret_id} has no api_key: run `python -m ops set-api-key` "
            "(it reads NYLAS_API_KEY or prompts without echo), then try again"
        )
    return value.api_key


def register_webhook(
    store: SecretStore,
    nylas_for: NylasFactory,
    webhook_url: str,
    notification_emails: list[str],
    *,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> Registration:
    """Create the webhook (unless the secret already names a live one for this URL) and store its secret.

    Parameters
    ----------
    store:
        The stack's Nylas secret.
    nylas_for:
        Builds the Nylas client from the API key read from ``store``.
    webhook_url:
        The stack output ``WebhookUrl``.
    notification_emails:
        Where Nylas mails webhook status changes (``failing``, ``failed``).
    force:
        Create a new webhook even though the secret records one.
    say:
        Progress output (never given a secret).

    Raises
    ------
    SecretError
        No ``api_key`` in the secret, or the new secret could not be stored.
    NylasApiError
        Nylas refused, e.g. 400 when the challenge failed, with Nylas' own message.
    """
    current = store.read()
    nylas = nylas_for(require_api_key(current, store))
    if current.webhook_id and not force:
        existing = nylas.get_webhook(current.webhook_id)
        if existing is not None and existing.webhook_url == webhook_url:
            say(
                f"webhook {existing.id} is already registered for {webhook_url} (status {existing.status}); "
                "nothing to do. To change its secret: `make rotate-secret`."
            )
            return Registration(existing.id, webhook_url, created=False)
        if existing is not None:
            raise ConfigurationError(
                f"the secret records webhook {existing.id} for {existing.webhook_url}, not {webhook_url}. "
                "Delete that webhook in the Nylas dashboard if it is stale, then re-run with --force."
            )
    say(f"registering {webhook_url} with Nylas (it verifies the URL with a challenge first)")
    created = nylas.create_webhook(webhook_url, list(TRIGGER_TYPES), DESCRIPTION, notification_emails)
    if not created.secret:
        raise NylasApiError("create the webhook", 200, message="the answer carries no webhook_secret")
    updated = current.with_changes(
        webhook_secret=created.secret,
        # A replaced webhook may still have deliveries in flight, signed with its secret; a first
        # registration replaces only the random value the stack was created with.
        previous_webhook_secret=current.webhook_secret if current.webhook_id else "",
        webhook_id=created.id,
    )
    try:
        store.write(updated)
    except SecretError as exc:
        raise SecretError(
            f"{exc}. Nylas created webhook {created.id}, but its secret is not stored: deliveries are "
            f'rejected until you run `make rotate-secret ARGS="--webhook-id {created.id}"`'
        ) from None
    say(
        f"registered webhook {created.id} (triggers: {', '.join(TRIGGER_TYPES)}; status notices to "
        f"{', '.join(notification_emails)}); its secret is stored in {store.secret_id}"
    )
    return Registration(created.id, webhook_url, created=True)
