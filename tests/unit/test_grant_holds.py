"""A grant's ``429`` holds that grant's next requests of its kind until its ``Retry-After`` is up, and no
other grant's (``replyonce.adapters.pacing.GrantHolds``), on a clock the test moves."""

import pytest

from replyonce.adapters.pacing import MAX_HOLD_SECONDS, UNSTATED_HOLD_SECONDS, GrantHolds


class Clock:
    now = 1000.0


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def holds(clock):
    return GrantHolds(monotonic=lambda: clock.now)


def test_a_grant_told_to_wait_is_held_for_its_retry_after_and_no_other_grant_is(holds, clock):
    holds.hold("grant-a", "send", 30, "rate_limit_error")
    assert holds.held("grant-a", "send") == (30, "rate_limit_error")
    assert holds.held("grant-b", "send") is None  # another grant: at once
    assert holds.held("grant-a", "read") is None  # its reads have limits of their own
    clock.now += 29.5
    assert holds.held("grant-a", "send") == (1, "rate_limit_error")  # whole seconds, rounded up
    clock.now += 0.5
    assert holds.held("grant-a", "send") is None


@pytest.mark.parametrize(
    ("retry_after", "held_for"),
    [
        (None, UNSTATED_HOLD_SECONDS),  # no Retry-After: the next second (Nylas' limits are per second)
        (0, None),
        (MAX_HOLD_SECONDS + 1000, MAX_HOLD_SECONDS),  # a huge header holds the grant no longer than this
    ],
)
def test_the_hold_without_or_with_an_odd_retry_after(holds, retry_after, held_for):
    holds.hold("grant-a", "send", retry_after, "nylas_rate_limit_exceeded")
    held = holds.held("grant-a", "send")
    assert (held[0] if held else None) == held_for


def test_a_shorter_retry_after_never_shortens_a_longer_hold(holds, clock):
    holds.hold("grant-a", "send", 60, "rate_limit_error")
    holds.hold("grant-a", "send", 2, "rate_limit_error")
    clock.now += 10
    assert holds.held("grant-a", "send") == (50, "rate_limit_error")
