"""The score (ops.score): the confusion table, the rates and their Wilson intervals, the judge's use.
Items in, figures out; each expectation derived by hand from the items or from the interval's definition."""

import math

import pytest

from ops.score import (
    RATE_NAMES,
    JudgeError,
    Judgement,
    confusion_table,
    judged,
    render_score,
    score_items,
    wilson_interval,
)

Z = 1.959963984540054


def item(outcome, answered, trigger="m1", *, agent="", person="", customer=""):
    return {
        "outcome": outcome,
        "trigger_id": trigger,
        "thread_id": "t-" + trigger,
        "agent_text": agent,
        "person_message_id": "p-" + trigger if answered else "",
        "person_text": person,
        "customer_text": customer,
    }


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        # x = 0: the lower bound is 0 and the upper z²/(n + z²); x = n: the mirror image.
        (0, 10, 0.0, Z**2 / (10 + Z**2)),
        (10, 10, 10 / (10 + Z**2), 1.0),
        (0, 1, 0.0, Z**2 / (1 + Z**2)),
        # 3 of 3 is no certainty: the usual p ± z·sqrt(p(1-p)/n) would say [1, 1].
        (3, 3, 3 / (3 + Z**2), 1.0),
    ],
)
def test_the_wilson_interval_at_the_edges_has_its_closed_form(successes, trials, low, high):
    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-12)


@pytest.mark.parametrize(("successes", "trials"), [(1, 10), (5, 10), (7, 20), (40, 200), (199, 200)])
def test_the_wilson_bounds_are_the_proportions_the_score_test_does_not_reject(successes, trials):
    # Wilson's definition: the bounds p solve (p̂ - p)² = z² p (1 - p) / n (the score test at 95 %).
    observed = successes / trials
    for bound in wilson_interval(successes, trials):
        assert (observed - bound) ** 2 == pytest.approx(Z**2 * bound * (1 - bound) / trials, rel=1e-9)
    low, high = wilson_interval(successes, trials)
    assert low < observed < high


def test_no_trial_knows_nothing_and_impossible_counts_are_refused():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(3, 2)


ITEMS = [
    item("reply", True, "a"),
    item("reply", True, "b"),
    item("reply", False, "c"),
    item("declined", True, "d"),
    item("declined", False, "e"),
    item("declined", False, "f"),
    item("handed_off", True, "g"),
    item("rejected", True, "h"),  # a refusal for good is a hand-off to the team
    item("skipped", True, "i"),
    item("skipped", False, "j"),
]


def test_the_confusion_table_puts_each_decision_in_its_cell():
    assert confusion_table(ITEMS) == {
        "answer": {"person_answered": 2, "nobody_answered": 1},
        "decline": {"person_answered": 1, "nobody_answered": 2},
        "hand_off": {"person_answered": 2, "nobody_answered": 0},
        "skipped": {"person_answered": 1, "nobody_answered": 1},
    }


@pytest.mark.parametrize(
    ("name", "count", "total"),
    [
        # People answered a, b, d, g, h (i was a rule's skip: the agent was not asked).
        ("answered_when_answered", 2, 5),
        # Nobody answered c, e, f.
        ("answered_when_left_alone", 1, 3),
        ("handed_off_when_answered", 2, 5),
    ],
)
def test_each_rate_counts_the_agents_decisions_in_its_column(name, count, total):
    rate = score_items(ITEMS).rate(name)
    assert (rate.count, rate.total, rate.value) == (count, total, count / total)
    assert (rate.low, rate.high) == wilson_interval(count, total)


def test_a_rate_without_decisions_has_no_value_and_the_whole_interval():
    rate = score_items([item("skipped", True)]).rate("answered_when_answered")
    assert (rate.count, rate.total, rate.value, rate.low, rate.high) == (0, 0, None, 0.0, 1.0)


def test_the_judge_is_asked_only_where_both_answered_with_the_three_texts():
    asked = []

    def judge(agent, person, customer):
        asked.append((agent, person, customer))
        return (0.25, "a quarter")

    items = [
        item("reply", True, "a", agent="A", person="P", customer="C"),
        item("reply", False, "b", agent="B"),
        item("declined", True, "c", person="P2"),
    ]
    score = score_items(items, judge, judge_name="mine")
    assert asked == [("A", "P", "C")]
    [close] = score.closeness
    assert (close.trigger_id, close.score, close.reason) == ("a", 0.25, "a quarter")
    assert (score.closeness_mean, score.judge) == (0.25, "mine")


@pytest.mark.parametrize(
    "answer", [1.5, -0.1, (1.2, "too high"), (math.nan, "nan"), ("0.5", "a string"), (True, "a bool"), None]
)
def test_a_judge_answering_anything_but_a_score_in_0_1_with_a_reason_is_refused(answer):
    with pytest.raises(JudgeError):
        judged(answer)


def test_a_judgement_or_a_pair_is_taken():
    assert judged(Judgement(1, "same")) == Judgement(1.0, "same")
    assert judged((0, "nothing alike")) == Judgement(0.0, "nothing alike")


def test_the_text_shows_the_table_every_rate_and_that_there_is_no_category():
    text = render_score(score_items(ITEMS))
    assert [line.split() for line in text.splitlines()[2:6]] == [
        ["answer", "2", "1"],
        ["decline", "1", "2"],
        ["hand_off", "2", "0"],
        ["skipped", "1", "1"],
    ]
    for name in RATE_NAMES:
        assert name in text
    assert "answered_when_answered      40.0%  2/5  95% [11.8%, 76.9%]" in text
    assert "per category: none" in text


def test_the_score_is_plain_json_data():
    import json

    data = json.loads(json.dumps(score_items(ITEMS).to_dict()))
    assert data["table"]["hand_off"]["person_answered"] == 2
    assert [r["name"] for r in data["rates"]] == list(RATE_NAMES)
