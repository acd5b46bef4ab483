"""``spec diff --base REV``: every spec file of the working tree against the same file at REV.

What a pull-request check runs. The base side is read with ``git`` (``ls-tree`` and
``show``, never a network operation) into a temporary directory that keeps the relative
layout, so a base spec finds its parent beside it exactly as the working-tree spec does.
Both sides must lint (load, resolve and compile): a spec that does not is an error, not a
diff. A spec file only one side has is reported as added or deleted.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path, PurePosixPath

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
        reason = message[-1] if message else f"exit status {done.returncode}, no message"
        raise SpecInvalid([SpecIssue(f"git {args[0]} failed: {reason}", None, GIT_CODE)])
    return done.stdout


def repository_root(cwd: Path) -> Path:
    """The working tree's top directory (resolved): ``--base`` names every file relative to
    it, whatever directory the command runs from."""
    listed = _git("rev-parse", "--show-toplevel", cwd=cwd)
    return Path(os.fsdecode(listed.rstrip(b"\n"))).resolve()


def _inside(name: str, root: Path) -> Path:
    """``root / name``, refused unless it stays below ``root`` (no absolute name, no ``..``):
    the base side is written only inside its scratch directory."""
    parts = PurePosixPath(name).parts
    if not parts or PurePosixPath(name).is_absolute() or any(p in ("", ".", "..")
                                                                 for p in parts):
        raise SpecInvalid([SpecIssue(f"git listed {name!r}, not a path inside the repository",
                                     None, GIT_CODE)])
    target = root.joinpath(*parts)
    if not target.resolve().is_relative_to(root.resolve()):
        raise SpecInvalid([SpecIssue(f"git listed {name!r}, which leads outside {root}",
                                     None, GIT_CODE)])
    return target


def _is_spec(text: bytes) -> bool:
    return bool(_SPEC_HEADER.search(text))


def working_tree_specs(paths: list[str], cwd: Path, root: Path | None = None) -> set[str]:
    """Spec files (YAML with a top-level ``flarespec:`` key) under ``paths`` (relative to
    ``cwd``), named relative to ``root`` (default: ``cwd``)."""
    root = Path(root or cwd)
    found = set()
    for given in paths:
        path = Path(os.path.normpath(cwd / given))
        candidates = [path] if path.is_file() else \
            [p for p in sorted(path.rglob("*")) if p.is_file()] if path.is_dir() else []
        for candidate in candidates:
            if candidate.suffix in SPEC_SUFFIXES and _is_spec(candidate.read_bytes()):
                relative = Path(os.path.relpath(candidate, root)).as_posix()
                if relative.split("/")[0] == "..":
                    raise SpecInvalid([SpecIssue(
                        f"{given}: {candidate} is outside the repository {root}", None,
                        GIT_CODE)])
                found.add(relative)
    return found


def _listed(rev: str, paths: list[str], cwd: Path) -> list[str]:
    listed = _git("ls-tree", "-r", "-z", "--full-name", "--name-only", rev, "--", *paths,
                  cwd=cwd)
    return [name for name in filter(None, listed.decode("utf-8", "surrogateescape")
                                    .split("\0")) if name.endswith(SPEC_SUFFIXES)]


def base_specs(rev: str, paths: list[str], cwd: Path, into: Path) -> set[str]:
    """Write the spec files under ``paths`` (relative to ``cwd``) at ``rev`` below ``into``;
    their names relative to the repository root (``--full-name``), so a file never lands
    outside ``into`` whatever directory the command runs from. The spec files beside each
    of them are written too (not returned): a base spec given alone finds its parent."""
    selected = _listed(rev, paths, cwd)
    folders = sorted({PurePosixPath(name).parent.as_posix() for name in selected})
    beside = _listed(rev, [f":(top,literal){folder}/" if folder != "." else ":(top)."
                           for folder in folders], cwd) if folders else []
    found = set()
    for name in dict.fromkeys([*selected, *beside]):
        target = _inside(name, into)
        text = _git("show", f"{rev}:{name}", cwd=cwd)  # REV:path is relative to the root
        if _is_spec(text):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text)
            if name in selected:
                found.add(name)
    return found


def check_rev(rev: str, cwd: Path) -> None:
    if rev.startswith("-"):  # never let a revision be read as an option of git
        raise SpecInvalid([SpecIssue(f"{rev!r} is not a revision", None, GIT_CODE)])
    try:
        _git("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)
    except SpecInvalid as problem:
        reason = problem.issues[0].message.removeprefix("git rev-parse failed: ")
        raise SpecInvalid([SpecIssue(f"--base {rev!r} is not a commit of this repository "
                                     f"(git: {reason})", None, GIT_CODE)]) from None


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
    cwd = Path(cwd or Path.cwd()).resolve()
    check_rev(rev, cwd)
    root = repository_root(cwd)
    with tempfile.TemporaryDirectory(prefix="flarespec-base-") as scratch:
        base_root = Path(scratch).resolve()
        before = base_specs(rev, paths or ["."], cwd, base_root)
        after = working_tree_specs(paths or ["."], cwd, root)
        results, issues = [], []
        for name in sorted(before | after):
            try:
                results.extend(_one_file(name, rev, before, after, root, base_root))
            except SpecInvalid as problem:
                issues.extend(_named(problem.issues, base_root, f"{rev}:"))
        if issues:
            raise SpecInvalid(issues)
        for result in results:
            relative_files(result, base_root, root)
    return results


def _one_file(name, rev, before, after, root: Path, base_root: Path) -> list[DiffResult]:
    old = linted(base_root / name) if name in before else None
    new = linted(root / name) if name in after else None
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
