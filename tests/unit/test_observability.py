"""Tracing is decided from the environment as Powertools decides it (replyonce.observability)."""

import itertools

import pytest
from aws_lambda_powertools import Tracer

from replyonce.observability import tracing_enabled

VARIABLES = {
    "LAMBDA_TASK_ROOT": [None, "/var/task"],
    "AWS_SAM_LOCAL": [None, "true"],
    "POWERTOOLS_TRACE_DISABLED": [None, "true", "false", "1"],
}
COMBINATIONS = [
    dict(zip(VARIABLES, values, strict=True)) for values in itertools.product(*VARIABLES.values())
]


@pytest.mark.parametrize(
    "combination", COMBINATIONS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
)
def test_our_rule_agrees_with_powertools_tracer(monkeypatch, combination):
    for name, value in combination.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    Tracer._reset_config()
    try:
        assert tracing_enabled() is not bool(Tracer(auto_patch=False).disabled)
    finally:
        Tracer._reset_config()
