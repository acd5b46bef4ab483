"""A child changes one member of an inherited constant without restating the rest: a dotted
constant name (``field.key: stats.median``) replaces only that member, at any depth, before
derived constants are computed; never through a list. Errors with codes at the key's line;
lint places what the override causes at the override; ``spec diff`` shows it as a change of
that member at the child's line (compiler/resolve.py, authoring/lint.py, review/locations.py)."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from flarespec.authoring.lint import lint
from flarespec.cli import main
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

# constants start at line 5: field 5, key 6, kinds 7, deep 8, x 9, y 10, z 11, rows 12,
# size 13, total 14
PARENT = """\
flarespec: 1
id: toy/p
title: P
constants:
  field:
    key: stats.mean
    kinds: [a, b]
    deep:
      x:
        y: 1
        z: 2
  rows: [{name: a, n: 1}]
  size: 4
  total: "${size + field.deep.x.y}"
shapes:
  doc: {type: object, members: {"${field.key}": number, stats: object}}
documents:
  doc: {loader: json, entry: true, shape: doc}
rules:
  - id: toy.mean
    description: The field is there.
    given: "doc:${field.key|jsonpath}"
    assert: {present: true}
"""


def child(spec_id: str, constants: str, extends: str = "toy/p") -> str:
    """A child holding constants only (they start at line 6)."""
    return (f"flarespec: 1\nid: {spec_id}\ntitle: C\nextends: {extends}\nconstants:\n"
            + textwrap.indent(textwrap.dedent(constants), "  "))


def write(tmp_path, files: dict[str, str]) -> SpecLibrary:
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    return SpecLibrary([tmp_path])


def resolved(tmp_path, files: dict[str, str], spec_id: str) -> dict:
    library = write(tmp_path, {"p": PARENT, **files})
    return resolve(library.get(spec_id), library).plain()


def refused(tmp_path, constants: str) -> list[tuple]:
    library = write(tmp_path, {"p": PARENT, "c": child("toy/c", constants)})
    with pytest.raises(SpecInvalid) as caught:
        resolve(library.get("toy/c"), library)
    return [(i.mark.line, i.code, i.message) for i in caught.value.issues]


def test_a_dotted_name_replaces_one_member_and_the_rules_and_shapes_follow(tmp_path):
    result = resolved(tmp_path, {"c": child("toy/c", "field.key: stats.median\n")}, "toy/c")
    assert result["constants"]["field"] == {"key": "stats.median", "kinds": ["a", "b"],
                                            "deep": {"x": {"y": 1, "z": 2}}}
    assert result["rules"][0]["given"] == "doc:$.stats.median"
    assert result["shapes"]["doc"]["members"]["stats"]["members"] == {"median": "number"}
    # the parent's own spec is unchanged (its data was copied, not edited)
    assert resolved(tmp_path, {}, "toy/p")["constants"]["field"]["key"] == "stats.mean"


def test_at_any_depth_before_derived_constants_are_computed(tmp_path):
    result = resolved(tmp_path, {"c": child("toy/c", "field.deep.x.y: 10\n")}, "toy/c")
    assert result["constants"]["field"]["deep"] == {"x": {"y": 10, "z": 2}}
    assert result["constants"]["total"] == 14  # 4 + 10: computed from the override


def test_a_dotted_name_may_hold_a_structure(tmp_path):
    result = resolved(tmp_path, {"c": child("toy/c", "field.kinds: [c]\n")}, "toy/c")
    assert result["constants"]["field"]["kinds"] == ["c"]


def test_a_grandchild_overrides_again_and_keeps_its_parents_other_overrides(tmp_path):
    files = {"c": child("toy/c", "field.key: stats.median\nfield.deep.x.z: 3\n"),
             "g": child("toy/g", "field.key: stats.mode\n", extends="toy/c")}
    result = resolved(tmp_path, files, "toy/g")
    assert result["constants"]["field"]["key"] == "stats.mode"
    assert result["constants"]["field"]["deep"]["x"]["z"] == 3  # the child's, inherited
    assert resolved(tmp_path, files, "toy/c")["constants"]["field"]["key"] == "stats.median"


def test_a_whole_constant_in_a_grandchild_replaces_a_childs_member_override(tmp_path):
    files = {"c": child("toy/c", "field.deep.x.z: 3\n"),
             "g": child("toy/g", "field: {key: stats.mode, kinds: [], deep: {x: {y: 0, z: 0}}}\n",
                        extends="toy/c")}
    assert resolved(tmp_path, files, "toy/g")["constants"]["field"]["deep"] == \
        {"x": {"y": 0, "z": 0}}


def test_a_path_naming_no_inherited_member_is_unknown_constant_with_a_suggestion(tmp_path):
    [(line, code, message)] = refused(tmp_path, "field.kye: stats.median\n")
    assert (line, code) == (6, "spec.unknown-constant")
    assert "'field' has no member 'kye'" in message and "did you mean 'key'?" in message


def test_a_path_through_a_scalar_or_an_unknown_head_is_unknown_constant(tmp_path):
    found = refused(tmp_path, "size.bits: 8\nfeild.key: x\n")
    assert [(line, code) for line, code, _ in found] == [(6, "spec.unknown-constant"),
                                                         (7, "spec.unknown-constant")]
    assert "'size' has no member 'bits' (it is no mapping)" in found[0][2]
    assert "no inherited constant 'feild' (did you mean 'field'?)" in found[1][2]


def test_a_path_through_a_list_is_refused(tmp_path):
    [(line, code, message)] = refused(tmp_path, "rows.0.n: 2\n")
    assert (line, code) == (6, "spec.constant-override")
    assert "through the list 'rows'" in message and "never a position" in message


def test_a_name_and_a_member_of_it_in_one_file_collide(tmp_path):
    found = refused(tmp_path, """\
        field: {key: stats.mean, kinds: [], deep: {x: {y: 1, z: 2}}}
        field.key: stats.median
        size: 5
        field.deep.x.y: 3
        field.deep.x: {y: 1}
    """)
    assert [(line, code) for line, code, _ in found] == [
        (7, "spec.key-collision"), (9, "spec.key-collision"), (10, "spec.key-collision")]
    assert "'field.key' and 'field' (at " in found[0][2] and "c.yaml:6:" in found[0][2]


def test_a_dotted_name_in_a_spec_with_no_parent_overrides_nothing(tmp_path):
    text = PARENT.replace("  size: 4\n", "  size: 4\n  field.key: x\n")
    library = write(tmp_path, {"p": text})
    with pytest.raises(SpecInvalid) as caught:
        resolve(library.get("toy/p"), library)
    [issue] = caught.value.issues
    assert (issue.mark.line, issue.code) == (14, "spec.constant-override")
    assert "extends nothing" in issue.message


def test_lint_reports_every_override_error_at_its_key(tmp_path):
    write(tmp_path, {"p": PARENT, "c": child("toy/c", "field.kye: x\nrows.0.n: 2\n")})
    [result] = lint([str(tmp_path / "c.yaml")])
    assert [(i.mark.file.endswith("c.yaml"), i.mark.line, i.code) for i in result.issues
            if i.severity == "error"] == [
        (True, 6, "spec.unknown-constant"), (True, 7, "spec.constant-override")]


def test_lint_places_what_an_override_breaks_at_the_override(tmp_path):
    """The parent's shape cannot hold the renamed field: told at the child's key, with the
    parent's line it surfaced at."""
    write(tmp_path, {"p": PARENT, "c": child("toy/c", "field.key: other.median\n")})
    [result] = lint([str(tmp_path / "c.yaml")])
    errors = [i for i in result.issues if i.severity == "error"]
    assert errors and all(i.mark.file.endswith("c.yaml") and i.mark.line == 6 for i in errors)
    shape = next(i for i in errors if i.code == "spec.document-shape")
    assert "the value comes from this override of 'field.key'" in shape.message
    assert [m.line for m in shape.related] == [16]  # the parent's shape member


def test_spec_diff_shows_the_member_changed_at_the_childs_line(tmp_path):
    write(tmp_path, {"p": PARENT, "c": child("toy/c", "field.key: stats.median\nsize: 5\n")})
    result = CliRunner().invoke(main, ["spec", "diff", str(tmp_path / "p.yaml"),
                                       str(tmp_path / "c.yaml"), "--format", "json"])
    assert result.exit_code == 0, result.output
    changes = {(c["subject"], c["path"]): c for c in json.loads(result.stdout)["specs"][0]["changes"]}
    member = changes[("constant field", "field.key")]
    assert member["file"].endswith("c.yaml") and member["line"] == 6
    assert member["context"]["relation"] == "overrides" and member["context"]["line"] == 6
    assert member["context"]["file"].endswith("p.yaml")
    assert not any(path.startswith("field.") and path != "field.key" for _, path in changes)
    rule = changes[("rule toy.mean", "given")]
    assert (rule["line"], rule["made_by"]) == (6, "constant field.key")
    assert rule["context"]["file"].endswith("p.yaml") and rule["context"]["line"] == 22
