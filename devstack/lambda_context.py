"""A Lambda context object for invoking handlers outside Lambda."""

import functools
import time
import uuid
from dataclasses import dataclass, field


@dataclass
class LocalLambdaContext:
    """What Lambda passes as ``context``: names, memory and a deadline.

    ``memory_limit_in_mb`` is the function's ``MemorySize`` (its own, else the ``Globals``'), as Lambda
    gives it. ``get_remaining_time_in_millis`` counts down from ``timeout_seconds`` — by
    default the function's ``Timeout`` in ``template.yaml`` — as in Lambda:
    Powertools idempotency uses it to expire in-progress records, and the
    replier to decide whether a record still fits.
    """

    function_name: str
    timeout_seconds: float = 0.0
    memory_limit_in_mb: int = 0  # 0: the function's MemorySize in template.yaml
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        if not self.timeout_seconds:
            self.timeout_seconds = function_timeout(self.function_name)
        if not self.memory_limit_in_mb:
            self.memory_limit_in_mb = function_memory(self.function_name)
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


@functools.cache
def function_memory(logical_id: str) -> int:
    """The function's ``MemorySize`` in ``template.yaml``: its own, else ``Globals``', else Lambda's 128 MB.

    Why: the replier's is 256 MB and the ``Globals``' 512 MB; a context that said 512 for every function
    showed the serve pane a memory the deployed replier does not have.
    """
    from ops.template import load_template

    template = load_template()
    own = template["Resources"].get(logical_id, {}).get("Properties", {}).get("MemorySize")
    shared = template.get("Globals", {}).get("Function", {}).get("MemorySize")
    return int(own or shared or 128)
