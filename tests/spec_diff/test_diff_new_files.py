"""``spec diff --base REV``: a spec file new since REV is compared with what it replaces (issue
14 item 1): its parent (as REV has it, or as the tree has it when the parent is new too),
and a base spec it supersedes (the same inputs, no longer selected by that spec); a file
moved is compared with its old self; a new file related to nothing is reviewed whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from git_repo import git

DATA = Path(__file__).parent / "data"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """The base commit holds specs/base.yaml (review/base), the cwd is the repository."""
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    shutil.copy(DATA / "base.yaml", root / "specs" / "base.yaml")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    return root


def specs_of(*args) -> dict:
    result = invoke("spec", "diff", "--base", "HEAD", "specs", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return {(s["old"], s["new"]): s["changes"] for s in json.loads(result.stdout)["specs"]}


def child(name: str, spec_id: str, parent: str = "review/base", extra: str = "") -> str:
    return (f"flarespec: 1\nid: {spec_id}\nextends: {parent}\ntitle: {name}\n"
            "applies_to: {given: \"index:$.schema\", equals: \"toy-inventory-v2\"}\n" + extra)


DROP = "drop_rules: [toy.stock.finite]\n"


def test_a_new_child_is_compared_with_its_parent_as_the_base_has_it(repo):
    (repo / "specs" / "next.yaml").write_text(child("next", "review/next", extra=DROP))
    # the parent is edited in the same change: the child is still compared with the base's
    base = repo / "specs" / "base.yaml"
    base.write_text(base.read_text().replace("title: Toy inventory, reference spec",
                                             "title: Toy inventory, edited"))
    found = specs_of()
    changes = found[("review/base", "review/next")]
    dropped = next(c for c in changes if c["subject"] == "rule toy.stock.finite")
    assert (dropped["class"], dropped["op"]) == ("loosening", "removed")
    assert (dropped["file"], dropped["line"]) == ("specs/next.yaml", 6)  # its drop_rules
    title = next(c for c in changes if c["subject"] == "title")
    assert title["old"] == "Toy inventory, reference spec"  # the base revision's parent
    marker = next(c for c in changes if c["subject"] == "spec file")
    assert marker["class"] == "neutral"
    assert "compared with its parent review/base (HEAD:specs/base.yaml)" in marker["reason"]
    assert invoke("spec", "diff", "--base", "HEAD", "specs", "--fail-on",
                  "loosening").exit_code == 1


def test_a_new_child_of_a_new_parent_is_compared_with_the_parent_in_the_tree(repo):
    (repo / "specs" / "mid.yaml").write_text(child("mid", "review/mid"))
    (repo / "specs" / "leaf.yaml").write_text(
        child("leaf", "review/leaf", parent="review/mid", extra=DROP).replace(
            "toy-inventory-v2", "toy-inventory-v3"))
    found = specs_of()
    assert ("review/base", "review/mid") in found
    leaf = found[("review/mid", "review/leaf")]
    marker = next(c for c in leaf if c["subject"] == "spec file")
    assert "its parent review/mid (specs/mid.yaml (new in this change too" in marker["reason"]
    assert any(c["subject"] == "rule toy.stock.finite" and c["class"] == "loosening"
               for c in leaf)


def test_a_spec_replacing_a_deleted_one_for_the_same_inputs_is_compared_with_it(repo):
    """No extends: a full copy under a new id that takes over the deleted spec's inputs."""
    text = (DATA / "base.yaml").read_text().replace("id: review/base", "id: review/copy")
    text = text.replace("  - id: toy.stock.finite", "  - id: toy.stock.finite-gone", 1)
    (repo / "specs" / "copy.yaml").write_text(text)
    (repo / "specs" / "base.yaml").unlink()
    found = specs_of()
    changes = found[("review/base", "review/copy")]
    assert any(c["subject"] == "rule toy.stock.finite" and c["class"] == "loosening"
               for c in changes)
    marker = next(c for c in changes if c["subject"] == "spec file")
    assert "review/base (HEAD:specs/base.yaml), which applied to the same inputs" in \
        marker["reason"]
    [deleted] = found[("review/base", None)]
    assert deleted["class"] == "neutral" and "superseded by specs/copy.yaml" in \
        deleted["reason"]


def test_a_spec_beside_one_that_still_selects_the_same_inputs_supersedes_nothing(repo):
    text = (DATA / "base.yaml").read_text().replace("id: review/base", "id: review/twin")
    (repo / "specs" / "twin.yaml").write_text(text)
    found = specs_of()
    assert list(found) == [(None, "review/twin")]


def test_a_moved_file_is_compared_with_its_old_self(repo):
    (repo / "specs" / "v1").mkdir()
    text = (repo / "specs" / "base.yaml").read_text()
    (repo / "specs" / "v1" / "base.yaml").write_text(text.replace("shelf_count: 2",
                                                                  "shelf_count: 3"))
    (repo / "specs" / "base.yaml").unlink()
    found = specs_of()
    assert list(found) == [("review/base", "review/base")]
    changes = found[("review/base", "review/base")]
    moved = next(c for c in changes if c["subject"] == "spec file")
    assert (moved["class"], moved["change"]) == ("neutral", "moved from specs/base.yaml")
    assert any(c["subject"] == "constant shelf_count" for c in changes)


def test_a_new_file_related_to_nothing_is_reviewed_whole_and_fails_review(repo):
    text = (DATA / "base.yaml").read_text().replace("id: review/base", "id: other/one")
    (repo / "specs" / "one.yaml").write_text(text.replace("${schema}", "other-v1"))
    [[added]] = specs_of().values()
    assert (added["class"], added["op"], added["path"]) == ("review", "added", "specs/one.yaml")
    assert added["reason"] == "a spec file added since HEAD: review it whole"
    result = invoke("spec", "diff", "--base", "HEAD", "specs", "--fail-on", "review")
    assert result.exit_code == 1
    assert "FAILED, 1 unacknowledged review change" in result.stdout
    assert invoke("spec", "diff", "--base", "HEAD", "specs", "--fail-on",
                  "loosening").exit_code == 0


def test_a_parent_that_does_not_lint_at_the_base_is_named_by_its_base_path(repo):
    base = repo / "specs" / "base.yaml"
    base.write_text(base.read_text().replace("title: Toy inventory, reference spec",
                                             "title: [not, a, title]"))
    git(repo, "commit", "-q", "-am", "broken")
    base.write_text((DATA / "base.yaml").read_text())
    (repo / "specs" / "next.yaml").write_text(child("next", "review/next"))
    result = invoke("spec", "diff", "--base", "HEAD", "specs")
    assert result.exit_code == 2
    assert "HEAD:specs/base.yaml:" in result.output and "Traceback" not in result.output
