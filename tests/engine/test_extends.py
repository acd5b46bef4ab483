"""``extends`` resolution, the resolved spec's plain form and digest."""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from pathlib import Path

import pytest
from bounded_call import finishes_within

from flarespec.engine.evaluate import evaluate
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler import load
from flarespec.authoring.literals import literal_constant_warnings
from flarespec.compiler.load import SpecLibrary, bundled_spec_dir
from flarespec.compiler.resolve import dropped_document_references, resolve
from flarespec.compiler.yamlmarks import MarkedDict, MarkedList

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


# --------------------------------------------------------------------------- path filters

FILTERED = """\
flarespec: 1
id: toy/filtered
title: Paths from a dotted-key constant
constants:
  field: {key: stats.mean_count}
documents:
  doc: {loader: json, entry: true, rule: toy.doc}
rules:
  - id: toy.mean.pointer
    description: The mean, addressed by a pointer built from the constant.
    given: "doc:/groups/0${field.key|pointer}"
    assert: {range: {min: 0}}
  - id: toy.mean.jsonpath
    description: The mean, addressed by a JSONPath built from the constant.
    given: "doc:${field.key|jsonpath}"
    assert: {type: integer}
  - id: toy.mean.whole
    description: A whole-string filter is the path itself.
    given: "doc:$.name"
    assert: {not: {equals: "${field.key|pointer}"}}
"""


def test_pointer_and_jsonpath_filters_build_paths_from_a_dotted_key(tmp_path):
    library = library_of(tmp_path, {"filtered.yaml": FILTERED})
    rules = {r["id"]: r for r in resolve(library.get("toy/filtered"), library).plain()["rules"]}
    assert rules["toy.mean.pointer"]["given"] == "doc:/groups/0/stats/mean_count"
    assert rules["toy.mean.jsonpath"]["given"] == "doc:$.stats.mean_count"
    assert rules["toy.mean.whole"]["assert"] == {"not": {"equals": "/stats/mean_count"}}


def test_a_child_renaming_the_dotted_key_moves_every_path(tmp_path):
    child = """\
        flarespec: 1
        id: toy/filtered-child
        extends: toy/filtered
        title: Renamed field
        constants:
          field: {key: summary.average}
    """
    library = library_of(tmp_path, {"filtered.yaml": FILTERED, "filtered-child.yaml": child})
    spec = compile_spec(resolve(library.get("toy/filtered-child"), library))
    both = {"stats": {"mean_count": 1}, "summary": {"average": -1.5}}
    (tmp_path / "doc.json").write_text(json.dumps({"name": "x", "groups": [both], **both}))
    parent = compile_spec(resolve(library.get("toy/filtered"), library))
    assert evaluate(parent, tmp_path / "doc.json").violations == []
    report = evaluate(spec, tmp_path / "doc.json")
    assert [(v.rule, v.location) for v in report.violations] == [
        ("toy.mean.pointer", "$.groups[0].summary.average"),
        ("toy.mean.jsonpath", "$.summary.average")]


@pytest.mark.parametrize("text, message", [
    ("${field.key|pointr}", "unknown filter |pointr in ${field.key|pointr}; known: |pointer, |jsonpath, |divisor"),
    ("${field|pointer}", "${field|pointer} needs a dotted key such as 'a.b_c' (names of letters, "
                         "digits and _ joined by dots), got {'key': 'stats.mean_count'}"),
    ("${bad.key|jsonpath}", "${bad.key|jsonpath} needs a dotted key such as 'a.b_c' (names of "
                            "letters, digits and _ joined by dots), got 'a/b'"),
])
def test_a_filter_needs_a_known_name_and_a_dotted_key(tmp_path, text, message):
    spec = FILTERED.replace("  field: {key: stats.mean_count}",
                            "  field: {key: stats.mean_count}\n  bad: {key: a/b}")
    spec = spec.replace('"doc:${field.key|jsonpath}"', f'"doc:{text}"')
    issues = resolve_error(tmp_path, {"filtered.yaml": spec}, "toy/filtered")
    assert issues == [(str(tmp_path / "filtered.yaml"), 16, 5, "spec.constant-filter", message)]


# --------------------------------------------------------------------------- drop_documents

DOCUMENTS_PARENT = PARENT.replace(
    "  doc: {loader: json, entry: true, rule: toy.doc}\n",
    "  doc: {loader: json, entry: true, rule: toy.doc}\n"
    "  extra: {loader: json, path_from: \"doc:$.extra\", rule: toy.extra-file}\n"
    "  notes: {loader: text, path: \"{extra:$.dir}/notes.txt\"}\n"
    "iterations:\n"
    "  entry: {over: \"extra:$.entries[*]\"}\n"
    "identities:\n"
    "  extra_digest: {ref: \"extra:@sha256\"}\n") + """\
  - id: toy.files
    description: The manifest lists the files.
    given: "doc:$.files"
    assert: {manifest_digests: [extra, notes]}
  - id: toy.extra.value
    description: The extra file has a value.
    given: "extra:$.value"
    assert: {type: integer}
    message: "{extra:$.value} is not an integer"
"""


def test_a_child_drops_a_document_and_the_rules_using_it(tmp_path):
    child = """\
        flarespec: 1
        id: toy/child
        extends: toy/parent
        title: Without the extra file
        drop_documents: [extra, notes]
        drop_rules: [toy.files, toy.extra.value]
        iterations: {entry: {over: "doc:$.entries[*]"}}
        identities: {extra_digest: {ref: "doc:@sha256"}}
    """
    library = library_of(tmp_path, {"parent.yaml": DOCUMENTS_PARENT, "child.yaml": child})
    spec = resolve(library.get("toy/child"), library)
    assert set(spec.plain()["documents"]) == {"doc"}
    assert dropped_document_references(spec) == []
    assert set(compile_spec(spec).documents) == {"doc"}
    assert "drop_documents" not in spec.plain()


def test_every_reference_to_a_dropped_document_is_named_at_once(tmp_path):
    child = "flarespec: 1\nid: toy/child\nextends: toy/parent\ntitle: Forgetful\n" \
            "drop_documents: [extra]\n"
    library = library_of(tmp_path, {"parent.yaml": DOCUMENTS_PARENT, "child.yaml": child})
    spec = resolve(library.get("toy/child"), library)
    parent, dropped = str(tmp_path / "parent.yaml"), f"{tmp_path / 'child.yaml'}:5:18"
    found = [(i.mark.file, i.mark.line, i.mark.column, i.code, i.message)
             for i in dropped_document_references(spec)]
    assert found == [
        (parent, 13, 25, "spec.dropped-document",
         f"document 'notes' reads document 'extra', which toy/child drops (at {dropped}): "
         "'{extra:$.dir}/notes.txt'"),
        (parent, 15, 11, "spec.dropped-document",
         f"iteration 'entry' reads document 'extra', which toy/child drops (at {dropped}): "
         "'extra:$.entries[*]'"),
        (parent, 17, 18, "spec.dropped-document",
         f"identity 'extra_digest' reads document 'extra', which toy/child drops (at {dropped}): "
         "'extra:@sha256'"),
        (parent, 34, 33, "spec.dropped-document",
         f"rule 'toy.files' lists document 'extra' in manifest_digests, which toy/child drops "
         f"(at {dropped})"),
        (parent, 37, 5, "spec.dropped-document",
         f"rule 'toy.extra.value' reads document 'extra', which toy/child drops (at {dropped}): "
         "'extra:$.value'"),
        (parent, 39, 5, "spec.dropped-document",
         f"rule 'toy.extra.value' reads document 'extra', which toy/child drops (at {dropped}): "
         "'{extra:$.value} is not an integer'"),
    ]
    with pytest.raises(SpecInvalid) as caught:
        compile_spec(spec)
    assert {(i.mark.line, i.code) for i in caught.value.issues} >= {
        (13, "spec.unknown-target"), (15, "spec.unknown-target"), (37, "spec.unknown-target"),
        (34, "spec.kind-argument")}


def test_drop_unknown_document_is_an_error(tmp_path):
    child = "flarespec: 1\nid: toy/child\nextends: toy/parent\ntitle: T\n" \
            "drop_documents: [extra, nope]\n"
    assert resolve_error(tmp_path, {"parent.yaml": DOCUMENTS_PARENT, "child.yaml": child},
                         "toy/child")[0] == (
        str(tmp_path / "child.yaml"), 5, 25, "spec.drop-unknown",
        "drop_documents names 'nope', which no parent defines")


def test_a_spec_without_drops_has_no_dropped_references(tmp_path):
    assert dropped_document_references(resolved(tmp_path, CHILD)) == []


# --------------------------------------------------------------------------- renamed_from

RENAMING = """\
flarespec: 1
id: toy/child
extends: toy/parent
title: Renames
rules:
  - id: toy.count.bounded
    renamed_from: toy.count
    since: toy/child
    changed_in: rev-2
    description: The count is small (renamed).
    given: "doc:$.count"
    assert: {range: {max: 3}}
  - id: toy.schema
    description: The schema, restated.
    given: "doc:$.schema"
    assert: {equals: "${schema}"}
  - id: toy.new
    description: New.
    given: "doc:$.new"
    assert: {present: true}
"""


def test_a_renamed_rule_replaces_the_old_one_in_place(tmp_path):
    spec = resolved(tmp_path, RENAMING)
    rules = spec.plain()["rules"]
    assert [r["id"] for r in rules] == ["toy.schema", "toy.count.bounded", "toy.name", "toy.new"]
    assert rules[1] == {"id": "toy.count.bounded", "since": "toy/child", "changed_in": "rev-2",
                        "description": "The count is small (renamed).",
                        "given": "doc:$.count", "assert": {"range": {"max": 3}}}
    assert spec.rule_status == {
        "toy.schema": {"status": "overridden", "spec": "toy/child"},
        "toy.count.bounded": {"status": "renamed", "spec": "toy/child", "from": "toy.count"},
        "toy.name": {"status": "inherited", "spec": "toy/parent"},
        "toy.new": {"status": "added", "spec": "toy/child"}}
    assert "toy.count" not in spec.rule_origin
    compile_spec(spec)


def test_rule_status_is_relative_to_the_spec_itself(tmp_path):
    grandchild = "flarespec: 1\nid: toy/grandchild\nextends: toy/child\ntitle: G\n"
    library = library_of(tmp_path, {"parent.yaml": PARENT, "child.yaml": RENAMING,
                                    "grandchild.yaml": grandchild})
    spec = resolve(library.get("toy/grandchild"), library)
    assert {rule_id: s["status"] for rule_id, s in spec.rule_status.items()} == dict.fromkeys(
        ["toy.schema", "toy.count.bounded", "toy.name", "toy.new"], "inherited")
    assert spec.rule_status["toy.count.bounded"]["spec"] == "toy/child"
    parent = resolve(library.get("toy/parent"), library)
    assert {s["status"] for s in parent.rule_status.values()} == {"added"}


@pytest.mark.parametrize("old, code, message", [
    ("toy.nope", "spec.rename-unknown",
     "rule 'toy.count.bounded' is renamed from 'toy.nope', which no parent defines"),
    ("toy.schema", "spec.rename-conflict",
     "rule 'toy.count.bounded' is renamed from 'toy.schema', which this spec also defines"),
])
def test_renamed_from_must_name_an_inherited_rule_the_child_does_not_define(
        tmp_path, old, code, message):
    child = RENAMING.replace("renamed_from: toy.count", f"renamed_from: {old}")
    assert resolve_error(tmp_path, {"parent.yaml": PARENT, "child.yaml": child},
                         "toy/child") == [(str(tmp_path / "child.yaml"), 7, 5, code, message)]


def test_history_fields_are_checked_by_the_meta_schema(tmp_path):
    child = RENAMING.replace("changed_in: rev-2", "changed_in: 2")
    library = library_of(tmp_path, {"parent.yaml": PARENT, "child.yaml": child})
    with pytest.raises(SpecInvalid) as caught:
        library.get("toy/child")
    assert [(i.mark.line, i.code, i.message) for i in caught.value.issues] == [
        (9, "spec.shape", "'changed_in' must be of type string")]


# --------------------------------------------------------------------------- literal = constant

LITERALS = """\
flarespec: 1
id: toy/literals
title: Literals repeating constants
constants:
  schema: toy-v1
  limit: 250
  colours: [red, green]
  field: {key: stats.mean_count}
  id_format: "s{n}.{kind}"
documents:
  doc: {loader: json, entry: true, rule: toy.doc}
rules:
  - id: toy.schema
    description: toy-v1 in prose is fine.
    given: "doc:$.schema"
    assert: {equals: toy-v1}
  - id: toy.limit
    description: A number at or above the threshold.
    given: "doc:$.count"
    assert: {range: {max: 250, min: 1}}
  - id: toy.colours
    description: A list.
    given: "doc:$.colour"
    assert: {one_of: [red, green]}
  - id: toy.mean
    description: Paths spelled from a dotted key.
    when: {given: "doc:/groups/0/stats/mean_count", present: true}
    given: "doc:$.stats.mean_count"
    assert: {type: integer}
  - id: toy.ids
    description: A format with its own placeholders.
    given: "doc:$.id"
    assert: {equals: {template: "s{item.n}.{item.kind}"}}
  - id: toy.clean
    description: Substituted values, small numbers and booleans are not flagged.
    given: "doc:${field.key|jsonpath}"
    assert: {one_of: ["${schema}", 0, 1, 2, true]}
"""


def test_literals_equal_to_constants_are_warned_at_their_place(tmp_path):
    library = library_of(tmp_path, {"literals.yaml": LITERALS})
    spec = library.get("toy/literals")
    file = str(tmp_path / "literals.yaml")
    found = [(i.mark.file, i.mark.line, i.mark.column, i.code, i.message)
             for i in literal_constant_warnings(spec)]
    assert {i.severity for i in literal_constant_warnings(spec)} == {"warning"}
    code = "spec.literal-equals-constant"
    assert found == [
        (file, 16, 14, code, "'toy-v1' equals a constant: use ${schema}"),
        (file, 20, 22, code, "250 equals a constant: use ${limit}"),
        (file, 24, 14, code, "['red', 'green'] equals a constant: use ${colours}"),
        (file, 27, 12, code, "'doc:/groups/0/stats/mean_count' spells the path "
                             "'/stats/mean_count' of a constant: use ${field.key|pointer}"),
        (file, 28, 5, code, "'doc:$.stats.mean_count' spells the path '.stats.mean_count' of "
                            "a constant: use ${field.key|jsonpath}"),
        (file, 33, 23, code, "'s{item.n}.{item.kind}' spells the format ${id_format} with its "
                             "own placeholders: build the value from ${id_format}")]
    assert literal_constant_warnings(resolve(spec, library)) == literal_constant_warnings(spec)


def test_a_childs_literal_repeating_a_parents_constant_is_warned(tmp_path):
    child = """\
        flarespec: 1
        id: toy/child
        extends: toy/parent
        title: Child
        rules:
          - id: toy.schema
            description: The schema.
            given: "doc:$.schema"
            assert: {equals: toy-v1}
    """
    spec = resolved(tmp_path, child)
    assert [(i.mark.line, i.message) for i in literal_constant_warnings(spec)] == [
        (9, "'toy-v1' equals a constant: use ${schema}")]
    assert literal_constant_warnings(spec.chain[1]) == []  # the parent writes ${schema}


def test_a_document_dropped_and_defined_again_later_is_not_dropped(tmp_path):
    child = "flarespec: 1\nid: toy/child\nextends: toy/parent\ntitle: T\n" \
            "drop_documents: [extra]\n"
    grandchild = "flarespec: 1\nid: toy/grandchild\nextends: toy/child\ntitle: G\n" \
                 "documents:\n  extra: {loader: json, path: extra.json}\n"
    library = library_of(tmp_path, {"parent.yaml": DOCUMENTS_PARENT, "child.yaml": child,
                                    "grandchild.yaml": grandchild})
    spec = resolve(library.get("toy/grandchild"), library)
    assert spec.dropped_documents == {} and dropped_document_references(spec) == []
    compile_spec(spec)
