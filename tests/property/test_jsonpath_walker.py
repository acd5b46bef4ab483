"""The JSONPath walker against the RFC 9535 oracle (jsonpath-rfc9535), on generated paths
(every construct flarespec supports) and documents.

For each example: flarespec's ``values`` equal the oracle's; ``find`` gives the same values
in the same order, at the oracle's normalized paths written in flarespec's location format;
and a path the oracle refuses is refused too.

Where the oracle deviates from RFC 9535, the generator avoids the construct (each is said
where it is). The documents hold no 0 and no 1: the oracle compares nested values with Python's ``==``,
where ``True == 1`` and ``False == 0`` (RFC 9535 keeps them apart, and so does flarespec:
tests/engine/test_paths.py::test_deep_equality_keeps_true_apart_from_1).
"""

from __future__ import annotations

import json

import jsonpath_rfc9535
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flarespec.engine.jsonpath import CompiledJsonPath, PathSyntaxError
from flarespec.loaders.locations import child_location

KEYS = ["a", "b", "c", "d e", "*", "é"]
SCALARS = st.sampled_from(["a", "b", "", 2, 3, -2, 2.5, True, False, None])

DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS), children, max_size=4),
    max_leaves=25)


def quoted(key: str) -> str:
    return "'" + key.replace("\\", "\\\\").replace("'", "\\'") + "'"


INDICES = st.integers(-4, 4).map(str)
BOUND = st.one_of(st.just(""), INDICES)
SLICES = st.tuples(BOUND, BOUND, st.one_of(st.just(None), BOUND)).map(
    lambda parts: f"{parts[0]}:{parts[1]}" + ("" if parts[2] is None else f":{parts[2]}"))
NAMES = st.sampled_from(KEYS).map(quoted)
LITERALS = st.sampled_from(["2", "-2", "2.5", "25e-1", "'a'", '"b"', "''", "true", "false",
                            "null"])
SINGULAR = st.tuples(st.sampled_from(["@", "$"]), st.lists(
    st.one_of(st.sampled_from(["a", "b", "c", "é"]).map(lambda k: "." + k),
              NAMES.map(lambda k: f"[{k}]"), INDICES.map(lambda i: f"[{i}]")),
    max_size=3)).map(lambda parts: parts[0] + "".join(parts[1]))


def queries(filters, min_size: int = 0):
    """A filter query: relative or absolute, with any segments (filters nested once)."""
    return st.tuples(st.sampled_from(["@", "$"]), st.lists(
        segments(filters), min_size=min_size, max_size=3)).map(
        lambda parts: parts[0] + "".join(parts[1]))


def node_lists(filters):
    """A query ending in a segment that may select several nodes: the oracle hands a
    singular query to count() and value() as a value instead of a node list (a bug of
    jsonpath-rfc9535 1.0.1: value(@) raises AttributeError), so they get no singular one."""
    return st.tuples(queries(filters), st.sampled_from(["..a", "[*]", ".*", "['a','b']"])).map(
        "".join)


def comparables(filters):
    return st.one_of(
        LITERALS, SINGULAR,
        SINGULAR.map(lambda query: f"length({query})"),
        node_lists(filters).map(lambda query: f"count({query})"),
        node_lists(filters).map(lambda query: f"value({query})"))


def expressions(filters):
    comparison = st.tuples(comparables(filters), st.sampled_from(
        ["==", "!=", "<", "<=", ">", ">="]), comparables(filters)).map(" ".join)
    # a test has a segment at least: the oracle reads a bare @ or $ test as the value's
    # truth (jsonpath-rfc9535 1.0.1: [?@] drops '' and 0), RFC 9535 as the node's existence
    test = queries(filters, min_size=1)
    basic = st.one_of(comparison, test, test.map(lambda query: "!" + query))
    return st.recursive(basic, lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["&&", "||"]), inner).map(" ".join),
        inner.map(lambda expression: f"({expression})"),
        inner.map(lambda expression: f"!({expression})")), max_leaves=4)


def selectors(filters):
    plain = st.one_of(NAMES, st.just("*"), INDICES, SLICES)
    if filters is None:
        return plain
    return st.one_of(plain, filters.map(lambda expression: f"?{expression}"))


def segments(filters):
    child = st.one_of(
        st.sampled_from(["a", "b", "c", "é", "*"]).map(lambda name: "." + name),
        st.lists(selectors(filters), min_size=1, max_size=3).map(
            lambda chosen: "[" + ", ".join(chosen) + "]"))
    descendant = st.one_of(
        st.sampled_from(["a", "b", "*"]).map(lambda name: ".." + name),
        st.lists(selectors(filters), min_size=1, max_size=2).map(
            lambda chosen: "..[" + ",".join(chosen) + "]"))
    return st.one_of(child, child, descendant)


INNER_FILTERS = expressions(None)  # filters whose queries have no filters of their own
PATHS = st.lists(segments(INNER_FILTERS), max_size=4).map(lambda parts: "$" + "".join(parts))


def canonical(values) -> str:
    return json.dumps(values, sort_keys=True, ensure_ascii=False)


def written(normalized: str) -> str:
    location = "$"
    for key in CompiledJsonPath(normalized).steps:
        location = child_location(location, key)
    return location


def oracle(path: str, document):
    try:
        nodes = jsonpath_rfc9535.find(path, document)
    except jsonpath_rfc9535.JSONPathError:
        return None
    return nodes.values(), [written(node.path()) for node in nodes]


@settings(max_examples=500)
@given(path=PATHS, document=DOCUMENTS)
def test_the_walker_agrees_with_the_rfc_oracle(path, document):
    expected = oracle(path, document)
    if expected is None:
        with pytest.raises(PathSyntaxError):
            CompiledJsonPath(path)
        return
    compiled = CompiledJsonPath(path)
    values = compiled.values(document)
    matches = compiled.find(document)
    assert canonical(values) == canonical(expected[0]), path
    assert canonical([match.value for match in matches]) == canonical(values), path
    assert [match.location for match in matches] == expected[1], path


@settings(max_examples=200)
@given(path=PATHS)
def test_every_generated_path_compiles(path):
    """The generator writes RFC 9535 paths only, all within the subset flarespec supports,
    so the comparison above never passes by both sides refusing."""
    CompiledJsonPath(path)
