"""The replier's two ports: the state store and the mailbox. Everything it reads or writes goes through them.

Why ports: the rules (``replyonce.core``) are pure and the shell
(``replyonce.shell.replier``) only carries out what they decide, through these two
small interfaces. Each has a production adapter (``replyonce.adapters.store``:
DynamoDB; ``replyonce.adapters.nylas``: the Nylas API) and an in-memory fake
(``tests/fakes.py``), so the rules are tested in microseconds, one contract
suite (``tests/contract/``) runs the same cases on both, and a scheduler can pause every worker at
every call to explore their interleavings.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from replyonce.answers import Answer
from replyonce.mail import Mail, read_messages
from replyonce.state import (
    AgentCalls,
    Intent,
    Lease,
    LedgerEntry,
    LedgerRead,
    Reservation,
    Settlement,
    ShadowRecord,
)

Message = Mail
"""A Nylas message object, read once where it enters (``replyonce.mail.read_message``)."""


@dataclass(frozen=True)
class Grant:
    """An agent grant as Nylas describes it (``GET /v3/grants/{id}``)."""

    id: str
    email: str
    name: str
    provider: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Folder:
    """One folder of a grant's mailbox (``GET /v3/grants/{id}/folders``)."""

    id: str
    name: str
    attributes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThreadPage:
    """One page of a thread listing, in the listing's order (Nylas: "reverse chronological")."""

    messages: tuple[Message, ...]
    next_cursor: str | None
    nylas_time: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", read_messages(self.messages))


@dataclass(frozen=True)
class SearchResult:
    """A ``metadata_pair`` search: the objects found, or why the search could not answer.

    ``failed`` non-empty means *unknown*: never read it as "not there".
    """

    found: tuple[Message, ...] = ()
    failed: str = ""
    nylas_time: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "found", read_messages(self.found))


@dataclass(frozen=True)
class ActiveRegion:
    """The active-Region record as one strongly consistent read found it
    (``replyonce.adapters.active_region``).

    Attributes
    ----------
    region:
        The Region that may send (``""``: none recorded yet).
    epoch:
        Raised by one at each failover (the operator's conditional write): which failover this is.
    since:
        When ``region`` became active (Unix seconds, the failover command's clock); 0 for the first.
    read_at:
        When this Region read the record (Unix seconds, the replier's clock).
    queue_url:
        ``region``'s notification queue, recorded by the failover that made it active: where a
        passive Region hands the records it holds over (``""``: none recorded; they wait, dead-letter
        and are backfilled, as before issue 48).
    """

    region: str
    epoch: int
    since: int
    read_at: int
    queue_url: str = ""


@dataclass(frozen=True)
class FenceUnreadable:
    """The active-Region record could not be read (an error or a timeout): *unknown*, never "active"."""

    detail: str


class RegionFence(Protocol):
    """The active-Region record, read before each lease and each send (``ACTIVE_REGION_TABLE``)."""

    def read(self) -> ActiveRegion | FenceUnreadable:
        """The record, read strongly consistently; never raises (a failure is :class:`FenceUnreadable`)."""
        ...


class StateStore(Protocol):
    """The state table: ledger, thread leases, the outbox, the per-recipient budget (``replyonce.state``)."""

    def ledger_entry(self, grant_id: str, message_id: str) -> LedgerEntry | None:
        """The ledger entry of one inbound message, read consistently."""
        ...

    def read_ledger(self, grant_id: str, message_id: str) -> LedgerRead:
        """The ledger entry of one inbound message and the table's beginning, read consistently at once."""
        ...

    def take_lease(self, thread_key: str, duration_ms: int, table_began_ms: int = 0) -> Lease:
        """Take the thread's lease for ``duration_ms`` (worker clock); raise ``ThreadBusyError`` if held.

        ``table_began_ms``: the table's beginning as this record read it with its ledger
        (:meth:`read_ledger`), which a thread item the lease creates is dated by; ``0``: read it here.
        """
        ...

    def lease_held_for_seconds(self, thread_key: str) -> int:
        """How long another holder keeps the thread's lease (as ``ThreadBusyError`` says it); ``0`` when
        ``take_lease`` would get it now. A read: it takes nothing."""
        ...

    def release(self, lease: Lease) -> bool:
        """Free the lease if still ours; ``False`` when it was lost meanwhile."""
        ...

    def claim_email(self, header_message_id: str, grant_id: str) -> str:
        """Claim one email (its ``Message-ID``) for ``grant_id``; the grant that holds the claim."""
        ...

    def reserve(self, reservation: Reservation, intent_id: str) -> bool:
        """Count ``intent_id`` against the recipient's hourly budget; ``False`` when the budget is spent.

        Idempotent per intent id: a retry of the same burst does not spend a second slot.
        """
        ...

    def count_agent_call(self, grant_id: str, day: str, intent_id: str, cap: int) -> AgentCalls:
        """Count one agent call of ``grant_id`` on the UTC ``day``, unless ``cap`` are counted already.

        Idempotent per intent id: a retry of the same burst finds itself counted (allowed, no second
        count). Conditional: two bursts at the cap at once are never both counted.
        """
        ...

    def store_intent(self, lease: Lease, intent: Intent, *, grant_alive: str = "") -> bool:
        """Put ``intent`` in the outbox, conditioned on the lease; ``False`` when the lease was lost.

        ``grant_alive`` (a grant id): in the same write, and as its condition, the grant's life must not
        say Nylas deleted it (issue 42: no send after a grant's deletion; the send follows this write).
        A store wired to no grant registry checks nothing.

        Raises
        ------
        GrantLifeRefused
            The grant's life did not meet the condition: nothing was written.
        """
        ...

    def settle(self, lease: Lease, settlement: Settlement, grant_id: str) -> bool:
        """Write the settlement (ledger + thread) and free the lease; ``False`` when the lease was lost.

        A lost lease still gets the ledger entries and the covered ids: what
        happened at Nylas happened either way.
        """
        ...

    def record_shadow(self, record: ShadowRecord) -> bool:
        """Write the shadow record unless one of its key exists; ``False`` when it did (a redelivery)."""
        ...


class Mailbox(Protocol):
    """The Nylas API as the replier uses it."""

    def grant(self, grant_id: str) -> Grant:
        """The grant (address and name); raises ``NylasPermanentError`` (404) for an unknown one."""
        ...

    def folders(self, grant_id: str) -> Sequence[Folder]:
        """The grant's folders."""
        ...

    def message(self, grant_id: str, message_id: str) -> Message | None:
        """One message with its headers; ``None`` when Nylas no longer has it (404)."""
        ...

    def drafts_in_thread(self, grant_id: str, thread_id: str) -> Sequence[Message]:
        """The grant's drafts in one thread (``GET /drafts?thread_id=``), ours and people's."""
        ...

    def thread_page(self, grant_id: str, thread_id: str, limit: int, page_token: str | None) -> ThreadPage:
        """One page of the thread's messages, with headers and metadata."""
        ...

    def search(self, grant_id: str, kind: str, key: str, value: str) -> SearchResult:
        """``GET /{kind}?metadata_pair=key:value`` (``kind``: ``messages`` or ``drafts``); never raises."""
        ...

    def send(self, grant_id: str, request: str, key: str, files: Mapping[str, bytes] | None = None) -> Answer:
        """``POST /messages/send`` with ``request`` byte for byte and an ``Idempotency-Key``; never raises.

        A request naming files (``replyonce.outgoing``) goes with ``files``, their bytes by SHA-256: as
        JSON with base64 below 3 MB, as multipart form data above.
        """
        ...

    def create_draft(self, grant_id: str, request: str, files: Mapping[str, bytes] | None = None) -> Answer:
        """``POST /drafts`` with ``request`` byte for byte (and its files, as for a send); never raises."""
        ...

    def download_attachment(
        self, grant_id: str, attachment_id: str, message_id: str, max_bytes: int, timeout_seconds: float
    ) -> bytes:
        """One attachment's bytes: at most ``max_bytes``, within ``timeout_seconds``; raises the typed
        errors of ``replyonce.agent`` (too large, gone, unavailable)."""
        ...


class ReplyFiles(Protocol):
    """Where a reply's files are kept between the agent's answer and the last attempt to send it."""

    def put(self, intent_id: str, content: bytes, content_type: str) -> str:
        """Keep ``content`` under the intent and its SHA-256 (the digest returned); the same write again
        is harmless."""
        ...

    def get(self, intent_id: str, digest: str) -> bytes:
        """The bytes kept under the intent and digest, checked; raises ``ReplyFileLost`` otherwise."""
        ...

    def create_folder(self, grant_id: str, name: str) -> Folder:
        """Create a folder (``POST /folders``): the hand-off folder a grant has none of."""
        ...

    def move(self, grant_id: str, message_id: str, folder_id: str) -> None:
        """``PUT /messages/{id}`` with ``folders: [folder_id]``."""
        ...


@dataclass(frozen=True)
class Listing:
    """The pages of a thread read within one lease, in order, and the Nylas time of the first."""

    pages: tuple[ThreadPage, ...] = ()

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message read, in the listing's order (page after page)."""
        return tuple(m for page in self.pages for m in page.messages)

    @property
    def next_cursor(self) -> str | None:
        return self.pages[-1].next_cursor if self.pages else None

    @property
    def read_at(self) -> int | None:
        return self.pages[0].nylas_time if self.pages else None

    def with_page(self, page: ThreadPage) -> "Listing":
        return Listing((*self.pages, page))
