"""The tests stand on the dev/test support code (``devstack/``), never on the benchmarks; ``ops/`` on neither.

Why: ``bench/`` is free to change what it measures and how; a test that
imported it would break (or silently change meaning) when a benchmark is
reworked. The request-counting harness the budgets are asserted with lives in
``devstack.counting`` and the fresh-interpreter cold starts in
``devstack.cold_start``; ``bench`` imports them from there. The check reads
the source (AST), following first-party imports, so a module that reaches
``bench`` through a helper is caught as well as a direct import.

And the layer defines nothing the repository never uses: a public name of it
that no file names again is dead code, removed rather than left to mislead.
"""

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Where a first-party top-level package lives (the layer is on sys.path as in Lambda).
SEARCH_PATH = (ROOT, ROOT / "layers" / "replyonce")


def _imported_names(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports (``from a.b import c`` yields ``a.b`` and ``a.b.c``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _source(module: str) -> Path | None:
    """The first-party file of ``module``, or ``None`` for the standard library and third parties."""
    parts = module.split(".")
    for base in SEARCH_PATH:
        candidate = base.joinpath(*parts)
        if candidate.with_suffix(".py").is_file():
            return candidate.with_suffix(".py")
        if (candidate / "__init__.py").is_file():
            return candidate / "__init__.py"
    return None


def _reached_from(start: list[Path]) -> dict[str, Path]:
    """Every first-party module reachable by imports from ``start``, with the file that imported it first."""
    seen: dict[str, Path] = {}
    pending = list(start)
    visited: set[Path] = set()
    while pending:
        path = pending.pop()
        if path in visited:
            continue
        visited.add(path)
        for name in _imported_names(path):
            if name in seen:
                continue
            source = _source(name)
            if source is None and name.split(".")[0] != "bench":
                continue
            seen[name] = path
            if source is not None:
                pending.append(source)
    return seen


def test_tests_import_nothing_from_bench():
    reached = _reached_from(sorted((ROOT / "tests").rglob("*.py")))
    from_bench = {
        name: str(by.relative_to(ROOT)) for name, by in reached.items() if name.split(".")[0] == "bench"
    }
    assert from_bench == {}


def test_the_scan_follows_imports_into_support_code():
    # Guard the scan itself: it must see what the budget tests use, through devstack.
    reached = _reached_from([ROOT / "tests" / "integration" / "test_budgets.py"])
    assert {"devstack.counting", "devstack.cold_start", "replyonce.shell.consumer"} <= reached.keys()


def test_the_operator_commands_stand_on_the_layer_alone_never_on_the_dev_tools():
    # `python -m ops` runs against a deployed stack: a change to the local stack, the chaos harness
    # or the benchmarks must not change (or break) what an operator runs.
    reached = _reached_from(sorted((ROOT / "ops").glob("*.py")))
    dev_tools = {"devstack", "chaos", "bench", "tests"}
    from_dev_tools = {
        name: str(by.relative_to(ROOT)) for name, by in reached.items() if name.split(".")[0] in dev_tools
    }
    assert from_dev_tools == {}


def _top_level_names(path: Path) -> list[str]:
    """The public functions, classes and constants ``path`` defines at its top level."""
    names: list[str] = []
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [name for name in names if not name.startswith("_")]


def test_every_public_name_of_the_layer_is_used_somewhere():
    # Dead code misleads a reader about what the product does (issue 33: a screening helper and an answer
    # type nothing read). A name counts as used when any Python file of the repository names it again.
    words = Counter(
        word
        for folder in ("bench", "chaos", "devstack", "functions", "layers", "ops", "scripts", "tests")
        for path in (ROOT / folder).rglob("*.py")
        for word in re.findall(r"\w+", path.read_text())
    )
    unused = [
        f"{module.name}: {name}"
        for module in sorted((ROOT / "layers" / "replyonce" / "replyonce").rglob("*.py"))
        for name in _top_level_names(module)
        if words[name] <= 1
    ]
    assert unused == []


def test_nylas_largest_page_is_written_once():
    # Nylas lists at most 200 items a page (messages, threads, folders): replyonce.config.MAX_THREAD_WINDOW.
    # A second copy of the number is one that stays behind when Nylas or the setting changes.
    from replyonce.config import MAX_THREAD_WINDOW

    source = ROOT / "layers" / "replyonce" / "replyonce" / "config.py"
    lines = source.read_text().splitlines()
    written = lines.index(f"MAX_THREAD_WINDOW = {MAX_THREAD_WINDOW}")
    the_source = {(source, written), (source, written - 1)}  # the constant, and the comment saying why
    copies = [
        f"{path.name}:{number + 1}: {line.strip()}"
        for path in sorted(source.parent.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines())
        if re.search(rf"\b{MAX_THREAD_WINDOW}\b", line)
        and re.search(r"limit|window|page", line, re.IGNORECASE)
        and (path, number) not in the_source
    ]
    assert copies == []


# The unit tier runs in a fresh interpreter, and what it imported is read at the end: the embedded AWS
# (moto, and the flask and werkzeug its server stands on) must be none of it.
_UNIT_TIER_IMPORTS = """
import json, sys
import pytest
code = pytest.main(["tests/unit", "-q", "-p", "no:cacheprovider", "-p", "no:logging"])
servers = sorted({name.split(".")[0] for name in sys.modules} & {"moto", "flask", "werkzeug"})
print(json.dumps({"exit": int(code), "servers": servers}))
"""


def test_the_unit_tier_imports_no_embedded_aws_and_passes_on_its_own():
    import json
    import os
    import subprocess
    import sys

    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in SEARCH_PATH)}
    result = subprocess.run(  # noqa: S603 - this interpreter, our own script
        [sys.executable, "-c", _UNIT_TIER_IMPORTS],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    verdict = json.loads(result.stdout.strip().splitlines()[-1])
    assert verdict == {"exit": 0, "servers": []}, result.stdout[-3000:]
