"""The one place configuration is read: environment variables → typed, frozen settings.

The template sets every variable (``template.yaml`` Globals and each
function's ``Environment``); tests and the local stack set the same names.
Reading them here, once, at cold start gives every missing or malformed
value a clear error instead of a ``KeyError`` deep inside a handler. Each
default is written once: as the dataclass field's default.
"""

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replyonce.evidence import TrustedList, trusted_lists
from replyonce.exceptions import ConfigurationError

# Each function reads its own secret (template.yaml): the webhook the signing secrets, the replier
# the API key. The internet-facing function must never be able to read the key that sends mail.
WEBHOOK_SECRETS_VARIABLE = "NYLAS_SECRETS_ID"
API_KEY_SECRET_VARIABLE = "NYLAS_API_KEY_SECRET_ID"  # noqa: S105 - a variable name, not a secret
# Nylas lists at most 200 messages per page.
MAX_THREAD_WINDOW = 200
# The Agent Account queue sends a 202-accepted message within 90 s (changelog 2026-10-09).
AGENT_ACCOUNT_QUEUE_SECONDS = 90
# The agents ReplyOnce ships (replyonce.agents), the default first; any other REPLY_AGENT is module:function.
BUILT_IN_AGENTS = ("template", "bedrock")
AGENT_CHOICES = " or ".join([", ".join(f"'{name}'" for name in BUILT_IN_AGENTS), "'module:function'"])
REPLY_MODES = ("send", "review", "shadow")
"""``REPLY_MODE``: send the reply; make it a draft for a person; or record it, sending nothing (shadow)."""


def _default(cls: type, name: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is required but not set")
    return value


def _integer(
    env: Mapping[str, str], name: str, default: int, *, minimum: int = 0, maximum: int | None = None
) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} must be an integer, got {raw!r}") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise ConfigurationError(f"environment variable {name} must be {bound}, got {value}")
    return value


def _number(env: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} must be a number, got {raw!r}") from None
    if not value >= minimum:
        raise ConfigurationError(f"environment variable {name} must be >= {minimum}, got {value}")
    return value


def _addresses(env: Mapping[str, str], name: str) -> frozenset[str]:
    return frozenset(a.strip().lower() for a in env.get(name, "").split(",") if a.strip())


@dataclass(frozen=True)
class SecretsSettings:
    """Where one Nylas secret lives and how long a read is cached."""

    secrets_id: str
    max_age_seconds: int = 300
    # A signature that fails against the cached secret triggers a fresh read;
    # this bounds how often forged requests can make us call Secrets Manager.
    refresh_min_interval_seconds: int = 5

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] = os.environ, *, variable: str = WEBHOOK_SECRETS_VARIABLE
    ) -> "SecretsSettings":
        """The secret named by ``variable``: ``NYLAS_SECRETS_ID`` (webhook) or ``NYLAS_API_KEY_SECRET_ID``."""
        return cls(
            secrets_id=_required(env, variable),
            max_age_seconds=_integer(env, "SECRETS_MAX_AGE_SECONDS", _default(cls, "max_age_seconds")),
            refresh_min_interval_seconds=_integer(
                env, "SECRETS_REFRESH_MIN_INTERVAL_SECONDS", _default(cls, "refresh_min_interval_seconds")
            ),
        )


@dataclass(frozen=True)
class WebhookSettings:
    """Settings of the webhook function."""

    queue_url: str
    secrets: SecretsSettings
    # Nylas truncates notifications over 1 MB; 4 MiB leaves room for gzip and base64 inside Lambda's
    # 6 MB synchronous payload while rejecting abuse early.
    max_body_bytes: int = 4 * 1_048_576
    # SQS's largest message (the queue's MaximumMessageSize in template.yaml).
    queue_max_message_bytes: int = 1_048_576
    # Nylas signs no timestamp, so a captured signed delivery verifies forever; the notification's own
    # `time` (inside the signed body) bounds how long it is accepted. Nylas retries a delivery for up
    # to 72 h while the webhook is `failing`; a day more covers slow retries (0: no check).
    max_notification_age_seconds: int = (72 + 24) * 3600
    # Nor may a notification come from the future: beyond clock skew, a `time` ahead is a forgery of
    # the bound above (a replay dated ahead would pass it for longer).
    max_notification_future_seconds: int = 900

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> "WebhookSettings":
        return cls(
            queue_url=_required(env, "QUEUE_URL"),
            secrets=SecretsSettings.from_environment(env),
            max_body_bytes=_integer(env, "MAX_BODY_BYTES", _default(cls, "max_body_bytes"), minimum=1),
            queue_max_message_bytes=_integer(
                env, "QUEUE_MAX_MESSAGE_BYTES", _default(cls, "queue_max_message_bytes"), minimum=1024
            ),
            max_notification_age_seconds=_integer(
                env, "MAX_NOTIFICATION_AGE_SECONDS", _default(cls, "max_notification_age_seconds")
            ),
            max_notification_future_seconds=_integer(
                env, "MAX_NOTIFICATION_FUTURE_SECONDS", _default(cls, "max_notification_future_seconds")
            ),
        )


@dataclass(frozen=True)
class ReplierSettings:
    """Settings of the replier function."""

    queue_url: str
    secrets: SecretsSettings
    idempotency_table: str
    state_table: str
    agent_grant_ids: tuple[str, ...]
    nylas_api_uri: str = "https://api.us.nylas.com"
    # Who writes the reply: template, bedrock, or module:function (the team's own agent).
    reply_agent: str = BUILT_IN_AGENTS[0]
    # send; review: every reply becomes a Nylas draft for a person to send; shadow: nothing is sent or
    # drafted, what the agent would have done is recorded for the shadow report (docs/operations.md).
    reply_mode: str = "send"
    bedrock_model_id: str = ""
    agent_system_prompt: str = ""
    # The agent's time counts in a record's budget; a slower agent is a retry, never a half-stored reply.
    agent_timeout_seconds: float = 30.0
    # Every message of a person the agent does not answer is moved to this folder (its name or id),
    # created in the grant when it has none of that name (invariant 7: no silent no for a person).
    handoff_folder: str = "Needs a person"
    # Loop guard: at most this many replies per thread per rolling hour.
    reply_budget_per_hour: int = 3
    # After a person wrote in a thread from the mailbox, the agent stays out of it this long (0: off).
    person_hold_seconds: int = 7 * 24 * 3600
    # A reply reaches the sender of every message it covers: at most this many of them.
    max_reply_recipients: int = 3
    # At most this many agent replies to one correspondent on one thread with no person writing in between
    # (a loop between robots ends whatever the provider does with headers); 0 turns the limit off.
    max_automatic_exchanges: int = 2
    # A reply of ours counts as an automatic exchange only when the correspondent answered it within this
    # many seconds (robot speed): a customer who asks one question a day is never a loop.
    automatic_exchange_seconds: int = 600
    # A person's draft in a shared mailbox's thread holds the agent back this long from the draft's date.
    person_draft_wait_seconds: int = 600
    # What any one address can draw from the agent, across threads, per hour.
    reply_budget_per_recipient_per_hour: int = 10
    idempotency_expiry_seconds: int = 24 * 3600
    # The reply ledger must outlive the idempotency record (24 h) and the Nylas key (1 h).
    ledger_ttl_seconds: int = 30 * 24 * 3600
    # A record that meets a busy thread comes back this soon, doubling per receive.
    busy_retry_seconds: int = 5
    # The queue's maxReceiveCount (template.yaml's RedrivePolicy): a record waiting on a holder spreads
    # the hold over the receives it has left, so it is never dead-lettered while the hold can last.
    max_receive_count: int = 8
    # Any other failed record comes back after base * 2^(receives - 1) seconds, capped.
    retry_base_seconds: int = 10
    retry_max_seconds: int = 900
    nylas_timeout_seconds: float = 10.0
    # Nylas recommends a client timeout of at least 150 s for a send.
    nylas_send_timeout_seconds: float = 150.0
    # Messages of a thread read per page when choosing what to answer (at most MAX_THREAD_WINDOW).
    thread_window: int = 20
    # Pages read at most while a burst goes on.
    max_thread_pages: int = 5
    # A record meeting a busy thread waits this long in-process for the holder (whose reply usually
    # covers it) before it goes back to the queue.
    lease_wait_seconds: float = 10.0
    # Time a record needs besides the agent and the send: the lease, the outbox, the settlement.
    record_margin_seconds: float = 10.0
    # How long after a send that may have gone out the mailbox is trusted to show it (Nylas documents
    # no index delay for metadata_pair; longer than the Agent Account queue's 90 s).
    mailbox_settle_seconds: int = 300
    # A queued (202) reply nothing confirmed within this is looked for in the mailbox.
    pending_confirm_seconds: int = 600
    # A reply the account cannot send (quota, pause, outbound rule) is tried again after this.
    account_retry_seconds: int = 900
    # No-reply senders whose Reply-To is trusted (contact forms): lower-case addresses.
    reply_to_trusted_senders: frozenset[str] = frozenset()
    # Lists or groups the company runs that relay customers (a support address as a Google Group), each by
    # its List-Id and its own address (``list-id=address``): a post the group rewrote to its own From is
    # answered to the person it relayed once the receiving provider authenticated it; never bulk mail.
    trusted_lists: tuple[TrustedList, ...] = ()
    # The authserv-ids of the mailboxes' receiving provider (RFC 8601): only its Authentication-Results
    # vouch for a relay's or a contact form's From; Google stamps mx.google.com. Lower case.
    receiving_authserv_ids: frozenset[str] = frozenset({"mx.google.com"})
    # The active-Region record's table (a multi-Region strongly consistent global table); "": one
    # Region, no fence (the default: a single-Region deploy behaves as it always has).
    active_region_table: str = ""
    # This Region's name as the record names it (REPLIER_REGION, else Lambda's AWS_REGION).
    region: str = ""
    # The bucket a reply's files are kept in between the agent's answer and the send (replyonce.reply_files);
    # "": replies cannot carry files (an agent's files are then a failure, never dropped).
    reply_files_bucket: str = ""
    # The most one customer's file the agent reads may be, and all files read for one record together:
    # counted by the bytes read (replyonce.attachments), the listed size is never trusted.
    attachment_max_bytes: int = 10_000_000
    attachments_max_bytes_per_record: int = 25_000_000

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> "ReplierSettings":
        grants = tuple(
            dict.fromkeys(g.strip() for g in env.get("AGENT_GRANT_IDS", "").split(",") if g.strip())
        )
        if not grants:
            # Without it every message would be skipped as grant_not_agent: say so, loudly.
            raise ConfigurationError(
                "environment variable AGENT_GRANT_IDS is empty: set the comma-separated Nylas grant ids "
                "the agent answers for (template parameter AgentGrantIds)"
            )
        agent = env.get("REPLY_AGENT", "").strip() or env.get("REPLY_DRAFTER", "").strip()
        agent = agent or _default(cls, "reply_agent")
        if agent not in BUILT_IN_AGENTS and ":" not in agent:
            raise ConfigurationError(f"REPLY_AGENT must be {AGENT_CHOICES}, got {agent!r}")
        model = env.get("BEDROCK_MODEL_ID", "").strip()
        if agent == "bedrock" and not model:
            raise ConfigurationError("REPLY_AGENT=bedrock needs BEDROCK_MODEL_ID")
        mode = env.get("REPLY_MODE", "").strip() or "send"
        if mode not in REPLY_MODES:
            raise ConfigurationError(f"REPLY_MODE must be 'send', 'review' or 'shadow', got {mode!r}")
        settle = _integer(env, "MAILBOX_SETTLE_SECONDS", _default(cls, "mailbox_settle_seconds"))
        pending = _integer(env, "PENDING_CONFIRM_SECONDS", _default(cls, "pending_confirm_seconds"))
        if pending < AGENT_ACCOUNT_QUEUE_SECONDS + settle:
            raise ConfigurationError(
                f"PENDING_CONFIRM_SECONDS ({pending}) must be at least the Agent Account queue's "
                f"{AGENT_ACCOUNT_QUEUE_SECONDS} s plus MAILBOX_SETTLE_SECONDS ({settle})"
            )
        fence_table = env.get("ACTIVE_REGION_TABLE", "").strip()
        region = env.get("REPLIER_REGION", "").strip() or env.get("AWS_REGION", "").strip()
        if fence_table and not region:
            raise ConfigurationError(
                "ACTIVE_REGION_TABLE is set but neither REPLIER_REGION nor AWS_REGION names this Region"
            )
        return cls(
            queue_url=_required(env, "QUEUE_URL"),
            secrets=SecretsSettings.from_environment(env, variable=API_KEY_SECRET_VARIABLE),
            idempotency_table=_required(env, "IDEMPOTENCY_TABLE"),
            state_table=_required(env, "STATE_TABLE"),
            agent_grant_ids=grants,
            nylas_api_uri=(env.get("NYLAS_API_URI", "").strip() or _default(cls, "nylas_api_uri")).rstrip(
                "/"
            ),
            reply_agent=agent,
            reply_mode=mode,
            bedrock_model_id=model,
            agent_system_prompt=env.get("AGENT_SYSTEM_PROMPT", "").strip(),
            agent_timeout_seconds=_number(
                env, "AGENT_TIMEOUT_SECONDS", _default(cls, "agent_timeout_seconds"), minimum=1.0
            ),
            handoff_folder=env.get("HANDOFF_FOLDER", "").strip() or _default(cls, "handoff_folder"),
            reply_budget_per_hour=_integer(
                env, "REPLY_BUDGET_PER_HOUR", _default(cls, "reply_budget_per_hour"), minimum=1
            ),
            person_hold_seconds=_integer(env, "PERSON_HOLD_SECONDS", _default(cls, "person_hold_seconds")),
            person_draft_wait_seconds=_integer(
                env, "PERSON_DRAFT_WAIT_SECONDS", _default(cls, "person_draft_wait_seconds")
            ),
            max_automatic_exchanges=_integer(
                env, "MAX_AUTOMATIC_EXCHANGES", _default(cls, "max_automatic_exchanges")
            ),
            automatic_exchange_seconds=_integer(
                env, "AUTOMATIC_EXCHANGE_SECONDS", _default(cls, "automatic_exchange_seconds"), minimum=1
            ),
            max_reply_recipients=_integer(
                env, "MAX_REPLY_RECIPIENTS", _default(cls, "max_reply_recipients"), minimum=1, maximum=10
            ),
            reply_budget_per_recipient_per_hour=_integer(
                env,
                "REPLY_BUDGET_PER_RECIPIENT_PER_HOUR",
                _default(cls, "reply_budget_per_recipient_per_hour"),
                minimum=1,
            ),
            idempotency_expiry_seconds=_integer(
                env, "IDEMPOTENCY_EXPIRY_SECONDS", _default(cls, "idempotency_expiry_seconds"), minimum=60
            ),
            ledger_ttl_seconds=_integer(
                env, "LEDGER_TTL_SECONDS", _default(cls, "ledger_ttl_seconds"), minimum=3600
            ),
            busy_retry_seconds=_integer(env, "BUSY_RETRY_SECONDS", _default(cls, "busy_retry_seconds")),
            max_receive_count=_integer(
                env, "MAX_RECEIVE_COUNT", _default(cls, "max_receive_count"), minimum=1, maximum=1000
            ),
            retry_base_seconds=_integer(env, "RETRY_BASE_SECONDS", _default(cls, "retry_base_seconds")),
            retry_max_seconds=_integer(env, "RETRY_MAX_SECONDS", _default(cls, "retry_max_seconds")),
            nylas_timeout_seconds=_number(
                env, "NYLAS_TIMEOUT_SECONDS", _default(cls, "nylas_timeout_seconds"), minimum=0.1
            ),
            nylas_send_timeout_seconds=_number(
                env, "NYLAS_SEND_TIMEOUT_SECONDS", _default(cls, "nylas_send_timeout_seconds"), minimum=0.1
            ),
            thread_window=_integer(
                env, "THREAD_WINDOW", _default(cls, "thread_window"), minimum=1, maximum=MAX_THREAD_WINDOW
            ),
            max_thread_pages=_integer(env, "MAX_THREAD_PAGES", _default(cls, "max_thread_pages"), minimum=1),
            lease_wait_seconds=_number(env, "LEASE_WAIT_SECONDS", _default(cls, "lease_wait_seconds")),
            record_margin_seconds=_number(
                env, "RECORD_MARGIN_SECONDS", _default(cls, "record_margin_seconds"), minimum=0.1
            ),
            mailbox_settle_seconds=settle,
            pending_confirm_seconds=pending,
            account_retry_seconds=_integer(
                env, "ACCOUNT_RETRY_SECONDS", _default(cls, "account_retry_seconds"), minimum=1
            ),
            reply_to_trusted_senders=_addresses(env, "REPLY_TO_TRUSTED_SENDERS"),
            trusted_lists=trusted_lists(env.get("TRUSTED_LISTS", "")),
            receiving_authserv_ids=_addresses(env, "RECEIVING_AUTHSERV_IDS")
            or _default(cls, "receiving_authserv_ids"),
            active_region_table=fence_table,
            region=region,
            reply_files_bucket=env.get("REPLY_FILES_BUCKET", "").strip(),
            attachment_max_bytes=_integer(
                env, "ATTACHMENT_MAX_BYTES", _default(cls, "attachment_max_bytes"), minimum=1
            ),
            attachments_max_bytes_per_record=_integer(
                env,
                "ATTACHMENTS_MAX_BYTES_PER_RECORD",
                _default(cls, "attachments_max_bytes_per_record"),
                minimum=1,
            ),
        )


# For the operator commands, which talk to Nylas and SQS as the functions do (written once, above).
DEFAULT_NYLAS_API_URI: str = _default(ReplierSettings, "nylas_api_uri")
DEFAULT_QUEUE_MAX_MESSAGE_BYTES: int = _default(WebhookSettings, "queue_max_message_bytes")
