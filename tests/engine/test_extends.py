"""``extends`` resolution, the resolved spec's plain form and digest, and ``spec diff``."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import textwrap
from pathlib import Path

import pytest
from bounded_call import finishes_within

from flarespec.engine.evaluate import evaluate
from flarespec.spec.compile import compile_spec
from flarespec.spec.diff import diff_specs, render_diff
from flarespec.spec.errors import SpecInvalid
from flarespec.spec import load
from flarespec.spec.load import SpecLibrary, bundled_spec_dir
from flarespec.spec.resolve import resolve
from flarespec.spec.yamlmarks import MarkedDict, MarkedList

TOY = Path(__file__).parent / "toy"

PARENT = """\
flarespec: 1
id: toy/parent
title: Parent
description: The parent spec.
limits: Toy limits.
applies_to: {given: "doc:$.schema", equals: "${schema}"}
constants:
  schema: toy-v1
  max: 2
documents:
  doc: {loader: json, entry: true, rule: toy.doc}
rules:
  - id: toy.schema
    description: The schema.
    given: "doc:$.schema"
    assert: {equals: "${schema}"}
  - id: toy.count
    description: The count is small.
    given: "doc:$.count"
    assert: {range: {max: "${max}"}}
  - id: toy.name
    description: The name is a word.
    given: "doc:$.name"
    assert: {regex: "^[a-z]+$"}
"""


def library_of(tmp_path, files: dict) -> SpecLibrary:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return SpecLibrary([tmp_path])


def resolved(tmp_path, child: str, spec_id="toy/child", parent: str = PARENT):
    library = library_of(tmp_path, {"parent.yaml": parent, "child.yaml": child})
    return resolve(library.get(spec_id), library)


def resolve_error(tmp_path, files: dict, spec_id: str):
    library = library_of(tmp_path, files)
    with pytest.raises(SpecInvalid) as caught:
        compile_spec(resolve(library.get(spec_id), library))
    return [(i.mark.file, i.mark.line, i.mark.column, i.code, i.message)
            for i in caught.value.issues]


CHILD = """\
flarespec: 1
id: toy/child
extends: toy/parent
title: Child
constants:
  max: 5
drop_rules: [toy.name]
rules:
  - id: toy.schema
    description: The schema, exactly.
    given: "doc:$.schema"
    assert: {equals: "${schema}"}
    severity: warning
  - id: toy.extra
    description: An extra rule.
    given: "doc:$.extra"
    assert: {present: true}
"""


# --------------------------------------------------------------------------- extends

def test_child_overrides_a_constant_seen_by_the_parents_rules(tmp_path):
    spec = resolved(tmp_path, CHILD)
    rules = {rule["id"]: rule for rule in spec.plain()["rules"]}
    assert rules["toy.count"]["assert"] == {"range": {"max": 5}}  # parent rule, child constant
    assert spec.plain()["constants"] == {"schema": "toy-v1", "max": 5}


def test_child_replaces_in_place_adds_and_drops_rules(tmp_path):
    spec = resolved(tmp_path, CHILD)
    assert [(rule["id"], rule["description"]) for rule in spec.plain()["rules"]] == [
        ("toy.schema", "The schema, exactly."),   # replaced where the parent had it
        ("toy.count", "The count is small."),
        ("toy.extra", "An extra rule.")]          # added at the end; toy.name dropped
    assert spec.rule_origin == {"toy.schema": "toy/child", "toy.count": "toy/parent",
                                "toy.extra": "toy/child"}
    assert [f.id for f in spec.chain] == ["toy/child", "toy/parent"]


def test_header_comes_from_the_child_only(tmp_path):
    data = resolved(tmp_path, CHILD).plain()
    assert data["id"] == "toy/child" and data["title"] == "Child"
    for key in ("description", "limits", "applies_to", "extends", "drop_rules"):
        assert key not in data


def test_documents_and_iterations_are_overridden_by_name(tmp_path):
    child = CHILD + "documents:\n  doc: {loader: json, entry: true, rule: toy.child-doc}\n" \
                    "  more: {loader: json, path: more.json}\n"
    data = resolved(tmp_path, child).plain()
    assert data["documents"] == {"doc": {"loader": "json", "entry": True, "rule": "toy.child-doc"},
                                 "more": {"loader": "json", "path": "more.json"}}


def test_three_generations(tmp_path):
    grandchild = """\
        flarespec: 1
        id: toy/grandchild
        extends: toy/child
        title: Grandchild
        constants: {max: 9}
        drop_rules: [toy.extra]
        rules:
          - id: toy.count
            description: The count is tiny.
            given: "doc:$.count"
            assert: {range: {max: 1}}
    """
    library = library_of(tmp_path, {"parent.yaml": PARENT, "child.yaml": CHILD,
                                    "grandchild.yaml": grandchild})
    spec = resolve(library.get("toy/grandchild"), library)
    assert [f.id for f in spec.chain] == ["toy/grandchild", "toy/child", "toy/parent"]
    assert [(r["id"], r["assert"]) for r in spec.plain()["rules"]] == [
        ("toy.schema", {"equals": "toy-v1"}), ("toy.count", {"range": {"max": 1}})]
    assert spec.rule_origin == {"toy.schema": "toy/child", "toy.count": "toy/grandchild"}


def test_resolved_child_evaluates(tmp_path):
    spec = compile_spec(resolved(tmp_path / "spec", CHILD))
    (tmp_path / "doc.json").write_text(json.dumps({"schema": "toy-v0", "count": 4,
                                                   "name": "NOT A WORD"}))
    report = evaluate(spec, tmp_path / "doc.json")
    assert [(v.rule, v.severity) for v in report.violations + report.warnings] == [
        ("toy.extra", "error"), ("toy.schema", "warning")]


def test_drop_unknown_rule_is_an_error(tmp_path):
    child = CHILD.replace("drop_rules: [toy.name]", "drop_rules: [toy.name, toy.nope]")
    assert resolve_error(tmp_path, {"parent.yaml": PARENT, "child.yaml": child},
                         "toy/child") == [
        (str(tmp_path / "child.yaml"), 7, 24, "spec.drop-unknown",
         "drop_rules names 'toy.nope', which no parent defines")]


def test_unknown_parent(tmp_path):
    assert resolve_error(tmp_path, {"child.yaml": CHILD}, "toy/child") == [
        (str(tmp_path / "child.yaml"), 3, 1, "spec.extends-unknown",
         "extends unknown spec 'toy/parent'")]


# --------------------------------------------------------------------------- a spec given by path

def given_by_path(directory: Path, files: dict, spec: str = "child.yaml"):
    """Resolve ``spec`` as ``spec lint FILE`` does, within 5 s, recording every file read."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text))
    read = []

    def recording(path):
        read.append(Path(path).name)
        return real_read(path)

    real_read = load.read_spec_file
    load.read_spec_file = recording
    try:
        return finishes_within(5, lambda: resolve(*reversed(
            SpecLibrary.for_file(directory / spec)))), read
    finally:
        load.read_spec_file = real_read


def hostile_neighbours(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    os.mkfifo(directory / "fifo.yaml")
    (directory / "zero.yaml").symlink_to("/dev/zero")
    (directory / "bomb.yaml").write_text(
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefghi", "bcdefghij")))
    (directory / "broken.yaml").write_text("flarespec: 1\nid: [\n")


def test_a_spec_given_by_path_reads_only_itself_and_the_parent_named_after_its_id(tmp_path):
    """Every *.yaml beside the spec used to be read: a FIFO hung lint, an alias bomb ate
    memory, a broken neighbour failed the valid spec."""
    hostile_neighbours(tmp_path)
    spec, read = given_by_path(tmp_path, {"parent.yaml": PARENT, "child.yaml": CHILD})
    assert [layer.id for layer in spec.chain] == ["toy/child", "toy/parent"]
    assert read == ["child.yaml", "parent.yaml"]


def test_a_spec_given_by_path_extending_a_bundled_spec_reads_no_neighbour(tmp_path):
    hostile_neighbours(tmp_path)
    child = CHILD.replace("extends: toy/parent", "extends: flare/bce032c0")
    child = child.split("drop_rules:")[0]
    spec, read = given_by_path(tmp_path, {"child.yaml": child})
    assert [layer.id for layer in spec.chain] == ["toy/child", "flare/bce032c0"]
    assert "child.yaml" in read and not {"fifo.yaml", "zero.yaml", "bomb.yaml",
                                         "broken.yaml"} & set(read)


def test_a_parent_beside_the_spec_wins_over_the_bundled_one(tmp_path):
    bundled = (bundled_spec_dir() / "flare" / "bce032c0.yaml").read_text()
    edited = bundled.replace("\ntitle: ", "\ntitle: EDITED ", 1)
    assert edited != bundled
    child = CHILD.replace("extends: toy/parent", "extends: flare/bce032c0")
    spec, read = given_by_path(tmp_path, {"bce032c0.yaml": edited,
                                          "child.yaml": child.split("drop_rules:")[0]})
    assert spec.chain[1].path == tmp_path / "bce032c0.yaml"
    assert spec.chain[1].data["title"].startswith("EDITED ")


def test_a_hostile_file_named_after_the_parent_is_reported(tmp_path):
    os.mkfifo(tmp_path / "parent.yaml")
    with pytest.raises(SpecInvalid) as caught:
        given_by_path(tmp_path, {"child.yaml": CHILD})
    assert [(i.mark.file, i.mark.line, i.mark.column, i.code, i.message)
            for i in caught.value.issues] == [
        (str(tmp_path / "parent.yaml"), 1, 1, "spec.not-a-file",
         "spec is a FIFO (named pipe), not a regular file")]


def test_a_parent_under_another_file_name_is_not_searched_for(tmp_path):
    with pytest.raises(SpecInvalid) as caught:
        given_by_path(tmp_path, {"base.yaml": PARENT, "child.yaml": CHILD})
    [issue] = caught.value.issues
    assert (issue.mark.line, issue.mark.column, issue.code) == (3, 1, "spec.extends-unknown")
    assert issue.message == (f"extends unknown spec 'toy/parent' (looked for "
                             f"{tmp_path / 'parent.yaml'}, which does not exist, then among "
                             f"the bundled specs)")


def test_extends_cycle(tmp_path):
    parent = PARENT.replace("title: Parent", "title: Parent\nextends: toy/child")
    assert resolve_error(tmp_path, {"parent.yaml": parent, "child.yaml": CHILD},
                         "toy/child") == [
        (str(tmp_path / "parent.yaml"), 4, 1, "spec.extends-cycle",
         "extends cycle through 'toy/child'")]


def test_extends_itself(tmp_path):
    selfish = CHILD.replace("extends: toy/parent", "extends: toy/child")
    assert resolve_error(tmp_path, {"child.yaml": selfish}, "toy/child") == [
        (str(tmp_path / "child.yaml"), 3, 1, "spec.extends-cycle",
         "extends cycle through 'toy/child'")]


def test_duplicate_rule_id_within_one_child(tmp_path):
    child = CHILD + ("  - id: toy.extra\n"
                     "    description: The extra rule again.\n"
                     '    given: "doc:$.extra"\n'
                     "    assert: {absent: true}\n")
    path = tmp_path / "child.yaml"
    assert resolve_error(tmp_path, {"parent.yaml": PARENT, "child.yaml": child},
                         "toy/child") == [
        (str(path), 18, 5, "spec.duplicate-rule-id",
         f"duplicate rule id 'toy.extra' (first at {path}:14:5)")]


def test_errors_in_an_inherited_rule_name_the_parents_file(tmp_path):
    parent = PARENT.replace("assert: {regex: ", "assert: {regexp: ")
    child = CHILD.replace("drop_rules: [toy.name]\n", "")
    [(file, line, column, code, _)] = resolve_error(
        tmp_path, {"parent.yaml": parent, "child.yaml": child}, "toy/child")
    assert (file, line, column, code) == (str(tmp_path / "parent.yaml"), 24, 14,
                                          "spec.unknown-kind")


# --------------------------------------------------------------------------- plain and digest

def walk_types(value):
    yield type(value)
    if isinstance(value, dict):
        for item in value.values():
            yield from walk_types(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_types(item)


def test_plain_has_no_marks(tmp_path):
    spec = resolved(tmp_path, CHILD)
    assert isinstance(spec.data, MarkedDict)
    types = set(walk_types(spec.plain()))
    assert MarkedDict not in types and MarkedList not in types
    assert dict in types and list in types
    json.dumps(spec.plain())  # plain JSON data


def test_digest_is_stable_and_canonical(tmp_path):
    first = resolved(tmp_path / "a", CHILD)
    again = resolved(tmp_path / "b", CHILD)
    assert first.digest() == first.digest() == again.digest()
    canonical = json.dumps(first.plain(), sort_keys=True, separators=(",", ":"))
    assert first.digest() == hashlib.sha256(canonical.encode()).hexdigest()
    # key order and YAML style do not matter; content does
    reordered = CHILD.replace("title: Child\n", "").replace(
        "flarespec: 1\n", "title: 'Child'\nflarespec: 1\n").replace(
        "constants:\n  max: 5\n", "constants: {max: 5}\n")
    assert reordered != CHILD and "constants: {max: 5}" in reordered
    assert resolved(tmp_path / "c", reordered).digest() == first.digest()
    assert resolved(tmp_path / "d", CHILD.replace("max: 5", "max: 6")).digest() != first.digest()


# --------------------------------------------------------------------------- the toy child spec

def toy(spec_id):
    library = SpecLibrary([TOY])
    return resolve(library.get(spec_id), library)


def test_toy_next_extends_toy_base():
    spec = toy("toy/next")
    assert [rule["id"] for rule in spec.plain()["rules"]] == [
        "toy.index.schema", "toy.index.shelves", "toy.item.colour", "toy.item.count",
        "toy.item.sku"]
    shelves = spec.plain()["rules"][1]["assert"]["order_equals"]
    assert shelves == {"format": "s{n}", "product": {"n": {"range": 3}}}
    compile_spec(spec)


def test_toy_next_diff_from_toy_base():
    result = diff_specs(toy("toy/base").plain(), toy("toy/next").plain())
    assert (result["old"], result["new"]) == ("toy/base", "toy/next")
    assert result["summary"] == {"tightening": 1, "loosening": 2, "review": 3, "neutral": 2}
    assert [(c["class"], c["subject"], c["change"]) for c in result["changes"]] == [
        ("tightening", "rule toy.item.sku", "added (error)"),
        ("loosening", "rule toy.item.colour", "one_of widened"),
        ("loosening", "rule toy.shelf.total", "removed"),
        ("review", "constant colours", "changed"),
        ("review", "constant shelf_count", "changed"),
        ("review", "rule toy.index.shelves", "order_equals argument changed"),
        ("neutral", "rule toy.item.colour", "description reworded"),
        ("neutral", "rule toy.item.colour", "message reworded")]
    text = render_diff(result)
    assert text.splitlines()[0] == \
        "spec diff toy/base -> toy/next: 1 tightening, 2 loosening, 3 review, 2 neutral"
    assert "  loosening   rule toy.shelf.total: removed" in text.splitlines()


# --------------------------------------------------------------------------- spec diff

BASE = {"id": "toy/old", "constants": {"n": 1}, "rules": [
    {"id": "toy.a", "description": "A.", "given": "doc:$.a", "assert": {"one_of": [1, 2]}},
    {"id": "toy.b", "description": "B.", "given": "doc:$.b", "assert": {"range": {"min": 0,
                                                                                  "max": 9}}},
    {"id": "toy.c", "description": "C.", "given": "doc:$", "assert": {
        "formula": {"expr": "a == b", "rel_tol": 1e-9}}},
    {"id": "toy.d", "description": "D.", "given": "doc:$.d", "assert": {"equals": "x"}},
]}


def changed(mutate):
    new = copy.deepcopy(BASE)
    new["id"] = "toy/new"
    mutate(new)
    return [(c["class"], c["subject"], c["change"], c["old"], c["new"])
            for c in diff_specs(BASE, new)["changes"]]


def rule(spec, rule_id):
    return next(r for r in spec["rules"] if r["id"] == rule_id)


def test_diff_no_change():
    result = diff_specs(BASE, copy.deepcopy(BASE))
    assert result["changes"] == [] and set(result["summary"].values()) == {0}
    assert render_diff(result).splitlines()[1] == "  no changes"


def test_diff_added_rule_is_tightening_and_added_warning_is_neutral():
    new_rule = {"id": "toy.e", "description": "E.", "given": "doc:$.e", "assert": {"absent": True}}
    assert changed(lambda s: s["rules"].append(new_rule)) == [
        ("tightening", "rule toy.e", "added (error)", None, new_rule)]
    warning = {**new_rule, "severity": "warning"}
    assert changed(lambda s: s["rules"].append(warning)) == [
        ("neutral", "rule toy.e", "added (warning)", None, warning)]


def test_diff_removed_rule_is_loosening():
    assert changed(lambda s: s["rules"].pop(0)) == [
        ("loosening", "rule toy.a", "removed", BASE["rules"][0], None)]


@pytest.mark.parametrize("before, after, kind", [
    (None, "warning", "loosening"), ("error", "warning", "loosening"),
    ("warning", "error", "tightening"), ("warning", None, "tightening"),
])
def test_diff_severity(before, after, kind):
    old = copy.deepcopy(BASE)
    if before:
        rule(old, "toy.a")["severity"] = before
    new = copy.deepcopy(BASE)
    if after:
        rule(new, "toy.a")["severity"] = after
    [change] = diff_specs(old, new)["changes"]
    assert (change["class"], change["subject"], change["change"], change["old"],
            change["new"]) == (kind, "rule toy.a", "severity changed", before or "error",
                               after or "error")


@pytest.mark.parametrize("allowed, kind, what", [
    ([1, 2, 3], "loosening", "one_of widened"),
    ([1], "tightening", "one_of narrowed"),
    ([1, 3], "review", "one_of changed"),
])
def test_diff_one_of(allowed, kind, what):
    def change(spec):
        rule(spec, "toy.a")["assert"] = {"one_of": allowed}
    assert changed(change) == [(kind, "rule toy.a", what, [1, 2], allowed)]


@pytest.mark.parametrize("bounds, expected", [
    ({"min": 1, "max": 9}, [("tightening", "range.min changed", 0, 1)]),
    ({"min": -1, "max": 9}, [("loosening", "range.min changed", 0, -1)]),
    ({"min": 0, "max": 10}, [("loosening", "range.max changed", 9, 10)]),
    ({"min": 0, "max": 8}, [("tightening", "range.max changed", 9, 8)]),
    ({"min": 0}, [("loosening", "range.max removed", 9, None)]),
    ({"min": 0, "max": 9, "exclusive_min": 0}, [("tightening", "range.exclusive_min added",
                                                  None, 0)]),
])
def test_diff_range_bounds(bounds, expected):
    def change(spec):
        rule(spec, "toy.b")["assert"] = {"range": bounds}
    assert changed(change) == [(kind, "rule toy.b", what, old, new)
                               for kind, what, old, new in expected]


@pytest.mark.parametrize("tolerance, kind", [(1e-6, "loosening"), (1e-12, "tightening")])
def test_diff_formula_tolerance(tolerance, kind):
    def change(spec):
        rule(spec, "toy.c")["assert"]["formula"]["rel_tol"] = tolerance
    assert changed(change) == [(kind, "rule toy.c", "formula.rel_tol changed", 1e-9, tolerance)]


def test_diff_formula_expression_change_is_review():
    def change(spec):
        rule(spec, "toy.c")["assert"]["formula"]["expr"] = "a <= b"
    [(kind, subject, what, _, _)] = changed(change)
    assert (kind, subject, what) == ("review", "rule toy.c", "formula argument changed")


def test_diff_description_is_neutral():
    assert changed(lambda s: rule(s, "toy.a").update(description="A, reworded.")) == [
        ("neutral", "rule toy.a", "description reworded", "A.", "A, reworded.")]


def test_diff_equals_value_change_is_review():
    assert changed(lambda s: rule(s, "toy.d").update({"assert": {"equals": "y"}})) == [
        ("review", "rule toy.d", "equals argument changed", "x", "y")]


def test_diff_kind_change_selection_change_and_optional():
    def change(spec):
        rule(spec, "toy.d")["assert"] = {"regex": "x"}
        rule(spec, "toy.a")["given"] = "doc:$.aa"
        rule(spec, "toy.b")["optional"] = True
    assert changed(change) == [
        ("loosening", "rule toy.b", "optional changed", False, True),
        ("review", "rule toy.a", "given changed", "doc:$.a", "doc:$.aa"),
        ("review", "rule toy.d", "assertion kind equals -> regex", {"equals": "x"},
         {"regex": "x"})]


def test_diff_constants_are_reviewed():
    assert changed(lambda s: s["constants"].update(n=2, m=0)) == [
        ("review", "constant m", "added", None, 0),
        ("review", "constant n", "changed", 1, 2)]
