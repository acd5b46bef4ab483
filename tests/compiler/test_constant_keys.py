"""``${...}`` in mapping keys (compiler/resolve.py): a name stated as a constant is written once,
even where it stands as a key; a shape member key holding a dotted key declares the member
at that path; lint warns where a literal key restates a constant (authoring/literals.py)."""

from __future__ import annotations

import textwrap

import pytest

from flarespec.authoring.literals import literal_constant_warnings
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

BASE = """\
flarespec: 1
id: toy/keys
title: Keys from constants
constants:
  field: {key: stats.mean_count, name: mean_count}
  member: label
  count: 3
  names: [a, b]
shapes:
  doc:
    type: object
    members:
      "${member}": string
      "${field.key}": integer
      stats: {type: object, members: {total: integer}}
      rows: {type: array, items: {type: object, members: {"${member}_id": string}}}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
identities:
  both: {"${member}": {ref: "doc:$.label"}, total: {ref: "doc:$.stats.total"}}
rules:
  - id: toy.stats
    description: The stats hold the count.
    given: "doc:$.stats"
    assert: {includes: {"${field.name}": 3}}
  - id: toy.mean
    description: The mean count, read by the same constant.
    given: "doc:${field.key|jsonpath}"
    assert: {range: {min: 0}}
"""


def library_of(tmp_path, files: dict) -> SpecLibrary:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return SpecLibrary([tmp_path])


def resolved(tmp_path, text: str = BASE, spec_id: str = "toy/keys", **others):
    library = library_of(tmp_path, {"keys.yaml": text, **others})
    return resolve(library.get(spec_id), library)


def issues_of(tmp_path, text: str, spec_id: str = "toy/keys", **others):
    with pytest.raises(SpecInvalid) as caught:
        resolved(tmp_path, text, spec_id, **others)
    return [(i.mark.line, i.mark.column, i.code) for i in caught.value.issues]


def test_keys_are_substituted_at_every_depth(tmp_path):
    data = resolved(tmp_path).plain()
    doc = data["shapes"]["doc"]["members"]
    assert doc["label"] == "string"
    assert doc["rows"]["items"]["members"] == {"label_id": "string"}  # inside text
    assert data["identities"]["both"] == {"label": {"ref": "doc:$.label"},
                                          "total": {"ref": "doc:$.stats.total"}}
    assert data["rules"][0]["assert"] == {"includes": {"mean_count": 3}}


def test_a_dotted_member_key_declares_the_member_at_its_path(tmp_path):
    doc = resolved(tmp_path).plain()["shapes"]["doc"]["members"]
    assert "stats.mean_count" not in doc and "${field.key}" not in doc
    assert doc["stats"] == {"type": "object",
                            "members": {"total": "integer", "mean_count": "integer"}}
    compile_spec(resolved(tmp_path))  # the expanded shape compiles


def test_a_substituted_key_keeps_its_line_and_column(tmp_path):
    spec = resolved(tmp_path)
    members = spec.data["shapes"]["doc"]["members"]
    assert (members.key_marks["label"].line, members.key_marks["label"].column) == (13, 7)
    inner = members["stats"]["members"]
    # the member a path declares stands where its ${...} key was written
    assert (inner.key_marks["mean_count"].line, inner.key_marks["mean_count"].column) == (14, 7)
    includes = spec.data["rules"][0]["assert"]["includes"]
    assert includes.key_marks["mean_count"].line == 25


def test_a_path_into_a_member_named_by_a_type_or_shape_gives_it_members(tmp_path):
    text = BASE.replace("stats: {type: object, members: {total: integer}}", "stats: object")
    stats = resolved(tmp_path, text).plain()["shapes"]["doc"]["members"]["stats"]
    assert stats == {"type": "object", "members": {"mean_count": "integer"}}
    text = BASE.replace("stats: {type: object, members: {total: integer}}", "stats: counts") \
        .replace("documents:", "  counts: {type: object, members: {total: integer}}\ndocuments:")
    stats = resolved(tmp_path, text).plain()["shapes"]["doc"]["members"]["stats"]
    assert stats == {"use": "counts", "members": {"mean_count": "integer"}}


def test_the_spec_files_keep_the_keys_as_written(tmp_path):
    spec = resolved(tmp_path)
    written = spec.chain[0].data["shapes"]["doc"]["members"]
    assert "${field.key}" in written and "${member}" in written
    assert "mean_count" not in written["stats"]["members"]


def test_an_unknown_constant_in_a_key_is_reported_at_the_key(tmp_path):
    text = BASE.replace('"${member}": string', '"${membr}": string')
    assert issues_of(tmp_path, text) == [(13, 7, "spec.unknown-constant")]


def test_a_bad_token_in_a_dotted_member_key_is_reported_once_at_the_key(tmp_path):
    text = BASE.replace('"${field.key}": integer', '"${field.kee}": integer')
    assert issues_of(tmp_path, text) == [(14, 7, "spec.unknown-constant")]


def test_a_key_that_becomes_no_text_is_refused(tmp_path):
    text = BASE.replace('"${member}": string', '"${count}": string')
    assert issues_of(tmp_path, text) == [(13, 7, "spec.constant-key-type")]
    text = BASE.replace('"${member}": string', '"${names}": string')
    assert issues_of(tmp_path, text) == [(13, 7, "spec.constant-key-type")]


def test_two_keys_that_become_equal_collide(tmp_path):
    text = BASE.replace('"${member}": string', '"${member}": string\n      label: string')
    assert issues_of(tmp_path, text) == [(14, 7, "spec.key-collision")]


def test_a_member_path_to_a_member_already_declared_collides(tmp_path):
    text = BASE.replace("members: {total: integer}", "members: {total: integer, mean_count: integer}")
    assert issues_of(tmp_path, text) == [(14, 7, "spec.key-collision")]


def test_a_member_path_through_an_undeclared_member_is_refused(tmp_path):
    text = BASE.replace("      stats: {type: object, members: {total: integer}}\n", "")
    text = text.replace('  - id: toy.stats\n    description: The stats hold the count.\n'
                        '    given: "doc:$.stats"\n    assert: {includes: {"${field.name}": 3}}\n',
                        "")
    assert issues_of(tmp_path, text) == [(14, 7, "spec.document-shape")]


CHILD = """\
flarespec: 1
id: toy/child
extends: toy/keys
title: The field renamed
constants:
  field: {key: stats.mean_value, name: mean_value}
"""


def test_a_child_that_renames_the_constant_moves_the_member(tmp_path):
    spec = resolved(tmp_path, spec_id="toy/child", **{"child.yaml": CHILD})
    stats = spec.plain()["shapes"]["doc"]["members"]["stats"]
    assert stats["members"] == {"total": "integer", "mean_value": "integer"}
    compiled = compile_spec(spec)
    assert compiled.rules[1].given.source == "doc:$.stats.mean_value"


def test_a_child_drops_or_overrides_an_inherited_constant_member_by_its_key(tmp_path):
    drop = CHILD + 'shapes:\n  doc: {drop_members: ["${field.key}"]}\n'
    stats = resolved(tmp_path, spec_id="toy/child", **{"child.yaml": drop}) \
        .plain()["shapes"]["doc"]["members"]["stats"]
    assert stats["members"] == {"total": "integer"}
    override = CHILD + 'shapes:\n  doc: {members: {"${field.key}": number}}\n'
    stats = resolved(tmp_path, spec_id="toy/child", **{"child.yaml": override}) \
        .plain()["shapes"]["doc"]["members"]["stats"]
    assert stats["members"] == {"total": "integer", "mean_value": "number"}


# ------------------------------------------------------------------ lint
LITERAL_KEYS = """\
flarespec: 1
id: toy/literal-keys
title: Literal keys restating constants
constants:
  field: {key: stats.mean_count, name: mean_count}
  member: label
  names: [alpha, beta]
shapes:
  doc:
    type: object
    members:
      label: string
      alpha: string
      stats: {type: object, members: {mean_count: integer}}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
identities:
  both: {label: {ref: "doc:$.label"}}
rules:
  - id: toy.stats
    description: The stats.
    given: "doc:$.stats"
    assert: {includes: {mean_count: 3}}
"""


def test_lint_warns_at_a_literal_key_that_restates_a_constant(tmp_path):
    library = library_of(tmp_path, {"literal.yaml": LITERAL_KEYS})
    spec = resolve(library.get("toy/literal-keys"), library)
    found = [(i.mark.line, i.mark.column, i.code, i.severity, i.message)
             for i in literal_constant_warnings(spec)]
    code = "spec.literal-equals-constant"
    assert found == [
        (12, 7, code, "warning", "member key 'label' equals a constant: write the key as "
                                 "${member}"),
        # alpha is ${names.0}: a list position is never what a key means
        # mean_count is ${field.name} too: the path says more
        (14, 39, code, "warning", "member 'mean_count' stands at 'stats.mean_count', the "
                                  "member path of a constant: declare it once as the key "
                                  "${field.key} beside 'stats' (a ${...} member key holding "
                                  "a dotted path declares the member there)"),
        (23, 25, code, "warning", "includes member 'mean_count' equals a constant: write the "
                                  "key as ${field.name}"),
        (18, 10, code, "warning", "identity field 'label' equals a constant: write the key "
                                  "as ${member}"),
    ]


def test_lint_is_quiet_where_the_keys_are_written_from_constants(tmp_path):
    library = library_of(tmp_path, {"keys.yaml": BASE})
    assert literal_constant_warnings(resolve(library.get("toy/keys"), library)) == []
