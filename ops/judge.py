"""Judges: how close an agent's reply came to the answer a person of the mailbox sent.

A judge is one function, ``judge(agent_text, person_text, customer_text) -> Judgement`` (or a
``(score, reason)`` pair): a score in [0, 1] (1: the same answer) and a line saying why
(``ops.score.judged`` checks it). The team picks one with ``--judge module:function``; two are built in:

- :func:`rouge_l` (the default): ROUGE-L's F-measure over lower-cased words, no model. Why this
  measure: it rewards the person's words in the person's order (the longest common subsequence), so a
  reply that states the same order number, date and next step scores high and one that shares only
  "thanks for writing" scores low, while a reply's reordered pleasantries do not count double (as
  bag-of-words overlap would). It is deterministic, so a gate on it (``ops.gate``) decides the same
  on every machine. C.-Y. Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", Text
  Summarization Branches Out (ACL workshop), 2004, section 3.1 (β = 1). What it cannot see: two
  answers with the same meaning in other words score low; that is what a model judge is for.
- :class:`BedrockJudge` (``--judge bedrock``): a Bedrock model through the Converse API, asked for a
  JSON score and reason, with its token counts and cost per message from the model's published price.
"""

import importlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ops.errors import ConfigurationError
from ops.score import Judge, Judgement

DEFAULT_JUDGE = "ops.judge:rouge_l"
MAX_WORDS = 1000
"""Each text is cut to its first 1,000 words: the LCS is quadratic in the words."""
_WORD = re.compile(r"[\w$€£%]+(?:[.,:/-][\w]+)*", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased words (``1,042.50`` and ``2026-12-01`` kept whole), at most :data:`MAX_WORDS`."""
    return _WORD.findall(text.lower())[:MAX_WORDS]


def lcs_length(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b`` (one row of the table at a time)."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l(agent_text: str, person_text: str, customer_text: str = "") -> Judgement:
    """ROUGE-L F1 of the agent's words against the person's (the customer's text is not read).

    ``precision = LCS / agent words``, ``recall = LCS / person words``, ``F1 = 2PR / (P + R)``; both empty
    is 1 (the same nothing), one empty is 0.
    """
    agent, person = words(agent_text), words(person_text)
    if not agent and not person:
        return Judgement(1.0, "both empty")
    if not agent or not person:
        return Judgement(0.0, f"ROUGE-L 0 ({len(agent)} agent words, {len(person)} person words)")
    common = lcs_length(agent, person)
    if common == 0:
        return Judgement(0.0, f"ROUGE-L 0: no word in common ({len(agent)} agent, {len(person)} person)")
    precision, recall = common / len(agent), common / len(person)
    f1 = 2 * precision * recall / (precision + recall)
    return Judgement(
        f1, f"ROUGE-L F1 {f1:.3f}: {common} words in order of {len(agent)} agent / {len(person)} person"
    )


# ---- the Bedrock judge -----------------------------------------------------------------------------

DEFAULT_JUDGE_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
"""The template's ``BedrockModelId`` default: the model a stack already has access to."""

PRICES_PER_MILLION_TOKENS: Mapping[str, tuple[float, float]] = {
    # On-demand, USD per million input / output tokens, as published on https://aws.amazon.com/bedrock/pricing/
    # (Anthropic, Claude 3 Haiku, US East (N. Virginia)); read 2026-12-06. A cross-region inference profile
    # (us., eu., apac.) is billed at the source Region's price for the same model.
    "anthropic.claude-3-haiku-20240307-v1:0": (0.25, 1.25),
}

JUDGE_SYSTEM_PROMPT = (
    "You compare two replies to a customer's email: one written by an AI agent, one by a person of the "
    "support team, which is the reference. Score how well the agent's reply would have served the "
    "customer compared with the person's: 1 means it says the same things (facts, commitments, next "
    "steps), 0 means it says something else or something wrong. Wording and tone do not matter. Answer "
    'with one JSON object and nothing else: {"score": <number from 0 to 1>, "reason": "<one sentence>"}.'
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_MAX_CHARACTERS = 6000


def model_price(model_id: str) -> tuple[float, float] | None:
    """USD per million (input, output) tokens of ``model_id`` (or its inference profile), if known."""
    base = re.sub(r"^(us|eu|apac|global|us-gov)\.", "", model_id)
    return PRICES_PER_MILLION_TOKENS.get(base)


@dataclass
class JudgeUsage:
    """What the Bedrock judge spent: calls and the tokens Converse reported."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class BedrockJudge:
    """A judge on Bedrock's Converse API: one call per decision both answered, temperature 0.

    Parameters
    ----------
    client:
        A boto3 ``bedrock-runtime`` client (injected: tests pass a fake with ``converse``).
    model_id:
        A model or inference profile id; its price (:data:`PRICES_PER_MILLION_TOKENS`) gives the cost.

    Raises (from ``__call__``)
    --------------------------
    ConfigurationError
        The model answered with no JSON score: the gate never decides on a guess.
    """

    def __init__(self, client: Any, model_id: str = DEFAULT_JUDGE_MODEL) -> None:
        self._client = client
        self.model_id = model_id
        self.usage = JudgeUsage()

    def __call__(self, agent_text: str, person_text: str, customer_text: str) -> Judgement:
        prompt = (
            f"The customer wrote:\n<customer>\n{customer_text[:_MAX_CHARACTERS]}\n</customer>\n\n"
            f"The person of the team answered:\n<person>\n{person_text[:_MAX_CHARACTERS]}\n</person>\n\n"
            f"The agent would have answered:\n<agent>\n{agent_text[:_MAX_CHARACTERS]}\n</agent>"
        )
        response = self._client.converse(
            modelId=self.model_id,
            system=[{"text": JUDGE_SYSTEM_PROMPT}],
            messages=[{"role": "user", "content": [{"text": prompt}]}],
            inferenceConfig={"maxTokens": 200, "temperature": 0},
        )
        usage = response.get("usage") or {}
        self.usage.calls += 1
        self.usage.input_tokens += int(usage.get("inputTokens") or 0)
        self.usage.output_tokens += int(usage.get("outputTokens") or 0)
        parts = response.get("output", {}).get("message", {}).get("content") or []
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        found = _JSON_OBJECT.search(text)
        try:
            answer = json.loads(found.group(0)) if found else None
            score = float(answer["score"])  # type: ignore[index]
            reason = str(answer.get("reason", ""))  # type: ignore[union-attr]
        except (ValueError, TypeError, KeyError, AttributeError):
            raise ConfigurationError(
                f"the Bedrock judge ({self.model_id}) answered no JSON score: {text[:120]!r}"
            ) from None
        return Judgement(min(1.0, max(0.0, score)), f"{self.model_id}: {reason}")

    def cost(self) -> dict[str, Any]:
        """Calls, tokens and (when the model's price is known) USD in all and per message judged."""
        spent: dict[str, Any] = {
            "model": self.model_id,
            "calls": self.usage.calls,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
        }
        price = model_price(self.model_id)
        if price is None:
            spent["usd"] = "unknown: no published price recorded for this model in ops/judge.py"
            return spent
        usd = (self.usage.input_tokens * price[0] + self.usage.output_tokens * price[1]) / 1_000_000
        spent["usd"] = round(usd, 6)
        spent["usd_per_message"] = round(usd / self.usage.calls, 6) if self.usage.calls else 0.0
        return spent


def load_judge(
    name: str, *, bedrock_client: Callable[[], Any], model_id: str = DEFAULT_JUDGE_MODEL
) -> tuple[Judge, Callable[[], Mapping[str, Any]] | None]:
    """The judge ``--judge`` names (``module:function``, ``bedrock`` or ``""`` for the default) and, for
    the Bedrock judge, what it spent.

    Raises
    ------
    ConfigurationError
        A name that does not import, or names nothing callable.
    """
    if name in ("", "default", DEFAULT_JUDGE):
        return rouge_l, None
    if name == "bedrock":
        judge = BedrockJudge(bedrock_client(), model_id)
        return judge, judge.cost
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"--judge {name!r}: expected module:function, bedrock, or nothing")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"--judge {name}: {type(exc).__name__}: {exc}") from None
    if not callable(function):
        raise ConfigurationError(f"--judge {name}: not callable")
    return function, None
