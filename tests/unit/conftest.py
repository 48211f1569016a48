"""The unit tier is self-contained: no connection leaves the test process, not even to loopback.

Why: a rule's test that reached the embedded AWS or the Nylas emulator would be an end-to-end test
in the wrong tier — slower, and passing or failing for a server's sake. Every test here gets
``socket.socket.connect`` (and ``connect_ex``, ``socket.create_connection``) replaced by one that
raises :class:`SocketBlocked`, so such a test fails at once and names the address it tried. Binding
and listening stay allowed: nothing can connect to them. The root ``tests/conftest.py`` imports
nothing of moto, flask or werkzeug at collection (``tests/static/test_support_imports.py`` checks it).
"""

import socket

import pytest


class SocketBlocked(RuntimeError):
    """A unit test tried to open a connection."""


def _refuse(*args, **kwargs):
    address = next((a for a in args if isinstance(a, tuple | str)), kwargs.get("address"))
    raise SocketBlocked(f"the unit tier opens no connection (tried {address!r}): use tests/fakes.py")


@pytest.fixture(autouse=True)
def _no_connections(monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", _refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", _refuse)
    monkeypatch.setattr(socket, "create_connection", _refuse)
