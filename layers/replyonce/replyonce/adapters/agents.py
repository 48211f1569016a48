"""The agents ReplyOnce ships (``template``, ``bedrock``), and loading the team's own (``module:function``).

``REPLY_AGENT`` names the agent: ``template`` acknowledges without any network, ``bedrock`` asks a
Bedrock model through the Converse API, and ``module:function`` is imported
once per container from the function's code (``functions/replier/``) or the
layer. Each follows the contract of ``replyonce.agent``.
"""

import importlib
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from replyonce.agent import (
    AgentRejected,
    Attachment,
    AttachmentGone,
    AttachmentTooLarge,
    Conversation,
    Handoff,
    Message,
    Outcome,
    Reply,
)
from replyonce.config import AGENT_CHOICES
from replyonce.exceptions import ConfigurationError
from replyonce.observability import logger
from replyonce.redaction import redact_addresses
from replyonce.rules.attachments import sniffed_type
from replyonce.rules.text import QUOTE_MARKER, UNSURE_MARKER

Agent = Callable[[Conversation], Outcome]
"""What an agent is: one conversation in, a ``Reply``, ``NoReply`` or ``Handoff`` out."""

# Bedrock's 4xx answers a later try can succeed with: a timeout and throttling. Every other 4xx
# (AccessDeniedException, ValidationException, ResourceNotFoundException, ...) is final.
_RETRIED_CLIENT_STATUSES = frozenset({408, 429})
_MAX_TURN_CHARACTERS = 8000
DEFAULT_SYSTEM_PROMPT = (
    "You are a courteous support agent answering an email conversation. Reply in plain prose, in the "
    "customer's language, in at most 150 words, to everything the customer asked since your last reply. "
    "Do not invent facts, order numbers or promises."
)
# Always sent after the operator's prompt, which may replace the built-in one but not this: the rules
# refuse machine mail by the signs it carries (replyonce.rules.screening), and a notice that carries none
# (a carrier's, a shop's, a ticket system's) reaches the model, which can tell it from a person's mail by
# what it says. Both verdicts hand the burst to a person (model_verdict); any other answer is the Reply.
VERDICT_INSTRUCTIONS = (
    "Before you write a reply, decide whether one is wanted. If the customer's latest message was written "
    "by a machine, not by a person (an order, shipping, payment or account notice, a receipt, a "
    "newsletter, an alert, a delivery report, an automatic reply), answer with one line: NO_REPLY: and "
    "what the message is. If you cannot answer without inventing facts, order numbers or promises, answer "
    "with one line: HAND_OFF: and why; a colleague will answer. Otherwise write the reply itself, and "
    "never begin it with either word."
)
_VERDICT = re.compile(r"(NO_REPLY|HAND_OFF)\b[ \t*`_]*:?[ \t]*([^\n]*)", re.IGNORECASE)
_MAX_REASON_CHARACTERS = 300


# What Converse takes with a user message (the Message type of the Bedrock API reference): up to 20 images,
# each at most 3.75 MB; up to five documents, each at most 4.5 MB; a document only beside a text block.
CONVERSE_IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
CONVERSE_MAX_IMAGES = 20
CONVERSE_MAX_IMAGE_BYTES = 3_750_000
CONVERSE_MAX_DOCUMENTS = 5
CONVERSE_MAX_DOCUMENT_BYTES = 4_500_000
# A document's name: "alphanumeric characters, whitespace characters (no more than one in a row), hyphens,
# parentheses, and square brackets" (the DocumentBlock type).
_NOT_IN_A_DOCUMENT_NAME = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")
_LOOKS_READABLE = re.compile(r"\.(pdf|png|jpe?g|gif|webp)$", re.IGNORECASE)


@dataclass(frozen=True)
class Files:
    """What the model is given of the burst's files: blocks by message id, and what it could not read."""

    blocks: Mapping[str, tuple[dict[str, Any], ...]]
    unread: tuple[str, ...]


def _document_name(filename: str, index: int) -> str:
    stem = filename.rsplit(".", 1)[0]
    cleaned = " ".join(_NOT_IN_A_DOCUMENT_NAME.sub(" ", stem).split())
    # Unique in the request, as Converse wants document names to be.
    return f"{cleaned or 'document'} [{index}]"


def _readable_kind(attachment: Attachment) -> str:
    """``image``, ``document`` or ``""``, by what the file claims to be (its bytes decide after reading)."""
    claimed = attachment.content_type
    if claimed in CONVERSE_IMAGE_FORMATS or claimed == "application/pdf":
        return "image" if claimed.startswith("image/") else "document"
    if _LOOKS_READABLE.search(attachment.filename):
        return "document" if attachment.filename.lower().endswith(".pdf") else "image"
    return ""


def converse_files(conversation: Conversation) -> Files:
    """The burst's images and PDFs as Converse image and document blocks, within its limits, and a line for
    every file the model is not given (its name and why).

    Why the bytes decide: a file named ``invoice.pdf`` may be a zip, and Converse refuses a document
    that is not what its format says. Only the burst's files are read (an older message's were
    answered already); a file is read at most to the model's limit.
    """
    blocks: dict[str, list[dict[str, Any]]] = {}
    unread: list[str] = []
    images = documents = 0
    for message in conversation.to_answer:
        for attachment in message.attachments:
            name = attachment.filename or "an unnamed file"
            kind = _readable_kind(attachment)
            if not kind:
                unread.append(f"{name} ({attachment.content_type} is not an image or a PDF)")
                continue
            if (kind == "image" and images >= CONVERSE_MAX_IMAGES) or (
                kind == "document" and documents >= CONVERSE_MAX_DOCUMENTS
            ):
                unread.append(f"{name} (more {kind}s than the model takes at once)")
                continue
            limit = CONVERSE_MAX_IMAGE_BYTES if kind == "image" else CONVERSE_MAX_DOCUMENT_BYTES
            try:
                content = attachment.read(limit)
            except AttachmentTooLarge:
                unread.append(f"{name} (larger than the model takes, or than this reply may read)")
                continue
            except AttachmentGone:
                unread.append(f"{name} (no longer in the mailbox)")
                continue
            actual = sniffed_type(content)
            if actual in CONVERSE_IMAGE_FORMATS:
                if images >= CONVERSE_MAX_IMAGES:
                    unread.append(f"{name} (more images than the model takes at once)")
                    continue
                images += 1
                block = {"image": {"format": CONVERSE_IMAGE_FORMATS[actual], "source": {"bytes": content}}}
            elif actual == "application/pdf" and len(content) <= CONVERSE_MAX_DOCUMENT_BYTES:
                if documents >= CONVERSE_MAX_DOCUMENTS:
                    unread.append(f"{name} (more documents than the model takes at once)")
                    continue
                documents += 1
                block = {
                    "document": {
                        "format": "pdf",
                        "name": _document_name(attachment.filename, documents),
                        "source": {"bytes": content},
                    }
                }
            else:
                unread.append(f"{name} (its content is not an image or a PDF the model reads)")
                continue
            blocks.setdefault(message.id, []).append(block)
    return Files({k: tuple(v) for k, v in blocks.items()}, tuple(unread))


def unread_note(unread: Sequence[str]) -> str:
    """What the reply says of the files the model could not read."""
    return "I could not open these attachments: " + "; ".join(unread) + "." if unread else ""


def template_agent(conversation: Conversation) -> Reply:
    """An acknowledgement that names what the customer wrote about: no network, the same text every time."""
    target = conversation.target
    name = target.sender_name or target.sender.split("@")[0] or "there"
    subjects = list(dict.fromkeys(m.subject.strip() for m in conversation.to_answer if m.subject.strip()))
    about = " and ".join(f"\u201c{s}\u201d" for s in subjects) or "your message"
    count = len(conversation.to_answer)
    messages = "your message" if count == 1 else f"your {count} messages"
    return Reply(
        text=f"Hi {name},\n\nThanks for {messages} about {about}. We have received "
        f"{'it' if count == 1 else 'them'} and will follow up shortly.\n\n"
        f"\u2014 {conversation.agent.name or 'The support team'}"
    )


_REST_HEADER = (
    "[The whole message as received, possibly quoted history; read it only for what the text above lacks:]"
)


def turn_text(message: Message) -> str:
    """A message as the model reads it: who sent it (a customer's), the subject, the new text first,
    then — when the whole body holds more — the whole body, every line marked as quoted (``> ``), so a
    cut in the wrong place cannot hide the question and history is never read as the customer's.

    Why the sender: a notice the rules let through (no machine sign in its headers) often says what it
    is in its address (``ship-confirm@``), which the model weighs for :data:`VERDICT_INSTRUCTIONS`.
    """
    name = f"{message.sender_name} " if message.sender_name else ""
    sender = "" if message.from_agent else f"From: {name}<{message.sender}>"
    text = f"{sender}\nSubject: {message.subject}\n\n{message.text}".strip()
    whole = message.full_text.strip()
    markers = (QUOTE_MARKER, UNSURE_MARKER)
    said = " ".join(line for line in message.text.splitlines() if line.strip() not in markers).split()
    if not whole or whole.split() == said:
        return text
    quoted = "\n".join(f"> {line}".rstrip() for line in whole.splitlines())
    return f"{text}\n\n{_REST_HEADER}\n{quoted}"


def model_verdict(text: str) -> Handoff | None:
    """The hand-off the model's answer asks for when it calls the mail a machine's (``NO_REPLY: what it
    is``) or hands the burst off (``HAND_OFF: why``), as :data:`VERDICT_INSTRUCTIONS` asks; ``None`` when
    the answer is a reply.

    Why a ``NO_REPLY`` is handed off too, not a ``NoReply``: the model judges what the sender wrote, and
    a model that takes a customer's message for a notice must not leave that customer unanswered with only
    a log line to show for it (invariant 7). Its reason says which verdict it was, for the team reading
    ``Needs a person``.

    Only an answer that *begins* with a verdict is one: a reply that quotes the word later is still a
    reply. Markdown around the word (``**NO_REPLY**``) is tolerated, as models add it. The reason is its
    first line, with addresses redacted (it is logged) and cut to a log line's length.
    """
    match = _VERDICT.match(text.strip().lstrip("*`_ "))
    if match is None:
        return None
    reason = redact_addresses(match.group(2).strip(" *`_"))[:_MAX_REASON_CHARACTERS]
    if match.group(1).upper() == "NO_REPLY":
        return Handoff(f"the model: written by a machine: {reason or 'no person wrote this'}")
    return Handoff(f"the model: {reason or 'a person should answer'}")


class BedrockAgent:
    """Answers with a Bedrock model (Converse API), given the whole conversation as turns.

    The customers' messages are user turns and the agent's earlier replies
    assistant turns (consecutive messages of one side are joined, as Converse
    wants the roles to alternate and to start with the user); each is the
    message's new text first, then, where the whole body holds more, the whole
    body marked as quoted (:func:`turn_text`). Instead of replying, the model may say that a machine
    wrote the mail or that a person should answer; either hands the burst to a person
    (:data:`VERDICT_INSTRUCTIONS`, :func:`model_verdict`).

    Parameters
    ----------
    model_id:
        ``BEDROCK_MODEL_ID``: a model or inference profile id.
    bedrock_client:
        A boto3 ``bedrock-runtime`` client (tests use botocore's Stubber).
    system_prompt:
        ``AGENT_SYSTEM_PROMPT`` (template parameter ``AgentSystemPrompt``): the operator's instructions.
    """

    def __init__(
        self, model_id: str, bedrock_client: Any, system_prompt: str = DEFAULT_SYSTEM_PROMPT
    ) -> None:
        self._model_id = model_id
        self._bedrock = bedrock_client
        self._system_prompt = system_prompt or DEFAULT_SYSTEM_PROMPT

    def turns(self, conversation: Conversation, files: Files | None = None) -> list[dict[str, Any]]:
        """The Converse ``messages``: alternating user/assistant turns, starting with the user; the burst's
        images and PDFs (``files``) as blocks after the text of the user turn they came with, and the
        files the model is not given named at the end of the last turn."""
        turns: list[dict[str, Any]] = []
        for message in conversation.messages:
            role = "assistant" if message.from_agent else "user"
            if not turns and role == "assistant":
                continue  # Converse starts with the user; an opening message of ours is context only
            text = turn_text(message)[:_MAX_TURN_CHARACTERS]
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"][0]["text"] += f"\n\n---\n\n{text}"
            else:
                turns.append({"role": role, "content": [{"text": text}]})
            if role == "user" and files is not None:
                turns[-1]["content"].extend(files.blocks.get(message.id, ()))
        if turns and turns[-1]["role"] == "assistant":
            turns.pop()  # the burst ends the conversation: a turn of ours after it answers nothing
        if turns and files is not None and files.unread:
            turns[-1]["content"][0]["text"] += (
                "\n\n[Attached, but not shown to you: " + "; ".join(files.unread) + ". Do not guess what "
                "they contain; the reply will say they could not be opened.]"
            )
        return turns

    def __call__(self, conversation: Conversation) -> Outcome:
        files = converse_files(conversation)
        try:
            response = self._bedrock.converse(
                modelId=self._model_id,
                system=[{"text": self._system_prompt}, {"text": VERDICT_INSTRUCTIONS}],
                messages=self.turns(conversation, files),
                # Temperature 0: a retry before the reply was stored should draft the same reply.
                inferenceConfig={"maxTokens": 512, "temperature": 0},
            )
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if not isinstance(status, int) or not 400 <= status < 500 or status in _RETRIED_CLIENT_STATUSES:
                raise  # throttling, timeouts, 5xx: the record is retried with backoff
            code = str(exc.response.get("Error", {}).get("Code", ""))
            message = redact_addresses(str(exc.response.get("Error", {}).get("Message", "")))
            raise AgentRejected(
                f"Bedrock {code} ({status}) for model {self._model_id}: {message}. Is model access granted "
                "in the Bedrock console for this region, and is BedrockModelId a model or inference profile "
                "id (us./eu./apac. prefix) that exists here?"
            ) from exc
        parts = response["output"]["message"]["content"]
        text = "\n".join(part["text"] for part in parts if "text" in part).strip()
        if not text:
            raise AgentRejected(f"Bedrock model {self._model_id} answered with no text")
        verdict = model_verdict(text)
        if verdict is not None:
            return verdict
        note = unread_note(files.unread)
        said = f"{text}\n\n{note}" if note else text
        return Reply(text=f"{said}\n\n\u2014 {conversation.agent.name or 'The support team'}")


def load_agent(name: str, *, bedrock: Callable[[], Agent]) -> Agent:
    """The agent ``REPLY_AGENT`` names, imported and checked once (at cold start).

    Parameters
    ----------
    name:
        ``template``, ``bedrock`` or ``module:function``.
    bedrock:
        Builds the Bedrock agent (only called for ``bedrock``).

    Raises
    ------
    ConfigurationError
        The module does not import, has no such attribute, the attribute is
        not callable or cannot take one positional argument: a configuration
        error the replier reports in one log line, sending its records back
        to the queue.
    """
    if name == "template":
        return template_agent
    if name == "bedrock":
        return bedrock()
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"REPLY_AGENT must be {AGENT_CHOICES}, got {name!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigurationError(
            f"REPLY_AGENT={name}: module {module_name!r} does not import: {type(exc).__name__}: {exc}"
        ) from exc
    agent = getattr(module, attribute, None)
    if agent is None:
        raise ConfigurationError(f"REPLY_AGENT={name}: module {module_name!r} has no {attribute!r}")
    if not callable(agent):
        raise ConfigurationError(f"REPLY_AGENT={name}: {attribute!r} is not callable")
    try:
        inspect.signature(agent).bind(object())
    except TypeError as exc:
        raise ConfigurationError(
            f"REPLY_AGENT={name}: {attribute} must take one argument (a Conversation): {exc}"
        ) from exc
    except ValueError:
        pass  # a builtin without an introspectable signature: trust it
    logger.info("agent loaded", extra={"agent": name})
    return agent
