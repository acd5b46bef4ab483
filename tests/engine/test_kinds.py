"""Every assertion kind in KINDS, passing and failing, through a toy spec and ``evaluate``.

Each case compiles a one-rule toy spec (so the kind's wiring through compile and the engine
is exercised too) over a single toy document ``doc.json`` and compares the exact violations:
rule id, location and message.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from document_files import write_files
import yaml

from flarespec.engine.evaluate import evaluate
from flarespec.engine.kinds import KINDS
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

RULE = "toy.kind"
CONSTANTS = {"colours": ["red", "green"], "n": 3}


# --------------------------------------------------------------------------- helpers

def compile_toy(tmp_path, spec: dict):
    spec = {"flarespec": 1, "id": "toy/case", "title": "Toy case", **spec}
    directory = tmp_path / "spec"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "case.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/case"), library))


def run(tmp_path, doc, assertion, *, given="doc:$.v", extra_docs=None, documents=None, **rule):
    """The report of one rule ``given``/``assertion`` over ``doc.json`` = ``doc``."""
    spec = compile_toy(tmp_path, {
        "constants": CONSTANTS,
        "documents": {"doc": {"loader": "json", "entry": True, "rule": "toy.doc"},
                      **(documents or {})},
        "rules": [{"id": RULE, "description": "The kind under test.", "given": given,
                   "assert": assertion, **rule}],
    })
    write_files(tmp_path / "docs", {"doc.json": doc, **(extra_docs or {})})
    return evaluate(spec, tmp_path / "docs" / "doc.json")


def direct(name: str, value, arg) -> list[str]:
    """The messages of one kind called on one value, bypassing loaders and specs: for values
    no document or spec can carry (NaN and infinities are rejected when loaded)."""
    kind = KINDS[name]
    at = ["$.v"] * len(value) if kind.collective else "$.v"
    return [failure.message for failure in kind.function(None, value, arg, at)]


def check(tmp_path, doc, assertion, **options):
    """(location, message) of every violation; all of them must belong to the rule under test."""
    report = run(tmp_path, doc, assertion, **options)
    assert not report.warnings
    assert {v.rule for v in report.violations} <= {RULE}, report.violations
    return [(v.location, v.message) for v in report.violations]


COVERED: set[str] = set()


def covers(*names):
    COVERED.update(names)

    def decorate(function):
        return function
    return decorate


# --------------------------------------------------------------------------- present / absent

@covers("present")
def test_present(tmp_path):
    assert check(tmp_path, {"v": 0}, {"present": True}) == []
    assert check(tmp_path / "b", {"w": 0}, {"present": True}) == [
        ("doc:$.v", "nothing present here")]


@covers("present")
def test_present_is_not_silenced_by_optional(tmp_path):
    assert check(tmp_path, {"w": 0}, {"present": True}, optional=True) == [
        ("doc:$.v", "nothing present here")]


@covers("absent")
def test_absent(tmp_path):
    assert check(tmp_path, {"w": 0}, {"absent": True}) == []
    assert check(tmp_path / "b", {"v": [1, None]}, {"absent": True}, given="doc:$.v[*]") == [
        ("$.v[0]", "must be absent"), ("$.v[1]", "must be absent")]


# --------------------------------------------------------------------------- type

@covers("type")
@pytest.mark.parametrize("value, wanted", [
    (1, "integer"), (1, "number"), (1.5, "number"), (True, "boolean"), (None, "null"),
    ("s", "string"), ([], "array"), ({}, "object"), (None, ["integer", "null"]),
    (0, ["string", "integer"]),
])
def test_type_passes(tmp_path, value, wanted):
    assert check(tmp_path, {"v": value}, {"type": wanted}) == []


@covers("type")
@pytest.mark.parametrize("value, wanted, message", [
    (True, "integer", "is boolean, expected integer"),      # a bool is not an integer
    (False, "number", "is boolean, expected number"),
    (1.0, "integer", "is number, expected integer"),         # a JSON 1.0 is not an integer
    ("1", "number", "is string, expected number"),
    (None, ["integer", "string"], "is null, expected integer or string"),
    ({}, "array", "is object, expected array"),
])
def test_type_fails(tmp_path, value, wanted, message):
    assert check(tmp_path, {"v": value}, {"type": wanted}) == [("$.v", message)]


# --------------------------------------------------------------------------- equals / one_of

@covers("equals")
@pytest.mark.parametrize("value, expected", [
    (1, 1), ("x", "x"), (None, None), (1.5, 1.5),
    ({"a": [1, {"b": True}], "c": "d"}, {"c": "d", "a": [1, {"b": True}]}),  # key order free
])
def test_equals_passes(tmp_path, value, expected):
    assert check(tmp_path, {"v": value}, {"equals": expected}) == []


@covers("equals")
@pytest.mark.parametrize("value, expected", [
    (True, 1), (1, True), (1, 1.0), (1.0, 1), (0, False), ("1", 1),
    ({"a": [1]}, {"a": [1.0]}),                  # nested, type-strict
    ({"a": [1, 2]}, {"a": [1, 2, 3]}),
    ({"a": 1}, {"a": 1, "b": None}),
    ([1, 2], [2, 1]),
])
def test_equals_fails_type_strict(tmp_path, value, expected):
    report = run(tmp_path, {"v": value}, {"equals": expected})
    [violation] = report.violations
    assert (violation.rule, violation.location, violation.message) == (
        RULE, "$.v", "differs from the expected value")
    assert violation.file == "doc.json"
    assert violation.expected == expected and violation.actual == value


@covers("equals")
def test_equals_a_ref_and_a_constant(tmp_path):
    doc = {"v": 3, "w": 3, "x": 4}
    assert check(tmp_path, doc, {"equals": {"ref": "doc:$.w"}}) == []
    assert check(tmp_path / "b", doc, {"equals": {"ref": "doc:$.x"}}) == [
        ("$.v", "differs from the expected value")]
    assert check(tmp_path / "c", doc, {"equals": "${n}"}) == []
    assert check(tmp_path / "d", {"v": "3"}, {"equals": "${n}"}) == [
        ("$.v", "differs from the expected value")]


@covers("one_of")
def test_one_of(tmp_path):
    assert check(tmp_path, {"v": "red"}, {"one_of": "${colours}"}) == []
    assert check(tmp_path / "b", {"v": "blue"}, {"one_of": "${colours}"}) == [
        ("$.v", "is not one of the allowed values")]
    # type-strict membership
    assert check(tmp_path / "c", {"v": 1}, {"one_of": [True, 1.0, "1"]}) == [
        ("$.v", "is not one of the allowed values")]
    assert check(tmp_path / "d", {"v": 1}, {"one_of": [True, 1]}) == []


# --------------------------------------------------------------------------- strings

@covers("regex")
def test_regex(tmp_path):
    assert check(tmp_path, {"v": "abc123"}, {"regex": "^[a-z]+[0-9]+$"}) == []
    assert check(tmp_path / "a", {"v": "abc123"}, {"regex": "[a-z]+[0-9]+"}) == []
    assert check(tmp_path / "c", {"v": "ABC"}, {"regex": "^[a-z]+$"}) == [
        ("$.v", "does not match /^[a-z]+$/")]
    assert check(tmp_path / "d", {"v": 123}, {"regex": "^[0-9]+$"}) == [
        ("$.v", "does not match /^[0-9]+$/")]


@covers("regex")
def test_regex_matches_the_whole_value(tmp_path):
    # full-match semantics: no partial match, and `$` does not match before a final newline
    assert check(tmp_path, {"v": "xabcx"}, {"regex": "abc"}) == [("$.v", "does not match /abc/")]
    sha = "0123456789abcdef" * 4
    assert check(tmp_path / "b", {"v": sha}, {"regex": "^[0-9a-f]{64}$"}) == []
    for number, value in enumerate((sha + "\n", "\n" + sha, sha + "0")):
        assert check(tmp_path / f"c{number}", {"v": value}, {"regex": "^[0-9a-f]{64}$"}) == [
            ("$.v", "does not match /^[0-9a-f]{64}$/")], value
    report = run(tmp_path / "d", {"v": sha + "\n"}, {"regex": "[0-9a-f]{64}"})
    [violation] = report.violations
    assert (violation.expected, violation.actual) == ("[0-9a-f]{64}", sha + "\n")


@covers("regex")
def test_regex_is_re2_on_unicode_text(tmp_path):
    # `.` is one code point; \d and \w are ASCII-only (Python's re would accept these digits)
    assert check(tmp_path, {"v": "é✓"}, {"regex": "é."}) == []
    assert check(tmp_path / "b", {"v": "١٢٣"}, {"regex": "\\d+"}) == [
        ("$.v", "does not match /\\d+/")]
    assert check(tmp_path / "c", {"v": "０"}, {"regex": "[0-9]"}) == [
        ("$.v", "does not match /[0-9]/")]
    # a lone surrogate (valid in JSON text) is no Unicode text: it fails, it does not crash
    assert check(tmp_path / "d", {"v": "a\ud800"}, {"regex": "a."}) == [
        ("$.v", "is not valid Unicode text (a lone surrogate), so it cannot match /a./")]


@covers("regex")
def test_regex_catastrophic_pattern_runs_in_linear_time(tmp_path):
    import time

    started = time.perf_counter()
    assert check(tmp_path, {"v": "a" * 100_000 + "!"}, {"regex": "(a+)+$"}) == [
        ("$.v", "does not match /(a+)+$/")]
    assert time.perf_counter() - started < 5  # Python's re: exponential, never ends


@covers("regex")
def test_regex_is_compiled_once_not_per_element(tmp_path, monkeypatch):
    import re2
    from flarespec.engine import kinds

    calls = []
    real = re2.compile
    monkeypatch.setattr(re2, "compile", lambda *args: calls.append(args) or real(*args))
    kinds.compiled_pattern.cache_clear()
    values = [f"{n:04d}" for n in range(500)] + ["x"]
    assert check(tmp_path, {"v": values}, {"regex": "[0-9]{4}"}, given="doc:$.v[*]") == [
        ("$.v[500]", "does not match /[0-9]{4}/")]
    assert len(calls) == 1  # at spec load (the argument check); evaluation reuses it


@pytest.mark.parametrize("pattern, reason", [
    ("(a)\\1", "invalid escape sequence: \\1"),
    ("a(?=b)", "invalid perl operator: (?="),
    ("(?<!a)b", "invalid perl operator: (?<!"),
])
def test_regex_re2_cannot_run_is_rejected_at_spec_load(tmp_path, pattern, reason):
    assert compile_issues(tmp_path, {"regex": pattern}) == [
        ("spec.kind-argument",
         f"regex: invalid regular expression {json.dumps(pattern)}: {reason} (spec regexes use "
         f"RE2 syntax: no backreferences or lookaround)")]


@covers("starts_with")
def test_starts_with(tmp_path):
    assert check(tmp_path, {"v": "hello world"}, {"starts_with": "hello"}) == []
    assert check(tmp_path / "b", {"v": "world hello"}, {"starts_with": "hello"}) == [
        ("$.v", 'does not begin with "hello"')]
    assert check(tmp_path / "c", {"v": 5}, {"starts_with": "5"}) == [
        ("$.v", 'does not begin with "5"')]


# --------------------------------------------------------------------------- numbers

@covers("range")
@pytest.mark.parametrize("value, bounds", [
    (5, {"min": 5}), (5, {"max": 5}), (5.5, {"exclusive_min": 5}), (4.5, {"exclusive_max": 5}),
    (5, {"min": 0, "max": 10, "exclusive_min": 4, "exclusive_max": 6}),
])
def test_range_passes(tmp_path, value, bounds):
    assert check(tmp_path, {"v": value}, {"range": bounds}) == []


@covers("range")
@pytest.mark.parametrize("value, bounds, message", [
    (4, {"min": 5}, "is 4, expected at least 5"),
    (6, {"max": 5}, "is 6, expected at most 5"),
    (5, {"exclusive_min": 5}, "is 5, expected more than 5"),
    (5, {"exclusive_max": 5}, "is 5, expected less than 5"),
    ("5", {"min": 0}, "is string, expected a number"),
    (True, {"min": 0}, "is boolean, expected a number"),
])
def test_range_fails(tmp_path, value, bounds, message):
    assert check(tmp_path, {"v": value}, {"range": bounds}) == [("$.v", message)]


@covers("range")
def test_range_reports_every_broken_bound(tmp_path):
    assert check(tmp_path, {"v": 10}, {"range": {"max": 5, "exclusive_max": 10}}) == [
        ("$.v", "is 10, expected at most 5"), ("$.v", "is 10, expected less than 10")]


@covers("finite")
def test_finite(tmp_path):
    assert check(tmp_path, {"v": 1.5}, {"finite": True}) == []
    assert check(tmp_path / "d", {"v": "1"}, {"finite": True}) == [
        ("$.v", "is not a finite number")]
    for value in (float("nan"), float("inf"), -float("inf")):
        assert direct("finite", value, True) == ["is not a finite number"]


@covers("integral")
@pytest.mark.parametrize("raw", ['{"v": 12}', '{"v": 12.0}', '{"v": -3}', '{"v": 1e3}'])
def test_integral_passes(tmp_path, raw):
    assert check(tmp_path, raw, {"integral": True}) == []


@covers("integral")
@pytest.mark.parametrize("raw, given", [
    ('{"v": 12.5}', "doc:$.v"), ('{"v": true}', "doc:$.v"), ('{"v": "12"}', "doc:$.v"),
])
def test_integral_fails(tmp_path, raw, given):
    where = "$." + given.split("$.")[1]
    assert check(tmp_path, raw, {"integral": True}, given=given) == [
        (where, "is not an integral number")]
    for value in (float("nan"), float("inf")):
        assert direct("integral", value, True) == ["is not an integral number"]


# --------------------------------------------------------------------------- sizes

@covers("length")
@pytest.mark.parametrize("value, bounds", [
    ([1, 2], {"equals": 2}), ("abc", {"min": 3}), ({"a": 1}, {"max": 1}), ([], {"equals": 0}),
])
def test_length_passes(tmp_path, value, bounds):
    assert check(tmp_path, {"v": value}, {"length": bounds}) == []


@covers("length")
@pytest.mark.parametrize("value, bounds, message", [
    ([1, 2, 3], {"equals": 2}, "length is 3, expected 2"),
    ("ab", {"min": 3}, "length is 2, expected at least 3"),
    ({"a": 1, "b": 2}, {"max": 1}, "length is 2, expected at most 1"),
    (7, {"equals": 1}, "is integer, has no length"),
])
def test_length_fails(tmp_path, value, bounds, message):
    assert check(tmp_path, {"v": value}, {"length": bounds}) == [("$.v", message)]


@covers("count")
def test_count(tmp_path):
    doc = {"v": [{"c": "red"}, {"c": "green"}, {"c": "red"}]}
    assert check(tmp_path, doc, {"count": {"equals": 3}}, given="doc:$.v[*]") == []
    assert check(tmp_path / "b", doc, {"count": {"max": 2}}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", "match count is 3, expected at most 2")]
    # count accepts an empty selection
    assert check(tmp_path / "c", {"v": []}, {"count": {"equals": 0}}, given="doc:$.v[*]") == []
    assert check(tmp_path / "d", {"v": []}, {"count": {"min": 1}}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", "match count is 0, expected at least 1")]


@covers("count")
def test_count_where(tmp_path):
    doc = {"v": [{"c": "red"}, {"c": "green"}, {"c": "red"}]}
    assert check(tmp_path, doc, {"count": {"equals": 2, "where": {"equals": "red"}}},
                 given="doc:$.v[*].c") == []
    assert check(tmp_path / "b", doc, {"count": {"equals": 2, "where": {"equals": "green"}}},
                 given="doc:$.v[*].c") == [
        ("doc:$.v[*].c", 'count of matches with equals "green" is 1, expected 2')]
    # an inner argument is shown as written in YAML, never as a Python repr
    assert check(tmp_path / "c", {"v": [None, 1, 2]},
                 {"count": {"equals": 1, "where": {"not": {"equals": None}}}},
                 given="doc:$.v[*]") == [
        ("doc:$.v[*]", "count of matches with not {equals: null} is 2, expected 1")]


@covers("unique")
def test_unique(tmp_path):
    # type-strict: 1, 1.0, true and "1" are four different values
    assert check(tmp_path, {"v": [1, 1.0, True, "1", [1], [1.0]]}, {"unique": True},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "b", {"v": [1, 2, 1, [3], [3]]}, {"unique": True},
                 given="doc:$.v[*]") == [
        ("$.v[2]", "duplicate of the value at $.v[0]"),
        ("$.v[4]", "duplicate of the value at $.v[3]")]
    assert check(tmp_path / "c", {"v": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]}, {"unique": True},
                 given="doc:$.v[*]") == [("$.v[1]", "duplicate of the value at $.v[0]")]


# --------------------------------------------------------------------------- order_equals

@covers("order_equals")
def test_order_equals_literal(tmp_path):
    assert check(tmp_path, {"v": ["a", "b"]}, {"order_equals": ["a", "b"]},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "b", {"v": []}, {"order_equals": []}, given="doc:$.v[*]") == []
    report = run(tmp_path / "c", {"v": [1, 2]}, {"order_equals": [1, 2.0]}, given="doc:$.v[*]")
    [violation] = report.violations
    assert (violation.rule, violation.location, violation.message) == (
        RULE, "doc:$.v[*]", 'missing 2.0; unexpected 2')
    assert violation.expected == [1, 2.0] and violation.actual == [1, 2]


@covers("order_equals")
@pytest.mark.parametrize("actual, expected, message", [
    (["s0", "s1"], ["s0", "s1", "s2"], 'missing "s2"'),
    (["s0", "s9", "s1"], ["s0", "s1"], 'unexpected "s9"'),
    (["s0", "s0", "s1"], ["s0", "s1"], 'duplicated "s0"'),
    (["s1", "s0"], ["s0", "s1"], 'out of order from position 0: "s1" where "s0" belongs'),
    (["s0", "s2", "s1"], ["s0", "s1", "s2"],
     'out of order from position 1: "s2" where "s1" belongs'),
    ([{"a": 1}, {"a": None}], [{"a": None}, {"a": 1}],
     'out of order from position 0: {"a": 1} where {"a": null} belongs'),
    (["x", "s0", "s0"], ["s0", "s1"], 'missing "s1"; unexpected "x"; duplicated "s0"'),
    ([], ["a", "b", "c", "d", "e", "f", "g"],
     'missing "a", "b", "c", "d", "e" and 2 more'),
])
def test_order_equals_messages(tmp_path, actual, expected, message):
    assert check(tmp_path, {"v": actual}, {"order_equals": expected}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", message)]


@covers("order_equals")
def test_order_equals_ref(tmp_path):
    doc = {"v": ["a", "b"], "w": [{"id": "a"}, {"id": "b"}], "x": [{"id": "b"}, {"id": "a"}]}
    assert check(tmp_path, doc, {"order_equals": {"ref": "doc:$.w[*].id", "all": True}},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "b", doc, {"order_equals": {"ref": "doc:$.x[*].id", "all": True}},
                 given="doc:$.v[*]") == [
        ("doc:$.v[*]", 'out of order from position 0: "a" where "b" belongs')]


@covers("order_equals")
def test_order_equals_generated(tmp_path):
    generated = {"format": "r{r}.{k}", "product": {"r": {"range": 2}, "k": ["a", "b"]}}
    # leftmost key outermost
    assert check(tmp_path, {"v": ["r0.a", "r0.b", "r1.a", "r1.b"]}, {"order_equals": generated},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "b", {"v": ["r0.a", "r1.a", "r0.b", "r1.b"]},
                 {"order_equals": generated}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", 'out of order from position 1: "r1.a" where "r0.b" belongs')]


@covers("order_equals")
def test_order_equals_generated_range_from_constant_and_ref(tmp_path):
    by_constant = {"format": "s{n}", "product": {"n": {"range": "${n}"}}}
    assert check(tmp_path, {"v": ["s0", "s1", "s2"]}, {"order_equals": by_constant},
                 given="doc:$.v[*]") == []
    by_ref = {"format": "s{n}", "product": {"n": {"range": {"ref": "doc:$.count"}}}}
    assert check(tmp_path / "b", {"v": ["s0", "s1"], "count": 2}, {"order_equals": by_ref},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "c", {"v": ["s0", "s1"], "count": 3}, {"order_equals": by_ref},
                 given="doc:$.v[*]") == [("doc:$.v[*]", 'missing "s2"')]
    assert check(tmp_path / "d", {"v": [], "count": 0}, {"order_equals": by_ref},
                 given="doc:$.v[*]") == []


@covers("order_equals")
def test_order_equals_bad_range_is_a_rule_violation(tmp_path):
    generated = {"format": "s{n}", "product": {"n": {"range": {"ref": "doc:$.count"}}}}
    assert check(tmp_path, {"v": ["s0"], "count": -1}, {"order_equals": generated},
                 given="doc:$.v[*]") == [
        (None, "cannot evaluate: order_equals: product axis n range wants a whole number >= 0, "
               "got integer -1 (the argument as read here)")]
    assert check(tmp_path / "b", {"v": ["s0"], "count": 1.0}, {"order_equals": generated},
                 given="doc:$.v[*]") == [
        (None, "cannot evaluate: order_equals: product axis n range wants a whole number >= 0, "
               "got number 1.0 (the argument as read here)")]


@covers("order_equals")
def test_order_equals_huge_generated_range_is_not_built(tmp_path):
    # a count read from the document sizes the expected list: 10^7 x 9 values (gigabytes)
    # must be refused on the counts alone, before anything is built
    import time
    import tracemalloc

    generated = {"format": "r{r}.{k}",
                 "product": {"r": {"range": {"ref": "doc:$.count"}}, "k": list("abcdefghi")}}
    doc = {"v": ["r0.a", "r0.b"], "count": 10_000_000}
    tracemalloc.start()
    started = time.perf_counter()
    report = run(tmp_path, doc, {"order_equals": generated}, given="doc:$.v[*]")
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    [violation] = report.violations
    assert (violation.rule, violation.message, violation.expected, violation.actual) == (
        RULE, "2 values where 90000000 belong (too many to list)", 90_000_000, 2)
    assert elapsed < 2 and peak < 20 * 2**20, (elapsed, peak)


@covers("order_equals")
def test_order_equals_builds_a_list_near_the_selection_size(tmp_path):
    # within GENERATED_SLACK of the selection the list is built, and the detail is kept
    from flarespec.engine.kinds import GENERATED_SLACK

    generated = {"format": "s{n}", "product": {"n": {"range": {"ref": "doc:$.count"}}}}
    doc = {"v": ["s0", "s1"], "count": 2 + GENERATED_SLACK}
    assert check(tmp_path, doc, {"order_equals": generated}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", 'missing "s2", "s3", "s4", "s5", "s6" and 995 more')]
    doc["count"] += 1
    assert check(tmp_path / "b", doc, {"order_equals": generated}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", "2 values where 1003 belong (too many to list)")]


@covers("order_equals")
def test_order_equals_difference_is_found_in_linear_time(tmp_path):
    import time

    expected = [f"g{n}" for n in range(50_000)]
    doc = {"v": expected[:-1] + ["x"], "w": expected}
    started = time.perf_counter()
    assert check(tmp_path, doc, {"order_equals": {"ref": "doc:$.w[*]", "all": True}},
                 given="doc:$.v[*]") == [
        ("doc:$.v[*]", 'missing "g49999"; unexpected "x"')]
    assert time.perf_counter() - started < 5  # pairwise comparison: 2.5e9 steps


@covers("order_equals")
def test_order_equals_same_values_but_a_different_length(tmp_path):
    # nothing missing, unexpected or duplicated in actual, yet one "a" short
    assert check(tmp_path, {"v": ["a"]}, {"order_equals": ["a", "a"]}, given="doc:$.v[*]") == [
        ("doc:$.v[*]", "1 values where 2 belong")]


# --------------------------------------------------------------------------- monotonic

@covers("monotonic")
def test_monotonic(tmp_path):
    assert check(tmp_path, {"v": [1, 1, 2.5]}, {"monotonic": "non_decreasing"},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "b", {"v": [1, 2, 3]}, {"monotonic": "increasing"},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "c", {"v": [1, 3, 2]}, {"monotonic": "non_decreasing"},
                 given="doc:$.v[*]") == [
        ("$.v[2]", "2 follows 3 at $.v[1]; expected non-decreasing values")]
    assert check(tmp_path / "d", {"v": [1, 1]}, {"monotonic": "increasing"},
                 given="doc:$.v[*]") == [
        ("$.v[1]", "1 follows 1 at $.v[0]; expected increasing values")]
    assert check(tmp_path / "e", {"v": [1, "2", 0]}, {"monotonic": "increasing"},
                 given="doc:$.v[*]") == [("$.v[1]", "is string, expected a number")]


# --------------------------------------------------------------------------- objects

@covers("keys")
def test_keys(tmp_path):
    assert check(tmp_path, {"v": {"a": 1, "b": 2}}, {"keys": ["b", "a"]}) == []
    assert check(tmp_path / "b", {"v": {"a": 1, "b": 2}}, {"keys": ["b", "c"]}) == [
        ("$.v", 'missing keys "c"; unexpected keys "a"')]
    assert check(tmp_path / "c", {"v": [1]}, {"keys": ["a"]}) == [
        ("$.v", "is array, expected an object")]
    doc = {"v": {"x": 1, "y": 2}, "names": [{"id": "x"}, {"id": "y"}, {"id": "z"}]}
    assert check(tmp_path / "d", doc, {"keys": {"ref": "doc:$.names[*].id", "all": True}}) == [
        ("$.v", 'missing keys "z"')]


@covers("keys")
def test_keys_many_keys_in_linear_time(tmp_path):
    import time

    names = [f"k{n}" for n in range(100_000)]
    doc = {"v": dict.fromkeys(names[1:] + ["extra"], 0), "names": names}
    started = time.perf_counter()
    assert check(tmp_path, doc, {"keys": {"ref": "doc:$.names"}}) == [
        ("$.v", 'missing keys "k0"; unexpected keys "extra"')]
    assert time.perf_counter() - started < 5  # list membership per key: 10^10 steps


@covers("includes")
def test_includes(tmp_path):
    doc = {"v": {"a": 1, "b": [], "c": "free"}}
    assert check(tmp_path, doc, {"includes": {"a": 1, "b": []}}) == []
    assert check(tmp_path / "b", doc, {"includes": {"a": 1.0, "d": None}}) == [
        ("$.v.a", "$.v.a differs from the expected value"), ("$.v.d", "$.v.d is missing")]
    assert check(tmp_path / "c", {"v": "x"}, {"includes": {"a": 1}}) == [
        ("$.v", "is string, expected an object")]


@covers("same_as")
def test_same_as(tmp_path):
    doc = {"v": {"x": 1, "y": {"z": [1, 2]}}, "w": {"y": {"z": [1, 2]}, "x": 1}}
    assert check(tmp_path, doc, {"same_as": {"other": {"ref": "doc:$.w"}}}) == []
    doc = {"v": {"x": 1, "extra": 0, "y": {"z": [1, 2.0]}},
           "w": {"x": True, "y": {"z": [1, 2], "gone": 1}}}
    assert check(tmp_path / "b", doc, {"same_as": {"other": {"ref": "doc:$.w"}}}) == [
        ("$.v.x", "$.v.x differs from the other copy"),
        ("$.v.extra", "$.v.extra is present here but not in the other copy"),
        ("$.v.y.z[1]", "$.v.y.z[1] differs from the other copy"),
        ("$.v.y.gone", "$.v.y.gone is missing here but present in the other copy")]


@covers("same_as")
@pytest.mark.parametrize("flag, expected", [
    (True, []),
    (False, [("$.v.a.derived", "$.v.a.derived is present here but not in the other copy")]),
])
def test_same_as_allow_extra_when(tmp_path, flag, expected):
    doc = {"flag": flag, "v": {"a": {"b": 1, "derived": 2}}, "w": {"a": {"b": 1}}}
    assertion = {"same_as": {"other": {"ref": "doc:$.w"},
                             "allow_extra": {"keys": ["a.derived"],
                                             "when": {"given": "doc:$.flag", "equals": True}}}}
    assert check(tmp_path, doc, assertion) == expected


@covers("same_as")
def test_same_as_allow_extra_does_not_excuse_a_different_value_or_other_keys(tmp_path):
    doc = {"v": {"a": 2, "other": 1}, "w": {"a": 1}}
    assertion = {"same_as": {"other": {"ref": "doc:$.w"}, "allow_extra": {"keys": ["a"]}}}
    assert check(tmp_path, doc, assertion) == [
        ("$.v.a", "$.v.a differs from the other copy"),
        ("$.v.other", "$.v.other is present here but not in the other copy")]


# --------------------------------------------------------------------------- formula / not

@covers("formula")
def test_formula(tmp_path):
    doc = {"v": {"items": [{"n": 1}, {"n": 2}], "total": 3}}
    assert check(tmp_path, doc, {"formula": "sum(items.*.n) == total"}) == []
    doc = {"v": {"items": [{"n": 1}, {"n": 2}], "total": 4}}
    assert check(tmp_path / "b", doc, {"formula": "sum(items.*.n) == total"}) == [
        ("$.v", "'sum(items.*.n) == total' does not hold: 3 == 4")]
    assert check(tmp_path / "c", {"v": {"a": 1}}, {"formula": "a == b"}) == [
        ("$.v", "cannot evaluate 'a == b': field 'b' not found: the current value has no "
                "key 'b' [formula: a == b]")]


@covers("formula")
def test_formula_refs(tmp_path):
    doc = {"v": 5, "limits": {"max": 5}}
    assertion = {"formula": {"expr": "$ <= @max", "refs": {"max": {"ref": "doc:$.limits.max"}}}}
    assert check(tmp_path, doc, assertion) == []
    assert check(tmp_path / "b", {"v": 6, "limits": {"max": 5}}, assertion) == [
        ("$.v", "'$ <= @max' does not hold: 6 <= 5")]


@covers("formula")
def test_formula_rel_tol(tmp_path):
    doc = {"v": {"a": 1.0, "b": 1.0000001}}
    assert check(tmp_path, doc, {"formula": {"expr": "a == b", "rel_tol": 1e-6}}) == []
    assert check(tmp_path / "b", doc, {"formula": {"expr": "a == b", "rel_tol": 1e-9}}) == [
        ("$.v", "'a == b' does not hold: 1.0 == 1.0000001")]
    assert check(tmp_path / "c", doc, {"formula": "a == b"}) == [
        ("$.v", "'a == b' does not hold: 1.0 == 1.0000001")]


def compile_issues(tmp_path, assertion, given="doc:$.v"):
    """(code, message) of every spec issue compiling a one-rule spec with ``assertion``."""
    with pytest.raises(SpecInvalid) as caught:
        run(tmp_path, {"v": 1}, assertion, given=given)
    return [(issue.code, issue.message) for issue in caught.value.issues]


@covers("formula")
def test_formula_needs_a_comparison(tmp_path):
    assert compile_issues(tmp_path, {"formula": "a - b"}) == [
        ("spec.formula-syntax",
         "a formula assertion needs a comparison (==, !=, <, <=, >, >=): 'a - b'")]


@covers("not")
def test_not(tmp_path):
    assert check(tmp_path, {"v": "abc"}, {"not": {"starts_with": "x"}}) == []
    assert check(tmp_path / "b", {"v": "xyz"}, {"not": {"starts_with": "x"}}) == [
        ("$.v", 'must not satisfy starts_with "x"')]
    assert check(tmp_path / "c", {"v": 3}, {"not": {"one_of": [1, 2]}}) == []
    assert check(tmp_path / "d", {"v": 2}, {"not": {"one_of": [1, 2]}}) == [
        ("$.v", "must not satisfy one_of [1, 2]")]
    assert check(tmp_path / "e", {"v": {"a": None}}, {"not": {"includes": {"a": None}}}) == [
        ("$.v", "must not satisfy includes {a: null}")]


@covers("not")
def test_inner_kinds_are_checked_at_compile_time(tmp_path):
    known = ", ".join(sorted(KINDS))
    assert compile_issues(tmp_path, {"not": {"bogus": 1}}) == [
        ("spec.unknown-kind", f"unknown assertion kind 'bogus'; known: {known}")]
    assert compile_issues(tmp_path / "b", {"count": {"equals": 1, "where": {"bogus": 1}}}) == [
        ("spec.unknown-kind", f"unknown assertion kind 'bogus'; known: {known}")]
    assert compile_issues(tmp_path / "c", {"not": {"equals": 1, "one_of": [1]}}) == [
        ("spec.invalid", "not wants exactly one inner assertion kind")]
    assert compile_issues(tmp_path / "d", {"not": {"range": {"minimum": 1}}}) == [
        ("spec.kind-argument",
         "range: unknown argument minimum; allowed: min, max, exclusive_min, exclusive_max")]


@covers("not")
def test_not_formula(tmp_path):
    assert check(tmp_path, {"v": {"a": 2}}, {"not": {"formula": "a == 1"}}) == []
    assert check(tmp_path / "b", {"v": {"a": 1}}, {"not": {"formula": "a == 1"}}) == [
        ("$.v", 'must not satisfy formula "a == 1"')]


# --------------------------------------------------------------------------- argument checks

@pytest.mark.parametrize("assertion, message", [
    ({"present": 1}, "present: wants true or false, got integer 1"),
    ({"absent": "yes"}, 'absent: wants true or false, got string "yes"'),
    ({"type": "int"}, "type: wants one or more of null, boolean, integer, number, string, array, "
                      'object, got string "int"'),
    ({"type": []}, "type: wants one or more of null, boolean, integer, number, string, array, "
                   "object, got array []"),
    ({"one_of": "red"}, 'one_of: wants a non-empty list, got string "red"'),
    ({"regex": "("}, 'regex: invalid regular expression "(": missing ): ( (spec regexes use RE2 '
                     "syntax: no backreferences or lookaround)"),
    ({"regex": 5}, "regex: wants a regular expression string, got integer 5"),
    ({"starts_with": 5}, "starts_with: wants a string, got integer 5"),
    ({"range": {"minimum": 5}}, "range: unknown argument minimum; allowed: min, max, "
                                "exclusive_min, exclusive_max"),
    ({"range": {}}, "range: wants at least one of min, max, exclusive_min, exclusive_max"),
    ({"range": 5}, "range: wants a mapping with min, max, exclusive_min, exclusive_max, got integer 5"),
    ({"finite": 1}, "finite: wants true or false, got integer 1"),
    ({"integral": None}, "integral: wants true or false, got null"),
    ({"length": {"eq": 1}}, "length: unknown argument eq; allowed: equals, min, max"),
    ({"count": {"where": {"equals": 1}}}, "count: wants at least one of equals, min, max"),
    ({"unique": "x"}, 'unique: wants true or false, got string "x"'),
    ({"order_equals": {"product": {}}}, "order_equals: wants 'format' (and optionally 'product')"),
    ({"order_equals": {"format": "x", "prod": {}}},
     "order_equals: unknown argument prod; allowed: format, product"),
    ({"monotonic": "decreasing"},
     'monotonic: wants one of non_decreasing, increasing, got string "decreasing"'),
    ({"keys": "a"}, 'keys: wants a list of strings (member names), got string "a"'),
    ({"includes": [1]}, "includes: wants a mapping of member -> value, got array [1]"),
    ({"same_as": {"other": 1, "allow_extra": {"key": []}}},
     "same_as: unknown argument key; allowed: keys, when"),
    ({"same_as": {"others": 1}}, "same_as: unknown argument others; allowed: other, allow_extra"),
    ({"manifest_lists_all": ["nodoc"]}, "manifest_lists_all: unknown documents nodoc"),
    ({"manifest_lists_only": "doc"}, "manifest_lists_only: wants a list of document names, "
                                     'got string "doc"'),
    ({"manifest_digests": []}, "manifest_digests: wants a list of document names, got array []"),
])
def test_kind_arguments_are_checked_at_compile_time(tmp_path, assertion, message):
    assert compile_issues(tmp_path, assertion) == [("spec.kind-argument", message)]


# --------------------------------------------------------------------------- manifests

MANIFEST_DOCS = {
    "stock": {"loader": "json", "path_from": "doc:$.stock", "rule": "toy.stock"},
    "shelf_file": {"loader": "json", "each": "shelf", "path": "shelves/{shelf.name}.json",
                   "rule": "toy.shelf"},
}


NO_FILES = object()  # manifest_case: the document has no files member at all


def manifest_case(tmp_path, files, kind, *, documents=("stock", "shelf_file")):
    shelves = {"shelves/s0.json": {"total": 0}, "shelves/s1.json": {"total": 1}}
    stock = b'{"counts": {}}\n'
    doc = {"stock": "stock.json", "shelves": [{"name": "s0"}, {"name": "s1"}], "files": files}
    if files is NO_FILES:
        del doc["files"]
    spec = compile_toy(tmp_path, {
        "documents": {"doc": {"loader": "json", "entry": True, "rule": "toy.doc"},
                      **MANIFEST_DOCS},
        "iterations": {"shelf": {"over": "doc:$.shelves[*]"}},
        "rules": [{"id": RULE, "description": "manifest", "given": "doc:$.files",
                   "assert": {kind: list(documents)}}],
    })
    write_files(tmp_path / "docs", {"doc.json": doc, "stock.json": stock, **shelves})
    report = evaluate(spec, tmp_path / "docs" / "doc.json")
    assert {v.rule for v in report.violations} <= {RULE}
    return [(v.location, v.message, v.expected, v.actual) for v in report.violations]


def sha(content) -> str:
    data = content if isinstance(content, bytes) else json.dumps(content).encode()
    return hashlib.sha256(data).hexdigest()


GOOD_FILES = {"stock.json": sha(b'{"counts": {}}\n'), "shelves/s0.json": sha({"total": 0}),
              "shelves/s1.json": sha({"total": 1})}


@covers("manifest_lists_all")
def test_manifest_lists_all(tmp_path):
    assert manifest_case(tmp_path, GOOD_FILES, "manifest_lists_all") == []
    files = {k: v for k, v in GOOD_FILES.items() if k != "shelves/s1.json"}
    assert manifest_case(tmp_path / "b", files, "manifest_lists_all") == [
        ("$.files", "no entry for shelves/s1.json", "shelves/s1.json", None)]


@covers("manifest_lists_only")
def test_manifest_lists_only(tmp_path):
    assert manifest_case(tmp_path, GOOD_FILES, "manifest_lists_only") == []
    files = {**GOOD_FILES, "notes.txt": "0" * 64}
    assert manifest_case(tmp_path / "b", files, "manifest_lists_only") == [
        ("$.files['notes.txt']", "entry notes.txt names no referenced file", None, "notes.txt")]
    # only the named documents count: stock.json is not one of them here
    assert manifest_case(tmp_path / "c", GOOD_FILES, "manifest_lists_only",
                         documents=("shelf_file",)) == [
        ("$.files['stock.json']", "entry stock.json names no referenced file", None,
         "stock.json")]


@covers("manifest_digests")
def test_manifest_digests(tmp_path):
    assert manifest_case(tmp_path, GOOD_FILES, "manifest_digests") == []
    files = {**GOOD_FILES, "shelves/s0.json": "0" * 64}
    # actual = what the packet declares (the value at the location), expected = the hash of
    # the file's bytes; the message labels both
    assert manifest_case(tmp_path / "b", files, "manifest_digests") == [
        ("$.files['shelves/s0.json']",
         f'digest of shelves/s0.json differs from the file\'s bytes: declared "{"0" * 64}", '
         f'the bytes hash to "{sha({"total": 0})}"', sha({"total": 0}), "0" * 64)]


@pytest.mark.parametrize("kind", ["manifest_lists_all", "manifest_lists_only",
                                  "manifest_digests"])
def test_a_manifest_that_is_absent_or_not_an_object_fails_closed(tmp_path, kind):
    """Issue 13: with no `files` member at all nothing was bound by a digest, and it passed."""
    absent = manifest_case(tmp_path / "absent", NO_FILES, kind)
    assert absent == [("doc:$.files", "nothing found at doc:$.files", "present", None)]
    null = manifest_case(tmp_path / "null", None, kind)
    assert null == [("$.files", "is null, expected an object (path -> digest)", "object",
                     "null")]
    listed = manifest_case(tmp_path / "list", list(GOOD_FILES), kind)
    assert listed == [("$.files", "is array, expected an object (path -> digest)", "object",
                       "array")]


def test_a_manifest_is_not_checked_against_an_incomplete_set_of_documents(tmp_path):
    """When an iteration the named documents depend on cannot be walked (its document did
    not load, reported once), the manifest rule is skipped: its entries are not 'extra'."""
    spec = compile_toy(tmp_path, {
        "documents": {"doc": {"loader": "json", "entry": True, "rule": "toy.doc"},
                      "index": {"loader": "json", "path_from": "doc:$.index",
                                "rule": "toy.index"},
                      "shelf_file": {"loader": "json", "each": "shelf",
                                     "path": "shelves/{shelf.name}.json", "rule": "toy.shelf"}},
        "iterations": {"shelf": {"over": "index:$.shelves[*]"}},
        "rules": [{"id": RULE, "description": "manifest", "given": "doc:$.files",
                   "assert": {"manifest_lists_only": ["index", "shelf_file"]}}],
    })
    write_files(tmp_path / "docs", {"doc.json": {"index": "index.json", "files": {
        "index.json": "0" * 64, "shelves/s0.json": "0" * 64}}, "index.json": b"{,",
        "shelves/s0.json": {}})
    report = evaluate(spec, tmp_path / "docs" / "doc.json")
    assert [v.rule for v in report.violations] == ["toy.index.invalid-json"]


# --------------------------------------------------------------------------- completeness

def test_every_registered_kind_is_covered_here():
    assert set(KINDS) == COVERED


def test_accepts_empty_kinds_are_exactly_the_documented_ones():
    """Only kinds whose meaning is about emptiness accept an empty selection; the manifest
    kinds do not (issue 13: a packet.json without `files` bound nothing and passed)."""
    accepting = {name for name, kind in KINDS.items() if kind.accepts_empty}
    assert accepting == {"present", "absent", "count", "order_equals"}




def test_json_type_by_exact_type_is_json_type_by_its_tests():
    """json_type names an exact built-in's type from a table and anything else by its
    tests: both say the same of a subclass (the spec's marked containers) as of the type."""
    from decimal import Decimal

    from flarespec.engine.values import json_type
    from flarespec.compiler.yamlmarks import MarkedDict

    class Listed(list):
        pass

    cases = [(None, "null"), (True, "boolean"), (False, "boolean"), (0, "integer"),
             (2 ** 80, "integer"), (1.5, "number"), (float("nan"), "number"),
             (Decimal("1.5"), "number"), ("", "string"), ([], "array"), ({}, "object"),
             (MarkedDict(), "object"), (Listed(), "array"), (b"x", "bytes")]
    assert [(value, json_type(value)) for value, _ in cases] == cases
