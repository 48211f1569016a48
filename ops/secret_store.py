"""The stack's Nylas secret (``NylasSecrets``): read it, change some fields, write it back.

The secret is one JSON object: ``webhook_secret``, ``previous_webhook_secret`` and ``api_key`` are
what the functions read (``replyonce/secrets.py``); ``webhook_id`` is added by
``register-webhook`` so ``rotate-secret`` knows which Nylas webhook to rotate. Unknown keys are
kept as they are.

Why the values are hidden from ``repr``: an exception or a debug print of a value object must not
be the way a secret reaches a terminal or a log.
"""

import json
from dataclasses import dataclass, field, replace
from typing import Any

from botocore.exceptions import ClientError

from ops.errors import SecretError

_KNOWN_FIELDS = ("webhook_secret", "previous_webhook_secret", "api_key", "webhook_id", "rotating_until")
_OPTIONAL_FIELDS = ("webhook_id", "rotating_until")


@dataclass(frozen=True)
class NylasSecretValue:
    """The secret's JSON object; the secret fields are excluded from ``repr``."""

    webhook_secret: str = field(default="", repr=False)
    previous_webhook_secret: str = field(default="", repr=False)
    api_key: str = field(default="", repr=False)
    webhook_id: str = ""
    # Epoch seconds while rotate-secret runs: the webhook answers unverifiable signatures 503 until then.
    rotating_until: str = ""
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, text: str, secret_id: str) -> "NylasSecretValue":
        try:
            document = json.loads(text)
        except ValueError:
            raise SecretError(f"secret {secret_id} is not JSON; it must be a JSON object") from None
        if not isinstance(document, dict):
            raise SecretError(f"secret {secret_id} is not a JSON object")
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

    def with_changes(self, **changes: str) -> "NylasSecretValue":
        return replace(self, **changes)


class SecretStore:
    """Read and write one Secrets Manager secret holding a :class:`NylasSecretValue`.

    Parameters
    ----------
    secret_id:
        Name or ARN (the stack output ``NylasSecretsArn``).
    client:
        A boto3 Secrets Manager client.
    """

    def __init__(self, secret_id: str, client: Any) -> None:
        self.secret_id = secret_id
        self._client = client

    def read(self) -> NylasSecretValue:
        try:
            text = self._client.get_secret_value(SecretId=self.secret_id).get("SecretString")
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise SecretError(f"cannot read secret {self.secret_id}: {code or exc}") from None
        if not text:
            raise SecretError(f"secret {self.secret_id} has no string value")
        return NylasSecretValue.from_json(text, self.secret_id)

    def write(self, value: NylasSecretValue) -> None:
        """Store ``value`` as the secret's new current version (the old one stays as AWSPREVIOUS)."""
        try:
            self._client.put_secret_value(SecretId=self.secret_id, SecretString=value.to_json())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise SecretError(f"cannot write secret {self.secret_id}: {code or exc}") from None
