"""Document shapes: the checker (engine/shapes.py), their compilation (compiler/shapes.py), their
merge through ``extends``, the engine's check at load, spec diff and spec lint over them."""

from __future__ import annotations

import pickle
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from document_files import compile_text, write_files
from flarespec.engine.evaluate import evaluate
from flarespec.engine.shapes import MAX_PROBLEMS_PER_CONTAINER, Shape, build, holds
from flarespec.review.diff import diff_specs
from flarespec.compiler.errors import SpecInvalid
from flarespec.authoring.lint import lint_one
from flarespec.compiler.open import open_compiled


def problems(node: dict, value) -> list[tuple[str, str]]:
    return [(p.location, p.message) for p in Shape(node, "x.shape").problems(value)]


# ------------------------------------------------------------------ the checker

@pytest.mark.parametrize("value, ok", [(1, True), (-3, True), (2 ** 80, True), (True, False),
                                       (1.0, False), ("1", False), (None, False), ([1], False)])
def test_integer_is_a_json_integer_token_only(value, ok):
    assert (problems({"type": "integer"}, value) == []) is ok


@pytest.mark.parametrize("value, ok", [(1, True), (1.5, True), (True, False), ("1", False),
                                       (Decimal("1.5"), True), (float("nan"), True)])
def test_number_is_an_integer_or_a_float_never_a_boolean(value, ok):
    """A Decimal is the Prometheus loader's exact non-integral value (``0.28``): a number.
    Before, it was refused with "is number, expected number", so a spec could not declare
    a real /metrics page's gauges. NaN (a Prometheus ``NaN``) is a number too."""
    assert (problems({"type": "number"}, value) == []) is ok
    assert holds({"type": "number"})(value) is ok  # the generated verdict agrees


@pytest.mark.parametrize("value, message", [
    (float("nan"), "is NaN, expected at least 0"), (float("-inf"), "is -Infinity, expected at least 0"),
    (Decimal("-0.5"), "is -0.5, expected at least 0"), (float("inf"), "is Infinity, expected at most 1"),
    (Decimal("1.0000000000000000000001"), "is 1.0000000000000000000001, expected at most 1")])
def test_no_bound_admits_nan_and_decimals_are_bounded_exactly(value, message):
    """``nan < 0`` and ``nan > 1`` are both false: a bound written as "below min fails"
    passed NaN, and a Decimal was not bounded at all (it was no number to the bounds)."""
    node = {"type": "number", "min": 0, "max": 1}
    assert [m for _, m in problems(node, value)] == [message]
    assert holds(node)(value) is False
    assert problems(node, Decimal("0.28")) == [] and holds(node)(Decimal("0.28"))


def test_an_array_is_never_an_object_nor_the_reverse():
    assert problems({"type": "array"}, {"0": 1}) == [("$", "is object, expected array")]
    assert problems({"type": "object"}, [1]) == [("$", "is array, expected object")]


def test_null_only_where_the_type_lists_it_and_any_takes_everything():
    node = {"type": ["null", "string"]}
    assert problems(node, None) == [] and problems(node, "x") == []
    assert problems(node, 0) == [("$", "is integer, expected null or string")]
    assert problems({"type": "any"}, {"deep": [None]}) == []


def test_members_required_unless_optional_and_unnamed_members_allowed():
    node = {"type": "object", "members": {"a": {"type": "integer"},
                                          "b": {"type": "string", "optional": True}}}
    assert problems(node, {"a": 1, "other": [1]}) == []
    assert problems(node, {}) == [("$.a", "required member 'a' is missing")]
    assert problems(node, {"a": 1, "b": None}) == [("$.b", "is null, expected string")]


def test_closed_objects_reject_other_members():
    node = {"type": "object", "closed": True, "members": {"a": {"type": "any"}}}
    [(location, message)] = problems(node, {"a": 1, "b": 2})
    assert location == "$.b" and "not allowed here" in message


def test_values_items_length_bounds_pattern_one_of():
    node = {"type": "object", "values": {"type": "array", "length": 2, "items": {
        "type": "integer", "min": 0}}}
    assert problems(node, {"g": [0, 1]}) == []
    assert problems(node, {"g": [0, -1]}) == [("$.g[1]", "is -1, expected at least 0")]
    assert problems(node, {"g.x": [0]}) == [("$['g.x']", "has length 1, expected exactly 2")]
    sha = {"type": "string", "pattern": "[0-9a-f]{4}"}
    assert problems(sha, "beef") == []
    assert problems(sha, "beef\n") and problems(sha, "BEEF")  # matched whole, lower case
    assert problems({"type": "string", "one_of": ["a", "b"]}, "c") == [
        ("$", 'is "c", expected one of ["a", "b"]')]
    assert problems({"type": "number", "max": 2}, 3) == [("$", "is 3, expected at most 2")]


def test_a_bad_integer_among_many_is_found_and_a_flood_is_capped():
    node = {"type": "array", "items": {"type": "integer"}}
    assert problems(node, list(range(10_000))) == []
    assert problems(node, [1, 2, 3.0]) == [("$[2]", "is number, expected integer")]
    flood = problems(node, ["x"] * 100)
    assert len(flood) == MAX_PROBLEMS_PER_CONTAINER + 1
    assert flood[-1][1] == "80 more elements do not have their shape (not listed)"


def test_a_shape_pickles_without_its_checker_and_rebuilds_it():
    shape = Shape({"type": "integer"}, "x.shape")
    assert shape.problems(1.5)  # built
    again = pickle.loads(pickle.dumps(shape))
    assert again.rule == "x.shape" and again.problems(1) == [] and again.problems("1")


def test_the_checker_recurses_only_as_deep_as_the_shape():
    deep = value = []
    for _ in range(100_000):
        value.append([])
        value = value[0]
    assert build({"type": "array", "items": {"type": "array"}})(deep) is None


# ------------------------------------------------------------------ compiling shapes

HEAD = """\
flarespec: 1
id: toy/shaped
title: shaped
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
"""


def test_named_shapes_use_and_type_names_expand(tmp_path):
    spec = compile_text(tmp_path, HEAD + textwrap.dedent("""\
        shapes:
          count: {type: integer, min: 0}
          usage: {type: object, members: {n: count}}
          doc:
            type: object
            members:
              a: {use: usage, type: [null, object]}
              b: usage
              c: null
        """))
    node = spec.documents["doc"].shape.node
    assert node["members"]["a"] == {"type": ["null", "object"],
                                    "members": {"n": {"type": "integer", "min": 0}}}
    assert node["members"]["b"]["type"] == "object"
    assert node["members"]["c"] == {"type": "null"}
    assert spec.documents["doc"].shape.rule == "toy.doc.shape"


@pytest.mark.parametrize("shapes, message", [
    ("doc: {type: integr}", "shape key 'type' wants one or a list of"),
    ("doc: {type: object, member: {}}", "unknown shape key 'member'"),
    ("doc: {type: object, members: {a: intger}}", "'intger' is neither a type"),
    ("doc: {use: doc}", "shape 'doc' refers to itself (doc -> doc)"),
    ("doc: {type: array, length: -1}", "shape key 'length' wants a whole number"),
    ("doc: {type: string, pattern: '(a'}", "shape key 'pattern' wants an RE2 pattern"),
    ("integer: {type: string}\n  doc: integer", "has the name of a type"),
])
def test_a_bad_shape_is_a_spec_error_at_its_line(tmp_path, shapes, message):
    with pytest.raises(SpecInvalid) as raised:
        compile_text(tmp_path, HEAD + "shapes:\n  " + shapes + "\n")
    issues = raised.value.issues
    assert any(message in issue.message and issue.code == "spec.document-shape"
               and issue.mark is not None and issue.mark.line >= 6 for issue in issues), issues


def test_a_document_naming_an_undeclared_shape_is_an_error(tmp_path):
    with pytest.raises(SpecInvalid, match="shape 'doc' is not declared in shapes"):
        compile_text(tmp_path, HEAD + "shapes:\n  dock: object\n")


# ------------------------------------------------------------------ extends: member by member

PARENT = HEAD + """\
shapes:
  doc:
    type: object
    members:
      a: integer
      b: {type: object, members: {c: string, d: string}}
"""


def child(tmp_path, text: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "shaped.yaml").write_text(PARENT)
    return compile_text(tmp_path, "flarespec: 1\nid: toy/child\ntitle: child\nextends: "
                                  "toy/shaped\n" + textwrap.dedent(text), "child.yaml")


def test_a_child_adds_one_member_in_one_entry_and_keeps_the_rest(tmp_path):
    spec = child(tmp_path, "shapes:\n  doc: {members: {e: boolean, b: {members: {f: null}}}}\n")
    members = spec.documents["doc"].shape.node["members"]
    assert set(members) == {"a", "b", "e"} and set(members["b"]["members"]) == {"c", "d", "f"}


def test_a_child_drops_members_and_a_drop_of_nothing_is_an_error(tmp_path):
    spec = child(tmp_path, "shapes:\n  doc: {drop_members: [a]}\n")
    assert set(spec.documents["doc"].shape.node["members"]) == {"b"}
    with pytest.raises(SpecInvalid, match="drop_members names 'z'"):
        child(tmp_path / "z", "shapes:\n  doc: {drop_members: [z]}\n")


# ------------------------------------------------------------------ the engine checks first

def test_a_document_without_its_shape_is_reported_once_and_no_rule_reads_it(tmp_path):
    spec = compile_text(tmp_path / "spec", PARENT + textwrap.dedent("""\
        rules:
          - id: toy.doc.a
            description: a is at least 1.
            given: "doc:$.a"
            assert: {range: {min: 1}}
        """))
    write_files(tmp_path / "docs", {"doc.json": {"a": 1.0, "b": {"c": "x", "d": "y"}}})
    report = evaluate(spec, tmp_path / "docs" / "doc.json")
    assert [(v.rule, v.file, v.location, v.message, v.expected, v.actual, v.line)
            for v in report.violations] == [
        ("toy.doc.shape", "doc.json", "$.a", "is number, expected integer", "integer",
         "number 1.0", None)]  # a JSON document's place is its JSONPath (no line kept)
    write_files(tmp_path / "ok", {"doc.json": {"a": 0, "b": {"c": "x", "d": "y"}}})
    assert [v.rule for v in evaluate(spec, tmp_path / "ok" / "doc.json").violations] == \
        ["toy.doc.a"]  # with its shape, the rule reads it


# ------------------------------------------------------------------ spec diff and spec lint

def diff_classes(tmp_path, text: str) -> dict[str, str]:
    (tmp_path / "shaped.yaml").write_text(PARENT)
    (tmp_path / "child.yaml").write_text(
        "flarespec: 1\nid: toy/child\ntitle: child\nextends: toy/shaped\n" + text)
    old, new = open_compiled(str(tmp_path / "shaped.yaml")), open_compiled(str(tmp_path / "child.yaml"))
    return {f"{c.path}: {c.what}": c.cls for c in diff_specs(old.resolved, new.resolved).changes
            if c.subject == "shape of document doc"}


@pytest.mark.parametrize("text, expected", [
    ("shapes:\n  doc: {drop_members: [a]}\n", {"$.a: member a removed": "loosening"}),
    ("shapes:\n  doc: {members: {z: integer}}\n", {"$.z: member z added": "tightening"}),
    ("shapes:\n  doc: {members: {a: number}}\n", {"$.a type: type widened": "loosening"}),
    ("shapes:\n  doc: {members: {a: {type: integer, optional: true}}}\n",
     {"$.a optional: made optional": "loosening"}),
    ("shapes:\n  doc: {members: {a: {type: integer, min: 3}}}\n",
     {"$.a min: min added": "tightening"}),
    ("shapes:\n  doc: {members: {b: {type: [null, object]}}}\n",
     {"$.b type: type widened": "loosening"}),
    ("shapes:\n  doc: {members: {a: {type: integer}}}\n", {}),  # respelled: no change
])
def test_spec_diff_classes_each_shape_change_by_direction(tmp_path, text, expected):
    assert diff_classes(tmp_path, text) == expected


def test_lint_reports_an_undeclared_member_and_a_document_without_a_shape(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(PARENT.replace(
        "  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}\n",
        "  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}\n"
        "  other: {loader: json, path: other.json, rule: toy.other}\n") + textwrap.dedent("""\
        rules:
          - id: toy.doc.e
            description: reads a member no shape declares.
            given: "doc:$.b.e"
            assert: {equals: 1}
        """))
    result = lint_one(str(path))
    found = {(issue.code, issue.mark.line if issue.mark else None): issue.message
             for issue in result.issues if issue.severity == "error"}
    assert set(found) == {("spec.no-shape", 6), ("spec.undeclared-member", 14)}, found
    assert found[("spec.no-shape", 6)].startswith("document 'other' (json) declares no shape")
    assert found[("spec.undeclared-member", 14)] == (
        "'doc:$.b.e' reads member 'e' of $.b, which its shape does not declare "
        "(declared: c, d)")


# ------------------------------------------------------------------ verdict == empty report

from hypothesis import given, settings, strategies as st  # noqa: E402

from flarespec.engine.shapes import _compiled  # noqa: E402

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.5, -2.0]),
                     st.sampled_from(["", "a", "ab", "beef", "BEEF"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)), max_leaves=8)
_TYPES = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object",
                          "any"])


def _nodes():
    leaf = st.builds(lambda t: {"type": t}, st.one_of(_TYPES, st.lists(_TYPES, min_size=1,
                                                                          max_size=2)))

    def extend(inner):
        keys = st.fixed_dictionaries({}, optional={
            "members": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=2),
            "items": inner, "values": inner, "closed": st.booleans(),
            "min": st.integers(-1, 1), "max": st.integers(0, 2),
            "length": st.one_of(st.integers(0, 2), st.just({"min": 1})),
            "pattern": st.just("[a-f]+"), "one_of": st.just([None, 1, "a"]),
            "optional": st.booleans()})
        return st.tuples(leaf, keys).map(lambda pair: {**pair[0], **pair[1]})
    return st.recursive(leaf, extend, max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(_nodes(), _VALUES)
def test_the_verdict_holds_exactly_when_the_report_is_empty(node, value):
    check, report, verdict = _compiled(node)
    reported = report(value) or []
    assert verdict(value) is (not reported), (node, value, [p.message for p in reported])
    assert bool(check(value)) is bool(reported)  # the checker reports exactly then


def test_a_shape_too_deep_to_generate_is_decided_by_its_report():
    from flarespec.engine.shapes import _generated

    node = {"type": "integer"}
    for _ in range(40):  # past Python's limit of nested blocks in one function
        node = {"type": "array", "items": node}
    assert _generated(node) is None
    value = 1
    for _ in range(40):
        value = [value]
    assert problems(node, value) == []
    bad = value
    for _ in range(39):
        bad = bad[0]
    bad[0] = "x"
    [(location, message)] = problems(node, value)
    assert location == "$" + "[0]" * 40 and message == "is string, expected integer"


def test_a_named_shape_no_document_reaches_is_a_lint_error(tmp_path):
    """A new-user review: a child's misspelt shape name (memory_reprot) checked nothing."""
    path = tmp_path / "spec.yaml"
    path.write_text(PARENT + "  dock: {members: {z: integer}}\n")
    errors = [i for i in lint_one(str(path)).issues if i.severity == "error"]
    assert [(i.code, i.mark.line) for i in errors] == [("spec.unused-shape", 12)]
    assert "shape 'dock' is used by no document" in errors[0].message
    assert "(did you mean 'doc'?)" in errors[0].message


def test_releasing_a_draft_is_a_review_change(tmp_path):
    (tmp_path / "shaped.yaml").write_text(PARENT)
    draft = tmp_path / "draft.yaml"
    draft.write_text(PARENT.replace("id: toy/shaped", "id: toy/shaped\ndraft: true"))
    old, new = open_compiled(str(draft)), open_compiled(str(tmp_path / "shaped.yaml"))
    [change] = [c for c in diff_specs(old.resolved, new.resolved).changes if c.subject == "draft"]
    assert (change.cls, change.what) == ("review", "released")


def test_a_null_is_described_by_its_text_alone():
    assert problems({"type": "string"}, None) == [("$", "is null, expected string")]
    [problem] = Shape({"type": "string"}, "x.shape").problems(None)
    assert problem.actual == "null"


PROMETHEUS_HEAD = """\
flarespec: 1
id: toy/metrics
title: a metrics page
documents:
  page: {loader: prometheus, entry: true, rule: toy.page, shape: page}
shapes:
  page:
    type: object
    members:
      samples:
        type: array
        items: {type: object, members: {name: string, value: {type: number, min: 0}}}
"""


@pytest.mark.parametrize("text, rejected", [
    ("# TYPE usage gauge\nusage 0.28\nhits 12\n", []),
    ("usage NaN\n", ["toy.page.shape"]),      # no bound admits NaN
    ("usage -0.25\n", ["toy.page.shape"]),    # a Decimal is bounded exactly
])
def test_a_metrics_page_s_values_have_the_shape_number(tmp_path, text, rejected):
    """A real /metrics page's gauge (``0.28``, a Decimal from the loader) has the shape
    ``number``; before, every non-integral value was refused ("is number, expected
    number"), and a NaN passed ``min: 0``."""
    spec = compile_text(tmp_path / "spec", PROMETHEUS_HEAD)
    write_files(tmp_path / "page", {"metrics.prom": text})
    report = evaluate(spec, tmp_path / "page" / "metrics.prom")
    assert [v.rule for v in report.violations] == rejected
