"""The bench's slow agent takes the agent's time on the path every agent grant's record runs (issue 46).

Since the grant registry (issue 42) a record of a seeded grant runs with the grant directory's agent, not
the replier's own; a bench that wrapped only the latter drafted ReplyOnce's replies at once while the
baseline's took their time, and priced exactly once below the pipeline without it.
"""

from types import SimpleNamespace

from bench import slow_agent
from bench.latency import LatencyModel
from replyonce.grants import GrantSettings
from replyonce.shell.grants import GrantDirectory


def _template(conversation):
    return None


def _other(conversation):
    return None


def test_the_grant_directorys_agents_are_the_slow_agents():
    directory = GrantDirectory(
        GrantSettings(agent="template"),
        ("grant-1",),
        None,
        lambda name: _other,
        paused_retry_seconds=60,
        loaded={"template": _template},
    )
    replier = SimpleNamespace(_agent=_template, _ask_agent=lambda conversation: None, _grants=directory)
    slow_agent.install(SimpleNamespace(_replier=replier), LatencyModel(seed=1, scale=0.01))
    chosen = directory.choose("grant-1")
    assert chosen.agent is replier._agent  # the seeded grant's record asks the replier's slow agent
    assert isinstance(chosen.agent, slow_agent.SlowAgent)
    # A grant's own agent, loaded later, drafts in the agent's time too, its spans filed with the others'.
    other = directory._agent("grant-2", "module:other")
    assert isinstance(other, slow_agent.SlowAgent)
    assert other.spans is replier._agent.spans
