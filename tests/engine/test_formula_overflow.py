"""Issue 23 item 2: formula arithmetic that overflows (to infinity, to NaN, or to a runaway
integer) is a "cannot evaluate" violation of the rule, never a comparison -- end to end,
through ``flarespec validate-pair`` on a toy spec over toy documents."""

from __future__ import annotations

import json

from cli_run import run
from document_files import write_files

SPEC = """\
flarespec: 1
id: toy/overflow
title: Toy overflow
documents:
  index: {loader: json, entry: true, rule: toy.index}
  shelf_file: {loader: json, each: shelf, path: "shelves/{shelf.name}.json", rule: toy.shelf}
iterations:
  shelf: {over: "index:$.shelves[*]"}
rules:
  - id: toy.shelf.scaled
    description: The scaled total is the scaled item count.
    for_each: shelf
    given: "shelf_file:$"
    assert: {formula: "%s"}
"""

DOCS = {
    "index.json": {"shelves": [{"name": "s0"}, {"name": "s1"}]},
    # s0: 3 vs 2 items (inf == inf before the fix: passed); s1: 3 vs 1 (inf == 1e308)
    "shelves/s0.json": {"items": [{"n": 1}, {"n": 2}], "total": 3, "big": 10 ** 300},
    "shelves/s1.json": {"items": [{"n": 3}], "total": 3, "big": 10 ** 300},
}


def validated(tmp_path, formula: str) -> tuple[int, list[dict]]:
    """``flarespec validate-pair`` of the toy documents against themselves: (exit code, the
    baseline's violations)."""
    (tmp_path / "spec.yaml").write_text(SPEC % formula)
    for name in ("a", "b"):
        write_files(tmp_path / name, DOCS)
    receipt = tmp_path / "receipt.json"
    result = run("validate-pair", "--baseline", tmp_path / "a" / "index.json", "--candidate",
                 tmp_path / "b" / "index.json", "--output", receipt, "--spec", tmp_path / "spec.yaml", "-q")
    violations = json.loads(receipt.read_text())["violations"]
    return result.exit_code, [v for v in violations if v["packet"] == "baseline"]


def test_overflow_to_infinity_is_cannot_evaluate_for_every_shelf(tmp_path):
    code, violations = validated(tmp_path, "total * 1e308 == len(items) * 1e308")
    assert code == 2
    assert [(v["rule"], v["file"]) for v in violations] == [
        ("toy.shelf.scaled", "shelves/s0.json"), ("toy.shelf.scaled", "shelves/s1.json")]
    for violation in violations:
        assert violation["message"].startswith("cannot evaluate 'total * 1e308 == len(items) * 1e308': "
                                               "arithmetic overflow: 3 * 1e+308 is Infinity"), violation


def test_runaway_integer_is_cannot_evaluate(tmp_path):
    code, violations = validated(tmp_path, "big * big * big > 0")
    assert code == 2
    messages = [v["message"] for v in violations]
    assert len(messages) == 2 and all(v["rule"] == "toy.shelf.scaled" for v in violations)
    assert all("cannot evaluate" in m and "arithmetic overflow: 1" in m
               and "is an integer of 1994 bits, beyond the float range (2**1024)" in m
               for m in messages), messages
