"""Errors an operator can act on: the CLI prints the message (never a secret) and exits non-zero."""


class OpsError(Exception):
    """A failure with an actionable message; ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class ConfigurationError(OpsError):
    """Missing or contradictory input: a flag, ``samconfig.toml`` or an environment variable."""

    exit_code = 2


class StackNotFoundError(OpsError):
    """The CloudFormation stack does not exist in this account and region."""

    exit_code = 2


class SecretError(OpsError):
    """The stack's Nylas secret is missing, unreadable, or lacks a value the command needs."""


class NylasApiError(OpsError):
    """Nylas refused a request or could not be reached.

    Parameters
    ----------
    operation:
        What was attempted, e.g. ``"create the webhook"``.
    status:
        HTTP status, ``None`` when no answer arrived.
    error_type, message:
        Nylas' ``error.type`` and ``error.message`` (its own words, so the operator can search them).
    request_id:
        Nylas' ``request_id``, for a support ticket.
    """

    def __init__(
        self,
        operation: str,
        status: int | None,
        error_type: str = "",
        message: str = "",
        request_id: str = "",
    ) -> None:
        self.operation = operation
        self.status = status
        self.error_type = error_type
        self.message = message
        self.request_id = request_id
        answer = f"answered {status}" if status is not None else "could not be reached"
        detail = f" ({error_type}): {message}" if error_type else (f": {message}" if message else "")
        suffix = f" [request_id {request_id}]" if request_id else ""
        super().__init__(f"Nylas {answer} when trying to {operation}{detail}{suffix}")
