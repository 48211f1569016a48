"""``make grants``: each grant's own settings in the grant registry, listed, shown and changed.

A grant of the stack runs with the template's parameters (the stack's, as deployed) unless its record
in the grant registry (``GrantRegistryTableName``) overrides some of them; ``AgentGrantIds`` names grants
answered with the parameters while they have no record. Every change is checked with the replier's own
reader (``replyonce.grants.overlay``) before it is written, written with who made it (the caller's ARN,
from STS) and a change item beside the record, conditioned on the record being as it was read
(``replyonce.adapters.grant_registry.write_change``), and printed. ``--dry-run`` prints the same change
and writes nothing. A change takes effect within the replier's cache bound (``registry_max_age_seconds``).
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from ops.errors import ConfigurationError
from ops.template import function_environment, load_template
from replyonce.adapters.grant_registry import (
    LIFE_PREFIX,
    Change,
    StoredGrant,
    StoredLife,
    changes_of,
    list_grants,
    list_lives,
    read_grant,
    read_life,
    write_change,
    write_life,
)
from replyonce.adapters.state_items import AgentCallDay, agent_call_day_of, agent_calls_key
from replyonce.config import ReplierSettings
from replyonce.exceptions import ConfigurationError as ReplierConfigurationError
from replyonce.grants import FIELDS, GrantRecordInvalid, GrantSettings, as_record, defaults_of, overlay
from replyonce.rules.agent_calls import call_day

CACHE_SECONDS: int = ReplierSettings.registry_max_age_seconds
PAUSED_RETRY_SECONDS: int = ReplierSettings.paused_retry_seconds
MAX_RECEIVES: int = ReplierSettings.max_receive_count


@dataclass(frozen=True)
class Deployment:
    """What the stack answers without the registry: the parameters' settings and ``AgentGrantIds``."""

    defaults: GrantSettings
    seeded: tuple[str, ...]


def deployment_of(parameters: Mapping[str, str]) -> Deployment:
    """The deployed stack's defaults, read as the replier reads them: its environment from the template
    with the stack's parameter values, through ``ReplierSettings`` (one reader of the variables)."""
    environment = function_environment(load_template(), "ReplierFunction", parameters)
    try:
        settings = ReplierSettings.from_environment(environment)
    except ReplierConfigurationError as refused:
        raise ConfigurationError(f"the stack's parameters do not make a replier: {refused}") from None
    return Deployment(defaults_of(settings), settings.agent_grant_ids)


def _show(value: Any) -> str:
    if isinstance(value, frozenset):
        return ", ".join(sorted(value)) or "(none)"
    if isinstance(value, tuple):
        return ", ".join(f"{t.list_id}={t.address}" if t.address else t.list_id for t in value) or "(none)"
    return str(value)


def effective(deployment: Deployment, stored: StoredGrant | None) -> GrantSettings | str:
    """The grant's settings, or the reason its record cannot be read (the replier defers its mail)."""
    try:
        return overlay(deployment.defaults, stored.record if stored else {})
    except GrantRecordInvalid as invalid:
        return f"UNREADABLE: {invalid}"


def _life_state(life: StoredLife | None) -> str:
    """What Nylas' notifications made of the grant (``""``: nothing that stops it)."""
    if life is None:
        return ""
    if life.life.deleted:
        return "deleted"
    return "expired" if life.life.expired else ""


def _life_line(life: StoredLife | None) -> list[str]:
    """``make grants show``'s line on what Nylas said of the grant, when it stops its mail."""
    if life is None:
        return []
    if life.life.deleted:
        swept = "its state removed" if life.life.swept else "its state being removed"
        return [f"  deleted by Nylas (grant.deleted at {life.life.deleted_at}): nothing is sent; {swept}"]
    if life.life.expired:
        return [
            f"  expired (grant.expired at {life.life.expired_at}): its mail waits until Nylas says it was "
            "re-authenticated (grant.updated); then resumed with a backfill of what arrived meanwhile"
        ]
    return []


def render_list(
    deployment: Deployment, stored: Sequence[StoredGrant], lives: Mapping[str, StoredLife] | None = None
) -> list[str]:
    """One line per grant the stack answers: its state, mode, agent and where its settings come from."""
    lives = lives or {}
    by_id = {g.grant_id: g for g in stored}
    grant_ids = list(dict.fromkeys([*deployment.seeded, *sorted(by_id)]))
    if not grant_ids:
        return [
            "no grants: AgentGrantIds is empty and the registry has no record (make grants set --grant G)"
        ]
    lines = [f"{'grant':<28} {'state':<8} {'mode':<7} {'agent':<28} source"]
    for grant_id in grant_ids:
        record = by_id.get(grant_id)
        source = " + ".join(
            part
            for part in (
                "AgentGrantIds" if grant_id in deployment.seeded else "",
                f"record by {record.updated_by or '?'} at {record.updated_at or '?'}" if record else "",
            )
            if part
        )
        settings = effective(deployment, record)
        if isinstance(settings, str):
            lines.append(f"{grant_id:<28} {'waiting':<8} {'-':<7} {'-':<28} {source}; {settings}")
            continue
        state = _life_state(lives.get(grant_id)) or ("active" if settings.enabled else "paused")
        lines.append(f"{grant_id:<28} {state:<8} {settings.reply_mode:<7} {settings.agent:<28} {source}")
    return lines


def render_show(
    grant_id: str,
    deployment: Deployment,
    stored: StoredGrant | None,
    changes: Sequence[Change],
    calls: tuple[str, AgentCallDay] | None = None,
    life: StoredLife | None = None,
) -> list[str]:
    """Every setting of the grant, each marked as its record's or the parameters', and its latest changes.

    ``calls``: the UTC day and the grant's agent calls counted that day (the state table's count),
    shown beside its ``daily_agent_call_cap``.
    """
    if stored is None and grant_id not in deployment.seeded:
        return [f"grant {grant_id}: not an agent grant of this stack (no record, not in AgentGrantIds)"]
    settings = effective(deployment, stored)
    lines = [f"grant {grant_id}", *_life_line(life)]
    if isinstance(settings, str):
        lines.append(f"  {settings}: its mail waits until the record is fixed (make grants set)")
        settings = deployment.defaults
    record = stored.record if stored and isinstance(stored.record, Mapping) else {}
    for name in FIELDS:
        origin = "record" if name in record else "parameter"
        note = _calls_note(settings.daily_agent_call_cap, calls) if name == "daily_agent_call_cap" else ""
        lines.append(f"  {name:<38} {_show(getattr(settings, name)):<40} {origin}{note}")
    if changes:
        lines.append("  changes, newest first:")
        lines += [f"    {c.at}  {c.action:<7} by {c.by}" for c in changes]
    return lines


def _calls_note(cap: int, calls: tuple[str, AgentCallDay] | None) -> str:
    """Today's count beside the cap: how many bursts asked the agent, and whether the grant is over it."""
    if cap == 0:
        return "  (no cap: nothing counted)"
    if calls is None:
        return ""
    day, counted = calls
    note = f"  today ({day} UTC): {counted.calls} of {cap} agent calls"
    if counted.refused_at:
        since = datetime.fromtimestamp(counted.refused_at, UTC).strftime("%H:%M")
        note += f"; over the cap since {since} UTC: its mail goes to a person until 00:00 UTC"
    return note


def agent_calls_of(dynamodb: Any, state_table: str, grant_id: str, day: str) -> AgentCallDay:
    """The grant's agent calls counted on the UTC ``day`` (the state table's count item; none: nothing)."""
    item = dynamodb.get_item(
        TableName=state_table, Key={"pk": {"S": agent_calls_key(grant_id, day)}}, ConsistentRead=True
    ).get("Item")
    return agent_call_day_of(item)


def changed_record(
    deployment: Deployment, current: Mapping[str, Any], settings: Mapping[str, Any], reset: Sequence[str]
) -> dict[str, Any]:
    """``current`` with ``settings`` set and ``reset`` removed (back to the parameter), checked as the
    replier will read it.

    Raises
    ------
    ConfigurationError
        A setting that does not exist, or a value the replier would refuse (nothing is written).
    """
    unknown = sorted(set(reset) - set(FIELDS))
    if unknown:
        raise ConfigurationError(f"no such grant setting to reset: {', '.join(unknown)}")
    record = {k: v for k, v in current.items() if k not in reset}
    record.update(settings)
    try:
        checked = overlay(deployment.defaults, record)
    except GrantRecordInvalid as invalid:
        raise ConfigurationError(f"refused, nothing written: {invalid}") from None
    # As the replier will read it back (addresses lower case, lists in order): what is stored is what runs.
    return as_record(checked, record)


@dataclass(frozen=True)
class Outcome:
    """What a change did (or, in a dry run, would do)."""

    lines: list[str]


def apply_change(
    dynamodb: Any,
    table: str,
    grant_id: str,
    action: str,
    change_record: Callable[[StoredGrant | None], dict[str, Any] | None],
    *,
    deployment: Deployment,
    who: Callable[[], str],
    clock: Callable[[], float],
    dry_run: bool,
    cache_seconds: int = CACHE_SECONDS,
    paused_retry_seconds: int = PAUSED_RETRY_SECONDS,
) -> Outcome:
    """Read the grant's record, make its change, and write it with who made it (unless ``dry_run``).

    ``change_record(stored)`` is the new record (``None``: remove it). ``cache_seconds`` and
    ``paused_retry_seconds``: the replier's, as the lines say them (``make serve``'s are shorter).
    """
    if grant_id.startswith(LIFE_PREFIX):
        raise ConfigurationError(f"{grant_id!r} is not a grant id (the registry keeps grants' lives so)")
    stored = read_grant(dynamodb, table, grant_id)
    before = stored.record if stored else None
    after = change_record(stored)
    by = who()
    at = datetime.fromtimestamp(clock(), UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    change = Change(grant_id, at, action, by, before, after)
    said = f"grant {grant_id}: {action} by {by}: {_record_text(before)} -> {_record_text(after)}"
    if dry_run:
        return Outcome([f"dry run, nothing written: {said}"])
    if before == after and stored is not None:
        return Outcome([f"grant {grant_id}: unchanged ({_record_text(after)}); nothing written"])
    write_change(dynamodb, table, change, stored)
    lines = [said, f"  takes effect within {cache_seconds} s (the replier's cache of the registry)"]
    lines += _consequences(grant_id, action, deployment, after, paused_retry_seconds)
    return Outcome(lines)


def _record_text(record: Any) -> str:
    if record is None:
        return "(no record)"
    return ", ".join(f"{k}={v}" for k, v in sorted(record.items())) or "(the parameters)"


def _consequences(
    grant_id: str, action: str, deployment: Deployment, after: Any, paused_retry_seconds: int
) -> list[str]:
    if action == "pause":
        return [
            f"  its mail waits (deferred grant_paused, back every {paused_retry_seconds} s); a message "
            f"paused through {MAX_RECEIVES} receives dead-letters: `make redrive` once it is resumed"
        ]
    if action == "resume":
        return [
            f"  waiting records come back within {paused_retry_seconds} s; any dead-lettered while paused: "
            "`make redrive`"
        ]
    if action == "remove":
        if grant_id in deployment.seeded:
            return ["  still in AgentGrantIds: answered with the stack's parameters"]
        return ["  no longer an agent grant: its new mail is skipped grant_not_agent"]
    return []


def set_record(settings: Mapping[str, Any], reset: Sequence[str], deployment: Deployment) -> Callable:
    def change(stored: StoredGrant | None) -> dict[str, Any]:
        current = stored.record if stored and isinstance(stored.record, Mapping) else {}
        return changed_record(deployment, current, settings, reset)

    return change


def enabled_record(grant_id: str, enabled: bool, deployment: Deployment) -> Callable:
    """Pause (``enabled: false``) or resume (the setting removed: a grant is enabled by default).

    Only an agent grant of the stack: pausing a stranger would make it one (its mail then waiting instead
    of skipped), and resuming a seeded grant without a record would register it for nothing.
    """

    def change(stored: StoredGrant | None) -> dict[str, Any]:
        if stored is None and grant_id not in deployment.seeded:
            raise ConfigurationError(
                f"grant {grant_id} is not an agent grant of this stack (no record, not in AgentGrantIds): "
                "make grants set registers it"
            )
        if stored is None and enabled:
            raise ConfigurationError(f"grant {grant_id} is not paused (it has no record): nothing to resume")
        current = stored.record if stored and isinstance(stored.record, Mapping) else {}
        if enabled:
            return changed_record(deployment, current, {}, ["enabled"])
        return changed_record(deployment, current, {"enabled": False}, [])

    return change


def removed(stored: StoredGrant | None) -> None:
    if stored is None:
        raise ConfigurationError("the grant has no record in the registry: nothing to remove")
    return None


def list_lines(dynamodb: Any, table: str, deployment: Deployment) -> list[str]:
    return render_list(deployment, list_grants(dynamodb, table), list_lives(dynamodb, table))


def show_lines(
    dynamodb: Any,
    table: str,
    grant_id: str,
    deployment: Deployment,
    *,
    state_table: str = "",
    now: float | None = None,
) -> list[str]:
    """``make grants show``; with the state table, today's agent calls (the UTC day of ``now``, the
    operator's clock: the replier counts by Nylas' time, the same day but for a second's skew at 00:00)."""
    calls = None
    if state_table and now is not None:
        day = call_day(int(now))
        calls = (day, agent_calls_of(dynamodb, state_table, grant_id, day))
    return render_show(
        grant_id,
        deployment,
        read_grant(dynamodb, table, grant_id),
        changes_of(dynamodb, table, grant_id),
        calls,
        read_life(dynamodb, table, grant_id),
    )


# ---- a pause by Nylas' expiry, lifted by hand (issue 42: the grant's life) -----------------------------

EXPIRY_DETECTION_SECONDS: int = 600
"""As ``replyonce.rules.grant_life``: Nylas finds an expiry up to 10 minutes late."""


def lift_expiry(
    dynamodb: Any,
    table: str,
    grant_id: str,
    *,
    who: Callable[[], str],
    clock: Callable[[], float],
    dry_run: bool,
) -> list[str]:
    """``make grants resume --grant G --expiry``: the operator says the grant was re-authenticated.

    For when Nylas' ``grant.updated`` never reached the stack (a webhook ``failed`` meanwhile): the life
    is written as a re-authentication would write it (by the operator, with its change item), and the
    backfill the replier would have run is printed to run by hand. An operator's own pause is not
    touched (``resume`` without ``--expiry`` lifts it).
    """
    stored = read_life(dynamodb, table, grant_id)
    if stored is None or not stored.life.expired:
        return [f"grant {grant_id}: not paused by an expiry; nothing to lift"]
    now = int(clock())
    after = replace(stored.life, reauthenticated_at=max(now, stored.life.expired_at))
    by = who()
    at = datetime.fromtimestamp(clock(), UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    said = f"grant {grant_id}: expiry of {stored.life.expired_at} lifted by {by}"
    backfill = (
        f'  then: make backfill ARGS="--since {max(0, stored.life.expired_at - EXPIRY_DETECTION_SECONDS)} '
        f'--grant {grant_id} --apply" (the mail of its expiry)'
    )
    if dry_run:
        return [f"dry run, nothing written: {said}", backfill]
    write_life(
        dynamodb,
        table,
        grant_id,
        after,
        stored,
        Change(grant_id, at, "reauthenticate", by, asdict(stored.life), asdict(after)),
    )
    return [said, "  takes effect at once (the replier reads an expired grant's life again)", backfill]
