"""The judges (ops.judge): ROUGE-L on the examples of its paper, the Bedrock judge over a fake Converse
client (its request, its parsing, its token counts and cost), and ``--judge`` loading."""

import pytest

from ops.errors import ConfigurationError
from ops.judge import BedrockJudge, lcs_length, load_judge, model_price, rouge_l, words
from ops.score import Judgement, score_items


@pytest.mark.parametrize(
    ("agent", "person", "expected"),
    [
        # Lin (2004), section 3.1: reference "police killed the gunman"; "police kill the gunman" has an
        # LCS of 3 words (F 3/4), "the gunman kill police" of 2 (F 1/2), though both share 3 words.
        ("police kill the gunman", "police killed the gunman", 0.75),
        ("the gunman kill police", "police killed the gunman", 0.5),
        ("Order 1042 ships today.", "order 1042 ships TODAY", 1.0),
        ("Thanks for writing", "Your refund of $42.50 is on its way", 0.0),
        ("", "", 1.0),
        ("something", "", 0.0),
    ],
)
def test_rouge_l_scores_the_persons_words_in_the_persons_order(agent, person, expected):
    assert rouge_l(agent, person, "").score == pytest.approx(expected)


def test_rouge_l_is_recall_and_precision_of_the_common_subsequence():
    # 3 words in order of 4 agent words and 6 person words: P 3/4, R 1/2, F 2PR/(P+R) = 0.6.
    verdict = rouge_l("order 1042 ships soon", "your order 1042 ships on monday")
    assert verdict.score == pytest.approx(0.6)
    assert "3 words in order of 4 agent / 6 person" in verdict.reason


@pytest.mark.parametrize(
    ("a", "b", "common"),
    [("abcbdab", "bdcaba", 4), ("abc", "abc", 3), ("abc", "def", 0), ("", "abc", 0), ("aaaa", "aa", 2)],
)
def test_the_longest_common_subsequence(a, b, common):
    assert lcs_length(list(a), list(b)) == common


def test_numbers_amounts_and_dates_are_one_word_each():
    said = words("Refund $42.50 on 2026-12-01, order 1,042.")
    assert said == ["refund", "$42.50", "on", "2026-12-01", "order", "1,042"]


class FakeConverse:
    """Stands for boto3's bedrock-runtime client: answers each converse call with the next text."""

    def __init__(self, *texts, input_tokens=1000, output_tokens=50):
        self.texts = list(texts)
        self.calls = []
        self.tokens = (input_tokens, output_tokens)

    def converse(self, **request):
        self.calls.append(request)
        return {
            "output": {"message": {"role": "assistant", "content": [{"text": self.texts.pop(0)}]}},
            "usage": {"inputTokens": self.tokens[0], "outputTokens": self.tokens[1]},
            "stopReason": "end_turn",
        }


def test_the_bedrock_judge_asks_converse_once_with_the_three_texts_at_temperature_0():
    client = FakeConverse('{"score": 0.8, "reason": "same facts, other words"}')
    verdict = BedrockJudge(client)("Ships today.", "It left the warehouse today.", "Where is order 1042?")
    assert verdict == Judgement(0.8, "anthropic.claude-3-haiku-20240307-v1:0: same facts, other words")
    [request] = client.calls
    assert request["modelId"] == "anthropic.claude-3-haiku-20240307-v1:0"
    assert request["inferenceConfig"] == {"maxTokens": 200, "temperature": 0}
    [turn] = request["messages"]
    text = turn["content"][0]["text"]
    assert "Where is order 1042?" in text
    assert "It left the warehouse today." in text
    assert "Ships today." in text


def test_the_bedrock_judge_finds_the_json_in_a_chatty_answer_and_clamps_its_score():
    client = FakeConverse('Sure! {"score": 1.3, "reason": "x"} Hope that helps.')
    assert BedrockJudge(client)("a", "b", "c").score == 1.0


@pytest.mark.parametrize("text", ["I think they are close.", '{"reason": "no score"}', '{"score": "high"}'])
def test_a_bedrock_answer_without_a_json_score_is_refused_not_guessed(text):
    with pytest.raises(ConfigurationError, match="answered no JSON score"):
        BedrockJudge(FakeConverse(text))("a", "b", "c")


def test_the_bedrock_judges_cost_per_message_is_its_tokens_at_the_models_published_price():
    # Claude 3 Haiku on demand: $0.25 per million input tokens, $1.25 per million output tokens.
    judge = BedrockJudge(FakeConverse('{"score": 1, "reason": ""}', '{"score": 0, "reason": ""}'))
    items = [
        {"outcome": "reply", "trigger_id": m, "person_message_id": "p" + m, "agent_text": "a"}
        for m in ("m1", "m2")
    ]
    score = score_items(items, judge, judge_name="bedrock", cost=judge.cost)
    per_message = (1000 * 0.25 + 50 * 1.25) / 1_000_000
    assert score.cost == {
        "model": "anthropic.claude-3-haiku-20240307-v1:0",
        "calls": 2,
        "input_tokens": 2000,
        "output_tokens": 100,
        "usd": round(2 * per_message, 6),
        "usd_per_message": round(per_message, 6),
    }
    assert score.closeness_mean == 0.5


def test_an_inference_profile_is_priced_as_its_model_and_an_unknown_model_says_so():
    assert model_price("us.anthropic.claude-3-haiku-20240307-v1:0") == (0.25, 1.25)
    judge = BedrockJudge(FakeConverse('{"score": 1, "reason": ""}'), "amazon.nova-micro-v1:0")
    judge("a", "b", "c")
    assert judge.cost()["usd"].startswith("unknown")


def test_judge_names_load_the_default_bedrock_or_a_teams_function():
    assert load_judge("", bedrock_client=lambda: None)[0] is rouge_l
    judge, cost = load_judge("bedrock", bedrock_client=lambda: FakeConverse())
    assert isinstance(judge, BedrockJudge)
    assert cost is not None
    assert load_judge("ops.judge:rouge_l", bedrock_client=lambda: None)[0] is rouge_l
    with pytest.raises(ConfigurationError, match="--judge no_such_module:f"):
        load_judge("no_such_module:f", bedrock_client=lambda: None)
    with pytest.raises(ConfigurationError, match="expected module:function"):
        load_judge("rouge", bedrock_client=lambda: None)
