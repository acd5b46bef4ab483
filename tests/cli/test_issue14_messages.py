"""Issue 14 items 9 and 10: messages state their values, pair mismatches name the field,
SSE places after the terminator carry their line, lint blames a child's partial override
of a mapping constant, and CI formats print repository-relative paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from flarespec.adapter.receipt_report import summary as render
from flarespec.fixtures.mutations import apply_mutation
from flarespec.fixtures.writers import write_packet, write_pair
from flarespec.loaders import locate_line, parse_sse
from cli_run import run

BUNDLED = "flare/bce032c0"




def measured(tmp_path, mutations) -> tuple[dict, str]:
    packet = write_packet(tmp_path / "packet", BUNDLED)
    for mutation in [*mutations, {"op": "refresh_digests"}]:
        apply_mutation(packet.parent, mutation)
    receipt = tmp_path / "receipt.json"
    result = run("measure", "--packet", str(packet), "--peer", str(packet), "--output", str(receipt),
                 "--spec", BUNDLED)
    assert result.exit_code == 2, result.output
    return json.loads(receipt.read_text()), result.output


# ------------------------------------------------------------------ 10. values without -v


def test_the_one_line_summary_states_expected_and_actual(tmp_path):
    receipt, _ = measured(tmp_path, [{"op": "set_json", "file": "packet.json", "path": "$.schema",
                                      "value": "other-schema"}])
    line = next(line for line in render(receipt, "r.json").splitlines() if "$.schema" in line)
    assert line.endswith('differs from the expected value (expected '
                         '"inferrsi-flare-delivery-packet-v1", actual "other-schema")'), line


def test_long_values_are_cut_where_they_differ(tmp_path):
    receipt, _ = measured(tmp_path, [{"op": "set_json", "file": "packet.json",
                                      "path": "$.source.revision", "value": "f" * 120}])
    line = next(line for line in render(receipt, "r.json").splitlines() if "$.source" in line)
    assert '"revision": "bce032c0' in line and '"revision": "ffff' in line, line
    # the receipt shortened the object: the line says the whole value's size (issue 25),
    # not the length of what the receipt kept of it
    assert len(line) < 400 and line.count("… (3 members)") == 2, line


def test_a_message_that_quotes_its_values_is_not_repeated():
    entry = {"packet": "packet", "rule": "x", "severity": "error", "file": "f", "location": "$",
             "message": "match count is 1, expected 0", "expected": 0, "actual": 1}
    receipt = {"command": "measure", "status": "rejected", "violations": [entry], "warnings": []}
    assert "match count is 1, expected 0\n" in render(receipt, "r.json") + "\n"


def test_mappings_show_only_the_members_that_differ():
    entry = {"packet": "packet", "rule": "x", "severity": "error", "file": "f", "location": "$",
             "message": "differs from the expected value",
             "expected": {"a": 1, "b": "same", "c": 1}, "actual": {"a": 2, "b": "same", "c": 1.0}}
    receipt = {"command": "measure", "status": "rejected", "violations": [entry], "warnings": []}
    assert ("differs from the expected value (a: expected 1, actual 2; "
            "c: expected 1, actual 1.0)") in render(receipt, "r.json")


def test_a_pair_mismatch_names_the_differing_capacity_member(tmp_path):
    baseline, candidate = write_pair(tmp_path / "pair", BUNDLED,
                                     candidate={"capacity": {"kv_pages_total": 8000}})
    receipt = tmp_path / "pair.json"
    result = run("validate-pair", "--baseline", str(baseline), "--candidate", str(candidate),
                 "--output", str(receipt))
    assert result.exit_code == 2
    violation, = json.loads(receipt.read_text())["violations"]
    assert violation["rule"] == "pair.prepared-capacity"
    kv = violation["expected"]["kv_pages_total"]
    assert (f"prepared_capacity differs between baseline and candidate: kv_pages_total {kv} "
            f"in baseline, 8000 in candidate") in violation["message"]
    assert "kv_pages_total" in result.output and "8000 in candidate" in result.output


def test_a_scalar_pair_identity_quotes_both_values():
    from flarespec.adapter.commands import pair_difference

    assert pair_difference("a" * 100, "b", "packet", "peer") == (
        f'"{"a" * 79}… in packet, "b" in peer')  # cut at 80 characters (engine.report.shown)
    assert pair_difference({"x": 1}, {"x": 1.0, "y": True}, "baseline", "candidate") == (
        "x 1 in baseline, 1.0 in candidate; y absent in baseline, true in candidate")


# ------------------------------------------------------------------ 10. after-done has a line


def test_locate_line_reads_the_reference_text_of_a_collective_failure():
    value = parse_sse(b'data: {"a": 1}\n\ndata: [DONE]\n\n\ndata: {"late": true}\n\nid: 5\n',
                      data_json=True, terminator="[DONE]")
    assert locate_line("sse", value, "response:$.after_terminator[*]") == 6
    assert locate_line("sse", value, "$.after_terminator[1]") == 8
    assert locate_line("sse", value, "$.events[*].json.a") == 1
    assert locate_line("sse", value, "response:$.events[0]") == 1
    assert locate_line("sse", value, "response:$.nothing") is None


def test_response_after_done_carries_its_line(tmp_path):
    sse = "run/r0.ttft-512/r0.ttft-512.q0/response.sse"
    receipt, _ = measured(tmp_path, [{"op": "replace_text", "file": sse, "old": "data: [DONE]\n\n",
                                      "new": "data: [DONE]\n\ndata: {\"late\": true}\n\n"}])
    violation, = [v for v in receipt["violations"] if v["rule"] == "response.after-done"]
    text = (tmp_path / "packet" / sse).read_text().splitlines()
    assert text[violation["line"] - 1] == 'data: {"late": true}'


# ------------------------------------------------------------------ 9. lint locations and paths


def partial_override_child(directory: Path) -> Path:
    """A child restating one member of the mapping constant ``prefix``: the parent's
    seed_kind and hit_kind are gone (constants are replaced by top-level name)."""
    path = directory / "child.yaml"
    path.write_text(yaml.safe_dump({
        "flarespec": 1, "id": "flare/child", "title": "partial override", "extends": BUNDLED,
        "applies_to": {"given": "packet:$.source.revision", "equals": "1" * 40},
        "constants": {"prefix": {"tokens": 2048}}}, sort_keys=False))
    return path


def test_a_partial_override_is_blamed_at_the_childs_key(tmp_path):
    child = partial_override_child(tmp_path)
    result = run("spec", "lint", "--format", "json", str(child))
    assert result.exit_code == 2
    issues = json.loads(result.output)["specs"][0]["issues"]
    unknown = [i for i in issues if i["code"] == "spec.unknown-constant"]
    assert unknown and all(Path(i["file"]).name == "child.yaml" for i in unknown), unknown
    line = child.read_text().splitlines().index("  prefix:") + 1
    assert {i["line"] for i in unknown} == {line}
    assert any("${prefix.seed_kind}" in i["message"] and "bce032c0.yaml:" in i["message"]
               and "restate the members you keep" in i["message"] for i in unknown)


def test_ci_formats_print_paths_relative_to_the_root(tmp_path, monkeypatch):
    """Files in github and json are relative to --root (default: the current directory);
    a file outside it gets ../ segments, never an absolute path (issue 16)."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "docs").mkdir()
    bad = tmp_path / "specs" / "bad.yaml"
    bad.write_text("flarespec: 1\nid: toy/bad\ntitle: t\nbogus: 1\n")
    monkeypatch.chdir(tmp_path / "docs")
    github = run("spec", "lint", "--format", "github", "--root", "..", str(bad))
    assert github.exit_code == 2
    assert "::error file=specs/bad.yaml,line=4," in github.output, github.output
    below = run("spec", "lint", "--format", "github", str(bad)).output
    assert "::error file=../specs/bad.yaml,line=4," in below, below
    as_json = json.loads(run("spec", "lint", "--format", "json", "--root", "..", str(bad)).output)
    assert {f["file"] for f in as_json["findings"]} == {"specs/bad.yaml"}
    assert {i["file"] for i in as_json["specs"][0]["issues"]} == {str(bad)}
    text = run("spec", "lint", str(bad)).output  # text: the path as the loader names it
    assert str(bad) in text


