"""The send fence's key and the mailbox record (replyonce.keys, replyonce.rules.coverage)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.agent import Mode
from replyonce.keys import LEGACY_KEY_SCHEME, REPLAY_KEY_PREFIX, conversation_key, idempotency_key
from replyonce.mail import read_message
from replyonce.rules.coverage import (
    MAX_COVERED_IDS,
    covered_in_mailbox,
    is_covered,
    is_reply_of,
    reply_metadata,
)

AGENTS = {"support@acme.example"}


def test_keys_are_pinned_so_a_deploy_cannot_reopen_a_fence():
    assert idempotency_key("g", "m", 0) == idempotency_key("g", "m", 0)
    # Scheme 1 is what earlier versions derived: intents they stored keep their key.
    assert idempotency_key("g", "m", 0, LEGACY_KEY_SCHEME) != idempotency_key("g", "m", 0)
    assert len(idempotency_key("g" * 300, "m" * 300, 99)) == 36  # Nylas takes at most 256 characters


def test_the_key_derivation_is_injective_where_the_old_one_was_not():
    assert idempotency_key("g", "a", 2, LEGACY_KEY_SCHEME) == idempotency_key(
        "g", "a:2", 0, LEGACY_KEY_SCHEME
    )
    assert idempotency_key("g", "a", 2) != idempotency_key("g", "a:2", 0)


parts = st.tuples(st.text(max_size=8), st.text(max_size=8), st.integers(0, 5))


@given(a=parts, b=parts)
def test_different_parts_never_share_a_key(a, b):
    if a != b:
        assert idempotency_key(*a) != idempotency_key(*b)


# ---- Conversation.key: live and replay (issue 40) -------------------------------------------------------

BURSTS = [
    ("g1", "t1", ("m1",)),
    ("g1", "t1", ("m1", "m2")),
    ("g1", "t1", ("m2", "m1")),  # the same burst in another order: one key
    ("g2", "t-with-dashes", ("a" * 200,)),
    ("", "", ()),
]


@pytest.mark.parametrize(("grant", "thread", "covered"), BURSTS)
@pytest.mark.parametrize("live", [Mode.SEND, Mode.REVIEW, Mode.SHADOW])
def test_a_replay_key_never_equals_the_live_key_of_the_same_burst(grant, thread, covered, live):
    replayed = conversation_key(grant, thread, covered, Mode.REPLAY)
    assert replayed != conversation_key(grant, thread, covered, live)
    # By construction, not by the odds: a live key is a bare UUID, a replay key is prefixed.
    assert replayed.startswith(REPLAY_KEY_PREFIX)
    assert not conversation_key(grant, thread, covered, live).startswith(REPLAY_KEY_PREFIX)


@pytest.mark.parametrize(("grant", "thread", "covered"), BURSTS)
@pytest.mark.parametrize("mode", list(Mode))
def test_the_conversation_key_is_stable_across_calls_and_orders(grant, thread, covered, mode):
    assert conversation_key(grant, thread, covered, mode) == conversation_key(grant, thread, covered, mode)
    assert conversation_key(grant, thread, covered, mode) == conversation_key(
        grant, thread, tuple(reversed(covered)), mode
    )


def test_the_live_key_is_pinned_and_is_the_same_in_send_review_and_shadow():
    # The intent id and the shadow record id are this key: a deploy that changed it would re-open fences.
    pinned = conversation_key("g1", "t1", ("m1", "m2"))
    assert {conversation_key("g1", "t1", ("m1", "m2"), m) for m in (Mode.SEND, Mode.REVIEW, Mode.SHADOW)} == {
        pinned
    }
    assert pinned == "9c3e4dc3-ea65-56bf-a014-1cc494caafa0"  # the value before issue 40


@given(
    a=st.tuples(st.text(max_size=8), st.text(max_size=8)),
    b=st.tuples(st.text(max_size=8), st.text(max_size=8)),
)
def test_no_replay_key_equals_any_live_key(a, b):
    assert conversation_key(*a, ("m1",), Mode.REPLAY) != conversation_key(*b, ("m1",), Mode.SEND)


def reply(metadata, sender="support@acme.example"):
    return read_message({"id": "r", "from": [{"email": sender}], "metadata": metadata})


@given(ids=st.lists(st.text(min_size=1, max_size=200), min_size=1, max_size=300, unique=True))
def test_a_reply_records_every_message_it_covers_within_nylas_limits(ids):
    metadata = reply_metadata("intent-1", ids[0], "thread-1", ids)
    assert len(metadata) <= 50
    assert all(len(k) <= 40 and len(v) <= 500 for k, v in metadata.items())
    record = covered_in_mailbox([reply(metadata)])
    assert all(is_covered(i, record) for i in ids)
    assert not is_covered("some-other-message", record)


def test_our_reply_is_ours_whatever_its_from_shows():
    # Only the API sets metadata: our intent id marks our reply, whether the Sent copy shows the grant's
    # address, an alias (Google, Microsoft) or a provider's rewrite. A message without it is not ours.
    metadata = reply_metadata("intent-1", "m1", "t", ["m1"])
    aliased = reply(metadata, sender="help@acme.example")
    assert is_covered("m1", covered_in_mailbox([aliased]))
    assert is_reply_of(aliased, "intent-1")
    assert is_reply_of(reply(metadata), "intent-1")
    assert not is_reply_of(reply({}), "intent-1")
    assert not is_reply_of(reply(metadata), "intent-2")
    assert not is_covered("m1", covered_in_mailbox([reply({})]))


def test_a_burst_beyond_what_metadata_can_name_is_refused():
    with pytest.raises(ValueError, match="at most"):
        reply_metadata("i", "m", "t", [f"m{i}" for i in range(MAX_COVERED_IDS + 1)])
