"""The layer's import graph as `docs/design.md` draws it: nothing imports upwards.

Why: the split into one concern per module holds only while a flow cannot reach up into the
dispatch or sideways into another flow; an import that does is the first step back to one module
with five concerns. The same holds one level up, for the packages ("The layer's packages"): a rule
that imports an adapter is no longer a pure function, a core that imports one can no longer be run
on values alone. Read from the source (``ast``), so a function-level import counts too.
"""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "layers" / "replyonce" / "replyonce" / "core"

# Bottom first. A module may import only modules of a lower rank; the package's __init__ names the
# public surface and may import any of them.
RANK = {
    "results": 0,
    "steps": 1,
    "phases": 2,
    "situation": 3,
    "failure": 4,
    "shadow": 4,
    "region": 4,
    "lease": 4,
    "delivery": 5,
    "planning": 6,
    "outcome": 6,
    "arrival": 7,
    "learn": 7,
    "dispatch": 8,
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
        for path in layer.rglob("*.py")
        if path.parent != CORE
        and any(
            isinstance(n, ast.ImportFrom) and (n.module or "").startswith("replyonce.core.")
            for n in ast.walk(ast.parse(path.read_text()))
        )
    }
    assert reached == {}


LAYER = CORE.parent


def _layer_imports(path: Path) -> set[str]:
    """The layer's modules ``path`` imports, anywhere in it (a function-level import counts)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "replyonce":
            found.update(f"replyonce.{a.name}" for a in node.names)  # from replyonce import core
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("replyonce."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("replyonce."))
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(LAYER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_two_modules_of_the_layer_import_each_other():
    # config once imported policy inside a property while policy imported config for its defaults:
    # each module could only be read with the other open. Any cycle, however long, is found here.
    graph = {_module_name(p): _layer_imports(p) for p in LAYER.rglob("*.py")}
    graph = {name: {m for m in imports if m in graph and m != name} for name, imports in graph.items()}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        for nxt in sorted(graph[name]):
            if nxt in path:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    # A package's __init__ naming its modules' public surface is not a cycle of concerns.
    cycles = [c for c in cycles if "replyonce.core" not in c]
    assert cycles == []


# The packages, bottom first, and what each may import besides itself ("": the package root's shared
# values, ports and configuration). The rules are pure; the core decides with rules and values; an
# adapter talks to one outside service and knows nothing of the core; only the shell wires them all.
MAY_IMPORT = {
    "": set(),
    "rules": {""},
    "core": {"", "rules"},
    "adapters": {"", "rules"},
    "shell": {"", "rules", "core", "adapters"},
}
# The package root holds what every package shares; a module added here is a decision, not a default.
ROOT_MODULES = {
    "agent",
    "answers",
    "config",
    "exceptions",
    "grants",
    "jobs",
    "keys",
    "mail",
    "observability",
    "outgoing",
    "policy",
    "ports",
    "reasons",
    "redaction",
    "state",
}


def _package(module: str) -> str:
    """``replyonce.rules.plan`` -> ``rules``; ``replyonce.core`` -> ``core``; ``replyonce.mail`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in MAY_IMPORT else ""


def test_every_module_of_the_layer_is_in_a_package_of_the_graph():
    # A package may hold packages of its own (rules/text: the reader's rules, one concern a module).
    placed = {
        path.relative_to(LAYER).parts[0] if len(path.relative_to(LAYER).parts) > 1 else "."
        for path in LAYER.rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert placed == {".", *(p for p in MAY_IMPORT if p)}
    root = {p.stem for p in LAYER.glob("*.py")} - {"__init__"}
    assert root == ROOT_MODULES


def test_no_package_of_the_layer_imports_one_above_or_beside_it():
    reached = {}
    for path in sorted(LAYER.rglob("*.py")):
        own = _package(_module_name(path))
        wrong = sorted(
            module
            for module in _layer_imports(path)
            if _package(module) != own and _package(module) not in MAY_IMPORT[own]
        )
        if wrong:
            reached[path.relative_to(LAYER).as_posix()] = wrong
    assert reached == {}
