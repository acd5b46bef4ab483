"""A fixture catalog is read as a spec is: marked YAML and a declared schema, every problem
at file:line:column in the style of a spec's load errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from flarespec.fixtures.catalog import CATALOG, CatalogError, catalog_spec, expand_case, load_catalog
from flarespec.fixtures.check import catalogs_for

GOOD = """\
spec: shop/v1
names:
  first: "${kinds.0}"
cases:
  - name: valid
    description: A fresh packet passes.
    expect: {accept: true}
  - name: gone
    description: A file is gone.
    mutate:
      - {op: remove_file, file: "run/${first}/a.json"}
    expect:
      rejected_by: [shop.files.exists]
      at: {shop.files.exists: ["packet.json:$.files"]}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def refused(tmp_path: Path, text: str) -> CatalogError:
    with pytest.raises(CatalogError) as caught:
        load_catalog(write(tmp_path, text))
    return caught.value


def test_a_good_catalog_loads_as_plain_data(tmp_path):
    spec, cases = load_catalog(write(tmp_path, GOOD))
    assert spec == "shop/v1"
    assert [case.name for case in cases] == ["valid", "gone"]
    assert type(cases[1].mutate[0]) is dict and type(cases[1].expect["rejected_by"]) is list
    assert cases[1].names == {"first": "${kinds.0}"}


def test_a_duplicate_key_is_refused_naming_line_and_column(tmp_path):
    text = GOOD.replace("    description: A file is gone.\n",
                        "    description: A file is gone.\n    description: twice\n")
    error = refused(tmp_path, text)
    assert str(error) == f"{tmp_path / 'catalog.yaml'}:10:5: duplicate key 'description' [catalog.yaml]"
    assert [(i.mark.line, i.mark.column, i.code) for i in error.issues] == [(10, 5, "catalog.yaml")]


def test_an_unknown_key_in_a_case_is_refused_naming_the_key_and_its_line(tmp_path):
    error = refused(tmp_path, GOOD.replace("    expect: {accept: true}\n",
                                           "    expect: {accept: true}\n    colour: red\n"))
    assert str(error) == (f"{tmp_path / 'catalog.yaml'}:8:5: case 'valid': unknown key 'colour' "
                          f"[catalog.shape]")


def test_a_wrong_type_is_refused_saying_what_the_field_must_be(tmp_path):
    error = refused(tmp_path, GOOD.replace("    expect: {accept: true}\n",
                                           "    expect: {accept: true}\n    refresh_digests: often\n"))
    assert str(error) == (f"{tmp_path / 'catalog.yaml'}:8:5: case 'valid': 'refresh_digests' must "
                          f"be true or false [catalog.shape]")


def test_every_problem_is_reported_at_once(tmp_path):
    text = GOOD.replace("spec: shop/v1\n", "spec: 7\n").replace(
        "    expect: {accept: true}\n", "    expect: {accept: yes, rejected: [x]}\n")
    error = refused(tmp_path, text)
    assert [(i.mark.line, i.message) for i in error.issues] == [
        (1, "'spec' must be the id of the spec the cases belong to, e.g. shop/v1"),
        (7, "case 'valid': unknown key 'rejected'"),
    ]


@pytest.mark.parametrize("old, new, line, message, code", [
    ("    expect: {accept: true}\n", "    expect: {}\n", 7,
     "case 'valid': expect: exactly one of 'accept' and 'rejected_by' is required", "catalog.shape"),
    ("{op: remove_file,", "{op: remove_fil,", 11,
     "case 'gone': unknown op 'remove_fil'; known: ", "catalog.mutation"),
    ("[shop.files.exists]", "[shop.files.exists, shop.files.exists]", 13,
     "case 'gone': expect.rejected_by: duplicate rule ids ['shop.files.exists']", "catalog.shape"),
    ("at: {shop.files.exists:", "at: {shop.other:", 14,
     "case 'gone': expect.at: 'shop.other' is not a rule id of rejected_by", "catalog.shape"),
    ("  - name: gone\n", "  - name: valid\n", 8,
     "case 'valid': duplicate case name (first at ", "catalog.duplicate-case"),
    ("  first: \"${kinds.0}\"\n", "  first: {kind: x}\n", 3,
     "names.first: must be a string, {format: TEMPLATE, FIELD: VALUE...}, {select: ", "catalog.shape"),
    ("  first: \"${kinds.0}\"\n", "  first-name: \"${kinds.0}\"\n", 3,
     "'first-name' must be a name: letters, digits and _, not starting with a digit",
     "catalog.shape"),
])
def test_what_the_schema_cannot_say_is_refused_at_its_place(tmp_path, old, new, line, message,
                                                           code):
    error = refused(tmp_path, GOOD.replace(old, new))
    (issue,) = error.issues
    assert (issue.mark.line, issue.code) == (line, code)
    assert issue.message.startswith(message)


def test_a_file_that_is_no_mapping_or_no_yaml_is_refused_at_line_1(tmp_path):
    assert str(refused(tmp_path, "- a\n- b\n")).endswith(
        "catalog.yaml:1:1: a catalog is a YAML mapping with 'spec' and 'cases' [catalog.shape]")
    error = refused(tmp_path, "spec: [shop\ncases: []\n")
    assert error.issues[0].code == "catalog.yaml" and error.issues[0].mark.line == 2


def test_the_schema_is_declared_beside_the_spec_schema():
    assert set(CATALOG) == {"spec", "names", "cases", "input", "entry"}
    assert CATALOG["cases"]["schema"]["schema"]["expect"]["required"] is True


def test_catalogs_for_reads_the_spec_line_with_the_same_loader(tmp_path):
    class Chain:  # the part of a compiled spec catalogs_for reads
        class resolved:
            chain = [type("Layer", (), {"id": "shop/v1"})]
    write(tmp_path, GOOD)
    (tmp_path / "other.yaml").write_text("# a comment\nspec: other/v1\ncases: []\n")
    assert catalog_spec(tmp_path / "catalog.yaml") == "shop/v1"
    assert catalogs_for(Chain, tmp_path) == [tmp_path / "catalog.yaml"]
    (tmp_path / "broken.yaml").write_text("# a comment\nspec: [open\n")
    with pytest.raises(CatalogError, match=r"broken.yaml:3:1: .* \[catalog.yaml\]"):
        catalogs_for(Chain, tmp_path)


def test_a_token_outside_the_grammar_is_refused_when_a_case_is_built(tmp_path):
    _, (_, gone) = load_catalog(write(tmp_path, GOOD.replace("run/${first}/a.json",
                                                             "run/${first x}/a.json")))
    with pytest.raises(CatalogError, match=r"case gone: '\$\{first x\}' is not a constant"):
        expand_case(gone, {"kinds": ["a"]})


def test_a_filter_works_in_a_catalog_as_in_a_spec(tmp_path):
    _, (_, gone) = load_catalog(write(tmp_path, GOOD.replace(
        "{op: remove_file, file: \"run/${first}/a.json\"}",
        "{op: set_json, file: a.json, path: \"${field.key|jsonpath}\", value: 1}")))
    assert expand_case(gone, {"kinds": ["a"], "field": {"key": "a.b"}}).mutate[0]["path"] == "$.a.b"


@pytest.mark.parametrize("value, message", [
    (True, r"constant \$\{flag\} is true, not a string or a number"),
    (None, r"constant \$\{flag\} is null, not a string or a number"),
    ([1], r"constant \$\{flag\} is a structure"),
])
def test_only_strings_and_numbers_are_spelled_inside_text(tmp_path, value, message):
    _, (_, gone) = load_catalog(write(tmp_path, GOOD.replace("run/${first}/a.json",
                                                             "run/${flag}/a.json")))
    with pytest.raises(CatalogError, match=f"case gone: {message}"):
        expand_case(gone, {"kinds": ["a"], "flag": value})
    assert expand_case(gone, {"kinds": ["a"], "flag": 1.5}).mutate[0]["file"] == "run/1.5/a.json"
