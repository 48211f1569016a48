"""Install pinned requirements into this interpreter's environment, showing progress instead of silence.

Run by the Makefile with the venv's Python:
``python scripts/install.py LABEL -r requirements-local.txt -c constraints.txt``.
Everything after LABEL is passed to ``pip install``. pip's own output is
kept: on a terminal a live line shows what pip is doing (resolving N
packages, downloading X, installing M); elsewhere (CI, a log) one line per
phase. When pip fails, its output is printed and the exit status is pip's.

Why not ``pip --quiet``: setting up takes a minute on a fresh machine and a
silent minute looks like a hang.
"""

import importlib
import re
import subprocess
import sys
import time

_COLLECTING = re.compile(r"^(?:Collecting|Requirement already satisfied:) ([A-Za-z0-9_.\-\[\]]+)")
_DOWNLOADING = re.compile(r"^\s*Downloading (\S+)")
_INSTALLING = re.compile(r"^Installing collected packages: (.*)")


def _pip(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]


def _rich_status() -> object | None:
    """A rich status spinner on a terminal, once rich is installed (it is one of the pins)."""
    if not sys.stderr.isatty():
        return None
    try:
        importlib.invalidate_caches()
        from rich.console import Console
    except ImportError:
        return None
    return Console(stderr=True).status("")


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: install.py LABEL PIP-INSTALL-ARGS...", file=sys.stderr)
        return 2
    label, pip_args = argv[0], argv[1:]
    try:
        return install(label, pip_args)
    except KeyboardInterrupt:
        # Ctrl-C reaches pip too (one process group): it stops on its own; one line, no traceback.
        # make then stops without marking the step done, so the next command installs again.
        print(f"\n[setup] {label}: interrupted; the next command finishes setting up", file=sys.stderr)
        return 130


def install(label: str, pip_args: list[str]) -> int:
    """Run pip with progress; pip's exit status."""
    started = time.monotonic()
    # rich first (seconds), pinned by the constraints file, so the long part can show a live line.
    # Without a constraints file (the checkov environment) nothing unpinned is added: plain lines.
    constraints = [a for i, a in enumerate(pip_args) if i > 0 and pip_args[i - 1] in ("-c", "--constraint")]
    if constraints:
        bootstrap = _pip(
            "install", "--quiet", "--progress-bar", "off", "rich", f"--constraint={constraints[0]}"
        )
        subprocess.run(bootstrap, check=False, capture_output=True)  # noqa: S603 - our own pip, argv list
    status = _rich_status()
    if status is None:
        print(f"[setup] {label}: resolving and installing (pip) ...", file=sys.stderr, flush=True)
    else:
        status.start()  # type: ignore[attr-defined]
    output: list[str] = []
    seen: set[str] = set()
    installed = 0
    process = subprocess.Popen(  # noqa: S603 - our own pip, argv list
        _pip("install", "--progress-bar", "off", *pip_args),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:
            output.append(line)
            text = None
            if found := _COLLECTING.match(line):
                seen.add(found.group(1).lower())
                text = f"{label}: resolving {len(seen)} packages ({found.group(1)})"
            elif found := _DOWNLOADING.match(line):
                text = f"{label}: resolving {len(seen)} packages, downloading {found.group(1)}"
            elif found := _INSTALLING.match(line):
                installed = len(found.group(1).split(","))
                text = f"{label}: installing {installed} packages"
                if status is None:
                    print(f"[setup] {text} ...", file=sys.stderr, flush=True)
            if text is not None and status is not None:
                status.update(text)  # type: ignore[attr-defined]
        code = process.wait()
    finally:
        if status is not None:
            status.stop()  # type: ignore[attr-defined]
        if process.poll() is None:  # interrupted: pip got the Ctrl-C too, or is told now
            process.terminate()
            process.wait(timeout=30)
    if code != 0:
        sys.stderr.write("".join(output))
        print(f"[setup] {label}: pip failed (exit {code})", file=sys.stderr)
        return code
    took = time.monotonic() - started
    news = f"{installed} installed" if installed else "nothing to install"
    print(f"[setup] {label}: {len(seen)} requirements checked, {news}, in {took:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
