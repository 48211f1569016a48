"""Which faults a run injects, where, and how often.

Every fault is a rule on one of the two fault proxies (AWS, Nylas API), an
outage window, a worker clock skew, or a malformed request at the endpoint.
The replier's steps are told apart by the request that completes them: the
idempotency record is Powertools' ``PutItem`` on the idempotency table, the
lease is the ``UpdateItem ... SET lease_owner`` on the state table, the send
is ``POST .../messages/send``, and the ledger is the settlement's
``BatchWriteItem`` (since issue 46: written before the thread's update, which
releases the lease, so "after the ledger, before the release" is a state a
kill leaves; a shadow settlement's ``TransactWriteItems`` holds both).
"""

import base64
import gzip
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import requests

from chaos.proxy import Request, Rule, aws_error
from devstack.events import encode, message_created
from devstack.template import LOCAL_WEBHOOK_SECRET
from devstack.webhook_sender import Delivery
from replyonce.rules.signature import sign

SEND = re.compile(r"/messages/send$")
THREAD_READ = re.compile(r"/messages\?")
MESSAGE_READ = re.compile(r"/messages/[^/?]+$")

OUR_SIDE = (
    "kill_after_idempotency_record",
    "kill_after_lease",
    "kill_after_send",
    "kill_after_ledger",
    "error_after_idempotency_record",
    "error_after_lease",
    "error_after_ledger",
    "lambda_timeout",
    "paused_worker",
    "dynamodb_throttle",
    "dynamodb_error",
    "sqs_send_failure",
    "secrets_unavailable",
    "dynamodb_outage",
)
NYLAS_API = ("nylas_429", "nylas_5xx", "nylas_timeout", "nylas_lost_response", "nylas_409_in_flight")
ALL_FAULTS = frozenset(OUR_SIDE + NYLAS_API + ("bad_input", "clock_skew"))


@dataclass
class FuzzResult:
    statuses: Counter = field(default_factory=Counter)
    deliveries: list = field(default_factory=list)
    notification_ids: set[str] = field(default_factory=set)


class FaultPlan:
    """Installs the rules of a run on its proxies and drives outages and the fuzz phase."""

    def __init__(self, experiment: Any, settings: Any) -> None:
        self.experiment = experiment
        self.settings = settings
        self.enabled = settings.faults if settings.faults is not None else ALL_FAULTS
        self.counts: Counter[str] = Counter()
        self._outage: dict[str, bool] = {
            "sqs_send_failure": False,
            "secrets_unavailable": False,
            "dynamodb_outage": False,
        }
        self._stop = threading.Event()
        self._rng = random.Random(experiment.rng.random())

    # ---- matchers -------------------------------------------------------------------------------

    def _table(self, logical_id: str) -> str:
        return self.experiment.resources.tables[logical_id]

    def _is_idempotency_put(self, request: Request) -> bool:
        return request.operation == "PutItem" and request.json.get("TableName") == self._table(
            "IdempotencyTable"
        )

    def _is_lease(self, request: Request) -> bool:
        body = request.json
        return (
            request.operation == "UpdateItem"
            and body.get("TableName") == self._table("StateTable")
            and str(body.get("UpdateExpression", "")).startswith("SET lease_owner")
        )

    @staticmethod
    def _is_ledger(request: Request) -> bool:
        return request.operation in ("BatchWriteItem", "TransactWriteItems")

    @staticmethod
    def _is_dynamodb(request: Request) -> bool:
        return request.target.startswith("DynamoDB_")

    # ---- installation ---------------------------------------------------------------------------

    def install(self) -> None:
        p = self.settings.fault_probability
        timeout = self.settings.function_timeout_seconds
        aws, nylas = self.experiment.aws_proxy, self.experiment.nylas_proxy
        rules = [
            Rule("kill_after_idempotency_record", self._is_idempotency_put, "kill_after", p / 2),
            Rule("kill_after_lease", self._is_lease, "kill_after", p / 2),
            Rule("kill_after_send", self._is_ledger, "kill_before", p / 2),
            Rule("kill_after_ledger", self._is_ledger, "kill_after", p / 2),
            Rule("error_after_idempotency_record", self._is_idempotency_put, "lose", p / 2),
            Rule("error_after_lease", self._is_lease, "lose", p / 2),
            Rule("error_after_ledger", self._is_ledger, "lose", p / 2),
            Rule("paused_worker", self._is_lease, "pause", p / 4, seconds=timeout * 1.5),
        ]
        throttle_status, throttle_body = aws_error("dynamodb_throttle")
        error_status, error_body = aws_error("dynamodb_error")
        json_headers = {"Content-Type": "application/x-amz-json-1.0"}
        rules += [
            Rule(
                "dynamodb_throttle",
                self._is_dynamodb,
                "error",
                p,
                throttle_status,
                throttle_body,
                json_headers,
            ),
            Rule("dynamodb_error", self._is_dynamodb, "error", p, error_status, error_body, json_headers),
            Rule(
                "dynamodb_outage",
                self._is_dynamodb,
                "error",
                1.0,
                error_status,
                error_body,
                json_headers,
                active=lambda: self._outage["dynamodb_outage"],
            ),
        ]
        sqs_status, sqs_body = aws_error("sqs_error")
        secrets_status, secrets_body = aws_error("secrets_error")
        rules += [
            Rule(
                "sqs_send_failure",
                lambda r: r.operation == "SendMessage",
                "error",
                1.0,
                sqs_status,
                sqs_body,
                json_headers,
                active=lambda: self._outage["sqs_send_failure"],
            ),
            Rule(
                "secrets_unavailable",
                lambda r: r.operation == "GetSecretValue",
                "error",
                1.0,
                secrets_status,
                secrets_body,
                {"Content-Type": "application/x-amz-json-1.1"},
                active=lambda: self._outage["secrets_unavailable"],
            ),
        ]
        aws.rules = [rule for rule in rules if rule.kind in self.enabled]

        def path(pattern: re.Pattern[str], method: str | None = None):
            return lambda r: bool(pattern.search(r.path)) and (method is None or r.method == method)

        # The 409 in the spelling of the run's errors (bare_error_types: Nylas' examples, or its tables).
        bare = self.experiment.workload_settings().bare_error_types
        in_flight = json.dumps(
            {
                "request_id": "chaos",
                "error": {
                    "type": "concurrent_idempotent_request" if bare else "api.concurrent_idempotent_request",
                    "message": "injected: key in flight",
                },
            }
        ).encode()
        nylas_json = {"Content-Type": "application/json"}
        nylas.rules = [
            rule
            for rule in [
                Rule("lambda_timeout", path(THREAD_READ, "GET"), "delay", p / 4, seconds=timeout + 1),
                Rule(
                    "nylas_429",
                    path(SEND, "POST"),
                    "error",
                    p,
                    429,
                    b'{"request_id":"chaos","error":{"type":"rate_limit_error","message":"injected"}}',
                    {**nylas_json, "Retry-After": "1"},
                ),
                Rule(
                    "nylas_5xx",
                    lambda r: True,
                    "error",
                    p / 2,
                    503,
                    b'{"request_id":"chaos","error":{"type":"api_error","message":"injected"}}',
                    nylas_json,
                ),
                Rule("nylas_timeout", path(THREAD_READ, "GET"), "delay", p / 2, seconds=2.5),
                Rule("nylas_lost_response", path(SEND, "POST"), "lose", p),
                Rule("nylas_409_in_flight", path(SEND, "POST"), "error", p, 409, in_flight, nylas_json),
            ]
            if rule.kind in self.enabled
        ]
        for rule in aws.rules + nylas.rules:
            # Outage rules (probability 1, switched by windows) need no forcing.
            rule.at_least_once = self.settings.every_fault_once and rule.probability < 1.0
        if "clock_skew" in self.enabled and self.settings.clock_skew_seconds:
            self.counts["clock_skew"] = self.settings.workers

    # ---- outages --------------------------------------------------------------------------------

    def start_outages(self) -> None:
        kinds = [kind for kind in self._outage if kind in self.enabled]
        if kinds:
            threading.Thread(target=self._outages, args=(kinds,), daemon=True).start()

    def stop_outages(self) -> None:
        self._stop.set()
        for kind in self._outage:
            self._outage[kind] = False

    def _outages(self, kinds: list[str]) -> None:
        """Short outages at random moments: long enough to beat botocore's retries, short enough
        for Nylas' retries (and SQS redelivery) to get through afterwards."""
        while not self._stop.wait(self._rng.uniform(2.0, 5.0)):
            kind = self._rng.choice(kinds)
            self.counts[f"{kind}_window"] += 1
            self._outage[kind] = True
            if kind == "secrets_unavailable":
                self.experiment.restart_webhook_container()  # a cold container must read the secret now
            self._stop.wait(self._rng.uniform(0.3, 0.8))
            self._outage[kind] = False

    # ---- bad input at the endpoint ---------------------------------------------------------------

    def fuzz(self, count: int) -> FuzzResult:
        """Malformed, forged, oversized and odd requests: never a 500, never queued."""
        result = FuzzResult()
        if "bad_input" not in self.enabled:
            return result
        url = self.experiment.gateway.url
        rng = self._rng
        for index in range(count):
            notification_id = f"fuzz-{index}"
            result.notification_ids.add(notification_id)
            valid = encode(message_created(notification_id=notification_id))
            choice = rng.randrange(9)
            headers = {"Content-Type": "application/json"}
            method, body = "POST", valid
            if choice == 0:  # unsigned
                pass
            elif choice == 1:  # wrong secret
                headers["X-Nylas-Signature"] = sign(valid, "not-the-secret")
            elif choice == 2:  # garbage signature of random length and alphabet
                # requests refuses header values with surrounding blanks: those never reach a server.
                garbage = "".join(rng.choice("0123456789abcdefXYZ-_ ") for _ in range(rng.randrange(0, 100)))
                headers["X-Nylas-Signature"] = garbage.strip()
            elif choice == 3:  # signed garbage
                body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 400)))
                headers["X-Nylas-Signature"] = sign(body, LOCAL_WEBHOOK_SECRET)
            elif choice == 4:  # signed JSON that is not a notification
                body = json.dumps(rng.choice([[], {}, {"id": notification_id}, "x", 7, None])).encode()
                headers["X-Nylas-Signature"] = sign(body, LOCAL_WEBHOOK_SECRET)
            elif choice == 5:  # signed invalid gzip
                body = b"\x1f\x8b" + bytes(rng.randrange(256) for _ in range(40))
                headers.update(
                    {"Content-Encoding": "gzip", "X-Nylas-Signature": sign(body, LOCAL_WEBHOOK_SECRET)}
                )
            elif choice == 6:  # forged gzip of a valid notification
                body = gzip.compress(valid)
                headers.update(
                    {"Content-Encoding": "gzip", "X-Nylas-Signature": sign(valid, LOCAL_WEBHOOK_SECRET)}
                )
            elif choice == 7:  # odd method
                method = rng.choice(["PUT", "DELETE", "PATCH"])
                headers["X-Nylas-Signature"] = sign(valid, LOCAL_WEBHOOK_SECRET)
            else:  # oversized (signed), or base64 text that is not the signed bytes
                body = (
                    base64.b64encode(valid)
                    if rng.random() < 0.5
                    else b"{" + b" " * (4 * 1_048_576 + 10) + b"}"
                )
                headers["X-Nylas-Signature"] = sign(valid, LOCAL_WEBHOOK_SECRET)
            try:
                status = requests.request(method, url, data=body, headers=headers, timeout=15).status_code
            except requests.RequestException:
                status = None
            result.statuses[str(status)] += 1
            result.deliveries.append(
                Delivery(f"{notification_id} (kind {choice})", 1, status, forged=choice in (0, 1, 2, 6))
            )
        self.counts["bad_input"] = count
        return result
