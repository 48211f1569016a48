"""The gate (ops.gate): two reports' items in, pass or fail by the thresholds, the changed messages named.
Each table row's verdict is worked out by hand from its items."""

import pytest

from ops.errors import ConfigurationError
from ops.gate import changed_decisions, gate, parse_thresholds, render_verdict


def item(mid, outcome, answered, reason=""):
    return {
        "trigger_id": mid,
        "covered": [mid],
        "thread_id": "t-" + mid,
        "outcome": outcome,
        "reason": reason,
        "person_message_id": "p-" + mid if answered else "",
        "at": int(mid[1:]),
    }


def report(*items, score=None):
    document = {"items": list(items), "periods": []}
    if score is not None:
        document["score"] = score
    return document


# Ten messages people answered and ten they left alone; the baseline answers 6 of the first, 1 of the second.
ANSWERED = [f"m{i}" for i in range(10)]
LEFT = [f"m{i}" for i in range(10, 20)]


def agent(answers_answered, answers_left, hands_off=0):
    items = []
    for n, mid in enumerate(ANSWERED):
        outcome = (
            "reply"
            if n < answers_answered
            else "handed_off"
            if n < answers_answered + hands_off
            else "declined"
        )
        items.append(item(mid, outcome, True))
    items.extend(item(mid, "reply" if n < answers_left else "declined", False) for n, mid in enumerate(LEFT))
    return report(*items)


BASELINE = agent(6, 1)


@pytest.mark.parametrize(
    ("candidate", "flags", "passes"),
    [
        (agent(6, 1), {}, True),  # the same agent
        (agent(8, 1), {}, True),  # better
        (agent(6, 1, hands_off=0), {"max_drop": ["0"]}, True),  # the same, with no drop allowed
        (agent(5, 1), {}, False),  # 60% -> 50% answered: 10 points worse, 5 allowed
        (agent(5, 1), {"max_drop": ["answered_when_answered=0.10"]}, True),  # the team allows 10 points
        (agent(5, 1), {"max_drop": ["0.1"]}, True),  # 0.1 for every rate
        (agent(6, 2), {}, False),  # answers 2 of 10 left alone instead of 1: 10 points worse
        (agent(6, 2), {"max_drop": ["answered_when_left_alone=0.1"]}, True),
        # Hands off 3 of 10 answered instead of none: 30 points worse, 20 allowed.
        (agent(4, 1, hands_off=3), {"max_drop": ["0.2"]}, False),
        (agent(4, 1, hands_off=3), {"max_drop": ["0.2", "handed_off_when_answered=0.3"]}, True),
        (agent(8, 1), {"floors": ["answered_when_answered=0.9"]}, False),  # better, but below the floor
        (agent(8, 1), {"floors": ["answered_when_answered=0.8"]}, True),
        (agent(8, 3), {"max_drop": ["1"], "ceilings": ["answered_when_left_alone=0.2"]}, False),
        (agent(8, 2), {"max_drop": ["1"], "ceilings": ["answered_when_left_alone=0.2"]}, True),
    ],
)
def test_the_gate_fails_a_candidate_worse_than_the_baseline_beyond_the_thresholds(candidate, flags, passes):
    verdict = gate(BASELINE, candidate, parse_thresholds(**flags))
    assert verdict.passed is passes
    assert verdict.exit_code == (0 if passes else 1)


def test_the_failing_check_says_which_rate_by_how_much():
    verdict = gate(BASELINE, agent(5, 1), parse_thresholds())
    assert verdict.failures == (
        "answered_when_answered: 60.0% (6/10) -> 50.0% (5/10), worse by 10.0%, allowed 5.0%",
    )


def test_a_rate_without_decisions_is_said_not_compared_and_does_not_fail():
    only_left = report(*(item(m, "declined", False) for m in LEFT))
    verdict = gate(only_left, only_left, parse_thresholds())
    assert verdict.passed
    assert any("answered_when_answered: not compared" in line for _, line in verdict.checks)


def test_every_message_that_changed_decision_is_named_with_both_reasons():
    before = report(
        item("m1", "declined", True, "not an order"),
        item("m2", "reply", False),
        item("m3", "skipped", False, "automated_sender"),
    )
    after = report(item("m1", "reply", True), item("m2", "reply", False), item("m4", "reply", False))
    changes = changed_decisions(before, after)
    assert [(c.message_id, c.before, c.after, c.person_answered) for c in changes] == [
        ("m1", "decline (not an order)", "answer", True),
        ("m3", "skipped (automated_sender)", "-", False),
        ("m4", "-", "answer", False),
    ]
    text = render_verdict(gate(before, after, parse_thresholds()))
    assert "message m1 (thread t-m1): decline (not an order) -> answer; a person answered it" in text


@pytest.mark.parametrize(
    ("was", "now", "passes"),
    [
        (
            {"judge": "ops.judge:rouge_l", "closeness_mean": 0.6},
            {"judge": "ops.judge:rouge_l", "closeness_mean": 0.55},
            True,
        ),
        (
            {"judge": "ops.judge:rouge_l", "closeness_mean": 0.6},
            {"judge": "ops.judge:rouge_l", "closeness_mean": 0.4},
            False,
        ),
        # Two judges' scores are not on one scale: refused rather than compared.
        (
            {"judge": "ops.judge:rouge_l", "closeness_mean": 0.6},
            {"judge": "bedrock", "closeness_mean": 0.9},
            False,
        ),
    ],
)
def test_closeness_is_gated_only_when_asked_and_only_between_the_same_judge(was, now, passes):
    asked = parse_thresholds(max_drop=["closeness=0.1"])
    assert gate(report(score=was), report(score=now), asked).passed is passes
    assert gate(report(score=was), report(score=now), parse_thresholds()).passed


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ({"max_drop": ["answered=0.1"]}, "no rate 'answered'"),
        ({"max_drop": ["2"]}, "a rate is between 0 and 1"),
        ({"max_drop": ["answered_when_answered=lots"]}, "is not a number"),
        (
            {"floors": ["answered_when_left_alone=0.1"]},
            "lower is better for answered_when_left_alone; bound it with --ceiling",
        ),
        (
            {"ceilings": ["answered_when_answered=0.9"]},
            "higher is better for answered_when_answered; bound it with --floor",
        ),
        ({"floors": ["answered_when_answered"]}, "expected RATE=VALUE"),
    ],
)
def test_bad_thresholds_are_one_line_naming_the_flag(flags, said):
    with pytest.raises(ConfigurationError) as refused:
        parse_thresholds(**flags)
    assert said in str(refused.value)
