"""Issue 25: a catalog names what it breaks by identity, never by position. The names'
selections (by key or property, ``first``), computed values (``formula``), members of a name,
names that are gone (the case does not apply), and the mutations that select list items by
identity (``index: {id: ...}``, ``swap_list_items``, ``delete_keys``). Targets (files of a
written packet) are tested over the bundled spec in tests/flare/test_flare_catalog_identity.py."""

from __future__ import annotations

import json

import pytest

from flarespec.fixtures.catalog import Case, CaseNotApplicable, CatalogError, expand_case, \
    resolve_names
from flarespec.fixtures.mutations import MutationError, apply_mutation

MATRIX = [
    {"kind": "a", "requests": 1, "concurrency": 1, "size": 512},
    {"kind": "b", "requests": 3, "concurrency": 1, "size": 4096},
    {"kind": "c", "requests": 2, "concurrency": 2, "size": 512},
    {"kind": "d", "requests": 4, "concurrency": 4, "size": 512},
]
CONSTANTS = {"matrix": MATRIX, "chosen": ["b", "d"], "tol": 1e-12,
             "formula": "size * 1e9 / summary.ttft",
             "laws": [{"total": "pages", "parts": ["free", "used"]}]}


def names(**given) -> dict:
    return resolve_names(given, CONSTANTS)


def kind(where: dict, first: bool = False) -> dict:
    return {"select": "matrix", "where": where, "field": "kind", **({"first": True} if first else {})}


@pytest.mark.parametrize("where, first, expected", [
    ({"kind": "c"}, False, "c"),                                   # by key
    ({"concurrency": {"min": 2}, "requests": {"max": 2}}, False, "c"),  # by property
    ({"kind": {"in": "${chosen}"}, "requests": {"min": 4}}, False, "d"),
    ({"kind": {"in": "${chosen}", "not": "b"}}, False, "d"),
    ({"kind": {"not_in": ["a", "b", "c"]}}, False, "d"),
    ({"concurrency": 1}, True, "a"),                               # several: first takes any
])
def test_a_record_is_selected_by_key_or_property(where, first, expected):
    assert names(k=kind(where, first))["k"] == expected


def test_a_selection_survives_an_inserted_row():
    """What ``${matrix.1.kind}`` cannot do: a row inserted before the one meant."""
    wider = dict(CONSTANTS, matrix=[MATRIX[0], {"kind": "z", "requests": 1, "concurrency": 8,
                                                 "size": 1}] + MATRIX[1:])
    chosen = kind({"kind": {"in": "${chosen}"}, "requests": {"min": 2}}, first=True)
    assert resolve_names({"k": chosen}, wider)["k"] == resolve_names({"k": chosen}, CONSTANTS)["k"] == "b"


def test_several_records_without_first_is_a_catalog_error():
    with pytest.raises(CatalogError, match=r"names.k: .*2 records of matrix have concurrency 1, "
                                           r"expected exactly one \(first: true takes any\)"):
        names(k=kind({"concurrency": 1}))


def test_a_selection_that_finds_nothing_makes_its_cases_not_applicable():
    """The name is gone: a case that uses it (directly or through another name) does not
    apply, with the reason; one that does not use it is unaffected."""
    resolved = names(gone=kind({"kind": "decode-c9"}),
                     group={"format": "r0.{k}", "k": "${gone}"}, other="${matrix.0.kind}")
    using = Case("uses", "d", mutate=[{"op": "remove_file", "file": "${group}/x.json"}],
                 expect={"rejected_by": ["x"]})
    with pytest.raises(CaseNotApplicable, match=r"^names.gone: matrix has no record with kind "
                                                 r"'decode-c9'$"):
        expand_case(using, CONSTANTS, resolved)
    unaffected = Case("other", "d", mutate=[{"op": "remove_file", "file": "${other}/x.json"}],
                      expect={"rejected_by": ["x"]})
    assert expand_case(unaffected, CONSTANTS, resolved).mutate[0]["file"] == "a/x.json"


def test_expected_values_are_computed_from_the_constants():
    """The spec's own formula over the values a case sets: never a number spelled for one
    prompt length."""
    resolved = names(size={"select": "matrix", "where": {"kind": "b"}, "field": "size"},
                     ttft={"formula": "n * 1000", "of": {"n": "${size}"}},
                     value={"formula": "${formula}", "of": {"size": "${size}",
                                                            "summary": {"ttft": "${ttft}"}}},
                     whole={"formula": "${formula}", "integer": True,
                            "of": {"size": "${size}", "summary": {"ttft": "${ttft}"}}},
                     within={"formula": "v * (1 + tol / 10)", "of": {"v": "${value}", "tol": "${tol}"}})
    assert resolved["ttft"] == 4096000 and type(resolved["ttft"]) is int
    assert resolved["value"] == 1e6 and type(resolved["value"]) is float
    assert resolved["whole"] == 1000000 and type(resolved["whole"]) is int
    assert resolved["within"] != 1e6 and abs(resolved["within"] / 1e6 - 1) < 1e-12


@pytest.mark.parametrize("value, message", [
    ({"formula": "n > 1", "of": {"n": 2}}, "compares"),
    ({"formula": "n * 2", "of": {}}, "cannot fill"),
    ({"formula": "n / 3", "of": {"n": 1}, "integer": True}, "not a whole number"),
    ({"formula": "n +", "of": {"n": 1}}, "formula 'n \\+'"),
])
def test_a_formula_that_computes_no_number_is_a_catalog_error(value, message):
    with pytest.raises(CatalogError, match=message):
        names(x=value)


def test_a_name_s_member_is_read_by_a_dotted_name():
    resolved = names(law={"select": "laws", "where": {"total": "pages"}},
                     free="${law.parts.0}")
    assert resolved["free"] == "free"
    with pytest.raises(CatalogError, match=r"name law has no member parts.5"):
        names(law={"select": "laws", "where": {"total": "pages"}}, free="${law.parts.5}")


def test_a_target_name_needs_the_spec_and_a_packet():
    resolved = names(file={"document": "item"})
    case = Case("c", "d", mutate=[{"op": "remove_file", "file": "${file}"}], expect={"accept": True})
    with pytest.raises(CatalogError, match=r"names a document: expanded only for a spec"):
        expand_case(case, CONSTANTS, resolved)


# ------------------------------------------------------------------ list items by identity


@pytest.fixture
def root(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps({"rows": [
        {"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "c", "n": 3}],
        "files": {"x": "1", "y": "2", "z": "3"}}))
    return tmp_path


def rows(root) -> list[str]:
    return [row["id"] for row in json.loads((root / "list.json").read_text())["rows"]]


def test_list_items_are_named_by_their_members(root):
    apply_mutation(root, {"op": "swap_list_items", "file": "list.json", "path": "$.rows",
                          "a": {"id": "a"}, "b": {"id": "c"}})
    assert rows(root) == ["c", "b", "a"]
    apply_mutation(root, {"op": "delete_list_item", "file": "list.json", "path": "$.rows",
                          "index": {"id": "b"}})
    assert rows(root) == ["c", "a"]
    apply_mutation(root, {"op": "duplicate_list_item", "file": "list.json", "path": "$.rows",
                          "index": {"id": "c"}})
    apply_mutation(root, {"op": "move_list_item", "file": "list.json", "path": "$.rows",
                          "src": {"id": "a"}, "dst": 0})
    assert rows(root) == ["a", "c", "c"]


@pytest.mark.parametrize("selector, found", [({"id": "q"}, 0), ({"n": True}, 0), ({}, None)])
def test_an_item_selector_that_selects_no_one_item_fails_closed(root, selector, found):
    message = "names at least one member" if found is None else f"{found} items of the list"
    with pytest.raises(MutationError, match=message):
        apply_mutation(root, {"op": "delete_list_item", "file": "list.json", "path": "$.rows",
                              "index": selector})
    assert rows(root) == ["a", "b", "c"]


def test_swapping_an_item_with_itself_changes_nothing_and_fails(root):
    with pytest.raises(MutationError, match="are the same item"):
        apply_mutation(root, {"op": "swap_list_items", "file": "list.json", "path": "$.rows",
                              "a": {"id": "b"}, "b": 1})


def test_delete_keys_removes_every_named_key_or_fails_closed(root):
    apply_mutation(root, {"op": "delete_keys", "file": "list.json", "path": "$.files",
                          "keys": ["x", "z"]})
    assert json.loads((root / "list.json").read_text())["files"] == {"y": "2"}
    with pytest.raises(MutationError, match=r"\$.files has no key 'x'"):
        apply_mutation(root, {"op": "delete_keys", "file": "list.json", "path": "$.files",
                              "keys": "x"})
    with pytest.raises(MutationError, match="exactly one object"):
        apply_mutation(root, {"op": "delete_keys", "file": "list.json", "path": "$.rows",
                              "keys": ["x"]})


def test_a_case_found_not_applicable_when_built_is_not_counted_as_expecting_its_rules():
    """``--coverage``: a case whose target its packet lacked (not applicable once built,
    not in the static skip) is one of the not-applicable cases, not a case that expected
    the rule where it did not fire."""
    from types import SimpleNamespace

    from flarespec.fixtures.check import NOT_APPLICABLE, PASSED, CaseResult, coverage

    spec = SimpleNamespace(rules=[SimpleNamespace(id="x.rule", severity="error")], pair=[])
    cases = [Case("gone", "d", expect={"rejected_by": ["x.rule"]}),
             Case("other", "d", expect={"accept": True})]
    results = [CaseResult("gone", NOT_APPLICABLE, "x.rule", "-", reason="names.k: gone"),
               CaseResult("other", PASSED, "pass", "pass")]
    (gap,) = coverage(spec, cases, {}, results, selected=False).uncovered
    assert (gap.rule, gap.expected_by, gap.not_applicable) == ("x.rule", [], ["gone"])
