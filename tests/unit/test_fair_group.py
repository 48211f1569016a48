"""The grant as the notification queue's tenant (``replyonce.adapters.queue.fair_group``): every grant id
Nylas can send gives a group SQS accepts, and one grant is always one group."""

import re

import pytest

from replyonce.adapters.queue import fair_group

SQS_GROUP = re.compile(r"^[!-~]{1,128}$")  # SQS: 1-128 of a-z, A-Z, 0-9 and punctuation


@pytest.mark.parametrize(
    ("grant_id", "group"),
    [
        ("a4e8b3f0-6c1d-4e2b-9a7f-1b2c3d4e5f60", "a4e8b3f0-6c1d-4e2b-9a7f-1b2c3d4e5f60"),  # a Nylas grant
        ("support@acme.example", "support@acme.example"),  # the path segment also takes the address
        ("", None),  # no grant: no group (a tenant of its own, as SQS counts it)
    ],
)
def test_a_grant_id_is_its_own_group(grant_id, group):
    assert fair_group(grant_id).get("MessageGroupId") == group


@pytest.mark.parametrize("grant_id", ["x" * 129, "grant with spaces", "gränt-ü", "tab\there"])
def test_a_grant_id_sqs_would_refuse_is_named_by_its_hash_and_stays_one_tenant(grant_id):
    group = fair_group(grant_id)["MessageGroupId"]
    assert SQS_GROUP.match(group)
    assert fair_group(grant_id)["MessageGroupId"] == group
    assert fair_group(grant_id + "2")["MessageGroupId"] != group
