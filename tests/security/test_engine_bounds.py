"""Bounded engine work on hostile values (issue 6, defects 8-10 and the regex part of 13).

Values in documents are untrusted: they may nest thousands deep (Python's recursion limit is
1000), hold millions of items, or carry counts that would size work. Every comparison and
walk must be iterative, every rendering bounded, and the violations kept per rule capped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from flarespec.adapter.commands import PacketResult, compare_pair
from flarespec.engine.evaluate import evaluate
from flarespec.engine.kinds import KINDS
from flarespec.engine.values import differences, strict_equal
from flarespec.engine.outcome import MAX_KEPT_PER_RULE, Outcome, Violation, shorten, shown
from flarespec.loaders.strict_json import load_json
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

PYTHON_DEPTH = 5000  # far beyond the recursion limit, built in Python (no loader involved)
JSON_DEPTH = 900     # deep, yet within what the stdlib JSON parser accepts


def nested(depth: int, leaf=None) -> list:
    value = [] if leaf is None else [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_json(depth: int, leaf: str = "") -> object:
    return load_json(("[" * depth + leaf + "]" * depth).encode())


def failures(kind: str, value, arg, location: str = "$.v") -> list:
    function = KINDS[kind].function
    if KINDS[kind].collective:
        return list(function(None, [value], arg, [location]))
    return list(function(None, value, arg, location))


# ------------------------------------------------------------------ defect 8: deep values

@pytest.mark.parametrize("make", [lambda leaf: nested(PYTHON_DEPTH, leaf),
                                  lambda leaf: nested_json(JSON_DEPTH, json.dumps(leaf))],
                         ids=["python-5000", "json-900"])
def test_strict_equal_is_iterative(make):
    assert strict_equal(make(1), make(1))
    assert not strict_equal(make(1), make(2))
    assert not strict_equal(make(1), make(1.0))   # type-strict at the bottom too
    assert not strict_equal(make(1), make(True))
    assert strict_equal({"a": make("x"), "b": 1}, {"b": 1, "a": make("x")})


def test_pair_identities_nested_deep_are_compared(tmp_path):
    """Defect 8: the pair comparison of 600+-deep identities raised RecursionError."""
    spec = SimpleNamespace(id="toy/pair", pair=[
        {"id": "toy.pair.source", "identity": "source", "description": "Same source."}])

    def result(role: str, source) -> PacketResult:
        report = Outcome("toy/pair")
        report.identities["source"] = source
        return PacketResult(role, tmp_path / role / "packet.json", spec, report)

    for make in (lambda leaf: nested(PYTHON_DEPTH, leaf), lambda leaf: nested_json(JSON_DEPTH, leaf)):
        assert compare_pair(result("packet", make('"a"')), result("peer", make('"a"'))) == []
        [violation] = compare_pair(result("packet", make('"a"')), result("peer", make('"b"')))
        assert violation.rule == "toy.pair.source"
        assert violation.as_dict()["actual"].endswith("… (1 items)")  # rendered, bounded


def test_differences_and_same_as_walk_deep_values():
    mine, theirs = nested(PYTHON_DEPTH, 1), nested(PYTHON_DEPTH, 2)
    [(kind, location, left, right)] = list(differences(mine, theirs))
    assert (kind, location, left, right) == ("value", "$" + "[0]" * PYTHON_DEPTH, 1, 2)
    [failure] = failures("same_as", mine, {"other": theirs})
    assert failure.location == "$.v" + "[0]" * PYTHON_DEPTH
    assert failures("same_as", nested_json(JSON_DEPTH, "1"), {"other": nested_json(JSON_DEPTH, "1")}) == []


@pytest.mark.parametrize("depth", [PYTHON_DEPTH, JSON_DEPTH])
def test_collective_kinds_hash_deep_values(depth):
    deep, at = [nested(depth, 1), nested(depth, 1)], ["$.v[0]", "$.v[1]"]
    [duplicate] = KINDS["unique"].function(None, deep, True, at)
    assert duplicate.message == "duplicate of the value at $.v[0]"
    [problem] = KINDS["order_equals"].function(None, deep, [nested(depth, 2), nested(depth, 1)],
                                               at)
    assert problem.message.startswith("missing [[[[")


def test_rendering_is_bounded_at_any_depth_and_size():
    deep = nested(PYTHON_DEPTH, 1)
    assert shown(deep, 10) == "[" * 10 + "…"
    assert shorten(deep) == "[" * 160 + "… (1 items)"
    huge = {"events": list(range(1_000_000))}
    started = time.perf_counter()
    assert shorten(huge, 20) == '{"events": [0, 1, 2,… (1 members)'
    assert shown("x" * 10_000_000, 5) == '"xxxx…'
    assert time.perf_counter() - started < 0.1  # only the shown prefix is rendered
    assert shorten({"a": [1, None]}) == {"a": [1, None]}  # short JSON stays a value
    assert shorten([float("nan")]) == "[NaN]"             # receipts are strict JSON
    assert json.loads(json.dumps(Violation("r", "error", "m", actual=deep).as_dict()))


def test_rendering_matches_json_dumps_for_ordinary_values():
    value = {"a": [1, 2.5, None, True, "é\n\"q\""], "b": {}, "c": [], "d": {"e": -3}}
    assert shown(value, 10_000) == json.dumps(value, ensure_ascii=False)
    assert shown({"equals": None, "not a key": 1}, bare_keys=True) == '{equals: null, "not a key": 1}'


# ------------------------------------------------------------------ defect 10: violations kept

def violation(rule: str, severity: str = "error", number: int = 0) -> Violation:
    return Violation(rule, severity, f"broken #{number}")


def test_report_keeps_the_first_violations_per_rule_and_counts_the_rest():
    report = Outcome("toy")
    for number in range(250):
        report.add(violation("toy.a", number=number))
    for number in range(3):
        report.add(violation("toy.b", number=number))
    for number in range(150):
        report.add(violation("toy.a", "warning", number))
    assert MAX_KEPT_PER_RULE == 100
    kept = [v.message for v in report.violations if v.rule == "toy.a"]
    assert kept == [f"broken #{n}" for n in range(100)]  # the first ones, in order
    assert len(report.violations) == 103 and len(report.warnings) == 100
    assert report.suppressed == {"toy.a": 150 + 50}
    assert not report.accepts("toy.a", "error") and not report.accepts("toy.a", "warning")
    assert report.accepts("toy.b", "error") and report.accepts("toy.c", "warning")
    assert not report.ok


def test_report_is_not_ok_when_an_error_was_only_counted():
    report = Outcome("toy")
    report.suppress("toy.a", "warning", 5)
    assert report.ok and report.suppressed == {"toy.a": 5}
    report.suppress("toy.a", "error")
    assert not report.ok and report.suppressed == {"toy.a": 6}


def compile_toy(directory: Path, rules: list[dict]):
    spec = {"flarespec": 1, "id": "toy/bounds", "title": "Bounds",
            "documents": {"doc": {"loader": "json", "entry": True, "rule": "toy.doc"}},
            "rules": rules}
    directory.mkdir(parents=True)
    (directory / "bounds.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/bounds"), library))


def test_failing_values_beyond_the_cap_are_counted_not_kept(tmp_path):
    """Defect 10: every failing element used to become a kept violation (1M SSE events: 2M
    violations, 5.4 GB); now a rule keeps MAX_KEPT_PER_RULE and counts the rest."""
    spec = compile_toy(tmp_path / "spec", [
        {"id": "toy.v", "description": "Every value is a string.", "given": "doc:$.v[*]",
         "assert": {"type": "string"}},
        {"id": "toy.w", "description": "Every value is a number.", "given": "doc:$.w[*]",
         "severity": "warning", "assert": {"type": "number"}}])
    entry = tmp_path / "doc.json"
    entry.write_text(json.dumps({"v": [0] * 200_000, "w": ["x"] * 150}))
    report = evaluate(spec, entry)
    assert [v.location for v in report.violations] == [f"$.v[{n}]" for n in range(100)]
    assert [v.location for v in report.warnings] == [f"$.w[{n}]" for n in range(100)]
    assert report.suppressed == {"toy.v": 199_900, "toy.w": 50}
    assert not report.ok
