"""The unit tier's guard: a test that tries to reach a server, even on loopback, fails at once."""

import socket
import urllib.request

import pytest

from tests.unit.conftest import SocketBlocked


@pytest.fixture
def listening():
    """A loopback port that would accept a connection: only the guard can refuse it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        yield server.getsockname()


def test_a_raw_connection_is_refused(listening):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client, pytest.raises(SocketBlocked):
        client.connect(listening)


def test_create_connection_is_refused(listening):
    with pytest.raises(SocketBlocked, match=r"127\.0\.0\.1"):
        socket.create_connection(listening, timeout=1)


def test_an_http_client_is_refused(listening):
    host, port = listening
    with pytest.raises(SocketBlocked):
        urllib.request.urlopen(f"http://{host}:{port}/", timeout=1)
