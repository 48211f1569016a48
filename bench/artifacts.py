"""Artifact sizes from ``sam build``: each function's code and the layer, unpacked and zipped.

The build goes to a temporary directory (not ``.aws-sam``) so a benchmark run
never replaces the build a developer is about to deploy. It runs exactly as
``make build`` does: the venv's Python 3.13 first on ``PATH``, no Docker.
Zipped sizes use deflate, as ``sam package`` uploads them.
"""

import io
import os
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ops.template import TEMPLATE_PATH

ROOT = TEMPLATE_PATH.parent
ARTIFACTS = ("WebhookFunction", "ReplierFunction", "ReplyOnceLayer")
# Lambda's limits: 250 MB unzipped for a function with all its layers, 50 MB zipped for a direct upload.
UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024


@dataclass(frozen=True)
class Artifact:
    name: str
    files: int
    bytes: int
    zipped_bytes: int
    largest_parts: list[tuple[str, int]]  # top-level entries (layer packages), largest first


def _sam() -> Path:
    return Path(sys.executable).parent / "sam"


def build(build_dir: Path) -> None:
    """``sam build`` into ``build_dir``, as ``make build`` runs it."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["SAM_CLI_TELEMETRY"] = "0"
    completed = subprocess.run(  # noqa: S603 - the venv's own sam, fixed arguments, no shell
        [
            str(_sam()),
            "build",
            "--template",
            str(TEMPLATE_PATH),
            "--build-dir",
            str(build_dir),
            "--cache-dir",
            str(build_dir.parent / "cache"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"sam build failed:\n{completed.stdout[-2000:]}\n{completed.stderr[-2000:]}")


def _zipped_size(directory: Path) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory))
    return buffer.tell()


def measure_directory(name: str, directory: Path) -> Artifact:
    """Sizes of one built artifact; a layer's parts are the packages under ``python/``."""
    files = [path for path in directory.rglob("*") if path.is_file()]
    base = directory / "python" if (directory / "python").is_dir() else directory
    parts: Counter[str] = Counter()
    for path in files:
        relative = path.relative_to(base) if path.is_relative_to(base) else path.relative_to(directory)
        top = relative.parts[0]
        if top.endswith((".dist-info", ".data")):
            top = "(package metadata)"
        parts[top] += path.stat().st_size
    return Artifact(
        name=name,
        files=len(files),
        bytes=sum(path.stat().st_size for path in files),
        zipped_bytes=_zipped_size(directory),
        largest_parts=parts.most_common(6),
    )


def measure() -> list[Artifact]:
    """Build once into a temporary directory and measure each artifact."""
    with tempfile.TemporaryDirectory(prefix="replyonce-bench-build-") as scratch:
        build_dir = Path(scratch) / "build"
        build(build_dir)
        return [measure_directory(name, build_dir / name) for name in ARTIFACTS]
