"""The stack's two Nylas secrets: read them, change some fields, write them back.

- ``NylasSecrets`` (stack output ``NylasSecretsArn``, the webhook's ``NYLAS_SECRETS_ID``): one
  JSON object with ``webhook_secret`` and ``previous_webhook_secret`` (what the webhook verifies
  signatures with), ``webhook_id`` (added by ``register-webhook`` so ``rotate-secret`` knows which
  Nylas webhook to rotate) and ``rotating_until`` (the rotation bookkeeping the webhook reads).
- ``NylasApiKeySecret`` (``NylasApiKeySecretArn``, the replier's ``NYLAS_API_KEY_SECRET_ID``):
  ``{"api_key": ...}``.

The template creates both empty (no value CloudFormation could overwrite); the commands here write
them. A secret that has no value yet reads as empty. Unknown keys are kept as they are.

Why the values are hidden from ``repr``: an exception or a debug print of a value object must not
be the way a secret reaches a terminal or a log.
"""

import json
from dataclasses import dataclass, field, replace
from typing import Any

from botocore.exceptions import ClientError

from ops.errors import SecretError

_KNOWN_FIELDS = ("webhook_secret", "previous_webhook_secret", "webhook_id", "rotating_until")
_OPTIONAL_FIELDS = ("webhook_id", "rotating_until")
# Where a stack deployed before the split kept the API key; `set-api-key` moves it out.
LEGACY_API_KEY_FIELD = "api_key"


@dataclass(frozen=True)
class WebhookSecretValue:
    """The webhook secret's JSON object; the secret fields are excluded from ``repr``."""

    webhook_secret: str = field(default="", repr=False)
    previous_webhook_secret: str = field(default="", repr=False)
    webhook_id: str = ""
    # Epoch seconds: until then the webhook answers unverifiable signatures 503 (retried by Nylas).
    # Set before Nylas is asked for a new secret; cleared only once the new secret is stored.
    rotating_until: str = ""
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, text: str, secret_id: str) -> "WebhookSecretValue":
        document = _object(text, secret_id)
        known = {name: document.get(name) or "" for name in _KNOWN_FIELDS}
        for name, value in known.items():
            if not isinstance(value, str):
                raise SecretError(f"secret {secret_id}: {name} must be a string")
        return cls(**known, extra={k: v for k, v in document.items() if k not in _KNOWN_FIELDS})

    def to_json(self) -> str:
        document = dict(self.extra)
        document.update({name: getattr(self, name) for name in _KNOWN_FIELDS})
        # The operators' own bookkeeping appears only while it means something.
        for name in _OPTIONAL_FIELDS:
            if not document[name]:
                del document[name]
        return json.dumps(document)

    def with_changes(self, **changes: Any) -> "WebhookSecretValue":
        return replace(self, **changes)

    @property
    def legacy_api_key(self) -> str:
        """An API key left in this secret by a stack deployed before the split ('' when none)."""
        value = self.extra.get(LEGACY_API_KEY_FIELD)
        return value if isinstance(value, str) else ""

    def without_legacy_api_key(self) -> "WebhookSecretValue":
        return replace(self, extra={k: v for k, v in self.extra.items() if k != LEGACY_API_KEY_FIELD})


def _object(text: str, secret_id: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        document = json.loads(text)
    except ValueError:
        raise SecretError(f"secret {secret_id} is not JSON; it must be a JSON object") from None
    if not isinstance(document, dict):
        raise SecretError(f"secret {secret_id} is not a JSON object")
    return document


class _Secret:
    """One Secrets Manager secret holding a JSON object."""

    def __init__(self, secret_id: str, client: Any) -> None:
        self.secret_id = secret_id
        self._client = client

    def _read_text(self) -> str:
        try:
            return self._client.get_secret_value(SecretId=self.secret_id).get("SecretString") or ""
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "ResourceNotFoundException" and self._exists():
                return ""  # created by the template without a value: nothing written yet
            raise SecretError(f"cannot read secret {self.secret_id}: {code or exc}") from None

    def _exists(self) -> bool:
        try:
            self._client.describe_secret(SecretId=self.secret_id)
        except ClientError:
            return False
        return True

    def _write_text(self, text: str) -> None:
        """Store ``text`` as the secret's new current version (the old one stays as AWSPREVIOUS)."""
        try:
            self._client.put_secret_value(SecretId=self.secret_id, SecretString=text)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise SecretError(f"cannot write secret {self.secret_id}: {code or exc}") from None


class SecretStore(_Secret):
    """The webhook's secret, as a :class:`WebhookSecretValue`.

    Parameters
    ----------
    secret_id:
        Name or ARN (the stack output ``NylasSecretsArn``).
    client:
        A boto3 Secrets Manager client.
    """

    def read(self) -> WebhookSecretValue:
        return WebhookSecretValue.from_json(self._read_text(), self.secret_id)

    def write(self, value: WebhookSecretValue) -> None:
        self._write_text(value.to_json())


class ApiKeyStore(_Secret):
    """The replier's secret holding the Nylas API key (the stack output ``NylasApiKeySecretArn``)."""

    def read(self) -> str:
        """The stored key, '' when none is stored yet."""
        document = _object(self._read_text(), self.secret_id)
        key = document.get("api_key") or ""
        if not isinstance(key, str):
            raise SecretError(f"secret {self.secret_id}: api_key must be a string")
        return key

    def write(self, api_key: str) -> None:
        self._write_text(json.dumps({"api_key": api_key}))
