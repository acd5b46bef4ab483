"""Pass-checks (engine/passes.py) agree exactly with the kinds' reporting functions.

For random JSON values and arguments, a pass-check's True must mean the kind yields no
failure and its False that it yields one; it may raise instead ("not known"), but where the
kind raises, the pass-check must never say True (the reporting path would report "cannot
evaluate"). Exactness, not just safety, is required: ``not`` and ``count``'s ``where`` turn
one kind's answer into another's."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flarespec.engine.kinds import JSON_TYPES, KINDS, is_finite_number, is_integral_number
from flarespec.engine.passes import COLLECTIVE_PASSES, PASSES, NotKnown, value_passes
from flarespec.engine.paths import Match

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


def test_every_pass_check_is_tested_here():
    """A new pass-check needs an argument strategy above (else it is never compared)."""
    assert set(PASSES) | set(COLLECTIVE_PASSES) <= set(ARGUMENTS) | {"formula"}
    assert set(ARGUMENTS) <= set(KINDS)


def _reporting_verdict(name: str, value, arg):
    """True when the kind yields no failure, False when it yields one, the exception when
    it raises."""
    kind = KINDS[name]
    given_ = [Match(item, f"$[{i}]") for i, item in enumerate(value)] if kind.collective \
        else Match(value, "$")
    try:
        return next(iter(kind.function(None, given_, arg)), None) is None
    except Exception as problem:
        return problem


def _check_verdict(name: str, value, arg):
    try:
        if name in COLLECTIVE_PASSES:
            return COLLECTIVE_PASSES[name](value, arg)
        return PASSES[name](value, arg)
    except Exception as problem:
        return problem


# examples are cheap here (no packets): many more than the profile's default
@pytest.mark.parametrize("name", sorted(set(ARGUMENTS)))
@settings(max_examples=max(200, settings.default.max_examples))
@given(data=st.data())
def test_a_pass_check_agrees_with_its_kind(name, data):
    collective = name in COLLECTIVE_PASSES
    objects = st.dictionaries(KEYS, VALUES, min_size=1, max_size=3)  # most passes need one
    values = st.one_of(VALUES, EXACT) if name in NUMERIC_KINDS else VALUES
    value = data.draw(st.lists(values, max_size=4) if collective else st.one_of(values, objects))
    arg = ARGUMENTS[name](data, value)
    reported = _reporting_verdict(name, value, arg)
    checked = _check_verdict(name, value, arg)
    if isinstance(checked, Exception):
        return  # not known: the reporting path decides
    assert isinstance(checked, bool), f"{name} returned {checked!r}"
    if isinstance(reported, Exception):
        assert checked is False, f"{name} says pass where the kind raises {reported!r}"
    else:
        assert checked == reported, f"{name}({value!r}, {arg!r}): {checked} vs {reported}"


def test_formula_pass_check_is_the_kind_itself():
    from flarespec.engine.formula import compile_formula

    arg = {"compiled": compile_formula("a + b == @total"), "refs": {"total": 3}}
    assert PASSES["formula"]({"a": 1, "b": 2}, arg) is True
    assert PASSES["formula"]({"a": 1, "b": 3}, arg) is False


def test_a_kind_without_a_pass_check_is_not_known():
    with pytest.raises(NotKnown):
        value_passes("manifest_digests", {}, ["x"])


def test_a_generated_order_is_not_known():
    with pytest.raises(NotKnown):
        COLLECTIVE_PASSES["order_equals"](["r0"], {"format": "r{r}", "product": {"r": [0]}})


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
        assert PASSES[name](value, True) is expected
        assert _reporting_verdict(name, value, True) is expected
        assert PASSES[name](value, False) is True and _reporting_verdict(name, value, False) is True
