"""What a port call answered, as a value: the results the shell hands to :func:`replyonce.core.learn`.

At the bottom of the core, beside :mod:`replyonce.core.situation`; it reads
no other module of the core. Why values: a port's failure (Nylas
unavailable, a contended write, a busy thread, an agent that raised) is
something the core decides about like any answer — retry, settle or defer —
so the shell turns each exception into one of these in the one line that
makes the call, and never decides anything itself.

A result that is the port's own value (a ``Lease``, a ``ThreadPage``, an
``Answer``, a ``bool``...) is passed as it is; only what the ports say with an
exception, or what needs a name, has a type here.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from replyonce.ports import Folder, Grant, SearchResult


@dataclass(frozen=True)
class NylasUnavailable:
    """A Nylas call failed transiently (``NylasRetryableError``: a 5xx, a ``429``, a ``401``, a timeout)."""

    status: int | None
    error_type: str | None
    retry_after_seconds: int | None
    detail: str


@dataclass(frozen=True)
class StoreContended:
    """A write of the state table met other writes on every in-place retry (``StateContended``)."""

    kind: str
    detail: str


@dataclass(frozen=True)
class ThreadBusy:
    """The thread's lease is another worker's (``ThreadBusyError``) for ``held_for_seconds`` more."""

    held_for_seconds: int


@dataclass(frozen=True)
class GrantsDescribed:
    """The agent grants Nylas described (a grant it refused is missing: looked up again next record)."""

    grants: Sequence[Grant]


@dataclass(frozen=True)
class FoldersListed:
    """The receiving grant's folders, every page."""

    folders: Sequence[Folder]


@dataclass(frozen=True)
class FoldersRefused:
    """Nylas refused the grant's folder listing (``NylasPermanentError``): listed again next record."""

    status: int | None


@dataclass(frozen=True)
class Searched:
    """A ``metadata_pair`` search's result, and Nylas' time as the shell reckons it when it answered."""

    result: SearchResult
    now: int | None


@dataclass(frozen=True)
class AgentReturned:
    """The agent returned ``value`` within its timeout (not necessarily an outcome it may return)."""

    value: object


@dataclass(frozen=True)
class AgentRaised:
    """The agent raised ``failure`` (``AgentRejected`` is a refusal for good; anything else a failure)."""

    failure: BaseException


@dataclass(frozen=True)
class AgentOutlived:
    """The agent was still working when ``AGENT_TIMEOUT_SECONDS`` ran out (abandoned, never stored)."""
