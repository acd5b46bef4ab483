"""One location syntax (flarespec.loaders.locations): what the engine writes reads back as
the same keys, in the line finder of the loaders and in the engine's expected-value finder."""

from __future__ import annotations

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


@settings(max_examples=200, deadline=None)
@given(KEYS)
def test_the_engine_writes_locations_the_same_way(keys):
    """engine.paths.child_location (the writer of every match's location) is this one's, or
    writes the same text (while the engine's JSONPath module keeps a copy of it)."""
    written = "$"
    for key in keys:
        written = paths.child_location(written, key)
    assert written == location_of(keys)


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
