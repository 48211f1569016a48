"""The static tier reads the repository's own text and runs its linters; it opens no connection.

What is here: ``template.yaml`` (alarms, capacity, least privilege as written, cfn-lint, checkov), the
README and docs (commands, links, figures), the Makefile, and the source's import graph. A test may
start a tool as a subprocess (``make -n``, checkov, ``python -m ops --dry-run``), never a server: a
test that needs the embedded AWS or the Nylas emulator belongs to ``tests/integration`` or
``tests/e2e``. As in the unit tier, a connection attempted in this process fails at once
(``tests/unit/conftest.py``).
"""

from tests.unit.conftest import _no_connections  # noqa: F401 - the unit tier's guard, autouse here too
