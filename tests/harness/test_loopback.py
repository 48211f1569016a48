"""The stand-ins' HTTP server: a client vanishing mid-request is not an error to print.

Killed workers and timed-out callers reset their connections all through a
chaos run; a traceback per reset buried the run's real output.
"""

import contextlib
import socket
import struct
import time
from http.server import BaseHTTPRequestHandler

import requests

from devstack.loopback import LoopbackHTTPServer
from devstack.nylas import NylasEmulator


def _reset_connection(port: int) -> None:
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"GET /v3/grants HTTP/1.1\r\nHost: x\r\n")  # headers never finished
    # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()


def test_a_reset_client_prints_no_traceback_and_the_server_keeps_serving(capfd):
    emulator = NylasEmulator(api_key="key").start()
    try:
        port = int(emulator.url.rsplit(":", 1)[1])
        for _ in range(5):
            _reset_connection(port)
        time.sleep(0.3)  # let the handler threads meet the resets
        response = requests.get(f"{emulator.url}/v3/grants/unknown", timeout=5)
    finally:
        emulator.stop()
    assert response.status_code in (401, 404)
    assert "Traceback" not in capfd.readouterr().err


def test_other_handler_errors_are_still_printed(capfd):
    class Broken(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            raise ValueError("a bug in a stand-in")

        def log_message(self, format, *args) -> None:
            return

    server = LoopbackHTTPServer(("127.0.0.1", 0), Broken)
    server.start_serving("broken-stand-in")
    try:
        with contextlib.suppress(requests.ConnectionError):  # the handler died before answering
            requests.get(server.base_url, timeout=5)
        time.sleep(0.2)
    finally:
        server.stop_serving()
    assert "ValueError: a bug in a stand-in" in capfd.readouterr().err
