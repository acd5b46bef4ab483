"""Engine semantics: bindings, references, conditions, severities, messages, document failures.

Everything runs the toy inventory spec (``toy/base.yaml``) or small toy specs built on the same
documents, and compares exact rule ids, files, locations and messages.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import textwrap
from pathlib import Path

import pytest
from document_files import write_files

from flarespec.engine.evaluate import evaluate
from flarespec.engine.scopes import Bindings
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

TOY = Path(__file__).parent / "toy"

DOCS = {
    "index.json": {"schema": "toy-inventory-v1", "stock": "stock.json",
                   "shelves": [{"name": "s0"}, {"name": "s1"}]},
    "stock.json": {"counts": {"a": 1, "b": 2, "c": 3}},
    "shelves/s0.json": {"items": [{"sku": "a", "colour": "red", "count": 1},
                                  {"sku": "b", "colour": "green", "count": 2}], "total": 3},
    "shelves/s1.json": {"items": [{"sku": "c", "colour": "blue", "count": 3}], "total": 3},
}

# The documents and iterations of toy/base, for small specs over the same files.
TOY_HEADER = """\
flarespec: 1
id: toy/case
title: Toy case
documents:
  index: {loader: json, entry: true, rule: toy.index}
  stock: {loader: json, path_from: "index:$.stock", rule: toy.stock}
  shelf_file: {loader: json, each: shelf, path: "shelves/{shelf.name}.json", rule: toy.shelf}
iterations:
  shelf: {over: "index:$.shelves[*]"}
  item: {over: "shelf_file:$.items[*]", parent: shelf}
"""


# --------------------------------------------------------------------------- helpers

def base_spec():
    library = SpecLibrary([TOY])
    return compile_spec(resolve(library.get("toy/base"), library))


def case_spec(tmp_path, text: str, header: str = TOY_HEADER):
    directory = tmp_path / "spec"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "case.yaml").write_text(header + textwrap.dedent(text))
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/case"), library))


def write_docs(root: Path, change=None) -> Path:
    """The toy documents under ``root``, after ``change(docs)``; a None value is not written."""
    docs = copy.deepcopy(DOCS)
    if change:
        change(docs)
    write_files(root, docs)
    return root / "index.json"


def run(tmp_path, spec=None, change=None):
    return evaluate(spec or base_spec(), write_docs(tmp_path / "docs", change))


def unshaped_base_spec(tmp_path):
    """toy/base without its shapes: the engine's own handling of what a shape would
    otherwise catch first (a member missing, a path of the wrong type)."""
    import yaml

    data = yaml.safe_load((TOY / "base.yaml").read_text())
    data.pop("shapes")
    for document in data["documents"].values():
        document.pop("shape", None)
    data["id"] = "toy/case"
    return case_spec(tmp_path, "", header=yaml.safe_dump(data, sort_keys=False))


def summary(violations):
    return [(v.rule, v.file, v.location, v.message) for v in violations]


def sha256(content) -> str:
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()


# --------------------------------------------------------------------------- the toy spec

def test_base_spec_passes_and_hashes_every_document(tmp_path):
    report = run(tmp_path)
    assert report.violations == [] and report.warnings == [] and report.ok
    assert report.files == {rel: sha256(content) for rel, content in DOCS.items()}


def test_given_matching_nothing_is_a_violation(tmp_path):
    report = run(tmp_path, unshaped_base_spec(tmp_path),
                 change=lambda d: d["index.json"].pop("schema"))
    assert summary(report.violations) == [
        ("toy.index.schema", "index.json", "index:$.schema", "nothing found at index:$.schema")]
    assert report.violations[0].expected == "present"
    assert not report.ok


def test_a_required_member_missing_is_the_shape_rule_before_any_rule_reads_it(tmp_path):
    report = run(tmp_path, change=lambda d: d["index.json"].pop("schema"))
    assert summary(report.violations) == [
        ("toy.index.shape", "index.json", "$.schema", "required member 'schema' is missing")]
    assert (report.violations[0].expected, report.violations[0].actual) == ("present", "absent")


def test_optional_rule_matching_nothing_passes_but_still_checks_what_it_finds(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.weight
            description: Where an item has a weight, it is positive.
            for_each: item
            optional: true
            given: "item:$.weight"
            assert: {range: {exclusive_min: 0}}
    """)
    assert run(tmp_path / "a", spec).violations == []

    def weigh(docs):
        docs["shelves/s0.json"]["items"][1]["weight"] = 0
    assert summary(run(tmp_path / "b", spec, weigh).violations) == [
        ("toy.item.weight", "shelves/s0.json", "$.items[1].weight", "is 0, expected more than 0")]


def test_for_each_bindings_and_pointer_templates(tmp_path):
    report = run(tmp_path, change=lambda d: d["stock.json"]["counts"].update(c=4))
    [violation] = report.violations
    assert summary([violation]) == [
        ("toy.item.count", "stock.json", "$.counts.c", "differs from the expected value")]
    assert (violation.expected, violation.actual) == (3, 4)
    assert violation.binding == "s1 / $.items[0]"  # default labels: name, else the location


def test_custom_message_template(tmp_path):
    def paint(docs):
        docs["shelves/s1.json"]["items"][0]["colour"] = "purple"
    report = run(tmp_path, change=paint)
    assert summary(report.violations) == [
        ("toy.item.colour", "shelves/s1.json", "$.items[0].colour", 'c has colour "purple"')]
    assert report.violations[0].expected == ["red", "green", "blue"]


def test_formula_per_each_document(tmp_path):
    report = run(tmp_path, change=lambda d: d["shelves/s0.json"].update(total=4))
    assert summary(report.violations) == [
        ("toy.shelf.total", "shelves/s0.json", "$",
         "'sum(items.*.count) == total' does not hold: 3 == 4")]
    assert report.violations[0].binding == "s0"


def test_generated_order_over_the_index(tmp_path):
    def add_shelf(docs):
        docs["index.json"]["shelves"].append({"name": "s2"})
        docs["shelves/s2.json"] = {"items": [], "total": 0}
    assert summary(run(tmp_path, change=add_shelf).violations) == [
        ("toy.index.shelves", "index.json", "index:$.shelves[*].name", 'unexpected "s2"')]


# --------------------------------------------------------------------------- document failures

def test_missing_document_is_one_violation_and_its_rules_are_skipped(tmp_path):
    def lose_stock(docs):
        docs["stock.json"] = None
        docs["shelves/s1.json"]["items"][0]["colour"] = "purple"  # other rules still run
    report = run(tmp_path, change=lose_stock)
    # reported when first needed (by toy.item.count, after toy.item.colour), and only once
    assert summary(report.violations) == [
        ("toy.item.colour", "shelves/s1.json", "$.items[0].colour", 'c has colour "purple"'),
        ("toy.stock.missing", "stock.json", None, "does not exist")]
    assert "stock.json" not in report.files


def test_missing_per_binding_document_is_one_violation_for_that_binding(tmp_path):
    def lose_shelf(docs):
        docs["shelves/s1.json"] = None
        docs["shelves/s0.json"]["total"] = 5
    report = run(tmp_path, change=lose_shelf)
    # the item iteration needs the shelf file first; no item or shelf rule reports s1 again
    assert summary(report.violations) == [
        ("toy.shelf.missing", "shelves/s1.json", None, "does not exist"),
        ("toy.shelf.total", "shelves/s0.json", "$",
         "'sum(items.*.count) == total' does not hold: 3 == 5")]
    assert [v.binding for v in report.violations] == ["s1", "s0"]


def test_broken_entry_document_is_the_only_violation(tmp_path):
    report = run(tmp_path, change=lambda d: d.update({"index.json": '{"schema": '}))
    assert [(v.rule, v.file) for v in report.violations] == [("toy.index.invalid-json",
                                                              "index.json")]
    assert report.violations[0].location == "line 1"


def test_path_from_matching_nothing(tmp_path):
    report = run(tmp_path, unshaped_base_spec(tmp_path),
                 change=lambda d: d["index.json"].pop("stock"))
    assert summary(report.violations) == [
        ("toy.stock.path-unresolved", None, "index:$.stock",
         "no path for document 'stock': index:$.stock matched nothing")]


def test_path_from_not_a_string(tmp_path):
    report = run(tmp_path, unshaped_base_spec(tmp_path),
                 change=lambda d: d["index.json"].update(stock=5))
    assert summary(report.violations) == [
        ("toy.stock.path-not-string", "index.json", "$.stock",
         "the path of document 'stock' is not a string")]
    assert report.violations[0].actual == 5


# strict JSON through the engine: the loader's code becomes "<document rule prefix>.<code>"
@pytest.mark.parametrize("text, rule, location, message", [
    ('{"counts": {"a": 1,\n "a": 2, "b": 2, "c": 3}}', "toy.stock.duplicate-key",
     "line 2, $.counts", "object at $.counts has the key 'a' more than once"),
    ('{"counts":\n {"a": NaN, "b": 2, "c": 3}}', "toy.stock.non-json-literal", "line 2",
     "NaN is not a JSON value"),
    ('{"counts": {"a": 1, "b": 2, "c": -Infinity}}', "toy.stock.non-json-literal", "line 1",
     "-Infinity is not a JSON value"),
    ('{"counts": {"a": 1,,}}', "toy.stock.invalid-json", "line 1",
     "invalid JSON: Expecting property name enclosed in double quotes (column 20)"),
    (b'\xef\xbb\xbf{"counts": {}}', "toy.stock.bom", "line 1",
     "JSON text starts with a UTF-8 byte order mark (RFC 8259 forbids it)"),
])
def test_strict_json_errors_through_the_engine(tmp_path, text, rule, location, message):
    report = run(tmp_path, change=lambda d: d.update({"stock.json": text}))
    assert summary(report.violations) == [(rule, "stock.json", location, message)]


@pytest.mark.parametrize("stock, rule, message", [
    ("/etc/passwd", "toy.stock.path-absolute",
     "path '/etc/passwd' is absolute; it must be relative to the root"),
    ("../stock.json", "toy.stock.path-dotdot", "path '../stock.json' contains '..'"),
    ("sub/../stock.json", "toy.stock.path-dotdot",
     "path 'sub/../stock.json' contains '..'"),
    ("./stock.json", "toy.stock.path-dot", "path './stock.json' contains a '.' segment"),
])
def test_path_confinement_by_syntax(tmp_path, stock, rule, message):
    outside = tmp_path / "stock.json"  # a real file just outside the root
    outside.write_text(json.dumps(DOCS["stock.json"]))
    report = run(tmp_path, change=lambda d: d["index.json"].update(stock=stock))
    assert [(v.rule, v.message) for v in report.violations] == [(rule, message)]


def test_path_confinement_symlink_escape(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(DOCS["stock.json"]))
    entry = write_docs(tmp_path / "docs", lambda d: d.update({"stock.json": None}))
    os.symlink(outside, tmp_path / "docs" / "stock.json")
    report = evaluate(base_spec(), entry)
    [violation] = report.violations
    assert (violation.rule, violation.file) == ("toy.stock.path-escape", "stock.json")
    assert violation.message.startswith(
        "path 'stock.json' resolves outside the root (to ")


def test_symlink_inside_the_root_is_followed(tmp_path):
    entry = write_docs(tmp_path / "docs", lambda d: d.update({"stock.json": None}))
    (tmp_path / "docs" / "data").mkdir()
    (tmp_path / "docs" / "data" / "stock.json").write_text(json.dumps(DOCS["stock.json"]))
    os.symlink("data/stock.json", tmp_path / "docs" / "stock.json")
    assert evaluate(base_spec(), entry).violations == []


def test_path_template_confinement(tmp_path):
    def rename(docs):
        docs["index.json"]["shelves"][1]["name"] = "../s1"
    report = run(tmp_path, change=rename)
    assert summary(report.violations) == [
        ("toy.index.shelves", "index.json", "index:$.shelves[*].name",
         'missing "s1"; unexpected "../s1"'),
        ("toy.shelf.path-dotdot", "shelves/../s1.json", None,
         "path 'shelves/../s1.json' contains '..'")]


# --------------------------------------------------------------------------- references

def with_codes(docs):
    codes = {"a": "R", "b": "G", "c": "B"}
    for rel in ("shelves/s0.json", "shelves/s1.json"):
        for item in docs[rel]["items"]:
            item["code"] = codes[item["sku"]]


FILTER_RULES = """
    constants:
      colour_codes:
        - {name: red, code: R}
        - {name: green, code: G}
        - {name: blue, code: B}
    rules:
      - id: toy.item.code
        description: An item's code is the code of its colour.
        for_each: item
        given: "item:$.code"
        assert: {equals: {ref: "constants:/colour_codes/[name={item.colour}]/code"}}
"""


def test_pointer_filter_segment(tmp_path):
    spec = case_spec(tmp_path, FILTER_RULES)
    assert run(tmp_path / "a", spec, with_codes).violations == []

    def miscode(docs):
        with_codes(docs)
        docs["shelves/s0.json"]["items"][1]["code"] = "R"
    [violation] = run(tmp_path / "b", spec, miscode).violations
    assert (violation.rule, violation.location, violation.expected, violation.actual) == (
        "toy.item.code", "$.items[1].code", "G", "R")

    def unknown_colour(docs):
        with_codes(docs)
        docs["shelves/s1.json"]["items"][0]["colour"] = "purple"
    assert summary(run(tmp_path / "c", spec, unknown_colour).violations) == [
        ("toy.item.code", None, "constants:/colour_codes/[name=purple]/code",
         "cannot evaluate: constants:/colour_codes/[name=purple]/code matched 0 places, "
         "expected exactly one")]


WHEN_RULES = """
    rules:
      - id: toy.item.red-count
        description: A red item has a count of at most 1.
        for_each: item
        when: {given: "item:$.colour", equals: red}
        given: "item:$.count"
        assert: {range: {max: 1}}
      - id: toy.item.flagged
        description: A flagged item is blue.
        for_each: item
        when: {given: "item:$.flag", present: true}
        given: "item:$.colour"
        assert: {equals: blue}
"""


def test_when_conditions(tmp_path):
    spec = case_spec(tmp_path, WHEN_RULES)
    assert run(tmp_path / "a", spec).violations == []

    def change(docs):
        docs["shelves/s0.json"]["items"][0]["count"] = 5   # red: checked
        docs["shelves/s0.json"]["items"][1]["count"] = 5   # green: not checked
        docs["shelves/s0.json"]["items"][1]["flag"] = 1    # flagged and green
        docs["shelves/s1.json"]["items"][0]["flag"] = 1    # flagged and blue
    assert summary(run(tmp_path / "b", spec, change).violations) == [
        ("toy.item.red-count", "shelves/s0.json", "$.items[0].count", "is 5, expected at most 1"),
        ("toy.item.flagged", "shelves/s0.json", "$.items[1].colour",
         "differs from the expected value")]


DEFAULT_RULES = """
    rules:
      - id: toy.item.max
        description: No item exceeds its shelf's max_count (2 where none is given).
        for_each: item
        given: "item:$.count"
        assert: {range: {max: {ref: "shelf_file:$.max_count", default: 2}}}
      - id: toy.item.max-strict
        description: Every shelf states max_count.
        for_each: item
        given: "item:$.count"
        assert: {range: {max: {ref: "shelf_file:$.max_count"}}}
"""


def test_ref_default_and_unresolved_ref(tmp_path):
    spec = case_spec(tmp_path, DEFAULT_RULES)
    report = run(tmp_path, spec, lambda d: d["shelves/s1.json"].update(max_count=2))
    assert summary(report.violations) == [
        ("toy.item.max", "shelves/s1.json", "$.items[0].count", "is 3, expected at most 2"),
        ("toy.item.max-strict", None, "shelf_file:$.max_count",
         "cannot evaluate: shelf_file:$.max_count matched 0 places, expected exactly one"),
        ("toy.item.max-strict", None, "shelf_file:$.max_count",
         "cannot evaluate: shelf_file:$.max_count matched 0 places, expected exactly one"),
        ("toy.item.max-strict", "shelves/s1.json", "$.items[0].count",
         "is 3, expected at most 2")]
    assert [v.binding for v in report.violations[1:3]] == ["s0 / $.items[0]", "s0 / $.items[1]"]


def test_a_default_never_makes_a_present_null_look_absent(tmp_path):
    """Issue 13: ``default`` stands in only for a place that is not there; a present null is
    null (here: not a bound, so the range cannot be evaluated, a violation, never a pass)."""
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.shelf.max
            description: A shelf's total is at most its max_count (3 where none is given).
            for_each: shelf
            given: "shelf_file:$.total"
            assert: {equals: {ref: "shelf_file:$.max_count", default: 3}}
    """)
    assert run(tmp_path / "absent", spec).violations == []
    report = run(tmp_path / "null", spec, lambda d: d["shelves/s1.json"].update(max_count=None))
    assert [(v.rule, v.file, v.location, v.expected, v.actual) for v in report.violations] == [
        ("toy.shelf.max", "shelves/s1.json", "$.total", None, 3)]


def test_ref_matching_several_places_without_all(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.index.first
            description: The schema is a shelf name (wrongly written without all).
            given: "index:$.schema"
            assert: {one_of: [{ref: "index:$.shelves[*].name"}]}
    """)
    assert summary(run(tmp_path, spec).violations) == [
        ("toy.index.first", None, "index:$.shelves[*].name",
         "cannot evaluate: index:$.shelves[*].name matched 2 places, expected exactly one")]


def test_ref_all(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.catalogued
            description: Every sku is in the index catalogue.
            for_each: item
            given: "item:$.sku"
            assert: {one_of: {ref: "index:$.catalogue[*]", all: true}}
    """)
    assert run(tmp_path / "a", spec,
               lambda d: d["index.json"].update(catalogue=["a", "b", "c"])).violations == []
    report = run(tmp_path / "b", spec, lambda d: d["index.json"].update(catalogue=["a", "c"]))
    assert summary(report.violations) == [
        ("toy.item.catalogued", "shelves/s0.json", "$.items[1].sku",
         "is not one of the allowed values")]
    assert report.violations[0].expected == ["a", "c"]
    # all: true over nothing is the empty list, not an error
    report = run(tmp_path / "c", spec)
    assert [(v.rule, v.expected) for v in report.violations] == [("toy.item.catalogued", [])] * 3


def test_template_argument_with_binding_and_ref_placeholders(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.shelf.title
            description: A shelf's title names the shelf and the schema.
            for_each: shelf
            given: "shelf_file:$.title"
            assert: {equals: {template: "{shelf.name} of {index:$.schema} #{shelf@index}"}}
    """)

    def titles(docs):
        docs["shelves/s0.json"]["title"] = "s0 of toy-inventory-v1 #0"
        docs["shelves/s1.json"]["title"] = "s1 of toy-inventory-v1 #0"
    report = run(tmp_path, spec, titles)
    assert summary(report.violations) == [
        ("toy.shelf.title", "shelves/s1.json", "$.title", "differs from the expected value")]
    assert report.violations[0].expected == "s1 of toy-inventory-v1 #1"


def test_at_pins_a_binding(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.index.last-total
            description: The index repeats the second shelf's total.
            given: "index:$.last_total"
            assert: {equals: {ref: "shelf_file:$.total", at: {shelf: 1}}}
          - id: toy.shelf.first
            description: A shelf names its first item's sku.
            for_each: shelf
            given: "shelf_file:$.first"
            assert: {equals: {ref: "item:$.sku", at: {item: 0}}}
    """)

    def annotate(docs):
        docs["index.json"]["last_total"] = 3
        docs["shelves/s0.json"]["first"] = "a"
        docs["shelves/s1.json"]["first"] = "c"
    assert run(tmp_path / "a", spec, annotate).violations == []

    def misannotate(docs):
        annotate(docs)
        docs["shelves/s1.json"]["total"] = 4
        docs["shelves/s1.json"]["items"][0]["count"] = 4
        docs["shelves/s0.json"]["first"] = "b"
    report = run(tmp_path / "b", spec, misannotate)
    assert [(v.rule, v.location, v.expected, v.actual) for v in report.violations] == [
        ("toy.index.last-total", "$.last_total", 4, 3),
        ("toy.shelf.first", "$.first", "a", "b")]


def test_at_pin_out_of_range_is_not_a_silent_pass(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.index.third-total
            description: The index repeats the third shelf's total.
            given: "index:$.last_total"
            assert: {equals: {ref: "shelf_file:$.total", at: {shelf: 2}}}
    """)
    report = run(tmp_path, spec, lambda d: d["index.json"].update(last_total=3))
    assert [v.rule for v in report.violations] == ["toy.index.third-total"]


def test_document_and_binding_metadata(tmp_path):
    labelled = TOY_HEADER.replace(
        'shelf: {over: "index:$.shelves[*]"}',
        'shelf: {over: "index:$.shelves[*]", label: "shelf {shelf.name}"}').replace(
        'parent: shelf}', 'parent: shelf, label: "{shelf.name}/{item.sku}"}')
    assert labelled.count("label:") == 2
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.stock.digest
            description: The index records the stock file's SHA-256.
            given: "index:$.stock_sha256"
            assert: {equals: {ref: "stock:@sha256"}}
          - id: toy.stock.path
            description: The stock document is stock.json.
            given: "stock:@path"
            assert: {equals: stock.json}
          - id: toy.stock.size
            description: The stock file is small.
            given: "stock:@size"
            assert: {range: {max: 10}}
          - id: toy.item.label
            description: Items are labelled shelf/sku.
            for_each: item
            given: "item:@label"
            assert: {one_of: [s0/a, s0/b]}
          - id: toy.item.index
            description: Only first items.
            for_each: item
            given: "item:@index"
            assert: {equals: 0}
    """, header=labelled)
    digest = sha256(DOCS["stock.json"])
    report = run(tmp_path, spec, lambda d: d["index.json"].update(stock_sha256="0" * 64))
    assert [(v.rule, v.file, v.location, v.expected, v.actual, v.binding)
            for v in report.violations] == [
        ("toy.stock.digest", "index.json", "$.stock_sha256", digest, "0" * 64, None),
        ("toy.stock.size", "stock.json", "@size", {"max": 10},
         len(json.dumps(DOCS["stock.json"])), None),
        ("toy.item.label", "shelves/s1.json", "@label", ["s0/a", "s0/b"], "s1/c",
         "shelf s1 / s1/c"),
        ("toy.item.index", "shelves/s0.json", "@index", 0, 1, "shelf s0 / s0/b")]


def test_identities_are_reported(tmp_path):
    spec = case_spec(tmp_path, """
        identities:
          schema: {ref: "index:$.schema"}
          stock_sha256: {ref: "stock:@sha256"}
          shelves: {names: {ref: "index:$.shelves[*].name", all: true}}
          absent: {ref: "index:$.nope"}
        rules: []
    """)
    report = run(tmp_path, spec)
    assert report.identities == {"schema": "toy-inventory-v1",
                                 "stock_sha256": sha256(DOCS["stock.json"]),
                                 "shelves": {"names": ["s0", "s1"]}, "absent": None}


# --------------------------------------------------------------------------- severity, messages

def test_warning_severity_goes_to_warnings(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.even
            description: Counts are preferably at most 2.
            severity: warning
            for_each: item
            given: "item:$.count"
            assert: {range: {max: 2}}
    """)
    report = run(tmp_path, spec)
    assert report.violations == [] and report.ok
    assert [(v.rule, v.severity, v.location) for v in report.warnings] == [
        ("toy.item.even", "warning", "$.items[0].count")]


def test_message_placeholders(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.small
            description: Counts are at most 2.
            for_each: item
            given: "item:$.count"
            assert: {range: {max: 2}}
            message: "{file} {location} {shelf.name}#{item@index} {item.sku}: {detail} ({expected} / {actual})"
    """)
    assert [v.message for v in run(tmp_path, spec).violations] == [
        'shelves/s1.json $.items[0].count s1#0 c: is 3, expected at most 2 ({"max": 2} / 3)']


def test_message_reference_placeholder_is_rendered(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.small
            description: Counts are at most 2.
            for_each: item
            given: "item:$.count"
            assert: {range: {max: 2}}
            message: "{index:$.schema}: {detail}"
    """)
    assert [v.message for v in run(tmp_path, spec).violations] == [
        "toy-inventory-v1: is 3, expected at most 2"]


# --------------------------------------------------------------------------- skips and bindings

def test_unfillable_pointer_placeholder_is_not_a_silent_pass(tmp_path):
    report = run(tmp_path, unshaped_base_spec(tmp_path),
                 change=lambda d: d["shelves/s1.json"]["items"][0].pop("sku"))
    assert [v.rule for v in report.violations] == ["toy.item.count"]


def test_unfillable_path_template_is_not_a_silent_pass(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.shelf.total
            description: The shelf total adds up.
            for_each: shelf
            given: "shelf_file:$"
            assert: {formula: "sum(items.*.count) == total"}
    """)
    report = run(tmp_path, spec, lambda d: d["index.json"]["shelves"][1].pop("name"))
    assert [v.rule for v in report.violations if v.rule.startswith("toy.shelf.")]


def test_document_failure_binding_is_the_documents_own(tmp_path):
    """Not the binding of the rule that happened to load it first (an item here)."""
    report = run(tmp_path, change=lambda d: d.update({"stock.json": None}))
    assert [(v.rule, v.binding) for v in report.violations] == [("toy.stock.missing", None)]

    def break_shelf(docs):
        docs["shelves/s1.json"] = "{"
    report = run(tmp_path / "b", change=break_shelf)
    assert [(v.rule, v.binding) for v in report.violations] == [("toy.shelf.invalid-json", "s1")]


# --------------------------------------------------------------------------- the reference spec

INVENTORY = TOY / "inventory"


def inventory(root: Path, change=None, *, refresh: bool = True) -> Path:
    """A copy of toy/inventory under ``root`` after ``change(files)``; the index's digests are
    recomputed unless ``refresh`` is false (so only the rule under test fires)."""
    files = {}
    for path in sorted(INVENTORY.rglob("*")):
        if path.is_file():
            rel = path.relative_to(INVENTORY).as_posix()
            files[rel] = json.loads(path.read_text()) if rel.endswith(".json") else \
                path.read_text()
    if change:
        change(files)
    texts = {rel: json.dumps(value, indent=2) + "\n" if rel.endswith(".json") else value
             for rel, value in files.items() if value is not None}
    if refresh:
        digests = {rel: hashlib.sha256(texts[rel].encode()).hexdigest() for rel in texts}
        index = files["index.json"]
        index["files"] = {rel: digests[rel] for rel in index["files"] if rel in digests}
        if "stock.json" in digests:
            index["stock_sha256"] = digests["stock.json"]
        texts["index.json"] = json.dumps(index, indent=2) + "\n"
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root / "index.json"


def reference_spec():
    library = SpecLibrary([TOY])
    return compile_spec(resolve(library.get("toy/reference"), library))


def test_the_reference_spec_passes_on_the_reference_inventory():
    report = evaluate(reference_spec(), INVENTORY / "index.json")
    assert report.violations == [] and report.warnings == []
    assert sorted(report.files) == ["index.json", "notes.txt", "shelves/s0.json",
                                    "shelves/s1.json", "stock.json"]
    assert report.identities == {
        "schema": "toy-inventory-v1",
        "stock_sha256": hashlib.sha256((INVENTORY / "stock.json").read_bytes()).hexdigest(),
        "shelves": ["s0", "s1"]}


def item(files, shelf, index):
    return files[f"shelves/{shelf}.json"]["items"][index]


@pytest.mark.parametrize("change, fired", [
    # the counts-copy note is allowed only while the schema is right
    (lambda f: f["index.json"].update(schema="toy-v2"),
     ["toy.index.counts-copy", "toy.index.schema"]),
    (lambda f: f["index.json"].update(shelves={}),
     ["toy.index.files.extra-entry", "toy.index.shelf-names-unique", "toy.index.shelves",
      "toy.index.shelves-type"]),
    (lambda f: f["index.json"]["shelves"][1].update(name="s0"),
     ["toy.index.files.extra-entry", "toy.index.shelves", "toy.index.shelf-names-unique",
      "toy.shelf.entry"]),
    (lambda f: f["index.json"]["counts_copy"].update(d=1), ["toy.index.counts-copy"]),
    (lambda f: f["stock.json"]["counts"].update(d=1),
     ["toy.index.counts-copy", "toy.stock.count", "toy.stock.positive", "toy.stock.keys"]),
    (lambda f: f["stock.json"]["counts"].update(c=3.5),
     ["toy.index.counts-copy", "toy.stock.integral", "toy.item.count"]),
    (lambda f: f["stock.json"].update(updated=[1, 5, 5]), ["toy.stock.updated"]),
    (lambda f: f["shelves/s1.json"].update(title="Rack s1"),
     ["toy.shelf.title", "toy.shelf.title-prefix"]),
    (lambda f: f["index.json"]["shelves"][0].update(position=1), ["toy.shelf.position"]),
    (lambda f: f["shelves/s0.json"].update(total=4, mean=2.0),
     ["toy.shelf.total", "toy.shelf.same-total"]),
    (lambda f: f["shelves/s0.json"].update(mean=1.50001), ["toy.shelf.mean"]),
    (lambda f: f["shelves/s1.json"].update(max_count=0), ["toy.shelf.max-count",
                                                          "toy.item.max"]),
    (lambda f: f["shelves/s1.json"].update(legacy=True), ["toy.shelf.no-legacy"]),
    (lambda f: item(f, "s0", 0).update(colour="purple"), ["toy.item.colour", "toy.item.code"]),
    (lambda f: item(f, "s0", 1).update(code="R"), ["toy.item.code"]),
    (lambda f: item(f, "s1", 0).update(sku="x"), ["toy.item.count", "toy.item.not-x"]),
    (lambda f: item(f, "s1", 0).update(sku="C"), ["toy.item.count", "toy.item.sku"]),
    (lambda f: f.update({"notes.txt": "Notes.\n"}), ["toy.notes.title"]),
    (lambda f: f.update({"notes.txt": None}), ["document.notes.missing"]),
    (lambda f: f.update({"shelves/s1.json": None}),
     ["toy.index.files.missing-entry", "toy.shelf.missing"]),
])
def test_every_reference_rule_can_fail(tmp_path, change, fired):
    report = evaluate(reference_spec(), inventory(tmp_path, change))
    assert sorted({v.rule for v in report.violations}) == sorted(fired)


def test_reference_digest_and_manifest_rules(tmp_path):
    report = evaluate(reference_spec(), inventory(
        tmp_path / "a", lambda f: f["index.json"].update(stock_sha256="0" * 64), refresh=False))
    assert [(v.rule, v.location, v.actual) for v in report.violations] == [
        ("toy.index.stock-sha256", "$.stock_sha256", "0" * 64)]

    def add_note(files):
        files["stock.json"]["counts"]["c"] = 3  # same value, other bytes after the digest
    entry = inventory(tmp_path, add_note)
    (tmp_path / "stock.json").write_text(json.dumps({"counts": {"a": 1, "b": 2, "c": 3},
                                                     "updated": [1, 5, 9]}))
    report = evaluate(reference_spec(), entry)
    assert [(v.rule, v.location) for v in report.violations] == [
        ("toy.index.stock-sha256", "$.stock_sha256"),
        ("toy.index.files.digest", "$.files['stock.json']")]

    def extra_entry(files):
        files["index.json"]["files"]["notes.txt"] = "0" * 64
    report = evaluate(reference_spec(), inventory(tmp_path / "b", extra_entry, refresh=False))
    assert [(v.rule, v.location) for v in report.violations] == [
        ("toy.index.files.extra-entry", "$.files['notes.txt']")]


def test_reference_warning_only(tmp_path):
    def crowd(files):
        files["shelves/s1.json"]["items"] += [
            {"sku": "c", "colour": "blue", "code": "B", "count": 0}] * 10
    report = evaluate(reference_spec(), inventory(tmp_path, crowd))
    assert [(v.rule, v.severity, v.location, v.binding) for v in report.warnings] == [
        ("toy.shelf.small", "warning", "$.items", "shelf s1")]
    # (the ten extra items also break the counts, the mean and the minimum count)
    assert sorted({v.rule for v in report.violations}) == [
        "toy.item.count", "toy.item.max", "toy.shelf.mean"]


def test_unfillable_iteration_label_does_not_crash(tmp_path):
    labelled = TOY_HEADER.replace('shelf: {over: "index:$.shelves[*]"}',
                                  'shelf: {over: "index:$.shelves[*]", label: "shelf {shelf.name}"}')
    spec = case_spec(tmp_path, "rules: []\n", header=labelled)
    report = run(tmp_path, spec, lambda d: d["index.json"]["shelves"][1].pop("name"))
    assert report.spec_id == "toy/case"


def test_at_previous_pins_the_sibling_before_the_bound_element(tmp_path):
    """`at: {shelf: previous}` reads the previous shelf's file; the first shelf has none."""
    import json as _json

    root = tmp_path / "docs"
    (root / "shelves").mkdir(parents=True)
    (root / "index.json").write_text(_json.dumps(
        {"shelves": [{"name": "s0"}, {"name": "s1"}, {"name": "s2"}]}))
    for name, total in (("s0", 1), ("s1", 1), ("s2", 5)):
        (root / "shelves" / f"{name}.json").write_text(_json.dumps({"total": total}))
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "s.yaml").write_text("""
flarespec: 1
id: toy/previous
title: previous sibling
documents:
  index: {loader: json, entry: true}
  shelf_file: {loader: json, each: shelf, path: "shelves/{shelf.name}.json"}
iterations:
  shelf: {over: "index:$.shelves[*]"}
rules:
  - id: toy.shelf.same-total-as-previous
    description: A shelf's total equals the previous shelf's.
    for_each: shelf
    given: "shelf_file:$.total"
    assert: {equals: {ref: "shelf_file:$.total", at: {shelf: previous}}}
""")
    from flarespec.engine.evaluate import evaluate
    from flarespec.compiler.compile import compile_spec
    from flarespec.compiler.load import SpecLibrary
    from flarespec.compiler.resolve import resolve

    library = SpecLibrary([spec_dir])
    report = evaluate(compile_spec(resolve(library.get("toy/previous"), library)),
                      root / "index.json")
    found = [(v.rule, v.file, v.binding, v.message) for v in report.violations]
    assert found == [
        ("toy.shelf.same-total-as-previous", None, "s0",
         "cannot evaluate: shelf has no element -1 here (3 elements)"),
        ("toy.shelf.same-total-as-previous", "shelves/s2.json", "s2",
         "differs from the expected value"),
    ]


# --------------------------------------------------------------------------- requires

REQUIRES_RULES = """
    rules:
      - id: toy.shelf.has-items
        description: A shelf lists at least two items.
        for_each: shelf
        given: "shelf_file:$.items"
        assert: {length: {min: 2}}
      - id: toy.shelf.total
        description: The shelf total adds up (meaningless on a short shelf).
        for_each: shelf
        requires: [toy.shelf.has-items]
        given: "shelf_file:$"
        assert: {formula: "sum(items.*.count) == total + 1"}
      - id: toy.item.red
        description: Items are red (checked only on shelves with items).
        for_each: item
        requires: [toy.shelf.total]
        given: "item:$.colour"
        assert: {equals: red}
"""


def test_requires_skips_a_rule_where_a_required_rule_failed(tmp_path):
    """One cause, one violation: s1 is short, so its total and (transitively) its items are
    not checked; s0 is checked by all three rules (an enclosing binding's failure skips a
    rule over an inner iteration, a failure elsewhere does not)."""
    spec = case_spec(tmp_path, REQUIRES_RULES)
    report = run(tmp_path, spec)
    assert [(v.rule, v.binding) for v in report.violations] == [
        ("toy.shelf.has-items", "s1"),
        ("toy.shelf.total", "s0"),
    ]

    def pad(docs):  # s0's total is right now: its items are checked (a-b: green fails)
        docs["shelves/s0.json"]["total"] = 2
    report = run(tmp_path / "b", spec, pad)
    assert [(v.rule, v.binding) for v in report.violations] == [
        ("toy.shelf.has-items", "s1"), ("toy.item.red", "s0 / $.items[1]")]


def test_a_rule_runs_after_the_rules_it_requires(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.shelf.total
            description: The shelf total adds up.
            for_each: shelf
            requires: [toy.shelf.has-items]
            given: "shelf_file:$"
            assert: {formula: "sum(items.*.count) == total + 1"}
          - id: toy.shelf.has-items
            description: A shelf lists at least two items.
            for_each: shelf
            given: "shelf_file:$.items"
            assert: {length: {min: 2}}
    """)
    assert [rule.id for rule in spec.rules] == ["toy.shelf.has-items", "toy.shelf.total"]
    assert [(v.rule, v.binding) for v in run(tmp_path, spec).violations] == [
        ("toy.shelf.has-items", "s1"), ("toy.shelf.total", "s0")]


@pytest.mark.parametrize("requires, code, message", [
    ("[toy.shelf.nope]", "spec.requires-unknown",
     "requires names 'toy.shelf.nope', which is no rule of this spec (did you mean "
    "'toy.shelf.other'?)"),
    ("[toy.item.red]", "spec.requires-scope",
     "requires names 'toy.item.red', which runs for each item; a required rule must run once "
     "or over an iteration that encloses this rule's (shelf)"),
    ("[toy.shelf.total]", "spec.requires-unknown",
     "requires names 'toy.shelf.total', which is itself"),
    ("[toy.shelf.other]", "spec.requires-cycle",
     "rule 'toy.shelf.other' requires 'toy.shelf.total', which requires it in turn (a cycle)"),
    ("[toy.shelf.hint]", "spec.requires-severity",
     "requires names 'toy.shelf.hint', a warning; an error rule may only require error rules"),
])
def test_requires_is_checked_at_load_with_file_line_and_column(tmp_path, requires, code,
                                                                message):
    from flarespec.compiler.errors import SpecInvalid

    with pytest.raises(SpecInvalid) as caught:
        case_spec(tmp_path, f"""
            rules:
              - id: toy.shelf.total
                description: The shelf total adds up.
                for_each: shelf
                requires: {requires}
                given: "shelf_file:$"
                assert: {{formula: "sum(items.*.count) == total"}}
              - id: toy.shelf.other
                description: Another shelf rule.
                for_each: shelf
                requires: [toy.shelf.total]
                given: "shelf_file:$.total"
                assert: {{type: integer}}
              - id: toy.item.red
                description: Items are red.
                for_each: item
                given: "item:$.colour"
                assert: {{equals: red}}
              - id: toy.shelf.hint
                description: Shelves are short (only a hint).
                severity: warning
                for_each: shelf
                given: "shelf_file:$.items"
                assert: {{length: {{max: 1}}}}
        """)
    found = [(issue.code, issue.message) for issue in caught.value.issues]
    assert found == [(code, message)]
    mark = caught.value.issues[0].mark
    expected_line = 22 if code == "spec.requires-cycle" else 16  # the requires line
    assert (mark.file.endswith("case.yaml"), mark.line) == (True, expected_line)


# --------------------------------------------------------------------------- what a person reads

ORIGIN_RULES = """
    rules:
      - id: toy.item.count
        description: Stock counts agree with the shelf.
        for_each: item
        given: "stock:/counts/{item.sku}"
        assert: {equals: {ref: "shelf_file:/items/{item@index}/count"}}
      - id: toy.item.mirror
        description: The index mirrors each item's sku and colour; its count is 1.
        for_each: item
        given: "index:/mirror/{item.sku}"
        assert:
          includes:
            sku: {ref: "item:$.sku"}
            colour: {ref: "item:$.colour"}
            count: 1
      - id: toy.shelf.copy
        description: The index holds a copy of each shelf.
        for_each: shelf
        given: "index:/copies/{shelf.name}"
        assert: {same_as: {other: {ref: "shelf_file:$"}}}
      - id: toy.item.max
        description: No count exceeds the index's maximum.
        for_each: item
        given: "item:$.count"
        assert: {range: {max: {ref: "index:$.max"}}}
"""


def mirrored(docs):
    docs["index.json"]["max"] = 5
    docs["index.json"]["mirror"] = {item["sku"]: {"sku": item["sku"], "colour": item["colour"],
                                                  "count": 1}
                                    for rel in ("shelves/s0.json", "shelves/s1.json")
                                    for item in docs[rel]["items"]}
    docs["index.json"]["copies"] = {"s0": copy.deepcopy(docs["shelves/s0.json"]),
                                    "s1": copy.deepcopy(docs["shelves/s1.json"])}


def test_expected_from_names_the_file_and_place_an_expected_value_was_read(tmp_path):
    spec = case_spec(tmp_path, ORIGIN_RULES)
    assert run(tmp_path / "a", spec, mirrored).violations == []

    def break_all(docs):
        mirrored(docs)
        docs["stock.json"]["counts"]["c"] = 4
        docs["index.json"]["mirror"]["b"].update(colour="grey", count=2)
        docs["index.json"]["copies"]["s1"]["items"][0]["count"] = 9
        docs["index.json"]["max"] = 2
    report = run(tmp_path / "b", spec, break_all)
    found = [(v.rule, v.file, v.location, v.expected, v.actual, v.expected_from)
             for v in report.violations]
    assert found == [
        ("toy.item.count", "stock.json", "$.counts.c", 3, 4,
         {"file": "shelves/s1.json", "location": "$.items[0].count"}),
        ("toy.item.mirror", "index.json", "$.mirror.b.colour", "green", "grey",
         {"file": "shelves/s0.json", "location": "$.items[1].colour"}),
        ("toy.item.mirror", "index.json", "$.mirror.b.count", 1, 2, None),  # a literal
        ("toy.shelf.copy", "index.json", "$.copies.s1.items[0].count", 3, 9,
         {"file": "shelves/s1.json", "location": "$.items[0].count"}),
        ("toy.item.max", "shelves/s1.json", "$.items[0].count", {"max": 2}, 3,
         {"file": "index.json", "location": "$.max"}),
    ]
    assert report.violations[0].as_dict()["expected_from"] == {
        "file": "shelves/s1.json", "location": "$.items[0].count"}
    assert "expected_from" not in report.violations[2].as_dict()


def test_expected_from_of_a_pointer_default_names_where_it_looked(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.weight
            description: The stock lists the item's weight, 0 when the item has none.
            for_each: item
            given: "stock:/weights/{item.sku}"
            assert: {equals: {ref: "item:/weight", default: 0}}
    """)
    report = run(tmp_path, spec, lambda d: d["stock.json"].update(
        weights={"a": 0, "b": 0, "c": 7}))
    [violation] = report.violations
    assert (violation.location, violation.expected, violation.actual, violation.expected_from) \
        == ("$.weights.c", 0, 7, {"file": "shelves/s1.json", "location": "$.items[0].weight"})


def test_message_fields_name_both_files(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.count
            description: Stock counts agree with the shelf.
            for_each: item
            given: "stock:/counts/{item.sku}"
            assert: {equals: {ref: "shelf_file:/items/{item@index}/count"}}
            message: "{file} {location} is {actual}; the shelf {expected_file} ({expected_location}, line {expected_line}) says {expected}"
    """)
    report = run(tmp_path, spec, lambda d: d["stock.json"]["counts"].update(c="4"))
    assert [v.message for v in report.violations] == [
        'stock.json $.counts.c is "4"; the shelf shelves/s1.json ($.items[0].count, line ?) '
        'says 3']


def test_message_members_of_values_and_unfillable_placeholders(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.shelf.first
            description: The first item is a red a.
            for_each: shelf
            given: "shelf_file:$.items[0]"
            assert: {equals: {sku: a, colour: red, count: 1}}
            message: "{shelf.name}: {actual.sku} ({actual.nope}) at {location}, expected {expected}"
    """)
    [violation] = run(tmp_path, spec).violations
    assert violation.message == ('s1: "c" ({actual.nope}) at $.items[0], expected '
                                 '{"sku": "a", "colour": "red", "count": 1}')


def test_nothing_found_names_the_filled_reference(tmp_path):
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.stocked
            description: Every item has a stock count.
            for_each: item
            given: "stock:/counts/{item.sku}"
            assert: {type: integer}
    """)
    report = run(tmp_path, spec, lambda d: d["stock.json"]["counts"].pop("b"))
    assert summary(report.violations) == [
        ("toy.item.stocked", "stock.json", "stock:/counts/b", "nothing found at stock:/counts/b")]


def test_lines_are_looked_up_only_for_reported_failures(tmp_path, monkeypatch):
    """The loader's line lookup runs on the failure path only, its answer lands in the
    violation, and a lookup that breaks costs the line, never the verdict."""
    from flarespec.engine import describe as module  # where line lookups are made

    asked = []

    def locate(loader, value, location, lines=None):
        asked.append((loader, location))
        return 42
    monkeypatch.setattr(module, "locate_line", locate)
    monkeypatch.setattr(module, "locates_lines", lambda loader: True)  # json too, here
    report = run(tmp_path, change=lambda d: d["stock.json"]["counts"].update(c=4))
    assert sorted(asked) == [("json", "$.counts.c"), ("json", "$.items[0].count")]  # + origin
    assert [(v.rule, v.line) for v in report.violations] == [("toy.item.count", 42)]
    assert report.violations[0].as_dict()["line"] == 42

    def broken(loader, value, location):
        raise RuntimeError("bug in a line lookup")
    monkeypatch.setattr(module, "locate_line", broken)
    report = run(tmp_path / "b", change=lambda d: d["stock.json"]["counts"].update(c=4))
    assert [(v.rule, v.line) for v in report.violations] == [("toy.item.count", None)]
    assert "line" not in report.violations[0].as_dict()


def test_violations_past_the_cap_are_counted_not_described(tmp_path, monkeypatch):
    """Beyond the report's cap a violation is only counted: no message, label, line or
    expected_from is worked out for it (a million failing elements stay cheap)."""
    from flarespec.engine import evaluate as module
    from flarespec.engine.outcome import MAX_KEPT_PER_RULE

    from flarespec.engine.describe import Reporter

    described = []
    real = Reporter.described
    monkeypatch.setattr(Reporter, "described",
                        lambda self, rule, *rest: described.append(rule.id) or real(self, rule, *rest))
    labels = []
    real_label = Bindings._render_label
    monkeypatch.setattr(Bindings, "_render_label",
                        lambda self, binding: labels.append(1) or real_label(self, binding))
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.item.small
            description: Counts are at most 2.
            for_each: item
            given: "item:$.count"
            assert: {range: {max: 2}}
    """)
    many = MAX_KEPT_PER_RULE * 3

    def crowd(docs):
        docs["shelves/s1.json"]["items"] = [{"sku": "c", "colour": "blue", "count": 3}] * many
    report = run(tmp_path, spec, crowd)
    assert len(report.violations) == MAX_KEPT_PER_RULE
    assert report.suppressed == {"toy.item.small": many - MAX_KEPT_PER_RULE}
    assert len(described) == MAX_KEPT_PER_RULE
    assert len(labels) == MAX_KEPT_PER_RULE + 1  # each kept violation's item, shelf s1 once
