"""When a deferred record comes back (replyonce.rules.redelivery.retry_delay): a reason, a hint and a receive
count in, a visibility out."""

import pytest

from replyonce.reasons import DeferReason
from replyonce.rules.redelivery import retry_delay


@pytest.mark.parametrize(
    ("reason", "hint", "receives", "expected"),
    [
        (DeferReason.THREAD_BUSY, 100, 1, 15),  # 5 s doubling, but 100 s spread over the 7 receives left
        (DeferReason.THREAD_BUSY, 100, 3, 20),  # the doubling is later than the spread
        (DeferReason.THREAD_BUSY, 12, 4, 12),  # never later than the holder's lease can last
        (DeferReason.THREAD_BUSY, 221, 7, 221),  # one receive left: it comes back after the lease
        (DeferReason.THREAD_BUSY, 221, 8, 221),  # the last receive (lost anyway if it fails): no sooner
        (DeferReason.THREAD_BUSY, None, 2, 10),  # no hold known: the doubling
        (DeferReason.NOTIFICATION_IN_PROGRESS, 261, 1, 38),  # the original's 260 s over 7 receives
        (DeferReason.NOTIFICATION_IN_PROGRESS, 0, 3, 0),  # the original's record has expired: at once
        (DeferReason.UNEXPECTED, None, 1, 10),
        (DeferReason.UNEXPECTED, None, 8, 900),
        (DeferReason.RATE_LIMITED, 7, 5, 7),
        (DeferReason.ACCOUNT_LIMITED, 900, 1, 900),
        (DeferReason.DEADLINE, 0, 3, 0),
        (DeferReason.SEND_UNCERTAIN, 10**6, 1, 900),  # never past retry_max_seconds
    ],
)
def test_retry_delay(reason, hint, receives, expected):
    delay = retry_delay(
        reason,
        hint,
        receives,
        busy_base_seconds=5,
        retry_base_seconds=10,
        retry_max_seconds=900,
        max_receives=8,
    )
    assert delay == expected


@pytest.mark.parametrize(
    ("reason", "hint", "receives", "expected"),
    [
        # The chaos run's timings (retry_max_seconds 14, 8 receives): the handover's 99 s at once, one
        # receive, where coming back every 14 s spent seven of eight and the drill dead-lettered records.
        (DeferReason.REGION_HANDOVER, 99, 1, 99),
        (DeferReason.REGION_HANDOVER, 10, 7, 10),
        (DeferReason.STATE_NEW, 94, 3, 94),  # a new thread state's wait, the same
        (DeferReason.STATE_NEW, 10**6, 1, 12 * 3600),  # never past what SQS allows
        (DeferReason.REGION_HANDOVER, None, 2, 2),  # no end known: the backoff, capped
        (DeferReason.SEND_UNCERTAIN, 99, 1, 14),  # a wait that may not end then: capped as before
    ],
)
def test_a_wait_that_ends_at_a_known_time_comes_back_when_it_ends(reason, hint, receives, expected):
    delay = retry_delay(
        reason,
        hint,
        receives,
        busy_base_seconds=1,
        retry_base_seconds=1,
        retry_max_seconds=14,
        max_receives=8,
    )
    assert delay == expected


@pytest.mark.parametrize("busy_base", [0, 1, 5])
@pytest.mark.parametrize(
    ("max_receives", "first_receive"), [(2, 1), (3, 2), (8, 1), (8, 4), (8, 7), (20, 1), (20, 13)]
)
@pytest.mark.parametrize("hold", [1, 30, 127, 221, 261, 899])
def test_a_waiting_records_delays_outlast_the_hold_it_waits_for(busy_base, max_receives, first_receive, hold):
    # The worst case: no in-process wait and no time spent between receives (a record late in its
    # invocation), and a holder that holds on to the end: the record's last receive still comes after.
    waited, receive = 0, first_receive
    while receive < max_receives and waited < hold:
        waited += retry_delay(
            DeferReason.THREAD_BUSY,
            hold - waited,
            receive,
            busy_base_seconds=busy_base,
            retry_base_seconds=10,
            retry_max_seconds=900,
            max_receives=max_receives,
        )
        receive += 1
    assert waited >= hold
    assert receive <= max_receives  # received again (at most maxReceiveCount times), not dead-lettered
