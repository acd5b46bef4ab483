"""Running git in a test repository (the spec-review tests build branches in tmp_path)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> None:
    """Run ``git ARGS`` in ``repo`` with a fixed identity; fail the test when git fails."""
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "specs" / "flare" / "bce032c0.yaml"
NEW_REVISION = "c0ffee15a1b2c3d4e5f60718293a4b5c6d7e8f90"


def revision_branch(repo: Path, drop_rules: tuple[str, ...]) -> Path:
    """A pull request as the workflows see it: ``main`` holds the bundled spec in
    specs/flare/ and an empty acknowledgements file; the current branch adds a child spec
    for a new revision (scaffolded as documented) that drops ``drop_rules``; origin/main is
    main, as actions/checkout with fetch-depth 0 leaves it. Returns the child's path
    (relative to ``repo``, which the caller has made the current directory)."""
    import shutil

    from click.testing import CliRunner

    from flarespec.authoring.scaffold import DRAFT_LINES
    from flarespec.cli import main

    (repo / "specs" / "flare").mkdir(parents=True)
    (repo / ".github").mkdir()
    shutil.copy(BUNDLED, repo / "specs" / "flare" / "bce032c0.yaml")
    (repo / ".github" / "spec-acks.yaml").write_text("[]\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    git(repo, "checkout", "-q", "-b", "flare-c0ffee15")
    child = Path("specs/flare/c0ffee15.yaml")
    scaffolded = CliRunner().invoke(main, ["spec", "new", "--from", "flare/bce032c0",
                                           "--revision", NEW_REVISION, "--out", str(child)])
    assert scaffolded.exit_code == 0, scaffolded.output
    released = child.read_text().replace("\n".join(DRAFT_LINES) + "\n", "")  # as a release PR
    child.write_text(released + f"drop_rules: [{', '.join(drop_rules)}]\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "flare c0ffee15")
    return child
