"""scripts/install.py: set-up says what it does instead of a silent minute; a pip failure is shown."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pseudo_terminal import Terminal

ROOT = Path(__file__).resolve().parents[2]


def install(tmp_path: Path, requirement: str) -> subprocess.CompletedProcess:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(requirement + "\n")
    return subprocess.run(  # noqa: S603 - this interpreter, our own script
        [
            sys.executable,
            "scripts/install.py",
            "demo tools",
            "-r",
            str(requirements),
            "-c",
            "constraints.txt",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_setup_reports_each_phase_and_a_summary(tmp_path):
    # rich is pinned and already installed here: pip checks it and installs nothing (no download).
    result = install(tmp_path, "rich")
    assert result.returncode == 0
    lines = result.stderr.strip().splitlines()
    assert lines[0] == "[setup] demo tools: resolving and installing (pip) ..."
    assert lines[-1].startswith("[setup] demo tools: ")
    assert "requirements checked, nothing to install, in " in lines[-1]


def test_a_pip_failure_shows_pips_output_and_its_exit_status(tmp_path):
    result = install(tmp_path, "rich===")  # not a requirement pip can parse: fails before any lookup
    assert result.returncode != 0
    assert "rich===" in result.stderr  # pip's own explanation is shown
    assert (
        result.stderr.strip().splitlines()[-1] == f"[setup] demo tools: pip failed (exit {result.returncode})"
    )


def find_python(python: str) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own script
        [str(ROOT / "scripts" / "find-python.sh")],
        cwd=ROOT,
        env={**os.environ, "PYTHON": python},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _other_python() -> str | None:
    """A real interpreter on this machine that is not 3.13 (Debian's /usr/bin/python3 is 3.11)."""
    for candidate in ("/usr/bin/python3", shutil.which("python3.12"), shutil.which("python3.11")):
        if candidate and Path(candidate).exists():
            version = subprocess.run(  # noqa: S603 - a fixed interpreter path
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            if version and version != "3.13":
                return candidate
    return None


@pytest.mark.skipif(_other_python() is None, reason="no Python other than 3.13 on this machine")
def test_a_python_that_is_not_313_is_refused_not_replaced():
    other = _other_python()
    result = find_python(other)
    assert result.returncode == 1
    assert result.stdout == ""  # no other interpreter offered in its place
    assert result.stderr.startswith(f"error: PYTHON={other} is Python 3.")
    assert ", not 3.13 (the Lambda runtime's version)." in result.stderr


def test_a_python_that_does_not_run_is_refused(tmp_path):
    result = find_python(str(tmp_path / "no-python-here"))
    assert result.returncode == 1
    assert "does not run as a Python interpreter" in result.stderr


def test_a_python_313_is_taken_as_given():
    result = find_python(sys.executable)
    assert result.returncode == 0
    assert Path(result.stdout.strip()).resolve() == Path(sys.executable).resolve()


def test_ctrl_c_during_setup_says_one_line_not_a_traceback(tmp_path):
    # An index that accepts connections and never answers: pip waits, as on a slow network.
    with socket.socket() as index:
        index.bind(("127.0.0.1", 0))
        index.listen(8)
        requirements = tmp_path / "requirements.txt"
        requirements.write_text("replyonce-not-a-published-package\n")
        argv = [
            sys.executable,
            "scripts/install.py",
            "demo tools",
            "-r",
            str(requirements),
            "--index-url",
            f"http://127.0.0.1:{index.getsockname()[1]}/simple",
        ]
        terminal = Terminal(argv, cwd=ROOT, env=dict(os.environ))
        try:
            time.sleep(3)
            assert terminal.process.poll() is None, terminal.text()  # pip is still waiting for the index
            terminal.interrupt()
            code = terminal.wait(timeout=60)
        finally:
            terminal.close()
    screen = terminal.text()
    assert code == 130
    assert "Traceback" not in screen
    last = screen.strip().splitlines()[-1]
    assert last == "[setup] demo tools: interrupted; the next command finishes setting up"
