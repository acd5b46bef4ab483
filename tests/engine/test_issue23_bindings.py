"""Issue 23 item 12: the bindings of a run are bounded (engine/scopes.py ``MAX_BINDINGS``).

Two iterations over a 15,000-element constant (a 100 KB spec, 225M bindings) linted clean
and ran for hours. Now what the spec alone decides (iterations over constants and over
their elements) is ``spec.too-many-bindings`` when it compiles, at the iteration's
``over``; what grows with the evidence is ``iteration.<name>.too-many-bindings`` once in
the run, the iteration's rules run for no further parent, and the report fails (no metric).
"""

from __future__ import annotations

import json
import textwrap

import pytest
from cli_run import run
from test_evaluate import TOY_HEADER, case_spec, write_docs

from flarespec.engine import scopes
from flarespec.engine.evaluate import Evaluation, evaluate
from flarespec.engine.scopes import MAX_BINDINGS
from flarespec.compiler import bindings
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

HEAD = """\
flarespec: 1
id: toy/bindings
title: Bindings
constants:
  big: %s
  rows: %s
shapes:
  doc: {type: object, members: {a: {type: array, items: any}, b: {type: array, items: any}}}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
iterations:
"""  # the iterations from line 12


def compiled(tmp_path, iterations: str, big=(), rows=()):
    """The spec compiled without the cache (a test may lower the bound)."""
    directory = tmp_path / "spec"
    directory.mkdir(exist_ok=True)
    rule = "rules:\n  - {id: toy.last.any, description: d, for_each: last, given: 'last:$', " \
           "assert: {present: true}}\n"
    (directory / "spec.yaml").write_text(HEAD % (json.dumps(list(big)), json.dumps(list(rows)))
                                         + textwrap.indent(textwrap.dedent(iterations), "  ") + rule)
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/bindings"), library))


def refused(tmp_path, iterations: str, **constants) -> list[tuple]:
    with pytest.raises(SpecInvalid) as caught:
        compiled(tmp_path, iterations, **constants)
    return [(issue.mark.line, issue.code, issue.message) for issue in caught.value.issues]


# ------------------------------------------------------------------ known from the spec

def test_the_issue_s_nested_constants_do_not_lint(tmp_path):
    big = json.dumps(list(range(15_000)))
    path = tmp_path / "big.yaml"
    path.write_text(HEAD % (big, "[]") + '  a: {over: "constants:$.big[*]"}\n'
                    '  last: {over: "constants:$.big[*]", parent: a}\n'
                    "rules:\n  - {id: toy.last.any, description: d, for_each: last, "
                    "given: 'last:$', assert: {present: true}}\n")
    result = run("spec", "lint", path)
    assert result.exit_code == 2, result.output
    assert f"{path}:13:10: iteration 'last' makes at least 225,000,000 bindings in every run " \
           f"(15,000 elements under each of 15,000 bindings): more than the 1,048,576 the " \
           f"engine runs (engine/scopes.py MAX_BINDINGS); iterate over fewer constants or " \
           f"nest fewer iterations [spec.too-many-bindings]" in result.output


def test_the_product_is_refused_just_past_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(bindings, "MAX_BINDINGS", 12)
    nested = """\
      a: {over: "constants:$.big[*]"}
      last: {over: "constants:$.rows[*]", parent: a}
    """
    compiled(tmp_path, nested, big=range(3), rows=range(4))  # 12: at the bound
    assert [code for _, code, _ in refused(tmp_path, nested, big=range(3), rows=range(5))] \
        == ["spec.too-many-bindings"]


def test_an_iteration_over_a_constant_element_counts_what_each_element_holds(
        tmp_path, monkeypatch):
    """``over: "a:$[*]"`` below constant rows: the elements are the rows' lengths summed."""
    monkeypatch.setattr(bindings, "MAX_BINDINGS", 10)
    nested = """\
      a: {over: "constants:$.rows[*]"}
      last: {over: "a:$[*]", parent: a}
    """
    compiled(tmp_path, nested, rows=[[1] * 4, [1] * 6])  # 10
    assert refused(tmp_path, nested, rows=[[1] * 4, [1] * 7]) == [
        (13, "spec.too-many-bindings",
         "iteration 'last' makes at least 11 bindings in every run (11 elements): more than "
         "the 10 the engine runs (engine/scopes.py MAX_BINDINGS); iterate over fewer "
         "constants or nest fewer iterations")]


def test_an_iteration_over_the_evidence_multiplies_by_at_least_one(tmp_path, monkeypatch):
    """Constants below an iteration over the evidence: every run with an element there
    makes their product; only the outermost iteration past the bound is named."""
    monkeypatch.setattr(bindings, "MAX_BINDINGS", 10)
    nested = """\
      a: {over: "constants:$.big[*]"}
      e: {over: "doc:$.a[*]", parent: a}
      f: {over: "constants:$.rows[*]", parent: e}
      last: {over: "constants:$.rows[*]", parent: f}
    """
    assert [(line, code) for line, code, _ in refused(
        tmp_path, nested, big=range(4), rows=range(3))] == [(14, "spec.too-many-bindings")]
    compiled(tmp_path, nested.replace("constants:$.rows[*]", "doc:$.b[*]"), big=range(4),
             rows=range(3))  # what grows with the evidence is bounded in the run


# ------------------------------------------------------------------ growing with the evidence

NESTED = TOY_HEADER.replace("id: toy/case", "id: toy/case") + """\
rules:
  - id: toy.item.colour
    description: An element loop's rule.
    for_each: item
    given: "item:$.colour"
    assert: {one_of: [red, green, blue]}
  - id: toy.item.sku
    description: A scope plan's rule (a template argument).
    for_each: item
    given: "item:$.sku"
    assert: {not: {equals: {template: "x{item@index}"}}}
"""


def shelves(count: int, items: int):
    def change(docs):
        docs["index.json"]["shelves"] = [{"name": f"s{n}"} for n in range(count)]
        for n in range(count):
            docs[f"shelves/s{n}.json"] = {"items": [{"sku": "a", "colour": "red", "count": 1}]
                                          * items, "total": items}
    return change


@pytest.mark.parametrize("streaming", [True, False])
def test_nested_iterations_over_the_evidence_stop_at_the_bound(tmp_path, monkeypatch,
                                                               streaming):
    """4 shelves of 3 items: 12 item bindings, read by two rules (an element loop and a
    scope plan), counted once each; a 13th is one violation, and the rules stop there."""
    spec = case_spec(tmp_path, "", header=NESTED)
    monkeypatch.setattr(scopes, "MAX_BINDINGS", 12)
    entry = write_docs(tmp_path / "at", shelves(4, 3))
    report = Evaluation(spec, entry, streaming=streaming).run()
    assert report.violations == [] and report.ok
    entry = write_docs(tmp_path / "past", shelves(5, 3))
    report = Evaluation(spec, entry, streaming=streaming).run()
    assert [(v.rule, v.location, v.expected, v.actual, v.binding) for v in report.violations] \
        == [("iteration.item.too-many-bindings", "shelf_file:$.items[*]",
             "at most 12 bindings", "15 so far", "s4")]
    assert report.violations[0].message == (
        "iteration item over shelf_file:$.items[*] makes more than 12 bindings in one run "
        "(the engine's bound); its rules are not run for the rest")
    assert not report.ok


def test_the_real_bound_refuses_one_more_binding(tmp_path):
    """``MAX_BINDINGS`` itself (one JSONPath selects at most as many nodes, engine/jsonpath.py):
    two parents of 2^19 + 1 elements each are two bindings too many; the first parent's
    elements are checked, the second's are not."""
    spec = compiled(tmp_path, 'a: {over: "doc:$.a[*]"}\nlast: {over: "doc:$.b[*]", parent: a}\n')
    (tmp_path / "packet").mkdir()
    entry = tmp_path / "packet" / "doc.json"
    entry.write_text(json.dumps({"a": [0, 1], "b": [0] * (MAX_BINDINGS // 2 + 1)}))
    report = evaluate(spec, entry)
    assert [(v.rule, v.actual, v.binding) for v in report.violations] == [
        ("iteration.last.too-many-bindings", "1,048,578 so far", "$.a[1]")]
    assert MAX_BINDINGS == 1 << 20
