"""``register-webhook``: create the Nylas webhook for the stack's URL and store its secret.

Nylas verifies the URL inside the create call (a GET with ``?challenge=``, answered by the
deployed WebhookFunction), then returns the ``webhook_secret`` once. The secret goes straight into
the webhook's secret; it is never printed or written anywhere else.

Why the rotation flag is set before the create: once Nylas has created the webhook it may deliver
at once, signed with a secret we store only a moment later (or never, if the answer is lost).
While ``rotating_until`` is ahead, the webhook answers such deliveries 503, which Nylas retries,
instead of a 401 it would drop.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

from ops.errors import ConfigurationError, SecretError
from ops.nylas_admin import NylasAdmin
from ops.rotation import issue_under_flag, until
from ops.secret_store import ApiKeyStore, SecretStore

# What the replier needs to hear, the one list `make register-webhook` and `make listen` subscribe to:
# new mail, and the outcome of a send Nylas queued for an Agent Account (202 Accepted is not yet a
# sent email): `message.send_failed` (it never went out) and `message.delivered` (it did); and the
# grants' lives (issue 42: registered, paused, resumed, forgotten; replyonce/shell/grant_life.py). A
# webhook receives a trigger type only if subscribed to it; every other type would only be skipped.
TRIGGER_TYPES = (
    "message.created",
    "message.send_failed",
    "message.delivered",
    "grant.created",
    "grant.updated",
    "grant.expired",
    "grant.deleted",
)
DESCRIPTION = "ReplyOnce"


@dataclass(frozen=True)
class Registration:
    """The outcome: the webhook's id and URL, and whether this run created it."""

    webhook_id: str
    webhook_url: str
    created: bool


def require_api_key(store: ApiKeyStore) -> str:
    """The API key from the replier's secret, or an error that says how to put it there."""
    key = store.read()
    if not key:
        raise SecretError(
            f"secret {store.secret_id} has no api_key: run `make set-api-key` "
            "(it reads NYLAS_API_KEY or prompts without echo), then try again"
        )
    return key


def register_webhook(
    store: SecretStore,
    nylas: NylasAdmin,
    webhook_url: str,
    notification_emails: list[str],
    *,
    force: bool = False,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> Registration:
    """Create the webhook (unless the secret already names a live one for this URL) and store its secret.

    Parameters
    ----------
    store:
        The webhook's secret.
    nylas:
        The Nylas client (built with the API key from the replier's secret).
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
        The new secret could not be stored.
    NylasApiError
        Nylas refused, e.g. 400 when the challenge failed, with Nylas' own message; or the outcome
        is unknown (no answer), with the way to recover.
    """
    current = store.read()
    if current.webhook_id and not force:
        existing = nylas.get_webhook(current.webhook_id)
        if existing is not None and existing.webhook_url == webhook_url:
            say(
                f"webhook {existing.id} is already registered for {webhook_url} (status {existing.status}); "
                "nothing to do. To change its secret: `make rotate-secret`."
            )
            missing = [t for t in TRIGGER_TYPES if t not in existing.trigger_types]
            if missing:
                # Registered before the replier needed them: Nylas sends it only what it subscribes to.
                say(
                    f"it lacks the triggers {', '.join(missing)}, which the replier needs (queued Agent "
                    "Account sends; grants' lives): add them to the webhook in the Nylas dashboard "
                    "(Webhooks → edit)"
                )
            return Registration(existing.id, webhook_url, created=False)
        if existing is not None:
            raise ConfigurationError(
                f"the secret records webhook {existing.id} for {existing.webhook_url}, not {webhook_url}. "
                "Delete that webhook in the Nylas dashboard if it is stale, then re-run with --force."
            )
    created, flagged = issue_under_flag(
        store,
        current,
        lambda: nylas.create_webhook(webhook_url, list(TRIGGER_TYPES), DESCRIPTION, notification_emails),
        operation="create the webhook",
        recovery=(
            f"Nylas may have created a webhook for {webhook_url} whose secret we never received. "
            "Look for it in the Nylas dashboard: if it is there, run "
            '`make rotate-secret ARGS="--webhook-id <its id>"` (that stores a secret for it); if not, '
            "run `make register-webhook` again"
        ),
        recovery_without_secret=lambda created: (
            f'Nylas created webhook {created.id}: run `make rotate-secret ARGS="--webhook-id {created.id}"`'
        ),
        clock=clock,
        sleep=sleep,
        announce=lambda: say(
            f"registering {webhook_url} with Nylas (it verifies the URL with a challenge first)"
        ),
    )
    updated = current.with_changes(
        webhook_secret=created.secret,
        # A replaced webhook may still have deliveries in flight, signed with its secret.
        previous_webhook_secret=current.webhook_secret if current.webhook_id else "",
        webhook_id=created.id,
        rotating_until="",
    )
    try:
        store.write(updated)
    except SecretError as exc:
        raise SecretError(
            f"{exc}. Nylas created webhook {created.id}, but its secret is not stored: deliveries are "
            f"answered 503 (retried) until {until(flagged.rotating_until)}, then rejected. Run "
            f'`make rotate-secret ARGS="--webhook-id {created.id}"` as soon as the secret is writable'
        ) from None
    say(
        f"registered webhook {created.id} (triggers: {', '.join(TRIGGER_TYPES)}; status notices to "
        f"{', '.join(notification_emails) or 'nobody'}); its secret is stored in {store.secret_id}"
    )
    return Registration(created.id, webhook_url, created=True)
