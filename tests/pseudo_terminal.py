"""Run a command the way a person does: on a (pseudo-)terminal, where rich draws spinners and bars.

Why: CI pipes every command, and a piped run takes none of the terminal's code paths (``rich``'s
``Live`` displays swap ``sys.stdout`` only on a terminal). A command that behaves only when piped
passes every piped test and still fails the first person who types it.
"""

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

# Control sequences (colours, cursor moves, line clears) stripped for assertions on the text.
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def ctrl_c_as_in_a_terminal() -> None:
    """In the child, before ``exec``: SIGINT back to its default, as a terminal's shell starts a job.

    Why: a shell without job control starts background commands with SIGINT ignored (``make test &``,
    ``nohup``), the children inherit it, and Python then installs no ``KeyboardInterrupt`` handler:
    a test of Ctrl-C would see the command ignore it, which no user at a terminal sees.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """A process whose stdin, stdout and stderr are one pseudo-terminal; everything it drew is kept.

    Parameters
    ----------
    argv:
        The command.
    cwd, env:
        Where and with what environment it runs (``TERM`` is set to a colour terminal).
    columns, rows:
        The terminal's size, as the kernel reports it to the program.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        columns: int = 200,
        rows: int = 50,
    ) -> None:
        self._master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        environment = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        environment["TERM"] = "xterm-256color"
        # Its own session, as a shell gives each job its own process group: Ctrl-C reaches it alone.
        self.process = subprocess.Popen(  # noqa: S603 - the tests' own commands
            list(argv),
            cwd=cwd,
            env=environment,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=ctrl_c_as_in_a_terminal,
        )
        os.close(slave)
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="pseudo-terminal", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO: every process holding the terminal has exited
                return
            if not chunk:
                return
            with self._lock:
                self._chunks.append(chunk)

    def raw(self) -> str:
        """Everything drawn so far, control sequences included."""
        with self._lock:
            return b"".join(self._chunks).decode(errors="replace")

    def text(self) -> str:
        """Everything drawn so far, without colours and cursor movements."""
        return _CONTROL.sub("", self.raw())

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first match of ``pattern`` in :meth:`text`; fails the test after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not (found := re.search(pattern, self.text())):
            if self.process.poll() is not None:
                self._reader.join(timeout=5)
                if found := re.search(pattern, self.text()):
                    return found
                code = self.process.returncode
                raise AssertionError(f"exited {code} before {pattern!r}:\n{self.text()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} never appeared:\n{self.text()[-3000:]}")
            time.sleep(0.1)
        return found

    def wait(self, timeout: float) -> int:
        """The exit status, once the process has ended and everything it drew was read."""
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return code

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the whole foreground job, as the terminal sends it."""
        os.killpg(self.process.pid, signal.SIGINT)

    def close(self) -> None:
        """Stop the process if it still runs (SIGTERM, then SIGKILL) and release the terminal."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        os.close(self._master)
