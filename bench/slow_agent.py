"""The agent's time: a draft that takes seconds, the container's agent (``REPLY_AGENT``) wrapped.

A model's draft takes seconds, and the replier holds its thread's lease (and
its invocation) while it does. :func:`think` is that time, drawn from
``bench.latency.LatencyModel`` for the message being answered (the same
message, the same draft time, in the mix and in its floor), and prose of a
model reply's length, so the send intent the outbox stores has its size.

The replier calls its agent (``replyonce.adapters.agents``: a ``Conversation`` in, a
``Reply`` out) on a thread of its own, within ``AGENT_TIMEOUT_SECONDS``.
:func:`install` wraps the agent a container has — the built-in template
agent unless ``REPLY_AGENT`` says otherwise — so the call takes the agent's
time for ``conversation.target`` and returns the inner agent's reply with the
prose added; it reaches into the replier, as ``bench.timeline`` does, and
fails loudly if its shape changes. The draft's span is filed under the record
once the agent has answered, from the record's own thread (the agent's thread
has no record of its own in the recorder).
"""

import html
import threading
import time
from dataclasses import replace
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


class SlowAgent:
    """The container's agent, after :func:`think`: the inner agent's reply with a model reply's prose."""

    def __init__(self, inner: Any, model: LatencyModel) -> None:
        self._inner = inner
        self._model = model
        self._lock = threading.Lock()
        # The target message's id -> the draft's span, until the record's thread files it. Not the
        # conversation's id: the replier hands its agent a copy that reads the customer's files.
        self.spans: dict[str, Span] = {}

    def __call__(self, conversation: Any) -> Any:
        from replyonce.agent import Reply

        target = conversation.target
        started = time.time()
        prose = think(self._model, target.subject, target.id)
        with self._lock:
            self.spans[str(target.id)] = Span(AGENT, "draft", started, time.time())
        outcome = self._inner(conversation)
        if not isinstance(outcome, Reply):
            return outcome
        if outcome.html:
            return replace(outcome, html=f"{outcome.html}<p>{html.escape(prose)}</p>")
        return replace(outcome, text=f"{outcome.text}\n\n{prose}")

    def sharing(self, inner: Any) -> "SlowAgent":
        """Another agent taking the same draft times, its spans filed where this one's are."""
        other = SlowAgent(inner, self._model)
        other._lock, other.spans = self._lock, self.spans
        return other

    def take_span(self, conversation: Any) -> Span | None:
        with self._lock:
            return self.spans.pop(str(conversation.target.id), None)


def install(consumer: Any, model: LatencyModel, recorder: Recorder | None = None) -> None:
    """Give ``consumer``'s replier an agent that takes the agent's time (see the module docstring)."""
    replier = getattr(consumer, "_replier", None)
    if replier is None or not hasattr(replier, "_agent") or not hasattr(replier, "_ask_agent"):
        raise RuntimeError(
            "NotificationConsumer has no _replier._agent and _ask_agent: update bench/slow_agent.py"
        )
    agent = SlowAgent(replier._agent, model)
    replier._agent = agent
    _slow_grant_agents(getattr(replier, "_grants", None), agent)
    ask_agent = replier._ask_agent

    def timed_ask_agent(conversation: Any) -> Any:
        try:
            return ask_agent(conversation)
        finally:
            span = agent.take_span(conversation)
            if span is not None and recorder is not None:
                recorder.file(span)  # on the record's thread: filed under its attempt

    replier._ask_agent = timed_ask_agent


def _slow_grant_agents(grants: Any, agent: SlowAgent) -> None:
    """The grant directory's agents take the agent's time too (issue 42's registry: a record of a grant
    with settings, the seeded ones included, runs with the directory's agent, not the replier's own).

    Why: since the grant registry, every record of an agent grant asks the directory's agent; wrapping
    only the replier's left ReplyOnce's drafts instant in the bench while the baseline's took their time
    (found by issue 46's timeline of where the function's seconds go: no agent span in a run of 80
    replies). The directory's agent of the deployment's name is this one; another name's (a grant's own
    agent) is wrapped with the same draft times and spans as it loads.
    """
    if grants is None:
        return
    if not hasattr(grants, "_agents") or not hasattr(grants, "_load_agent"):
        raise RuntimeError("GrantDirectory has no _agents and _load_agent: update bench/slow_agent.py")
    inner = agent._inner
    with grants._lock:
        for name, loaded in list(grants._agents.items()):
            grants._agents[name] = agent if loaded is inner else agent.sharing(loaded)
    load = grants._load_agent
    grants._load_agent = lambda name: agent.sharing(load(name))


def recorder(model: LatencyModel) -> Recorder:
    """A recorder whose containers draft with the agent's time, filed as the record's ``agent`` span."""

    def prepare(consumer: Any) -> None:
        install(consumer, model, made)

    made = Recorder(prepare=prepare)
    return made
