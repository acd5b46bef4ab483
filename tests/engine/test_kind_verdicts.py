"""One definition per kind: the verdict is the kind's own function ("no first failure").

Every registered kind has a verdict, words for its failures, an argument schema, a diff
classification and documentation; a kind registered without a diff classification is
refused. For random JSON values and arguments, ``Kind.holds`` (placeholder locations) is
exactly "the reporting call yields no failure" with the values' real locations: the
locations only ever go into the words, never into the verdict."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inspect
from pathlib import Path

from flarespec.engine.kinds import KINDS, assertion
from flarespec.engine.values import JSON_TYPES, is_finite_number, is_integral_number

KEYS = st.sampled_from(["a", "b", "c", "id"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True),
                    st.sampled_from([0.0, 1.0, -1.5, 2.0]), st.text(max_size=3))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)
NUMBERS = st.one_of(st.integers(-3, 3), st.floats(-3, 3), st.sampled_from([True, "1"]))
# The Prometheus loader's exact values: ints of any size, Decimals for the non-integral ones
# (and, from elsewhere, Decimal specials), beside the floats NaN and ±inf.
EXACT = st.one_of(
    st.integers(), st.sampled_from([2 ** 53 + 1, 10 ** 400, -(10 ** 400)]),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.sampled_from([Decimal("12.5"), Decimal("12.0"), Decimal("-0.5"), Decimal("9007199254740993.5"),
                     Decimal("1E+400"), Decimal("1E-400"), Decimal("0E+999999999"), Decimal("Infinity"),
                     Decimal("NaN"), Decimal(3)]),
    st.integers(-3, 3).map(lambda n: Decimal(n) / 2))
NUMERIC_KINDS = {"finite", "integral", "range", "monotonic"}  # where an exact value is sensible


def like(data, value):
    """An argument value: often the value itself (so equalities also pass), else random."""
    return copy.deepcopy(value) if data.draw(st.booleans()) else data.draw(VALUES)


def _bounds(data, keys):
    return data.draw(st.dictionaries(st.sampled_from(keys), NUMBERS, max_size=len(keys)))


def _includes(data, value):
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        keys = data.draw(st.lists(st.sampled_from(sorted(value)), max_size=3, unique=True))
        return {key: like(data, value[key]) for key in keys}
    return data.draw(st.dictionaries(KEYS, VALUES, max_size=2))


def _keys(data, value):
    if isinstance(value, dict) and data.draw(st.booleans()):  # its keys, one maybe twice
        return list(value) + data.draw(st.lists(st.sampled_from([*value, "x"]), max_size=1))
    return data.draw(st.lists(st.one_of(KEYS, st.integers(0, 1)), max_size=3))


def _same_as(data, value):
    arg = {"other": like(data, value)}
    if data.draw(st.booleans()):
        arg["allow_extra"] = {"keys": data.draw(st.lists(KEYS, max_size=2)),
                              "when": data.draw(st.booleans())}
    return arg


def _not(data, value):
    name = data.draw(st.sampled_from(["equals", "type", "regex", "range", "includes"]))
    return {name: ARGUMENTS[name](data, value)}


ARGUMENTS = {
    "type": lambda data, value: data.draw(st.one_of(
        st.sampled_from(JSON_TYPES), st.lists(st.sampled_from(JSON_TYPES), min_size=1))),
    "equals": like,
    "one_of": lambda data, value: [like(data, value) for _ in range(data.draw(st.integers(0, 2)))],
    "regex": lambda data, value: data.draw(st.sampled_from(["a.*", "[0-9]+", "", ".?"])),
    "starts_with": lambda data, value: data.draw(st.text(max_size=2)),
    "range": lambda data, value: _bounds(data, ["min", "max", "exclusive_min", "exclusive_max"]),
    "finite": lambda data, value: data.draw(st.booleans()),
    "integral": lambda data, value: data.draw(st.booleans()),
    "length": lambda data, value: _bounds(data, ["equals", "min", "max"]),
    "keys": _keys,
    "includes": _includes,
    "not": _not,
    "same_as": _same_as,
    "present": lambda data, value: data.draw(st.booleans()),
    "absent": lambda data, value: data.draw(st.booleans()),
    "count": lambda data, value: {**_bounds(data, ["equals", "min", "max"]),
                                  "where": _not(data, value)},
    "unique": lambda data, value: data.draw(st.booleans()),
    "monotonic": lambda data, value: data.draw(st.sampled_from(["non_decreasing",
                                                                "increasing"])),
    "order_equals": lambda data, value: like(data, value) if isinstance(value, list)
    else data.draw(st.lists(VALUES, max_size=2)),
}


DOCS = Path(__file__).resolve().parents[2] / "docs" / "spec-language.md"


def test_every_kind_is_tested_here_and_complete():
    """A new kind needs an argument strategy above (else its verdict is never compared),
    and its definition is whole: a generator, an argument schema, a diff, a docstring."""
    assert set(KINDS) - {"formula", "manifest_lists_all", "manifest_lists_only",
                         "manifest_digests"} == set(ARGUMENTS)
    documented = DOCS.read_text(encoding="utf-8")
    for name, kind in KINDS.items():
        assert inspect.isgeneratorfunction(kind.function), name
        assert callable(kind.check) and callable(kind.diff), name
        assert kind.doc, f"{name} has no docstring"
        assert f"\n### {name}\n" in documented, f"{name} has no section in docs/spec-language.md"


def test_a_kind_without_a_diff_classification_is_refused():
    with pytest.raises(TypeError):
        assertion("made_up")  # diff= is required
    assert "made_up" not in KINDS


def _locations(value, collective: bool):
    return [f"$.v[{i}]" for i in range(len(value))] if collective else "$.v"


def _reported(name: str, value, arg):
    """True when the reporting call (real locations) yields no failure, False when it
    yields one, the exception when it raises."""
    kind = KINDS[name]
    try:
        return next(iter(kind.function(None, value, arg, _locations(value, kind.collective))),
                    None) is None
    except Exception as problem:
        return problem


def _verdict(name: str, value, arg):
    try:
        return KINDS[name].holds(None, value, arg)
    except Exception as problem:
        return problem


# examples are cheap here (no packets): many more than the profile's default
@pytest.mark.parametrize("name", sorted(set(ARGUMENTS)))
@settings(max_examples=max(200, settings.default.max_examples))
@given(data=st.data())
def test_the_verdict_is_the_reporting_call(name, data):
    collective = KINDS[name].collective
    objects = st.dictionaries(KEYS, VALUES, min_size=1, max_size=3)  # most passes need one
    values = st.one_of(VALUES, EXACT) if name in NUMERIC_KINDS else VALUES
    value = data.draw(st.lists(values, max_size=4) if collective else st.one_of(values, objects))
    arg = ARGUMENTS[name](data, value)
    reported, verdict = _reported(name, value, arg), _verdict(name, value, arg)
    if isinstance(reported, Exception):
        assert type(verdict) is type(reported), f"{name}: {verdict!r} vs {reported!r}"
    else:
        assert verdict == reported, f"{name}({value!r}, {arg!r}): {verdict} vs {reported}"


def test_formula_verdict():
    from flarespec.engine.formula import compile_formula

    arg = {"compiled": compile_formula("a + b == @total"), "refs": {"total": 3}}
    assert KINDS["formula"].holds(None, {"a": 1, "b": 2}, arg) is True
    assert KINDS["formula"].holds(None, {"a": 1, "b": 3}, arg) is False


def test_a_generated_order_is_decided_by_the_kind():
    arg = {"format": "r{r}", "product": {"r": {"range": 2}}}
    assert KINDS["order_equals"].holds(None, ["r0", "r1"], arg) is True
    assert KINDS["order_equals"].holds(None, ["r1", "r0"], arg) is False


def test_not_and_where_take_the_inner_verdict():
    assert KINDS["not"].holds(None, "abc", {"starts_with": "x"}) is True
    assert KINDS["not"].holds(None, "xbc", {"starts_with": "x"}) is False
    assert KINDS["not"].holds(None, 5, {"absent": True}) is True  # a collective inner kind
    assert KINDS["count"].holds(None, [1, "a", 2], {"equals": 2, "where": {"type": "integer"}})


@pytest.mark.parametrize("value, finite, integral", [
    (12, True, True), (2 ** 60 + 1, True, True), (10 ** 400, True, True), (-(10 ** 400), True, True),
    (12.0, True, True), (12.5, True, False), (float("nan"), False, False), (float("inf"), False, False),
    (Decimal("12.5"), True, False), (Decimal("12.0"), True, True), (Decimal("9007199254740993.5"), True, False),
    (Decimal("1E+400"), True, True), (Decimal("1E-400"), True, False), (Decimal("NaN"), False, False),
    (Decimal("-Infinity"), False, False), (True, False, False), ("12", False, False), (None, False, False),
])
def test_finite_and_integral_are_exact(value, finite, integral):
    assert is_finite_number(value) is finite and is_integral_number(value) is integral
    for name, expected in (("finite", finite), ("integral", integral)):
        assert KINDS[name].holds(None, value, True) is expected
        assert _reported(name, value, True) is expected
        assert KINDS[name].holds(None, value, False) is True and _reported(name, value, False)


def test_the_walk_through_kind_in_the_docs_works(tmp_path):
    """The docs' "Adding a kind" code, run as written: registered, checked at load, its
    verdict and words, and its diff classification."""
    from flarespec.engine import kinds
    from flarespec.engine.directions import LOOSENING

    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Adding a kind"):]
    code = section[section.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    try:
        exec(code, vars(kinds).copy())
        kind = KINDS["max_utf8_bytes"]
        assert kind.check(-1, set()) and kind.check(3, set()) is None
        assert kind.holds(None, "abc", 3) and not kind.holds(None, "äbc", 3)
        [failure] = kind.function(None, "äbc", 3, "$.name")
        assert failure.message == "is 4 bytes, expected at most 3"
        [(_, (cls, _, _), _, _)] = kind.diff("max_utf8_bytes", 3, 4)
        assert cls == LOOSENING
    finally:
        KINDS.pop("max_utf8_bytes", None)


@pytest.mark.parametrize("value, keys, digits, expected", [
    ({"a": [1, {"b": 2}]}, ["a", 1, "b"], False, (True, 2)),
    ({"a": [1, {"b": 2}]}, ["a", "1", "b"], False, (False, None)),   # a location's ['1'] is a name
    ({"a": [1, {"b": 2}]}, ["a", "1", "b"], True, (True, 2)),        # a dotted a.1.b indexes
    ({"0": "x"}, ["0"], True, (True, "x")),                          # an object's "0" is a name
    ({"0": "x"}, [0], False, (False, None)),
    ([1, 2], [2], False, (False, None)), ([1, 2], [-1], False, (False, None)),
    ([1, 2], [True], False, (False, None)), ("text", ["t"], True, (False, None)),
    ({"a": None}, ["a"], False, (True, None)), ({}, [], False, (True, {})),
])
def test_member_at_is_the_one_walk_by_keys(value, keys, digits, expected):
    from flarespec.engine.values import member_at

    assert member_at(value, keys, digits_index=digits) == expected
