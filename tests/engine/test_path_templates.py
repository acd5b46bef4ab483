"""JSONPaths naming a member by a binding (engine/path_templates.py, issue 24): a rule over
a list of names (metrics × statistics) reads ``$.stats.{name}.value`` per binding. The filled
name is a name selector, never path text; a value that names nothing is a violation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarespec.engine.evaluate import evaluate
from flarespec.engine.path_templates import JsonPathTemplate, has_placeholders
from flarespec.engine.paths import PathSyntaxError
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import open_compiled

SPEC = """\
flarespec: 1
id: toy/templated
title: names in paths
constants:
  names: [a, b]
shapes:
  doc:
    type: object
    members:
      stats: {type: object, values: {type: object, members: {value: number, count: integer}}}
      raw: {type: object, values: {type: array, items: number}}
      keys: {type: array, items: any}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
iterations:
  name: {over: "constants:$.names[*]"}
  key: {over: "doc:$.keys[*]"}
rules:
  - id: toy.stats.count
    description: each statistic counts its raw values
    for_each: name
    given: "doc:$.stats.{name}.count"
    assert: {formula: {expr: "$ == len(@xs)", refs: {xs: {ref: "doc:$.raw.{name}[*]", all: true}}}}
  - id: toy.stats.mean
    description: each statistic's value is the mean of its raw values
    for_each: name
    given: "doc:$.stats.{name}.value"
    assert: {formula: {expr: "$ == mean(@xs)", refs: {xs: {ref: "doc:$.raw.{name}[*]", all: true}}}}
  - id: toy.keys.named
    description: every listed key names a statistic
    for_each: key
    given: "doc:$.stats.{key}"
    assert: {present: true}
"""

GOOD = {"stats": {"a": {"value": 2, "count": 3}, "b": {"value": 5, "count": 1}},
        "raw": {"a": [1, 2, 3], "b": [5]}, "keys": ["a", "b"]}


def _run(tmp_path: Path, document: dict, spec_text: str = SPEC):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec_text)
    entry = tmp_path / "doc" / "doc.json"
    entry.parent.mkdir(exist_ok=True)
    entry.write_text(json.dumps(document))
    report = evaluate(open_compiled(spec_file), entry)
    return report, {(v.rule, v.location) for v in report.violations}


def test_a_name_from_each_binding_is_read(tmp_path):
    report, found = _run(tmp_path, GOOD)
    assert report.ok, report.violations


def test_each_binding_is_judged_at_its_own_filled_location(tmp_path):
    broken = json.loads(json.dumps(GOOD))
    broken["stats"]["b"]["value"] = 6
    broken["stats"]["a"]["count"] = 4
    _, found = _run(tmp_path, broken)
    assert found == {("toy.stats.mean", "$.stats.b.value"), ("toy.stats.count", "$.stats.a.count")}


@pytest.mark.parametrize("key", ["a'] , $..*", "a.b", "*", "c"], ids=["quote", "dot", "star", "absent"])
def test_a_value_from_the_evidence_is_a_name_never_path_text(tmp_path, key):
    document = dict(GOOD, keys=["a", key])
    _, found = _run(tmp_path, document)
    assert found == {("toy.keys.named", "$.stats")} or {v[0] for v in found} == {"toy.keys.named"}


@pytest.mark.parametrize("key", [None, 1.5, True, {"x": 1}], ids=["null", "float", "bool", "object"])
def test_a_value_that_is_no_name_cannot_be_evaluated(tmp_path, key):
    report, found = _run(tmp_path, dict(GOOD, keys=["a", key]))
    messages = [v.message for v in report.violations]
    assert {v[0] for v in found} == {"toy.keys.named"}, report.violations
    assert any("a name in a JSONPath is a string" in m for m in messages), messages


def test_an_integer_value_is_an_index():
    template = JsonPathTemplate("$.xs.{i}")
    assert template.compiled(lambda p: 1).values({"xs": [10, 20]}) == [20]
    assert template.compiled(lambda p: "1").values({"xs": {"1": 30}}) == [30]


def test_a_placeholder_inside_a_filter():
    template = JsonPathTemplate("$[?@.{m}].{m}")
    assert template.compiled(lambda p: "a").values([{"a": 1}, {"b": 2}, {"a": 3}]) == [1, 3]


def test_a_filled_path_is_compiled_once_per_text():
    template = JsonPathTemplate("$.a.{n}")
    assert template.compiled(lambda p: "x") is template.compiled(lambda p: "x")


@pytest.mark.parametrize("selector", ["$.a{n}", "$.a.{n", "$.a.}", "$['{n}'].{n", "$.a.{{n}}"])
def test_a_brace_that_is_no_member_segment_is_refused(selector):
    with pytest.raises(PathSyntaxError):
        JsonPathTemplate(selector)


def test_braces_inside_string_literals_are_text():
    assert not has_placeholders("$[?@.name == '{x}']")
    assert has_placeholders("$[?@.name == '{x}'].{y}")


def test_an_unbound_placeholder_is_a_spec_error(tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(SPEC.replace('"doc:$.stats.{name}.count"', '"doc:$.stats.{nmae}.count"'))
    with pytest.raises(SpecInvalid) as problem:
        open_compiled(spec_file)
    assert any(issue.code == "spec.unbound-iteration" for issue in problem.value.issues)


def test_lint_follows_a_placeholder_step_into_a_values_shape(tmp_path):
    from flarespec.authoring.lint import lint

    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(SPEC.replace('"doc:$.stats.{name}.count"', '"doc:$.stats.{name}.cuont"'))
    issues = [issue for result in lint([str(spec_file)]) for issue in result.issues]
    assert any(issue.code == "spec.undeclared-member" and "cuont" in issue.message
               for issue in issues), issues
