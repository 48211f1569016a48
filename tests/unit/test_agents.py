"""The agents: the contract's types, REPLY_AGENT loading, the template and Bedrock agents, the example agent.

Bedrock is a botocore client with a Stubber (every request checked against
the service model): the conversation must reach the model as turns.
"""

import sys
import textwrap
from dataclasses import replace

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from replyonce.adapters.agents import (
    DEFAULT_SYSTEM_PROMPT,
    VERDICT_INSTRUCTIONS,
    BedrockAgent,
    load_agent,
    model_verdict,
    template_agent,
)
from replyonce.agent import (
    AgentIdentity,
    AgentRejected,
    Attachment,
    AttachmentGone,
    AttachmentTooLarge,
    Conversation,
    Handoff,
    Message,
    Mode,
    NoReply,
    Reply,
)
from replyonce.exceptions import ConfigurationError
from replyonce.rules.attachments import AttachmentReader, readable
from tests.converse import converse_answer

PROFILE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
AGENT = AgentIdentity("g1", "support@acme.example", "Acme Support")
ALICE = "From: Alice <alice@example.com>"  # how the model is told who wrote a customer's message


def message(mid, text, *, from_agent=False, subject="Order 1042", name="Alice"):
    sender = AGENT.email if from_agent else "alice@example.com"
    return Message(
        mid, sender, "Acme" if from_agent else name, (), subject, 0, text, f"<p>{text}</p>", from_agent
    )


def conversation(*messages, burst=None, mode=Mode.SEND):
    to_answer = tuple(m for m in messages if burst is None or m.id in burst) if burst else (messages[-1],)
    return Conversation(messages, to_answer, to_answer[-1], AGENT, "key-1", "t1", mode)


# ---- the contract's types ------------------------------------------------------------------------------


def test_a_reply_needs_text_or_html():
    with pytest.raises(ValueError, match="text or html"):
        Reply()
    with pytest.raises(ValueError, match="text or html"):
        Reply(text="  ", html="")
    assert Reply(html="<p>x</p>").review is False


@pytest.mark.parametrize(
    ("mode", "for_real"),
    [("send", True), ("review", True), ("shadow", False), ("replay", False)],
)
def test_only_send_and_review_act_for_real(mode, for_real):
    # Issue 40: shadow mode and a replay ask the agent about mail nobody answers from here.
    talk = conversation(message("m1", "Hi"), mode=mode)
    assert talk.mode is Mode(mode)
    assert talk.mode == mode  # a StrEnum: an agent may compare with the plain string
    assert talk.acts_for_real is for_real is Mode(mode).acts_for_real


def test_a_conversation_with_a_mode_not_in_the_contract_is_refused():
    with pytest.raises(ValueError, match="'live'"):
        conversation(message("m1", "Hi"), mode="live")


# ---- loading REPLY_AGENT -------------------------------------------------------------------------------


@pytest.fixture
def agent_module(tmp_path, monkeypatch):
    """A module of the team's own on the path, as functions/replier/ is in Lambda."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(name, source):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        sys.modules.pop(name, None)
        return name

    return write


def no_bedrock():
    raise AssertionError("not asked for bedrock")


def test_template_and_a_module_function_load(agent_module):
    assert load_agent("template", bedrock=no_bedrock) is template_agent
    name = agent_module("team_agent", "def reply(conversation):\n    return None\n")
    assert load_agent(f"{name}:reply", bedrock=no_bedrock).__name__ == "reply"


@pytest.mark.parametrize(
    ("source", "name", "message"),
    [
        (None, "no_such_module:reply", "does not import: ModuleNotFoundError"),
        ("raise RuntimeError('broken at import')\n", "broken_agent:reply", "does not import: RuntimeError"),
        ("x = 1\n", "attr_agent:reply", "has no 'reply'"),
        ("reply = 42\n", "value_agent:reply", "is not callable"),
        ("def reply():\n    return None\n", "arity_agent:reply", "must take one argument"),
        ("def reply(a, b):\n    return None\n", "two_agent:reply", "must take one argument"),
        (None, "just_a_module", "must be 'template', 'bedrock' or 'module:function'"),
    ],
)
def test_an_agent_that_cannot_be_called_is_a_configuration_error(agent_module, source, name, message):
    if source is not None:
        agent_module(name.split(":")[0], source)
    with pytest.raises(ConfigurationError, match=message):
        load_agent(name, bedrock=no_bedrock)


def test_the_built_in_agents_are_named_once_and_the_template_allows_exactly_them():
    # config.BUILT_IN_AGENTS is the list: the settings accept it, load_agent loads each of it, and the
    # template's ReplyAgent pattern and the error messages name no other.
    import re

    from ops.template import load_template
    from replyonce.config import AGENT_CHOICES, BUILT_IN_AGENTS

    for name in BUILT_IN_AGENTS:
        assert callable(load_agent(name, bedrock=lambda: template_agent))
    parameter = load_template()["Parameters"]["ReplyAgent"]
    alternatives = re.fullmatch(r"\^\(([a-z|]+)\|\[.*\)\$", parameter["AllowedPattern"])
    assert alternatives is not None, parameter["AllowedPattern"]
    assert tuple(alternatives.group(1).split("|")) == BUILT_IN_AGENTS
    assert parameter["Default"] == BUILT_IN_AGENTS[0]
    assert parameter["ConstraintDescription"].startswith(f"must be {AGENT_CHOICES.replace(chr(39), '')} ")
    with pytest.raises(ConfigurationError) as raised:
        load_agent("just_a_module", bedrock=no_bedrock)
    unnamed = [name for name in (*BUILT_IN_AGENTS, "module:function") if f"'{name}'" not in str(raised.value)]
    assert unnamed == []


# ---- the template agent --------------------------------------------------------------------------------


def test_the_template_agent_names_the_whole_burst_and_signs():
    first = message("m1", "Where is it?", subject="Order 1042")
    second = message("m2", "Also my address", subject="New address")
    reply = template_agent(conversation(first, second, burst={"m1", "m2"}))
    assert "your 2 messages" in reply.text
    assert "\u201cOrder 1042\u201d and \u201cNew address\u201d" in reply.text
    assert reply.text.endswith("\u2014 Acme Support")
    assert reply == template_agent(conversation(first, second, burst={"m1", "m2"}))


# ---- the Bedrock agent ---------------------------------------------------------------------------------


@pytest.fixture
def bedrock():
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    with Stubber(client) as stub:
        yield client, stub


def test_bedrock_gets_the_whole_conversation_as_turns(bedrock):
    client, stub = bedrock
    history = (
        message("m1", "My order 1042 is late."),
        message("r1", "Sorry, we are checking.", from_agent=True, subject="Re: Order 1042"),
        message("m2", "Any news?"),
        message("m3", "Also, please change my delivery address."),
    )
    stub.add_response(
        "converse",
        converse_answer("It ships today; the address is changed."),
        {
            "modelId": PROFILE,
            "system": [{"text": "Answer like a pirate."}, {"text": VERDICT_INSTRUCTIONS}],
            "messages": [
                {
                    "role": "user",
                    "content": [{"text": f"{ALICE}\nSubject: Order 1042\n\nMy order 1042 is late."}],
                },
                {
                    "role": "assistant",
                    "content": [{"text": "Subject: Re: Order 1042\n\nSorry, we are checking."}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "text": f"{ALICE}\nSubject: Order 1042\n\nAny news?\n\n---\n\n"
                            f"{ALICE}\nSubject: Order 1042\n\nAlso, please change my delivery address."
                        }
                    ],
                },
            ],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0},
        },
    )
    reply = BedrockAgent(PROFILE, client, "Answer like a pirate.")(conversation(*history, burst={"m2", "m3"}))
    stub.assert_no_pending_responses()
    assert reply.text.startswith("It ships today; the address is changed.")


def test_without_a_system_prompt_of_the_operators_the_built_in_one_is_used(bedrock):
    client, stub = bedrock
    stub.add_response(
        "converse",
        converse_answer("Hello."),
        {
            "modelId": "model-x",
            "system": [{"text": DEFAULT_SYSTEM_PROMPT}, {"text": VERDICT_INSTRUCTIONS}],
            "messages": [{"role": "user", "content": [{"text": f"{ALICE}\nSubject: Order 1042\n\nHi"}]}],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0},
        },
    )
    BedrockAgent("model-x", client, "")(conversation(message("m1", "Hi")))
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("code", "status"),
    [("AccessDeniedException", 403), ("ValidationException", 400), ("ResourceNotFoundException", 404)],
)
def test_a_bedrock_refusal_is_final_and_says_what_to_check(bedrock, code, status):
    client, stub = bedrock
    stub.add_client_error(
        "converse", service_error_code=code, service_message="no ops@example.com", http_status_code=status
    )
    with pytest.raises(AgentRejected, match="model access granted") as raised:
        BedrockAgent(PROFILE, client)(conversation(message("m1", "Hi")))
    assert code in str(raised.value)
    assert "ops@example.com" not in str(raised.value)


@pytest.mark.parametrize(
    ("code", "status"),
    [("ThrottlingException", 429), ("ModelTimeoutException", 408), ("InternalServerException", 500)],
)
def test_throttling_and_server_errors_stay_retryable(bedrock, code, status):
    client, stub = bedrock
    stub.add_client_error("converse", service_error_code=code, http_status_code=status)
    with pytest.raises(ClientError) as raised:
        BedrockAgent(PROFILE, client)(conversation(message("m1", "Hi")))
    assert raised.value.response["Error"]["Code"] == code


# ---- the example agent (functions/replier/order_status_agent.py) ---------------------------------------


@pytest.fixture
def example(monkeypatch):
    # A fresh import of the example, and the module other tests imported put back afterwards (they
    # patch that one: a stray new module in sys.modules would take their patches' place).
    monkeypatch.syspath_prepend("functions/replier")
    monkeypatch.delitem(sys.modules, "order_status_agent", raising=False)
    return load_agent("order_status_agent:reply", bedrock=no_bedrock)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["Where is order 1042?"], "Order 1042 is shipped on 28 November"),
        (["My order #1043 is late", "and order 1044?"], "Order 1043 is being packed"),
        (["Status of order 9999 please"], "I cannot find order 9999"),
    ],
)
def test_the_example_agent_answers_every_order_of_the_burst(example, texts, expected):
    burst = [message(f"m{i}", t) for i, t in enumerate(texts)]
    reply = example(conversation(*burst, burst={m.id for m in burst}))
    assert isinstance(reply, Reply)
    assert expected in reply.text
    if len(texts) > 1:
        assert "Order 1044 is delivered" in reply.text


@pytest.mark.parametrize(
    ("text", "outcome"),
    [("I want a refund for order 1042", Handoff), ("Thanks!", NoReply), ("Can you call me?", Handoff)],
)
def test_the_example_agent_hands_refunds_off_and_lets_thanks_be(example, text, outcome):
    assert isinstance(example(conversation(message("m1", text))), outcome)


@pytest.mark.parametrize(
    ("mode", "tickets"),
    [(Mode.SEND, 1), (Mode.REVIEW, 1), (Mode.SHADOW, 0), (Mode.REPLAY, 0)],
)
def test_the_example_agent_opens_a_ticket_only_when_the_customer_is_answered_for_real(
    example, log_records, mode, tickets
):
    refund = conversation(message("m1", "I want a refund for order 1042"), mode=mode)
    # The same decision in every mode: shadow mode and a replay record what the agent would do.
    assert example(refund) == Handoff("the customer asks for a refund: a person decides")
    opened = [r for r in log_records() if r.get("message") == "would open a ticket"]
    assert len(opened) == tickets
    if tickets:
        assert (opened[0]["ticket_key"], opened[0]["mode"]) == ("key-1", mode)


# ---- the Bedrock agent and the customer's files (issue 44) ---------------------------------------------

PHOTO = b"\x89PNG\r\n\x1a\n" + bytes(200)
SCAN = b"%PDF-1.4\n" + bytes(300)


class Mailbox:
    """The download port: files by id; a lost one is gone; past ``max_bytes`` too large (as Nylas streams)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.downloads: list[tuple[str, int]] = []

    def download(self, grant_id, attachment_id, message_id, max_bytes, timeout_seconds):
        self.downloads.append((attachment_id, max_bytes))
        if attachment_id not in self.files:
            raise AttachmentGone(f"{attachment_id}: 404")
        if len(self.files[attachment_id]) > max_bytes:
            raise AttachmentTooLarge(f"{attachment_id}: over {max_bytes}")
        return self.files[attachment_id]


def with_files(mailbox: Mailbox, *listed: tuple[str, str, str]) -> Conversation:
    """The customer's message carrying ``listed`` (id, name, claimed type), readable through the real
    reader over ``mailbox``."""
    files = tuple(Attachment(aid, "m1", name, kind, 1) for aid, name, kind in listed)
    customer = replace(message("m1", "The parcel arrived broken; invoice attached."), attachments=files)
    reader = AttachmentReader(
        mailbox.download, "g1", max_bytes=10_000_000, max_record_bytes=25_000_000, deadline=10**9
    )
    return readable(conversation(customer), reader)


def test_bedrock_sees_the_customers_photo_and_pdf_as_image_and_document_blocks(bedrock):
    client, stub = bedrock
    mailbox = Mailbox({"a1": PHOTO, "a2": SCAN})
    talk = with_files(
        mailbox, ("a1", "parcel.png", "image/png"), ("a2", "invoice 10/42.pdf", "application/pdf")
    )
    text = f"{ALICE}\nSubject: Order 1042\n\nThe parcel arrived broken; invoice attached."
    stub.add_response(
        "converse",
        converse_answer("We are sorry; a replacement ships today."),
        {
            "modelId": PROFILE,
            "system": [{"text": DEFAULT_SYSTEM_PROMPT}, {"text": VERDICT_INSTRUCTIONS}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"text": text},
                        {"image": {"format": "png", "source": {"bytes": PHOTO}}},
                        {
                            "document": {
                                "format": "pdf",
                                "name": "invoice 10 42 [1]",
                                "source": {"bytes": SCAN},
                            }
                        },
                    ],
                }
            ],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0},
        },
    )
    reply = BedrockAgent(PROFILE, client)(talk)
    stub.assert_no_pending_responses()
    assert "could not open" not in reply.text
    # Read at most to the model's limit: an image 3.75 MB, a document 4.5 MB.
    assert mailbox.downloads == [("a1", 3_750_000), ("a2", 4_500_000)]


def test_bedrock_is_told_and_the_reply_says_which_files_it_could_not_read(bedrock):
    client, stub = bedrock
    mailbox = Mailbox({"a1": b"PK\x03\x04 zip", "a2": b"PK\x03\x04 zip too", "a4": bytes(4_000_000)})
    talk = with_files(
        mailbox,
        ("a1", "documents.zip", "application/zip"),  # an archive: not even downloaded
        ("a2", "invoice.pdf", "application/pdf"),  # claims to be a PDF: the bytes say zip
        ("a3", "gone.png", "image/png"),  # the provider lost it
        ("a4", "huge.png", "image/png"),  # over 3.75 MB
    )
    seen = {}

    def record(params, **kwargs):
        seen.update(params)

    stub.add_response("converse", converse_answer("Thanks for the details."), None)
    client.meta.events.register("provide-client-params.bedrock-runtime.Converse", record)
    reply = BedrockAgent(PROFILE, client)(talk)
    [turn] = seen["messages"]
    assert [list(block) for block in turn["content"]] == [["text"]]  # nothing the model cannot read
    note = turn["content"][0]["text"]
    for name in ("documents.zip", "invoice.pdf", "gone.png", "huge.png"):
        assert name in note
        assert name in reply.text
    assert "I could not open these attachments" in reply.text
    assert "a1" not in [aid for aid, _ in mailbox.downloads]


def test_bedrock_gets_at_most_five_documents_and_says_so_of_the_sixth(bedrock):
    client, stub = bedrock
    mailbox = Mailbox({f"a{n}": SCAN for n in range(6)})
    talk = with_files(mailbox, *((f"a{n}", f"page{n}.pdf", "application/pdf") for n in range(6)))
    seen = {}
    stub.add_response("converse", converse_answer("Noted."), None)
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse", lambda params, **kwargs: seen.update(params)
    )
    reply = BedrockAgent(PROFILE, client)(talk)
    [turn] = seen["messages"]
    assert sum("document" in block for block in turn["content"]) == 5
    assert "page5.pdf (more documents than the model takes at once)" in reply.text


# ---- the model's verdict: a person, whether it calls the mail a machine's or not, or the reply itself ----
# Both verdicts are hand-offs: a model that takes a customer for a robot must not leave them unanswered with
# only a log line (invariant 7). The reason says which verdict it was.
MACHINE = "the model: written by a machine: "


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("NO_REPLY: a carrier's shipping notice", Handoff(f"{MACHINE}a carrier's shipping notice")),
        ("**NO_REPLY**: a newsletter", Handoff(f"{MACHINE}a newsletter")),
        ("  no_reply: an out-of-office reply\nIt says so.", Handoff(f"{MACHINE}an out-of-office reply")),
        ("NO_REPLY", Handoff(f"{MACHINE}no person wrote this")),
        ("NO_REPLY: a notice from ship-confirm@shop.example", Handoff(f"{MACHINE}a notice from <email>")),
        ("HAND_OFF: the customer asks for a refund", Handoff("the model: the customer asks for a refund")),
        ("HAND_OFF:", Handoff("the model: a person should answer")),
        # A reply is a reply, whatever words it holds after its start.
        ("Hi Alice, your parcel ships today.", None),
        ("Hi Alice, we will not NO_REPLY you.", None),
        ("NO_REPLYING is not a verdict", None),
        ("No reply is needed, but thank you!", None),
    ],
)
def test_the_models_answer_is_a_verdict_only_when_it_begins_with_one(answer, outcome):
    assert model_verdict(answer) == outcome


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("NO_REPLY: an order shipping notice", Handoff(f"{MACHINE}an order shipping notice")),
        (
            "HAND_OFF: a refund only a person can grant",
            Handoff("the model: a refund only a person can grant"),
        ),
    ],
)
def test_a_notice_the_rules_let_through_and_a_refund_are_handed_off_by_the_model(bedrock, answer, outcome):
    client, stub = bedrock
    notice = Message(
        "m1",
        "ship-confirm@shop.example",
        "Shop",
        (),
        "Your order has shipped",
        0,
        "Order 1042 shipped.",
        "",
        False,
    )
    stub.add_response(
        "converse",
        converse_answer(answer),
        {
            "modelId": PROFILE,
            "system": [{"text": DEFAULT_SYSTEM_PROMPT}, {"text": VERDICT_INSTRUCTIONS}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "text": "From: Shop <ship-confirm@shop.example>\n"
                            "Subject: Your order has shipped\n\nOrder 1042 shipped."
                        }
                    ],
                }
            ],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0},
        },
    )
    assert BedrockAgent(PROFILE, client)(conversation(notice)) == outcome
    stub.assert_no_pending_responses()
