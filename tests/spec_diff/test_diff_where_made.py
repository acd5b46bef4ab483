"""Issue 25: a diff change, a gate annotation (every format) and a lint error are located at
the line of the file that made the change (the child's), with the parent's line as context;
``spec diff`` lints both sides first and says so.

Each case is a pull request as the workflow sees it (git_repo.revision_branch): main holds
the bundled spec, the branch adds a child for a new revision; the child is edited in the
working tree and the gate command runs against origin/main. Every expected line is found
in the files' own text, so the tests follow the bundled spec's layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from git_repo import BUNDLED, git, revision_branch

CHILD = "specs/flare/c0ffee15.yaml"
PARENT = "specs/flare/bce032c0.yaml"
GATE = ["spec", "diff", "--base", "origin/main", "specs"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def line_of(path: str | Path, pattern: str, after: str | None = None) -> int:
    """The 1-based line of the first line matching ``pattern`` (below the first line
    matching ``after``, when given)."""
    lines = Path(path).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(after, line)) if after else 0
    return next(i for i in range(start, len(lines)) if re.search(pattern, lines[i])) + 1


@pytest.fixture
def pull_request(tmp_path, monkeypatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    revision_branch(repo, ())
    return repo


def edit_child(constants: str = "", tail: str = "") -> None:
    """The scaffolded child with ``constants`` entries added to its constants block and
    ``tail`` (top-level keys) at its end."""
    child = Path(CHILD)
    text = child.read_text().replace("\nconstants:\n", f"\nconstants:\n{constants}", 1)
    child.write_text(text + tail)


def widened_rel_tol() -> str:
    """The parent's derived_field restated, its rel_tol widened 1e-12 -> 1e-6."""
    block = re.search(r"(?m)^  derived_field:\n(?:    .*\n)+", BUNDLED.read_text()).group(0)
    assert "rel_tol: 1.0e-12" in block
    return block.replace("rel_tol: 1.0e-12", "rel_tol: 1.0e-6")


def annotations(*args) -> list[str]:
    result = invoke(*GATE, "--format", "github", *args)
    assert result.exit_code in (0, 1), result.output
    return [line for line in result.stdout.splitlines() if " file=" in line]


def json_changes(*args) -> list[dict]:
    result = invoke(*GATE, "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return [c for spec in json.loads(result.stdout)["specs"] for c in spec["changes"]]


# --------------------------------------------------------------------------- a constant

def test_a_widened_tolerance_is_annotated_at_the_childs_override_naming_the_parents_rule(
        pull_request):
    edit_child(widened_rel_tol())
    at_child = line_of(CHILD, r"^    rel_tol: 1\.0e-6")
    at_parent = line_of(PARENT, r'rel_tol: "\$\{derived_field\.rel_tol\}"',
                        after=r"- id: measurements\.observation\.derived-value$")
    lines = annotations("--fail-on", "loosening")
    rule = [a for a in lines if "rule measurements.observation.derived-value assert.formula"
            ".rel_tol" in a]
    assert len(rule) == 1
    assert rule[0].startswith(f"::error file={CHILD},line={at_child},title=spec loosening")
    assert "made by constant derived_field.rel_tol; affects rule " \
        f"measurements.observation.derived-value at {PARENT}:{at_parent}" in rule[0]
    # no change is annotated in the parent, a file the pull request does not touch
    assert lines and not [a for a in lines if f"file={PARENT}," in a]
    # the same change as data: made at the child's line, the parent's place as context
    (change,) = [c for c in json_changes() if c["path"] == "assert.formula.rel_tol"]
    assert (change["file"], change["line"], change["made_by"], change["context"]) == (
        CHILD, at_child, "constant derived_field.rel_tol",
        {"relation": "affects", "subject": "rule measurements.observation.derived-value",
         "file": PARENT, "line": at_parent})
    # the constant's own change overrides the parent's constant (its line the context)
    (constant,) = [c for c in json_changes() if c["path"] == "derived_field.rel_tol"]
    assert (constant["file"], constant["line"], constant["context"]["relation"],
            constant["context"]["line"]) == (
        CHILD, at_child, "overrides", line_of(PARENT, r"^    rel_tol: 1\.0e-12"))


def test_sarif_and_markdown_place_it_at_the_child_too(pull_request):
    edit_child(widened_rel_tol())
    at_child = line_of(CHILD, r"^    rel_tol: 1\.0e-6")
    sarif = json.loads(invoke(*GATE, "--format", "sarif").stdout)
    results = sarif["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {CHILD}
    (rule,) = [r for r in results if "assert.formula.rel_tol" in r["message"]["text"]]
    assert rule["locations"][0]["physicalLocation"]["region"]["startLine"] == at_child
    assert f"affects rule measurements.observation.derived-value at {PARENT}:" in \
        rule["message"]["text"]
    markdown = invoke(*GATE, "--format", "markdown").stdout
    (row,) = [r for r in markdown.splitlines() if "assert.formula.rel_tol" in r]
    assert f"`{CHILD}:{at_child}`" in row and f"at {PARENT}:" in row
    assert f"`{PARENT}:" not in markdown  # no row is placed in the parent


# --------------------------------------------------------------------------- a shape member

def test_a_member_named_by_a_renamed_constant_is_placed_at_the_childs_constant(pull_request):
    """The shape declares the derived field once, as the key ``${derived_field.key}``: a
    child that renames the field changes that member in the parent's shape; both halves of
    the rename (the old member removed, the new one added) are made by the child's key."""
    if '"${derived_field.key}":' not in BUNDLED.read_text():
        pytest.skip("the bundled shape does not name the derived field by its constant")
    edit_child(widened_rel_tol().replace("rel_tol: 1.0e-6", "rel_tol: 1.0e-12").replace(
        "key: analysis.http_prefill_tokens_per_second", "key: analysis.http_prefill_tps"))
    at_child = line_of(CHILD, r"^    key: analysis\.http_prefill_tps")
    at_parent = line_of(PARENT, r'^\s+"\$\{derived_field\.key\}":', after=r"^  observation:")
    members = [c for c in json_changes() if c["subject"].startswith("shape of document ")]
    assert sorted((c["subject"], c["op"]) for c in members) == sorted(
        (f"shape of document {document}", op) for document in ("measurements", "observation")
        for op in ("added", "removed"))
    for change in members:
        assert (change["file"], change["line"], change["made_by"]) == (
            CHILD, at_child, "constant derived_field.key"), change
        assert change["context"] == {"relation": "affects", "subject": "shape observation",
                                     "file": PARENT, "line": at_parent}



def test_a_member_the_child_adds_is_placed_at_the_childs_member(pull_request):
    edit_child(tail="shapes:\n"
                    "  memory_report: {members: {kv_pages_reserved: {type: integer, example: 16}}}\n"
                    "  observation:\n"
                    "    members:\n"
                    "      queue_ns: {type: integer, min: 0, example: 0}\n")
    at_kv = line_of(CHILD, r"^  memory_report: \{members: \{kv_pages_reserved")
    at_queue = line_of(CHILD, r"^      queue_ns:")
    changes = {(c["subject"], c["path"]): c for c in json_changes()
               if c["subject"].startswith("shape of document ")}
    assert set(changes) == {
        ("shape of document memory_report", "$.kv_pages_reserved"),
        ("shape of document observation", "$.queue_ns"),
        # measurements holds the observations: the same member, reached through the
        # parent's shapes, is still the child's member
        ("shape of document measurements", "$.groups[*].observations[*].queue_ns")}
    for (subject, path), change in changes.items():
        expected = at_kv if "kv_pages" in path else at_queue
        assert (change["file"], change["line"], change["class"]) == (
            CHILD, expected, "tightening"), (subject, change)
        shape = "memory_report" if "kv_pages" in path else "observation"
        assert change["context"] == {"relation": "affects", "subject": f"shape {shape}",
                                     "file": PARENT, "line": change["context"]["line"]}
        assert change["context"]["line"] > line_of(PARENT, rf"^  {shape}:")
    markdown = invoke(*GATE, "--format", "markdown").stdout
    rows = [r for r in markdown.splitlines() if "queue_ns" in r or "kv_pages" in r]
    assert len(rows) == 3 and all(f"`{CHILD}:" in row for row in rows)
    github = [a for a in annotations() if "queue_ns" in a or "kv_pages" in a]
    assert len(github) == 3 and all(a.startswith(f"::notice file={CHILD},line=")
                                    for a in github)


def test_what_the_child_drops_is_placed_at_its_drop_entries(monkeypatch):
    """The worked example (data/flare-next.yaml): a dropped document, dropped rules and
    dropped members, each at the child's entry that drops it, the parent's definition as
    the context (``drops …``)."""
    monkeypatch.chdir(BUNDLED.parents[2])  # files are named relative to the checkout
    child = Path(__file__).parent / "data" / "flare-next.yaml"
    result = invoke("spec", "diff", "flare/bce032c0", child, "--format", "json")
    assert result.exit_code == 0, result.output
    (spec,) = json.loads(result.stdout)["specs"]
    dropped = {(c["subject"], c["path"]): c for c in spec["changes"] if c["op"] == "removed"}
    expected = {
        ("document request_body", ""): ("drop_documents", r"^drop_documents: "),
        ("rule request.stream", ""): ("drop_rules", r"^drop_rules: "),
        ("shape of document corpus", "$.groups[*].requests[*].request_sha256"):
            ("drop_members", r"^  corpus_request: \{drop_members"),
        ("shape of document observation", "$.request_sha256"):
            ("drop_members", r"^  observation: \{drop_members")}
    for key, (made_by, pattern) in expected.items():
        change = dropped[key]
        assert change["file"].endswith("tests/spec_diff/data/flare-next.yaml"), key
        assert (change["line"], change["made_by"]) == (line_of(child, pattern), made_by), key
        assert change["context"]["relation"] == "drops"
        assert change["context"]["file"] == PARENT  # the bundled parent, relative to cwd
    assert dropped[("rule request.stream", "")]["context"]["line"] == line_of(
        BUNDLED, r"^  - id: request\.stream$")
    assert dropped[("shape of document observation", "$.request_sha256")]["context"] == {
        "relation": "drops", "subject": "member request_sha256 of shape observation",
        "file": PARENT, "line": line_of(BUNDLED, r"^      request_sha256:", after=r"^  observation:")}


# --------------------------------------------------------------------------- lint first

def test_both_sides_lint_clean_is_said_in_the_human_output(pull_request):
    edit_child(widened_rel_tol())
    text = invoke(*GATE)
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[0].startswith(
        "spec diff: 1 spec compared, 1 changed; both sides lint")
    data = json.loads(invoke(*GATE, "--format", "json").stdout)
    assert data["lint"]["new"]["errors"] == data["lint"]["old"]["errors"] == 0


def test_a_child_that_does_not_lint_stops_the_diff_naming_its_side_and_line(pull_request):
    edit_child(tail="rules:\n  - id: observation.extra\n    description: d\n"
                    "    for_each: request\n    given: \"observation:$.nothing\"\n"
                    "    assert: {equals: \"${no_such_constant}\"}\n")
    at = line_of(CHILD, r"no_such_constant")
    for fmt in ("text", "github", "json", "markdown"):
        result = invoke(*GATE, "--format", fmt, "--fail-on", "loosening")
        assert result.exit_code == 2 and result.stdout == "", fmt  # nothing compared
        lines = result.stderr.splitlines()
        assert lines[0].startswith("spec diff: not compared: ") and \
            "lint error" in lines[0] and "on the new side (working tree)" in lines[0]
        assert f"new side (working tree): {CHILD}: " in lines[1]
        assert any(f"{CHILD}:{at}:" in line and "[spec.unknown-constant]" in line
                   for line in lines[2:]), lines


def test_an_old_side_that_does_not_lint_is_named_as_the_base_revision(tmp_path, monkeypatch):
    """The base revision's file is named REV:path (never the scratch copy), under the old
    side; the working tree, which fixes it, lints clean."""
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    monkeypatch.chdir(repo)
    spec = repo / "specs" / "toy.yaml"
    good = (Path(__file__).parent / "data" / "base.yaml").read_text()
    spec.write_text(good.replace('assert: {equals: "${schema}"}',
                                 'assert: {equals: "${schema_name}"}', 1))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "broken")
    spec.write_text(good)
    result = invoke("spec", "diff", "--base", "HEAD", "specs")
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert "on the old side (HEAD)" in lines[0]
    assert lines[1] == "old side (HEAD): HEAD:specs/toy.yaml: 1 error"
    assert lines[2].startswith("HEAD:specs/toy.yaml:") and "${schema_name}" in lines[2]
    assert "[spec.unknown-constant]" in lines[2] and "flarespec-base-" not in result.stderr


def test_lint_annotations_use_the_issues_own_place(tmp_path):
    """spec lint --format github annotates each issue at its primary mark (file, line,
    column): the place lint blames, never another the issue relates to."""
    from flarespec.authoring.lint import lint_one

    child = tmp_path / "child.yaml"
    child.write_text("flarespec: 1\nid: toy/lint\nextends: review/base\ntitle: t\n"
                     "rules:\n  - id: toy.lint.bad\n    description: d\n"
                     "    given: \"index:$.schema\"\n    assert: {regx: x}\n")
    (tmp_path / "base.yaml").write_text(
        (Path(__file__).parent / "data" / "base.yaml").read_text())
    (issue,) = [i for i in lint_one(str(child)).errors if i.code == "spec.unknown-kind"]
    out = invoke("spec", "lint", child, "--format", "github", "--root", tmp_path).stdout
    (annotation,) = [a for a in out.splitlines() if "spec.unknown-kind" in a]
    assert annotation.startswith(f"::error file=child.yaml,line={issue.mark.line},"
                                 f"col={issue.mark.column},")
