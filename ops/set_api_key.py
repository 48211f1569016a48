"""``set-api-key``: put the Nylas application API key into the stack's secret.

The key is read from ``NYLAS_API_KEY`` or typed at a prompt without echo, never from a command-line
argument (which would land in the shell history and the process list).
"""

from collections.abc import Callable, Mapping

from ops.errors import ConfigurationError
from ops.secret_store import SecretStore

API_KEY_VARIABLE = "NYLAS_API_KEY"


def read_api_key(
    environ: Mapping[str, str], prompt: Callable[[str], str] | None, *, interactive: bool
) -> str:
    """The key from the environment, else from ``prompt`` when a person is at the terminal."""
    key = environ.get(API_KEY_VARIABLE, "").strip()
    if not key and interactive and prompt is not None:
        key = prompt("Nylas API key (not echoed): ").strip()
    if not key:
        raise ConfigurationError(f"no API key: set {API_KEY_VARIABLE} or run the command in a terminal")
    return key


def set_api_key(store: SecretStore, api_key: str, *, say: Callable[[str], None] = print) -> None:
    """Store ``api_key`` as the secret's ``api_key``, keeping every other field."""
    store.write(store.read().with_changes(api_key=api_key))
    say(f"stored the Nylas API key in {store.secret_id}")
