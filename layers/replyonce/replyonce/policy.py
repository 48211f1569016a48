"""The pure part of the replier's configuration: what the core decides with.

A module of its own so that ``replyonce.config`` (which the webhook imports
at cold start) need not import the core. Each default is the default of the
setting it comes from (``replyonce.config.ReplierSettings``), written there
once: a ``Policy`` built in a test decides as a deployment left at the
defaults does. The import goes one way: this module reads ``config``, and
``policy_of`` turns a deployment's settings into its policy.
"""

from dataclasses import dataclass, replace

from replyonce.agent import Mode
from replyonce.config import MAX_THREAD_WINDOW, ReplierSettings, TrustedList
from replyonce.grants import GrantSettings


@dataclass(frozen=True)
class Policy:
    """The pure part of the replier's configuration (``policy_of(settings)``)."""

    agent_grant_ids: tuple[str, ...]
    trusted_senders: frozenset[str] = ReplierSettings.reply_to_trusted_senders
    trusted_lists: tuple[TrustedList, ...] = ReplierSettings.trusted_lists
    receiving_authserv_ids: frozenset[str] = ReplierSettings.receiving_authserv_ids
    reply_budget_per_hour: int = ReplierSettings.reply_budget_per_hour
    recipient_budget_per_hour: int = ReplierSettings.reply_budget_per_recipient_per_hour
    thread_window: int = ReplierSettings.thread_window
    max_thread_pages: int = ReplierSettings.max_thread_pages
    settle_seconds: int = ReplierSettings.mailbox_settle_seconds
    pending_confirm_seconds: int = ReplierSettings.pending_confirm_seconds
    # Not a setting: how long before a Nylas key's hour ends the core stops trusting it to replay.
    key_margin_seconds: int = 300
    account_retry_seconds: int = ReplierSettings.account_retry_seconds
    review_mode: bool = ReplierSettings.reply_mode == "review"
    # REPLY_MODE=shadow: the whole pipeline runs, nothing is sent or drafted, what would be is recorded.
    shadow_mode: bool = ReplierSettings.reply_mode == "shadow"
    # Not a setting: set only by ``ops.replay`` (past mail run in shadow mode), so the agent is told
    # (``Conversation.mode == "replay"``) and its key is a replay key, never the live one.
    replay: bool = False
    agent_timeout_seconds: float = ReplierSettings.agent_timeout_seconds
    send_timeout_seconds: float = ReplierSettings.nylas_send_timeout_seconds
    margin_seconds: float = ReplierSettings.record_margin_seconds
    handoff_folder: str = ReplierSettings.handoff_folder
    person_hold_seconds: int = ReplierSettings.person_hold_seconds
    max_recipients: int = ReplierSettings.max_reply_recipients
    max_automatic_exchanges: int = ReplierSettings.max_automatic_exchanges
    automatic_exchange_seconds: int = ReplierSettings.automatic_exchange_seconds
    person_draft_wait_seconds: int = ReplierSettings.person_draft_wait_seconds
    # The queue's maxReceiveCount: a record a person's draft holds back hands off on its last receive.
    max_receive_count: int = ReplierSettings.max_receive_count
    # How long a record waits in-process for a busy thread's lease (lease_wait_seconds).
    lease_wait_seconds: float = ReplierSettings.lease_wait_seconds
    # The grant's daily cap on agent calls (0: none; a grant's setting only: replyonce.rules.agent_calls).
    daily_agent_call_cap: int = 0

    # Across Regions: this Region's name when the active-Region fence is on (ACTIVE_REGION_TABLE set);
    # "" (one Region): fence off.
    fence_region: str = ""

    def __post_init__(self) -> None:
        # A replay that could send would answer last week's customers: the two flags travel together.
        if self.replay and not self.shadow_mode:
            raise ValueError("a replay runs in shadow mode (replay=True needs shadow_mode=True)")

    @property
    def mode(self) -> Mode:
        """What the agent is told (``Conversation.mode``): replay, else shadow, else review, else send.

        Shadow before review: with both set nothing is sent or drafted, and the agent must not act.
        """
        if self.replay:
            return Mode.REPLAY
        if self.shadow_mode:
            return Mode.SHADOW
        if self.review_mode:
            return Mode.REVIEW
        return Mode.SEND

    @property
    def trusted_list_ids(self) -> frozenset[str]:
        """The trusted lists' ``List-Id`` identifiers: their posts are not bulk mail."""
        return frozenset(t.list_id for t in self.trusted_lists)

    @property
    def handover_seconds(self) -> float:
        """How long a newly active Region waits before it sends: what the old one may still have on its way.

        The old Region's last send can start up to a whole lease after its last fence read (a paused
        container resumes within its lease, and a send never starts with less than a whole send left);
        answered ``202``, the Agent Account queue sends it up to 90 s later, and the mailbox lists it
        ``settle_seconds`` after that. ``pending_confirm_seconds`` is what the configuration already
        requires to cover the queue plus the settle (``ReplierSettings``): after a lease and it, the new
        Region's thread read sees every reply the old Region sent or queued.
        """
        return self.lease_seconds + self.pending_confirm_seconds

    @property
    def lease_seconds(self) -> float:
        """One record's budget: the agent, one send, the bookkeeping. A lease never outlives it."""
        return self.agent_timeout_seconds + self.send_timeout_seconds + self.margin_seconds

    @property
    def record_budget_seconds(self) -> float:
        """What one record may need at most: a wait for a busy thread, then a whole lease."""
        return self.lease_wait_seconds + self.lease_seconds

    @property
    def thread_page_size(self) -> int:
        """Messages read per page of a thread: the window, never more than Nylas lists in a page."""
        return min(self.thread_window, MAX_THREAD_WINDOW)


def policy_of(settings: ReplierSettings) -> Policy:
    """The part of a deployment's settings the pure core decides with."""
    return Policy(
        agent_grant_ids=settings.agent_grant_ids,
        trusted_senders=settings.reply_to_trusted_senders,
        trusted_lists=settings.trusted_lists,
        receiving_authserv_ids=settings.receiving_authserv_ids,
        reply_budget_per_hour=settings.reply_budget_per_hour,
        recipient_budget_per_hour=settings.reply_budget_per_recipient_per_hour,
        thread_window=settings.thread_window,
        max_thread_pages=settings.max_thread_pages,
        settle_seconds=settings.mailbox_settle_seconds,
        pending_confirm_seconds=settings.pending_confirm_seconds,
        account_retry_seconds=settings.account_retry_seconds,
        review_mode=settings.reply_mode == "review",
        shadow_mode=settings.reply_mode == "shadow",
        agent_timeout_seconds=settings.agent_timeout_seconds,
        send_timeout_seconds=settings.nylas_send_timeout_seconds,
        margin_seconds=settings.record_margin_seconds,
        handoff_folder=settings.handoff_folder,
        person_hold_seconds=settings.person_hold_seconds,
        max_recipients=settings.max_reply_recipients,
        max_automatic_exchanges=settings.max_automatic_exchanges,
        automatic_exchange_seconds=settings.automatic_exchange_seconds,
        person_draft_wait_seconds=settings.person_draft_wait_seconds,
        lease_wait_seconds=settings.lease_wait_seconds,
        max_receive_count=settings.max_receive_count,
        fence_region=settings.region if settings.active_region_table else "",
    )


def policy_for(policy: Policy, grant: GrantSettings, agent_grant_ids: tuple[str, ...]) -> Policy:
    """The policy the core decides one grant's record with: the deployment's, with the grant's settings.

    Why a replace and not a new policy: everything a grant cannot set (the timings exactly-once rests
    on, the fence, the receives) stays the deployment's, decided once in ``policy_of``. A replay's
    policy is never a grant's (``ops.replay`` runs in shadow mode whatever the grant's mode).
    """
    return replace(
        policy,
        agent_grant_ids=agent_grant_ids,
        review_mode=grant.reply_mode == "review",
        shadow_mode=grant.reply_mode == "shadow",
        reply_budget_per_hour=grant.reply_budget_per_hour,
        recipient_budget_per_hour=grant.reply_budget_per_recipient_per_hour,
        person_hold_seconds=grant.person_hold_seconds,
        trusted_senders=grant.reply_to_trusted_senders,
        trusted_lists=grant.trusted_lists,
        handoff_folder=grant.handoff_folder,
        daily_agent_call_cap=grant.daily_agent_call_cap,
    )
