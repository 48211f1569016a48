"""The mailbox as the record of last resort: every reply says, in its own metadata, what it answers.

Our tables are not the only record of which messages were answered: a
point-in-time restore, a replica that lags or a recreated table forgets. The
replies themselves remember. Each carries in its ``metadata`` (returned on
every message object, listings included; Agent Accounts accept it too):

``key1``
    the intent id (indexed: ``metadata_pair=key1:<id>`` finds the reply);
``key2``
    the message it replies to (indexed: an operator can ask "was X answered?");
``replyonce_thread``
    the thread, so a ``message.delivered`` / ``message.send_failed`` finds its intent;
``replyonce_review``
    ``"1"`` on a review draft: if a person sends it and the provider keeps its
    metadata, the sent message is still known for a person's choice to send;
``replyonce_covers``, ``replyonce_covers_2``, ...
    a 16-hex-digit digest of every message id the reply covers, space-separated
    (values hold at most 500 characters; ids can be long, digests are not).

:func:`covered_in_mailbox` reads it back from the thread listing the replier
reads anyway, so a message answered by a reply in the thread is never
answered again, whatever our tables say.
"""

import hashlib
from collections.abc import Iterable, Mapping

from replyonce.mail import Mail

INTENT_KEY = "key1"
TARGET_KEY = "key2"
THREAD_KEY = "replyonce_thread"
COVERS_KEY = "replyonce_covers"
REVIEW_KEY = "replyonce_review"
_DIGEST_CHARACTERS = 16
_MAX_VALUE_LENGTH = 500
# Nylas allows 50 pairs; the three above and a margin for an agent's own keys leave 40 for digests.
_MAX_COVERS_VALUES = 40
_DIGESTS_PER_VALUE = (_MAX_VALUE_LENGTH + 1) // (_DIGEST_CHARACTERS + 1)
MAX_COVERED_IDS = _MAX_COVERS_VALUES * _DIGESTS_PER_VALUE
"""The largest burst one reply can record in its metadata."""


def digest(message_id: str) -> str:
    """The short, fixed-length stand-in of a message id in a reply's metadata."""
    return hashlib.sha256(message_id.encode()).hexdigest()[:_DIGEST_CHARACTERS]


def reply_metadata(
    intent_id: str, target_id: str, thread_id: str, covered: Iterable[str], *, review: bool = False
) -> dict[str, str]:
    """The metadata every reply (and every review draft, ``review``) is sent with.

    Raises
    ------
    ValueError
        More covered ids than :data:`MAX_COVERED_IDS` (the plan bounds a burst below it).
    """
    digests = list(dict.fromkeys(digest(m) for m in covered))
    if len(digests) > MAX_COVERED_IDS:
        raise ValueError(f"a reply can record at most {MAX_COVERED_IDS} covered messages, not {len(digests)}")
    metadata = {INTENT_KEY: intent_id, TARGET_KEY: target_id, THREAD_KEY: thread_id}
    if review:
        metadata[REVIEW_KEY] = "1"
    for index in range(0, len(digests), _DIGESTS_PER_VALUE):
        name = COVERS_KEY if index == 0 else f"{COVERS_KEY}_{index // _DIGESTS_PER_VALUE + 1}"
        metadata[name] = " ".join(digests[index : index + _DIGESTS_PER_VALUE])
    return metadata


def metadata_of(message: Mail) -> Mapping[str, str]:
    """The message's string metadata pairs (:attr:`replyonce.mail.Mail.metadata`)."""
    return message.metadata


def carries_intent_id(message: Mail) -> bool:
    """Whether ``message`` carries an intent id of ReplyOnce's in its metadata: every reply (and review
    draft) ReplyOnce makes does, and only the API can set metadata, so no inbound mail does."""
    return INTENT_KEY in message.metadata


def is_reviewed_draft(message: Mail) -> bool:
    """Whether ``message`` is a review draft of ours (or a person's send of one that kept its metadata)."""
    return carries_intent_id(message) and metadata_of(message).get(REVIEW_KEY) == "1"


def is_reply_of(message: Mail, intent_id: str) -> bool:
    """Whether ``message`` is the reply of intent ``intent_id``: it carries that id in its metadata.

    Why the id and not the id alone of what a search returned: a search filter Nylas ignored must not
    turn someone else's message into "our reply". Why not ``from``: a grant's alias, or a provider that
    rewrites ``From``, shows our reply under another address; only the API sets metadata.
    """
    return metadata_of(message).get(INTENT_KEY) == intent_id


def covered_in_mailbox(messages: Iterable[Mail]) -> tuple[frozenset[str], frozenset[str]]:
    """What our replies among ``messages`` say they cover: ``(message ids, digests)``.

    A message is covered when its id is a reply's ``key2`` or its digest is
    in a reply's ``replyonce_covers*`` (see :func:`is_covered`). A reply is
    ours by its metadata wherever it sits and whatever its ``from`` shows (an
    alias: a reply recognised by its sender alone was sent a second time).
    """
    targets: set[str] = set()
    digests: set[str] = set()
    for message in messages:
        if not carries_intent_id(message):
            continue
        metadata = metadata_of(message)
        target = metadata.get(TARGET_KEY, "")
        if target:
            targets.add(target)
        for name, value in metadata.items():
            if name.startswith(COVERS_KEY):
                digests.update(value.split())
    return frozenset(targets), frozenset(digests)


def is_covered(message_id: str, mailbox_record: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether the mailbox record of :func:`covered_in_mailbox` covers ``message_id``."""
    targets, digests = mailbox_record
    return message_id in targets or digest(message_id) in digests
