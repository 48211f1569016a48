"""What Bedrock's Converse API answers, for the tests that stand in for the model.

One shape, the API reference's ``ConverseResponse``: the tests that stub Bedrock (botocore's Stubber,
which checks it against the service model, or a ``before-send`` hook on the real client) build it here.
"""

from typing import Any


def converse_answer(text: str) -> dict[str, Any]:
    """The model answered ``text`` and stopped on its own."""
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 100},
    }
