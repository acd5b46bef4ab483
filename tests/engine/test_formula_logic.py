"""Issue 24: ``and``, ``or`` and ``not`` between comparisons in a formula: precedence,
short-circuit, static types, and what a failure shows."""

from __future__ import annotations

import itertools

import pytest

from flarespec.engine.formula import ComparisonResult, ConditionResult, FormulaError, compile_formula


def run(source, value=None, refs=None, **tolerances):
    return compile_formula(source).evaluate(value, refs, **tolerances)


def truth(value: bool) -> str:
    return "1 == 1" if value else "1 == 2"


@pytest.mark.parametrize("a, b, c", list(itertools.product([False, True], repeat=3)))
def test_truth_tables_and_precedence(a, b, c):
    ta, tb, tc = truth(a), truth(b), truth(c)
    assert run(f"{ta} and {tb}").ok is (a and b)
    assert run(f"{ta} or {tb}").ok is (a or b)
    assert run(f"not {ta}").ok is (not a)
    assert run(f"not not {ta}").ok is a
    assert run(f"{ta} or {tb} and {tc}").ok is (a or (b and c))       # and binds tighter
    assert run(f"({ta} or {tb}) and {tc}").ok is ((a or b) and c)
    assert run(f"not {ta} and {tb}").ok is ((not a) and b)             # not binds tighter than and
    assert run(f"not ({ta} and {tb})").ok is (not (a and b))


def test_short_circuit_guards_what_cannot_be_evaluated():
    assert run("len(xs) > 0 and mean(xs) > 1", {"xs": []}).ok is False
    assert run("len(xs) == 0 or mean(xs) > 1", {"xs": []}).ok is True
    assert run("len(xs) == 0 or mean(xs) > 1", {"xs": [2]}).ok is True


def test_a_failure_shows_the_values_it_compared():
    assert run("a < 5 and b > 2", {"a": 1, "b": 1}) == ConditionResult(
        False, "and", "a < 5 and b > 2", "1 < 5 and 1 > 2")
    assert run("a < 5 and b > 2", {"a": 7, "b": 1}).shown == "7 < 5 and …"
    assert run("a > 5 or b > 2", {"a": 1, "b": 1.5}).shown == "1 > 5 or 1.5 > 2"
    assert run("not (a < 5)", {"a": 1}).shown == "not (1 < 5)"
    assert run("a < 5 and (b > 2 or not c == 0)", {"a": 1, "b": 1, "c": 0}).shown == \
        "1 < 5 and (1 > 2 or not (0 == 0))"
    passed = run("a < 5 and b > 2", {"a": 1, "b": 3})
    assert passed.ok is True and passed.shown == ""
    assert (passed.expected, run("not a < 5", {"a": 1}).actual) == ("a < 5 and b > 2", "not (1 < 5)")


def test_one_comparison_still_gives_a_comparison_result():
    assert run("(a < 5)", {"a": 1}) == ComparisonResult(True, 1, 5, "<")
    assert compile_formula("a < 1 or b < 1").operator == "or"
    assert compile_formula("not a < 1").operator == "not"
    assert compile_formula("a + 1").operator is None


def test_tolerances_apply_to_every_equality_of_a_condition():
    assert run("a == 1 and b != 2", {"a": 1.0000001, "b": 2.0000001}, rel_tol=1e-6).ok is False
    assert run("a == 1 and not b == 2", {"a": 1.0000001, "b": 3}, rel_tol=1e-6).ok is True


def test_a_field_named_like_a_word_is_read_through_dollar():
    assert run("$.and + $.not == 3", {"and": 1, "not": 2}).ok is True


@pytest.mark.parametrize("source, column, reason", [
    ("a and b", 1, "'and' joins comparisons, found a number"),
    ("a < 1 or b", 10, "'or' joins comparisons, found a number"),
    ("not a", 5, "'not' joins comparisons, found a number"),
    ("(a < 1) + 1", 1, "'+' needs a number, not a comparison"),
    ("1 + (a < 1)", 5, "'+' needs a number, not a comparison"),
    ("-(a < 1)", 2, "'-' needs a number, not a comparison"),
    ("(a < 1) == (b < 1)", 1, "'==' needs a number, not a comparison"),
    ("a < b < c", 7, "comparisons do not chain (write 'a < b and b < c')"),
    ("a < 1 and", 10, "expected a number, field, @name, function or '(', found the end of the formula"),
    ("a + and < 1", 5, "expected a number, field, @name, function or '(', found 'and'"),
    ("a < 1 b > 2", 7, "expected an operator or the end of the formula, found 'b'"),
])
def test_types_are_checked_when_compiled(source, column, reason):
    with pytest.raises(FormulaError) as caught:
        compile_formula(source)
    assert (caught.value.column, caught.value.reason) == (column, reason)


def test_not_nests_within_the_depth_limit():
    assert run("not " * 49 + "1 < 2").ok is False
    with pytest.raises(FormulaError, match="deeper than 50 levels"):
        compile_formula("not " * 51 + "1 < 2")
