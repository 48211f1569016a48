"""The deployed stack's outputs and parameters, from CloudFormation.

Why the commands look them up rather than take ARNs and URLs as flags: the stack is the one
source of truth for what was deployed (the webhook URL changes if the API is ever recreated), and
an operator should need to know only the stack name.
"""

from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from ops.errors import ConfigurationError, StackNotFoundError


@dataclass(frozen=True)
class StackInfo:
    """What ``DescribeStacks`` says about one stack."""

    name: str
    status: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)

    def output(self, key: str) -> str:
        """The output ``key``, or an error naming the outputs the stack does have."""
        value = self.outputs.get(key)
        if not value:
            present = ", ".join(sorted(self.outputs)) or "none"
            raise ConfigurationError(
                f"stack {self.name!r} has no output {key!r} (outputs: {present}); "
                "is it a ReplyOnce stack deployed from this template? Re-run `make deploy`."
            )
        return value


def describe_stack(cloudformation: Any, stack_name: str) -> StackInfo:
    """Look up ``stack_name``; :class:`StackNotFoundError` when it does not exist here.

    Parameters
    ----------
    cloudformation:
        A boto3 CloudFormation client (its region is the one searched).
    stack_name:
        The stack's name (or id).
    """
    try:
        stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except ClientError as exc:
        error = exc.response.get("Error", {})
        if error.get("Code") == "ValidationError" and "does not exist" in error.get("Message", ""):
            region = cloudformation.meta.region_name
            raise StackNotFoundError(
                f"stack {stack_name!r} not found in region {region}: deploy it first (`make deploy`), "
                "or pass --stack-name / --region"
            ) from None
        raise
    stack = stacks[0]
    return StackInfo(
        name=stack["StackName"],
        status=stack.get("StackStatus", ""),
        outputs={o["OutputKey"]: o.get("OutputValue", "") for o in stack.get("Outputs", [])},
        parameters={p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters", [])},
    )
