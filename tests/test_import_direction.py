"""Imports flow one way (docs/architecture.md, Rooms): loaders → engine → compiler → adapter →
fixtures → cli (output/, the renderers and progress, below them all), with review/ and authoring/ (tools over the compiler, for the command line) and
hooks/ and flare/ beside them; nothing imports the command line, and nothing the compiler,
engine or loaders need imports review or authoring. A room importing one it may not is a
design change to make on purpose, in that table first."""

from __future__ import annotations

import ast
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
