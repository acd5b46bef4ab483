"""Imports flow one way (docs/architecture.md, Rooms): loaders → engine → compiler → adapter →
fixtures → cli (output/, the renderers and progress, below them all), with review/ and authoring/ (tools over the compiler, for the command line) and
hooks/ and flare/ beside them; nothing imports the command line, and nothing the compiler,
engine or loaders need imports review or authoring. A room importing one it may not is a
design change to make on purpose, in that table first.

Inside a room, modules import one way too: the import graph of src/ has no cycle
(``test_no_module_imports_itself_through_others``), imports inside functions included, so that
a module can be read after what it imports and a cycle is not hidden by moving its import
into a function. An import inside a function that is deferred on purpose (the command line's
subcommands, cli/lazy.py; PyYAML only when a spec is parsed) says so on its line:
``# lazy: <why>``; it is then no edge of the graph."""

from __future__ import annotations

import ast
import io
import tokenize
from collections import deque
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "flarespec"
DATA = {"bundled_specs", "bundled_fixtures"}
MAY_IMPORT = {
    "output": set(),
    "loaders": set(),
    "engine": {"loaders"},
    "compiler": {"engine", "loaders"} | DATA,
    "review": {"output", "compiler", "engine", "loaders"},
    "authoring": {"output", "fixtures", "compiler", "engine", "loaders"},  # fixtures: writer lint
    "hooks": {"engine", "loaders"},  # loaders: locations (the one location syntax)
    "adapter": {"output", "compiler", "engine", "loaders"},
    "fixtures": {"output", "adapter", "compiler", "engine", "loaders"} | DATA,
    "flare": {"fixtures", "compiler", "engine", "loaders"},
    "cli": {"review", "authoring", "adapter", "fixtures", "compiler", "engine", "loaders",
            "output"},
}


def imported_rooms(path: Path) -> set[str]:
    rooms = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        rooms.update(name.split(".")[1] for name in names
                     if name.startswith("flarespec.") and name.count(".") >= 1)
    return rooms


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_a_room_imports_only_the_rooms_below_it(room):
    offending = {f"{path.relative_to(SOURCE)} imports flarespec.{other}"
                 for path in sorted((SOURCE / room).rglob("*.py"))
                 for other in imported_rooms(path) - MAY_IMPORT[room] - {room}}
    assert offending == set()


def test_every_room_is_in_the_table():
    rooms = {path.name for path in SOURCE.iterdir()
             if path.is_dir() and (path / "__init__.py").exists()}
    assert rooms == set(MAY_IMPORT)


TEST_ONLY = {"jsonpath_ng", "jsonpath_rfc9535", "prometheus_client", "hypothesis", "pytest",
             "jsonschema"}


def test_run_time_code_imports_no_test_only_library():
    """The spec's JSONPath is flarespec's own (engine/jsonpath.py); the libraries it is
    checked against are test-only (pyproject's `test` extra)."""
    offending = set()
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offending.update(f"{path.relative_to(SOURCE)} imports {name}" for name in names
                             if name.split(".")[0] in TEST_ONLY)
    assert not offending, sorted(offending)


# --------------------------------------------------------------------------- modules

# Cycles known and left for a reason, as {frozenset of the modules: why}; each entry is a
# design debt with its reason, to be removed by the change that breaks it. None are left.
ALLOWED_CYCLES: dict[frozenset, str] = {}
LAZY = "# lazy:"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (its file, whether it is a package's __init__)."""
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _lazy_lines(text: str) -> set[int]:
    return {token.start[0] for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT and token.string.startswith(LAZY)}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        getattr(node.test, "id", None) == "TYPE_CHECKING" or
        getattr(node.test, "attr", None) == "TYPE_CHECKING")


def _imported(module: str, package: bool, node: ast.AST, modules: dict) -> list[str]:
    """The modules of src/ an import statement imports: ``from pkg import name`` imports the
    submodule ``pkg.name`` when there is one, else ``pkg`` (a parent package's own import
    is not counted: it holds no name of the importer)."""
    if isinstance(node, ast.Import):
        found = []
        for alias in node.names:
            name = alias.name
            while name and name not in modules:
                name = name.rpartition(".")[0]
            found += [name] if name else []
        return found
    base = node.module or ""
    if node.level:
        parts = module.split(".")[:len(module.split(".")) - (node.level - (1 if package else 0))]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
            for alias in node.names if f"{base}.{alias.name}" in modules or base in modules]


def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {module it imports: the line of the first such import}: at module level or
    inside a function, except under ``if TYPE_CHECKING:`` (never run) and a function's
    import marked ``# lazy: <why>``."""
    modules, graph = _modules(), {}
    for module, (path, package) in modules.items():
        text = path.read_text()
        lazy, edges = _lazy_lines(text), {}
        pending = [(ast.parse(text, str(path)), False)]
        while pending:
            node, in_function = pending.pop()
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    if in_function and child.lineno in lazy:
                        continue
                    for name in _imported(module, package, child, modules):
                        if name != module:
                            edges[name] = min(edges.get(name, child.lineno), child.lineno)
                pending.append((child, in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))))
        graph[module] = edges
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One shortest cycle through each module that is on one, as a chain [a, b, ..., a];
    rotations of the same cycle once."""
    chains, seen = [], set()
    for start in sorted(graph):
        came_from, queue = {start: None}, deque([start])
        while queue:
            node = queue.popleft()
            if start in graph[node] and node in came_from:
                chain = [start]
                while node is not None:
                    chain.append(node)
                    node = came_from[node]
                chain = chain[::-1]  # start ... node, start
                key = frozenset(zip(chain, chain[1:]))
                if key not in seen:
                    seen.add(key)
                    chains.append(chain)
                break
            for other in sorted(graph[node]):
                if other not in came_from:
                    came_from[other] = node
                    queue.append(other)
    return chains


def _shown(chain: list[str], graph: dict) -> str:
    return " -> ".join(f"{name[len('flarespec.'):]}" + (
        f" (line {graph[name][chain[i + 1]]})" if i + 1 < len(chain) else "")
        for i, name in enumerate(chain))


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    found = [chain for chain in _cycles(graph)
             if not any(set(chain) <= allowed for allowed in ALLOWED_CYCLES)]
    assert not found, "import cycles:\n" + "\n".join(_shown(chain, graph) for chain in found)


def test_the_import_graph_sees_every_kind_of_import():
    """The graph's own test: relative imports, submodules imported by ``from pkg import``,
    imports inside functions, and the two exceptions (TYPE_CHECKING, ``# lazy:``)."""
    graph = import_graph()
    assert "flarespec.loaders.errors" in graph["flarespec.loaders.limits"]  # from .errors
    assert "flarespec.loaders.locate" in graph["flarespec.loaders"]  # from . import locate
    assert "flarespec.engine.refs" not in graph["flarespec.engine.problems"]  # TYPE_CHECKING
    assert "flarespec.compiler.yamlparse" not in graph["flarespec.compiler.yamlmarks"]  # lazy
    assert "flarespec.compiler.yamlmarks" in graph["flarespec.compiler.yamlparse"]
    assert _cycles({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}) == \
        [["a", "b", "c", "a"]]


def test_only_a_function_defers_an_import():
    """``# lazy:`` marks an import inside a function; at module level it would hide an edge
    that runs at import time."""
    marked = []
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text()
        lazy = _lazy_lines(text)
        tree = ast.parse(text, str(path))
        marked += [f"{path.relative_to(SOURCE)}:{node.lineno}" for node in tree.body
                   if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno in lazy]
    assert marked == []
