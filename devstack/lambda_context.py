"""A Lambda context object for invoking handlers outside Lambda."""

import time
import uuid
from dataclasses import dataclass, field


@dataclass
class LocalLambdaContext:
    """What Lambda passes as ``context``: names, memory and a deadline.

    ``get_remaining_time_in_millis`` counts down from ``timeout_seconds``, as
    in Lambda: Powertools idempotency uses it to expire in-progress records,
    and the replier to size its thread lease.
    """

    function_name: str
    timeout_seconds: float = 180.0
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        self._deadline = time.time() + self.timeout_seconds
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = f"local/{self.aws_request_id}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))
