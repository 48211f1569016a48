"""Real latencies between the replier and the Nylas emulator: a seeded, documented distribution.

The local stack answers a Nylas send in milliseconds; the real one takes
seconds (Nylas asks clients for a 150 s timeout, and an Agent Account queues a
burst for up to 90 s), and the agent's draft takes seconds more. So that
``make bench`` measures time to reply, batching and cost at those latencies,
a proxy (``chaos.proxy.FaultProxy`` with one ``delay`` rule) sits between the
replier and the emulator — ``NYLAS_API_URI`` points at it — and holds each
request for a time drawn from :class:`LatencyModel` before forwarding it; the
emulator itself is untouched. The agent's time is
``bench.slow_agent``'s, drawn from the same model.

Why keyed draws: each latency is a function of the seed and of what the
request is about — a send and a draft of the message whose subject ends in
``#key``, a read of the thread whose id ends in ``~key`` — not of the order
requests arrive in. The same message sent again (a retry) takes as long, and
the floor, which invokes the same messages directly, meets exactly the same
latencies as the mix: its p99 is then the same work's p99, not another draw's.
"""

import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from bench.markdown import table
from chaos.proxy import FaultProxy, Request, Rule

SEND, READ, DRAFT = "send", "read", "draft"
_MESSAGE_KEY = re.compile(r"#([\w-]+)\s*$")


def message_key(subject: str) -> str | None:
    """The latency key a subject carries (``"Order 1005 #e5p0"`` → ``"e5p0"``); a reply's ``Re:`` keeps it."""
    match = _MESSAGE_KEY.search(subject or "")
    return match.group(1) if match else None


def thread_key(thread_id: str) -> str:
    """The latency key of a thread (``"bench-rl-3~e5"`` → ``"e5"``): the same for a floor's copy of it."""
    return thread_id.rsplit("~", 1)[-1]


@dataclass(frozen=True)
class LatencyModel:
    """How long Nylas and the agent take, per request, drawn uniformly and reproducibly.

    Parameters
    ----------
    seed:
        Every draw is ``random.Random(f"{seed}:{kind}:{key}")``: the same key, the same time.
    send_seconds, read_seconds, draft_seconds:
        Uniform ranges of a send (``POST .../messages/send``), any other Nylas request (thread
        read, grant lookup, message fetch, metadata search) and the agent's draft.
    queued_probability, queued_seconds:
        A send that meets the Agent Account's queue: with this probability it takes a draw from
        ``queued_seconds`` more. Nylas says a queued send goes out "within seconds or up to 90 s";
        the tail beyond 20 s is left out to keep a run short, and it would change the mix and its
        floor alike.
    draft_chars:
        Length of the drafted body, so the send intent stored before the send (and its DynamoDB
        write units) has the size a model's reply has.
    scale:
        Multiplies every time: ``--latency-scale 0.1`` for a quick run (not representative).
    """

    seed: int = 23
    send_seconds: tuple[float, float] = (0.5, 3.0)
    read_seconds: tuple[float, float] = (0.1, 0.5)
    draft_seconds: tuple[float, float] = (1.0, 8.0)
    queued_probability: float = 0.1
    queued_seconds: tuple[float, float] = (3.0, 20.0)
    draft_chars: tuple[int, int] = (600, 1200)
    scale: float = 1.0

    def seconds(self, kind: str, key: str) -> float:
        """The time one request (or draft) about ``key`` takes."""
        rng = random.Random(f"{self.seed}:{kind}:{key}")  # noqa: S311 - a reproducible workload
        low, high = {SEND: self.send_seconds, READ: self.read_seconds, DRAFT: self.draft_seconds}[kind]
        value = rng.uniform(low, high)
        if kind == SEND and rng.random() < self.queued_probability:
            value += rng.uniform(*self.queued_seconds)
        return value * self.scale

    def draft_length(self, key: str) -> int:
        rng = random.Random(f"{self.seed}:chars:{key}")  # noqa: S311 - a reproducible workload
        return rng.randint(*self.draft_chars)

    def mean_seconds(self, kind: str) -> float:
        """The distribution's mean (what the cost model's "modelled" rows use)."""
        low, high = {SEND: self.send_seconds, READ: self.read_seconds, DRAFT: self.draft_seconds}[kind]
        mean = (low + high) / 2
        if kind == SEND:
            mean += self.queued_probability * sum(self.queued_seconds) / 2
        return mean * self.scale

    def markdown(self) -> str:
        """The distribution as the report states it."""
        rows = [
            (
                "Nylas send (`POST .../messages/send`)",
                f"uniform {self.send_seconds[0]:g}-{self.send_seconds[1]:g} s",
            ),
            (
                "of which queued (Agent Account send queue)",
                f"{self.queued_probability:.0%} of sends take uniform {self.queued_seconds[0]:g}-"
                f"{self.queued_seconds[1]:g} s more",
            ),
            (
                "any other Nylas request (thread read, grant lookup, message fetch)",
                f"uniform {self.read_seconds[0]:g}-{self.read_seconds[1]:g} s",
            ),
            ("the agent's draft", f"uniform {self.draft_seconds[0]:g}-{self.draft_seconds[1]:g} s"),
            ("the draft's body", f"uniform {self.draft_chars[0]}-{self.draft_chars[1]} characters"),
        ]
        if self.scale != 1.0:
            rows.append(("every time above multiplied by", f"{self.scale:g} (not representative)"))
        return table(("what", "takes"), rows)


def classify(request: Request) -> tuple[str, str]:
    """(kind, key) of a request the replier makes to Nylas."""
    parts = urlsplit(request.path)
    if request.method == "POST" and parts.path.endswith("/messages/send"):
        body = request.json
        key = message_key(str(body.get("subject") or "")) or str(body.get("reply_to_message_id") or "")
        return SEND, key
    threads = parse_qs(parts.query).get("thread_id")
    if threads:
        return READ, "thread:" + thread_key(threads[0])
    return READ, parts.path


@dataclass
class LatencyProxy:
    """The emulator behind a proxy that holds each request for its drawn time.

    ``extra`` adds seconds to the sends of given message keys (a busy
    thread's holder is made slow on purpose); ``sends_started`` says when a
    message's send first reached the proxy, so a follow-up can land while it
    is in flight; ``on_send``, when set, is called on a thread of its own as
    each send arrives (its send intent is stored then, and stays stored for
    the send's drawn time), so it never adds to the send's time.
    """

    upstream: str
    model: LatencyModel
    extra: dict[str, float] = field(default_factory=dict)
    sends_started: dict[str, float] = field(default_factory=dict)
    drawn: list[tuple[str, str, float]] = field(default_factory=list)
    on_send: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._proxy = FaultProxy(self.upstream, rng=random.Random(self.model.seed))  # noqa: S311
        self._proxy.rules.append(Rule("latency", match=lambda _: True, action="delay", seconds=self._delay))

    @property
    def url(self) -> str:
        return self._proxy.url

    def start(self) -> "LatencyProxy":
        self._proxy.start()
        return self

    def stop(self) -> None:
        self._proxy.stop()

    def _delay(self, request: Request) -> float:
        kind, key = classify(request)
        seconds = self.model.seconds(kind, key) + (self.extra.get(key, 0.0) if kind == SEND else 0.0)
        with self._lock:
            if kind == SEND:
                self.sends_started.setdefault(key, time.time())
            self.drawn.append((kind, key, seconds))
        if kind == SEND and self.on_send is not None:
            threading.Thread(target=self.on_send, name="latency-on-send", daemon=True).start()
        return seconds

    def wait_for_send(self, key: str, timeout_seconds: float) -> bool:
        """Until the send of message ``key`` reaches the proxy (it is then in flight for its drawn time)."""
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            with self._lock:
                if key in self.sends_started:
                    return True
            time.sleep(0.02)
        return False

    def mean_drawn(self, kind: str) -> float:
        with self._lock:
            values = [s for k, _, s in self.drawn if k == kind]
        return sum(values) / len(values) if values else 0.0


@contextmanager
def through(proxy: LatencyProxy) -> Iterator[None]:
    """Containers built inside reach Nylas through ``proxy`` (``NYLAS_API_URI``, as in Lambda)."""
    previous = os.environ["NYLAS_API_URI"]
    os.environ["NYLAS_API_URI"] = proxy.url
    try:
        yield
    finally:
        os.environ["NYLAS_API_URI"] = previous
