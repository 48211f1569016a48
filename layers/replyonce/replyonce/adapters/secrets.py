"""The Nylas secrets, read through Powertools Parameters: one secret per function.

``WebhookSecrets`` (``NYLAS_SECRETS_ID``) holds what the internet-facing webhook
needs to verify signatures; ``NylasApiKey`` (``NYLAS_API_KEY_SECRET_ID``) holds
the API key the replier sends with. Why two secrets: the API key can read and
send mail for every grant, so the function that parses requests from the
internet must not be able to read it (template.yaml grants each role one ARN).
"""

import time
from collections.abc import Callable
from typing import Any

import boto3
from aws_lambda_powertools.utilities.parameters import SecretsProvider
from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError, TransformParameterError
from botocore.config import Config

from replyonce.config import SecretsSettings
from replyonce.exceptions import SecretsUnavailableError
from replyonce.observability import logger

# Nylas waits 10 s for the webhook's answer, and a bad signature costs a fresh read on top of the
# cached one: a read that cannot finish in a few seconds is given up (503, retried), not waited on.
# botocore's defaults (60 s to connect and to read, several attempts) outlast the function.
SECRETS_READ_ATTEMPTS = 2
SECRETS_CLIENT_CONFIG = Config(
    connect_timeout=1,
    read_timeout=2,
    retries={"mode": "standard", "total_max_attempts": SECRETS_READ_ATTEMPTS},
)


def bounded_provider(aws: boto3.session.Session | None = None) -> SecretsProvider:
    """A Powertools ``SecretsProvider`` whose reads give up in time (:data:`SECRETS_CLIENT_CONFIG`).

    Parameters
    ----------
    aws:
        The boto3 session its client comes from (the container's); ``None``: boto3's default.
    """
    return SecretsProvider(boto3_session=aws, boto_config=SECRETS_CLIENT_CONFIG)


class _JsonSecret:
    """A Secrets Manager secret holding a JSON object, cached by a Powertools ``SecretsProvider``."""

    def __init__(self, settings: SecretsSettings, provider: SecretsProvider | None = None) -> None:
        self._settings = settings
        self._provider = provider or bounded_provider()

    def _read(self, *, fresh: bool) -> dict[str, Any]:
        try:
            value = self._provider.get(
                self._settings.secrets_id,
                max_age=self._settings.max_age_seconds,
                transform="json",
                force_fetch=fresh,
            )
        except (GetParameterError, TransformParameterError) as exc:
            # Also a secret created by the template and not written yet (no version): ops writes it.
            raise SecretsUnavailableError(f"cannot read secret {self._settings.secrets_id}: {exc}") from exc
        if not isinstance(value, dict):
            raise SecretsUnavailableError(f"secret {self._settings.secrets_id} is not a JSON object")
        return value


class WebhookSecrets(_JsonSecret):
    """Cached access to the secret named by ``NYLAS_SECRETS_ID``.

    The secret is a JSON object: ``webhook_secret``, optional
    ``previous_webhook_secret`` (accepted during a rotation), and the operator
    commands' bookkeeping (``webhook_id``, ``rotating_until``).

    Parameters
    ----------
    settings:
        Secret id and cache ages.
    provider:
        A Powertools ``SecretsProvider``; injectable so tests and the local
        stack can give it their own boto3 client. Its cache is what keeps a
        warm container from calling Secrets Manager per request.
    clock:
        Monotonic clock, injectable for tests of the refresh interval.
    wall_clock:
        Epoch clock, compared with ``rotating_until``.
    """

    def __init__(
        self,
        settings: SecretsSettings,
        provider: SecretsProvider | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(settings, provider)
        self._clock = clock
        self._wall_clock = wall_clock
        self._last_forced_read = float("-inf")

    def webhook_secrets(self) -> tuple[str, ...]:
        """The secrets a signature may be made with: current first, then previous."""
        return self._webhook_secrets(self._read(fresh=False))

    def refreshed_webhook_secrets(self) -> tuple[str, ...] | None:
        """Read the secret again, bypassing the cache, at most once per interval.

        Returns ``None`` when a fresh read happened too recently: a burst of
        forged requests must not turn into a burst of Secrets Manager calls.
        The caller cannot then know whether the stored secret changed since
        the last read, and must answer with a status Nylas retries.
        """
        now = self._clock()
        if now - self._last_forced_read < self._settings.refresh_min_interval_seconds:
            return None
        self._last_forced_read = now
        return self._webhook_secrets(self._read(fresh=True))

    def _webhook_secrets(self, value: dict[str, Any]) -> tuple[str, ...]:
        current = value.get("webhook_secret")
        if not isinstance(current, str) or not current:
            raise SecretsUnavailableError(f"secret {self._settings.secrets_id} has no webhook_secret")
        previous = value.get("previous_webhook_secret")
        return (current, previous) if isinstance(previous, str) and previous else (current,)

    def rotating(self) -> bool:
        """Whether a rotation is under way (``rotating_until``, epoch seconds, still ahead).

        Why: Nylas signs with the new secret from the moment it issues it, and
        ``rotate-secret`` / ``register-webhook`` store it a moment later (or,
        when the outcome at Nylas is unknown, only on the operator's next run).
        A signature that matches nothing during that window may be genuine, so
        it is answered with a status Nylas retries instead of a 401 it would drop.
        """
        value = self._read(fresh=False).get("rotating_until")
        try:
            return float(value or 0) > self._wall_clock()
        except (TypeError, ValueError):
            # Only the operator commands write it: a malformed flag means someone meant a rotation, and
            # reading it as "none" would turn a genuine delivery's 503 into a 401 Nylas drops.
            logger.warning(
                "rotating_until in the webhook secret is not a number; treated as a rotation under way",
                extra={"reason": "rotating_until_malformed"},
            )
            return True


class NylasApiKey(_JsonSecret):
    """Cached access to the Nylas API key, the secret named by ``NYLAS_API_KEY_SECRET_ID`` (``api_key``).

    Passed to the Nylas client as a callable (``NylasApiKey(...).api_key``), so
    a key changed by ``set-api-key`` is picked up once the cache expires.
    """

    def api_key(self) -> str:
        """The Nylas API key (``api_key``)."""
        key = self._read(fresh=False).get("api_key")
        if not isinstance(key, str) or not key:
            raise SecretsUnavailableError(
                f"secret {self._settings.secrets_id} has no api_key: run `make set-api-key`"
            )
        return key
