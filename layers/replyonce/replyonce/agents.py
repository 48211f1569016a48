"""The agents ReplyOnce ships (``template``, ``bedrock``), and loading the team's own (``module:function``).

``REPLY_AGENT`` names the agent (``REPLY_DRAFTER``, its old name, is still
read): ``template`` acknowledges without any network, ``bedrock`` asks a
Bedrock model through the Converse API, and ``module:function`` is imported
once per container from the function's code (``functions/replier/``) or the
layer. Each follows the contract of ``replyonce.agent``.
"""

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from replyonce.agent import AgentRejected, Conversation, Message, Outcome, Reply
from replyonce.config import AGENT_CHOICES
from replyonce.exceptions import ConfigurationError
from replyonce.observability import logger
from replyonce.redaction import redact_addresses
from replyonce.text import QUOTE_MARKER, UNSURE_MARKER

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
    """A message as the model reads it: the subject, the new text first, then — when the whole body
    holds more — the whole body, every line marked as quoted (``> ``), so a cut in the wrong place
    cannot hide the question and history is never read as the customer's."""
    text = f"Subject: {message.subject}\n\n{message.text}".strip()
    whole = message.full_text.strip()
    markers = (QUOTE_MARKER, UNSURE_MARKER)
    said = " ".join(line for line in message.text.splitlines() if line.strip() not in markers).split()
    if not whole or whole.split() == said:
        return text
    quoted = "\n".join(f"> {line}".rstrip() for line in whole.splitlines())
    return f"{text}\n\n{_REST_HEADER}\n{quoted}"


class BedrockAgent:
    """Answers with a Bedrock model (Converse API), given the whole conversation as turns.

    The customers' messages are user turns and the agent's earlier replies
    assistant turns (consecutive messages of one side are joined, as Converse
    wants the roles to alternate and to start with the user); each is the
    message's new text first, then, where the whole body holds more, the whole
    body marked as quoted (:func:`turn_text`).

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

    def turns(self, conversation: Conversation) -> list[dict[str, Any]]:
        """The Converse ``messages``: alternating user/assistant turns, starting with the user."""
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
        if turns and turns[-1]["role"] == "assistant":
            turns.pop()  # the burst ends the conversation: a turn of ours after it answers nothing
        return turns

    def __call__(self, conversation: Conversation) -> Reply:
        try:
            response = self._bedrock.converse(
                modelId=self._model_id,
                system=[{"text": self._system_prompt}],
                messages=self.turns(conversation),
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
        return Reply(text=f"{text}\n\n\u2014 {conversation.agent.name or 'The support team'}")


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
