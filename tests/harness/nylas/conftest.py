"""Fixtures of the emulator's contract tests: a fresh emulator per test on a settable clock."""

import pytest

from devstack.nylas import NylasEmulator
from tests.harness.nylas.client import AGENT_EMAIL, API_KEY, GRANT, ChallengeEndpoint, FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def nylas(clock):
    """Overrides the session-wide emulator of ``tests/conftest.py``: each contract test starts clean."""
    with NylasEmulator(api_key=API_KEY, clock=clock) as emulator:
        emulator.add_grant(GRANT, AGENT_EMAIL, name="Support Agent")
        yield emulator


@pytest.fixture
def endpoint():
    running: list[ChallengeEndpoint] = []

    def start(answer) -> ChallengeEndpoint:
        running.append(ChallengeEndpoint(answer))
        return running[-1]

    yield start
    for server in running:
        server.stop()
