"""A Lambda context object for invoking handlers outside Lambda."""

import functools
import time
import uuid
from dataclasses import dataclass, field


@dataclass
class LocalLambdaContext:
    """What Lambda passes as ``context``: names, memory and a deadline.

    ``get_remaining_time_in_millis`` counts down from ``timeout_seconds`` — by
    default the function's ``Timeout`` in ``template.yaml`` — as in Lambda:
    Powertools idempotency uses it to expire in-progress records, and the
    replier to decide whether a record still fits.
    """

    function_name: str
    timeout_seconds: float = 0.0
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        if not self.timeout_seconds:
            self.timeout_seconds = function_timeout(self.function_name)
        self._deadline = time.time() + self.timeout_seconds
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = f"local/{self.aws_request_id}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


@functools.cache
def function_timeout(logical_id: str) -> float:
    """The function's ``Timeout`` in ``template.yaml`` (its logical id; 3 s, Lambda's default, if unknown)."""
    from ops.template import load_template

    resources = load_template()["Resources"]
    timeout = resources.get(logical_id, {}).get("Properties", {}).get("Timeout")
    return float(timeout) if timeout is not None else 3.0
