"""Which settings and which agent a grant's record runs with: the grant registry over the deployment's.

The replier asks this once per record, before the core sees it (``Replier.handle``). A grant is an
agent grant when ``AGENT_GRANT_IDS`` names it or the registry has a record of it; its settings are the
deployment's (``replyonce.grants.defaults_of``) overlaid with its record (``replyonce.grants.overlay``),
and the core decides with the policy they make (``replyonce.policy.policy_for``): the core itself does
not know there is a registry. What cannot run now is a deferral with its reason, never a skip: a
paused grant (``grant_paused``; by Nylas' expiry too, ``paused_by: expiry``), a record the replier
cannot read or an agent it cannot load (``configuration``, with the grant and the reason in the log
line). A grant Nylas deleted is the one skip (``grant_deleted``), and right before each send or draft its
deletion is read strongly consistent (``refuse_if_deleted``): no send after the notification, whatever
the cache says (issue 42, ``replyonce.shell.grant_life``).
"""

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from replyonce.adapters.agents import Agent
from replyonce.adapters.grant_registry import GrantRegistry
from replyonce.exceptions import ConfigurationError, Deferred
from replyonce.grants import GrantRecordInvalid, GrantSettings, agent_grant_ids, overlay
from replyonce.observability import count, logger
from replyonce.reasons import DeferReason


@dataclass(frozen=True)
class Chosen:
    """What one record of a grant runs with.

    Attributes
    ----------
    settings:
        The grant's settings; ``None``: not an agent grant (the core skips it, ``grant_not_agent``).
    agent_grant_ids:
        Every agent grant of the stack, ``AGENT_GRANT_IDS`` first (the core's ``Policy.agent_grant_ids``).
    agent:
        The grant's agent (``None`` with ``settings``).
    """

    settings: GrantSettings | None
    agent_grant_ids: tuple[str, ...]
    agent: Agent | None = None
    deleted: bool = False
    """Nylas deleted the grant (``grant.deleted``): the record is skipped ``grant_deleted``."""


class GrantDirectory:
    """The grants the stack answers, each with its settings and agent (per container, cached).

    Parameters
    ----------
    defaults:
        The deployment's settings (``defaults_of(settings)``): a grant without a record runs with them.
    seeded:
        ``AGENT_GRANT_IDS``: answered with the defaults while they have no record.
    registry:
        The grant registry (``GRANT_REGISTRY_TABLE``); ``None``: the seeded grants only.
    load_agent:
        ``module:function`` (or a built-in's name) to the agent, raising ``ConfigurationError``.
    paused_retry_seconds:
        When a paused grant's record comes back (``paused_retry_seconds``).
    loaded:
        Agents already loaded, by name (the deployment's own, checked at cold start).
    lives:
        What Nylas' lifecycle notifications said of each grant (``replyonce.shell.grant_life``), read from
        the registry (the records' cached ``Query``, or one life strongly consistent): an expired grant's
        mail waits as a paused one's does, a deleted grant's is skipped and never sent. ``None``: none.
    """

    def __init__(
        self,
        defaults: GrantSettings,
        seeded: tuple[str, ...],
        registry: GrantRegistry | None,
        load_agent: Callable[[str], Agent],
        *,
        paused_retry_seconds: int,
        loaded: Mapping[str, Agent] | None = None,
        lives: GrantRegistry | None = None,
        deleted_retry_seconds: int = 60,
    ) -> None:
        self._defaults = defaults
        self._seeded = seeded
        self._registry = registry
        self._load_agent = load_agent
        self._paused_retry_seconds = paused_retry_seconds
        # Each agent imported once per container, by its name (a failed import is tried again next record).
        self._agents: dict[str, Agent] = dict(loaded or {})
        self._lock = threading.Lock()
        self._lives = lives
        self._deleted_retry_seconds = deleted_retry_seconds
        # Grants this container knows Nylas deleted: final, so known without the cache from then on.
        self._deleted: set[str] = set()

    def agent_grant_ids(self) -> tuple[str, ...]:
        """Every agent grant of the stack (the cached registry's with ``AGENT_GRANT_IDS``), whatever their
        state: what a record that touches no grant's settings (our own reply's echo) is decided with."""
        records = self._registry.records() if self._registry is not None else {}
        return self._agent_grants(records)

    def choose(self, grant_id: str) -> Chosen:
        """The grant's settings and agent for one record.

        Raises
        ------
        Deferred
            ``grant_paused``: the grant's record says ``enabled: false``; ``configuration``: its record
            cannot be read, or its agent cannot be loaded. The record waits; nothing is skipped.
        GetParameterError
            The registry could not be read: a failure, retried with backoff like any other.
        """
        records: dict[str, Any] = self._registry.records() if self._registry is not None else {}
        agents = self._agent_grants(records)
        if grant_id not in records and grant_id not in self._seeded:
            return Chosen(None, agents)
        if self._deleted_or_expired(grant_id):
            return Chosen(None, agents, deleted=True)
        try:
            settings = overlay(self._defaults, records.get(grant_id, {}))
        except GrantRecordInvalid as invalid:
            logger.error(
                "the grant's record in the grant registry cannot be read; its mail waits until it is fixed "
                "(make grants show / set)",
                extra={"grant_id": grant_id, "detail": str(invalid)},
            )
            count("GrantRecordInvalid")
            raise Deferred(DeferReason.CONFIGURATION, None, grant_id=grant_id, detail=str(invalid)) from None
        if not settings.enabled:
            raise Deferred(DeferReason.GRANT_PAUSED, self._paused_retry_seconds, grant_id=grant_id)
        return Chosen(settings, agents, self._agent(grant_id, settings.agent))

    def _agent(self, grant_id: str, name: str) -> Agent:
        with self._lock:
            if name not in self._agents:
                try:
                    self._agents[name] = self._load_agent(name)
                except ConfigurationError as failure:
                    logger.error(
                        "the grant's agent cannot be loaded; its mail waits until the record or the code is "
                        "fixed",
                        extra={"grant_id": grant_id, "agent": name, "detail": str(failure)},
                    )
                    raise Deferred(
                        DeferReason.CONFIGURATION, None, grant_id=grant_id, detail=str(failure)
                    ) from None
            return self._agents[name]

    # ---- what Nylas said of the grant (issue 42: the grant's life) ----------------------------------------

    def _agent_grants(self, records: Mapping[str, Any]) -> tuple[str, ...]:
        """The agent grants, but those Nylas deleted: no longer looked up at Nylas (a 404 each record)."""
        lives = self._lives.lives() if self._lives is not None else {}
        return tuple(
            g
            for g in agent_grant_ids(self._seeded, records)
            if g not in self._deleted and not (g in lives and lives[g].deleted)
        )

    def _deleted_or_expired(self, grant_id: str) -> bool:
        """Whether the grant is deleted; an expired grant's record is deferred ``grant_paused`` here.

        The cached lives decide, except where the cache could keep mail waiting for nothing: a grant the
        cache says is expired is read again strongly consistent (one request, for an expired grant's
        records only), so a re-authentication takes effect at once, not within the cache's bound.
        """
        if grant_id in self._deleted:
            return True
        if self._lives is None:
            return False
        life = self._lives.lives().get(grant_id)
        if life is None:
            return False
        if life.expired:
            life = self._lives.life_now(grant_id)
        if life.deleted:
            self._deleted.add(grant_id)
            return True
        if life.expired:
            raise Deferred(
                DeferReason.GRANT_PAUSED, self._paused_retry_seconds, grant_id=grant_id, paused_by="expiry"
            )
        return False

    def forget(self, grant_id: str) -> None:
        """This container handled the grant's deletion: its records are skipped from now on."""
        self._deleted.add(grant_id)

    @property
    def knows_lives(self) -> bool:
        """Whether a grant's life is read at all (a registry is wired): an intent stored right before its
        send is then stored with the check that its grant's life is not deleted (``store_intent``)."""
        return self._lives is not None

    def refuse_if_deleted(self, grant_id: str) -> None:
        """Right before a send or a draft: a strongly consistent read of the grant's life, so a grant deleted
        after the record began (the cache may be up to ``registry_max_age_seconds`` old) sends nothing.

        Raises
        ------
        Deferred
            ``grant_deleted``: the record comes back once every container's cache knows, then is skipped.
        """
        if self._lives is None:
            return
        if grant_id in self._deleted or self._lives.life_now(grant_id).deleted:
            self._deleted.add(grant_id)
            logger.warning(
                "the grant was deleted while its record ran: nothing is sent", extra={"grant_id": grant_id}
            )
            raise Deferred(DeferReason.GRANT_DELETED, self._deleted_retry_seconds, grant_id=grant_id)
