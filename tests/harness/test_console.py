"""What a person sees of the handlers' logs: one readable line per event, raw JSON on request, no EMF."""

import io
import json

import pytest

from devstack.console import LogView, body_preview, make_console, readable_line, reply_panel, shown_lines

QUEUED = {
    "level": "INFO",
    "message": "notification queued",
    "timestamp": "2026-01-21 23:08:50,123+0000",
    "service": "replyonce-webhook",
    "function_name": "WebhookFunction",
    "function_request_id": "0f1e2d3c-aaaa-bbbb-cccc-1234567890ab",
    "notification_id": "5da3ec1e-eb01-4634-a7b7-d44291e3cba6",
    "notification_type": "message.created",
}
SKIPPED = {
    **QUEUED,
    "service": "replyonce-replier",
    "message": "notification skipped",
    "reason": "own_outbound",
}
EMF = {"_aws": {"Timestamp": 1, "CloudWatchMetrics": []}, "NotificationAccepted": [1.0]}


def shown(view_options: dict, *records: dict) -> str:
    out = io.StringIO()
    view = LogView(make_console(out, width=200), **view_options)
    for record in records:
        view(json.dumps(record), record)
    return out.getvalue()


def test_one_readable_line_per_event_with_time_function_notification_message_reason():
    text = shown({}, QUEUED, SKIPPED)
    lines = text.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("23:08:50 webhook  5da3ec1e-eb01-4634-a7b7-d44291e3cba6 notification queued")
    assert lines[1].startswith("23:08:50 replier  5da3ec1e-eb01-4634-a7b7-d44291e3cba6 notification skipped")
    assert "reason=own_outbound" in lines[1]
    assert "[0f1e2d3c]" in lines[1]  # the invocation's request id, shortened
    assert "{" not in text


def test_metric_lines_are_hidden_unless_asked():
    assert shown({}, EMF) == ""
    assert json.loads(shown({"metrics": True}, EMF)) == EMF


def test_json_logs_prints_the_raw_lines():
    text = shown({"json_logs": True}, QUEUED, SKIPPED)
    assert [json.loads(line) for line in text.splitlines()] == [QUEUED, SKIPPED]


def test_a_line_without_a_notification_shows_a_dash():
    rejected = {**QUEUED, "message": "request rejected", "reason": "signature_invalid"}
    del rejected["notification_id"]
    assert " -  " in readable_line(rejected).plain


def test_body_preview_turns_html_into_lines():
    assert body_preview("<p>Hi alice,</p><p>Thanks &amp; bye</p><p>third</p><p>fourth</p>") == [
        "Hi alice,",
        "Thanks & bye",
        "third",
    ]


def test_a_reply_panel_shows_what_the_replier_decided_and_the_first_lines():
    record = {
        "message": "reply sent",
        "to": ["alice@example.com"],
        "subject": "Re: Invoice 77",
        "covered": ["msg-1", "msg-2"],
        "replied_to": "msg-2",
        "reply_message_id": "msg-reply",
    }
    sent = {"id": "msg-reply", "thread_id": "thread-9", "body": "<p>Hi alice,</p><p>Here it is.</p>"}
    out = io.StringIO()
    make_console(out, width=100).print(reply_panel(record, sent))
    text = out.getvalue()
    for expected in (
        "to       alice@example.com",
        "subject  Re: Invoice 77",
        "answers  msg-1, msg-2",
        "reply    msg-reply",
        "thread   thread-9",
        "│ Hi alice,",
        "│ Here it is.",
    ):
        assert expected in text
    # Against the real Nylas mailbox there is no body to show: the record alone still reads.
    out = io.StringIO()
    make_console(out, width=100).print(reply_panel(record))
    assert "answers  msg-1, msg-2" in out.getvalue()


def test_ctrl_c_ends_a_command_with_one_line_and_exit_130(capsys):
    from devstack.cli_types import run_command

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert run_command(interrupted) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_progress_bars_only_where_a_person_watches_a_terminal():
    from rich.console import Console

    from ops.progress import progress_bar

    assert progress_bar(make_console(io.StringIO())) is None  # CI, a log file: lines, not redraws
    assert progress_bar(None) is None
    assert progress_bar(Console(file=io.StringIO(), force_terminal=True)) is not None


def test_text_in_square_brackets_is_printed_as_written():
    out = io.StringIO()
    make_console(out).print("[demo] subject '[URGENT] refund'")
    assert out.getvalue() == "[demo] subject '[URGENT] refund'\n"


def test_a_debug_step_line_names_its_step_and_hides_an_empty_detail():
    # POWERTOOLS_LOG_LEVEL=DEBUG: "next step detail={}" said nothing about which step.
    line = readable_line({"level": "DEBUG", "message": "next step", "step": "Fetch", "detail": {}}).plain
    assert "next step  step=Fetch" in line
    assert "detail" not in line


@pytest.mark.parametrize(
    ("lines", "full", "shown"),
    [
        (3, False, ["l1", "l2", "l3"]),
        (4, False, ["l1", "l2", "l3", "… 1 more line (--full shows the whole body)"]),
        (6, False, ["l1", "l2", "l3", "… 3 more lines (--full shows the whole body)"]),
        (6, True, ["l1", "l2", "l3", "l4", "l5", "l6"]),
    ],
)
def test_a_cut_body_says_how_many_lines_were_cut(lines, full, shown):
    body = "".join(f"<p>l{n}</p>" for n in range(1, lines + 1))
    assert shown_lines(body, 3, full=full) == shown


def test_an_agents_failure_line_names_the_line_of_the_persons_code_that_raised():
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/repo/layers/replyonce/replyonce/shell/replier.py", line 386, in call\n'
        "    result['outcome'] = self._agent(conversation)\n"
        '  File "/home/me/agents/my_agent.py", line 12, in reply\n'
        "    raise RuntimeError('the order service is down')\n"
        "RuntimeError: the order service is down\n"
    )
    record = {
        "level": "ERROR",
        "message": "the agent failed; the record will be retried",
        "detail": "RuntimeError: the order service is down",
        "traceback": traceback,
    }
    line = readable_line(record).plain
    assert line.endswith(
        "detail=RuntimeError: the order service is down  at=my_agent.py:12 in reply  "
        "raise RuntimeError('the order service is down')"
    ), line
