"""The Nylas secrets (webhook signing secrets and API key), read through Powertools Parameters."""

import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.parameters import SecretsProvider
from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError, TransformParameterError

from replyonce.config import SecretsSettings
from replyonce.exceptions import SecretsUnavailableError


class NylasSecrets:
    """Cached access to the secret named by ``NYLAS_SECRETS_ID``.

    The secret is a JSON object: ``webhook_secret``, optional
    ``previous_webhook_secret`` (accepted during a rotation) and ``api_key``.

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
        self._settings = settings
        self._provider = provider or SecretsProvider()
        self._clock = clock
        self._wall_clock = wall_clock
        self._last_forced_read = float("-inf")

    def _read(self, *, fresh: bool) -> dict[str, Any]:
        try:
            value = self._provider.get(
                self._settings.secrets_id,
                max_age=self._settings.max_age_seconds,
                transform="json",
                force_fetch=fresh,
            )
        except (GetParameterError, TransformParameterError) as exc:
            raise SecretsUnavailableError(f"cannot read secret {self._settings.secrets_id}: {exc}") from exc
        if not isinstance(value, dict):
            raise SecretsUnavailableError(f"secret {self._settings.secrets_id} is not a JSON object")
        return value

    def webhook_secrets(self) -> tuple[str, ...]:
        """The secrets a signature may be made with: current first, then previous."""
        return self._webhook_secrets(self._read(fresh=False))

    def refreshed_webhook_secrets(self) -> tuple[str, ...] | None:
        """Read the secret again, bypassing the cache, at most once per interval.

        Returns ``None`` when a fresh read happened too recently: a burst of
        forged requests must not turn into a burst of Secrets Manager calls.
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
        ``rotate-secret`` stores it a moment later. A signature that matches
        nothing during that window may be genuine, so it is answered with a
        status Nylas retries instead of a 401 it would drop.
        """
        value = self._read(fresh=False).get("rotating_until")
        try:
            return float(value or 0) > self._wall_clock()
        except (TypeError, ValueError):
            return False

    def api_key(self) -> str:
        """The Nylas API key (``api_key``)."""
        key = self._read(fresh=False).get("api_key")
        if not isinstance(key, str) or not key:
            raise SecretsUnavailableError(f"secret {self._settings.secrets_id} has no api_key")
        return key
