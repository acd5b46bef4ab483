"""Issue 23 item 5: ``spec lint`` on an iteration whose ``over`` is not a plain path (a
filter, a union, a descendant) was ``TypeError: 'NoneType' object is not iterable`` in
authoring/shape_lint.py, exit 1. Now the shape lint follows a filter as the elements it
selects, a union as each of its selectors, and judges nothing below a descendant segment
(no made-up error): exit 0, or 2 with the real ``spec.undeclared-member``."""

from __future__ import annotations

import pytest
from cli_run import run

SPEC = """\
flarespec: 1
id: toy/issue23-shapes
title: Iterations over selections that are no plain path
shapes:
  item: {type: object, members: {sku: string, error: {type: [null, string], optional: true}}}
  doc:
    type: object
    members:
      items: {type: array, items: item}
      other: {type: array, items: item}
      extra: {type: array, items: {type: object, members: {code: string}}}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
iterations:
  item: {over: "doc:%s"}
rules:
  - id: toy.item.sku
    description: Each selected item has a sku.
    for_each: item
    given: "item:$.%s"
    assert: {present: true}
"""  # the over is line 15, column 9; the rule line 17, column 5

FORMS = ["$.items[?@.error == null]", "$.items[0,1]", "$['items','other'][*]",
         "$..items[*]", "$..[?@.sku]"]


def lint(tmp_path, over: str, member: str = "sku"):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC % (over, member))
    return path, run("spec", "lint", path)


@pytest.mark.parametrize("over", FORMS)
def test_an_iteration_over_any_selection_lints(tmp_path, over):
    path, result = lint(tmp_path, over)
    assert result.exit_code == 0, result.output
    assert "ok (toy/issue23-shapes, 1 rules" in result.output


@pytest.mark.parametrize("over", ["$.items[?@.error == null]", "$.items[0,1]",
                                  "$['items','other'][*]"])
def test_a_misspelt_member_below_a_filter_or_a_union_is_found(tmp_path, over):
    path, result = lint(tmp_path, over, "skuu")
    assert result.exit_code == 2, result.output
    assert f"{path}:17:5: 'item:$.skuu' reads member 'skuu' of $, which its shape does not " \
           f"declare (declared: sku, error) [spec.undeclared-member]" in result.output


def test_a_union_reads_each_of_its_members(tmp_path):
    """Each selector of a union is judged: a member read must be declared by the shape of
    every place the union may select (``extra``'s elements have no ``sku``)."""
    for over in ("$['items','extra'][*]", "$[*][?@.error == null]"):
        path, result = lint(tmp_path, over)
        assert result.exit_code == 2, result.output
        assert f"{path}:17:5: 'item:$.sku' reads member 'sku' of $, which its shape does " \
               f"not declare (declared: code) [spec.undeclared-member]" in result.output
    path, result = lint(tmp_path, "$['items','nope'][*]")
    assert result.exit_code == 2, result.output
    assert f"{path}:15:9: \"doc:$['items','nope'][*]\" reads member 'nope' of $, which its " \
           f"shape does not declare (declared: items, other, extra) [spec.undeclared-member]" \
        in result.output


def test_below_a_descendant_segment_nothing_is_judged(tmp_path):
    """What a descendant segment selects may have any of the shapes beneath: lint makes no
    error up there (the engine's shape check still refuses what is not declared)."""
    path, result = lint(tmp_path, "$..items[*]", "anything")
    assert result.exit_code == 0, result.output
