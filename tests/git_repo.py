"""Running git in a test repository (the spec-review tests build branches in tmp_path)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> None:
    """Run ``git ARGS`` in ``repo`` with a fixed identity; fail the test when git fails."""
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)
