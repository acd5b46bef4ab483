"""One location syntax (flarespec.loaders.locations): what the engine writes reads back as
the same keys, in the line finder of the loaders and in the engine's expected-value finder."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flarespec.engine import paths, refs
from flarespec.loaders import locate, locations
from flarespec.loaders.locations import (
    STAR,
    child_location,
    leading_keys,
    location_keys,
    location_of,
    next_step,
    relative_location,
)

KEYS = st.lists(st.one_of(
    st.integers(min_value=-10**6, max_value=10**12),
    st.text(),  # any unicode: quotes, backslashes, control characters, brackets, dots
    st.sampled_from(["'", "\\", "\\'", "'\\", "a'b", "]", "['x']", ".a", "$", "\n", "\x00",
                     "a.b", "0", "-1", "*", "[*]", "é", "a\n", "_", ""]),
), max_size=8)


@settings(max_examples=400, deadline=None)
@given(KEYS)
def test_a_written_location_reads_back_as_its_keys(keys):
    written = location_of(keys)
    assert location_keys(written) == keys
    assert leading_keys(written, len(keys)) == keys


@settings(max_examples=200, deadline=None)
@given(KEYS, KEYS)
def test_a_relative_location_reads_back_step_by_step(base_keys, more_keys):
    base = location_of(base_keys)
    suffix = relative_location(base, location_of(more_keys, base))
    assert suffix is not None
    read = []
    while suffix:
        key, suffix = refs.first_step(suffix)
        read.append(key)
    assert read == more_keys


@pytest.mark.parametrize("keys, written", [
    (["a", "b c", 0], "$.a['b c'][0]"),
    (["a.b"], "$['a.b']"),
    (["it's"], "$['it\\'s']"),
    (["back\\slash"], "$['back\\\\slash']"),
    (["0"], "$['0']"),
    ([0], "$[0]"),
    (["a\n"], "$['a\n']"),
    ([], "$"),
])
def test_the_written_form(keys, written):
    assert location_of(keys) == written
    assert location_keys(written) == keys


def test_every_writer_of_a_location_imports_this_one():
    """child_location is defined once, here, and every module that writes a location with it
    imports it from here (not through a room that re-exports it, which made the import
    cycle values -> paths -> jsonpath -> values)."""
    source = Path(locations.__file__).resolve().parents[1]
    defined, imported_elsewhere = [], []
    for path in sorted(source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef) and node.name == "child_location":
                defined.append(path.relative_to(source).as_posix())
            if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                    any(alias.name == "child_location" for alias in node.names) and \
                    node.module != "flarespec.loaders.locations":
                imported_elsewhere.append(f"{path.relative_to(source)}: from {node.module}")
    # strict_json.py keeps a copy for member names (its error locations); it is being
    # rewritten for the loader fast paths (issue 26) and is to import this one afterwards
    assert defined == ["loaders/locations.py", "loaders/strict_json.py"]
    assert imported_elsewhere == []
    assert not hasattr(paths, "child_location")


@pytest.mark.parametrize("text, message", [
    ("a.b", "a location starts with '$'"),
    ("$.a[*]", "not a location step at character 4"),
    ("$.a[?(@.b)]", "not a location step at character 4"),
    ("$['open", "not a location step at character 2"),
    ("$.a.", "not a location step at character 4"),
])
def test_a_text_that_is_no_location_is_refused_saying_where(text, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("$", r"\$")):
        location_keys(text)


def test_wildcards_only_where_asked_for():
    assert next_step("[*]") is None
    assert next_step("[*]", wildcards=True) == (STAR, 3)
    assert next_step(".*.x", wildcards=True) == (STAR, 2)
    assert leading_keys("$.events[*].json", 4, wildcards=True) == ["events", STAR, "json"]
    assert leading_keys("$.events[*].json", 4) == ["events"]  # stops at the first non-step
    assert refs.first_step("[*].a") is None  # an expected value is never read through [*]


def test_the_line_finder_reads_locations_with_the_shared_grammar():
    assert locate._steps("$.events[*]['a b'][3].c", 4) == ["events", 0, "a b", 3]
    assert "_STEP" not in vars(locate) and "_FIRST_STEP" not in vars(refs)
    assert refs.relative_location is locations.relative_location


def test_relative_location_needs_a_step_boundary():
    assert relative_location("$.a", "$.a") == ""
    assert relative_location("$.a", "$.a[0].b") == "[0].b"
    assert relative_location("$.a", "$.ab") is None
    assert relative_location("$.a", "$.b") is None
