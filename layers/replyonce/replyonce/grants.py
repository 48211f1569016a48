"""One agent grant's settings, as the grant registry may set them: a value, and the overlay that makes it.

Each grant the stack answers has the deployment's settings (the template's parameters, read by
``replyonce.config``) unless its record in the grant registry (``GRANT_REGISTRY_TABLE``,
``replyonce.adapters.grant_registry``) overrides some of them. Pure: a record is a mapping of field
name to a JSON value, and :func:`overlay` is the one place it is read and refused
(``tests/unit/test_grants.py``). The operator's ``make grants set`` checks a change with the same
function before it writes, so a record the replier cannot read only comes from an edit by hand.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from replyonce.config import BUILT_IN_AGENTS, REPLY_MODES, ReplierSettings, TrustedList, trusted_lists
from replyonce.exceptions import ConfigurationError


class GrantRecordInvalid(ConfigurationError):
    """A grant's record names a setting that does not exist or gives one a value it cannot have."""


@dataclass(frozen=True)
class GrantSettings:
    """What one agent grant runs with: the deployment's defaults, overlaid with its record.

    Attributes
    ----------
    enabled:
        ``False``: the grant is paused; its mail waits (deferred ``grant_paused``), never dropped.
    reply_mode:
        ``send``, ``review`` (every reply a draft) or ``shadow`` (nothing sent or drafted).
    agent:
        Who writes the grant's replies: ``template``, ``bedrock`` or ``module:function`` of the
        deployed code (``REPLY_AGENT``'s choices).
    reply_budget_per_hour, reply_budget_per_recipient_per_hour:
        The loop guard per thread and the budget per recipient across threads, per rolling hour.
    person_hold_seconds:
        How long the agent stays out of a thread a person of the mailbox wrote in (0: off).
    reply_to_trusted_senders:
        Contact forms whose ``Reply-To`` is trusted once authenticated (lower case).
    trusted_lists:
        Lists or groups the company runs that relay customers.
    handoff_folder:
        The folder a person's message the agent does not answer is moved to.
    daily_agent_call_cap:
        The most bursts a day (UTC) the agent is asked about (0: no cap); past it the grant's mail is
        handed to a person until 00:00 UTC (``replyonce.rules.agent_calls``).
    """

    enabled: bool = True
    reply_mode: str = ReplierSettings.reply_mode
    agent: str = ReplierSettings.reply_agent
    reply_budget_per_hour: int = ReplierSettings.reply_budget_per_hour
    reply_budget_per_recipient_per_hour: int = ReplierSettings.reply_budget_per_recipient_per_hour
    person_hold_seconds: int = ReplierSettings.person_hold_seconds
    reply_to_trusted_senders: frozenset[str] = ReplierSettings.reply_to_trusted_senders
    trusted_lists: tuple[TrustedList, ...] = ReplierSettings.trusted_lists
    handoff_folder: str = ReplierSettings.handoff_folder
    daily_agent_call_cap: int = 0


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(GrantSettings))
"""The names a record may set, in the order ``make grants show`` lists them."""


def defaults_of(settings: ReplierSettings) -> GrantSettings:
    """The settings a grant without a record runs with: the deployment's (the template's parameters)."""
    return GrantSettings(
        reply_mode=settings.reply_mode,
        agent=settings.reply_agent,
        reply_budget_per_hour=settings.reply_budget_per_hour,
        reply_budget_per_recipient_per_hour=settings.reply_budget_per_recipient_per_hour,
        person_hold_seconds=settings.person_hold_seconds,
        reply_to_trusted_senders=settings.reply_to_trusted_senders,
        trusted_lists=settings.trusted_lists,
        handoff_folder=settings.handoff_folder,
    )


def _boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise GrantRecordInvalid(f"{name} must be true or false, got {value!r}")
    return value


def _count(minimum: int) -> Any:
    def read(name: str, value: Any) -> int:
        # bool is an int in Python: ``true`` is not a budget.
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise GrantRecordInvalid(f"{name} must be an integer >= {minimum}, got {value!r}")
        return value

    return read


def _mode(name: str, value: Any) -> str:
    if value not in REPLY_MODES:
        raise GrantRecordInvalid(f"{name} must be one of {', '.join(REPLY_MODES)}, got {value!r}")
    return str(value)


def _agent(name: str, value: Any) -> str:
    module, _, function = str(value).partition(":") if isinstance(value, str) else ("", "", "")
    if value not in BUILT_IN_AGENTS and not (module.strip() and function.strip()):
        raise GrantRecordInvalid(
            f"{name} must be {', '.join(BUILT_IN_AGENTS)} or module:function, got {value!r}"
        )
    return str(value).strip()


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GrantRecordInvalid(f"{name} must be a non-empty string, got {value!r}")
    return value.strip()


def _strings(name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GrantRecordInvalid(f"{name} must be a list of strings, got {value!r}")
    return value


def _addresses(name: str, value: Any) -> frozenset[str]:
    return frozenset(a.strip().lower() for a in _strings(name, value) if a.strip())


def _lists(name: str, value: Any) -> tuple[TrustedList, ...]:
    # Each entry as TRUSTED_LISTS writes one: ``list-id=address`` or a bare ``list-id``.
    return trusted_lists(",".join(_strings(name, value)))


_READERS = {
    "enabled": _boolean,
    "reply_mode": _mode,
    "agent": _agent,
    "reply_budget_per_hour": _count(1),
    "reply_budget_per_recipient_per_hour": _count(1),
    "person_hold_seconds": _count(0),
    "reply_to_trusted_senders": _addresses,
    "trusted_lists": _lists,
    "handoff_folder": _text,
    "daily_agent_call_cap": _count(0),
}
assert set(_READERS) == set(FIELDS), "every setting of a grant has its reader"


def overlay(defaults: GrantSettings, record: Mapping[str, Any]) -> GrantSettings:
    """``defaults`` with each setting ``record`` names replaced by the record's value.

    Parameters
    ----------
    defaults:
        The deployment's settings (:func:`defaults_of`).
    record:
        A grant's record as stored: setting name to a JSON value (lists for the address sets).

    Raises
    ------
    GrantRecordInvalid
        The record is not a mapping, names a setting that does not exist, or gives one a value it
        cannot have. Never half-read: a grant is answered with its whole record or not at all.
    """
    if not isinstance(record, Mapping):
        raise GrantRecordInvalid(f"a grant's record must be a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - set(FIELDS))
    if unknown:
        raise GrantRecordInvalid(
            f"no such grant setting: {', '.join(unknown)} (settings: {', '.join(FIELDS)})"
        )
    return replace(defaults, **{name: _READERS[name](name, value) for name, value in record.items()})


def as_record(settings: GrantSettings, names: Iterable[str]) -> dict[str, Any]:
    """The settings ``names`` of ``settings`` as a record writes them (JSON values): what
    :func:`overlay` reads back to the same values."""
    record: dict[str, Any] = {}
    for name in names:
        value = getattr(settings, name)
        if name == "reply_to_trusted_senders":
            value = sorted(value)
        elif name == "trusted_lists":
            value = [f"{t.list_id}={t.address}" if t.address else t.list_id for t in value]
        record[name] = value
    return record


def agent_grant_ids(seeded: Iterable[str], registered: Iterable[str]) -> tuple[str, ...]:
    """Every grant the stack answers for, in order: ``AGENT_GRANT_IDS`` first (its order decides which agent
    answers an email sent to several), then the registry's other grants by id.

    A paused grant is still one of ours: its address stays an agent's (its own mail is never answered by
    another grant of the stack), it only answers nothing while paused.
    """
    first = tuple(dict.fromkeys(seeded))
    return first + tuple(sorted(set(registered) - set(first)))
