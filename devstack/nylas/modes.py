"""The documented behaviours a test can switch on: every one off by default and after ``reset()``.

Why modes: Nylas documents several behaviours that a plain happy-path emulator never shows -- a send
answered ``504`` although it went out, a ``202`` that later fails, a ``metadata_pair`` search that
does not find what was just sent -- and leaves others open (list order, how ``folders`` look in a
notification). A product is only proven against the ones the emulator can do, so each is a mode
here, settable from Python (``nylas.modes.listing_order = "date"``) and, for a local stack or a
chaos worker in another process, through ``POST /_emulator/modes`` with a JSON object of the same
names (``GET /_emulator/modes`` reads them back).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from devstack.nylas.limits import ACCOUNT_LIMITS

_CHOICES: dict[str, tuple[str, ...]] = {
    "error_spelling": ("api", "bare"),
    "notification_folders": ("names", "ids"),
    "listing_order": ("arrival", "date"),
    "custom_headers": ("accept", "refuse", "drop"),
    "folder_exists": ("conflict", "invalid"),
    "message_date": ("sender", "received"),
    "deleted_grant_answer": ("not_found", "unauthorized"),
}


@dataclass
class Modes:
    """Every opt-in behaviour of the emulator (assigning a field validates it; ``ValueError`` if bad).

    Attributes
    ----------
    error_spelling : {"api", "bare"}
        Spelling of the ``error.type`` values the emulator itself writes that Nylas documents with an
        ``api.`` prefix: the two idempotency 409s, the 400 for a long key and ``message.send_failed``'s
        ``error.type``. ``"api"`` (default): ``api.concurrent_idempotent_request``; ``"bare"``:
        ``concurrent_idempotent_request``. Nylas writes both: the error tables of
        https://developer.nylas.com/docs/v3/email/idempotent-send/ and
        https://developer.nylas.com/docs/api/errors/ use the prefix, its examples do not.
    webhook_includes_headers : bool
        ``on_message_created`` gets the message *with* ``headers`` (the field customization
        ``headers``; https://developer.nylas.com/docs/v3/notifications/). Default off: a webhook
        without customization carries none.
    notification_folders : {"names", "ids"}
        What ``folders`` holds in the messages given to ``on_message_created`` and
        ``on_notification``: folder names such as ``"sent"`` (default; the notification schema's
        example shows names, https://developer.nylas.com/docs/reference/notifications/messages/message-created/)
        or folder ids as REST answers always give them (the message object says "folder IDs",
        https://developer.nylas.com/docs/reference/api/messages/). Nylas documents both.
    listing_order : {"arrival", "date"}
        Order of ``GET .../messages`` and ``GET .../drafts``: newest *arrival* first (default) or
        newest sender-supplied ``date`` first (ties by arrival). Nylas says only "reverse
        chronological" without naming the key (https://developer.nylas.com/docs/reference/api/messages/get-messages/;
        https://dev.to/qasim157/listing-and-paginating-an-agents-messages-ka7).
    custom_headers : {"accept", "refuse", "drop"}
        How sends and drafts treat ``custom_headers`` whose name does not start with ``X-``:
        ``"accept"`` (default) stores them; ``"refuse"`` answers ``400 invalid_request_error``
        naming ``custom_headers`` (Microsoft Graph requires ``X-`` names); ``"drop"`` accepts the
        request and stores the message without them. Nylas says custom headers are "generally
        prefixed with X-" (https://developer.nylas.com/docs/v3/email/send-email/), nothing more.
    sent_from : str
        The address a sent message's ``from`` shows: ``""`` (default) the grant's own; any other
        value, a provider that sends as an alias or rewrites ``From`` (Nylas documents the send's
        ``from`` as the grant's address and nothing of what a provider does to it:
        https://developer.nylas.com/docs/v3/email/send-email/).
    sent_from_by_grant : mapping of str to str
        The same per grant (grant id -> the address its sent copies show, e.g. one of its
        ``email_aliases``); a grant named here wins over :attr:`sent_from`. Empty (default): none.
        Applies to sends, draft sends and a person's mail from the mailbox (``person_replies``,
        ``person_sends_draft``), which may also name an alias of their own.
    folder_exists : {"conflict", "invalid"}
        The answer to ``POST .../folders`` naming a folder the grant already has: ``"conflict"``
        (default) ``409`` (what Gmail and Microsoft Graph answer for a duplicate label or folder
        name, and IMAP's ``CREATE`` refuses too), ``"invalid"`` ``400 invalid_request_error``. Nylas'
        create-folder reference says nothing of duplicates
        (https://developer.nylas.com/docs/reference/api/folders/post-folder/): no mode creates a second
        folder of one name, since every provider behind Nylas refuses it.
    draft_date : bool
        Drafts carry a ``date`` (default: both SDKs model one, the Python ``Draft.date`` and the Node
        ``Draft`` type) or none at all (``False``: the API reference's draft schema has no ``date``,
        https://developer.nylas.com/docs/reference/api/drafts/). Only the REST view changes.
    draft_send_keeps_metadata : bool
        A sent draft's message keeps the draft's ``metadata`` (default) or has none (``False``):
        nothing documents that metadata survives a draft's send, by the API
        (https://developer.nylas.com/docs/reference/api/drafts/send-draft-id/) or by a person sending
        it from their mail client (:meth:`NylasEmulator.person_sends_draft`).
    message_date : {"sender", "received"}
        What an inbound message's ``date`` is: the sender's ``Date`` (default; it may be skewed) or
        the time it was received (the emulator clock), the sender's ``Date`` then only in the
        ``Date`` header. Nylas' message object says only "Unix timestamp of when the message was
        sent" (https://developer.nylas.com/docs/reference/api/messages/), and providers differ
        (Gmail's ``internalDate`` is the receipt time).
    metadata_search_lag_seconds : float
        A message (or draft) is found by ``metadata_pair`` only this many seconds of emulator clock
        after it entered the mailbox; 0 (default) finds it at once. Nylas documents no indexing
        delay either way (https://developer.nylas.com/docs/dev-guide/metadata/); thread listings
        always return ``metadata`` at once.
    metadata_search_failure : int or None
        When set, every ``metadata_pair`` search (messages and drafts) answers this status with a
        Nylas error body (e.g. 400 ``invalid_request_error`` or 503), as a failing search would.
    send_queue : bool
        Agent Account send queueing (https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/):
        a send (or a draft send) answers ``202`` with the message object minus ``headers`` and the
        email is *not* in the mailbox until :meth:`NylasEmulator.release_queued` (or the automatic
        release below) sends it -- stored in ``sent``, ``message.created`` and ``message.delivered``
        fired -- or fails it (``message.send_failed``, never in the mailbox). The ``202`` is cached
        under the key like a ``200``.
    queue_release_after_seconds : float or None
        Automatic release for a local stack: each queued send is released this many *real* seconds
        after it was accepted (Nylas: "usually within seconds", up to 90 s). ``None`` (default):
        queued sends wait for :meth:`NylasEmulator.release_queued`.
    queue_fail_fraction : float
        Fraction (0..1) of automatically released sends that fail instead of going out.
    queue_seed : int
        Seed of the failure draw: the n-th queued send fails or not the same way in every run.
    account_limit : str or None
        ``"daily_quota"``, ``"monthly_quota"``, ``"sending_paused"`` or ``"outbound_block"``: every
        send answers that limit and nothing is sent (:mod:`devstack.nylas.limits`, whose shapes are
        *not* documented by Nylas).
    account_limit_shape : str or None
        Which shape of the limit answers (``None``: its first); see
        :data:`devstack.nylas.limits.ACCOUNT_LIMITS`.
    account_limit_grants : tuple of str or None
        The grants the limit applies to (ids); ``None`` (default) means every grant.
    draft_send_new_id : bool
        A sent draft becomes a message with a new id (default) or keeps the draft's id; Nylas
        documents neither for Agent Accounts (https://developer.nylas.com/docs/reference/api/drafts/send-draft-id/).
    latency : mapping of str to (low, high)
        Per-route delays in real seconds, uniform between ``low`` and ``high`` (benchmarks), e.g.
        ``{"send": (0.5, 3.0)}``. Routes: ``grant``, ``message``, ``messages``, ``thread``,
        ``folders``, ``send``, ``drafts``, ``draft_send``, ``webhooks``. A send's delay is spent
        while its key is in flight. Empty (default): no delay.
    latency_seed : int
        Seed of the latency draws.
    reauthentication_replays : bool
        A re-authenticated grant's mail that arrived while it was expired fires its ``message.created``
        at the re-authentication (default), as "let the API replay up to 72 hours of missed
        notifications" says (https://developer.nylas.com/docs/cookbook/email/email-sync-failures/); off:
        it is never notified, as "Nylas loses access to the user's data and stops sending notifications"
        (https://developer.nylas.com/docs/dev-guide/best-practices/manage-grants/) leaves open.
    deleted_grant_answer : {"not_found", "unauthorized"}
        What a deleted grant's API calls answer. Deleting a grant "stops all access ... immediately"
        (https://developer.nylas.com/docs/cookbook/use-cases/build/list-revoke-grants/) without naming the
        status: ``404 not_found_error`` as for any unknown grant (default), or ``401 unauthorized``.
    """

    error_spelling: str = "api"
    webhook_includes_headers: bool = False
    notification_folders: str = "names"
    listing_order: str = "arrival"
    custom_headers: str = "accept"
    sent_from: str = ""
    sent_from_by_grant: Mapping[str, str] = field(default_factory=dict)
    folder_exists: str = "conflict"
    draft_date: bool = True
    draft_send_keeps_metadata: bool = True
    message_date: str = "sender"
    metadata_search_lag_seconds: float = 0.0
    metadata_search_failure: int | None = None
    send_queue: bool = False
    queue_release_after_seconds: float | None = None
    queue_fail_fraction: float = 0.0
    queue_seed: int = 0
    account_limit: str | None = None
    account_limit_shape: str | None = None
    account_limit_grants: tuple[str, ...] | None = None
    draft_send_new_id: bool = True
    latency: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    latency_seed: int = 0
    reauthentication_replays: bool = True
    deleted_grant_answer: str = "not_found"

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, _checked(self, name, value))

    def sender_address(self, grant_id: str, own: str) -> str:
        """The ``from`` a sent copy of grant ``grant_id`` shows (:attr:`sent_from_by_grant`,
        :attr:`sent_from`, else ``own``)."""
        return self.sent_from_by_grant.get(grant_id) or self.sent_from or own

    def reset(self) -> None:
        """Every mode back to its default (off)."""
        for f in dataclasses.fields(self):
            setattr(self, f.name, f.default_factory() if callable(f.default_factory) else f.default)

    def update(self, changes: Mapping[str, Any]) -> None:
        """Set several modes at once from JSON-like values; unknown names are a ``ValueError``.

        Validated as a whole before any is set, so a bad request changes nothing.
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"unknown mode(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        trial = dataclasses.replace(self)
        # The limit before its shape: a shape is checked against the limit it belongs to.
        for name in sorted(changes, key=lambda n: n != "account_limit"):
            setattr(trial, name, changes[name])
        for name in changes:
            setattr(self, name, getattr(trial, name))

    def to_json(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["latency"] = {route: list(bounds) for route, bounds in self.latency.items()}
        if self.account_limit_grants is not None:
            values["account_limit_grants"] = list(self.account_limit_grants)
        return values


LATENCY_ROUTES = frozenset(
    {"grant", "message", "messages", "thread", "folders", "send", "drafts", "draft_send", "webhooks"}
)


def _checked(modes: Modes, name: str, value: Any) -> Any:
    """``value`` as mode ``name`` stores it, or ``ValueError`` saying what is accepted."""
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, _CHOICES[name]))}, not {value!r}")
        return value
    if name in (
        "webhook_includes_headers",
        "send_queue",
        "draft_send_new_id",
        "draft_date",
        "draft_send_keeps_metadata",
        "reauthentication_replays",
    ):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, not {value!r}")
        return value
    if name in ("queue_seed", "latency_seed"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, not {value!r}")
        return value
    if name == "sent_from":
        if not isinstance(value, str) or (value and "@" not in value):
            raise ValueError(f"{name} must be an address or empty, not {value!r}")
        return value
    if name == "sent_from_by_grant":
        if not isinstance(value, Mapping) or not all(
            isinstance(g, str) and isinstance(a, str) and "@" in a for g, a in value.items()
        ):
            raise ValueError(f"{name} must map grant ids to addresses, not {value!r}")
        return dict(value)
    if name == "metadata_search_lag_seconds":
        return _seconds(name, value)
    if name == "queue_release_after_seconds":
        return None if value is None else _seconds(name, value)
    if name == "queue_fail_fraction":
        if _seconds(name, value) > 1:
            raise ValueError(f"{name} must be between 0 and 1, not {value!r}")
        return float(value)
    if name == "metadata_search_failure":
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 400 <= value <= 599
        ):
            raise ValueError(f"{name} must be an HTTP error status (400-599) or null, not {value!r}")
        return value
    if name == "account_limit":
        if value is not None and value not in ACCOUNT_LIMITS:
            raise ValueError(f"{name} must be null or one of {', '.join(ACCOUNT_LIMITS)}, not {value!r}")
        shape = getattr(modes, "account_limit_shape", None)
        if value is not None and shape is not None and shape not in ACCOUNT_LIMITS[value]:
            shapes = ", ".join(ACCOUNT_LIMITS[value])
            raise ValueError(
                f"account_limit_shape {shape!r} is not a shape of {value!r} ({shapes}): change it first"
            )
        return value
    if name == "account_limit_shape":
        limit = getattr(modes, "account_limit", None)
        known = (
            {s for shapes in ACCOUNT_LIMITS.values() for s in shapes}
            if limit is None
            else ACCOUNT_LIMITS[limit]
        )
        if value is not None and value not in known:
            raise ValueError(f"{name} must be null or one of {', '.join(sorted(known))}, not {value!r}")
        return value
    if name == "account_limit_grants":
        if value is None:
            return None
        if isinstance(value, str) or not all(isinstance(g, str) for g in value):
            raise ValueError(f"{name} must be a list of grant ids or null, not {value!r}")
        return tuple(value)
    if name == "latency":
        return _latency(value)
    raise AttributeError(f"Modes has no mode {name!r}")


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
    return float(value)


def _latency(value: Any) -> dict[str, tuple[float, float]]:
    if not isinstance(value, Mapping):
        raise ValueError(f"latency must map routes to [low, high] seconds, not {value!r}")
    profile: dict[str, tuple[float, float]] = {}
    for route, bounds in value.items():
        if route not in LATENCY_ROUTES:
            raise ValueError(f"latency route {route!r} is not one of {', '.join(sorted(LATENCY_ROUTES))}")
        if isinstance(bounds, str) or len(bounds) != 2:
            raise ValueError(f"latency of {route!r} must be [low, high] seconds, not {bounds!r}")
        low, high = (_seconds(f"latency of {route!r}", b) for b in bounds)
        if low > high:
            raise ValueError(f"latency of {route!r}: low {low} is above high {high}")
        profile[route] = (low, high)
    return profile
