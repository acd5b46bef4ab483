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
from dataclasses import replace
from pathlib import Path, PurePosixPath

from flarespec.engine.directions import NEUTRAL, REVIEW
from flarespec.review.changes import Change, DiffResult, ordered
from flarespec.review.diff import diff_specs
from flarespec.review.sides import NEW, OLD, LintFailed, lint_side
from flarespec.compiler.errors import SpecInvalid, SpecIssue

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
    """The resolved spec, after checking that it compiles (``spec impact``; ``spec diff``
    lints its sides in full: review/sides.py)."""
    from flarespec.compiler.compile import compile_spec
    from flarespec.compiler.open import open_spec

    resolved = open_spec(ref)
    compile_spec(resolved)
    return resolved


def diff_against(rev: str, paths: list[str], linted, cwd: Path | None = None
                 ) -> list[DiffResult]:
    """One DiffResult per spec file that changed since ``rev``; an added file is compared
    with its parent and with the base specs it supersedes (see ``_added``), a file moved
    (the same id at another path) with its old self. Both sides are linted first
    (review/sides.py: ``linted`` lints and counts their warnings): every lint error of
    either side is collected into one LintFailed, each side named."""
    cwd = Path(cwd or Path.cwd()).resolve()
    check_rev(rev, cwd)
    root = repository_root(cwd)
    with tempfile.TemporaryDirectory(prefix="flarespec-base-") as scratch:
        base = _Base(rev, cwd, root, Path(scratch).resolve(), linted)
        before = sorted(base_specs(rev, paths or ["."], cwd, base.root))
        after = sorted(working_tree_specs(paths or ["."], cwd, root))
        failures, old, new = [], {}, {}
        for side, names, where, specs in ((OLD, before, base.root, old),
                                          (NEW, after, root, new)):
            try:
                found = lint_side([where / name for name in names], side, base.side(side),
                                  linted, base.named, base.shown)
                specs.update(zip(names, found))
            except LintFailed as problem:
                failures += problem.failures
        if failures:
            raise LintFailed(failures)
        results = _compared(old, new, base)
        for result in results:
            relative_files(result, base.root, root)
    return results


class _Base:
    """The base revision: where its files are written, and how a parent is found in it."""

    def __init__(self, rev: str, cwd: Path, root: Path, scratch: Path, linted):
        self.rev, self.cwd, self.root, self.tree = rev, cwd, scratch, root
        self.linted = linted

    def side(self, side: str) -> str:
        return f"old side ({self.rev})" if side == "old" else "new side (working tree)"

    def named(self, issues: list[SpecIssue]) -> list[SpecIssue]:
        return _named(issues, self.root, f"{self.rev}:")

    def shown(self, spec: str) -> str:
        """A linted file as the report names it: ``REV:path`` for the base side."""
        path = Path(spec)
        if path.is_absolute() and path.is_relative_to(self.root):
            return f"{self.rev}:{path.relative_to(self.root).as_posix()}"
        if path.is_absolute() and path.is_relative_to(self.tree):
            return path.relative_to(self.tree).as_posix()
        return spec

    def _linted(self, path: Path, side: str = "old"):
        """A parent, linted (its warnings are counted where it is compared as a file)."""
        return lint_side([path], side, self.side(side), self.linted, self.named, self.shown,
                         counted=False)[0]

    def parent(self, spec) -> tuple[object, str] | None:
        """The parent of a new spec as the base revision has it, else (a parent new in this
        change, or one outside the repository: a bundled spec) as this tree has it; with
        where it was read, for the change that says so. None without ``extends``."""
        if len(spec.chain) < 2:
            return None
        found = Path(spec.chain[1].path).resolve()
        if not found.is_relative_to(self.tree):
            return self._linted(found), f"{found} (outside the repository)"
        name = found.relative_to(self.tree).as_posix()
        if name in _listed(self.rev, [f":(top,literal){name}"], self.cwd):
            if not (self.root / name).exists():
                base_specs(self.rev, [f":(top,literal){name}"], self.cwd, self.root)
            return self._linted(self.root / name), f"{self.rev}:{name}"
        return self._linted(found, "new"), \
            f"{name} (new in this change too: as this tree has it)"


def _compared(old: dict, new: dict, base: _Base) -> list[DiffResult]:
    added = sorted(set(new) - set(old))
    deleted = sorted(set(old) - set(new))
    moved = {}  # added name -> deleted name holding the same spec id
    for name in added:
        same = [d for d in deleted if old[d].id == new[name].id and d not in moved.values()]
        if same:
            moved[name] = same[0]
    results, superseded = [], {}
    for name in sorted(set(old) | set(new)):
        if name in old and name in new:
            result = diff_specs(old[name], new[name])
            results += [result] if result.changes else []
        elif name in moved:
            result = diff_specs(old[moved[name]], new[name])
            result.changes = ordered([Change(
                NEUTRAL, "spec file", name, f"moved from {moved[name]}", moved[name], name,
                "the same spec id at another path: compared with its old file", file=name,
                line=1), *result.changes])
            results.append(result)
        elif name in new:
            results += _added(name, new, old, base, superseded)
    for name in deleted:
        if name in moved.values():
            continue
        by = superseded.get(name)
        reason = f"a spec file deleted since {base.rev}: " + (
            f"superseded by {', '.join(by)}, compared with it" if by else "review it whole")
        results.append(DiffResult(old[name].id, None, [Change(
            NEUTRAL if by else REVIEW, "spec file", name, "deleted", old[name].id, None,
            reason, file=name, line=1, op="removed")]))
    return results


def _added(name: str, new: dict, old: dict, base: _Base, superseded: dict) -> list[DiffResult]:
    """A spec file new since the base revision: compared with its parent (``_Base.parent``)
    and with every base spec it supersedes, each change classed as for any edit. A base
    spec is superseded when its resolved ``applies_to`` provably selected the inputs this
    one selects (the same ``given`` and ``equals``, as lint decides an overlap) and no spec
    of that id selects them in this tree any more (deleted, or its applies_to changed).
    With neither it is one review change: review it whole."""
    spec = new[name]
    still = {other.id for other_name, other in new.items() if other_name != name and
             _same_inputs(spec.plain().get("applies_to"), other.plain().get("applies_to"))}
    compared: list[tuple[object, str]] = []
    parent = base.parent(spec)
    if parent is not None:
        compared.append((parent[0], f"its parent {parent[0].id} ({parent[1]})"))
    own = spec.plain().get("applies_to")
    for other_name, other in sorted(old.items()):
        if other.id in still or not _same_inputs(own, other.plain().get("applies_to")):
            continue
        superseded.setdefault(other_name, []).append(name)
        if parent is None or parent[1] != f"{base.rev}:{other_name}":  # not twice
            compared.append((other, f"{other.id} ({base.rev}:{other_name}), which applied to "
                                    f"the same inputs"))
    if not compared:
        return [DiffResult(None, spec.id, [Change(
            REVIEW, "spec file", name, "added", None, spec.id,
            f"a spec file added since {base.rev}: review it whole", file=name, line=1,
            op="added")])]
    marker = Change(NEUTRAL, "spec file", name, "added", None, spec.id,
                    f"a spec file added since {base.rev}: compared with " +
                    "; and with ".join(what for _, what in compared) +
                    "; each change is classed as for an edit", file=name, line=1, op="added")
    results = []
    for index, (other, _) in enumerate(compared):
        result = diff_specs(other, spec)
        if index == 0:
            result.changes = ordered([marker, *result.changes])
        results.append(result)
    return results


def _same_inputs(own, other) -> bool:
    """Two resolved ``applies_to`` that provably hold for the same inputs: the same
    ``given`` and the same ``equals`` value (what lint reports as an overlap)."""
    return isinstance(own, dict) and isinstance(other, dict) and "equals" in own and \
        "equals" in other and own.get("given") == other.get("given") and \
        own["equals"] == other["equals"]


def _named(issues: list[SpecIssue], base_root: Path, prefix: str) -> list[SpecIssue]:
    """Issues of a base file name it as ``REV:path``, not as a temporary file: their marks,
    the places they relate to, and the places their messages name."""
    from flarespec.compiler.yamlmarks import Mark

    def named(mark):
        if mark and Path(mark.file).is_relative_to(base_root):
            return Mark(prefix + Path(mark.file).relative_to(base_root).as_posix(), mark.line,
                        mark.column)
        return mark
    return [replace(issue, mark=named(issue.mark),
                    message=issue.message.replace(f"{base_root}/", prefix),
                    **({"related": tuple(named(m) for m in issue.related)}
                       if getattr(issue, "related", ()) else {}))
            for issue in issues]


def relative_files(result: DiffResult, *roots: Path) -> None:
    """Name files relative to the first of ``roots`` that holds them (GitHub annotations
    want repository paths; a base file is named by its path in the tree); the last root is
    what they are relative to (``result.root``: the repository, or the current directory)."""
    result.root = roots[-1]
    for change in result.changes:
        change.file = _relative(change.file, roots)
        if change.context is not None:
            change.context = replace(change.context,
                                     file=_relative(change.context.file, roots))


def _relative(file: str | None, roots: tuple[Path, ...]) -> str | None:
    if file is not None:
        path = Path(file)
        for root in roots:
            if path.is_absolute() and path.is_relative_to(root):
                return path.relative_to(root).as_posix()
    return file
