"""``flarespec spec diff``: formats, the --fail-on gate, acknowledgements, lint, --base REV."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from git_repo import git

DATA = Path(__file__).parent / "data"
BASE, BOUNDS = DATA / "base.yaml", DATA / "bounds.yaml"


def invoke(*args):
    """Run flarespec; ``result.stdout`` is the report, ``result.output`` adds stderr."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def diff_json(*args) -> dict:
    return json.loads(invoke("spec", "diff", *args, "--format", "json").stdout)


# --------------------------------------------------------------------------- formats

def test_json_follows_the_documented_schema():
    """The diff's own members keep their shape; since issue 16 they follow the report's
    members (``report``, ``command``, ``ok``, ``title``, ``findings``: one per change)."""
    document = diff_json(BASE, BOUNDS)
    assert set(document) == {"report", "command", "ok", "title", "findings",
                             "schema", "specs", "fail_on", "gate_failed", "gate", "lint"}
    assert document["lint"] == {"old": {"errors": 0, "warnings": 0},
                                "new": {"errors": 0, "warnings": 0}}  # both sides lint clean
    assert (document["report"], document["command"], document["ok"]) == (
        "flarespec-report-v1", "spec diff", True)
    assert document["gate"] == {"fail_on": None, "failed": False, "unacknowledged": 0,
                                "changes": [], "ack_file": None, "acknowledged": 0}
    (spec,) = document["specs"]
    assert set(spec) == {"old", "new", "summary", "changes"}
    assert spec["summary"] == {"tightening": 2, "loosening": 1, "review": 3, "neutral": 3}
    change = next(c for c in spec["changes"] if c["path"] == "assert.range.min")
    assert change == {
        "fingerprint": change["fingerprint"], "class": "tightening",
        "subject": "rule toy.shelf.max-count", "path": "assert.range.min", "op": "changed",
        "change": "min raised", "old": 1, "new": 2, "reason": "", "rules": [],
        "file": change["file"], "line": 14, "made_by": None, "acknowledged": None,
        "context": {"relation": "replaces", "subject": "rule toy.shelf.max-count",
                    "file": change["context"]["file"], "line": 192}}
    assert change["file"].endswith("tests/spec_diff/data/bounds.yaml")
    assert change["context"]["file"].endswith("tests/spec_diff/data/base.yaml")
    # the same change as a finding of the report: at its line, its fingerprint kept
    finding = next(f for f in document["findings"]
                   if f["location"] == "rule toy.shelf.max-count assert.range.min")
    assert (finding["rule"], finding["tag"], finding["line"], finding["fingerprint"]) == (
        "diff.tightening", "tightening", 14, change["fingerprint"])
    assert finding["message"] == "rule toy.shelf.max-count assert.range.min: min raised: 1 → 2"
    assert len(document["findings"]) == len(spec["changes"])


def test_markdown_has_a_summary_line_then_one_table_per_class():
    """Since issue 16 the markdown is the report's: a ``####`` heading per compared pair
    carrying the class counts, then one table of every change whose first column is its
    class (there are no per-class tables any more); the values are in the message."""
    lines = invoke("spec", "diff", BASE, BOUNDS, "--format", "markdown").stdout.splitlines()
    assert lines[0] == "### spec diff: 1 spec compared, 1 changed; both sides lint clean"
    headings = [line for line in lines if line.startswith("#### ")]
    assert headings == ["#### spec diff review/base -> review/bounds: 2 tightening, "
                        "1 loosening, 3 review, 3 neutral"]
    assert "| class | where | message |" in lines  # a listing: the class says the rule
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| class")]
    assert [row.split(" | ")[0] for row in rows] == \
        ["| tightening"] * 2 + ["| loosening"] + ["| review"] * 3 + ["| neutral"] * 3
    raised = next(row for row in rows if "assert.range.min" in row)
    assert raised.startswith("| tightening | `") and ":14` |" in raised  # its file:line
    assert "rule toy.shelf.max-count assert.range.min: min raised: 1 → 2<br>replaces rule " \
        "toy.shelf.max-count at " in raised and "/spec_diff/data/base.yaml:192<br>[" in raised


def test_github_annotates_each_change_at_its_line_in_the_new_spec():
    """One annotation per change, then (issue 16) one summary annotation for the run; the
    old and new values are now in the message (``old → new``), no longer on lines of
    their own."""
    output = invoke("spec", "diff", BASE, BOUNDS, "--format", "github").stdout.splitlines()
    assert len(output) == 9 + 1
    assert output[-1] == "::notice title=flarespec spec diff::spec diff: 1 spec compared, 1 changed; both sides lint clean"
    raised = next(line for line in output if "assert.range.min" in line)
    assert raised.startswith("::notice file=")
    assert "bounds.yaml,line=14,title=spec tightening%3A rule toy.shelf.max-count" in raised
    lowered = next(line for line in output if "assert.length.min" in line)
    assert lowered.startswith("::warning ") and "line=20," in lowered
    assert "::rule toy.shelf.items assert.length.min: min lowered: 1 → 0 [diff.loosening]%0A" \
        in lowered


def test_junit_has_a_case_per_change_and_a_failure_per_gate_hit():
    result = invoke("spec", "diff", BASE, BOUNDS, "--format", "junit", "--fail-on", "review")
    assert result.exit_code == 1
    suite = ElementTree.fromstring(result.stdout).find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("9", "3")
    failed = [case.get("name") for case in suite.iter("testcase")
              if case.find("failure") is not None]
    assert len(failed) == 3 and all(name.startswith("spec review: ") for name in failed)


# --------------------------------------------------------------------------- gate and acks

@pytest.mark.parametrize("fail_on, code", [
    (None, 0), ("tightening", 1), ("loosening", 1), ("review", 1), ("any", 1)])
def test_fail_on_exits_1_when_a_change_of_that_class_is_present(fail_on, code):
    args = ["--fail-on", fail_on] if fail_on else []
    assert invoke("spec", "diff", BASE, BOUNDS, *args).exit_code == code


def test_fail_on_passes_when_no_change_of_that_class_is_present():
    constants = DATA / "header.yaml"  # review and neutral changes only
    assert invoke("spec", "diff", BASE, constants, "--fail-on", "loosening").exit_code == 0
    assert invoke("spec", "diff", BASE, constants, "--fail-on", "review").exit_code == 1
    assert invoke("spec", "diff", BASE, BASE, "--fail-on", "any").exit_code == 0


def test_an_acknowledged_change_passes_the_gate_and_only_it(tmp_path):
    (loosening,) = [c for c in diff_json(BASE, BOUNDS)["specs"][0]["changes"]
                    if c["class"] == "loosening"]
    acks = tmp_path / "acks.yaml"
    acks.write_text(f"- fingerprint: {loosening['fingerprint']}\n"
                    f"  reason: shelves may be empty from this revision on\n")
    passed = invoke("spec", "diff", BASE, BOUNDS, "--fail-on", "loosening", "--ack", acks)
    assert passed.exit_code == 0
    assert "acknowledged: shelves may be empty from this revision on" in passed.output
    assert "0 loosening, 3 review, 3 neutral (1 acknowledged)" in passed.output
    # the same acknowledgement does not cover another loosening
    other = DATA / "tolerances.yaml"
    assert invoke("spec", "diff", BASE, other, "--fail-on", "loosening",
                  "--ack", acks).exit_code == 1


def test_an_acknowledgement_that_matches_nothing_is_reported(tmp_path):
    acks = tmp_path / "acks.json"
    acks.write_text(json.dumps([{"fingerprint": "0" * 16, "reason": "old"}]))
    result = invoke("spec", "diff", BASE, BOUNDS, "--ack", acks)
    assert result.exit_code == 0
    assert f"acknowledgement {'0' * 16} matches no change" in result.stderr


@pytest.mark.parametrize("text", ["fingerprint: abc\n", "- {fingerprint: abc}\n",
                                  "- {fingerprint: abc, reason: ''}\n", "- [\n"])
def test_a_malformed_acknowledgements_file_is_an_error(tmp_path, text):
    acks = tmp_path / "acks.yaml"
    acks.write_text(text)
    result = invoke("spec", "diff", BASE, BOUNDS, "--ack", acks)
    assert result.exit_code == 2
    assert "[diff.ack]" in result.output or "[spec.yaml]" in result.output


# --------------------------------------------------------------------------- lint first

def broken_child(directory: Path) -> Path:
    shutil.copy(BASE, directory / "base.yaml")
    child = directory / "broken.yaml"
    child.write_text("flarespec: 1\nid: review/broken\nextends: review/base\ntitle: b\n"
                     "rules:\n  - id: toy.item.sku\n    description: d\n    for_each: item\n"
                     "    given: \"item:$.sku\"\n    assert: {regx: \"^[a-z]$\"}\n")
    return child


def test_a_spec_that_does_not_lint_is_an_error_not_a_diff(tmp_path):
    """Every lint error of the side it is on (here two: an inherited id reused without
    ``replaces: true``, an unknown kind), under that side; nothing is compared."""
    child = broken_child(tmp_path)
    for args, side in (((tmp_path / "base.yaml", child), "new side"),
                       ((child, tmp_path / "base.yaml"), "old side")):
        result = invoke("spec", "diff", *args)
        assert result.exit_code == 2 and result.stdout == ""
        said = result.stderr.splitlines()
        assert said[0] == f"spec diff: not compared: 2 lint errors on the {side} " \
            "(`flarespec spec lint` reports the same; fix them first)"
        assert said[1].startswith(f"{side}: ") and said[1].endswith("broken.yaml: 2 errors")
        assert f"{child}:10:" in result.output and "[spec.unknown-kind]" in result.output
        assert f"{child}:6:" in result.output and "[spec.rule-id-reused]" in result.output


def test_old_and_new_are_required_without_base():
    result = invoke("spec", "diff", BASE)
    assert result.exit_code == 2 and "give OLD and NEW specs" in result.output


# --------------------------------------------------------------------------- against git

@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository whose base commit holds base.yaml, bounds.yaml and header.yaml."""
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    for name in ("base.yaml", "bounds.yaml", "header.yaml"):
        shutil.copy(DATA / name, root / "specs" / name)
    (root / "specs" / "notes.yaml").write_text("not: a spec\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def in_repo(repo, monkeypatch) -> Path:
    monkeypatch.chdir(repo)
    return repo


def test_base_rev_diffs_changed_files_and_reports_added_and_deleted_ones(in_repo):
    repo = in_repo
    (repo / "specs" / "bounds.yaml").write_text(
        (DATA / "bounds.yaml").read_text().replace("min: 2, max: 100", "min: 3, max: 100"))
    (repo / "specs" / "header.yaml").unlink()
    shutil.copy(DATA / "sets.yaml", repo / "specs" / "sets.yaml")
    result = invoke("spec", "diff", "--base", "HEAD", "specs", "--format", "json")
    assert result.exit_code == 0, result.output
    specs = {(s["old"], s["new"]): s["changes"] for s in json.loads(result.stdout)["specs"]}
    # the added file extends review/base: it is compared with it (test_diff_new_files.py)
    assert set(specs) == {("review/bounds", "review/bounds"), ("review/header", None),
                          ("review/base", "review/sets")}
    [raised] = specs[("review/bounds", "review/bounds")]
    assert (raised["class"], raised["path"], raised["old"], raised["new"]) == (
        "tightening", "assert.range.min", 2, 3)
    assert raised["file"] == "specs/bounds.yaml" and raised["line"] == 14
    [deleted] = specs[("review/header", None)]
    assert (deleted["class"], deleted["op"], deleted["path"]) == ("review", "removed",
                                                                  "specs/header.yaml")
    added = next(c for c in specs[("review/base", "review/sets")] if c["subject"] == "spec file")
    assert (added["op"], added["path"], added["class"]) == ("added", "specs/sets.yaml",
                                                            "neutral")
    assert "compared with its parent review/base (HEAD:specs/base.yaml)" in added["reason"]


def test_base_rev_with_nothing_changed_is_empty_and_passes_any_gate(in_repo):
    result = invoke("spec", "diff", "--base", "HEAD", "--fail-on", "any")
    assert result.exit_code == 0
    assert result.output.strip().splitlines()[0] == "spec diff: no spec changed; both sides lint clean"
    assert "spec gate --fail-on any: passed" in result.output
    markdown = invoke("spec", "diff", "--base", "HEAD", "--format", "markdown")
    assert markdown.stdout.strip() == "### spec diff: no spec changed; both sides lint clean"  # the title (issue 16)


def test_base_rev_refuses_a_spec_that_does_not_lint_on_either_side(in_repo):
    repo = in_repo
    broken = broken_child(repo / "specs")
    result = invoke("spec", "diff", "--base", "HEAD", "specs")
    assert result.exit_code == 2 and "[spec.unknown-kind]" in result.output
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "broken")
    broken.write_text(broken.read_text().replace("regx", "regex"))
    result = invoke("spec", "diff", "--base", "HEAD", "specs")
    assert result.exit_code == 2
    assert "HEAD:specs/broken.yaml:10:" in result.output  # named as the base file


@pytest.mark.parametrize("rev", ["no-such-branch", "--output=x"])
def test_base_rev_that_is_no_revision_is_an_error(in_repo, rev):
    result = invoke("spec", "diff", "--base", rev)
    assert result.exit_code == 2 and "[diff.git]" in result.output
