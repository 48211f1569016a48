"""``make serve --grants N`` or ``--grants-file F``: several mailboxes in the local stack, each a grant.

Each grant is a mailbox of the Nylas emulator and a record in the local stack's grant registry, written
by ``make grants``' own code (``ops.grants.apply_change``: checked by the replier's reader, with a change
item saying who made it), as an operator registers a grant of a deployed stack. The first grant is also
the stack's ``AGENT_GRANT_IDS`` (a deployed stack's ``AgentGrantIds`` seed), so ``make mail`` without
``--grant`` and everything written for one mailbox work as before.

The grants file is plain text, one grant a line, ``key=value`` fields separated by spaces (``#`` starts
a comment)::

    id=grant-sales   address=sales@acme.example   mode=send    agent=order_status_agent:reply
    id=grant-billing address=billing@acme.example mode=shadow

``id`` and ``address`` are required; ``mode`` (send, review, shadow) and ``agent`` (template, bedrock or
``module:function``) are the grant's record and, when left out, the stack's own (``--review``,
``--agent``, ``REPLY_MODE``...). Pure but for :func:`seed_registry` (``tests/harness/test_local_grants.py``).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from devstack.events import AGENT_EMAIL, AGENT_GRANT_ID
from replyonce.config import BUILT_IN_AGENTS, REPLY_MODES

# Who the registry says registered the grants (its change items' ``by``): this command, not a person.
SEEDED_BY = "make serve (local stack)"
MAX_GRANTS = 50
FIELDS = ("id", "address", "mode", "agent")


class GrantsFileError(ValueError):
    """The grants file cannot be read as grants; one sentence naming the line."""


@dataclass(frozen=True)
class LocalGrant:
    """One mailbox of the local stack: its grant id, address, and the record's mode and agent (``None``:
    the stack's own)."""

    grant_id: str
    address: str
    mode: str | None = None
    agent: str | None = None

    def record(self) -> dict[str, str]:
        """The settings its registry record sets (``make grants set``'s ``--mode`` and ``--agent``)."""
        given = {"reply_mode": self.mode, "agent": self.agent}
        return {name: value for name, value in given.items() if value}


def numbered_grants(count: int) -> list[LocalGrant]:
    """``--grants N``: the stack's usual mailbox first, then ``grant-agent-0002``... at ``support2@...``."""
    if not 1 <= count <= MAX_GRANTS:
        raise GrantsFileError(f"--grants takes 1 to {MAX_GRANTS} mailboxes, not {count}")
    domain = AGENT_EMAIL.partition("@")[2]
    return [LocalGrant(AGENT_GRANT_ID, AGENT_EMAIL)] + [
        LocalGrant(f"grant-agent-{number:04d}", f"support{number}@{domain}") for number in range(2, count + 1)
    ]


def parse_grants_file(text: str, name: str = "the grants file") -> list[LocalGrant]:
    """The grants a grants file names, in its order; :class:`GrantsFileError` at its first mistake."""
    grants: list[LocalGrant] = []
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.partition("#")[0].split()
        if not words:
            continue
        where = f"{name}, line {number}"
        fields: dict[str, str] = {}
        for word in words:
            key, equals, value = word.partition("=")
            if not equals or not value:
                raise GrantsFileError(f"{where}: {word!r} is not key=value (e.g. id=grant-sales)")
            if key not in FIELDS:
                raise GrantsFileError(f"{where}: no field {key!r} (a grant has {', '.join(FIELDS)})")
            if key in fields:
                raise GrantsFileError(f"{where}: {key} given twice")
            fields[key] = value
        missing = [key for key in ("id", "address") if key not in fields]
        if missing:
            raise GrantsFileError(f"{where}: {' and '.join(missing)} required")
        grant = LocalGrant(fields["id"], fields["address"], fields.get("mode"), fields.get("agent"))
        _check(grant, where, grants)
        grants.append(grant)
    if not grants:
        raise GrantsFileError(f"{name} names no grant (one a line: id=G address=A [mode=M] [agent=A])")
    if len(grants) > MAX_GRANTS:
        raise GrantsFileError(f"{name} names {len(grants)} grants; {MAX_GRANTS} at most")
    return grants


def _check(grant: LocalGrant, where: str, before: Sequence[LocalGrant]) -> None:
    local, at, domain = grant.address.partition("@")
    if not (local and at and "." in domain):
        raise GrantsFileError(f"{where}: address {grant.address!r} is not an email address")
    if any(g.grant_id == grant.grant_id for g in before):
        raise GrantsFileError(f"{where}: grant {grant.grant_id} named twice")
    if any(g.address.lower() == grant.address.lower() for g in before):
        raise GrantsFileError(f"{where}: address {grant.address} named twice (one mailbox, one grant)")
    if grant.mode is not None and grant.mode not in REPLY_MODES:
        raise GrantsFileError(f"{where}: mode must be one of {', '.join(REPLY_MODES)}, not {grant.mode!r}")
    if grant.agent is not None and grant.agent not in BUILT_IN_AGENTS:
        module, _, function = grant.agent.partition(":")
        if not module or not function:
            raise GrantsFileError(
                f"{where}: agent must be {', '.join(BUILT_IN_AGENTS)} or module:function, not {grant.agent!r}"
            )


def seed_registry(
    dynamodb: Any,
    table: str,
    grants: Sequence[LocalGrant],
    deployment: Any,
    clock: Callable[[], float],
) -> list[str]:
    """Register each grant as ``make grants set --grant G [--mode M] [--agent A]`` would; the lines it said.

    Why ``make grants``' code and not a private write: the records, their change items and their checks
    are then those a deployed stack's operator makes, and ``make grants ARGS="list --local"`` shows them.
    """
    from ops.grants import apply_change, set_record

    lines: list[str] = []
    for grant in grants:
        outcome = apply_change(
            dynamodb,
            table,
            grant.grant_id,
            "set",
            set_record(grant.record(), (), deployment),
            deployment=deployment,
            who=lambda: SEEDED_BY,
            clock=clock,
            dry_run=False,
        )
        lines.append(outcome.lines[0])
    return lines
