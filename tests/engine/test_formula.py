import dataclasses
import math

import pytest

from flarespec.engine.formula import (
    MAX_FORMULA_LENGTH,
    MAX_NESTING_DEPTH,
    ComparisonResult,
    EvaluationError,
    Formula,
    FormulaError,
    compile_formula,
)


def run(source, value=None, refs=None, **tolerances):
    return compile_formula(source).evaluate(value, refs, **tolerances)


def compile_error(source):
    with pytest.raises(FormulaError) as caught:
        compile_formula(source)
    return caught.value


def evaluation_error(source, value=None, refs=None):
    formula = compile_formula(source)
    with pytest.raises(EvaluationError) as caught:
        formula.evaluate(value, refs)
    return str(caught.value)


# ---------------------------------------------------------------- arithmetic

@pytest.mark.parametrize("source, expected", [
    ("10 - 4 - 3", 3),            # left associative, not 10 - (4 - 3) = 9
    ("64 / 4 / 2", 8.0),          # not 64 / (4 / 2) = 32
    ("2 + 3 * 4", 14),
    ("2 * 3 + 4", 10),
    ("(2 + 3) * 4", 20),
    ("((1 + 2) * (3 + 4))", 21),
    ("20 / (2 + 3) - 1", 3.0),
    ("-2 * 3", -6),
    ("2 * -3", -6),
    ("2 - -3", 5),
    ("-(2 + 3)", -5),
    ("- - 4", 4),
    ("-2 - 3", -5),
])
def test_precedence_associativity_and_unary_minus(source, expected):
    assert run(source) == expected


def test_long_flat_chain_does_not_recurse():
    source = " + ".join(["1"] * 400)
    assert len(source) < MAX_FORMULA_LENGTH
    assert run(source) == 400


@pytest.mark.parametrize("source, expected, expected_type", [
    ("12", 12, int),
    ("2 + 3", 5, int),
    ("2 * 3 - 1", 5, int),
    ("6 / 3", 2.0, float),        # true division, as in Python
    ("7 / 2", 3.5, float),
    ("1e9", 1e9, float),          # like json.loads("1e9")
    ("0.5", 0.5, float),
    ("1.0e-12", 1e-12, float),
    ("2.5E+2", 250.0, float),
    ("12 + 0.0", 12.0, float),
])
def test_number_literals_keep_json_types(source, expected, expected_type):
    result = run(source)
    assert result == expected
    assert type(result) is expected_type


@pytest.mark.parametrize("a, b", [(512, 41000000), (3, 7), (7, 3)])
def test_arithmetic_follows_written_order_bit_for_bit(a, b):
    result = run("a * 1e9 / b", {"a": a, "b": b})
    assert result == a * 1e9 / b
    assert result.hex() == (a * 1e9 / b).hex()
    assert run("a / b * 1e9", {"a": a, "b": b}).hex() == (a / b * 1e9).hex()


def test_written_order_is_not_reassociated():
    # These pairs differ in the last bit, so evaluating in another order would be caught.
    assert 3 * 1e9 / 7 != 3 / 7 * 1e9
    assert run("a * 1e9 / b", {"a": 3, "b": 7}) == 3 * 1e9 / 7
    assert 7 * 1e9 / 3 != 7 * (1e9 / 3)
    assert run("a * 1e9 / b", {"a": 7, "b": 3}) == 7 * 1e9 / 3
    assert run("a * (1e9 / b)", {"a": 7, "b": 3}) == 7 * (1e9 / 3)
    assert run("512 * 1e9 / 41000000") == 12487.80487804878


# ---------------------------------------------------------------- comparisons

@pytest.mark.parametrize("source, ok", [
    ("3 == 3", True), ("3 == 4", False),
    ("3 != 4", True), ("3 != 3", False),
    ("3 < 4", True), ("4 < 4", False),
    ("4 <= 4", True), ("5 <= 4", False),
    ("5 > 4", True), ("4 > 4", False),
    ("4 >= 4", True), ("3 >= 4", False),
    ("12.0 == 12", True),                 # numeric, not JSON-type-strict
    ("0.1 + 0.2 == 0.3", False),          # exact by default
])
def test_each_comparison_operator(source, ok):
    result = run(source)
    assert isinstance(result, ComparisonResult)
    assert result.ok is ok


def test_comparison_result_carries_both_sides():
    result = run("used * 2 <= @limit", {"used": 3}, {"limit": 5})
    assert result == ComparisonResult(ok=False, left=6, right=5, operator="<=")


def test_formula_without_comparison_returns_a_bare_number():
    formula = compile_formula("used * 2")
    assert formula.operator is None
    assert formula.evaluate({"used": 4}) == 8
    assert compile_formula("used * 2 >= 1").operator == ">="


def test_relative_tolerance_applies_to_equality():
    value = {"a": 1.0, "b": 1.0000001}
    assert run("a == b", value).ok is False
    assert run("a == b", value, rel_tol=1e-6).ok is True
    assert run("a == b", value, rel_tol=1e-8).ok is False
    assert run("a != b", value, rel_tol=1e-6).ok is False
    assert run("a != b", value).ok is True


def test_absolute_tolerance_applies_to_equality():
    assert run("0.1 + 0.2 == 0.3", abs_tol=1e-12).ok is True
    assert run("0 == 0.001", abs_tol=0.01).ok is True
    assert run("0 == 0.1", abs_tol=0.01).ok is False


def test_ordering_comparisons_ignore_tolerances():
    assert run("1.0000001 <= 1.0", rel_tol=0.5, abs_tol=0.5).ok is False
    assert run("1.0 < 1.0000001", rel_tol=0.5, abs_tol=0.5).ok is True
    assert run("1.0 > 1.0", abs_tol=1.0).ok is False


def test_negative_tolerance_is_rejected():
    with pytest.raises(ValueError):
        run("1 == 1", rel_tol=-0.1)


@pytest.mark.parametrize("source", ["x == x", "x != 1", "x < 1", "x >= 1", "1 <= x"])
def test_any_comparison_involving_nan_is_an_evaluation_error(source):
    formula = compile_formula(source)
    for tolerance in (0.0, 1.0):
        with pytest.raises(EvaluationError, match="NaN is not comparable: "):
            formula.evaluate({"x": math.nan}, rel_tol=tolerance)


def test_infinity_compares_normally():
    assert run("x > 1e308", {"x": math.inf}).ok is True
    assert run("x == x", {"x": math.inf}).ok is True
    assert run("x == x", {"x": math.inf}, rel_tol=1e-9).ok is True


# ---------------------------------------------------------------- fields and refs

def test_nested_dict_and_list_access():
    value = {"a": {"b": [{"c": 5}, {"c": 7}]}, "windows": {"1h": 9}}
    assert run("a.b.1.c - a.b.0.c", value) == 2
    assert run("windows.1h", value) == 9


def test_dollar_is_the_current_value():
    assert run("$ * 2", 21) == 42
    assert run("$.1 - $.0", [10, 15]) == 5
    assert run("len($)", [1, 2, 3]) == 3


def test_digit_segment_on_dict_reads_string_or_int_key():
    assert run("counts.2", {"counts": {"2": 7}}) == 7
    assert run("counts.2", {"counts": {2: 8}}) == 8


def test_hyphenated_names_and_spaced_subtraction():
    value = {"max-tokens": 100, "used": 30, "n-1": 4, "n": 9}
    assert run("max-tokens - used", value) == 70
    assert run("n-1", value) == 4          # one field named "n-1"
    assert run("n - 1", value) == 8        # subtraction
    assert run("n -1", value) == 8


def test_refs_are_supplied_at_evaluation_time():
    formula = compile_formula("@limit - used")
    assert formula.evaluate({"used": 3}, {"limit": 10}) == 7
    assert formula.evaluate({"used": 3}, {"limit": 4.5}) == 1.5


def test_fields_and_names_are_listed_once_in_first_use_order():
    formula = compile_formula("b + a.x + sum(events.*.n) + b + @limit * @scale - @limit + $")
    assert formula.fields == ("b", "a.x", "events.*.n", "$")
    assert formula.names == ("limit", "scale")


def test_formula_is_frozen_and_compiled_once_for_many_values():
    formula = compile_formula("x + 1")
    assert [formula.evaluate({"x": n}) for n in range(3)] == [1, 2, 3]
    with pytest.raises(dataclasses.FrozenInstanceError):
        formula.source = "y"
    assert formula == compile_formula("x + 1")
    assert hash(formula) == hash(compile_formula("x + 1"))
    assert isinstance(formula, Formula)


# ---------------------------------------------------------------- functions

EVENTS = {
    "events": [
        {"n": 2, "token_ids": [1, 2, 3]},
        {"n": 5, "token_ids": [4]},
        {"n": 1, "token_ids": []},
    ],
}


def test_len():
    assert run("len(xs)", {"xs": [1, 2, 3]}) == 3
    assert run("len(s)", {"s": "abcd"}) == 4
    assert run("len(d)", {"d": {"a": 1, "b": 2}}) == 2
    assert run("len(events)", EVENTS) == 3
    assert run("len(events.*.token_ids)", EVENTS) == 3     # one list per event


def test_sum():
    assert run("sum(xs)", {"xs": [1, 2, 3]}) == 6
    assert type(run("sum(xs)", {"xs": [1, 2, 3]})) is int
    assert run("sum(xs)", {"xs": []}) == 0
    assert run("sum(events.*.n)", EVENTS) == 8
    assert run("sum(@xs) / 2", refs={"xs": [1, 2, 4]}) == 3.5


def test_sum_adds_left_to_right():
    numbers = [1e16, 1.0, -1e16, 0.1, 0.2]
    expected = (((1e16 + 1.0) + -1e16) + 0.1) + 0.2
    assert run("sum(xs)", {"xs": numbers}) == expected


def test_count_flattens_one_level():
    assert run("count(xs)", {"xs": [[1, 2], [3], 4]}) == 4
    assert run("count(xs)", {"xs": [[[1, 2]], [3]]}) == 2
    assert run("count(xs)", {"xs": []}) == 0
    assert run("count(events.*.token_ids)", EVENTS) == 4
    assert run("count(events.*.token_ids.*)", EVENTS) == 4


def test_min_and_max():
    assert run("min(xs)", {"xs": [3, -1.5, 2]}) == -1.5
    assert run("max(xs)", {"xs": [3, -1.5, 2]}) == 3
    assert run("max(events.*.n) - min(events.*.n)", EVENTS) == 4


def test_wildcard_inside_function_argument_only():
    formula = compile_formula("sum(events.*.n) == count(events.*.token_ids.*) * 2")
    assert formula.evaluate(EVENTS) == ComparisonResult(ok=True, left=8, right=8, operator="==")


# ---------------------------------------------------------------- compile errors

def test_syntax_error_reports_column_with_caret():
    error = compile_error("a + * b")
    assert error.column == 5
    assert str(error) == (
        "expected a number, field, @name, function or '(', found '*' at column 5\n"
        "  a + * b\n"
        "      ^"
    )


@pytest.mark.parametrize("source, column, fragment", [
    ("a +", 4, "found the end of the formula"),
    ("(1 + 2", 7, "expected ')'"),
    ("1 + 2)", 6, "found ')'"),
    ("a = 1", 3, "use '=='"),
    ("1 < 2 < 3", 7, "comparisons do not chain"),
    ("01", 1, "malformed number"),
    ("1.2.3", 1, "malformed number"),
    ("2 ** 3", 4, "found '*'"),
    ("a[0]", 2, "unexpected character '['"),
    ("'abc'", 1, "unexpected character"),
    ("", 1, "formula is empty"),
    ("x.", 2, "unexpected character '.'"),
])
def test_syntax_errors(source, column, fragment):
    error = compile_error(source)
    assert error.column == column
    assert fragment in str(error)


def test_caret_stays_aligned_for_multiline_source():
    error = compile_error("a +\n  *")
    assert str(error).splitlines()[1:] == ["  a +   *", "        ^"]


@pytest.mark.parametrize("source, name", [("exp(x)", "'exp'"), ("eval(x)", "'eval'"), ("a.len(x)", "'a.len'")])
def test_unknown_function(source, name):
    error = compile_error(source)
    assert f"unknown function {name}" in str(error)
    assert error.column == 1


def test_a_list_argument_must_read_a_field_or_ref():
    error = compile_error("sum(1)")
    assert error.column == 5 and "sum() takes a list: its argument must read a field or @name" in str(error)
    assert compile_error("mean(2 * -(3))").column == 6
    assert compile_error("1 + count(abs(2))").column == 11
    assert run("len((xs))", {"xs": [1, 2]}) == 2
    assert run("sum(a + b)", {"a": [1, 2], "b": 10}) == 23


def test_wildcard_outside_function_is_rejected():
    error = compile_error("events.*.n + 1")
    assert error.column == 8
    assert "wildcard '*' is only allowed inside" in str(error)


@pytest.mark.parametrize("source, column, fragment", [
    ("__import__('os')", 1, "names starting with '__'"),
    ("a.__class__", 3, "names starting with '__'"),
    ("@__builtins__", 2, "names starting with '__'"),
    ("1 if 1 else 2", 3, "found 'if'"),
    ("lambda: 1", 7, "unexpected character ':'"),
    ("open(path)", 1, "unknown function 'open'"),
    ("open('x')", 6, "unexpected character"),
    ("x.y()", 1, "unknown function 'x.y'"),
    ("[1, 2]", 1, "unexpected character '['"),
])
def test_python_tricks_are_compile_errors(source, column, fragment):
    error = compile_error(source)
    assert error.column == column
    assert fragment in str(error)


def test_too_long_formula_is_rejected():
    source = "1 + " * (MAX_FORMULA_LENGTH // 4) + "1"
    error = compile_error(source)
    assert str(error) == f"formula is {len(source)} characters long; the limit is {MAX_FORMULA_LENGTH}"


def test_nesting_depth_is_limited():
    assert run("(" * MAX_NESTING_DEPTH + "1" + ")" * MAX_NESTING_DEPTH) == 1
    error = compile_error("(" * (MAX_NESTING_DEPTH + 1) + "1" + ")" * (MAX_NESTING_DEPTH + 1))
    assert error.column == MAX_NESTING_DEPTH + 1
    assert f"deeper than {MAX_NESTING_DEPTH} levels" in str(error)
    assert "deeper than" in str(compile_error("-" * 60 + "1"))


def test_non_string_formula_is_rejected():
    assert "must be a string, not int" in str(compile_error(12))


# ---------------------------------------------------------------- evaluation errors

def test_bool_is_not_a_number():
    message = evaluation_error("flag + 1", {"flag": True})
    assert "field 'flag' is not a number: boolean true" in message
    assert "item 1 is not a number: boolean false" in evaluation_error("sum(xs)", {"xs": [1, False]})
    assert "@on is not a number" in evaluation_error("@on * 2", refs={"on": True})


def test_string_operand_is_rejected():
    assert 'field \'n\' is not a number: string "12"' in evaluation_error("n + 1", {"n": "12"})


def test_missing_field_names_the_path():
    message = evaluation_error("a.b.c * 2", {"a": {"b": {"d": 1}}})
    assert message == "field 'a.b.c' not found: 'a.b' has no key 'c' [formula: a.b.c * 2]"
    assert "field 'missing' not found: the current value has no key 'missing'" in evaluation_error("missing", {})


def test_bad_index_and_non_container_name_the_path():
    assert "field 'xs.5' not found: 'xs' is a list of length 2, which has no index '5'" in \
        evaluation_error("xs.5", {"xs": [1, 2]})
    assert "field 'xs.n' not found" in evaluation_error("xs.n", {"xs": [1, 2]})
    assert "field 'a.b' not found: 'a' is integer 3, not an object or list" in evaluation_error("a.b", {"a": 3})


def test_missing_field_under_wildcard_names_the_element():
    value = {"events": [{"n": 1}, {"m": 2}]}
    assert "field 'events.*.n' not found: 'events.1' has no key 'n'" in evaluation_error("sum(events.*.n)", value)
    assert """'*' needs a list, but 'events' is object {"a": 1}""" in \
        evaluation_error("sum(events.*)", {"events": {"a": 1}})


@pytest.mark.parametrize("source, value", [
    ("1 / 0", None),
    ("x / (y - y)", {"x": 1, "y": 2.5}),
    ("1.5 / 0.0", None),
    ("1 / -0.0", None),
])
def test_division_by_zero(source, value):
    assert "division by zero" in evaluation_error(source, value)


def test_unknown_ref():
    assert "unknown reference @limit; supplied: other" in evaluation_error("@limit", refs={"other": 1})
    assert "unknown reference @limit; supplied: none" in evaluation_error("@limit")


@pytest.mark.parametrize("source, value, fragment", [
    ("sum(n)", {"n": 3}, "sum() needs a list, but field 'n' is integer 3"),
    ("count(s)", {"s": "abc"}, "count() needs a list"),
    ("len(n)", {"n": 3}, "len() needs a list, string or object"),
    ("min(xs)", {"xs": []}, "min() of an empty list"),
    ("max(@xs)", {}, "unknown reference @xs"),
])
def test_function_argument_errors(source, value, fragment):
    assert fragment in evaluation_error(source, value)


def test_field_resolving_to_a_container_is_not_a_number():
    assert "field 'xs' is not a number: array [1, 2]" in evaluation_error("xs + 1", {"xs": [1, 2]})


def test_offending_values_are_json_text_cut_short_at_any_depth_or_size():
    # values are shown as JSON (never a Python repr) and cut: a 5000-deep list (repr raises
    # RecursionError) or a million-item list costs no more than the shown prefix
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    message = evaluation_error("xs + 1", {"xs": deep})
    assert message.startswith("field 'xs' is not a number: array " + "[" * 60 + "…")
    huge = {"xs": {"k": [None] * 1_000_000}}
    assert 'is not a number: object {"k": [null, null, ' in evaluation_error("xs + 1", huge)
    assert len(evaluation_error("xs + 1", huge)) < 200


def test_overflow_is_an_evaluation_error():
    assert "arithmetic overflow" in evaluation_error("n / 3", {"n": 10 ** 400})


_RESOLVED = {"a": {"b": [1, 2]}, "events": [{"ids": [1, 2]}, {"ids": []}, {"ids": [3]}],
             "m": {2: "int key"}, "list": [10, 20], "s": "text", "n": None}


@pytest.mark.parametrize("path", ["$", "a", "a.b", "a.b.0", "a.b.*", "events.*.ids",
                                  "events.*.ids.*", "m.2", "list.1", "list.5", "a.c", "s.x",
                                  "n.x", "s.*", "events.*.missing", "events.*.ids.*.x",
                                  "a.b.*.c", "list.*", "events.2.ids.0", "events.1.ids.0",
                                  "events.*.ids.0", "list.01", "a.b.-1"])
def test_the_values_walk_is_the_worded_walk(path):
    """A field's values are walked without spelling the places walked; whatever that walk
    does not take (an integer key, a failure) is the worded walk's, so the value or the
    error is the worded walk's own."""
    from flarespec.engine.formula import FieldPath, _resolve, _resolve_worded

    field = FieldPath(path, () if path == "$" else tuple(path.split(".")))
    try:
        expected = ("value", _resolve_worded(_RESOLVED, field))
    except EvaluationError as error:
        expected = ("error", str(error))
    try:
        found = ("value", _resolve(_RESOLVED, field))
    except EvaluationError as error:
        found = ("error", str(error))
    assert found == expected


# ---------------------------------------------------------------- overflow (issue 23 item 2)

@pytest.mark.parametrize("source, value, fragment", [
    ("x * 1e308 == y * 1e308", {"x": 3, "y": 2}, "arithmetic overflow: 3 * 1e+308 is Infinity, not a finite number"),
    ("-x * 1e308 < 0", {"x": 3}, "arithmetic overflow: -3 * 1e+308 is -Infinity"),
    ("1e308 + 1e308 > 0", None, "arithmetic overflow: 1e+308 + 1e+308 is Infinity"),
    ("x / 1e-308 > 0", {"x": 1e10}, "arithmetic overflow: 10000000000.0 / 1e-308 is Infinity"),
    ("x - x == 0", {"x": math.inf}, "Infinity - Infinity is NaN (not a number)"),
    ("x * 0 == 0", {"x": math.inf}, "Infinity * 0 is NaN"),
    ("x + 1 > 0", {"x": math.inf}, "Infinity + 1 is Infinity, not a finite number"),
    ("x + 1 > 0", {"x": math.nan}, "NaN + 1 is NaN"),
    ("n * n > 0", {"n": 2 ** 600}, "is an integer of 1201 bits, beyond the float range (2**1024)"),
    ("n + n > 0", {"n": 2 ** 1023}, "is an integer of 1025 bits"),
    ("-n - n < 0", {"n": 2 ** 1023}, "is an integer of 1025 bits"),
    ("sum(xs) > 0", {"xs": [1e308, 1e308, -1e308]}, "sum() of field 'xs' is Infinity"),
    ("sum(xs) > 0", {"xs": [1, math.inf, -math.inf]}, "field 'xs' item 1 is Infinity, not a finite number"),
    ("sum(xs) > 0", {"xs": [2 ** 1023, 2 ** 1023]}, "sum() of field 'xs' is an integer of 1025 bits"),
    ("max(xs) > 0", {"xs": [1, -math.inf]}, "field 'xs' item 1 is -Infinity, not a finite number"),
    ("max(xs) > 0", {"xs": [1, math.nan, 3]}, "field 'xs' item 1 is NaN, not a finite number"),
    ("min(@xs) > 0", {}, "@xs item 0 is NaN, not a finite number"),
])
def test_a_computed_number_out_of_range_is_an_evaluation_error(source, value, fragment):
    assert fragment in evaluation_error(source, value, {"xs": [math.nan]})


def test_a_runaway_integer_is_stopped_at_once():
    """No ``**`` in the grammar; a chain of products of the largest JSON integers (4300
    digits) stops at the first product beyond 2**1024 instead of growing for every step."""
    source = "*".join(["n"] * 990) + " > 0"   # 140 s of products before the bound
    assert len(source) < MAX_FORMULA_LENGTH
    assert "beyond the float range" in evaluation_error(source, {"n": 10 ** 4299})


def test_numbers_at_the_edge_of_the_range_are_computed():
    assert run("n + n - n == n", {"n": 2 ** 1023 - 1}).ok is True
    assert run("-n - 1 < 0", {"n": 2 ** 1024 - 2}).ok is True
    assert run("x * 2 > 0", {"x": 8.9e307}).ok is True
    assert run("x > 1e308", {"x": math.inf}).ok is True         # a field as it is: no arithmetic
    assert run("n == n", {"n": 10 ** 4000}).ok is True          # likewise a huge integer
