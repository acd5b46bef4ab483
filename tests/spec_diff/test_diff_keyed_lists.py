"""Lists of records are compared by key, not by position (issue 14 item 8): an insertion is
one added entry, a changed field is shown on its entry, a move is one reorder change
(review), and the readers of the constant are the same as before."""

from __future__ import annotations

import copy
import re
from pathlib import Path

from flarespec.engine.directions import ABSENT
from flarespec.review.diff import diff_specs
from flarespec.review.tree import leaf_changes, list_key
from flarespec.review.git import linted
from flarespec.review.render import label

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "specs" / "flare" / "bce032c0.yaml"
DECODE_C8 = ("    - {kind: decode-c8,     requests: 8, concurrency: 8, prompt_token_count: 512,"
             "   max_tokens: 256, measured: false, reused_tokens: 0}\n")


def group_matrix_child(tmp_path: Path, edit) -> Path:
    """A child of the bundled spec whose group_matrix is the parent's, edited as text."""
    text = BUNDLED.read_text()
    block = re.search(r"  group_matrix:\n(?:    (?:- |# ).*\n)+", text).group(0)
    child = tmp_path / "child.yaml"
    child.write_text("flarespec: 1\nid: flare/keyed\nextends: flare/bce032c0\ntitle: keyed\n"
                     "constants:\n" + edit(block))
    return child


def changes_of(child: Path) -> dict:
    result = diff_specs(linted("flare/bce032c0"), linted(child))
    return {label(c): c for c in result.changes if c.subject == "constant group_matrix"}


# the prefix-hit row reuses the prefix, computed from it (${prefix.tokens}): 4096
REUSED = 'reused_tokens: "${prefix.tokens}"}'


def inserted_and_reuse_halved(block: str) -> str:
    block = block.replace(REUSED, "reused_tokens: 2048}")
    at = block.index("    - {kind: prefill-65536")
    return block[:at] + DECODE_C8 + block[at:]


def test_an_inserted_group_is_one_change_and_the_reuse_change_shows_on_its_entry(tmp_path):
    found = changes_of(group_matrix_child(tmp_path, inserted_and_reuse_halved))
    assert sorted(found) == ["constant group_matrix[kind=decode-c8]",
                             "constant group_matrix[kind=prefix-hit].reused_tokens"]
    added = found["constant group_matrix[kind=decode-c8]"]
    assert (added.op, added.what, added.new["requests"]) == ("added", "added", 8)
    reuse = found["constant group_matrix[kind=prefix-hit].reused_tokens"]
    assert (reuse.old, reuse.new, reuse.what) == (4096, 2048, "changed")
    # located at the entry's line in the child (the 10th entry of the new list, below the
    # comment line above the prefix rows)
    assert reuse.file == str(tmp_path / "child.yaml") and reuse.line == 17
    # the readers are the constant's, whatever the path inside it
    assert reuse.rules == added.rules
    assert {"rule observation.reuse.native", "rule corpus.groups.matrix"} <= set(reuse.rules)


def test_the_readers_of_a_keyed_change_are_the_readers_of_the_constant(tmp_path):
    positional = changes_of(group_matrix_child(
        tmp_path, lambda b: b.replace(REUSED, "reused_tokens: 2048}")))
    (reuse,) = positional.values()
    assert reuse.path == "group_matrix[kind=prefix-hit].reused_tokens"
    assert (reuse.old, reuse.new, reuse.cls) == (4096, 2048, "review")
    assert "rule observation.reuse.native" in reuse.rules


def test_a_moved_entry_is_one_reorder_change_classed_review(tmp_path):
    def move(block):
        lines = block.splitlines(keepends=True)
        hit = lines.pop()  # prefix-hit, the last entry
        lines.insert(1, hit)
        return "".join(lines)
    found = changes_of(group_matrix_child(tmp_path, move))
    assert list(found) == ["constant group_matrix"]
    moved = found["constant group_matrix"]
    assert (moved.cls, moved.what) == ("review", "reordered by kind")
    assert moved.old[-1] == "prefix-hit" and moved.new[0] == "prefix-hit"
    assert "another order" in moved.reason


def test_key_inference():
    records = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    assert list_key(records, records) == "id"  # id first
    assert list_key([{"kind": "x", "name": "a"}, {"kind": "x", "name": "b"}], []) == "name"
    # missing, duplicated, non-scalar or boolean keys: by position
    assert list_key([{"name": "a"}, {"kind": "b"}], []) is None
    assert list_key([{"name": "a"}, {"name": "a"}], []) is None
    assert list_key([{"name": ["a"]}], []) is None
    assert list_key([{"id": True}], []) is None
    assert list_key(["a", "b"], ["a"]) is None  # not records
    assert list_key([{"v": 1}], [{"v": 2}]) is None  # no key field
    assert list_key([{"v": 1}], [{"v": 2}], "v") == "v"  # a caller's declared key


def test_a_key_changed_in_place_is_one_change_of_that_entry():
    old = [{"name": "a", "t": 1}, {"name": "b", "t": 1}, {"name": "c", "t": 1}]
    new = copy.deepcopy(old)
    new[1]["name"] = "b2"
    assert list(leaf_changes(old, new, "m")) == [("m[name=b].name", "b", "b2")]


def test_keys_that_need_quoting_round_trip_and_lists_without_keys_stay_positional():
    old = [{"id": "a b"}, {"id": "7"}, {"id": 7}]
    new = [{"id": "a b"}, {"id": 7}]
    assert [p for p, _, _ in leaf_changes(old, new, "x")] == ['x[id="7"]']
    assert list(leaf_changes([1, 2], [1, 3], "x")) == [("x[1]", 2, 3)]
    assert list(leaf_changes([{"v": 1}], [{"v": 2}, {"v": 3}], "x")) == [
        ("x[0].v", 1, 2), ("x[1]", ABSENT, {"v": 3})]


def test_plain_data_constants_are_compared_by_key():
    base = {"id": "t/a", "title": "t", "constants": {
        "group_matrix": [{"kind": k, "n": 1} for k in ("w", "x", "y")]}, "rules": []}
    new = copy.deepcopy(base)
    new["id"] = "t/b"
    new["constants"]["group_matrix"].insert(1, {"kind": "new", "n": 2})
    new["constants"]["group_matrix"][-1]["n"] = 5
    labels = sorted(label(c) for c in diff_specs(base, new).changes)
    assert labels == ["constant group_matrix[kind=new]", "constant group_matrix[kind=y].n"]
