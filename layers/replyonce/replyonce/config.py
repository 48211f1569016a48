"""The one place configuration is read: environment variables → typed, frozen settings.

Three kinds of value, each written once (``docs/configuration.md`` is the table):

- **A deployer's choice or the stack's wiring** is an environment variable the
  template sets (``template.yaml``, each function's ``Environment``), read here
  once at cold start so a missing or malformed value is a clear error instead
  of a ``KeyError`` deep inside a handler.
- **A value that must equal another setting** (the queue's ``maxReceiveCount``
  and ``MaximumMessageSize``, the replier's ``Timeout``) is a constant here that
  a test holds to the template: a variable could only disagree with it.
- **A tuning only the harness changes** (retry pacing, timeouts the chaos
  harness compresses, caps a test lowers) is a field default, never read from the
  environment; a harness passes ``tuning`` to ``from_environment`` (in-process,
  the same field names), and the same guards refuse a bad value.

Every value that guards exactly-once delivery (invariant 1) is bounded in the
settings' ``__post_init__``: however the settings were made, a value the
design's argument cannot use is refused with the reason.
"""

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replyonce.exceptions import ConfigurationError

# Each function reads its own secret (template.yaml): the webhook the signing secrets, the replier
# the API key. The internet-facing function must never be able to read the key that sends mail.
WEBHOOK_SECRETS_VARIABLE = "NYLAS_SECRETS_ID"
API_KEY_SECRET_VARIABLE = "NYLAS_API_KEY_SECRET_ID"  # noqa: S105 - a variable name, not a secret
# Nylas lists at most 200 messages per page.
MAX_THREAD_WINDOW = 200
# The Agent Account queue sends a 202-accepted message within 90 s (changelog 2026-10-09).
AGENT_ACCOUNT_QUEUE_SECONDS = 90
# Equal to the template's by derivation, held there by tests (tests/static/test_configuration.py):
# the replier's Timeout, the queue's RedrivePolicy maxReceiveCount and its MaximumMessageSize.
REPLIER_TIMEOUT_SECONDS = 260
MAX_RECEIVE_COUNT = 8
QUEUE_MAX_MESSAGE_BYTES = 1_048_576
# The agents ReplyOnce ships (replyonce.adapters.agents), the default first; any other REPLY_AGENT is
# module:function.
BUILT_IN_AGENTS = ("template", "bedrock")
AGENT_CHOICES = " or ".join([", ".join(f"'{name}'" for name in BUILT_IN_AGENTS), "'module:function'"])
REPLY_MODES = ("send", "review", "shadow")
"""``REPLY_MODE``: send the reply; make it a draft for a person; or record it, sending nothing (shadow)."""
NEW_GRANT_REPLY_MODES = (*REPLY_MODES, "off")
"""``NEW_GRANT_REPLY_MODE``: the reply mode a grant Nylas creates (``grant.created``) is registered in;
``off`` registers none (issue 42, the grant's life)."""


@dataclass(frozen=True)
class TrustedList:
    """A list or group the company runs that relays customers (``TRUSTED_LISTS``: ``list-id=address``).

    Attributes
    ----------
    list_id:
        The ``List-Id`` identifier (RFC 2919), lower case, without angle brackets.
    address:
        The list's own address, lower case: the ``From`` a group writes when it rewrites a poster's
        (DMARC mitigation). ``""``: not named — the list's posts are not bulk mail, and are answered to
        their ``From`` only; a rewritten one is handed off.
    """

    list_id: str
    address: str = ""


def trusted_lists(raw: str) -> tuple[TrustedList, ...]:
    """``TRUSTED_LISTS`` parsed: comma-separated ``list-id=address`` (or a bare ``list-id``).

    >>> [(t.list_id, t.address) for t in trusted_lists("<customers.acme.example>=Team@Acme.example, news.x")]
    [('customers.acme.example', 'team@acme.example'), ('news.x', '')]
    """
    found = []
    for part in raw.split(","):
        list_id, _, address = part.partition("=")
        list_id = list_id.strip().strip("<>").strip().lower()
        if list_id:
            found.append(TrustedList(list_id, address.strip().lower()))
    return tuple(found)


def _default(cls: type, name: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def _tuned(cls: type, read: dict[str, Any], tuning: Mapping[str, Any] | None) -> Any:
    """``cls`` from the values ``read`` and the harness's in-process ``tuning`` (field names), built once
    so its guards see both; a misspelt field is an error, never a silent default."""
    tuning = dict(tuning or {})
    unknown = set(tuning) - {f.name for f in dataclasses.fields(cls)}
    if unknown:
        raise ConfigurationError(f"no such setting to tune: {', '.join(sorted(unknown))}")
    for name, value in tuning.items():
        if isinstance(value, Mapping) and dataclasses.is_dataclass(read.get(name)):
            tuning[name] = _tuned(type(read[name]), dataclasses.asdict(read[name]), value)
    return cls(**{**read, **tuning})


def _refuse(guards: tuple[tuple[bool, str], ...]) -> None:
    """Raise the first guard's reason whose value is out of bounds."""
    for broken, reason in guards:
        if broken:
            raise ConfigurationError(reason)


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
    # Powertools Parameters' cache age for the secret.
    max_age_seconds: int = 300
    # A signature that fails against the cached secret triggers a fresh read;
    # this bounds how often forged requests can make us call Secrets Manager.
    refresh_min_interval_seconds: int = 5

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] = os.environ, *, variable: str = WEBHOOK_SECRETS_VARIABLE
    ) -> "SecretsSettings":
        """The secret named by ``variable``: ``NYLAS_SECRETS_ID`` (webhook) or ``NYLAS_API_KEY_SECRET_ID``."""
        return cls(secrets_id=_required(env, variable))


@dataclass(frozen=True)
class WebhookSettings:
    """Settings of the webhook function."""

    queue_url: str
    secrets: SecretsSettings
    # Nylas truncates notifications over 1 MB; 4 MiB leaves room for gzip and base64 inside Lambda's
    # 6 MB synchronous payload while rejecting abuse early.
    max_body_bytes: int = 4 * 1_048_576
    # SQS's largest message: the queue's MaximumMessageSize (derived, not a variable).
    queue_max_message_bytes: int = QUEUE_MAX_MESSAGE_BYTES
    # Nylas signs no timestamp, so a captured signed delivery verifies forever; the notification's own
    # `time` (inside the signed body) bounds how long it is accepted. Nylas retries a delivery for up
    # to 72 h while the webhook is `failing`; a day more covers slow retries (0: no check).
    max_notification_age_seconds: int = (72 + 24) * 3600
    # Nor may a notification come from the future: beyond clock skew, a `time` ahead is a forgery of
    # the bound above (a replay dated ahead would pass it for longer).
    max_notification_future_seconds: int = 900

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] = os.environ, *, tuning: Mapping[str, Any] | None = None
    ) -> "WebhookSettings":
        """The webhook's settings; ``tuning``: fields only a harness changes, in-process."""
        read = dict(
            queue_url=_required(env, "QUEUE_URL"),
            secrets=SecretsSettings.from_environment(env),
            max_notification_age_seconds=_integer(
                env, "MAX_NOTIFICATION_AGE_SECONDS", _default(cls, "max_notification_age_seconds")
            ),
        )
        return _tuned(cls, read, tuning)


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
    # What any one address can draw from the agent, across threads, per hour.
    reply_budget_per_recipient_per_hour: int = 10
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
    # This Region's name as the record names it: Lambda's AWS_REGION.
    region: str = ""
    # The bucket a reply's files are kept in between the agent's answer and the send
    # (replyonce.adapters.reply_files);
    # "": replies cannot carry files (an agent's files are then a failure, never dropped).
    reply_files_bucket: str = ""
    # The grant registry's table (replyonce.adapters.grant_registry): each grant's record overrides the
    # settings above for that grant; "": no registry, every grant of AGENT_GRANT_IDS runs with them.
    grant_registry_table: str = ""
    # The reply mode a grant Nylas creates (grant.created) is registered in, unless it has a record
    # already; "off": none is registered (replyonce.shell.grant_life). Shadow by default: a new mailbox
    # sends nothing until an operator promotes it.
    new_grant_reply_mode: str = "shadow"

    # ---- Not variables: tunings the template never changes; only a harness passes others (``tuning``) ----
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
    idempotency_expiry_seconds: int = 24 * 3600
    # The reply ledger must outlive the idempotency record (24 h) and the Nylas key (1 h).
    ledger_ttl_seconds: int = 30 * 24 * 3600
    # A record that met a busy thread after a whole in-process wait comes back this soon, doubling per
    # receive, never later than the hold it waits for can last and never sooner than that hold spread
    # over the receives it has left (replyonce.rules.redelivery.retry_delay).
    busy_retry_seconds: int = 1
    # The queue's maxReceiveCount (derived: template.yaml's RedrivePolicy): a record waiting on a holder
    # spreads the hold over the receives it has left, so it is never dead-lettered while the hold can last.
    max_receive_count: int = MAX_RECEIVE_COUNT
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
    # A record meeting a busy thread waits this long in-process for the holder: at real latency a holder's
    # remaining work is its agent and its send, a queued one included (seconds to tens of seconds;
    # docs/performance.md, "Time to reply at real latency"), before it goes back to the queue.
    lease_wait_seconds: float = 30.0
    # Time a record needs besides the agent and the send: the lease, the outbox, the settlement.
    record_margin_seconds: float = 10.0
    # How long after a send that may have gone out the mailbox is trusted to show it (Nylas documents
    # no index delay for metadata_pair; longer than the Agent Account queue's 90 s).
    mailbox_settle_seconds: int = 300
    # A queued (202) reply nothing confirmed within this is looked for in the mailbox.
    pending_confirm_seconds: int = 600
    # A reply the account cannot send (quota, pause, outbound rule) is tried again after this.
    account_retry_seconds: int = 900
    # The most one customer's file the agent reads may be, and all files read for one record together:
    # counted by the bytes read (replyonce.rules.attachments), the listed size is never trusted. A record's
    # reads and reply share the function's memory with the batch's other threads.
    attachment_max_bytes: int = 10_000_000
    attachments_max_bytes_per_record: int = 25_000_000
    # How old the registry as this container read it may be (Powertools Parameters' max_age): a record
    # changed by `make grants` takes effect within this, without a deploy.
    registry_max_age_seconds: int = 60
    # A paused grant's record comes back this often (the queue's visibility), one receive each time: after
    # max_receive_count of them it dead-letters, for `make redrive` once the grant is resumed.
    paused_retry_seconds: int = 3600
    # A grant's deletion sweep and its backfill after a re-authentication go page by page; a page starts
    # only with this much of the invocation left (the template's 260 s Timeout leaves room for many).
    grant_page_margin_seconds: float = 20.0
    # Facts of the world the guards below compare with. Nylas' documented queue time, and the replier's
    # Timeout (derived: template.yaml): a harness that compresses time (chaos/) passes its own.
    agent_account_queue_seconds: float = AGENT_ACCOUNT_QUEUE_SECONDS
    function_timeout_seconds: float = REPLIER_TIMEOUT_SECONDS

    def __post_init__(self) -> None:
        _refuse(invariant_guards(self))

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] = os.environ, *, tuning: Mapping[str, Any] | None = None
    ) -> "ReplierSettings":
        """The replier's settings from the template's variables.

        Parameters
        ----------
        env:
            The function's environment.
        tuning:
            Fields no variable sets (``retry_max_seconds``, ``mailbox_settle_seconds``...), by name:
            only a harness passes them (the tests, ``make serve``, chaos' workers), in-process.

        Raises
        ------
        ConfigurationError
            A variable is missing or malformed, or a value guarding exactly-once is out of bounds.
        """
        grants = tuple(
            dict.fromkeys(g.strip() for g in env.get("AGENT_GRANT_IDS", "").split(",") if g.strip())
        )
        registry = env.get("GRANT_REGISTRY_TABLE", "").strip()
        if not grants and not registry:
            # Without either every message would be skipped as grant_not_agent: say so, loudly.
            raise ConfigurationError(
                "environment variable AGENT_GRANT_IDS is empty and there is no GRANT_REGISTRY_TABLE: set "
                "the comma-separated Nylas grant ids the agent answers for (template parameter AgentGrantIds)"
            )
        agent = env.get("REPLY_AGENT", "").strip() or _default(cls, "reply_agent")
        if agent not in BUILT_IN_AGENTS and ":" not in agent:
            raise ConfigurationError(f"REPLY_AGENT must be {AGENT_CHOICES}, got {agent!r}")
        model = env.get("BEDROCK_MODEL_ID", "").strip()
        if agent == "bedrock" and not model:
            raise ConfigurationError("REPLY_AGENT=bedrock needs BEDROCK_MODEL_ID")
        mode = env.get("REPLY_MODE", "").strip() or "send"
        if mode not in REPLY_MODES:
            raise ConfigurationError(f"REPLY_MODE must be 'send', 'review' or 'shadow', got {mode!r}")
        new_grant_mode = env.get("NEW_GRANT_REPLY_MODE", "").strip() or _default(cls, "new_grant_reply_mode")
        if new_grant_mode not in NEW_GRANT_REPLY_MODES:
            raise ConfigurationError(
                f"NEW_GRANT_REPLY_MODE must be one of {', '.join(NEW_GRANT_REPLY_MODES)}, "
                f"got {new_grant_mode!r}"
            )
        fence_table = env.get("ACTIVE_REGION_TABLE", "").strip()
        region = (tuning or {}).get("region") or env.get("AWS_REGION", "").strip()
        if fence_table and not region:
            raise ConfigurationError("ACTIVE_REGION_TABLE is set but AWS_REGION names no Region")
        read = dict(
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
            reply_budget_per_recipient_per_hour=_integer(
                env,
                "REPLY_BUDGET_PER_RECIPIENT_PER_HOUR",
                _default(cls, "reply_budget_per_recipient_per_hour"),
                minimum=1,
            ),
            reply_to_trusted_senders=_addresses(env, "REPLY_TO_TRUSTED_SENDERS"),
            trusted_lists=trusted_lists(env.get("TRUSTED_LISTS", "")),
            receiving_authserv_ids=_addresses(env, "RECEIVING_AUTHSERV_IDS")
            or _default(cls, "receiving_authserv_ids"),
            active_region_table=fence_table,
            region=region,
            reply_files_bucket=env.get("REPLY_FILES_BUCKET", "").strip(),
            grant_registry_table=registry,
            new_grant_reply_mode=new_grant_mode,
        )
        return _tuned(cls, read, tuning)


def invariant_guards(s: ReplierSettings) -> tuple[tuple[bool, str], ...]:
    """Each bound on a value that exactly-once delivery (invariant 1) rests on: (out of bounds, why).

    Why here and not at each use: a value is wrong before any record meets it, and the deployer (or the
    harness) should hear the reason at cold start, not as a second reply a week later.
    """
    queue, settle = s.agent_account_queue_seconds, s.mailbox_settle_seconds
    return (
        (
            not settle > queue,
            f"mailbox_settle_seconds ({settle}) must exceed the Agent Account queue's {queue:g} s: a reply "
            "that may have gone out can wait that long in Nylas' queue before the mailbox lists it, and a "
            "mailbox read before then finds nothing and sends it again",
        ),
        (
            s.pending_confirm_seconds < queue + settle,
            f"pending_confirm_seconds ({s.pending_confirm_seconds}) must be at least the Agent Account "
            f"queue's {queue:g} s plus mailbox_settle_seconds ({settle}): a queued reply is looked for in "
            "the mailbox only once it can be listed, else it is taken for lost and sent again",
        ),
        (
            not s.record_margin_seconds > 0 or not s.nylas_send_timeout_seconds > 0,
            f"record_margin_seconds ({s.record_margin_seconds}) and nylas_send_timeout_seconds "
            f"({s.nylas_send_timeout_seconds}) must be above 0: a thread's lease lasts the agent, the send "
            "and the margin, and a lease shorter than its holder's work lets a second record send too",
        ),
        (
            s.lease_wait_seconds < 0,
            f"lease_wait_seconds ({s.lease_wait_seconds}) must be 0 or more: it is part of a record's budget",
        ),
        (
            s.lease_wait_seconds
            + s.agent_timeout_seconds
            + s.nylas_send_timeout_seconds
            + s.record_margin_seconds
            > s.function_timeout_seconds,
            f"AGENT_TIMEOUT_SECONDS ({s.agent_timeout_seconds:g}) with the send timeout "
            f"({s.nylas_send_timeout_seconds:g}), the margin ({s.record_margin_seconds:g}) and the lease "
            f"wait ({s.lease_wait_seconds:g}) must fit in the replier's Timeout "
            f"({s.function_timeout_seconds:g} s): a record starts only with a whole lease left of its "
            "invocation, so a longer budget starts none and every message dead-letters unanswered",
        ),
        (
            s.ledger_ttl_seconds <= max(s.idempotency_expiry_seconds, 3600),
            f"ledger_ttl_seconds ({s.ledger_ttl_seconds}) must exceed the idempotency record's "
            f"{s.idempotency_expiry_seconds} s and the Nylas key's hour: a redelivery both have forgotten "
            "is known as answered only by the ledger",
        ),
        (
            not 1 <= s.max_receive_count <= 1000,
            f"max_receive_count ({s.max_receive_count}) must be the queue's maxReceiveCount, 1 to 1000: a "
            "record waiting on a holder spreads the hold over the receives it has left",
        ),
        (
            not 1 <= s.thread_window <= MAX_THREAD_WINDOW,
            f"thread_window ({s.thread_window}) must be 1 to {MAX_THREAD_WINDOW}: Nylas lists at most "
            f"{MAX_THREAD_WINDOW} messages per page",
        ),
    )


# For the operator commands, which talk to Nylas and SQS as the functions do (written once, above).
DEFAULT_NYLAS_API_URI: str = _default(ReplierSettings, "nylas_api_uri")
DEFAULT_QUEUE_MAX_MESSAGE_BYTES: int = QUEUE_MAX_MESSAGE_BYTES
