"""``make promote``'s step (``ops.promote.next_mode``) and when a grant entered its mode, as tables."""

import pytest

from ops.errors import ConfigurationError
from ops.promote import entered_at, next_mode
from replyonce.adapters.grant_registry import Change


@pytest.mark.parametrize(
    ("current", "to", "force", "expected"),
    [
        ("shadow", None, False, "review"),
        ("review", None, False, "send"),
        ("shadow", "review", False, "review"),
        ("review", "send", False, "send"),
        # Said with --force: a skip, a step down.
        ("shadow", "send", True, "send"),
        ("send", "shadow", True, "shadow"),
        ("review", "shadow", True, "shadow"),
    ],
)
def test_one_step_up_or_what_force_says(current, to, force, expected):
    assert next_mode(current, to, force=force) == expected


@pytest.mark.parametrize(
    ("current", "to", "force", "refusal"),
    [
        ("send", None, False, "no step up from send"),
        ("send", None, True, "no step up from send"),
        ("review", "review", True, "already in review"),
        ("shadow", "send", False, "skips review"),
        ("send", "review", False, "step down"),
        ("review", "shadow", False, "step down"),
        ("draft", None, False, "reply modes are"),
        ("shadow", "draft", True, "reply modes are"),
    ],
)
def test_refused_steps(current, to, force, refusal):
    with pytest.raises(ConfigurationError, match=refusal):
        next_mode(current, to, force=force)


def change(at: str, before, after) -> Change:
    return Change("g", at, "set", "op", before, after)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ([], None),
        ([change("2026-12-01T10:00:00.000000Z", None, {"reply_mode": "shadow"})], 1_796_119_200 - 60),
        # The newest entry into shadow counts; a change within shadow (its agent) does not restart it.
        (
            [
                change(
                    "2026-12-03T10:00:00.000000Z",
                    {"reply_mode": "shadow"},
                    {"reply_mode": "shadow", "agent": "b:c"},
                ),
                change("2026-12-02T10:00:00.000000Z", {"reply_mode": "review"}, {"reply_mode": "shadow"}),
                change("2026-12-01T10:00:00.000000Z", None, {"reply_mode": "shadow"}),
            ],
            1_796_205_600 - 60,
        ),
        # A change dated without microseconds (written by hand) reads the same; an unreadable date is none.
        ([change("2026-12-01T10:00:00Z", None, {"reply_mode": "shadow"})], 1_796_119_200 - 60),
        ([change("yesterday", None, {"reply_mode": "shadow"})], None),
        # A record that never named the mode (the stack's parameter says shadow): unknown.
        ([change("2026-12-01T10:00:00.000000Z", None, {"agent": "b:c"})], None),
    ],
)
def test_when_the_grant_entered_shadow_a_minute_early_for_the_clocks_skew(changes, expected):
    assert entered_at(changes, "shadow") == expected
