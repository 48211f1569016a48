"""scripts/install.py: set-up says what it does instead of a silent minute; a pip failure is shown."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
