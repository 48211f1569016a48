"""How much work one reply takes: the core<->shell rounds and the product's calls before its send.

One customer's message in a thread of its own, on the in-memory world of ``tests/unit/on_fakes.py``
(the real shell and core, the template's agent), is handled to its send. Counted until the send
leaves (``FakeMailbox.send``):

- ``rounds``: the steps :func:`replyonce.core.next_step` decided, the send's own ``Attempt`` included,
  and the phase the record was in at each (the core's ``phases`` module);
- ``product calls``: Python calls into the layer's package (``layers/replyonce/replyonce``), counted
  with :func:`sys.setprofile`, and how many of them were into each module;
- ``plans``: calls of ``replyonce.rules.plan.plan_burst`` and
  ``replyonce.rules.screening.reason_not_to_answer``,
  the thread's screen and plan.

Run it from the repository's root::

    PYTHONPATH=.:layers/replyonce .venv/bin/python -m tests.rounds

It runs on a core without phases too (they trace as ``-``): copied into a checkout of an older commit,
it gives that commit's figures.

``docs/design.md`` ("The record's phases") quotes its figures; ``tests/unit/test_phases.py`` holds the
plan to one derivation per thread read.
"""

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replyonce import core

PACKAGE = str(Path(core.__file__).resolve().parent.parent)


@dataclass(frozen=True)
class Trace:
    """What one message took to its send."""

    rounds: tuple[str, ...]
    phases: tuple[str, ...]
    calls: Counter[str]

    @property
    def product_calls(self) -> int:
        return sum(self.calls.values())

    def of(self, function: str) -> int:
        """Calls of ``module.function`` (``plan.plan_burst``)."""
        return self.calls.get(function, 0)

    def into(self, module: str) -> int:
        """Calls into ``module`` (``screening``)."""
        return sum(n for name, n in self.calls.items() if name.rsplit(".", 1)[0] == module)


class _SendReached(Exception):
    """The send is about to leave: the trace ends there."""


def one_message_to_its_send() -> Trace:
    """Handle one customer's message in a thread of its own until its send leaves; count on the way."""
    from tests.unit.on_fakes import Desk

    desk = Desk()
    message = desk.inbound()
    rounds: list[str] = []
    phases: list[str] = []
    calls: Counter[str] = Counter()
    next_step = core.next_step

    def counted_next_step(s: Any) -> Any:
        step = next_step(s)
        rounds.append(type(step).__name__)
        # A core without phases (before issue 45) traces as "-": the script measures either.
        phases.append(type(s.phase).__name__ if hasattr(s, "phase") else "-")
        return step

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        if filename.startswith(PACKAGE):
            module = filename[len(PACKAGE) + 1 : -3].replace("/", ".").removeprefix("replyonce.")
            calls[f"{module}.{frame.f_code.co_name}"] += 1

    def send(*args: Any, **kwargs: Any) -> Any:
        raise _SendReached

    desk.mailbox.send = send  # type: ignore[method-assign]
    core.next_step = counted_next_step
    sys.setprofile(profile)
    try:
        desk.notify(message, retries=0)
    except _SendReached:
        pass
    finally:
        sys.setprofile(None)
        core.next_step = next_step
    if not rounds or rounds[-1] != "Attempt":
        raise RuntimeError(f"the message never reached its send: {rounds}")
    return Trace(tuple(rounds), tuple(phases), calls)


def main() -> None:
    trace = one_message_to_its_send()
    print(f"rounds to the send: {len(trace.rounds)}")
    for step, phase in zip(trace.rounds, trace.phases, strict=True):
        print(f"  {phase:8} {step}")
    print(f"product calls before the send: {trace.product_calls}")
    print(f"  into screening: {trace.into('screening')}, into plan: {trace.into('plan')}")
    print(f"  plan.plan_burst: {trace.of('rules.plan.plan_burst')}")
    print(f"  screening.reason_not_to_answer: {trace.of('rules.screening.reason_not_to_answer')}")


if __name__ == "__main__":
    main()
