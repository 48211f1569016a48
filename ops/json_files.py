"""Files an operator hands a command (an export, a saved report): read as JSON, or one line saying why not."""

import json
from pathlib import Path
from typing import Any

from ops.errors import ConfigurationError


def read_json(path: Path, kind: str, written_by: str) -> Any:
    """The JSON document in ``path``, a ``kind`` (``"export"``, ``"report"``) that ``written_by`` writes.

    Raises
    ------
    ConfigurationError
        Missing (naming the command that writes one) or not JSON: one line naming the file. What the
        document must hold is the caller's to check.
    """
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigurationError(f"{path}: no such {kind} ({written_by} writes one)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigurationError(f"{path}: not a JSON {kind} ({error})") from None
