"""Every inline pass test is held to its kind's verdict (issue 26: "a pass test may say
'not known', never a false 'holds'").

A kind's inline pass test (``@inline_test`` in engine/kinds.py) is spliced into generated
code as a fast path; only when it is not true does the kind's function (the definition)
run. So for generated JSON values (None, bool, ints of any size, floats with -0.0, NaN and
±inf, Decimals, unicode text with lone surrogates, subclasses of str/dict/list, nested) and
generated static arguments per kind: whenever the inline test is true, ``Kind.holds`` is
true. An inline test that is false or raises only means "not known": nothing is asserted.

The property is only as good as its generator, so it is checked too: for every kind with an
inline test, a mutant that negates it and one that says "holds" always are caught, by the
fixed examples and, separately, by generated ones within a bounded number; and hand-written
wrong inline tests that Python's semantics invite (``==`` where True == 1 == 1.0, a set
where two NaNs are two objects, ``isinstance`` where a bool is an int) are caught as well.
Every kind has an inline test or is listed with the reason it has none, and each inline
test says "holds" somewhere (an inline test that is never true is sound and useless).
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, Phase, example, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from flarespec.engine.inline import (
    SUBJECT,
    Constants,
    Dynamic,
    dynamic_source,
    inline_source,
    never_equal,
    predicate,
    static,
)
from flarespec.engine.formula import FormulaError, compile_formula
from flarespec.engine.kinds import KINDS
from flarespec.engine.refs import ArgRef, ArgTemplate, compile_ref
from flarespec.engine.values import JSON_TYPES

# the kinds without an inline test, and why: the reporting path always decides them
NO_INLINE = {
    "manifest_lists_all": "asks the engine for the named documents' paths (context)",
    "manifest_lists_only": "asks the engine for the named documents' paths (context)",
    "manifest_digests": "asks the engine for the files' digests (context)",
}
# the kinds of engine/kinds.py (a test that registers a kind of its own for a while, as the
# walk-through's does, is not asked about here)
OUR_KINDS = {name: kind for name, kind in KINDS.items()
             if getattr(kind.function, "__module__", None) == "flarespec.engine.kinds"}
INLINE_KINDS = sorted(name for name, kind in OUR_KINDS.items() if kind.inline is not None)

# examples are cheap here (no packets): many more than the profile's default
EXAMPLES = max(150, settings().max_examples)
# the bound within which generated examples must catch a mutant
MUTANT_EXAMPLES = 1000
MUTANT_SETTINGS = settings(max_examples=MUTANT_EXAMPLES, derandomize=True, database=None,
                           phases=[Phase.generate], deadline=None,
                           suppress_health_check=list(HealthCheck))


class Text(str):
    """A str subclass (the kinds take it by isinstance; an inline test may not know it)."""


class Mapping(dict):
    pass


class Sequence(list):
    pass


NAN = float("nan")
KEYS = st.sampled_from(["a", "b", "c", "id", "é", "\ud800"])
CHARACTERS = st.one_of(st.sampled_from("ab1 é\u2603\U0001f600"),
                       st.characters(codec=None, exclude_categories=()))
TEXT = st.one_of(st.text(CHARACTERS, max_size=4),
                 st.sampled_from(["", "a", "ab", "abc", "1", "12", "\ud800", "a\udfff", "é"]))
INTEGERS = st.one_of(st.integers(-3, 3), st.integers(),
                     st.sampled_from([2 ** 53 + 1, 2 ** 63, 2 ** 64, 10 ** 400, -(10 ** 400)]))
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.0, -0.0, 1.0, -1.5, 2.0, 3.0, NAN, math.inf, -math.inf]),
                   st.builds(float, st.just("nan")))  # a NaN of its own: not `is` another
DECIMALS = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.sampled_from([Decimal("1"), Decimal("1.0"), Decimal("12.5"), Decimal("-0.5"),
                     Decimal("-0"), Decimal("9007199254740993.5"), Decimal("1E+400"),
                     Decimal("NaN"), Decimal("Infinity")]))
SCALARS = st.one_of(st.none(), st.booleans(), INTEGERS, FLOATS, DECIMALS, TEXT,
                    TEXT.map(Text))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3),
    st.lists(inner, max_size=2).map(Sequence),
    st.dictionaries(KEYS, inner, max_size=2).map(Mapping)), max_leaves=6)
ANY = st.one_of(SCALARS, VALUES)  # a scalar as often as a container
NUMBERS = st.one_of(INTEGERS, FLOATS, DECIMALS)


def twin(value):
    """A value Python's ``==`` finds equal and JSON's type-strict equality may not: True for
    1, 1.0 for 1, Decimal for a number, -0.0 for 0.0, a subclass for a str or container,
    or the same for anything else; inside a container, one member twinned."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return [float(value) if abs(value) < 2 ** 53 else value, bool(value) if value in (0, 1)
                else value][value % 2]
    if isinstance(value, float):
        return -value if value == 0 else Decimal(value) if math.isfinite(value) else value
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else value
    if type(value) is str:
        return Text(value)
    if isinstance(value, dict):
        twinned = Mapping(value) if type(value) is dict else dict(value)
        for key in list(twinned)[:1]:
            twinned[key] = twin(twinned[key])
        return twinned
    if isinstance(value, list):
        return [twin(value[0]), *value[1:]] if value else Sequence()
    return value


def like(data, value):
    """An argument value near ``value``: itself (a copy: the same object would let an
    identity test pass a NaN), its twin, or anything."""
    choice = data.draw(st.integers(0, 3))
    if choice == 0:
        return copy.deepcopy(value)
    if choice == 1:
        return twin(value)
    if choice == 2:
        return value  # the very object: a NaN is then itself
    return data.draw(VALUES)


def _bounds(data, keys, values):
    return data.draw(st.dictionaries(st.sampled_from(keys), values, max_size=len(keys)))


def _near_bounds(data, subject, keys):
    """Number bounds, often the subject itself (the edges of ``>=`` and ``>``)."""
    near = [subject] if isinstance(subject, (int, float, Decimal)) and not \
        isinstance(subject, bool) and not never_equal(subject) else []
    bound = st.one_of(NUMBERS.filter(lambda n: not never_equal(n)), *map(st.just, near))
    return _bounds(data, keys, bound)


def _sizes(data, size):
    return _bounds(data, ["equals", "min", "max"], st.one_of(st.integers(0, 4), st.just(size)))


def _length(data, subject):
    size = len(subject) if isinstance(subject, (list, str, dict)) else 0
    return _sizes(data, size)


def _count(data, subject):
    arg = _sizes(data, len(subject))
    if data.draw(st.integers(0, 3)) == 0:
        arg["where"] = data.draw(st.sampled_from([
            {"type": "integer"}, {"not": {"equals": None}}, {"unique": True},
            {"not": {"one_of": [1, "a"]}}, {"range": {"min": 0}}]))
    return arg


def _starts_with(data, subject):
    if isinstance(subject, str) and data.draw(st.booleans()):
        return subject[:data.draw(st.integers(0, len(subject)))]
    return data.draw(TEXT)


def _keys(data, subject):
    if isinstance(subject, dict) and data.draw(st.booleans()):
        return list(subject) + data.draw(st.lists(st.sampled_from([*subject, "x"]), max_size=1))
    if isinstance(subject, list) and data.draw(st.booleans()):
        return [item for item in subject if isinstance(item, str)]
    return data.draw(st.lists(KEYS, max_size=3))


def _includes(data, subject):
    if isinstance(subject, dict) and subject and data.draw(st.booleans()):
        keys = data.draw(st.lists(st.sampled_from(sorted(subject)), max_size=3, unique=True))
        return {key: like(data, subject[key]) for key in keys}
    return data.draw(st.dictionaries(KEYS, VALUES, max_size=2))


def _same_as(data, subject):
    arg = {"other": like(data, subject)}
    if data.draw(st.booleans()):
        arg["allow_extra"] = {"keys": data.draw(st.lists(KEYS, max_size=2)),
                              "when": data.draw(st.booleans())}
    return arg


def _order_equals(data, subject):
    if data.draw(st.integers(0, 2)) == 0:
        return {"format": "r{r}.{k}",
                "product": {"r": {"range": data.draw(st.integers(0, 2))}, "k": ["a", "b"]}}
    return like(data, subject)


# formulas over the members a, b, c.d, e.0 (and a.0: an index, or the key "0") and a ref
# @r, drawn as text: literals, + - * /, negation, functions (len, count, abs, sum, over a
# '*' too), comparisons, and/or/not, and numbers rather than conditions (no inline test)
FIELDS = st.sampled_from(["a", "a", "b", "c.d", "e.0", "a.0", "$.a", "@r", "@r"])  # @r: a ref
NUMBER_TEXT = st.recursive(
    st.one_of(FIELDS, FIELDS, st.sampled_from(["0", "1", "1", "2", "-1", "len(a)", "len(e)"]),
              st.sampled_from(["count(e)", "count(e.*)", "len(e.*)", "count(e.*.d)",
                               "1.0", "1e0", "abs(a)", "sum(e)", str(2 ** 1023)])),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(" ".join),
        inner.map(lambda text: f"-({text})")), max_leaves=4)
COMPARE = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
COMPARISON_TEXT = st.one_of(  # often a member against a small number: the edges of its type
    st.tuples(NUMBER_TEXT, COMPARE, NUMBER_TEXT).map(" ".join),
    st.tuples(FIELDS, COMPARE, st.sampled_from(["0", "1", "2"])).map(" ".join),
    st.tuples(st.just("@r"), COMPARE, st.sampled_from(["0", "1"])).map(" ".join))
CONDITION_TEXT = st.recursive(COMPARISON_TEXT, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
    inner.map(lambda text: f"not ({text})")), max_leaves=3)
SMALL = st.integers(-1, 2)
MEMBER = st.one_of(SMALL, SMALL, st.booleans(), st.booleans(), INTEGERS, FLOATS, TEXT,
                   st.none(), st.lists(SMALL, max_size=3), VALUES)
MEMBERS = st.fixed_dictionaries(
    {"a": MEMBER, "b": MEMBER, "c": st.one_of(st.fixed_dictionaries({"d": MEMBER}), MEMBER),
     "e": st.one_of(st.lists(MEMBER, max_size=2), MEMBER)})
BOOLEAN_MEMBERS = st.fixed_dictionaries({"a": st.booleans(), "b": SMALL})  # Python: 1 == True
FORMULA_SUBJECTS = st.one_of(MEMBERS, BOOLEAN_MEMBERS, BOOLEAN_MEMBERS, MEMBERS, ANY,
    st.fixed_dictionaries({"a": st.one_of(st.fixed_dictionaries({"0": MEMBER}),
                                          st.lists(MEMBER, max_size=2)), "b": MEMBER}),
    st.fixed_dictionaries({"a": MEMBER, "b": MEMBER}).map(Mapping))


def _formula(source, **more):
    return {"compiled": compile_formula(source), **more}


def _formula_argument(data, subject):
    source = data.draw(st.one_of(CONDITION_TEXT, CONDITION_TEXT, CONDITION_TEXT, NUMBER_TEXT))
    near = [key for key in ("a", "b") if isinstance(subject, dict)
            and type(subject.get(key)) in (int, bool) and abs(subject[key]) < 10]
    if near and data.draw(st.integers(0, 3)) != 3:  # a member against its own value: the edges
        key = data.draw(st.sampled_from(near))
        source = f"{key} {data.draw(COMPARE)} {int(subject[key])}"
    try:
        arg = _formula(source)
    except FormulaError:  # a wildcard outside a list argument, say: not a formula
        arg = _formula("a == 1")
    if data.draw(st.integers(0, 9)) == 9:
        arg["rel_tol"] = data.draw(st.sampled_from([0.0, 1e-9, 0.5]))
    if data.draw(st.integers(0, 5)):  # @r's value, or (now and then) no refs: an unknown @r
        arg["refs"] = {"r": data.draw(st.one_of(st.booleans(), SMALL, MEMBER)),
                       **data.draw(st.sampled_from([{}, {"s": 1}]))}
        if type(arg["refs"]["r"]) in (int, bool) and abs(arg["refs"]["r"]) < 10 \
                and data.draw(st.integers(0, 2)) != 0:
            arg["compiled"] = compile_formula(f"@r {data.draw(COMPARE)} {int(arg['refs']['r'])}")
    return arg


def _not(data, subject):
    """An inner assertion near the subject: equal to it or its twin, one of options, a
    type, a range, or one that asks the context."""
    return data.draw(st.sampled_from([
        {"equals": like(data, subject)}, {"one_of": [like(data, subject), 1]},
        {"type": data.draw(st.sampled_from(JSON_TYPES))}, {"range": {"min": 0}},
        {"equals": None}, {"not": {"equals": like(data, subject)}},
        {"count": {"equals": 1, "where": {"type": "integer"}}}]))


ARGUMENTS = {
    "present": lambda data, subject: data.draw(st.booleans()),
    "absent": lambda data, subject: data.draw(st.booleans()),
    "type": lambda data, subject: data.draw(st.one_of(
        st.sampled_from(JSON_TYPES), st.lists(st.sampled_from(JSON_TYPES), min_size=1))),
    "equals": like,
    "one_of": lambda data, subject: [like(data, subject)
                                     for _ in range(data.draw(st.integers(1, 3)))],
    "regex": lambda data, subject: data.draw(st.sampled_from(
        ["a.*", "[0-9]+", "", ".?", ".*", "é+", r"\d", "(?i)A.*", "[^a]*"])),
    "starts_with": _starts_with,
    "range": lambda data, subject: _near_bounds(
        data, subject, ["min", "max", "exclusive_min", "exclusive_max"]),
    "finite": lambda data, subject: data.draw(st.booleans()),
    "integral": lambda data, subject: data.draw(st.booleans()),
    "length": _length,
    "count": _count,
    "unique": lambda data, subject: data.draw(st.booleans()),
    "order_equals": _order_equals,
    "monotonic": lambda data, subject: data.draw(st.sampled_from(["non_decreasing",
                                                                  "increasing"])),
    "keys": _keys,
    "includes": _includes,
    "same_as": _same_as,
    "formula": _formula_argument,
    "not": _not,
}


def _sorted_numbers(values):
    try:
        return sorted(values)
    except Exception:  # a Decimal NaN, or a type that does not order: as drawn
        return values


# what a kind's subject is drawn from, when not any value (a list of them when collective)
SUBJECTS = {
    "regex": st.one_of(TEXT, ANY), "starts_with": st.one_of(TEXT, ANY),
    "range": st.one_of(NUMBERS, ANY), "finite": st.one_of(NUMBERS, ANY),
    "integral": st.one_of(NUMBERS, ANY),
    "monotonic": st.one_of(st.lists(NUMBERS, max_size=4).map(_sorted_numbers),
                           st.lists(st.one_of(NUMBERS, ANY), max_size=4)),
    "unique": st.lists(st.one_of(st.integers(0, 3), TEXT, NUMBERS, ANY), max_size=4),
    "formula": FORMULA_SUBJECTS,
    "order_equals": st.one_of(st.lists(VALUES, max_size=3), st.sampled_from(
        [[], ["r0.a", "r0.b"], ["r0.a", "r0.b", "r1.a", "r1.b"], ["r0.b", "r0.a"],
         ["r0.a", Text("r0.b")]])),
}


@st.composite
def cases(draw, name):
    """(argument, subject) for the kind ``name``: a static argument its schema accepts,
    often one under which the subject holds."""
    kind = KINDS[name]
    subject = draw(SUBJECTS[name] if name in SUBJECTS else
                   st.lists(ANY, max_size=4) if kind.collective else ANY)
    return ARGUMENTS[name](draw(st.data()), subject), subject


def holds(name, arg, subject) -> bool:
    """The kind's verdict (the definition); an exception counts as "does not hold": an
    inline test that says "holds" there would hide what the reporting path says."""
    try:
        return KINDS[name].holds(None, subject, arg)
    except Exception:
        return False


def false_holds(name, arg, subject, inline=None) -> bool:
    """The inline test (or the mutant ``inline``) says "holds" where the kind does not."""
    test = predicate(KINDS[name], arg, inline=inline)
    return test is not None and test(subject) and not holds(name, arg, subject)


# (argument, subject) where the kind does NOT hold: the traps of Python's semantics against
# JSON's (bool is an int, 1 == 1.0, NaN, -0.0, Decimal, subclasses, surrogates)
FAILING = {
    "present": [(True, [])],
    "absent": [(True, [1]), (True, [None])],
    "type": [("integer", True), ("number", False), ("integer", 1.0), ("string", 1),
             (["array"], {}), ("object", []), ("null", 0), ("integer", Decimal("1"))],
    "equals": [(1, True), (True, 1), (1, 1.0), (1.0, 1), (0, False), (NAN, NAN),
               ([1], [True]), ({"a": 1}, {"a": 1.0}), ("1", 1), (None, 0), (None, [])],
    "one_of": [([1], True), ([True], 1), ([1.0], 1), ([NAN], NAN), ([[1]], [1.0]),
               (["a", 2], "b"), ([None], False)],
    "regex": [("[0-9]+", 12), (".*", None), ("a.*", "ba"), (".*", "\ud800"), ("", 0)],
    "starts_with": [("1", 1), ("a", "ba"), ("", None), ("True", True)],
    "range": [({"min": 0}, True), ({"max": 1}, False), ({"min": 0}, "1"), ({"min": 0}, NAN),
              ({"exclusive_min": 1}, 1), ({"exclusive_max": 1.0}, 1), ({"max": 1}, [0])],
    "finite": [(True, True), (True, NAN), (True, math.inf), (True, "1"),
               (True, Decimal("NaN")), (True, None)],
    "integral": [(True, True), (True, 1.5), (True, NAN), (True, Decimal("9007199254740993.5")),
                 (True, "1"), (True, math.inf)],
    "length": [({"equals": 1}, 1), ({"min": 1}, True), ({"equals": 0}, None),
               ({"max": 1}, "ab"), ({"equals": 1}, 1.0)],
    "count": [({"equals": 1}, []), ({"min": 2}, [1]), ({"max": 0}, [None]),
              ({"equals": 1, "where": {"type": "integer"}}, [1.0, True]),
              ({"min": 1, "where": {"not": {"equals": None}}}, [None, None]),
              ({"max": 0, "where": {"unique": True}}, [[1, 1], 2])],
    "unique": [(True, [NAN, float("nan")]), (True, [1, 1]), (True, ["a", "a"]),
               (True, [[1], [1]]), (True, [NAN, NAN])],
    "order_equals": [([1], [True]), ([1], [1.0]), ([NAN], [NAN]), (["a", "b"], ["b", "a"]),
                     ({"format": "r{r}", "product": {"r": {"range": 2}}}, ["r1", "r0"])],
    "monotonic": [("non_decreasing", [True, 2]), ("non_decreasing", [2, 1]),
                  ("increasing", [1, 1.0]), ("non_decreasing", ["a", "b"]),
                  ("increasing", [1, 1]), ("non_decreasing", [1, None])],
    "keys": [(["a"], ["a"]), (["a"], {"a": 1, "b": 2}), (["a", "b"], {"a": 1}),
             (["a"], "a")],
    "includes": [({"a": 1}, {"a": True}), ({"a": 1}, {"a": 1.0}), ({"a": None}, {}),
                 ({"a": 1}, [1]), ({"a": NAN}, {"a": NAN})],
    "same_as": [({"other": 1}, True), ({"other": {"a": 1}}, {"a": 1.0}),
                ({"other": [NAN]}, [0.0]), ({"other": None}, 0),
                ({"other": {}, "allow_extra": {"keys": ["\ud800"], "when": True}}, {})],
    "not": [({"equals": None}, None), ({"equals": 1}, 1), ({"type": "integer"}, 2),
            ({"not": {"equals": 1}}, 2), ({"one_of": [1, "a"]}, "a"), ({"range": {"min": 0}}, 0),
            ({"type": "string"}, Text("x"))],
    "formula": [(_formula("a == 1"), {"a": True}), (_formula("a + b == 3"), {"a": 1, "b": "2"}),
                (_formula("a == b"), {"a": 1}), (_formula("a * a > 0"), {"a": 2 ** 600}),
                (_formula("len(a) == 1"), {"a": 5}), (_formula("e.1 == 0"), {"e": [0]}),
                (_formula("not a == 1"), {"a": 1}), (_formula("a == 0 or b == 2"),
                                                     {"a": 1, "b": "2"}),
                (_formula("a < b"), {"a": 2, "b": 1}), (_formula("a - b == 0"), {"a": 1, "b": None}),
                (_formula("a == 1", rel_tol=0.5), {"a": 3}), (_formula("a.0 == 1"), {"a": {}}),
                (_formula("a == @b", refs={"b": True}), {"a": 1}), (_formula("a == @b"), {"a": 1}),
                (_formula("count(e) == 2"), {"e": "ab"}), (_formula("count(e.*) == 2"), {"e": [1]}),
                (_formula("count(e) == 1"), {"e": [Sequence([1, 2])]})],
}

# (argument, subject) where the inline test must say "holds": it is not vacuous
WITNESSES = {
    "present": [(True, [1]), (False, [])],
    "absent": [(True, []), (False, [1])],
    "type": [("integer", 1), ("number", 1), ("number", 1.5), ("boolean", True),
             (["null", "string"], None), ("object", {}), ("array", [])],
    "equals": [(1, 1), ("a", "a"), (None, None), (True, True), (0.0, -0.0),
               ({"a": [1, "b"]}, {"a": [1, "b"]}), (Decimal("1.5"), Decimal("1.50"))],
    "one_of": [([1, "a"], 1), ([1, "a"], "a"), ([[1], None], [1]), ([NAN, 2.0], 2.0)],
    "regex": [("[0-9]+", "12"), ("", ""), ("é+", "éé")],
    "starts_with": [("a", "abc"), ("", "")],
    "range": [({"min": 0}, 0), ({"exclusive_max": 1}, 0.5), ({"min": 0, "max": 2}, Decimal("1.5"))],
    "finite": [(True, 1), (True, 1.5), (True, 10 ** 400), (False, NAN)],
    "integral": [(True, 1), (True, 2.0), (False, 1.5)],
    "length": [({"equals": 2}, "ab"), ({"min": 1}, [1]), ({"max": 1}, {})],
    "count": [({"equals": 2}, [1, 2]), ({"min": 0}, []),
              ({"equals": 1, "where": {"not": {"equals": None}}}, [None, "stop", None]),
              ({"equals": 2, "where": {"type": "integer"}}, [1, 1.0, 2, True])],
    "unique": [(True, [1, 2, "1"]), (True, []), (False, [1, 1])],
    "order_equals": [(["a", 1], ["a", 1]),
                     ({"format": "r{r}.{k}", "product": {"r": {"range": 1}, "k": ["a", "b"]}},
                      ["r0.a", "r0.b"])],
    "monotonic": [("non_decreasing", [1, 1, 2.5]), ("increasing", [1, 2, Decimal("2.5")]),
                  ("increasing", [])],
    "keys": [(["a", "b"], {"b": 1, "a": 2}), ([], {})],
    "includes": [({"a": 1}, {"a": 1, "b": 2}), ({}, {})],
    "same_as": [({"other": {"a": [1]}}, {"a": [1]})],
    "not": [({"equals": None}, "stop"), ({"equals": 1}, True), ({"equals": 1}, 1.0),
            ({"type": "integer"}, 2.0), ({"not": {"equals": 1}}, 1), ({"range": {"min": 0}}, -1),
            ({"one_of": [1, "a"]}, Text("b"))],
    "formula": [(_formula("total == a + b"), {"total": 3, "a": 1, "b": 2}),
                (_formula("a <= b.0"), {"a": 1, "b": [2]}), (_formula("-a < 0"), {"a": 1}),
                (_formula("len(x) == 2 and not a > 3"), {"x": "ab", "a": 1}),
                (_formula("a - b == 0 or b == 1"), {"a": 5, "b": 1}),
                (_formula("a.0 == 7"), {"a": {"0": 7}}), (_formula("a * 2 != 3"), {"a": 1}),
                (_formula("n == count(e.*.t.*)"), {"n": 4, "e": [{"t": [1, 2]}, {"t": [[3, 4]]}]}),
                (_formula("len(e.*) == 2"), {"e": [[1, 2], [3]]}),
                (_formula("a + 1 == @b", refs={"b": 2}), {"a": 1}),
                (_formula("a * 1e9 / b > 0"), {"a": 1, "b": 2}),  # a float, a division
                (_formula("a == 1", abs_tol=0.5), {"a": 1.25})],  # a tolerance
}


@pytest.mark.parametrize("name", INLINE_KINDS)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_an_inline_test_that_says_holds_is_the_kind_holding(name, data):
    arg, subject = data.draw(cases(name))
    assert not false_holds(name, arg, subject), (
        f"{name}: the inline test {predicate(KINDS[name], arg).source!r} says holds for "
        f"{subject!r} under {arg!r}; the kind does not")


@pytest.mark.parametrize("name", INLINE_KINDS)
def test_the_fixed_examples_are_kept(name):
    """The traps fail the kind and the inline test stays out of them; the witnesses hold
    and the inline test says so."""
    for arg, subject in FAILING[name]:
        assert not holds(name, arg, subject), (name, arg, subject)
        assert not false_holds(name, arg, subject), (name, arg, subject)
    for arg, subject in WITNESSES[name]:
        test = predicate(KINDS[name], arg)
        assert test is not None and test(subject), (name, arg, subject)
        assert holds(name, arg, subject), (name, arg, subject)


def _negated(inline):
    def mutant(subject, arg, constant):
        source = inline(subject, arg, constant)
        return None if source is None else f"not ({source})"
    return mutant


def _always(inline):
    def mutant(subject, arg, constant):
        return None if inline(subject, arg, constant) is None else "True"
    return mutant


MUTATIONS = {"negated": _negated, "always": _always}


def _caught_by_fixed(name, mutant) -> bool:
    return any(false_holds(name, arg, subject, mutant) for arg, subject in FAILING[name]
               + WITNESSES[name])


def _caught_by_generated(name, mutant):
    """A generated (argument, subject) where the mutant says a false holds, within
    MUTANT_EXAMPLES examples (derandomized: the same ones every run), or None."""
    try:
        return find(cases(name), lambda case: false_holds(name, *case, mutant),
                    settings=MUTANT_SETTINGS)
    except NoSuchExample:
        return None


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
@pytest.mark.parametrize("name", INLINE_KINDS)
def test_a_flipped_inline_test_is_caught(name, mutation):
    mutant = MUTATIONS[mutation](KINDS[name].inline)
    assert _caught_by_fixed(name, mutant), f"{name}: no fixed example catches the {mutation} mutant"
    assert _caught_by_generated(name, mutant) is not None, \
        f"{name}: {MUTANT_EXAMPLES} generated examples miss the {mutation} mutant"


def _source(template, **objects):
    """A wrong inline test written as text: ``{S}`` the subject, ``{C}`` the argument,
    any other ``{name}`` the object given by that name."""
    def inline(subject, arg, constant):
        names = {name: constant(obj) for name, obj in objects.items()}
        return template.format(S=subject, C=constant(arg), **names)
    return inline


def _bounds_source(operators):
    def inline(subject, arg, constant):
        return " and ".join(f"{subject} {operators[key]} {constant(bound)}"
                            for key, bound in arg.items()) or "True"
    return inline


# inline tests Python's semantics invite, each wrong: the property must catch every one
TRAPS = {
    "equals": _source("{S} == {C}"),
    "one_of": _source("{S} in {C}"),
    "type": lambda subject, arg, constant: "isinstance({}, {})".format(subject, constant(tuple(
        {"null": type(None), "boolean": bool, "integer": int, "number": (int, float),
         "string": str, "array": list, "object": dict}[name]
        for name in ([arg] if isinstance(arg, str) else arg)))),
    "unique": _source("len(set({S})) == len({S})"),
    "range": _bounds_source({"min": ">=", "max": "<=", "exclusive_min": ">",
                             "exclusive_max": "<"}),
    "monotonic": _source("all(map({LE}, {S}, {S}[1:]))", LE=lambda a, b: a <= b),
    "keys": _source("set({S}) == set({C})"),
    "finite": _source("{ISF}({S})", ISF=math.isfinite),
    "integral": _source("float({S}).is_integer()"),
    "starts_with": _source("str({S}).startswith({C})"),
    "order_equals": _source("{S} == {C}"),
    "includes": lambda subject, arg, constant: " and ".join(
        f"{subject}.get({constant(key)}) == {constant(value)}" for key, value in arg.items())
    or "True",
    "same_as": lambda subject, arg, constant: f"{subject} == {constant(arg['other'])}",
    "length": _source("len({S}) == {C}.get('equals', len({S}))"),
    # the inner kind's inline test negated: its "not known" read as "fails"
    "not": lambda subject, arg, constant: None if (inner := inline_source(
        KINDS[next(iter(arg))], subject, next(iter(arg.values())), constant)) is None
    else f"not ({inner})",
    # a boolean read as the int it is in Python: the formula's numbers are never booleans
    "formula": lambda subject, arg, constant: KINDS["formula"].inline(
        f"{constant(_booleans_as_ints)}({subject})", arg, constant),
}


def _booleans_as_ints(value):
    if isinstance(value, bool):
        return int(value)
    if type(value) is dict:
        return {key: _booleans_as_ints(item) for key, item in value.items()}
    return [_booleans_as_ints(item) for item in value] if type(value) is list else value


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_a_plausible_wrong_inline_test_is_caught(name):
    trap = TRAPS[name]
    assert _caught_by_fixed(name, trap), f"{name}: no fixed example catches the trap"
    assert _caught_by_generated(name, trap) is not None, \
        f"{name}: {MUTANT_EXAMPLES} generated examples miss the trap"


def test_every_kind_has_an_inline_test_or_a_reason():
    without = {name for name, kind in OUR_KINDS.items() if kind.inline is None}
    assert without == set(NO_INLINE), "a kind without an inline test is listed with why"
    assert set(INLINE_KINDS) == set(ARGUMENTS) == set(FAILING) == set(WITNESSES), \
        "a kind's inline test needs argument strategies and fixed examples here"
    assert all(NO_INLINE.values())


def _ref(source="doc:$.x"):
    return ArgRef(compile_ref(source))


@pytest.mark.parametrize("name, arg", [
    ("equals", _ref()),
    ("one_of", [1, _ref()]),
    ("includes", {"a": {"b": [_ref()]}}),
    ("keys", ["a", _ref()]),
    ("order_equals", [_ref()]),
    ("same_as", {"other": _ref()}),
    ("starts_with", ArgTemplate(None)),
    ("range", {"min": _ref()}),
    ("count", {"equals": 1, "where": {"manifest_digests": ["x"]}}),  # the inner kind: context
    ("not", {"manifest_digests": ["x"]}),  # the inner kind reads the context
    ("formula", {"compiled": compile_formula("a == @b"), "refs": {"b": _ref()}}),
    ("formula", {"compiled": compile_formula("a + 1")}),  # a number, not a condition
    ("range", {"min": "1"}),  # misses the kind's schema: the reporting path words why
    ("type", "float"),
    ("monotonic", "decreasing"),
])
def test_no_inline_test_for_an_argument_read_per_binding_or_mistyped(name, arg):
    constants = Constants()
    assert inline_source(KINDS[name], SUBJECT, arg, constants.constant) is None
    assert predicate(KINDS[name], arg) is None


def test_static_sees_refs_at_any_depth():
    assert static({"a": [1, {"b": "c"}]}) and static(None)
    assert not static({"a": [1, {"b": _ref()}]})
    deep = current = []
    for _ in range(5000):  # deeper than Python's recursion limit
        current.append([])
        current = current[0]
    current.append(_ref())
    assert not static(deep)


def test_constants_are_named_never_spelt():
    """An argument's value never enters the source as text: a string that is Python code
    stays a string."""
    constants = Constants()
    source = inline_source(KINDS["equals"], SUBJECT, "x') or True or ('", constants.constant)
    assert "or True" not in source
    test = predicate(KINDS["equals"], "x') or True or ('")
    assert test("x') or True or ('") and not test("y")
    assert constants.constant(KINDS) == constants.constant(KINDS)  # one name per object


@example(name="unique", arg=True, subject=[10 ** 5000, 10 ** 5000 + 1])
@example(name="unique", arg=True, subject=[10 ** 5000, 10 ** 5000])
@example(name="equals", arg=10 ** 5000, subject=10 ** 5000)
@example(name="regex", arg=".*", subject="\ud800")
@example(name="monotonic", arg="increasing", subject=[Decimal("NaN"), 1])
@example(name="range", arg={"min": 0}, subject=Decimal("sNaN"))
@example(name="one_of", arg=[Decimal("sNaN"), 1], subject=Decimal("sNaN"))
@given(name=st.just("equals"), arg=st.just(1), subject=st.just(1))
def test_the_edges_of_numbers_and_text(name, arg, subject):
    assert not false_holds(name, arg, subject)


# ------------------------------------------------------------------ arguments read per binding
# A kind whose inline test takes an argument read per binding (``@inline_test(name,
# dynamic=True)``) is given the argument's skeleton: each part read per binding a Dynamic
# whose source holds the part as read (here ``_d[i]``); ``_a`` is the whole argument as
# read. Its source, with the schema check ``dynamic_source`` adds, must be true only where
# the kind holds for the argument as read (``Kind.holds_for``: the schema check first).

DYNAMIC_KINDS = sorted(name for name, kind in OUR_KINDS.items() if kind.inline_dynamic)


def _skeleton(data, arg, parts: list):
    """``arg`` with some parts (the whole, members, items, at any depth) read per binding:
    each replaced by ``Dynamic('_d[i]')``, its value appended to ``parts``."""
    if data.draw(st.integers(0, 2)) == 0:
        parts.append(arg)
        return Dynamic(f"_d[{len(parts) - 1}]")
    if isinstance(arg, dict):
        return {key: _skeleton(data, value, parts) for key, value in arg.items()}
    if isinstance(arg, list):
        return [_skeleton(data, value, parts) for value in arg]
    return arg


def dynamic_predicate(kind, skeleton, inline=None):
    """``(subject, parts, argument) -> bool`` of the kind's inline test (or ``inline``'s)
    for the skeleton, through ``dynamic_source``; None when there is none."""
    constants = Constants()
    if inline is not None:
        kind = dataclasses.replace(kind, inline=inline)
    source = dynamic_source(kind, SUBJECT, skeleton, "_a", constants.constant)
    if source is None:
        return None
    test = eval(compile(f"lambda {SUBJECT}, _d, _a: ({source})", "<dynamic>", "eval"),
                {"__builtins__": builtins, **constants.namespace})

    def known_to_hold(subject, parts, argument) -> bool:
        try:
            return bool(test(subject, parts, argument))
        except Exception:
            return False
    return known_to_hold


def holds_as_read(name, arg, subject) -> bool:
    """The kind's verdict for an argument read per binding: its schema checked first."""
    kind = KINDS[name]
    try:
        return kind.holds_for(None, subject if kind.collective else [subject], arg)
    except Exception:
        return False


def false_dynamic_holds(name, data, inline=None) -> bool:
    arg, subject = data.draw(cases(name))
    parts: list = []
    skeleton = _skeleton(data, arg, parts)
    test = dynamic_predicate(KINDS[name], skeleton, inline)
    return test is not None and test(subject, parts, arg) and not holds_as_read(name, arg, subject)


@pytest.mark.parametrize("name", DYNAMIC_KINDS)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_an_inline_test_over_an_argument_read_per_binding_is_the_kind_holding(name, data):
    assert not false_dynamic_holds(name, data)


def test_the_dynamic_kinds_are_the_equalities_and_formula():
    """equals and includes take an argument read per binding (match-sse's `includes` of
    four refs per SSE event, `equals: {ref}`): their inline tests compare as strict_equal
    does, at run time; formula takes its @names' values read per binding."""
    assert DYNAMIC_KINDS == ["equals", "formula", "includes"]
    formula = dynamic_predicate(KINDS["formula"], {"compiled": compile_formula("$ == @idle"),
                                                   "refs": {"idle": Dynamic("_d[0]")}})
    assert formula(0, [0], None) and not formula(0, [1], None)
    assert not formula(1, [True], None)  # a boolean is no number
    assert formula(0, [0.0], None) and KINDS["formula"].holds(  # numbers compare as numbers
        None, 0, {"compiled": compile_formula("$ == @idle"), "refs": {"idle": 0.0}})
    assert dynamic_predicate(KINDS["formula"], {"compiled": Dynamic("_d[0]")}) is None
    equals = dynamic_predicate(KINDS["equals"], Dynamic("_a"))  # the whole argument read
    assert equals({"a": [1, "b"]}, [], {"a": [1, "b"]}) and equals(0.0, [], -0.0)
    assert not equals(True, [], 1) and not equals(NAN, [], NAN)
    test = dynamic_predicate(KINDS["includes"], {"a": Dynamic("_d[0]"), "b": 2})
    assert test({"a": 1, "b": 2, "c": 3}, [1], {"a": 1, "b": 2})
    for value, read in ((1, True), (True, 1), (1, 1.0), (NAN, NAN), ([1], [True]), ("1", 1)):
        assert not test({"a": value, "b": 2}, [read], {"a": read, "b": 2})


def _dynamic_equal_trap(subject, arg, constant):
    """Python's ``==`` on the value read: True == 1 == 1.0 slips through."""
    if isinstance(arg, Dynamic):
        return f"{subject} == {arg.source}"
    if isinstance(arg, dict):
        return " and ".join(f"{constant(key)} in {subject} and {subject}[{constant(key)}] == "
                            f"{value.source if isinstance(value, Dynamic) else constant(value)}"
                            for key, value in arg.items()) or "True"
    return None


def _dynamic_formula_trap(subject, arg, constant):
    """The formula's inline test with its @names' values read as Python reads a boolean."""
    if not isinstance(arg, dict) or not isinstance(arg.get("refs"), dict):
        return None
    refs = {name: Dynamic(f"{constant(_booleans_as_ints)}({value.source})")
            if isinstance(value, Dynamic) else _booleans_as_ints(value)
            for name, value in arg["refs"].items()}
    return KINDS["formula"].inline(subject, {**arg, "refs": refs}, constant)


DYNAMIC_TRAPS = {"equals": _dynamic_equal_trap, "includes": _dynamic_equal_trap,
                 "formula": _dynamic_formula_trap}


@pytest.mark.parametrize("name", DYNAMIC_KINDS)
def test_a_plausible_wrong_dynamic_inline_test_is_caught(name):
    try:
        found = find(st.data(), lambda data: false_dynamic_holds(name, data, DYNAMIC_TRAPS[name]),
                     settings=MUTANT_SETTINGS)
    except NoSuchExample:
        found = None
    assert found is not None, f"{name}: {MUTANT_EXAMPLES} generated examples miss the trap"


def test_an_argument_read_per_binding_is_checked_against_the_schema_unless_always_met():
    """``includes``' schema (a mapping, written as one) is met by every argument read from
    its skeleton: no check at run time. A schema that reads the members is checked."""
    from flarespec.engine.argument_schema import ArgumentValue

    skeleton = {"a": Dynamic("_d[0]")}
    constants = Constants()
    assert "is None" not in dynamic_source(KINDS["includes"], SUBJECT, skeleton, "_a",
                                           constants.constant)
    one_number = ArgumentValue("a mapping of numbers", lambda v: isinstance(v, dict) and all(
        type(m) is int for m in v.values()), {"type": "object"}, accepts_dynamic=False)
    kind = dataclasses.replace(KINDS["includes"], argument=one_number)
    test = dynamic_predicate(kind, skeleton)
    assert test({"a": 1}, [1], {"a": 1})
    assert not test({"a": "x"}, ["x"], {"a": "x"})  # equal, but the argument as read misses
    assert not dynamic_source(KINDS["includes"], SUBJECT, {"a": _ref()}, "_a",
                              constants.constant)  # a raw {ref}: no skeleton, no test
