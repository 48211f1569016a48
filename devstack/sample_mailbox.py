"""The sample mailbox behind the files of ``events/``: the messages they name exist in the emulator.

Each on a thread of its own: a customer's first message is answered at once, while two messages on a
thread no lease has seen yet are one burst that waits for the new state to settle
(``replyonce.core.arrival.state_settles_in``, up to ``pending_confirm_seconds``) — the sample events
show the first.
"""

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, SAMPLE_SECOND_THREAD, sample_message_created
from devstack.nylas import NylasEmulator


def seed_sample_mailbox(nylas: NylasEmulator) -> None:
    """Create the inbound messages that ``events/*.json`` refer to (same ids, thread, sender)."""
    for notification in (
        sample_message_created(),
        sample_message_created(
            message_id="msg-inbound-0002",
            thread_id=SAMPLE_SECOND_THREAD,
            body="<p>The full body of the truncated message.</p>",
        ),
    ):
        message = notification["data"]["object"]
        nylas.deliver_inbound(
            AGENT_GRANT_ID,
            from_email=CUSTOMER_EMAIL,
            subject=message["subject"],
            body=message["body"],
            thread_id=message["thread_id"],
            message_id=message["id"],
            date=message["date"],
        )
