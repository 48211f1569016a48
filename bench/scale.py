"""Scale on paper: what 1 M and 10 M notifications a day need, at real latency, within default quotas.

Nothing here is measured: it multiplies what the run measured (the replier's
billed seconds per notification at real latency, for the template's option
(b), a batch's threads at once, and for (a) batches of one; the webhook's
time) by a traffic model, and sets the result against published limits and
the template's defaults. The model is stated with the figures so it can be
argued with:

- every reply brings one "own outbound" notification back (Agent Accounts
  fire ``message.created`` for sent mail): half the notifications are first
  replies, half own outbound;
- the peak hour is ``PEAK_FACTOR`` times the day's average;
- concurrency is Little's law on billed time: notifications per second times
  the billed seconds per notification (every invocation of it included).
"""

import math
from dataclasses import dataclass

from bench.markdown import table
from ops.template import load_template

DAY_SECONDS = 86_400
PEAK_FACTOR = 3.0
VOLUMES = (1_000_000, 10_000_000)
ACCOUNT_QUOTA = 1000  # Lambda's default concurrent executions per region
API_ACCOUNT_RATE = 10_000  # API Gateway's default requests per second per region (burst 5,000)

# Published limits, with where they are stated.
NYLAS_RATE_LIMITS_URL = "https://developer.nylas.com/docs/dev-guide/platform/rate-limits/"
AGENT_SEND_LIMITS_URL = "https://developer.nylas.com/docs/v3/agent-accounts/send-limits/"
AGENT_SEND_QUEUEING_URL = (
    "https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/"
)
LAMBDA_QUOTAS_URL = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"
SQS_SCALING_URL = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html"
MESSAGES_PER_GRANT = 200  # Messages API (the thread read), per grant per second
SENDS_PER_GRANT = 200  # JSON sends per grant per second (a connected mailbox)
GRANTS_PER_APPLICATION = 50  # Grants API (a new container's grant lookup), per application
AGENT_SENDS_PER_ENVIRONMENT = 5  # Agent Accounts: pooled per environment (1 in a sandbox)
# Lambda adds up to this many concurrent executions a minute to an SQS event source.
SQS_SCALE_UP_PER_MINUTE = 300


@dataclass(frozen=True)
class Measured:
    """The run's figures the model needs (seconds are billed seconds per notification)."""

    first_reply_a: float  # (a) batches of one, real latency
    first_reply_b: float  # (b) the template, real latency, full batches
    own_outbound: float  # no Nylas call on this path
    webhook: float
    wru_per_notification: float
    # (b) in the real-latency mix, where traffic is sparse: records per invocation, billed s per notification.
    sparse_records_b: float = float("nan")
    sparse_first_reply_b: float = float("nan")
    # The mixed stream at saturation (first replies, bursts, own outbound): billed s per notification of it.
    mixed_b: float = float("nan")


def template_defaults() -> dict[str, float]:
    parameters = load_template()["Parameters"]
    return {
        name: float(parameters[name]["Default"])
        for name in (
            "ReplierMaximumConcurrency",
            "WebhookReservedConcurrency",
            "WebhookThrottleRate",
            "WebhookThrottleBurst",
            "ReplyBudgetPerHour",
            "ReplyBudgetPerRecipientPerHour",
        )
    }


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if value >= 10 else f"{value:,.2f}"


def _per_day_at_peak(per_second: float) -> float:
    """The daily volume whose peak hour is ``per_second`` notifications a second."""
    return per_second * DAY_SECONDS / PEAK_FACTOR


def replier_concurrency(per_second: float, first_reply: float, own_outbound: float) -> float:
    return per_second * (first_reply + own_outbound) / 2


def render(m: Measured) -> str:
    """The "Scale on paper" section of ``docs/performance.md``."""
    d = template_defaults()
    reserved = d["WebhookReservedConcurrency"]
    pool = ACCOUNT_QUOTA - reserved  # what `make deploy` lets the replier have on a default account
    rows = []
    for volume in VOLUMES:
        average = volume / DAY_SECONDS
        peak = average * PEAK_FACTOR
        a = replier_concurrency(peak, m.first_reply_a, m.own_outbound)
        b = replier_concurrency(peak, m.first_reply_b, m.own_outbound)
        mixed = peak * m.mixed_b
        webhook = peak * m.webhook

        def fits(needed: float) -> str:
            return "fits" if needed <= pool else "**does not fit**"

        rows += [
            (
                f"{volume / 1e6:g} M/day",
                "notifications/s (average, peak hour)",
                f"{_fmt(average)}, {_fmt(peak)}",
            ),
            ("", "replies/s = Nylas sends (average, peak hour)", f"{_fmt(average / 2)}, {_fmt(peak / 2)}"),
            (
                "",
                "replier concurrency at the peak, (b) the template",
                f"{_fmt(b)}: {fits(b)} in {pool:,.0f} "
                f"(quota {ACCOUNT_QUOTA:,} less the webhook's {reserved:g})",
            ),
            (
                "",
                "replier concurrency at the peak, (a) batches of one",
                f"{_fmt(a)}: {fits(a)} in {pool:,.0f}",
            ),
            *(
                []
                if math.isnan(mixed)
                else [
                    (
                        "",
                        "replier concurrency at the peak, the mixed stream at saturation",
                        f"{_fmt(mixed)}: {fits(mixed)} in {pool:,.0f}",
                    )
                ]
            ),
            (
                "",
                "`ReplierMaximumConcurrency` to set (the peak's need x 1.25)",
                (f"**{math.ceil(mixed * 1.25)}** (the mixed stream), " if not math.isnan(mixed) else "")
                + f"{math.ceil(b * 1.25)} ((b) full batches of first replies), {math.ceil(a * 1.25)} (a); "
                f"default {d['ReplierMaximumConcurrency']:g}",
            ),
            (
                "",
                "webhook concurrency at the peak (warm time)",
                f"{_fmt(webhook)} of its {reserved:g} reserved",
            ),
            (
                "",
                "stage throttle: the peak against `WebhookThrottleRate` / `WebhookThrottleBurst`",
                f"{_fmt(peak)} of {d['WebhookThrottleRate']:g}/s, burst {d['WebhookThrottleBurst']:g} "
                f"({d['WebhookThrottleRate'] / peak:.1f}x the peak)",
            ),
            (
                "",
                f"Agent Account sends at the peak against {AGENT_SENDS_PER_ENVIRONMENT}/s pooled",
                f"{peak / 2 / AGENT_SENDS_PER_ENVIRONMENT:.1f}x the pool",
            ),
            ("", "DynamoDB write units/s at the peak (all keys)", _fmt(peak * m.wru_per_notification)),
            (
                "",
                f"minutes for the event source to reach that concurrency ({SQS_SCALE_UP_PER_MINUTE}/min)",
                f"{b / SQS_SCALE_UP_PER_MINUTE:.1f} (b), {a / SQS_SCALE_UP_PER_MINUTE:.1f} (a)",
            ),
        ]
    mix_a = (m.first_reply_a + m.own_outbound) / 2
    mix_b = (m.first_reply_b + m.own_outbound) / 2
    limits = {
        f"replier at the default `ReplierMaximumConcurrency` ({d['ReplierMaximumConcurrency']:g}, a setting: "
        "raise it to the row above), (b) the template": d["ReplierMaximumConcurrency"] / mix_b,
        f"Agent Account sends, {AGENT_SENDS_PER_ENVIRONMENT}/s pooled per environment (Nylas)": (
            2 * AGENT_SENDS_PER_ENVIRONMENT
        ),
        f"the account's concurrency ({pool:,.0f} beside the webhook's reservation), (b) the template": pool
        / mix_b,
        f"Messages API, {MESSAGES_PER_GRANT}/s per grant (one agent mailbox reads every thread)": (
            2 * MESSAGES_PER_GRANT
        ),
        f"stage throttle (`WebhookThrottleRate` {d['WebhookThrottleRate']:g}/s)": d["WebhookThrottleRate"],
        f"the webhook's reserved concurrency ({reserved:g}) at its warm time": reserved / m.webhook,
    }
    # Not a limit of the template: where (a) would stop, beside it (left out of "what saturates first").
    compared = {
        f"*the account's concurrency ({pool:,.0f}), were the replier (a) batches of one*": pool / mix_a,
    }
    ordered = sorted(limits.items(), key=lambda item: item[1])
    limit_rows = [
        (name, _fmt(rate), f"{_per_day_at_peak(rate) / 1e6:,.2f} M")
        for name, rate in sorted({**limits, **compared}.items(), key=lambda item: item[1])
    ]
    first_limits = []
    for volume in VOLUMES:
        peak = volume / DAY_SECONDS * PEAK_FACTOR
        over = [name for name, rate in ordered if rate < peak]
        first_limits.append(
            f"**{volume / 1e6:g} M a day** (peak {_fmt(peak)} notifications/s): "
            + ("; then ".join(over) if over else "nothing listed")
            + " — in that order."
        )
    hour_pool = AGENT_SENDS_PER_ENVIRONMENT * 3600
    ten_peak = VOLUMES[1] / DAY_SECONDS * PEAK_FACTOR
    ten_a = replier_concurrency(ten_peak, m.first_reply_a, m.own_outbound)
    ten_b = replier_concurrency(ten_peak, m.first_reply_b, m.own_outbound)
    # The need the advice is from: the mixed stream where it was measured, else full batches.
    ten_need = ten_b if math.isnan(m.mixed_b) else ten_peak * m.mixed_b
    which = (
        "(b), the template, at full batches of first replies"
        if math.isnan(m.mixed_b)
        else f"the mixed stream at saturation through (b), the template ({_fmt(ten_b)} at full batches of "
        "first replies alone)"
    )
    held = (
        "The stage throttle (twice the peak), the webhook's reservation, API Gateway's account limit "
        f"({API_ACCOUNT_RATE:,} requests/s) and DynamoDB on-demand hold 10 M a day as they are."
    )
    needed = (
        "`ReplierMaximumConcurrency` set to the row above; the default "
        f"{d['ReplierMaximumConcurrency']:g} is for small traffic"
    )
    if ten_need <= pool:
        ten_text = (
            "- **10 M a day within the default quotas: yes** (AWS's; Nylas' send pool is the next point). "
            f"With {which}, the replier needs "
            f"{_fmt(ten_need)} concurrent executions at the peak, within the {pool:,.0f} a default account's "
            f"{ACCOUNT_QUOTA:,} leaves it beside the webhook's reservation ({needed}). "
            f"(a) batches of one would need {_fmt(ten_a)}"
            + (
                f", more than the {pool:,.0f}: every record would hold an execution for its whole wait on "
                "Nylas and the agent. "
                if ten_a > pool
                else ", within it too. "
            )
            + held
        )
    else:
        ten_text = (
            f"- **10 M a day within the default quotas: no.** With {which}, the replier needs "
            f"{_fmt(ten_need)} concurrent executions at the peak, more than the {pool:,.0f} a default "
            f"account's {ACCOUNT_QUOTA:,} leaves it beside the webhook's reservation ((a) batches of one "
            f"would need {_fmt(ten_a)}): 10 M a day needs a concurrency quota increase (Service Quotas → "
            f"AWS Lambda → Concurrent executions) and {needed}. {held}"
        )
    return (
        "## Scale on paper\n\n"
        "From this run's measurements, not measured at scale. The model: every inbound message is "
        "answered and each reply brings its own `message.created` back (half the notifications first "
        f"replies, half own outbound); the peak hour is {PEAK_FACTOR:g}x the day's average; concurrency "
        "is notifications per second times billed seconds per notification (Little's law on what Lambda "
        "bills). Measured inputs: "
        f"a first reply at real latency bills {m.first_reply_b:.2f} s per notification with (b), the "
        f"template, at full batches, and {m.first_reply_a:.2f} s with (a) batches of one (Saturation, under "
        f"Batch concurrency); own outbound {m.own_outbound * 1000:.0f} ms (no Nylas call); the webhook "
        f"{m.webhook * 1000:.1f} ms. The account: Lambda's default quota of {ACCOUNT_QUOTA:,} concurrent "
        f"executions per region ({LAMBDA_QUOTAS_URL}), of which the webhook reserves "
        f"{reserved:g} (`WebhookReservedConcurrency`), so `make deploy` lets the replier's event source have "
        f"{pool:,.0f} (`ops/preflight.py`)."
        + (
            f" (b)'s figure needs full batches: in the real-latency mix, where records seldom wait, its "
            f"batches held {m.sparse_records_b:.2f} records and billed {m.sparse_first_reply_b:.2f} s per "
            "notification, about what (a) bills. A batch fills when records wait in the queue: where the "
            "need at such sparse batches would pass the concurrency the replier is given, records wait, "
            "batches fill and the need falls towards the full-batch figure the table uses (at the price "
            "of that wait, not measured here at scale); below it the replier needs more executions than "
            "the table says, and has them."
            if not math.isnan(m.sparse_records_b)
            else ""
        )
        + "\n\n"
        + table(("volume", "what", "figure"), rows)
        + "\n\nWhat limits the rate, in notifications per second at the peak, and the daily volume that peak "
        "belongs to — lowest first (in italics, for comparison: where (a) batches of one would stop):\n\n"
        + table(("limit", "notifications/s at the peak", "notifications/day"), limit_rows)
        + "\n\nWhat saturates first:\n\n"
        + "\n".join(f"- {line}" for line in first_limits)
        + "\n\n"
        + ten_text
        + "\n"
        "- **Agent Account sends (Nylas)**: "
        f"{AGENT_SENDS_PER_ENVIRONMENT}/s pooled per environment (1/s in a sandbox; {AGENT_SEND_LIMITS_URL}; "
        "daily and monthly quotas per plan come on top). A burst above it is queued and answered `202`, a "
        f"full queue `429` with `Retry-After` ({AGENT_SEND_QUEUEING_URL}); the replier retries after it, and "
        "the `nylas-throttling` alarm says when it lasts. At the model's peak that pool is reached near "
        f"{_per_day_at_peak(2 * AGENT_SENDS_PER_ENVIRONMENT) / 1e6:.2f} M notifications a day: at 1 M and "
        "10 M a day the reply rate is a plan matter with Nylas (more environments, or connected mailboxes at "
        f"{SENDS_PER_GRANT} sends/s per grant, {NYLAS_RATE_LIMITS_URL}), not a setting of ours; more replier "
        "concurrency than the send rate only adds retries.\n"
        "- **Per thread and per recipient**: the loop guard allows `ReplyBudgetPerHour` "
        f"({d['ReplyBudgetPerHour']:g}) replies per thread in a rolling hour, and the per-recipient budget "
        f"`ReplyBudgetPerRecipientPerHour` ({d['ReplyBudgetPerRecipientPerHour']:g}, "
        "`REPLY_BUDGET_PER_RECIPIENT_PER_HOUR`) replies to any one address in a clock hour, across threads: "
        "each reply is reserved in the recipient's hour item of the state table before it is drafted "
        "(`store.reserve`), and a reply past the budget is skipped as `recipient_budget_exhausted`. So one "
        f"conversation can take at most {d['ReplyBudgetPerHour']:g} of the pool's {hour_pool:,} sends an "
        f"hour ({d['ReplyBudgetPerHour'] / hour_pool:.3%}) and one sender (the address our replies go to) "
        "at most "
        f"{d['ReplyBudgetPerRecipientPerHour']:g} ({d['ReplyBudgetPerRecipientPerHour'] / hour_pool:.3%}), "
        "however many threads it opens; a mailer writing from many addresses takes that share per "
        "address.\n"
        f"- **Nylas per grant** ({NYLAS_RATE_LIMITS_URL}): {MESSAGES_PER_GRANT} Messages API requests a "
        "second; one agent mailbox taking every thread read meets it at the row above. The Grants API allows "
        f"{GRANTS_PER_APPLICATION} requests/s per application and each new replier container looks its grant "
        f"up once: a scale-out faster than {GRANTS_PER_APPLICATION} containers a second meets `429`s "
        "(retried). "
        f"Lambda adds at most {SQS_SCALE_UP_PER_MINUTE} concurrent executions a minute to an SQS event "
        f"source ({SQS_SCALING_URL}), so a cold start to the 10 M peak takes the minutes in the table while "
        "the queue absorbs the difference.\n"
        "- **DynamoDB** (on-demand) has no setting to raise: the load spreads over notification, message and "
        "thread keys (and a recipient's hour); the hottest is a thread's item, a handful of writes per reply "
        "and at most `ReplyBudgetPerHour` replies an hour, far below the 1,000 write units a second a "
        "partition takes. "
        "A table doubling its traffic within 30 minutes can throttle (the `dynamodb-throttles` alarm).\n"
        "- **SQS** standard queues have no practical request limit here.\n"
        "- **Cost** grows linearly (Cost, above); API Gateway's REST price steps down above 333 M requests a "
        "month, beyond 10 M a day."
    )
