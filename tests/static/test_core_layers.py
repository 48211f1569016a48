"""The core's import graph as `docs/design.md` ("The functional core") draws it: nothing imports upwards.

Why: the split into one concern per module holds only while a flow cannot reach up into the
dispatch or sideways into another flow; an import that does is the first step back to one module
with five concerns. Read from the source (``ast``), so a function-level import counts too.
"""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "layers" / "replyonce" / "replyonce" / "core"

# Bottom first. A module may import only modules of a lower rank; the package's __init__ names the
# public surface and may import any of them.
RANK = {
    "results": 0,
    "situation": 1,
    "failure": 2,
    "shadow": 2,
    "region": 2,
    "lease": 2,
    "delivery": 3,
    "arrival": 4,
    "outcome": 4,
    "learn": 5,
    "dispatch": 5,
}


def _core_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("replyonce.core."):
                found.add(node.module.split(".")[2])
            elif node.module == "replyonce.core":
                found.update(alias.name for alias in node.names if alias.name in RANK)
    return found


def test_every_module_of_the_core_has_its_place_in_the_graph():
    modules = {p.stem for p in CORE.glob("*.py")} - {"__init__"}
    assert modules == set(RANK)


def test_no_module_of_the_core_imports_one_above_or_beside_it():
    upward = {
        module: sorted(i for i in _core_imports(CORE / f"{module}.py") if RANK[i] >= RANK[module])
        for module in RANK
    }
    assert {m: found for m, found in upward.items() if found} == {}


def test_nothing_in_the_layer_reaches_into_the_core_but_through_its_surface():
    # The shell and the consumer read ``replyonce.core`` (its __all__), never a flow module directly:
    # a flow can then be split again without touching them.
    layer = CORE.parent
    reached = {
        path.name: sorted(_core_imports(path))
        for path in layer.glob("*.py")
        if any(
            isinstance(n, ast.ImportFrom) and (n.module or "").startswith("replyonce.core.")
            for n in ast.walk(ast.parse(path.read_text()))
        )
    }
    assert reached == {}
