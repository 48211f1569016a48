"""``make serve --grants N`` and ``--grants-file F``: which mailboxes, and every mistake in the file named."""

import pytest

from devstack.local_grants import GrantsFileError, LocalGrant, numbered_grants, parse_grants_file


def test_grants_n_is_the_usual_mailbox_then_numbered_ones_each_with_an_address_of_its_own():
    grants = numbered_grants(3)
    assert grants == [
        LocalGrant("grant-agent-0001", "support@replyonce.example"),
        LocalGrant("grant-agent-0002", "support2@replyonce.example"),
        LocalGrant("grant-agent-0003", "support3@replyonce.example"),
    ]
    assert [g.record() for g in grants] == [{}, {}, {}]  # the stack's own mode and agent


@pytest.mark.parametrize("count", [0, 51])
def test_grants_n_out_of_range_is_refused(count):
    with pytest.raises(GrantsFileError, match="1 to 50"):
        numbered_grants(count)


def test_a_grants_file_names_each_grant_its_mode_and_agent_in_order():
    text = """
    # the sales and billing mailboxes
    id=grant-sales   address=sales@acme.example   mode=send   agent=order_status_agent:reply
    id=grant-billing address=billing@acme.example mode=shadow   # tried first
    """
    grants = parse_grants_file(text)
    assert grants == [
        LocalGrant("grant-sales", "sales@acme.example", "send", "order_status_agent:reply"),
        LocalGrant("grant-billing", "billing@acme.example", "shadow"),
    ]
    assert [g.record() for g in grants] == [
        {"reply_mode": "send", "agent": "order_status_agent:reply"},
        {"reply_mode": "shadow"},
    ]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "names no grant"),
        ("# only a comment\n", "names no grant"),
        ("id=g1\n", "line 1: address required"),
        ("address=a@acme.example\n", "line 1: id required"),
        ("id=g1 address=a@acme.example\nid=g2 address\n", "line 2: 'address' is not key=value"),
        ("id=g1 address=a@acme.example colour=red\n", "line 1: no field 'colour'"),
        ("id=g1 id=g2 address=a@acme.example\n", "line 1: id given twice"),
        ("id=g1 address=nobody\n", "line 1: address 'nobody' is not an email address"),
        ("id=g1 address=a@acme.example mode=draft\n", "line 1: mode must be one of send, review, shadow"),
        ("id=g1 address=a@acme.example agent=nocolon\n", "line 1: agent must be"),
        ("id=g1 address=a@acme.example\nid=g1 address=b@acme.example\n", "line 2: grant g1 named twice"),
        (
            "id=g1 address=a@acme.example\nid=g2 address=A@acme.example\n",
            "line 2: address A@acme.example named",
        ),
        ("".join(f"id=g{n} address=a{n}@acme.example\n" for n in range(51)), "names 51 grants"),
    ],
)
def test_every_mistake_in_a_grants_file_is_one_sentence_naming_its_line(text, error):
    with pytest.raises(GrantsFileError, match=error) as refused:
        parse_grants_file(text, "grants.txt")
    assert str(refused.value).startswith("grants.txt")
