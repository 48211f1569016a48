"""The sample mailbox behind the files of ``events/``: the messages they name exist in the emulator."""

from devstack.events import AGENT_GRANT_ID, CUSTOMER_EMAIL, sample_message_created
from devstack.nylas import NylasEmulator


def seed_sample_mailbox(nylas: NylasEmulator) -> None:
    """Create the inbound messages that ``events/*.json`` refer to (same ids, thread, sender)."""
    for notification in (
        sample_message_created(),
        sample_message_created(
            message_id="msg-inbound-0002", body="<p>The full body of the truncated message.</p>"
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
