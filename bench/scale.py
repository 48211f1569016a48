"""Scale on paper: what 1 M and 10 M notifications a day cost and need, from this run's counts.

Nothing here is measured: it multiplies what the run counted (requests per
notification on each path, DynamoDB units, the template's batching and
concurrency) by a traffic model, and sets the result against published
limits. The model is stated with the figures so it can be argued with:

- Agent Accounts fire ``message.created`` for the agent's own sent mail, so
  every reply brings one "own outbound" notification back: when every inbound
  message is answered, half the notifications are first replies and half own
  outbound. Duplicates, ``message.updated`` and skipped senders only lower
  the reply rate.
- Traffic is not flat: the peak hour is taken as ``PEAK_FACTOR`` times the
  day's average.
- A replier record's time is the local handler time plus Nylas' own time per
  reply, which the local stack cannot measure: it is shown at
  ``NYLAS_SECONDS_PER_REPLY`` values (a thread read and a send).
"""

from dataclasses import dataclass

from bench import costs
from bench.markdown import table
from devstack.counting import Tally
from devstack.template import load_template, sqs_event_source

DAY_SECONDS = 86_400
PEAK_FACTOR = 3.0
NYLAS_SECONDS_PER_REPLY = (1.0, 3.0)
VOLUMES = (1_000_000, 10_000_000)

# Published Nylas limits (per second), with where they are stated.
NYLAS_RATE_LIMITS_URL = "https://developer.nylas.com/docs/dev-guide/platform/rate-limits/"
AGENT_SEND_LIMITS_URL = "https://developer.nylas.com/docs/v3/agent-accounts/send-limits/"
AGENT_SEND_QUEUEING_URL = (
    "https://developer.nylas.com/docs/changelogs/2026-10-09-agent-account-send-queueing/"
)
MESSAGES_PER_GRANT = 200  # Messages API (the thread read), per grant
SENDS_PER_GRANT = 200  # JSON sends, per grant
GRANTS_PER_APPLICATION = 50  # Grants API (a container's grant lookup), per application
AGENT_SENDS_PER_ENVIRONMENT = 5  # Agent Accounts: pooled per environment (1 in a sandbox)
# DynamoDB: what one partition key takes at most (AWS documents 1,000 WCU/s per partition).
DYNAMODB_WRU_PER_PARTITION = 1000


@dataclass(frozen=True)
class Volume:
    """One daily volume under the model."""

    per_day: int
    first_reply_cost: float  # USD per million notifications, by path
    own_outbound_cost: float

    @property
    def per_second(self) -> float:
        return self.per_day / DAY_SECONDS

    @property
    def replies_per_second(self) -> float:
        return self.per_second / 2

    @property
    def peak_replies_per_second(self) -> float:
        return self.replies_per_second * PEAK_FACTOR

    @property
    def monthly_usd(self) -> float:
        millions = self.per_day * 30 / 1e6
        return millions * (self.first_reply_cost + self.own_outbound_cost) / 2


def _template_settings() -> dict[str, float]:
    template = load_template()
    parameters = template["Parameters"]
    replier = template["Resources"]["ReplierFunction"]["Properties"]
    source = sqs_event_source(template)
    variables = replier["Environment"]["Variables"]
    return {
        "maximum_concurrency": float(parameters["ReplierMaximumConcurrency"]["Default"]),
        "maximum_concurrency_cap": float(parameters["ReplierMaximumConcurrency"]["MaxValue"]),
        "batch_size": float(source["BatchSize"]),
        "window": float(source.get("MaximumBatchingWindowInSeconds", 0)),
        "lease_wait": float(variables.get("LEASE_WAIT_SECONDS", 0)),
    }


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if value >= 10 else f"{value:,.2f}"


def render(
    first_reply: Tally,
    own_outbound: Tally,
    inputs: costs.Inputs,
    webhook_ms: float,
    replier_ms: float,
) -> str:
    """The "Scale on paper" section of ``docs/performance.md``."""
    settings = _template_settings()
    first_cost = costs.path_cost(inputs, "first reply").total
    outbound_cost = costs.path_cost(inputs, "own outbound message").total
    volumes = [Volume(n, first_cost, outbound_cost) for n in VOLUMES]
    wru_reply, rru_reply = costs.dynamodb_units(first_reply, inputs.largest_item_bytes)
    wru_outbound, _ = costs.dynamodb_units(own_outbound, inputs.largest_item_bytes)
    wru_per_notification = (wru_reply + wru_outbound) / 2
    concurrency = settings["maximum_concurrency"]

    rows = []
    for v in volumes:
        peak = v.per_second * PEAK_FACTOR
        replier_at = [
            f"{_fmt(v.peak_replies_per_second * (replier_ms / 1000 + nylas))} at {nylas:g} s"
            for nylas in NYLAS_SECONDS_PER_REPLY
        ]
        # Records per batch: full once the window gathers a batch's worth (one poller's view, roughly).
        batches = min(settings["batch_size"], max(1.0, peak * settings["window"]))
        rows += [
            (
                f"{v.per_day / 1e6:g} M/day",
                "notifications/s (average, peak hour)",
                f"{_fmt(v.per_second)}, {_fmt(peak)}",
            ),
            (
                "",
                "replies/s (= Nylas sends, thread reads)",
                f"{_fmt(v.replies_per_second)}, {_fmt(v.peak_replies_per_second)}",
            ),
            ("", "webhook concurrency at the peak (warm handler time)", _fmt(peak * webhook_ms / 1000)),
            (
                "",
                "replier concurrency at the peak (replies/s x a reply's time, by Nylas time per reply)",
                "; ".join(replier_at),
            ),
            ("", "DynamoDB WRU/s at the peak (all keys)", _fmt(peak * wru_per_notification)),
            (
                "",
                "SQS requests/s at the peak (send + event source receive/delete)",
                _fmt(peak * (1 + 2 / batches)),
            ),
            ("", "USD per month (30 days, list prices above)", f"${v.monthly_usd:,.0f}"),
        ]
    replier_limit = concurrency / (replier_ms / 1000 + NYLAS_SECONDS_PER_REPLY[0])
    replier_name = (
        f"replier at `ReplierMaximumConcurrency` {concurrency:g}, {NYLAS_SECONDS_PER_REPLY[0]:g} s/reply"
    )
    saturation = {
        "Agent Account sends (pooled per environment)": AGENT_SENDS_PER_ENVIRONMENT,
        replier_name: replier_limit,
        "Messages API per grant (one agent mailbox takes every thread read)": MESSAGES_PER_GRANT,
        "JSON sends per grant (a connected mailbox, not an Agent Account)": SENDS_PER_GRANT,
    }
    limit_rows = [
        (name, _fmt(limit), f"{limit * 2 * DAY_SECONDS / PEAK_FACTOR / 1e6:,.2f} M")
        for name, limit in sorted(saturation.items(), key=lambda item: item[1])
    ]
    one_m = volumes[0].replies_per_second
    agent_text = (
        f"Nylas pools Agent Account sends per environment ({AGENT_SENDS_PER_ENVIRONMENT}/s; 1/s in a "
        f"sandbox, {AGENT_SEND_LIMITS_URL} — check the figure for your plan there: daily and monthly "
        "quotas apply as well); a burst above it is queued and answered `202`, a full queue `429` with "
        f"`Retry-After` ({AGENT_SEND_QUEUEING_URL}). At 1 M notifications a day the average reply rate "
        f"({_fmt(one_m)}/s) is {'already above' if one_m > AGENT_SENDS_PER_ENVIRONMENT else 'below'} it, "
        "the peak hour well above: the limit is a plan matter with Nylas, not a setting of ours; on our "
        "side the replier backs off on `Retry-After` and `ReplierMaximumConcurrency` caps how hard it "
        "pushes."
    )
    replier_text = (
        "The replier processes a batch's records one after another, so its reply rate is at most "
        f"`ReplierMaximumConcurrency` ({concurrency:g} by default, up to "
        f"{settings['maximum_concurrency_cap']:g}) divided by a record's time: {_fmt(replier_limit)} "
        f"replies/s at {NYLAS_SECONDS_PER_REPLY[0]:g} s of Nylas per reply. The setting that moves it is "
        "that template parameter: 1 M notifications a day needs it at the replier concurrency row "
        "above, 10 M a day far higher (and the account's Lambda concurrency quota with it). The webhook "
        "needs a handful of concurrent executions even at 10 M a day; `WebhookReservedConcurrency` only "
        "caps it."
    )
    bullets = sorted(
        [
            (AGENT_SENDS_PER_ENVIRONMENT, "Agent Account sends (Nylas).", agent_text),
            (replier_limit, "Our replier's concurrency.", replier_text),
        ]
    )
    ordered = [
        ("Saturates first: " + bullets[0][1], bullets[0][2]),
        ("Then: " + bullets[1][1], bullets[1][2]),
    ]
    return (
        "## Scale on paper\n\n"
        "From the counts above, not measured at scale. The model: every inbound message is answered, and "
        "Agent Accounts fire `message.created` for the agent's own sent mail, so half the notifications are "
        "first replies and half own outbound (one reply per two notifications); the peak hour is "
        f"{PEAK_FACTOR:g}x the day's average. Per notification that is "
        f"{wru_per_notification:g} DynamoDB WRU (a first reply {wru_reply:g} WRU + {rru_reply:g} RRU, own "
        f"outbound {wru_outbound:g}; largest item {inputs.largest_item_bytes} B), "
        f"{first_reply.nylas_total / 2:g} Nylas request (a first reply's thread read and send, over two "
        "notifications) and 1 SQS SendMessage. A replier record's time is the "
        f"local handler time ({replier_ms:.0f} ms for a first reply) plus Nylas' own time for the thread "
        "read and the send, which the local stack cannot measure: shown at "
        + " and ".join(f"{s:g} s" for s in NYLAS_SECONDS_PER_REPLY)
        + ".\n\n"
        + table(("volume", "what", "figure"), rows)
        + "\n\nWhat limits the reply rate (replies per second), and the daily volume of notifications it "
        "allows at the model's peak:\n\n"
        + table(("limit", "replies/s", "notifications/day at the peak"), limit_rows)
        + "\n\n"
        + "\n".join(f"- **{label}** {text}" for label, text in ordered)
        + "\n"
        f"- **Nylas per grant** ({NYLAS_RATE_LIMITS_URL}): {MESSAGES_PER_GRANT} Messages API requests and "
        f"{SENDS_PER_GRANT} JSON sends per second per grant. One agent mailbox taking all the traffic reads "
        "one thread per reply, so it nears the Messages limit only at the 10 M peak. The Grants API allows "
        f"{GRANTS_PER_APPLICATION} requests/s per application: each new replier container looks its grant "
        "up once, so a scale-out faster than that many containers a second meets `429`s (retried).\n"
        "- **DynamoDB** (on-demand) has no setting to raise: the load spreads over notification, message "
        "and thread keys. The hottest key is a thread's item, written by the lease, the send intent, the "
        "record and the release — a handful of writes per reply, and at most "
        f"`REPLY_BUDGET_PER_HOUR` replies per thread an hour — far below the "
        f"{DYNAMODB_WRU_PER_PARTITION:,} WRU/s a partition takes. Records waiting for a busy thread poll "
        f"its item (`LEASE_WAIT_SECONDS` {settings['lease_wait']:g} s): each refused poll is a write unit on "
        "that key, a burst of k messages a few dozen writes.\n"
        "- **SQS** standard queues have no practical request limit here; batching "
        f"(`BatchSize` {settings['batch_size']:g}, window {settings['window']:g} s) divides the event "
        "source's receives and deletes once traffic fills batches.\n"
        "- **Cost** grows linearly; per million it is the table above (the DynamoDB writes, API Gateway and "
        "the webhook's SQS send are most of it). API Gateway's REST price steps down above 333 M requests a "
        "month, beyond 10 M a day."
    )
