"""``python -m ops``: the operator command line (see ``ops.cli``).

The layer's package (``replyonce``, for the state keys and queue attribute names) is importable as
in Lambda when ``PYTHONPATH`` names ``layers/replyonce``, as the Makefile does; run by hand from the
repository root, the same path is added here so ``.venv/bin/python -m ops`` works too.
"""

import sys
from pathlib import Path

_LAYER = Path(__file__).resolve().parent.parent / "layers" / "replyonce"
if str(_LAYER) not in sys.path:
    sys.path.append(str(_LAYER))

from ops.cli import main  # noqa: E402 - after the layer path is known

raise SystemExit(main())
