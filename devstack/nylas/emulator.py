"""``NylasEmulator``: the resources put together behind one loopback server, and what tests read.

The class routes each request to its resource module (messages, send, drafts, webhooks, control),
owns the clock, the modes and the callbacks that stand for webhooks, and exposes the test-facing
counters. Everything a
resource answers is in its own module, with its Nylas source.
"""

from __future__ import annotations

import copy
import hmac
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from devstack.nylas.control import CONTROL_PREFIX, Control
from devstack.nylas.drafts import DraftRecord, Drafts, sent_as
from devstack.nylas.faults import Fault, FaultQueue, Latency, Pause, fault_response
from devstack.nylas.grant_life import DELETED, EXPIRED, GrantLives, grant_object
from devstack.nylas.mailbox import Mailbox, folder_id
from devstack.nylas.messages import Messages
from devstack.nylas.modes import Modes
from devstack.nylas.notifications import MessageCallback, NotificationCallback, Notifier
from devstack.nylas.queue import DEFAULT_FAILURE_REASON
from devstack.nylas.send import Send, SendAttempt, SendRecord, SendStartedCallback
from devstack.nylas.server import Server
from devstack.nylas.webhooks import Webhooks
from devstack.nylas.wire import Json, Request, Response, error, ok

_log = logging.getLogger(__name__)

DEFAULT_APPLICATION_ID = "app-replyonce-local"
"""``data.application_id`` of the notifications, the local stack's (as :mod:`devstack.events`)."""


class NylasEmulator:
    """A thread-safe Nylas v3 API emulator served on ``127.0.0.1``.

    Parameters
    ----------
    api_key : str
        The only bearer token accepted.
    clock : callable
        Returns "now" in Unix seconds. Plus the offset of :meth:`advance_clock`, it drives message
        dates, the idempotency-key TTL and the HTTP ``Date`` header, so a test can jump an hour ahead
        without sleeping. Delays injected with :meth:`Fault.delay` use real time.
    port : int
        TCP port; 0 (default) picks a free ephemeral port.
    application_id : str
        ``data.application_id`` of the notifications given to :attr:`on_notification`.

    Attributes
    ----------
    modes : Modes
        The documented behaviours a test can switch on (:mod:`devstack.nylas.modes`), all off by
        default and after :meth:`reset`; ``POST /_emulator/modes`` sets them from another process.
    on_message_created : callable or None
        Called with a copy of every message that appears in a mailbox: inbound mail from
        :meth:`deliver_inbound` and outbound mail from a send that really went out (never for a
        replay). For sends it runs on the request thread *before* the response is written, so when a
        client sees the answer the callback has already run; it must therefore not block on that
        client. Its exceptions are logged there (the email went out regardless) but propagate from
        :meth:`deliver_inbound`, where the caller is the test itself. The message has no ``headers``
        unless :attr:`webhook_includes_headers` is set, as a webhook without field customization;
        its ``folders`` are names unless ``modes.notification_folders`` is ``"ids"``.
    on_notification : callable or None
        Called as ``on_notification(trigger_type, data)`` for every notification other than
        ``message.created`` -- ``message.updated`` (a ``PUT`` of a message), ``message.delivered``
        and ``message.send_failed`` (the send queue) -- with ``data`` the notification's ``data``
        object as Nylas documents it (:mod:`devstack.nylas.notifications`). Errors are logged on
        request and timer threads, and propagate from :meth:`release_queued`. Wiring: kept by
        :meth:`reset`.
    on_send_started : callable or None
        Called as ``on_send_started(grant_id, payload)`` on the request thread of a send, after its
        ``Idempotency-Key`` (if any) is reserved and before the send is performed, outside the lock:
        a test delivers a customer message "while the send is in flight" here. Not called for
        replays and 409s. Its exceptions are logged, never propagated. Wiring: kept by :meth:`reset`.
    challenge_timeout_seconds : float
        How long ``POST /v3/webhooks`` waits for the challenge answer (wiring, like the callbacks).

    Examples
    --------
    >>> with NylasEmulator() as nylas:  # doctest: +SKIP
    ...     nylas.add_grant("g1", "agent@example.com")
    ...     inbound = nylas.deliver_inbound("g1", from_email="c@example.com", subject="Hi", body="?")
    ...     requests.post(f"{nylas.url}/v3/grants/g1/messages/send", ...)
    ...     assert len(nylas.sends) == 1
    """

    def __init__(
        self,
        api_key: str = "test-api-key",
        clock: Callable[[], float] = time.time,
        *,
        port: int = 0,
        application_id: str = DEFAULT_APPLICATION_ID,
    ) -> None:
        self.api_key = api_key
        self.clock = clock
        self._modes = Modes()
        self._clock_offset = 0.0
        self._port = port
        self._server: Server | None = None
        self._mailbox = mailbox = Mailbox(self.now, self._modes)
        self._lock = mailbox.lock
        self._faults = FaultQueue()
        self._latency = Latency()
        self._requests: list[tuple[str, str]] = []
        self._lives = GrantLives()
        self._notifier = notifier = Notifier(self.modes, application_id)
        self._messages = Messages(mailbox, self.modes, notifier.message_updated)
        self._send = Send(mailbox, self.modes, self._faults, notifier)
        self._drafts = Drafts(mailbox, self.modes, self._faults, self._send, self._messages, notifier)
        self._webhooks = Webhooks(self._lock, self.now)
        self._control = Control(
            mailbox,
            lambda m: notifier.message_created(m, swallow=False),
            self.advance_clock,
            self.modes,
            lambda: self.queued_sends,
            self.release_queued,
            self.inject,
            self.grant_action,
        )

    # ---- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> NylasEmulator:
        """Bind the socket and serve in a background thread; returns ``self`` for chaining."""
        if self._server is not None:
            raise RuntimeError("emulator already started")
        self._server = Server(("127.0.0.1", self._port), self._handle, self.now)
        self._server.start_serving("nylas-emulator")
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (queued sends stay queued, their timers stop); safe twice."""
        self._send.queue.cancel_timers()
        server, self._server = self._server, None
        if server is not None:
            server.stop_serving()

    def __enter__(self) -> NylasEmulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321`` (use it as ``NYLAS_API_URI``)."""
        if self._server is None:
            raise RuntimeError("emulator not started")
        return self._server.base_url

    @property
    def modes(self) -> Modes:
        """The emulator's :class:`Modes` (one object for its life: set its fields, do not replace it)."""
        return self._modes

    # ---- wiring kept by reset(), and the two older mode switches -----------------------------------

    @property
    def on_message_created(self) -> MessageCallback | None:
        return self._notifier.on_message_created

    @on_message_created.setter
    def on_message_created(self, callback: MessageCallback | None) -> None:
        self._notifier.on_message_created = callback

    @property
    def on_notification(self) -> NotificationCallback | None:
        return self._notifier.on_notification

    @on_notification.setter
    def on_notification(self, callback: NotificationCallback | None) -> None:
        self._notifier.on_notification = callback

    @property
    def webhook_includes_headers(self) -> bool:
        """``modes.webhook_includes_headers``: ``on_message_created`` gets the message's ``headers``."""
        return self.modes.webhook_includes_headers

    @webhook_includes_headers.setter
    def webhook_includes_headers(self, value: bool) -> None:
        self.modes.webhook_includes_headers = value

    @property
    def on_send_started(self) -> SendStartedCallback | None:
        return self._send.on_send_started

    @on_send_started.setter
    def on_send_started(self, callback: SendStartedCallback | None) -> None:
        self._send.on_send_started = callback

    @property
    def challenge_timeout_seconds(self) -> float:
        return self._webhooks.challenge_timeout_seconds

    @challenge_timeout_seconds.setter
    def challenge_timeout_seconds(self, seconds: float) -> None:
        self._webhooks.challenge_timeout_seconds = seconds

    @property
    def send_accepts_with_202(self) -> bool:
        """``modes.send_queue`` under its older name: sends answer ``202`` and wait in the queue."""
        return self.modes.send_queue

    @send_accepts_with_202.setter
    def send_accepts_with_202(self, value: bool) -> None:
        self.modes.send_queue = value

    # ---- the emulator's clock ----------------------------------------------------------------------

    def now(self) -> float:
        """The emulator's "now" in Unix seconds: the injected clock plus :meth:`advance_clock`."""
        return self.clock() + self._clock_offset

    def advance_clock(self, seconds: float) -> float:
        """Move the emulator's clock forward by ``seconds`` without sleeping; returns the new now.

        Everything that reads Nylas time moves with it: new message dates, the idempotency keys'
        hour and the HTTP ``Date`` header. :meth:`reset` sets the offset back to zero.

        Raises
        ------
        ValueError
            ``seconds`` is negative or not finite: Nylas' clock does not go back.
        """
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"advance_seconds must be a finite number >= 0, not {seconds!r}")
        with self._lock:
            self._clock_offset += float(seconds)
        return self.now()

    # ---- test-facing setup -------------------------------------------------------------------------

    def add_grant(self, grant_id: str, email: str, name: str = "Agent", provider: str = "nylas") -> Json:
        """Create (or replace) a valid grant and return its object: an Agent Account (``provider``
        ``"nylas"``) by default, or a person's or team's mailbox (``"google"``, ``"microsoft"``...),
        which people also write from (``GET /v3/grants/{id}`` returns ``provider``)."""
        self._lives.begin(grant_id, int(self.now()))
        return self._mailbox.add_grant(grant_id, email, name, provider)

    # ---- a grant's life (devstack.nylas.grant_life: each behaviour with its source) -----------------

    def create_grant(self, grant_id: str, email: str, name: str = "Agent", provider: str = "nylas") -> Json:
        """A user authenticates for the first time: the grant is added and ``grant.created`` fires."""
        grant = self.add_grant(grant_id, email, name, provider)
        self._notifier.notify(
            "grant.created",
            {
                "object": grant_object(
                    grant, "grant.created", login_id=f"login-{grant_id}", name=name, scope=[]
                )
            },
            swallow=False,
        )
        return grant

    def expire_grant(self, grant_id: str) -> None:
        """The grant's credentials expire: ``grant_status`` ``invalid``, its calls ``401``, its new mail
        held un-notified, and ``grant.expired`` fires."""
        grant = self._grant(grant_id)
        updated_at = self._lives.expire(grant["id"])
        with self._lock:
            self._mailbox.grants[grant["id"]]["grant_status"] = "invalid"
        self._notifier.notify(
            "grant.expired",
            {"object": grant_object(grant, "grant.expired", grant_updated_at=updated_at)},
            swallow=False,
        )

    def reauthenticate_grant(self, grant_id: str) -> None:
        """The user re-authenticates: the same grant id valid again, ``grant.updated`` with
        ``reauthentication_flag`` fires, then (:attr:`Modes.reauthentication_replays`) the held mail's
        ``message.created``."""
        grant = self._grant(grant_id)
        held = self._lives.reauthenticate(grant["id"], int(self.now()))
        with self._lock:
            self._mailbox.grants[grant["id"]]["grant_status"] = "valid"
            replay = (
                [copy.deepcopy(self._mailbox.messages[m].message) for m in held]
                if self.modes.reauthentication_replays
                else []
            )
        self._notifier.notify(
            "grant.updated",
            {"object": grant_object(grant, "grant.updated", reauthentication_flag=True)},
            swallow=False,
        )
        for message in replay:
            self._notifier.message_created(message, swallow=False)

    def delete_grant(self, grant_id: str) -> None:
        """A Delete Grant request: every call on the grant refused from now on
        (:attr:`Modes.deleted_grant_answer`), and ``grant.deleted`` fires."""
        grant = self._grant(grant_id)
        self._lives.delete(grant["id"])
        self._notifier.notify(
            "grant.deleted", {"object": grant_object(grant, "grant.deleted")}, swallow=False
        )

    def grant_action(self, action: str, grant_id: str, body: dict[str, Any]) -> str:
        """``create``, ``expire``, ``reauthenticate`` or ``delete`` (the control routes'): the state after it.

        Raises
        ------
        KeyError
            An unknown grant, or a deleted one's re-authentication.
        """
        if action == "create":
            self.create_grant(
                grant_id,
                str(body["email"]),
                name=str(body.get("name") or "Agent"),
                provider=str(body.get("provider") or "nylas"),
            )
        else:
            {
                "expire": self.expire_grant,
                "reauthenticate": self.reauthenticate_grant,
                "delete": self.delete_grant,
            }[action](grant_id)
        return self.grant_state(grant_id)

    def grant_state(self, grant_id: str) -> str:
        """``valid``, ``expired`` or ``deleted``."""
        return self._lives.state(self._grant(grant_id)["id"])

    def _grant(self, grant_id: str) -> Json:
        grant = self._mailbox.find_grant(grant_id)
        if grant is None:
            raise KeyError(f"unknown grant {grant_id!r}")
        return grant

    def set_aliases(self, grant_id: str, aliases: Sequence[str]) -> None:
        """The grant's email aliases, returned by ``GET /v3/grants/{id}?expose_aliases=true`` as
        ``email_aliases`` (never in the plain grant object: Nylas "does not store them permanently").
        Its sent copies show one only under :attr:`Modes.sent_from_by_grant` (or ``sent_from``)."""
        with self._lock:
            grant = self._mailbox.locked_find_grant(grant_id)
            if grant is None:
                raise KeyError(f"unknown grant {grant_id!r}")
            if any(not isinstance(a, str) or "@" not in a for a in aliases):
                raise ValueError(f"aliases must be addresses, not {list(aliases)!r}")
            self._mailbox.aliases[grant["id"]] = list(aliases)

    def person_replies(
        self,
        grant_id: str,
        reply_to_message_id: str,
        body: str = "<p>On it.</p>",
        *,
        date: float | None = None,
        from_email: str | None = None,
        to: Sequence[str] | None = None,
    ) -> Json:
        """A colleague answers from the shared mailbox (not through the API): a message of the grant's
        own address (or ``from_email``, one of its aliases) in the thread, in ``sent``, without
        ReplyOnce's metadata, firing ``message.created`` as any message does. A person's or team's
        mailbox (a Google or Microsoft grant) is shared this way; an Agent Account can be too,
        through its web mail. ``to``: the colleague writes to others instead (a forward to the
        warehouse, a note to a teammate), in the thread all the same: that answers nobody."""
        message = self._mailbox.write_from_mailbox(
            grant_id, reply_to_message_id, body, date=date, from_email=from_email, to=to
        )
        self._notifier.message_created(message, swallow=False)
        return copy.deepcopy(message)

    def person_drafts(
        self, grant_id: str, reply_to_message_id: str, body: str = "<p>Let me check.</p>"
    ) -> Json:
        """A colleague starts an answer in the shared mailbox and leaves it as a draft (web mail, not
        the API): a draft of the grant's address in the thread (``draft_ids``, ``has_drafts``), no
        metadata of ours, no notification. Its REST view has no ``date`` unless
        :attr:`Modes.draft_date`. :meth:`person_sends_draft` sends it; nothing else ever does."""
        return self._mailbox.draft_from_mailbox(grant_id, reply_to_message_id, body)

    def person_sends_draft(self, grant_id: str, draft_id: str) -> Json:
        """A person sends a draft from their mail client (a colleague's, or a review draft of ours):
        the draft leaves Drafts and a message of the grant is in ``sent`` -- from the address
        :meth:`Modes.sender_address` gives, with the draft's metadata only under
        :attr:`Modes.draft_send_keeps_metadata`, a new id unless ``draft_send_new_id`` is off --
        firing ``message.created``. Not an API send: never in :attr:`sends`.

        Raises
        ------
        KeyError
            Unknown grant or draft.
        """
        mailbox = self._mailbox
        with mailbox.lock:
            grant = mailbox.locked_find_grant(grant_id)
            draft = mailbox.locked_draft(grant["id"], draft_id) if grant is not None else None
            if grant is None or draft is None:
                raise KeyError(f"unknown draft {draft_id!r} of grant {grant_id!r}")
            message = copy.deepcopy(draft)
            sent_as(message, grant, self.modes, mailbox.now())
            message.pop("reply_to_message_id", None)
            if self.modes.draft_send_new_id:
                message["id"] = f"msg-{uuid.uuid4().hex}"
            mailbox.locked_remove_draft(draft_id)
            thread = mailbox.locked_thread_for(grant["id"], message["thread_id"])
            mailbox.locked_store(message, thread, outbound=True)
            sent = copy.deepcopy(message)
        self._notifier.message_created(sent, swallow=False)
        return sent

    def deliver_forged_own(
        self,
        grant_id: str,
        *,
        reply_to_message_id: str | None = None,
        folder: str = "inbox",
        subject: str = "Re: your question",
        body: str = "<p>Please disregard our previous answer.</p>",
        **options: object,
    ) -> Json:
        """An inbound message whose ``From`` is the grant's own address (a spoofer's, or a bounce of
        it), filed in ``folder`` (``inbox`` or ``junk`` as a provider's filter decides): not in
        ``sent``, not a send, no metadata of ours. With ``reply_to_message_id`` it names that message
        in ``In-Reply-To``/``References`` and joins its thread, as a forged answer to a customer
        would. Other keywords go to :meth:`deliver_inbound`."""
        grant = self._mailbox.find_grant(grant_id)
        if grant is None:
            raise KeyError(f"unknown grant {grant_id!r}")
        return self.deliver_inbound(
            grant["id"],
            from_email=grant["email"],
            from_name=grant["name"],
            subject=subject,
            body=body,
            reply_to_message_id=reply_to_message_id,
            folder=folder,
            **options,  # type: ignore[arg-type]
        )

    def add_folders(self, grant_id: str, names: Sequence[str]) -> None:
        """Folders a person made in the grant (labels, rules' folders), listed before the system ones."""
        with self._mailbox.lock:
            self._mailbox.user_folders.setdefault(grant_id, []).extend(names)

    def deliver_inbound(
        self,
        grant_id: str,
        *,
        from_email: str,
        subject: str,
        body: str,
        from_name: str = "",
        reply_to: Sequence[Mapping[str, str]] | None = None,
        thread_id: str | None = None,
        reply_to_message_id: str | None = None,
        headers: Sequence[Mapping[str, str]] | Mapping[str, str] | None = None,
        date: float | None = None,
        to_email: str | None = None,
        message_id: str | None = None,
        folder: str = "inbox",
        also_to: Sequence[str] = (),
        addressed_to: Sequence[str] | None = None,
        notify: bool = True,
        authentication_results: str | Sequence[str] | None = None,
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> Json:
        """Put an inbound message in the grant's mailbox (its inbox unless ``folder`` says otherwise)
        and fire ``on_message_created``.

        Parameters
        ----------
        grant_id : str
            Receiving grant (must have been added); its email address works too.
        from_email, subject, body : str
            Sender and content.
        from_name : str
            Sender's display name.
        reply_to : list of {name, email} or None
            The message's ``Reply-To`` addresses.
        thread_id : str or None
            Join this thread; an unknown id creates a thread with that id (readable ids in tests).
        reply_to_message_id : str or None
            Join the thread of this message and set ``in_reply_to`` (and the ``In-Reply-To`` and
            ``References`` headers, unless given) to it.
        headers : list of {name, value}, mapping, or None
            Message headers (e.g. ``Auto-Submitted``); stored as a list of ``{name, value}``. A
            ``Message-ID`` is added when absent.
        date : float or None
            Unix seconds, sender-supplied (it may be skewed); defaults to the emulator clock. It
            never changes the message's place in listings, which is its arrival.
        to_email : str or None
            Recipient; defaults to the grant's address.
        message_id : str or None
            Force the message id, e.g. an IMAP-style ``<abc/def@host>`` that must be URL-encoded in
            paths; defaults to a fresh ``msg-<hex>``.
        folder : {"inbox", "junk", "trash", "archive"}
            The system folder the message is filed in (https://developer.nylas.com/docs/v3/agent-accounts/mailboxes/).
        also_to : sequence of str
            Other grants the same email is addressed to (ids or addresses). Each mailbox gets its
            own message -- own id, own thread (joined by ``In-Reply-To`` when that grant holds the
            parent), own ``message.created`` -- with the same headers, ``Message-ID`` included, and
            every agent address in ``to``: what any mail system does with one email to two
            mailboxes (Nylas documents nothing specific). ``message_id``, ``thread_id`` and
            ``reply_to_message_id`` apply to the first grant's copy only.
        addressed_to : sequence of str or None
            The ``To`` of every copy when a group, distribution list or alias delivered the email
            (``team@``, ``help@``): no grant's own address is named. ``None``: the grants' addresses.
        notify : bool
            Fire ``on_message_created`` (default). Whether ``message.created`` fires for mail
            filed in junk is not documented: ``notify=False`` is the other way.
        authentication_results : str, sequence of str, or None
            The receiving provider's ``Authentication-Results`` header value(s), stamped *above*
            every header in ``headers`` (RFC 8601: a receiver adds its own on top, so the topmost is
            the one to trust and a lower one may be the sender's forgery);
            :func:`devstack.nylas.mailbox.authentication_results` writes one (``dmarc=pass``,
            ``dkim=pass header.d=...``). ``None`` (default): the provider stamped none.
        attachments : sequence of mappings
            Files the message carries: ``filename``, ``content_type``, ``content`` (bytes), and
            optionally ``content_id`` and ``is_inline`` (an inline image) and ``listed_size`` (a size
            the listing claims, not the bytes'). Listed on the message as Nylas lists them; their
            bytes served by ``GET .../attachments/{id}/download?message_id=…``.

        Returns
        -------
        dict
            The first grant's stored message object, with its ``headers`` (the other copies are in
            :meth:`mailbox`).

        Raises
        ------
        KeyError
            Unknown grant or unknown ``reply_to_message_id``.
        ValueError
            The thread belongs to another grant, ``thread_id`` and ``reply_to_message_id`` disagree,
            or ``message_id`` is already taken.
        """
        messages = self._mailbox.receive(
            grant_id,
            from_email=from_email,
            from_name=from_name,
            subject=subject,
            body=body,
            reply_to=reply_to,
            thread_id=thread_id,
            reply_to_message_id=reply_to_message_id,
            headers=headers,
            date=date,
            to_email=to_email,
            message_id=message_id,
            folder=folder,
            also_to=also_to,
            addressed_to=addressed_to,
            authentication=authentication_results,
            attachments=attachments,
        )
        # Outside the lock: the callback may call back into the emulator (over HTTP or directly). An
        # expired or deleted grant's mail is not notified (devstack.nylas.grant_life).
        for message in messages if notify else ():
            if not self._lives.hold(message["grant_id"], message["id"]):
                self._notifier.message_created(message, swallow=False)
        return copy.deepcopy(messages[0])

    def forget_attachment(self, attachment_id: str) -> None:
        """The provider lost a file (deleted at the source): its download answers ``404`` from now on."""
        with self._lock:
            self._mailbox.files.forget(attachment_id)

    def folder_id(self, grant_id: str, name: str) -> str:
        """The id ``GET .../folders`` gives the grant's system folder ``name`` (``"junk"``, ...)."""
        return folder_id(grant_id, name)

    def release_queued(
        self,
        message_ids: Sequence[str] | None = None,
        *,
        fail: bool | Callable[[Json], bool] = False,
        reason: str = DEFAULT_FAILURE_REASON,
    ) -> list[str]:
        """Decide queued sends now (``modes.send_queue``), in acceptance order; returns their ids.

        Each one either goes out -- stored in ``sent`` under the id its ``202`` gave, in
        :attr:`sends`, ``on_message_created`` then ``on_notification("message.delivered", ...)`` --
        or fails: ``on_notification("message.send_failed", ...)`` with ``reason``, in
        :attr:`failed_sends`, never in the mailbox (a draft it came from stays in Drafts).

        Parameters
        ----------
        message_ids : sequence of str or None
            Which queued messages (the ``data.id`` of their ``202``); ``None``: all of them.
        fail : bool or callable
            One answer for all, or a per-message policy ``fail(message) -> bool``.
        reason : str
            ``reason`` (and ``error.message``) of a ``message.send_failed``.

        Raises
        ------
        KeyError
            One of ``message_ids`` is not queued (nothing is released then).
        """
        return self._send.queue.release(message_ids, fail=fail, reason=reason)

    def inject(self, method: str, path_regex: str, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests matching ``method`` and ``path_regex``.

        The regex is searched (``re.search``) in the request path as received -- percent-encoded,
        without the query string -- so anchor it (``/messages/send$``) when it matters. Faults are
        consulted in injection order and the first one that matches is used.
        """
        with self._lock:
            self._faults.inject(method, path_regex, fault, times)

    def reset(self) -> None:
        """Forget grants, messages, threads, counters, faults, idempotency keys and the clock offset.

        Every mode goes back to off (:meth:`Modes.reset`, ``send_accepts_with_202`` and
        ``webhook_includes_headers`` included) and queued sends are dropped unsent;
        ``on_message_created``, ``on_notification`` and ``on_send_started`` are wiring installed by
        whoever started the emulator (e.g. the local stack) and are kept.
        """
        with self._lock:
            self._mailbox.clear()
            self._lives.clear()
            self._send.clear()
            self._drafts.clear()
            self._webhooks.clear()
            self._faults.clear()
            self._requests = []
            self._clock_offset = 0.0
            self.modes.reset()
        self._latency.reset()

    # ---- test-facing counters ----------------------------------------------------------------------

    @property
    def sends(self) -> list[SendRecord]:
        """Every send that put an email on the wire, in order (replays and rejections excluded)."""
        return self._send.records()

    @property
    def queued_sends(self) -> list[SendRecord]:
        """Sends answered ``202`` and not decided yet, in acceptance order (``message``: as it will be
        stored, under the id the ``202`` gave)."""
        return self._send.records("queued")

    @property
    def failed_sends(self) -> list[SendRecord]:
        """Queued sends that failed (``message.send_failed``), in order; never in the mailbox."""
        return self._send.records("failed")

    @property
    def drafts(self) -> list[DraftRecord]:
        """Every draft created through ``POST .../drafts``, in order (deleted and sent ones too)."""
        return self._drafts.records()

    @property
    def send_attempts(self) -> list[SendAttempt]:
        """Every request that reached the send endpoint, in order: sends, replays, 409s, errors."""
        return self._send.attempt_records()

    @property
    def requests(self) -> list[tuple[str, str]]:
        """``(method, path)`` of every API request received, faulted ones included, in arrival order.

        The ``/_emulator/`` control routes are not Nylas requests and are not counted.
        """
        with self._lock:
            return list(self._requests)

    def count(self, method: str, path_prefix: str) -> int:
        """Number of requests received with ``method`` whose path starts with ``path_prefix``."""
        method = method.upper()
        with self._lock:
            return sum(1 for m, p in self._requests if m == method and p.startswith(path_prefix))

    def sent_messages(self, grant_id: str | None = None, thread_id: str | None = None) -> list[Json]:
        """Messages that went out through send, in send order, optionally filtered."""
        return self._send.sent_messages(grant_id, thread_id)

    def mailbox(self, grant_id: str | None = None) -> list[tuple[float, Json]]:
        """Every message (inbound and sent; not drafts) with the real time it appeared, in arrival order.

        Folders are names here (``"inbox"``, ``"sent"``, ``"junk"``...); REST answers carry ids.
        """
        return self._mailbox.arrivals(grant_id)

    def webhooks(self) -> list[Json]:
        """Every webhook destination, in creation order, *with* its ``webhook_secret``.

        The secret is absent from the API's GET answers, as in Nylas; tests read it here to sign
        notifications the way Nylas would, or to check what an operator command stored.
        """
        with self._lock:
            return [copy.deepcopy(w) for w in self._webhooks.destinations.values()]

    def webhook(self, webhook_id: str) -> Json:
        """One webhook destination with its secret; ``KeyError`` when unknown."""
        with self._lock:
            return copy.deepcopy(self._webhooks.destinations[webhook_id])

    @property
    def challenges(self) -> list[Json]:
        """Every challenge GET made, in order: ``{url, status, verified, error}`` (status 0: no answer)."""
        with self._lock:
            return [dict(c) for c in self._webhooks.challenges]

    # ---- HTTP handling -----------------------------------------------------------------------------

    def _handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response | None:
        """Answer one request; ``None`` means "close the connection without answering"."""
        split = urlsplit(target)
        path = split.path
        if path.startswith(CONTROL_PREFIX):
            # Not Nylas: not counted, never faulted.
            segments = [unquote(s) for s in path[len(CONTROL_PREFIX) :].rstrip("/").split("/")]
            return _guarded(method, path, lambda: self._control.route(method, segments, body))
        with self._lock:
            self._requests.append((method, path))
            fault = self._faults.take(method, path)
        if fault is not None and fault.kind == "status":
            return fault_response(fault)
        request = Request(
            method=method,
            path=path,
            segments=[unquote(s) for s in path.rstrip("/").split("/")[1:]],
            query=parse_qs(split.query),
            headers=headers,
            body=body,
        )
        label = _latency_route(request)
        delay = fault.seconds if fault is not None and fault.kind == "delay" else 0.0
        if self.modes.latency:
            delay += self._latency.draw(self.modes.latency, self.modes.latency_seed, label)
        pause = Pause(delay)
        response = _guarded(method, path, lambda: self._route(request, label, pause))
        pause()
        if fault is not None and fault.kind == "lose_response":
            return None
        return response

    def _route(self, request: Request, label: str, pause: Pause) -> Response:
        if label not in ("send", "draft_send"):
            pause()  # a send spends its delay inside, while its key is in flight
        if not self._authorized(request.headers.get("authorization", "")):
            return error(401, "unauthorized", "Unauthorized: missing or invalid API key")
        segments = request.segments
        unknown = error(404, "not_found_error", f"no such endpoint: {request.method} {request.path}")
        if segments[:2] == ["v3", "webhooks"]:
            return self._webhooks.route(request.method, segments[2:], request.body) or unknown
        if len(segments) < 3 or segments[:2] != ["v3", "grants"]:
            return unknown
        grant = self._mailbox.find_grant(segments[2])
        if grant is None:
            return error(404, "not_found_error", f"grant {segments[2]!r} not found")
        rest = segments[3:]
        state = self._lives.state(grant["id"])
        if state == DELETED:
            if self.modes.deleted_grant_answer == "unauthorized":
                return error(401, "unauthorized", f"grant {grant['id']!r} was deleted")
            return error(404, "not_found_error", f"grant {grant['id']!r} not found")
        if state == EXPIRED and (rest or request.method != "GET"):
            # GET /v3/grants/{id} still answers, with grant_status "invalid"; everything on its data 401.
            return error(401, "unauthorized", f"grant {grant['id']!r} expired: it must be re-authenticated")
        if request.method == "GET" and not rest:
            if (request.param("expose_aliases") or "").lower() == "true":
                # https://developer.nylas.com/docs/reference/api/manage-grants/get_grant_by_id/: "the
                # response will include an array of email aliases associated with the grant"
                # (documented for Google and Microsoft grants; the emulator gives whatever
                # set_aliases gave the grant, [] for none).
                with self._lock:
                    grant["email_aliases"] = list(self._mailbox.aliases.get(grant["id"], []))
            return ok(grant)
        if label == "send":
            return self._send.send(grant, request, pause)
        with self._lock:
            download = self._mailbox.files.route(request, grant, rest)
        if download is not None:
            return download
        answer = self._drafts.route(request, grant, rest, pause) or self._messages.route(request, grant, rest)
        return answer or unknown

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        # compare_digest: no reason to teach anyone timing leaks, even in a test double.
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode(), self.api_key.encode()
        )


def _latency_route(request: Request) -> str:
    """The :attr:`Modes.latency` route name of a request (``""``: none)."""
    segments, method = request.segments, request.method
    if segments[:2] == ["v3", "webhooks"]:
        return "webhooks"
    if segments[:2] != ["v3", "grants"] or len(segments) < 3:
        return ""
    rest = segments[3:]
    if not rest:
        return "grant"
    if method == "POST" and rest == ["messages", "send"]:
        return "send"
    if rest[0] == "drafts":
        return "draft_send" if method == "POST" and len(rest) == 2 else "drafts"
    if rest[0] == "messages":
        return "messages" if len(rest) == 1 else "message"
    return {"threads": "thread", "folders": "folders"}.get(rest[0], "")


def _guarded(method: str, path: str, route: Callable[[], Response]) -> Response:
    try:
        return route()
    except Exception:
        # An emulator bug must be loud in the test log, but must not kill the server thread.
        _log.exception("nylas emulator failed on %s %s", method, path)
        return error(500, "api_error", "internal emulator error")
