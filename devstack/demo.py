"""``make demo``: the product doing its job on one machine — real webhooks, real duplicates, one reply each.

The scenario: several customers write to the agent, some in bursts of two or
three messages on one thread; every notification is delivered 1-3 times,
some copies concurrently; one notification is truncated; the agent's own
replies fire ``message.created`` too (as for Agent Accounts); a no-reply
sender, a grant the agent does not answer for, ``message.updated``
notifications and a forged request are mixed in. After the queue drains, a
customer follows up on the agent's reply and gets a second reply.

The report is checked against the invariants of docs/design.md using what the
Nylas emulator saw; the exit status is non-zero if any is broken.
"""

import argparse
import contextlib
import json
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.progress import (
    Progress,
)

from devstack.cli_types import run_command, whole_number
from devstack.console import body_preview, make_console
from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID, HUMAN_EMAIL, HUMAN_GRANT_ID, envelope
from devstack.invariants import (
    DUPLICATE_ABSORBED,
    INVARIANTS,
    REPLY_SENT,
    History,
    Truth,
    check,
    skips_by_reason,
)
from devstack.stack import LocalStack, StackSettings
from ops.make_usage import name_make_target
from ops.progress import progress_bar
from replyonce.config import ReplierSettings


@dataclass
class DemoSettings:
    seed: int = 7
    customers: int = 8
    pollers: int = 2
    burst_probability: float = 0.4
    concurrent_probability: float = 0.35
    max_copies: int = 3
    timeout_seconds: float = 50.0


@dataclass
class DemoReport:
    notifications: int = 0
    # How many of them the scenario sent, how many followed up, how many the agent's replies fired.
    notification_sources: dict[str, int] = field(default_factory=dict)
    deliveries: int = 0
    webhook_statuses: dict[str, int] = field(default_factory=dict)
    duplicates_absorbed: int = 0
    replies_sent: int = 0
    expected_replies: int = 0
    skips: dict[str, int] = field(default_factory=dict)
    # Deliveries of the agent's own replies' notifications the webhook queued: each is skipped
    # (own_outbound) by its payload alone, before any idempotency record, so one skip per delivery.
    own_reply_deliveries_queued: int = 0
    dead_lettered: int = 0
    violations: dict[int, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    # Each reply as the customer got it: to, subject, first line, the inbound messages it answers.
    replies: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(self.violations.values()) and self.replies_sent == self.expected_replies

    def render(self) -> str:
        width = max(len(text) for text in INVARIANTS.values())
        lines = [
            "ReplyOnce local demo",
            f"  notifications            {self.notifications}" + self._sources(),
            f"  webhook deliveries       {self.deliveries}  (statuses: {self._statuses()})",
            f"  duplicates absorbed      {self.duplicates_absorbed}",
            f"  replies sent             {self.replies_sent}  (expected {self.expected_replies}:"
            " one per eligible message or burst)",
            f"  dead-lettered            {self.dead_lettered}",
            "  skips by reason:",
            *[f"    {reason:<26}{count}" for reason, count in sorted(self.skips.items())],
            "  replies:",
            *[
                f"    to {r['to']:<24} {r['subject']!r}  answers {', '.join(map(short_id, r['answers']))}"
                + (f"\n      │ {r['first_line']}" if r["first_line"] else "")
                for r in self.replies
            ],
            "  invariants:",
            *[
                f"    {number}. {INVARIANTS[number]:<{width}}  "
                + ("ok" if not found else f"{len(found)} VIOLATED")
                for number, found in self.violations.items()
            ],
        ]
        for number, found in self.violations.items():
            lines.extend(f"      [{number}] {sentence}" for sentence in found[:5])
        lines.append(f"  took {self.seconds:.1f} s — {'PASS' if self.ok else 'FAIL'}")
        return "\n".join(lines)

    def _sources(self) -> str:
        parts = [f"{count} {source}" for source, count in self.notification_sources.items() if count]
        return f"  ({', '.join(parts)})" if parts else ""

    def _statuses(self) -> str:
        return ", ".join(f"{status} x{count}" for status, count in sorted(self.webhook_statuses.items()))


def short_id(identifier: str, keep: int = 10) -> str:
    """A long message id cut for a person to read (``msg-1c0e9a…``); ``--json`` keeps them whole."""
    return identifier if len(identifier) <= keep + 2 else identifier[:keep] + "…"


class _Progress:
    """Phase lines, and on a terminal a live bar of webhook deliveries and replies (rich)."""

    def __init__(self, out: TextIO | None) -> None:
        self._console = make_console(out) if out is not None else None

    def __call__(self, text: str) -> None:
        if self._console is not None:
            self._console.print(f"[demo] {text}", highlight=False)

    def bar(self) -> Progress | None:
        """A live progress display, or ``None`` when nobody watches a terminal."""
        return progress_bar(self._console)


def run_demo(settings: DemoSettings, progress_out: TextIO | None = sys.stderr) -> DemoReport:
    """Start the stack, play the scenario, drain, check, report."""
    progress = _Progress(progress_out)
    rng = random.Random(settings.seed)
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="nylas-webhooks")
    with (
        LocalStack(StackSettings(pollers=settings.pollers)) as stack,
        _abandoned_on_exit(pool, stack) as deliveries,
    ):
        nylas = stack.emulator
        assert nylas is not None
        nylas.add_grant(HUMAN_GRANT_ID, HUMAN_EMAIL, name="Alice")
        sender = stack.sender()
        notified: set[str] = set()
        lock = threading.Lock()
        pending = []

        def deliver(payload: dict[str, Any]) -> None:
            copies = rng.randint(1, settings.max_copies)
            concurrent = copies > 1 and rng.random() < settings.concurrent_probability
            with lock:
                if payload["type"].startswith("message.created"):
                    notified.add(payload["data"]["object"]["id"])
            pending.append(
                deliveries.submit(sender.deliver_many, payload, copies=copies, concurrent=concurrent)
            )

        sources = {"from the scenario": 0, "follow-up": 0, "from the agent's own replies": 0}
        own_reply_notifications: set[str] = set()

        def agent_sent(message: dict[str, Any]) -> None:
            # The agent's own sends fire message.created, as Nylas does for Agent Accounts.
            if message["grant_id"] == AGENT_GRANT_ID and "sent" in message["folders"]:
                notification = envelope(message)
                with lock:
                    sources["from the agent's own replies"] += 1
                    own_reply_notifications.add(notification["id"])
                deliver(notification)

        nylas.on_message_created = agent_sent
        progress(f"local stack up: webhook {stack.webhook_url}, {settings.pollers} replier pollers")

        threads: list[dict[str, Any]] = []
        notifications: list[dict[str, Any]] = []
        expected = 0
        for index in range(settings.customers):
            customer = f"customer{index + 1}@example.com"
            first = nylas.deliver_inbound(
                AGENT_GRANT_ID,
                from_email=customer,
                subject=f"Order {1040 + index}",
                body="<p>Where is my order?</p>",
            )
            messages = [first]
            if rng.random() < settings.burst_probability:
                for extra in range(rng.randint(1, 2)):
                    messages.append(
                        nylas.deliver_inbound(
                            AGENT_GRANT_ID,
                            from_email=customer,
                            subject=f"Re: Order {1040 + index}",
                            body=f"<p>Also, follow-up {extra + 1}.</p>",
                            reply_to_message_id=first["id"],
                            date=first["date"] + extra + 1,
                        )
                    )
            expected += 1
            threads.append({"customer": customer, "thread_id": first["thread_id"]})
            for position, message in enumerate(messages):
                kind = "message.created.truncated" if index == 0 and position == 0 else "message.created"
                notifications.append(envelope(message, notification_type=kind))
                if rng.random() < 0.3:
                    notifications.append(envelope(message, notification_type="message.updated"))
        automated = nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email="no-reply@shop.example",
            subject="Receipt",
            body="<p>Thanks for your purchase.</p>",
        )
        human = nylas.deliver_inbound(
            HUMAN_GRANT_ID,
            from_email="friend@example.com",
            subject="Lunch?",
            body="<p>Lunch on Friday?</p>",
            to_email=HUMAN_EMAIL,
        )
        notifications += [envelope(automated), envelope(human)]
        rng.shuffle(notifications)
        forged = envelope(automated, notification_id="forged-notification-0001")
        sources["from the scenario"] = len(notifications)
        progress(
            f"delivering the scenario's {len(notifications)} notifications (each reply the agent sends "
            f"fires one more), each 1-{settings.max_copies} times, "
            "some concurrently, plus one forged request"
        )
        for payload in notifications:
            deliver(payload)
        pending.append(deliveries.submit(sender.deliver, forged, forged=True))
        _wait(stack, pending, progress, settings.timeout_seconds)

        # A customer answers the agent's reply: a new burst that deserves its own reply.
        replied_thread = threads[-1]
        [reply, *_] = nylas.sent_messages(thread_id=replied_thread["thread_id"]) or [None]
        if reply is not None:
            follow_up = nylas.deliver_inbound(
                AGENT_GRANT_ID,
                from_email=replied_thread["customer"],
                subject=reply["subject"],
                body="<p>Thanks! One more question.</p>",
                reply_to_message_id=reply["id"],
            )
            expected += 1
            sources["follow-up"] += 1
            progress("a customer follows up on the agent's reply")
            deliver(envelope(follow_up))
            _wait(stack, pending, progress, settings.timeout_seconds)
        deliveries.shutdown(wait=True)
        _, _, dead = stack.queue_depth()

        logs = list(stack.logs.records)
        # Ground truth: what this scenario wrote and why (the checker knows nothing of the product).
        truth = {
            m["id"]: Truth.human("customer", m["from"][0]["email"])
            for _, m in nylas.mailbox(AGENT_GRANT_ID)
            if "inbox" in m["folders"]
        }
        truth[automated["id"]] = Truth.never("no_reply")
        truth[human["id"]] = Truth.never("other_grant")
        history = History(
            agent_grants={AGENT_GRANT_ID: AGENT_EMAIL},
            mailbox=nylas.mailbox(),
            truth=truth,
            sends=nylas.sends,
            deliveries=list(sender.deliveries),
            logs=logs,
            reply_budget=ReplierSettings.from_environment().reply_budget_per_hour,
            automatic_exchanges=ReplierSettings.from_environment().max_automatic_exchanges,
            notified_message_ids=notified,
            forged_notification_ids={forged["id"]},
        )
        report = DemoReport(
            notifications=len({d.notification_id for d in sender.deliveries if not d.forged}),
            notification_sources=dict(sources),
            deliveries=len(sender.deliveries),
            webhook_statuses=dict(Counter(str(d.status) for d in sender.deliveries)),
            duplicates_absorbed=sum(1 for r in logs if r.get("message") == DUPLICATE_ABSORBED),
            replies_sent=len(nylas.sends),
            expected_replies=expected,
            skips=skips_by_reason(logs),
            own_reply_deliveries_queued=sum(
                1
                for d in sender.deliveries
                if d.notification_id in own_reply_notifications and d.status == 200
            ),
            dead_lettered=dead,
            violations=check(history),
            seconds=time.monotonic() - started,
            replies=_replies(history.mailbox, logs),
        )
        return report


@contextlib.contextmanager
def _abandoned_on_exit(executor: ThreadPoolExecutor, stack: LocalStack) -> Iterator[ThreadPoolExecutor]:
    """The deliveries' pool; on the way out (Ctrl-C included) nothing more is delivered.

    Why: the stack stops right after; deliveries still queued, or announced by the agent's sends
    meanwhile, would meet a stopped stack, and their handlers' output a terminal no longer
    collected from.
    """
    try:
        yield executor
    finally:
        if stack.emulator is not None:
            stack.emulator.on_message_created = None
        executor.shutdown(wait=False, cancel_futures=True)


def _replies(mailbox: list[tuple[float, dict[str, Any]]], logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agent's replies in the mailbox, each with what it answers as the replier recorded it."""
    covered = {
        r.get("reply_message_id"): r.get("covered") or [] for r in logs if r.get("message") == REPLY_SENT
    }
    replies = []
    for _, message in mailbox:
        if message["grant_id"] != AGENT_GRANT_ID or "sent" not in message.get("folders", []):
            continue
        preview = body_preview(str(message.get("body") or ""), lines=2)
        replies.append(
            {
                "to": ", ".join(p["email"] for p in message.get("to") or []),
                "subject": message.get("subject", ""),
                "first_line": preview[1] if len(preview) > 1 else (preview[0] if preview else ""),
                # A reply whose worker died before logging it has no record: say so rather than guess.
                "answers": list(covered.get(message["id"], ["(not recorded)"])),
                "message_id": message["id"],
            }
        )
    return replies


def _wait(stack: LocalStack, pending: list, progress: _Progress, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    bar = progress.bar()
    with bar or contextlib.nullcontext():
        task = bar.add_task("webhook deliveries", total=len(pending)) if bar is not None else None
        while any(not future.done() for future in pending) and time.monotonic() < deadline:
            if bar is not None and task is not None:
                bar.update(task, completed=sum(1 for future in pending if future.done()))
            time.sleep(0.2)
    for future in pending:
        future.result(timeout=max(0.1, deadline - time.monotonic()))
    visible, in_flight, _ = stack.queue_depth()
    progress(f"webhooks delivered; draining the queue ({visible} waiting, {in_flight} in flight)")
    if not stack.wait_until_drained(timeout_seconds=max(1.0, deadline - time.monotonic())):
        progress("queue did not drain in time")
    assert stack.emulator is not None
    progress(f"queue drained: {len(stack.emulator.sends)} replies sent so far")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DemoSettings.seed)
    parser.add_argument(
        "--customers", type=whole_number(1, 500), default=DemoSettings.customers, help="1-500 customers"
    )
    parser.add_argument(
        "--pollers", type=whole_number(1, 16), default=DemoSettings.pollers, help="replier containers (1-16)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = name_make_target(parser, "demo").parse_args(argv)
    report = run_demo(DemoSettings(seed=args.seed, customers=args.customers, pollers=args.pollers))
    if args.json:
        print(json.dumps({**report.__dict__, "ok": report.ok}, indent=2))
    else:
        print(report.render())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(run_command(main))
