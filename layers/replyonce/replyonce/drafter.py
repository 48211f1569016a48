"""Reply drafters: turn the message to answer into the reply's subject and body.

``template`` (default) is deterministic and needs no network; ``bedrock``
asks a Bedrock model through the Converse API. Deterministic drafts matter:
a re-run sends the same payload under the same ``Idempotency-Key``, which
Nylas replays instead of answering 409.
"""

import html
import re
from dataclasses import dataclass
from typing import Any, Protocol

from botocore.exceptions import ClientError

from replyonce.exceptions import DraftRejectedError
from replyonce.filters import sender_email
from replyonce.observability import logger
from replyonce.redaction import redact_addresses

_TAGS = re.compile(r"<[^>]+>")
_MAX_PROMPT_CHARS = 8000
# Bedrock's 4xx answers that a later try can succeed with: a timeout and throttling. Every other 4xx
# (AccessDeniedException, ValidationException, ResourceNotFoundException, ...) is final.
_RETRIED_CLIENT_STATUSES = frozenset({408, 429})


@dataclass(frozen=True)
class Draft:
    subject: str
    body: str


def reply_subject(subject: str) -> str:
    subject = subject.strip() or "your message"
    return subject if subject.lower().startswith("re:") else f"Re: {subject}"


def plain_text(body: str) -> str:
    """The message body without HTML, for prompts."""
    return html.unescape(_TAGS.sub(" ", body or "")).strip()


class ReplyDrafter(Protocol):
    def draft(self, message: dict[str, Any], agent_name: str) -> Draft: ...


class TemplateDrafter:
    """An acknowledgement that quotes the subject: no network, same output for the same input."""

    def draft(self, message: dict[str, Any], agent_name: str) -> Draft:
        subject = str(message.get("subject") or "")
        senders = message.get("from") or [{}]
        name = str(senders[0].get("name") or sender_email(message).split("@")[0] or "there")
        quoted = html.escape(subject.strip() or "your message")
        signature = html.escape(agent_name or "The support team")
        body = (
            f"<p>Hi {html.escape(name)},</p>"
            f"<p>Thanks for your message about &ldquo;{quoted}&rdquo;. We have received it and will follow up"
            " shortly.</p>"
            f"<p>&mdash; {signature}</p>"
        )
        return Draft(subject=reply_subject(subject), body=body)


class BedrockDrafter:
    """Drafts with a Bedrock model (Converse API).

    Parameters
    ----------
    model_id:
        ``BEDROCK_MODEL_ID``.
    bedrock_client:
        A boto3 ``bedrock-runtime`` client (tests use botocore's Stubber).
    """

    SYSTEM_PROMPT = (
        "You are a courteous support agent answering an email. Reply in plain prose, "
        "in the customer's language, in at most 150 words. Do not invent facts, order numbers or promises."
    )

    def __init__(self, model_id: str, bedrock_client: Any) -> None:
        self._model_id = model_id
        self._bedrock = bedrock_client

    def draft(self, message: dict[str, Any], agent_name: str) -> Draft:
        subject = str(message.get("subject") or "")
        text = plain_text(str(message.get("body") or message.get("snippet") or ""))[:_MAX_PROMPT_CHARS]
        try:
            response = self._bedrock.converse(
                modelId=self._model_id,
                system=[{"text": self.SYSTEM_PROMPT}],
                messages=[{"role": "user", "content": [{"text": f"Subject: {subject}\n\n{text}"}]}],
                # Temperature 0: a re-run should produce the same draft (see module docstring).
                inferenceConfig={"maxTokens": 512, "temperature": 0},
            )
        except ClientError as exc:
            rejected = self._rejected(exc)
            if rejected is None:
                raise  # throttling, timeouts, 5xx: the record is retried with backoff
            raise rejected from exc
        parts = response["output"]["message"]["content"]
        reply = "\n".join(part["text"] for part in parts if "text" in part).strip()
        paragraphs = "".join(f"<p>{html.escape(p.strip())}</p>" for p in reply.split("\n\n") if p.strip())
        signature = html.escape(agent_name or "The support team")
        return Draft(subject=reply_subject(subject), body=f"{paragraphs}<p>&mdash; {signature}</p>")

    def _rejected(self, exc: ClientError) -> DraftRejectedError | None:
        """A final refusal as :class:`DraftRejectedError`, logged once and clearly; ``None`` if retryable."""
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if not isinstance(status, int) or not 400 <= status < 500 or status in _RETRIED_CLIENT_STATUSES:
            return None
        code = str(exc.response.get("Error", {}).get("Code", ""))
        message = redact_addresses(str(exc.response.get("Error", {}).get("Message", "")))
        logger.error(
            "Bedrock refused to draft; not retrying",
            extra={
                "reason": "draft_rejected",
                "status": status,
                "error_code": code,
                "model_id": self._model_id,
                "detail": message,
                # The usual causes, so the log line says what to check.
                "hint": "model access granted in the Bedrock console for this region? BedrockModelId a "
                "model or inference profile id (us./eu./apac. prefix) that exists here?",
            },
        )
        return DraftRejectedError(
            f"Bedrock {code} ({status}) for model {self._model_id}: {message}", code=code, status=status
        )
