"""The one place configuration is read: environment variables → typed settings.

The template sets every variable (``template.yaml`` Globals and function
``Environment``); tests and the local stack set the same names. Reading them
here, once, gives every missing or malformed value a clear error instead of a
``KeyError`` deep inside a handler.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass

from replyonce.exceptions import ConfigurationError

DEFAULT_NYLAS_API_URI = "https://api.us.nylas.com"
# SQS's largest message (the queue's MaximumMessageSize in template.yaml).
DEFAULT_QUEUE_MAX_MESSAGE_BYTES = 1_048_576
# Nylas truncates notifications over 1 MB; 4 MiB leaves room for gzip and
# base64 inside Lambda's 6 MB synchronous payload while rejecting abuse early.
DEFAULT_MAX_BODY_BYTES = 4 * 1_048_576
# Nylas signs no timestamp, so a captured signed delivery verifies forever; the notification's own
# `time` (inside the signed body) bounds how long it is accepted. Nylas retries a delivery for up to
# 72 h while the webhook is `failing`; a day more covers slow retries and clock skew.
DEFAULT_MAX_NOTIFICATION_AGE_SECONDS = (72 + 24) * 3600


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is required but not set")
    return value


def _integer(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ConfigurationError(f"environment variable {name} must be >= {minimum}, got {value}")
    return value


def _number(env: Mapping[str, str], name: str, default: float, *, minimum: float | None = None) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} must be a number, got {raw!r}") from None
    if minimum is None and value <= 0:
        raise ConfigurationError(f"environment variable {name} must be > 0, got {value}")
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"environment variable {name} must be >= {minimum}, got {value}")
    return value


# Each function reads its own secret (template.yaml): the webhook the signing secrets, the replier
# the API key. The internet-facing function must never be able to read the key that sends mail.
WEBHOOK_SECRETS_VARIABLE = "NYLAS_SECRETS_ID"
API_KEY_SECRET_VARIABLE = "NYLAS_API_KEY_SECRET_ID"  # noqa: S105 - a variable name, not a secret


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
            max_age_seconds=_integer(env, "SECRETS_MAX_AGE_SECONDS", 300),
            refresh_min_interval_seconds=_integer(env, "SECRETS_REFRESH_MIN_INTERVAL_SECONDS", 5),
        )


@dataclass(frozen=True)
class WebhookSettings:
    """Settings of the webhook function."""

    queue_url: str
    secrets: SecretsSettings
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    queue_max_message_bytes: int = DEFAULT_QUEUE_MAX_MESSAGE_BYTES
    # Older notifications are refused as replays (0: no age check).
    max_notification_age_seconds: int = DEFAULT_MAX_NOTIFICATION_AGE_SECONDS

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> "WebhookSettings":
        return cls(
            queue_url=_required(env, "QUEUE_URL"),
            secrets=SecretsSettings.from_environment(env),
            max_body_bytes=_integer(env, "MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, minimum=1),
            queue_max_message_bytes=_integer(
                env, "QUEUE_MAX_MESSAGE_BYTES", DEFAULT_QUEUE_MAX_MESSAGE_BYTES, minimum=1024
            ),
            max_notification_age_seconds=_integer(
                env, "MAX_NOTIFICATION_AGE_SECONDS", DEFAULT_MAX_NOTIFICATION_AGE_SECONDS
            ),
        )


@dataclass(frozen=True)
class ReplierSettings:
    """Settings of the replier function."""

    queue_url: str
    secrets: SecretsSettings
    idempotency_table: str
    state_table: str
    agent_grant_ids: frozenset[str]
    nylas_api_uri: str = DEFAULT_NYLAS_API_URI
    reply_drafter: str = "template"
    bedrock_model_id: str = ""
    # Loop guard: at most this many replies per thread per rolling hour.
    reply_budget_per_hour: int = 3
    idempotency_expiry_seconds: int = 24 * 3600
    # The reply ledger must outlive both the idempotency record (24 h) and the
    # Nylas Idempotency-Key (1 h): it is the guard after both have expired.
    ledger_ttl_seconds: int = 30 * 24 * 3600
    # A record that meets a busy thread is made visible again this soon.
    busy_retry_seconds: int = 5
    # Any other failed record comes back after base * 2^(receives - 1) seconds,
    # capped: a Nylas outage is retried for ~20 minutes before the DLQ, not 8 x 18.
    retry_base_seconds: int = 10
    retry_max_seconds: int = 900
    nylas_timeout_seconds: float = 10.0
    # Nylas recommends a client timeout of at least 150 s for a send.
    nylas_send_timeout_seconds: float = 150.0
    # Messages of the thread read when choosing which message to answer (one page).
    thread_window: int = 20
    # A record meeting a busy thread waits this long in-process for the holder (whose reply
    # usually covers it) before it goes back to the queue.
    lease_wait_seconds: float = 10.0
    # Time a record needs besides the send: lease, ledger, outbox and the record itself. A record
    # is started only when the invocation has send timeout + this left.
    record_margin_seconds: float = 10.0
    # No-reply senders whose Reply-To is trusted (contact forms): lower-case addresses.
    reply_to_trusted_senders: frozenset[str] = frozenset()

    @property
    def record_budget_seconds(self) -> float:
        """What one record may need at most: a send, the bookkeeping, a wait for a busy thread."""
        return self.nylas_send_timeout_seconds + self.record_margin_seconds + self.lease_wait_seconds

    @classmethod
    def from_environment(cls, env: Mapping[str, str] = os.environ) -> "ReplierSettings":
        grants = frozenset(g.strip() for g in env.get("AGENT_GRANT_IDS", "").split(",") if g.strip())
        if not grants:
            # Without it every message would be skipped as grant_not_agent: say so, loudly.
            raise ConfigurationError(
                "environment variable AGENT_GRANT_IDS is empty: set the comma-separated Nylas grant ids "
                "the agent answers for (template parameter AgentGrantIds)"
            )
        trusted = frozenset(
            a.strip().lower() for a in env.get("REPLY_TO_TRUSTED_SENDERS", "").split(",") if a.strip()
        )
        drafter = env.get("REPLY_DRAFTER", "").strip() or "template"
        if drafter not in ("template", "bedrock"):
            raise ConfigurationError(f"REPLY_DRAFTER must be 'template' or 'bedrock', got {drafter!r}")
        model = env.get("BEDROCK_MODEL_ID", "").strip()
        if drafter == "bedrock" and not model:
            raise ConfigurationError("REPLY_DRAFTER=bedrock needs BEDROCK_MODEL_ID")
        return cls(
            queue_url=_required(env, "QUEUE_URL"),
            secrets=SecretsSettings.from_environment(env, variable=API_KEY_SECRET_VARIABLE),
            idempotency_table=_required(env, "IDEMPOTENCY_TABLE"),
            state_table=_required(env, "STATE_TABLE"),
            agent_grant_ids=grants,
            nylas_api_uri=(env.get("NYLAS_API_URI", "").strip() or DEFAULT_NYLAS_API_URI).rstrip("/"),
            reply_drafter=drafter,
            bedrock_model_id=model,
            reply_budget_per_hour=_integer(env, "REPLY_BUDGET_PER_HOUR", 3, minimum=1),
            idempotency_expiry_seconds=_integer(env, "IDEMPOTENCY_EXPIRY_SECONDS", 24 * 3600, minimum=60),
            ledger_ttl_seconds=_integer(env, "LEDGER_TTL_SECONDS", 30 * 24 * 3600, minimum=3600),
            busy_retry_seconds=_integer(env, "BUSY_RETRY_SECONDS", 5),
            retry_base_seconds=_integer(env, "RETRY_BASE_SECONDS", 10),
            retry_max_seconds=_integer(env, "RETRY_MAX_SECONDS", 900),
            nylas_timeout_seconds=_number(env, "NYLAS_TIMEOUT_SECONDS", 10.0),
            nylas_send_timeout_seconds=_number(env, "NYLAS_SEND_TIMEOUT_SECONDS", 150.0),
            thread_window=_integer(env, "THREAD_WINDOW", 20, minimum=1),
            lease_wait_seconds=_number(env, "LEASE_WAIT_SECONDS", 10.0, minimum=0.0),
            record_margin_seconds=_number(env, "RECORD_MARGIN_SECONDS", 10.0),
            reply_to_trusted_senders=trusted,
        )
