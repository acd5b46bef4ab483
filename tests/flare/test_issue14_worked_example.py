"""Issue 14's worked example, end to end: a correct child for an imagined revision
(tests/flare/data/d00dfeed.yaml) lints clean, its writer's packets pass, the inherited
catalog is green, and on a git branch that adds it ``spec diff --base`` shows every change
correctly classed; the gate fails once the child also drops or weakens a rule and passes
when that loosening is acknowledged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.adapter.commands import measure
from flarespec.cli import main
from flarespec.fixtures.writers import write_pair
from flarespec.authoring.lint import lint_one
from flarespec.compiler.load import bundled_spec_dir
from flarespec.compiler.open import open_compiled
from git_repo import git

CHILD = Path(__file__).parent / "data" / "d00dfeed.yaml"
BUNDLED = bundled_spec_dir() / "flare" / "bce032c0.yaml"
GATE = ["spec", "diff", "--base", "main", "--fail-on", "loosening", "--ack", "acks.yaml",
        "specs"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_the_child_lints_without_an_error():
    result = lint_one(str(CHILD))
    assert result.errors == [], [str(i) for i in result.errors]


def test_the_writer_follows_the_child_and_its_packets_pass(tmp_path):
    spec = open_compiled(str(CHILD))
    baseline, candidate = write_pair(tmp_path / "pair", spec)
    outcome = measure(baseline, candidate, tmp_path / "r.json", spec_path=CHILD)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:3]
    corpus = json.loads((baseline.parent / "corpus.json").read_text())
    assert [g["kind"] for g in corpus["groups"]][5:8] == ["decode-c4", "decode-c8",
                                                          "prefill-65536"]
    sidecar = json.loads(next(baseline.parent.rglob("observation.json")).read_text())
    assert sidecar["transport"] == "http/1.1"


def test_the_inherited_catalog_is_green():
    result = invoke("spec", "test", CHILD)
    assert result.exit_code == 0, [l for l in result.output.splitlines() if "FAIL" in l][:5]
    assert " 0 failed, " in result.output.splitlines()[-1]


@pytest.fixture
def branch(tmp_path, monkeypatch) -> Path:
    repo = tmp_path / "repo"
    (repo / "specs" / "flare").mkdir(parents=True)
    shutil.copy(BUNDLED, repo / "specs" / "flare" / "bce032c0.yaml")
    (repo / "acks.yaml").write_text("[]\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "checkout", "-q", "-b", "flare-d00dfeed")
    shutil.copy(CHILD, repo / "specs" / "flare" / "d00dfeed.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "flare d00dfeed")
    monkeypatch.chdir(repo)
    return repo


def changes(result) -> dict[str, str]:
    document = json.loads(result.stdout)
    return {f"{c['subject']} {c['path']}".strip(): c["class"]
            for diff in document["specs"] for c in diff["changes"]}


def test_every_change_is_visible_and_classed_and_a_correct_child_passes_the_gate(branch):
    result = invoke(*GATE, "--format", "json")
    found = changes(result)
    assert found["constant group_matrix group_matrix[kind=decode-c8]"] == "review"  # one entry
    assert found["constant group_matrix group_matrix[kind=prefix-hit].reused_tokens"] == "review"
    assert found["constant idle_metrics idle_metrics[name=flare_prompt_tokens_reused_total]"
                 ".name"] == "review"
    assert found["constant prefix prefix.tokens"] == "review"
    assert not [key for key in found if "group_matrix[6]" in key or "[kind=prefix-hit].kind"
                in key]  # nothing shifted by position
    assert found["shape of document observation $.transport"] == "tightening"
    assert found["shape of document memory_report $.kv_pages_reserved"] == "tightening"
    assert not any(cls == "loosening" for cls in found.values()), found
    assert invoke(*GATE).exit_code == 0


def test_the_gate_fails_on_a_dropped_and_a_weakened_rule_until_acknowledged(branch):
    child = branch / "specs" / "flare" / "d00dfeed.yaml"
    child.write_text(child.read_text() + """\
drop_rules: [snapshot.delta.completed]
rules:
  - id: observation.http-status
    replaces: true
    clause: "5"
    description: The HTTP status is a success (weakened).
    for_each: request
    given: "observation:$.http_status"
    assert: {range: {min: 200, max: 299}}
""")
    git(branch, "commit", "-q", "-am", "weaken")
    failed = invoke(*GATE)
    assert failed.exit_code == 1, failed.output
    document = json.loads(invoke(*GATE, "--format", "json").stdout)
    hits = document["gate"]["changes"]
    assert {c["subject"] for c in hits} == {"rule snapshot.delta.completed",
                                           "rule observation.http-status"}
    (branch / "acks.yaml").write_text("".join(
        f"- fingerprint: {c['fingerprint']}\n  reason: accepted in review (test)\n"
        for c in hits))
    assert invoke(*GATE).exit_code == 0
