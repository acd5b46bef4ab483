"""Issue 24: formula statistics (mean, median, quantile, stdev, pstdev, abs, sqrt), lists
computed element by element, and their errors -- against Python's statistics module and the
definition of Hyndman & Fan's method 7 (numpy's default quantile)."""

from __future__ import annotations

import decimal
import math
import statistics
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flarespec.engine.formula import EvaluationError, FormulaError, compile_formula


def run(source, value=None, refs=None, **tolerances):
    return compile_formula(source).evaluate(value, refs, **tolerances)


def evaluation_error(source, value=None, refs=None) -> str:
    with pytest.raises(EvaluationError) as caught:
        compile_formula(source).evaluate(value, refs)
    return str(caught.value)


def compile_error(source) -> FormulaError:
    with pytest.raises(FormulaError) as caught:
        compile_formula(source)
    return caught.value


def hf7(xs, p: Fraction) -> Fraction:
    """Hyndman & Fan's method 7 from its definition, exactly: for sorted x and h = (n - 1) p,
    x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])."""
    x = sorted(Fraction(item) for item in xs)
    h = (len(x) - 1) * p
    j = math.floor(h)
    return x[j] if j == len(x) - 1 else x[j] + (h - j) * (x[j + 1] - x[j])


def numpy_linear(xs, p: float) -> float:
    """numpy.quantile(xs, p) (method "linear") as numpy computes it, in floats."""
    x = sorted(xs)
    h = (len(x) - 1) * p
    j = math.floor(h)
    if j >= len(x) - 1:
        return float(x[-1])
    g = h - j
    low, high = float(x[j]), float(x[j + 1])
    return high - (high - low) * (1 - g) if g >= 0.5 else low + (high - low) * g


def nearest(exact: Fraction, integers: bool):
    return exact.numerator if integers and exact.denominator == 1 else float(exact)


# ---------------------------------------------------------------- values and types

@pytest.mark.parametrize("source, xs, expected, kind", [
    ("mean(xs)", [1, 2, 3, 4], 2.5, float),
    ("mean(xs)", [1, 3], 2, int),                    # statistics.mean: an int when exact
    ("mean(xs)", [1.0, 3.0], 2.0, float),
    ("median(xs)", [3, 1, 2], 2, int),               # the middle item, as it is
    ("median(xs)", [4, 1, 3, 2], 2.5, float),
    ("median(xs)", [1, 3], 2, int),                  # exact midpoint of integers
    ("median(xs)", [1.5, 2.5], 2.0, float),
    ("median(xs)", [1e308, 1.7e308], 1.35e308, float),   # (a + b) / 2 would overflow
    ("quantile(xs, 0)", [5, 1, 3], 1, int),
    ("quantile(xs, 1)", [5, 1, 3], 5, int),
    ("quantile(xs, 0.25)", [1, 2, 3, 4], 1.75, float),
    ("quantile(xs, 0.9)", list(range(11)), 9, int),  # 0.9 is 9/10: h = 9 exactly
    ("quantile(xs, 0.5)", [7], 7, int),
    ("stdev(xs)", [1, 2, 3, 4], statistics.stdev([1, 2, 3, 4]), float),
    ("pstdev(xs)", [1, 2, 3, 4], statistics.pstdev([1, 2, 3, 4]), float),
    ("pstdev(xs)", [5], 0.0, float),
    ("stdev(xs)", [2, 2], 0.0, float),
])
def test_statistics_values_and_types(source, xs, expected, kind):
    result = run(source, {"xs": xs})
    assert result == expected and type(result) is kind


def test_abs_and_sqrt():
    assert run("abs(x)", {"x": -3}) == 3 and type(run("abs(x)", {"x": -3})) is int
    assert run("abs(-2.5)") == 2.5
    assert run("sqrt(16)") == 4.0 and type(run("sqrt(16)")) is float
    assert run("sqrt(2)") == math.sqrt(2)
    assert "sqrt() of a negative number: -1" in evaluation_error("sqrt(0 - 1)")


@pytest.mark.parametrize("n", [2 ** 53 + 1, 10 ** 30 + 7, 3 ** 200, 2 ** 1023 - 1, (2 ** 60 + 1) ** 2])
def test_sqrt_of_a_large_integer_is_correctly_rounded(n):
    """math.sqrt would round n to a float first (a second rounding); the exact root is
    rounded once."""
    with decimal.localcontext() as context:
        context.prec = 80
        expected = float(decimal.Decimal(n).sqrt())
    assert run("sqrt(n)", {"n": n}) == expected


def test_exact_arithmetic_is_the_exact_statistic_rounded_once():
    xs = [0.1] * 10
    assert run("mean(xs)", {"xs": xs}) == 0.1                # exact sum: 10 x 0.1 / 10
    assert sum(xs) / 10 != 0.1                                # the float arithmetic is not
    assert run("median(xs)", {"xs": [0.1, 0.2]}) == float((Fraction(0.1) + Fraction(0.2)) / 2)


# ---------------------------------------------------------------- element by element

def test_lists_of_one_length_are_combined_element_by_element():
    refs = {"end": [5, 7, 12], "start": [1, 2, 3]}
    assert run("mean(@end - @start)", refs=refs) == statistics.mean([4, 5, 9])
    assert run("sum(@end * 2 - @start)", refs=refs) == 9 + 12 + 21
    assert run("max(-@start)", refs=refs) == -1
    assert run("max(abs(@start - mean(@end)))", refs=refs) == abs(1 - 8)
    assert run("sum(sqrt(@start * 0 + 4))", refs=refs) == 6.0
    assert run("len(@end - @start)", refs=refs) == 3
    assert run("count(1 + @end)", refs=refs) == 3
    assert run("quantile(@end / @start, 0.5)", refs=refs) == 4.0      # of 5.0, 3.5, 4.0


def test_a_fan_out_flattens_nested_lists():
    records = {"records": [{"icl": [1, 2]}, {"icl": []}, {"icl": [3, 6]}]}
    assert run("mean(records.*.icl.*)", records) == 3
    assert run("median(records.*.icl.* * 10)", records) == 25
    assert "field 'records.*.icl' item 0 is not a number: array [1, 2]" in \
        evaluation_error("mean(records.*.icl)", records)


def test_a_length_mismatch_names_both_lists_and_their_lengths():
    refs = {"end": [5, 7, 9], "start": [1, 2], "x": [1]}
    assert "element-wise '-' needs lists of one length, but @end has 3 items and @start has 2" in \
        evaluation_error("mean(@end - @start) > 0", refs=refs)
    assert "but '@end * 2' has 3 items and field 'a.*' has 1" in \
        evaluation_error("sum(@end * 2 + a.*) > 0", {"a": [1]}, refs)
    assert "but '@end - (@end / 2)' has 3 items and @x has 1" in \
        evaluation_error("sum(@end - @end / 2 - @x) > 0", refs=refs)


@pytest.mark.parametrize("source, value, fragment", [
    ("mean(xs)", {"xs": []}, "mean() of an empty list (field 'xs')"),
    ("median(a.* - 1)", {"a": []}, "median() of an empty list ('a.* - 1')"),
    ("quantile(xs, 0.5)", {"xs": []}, "quantile() of an empty list"),
    ("pstdev(@xs)", {}, "pstdev() of an empty list (@xs)"),
    ("stdev(xs)", {"xs": [1]}, "stdev() needs at least two numbers, but field 'xs' has 1"),
    ("mean(xs)", {"xs": 3}, "mean() needs a list, but field 'xs' is integer 3"),
    ("mean(x + 1)", {"x": 3}, "mean() needs a list, but 'x + 1' is integer 4"),
    ("mean(xs)", {"xs": [1, True]}, "field 'xs' item 1 is not a number: boolean true"),
    ("mean(xs)", {"xs": [1, "2"]}, "field 'xs' item 1 is not a number: string \"2\""),
    ("mean(xs - 1)", {"xs": [1, None]}, "field 'xs' item 1 is not a number: null"),
    ("median(xs)", {"xs": [1, math.inf]}, "field 'xs' item 1 is Infinity, not a finite number"),
    ("quantile(xs, @p)", {"xs": [1]}, "quantile() needs p in [0, 1], but p is 1.5"),
    ("quantile(xs, p)", {"xs": [1], "p": math.nan}, "quantile() needs p in [0, 1], but p is NaN"),
    ("sum(1 / xs)", {"xs": [1, 0]}, "item 1: division by zero (1 / 0)"),
    ("sum(xs * 1e308)", {"xs": [1, 2]}, "item 1: arithmetic overflow: 2 * 1e+308 is Infinity"),
    ("sum(sqrt(xs))", {"xs": [4, -1]}, "sqrt() of a negative number: -1"),
    ("abs(x)", {"x": [1]}, "field 'x' is not a number: array [1]"),
    ("mean(xs)", {"xs": [10 ** 400, 1]}, "arithmetic overflow: mean() of field 'xs' is beyond the float range"),
    ("mean(xs)", {"xs": [2 ** 1100, 2 ** 1100]}, "mean() of field 'xs' is an integer of 1101 bits"),
    ("stdev(xs)", {"xs": [0, 10 ** 400]}, "arithmetic overflow: stdev() of field 'xs' is beyond the float range"),
    ("sqrt(n)", {"n": 10 ** 700}, "arithmetic overflow: sqrt("),
])
def test_evaluation_errors(source, value, fragment):
    assert fragment in evaluation_error(source, value, {"p": 1.5, "xs": []})


# ---------------------------------------------------------------- compile errors

@pytest.mark.parametrize("source, column, message", [
    ("mean(xs, 1) > 0", 8, "mean() takes 1 argument: mean(xs)"),
    ("mean() > 0", 6, "mean() takes 1 argument: mean(xs)"),
    ("quantile(xs) > 0", 12, "quantile() takes 2 arguments: quantile(xs, p)"),
    ("quantile(xs, 0.5, 1) > 0", 17, "quantile() takes 2 arguments: quantile(xs, p)"),
    ("sqrt(a, b) > 0", 7, "sqrt() takes 1 argument: sqrt(x)"),
    ("maen(xs) > 0", 1, "unknown function 'maen' (did you mean 'mean'?); allowed: abs, count, len, max, "
                        "mean, median, min, pstdev, quantile, sqrt, stdev, sum"),
    ("quantile(xs, 1.5) > 0", 14, "quantile() needs p in [0, 1], but p is 1.5"),
    ("quantile(xs, -0.1) > 0", 14, "quantile() needs p in [0, 1], but p is -0.1"),
    ("quantile(xs, 1 / 0) > 0", 14, "division by zero (1 / 0)"),
    ("mean(2 * 3) > 0", 6, "mean() takes a list: its argument must read a field or @name"),
    ("abs(xs.*) > 0", 8, "wildcard '*' is only allowed inside the list argument of count/len/max/mean/"
                         "median/min/pstdev/quantile/stdev/sum()"),
    ("quantile(xs, p.*) > 0", 16, "wildcard '*' is only allowed inside the list argument of count/len/max/"
                                  "mean/median/min/pstdev/quantile/stdev/sum()"),
    ("mean((a < b)) > 0", 6, "an argument of mean() needs a number, not a comparison"),
    ("mean(a < b) > 0", 8, "expected ')', found '<'"),
])
def test_compile_errors(source, column, message):
    error = compile_error(source)
    assert (error.column, error.reason) == (column, message)


def test_a_variable_p_is_checked_when_evaluated():
    assert run("quantile(xs, @p)", {"xs": [1, 2]}, {"p": 0.5}) == 1.5
    assert run("quantile(xs, 1 - @p)", {"xs": [1, 2]}, {"p": 1}) == 1


# ---------------------------------------------------------------- against the references

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_subnormal=False)
numbers = st.one_of(st.integers(-10 ** 12, 10 ** 12), finite)
samples = st.lists(numbers, min_size=1, max_size=40)
integer_samples = st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=1, max_size=40)
ps = st.one_of(st.sampled_from([0, 1, 0.5, 0.01, 0.05, 0.25, 0.75, 0.9, 0.95, 0.99]),
               st.floats(min_value=0, max_value=1))


@given(samples)
def test_mean_stdev_pstdev_are_the_statistics_modules(xs):
    assert run("mean(xs)", {"xs": xs}) == statistics.mean(xs)
    assert type(run("mean(xs)", {"xs": xs})) is type(statistics.mean(xs))
    assert run("pstdev(xs)", {"xs": xs}) == statistics.pstdev(xs)
    if len(xs) > 1:
        assert run("stdev(xs)", {"xs": xs}) == statistics.stdev(xs)


@given(samples)
def test_median_is_the_exact_median_rounded_once(xs):
    exact = statistics.median([Fraction(x) for x in xs])
    integers = all(type(x) is int for x in xs)
    result = run("median(xs)", {"xs": xs})
    assert result == nearest(exact, integers)
    assert result == pytest.approx(statistics.median(xs), rel=1e-15, abs=1e-300)


@given(integer_samples)
def test_median_of_integers_equals_statistics_median(xs):
    assert run("median(xs)", {"xs": xs}) == statistics.median(xs)


@given(samples, ps)
def test_quantile_is_hyndman_fan_7_exactly(xs, p):
    exact_p = Fraction(p) if type(p) is int else Fraction(repr(p))
    integers = all(type(x) is int for x in xs)
    result = run("quantile(xs, @p)", {"xs": xs}, {"p": p})
    expected = hf7(xs, exact_p)
    on_an_item = expected in {Fraction(x) for x in xs} and (len(xs) - 1) * exact_p % 1 == 0
    assert result == (expected if on_an_item else nearest(expected, integers))
    spread = max(map(abs, xs)) or 1
    assert math.isclose(result, numpy_linear(xs, p), rel_tol=1e-12, abs_tol=1e-12 * spread)


@given(integer_samples.filter(lambda xs: len(xs) > 1), st.sampled_from([2, 4, 5, 10, 20, 100]))
def test_quantile_equals_statistics_quantiles_inclusive(xs, n):
    """statistics.quantiles(method="inclusive") is method 7 at the cut points i/n; over
    integers it rounds once too."""
    cuts = statistics.quantiles(xs, n=n, method="inclusive")
    for i, cut in enumerate(cuts, start=1):
        p = i / n    # a decimal written exactly: i/n for these n
        assert run(f"quantile(xs, {p!r})", {"xs": xs}) == cut


@given(st.lists(finite, min_size=1, max_size=30), st.lists(finite, min_size=1, max_size=30))
def test_element_by_element_is_python_arithmetic_per_pair(a, b):
    if len(a) != len(b):
        assert f"has {len(a)} items and @b has {len(b)}" in evaluation_error("sum(@a - @b)", refs={"a": a, "b": b})
        return
    differences = [x - y for x, y in zip(a, b)]
    assert run("mean(@a - @b)", refs={"a": a, "b": b}) == statistics.mean(differences)
    assert run("max(abs(@a * 2 - @b))", refs={"a": a, "b": b}) == max(abs(x * 2 - y) for x, y in zip(a, b))


@given(st.floats(min_value=0, max_value=1e300, allow_nan=False))
def test_sqrt_of_a_float_is_math_sqrt(x):
    assert run("sqrt(x)", {"x": x}) == math.sqrt(x)
