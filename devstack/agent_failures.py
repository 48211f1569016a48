"""Where an agent raised: the frame of the person's own code in the traceback the replier logged.

The replier logs an agent's exception as "the agent failed; the record will be retried" with its
``detail`` (``RuntimeError: ...``) and its whole ``traceback`` (``replyonce.core.learn``). The last
frames are the agent's own file, but the first dozen are the layer's and the thread's: the serve pane,
``make mail`` and the console each show the line that raised in the person's file, found here.
"""

import re
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$')
# Frames that are not the person's code: the layer, the interpreter's library, installed packages.
_NOT_THEIRS = ("/replyonce/replyonce/", "/site-packages/", "/lib/python3", "<frozen ")


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str
    code: str = ""

    def short(self) -> str:
        """``my_agent.py:12 in reply``: the file's name, its line, the function."""
        return f"{Path(self.path).name}:{self.line} in {self.function}"


def where_it_raised(traceback: str) -> Frame | None:
    """The innermost frame of the traceback in the person's own code (``None``: none there)."""
    found: Frame | None = None
    lines = traceback.splitlines()
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if match is None or any(part in match["path"] for part in _NOT_THEIRS):
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        code = "" if _FRAME.match(following) else following
        found = Frame(match["path"], int(match["line"]), match["function"].strip(), code)
    return found


def raised_words(record: dict) -> str:
    """``RuntimeError: the order service is down (my_agent.py:12 in reply)``: one line of a failure."""
    detail = str(record.get("detail") or "the agent raised")
    frame = where_it_raised(str(record.get("traceback") or ""))
    return f"{detail} ({frame.short()})" if frame else detail
