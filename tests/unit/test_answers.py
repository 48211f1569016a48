"""What each Nylas answer proves (replyonce.answers): the documented table, both spellings, the safe side."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replyonce.answers import Answer, Proof, proof_of, proves_generation_unsent

# (status, error type, replayed, had custom headers) → proof. Sources: nylas idempotent-send guide,
# send-email guide, changelog 2026-10-09 (Agent Account queueing), sending-errors guide.
TABLE = [
    (200, "", False, False, Proof.SENT),
    (200, "", True, False, Proof.SENT),
    (202, "", False, False, Proof.QUEUED),
    (202, "", True, False, Proof.QUEUED),
    (None, "", False, False, Proof.MAY_HAVE_SENT),
    (504, "provider_error", False, False, Proof.MAY_HAVE_SENT),
    (504, "api.provider_error", False, False, Proof.MAY_HAVE_SENT),
    (504, "provider_error", True, False, Proof.KEY_STUCK),
    (500, "", False, False, Proof.MAY_HAVE_SENT),
    (505, "", False, False, Proof.MAY_HAVE_SENT),
    (599, "whatever", True, False, Proof.KEY_STUCK),
    (201, "", False, False, Proof.MAY_HAVE_SENT),
    (204, "", True, False, Proof.KEY_STUCK),
    (302, "", False, False, Proof.MAY_HAVE_SENT),
    (409, "api.concurrent_idempotent_request", False, False, Proof.MAY_HAVE_SENT),
    (409, "concurrent_idempotent_request", False, False, Proof.MAY_HAVE_SENT),
    (409, "api.invalid_idempotent_request", False, False, Proof.KEY_STUCK),
    (409, "invalid_idempotent_request", False, False, Proof.KEY_STUCK),
    (409, "", False, False, Proof.MAY_HAVE_SENT),
    (429, "rate_limit_error", False, False, Proof.NOT_SENT),
    (429, "api.nylas_rate_limit_exceeded", False, False, Proof.NOT_SENT),
    (429, "", False, False, Proof.NOT_SENT),
    (429, "daily_quota_exceeded", False, False, Proof.ACCOUNT_LIMITED),
    (401, "unauthorized", False, False, Proof.NOT_SENT),
    (408, "", False, False, Proof.NOT_SENT),
    (403, "insufficient_scopes", False, False, Proof.ACCOUNT_LIMITED),
    (403, "sending_paused", False, False, Proof.ACCOUNT_LIMITED),
    (403, "", False, False, Proof.ACCOUNT_LIMITED),
    (400, "api.monthly_quota_exceeded", False, False, Proof.ACCOUNT_LIMITED),
    (422, "outbound_rule_block", False, False, Proof.ACCOUNT_LIMITED),
    # A limit whose shape is an ordinary 400: its words give it away (the shapes are not documented).
    (
        400,
        "invalid_request_error: Sending has been suspended for this account.",
        False,
        True,
        Proof.ACCOUNT_LIMITED,
    ),
    (400, "invalid_request_error", False, False, Proof.REJECTED),
    (400, "invalid_request_error", False, True, Proof.HEADERS_REFUSED),
    (402, "", False, False, Proof.REJECTED),
    (404, "not_found_error", False, False, Proof.REJECTED),
    (413, "", False, False, Proof.REJECTED),
    (422, "invalid_request_error", False, False, Proof.REJECTED),
    (405, "", False, False, Proof.ACCOUNT_LIMITED),
    (418, "", False, False, Proof.ACCOUNT_LIMITED),
]


@pytest.mark.parametrize(("status", "error_type", "replayed", "headers", "expected"), TABLE)
def test_each_documented_answer_proves_what_its_documentation_says(
    status, error_type, replayed, headers, expected
):
    answer = Answer(status, error_type, replayed=replayed)
    assert proof_of(answer, had_custom_headers=headers) is expected


@given(status=st.integers(100, 599) | st.none(), error_type=st.text(max_size=30), replayed=st.booleans())
def test_only_a_200_or_a_202_counts_as_out_and_every_5xx_may_have_sent(status, error_type, replayed):
    proof = proof_of(Answer(status, error_type, replayed=replayed))
    if proof in (Proof.SENT, Proof.QUEUED):
        assert status in (200, 202)
    if status is None or status >= 500 or (status < 400 and status not in (200, 202)):
        assert proof.may_have_sent
    # A message-level refusal is only ever one of the documented 4xx statuses.
    if proof is Proof.REJECTED:
        assert status in (400, 402, 404, 413, 422)


@given(
    error_type=st.sampled_from(
        ["provider_error", "concurrent_idempotent_request", "invalid_idempotent_request"]
    )
)
def test_both_spellings_of_a_type_prove_the_same(error_type):
    for status in (409, 504):
        assert proof_of(Answer(status, error_type)) is proof_of(Answer(status, f"api.{error_type}"))


@pytest.mark.parametrize(
    ("answer", "attempts", "unsent"),
    [
        (Answer(429, "rate_limit_error", replayed=True), 3, True),  # the key's first answer was a 429
        (Answer(429, "rate_limit_error"), 1, True),
        (Answer(429, "rate_limit_error"), 2, False),  # an earlier attempt under the key may have sent
        (Answer(400, "invalid_request_error"), 1, True),
        (Answer(504, "provider_error"), 1, False),
        (Answer(None), 1, False),
        (Answer(200), 1, False),
    ],
)
def test_a_key_is_proven_unsent_only_by_its_first_answer(answer, attempts, unsent):
    assert proves_generation_unsent(answer, attempts) is unsent


def _designs_rows() -> list[tuple[str, list[Answer]]]:
    """The rows of ``docs/design.md``'s "What a Nylas answer proves": (proves, the answers the row names).

    A row names its answers as `NNN` or `NNN type` in code spans, "no answer" for none at all; "the same,
    replayed" is the row above's answers, replayed.
    """
    import re
    from pathlib import Path

    design = (Path(__file__).resolve().parents[2] / "docs" / "design.md").read_text()
    section = design.split("## What a Nylas answer proves", 1)[1].split("\n## ", 1)[0]
    rows: list[tuple[str, list[Answer]]] = []
    for answer, proves in re.findall(r"^\| (.+?) \| (.+?) \| .+ \|$", section, re.MULTILINE)[2:]:
        answers = [Answer(int(s), t) for s, t in re.findall(r"`(\d{3})(?: (\w+))?`", answer)]
        if answer.startswith("no answer"):
            answers.append(Answer(None))
        if answer.startswith("the same, replayed"):
            answers += [Answer(a.status, a.error_type, replayed=True) for a in rows[-1][1] if a.status]
        rows.append((proves, answers))
    return rows


def test_the_designs_table_is_what_proof_of_decides():
    # The table is written once, in docs/design.md; this holds the code to it, row by row: every answer a
    # row names proves the same, and each row proves something no other row does.
    proofs = []
    for proves, answers in _designs_rows():
        assert answers, f"the row {proves!r} names no answer"
        found = {proof_of(answer) for answer in answers}
        assert len(found) == 1, f"the row {proves!r}: {found}"
        proofs.append(found.pop())
    assert proofs == [
        Proof.SENT,
        Proof.QUEUED,
        Proof.MAY_HAVE_SENT,
        Proof.KEY_STUCK,
        Proof.NOT_SENT,
        Proof.ACCOUNT_LIMITED,
        Proof.REJECTED,
    ]
