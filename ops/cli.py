"""``python -m ops <command>``: argument parsing and the real clients; behaviour lives in the modules.

Every command finds the stack from ``samconfig.toml`` (``stack_name``, ``region``) unless told
with ``--stack-name`` / ``--region`` / ``--profile``, then reads what it needs from the stack's
outputs. Errors an operator can act on are printed as one line on stderr (exit 1, or 2 for bad
input); secrets are never printed.
"""

import argparse
import contextlib
import getpass
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from ops import (
    backfill,
    deploy,
    export,
    failover,
    gate,
    grants,
    judge,
    preflight,
    promote,
    redrive,
    register_webhook,
    replay,
    restore_state,
    review_report,
    rotate_secret,
    score,
    set_api_key,
    shadow,
    thread_state,
)
from ops.errors import ConfigurationError, OpsError
from ops.hints import hint_for
from ops.make_usage import name_make_target
from ops.nylas_admin import NylasAdmin
from ops.regions import check_region
from ops.samconfig import DEFAULT_ENVIRONMENT, DEFAULT_SAMCONFIG, SamConfig, load_samconfig
from ops.secret_store import ApiKeyStore, SecretStore
from ops.stack import StackInfo, describe_stack
from replyonce.adapters.agents import load_agent
from replyonce.adapters.grant_registry import changes_of, list_grants, read_grant
from replyonce.adapters.nylas import NylasMailbox
from replyonce.adapters.queue import NotificationQueue
from replyonce.adapters.store import DynamoDBStateStore
from replyonce.config import DEFAULT_NYLAS_API_URI, DEFAULT_QUEUE_MAX_MESSAGE_BYTES, trusted_lists
from replyonce.exceptions import ConfigurationError as ReplierConfigurationError
from replyonce.grants import agent_grant_ids
from replyonce.policy import Policy, policy_for
from replyonce.rules.shadow_report import build_report, render_text


def _terminal_progress() -> Any:
    """A progress bar when stderr is a terminal and rich is installed (the local stack's requirements)."""
    if not sys.stderr.isatty():
        return None
    try:
        from rich.console import Console

        from ops.progress import progress_bar
    except ImportError:
        return None
    # On stderr: stdout is the report. Bound now: the replay keeps the replier's own prints out meanwhile.
    return progress_bar(Console(file=sys.stderr))


@dataclass
class Runtime:
    """Everything a command touches outside the process; tests replace parts of it."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    session_factory: Callable[..., boto3.session.Session] = boto3.session.Session
    nylas_factory: Callable[[str, str], NylasAdmin] = NylasAdmin
    prompt_secret: Callable[[str], str] = getpass.getpass
    interactive: Callable[[], bool] = field(default_factory=lambda: sys.stdin.isatty)
    run_process: Callable[..., subprocess.CompletedProcess] = subprocess.run
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    # A rich progress bar on a terminal (``ops.progress.progress_bar``), ``None`` elsewhere.
    progress: Callable[[], Any] = field(default_factory=lambda: _terminal_progress)

    def say(self, line: str) -> None:
        """A line of the command's output (its report)."""
        print(line, file=self.out, flush=True)

    def tell(self, line: str) -> None:
        """A line about the run, not part of the report: on stderr, out of a redirected report's way."""
        print(line, file=self.err, flush=True)


@dataclass
class Context:
    """One invocation: parsed arguments, ``samconfig.toml`` and lazily built AWS clients."""

    args: argparse.Namespace
    runtime: Runtime
    config: SamConfig
    _session: boto3.session.Session | None = None

    def explicit_region(self) -> str | None:
        """The region named somewhere: --region, samconfig.toml, then ``AWS_REGION``, ``AWS_DEFAULT_REGION``.

        Why ``AWS_REGION`` here: the AWS CLI and the Lambda runtime read it, so operators export
        it, but botocore reads only ``AWS_DEFAULT_REGION`` (and the profile's ``region``).
        """
        environ = self.runtime.environ
        for source, region in (
            ("--region", self.args.region),
            (f"region in {self.args.config_file}", self.config.region),
            ("AWS_REGION", environ.get("AWS_REGION")),
            ("AWS_DEFAULT_REGION", environ.get("AWS_DEFAULT_REGION")),
        ):
            if region:
                # Against the partitions' lists before anything is built or asked of AWS.
                return check_region(region, source)
        return None

    @property
    def session(self) -> boto3.session.Session:
        if self._session is None:
            self._session = self.runtime.session_factory(
                region_name=self.explicit_region(), profile_name=self.args.profile
            )
        return self._session

    def client(self, service: str) -> Any:
        return self.session.client(service)

    @property
    def region(self) -> str | None:
        """The region the commands use: :meth:`explicit_region`, else the profile's (None: none).

        The profile's region is read from the local AWS config files; nothing is asked of AWS.
        """
        return self.explicit_region() or self.session.region_name

    def stack(self) -> StackInfo:
        name = self.args.stack_name or self.config.stack_name
        if not name:
            raise ConfigurationError("no stack name: pass --stack-name or deploy once with `make deploy`")
        return describe_stack(self.client("cloudformation"), name)

    def secret_store(self, stack: StackInfo) -> SecretStore:
        """The webhook's secret (``NYLAS_SECRETS_ID``)."""
        return SecretStore(stack.output("NylasSecretsArn"), self.client("secretsmanager"))

    def api_key_store(self, stack: StackInfo) -> ApiKeyStore:
        """The replier's secret holding the Nylas API key (``NYLAS_API_KEY_SECRET_ID``)."""
        return ApiKeyStore(stack.output("NylasApiKeySecretArn"), self.client("secretsmanager"))

    def nylas_for(self, stack: StackInfo) -> Callable[[str], NylasAdmin]:
        api_uri = self.args.nylas_api_uri or stack.parameters.get("NylasApiUri") or DEFAULT_NYLAS_API_URI
        return lambda api_key: self.runtime.nylas_factory(api_uri, api_key)


# ---- commands --------------------------------------------------------------------------------------


def _deploy(context: Context) -> int:
    args = context.args
    # The region from --region, samconfig.toml, AWS_REGION, AWS_DEFAULT_REGION or the profile's
    # config file; nothing is asked of AWS, so the dry run needs no credentials. None: the guided
    # deploy asks.
    region = context.region
    plan = deploy.plan_deploy(
        context.config,
        sam=deploy.find_sam(),
        guided=args.guided,
        build=not args.no_build,
        extra_deploy_args=[a for a in args.sam_args if a != "--"],
        environ=context.runtime.environ,
        region=region,
        profile=args.profile,
    )
    if args.dry_run:
        context.runtime.say(
            f"guided: {plan.guided} ({'; '.join(plan.reasons) or 'samconfig.toml is complete'}); "
            f"region: {region or 'none yet (sam deploy --guided asks)'}"
        )
        for command in plan.commands:
            context.runtime.say("$ " + shlex.join(command))
        return 0
    # Before building or asking anything: Python, credentials, Lambda concurrency (with a region).
    preflight.run_preflight(
        context.config, region, context.client, environ=plan.environment, say=context.runtime.say
    )
    deploy.run_plan(plan, context.runtime.run_process, context.runtime.say)
    return 0


def _set_api_key(context: Context) -> int:
    runtime = context.runtime
    stack = context.stack()
    webhook_secrets = context.secret_store(stack)
    key = set_api_key.read_api_key(
        runtime.environ,
        runtime.prompt_secret,
        interactive=runtime.interactive(),
        legacy=webhook_secrets.read().legacy_api_key,
    )
    set_api_key.set_api_key(context.api_key_store(stack), webhook_secrets, key, say=runtime.say)
    return 0


def _register_webhook(context: Context) -> int:
    stack = context.stack()
    emails = context.args.notification_email or [e for e in [stack.parameters.get("AlertEmail", "")] if e]
    if not emails:
        raise ConfigurationError(
            "no notification email: the stack has no AlertEmail; pass --notification-email"
        )
    store = context.secret_store(stack)
    api_keys = context.api_key_store(stack)
    key = context.runtime.environ.get(set_api_key.API_KEY_VARIABLE, "").strip()
    if key and not api_keys.read():
        # First registration in one step: `NYLAS_API_KEY=... make register-webhook`.
        set_api_key.set_api_key(api_keys, store, key, say=context.runtime.say)
    register_webhook.register_webhook(
        store,
        context.nylas_for(stack)(register_webhook.require_api_key(api_keys)),
        stack.output("WebhookUrl"),
        emails,
        force=context.args.force,
        say=context.runtime.say,
        sleep=context.runtime.sleep,
    )
    return 0


def _rotate_secret(context: Context) -> int:
    stack = context.stack()
    store = context.secret_store(stack)
    if context.args.clear_previous:
        rotate_secret.clear_previous_secret(store, say=context.runtime.say)
        return 0
    nylas = context.nylas_for(stack)(register_webhook.require_api_key(context.api_key_store(stack)))
    rotate_secret.rotate_secret(
        store, nylas, webhook_id=context.args.webhook_id, say=context.runtime.say, sleep=context.runtime.sleep
    )
    return 0


def _redrive(context: Context) -> int:
    args, say = context.args, context.runtime.say
    if args.grant and args.method != "copy":
        # A move task moves the whole queue: one grant's letters are chosen one by one.
        say(f"--grant {args.grant}: moving its letters one by one (--method copy); the others stay")
        args.method = "copy"
    if args.local:
        # A running `make serve`: its embedded AWS has no move-task API (moto), so the copy.
        sqs, queues = redrive.local_stack(args.local)
        args.method = "copy"
    else:
        stack = context.stack()
        sqs = context.client("sqs")
        queues = redrive.resolve_queues(
            sqs, stack.output("DeadLetterQueueUrl"), stack.output("NotificationQueueUrl")
        )
    if args.peek:
        letters = redrive.peek(sqs, queues.dead_letter_url, args.peek, grant=args.grant)
        of = f" of grant {args.grant}" if args.grant else ""
        say(f"{len(letters)} dead-lettered notification(s){of} shown (left on the queue):")
        for letter in letters:
            sent = thread_state.format_epoch(letter.sent_at_ms / 1000)
            say(
                f"  {letter.notification_id or '(no id: poison record)'}  {letter.notification_type}  "
                f"grant {letter.grant_id or '-'}  sent {sent}  {letter.body_bytes} bytes  "
                f"sqs {letter.sqs_message_id}"
            )
        return 0
    count = redrive.waiting(sqs, queues.dead_letter_url)
    if count == 0:
        say("the dead-letter queue is empty: nothing to redrive")
        return 0
    which = f"grant {args.grant}'s" if args.grant else "them"
    say(
        f"{count} message(s) on the dead-letter queue; moving {which} to the notification queue "
        f"({args.method})"
    )
    if args.method == "copy":
        redrive.copy_messages(sqs, queues, max_messages=args.max, say=say, grant=args.grant)
        return 0
    handle = redrive.start_move_task(sqs, queues, args.rate)
    say(f"started move task {handle}")
    if not args.no_wait:
        redrive.wait_for_move_task(sqs, queues, sleep=context.runtime.sleep, say=say)
    return 0


def _thread_state(context: Context) -> int:
    args = context.args
    stack = context.stack()
    messages = None
    if args.nylas:
        api_key = register_webhook.require_api_key(context.api_key_store(stack))
        messages = context.nylas_for(stack)(api_key).thread_messages(args.grant, args.thread)
    report = thread_state.read_thread_state(
        context.client("dynamodb"),
        stack.output("StateTableName"),
        args.grant,
        args.thread,
        message_ids=args.message or (),
        thread_messages=messages,
    )
    context.runtime.say(report.to_json() if args.json else thread_state.render(report))
    return 0


@dataclass(frozen=True)
class _Registry:
    """Where ``make grants`` and ``make promote`` read and write: a deployed stack's grant registry, or with
    ``--local`` the running ``make serve``'s (its embedded AWS; the caller from its STS)."""

    dynamodb: Any
    table: str
    deployment: grants.Deployment
    who: Callable[[], str]
    state_table: str
    # The replier's cache of the registry and a paused grant's retry, as the change's lines say them.
    cache_seconds: int = grants.CACHE_SECONDS
    paused_retry_seconds: int = grants.PAUSED_RETRY_SECONDS

    def apply(self, context: Context, grant_id: str, action: str, change: Any) -> list[str]:
        """``change`` written here by ``grants.apply_change`` (who, when, ``--dry-run``); its lines."""
        return grants.apply_change(
            self.dynamodb,
            self.table,
            grant_id,
            action,
            change,
            deployment=self.deployment,
            who=self.who,
            clock=context.runtime.clock,
            dry_run=context.args.dry_run,
            cache_seconds=self.cache_seconds,
            paused_retry_seconds=self.paused_retry_seconds,
        ).lines


def _registry(context: Context) -> _Registry:
    local = getattr(context.args, "local", None)
    if local:
        session, aws = redrive.local_aws(local)
        if not aws.get("grant_registry_table"):
            raise ConfigurationError(f"the stack at {local} has no grant registry: restart `make serve`")
        endpoint = aws["endpoint_url"]
        # The defaults its records override: the stack's mode and agent, as make serve runs them.
        given = {"ReplyMode": aws.get("reply_mode"), "ReplyAgent": aws.get("reply_agent")}
        parameters = {"AgentGrantIds": aws["agent_grant_ids"], **{k: v for k, v in given.items() if v}}
        sts = session.client("sts", endpoint_url=endpoint)
        return _Registry(
            session.client("dynamodb", endpoint_url=endpoint),
            aws["grant_registry_table"],
            grants.deployment_of(parameters),
            lambda: sts.get_caller_identity()["Arn"],
            aws["state_table"],
            int(aws.get("registry_max_age_seconds") or grants.CACHE_SECONDS),
            int(aws.get("paused_retry_seconds") or grants.PAUSED_RETRY_SECONDS),
        )
    stack = context.stack()
    return _Registry(
        context.client("dynamodb"),
        stack.output("GrantRegistryTableName"),
        grants.deployment_of(stack.parameters),
        lambda: context.client("sts").get_caller_identity()["Arn"],
        # Today's agent calls beside the cap; a stack without the output shows the cap alone.
        stack.outputs.get("StateTableName", ""),
    )


def _grants(context: Context) -> int:
    args = context.args
    registry = _registry(context)
    table, dynamodb, deployment = registry.table, registry.dynamodb, registry.deployment
    if args.action == "list":
        lines = grants.list_lines(dynamodb, table, deployment)
    elif args.action == "show":
        lines = grants.show_lines(
            dynamodb,
            table,
            args.grant,
            deployment,
            state_table=registry.state_table,
            now=context.runtime.clock(),
        )
    elif args.action == "resume" and args.expiry:
        lines = grants.lift_expiry(
            dynamodb,
            table,
            args.grant,
            who=registry.who,
            clock=context.runtime.clock,
            dry_run=args.dry_run,
        )
    else:
        if args.action == "set":
            change = grants.set_record(_grant_settings(args), args.reset or (), deployment)
        elif args.action in ("pause", "resume"):
            change = grants.enabled_record(args.grant, args.action == "resume", deployment)
        else:
            change = grants.removed
        lines = registry.apply(context, args.grant, args.action, change)
    for line in lines:
        context.runtime.say(line)
    return 0


# ---- make promote (issue 42) ---------------------------------------------------------------------------


def _promote(context: Context) -> int:
    """``promote``: the grant one step up (shadow, review, send), its evidence first (``ops.promote``)."""
    args, say = context.args, context.runtime.say
    registry = _registry(context)
    table, dynamodb, deployment = registry.table, registry.dynamodb, registry.deployment
    stored = read_grant(dynamodb, table, args.grant)
    if stored is None and args.grant not in deployment.seeded:
        raise ConfigurationError(
            f"grant {args.grant} is not an agent grant of this stack: make grants set --grant G --mode shadow"
        )
    settings = grants.effective(deployment, stored)
    if isinstance(settings, str):
        raise ConfigurationError(f"grant {args.grant}: {settings}; fix it with make grants set first")
    current = settings.reply_mode
    # Decided before Nylas is asked anything: a refused step costs no read.
    to = promote.next_mode(current, args.to, force=args.force)
    now = context.runtime.clock()
    count = _promotion_evidence(context, args.grant, current, now, table)
    if count == 0 and not args.force:
        raise ConfigurationError(
            f"grant {args.grant}: no evidence from {current} to promote it on (--force to promote anyway)"
        )
    say(f"grant {args.grant}: {current} -> {to}" + (" (forced)" if args.force else ""))
    lines = registry.apply(
        context, args.grant, "promote", grants.set_record({"reply_mode": to}, (), deployment)
    )
    for line in lines:
        say(line)
    return 0


def _promotion_evidence(context: Context, grant_id: str, leaving: str, now: float, table: str) -> int:
    """Print the grant's evidence for the mode it leaves; how many decisions it holds (0: none)."""
    args, say = context.args, context.runtime.say
    if leaving == "send":
        return 1  # a forced step down from send: nothing to judge
    sources = _shadow_sources(context)
    inbox = context.runtime.nylas_factory(sources.api_uri, sources.api_key)
    if leaving == "shadow":
        changes = changes_of(sources.dynamodb, table, grant_id, 50)
        since = (
            int(backfill.window(args.since, None, now).received_after)
            if args.since
            else promote.entered_at(changes, "shadow") or int(now) - promote.DEFAULT_SINCE_SECONDS
        )
        store = DynamoDBStateStore(sources.state_table, sources.dynamodb, ttl_seconds=0)
        report = shadow.report_from_records(
            store.shadow_records(), inbox, [grant_id], since=since, until=None, say=say
        )
        since_text = f"since {thread_state.format_epoch(since)}"
        for line in promote.evidence_lines("shadow", grant_id, len(report.items), since_text):
            say(line)
        say(render_text(report))
        return len(report.items)
    tracked = review_report.load_tracked(args.drafts_file)
    statuses, reads = review_report.follow_drafts(
        inbox,
        [grant_id],
        tracked,
        now=int(now),
        open_after_seconds=int(args.open_hours * 3600),
        max_reads=args.max_reads,
    )
    review_report.save_tracked(tracked, args.drafts_file)
    report = review_report.summarise(
        statuses, reads=reads.made, open_after_seconds=int(args.open_hours * 3600)
    )
    decided = sum(r.count for g in report.grants for r in g.rates)
    for line in promote.evidence_lines("review", grant_id, decided, f"drafts followed in {args.drafts_file}"):
        say(line)
    say(review_report.render_review(report))
    return decided


def _grant_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``make grants set`` was given, as a record writes them (only those given)."""
    given = {
        "reply_mode": args.mode,
        "agent": args.agent,
        "reply_budget_per_hour": args.reply_budget_per_hour,
        "reply_budget_per_recipient_per_hour": args.reply_budget_per_recipient_per_hour,
        "person_hold_seconds": args.person_hold_seconds,
        "handoff_folder": args.handoff_folder,
        "daily_agent_call_cap": args.daily_agent_call_cap,
        "reply_to_trusted_senders": args.trusted_sender,
        "trusted_lists": args.trusted_list,
    }
    return {name: value for name, value in given.items() if value is not None}


def _backfill(context: Context) -> int:
    args, say = context.args, context.runtime.say
    # The window first: a mistyped --since is the operator's to fix before any credentials are asked for.
    window = backfill.window(args.since, args.until, time.time())
    stack = context.stack()
    agents = list(_stack_agent_grants(context, stack))
    grants = args.grant or agents
    if not grants:
        raise ConfigurationError("no agent grant: the stack's AgentGrantIds and grant registry are empty")
    inbox = context.nylas_for(stack)(register_webhook.require_api_key(context.api_key_store(stack)))
    # Read only: the ledger's entry lifetime is the replier's to set.
    ledger = DynamoDBStateStore(stack.output("StateTableName"), context.client("dynamodb"), ttl_seconds=0)
    trusted = stack.parameters.get("ReplyToTrustedSenders", "").split(",")
    plan = backfill.plan_backfill(
        inbox,
        ledger,
        grants,
        window,
        agent_grant_ids=agents,
        trusted_senders=trusted,
        trusted_lists=trusted_lists(stack.parameters.get("TrustedLists", "")),
    )
    if args.apply:
        # The queue's MaximumMessageSize, as the webhook uses it: a larger message is queued without its body.
        queue = NotificationQueue(
            stack.output("NotificationQueueUrl"), DEFAULT_QUEUE_MAX_MESSAGE_BYTES, context.client("sqs")
        )
        backfill.apply_backfill(plan, queue)
    say(backfill.render(plan, applied=args.apply))
    return 0


@dataclass(frozen=True)
class _ShadowSources:
    """Where the shadow report and the replay read: the state table, Nylas and the stack's parameters."""

    dynamodb: Any
    state_table: str
    api_uri: str
    api_key: str
    parameters: Mapping[str, str]
    # The grant registry (a deployed stack's, or make serve's) and its grants.
    registry_table: str = ""
    registered: tuple[str, ...] = ()

    def agent_grants(self, named: Sequence[str] | None = None) -> list[str]:
        """``--grant``'s grants, else every agent grant: ``AgentGrantIds``, then the registry's."""
        seeded = [g.strip() for g in self.parameters.get("AgentGrantIds", "").split(",") if g.strip()]
        grants = list(named or agent_grant_ids(seeded, self.registered))
        if not grants:
            raise ConfigurationError("no agent grant: the stack's AgentGrantIds and grant registry are empty")
        return grants


def _shadow_sources(context: Context) -> _ShadowSources:
    """The deployed stack's (its outputs, parameters and API key secret), or with ``--local`` the running
    ``make serve``'s (its embedded AWS, the Nylas its replier reads, the key in its secret)."""
    args = context.args
    if args.local:
        session, aws = redrive.local_aws(args.local)
        endpoint = aws["endpoint_url"]
        secrets = session.client("secretsmanager", endpoint_url=endpoint)
        api_key = register_webhook.require_api_key(ApiKeyStore(aws["api_key_secret_id"], secrets))
        parameters = {"AgentGrantIds": aws["agent_grant_ids"], "NylasApiUri": aws["nylas_api_uri"]}
        dynamodb = session.client("dynamodb", endpoint_url=endpoint)
        table = aws.get("grant_registry_table", "")
        return _ShadowSources(
            dynamodb,
            aws["state_table"],
            aws["nylas_api_uri"],
            api_key,
            parameters,
            table,
            _agent_grants_of(dynamodb, table, parameters),
        )
    stack = context.stack()
    api_key = register_webhook.require_api_key(context.api_key_store(stack))
    api_uri = args.nylas_api_uri or stack.parameters.get("NylasApiUri") or DEFAULT_NYLAS_API_URI
    dynamodb = context.client("dynamodb")
    table = stack.outputs.get("GrantRegistryTableName", "")
    return _ShadowSources(
        dynamodb,
        stack.output("StateTableName"),
        api_uri,
        api_key,
        stack.parameters,
        table,
        _agent_grants_of(dynamodb, table, stack.parameters),
    )


def _stack_agent_grants(context: Context, stack: StackInfo) -> tuple[str, ...]:
    """Every agent grant of the deployed stack (:func:`_agent_grants_of`)."""
    table = stack.outputs.get("GrantRegistryTableName", "")
    return _agent_grants_of(context.client("dynamodb"), table, stack.parameters)


def _agent_grants_of(dynamodb: Any, registry_table: str, parameters: Mapping[str, str]) -> tuple[str, ...]:
    """Every agent grant of a stack: ``AgentGrantIds`` first, then the grant registry's (issue 42), as the
    replier counts them (``replyonce.grants.agent_grant_ids``): what a command that works over all grants
    works over, and ``--grant`` narrows."""
    seeded = [g.strip() for g in parameters.get("AgentGrantIds", "").split(",") if g.strip()]
    registered = [g.grant_id for g in list_grants(dynamodb, registry_table)] if registry_table else []
    return agent_grant_ids(seeded, registered)


def _shadow_report(context: Context) -> int:
    args = context.args
    window = backfill.window(args.since, args.until, time.time())
    if args.period_hours < 1:
        raise ConfigurationError("--period-hours must be at least 1")
    asked = _gate_asked(args, context)
    sources = _shadow_sources(context)
    grants = sources.agent_grants(args.grant)
    inbox = context.runtime.nylas_factory(sources.api_uri, sources.api_key)
    # Read only: the records' lifetime is the replier's to set.
    store = DynamoDBStateStore(sources.state_table, sources.dynamodb, ttl_seconds=0)
    report = shadow.report_from_records(
        store.shadow_records(),
        inbox,
        grants,
        since=window.received_after,
        until=window.received_before,
        period_seconds=args.period_hours * 3600,
        say=context.runtime.say,
    )
    context.runtime.say(render_text(report))
    return _score_and_gate(context, report, {}, asked)


def _replay(context: Context) -> int:
    args, say = context.args, context.runtime.say
    frozen = export.load_export(args.from_export) if args.from_export else None
    window = _replay_window(args, frozen)
    if args.limit < 1 or args.max_seconds <= 0 or args.period_hours < 1:
        raise ConfigurationError("--limit and --period-hours must be at least 1, --max-seconds more than 0")
    asked = _gate_asked(args, context)
    try:
        agent = load_agent(args.agent, bedrock=lambda: _no_bedrock())
    except ReplierConfigurationError as refused:
        # The replier's own words for a REPLY_AGENT it cannot load, as one line and exit 2.
        raise ConfigurationError(f"--agent: {refused}") from None
    grant, mailbox, lister, policy = _replay_sources(context, frozen)
    bar = context.runtime.progress()
    task: dict[str, Any] = {}

    def advance(done: int, total: int) -> None:
        if bar is None:
            return
        if "id" not in task:
            task["id"] = bar.add_task("replaying threads", total=total)
        bar.update(task["id"], completed=done, total=total)

    with bar if bar is not None else contextlib.nullcontext():
        result = replay.replay(
            mailbox,
            lister,
            grant,
            agent,
            policy,
            since=window.received_after,
            until=window.received_before,
            limit=args.limit,
            max_seconds=args.max_seconds,
            advance=advance,
        )
    # The window chose the threads, each replayed whole (its older messages decide as they did live);
    # the report is the window's messages, by their date: not last year's of a thread answered today.
    report = build_report(
        result.records,
        result.threads,
        result.own_addresses,
        since=window.received_after,
        until=window.received_before,
        period_seconds=args.period_hours * 3600,
        sent_folders=result.sent_folders,
    )
    extra = {
        "agent": args.agent,
        "threads": len(result.threads),
        "messages_replayed": result.messages_replayed,
        "deferred": result.deferred,
        "stopped": result.stopped,
    }
    stopped = {
        "limit": f"; stopped at --limit {args.limit}",
        "time": f"; stopped at --max-seconds {args.max_seconds:g}",
    }
    # What the run did goes to stderr: stdout is the report alone, the same for the same decisions,
    # so `diff before.txt after.txt` shows what two agents decided differently and nothing else.
    tell = context.runtime.tell
    tell(
        f"replayed {result.messages_replayed} message(s) of {len(result.threads)} thread(s) with {args.agent}"
        f"{stopped.get(result.stopped, '')}; nothing was written to Nylas"
    )
    if result.deferred:
        tell(
            "not decided (would be retried live): "
            + ", ".join(f"{k} {v}" for k, v in sorted(result.deferred.items()))
        )
    say(render_text(report))
    return _score_and_gate(context, report, extra, asked)


# ---- the score and the gate (ops.score, ops.judge, ops.gate; docs/agents.md "Score and gate") ----------


@dataclass(frozen=True)
class _GateAsked:
    """What ``--judge``, ``--baseline`` and the thresholds asked, read and checked before anything else is."""

    baseline: dict[str, Any] | None
    thresholds: gate.Thresholds
    judge: Any = None
    cost: Any = None


def _gate_asked(args: Any, context: Context | None = None) -> _GateAsked:
    thresholds = gate.parse_thresholds(args.max_drop or (), args.floor or (), args.ceiling or ())
    baseline = gate.load_report(args.baseline) if args.baseline else None
    if context is None:
        return _GateAsked(baseline, thresholds)
    chosen, cost = judge.load_judge(
        args.judge or "", bedrock_client=lambda: context.client("bedrock-runtime"), model_id=args.judge_model
    )
    return _GateAsked(baseline, thresholds, chosen, cost)


def _score_and_gate(context: Context, report: Any, extra: dict[str, Any], asked: _GateAsked) -> int:
    """Score the report (``--judge``), write it (``--json``, with its score), print the score, and with
    ``--baseline`` the gate: its exit code (1: worse than the baseline beyond the thresholds)."""
    args, say = context.args, context.runtime.say
    scored = score.score_items(
        report.items, asked.judge, judge_name=args.judge or judge.DEFAULT_JUDGE, cost=asked.cost
    )
    document = {**extra, "score": scored.to_dict()}
    if args.json:
        shadow.write_json(report, args.json, document)
    say(score.render_score(scored))
    if asked.baseline is None:
        return 0
    verdict = gate.gate(asked.baseline, {**report.to_dict(), **document}, asked.thresholds)
    say(gate.render_verdict(verdict, baseline=str(args.baseline)))
    return verdict.exit_code


def _gate(context: Context) -> int:
    """``gate``: two saved reports compared (a CI step after two runs, or a JSON kept as baseline)."""
    args = context.args
    if not args.baseline:
        raise ConfigurationError("gate: --baseline FILE is required (the report to compare with)")
    asked = _gate_asked(args)
    verdict = gate.gate(asked.baseline or {}, gate.load_report(args.candidate), asked.thresholds)
    context.runtime.say(gate.render_verdict(verdict, baseline=str(args.baseline)))
    return verdict.exit_code


def _replay_window(args: Any, frozen: Mapping[str, Any] | None) -> backfill.Window:
    """``--since``/``--until``, or with ``--from-export`` the export's own window."""
    if frozen is not None:
        return backfill.Window(int(frozen["window"]["since"]), int(frozen["window"]["until"]))
    if not args.since:
        raise ConfigurationError("--since is required (or --from-export FILE)")
    return backfill.window(args.since, args.until, time.time())


def _replay_sources(context: Context, frozen: Mapping[str, Any] | None) -> tuple[str, Any, Any, Policy]:
    """The grant, the mailbox and lister the replay reads, and the policy it decides with: the stack's
    (Nylas, its parameters), or an export's (``ops.export.FrozenNylas``, the parameters it recorded)."""
    if frozen is not None:
        grant = str(frozen["grant"]["id"])
        nylas = export.FrozenNylas(frozen)
        return grant, nylas, nylas, replay.stack_policy({**frozen["parameters"], "AgentGrantIds": grant})
    sources = _shadow_sources(context)
    grant = context.args.grant or sources.agent_grants()[0]
    api_key = sources.api_key
    mailbox = NylasMailbox(sources.api_uri, lambda: api_key, timeout_seconds=30.0, send_timeout_seconds=30.0)
    lister = context.runtime.nylas_factory(sources.api_uri, api_key)
    return grant, mailbox, lister, _grant_policy(sources, grant)


def _grant_policy(sources: _ShadowSources, grant_id: str) -> Policy:
    """The policy the replier decides ``grant_id``'s mail with: the stack's, with the grant's record in the
    grant registry over it (``policy_for``, as ``replyonce.shell.grants`` chooses it) and every agent grant
    of the stack, the registry's included; the stack's alone when it has no registry or no record."""
    policy = replay.stack_policy(sources.parameters)
    table = sources.registry_table
    stored = read_grant(sources.dynamodb, table, grant_id) if table else None
    if stored is None:
        return replace(policy, agent_grant_ids=tuple(sources.agent_grants()))
    settings = grants.effective(grants.deployment_of(sources.parameters), stored)
    if isinstance(settings, str):
        raise ConfigurationError(f"grant {grant_id}: {settings}; fix it with make grants set first")
    return policy_for(policy, settings, tuple(sources.agent_grants()))


def _export(context: Context) -> int:
    """``export``: a grant's threads, pseudonymised, to a file (read-only; ``ops.export``)."""
    args, say = context.args, context.runtime.say
    key = context.runtime.environ.get(export.KEY_ENVIRONMENT, "")
    if not key:
        raise ConfigurationError(
            f"{export.KEY_ENVIRONMENT} is not set: the pseudonyms are keyed with a secret the team keeps"
        )
    pseudonyms = export.Pseudonyms(key.encode())
    window = backfill.window(args.since, args.until, time.time())
    if args.limit < 1:
        raise ConfigurationError("--limit must be at least 1")
    sources = _shadow_sources(context)
    grant = args.grant or sources.agent_grants()[0]
    api_key = sources.api_key
    mailbox = NylasMailbox(sources.api_uri, lambda: api_key, timeout_seconds=30.0, send_timeout_seconds=30.0)
    document = export.export_threads(
        mailbox,
        context.runtime.nylas_factory(sources.api_uri, api_key),
        grant,
        pseudonyms,
        since=window.received_after,
        until=window.received_before,
        limit=args.limit,
        parameters=sources.parameters,
    )
    export.write_export(document, args.out)
    messages = sum(len(t["messages"]) for t in document["threads"])
    say(
        f"exported {len(document['threads'])} thread(s), {messages} message(s) of grant {grant} "
        f"to {args.out} (key {document['key_id']}); nothing written to Nylas; read it before committing it."
    )
    return 0


def _review_report(context: Context) -> int:
    """``review-report``: what people did with the review drafts (``ops.review_report``; read-only)."""
    args, say = context.args, context.runtime.say
    if args.open_hours <= 0 or args.max_reads < 1:
        raise ConfigurationError("--open-hours must be more than 0 and --max-reads at least 1")
    tracked = review_report.load_tracked(args.drafts_file)
    sources = _shadow_sources(context)
    grants = sources.agent_grants(args.grant)
    mailbox = context.runtime.nylas_factory(sources.api_uri, sources.api_key)
    open_after = int(args.open_hours * 3600)
    statuses, reads = review_report.follow_drafts(
        mailbox,
        grants,
        tracked,
        now=int(context.runtime.clock()),
        open_after_seconds=open_after,
        max_reads=args.max_reads,
    )
    review_report.save_tracked(tracked, args.drafts_file)
    report = review_report.summarise(
        statuses, reads=reads.made, open_after_seconds=open_after, most_edited=args.most_edited
    )
    if args.json:
        args.json.write_text(
            json.dumps(report.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )
    say(review_report.render_review(report))
    return 0


def _no_bedrock() -> Any:
    raise ConfigurationError("replay: --agent bedrock is not supported; pass module:function")


def _failover(context: Context) -> int:
    args = context.args
    stack = context.stack()
    table = stack.parameters.get("ActiveRegionTableName", "")
    if not table:
        raise ConfigurationError(
            "the stack has no active-Region table (parameter ActiveRegionTableName): it runs in one "
            'Region, there is nothing to fail over (docs/operations.md, "Across Regions")'
        )
    dynamodb = context.client("dynamodb")
    # The new Region's queue is known only from its own stack: the command run in another Region
    # records none (the other Regions' records then wait for the backfill, as the summary says).
    queue_url = stack.output("NotificationQueueUrl") if context.region == args.to else ""
    result = failover.fail_over_to(
        dynamodb,
        table,
        args.to,
        expect_epoch=args.expect_epoch,
        queue_url=queue_url,
        clock=failover.stamping_clock(dynamodb, table),
    )
    # The handover the replier waits (Policy.handover_seconds): the template's send timeout, margin and
    # settle time are the policy's defaults; the agent's timeout is the stack's parameter.
    policy = Policy(agent_grant_ids=())
    agent_timeout = stack.parameters.get("AgentTimeoutSeconds")
    if agent_timeout:
        policy = replace(policy, agent_timeout_seconds=float(agent_timeout))
    context.runtime.say(failover.render(result, policy.handover_seconds))
    return 0


def _restore_state(context: Context) -> int:
    args = context.args
    stack = context.stack()
    table = stack.output("StateTableName")
    dynamodb = context.client("dynamodb")
    result = restore_state.restore_state(
        dynamodb, source=args.source, target=table, clock=failover.stamping_clock(dynamodb, table)
    )
    began = thread_state.format_epoch(result.began_ms / 1000)
    pending_confirm = Policy(agent_grant_ids=()).pending_confirm_seconds
    context.runtime.say(restore_state.render(result, pending_confirm, began))
    return 0


# ---- parsing ---------------------------------------------------------------------------------------


def _review_drafts_options(p: argparse.ArgumentParser, when: str = "") -> None:
    """``--drafts-file`` and ``--open-hours``: the review report's, and make promote's leaving review."""
    p.add_argument(
        "--drafts-file",
        type=Path,
        default=Path("review-drafts.json"),
        metavar="FILE",
        help=f"{when}where each draft's text is kept from when it is first seen (default review-drafts.json)",
    )
    p.add_argument(
        "--open-hours", type=float, default=24.0, help=f"{when}a draft still open after this long is open"
    )


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--stack-name", help="default: stack_name in samconfig.toml")
    common.add_argument("--region", help="default: region in samconfig.toml, then the AWS default")
    common.add_argument("--profile", help="AWS profile (default: the usual AWS credential chain)")
    common.add_argument("--config-file", type=Path, default=DEFAULT_SAMCONFIG, help="default: samconfig.toml")
    common.add_argument("--config-env", default=DEFAULT_ENVIRONMENT, help="samconfig environment")
    nylas = argparse.ArgumentParser(add_help=False)
    nylas.add_argument("--nylas-api-uri", help="default: the stack's NylasApiUri parameter")
    # What the shadow report and the replay share: the window's end, the report's shape, where to read.
    report = argparse.ArgumentParser(add_help=False)
    report.add_argument("--until", help="window end (default: now)")
    report.add_argument(
        "--period-hours", type=int, default=24, help="one block of counts per this many hours"
    )
    report.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    _gate_arguments(report)
    report.add_argument(
        "--judge",
        metavar="MODULE:FUNCTION",
        help=f"how close the agent's replies came to the people's: default {judge.DEFAULT_JUDGE}, or bedrock",
    )
    report.add_argument(
        "--judge-model",
        default=judge.DEFAULT_JUDGE_MODEL,
        help="the Bedrock judge's model or inference profile",
    )
    _local_option(report, "tables and mailbox")

    parser = argparse.ArgumentParser(
        prog="python -m ops",
        description="Deploy and operate a ReplyOnce stack (runbook: docs/operations.md).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    p = commands.add_parser("deploy", parents=[common], help="sam build + sam deploy (guided the first time)")
    guided = p.add_mutually_exclusive_group()
    guided.add_argument(
        "--guided", action="store_true", default=None, help="always ask (sam deploy --guided)"
    )
    guided.add_argument("--no-guided", dest="guided", action="store_false", help="fail instead of asking")
    p.add_argument("--no-build", action="store_true", help="deploy the last build")
    p.add_argument("--dry-run", action="store_true", help="print the sam commands instead of running them")
    p.add_argument("sam_args", nargs=argparse.REMAINDER, help="after --: passed to sam deploy")
    p.set_defaults(func=_deploy)

    p = commands.add_parser(
        "set-api-key", parents=[common], help="store the Nylas API key in the stack's secret"
    )
    p.set_defaults(func=_set_api_key)

    p = commands.add_parser(
        "register-webhook", parents=[common, nylas], help="create the Nylas webhook and store its secret"
    )
    p.add_argument("--notification-email", action="append", help="default: the stack's AlertEmail")
    p.add_argument("--force", action="store_true", help="create a new webhook even if one is recorded")
    p.set_defaults(func=_register_webhook)

    p = commands.add_parser("rotate-secret", parents=[common, nylas], help="rotate the webhook secret")
    p.add_argument("--webhook-id", help="default: the webhook_id recorded in the secret")
    p.add_argument("--clear-previous", action="store_true", help="only drop previous_webhook_secret")
    p.set_defaults(func=_rotate_secret)

    p = commands.add_parser("redrive", parents=[common], help="move the dead-letter queue back to the queue")
    p.add_argument("--method", choices=("move-task", "copy"), default="move-task")
    p.add_argument("--rate", type=int, help="move-task: most messages per second (default: SQS decides)")
    p.add_argument("--max", type=int, help="copy: move at most this many")
    p.add_argument("--peek", type=int, metavar="N", help="only show up to N dead-lettered notifications")
    p.add_argument("--no-wait", action="store_true", help="move-task: start it and return")
    p.add_argument("--grant", help="only this grant's dead letters (moved one by one); the others stay")
    _local_option(p, "queues")
    p.set_defaults(func=_redrive)

    p = commands.add_parser(
        "thread-state", parents=[common, nylas], help="one thread's lease, replies, ledger"
    )
    p.add_argument("--grant", required=True, help="grant id")
    p.add_argument("--thread", required=True, help="thread id")
    p.add_argument("--message", action="append", help="also look up this message in the ledger")
    p.add_argument("--nylas", action="store_true", help="also list the thread's messages from Nylas")
    p.add_argument("--json", action="store_true", help="JSON instead of text")
    p.set_defaults(func=_thread_state)

    p = commands.add_parser(
        "grants",
        help="each grant's own settings in the grant registry: list, show, set, pause, resume, remove",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="action")
    # The stack's options after the action (make grants ARGS="list --region eu-west-1"), as every command's.
    actions.add_parser(
        "list", parents=[common], help="every grant the stack answers: state, mode, agent, source"
    )
    changing = argparse.ArgumentParser(add_help=False, parents=[common])
    changing.add_argument("--grant", required=True, help="grant id")
    changing.add_argument("--dry-run", action="store_true", help="print the change; write nothing")
    a = actions.add_parser("show", parents=[common], help="every setting of one grant and its latest changes")
    a.add_argument("--grant", required=True, help="grant id")
    a = actions.add_parser("set", parents=[changing], help="override settings of one grant (registers it)")
    a.add_argument("--mode", choices=("send", "review", "shadow"), help="reply mode")
    a.add_argument("--agent", help="template, bedrock or module:function of the deployed code")
    a.add_argument("--reply-budget-per-hour", type=int, help="replies per thread per rolling hour")
    a.add_argument("--reply-budget-per-recipient-per-hour", type=int, help="replies to one address per hour")
    a.add_argument(
        "--person-hold-seconds", type=int, help="the agent stays out of a person's thread this long"
    )
    a.add_argument("--handoff-folder", help="where a person's message the agent does not answer goes")
    a.add_argument(
        "--daily-agent-call-cap",
        type=int,
        help="bursts a UTC day the agent is asked about; past it, mail goes to a person (0: no cap)",
    )
    a.add_argument("--trusted-sender", action="append", help="a contact form's address (again for more)")
    a.add_argument("--trusted-list", action="append", help="list-id=address of a list the company runs")
    a.add_argument("--reset", action="append", metavar="SETTING", help="back to the stack's parameter")
    actions.add_parser("pause", parents=[changing], help="the grant's mail waits, answered after resume")
    a = actions.add_parser("resume", parents=[changing], help="answer the grant's mail again")
    a.add_argument(
        "--expiry",
        action="store_true",
        help="lift a pause by Nylas' grant.expired whose re-authentication never reached the stack",
    )
    actions.add_parser("remove", parents=[changing], help="delete the grant's record")
    for action, command in actions.choices.items():
        _local_option(command, "grant registry")
        name_make_target(command, "grants", first=action)
    p.set_defaults(func=_grants)

    p = commands.add_parser(
        "promote",
        parents=[common, nylas],
        help="a grant one step up shadow -> review -> send, its shadow or review evidence shown first",
    )
    p.add_argument("--grant", required=True, help="grant id")
    p.add_argument("--to", choices=promote.LADDER, help="the mode to promote to (default: the next step)")
    p.add_argument("--force", action="store_true", help="skip a step, step down, or promote without evidence")
    p.add_argument("--dry-run", action="store_true", help="show the evidence and the change; write nothing")
    p.add_argument(
        "--since", help="leaving shadow: the report's start (default: when the grant entered shadow)"
    )
    _review_drafts_options(p, when="leaving review: ")
    p.add_argument(
        "--max-reads", type=int, default=200, help="leaving review: at most this many mailbox reads"
    )
    _local_option(p, "grant registry and mailbox")
    p.set_defaults(func=_promote)

    p = commands.add_parser(
        "backfill",
        parents=[common, nylas],
        help="queue the window's unanswered messages (failed webhook, outage); dry run by default",
    )
    p.add_argument("--since", required=True, help="window start: Unix seconds or ISO 8601 (UTC if no zone)")
    p.add_argument("--until", help="window end (default: now)")
    p.add_argument("--grant", action="append", help="default: the stack's AgentGrantIds")
    p.add_argument(
        "--apply", action="store_true", help="queue them (default: only print what would be queued)"
    )
    p.set_defaults(func=_backfill)

    p = commands.add_parser(
        "shadow-report",
        parents=[common, nylas, report],
        help="what shadow mode would have sent, declined, handed off, skipped; beside the people's answers",
    )
    p.add_argument("--since", required=True, help="window start: Unix seconds or ISO 8601 (UTC if no zone)")
    p.add_argument("--grant", action="append", help="default: the stack's AgentGrantIds")
    p.set_defaults(func=_shadow_report)

    p = commands.add_parser(
        "replay",
        parents=[common, nylas, report],
        help="run an agent over a grant's recent threads in shadow mode (read-only) and report",
    )
    p.add_argument("--agent", required=True, help="module:function (or template), as REPLY_AGENT")
    p.add_argument("--since", help="threads with a message received since: Unix seconds or ISO")
    p.add_argument(
        "--from-export", type=Path, metavar="FILE", help="replay a frozen export (make export), without Nylas"
    )
    p.add_argument("--grant", help="default: the stack's first AgentGrantIds")
    p.add_argument("--limit", type=int, default=100, help="at most this many threads, newest first")
    p.add_argument("--max-seconds", type=float, default=600.0, help="stop after this long (report so far)")
    p.set_defaults(func=_replay)

    p = commands.add_parser(
        "failover",
        parents=[common],
        help="make REGION the active Region (conditional write of the active-Region record)",
    )
    p.add_argument("--to", required=True, metavar="REGION", help="the Region that sends from now on")
    p.add_argument(
        "--expect-epoch", type=int, help="refuse unless the record is at this epoch (what you last saw)"
    )
    p.set_defaults(func=_failover)

    p = commands.add_parser(
        "restore-state",
        parents=[common],
        help="put a restored state table's items back while mail flows; every thread begins again",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="source", metavar="TABLE", help="the table restored from a backup")
    source.add_argument(
        "--mark-only",
        dest="source",
        action="store_const",
        const=None,
        help="copy nothing: items were deleted by hand; stamp the threads' new beginning only",
    )
    p.set_defaults(func=_restore_state)

    p = commands.add_parser(
        "export",
        parents=[common, nylas],
        help="a grant's threads to a file, addresses and names pseudonymised (read-only; for make replay)",
    )
    p.add_argument(
        "--since", required=True, help="threads with a message received since: Unix seconds or ISO"
    )
    p.add_argument("--until", help="window end (default: now)")
    p.add_argument("--grant", help="default: the stack's first AgentGrantIds")
    p.add_argument("--limit", type=int, default=100, help="at most this many threads, newest first")
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="where to write the export")
    _local_option(p, "mailbox")
    p.set_defaults(func=_export)

    p = commands.add_parser(
        "review-report",
        parents=[common, nylas],
        help="what people did with the review drafts: sent unchanged, edited, deleted, open (read-only)",
    )
    p.add_argument("--grant", action="append", help="default: the stack's AgentGrantIds")
    _review_drafts_options(p)
    p.add_argument("--max-reads", type=int, default=200, help="at most this many reads of the mailbox")
    p.add_argument("--most-edited", type=int, default=5, help="show this many of the most edited drafts")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    _local_option(p, "mailbox")
    p.set_defaults(func=_review_report)

    p = commands.add_parser(
        "gate",
        parents=[common],
        help="exit 1 when a saved report is worse than a baseline beyond the thresholds, else 0",
    )
    p.add_argument("candidate", type=Path, help="the report to judge (a --json file)")
    _gate_arguments(p)
    p.set_defaults(func=_gate)
    # Each command's usage names what a person types: make replay ARGS="...", not python -m ops replay.
    for name, command in commands.choices.items():
        name_make_target(command, name)
    parser.prog = "make"
    parser.usage = 'make COMMAND ARGS="..."  (make alone lists the commands)'
    return parser


def _local_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--local [URL]``: the running ``make serve``'s ``what`` instead of a deployed stack's."""
    parser.add_argument(
        "--local",
        nargs="?",
        const=redrive.DEFAULT_LOCAL_URL,
        metavar="URL",
        help=f"the running `make serve`'s {what} ({redrive.DEFAULT_LOCAL_URL}), not a deployed stack's",
    )


def _gate_arguments(parser: argparse.ArgumentParser) -> None:
    """``--baseline`` and the thresholds, shared by ``replay``, ``shadow-report`` and ``gate``."""
    parser.add_argument(
        "--baseline", type=Path, metavar="FILE", help="a saved report: exit 1 if worse than it"
    )
    parser.add_argument(
        "--max-drop",
        action="append",
        metavar="[RATE=]X",
        help=f"largest worsening allowed, in rate points (default {gate.DEFAULT_MAX_DROP} for every rate)",
    )
    parser.add_argument(
        "--floor", action="append", metavar="RATE=X", help="a rate where higher is better: at least X"
    )
    parser.add_argument(
        "--ceiling", action="append", metavar="RATE=X", help="a rate where lower is better: at most X"
    )


def main(argv: Sequence[str] | None = None, runtime: Runtime | None = None) -> int:
    """Run one command; the process exit code."""
    runtime = runtime or Runtime()
    args = build_parser().parse_args(argv)
    context: Context | None = None
    try:
        context = Context(args, runtime, load_samconfig(args.config_file, args.config_env))
        return int(args.func(context))
    except OpsError as exc:
        print(f"error: {exc}", file=runtime.err, flush=True)
        return exc.exit_code
    except (BotoCoreError, ClientError) as exc:
        # Credentials, permissions, throttling: AWS's own words, then what to do about them.
        try:
            region = context.explicit_region() if context else args.region
        except OpsError as refused:  # a Region AWS does not have: that is the error to fix first
            print(f"error: {refused}", file=runtime.err, flush=True)
            return refused.exit_code
        if region is None and context is not None and context._session is not None:
            region = context._session.region_name
        print(f"error: AWS: {exc}\nhint: {hint_for(exc, region)}", file=runtime.err, flush=True)
        return 1
