"""The bench's slow agent takes the agent's time on the path every agent grant's record runs (issue 46).

Since the grant registry (issue 42) a record of a seeded grant runs with the grant directory's agent, not
the replier's own; a bench that wrapped only the latter drafted ReplyOnce's replies at once while the
baseline's took their time, and priced exactly once below the pipeline without it.
"""

from bench import slow_agent
from bench.latency import LatencyModel
from bench.timeline import AGENT
from devstack.counting import ReplierHarness, first_reply


def test_a_seeded_grants_reply_takes_the_slow_agents_draft(replier_env, nylas, tuning):
    harness = ReplierHarness(replier_env, nylas, tuning)
    spans = []

    class Filed:
        def file(self, span):
            spans.append(span)

    slow_agent.install(harness.consumer, LatencyModel(seed=1, scale=0.01), Filed())
    step = first_reply(harness)
    assert not step.failed
    assert [s.operation for s in spans if s.service == AGENT] == ["draft"]
