"""Fixture mutations address places with the spec's JSONPath (fixtures/mutations.py)."""

from __future__ import annotations

import json

import pytest

from flarespec.fixtures.mutations import MutationError, apply_mutation

DOCUMENT = {"groups": [{"id": "a", "kind": "x", "n": [1, 2, 3]},
                       {"id": "b", "kind": "y", "n": [4]}],
            "files": {"run/a.json": "0", "it's": "1"}}


@pytest.fixture
def root(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps(DOCUMENT))
    return tmp_path


def mutate(root, **mutation) -> dict:
    apply_mutation(root, {"file": "d.json", **mutation})
    return json.loads((root / "d.json").read_text())


def test_set_through_an_rfc_filter(root):
    after = mutate(root, op="set_json", path="$.groups[?@.id=='b'].kind", value="z")
    assert [group["kind"] for group in after["groups"]] == ["x", "z"]


def test_set_creates_a_missing_last_member_under_a_filter(root):
    after = mutate(root, op="set_json", path="$.groups[?@.kind=='x'].new", value=1)
    assert after["groups"][0]["new"] == 1 and "new" not in after["groups"][1]


def test_quoted_names_use_rfc_escapes(root):
    after = mutate(root, op="set_json", path="$.files['it\\'s']", value="2")
    assert after["files"]["it's"] == "2"
    after = mutate(root, op="set_json", path="$.files['run/a.json']", value="3")
    assert after["files"]["run/a.json"] == "3"


def test_delete_negative_indices_slices_and_unions(root):
    assert mutate(root, op="delete_json", path="$.groups[0].n[-1]")["groups"][0]["n"] == [1, 2]
    # a union naming one place twice deletes it once
    assert mutate(root, op="delete_json", path="$.groups[0].n[0,0]")["groups"][0]["n"] == [2]
    after = mutate(root, op="delete_json", path="$.groups[?@.id=='a'].n[::-1]")
    assert after["groups"][0]["n"] == []


def test_descendant_segments(root):
    after = mutate(root, op="set_json", path="$..kind", value="k")
    assert [group["kind"] for group in after["groups"]] == ["k", "k"]


def test_the_whole_document(root):
    assert mutate(root, op="set_json", path="$", value=[1]) == [1]
    with pytest.raises(MutationError, match="cannot delete the document root"):
        mutate(root, op="delete_json", path="$")


@pytest.mark.parametrize("path, message", [
    ("$.groups[?id=='a'].kind", "write @.id, not the bare name id (jsonpath-ng's form)"),
    ("$.groups[?(@.id =~ 'a')]", "backtracking"),
    ("$.groups[?match(@.id, 'a')]", "function extension match() is not supported"),
    ("$.groups[?@.id=='nope'].kind", "matched nothing"),
])
def test_refused_and_missing_paths(root, path, message):
    with pytest.raises(MutationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mutate(root, op="set_json", path=path, value=0)
    assert json.loads((root / "d.json").read_text()) == DOCUMENT


def test_a_list_path_selects_one_list(root):
    after = mutate(root, op="move_list_item", path="$.groups[?@.id=='a'].n", src=0, dst=2)
    assert after["groups"][0]["n"] == [2, 3, 1]
    with pytest.raises(MutationError, match="must select exactly one list, selected 2"):
        mutate(root, op="move_list_item", path="$.groups[*].n", src=0, dst=0)
