"""Issue 13: ``spec diff --base REV`` run from a subdirectory of the repository.

The base side is written into a scratch directory; a path such as ``../specs`` used to be
joined to it as git printed it (relative to the current directory) and so wrote the base
specs outside the scratch directory, over whatever was there. Names are now taken relative
to the repository root (``ls-tree --full-name``) and every target is checked to stay inside
the scratch directory. An unknown revision names itself and git's own message.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from git_repo import git

DATA = Path(__file__).parent / "data"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "sub" / "deeper").mkdir(parents=True)
    for name in ("base.yaml", "bounds.yaml"):
        shutil.copy(DATA / name, root / "specs" / name)
    (root / "sub" / "README").write_text("a directory without specs\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def scratch_parent(tmp_path, monkeypatch) -> Path:
    """The directory the scratch directory is made in, with decoys where an escaping base
    file would land (``<parent>/specs/*.yaml`` for ``../specs``, one level up for
    ``../../specs``)."""
    parent = tmp_path / "tmp" / "scratch"
    for decoy in (parent / "specs", parent.parent / "specs"):
        decoy.mkdir(parents=True)
        for name in ("base.yaml", "bounds.yaml"):
            (decoy / name).write_bytes(b"decoy: keep me\n")
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    return parent


@pytest.mark.parametrize("where, given", [("sub", "../specs"),
                                          ("sub/deeper", "../../specs"),
                                          ("sub", "../specs/bounds.yaml")])
def test_base_from_a_subdirectory_writes_nothing_outside_its_scratch_dir(
        repo, scratch_parent, monkeypatch, where, given):
    outside = scratch_parent.parent
    before, repo_before = tree(outside), tree(repo)
    (repo / "specs" / "bounds.yaml").write_text(
        (DATA / "bounds.yaml").read_text().replace("min: 2, max: 100", "min: 3, max: 100"))
    repo_before = tree(repo)
    monkeypatch.chdir(repo / where)
    top = "/".join([".."] * len(where.split("/")))  # the repository, from where
    result = invoke("spec", "diff", "--base", "HEAD", given, "--format", "github", "--root", top)
    assert result.exit_code == 0, result.output
    below = invoke("spec", "diff", "--base", "HEAD", given, "--format", "github").stdout
    assert f"file={top}/specs/bounds.yaml,line=14" in below  # relative to the current directory
    # the one change, named by its repository path, found by comparing the right files
    # one annotation per change, then (issue 16) the run's one summary annotation
    assert result.stdout.count("::notice file=") == 1, result.stdout
    assert result.stdout.splitlines()[-1] == \
        "::notice title=flarespec spec diff::spec diff: 1 spec compared, 1 changed; both sides lint clean"
    assert "file=specs/bounds.yaml,line=14" in result.stdout
    assert "assert.range.min" in result.stdout
    assert tree(outside) == before  # decoys untouched, scratch dir removed, nothing added
    assert tree(repo) == repo_before


def test_base_from_a_subdirectory_with_nothing_changed_is_empty(repo, scratch_parent,
                                                                 monkeypatch):
    before = tree(scratch_parent.parent)
    monkeypatch.chdir(repo / "sub")
    result = invoke("spec", "diff", "--base", "HEAD", "../specs", "--fail-on", "any")
    assert result.exit_code == 0 and result.output.strip().splitlines() == [
        "spec diff: no spec changed; both sides lint clean",
        "spec gate --fail-on any: passed, no unacknowledged non-neutral change "
        "(no acknowledgements file)"]
    assert tree(scratch_parent.parent) == before


def test_base_from_a_subdirectory_without_paths_covers_only_that_directory(repo, monkeypatch):
    (repo / "specs" / "bounds.yaml").write_text(
        (DATA / "bounds.yaml").read_text().replace("min: 2, max: 100", "min: 3, max: 100"))
    monkeypatch.chdir(repo / "sub")
    result = invoke("spec", "diff", "--base", "HEAD")
    assert result.exit_code == 0 and result.output.strip() == "spec diff: no spec changed; both sides lint clean"


def test_base_names_a_base_lint_error_by_its_repository_path(repo, monkeypatch):
    bounds = repo / "specs" / "bounds.yaml"
    bounds.write_text(bounds.read_text() + "x: 1\n")
    git(repo, "commit", "-q", "-am", "broken")
    shutil.copy(DATA / "bounds.yaml", bounds)
    monkeypatch.chdir(repo / "sub")
    result = invoke("spec", "diff", "--base", "HEAD", "../specs")
    assert result.exit_code == 2
    assert "HEAD:specs/bounds.yaml:" in result.output and "[spec." in result.output


def test_a_path_outside_the_repository_is_an_error(repo, tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(repo / "sub")
    result = invoke("spec", "diff", "--base", "HEAD", "../../elsewhere")
    assert result.exit_code == 2 and "[diff.git]" in result.output
    assert "outside" in result.output and "Traceback" not in result.output


def test_an_unknown_revision_names_itself_and_gits_reason(repo, monkeypatch):
    monkeypatch.chdir(repo)
    before = tree(repo)
    result = invoke("spec", "diff", "--base", "no-such-branch")
    assert result.exit_code == 2
    assert "'no-such-branch' is not a commit" in result.output
    assert "(git: fatal: " in result.output and "[diff.git]" in result.output
    assert "failed:  [" not in result.output  # no empty reason
    assert tree(repo) == before
