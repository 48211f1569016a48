"""The agent's time: a draft that takes seconds, kept to one function so it can become ``REPLY_AGENT``.

A model's draft takes seconds, and the replier holds its thread's lease (and
its invocation) while it does. :func:`think` is that time, drawn from
``bench.latency.LatencyModel`` for the message being answered (the same
message, the same draft time, in the mix and in its floor), and a body of a
model reply's length, so the send intent the outbox stores has its size.

Today the replier calls a drafter (``replyonce.drafter``: ``draft(message,
agent_name) -> Draft``), and :func:`install` wraps the one a container has —
reaching into the consumer, as ``bench.timeline`` does, and failing loudly if
its shape changes. When the pluggable agent lands (``REPLY_AGENT=module:function``,
a function taking a ``Conversation`` and returning a ``Reply``), the same
function becomes the agent: ``bench.slow_agent:agent`` calling :func:`think`
for ``conversation.target`` and returning the built-in template agent's
reply, with nothing else here to change.
"""

import html
import time
from typing import Any

from bench.latency import DRAFT, LatencyModel, message_key
from bench.timeline import AGENT, Recorder, Span

# A model's reply is prose; its length (not its words) is what the outbox stores and DynamoDB bills.
_FILLER = (
    "Thank you for writing to us. We have looked into your request and will make sure it is handled "
    "as quickly as we can; if anything else comes up, simply reply to this email. "
)


def think(model: LatencyModel, subject: str, fallback_key: str, recorder: Recorder | None = None) -> str:
    """Take the agent's time for the message with ``subject``; return the extra prose a model would write.

    Parameters
    ----------
    model:
        The latency model; the draft's time and length are drawn for the subject's ``#key``.
    subject, fallback_key:
        The message answered; ``fallback_key`` (its id) when the subject carries no key.
    recorder:
        Where the draft's time is filed, as a span of the record being processed (``bench.timeline``).
    """
    key = message_key(subject) or fallback_key
    started = time.time()
    time.sleep(model.seconds(DRAFT, key))
    if recorder is not None:
        recorder.file(Span(AGENT, "draft", started, time.time()))
    length = model.draft_length(key)
    return (_FILLER * (length // len(_FILLER) + 1))[:length]


class SlowDrafter:
    """The container's drafter, after :func:`think`: the same subject, a body of a model reply's length."""

    def __init__(self, inner: Any, model: LatencyModel, recorder: Recorder | None = None) -> None:
        self._inner = inner
        self._model = model
        self._recorder = recorder

    def draft(self, message: dict[str, Any], agent_name: str) -> Any:
        subject, key = str(message.get("subject") or ""), str(message.get("id") or "")
        prose = think(self._model, subject, key, self._recorder)
        draft = self._inner.draft(message, agent_name)
        return type(draft)(subject=draft.subject, body=f"{draft.body}<p>{html.escape(prose)}</p>")


def install(consumer: Any, model: LatencyModel, recorder: Recorder | None = None) -> None:
    """Give ``consumer``'s replier a drafter that takes the agent's time (see the module docstring)."""
    replier = getattr(consumer, "_replier", None)
    if replier is None or not hasattr(replier, "_drafter"):
        raise RuntimeError(
            "NotificationConsumer has no _replier._drafter: switch bench.slow_agent to REPLY_AGENT"
        )
    replier._drafter = SlowDrafter(replier._drafter, model, recorder)
