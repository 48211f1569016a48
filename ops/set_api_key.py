"""``set-api-key``: put the Nylas application API key into the replier's secret.

The key is read from ``NYLAS_API_KEY`` or typed at a prompt without echo, never from a command-line
argument (which would land in the shell history and the process list). A stack deployed before
the secrets were split kept the key in the webhook's secret: without a key given, that one is
moved, and either way it is removed from the webhook's secret, which the internet-facing function
reads.
"""

from collections.abc import Callable, Mapping

from ops.errors import ConfigurationError
from ops.secret_store import ApiKeyStore, SecretStore

API_KEY_VARIABLE = "NYLAS_API_KEY"


def read_api_key(
    environ: Mapping[str, str],
    prompt: Callable[[str], str] | None,
    *,
    interactive: bool,
    legacy: str = "",
) -> str:
    """The key from the environment, else the legacy copy, else from ``prompt`` at a terminal."""
    key = environ.get(API_KEY_VARIABLE, "").strip() or legacy
    if not key and interactive and prompt is not None:
        key = prompt("Nylas API key (not echoed): ").strip()
    if not key:
        raise ConfigurationError(f"no API key: set {API_KEY_VARIABLE} or run the command in a terminal")
    return key


def set_api_key(
    api_keys: ApiKeyStore,
    webhook_secrets: SecretStore | None,
    api_key: str,
    *,
    say: Callable[[str], None] = print,
) -> None:
    """Store ``api_key`` in the replier's secret; drop a legacy copy from the webhook's secret."""
    api_keys.write(api_key)
    say(f"stored the Nylas API key in {api_keys.secret_id}")
    if webhook_secrets is not None:
        current = webhook_secrets.read()
        if current.legacy_api_key:
            webhook_secrets.write(current.without_legacy_api_key())
            say(f"removed the API key from the webhook's secret {webhook_secrets.secret_id}")
