"""``same_json`` asks whether two values pack to the same MessagePack bytes before it
compares their JSON text: the answer is the text's answer either way (types kept apart, key
order free, Decimals and the spec's marked containers left to the text)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flarespec.engine import values as values_module
from flarespec.engine.values import same_json
from flarespec.compiler.yamlmarks import MarkedDict

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=3), st.sampled_from([0, 1, 1.0, True, -0.0, 0.0]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
    max_leaves=8)


def _by_text(left, right) -> bool:
    try:
        return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)
    except (TypeError, ValueError):
        return False


@settings(max_examples=300)
@given(left=VALUES, right=VALUES)
def test_the_answer_is_the_json_texts(left, right):
    assert same_json(left, right) is _by_text(left, right)
    assert same_json(left, left) is _by_text(left, left)


@pytest.mark.parametrize("left, right, same", [
    ({"a": 1, "b": [1.0, True]}, {"b": [1.0, True], "a": 1}, True),  # key order free
    ([1], [1.0], False), ([1], [True], False), ([0.0], [-0.0], False),
    ([float("nan")], [float("nan")], True),  # the text "NaN" on both sides
    ([Decimal("1.5")], [Decimal("1.5")], False),  # no JSON text: refused by the packer too
])
def test_examples(left, right, same):
    assert same_json(left, right) is same


def test_equal_packed_bytes_decide_without_the_text(monkeypatch):
    value = {"events": [{"seq": i, "token_ids": [i, i + 1], "text": "x"} for i in range(50)]}
    copy = json.loads(json.dumps(value))
    monkeypatch.setattr(values_module.json, "dumps", None)  # the text is never asked for
    assert same_json(value, copy) is True


def test_a_marked_container_is_left_to_the_text():
    marked = MarkedDict(a=1)
    assert values_module.same_packed(marked, {"a": 1}) is False
    assert same_json(marked, {"a": 1}) is True


def test_finite_packed_bytes_leave_nan_and_infinity_to_strict_equal():
    from flarespec.engine.values import same_packed, strict_equal

    for value in ([float("nan")], [float("inf")], [-float("inf")], [1e308]):
        assert same_packed(value, list(value)) is True
        assert same_packed(value, list(value), finite=True) is False
    assert same_packed([1.5, 2], [1.5, 2], finite=True) is True
    assert strict_equal([float("nan")], [float("nan")]) is False


@pytest.mark.parametrize("value, other, keys, holds", [
    ({"a": {"b": 1, "c": 2}}, {"a": {"c": 2}}, ["a.b"], True),
    ({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}, ["a.b"], False),
    ({"a": {"b": 1}}, {"a": {"b": 2}}, ["a.b"], False),  # present in both: no extra
    ({"a": {"b": 1}}, {"a": [1]}, ["a.b"], False),
    ({"a": {"b": 1}, "x": 1}, {"x": 1}, ["a", "a.b"], True),
    ({"a": {"b": {"c": 1, "d": 1.0}}}, {"a": {"b": {"d": 1.0}}}, ["a.b.c"], True),
    ({"a": {"b": {"c": 1, "d": 1.0}}}, {"a": {"b": {"d": 1}}}, ["a.b.c"], False),
    ({"a": {"b": 1, "n": float("nan")}}, {"a": {"n": float("nan")}}, ["a.b"], False),
    ({"a-b": 1, "x": 1}, {"x": 1}, ["a-b"], False),  # $['a-b'] is no $.a-b
])
def test_same_as_sets_aside_exactly_the_listed_extras(value, other, keys, holds):
    from flarespec.engine.kinds import KINDS, _equal_but_allowed

    arg = {"other": other, "allow_extra": {"keys": keys, "when": True}}
    listed = next(iter(KINDS["same_as"].function(None, value, arg, "$")), None) is None
    assert listed is holds
    assert KINDS["same_as"].holds(None, value, arg) is holds
    if _equal_but_allowed(value, other, keys):
        assert holds


def _strictly_equal(left, right) -> bool:
    """Type-strict equality written plainly (recursion: the values here are shallow)."""
    if isinstance(left, dict):
        return isinstance(right, dict) and left.keys() == right.keys() and \
            all(_strictly_equal(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return isinstance(right, list) and len(left) == len(right) and \
            all(map(_strictly_equal, left, right))
    return type(left) is type(right) and left == right


@settings(max_examples=400)
@given(left=VALUES, right=VALUES)
def test_strict_equal_is_type_strict_deep_equality(left, right):
    """strict_equal compares a container's scalars as it meets them and its containers
    from a stack: the answer is the plain definition's, for unequal and equal values alike
    (a value against its own copy, and against itself: a NaN is not equal to itself)."""
    strict_equal = values_module.strict_equal
    assert strict_equal(left, right) is _strictly_equal(left, right)
    copied = json.loads(json.dumps(left)) if _by_text(left, left) else left
    assert strict_equal(left, copied) is _strictly_equal(left, copied)
    assert strict_equal(left, left) is _strictly_equal(left, left)
    assert strict_equal([left, {"k": [left]}], [copied, {"k": [copied]}]) is \
        _strictly_equal([left, {"k": [left]}], [copied, {"k": [copied]}])


@settings(max_examples=400)
@given(left=VALUES, right=VALUES)
def test_strict_equal_large_is_strict_equal(left, right):
    """The packed bytes decide only where they may (equal, no NaN or infinity): the answer
    is strict_equal's, for a value against another, its copy (the bytes equal) and itself
    (a NaN's bytes equal, the NaN not)."""
    large, strict_equal = values_module.strict_equal_large, values_module.strict_equal
    copied = json.loads(json.dumps(left)) if _by_text(left, left) else left
    for other in (right, copied, left):
        assert large(left, other) is strict_equal(left, other)
        assert large([left] * 3, [other] * 3) is strict_equal([left] * 3, [other] * 3)


def test_strict_equal_large_asks_the_packed_bytes_first(monkeypatch):
    """Equal finite packed bytes decide without the member-by-member walk."""
    monkeypatch.setattr(values_module, "strict_equal", lambda left, right: False)
    assert values_module.strict_equal_large([{"seq": 1, "tokens": 2}] * 40,
                                            [{"seq": 1, "tokens": 2}] * 40) is True
    assert values_module.strict_equal_large([1], [1.0]) is False


_ITEMS = st.sampled_from([0, 1, True, False, None, "a", 1.0, float("nan")])
_ONE_TYPE = st.sampled_from([st.integers(0, 1), st.booleans(), st.none(), st.just("a"),
                             st.sampled_from([0.0, 1.0, float("nan")]),
                             st.sampled_from([0, 1, True, False])]).flatmap(
    lambda items: st.lists(items, min_size=0, max_size=40))


@settings(max_examples=300)
@given(items=_ONE_TYPE | st.lists(_ITEMS, min_size=0, max_size=40),
       change=st.integers(0, 39), other=_ITEMS, nested=st.booleans())
def test_strict_equal_compares_a_plain_list_as_the_definition(items, change, other, nested):
    """A list of plain items is compared without the loop's stack, a long one of one type at
    C speed (``_same_plain_list``), from no item to 40: the answer is the plain
    definition's, for a copy, an item changed (also to a value ``==`` calls equal: 1 for
    True, 1.0 for 1), the same items as ints, bools or floats or in the other order (ints
    and bools mixed; a NaN is the same object in both), and inside an object."""
    changed = list(items)
    if items:
        changed[change % len(items)] = other
    as_ints = [int(item) if isinstance(item, (bool, float)) and item == item else item
               for item in items]
    as_bools = [bool(item) if isinstance(item, (int, float)) else item for item in items]
    for left, right in ((items, list(items)), (items, changed), (as_ints, items),
                        (as_bools, items), ([1.0] * len(items), items), (items, items[::-1])):
        if nested:
            left, right = {"k": [left]}, {"k": [right]}
        assert values_module.strict_equal(left, right) is _strictly_equal(left, right)


class _Text(str):
    pass


class _Integer(int):
    pass


class _Real(float):
    pass


def _refused_values():
    """Values that are no exact JSON built-in, each beside the plain value whose packed
    bytes it would share if it were packed like one."""
    import dataclasses
    import datetime
    import enum
    import uuid

    from flarespec.compiler.yamlmarks import MarkedList

    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass
    class Point:
        x: int

    day = datetime.date(2026, 12, 5)
    return [(Decimal("1.5"), "1.5"), (Decimal("2"), 2), (_Text("a"), "a"), (_Integer(1), 1),
            (_Real(1.5), 1.5), ((1, 2), [1, 2]), (MarkedDict(a=1), {"a": 1}),
            (MarkedList([1]), [1]), (day, day.isoformat()),
            (datetime.datetime(2026, 12, 5, 1, 2), "2026-12-05T01:02:00"),
            (datetime.time(1, 2), "01:02:00"), (Colour.RED, "red"), (Point(1), {"x": 1}),
            (uuid.UUID(int=1), str(uuid.UUID(int=1))), (1 << 64, 1 << 64),
            (-(1 << 63) - 1, -(1 << 63) - 1), ("\ud800", "\ud800"), ({1: 2}, {"1": 2})]


@pytest.mark.parametrize("value, plain", _refused_values())
def test_only_exact_json_built_ins_are_packed(value, plain):
    """Anything but the exact JSON built-ins is refused (even against itself), so it never
    shares bytes with the plain value it would pack like: strict_equal and the text
    decide, as they decide for a Decimal against its digits."""
    from flarespec.engine.values import same_packed, strict_equal

    assert same_packed(value, value) is False
    assert same_packed([value], [plain]) is False
    assert values_module.strict_equal_large([value], [plain]) is strict_equal([value], [plain])


def test_packing_is_imported_on_first_use():
    """The packer is imported when a comparison first asks for it, not at start-up."""
    import subprocess
    import sys

    code = ("import sys, flarespec.engine.values as v\n"
            "assert 'ormsgpack' not in sys.modules\n"
            "assert v.same_packed([1], [1])\n"
            "assert 'ormsgpack' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
