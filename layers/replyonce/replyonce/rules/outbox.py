"""The reply as it is stored in the outbox: the exact request, built once from the agent's answer.

Why once: a send can take minutes, a worker can die in the middle, a record
can be redriven hours later, and an agent answers differently each time it is
asked. With the request stored before the first attempt, every attempt sends
the same bytes — under the same ``Idempotency-Key`` Nylas replays the first
answer, and after the key's hour the reply is looked for in the mailbox by
its intent id before anything is sent again.
"""

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from replyonce.agent import Reply
from replyonce.mail import Mail
from replyonce.outgoing import (
    MAX_MULTIPART_BYTES,
    Encoding,
    encoding_of,
    file_reference,
    json_bytes,
    multipart_bytes,
    references,
)
from replyonce.rules.coverage import reply_metadata
from replyonce.rules.recipients import header_text
from replyonce.rules.screening import REPLYONCE_MARK
from replyonce.state import Intent, IntentKind

# RFC 3834: our replies say they are automatic, so other agents (and other ReplyOnce deployments) do not
# answer them. Nylas does not document that it accepts non-``X-`` custom headers: a send it refuses for
# them goes out again without (``replyonce.answers``); our metadata still marks the reply as ours.
AUTO_SUBMITTED_HEADER = {"name": "Auto-Submitted", "value": "auto-replied"}
# Its X- companions, which survive a provider that keeps only X- custom headers (Microsoft Graph): Exchange
# sends no out-of-office or other automatic answer to a message that suppresses them all ([MS-OXCMAIL]),
# and every ReplyOnce deployment recognises the mark of another (replyonce.rules.screening.REPLYONCE_MARK).
SUPPRESS_AUTO_RESPONSES_HEADER = {"name": "X-Auto-Response-Suppress", "value": "All"}
AUTOMATIC_MARKS = (AUTO_SUBMITTED_HEADER, SUPPRESS_AUTO_RESPONSES_HEADER, REPLYONCE_MARK)

NYLAS_JSON_REQUEST_LIMIT_BYTES = 3_000_000
"""Nylas' limit on a JSON ``POST /messages/send`` or ``POST /drafts``: "request payloads of 3MB or smaller.
The size limit includes the entire HTTP request" (https://developer.nylas.com/docs/v3/email/attachments/;
the send-attachments cookbook: the 3 MB "is the total request body ... subject, body HTML, and other fields
count against it too"). Read in decimal megabytes, the smaller of the two readings of "3MB"."""
REQUEST_HEAD_ALLOWANCE_BYTES = 8_192
"""What the request line and headers take of that limit (the bearer key, the ``Idempotency-Key``, the
content type and length, ``requests``' own): under 1 KB, counted generously."""
MAX_REQUEST_BYTES = NYLAS_JSON_REQUEST_LIMIT_BYTES - REQUEST_HEAD_ALLOWANCE_BYTES
"""The largest request body (its UTF-8 bytes, as ``replyonce.adapters.nylas`` sends it) a reply may have.
Nylas refuses a larger one whatever we do, so it is handed off to a person, never sent nor retried
(``SkipReason.REPLY_TOO_LARGE``)."""


def reply_subject(subject: str) -> str:
    """``Re:`` and the customer's subject (as a header value: :func:`header_text`), once."""
    subject = header_text(subject) or "your message"
    return subject if subject.lower().startswith("re:") else f"Re: {subject}"


def reply_html(reply: Reply) -> str:
    """The body sent: the agent's HTML as given, or its text as escaped paragraphs (lines kept)."""
    if (reply.html or "").strip():
        return str(reply.html)
    return "".join(
        "<p>" + "<br>".join(html.escape(line) for line in p.strip().splitlines()) + "</p>"
        for p in str(reply.text or "").split("\n\n")
        if p.strip()
    )


def _subject(reply: Reply, target: Mail) -> str:
    """The agent's own subject when it gave one that is not blank, else ``Re:`` and the target's."""
    return header_text(reply.subject or "") or reply_subject(target.subject)


def _participant(recipient: Mapping[str, str]) -> dict[str, str]:
    """``recipient`` with its display name as a header value, or without one when nothing is left of it.

    ``replyonce.rules.recipients`` cleans the name it picks already; this is where
    the request is built, so every header value passes here whoever chose it.
    """
    participant = dict(recipient)
    name = header_text(participant.pop("name", ""))
    return {**participant, "name": name} if name else participant


def _custom_header(header: Mapping[str, str]) -> dict[str, str]:
    return {"name": header["name"], "value": header_text(header["value"])}


def _serialise(request: Mapping[str, Any]) -> str:
    return json.dumps(request, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def new_intent(
    *,
    intent_id: str,
    thread_id: str,
    target: Mail,
    covered: tuple[str, ...],
    recipients: Sequence[Mapping[str, str]],
    reply: Reply,
    review: bool,
    now: int,
) -> Intent:
    """The intent for the agent's ``reply``: the request body, serialised once, nothing attempted yet.

    A review intent is a draft (``POST /drafts``, no ``custom_headers``: a
    person sends it, so it is not automatic); a send carries
    ``Auto-Submitted: auto-replied``. Both carry the metadata that makes the
    mailbox the record of last resort (``replyonce.rules.coverage``). Every header
    value — subject, display name, custom header — passes
    :func:`replyonce.rules.recipients.header_text`: no CR/LF reaches a header.
    """
    target_id = target.id
    request: dict[str, Any] = {
        "to": [_participant(recipient) for recipient in recipients],
        "subject": _subject(reply, target),
        "body": reply_html(reply),
        "reply_to_message_id": target_id,
        "metadata": reply_metadata(intent_id, target_id, thread_id, covered, review=review),
    }
    if not review:
        request["custom_headers"] = [_custom_header(header) for header in AUTOMATIC_MARKS]
    if reply.attachments:
        # References only (replyonce.outgoing): the bytes go to the stack's bucket before this is stored.
        request["attachments"] = [file_reference(file) for file in reply.attachments]
    return Intent(
        id=intent_id,
        thread_id=thread_id,
        target_id=target_id,
        covered=covered,
        request=_serialise(request),
        kind=IntentKind.DRAFT if review else IntentKind.SEND,
        created_at=now,
    )


def request_bytes(intent: Intent) -> int:
    """The size of the intent's request as it is sent: its UTF-8 bytes (with its files: as JSON when that
    fits Nylas' JSON limit, else as multipart form data; ``replyonce.outgoing``)."""
    request = intent.payload
    if not references(request) or encoding_of(request, MAX_REQUEST_BYTES) is Encoding.JSON:
        return json_bytes(request) if references(request) else len(intent.request.encode())
    return multipart_bytes(request)


def too_large_reason(intent: Intent) -> str:
    """What the hand-off of a reply Nylas cannot take says: its size and the limit it is over."""
    if references(intent.payload):
        return (
            f"reply_too_large: {request_bytes(intent)} bytes with its files, Nylas takes "
            f"{MAX_REQUEST_BYTES} as JSON and {MAX_MULTIPART_BYTES} as multipart form data"
        )
    return f"reply_too_large: {request_bytes(intent)} bytes, Nylas takes {MAX_REQUEST_BYTES}"


def too_large(intent: Intent) -> bool:
    """Whether Nylas cannot take the intent's request: over :data:`MAX_REQUEST_BYTES` as JSON and, with
    files, over ``replyonce.outgoing.MAX_MULTIPART_BYTES`` as multipart form data too."""
    return encoding_of(intent.payload, MAX_REQUEST_BYTES) is Encoding.TOO_LARGE
