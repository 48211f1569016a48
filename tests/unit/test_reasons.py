"""Every reason is logged and counted from one place, and none is dead (replyonce.reasons)."""

import re
from pathlib import Path

import pytest

from replyonce.observability import metrics, skipped
from replyonce.reasons import DeferReason, RejectReason, SkipReason

PRODUCT = [*Path("layers/replyonce/replyonce").rglob("*.py"), *Path("functions").glob("*/app.py")]
SOURCES = {str(p): p.read_text() for p in PRODUCT if p.name != "reasons.py"}


@pytest.mark.parametrize("reason", list(SkipReason))
def test_every_skip_reason_is_logged_with_its_reason_and_counted(reason, log_records):
    outcome = skipped(reason, notification_id="n-1")
    assert outcome == {"outcome": "skipped", "reason": reason.value}
    [line] = [r for r in log_records() if r.get("reason") == reason.value]
    assert line["notification_id"] == "n-1"
    # The count is in the same line (EMF): NotificationSkipped, dimension reason, in our namespace.
    assert line["NotificationSkipped"] == [1.0]
    [directive] = line["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == metrics.namespace == "ReplyOnce"
    assert directive["Dimensions"] == [["reason"]]
    assert directive["Metrics"] == [{"Name": "NotificationSkipped", "Unit": "Count"}]


@pytest.mark.parametrize("reason", [*SkipReason, *DeferReason, *RejectReason])
def test_every_reason_is_given_somewhere_in_the_product(reason):
    # A member nothing gives is dead.
    name = f"{type(reason).__name__}.{reason.name}"
    users = [n for n, text in SOURCES.items() if re.search(rf"\b{re.escape(name)}\b", text)]
    assert users, f"{name} is never given"


@pytest.mark.parametrize("reason", list(RejectReason))
def test_every_rejection_has_a_status_nylas_treats_as_meant(reason):
    # 401 and 4xx are not retried (forged, or no retry can fix it); 503 is (a retry can). Never 500.
    assert reason.status in {400, 401, 405, 413, 415, 503}
