"""The shipped JSON Schemas (src/flarespec/schemas/) and the loaders judge files the same way.

The schemas are generated (authoring/schema.py) from the loader's definitions; these tests
hold the generator to the loader: the bundled and documented specs, catalogs and acks are
valid under both, the shape errors `spec lint` reports are refused by both, and what the
schema cannot express is listed (``LINT_ONLY``) with the reason, so a disagreement is
written down here rather than hidden.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from flarespec.authoring import schema
from flarespec.authoring.lint import lint
from flarespec.cli import main
from flarespec.cli.spec_schema_command import generated
from flarespec.engine.kinds import KINDS
from flarespec.fixtures.catalog import CatalogError, load_catalog
from flarespec.review.render import read_acks
from flarespec.compiler.errors import ERROR, SpecInvalid
from flarespec.compiler.load import bundled_spec_dir, read_spec_file
from flarespec.compiler.metaschema import shape_errors

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def validator(name: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads(schema.shipped_path(name).read_text()))


SPEC, CATALOG, ACKS = (validator(name) for name in schema.NAMES)


def schema_errors(name_or_validator, document) -> list[str]:
    check = validator(name_or_validator) if isinstance(name_or_validator, str) \
        else name_or_validator
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in check.iter_errors(document)]


# --------------------------------------------------------------------------- shipped = generated
@pytest.mark.parametrize("name", schema.NAMES)
def test_the_shipped_schema_is_what_the_generator_writes_now(name):
    shipped = schema.shipped_path(name).read_text(encoding="utf-8")
    assert shipped == schema.schema_text(generated(name)), \
        f"{schema.shipped_path(name)} is stale: run {schema.REGENERATE}"


@pytest.mark.parametrize("name", schema.NAMES)
def test_each_schema_is_a_valid_draft_07_schema(name):
    document = json.loads(schema.shipped_path(name).read_text())
    assert document["$schema"] == schema.DRAFT
    jsonschema.Draft7Validator.check_schema(document)


def test_every_assertion_kind_has_an_argument_schema_and_its_doc():
    kinds = SPEC.schema["definitions"]["assertion"]["properties"]
    assert set(kinds) == set(KINDS)
    for name, kind in KINDS.items():  # each kind once, referenced by assertion and condition
        assert kinds[name] == {"$ref": f"#/definitions/kind_{name}"}
        assert SPEC.schema["definitions"]["condition"]["properties"][name] == kinds[name]
        definition = SPEC.schema["definitions"][f"kind_{name}"]
        assert definition["description"] == kind.doc
        assert definition["allOf"] == [schema.kind_argument(kind)]


# --------------------------------------------------------------------------- the command
def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_spec_schema_prints_the_shipped_spec_schema_by_default():
    result = invoke("spec", "schema")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads(schema.shipped_path("spec").read_text())


@pytest.mark.parametrize("name", ["catalog", "acks"])
def test_spec_schema_prints_the_catalog_and_acks_schemas(name, tmp_path):
    result = invoke("spec", "schema", name)
    assert result.exit_code == 0, result.output
    assert result.output == schema.shipped_path(name).read_text()
    out = tmp_path / f"{name}.schema.json"
    written = invoke("spec", "schema", name, "--output", out)
    assert written.exit_code == 0 and out.read_text() == result.output


def test_an_unknown_schema_name_exits_2_without_a_traceback():
    result = invoke("spec", "schema", "catalogue")
    assert result.exit_code == 2
    assert "unknown schema 'catalogue'" in result.output and "known: spec, catalog, acks" \
        in result.output
    assert "Traceback" not in result.output


def test_output_never_replaces_a_spec_file(tmp_path):
    spec = tmp_path / "mine.yaml"
    spec.write_text("flarespec: 1\nid: a/b\ntitle: T\n")
    for target in (spec, bundled_spec_dir() / "flare" / "bce032c0.yaml"):
        before = target.read_bytes()
        result = invoke("spec", "schema", "--output", target)
        assert result.exit_code == 2 and "--output refused" in result.output
        assert target.read_bytes() == before


def test_help_teaches_the_editor_setup():
    result = invoke("spec", "schema", "--help")
    assert "yaml-language-server: $schema=" in result.output
    assert '"yaml.schemas"' in result.output


# --------------------------------------------------------------------------- valid files
def spec_files() -> list[Path]:
    return sorted(bundled_spec_dir().rglob("*.yaml")) + sorted((DOCS / "examples").rglob("*.yaml"))


@pytest.mark.parametrize("path", spec_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bundled_and_example_spec_is_valid_under_the_schema_and_lints(path):
    assert schema_errors(SPEC, yaml.safe_load(path.read_text())) == []
    [result] = lint([str(path)])
    assert [i for i in result.issues if i.severity == ERROR] == []


def doc_blocks(path: Path) -> list[str]:
    """The YAML code blocks of a doc page (as tests/engine/test_spec_loading.py reads them)."""
    return [textwrap.dedent(block) for block in
            re.findall(r"^ *```yaml\n(.*?)^ *```$", path.read_text(), re.S | re.M)]


HEADER = {"flarespec": 1, "id": "doc/example", "title": "a documented snippet"}


def as_spec_file(block: str):
    """A doc snippet as a spec file: a whole spec as it is, a spec's sections under a
    header, a rule or a list of rules as the rules of one; None for other YAML (a catalog,
    a condition, an argument: not a file of their own)."""
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:  # an outline with `...` in it
        return None
    if isinstance(data, dict) and "flarespec" in data:
        return data
    if isinstance(data, dict) and "id" in data and "description" in data:
        data = [data]
    if isinstance(data, list) and data and all(isinstance(r, dict) and "id" in r for r in data):
        return {**HEADER, "rules": data}
    if isinstance(data, dict) and set(data) <= set(SPEC.schema["properties"]) - set(HEADER):
        return {**HEADER, **data}
    return None


@pytest.mark.parametrize("page", ["spec-language.md", "editing-specs.md"])
def test_every_spec_snippet_of_the_docs_is_judged_alike(page):
    judged = 0
    for block in doc_blocks(DOCS / page):
        document = as_spec_file(block)
        if document is None:
            continue
        judged += 1
        by_schema = schema_errors(SPEC, document)
        by_loader = shape_errors(document)
        assert bool(by_schema) == bool(by_loader), (block, by_schema, by_loader)
        assert by_schema == [], block
    assert judged >= {"spec-language.md": 10, "editing-specs.md": 1}[page]


# --------------------------------------------------------------------------- shape errors
BUNDLED = "flare/bce032c0"
HEAD = textwrap.dedent(f"""\
    flarespec: 1
    id: flare/next
    title: Next revision
    extends: {BUNDLED}
    applies_to: {{given: 'packet:$.source.revision', equals: 'next'}}
    """)
RULE = """\
rules:
  - id: next.schema
    description: The schema is named.
    given: "packet:$.schema"
    assert: {present: true}
"""


def lint_errors(tmp_path, text: str) -> set[str]:
    path = tmp_path / "next.yaml"
    path.write_text(text)
    [result] = lint([str(path)])
    return {issue.code for issue in result.issues if issue.severity == ERROR}


def test_the_base_of_the_cases_lints_clean_and_is_valid(tmp_path):
    assert lint_errors(tmp_path, HEAD + RULE) == set()
    assert schema_errors(SPEC, yaml.safe_load(HEAD + RULE)) == []


# (case, text replacing `old` in HEAD + RULE, the lint code): the shape errors of the
# lint tests (tests/cli/test_spec_lint.py, tests/engine/test_spec_loading.py,
# tests/cli/test_issue14_messages.py), each refused by the schema as well
SHAPE_ERRORS = [
    ("unknown top-level key", ("extends:", "extnds: x\nextends:"), "spec.shape"),
    ("unknown rule key", ("    given:", "    gvien: x\n    given:"), "spec.shape"),
    ("missing description", ("    description: The schema is named.\n", ""), "spec.shape"),
    ("empty description", ("The schema is named.", "''"), "spec.shape"),
    ("neither assert nor hook", ("    assert: {present: true}\n", ""), "spec.shape"),
    ("assert and hook", ("    assert:", "    hook: flare.x\n    assert:"), "spec.shape"),
    ("args without hook", ("    assert:", "    args: {}\n    assert:"), "spec.shape"),
    ("bad rule id", ("next.schema", "NextSchema"), "spec.shape"),
    ("one-part rule id", ("next.schema", "schema"), "spec.shape"),
    ("bad spec id", ("flare/next", "Flare/Next"), "spec.shape"),
    ("format version", ("flarespec: 1", "flarespec: 2"), "spec.shape"),
    ("title missing", ("title: Next revision\n", ""), "spec.shape"),
    ("severity", ("    assert:", "    severity: fatal\n    assert:"), "spec.shape"),
    ("optional wrong type", ("    assert:", "    optional: 'yes'\n    assert:"), "spec.shape"),
    ("rules not a list", (RULE, "rules: {}\n"), "spec.shape"),
    ("two kinds", ("{present: true}", "{present: true, absent: true}"), "spec.shape"),
    ("unknown kind", ("{present: true}", "{equal: 1}"), "spec.unknown-kind"),
    ("bad kind argument", ("{present: true}", "{present: 'yes'}"), "spec.kind-argument"),
    ("misspelt bound", ("{present: true}", "{range: {minimum: 1}}"), "spec.kind-argument"),
    ("empty range", ("{present: true}", "{range: {}}"), "spec.kind-argument"),
    ("unknown json type", ("{present: true}", "{type: text}"), "spec.kind-argument"),
    ("monotonic choice", ("{present: true}", "{monotonic: up}"), "spec.kind-argument"),
    ("range bound not a number", ("{present: true}", "{range: {min: x}}"), "spec.kind-argument"),
    ("negative count", ("{present: true}", "{count: {equals: -1}}"), "spec.kind-argument"),
    ("empty one_of", ("{present: true}", "{one_of: []}"), "spec.kind-argument"),
    ("keys not names", ("{present: true}", "{keys: [1, 2]}"), "spec.kind-argument"),
    ("not wraps two", ("{present: true}", "{not: {present: true, absent: true}}"),
     "spec.invalid"),
    ("negative tolerance", ("{present: true}", "{formula: {expr: 'a == 1', rel_tol: -1}}"),
     "spec.kind-argument"),
    ("condition without a kind", ("    assert:", "    when: {given: 'packet:$.a'}\n    assert:"),
     "spec.invalid"),
    ("condition with an unknown kind",
     ("    assert:", "    when: {given: 'packet:$.a', equal: 1}\n    assert:"), "spec.unknown-kind"),
    ("unknown loader", (RULE, "documents:\n  extra: {loader: jsn, path: x.json}\n"),
     "spec.unknown-loader"),
    ("document key", (RULE, "documents:\n  extra: {loader: json, pth: x.json}\n"),
     "spec.shape"),
    ("path and entry", (RULE, "documents:\n  extra: {loader: text, path: x, entry: true}\n"),
     "spec.shape"),
    ("max_mib", (RULE, "documents:\n  extra: {loader: text, path: x, options: {max_mib: 0}}\n"),
     "spec.document-option"),
    ("unknown shape key", (RULE, "shapes:\n  extra: {members: {a: {typ: integer}}}\n"),
     "spec.document-shape"),
    ("shape type", (RULE, "shapes:\n  extra: {type: int}\n"), "spec.document-shape"),
    ("shape length", (RULE, "shapes:\n  extra: {type: string, length: -1}\n"),
     "spec.document-shape"),
    ("constant name", (RULE, "constants: {1st: x}\n"), "spec.shape"),
    ("document name", (RULE, "documents:\n  my-doc: {loader: text, path: x}\n"), "spec.shape"),
]


def mutated(replace: tuple[str, str]) -> str:
    old, new = replace
    text = HEAD + RULE
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize("case, replace, code", SHAPE_ERRORS, ids=[c[0] for c in SHAPE_ERRORS])
def test_a_shape_error_of_lint_is_refused_by_the_schema(tmp_path, case, replace, code):
    text = mutated(replace)
    assert code in lint_errors(tmp_path, text)
    assert schema_errors(SPEC, yaml.safe_load(text)) != [], text


# What only `spec lint` refuses: the schema accepts these files (it sees one file, not the
# spec it resolves to, nor the registries a plugin extends), and lint refuses them.
LINT_ONLY = [
    ("a reference naming no document: references are resolved against the whole spec",
     ("packet:$.schema", "pakcet:$.schema"), "spec.unknown-target"),
    ("an unknown iteration in for_each: iterations may be inherited",
     ("    given:", "    for_each: nowhere\n    given:"), "spec.unknown-iteration"),
    ("an unknown constant: constants may be inherited",
     ("{present: true}", "{equals: '${nowhere}'}"), "spec.unknown-constant"),
    ("a malformed ${ in text: every string of the spec would need the token grammar",
     ("The schema is named.", "'The ${ schema'"), "spec.constant-syntax"),
    ("requires naming no rule: rules may be inherited",
     ("    given:", "    requires: [next.nowhere]\n    given:"), "spec.requires-unknown"),
    ("an unregistered hook: hooks are plugins (entry points), not known to a static file",
     ("    assert: {present: true}\n", "    hook: nowhere.hook\n"), "spec.unknown-hook"),
    ("an invalid RE2 pattern: the regex engine decides, not a JSON Schema pattern",
     ("{present: true}", "{regex: '(a'}"), "spec.kind-argument"),
    ("bounds that leave nothing: a relation between two members",
     ("{present: true}", "{range: {min: 3, max: 1}}"), "spec.kind-argument"),
    ("a format placeholder naming no axis: the spec's template grammar, not a pattern",
     ("{present: true}", "{order_equals: {format: 'r{zz}', product: {r: [1]}}}"),
     "spec.kind-argument"),
    ("unknown documents in a manifest kind: documents may be inherited",
     ("{present: true}", "{manifest_digests: [nowhere]}"), "spec.kind-argument"),
    ("a shape no entry of shapes declares: shapes may be inherited",
     (RULE, "documents:\n  extra: {loader: json, path: x.json, shape: nowhere}\n"),
     "spec.document-shape"),
    ("a document with neither path, path_from nor entry: checked on the resolved spec",
     (RULE, "documents:\n  extra: {loader: json}\n"), "spec.invalid"),
    ("a duplicate rule id: a relation between list items",
     (RULE, RULE + RULE[7:]), "spec.duplicate-rule-id"),
    ("an inherited rule id without replaces: true: the parent's rules are elsewhere",
     ("next.schema", "packet.schema"), "spec.rule-id-reused"),
]


@pytest.mark.parametrize("reason, replace, code", LINT_ONLY, ids=[c[0][:40] for c in LINT_ONLY])
def test_what_only_lint_refuses_is_listed_with_its_reason(tmp_path, reason, replace, code):
    text = mutated(replace)
    assert code in lint_errors(tmp_path, text)
    assert schema_errors(SPEC, yaml.safe_load(text)) == [], text


def test_a_boolean_is_no_integer_for_the_loader_either(tmp_path):
    """The schema found it: Cerberus read YAML's `true` as the integer 1 (bool is an int in
    Python), so the loader accepted `flarespec: true`; its validator now refuses a boolean
    where an integer is declared, as the schema does."""
    text = mutated(("flarespec: 1", "flarespec: true"))
    assert "spec.shape" in lint_errors(tmp_path, text)
    assert schema_errors(SPEC, yaml.safe_load(text)) != []


# --------------------------------------------------------------------------- catalogs
def catalog_files() -> list[Path]:
    return sorted((ROOT / "fixtures").rglob("*.yaml"))


@pytest.mark.parametrize("path", catalog_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bundled_catalog_is_valid_under_the_catalog_schema_and_loads(path):
    assert schema_errors(CATALOG, yaml.safe_load(path.read_text())) == []
    load_catalog(path)


GOOD_CASE = {"name": "ok", "description": "A clean packet.", "expect": {"accept": True}}
BROKEN_CATALOGS = [
    ("no cases", {"spec": "a/b", "cases": []}),
    ("no spec", {"cases": [GOOD_CASE]}),
    ("unknown case key", {"spec": "a/b", "cases": [{**GOOD_CASE, "expct": {}}]}),
    ("blank description", {"spec": "a/b", "cases": [{**GOOD_CASE, "description": " "}]}),
    ("accept false", {"spec": "a/b", "cases": [{**GOOD_CASE, "expect": {"accept": False}}]}),
    ("empty rejected_by", {"spec": "a/b", "cases": [{**GOOD_CASE,
                                                     "expect": {"rejected_by": []}}]}),
    ("bad name", {"spec": "a/b", "names": {"1x": "y"}, "cases": [GOOD_CASE]}),
]


@pytest.mark.parametrize("case, document", BROKEN_CATALOGS, ids=[c[0] for c in BROKEN_CATALOGS])
def test_a_broken_catalog_is_refused_by_both(tmp_path, case, document):
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(CatalogError):
        load_catalog(path)
    assert schema_errors(CATALOG, document) != []


def test_what_only_the_catalog_loader_refuses_is_listed(tmp_path):
    """Relations between fields (one of accept and rejected_by, unique case names) and the
    mutation registry (op names and their arguments) are the catalog loader's alone."""
    for document in ({"spec": "a/b", "cases": [{**GOOD_CASE, "expect": {}}]},
                     {"spec": "a/b", "cases": [GOOD_CASE, GOOD_CASE]},
                     {"spec": "a/b", "cases": [{**GOOD_CASE, "mutate": [{"op": "nowhere"}]}]}):
        path = tmp_path / "catalog.yaml"
        path.write_text(yaml.safe_dump(document))
        with pytest.raises(CatalogError):
            load_catalog(path)
        assert schema_errors(CATALOG, document) == []


# --------------------------------------------------------------------------- acks
GOOD_ACKS = ["", "[]\n", "- {fingerprint: abc123, reason: reviewed}\n",
             "- fingerprint: '0123'\n  reason: an all-digit fingerprint, quoted\n"]
BAD_ACKS = ["{fingerprint: a, reason: b}\n", "- {fingerprint: a}\n",
            "- {fingerprint: a, reason: b, by: me}\n", "- {fingerprint: 123, reason: b}\n",
            "- {fingerprint: a, reason: '  '}\n", "- just text\n", "'text'\n"]


@pytest.mark.parametrize("text", GOOD_ACKS)
def test_good_acks_are_accepted_by_both(tmp_path, text):
    path = tmp_path / "acks.yaml"
    path.write_text(text)
    read_acks(path)
    assert schema_errors(ACKS, yaml.safe_load(text)) == []


@pytest.mark.parametrize("text", BAD_ACKS)
def test_bad_acks_are_refused_by_both(tmp_path, text):
    path = tmp_path / "acks.yaml"
    path.write_text(text)
    with pytest.raises(SpecInvalid):
        read_acks(path)
    assert schema_errors(ACKS, yaml.safe_load(text)) != []


# --------------------------------------------------------------------------- property
from hypothesis import given, settings, strategies as st  # noqa: E402

_VALUES = st.sampled_from(["toy.rule", "Not An Id", "", "item", 3, True, None, [], ["toy.a"],
                           {}, {"present": True}, {"present": True, "absent": True}])
_KEYS = st.sampled_from(["id", "description", "given", "severity", "optional", "for_each",
                         "assert", "hook", "args", "requires", "message", "since", "colour"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=7))
def test_a_generated_rule_is_judged_alike_by_the_schema_and_the_meta_schema(rule):
    """Small rule mappings of the meta-schema's keys (and one unknown), with values of
    every type: the schema refuses exactly what Cerberus refuses. (Kind arguments are
    beyond Cerberus: `assert` holds one known kind or is wrong in shape alone.)"""
    document = {**HEADER, "rules": [rule]}
    assert bool(schema_errors(SPEC, document)) == bool(shape_errors(document)), rule
