"""A client's view of the emulator for the contract tests: real HTTP with ``requests``, nothing else."""

import threading
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import requests

from devstack.nylas import NylasEmulator

API_KEY = "test-api-key"
GRANT = "grant-agent"
AGENT_EMAIL = "agent@example.com"
OTHER_GRANT = "grant-other"
OTHER_EMAIL = "other@example.com"
CUSTOMER = "customer@example.com"
SEND_PATH = f"/v3/grants/{GRANT}/messages/send"
TIMEOUT = 5


class FakeClock:
    """A settable clock, so the one-hour key TTL is tested without waiting an hour."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def auth(key: str = API_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def get(nylas: NylasEmulator, path: str, **kwargs) -> requests.Response:
    return requests.get(f"{nylas.url}{path}", headers=auth(), timeout=TIMEOUT, **kwargs)


def call(nylas: NylasEmulator, method: str, path: str, **kwargs) -> requests.Response:
    return requests.request(method, f"{nylas.url}{path}", headers=auth(), timeout=TIMEOUT, **kwargs)


def send(
    nylas: NylasEmulator, payload: dict, key: str | None = None, grant: str = GRANT
) -> requests.Response:
    headers = auth()
    if key is not None:
        headers["Idempotency-Key"] = key
    return requests.post(
        f"{nylas.url}/v3/grants/{grant}/messages/send", json=payload, headers=headers, timeout=TIMEOUT
    )


def reply_to(message: dict, body: str = "Thanks, we are on it.") -> dict:
    return {
        "to": [{"name": "Customer", "email": message["from"][0]["email"]}],
        "subject": "Re: " + message["subject"],
        "body": body,
        "reply_to_message_id": message["id"],
    }


def inbound(nylas: NylasEmulator, **kwargs) -> dict:
    fields = {"from_email": CUSTOMER, "subject": "Order 42", "body": "<p>Where is my order?</p>", **kwargs}
    return nylas.deliver_inbound(GRANT, **fields)


def list_messages(nylas: NylasEmulator, grant: str = GRANT, **params) -> requests.Response:
    return get(nylas, f"/v3/grants/{grant}/messages", params=params)


def control(nylas: NylasEmulator, method: str, route: str, **kwargs) -> requests.Response:
    return requests.request(method, f"{nylas.url}/_emulator/{route}", timeout=TIMEOUT, **kwargs)


def header_names(message: dict) -> list[str]:
    return [h["name"] for h in message["headers"]]


def response_date(response: requests.Response) -> float:
    # One Date header only: the server's own (real-time) one would be a second, conflicting value.
    [value] = response.raw.headers.getlist("Date")
    return parsedate_to_datetime(value).timestamp()


def error_of(response: requests.Response) -> dict:
    """The ``error`` object of a Nylas error answer, checking the envelope on the way."""
    body = response.json()
    assert body["request_id"]
    assert set(body["error"]) >= {"type", "message"}
    return body["error"]


class ChallengeEndpoint:
    """A loopback HTTP endpoint whose answer to Nylas' challenge GET each test chooses.

    ``answer(challenge)`` returns ``(status, body, chunked)``; every request's query is recorded.
    """

    def __init__(self, answer) -> None:
        endpoint = self
        self.answer = answer
        self.queries: list[dict[str, list[str]]] = []

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                endpoint.queries.append(query)
                status, body, chunked = endpoint.answer(query.get("challenge", [""])[0])
                self.send_response(status)
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
                else:
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1/webhook"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def echo(challenge: str) -> tuple[int, bytes, bool]:
    return 200, challenge.encode(), False
