"""Keys derived from the domain, never random: the send fence and the agent's own key.

Why deterministic: a re-run after a crash, a timeout or a redelivery must
derive the same ``Idempotency-Key`` for the same stored reply, so Nylas
replays the first answer instead of sending again; and an agent's own side
effects (a refund, a ticket) need a key that is the same on every retry of
one burst.
"""

import json
import uuid

from replyonce.agent import Mode

# Changing either namespace changes every key: a deploy would re-open what the old keys still fence.
_LEGACY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/replyonce/idempotency-key")
_KEY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/replyonce/idempotency-key/v2")
_AGENT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/replyonce/conversation-key")
_REPLAY_AGENT_NAMESPACE = uuid.uuid5(
    uuid.NAMESPACE_URL, "https://github.com/replyonce/conversation-key/replay"
)
REPLAY_KEY_PREFIX = "replay-"
"""Every replay's ``Conversation.key`` starts with it; no live key does (a live key is a bare UUID)."""

LEGACY_KEY_SCHEME = 1
"""Intents stored by versions before the injective derivation (no ``key_scheme`` in the item)."""
KEY_SCHEME = 2
"""Every intent stored by this version."""


def idempotency_key(grant_id: str, target_id: str, generation: int, scheme: int = KEY_SCHEME) -> str:
    """The ``Idempotency-Key`` of one generation of one reply: the same for every attempt of it.

    Scheme 2 is injective: the parts are encoded as a JSON array, so no two
    different ``(grant, target, generation)`` share a key (scheme 1 joined
    them with ``:``, and ``("g", "a", 2)`` met ``("g", "a:2", 0)``). Scheme 1
    is kept for intents an earlier version stored, whose attempts its key
    still fences.
    """
    if scheme == LEGACY_KEY_SCHEME:
        name = f"{grant_id}:{target_id}" if generation == 0 else f"{grant_id}:{target_id}:{generation}"
        return str(uuid.uuid5(_LEGACY_NAMESPACE, name))
    return str(uuid.uuid5(_KEY_NAMESPACE, json.dumps([grant_id, target_id, generation])))


def conversation_key(grant_id: str, thread_id: str, covered: tuple[str, ...], mode: Mode = Mode.SEND) -> str:
    """``Conversation.key``: the same on every retry of the burst ``covered`` on one thread.

    Parameters
    ----------
    grant_id, thread_id, covered:
        The answering grant, the thread and the burst's message ids (in any order).
    mode:
        Why the agent is asked. ``send``, ``review`` and ``shadow`` share one key per burst (live
        mail; the intent id and the shadow record's id are this key too). ``replay`` is of its own
        namespace and prefix: a replay of last week's mail that reached an agent's idempotency store
        (a ticket keyed on ``Conversation.key``) must never answer for, or pre-empt, the live burst,
        and the prefix makes that true by construction rather than by the odds of a UUID collision.
    """
    name = json.dumps([grant_id, thread_id, sorted(covered)])
    if mode == Mode.REPLAY:
        return REPLAY_KEY_PREFIX + str(uuid.uuid5(_REPLAY_AGENT_NAMESPACE, name))
    return str(uuid.uuid5(_AGENT_NAMESPACE, name))
