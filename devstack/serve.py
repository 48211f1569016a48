"""``make serve``: the local stack left running, for ``curl``, a tunnel, or a real Nylas webhook.

With ``NYLAS_API_URI`` and ``NYLAS_API_KEY`` set, the replier talks to the
real Nylas API instead of the emulator; set ``NYLAS_WEBHOOK_SECRET`` to the
secret Nylas returned when you registered the webhook, and
``AGENT_GRANT_IDS`` to your agent's grants.
"""

import argparse
import contextlib
import os
import signal
import sys
import threading

from devstack.sample_mailbox import seed_sample_mailbox
from devstack.stack import LocalStack, StackSettings
from devstack.template import LOCAL_API_KEY, LOCAL_WEBHOOK_SECRET


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--pollers", type=int, default=2)
    args = parser.parse_args(argv)
    real_nylas = os.environ.get("NYLAS_API_URI")
    if real_nylas and not os.environ.get("NYLAS_API_KEY"):
        parser.error("NYLAS_API_URI is set: NYLAS_API_KEY is needed too")
    settings = StackSettings(
        pollers=args.pollers,
        webhook_port=args.port,
        nylas_api_uri=real_nylas,
        nylas_api_key=os.environ.get("NYLAS_API_KEY", LOCAL_API_KEY),
        webhook_secret=os.environ.get("NYLAS_WEBHOOK_SECRET", LOCAL_WEBHOOK_SECRET),
        **({"agent_grant_ids": os.environ["AGENT_GRANT_IDS"]} if os.environ.get("AGENT_GRANT_IDS") else {}),
    )
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with LocalStack(settings, log_echo=sys.stderr) as stack:
        if stack.emulator is not None:
            seed_sample_mailbox(stack.emulator)
        secret = (
            f"{LOCAL_WEBHOOK_SECRET} (local development secret)"
            if settings.webhook_secret == LOCAL_WEBHOOK_SECRET
            else "from NYLAS_WEBHOOK_SECRET (not printed)"
        )
        nylas = real_nylas or f"emulator at {stack.emulator.url if stack.emulator else '?'}"
        print(
            f"ReplyOnce local stack\n  webhook URL     {stack.webhook_url}\n  webhook secret  {secret}\n"
            f"  Nylas API       {nylas}\n  agent grants    {settings.agent_grant_ids}\n"
            f"Try: curl '{stack.webhook_url}?challenge=hello'\nCtrl-C stops it.",
            file=stack.console,
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            stopped.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
