"""The pure part of the replier's configuration: what the core decides with.

A module of its own so that ``replyonce.config`` (which the webhook imports
at cold start) need not import the core.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    """The pure part of the replier's configuration (``ReplierSettings.policy``)."""

    agent_grant_ids: tuple[str, ...]
    trusted_senders: frozenset[str] = frozenset()
    trusted_lists: frozenset[str] = frozenset()
    reply_budget_per_hour: int = 3
    recipient_budget_per_hour: int = 10
    thread_window: int = 20
    max_thread_pages: int = 5
    settle_seconds: int = 300
    pending_confirm_seconds: int = 600
    key_margin_seconds: int = 300
    account_retry_seconds: int = 900
    review_mode: bool = False
    agent_timeout_seconds: float = 30.0
    send_timeout_seconds: float = 150.0
    margin_seconds: float = 10.0
    handoff_folder: str = ""
    person_hold_seconds: int = 7 * 24 * 3600
    max_recipients: int = 3
    max_automatic_exchanges: int = 2
    person_draft_wait_seconds: int = 600

    # Across Regions: this Region's name when the active-Region fence is on (ACTIVE_REGION_TABLE set);
    # "" (one Region): fence off.
    fence_region: str = ""

    @property
    def handover_seconds(self) -> float:
        """How long a newly active Region waits before it sends: what the old one may still have in flight.

        The old Region's last send can start up to a whole lease after its last fence read (a
        paused container resumes within its lease, and a send never starts with less than a whole
        send left), and shows in the mailbox ``settle_seconds`` after it ends: after both, the new
        Region's thread read sees every reply the old Region sent.
        """
        return self.lease_seconds + self.settle_seconds

    @property
    def lease_seconds(self) -> float:
        """One record's budget: the agent, one send, the bookkeeping. A lease never outlives it."""
        return self.agent_timeout_seconds + self.send_timeout_seconds + self.margin_seconds
