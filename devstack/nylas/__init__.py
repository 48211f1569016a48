"""A loopback HTTP emulator of the parts of the Nylas v3 API that ReplyOnce uses.

Why it exists: ReplyOnce promises that the agent replies exactly once. That promise is only testable
against something that *counts what Nylas saw* -- every send that went out, every request, every
replay of an ``Idempotency-Key`` -- and that can misbehave on demand (5xx, 429, slow answers, lost
responses). Mocking the HTTP client would test our assumptions about Nylas instead of the wire
behaviour, so this is a real HTTP server on ``127.0.0.1`` that the unchanged client code talks to.

One module per resource, each with the Nylas documentation it follows:

- :mod:`~devstack.nylas.wire`: the answer envelope, errors and pagination every resource shares;
- :mod:`~devstack.nylas.mailbox`: grants, messages, drafts, threads, folders, the metadata index;
- :mod:`~devstack.nylas.messages`: messages, threads and folders (read, list, move);
- :mod:`~devstack.nylas.send`: ``POST .../messages/send``, the ``Idempotency-Key`` contract, header
  policy and account limits (:mod:`~devstack.nylas.limits`), with the Agent Account send queue in
  :mod:`~devstack.nylas.queue`;
- :mod:`~devstack.nylas.drafts`: drafts, and sending one;
- :mod:`~devstack.nylas.webhooks`: webhook destinations and their challenge;
- :mod:`~devstack.nylas.notifications`: the callbacks that stand for notifications;
- :mod:`~devstack.nylas.faults`: injected faults and latency profiles;
- :mod:`~devstack.nylas.modes`: the documented behaviours a test switches on (all off by default);
- :mod:`~devstack.nylas.control`: the ``/_emulator/`` routes a local stack drives it with;
- :mod:`~devstack.nylas.server`: the HTTP server;
- :mod:`~devstack.nylas.emulator`: :class:`NylasEmulator`, which puts them together.

The ``{grant}`` path segment also accepts the grant's email address, as the real API does. Every
response carries an HTTP ``Date`` header from the emulator's clock (:meth:`NylasEmulator.advance_clock`),
the time a product must use instead of its own clock or the sender-supplied message ``date``.

Standard library only, so the emulator runs wherever the tests run.
"""

from devstack.nylas.drafts import DraftRecord
from devstack.nylas.emulator import NylasEmulator
from devstack.nylas.faults import Fault
from devstack.nylas.limits import ACCOUNT_LIMITS
from devstack.nylas.modes import Modes
from devstack.nylas.send import IDEMPOTENCY_TTL_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH, SendAttempt, SendRecord
from devstack.nylas.webhooks import TRIGGER_TYPES

__all__ = [
    "ACCOUNT_LIMITS",
    "IDEMPOTENCY_TTL_SECONDS",
    "MAX_IDEMPOTENCY_KEY_LENGTH",
    "TRIGGER_TYPES",
    "DraftRecord",
    "Fault",
    "Modes",
    "NylasEmulator",
    "SendAttempt",
    "SendRecord",
]
