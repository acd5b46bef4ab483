"""``spec diff --base REV``: every spec file of the working tree against the same file at REV.

What a pull-request check runs. The base side is read with ``git`` (``ls-tree`` and
``show``, never a network operation) into a temporary directory that keeps the relative
layout, so a base spec finds its parent beside it exactly as the working-tree spec does.
Both sides must lint (load, resolve and compile): a spec that does not is an error, not a
diff. A spec file only one side has is reported as added or deleted.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from flarespec.spec.diff import REVIEW, Change, DiffResult, diff_specs
from flarespec.spec.errors import SpecInvalid, SpecIssue

SPEC_SUFFIXES = (".yaml", ".yml")
_SPEC_HEADER = re.compile(rb"^flarespec\s*:", re.MULTILINE)  # what makes a YAML file a spec
GIT_CODE = "diff.git"


def _git(*args: str, cwd: Path) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as error:
        raise SpecInvalid([SpecIssue(f"cannot run git: {error.strerror}", None,
                                     GIT_CODE)]) from None
    if done.returncode:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SpecInvalid([SpecIssue(f"git {args[0]} failed: {message[-1] if message else ''}",
                                     None, GIT_CODE)])
    return done.stdout


def _is_spec(text: bytes) -> bool:
    return bool(_SPEC_HEADER.search(text))


def working_tree_specs(paths: list[str], cwd: Path) -> set[str]:
    """Spec files (YAML with a top-level ``flarespec:`` key) under ``paths``, as given."""
    found = set()
    for given in paths:
        path = cwd / given
        candidates = [path] if path.is_file() else \
            [p for p in sorted(path.rglob("*")) if p.is_file()] if path.is_dir() else []
        for candidate in candidates:
            if candidate.suffix in SPEC_SUFFIXES and _is_spec(candidate.read_bytes()):
                found.add(candidate.relative_to(cwd).as_posix())
    return found


def base_specs(rev: str, paths: list[str], cwd: Path, into: Path) -> set[str]:
    """Write the spec files under ``paths`` at ``rev`` below ``into``; their relative names."""
    listed = _git("ls-tree", "-r", "-z", "--name-only", rev, "--", *paths, cwd=cwd)
    found = set()
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        if not name.endswith(SPEC_SUFFIXES):
            continue
        text = _git("show", f"{rev}:./{name}", cwd=cwd)
        if _is_spec(text):
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text)
            found.add(name)
    return found


def check_rev(rev: str, cwd: Path) -> None:
    if rev.startswith("-"):  # never let a revision be read as an option of git
        raise SpecInvalid([SpecIssue(f"{rev!r} is not a revision", None, GIT_CODE)])
    _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", cwd=cwd)


def linted(ref: str | Path):
    """The resolved spec, after checking that it compiles (a spec that does not lint is an
    error, not something to diff)."""
    from flarespec.spec.compile import compile_spec
    from flarespec.spec.open import open_spec

    resolved = open_spec(ref)
    compile_spec(resolved)
    return resolved


def diff_against(rev: str, paths: list[str], cwd: Path | None = None) -> list[DiffResult]:
    """One DiffResult per spec file that changed, was added or was deleted since ``rev``.
    Every lint problem of either side is collected into one SpecInvalid."""
    cwd = Path(cwd or Path.cwd())
    check_rev(rev, cwd)
    with tempfile.TemporaryDirectory(prefix="flarespec-base-") as scratch:
        base_root = Path(scratch).resolve()
        before = base_specs(rev, paths or ["."], cwd, base_root)
        after = working_tree_specs(paths or ["."], cwd)
        results, issues = [], []
        for name in sorted(before | after):
            try:
                results.extend(_one_file(name, rev, before, after, cwd, base_root))
            except SpecInvalid as problem:
                issues.extend(_named(problem.issues, base_root, f"{rev}:"))
        if issues:
            raise SpecInvalid(issues)
        for result in results:
            relative_files(result, base_root, cwd.resolve())
    return results


def _one_file(name, rev, before, after, cwd: Path, base_root: Path) -> list[DiffResult]:
    old = linted(base_root / name) if name in before else None
    new = linted(cwd / name) if name in after else None
    if old is not None and new is not None:
        result = diff_specs(old, new)
        return [result] if result.changes else []
    spec = new or old
    what = "added" if new is not None else "deleted"
    change = Change(REVIEW, "spec file", name, what, None if new else spec.id,
                    spec.id if new else None,
                    f"a spec file {what} since {rev}: review it whole", file=name, line=1,
                    op="added" if new else "removed")
    return [DiffResult(old.id if old else None, new.id if new else None, [change])]


def _named(issues: list[SpecIssue], base_root: Path, prefix: str) -> list[SpecIssue]:
    """Issues of a base file name it as ``REV:path``, not as a temporary file."""
    from flarespec.spec.yamlmarks import Mark

    named = []
    for issue in issues:
        mark = issue.mark
        if mark and Path(mark.file).is_relative_to(base_root):
            mark = Mark(prefix + Path(mark.file).relative_to(base_root).as_posix(), mark.line,
                        mark.column)
        named.append(SpecIssue(issue.message, mark, issue.code))
    return named


def relative_files(result: DiffResult, *roots: Path) -> None:
    """Name files relative to the first of ``roots`` that holds them (GitHub annotations
    want repository paths; a base file is named by its path in the tree)."""
    for change in result.changes:
        if change.file is None:
            continue
        path = Path(change.file)
        for root in roots:
            if path.is_absolute() and path.is_relative_to(root):
                change.file = path.relative_to(root).as_posix()
                break
