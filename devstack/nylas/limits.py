"""Agent Account limits on sending, and the answers they may give (the shape is not documented).

What is documented (https://developer.nylas.com/docs/v3/agent-accounts/send-limits/ and the Nylas
skills repo, ``skills/nylas-api/rules/agent-accounts.md``): per-plan emails per month and per
account per day; a hard-bounce rate of 10 % or a complaint rate of 0.5 % *pauses sending* until
someone acts; outbound rules with the action ``block`` refuse a message (403). What is **not**
documented is the status and ``error.type`` a quota or a pause answers. So each limit offers
several plausible shapes -- a product must treat every one as "the account cannot send now, the
message is fine": keep the reply, alarm, retry later.

Nothing is sent under a limit. The answer is a Nylas answer, so it is cached under the send's
``Idempotency-Key`` like any other error (https://developer.nylas.com/docs/v3/email/idempotent-send/).
"""

from __future__ import annotations

from dataclasses import dataclass

from devstack.nylas.wire import Response, error


@dataclass(frozen=True)
class LimitShape:
    """One possible answer of a limit: status, ``error.type``, message and ``Retry-After`` if any."""

    status: int
    error_type: str
    message: str
    retry_after: int | None = None

    def response(self) -> Response:
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else None
        return error(self.status, self.error_type, self.message, headers=headers)


def _quota(period: str, seconds: int) -> dict[str, LimitShape]:
    text = f"The {period} sending quota of this Agent Account is exhausted"
    return {
        # A 429 with a quota type: what an API that counts sends usually answers.
        "429": LimitShape(429, "quota_exceeded", f"{text}.", retry_after=seconds),
        # A 403 in the error tables' spelling: "you may not", not "slow down".
        "403": LimitShape(403, "api.quota_exceeded", f"{text}."),
        # The ordinary Nylas rate-limit answer: a product that retries it within seconds is caught.
        "rate_limit": LimitShape(429, "nylas_rate_limit_exceeded", f"{text}; try again later."),
    }


ACCOUNT_LIMITS: dict[str, dict[str, LimitShape]] = {
    "daily_quota": _quota("daily", 86_400),
    "monthly_quota": _quota("monthly", 30 * 86_400),
    "sending_paused": {
        "403": LimitShape(
            403,
            "sending_paused",
            "Sending is paused for this Agent Account: its bounce or complaint rate is over the limit.",
        ),
        "forbidden": LimitShape(403, "forbidden", "This Agent Account is not allowed to send."),
        "400": LimitShape(400, "invalid_request_error", "Sending has been suspended for this account."),
    },
    "outbound_block": {
        "403": LimitShape(
            403, "message_blocked", "The message was blocked by an outbound rule (action: block)."
        ),
        "forbidden": LimitShape(403, "forbidden", "Sending this message is not allowed by a rule."),
    },
}
"""Every limit and its shapes, the first shape of each being its default."""


def limit_response(limit: str, shape: str | None) -> Response:
    """The answer of ``limit`` in ``shape`` (``None``: the limit's first shape)."""
    shapes = ACCOUNT_LIMITS[limit]
    return shapes[shape if shape is not None else next(iter(shapes))].response()
