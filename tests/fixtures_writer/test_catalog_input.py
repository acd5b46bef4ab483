"""A catalog over a stored capture (``input: DIR``, ``entry: NAME``) instead of a writer: each
case copies the capture, applies its mutations (a ``.jsonl`` file addressed as the loader's
array of records) and is judged strictly by fixtures.check, as ``spec test`` does."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cli_run import run
from flarespec.fixtures.catalog import CatalogError, build_case, load_catalog
from flarespec.fixtures.check import FAILED, PASSED, check_cases
from flarespec.fixtures.mutations import MutationError, apply_mutation
from flarespec.compiler.open import open_compiled

SPEC = """\
flarespec: 1
id: tiny/v1
title: a tiny tool's run (summary.json with records.jsonl)
applies_to: {given: "summary:$.tool", equals: tiny}
limits: a test spec.
shapes:
  summary:
    type: object
    members: {tool: string, count: integer}
  records:
    type: array
    items: {type: object, members: {id: string, v: number}}
documents:
  summary: {loader: json, entry: true, file_name: summary.json, rule: tiny.summary, shape: summary}
  records: {loader: jsonl, path: records.jsonl, rule: tiny.records, shape: records}
rules:
  - id: tiny.count
    description: The summary counts every record.
    given: "records:$[*]"
    assert: {count: {equals: {ref: "summary:$.count"}}}
  - id: tiny.v
    description: No value is negative.
    given: "records:$[*].v"
    assert: {range: {min: 0}}
"""
# odd spacing and a blank line: bytes a re-serialisation would not keep
RECORDS = '{"id": "a",  "v": 1}\n\n{"id":"b","v":2}\n{ "id": "c", "v": 3 }\n'
HEAD = "spec: tiny/v1\ninput: run\nentry: summary.json\ncases:\n"
CASES = """\
  - name: passes
    description: The capture as stored.
    expect: {accept: true}
  - name: count-off
    description: The summary counts one record too many.
    mutate:
      - {op: set_json, file: summary.json, path: $.count, value: 4}
    expect: {rejected_by: [tiny.count]}
  - name: negative-record
    description: The third record's value is negative.
    mutate:
      - {op: set_json, file: records.jsonl, path: "$[2].v", value: -1}
    expect: {rejected_by: [tiny.v]}
  - name: record-gone
    description: The second record is deleted.
    mutate:
      - {op: delete_json, file: records.jsonl, path: "$[1]"}
    expect: {rejected_by: [tiny.count]}
  - name: line-cut-short
    description: The first record's line loses its closing brace.
    mutate:
      - {op: truncate_line, file: records.jsonl, line: 1, drop: 1}
    expect: {rejected_by: [tiny.records.invalid-json]}
"""


@pytest.fixture
def capture(tmp_path) -> Path:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "summary.json").write_text(json.dumps({"tool": "tiny", "count": 3}))
    (tmp_path / "run" / "records.jsonl").write_text(RECORDS)
    (tmp_path / "tiny.yaml").write_text(SPEC)
    return tmp_path


def _catalog(root: Path, cases: str = CASES, head: str = HEAD) -> Path:
    path = root / "catalog.yaml"
    path.write_text(head + cases)
    return path


def _results(root: Path, catalog: Path) -> dict:
    spec = open_compiled(root / "tiny.yaml")
    _, cases = load_catalog(catalog)
    results = check_cases(cases, spec, root / "tiny.yaml")
    return {result.name: result for result in results}


def test_every_case_of_an_input_catalog_is_judged_as_expected(capture):
    results = _results(capture, _catalog(capture))
    assert {name: r.status for name, r in results.items()} == dict.fromkeys(
        ["passes", "count-off", "negative-record", "record-gone", "line-cut-short"], PASSED), \
        {name: r.problems for name, r in results.items()}
    assert results["negative-record"].fired == {"tiny.v"}
    assert results["count-off"].fired == {"tiny.count"}


def test_a_case_that_expects_the_wrong_rule_fails(capture):
    wrong = CASES.replace("expect: {rejected_by: [tiny.v]}", "expect: {rejected_by: [tiny.count]}")
    result = _results(capture, _catalog(capture, wrong))["negative-record"]
    assert result.status == FAILED
    assert result.got == "tiny.v" and "missing ['tiny.count'], unexpected ['tiny.v']" in result.problems


def test_spec_test_runs_an_input_catalog(capture):
    result = run("spec", "test", capture / "tiny.yaml", "--catalog", _catalog(capture), "-q")
    assert result.exit_code == 0, result.output
    assert "5 passed, 0 failed" in result.output
    wrong = CASES.replace("expect: {rejected_by: [tiny.v]}", "expect: {rejected_by: [tiny.count]}")
    result = run("spec", "test", capture / "tiny.yaml", "--catalog", _catalog(capture, wrong), "-q")
    assert result.exit_code == 1 and "negative-record" in result.output


def test_each_case_copies_the_capture_and_leaves_it_as_stored(capture, tmp_path):
    spec = open_compiled(capture / "tiny.yaml")
    _, cases = load_catalog(_catalog(capture))
    case = next(c for c in cases if c.name == "negative-record")
    packet, peer = build_case(case, tmp_path / "case", spec)
    assert packet == peer == tmp_path / "case" / "packet" / "summary.json"
    assert (capture / "run" / "records.jsonl").read_text() == RECORDS
    lines = (tmp_path / "case" / "packet" / "records.jsonl").read_text().split("\n")
    # the other lines (and the blank one) keep their bytes; the changed record is compact
    assert lines == ['{"id": "a",  "v": 1}', "", '{"id":"b","v":2}', '{"id":"c","v":-1}', ""]


def test_writer_or_peer_options_in_an_input_catalog_are_refused_at_their_line(capture):
    cases = CASES.replace("    description: The capture as stored.\n",
                          "    description: The capture as stored.\n    writer: {seed: 7}\n")
    cases += ("  - name: with-peer\n    description: x\n    peer: {mutate: []}\n"
              "    expect: {accept: true}\n")
    lines = (HEAD + cases).splitlines()
    at = {lines.index("    writer: {seed: 7}") + 1, lines.index("    peer: {mutate: []}") + 1}
    with pytest.raises(CatalogError) as raised:
        load_catalog(_catalog(capture, cases))
    found = {(issue.mark.line, issue.code) for issue in raised.value.issues}
    assert found == {(line, "catalog.shape") for line in at}, str(raised.value)
    assert "'writer' has no meaning in a catalog with 'input'" in str(raised.value)


@pytest.mark.parametrize("head, line, says", [
    (HEAD.replace("input: run", "input: nowhere"), 2, "no such directory"),
    (HEAD.replace("entry: summary.json", "entry: absent.json"), 3, "no such file"),
    (HEAD.replace("entry: summary.json", "entry: ../tiny.yaml"), 3, "without a leading '/' or '..'"),
])
def test_an_input_or_entry_that_is_not_there_is_a_catalog_error_at_its_line(capture, head, line, says):
    with pytest.raises(CatalogError) as raised:
        load_catalog(_catalog(capture, head=head))
    [issue] = raised.value.issues
    assert (issue.mark.line, issue.code) == (line, "catalog.input") and says in issue.message


def test_input_without_entry_is_a_catalog_shape_error(capture):
    with pytest.raises(CatalogError) as raised:
        load_catalog(_catalog(capture, head=HEAD.replace("entry: summary.json\n", "")))
    [issue] = raised.value.issues
    assert (issue.mark.line, issue.code) == (2, "catalog.shape")
    assert issue.message == "'input' needs ['entry']"


# ------------------------------------------------------------------ the mutations alone

def test_jsonl_operations_address_the_array_of_records(tmp_path):
    (tmp_path / "r.jsonl").write_text(RECORDS)
    apply_mutation(tmp_path, {"op": "duplicate_list_item", "file": "r.jsonl", "path": "$", "index": 0})
    apply_mutation(tmp_path, {"op": "delete_json", "file": "r.jsonl", "path": "$[3]"})
    # the copy is new (compact); the blank line stays before the record it preceded
    assert (tmp_path / "r.jsonl").read_text() == \
        '{"id": "a",  "v": 1}\n{"id":"a","v":1}\n\n{"id":"b","v":2}\n'
    with pytest.raises(MutationError, match=r"matched nothing"):
        apply_mutation(tmp_path, {"op": "set_json", "file": "r.jsonl", "path": "$[9].v", "value": 0})
    with pytest.raises(MutationError, match=r"array of records"):
        apply_mutation(tmp_path, {"op": "set_json", "file": "r.jsonl", "path": "$", "value": {}})


def test_a_line_is_replaced_or_cut_by_its_number(tmp_path):
    (tmp_path / "t.txt").write_bytes(b"one\r\ntwo\nthree")
    apply_mutation(tmp_path, {"op": "replace_line", "file": "t.txt", "line": 1, "text": "uno"})
    apply_mutation(tmp_path, {"op": "truncate_line", "file": "t.txt", "line": 3, "drop": 2})
    assert (tmp_path / "t.txt").read_bytes() == b"uno\r\ntwo\nthr"
    for step, says in (({"line": 4, "drop": 1}, "not one of its 3 lines"),
                       ({"line": 2, "drop": 4}, "cannot drop 4"),
                       ({"line": 2, "drop": 0}, "drop must be")):
        with pytest.raises(MutationError, match=says):
            apply_mutation(tmp_path, {"op": "truncate_line", "file": "t.txt", **step})
    with pytest.raises(MutationError, match="changes nothing"):
        apply_mutation(tmp_path, {"op": "replace_line", "file": "t.txt", "line": 2, "text": "two"})
