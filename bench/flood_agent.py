"""The flood bench's agent: the template agent after a fixed draft time.

Why fixed: ``make bench-flood`` compares the quiet grants' time to reply with and without one grant's
flood, so every record must cost the same; a model's draft takes seconds, and that time (not this
machine's CPU) is what holds a replier's concurrency while a flood is worked off. The bench sets
:data:`SECONDS` before the first container is built (``REPLY_AGENT=bench.flood_agent:reply``).
"""

import time

from replyonce.adapters.agents import template_agent
from replyonce.agent import Conversation, Reply

SECONDS = 1.0
"""The draft's time, the same for every message."""


def reply(conversation: Conversation) -> Reply:
    time.sleep(SECONDS)
    return template_agent(conversation)
