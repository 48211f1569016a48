"""Every line a replier writes is one whole JSON document, whatever the batch's threads do at once.

The threads of one batch share stdout (``replyonce.shell.consumer`` runs a batch's conversation threads at
once). The Logger writes each line under its handler's lock; Powertools Metrics ``print``s an EMF line
and its newline in two writes. ``replyonce.observability`` holds the Logger's lock around the metric,
so a log line cannot land between the two and leave CloudWatch one event with two documents.
"""

import io
import json
import sys
import threading

from replyonce.observability import count_by, logger


class HesitantStream(io.StringIO):
    """A stdout that, having taken a metric's JSON, lets another thread log before the newline."""

    def __init__(self, other_thread: threading.Thread) -> None:
        super().__init__()
        self._other = other_thread

    def write(self, text: str) -> int:
        written = super().write(text)
        if text.startswith('{"_aws"') and not self._other.is_alive():
            self._other.start()
            # The log line's whole chance to cut in; once the writer holds the lock it waits instead.
            self._other.join(timeout=1.0)
        return written


def test_a_log_line_never_lands_inside_a_metric_line(monkeypatch):
    handler = logger.registered_handler
    logger_line = threading.Thread(target=lambda: logger.info("reply sent", extra={"thread_id": "t2"}))
    stream = HesitantStream(logger_line)
    monkeypatch.setattr(sys, "stdout", stream)
    saved = handler.setStream(stream)
    try:
        count_by("RecordDeferred", "reason", "thread_busy")
        logger_line.join(timeout=5)
    finally:
        handler.setStream(saved)
    lines = stream.getvalue().splitlines()
    documents = [json.loads(line) for line in lines]  # each line parses: one document per line
    assert sorted(d.get("message", "metric") for d in documents) == ["metric", "reply sent"]
