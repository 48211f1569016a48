"""The local stack says when SQS dead-letters a notification, and which message it was about.

In AWS a dead-lettered record is an alarm and a queue to look at (``docs/operations.md``); on a
terminal it used to be silence after the replier's last "it will be retried". The watch reads the
dead-letter queue's depth each second and, when it grows, looks at the new letters (left on the
queue) to name each one: its notification, the Nylas message it is about and its receives.
"""

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

DEAD_LETTERED = "notification dead-lettered"
REDRIVE_COMMAND = "make redrive ARGS=--local"


def message_about(body: str) -> tuple[str, str]:
    """(notification id, Nylas message id) of a queued notification body; empty when unreadable."""
    try:
        notification = json.loads(body)
        return str(notification.get("id") or ""), str(notification["data"]["object"].get("id") or "")
    except (ValueError, KeyError, TypeError, AttributeError):
        return "", ""


class DeadLetterWatch:
    """New letters on the dead-letter queue, each reported once.

    Parameters
    ----------
    sqs:
        An SQS client of the local stack's embedded AWS.
    dead_letter_url:
        The dead-letter queue.
    max_receives:
        The notification queue's ``maxReceiveCount``, for the sentence.
    report:
        Called with one log record per new letter.
    redrive:
        The command that brings a letter back (:func:`devstack.hints.redrive_command`).
    """

    def __init__(
        self,
        sqs: Any,
        dead_letter_url: str,
        max_receives: int,
        report: Callable[[dict[str, Any]], None],
        redrive: str = REDRIVE_COMMAND,
    ) -> None:
        self._redrive = redrive
        self._sqs = sqs
        self._url = dead_letter_url
        self._max_receives = max_receives
        self._report = report
        self._seen: set[str] = set()
        self._depth = 0

    def check(self) -> int:
        """Report the letters that arrived since the last check; how many were reported."""
        attributes = self._sqs.get_queue_attributes(
            QueueUrl=self._url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        depth = sum(int(value) for value in attributes.values())
        grew, self._depth = depth > self._depth, depth
        if not grew:
            return 0
        reported = 0
        for _ in range(3):  # receives sample the queue: a few, as ops.redrive.peek does
            # Visibility 0: the letters stay on the queue for `make redrive`, as if never looked at.
            batch = self._sqs.receive_message(
                QueueUrl=self._url, MaxNumberOfMessages=10, VisibilityTimeout=0, WaitTimeSeconds=0
            ).get("Messages", [])
            for message in batch:
                if message["MessageId"] in self._seen:
                    continue
                self._seen.add(message["MessageId"])
                notification_id, message_id = message_about(message.get("Body", ""))
                self._report(self.record(notification_id, message_id))
                reported += 1
            if not batch:
                break
        return reported

    def record(self, notification_id: str, message_id: str) -> dict[str, Any]:
        """The log record of one letter, in the handlers' shape (the serve pane shows it as theirs)."""
        return {
            "level": "ERROR",
            "message": DEAD_LETTERED,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "service": "replyonce-sqs",
            "notification_id": notification_id,
            "message_id": message_id,
            "redrive": self._redrive,
            "detail": (
                f"the replier failed it {self._max_receives} times (maxReceiveCount); no reply goes out "
                f"until it comes back: fix the agent, then `{self._redrive}`"
            ),
        }
