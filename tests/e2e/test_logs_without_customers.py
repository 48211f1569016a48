"""No customer's address in the lines an operator keeps: a demo run's logs, scanned.

Why the demo: it is the product end to end on one machine (real webhooks, duplicates, bursts, the
agent's own replies, a machine sender, a forged delivery), so its lines are the lines a deployed
stack writes. CloudWatch keeps them ``LogRetentionDays`` (90 by default), encrypted by the service
only (``docs/operations.md``, "Logs and customer data"): at INFO and above, an address may appear
only as its digest. The regex is the test's own, not the product's.
"""

import json
import re

import pytest

from devstack import demo
from devstack.invariants import REPLY_SENT
from devstack.stack import LocalStack
from replyonce.redaction import address_digest

ADDRESS = re.compile(r"[\w.%+'-]+@[\w-]+(\.[\w-]+)+")


@pytest.fixture(scope="module")
def demo_run() -> tuple[demo.DemoReport, list[dict]]:
    """One demo run and every record its handlers wrote (logs and metric lines)."""
    records: list[dict] = []

    class Recorded(LocalStack):
        def __exit__(self, *exc_info: object) -> None:
            records.extend(self.logs.records)
            super().__exit__(*exc_info)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(demo, "LocalStack", Recorded)
        report = demo.run_demo(demo.DemoSettings(seed=11, customers=4, pollers=2), progress_out=None)
    return report, records


def test_no_info_line_of_a_demo_run_holds_an_email_address(demo_run):
    report, records = demo_run
    assert report.ok  # the run did its job: replies went out, duplicates were absorbed
    kept = [r for r in records if r.get("level") != "DEBUG"]
    assert len([r for r in kept if r.get("message") == REPLY_SENT]) == report.replies_sent >= 4
    leaking = [
        f"{r.get('level')} {r.get('message')}: {ADDRESS.search(json.dumps(r)).group(0)}"  # type: ignore[union-attr]
        for r in kept
        if ADDRESS.search(json.dumps(r))
    ]
    assert leaking == []


def test_a_reply_sent_line_names_its_recipient_by_digest_and_no_subject(demo_run):
    report, records = demo_run
    sent = {r["reply_message_id"]: r for r in records if r.get("message") == REPLY_SENT}
    for reply in report.replies:
        line = sent[reply["message_id"]]
        # The operator's correlation: the digest of the address the customer gave them.
        assert line["to_digest"] == [address_digest(a) for a in reply["to"].split(", ")]
        assert "to" not in line
        assert "subject" not in line
        # What the chaos checker and the local console read stays.
        assert {"notification_id", "covered", "replied_to", "intent_id"} <= set(line)
