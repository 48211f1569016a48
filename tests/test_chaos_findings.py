"""Product findings of the chaos knobs of issue 19, each as the smallest test against the real handler.

Each test here fails on the product as it is and is marked ``xfail(strict=True)``: it starts to
pass (and so fails the suite, as a reminder to drop the mark) the day the product is fixed.
"""

import pytest

from tests.replier_harness import deferrals, inbound
from tests.test_nylas_as_documented import answers, as_nylas_sends_it


@pytest.mark.xfail(
    strict=True,
    reason="product finding (issue 19): a replayed account-limit answer keeps the key for its hour; "
    "chaos knob account_limit_clears_within_key_hour is off until fixed",
)
@pytest.mark.parametrize(("limit", "shape"), [("daily_quota", "403"), ("sending_paused", "403")])
def test_a_reply_goes_out_once_the_account_limit_clears_within_the_keys_hour(
    pipeline, nylas, log_records, limit, shape
):
    # The limit's 403 is a Nylas answer, cached under the send's Idempotency-Key for an hour
    # (idempotent-send guide: errors are cached and replayed). It proves nothing went out under the
    # key. Once the operator clears the limit, the reply must go out at the next retry -- not replay
    # the cached refusal until the key's hour is over (every retry a receive towards the DLQ).
    nylas.modes.update({"account_limit": limit, "account_limit_shape": shape})
    message = inbound(nylas)
    pipeline.deliver(as_nylas_sends_it(message))
    pipeline.poller().poll_once()
    assert deferrals(log_records) == ["account_limited"]
    nylas.modes.account_limit = None  # cleared: quota raised, pause lifted
    nylas.advance_clock(1000)  # past ACCOUNT_RETRY_SECONDS (900) and the settle time, within the hour
    pipeline.drain()
    assert answers(nylas) == [message["id"]]
    assert pipeline.dead_letters() == []
