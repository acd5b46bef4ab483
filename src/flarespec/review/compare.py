"""What ``spec diff`` compares: both sides linted (review/sides.py), then diffed, either
every spec file changed since a git revision (review/git.py) or two specs given.

Its own module because it is above both of those: git.py lints the sides of a revision with
sides.py, so ``compared`` (which picks between them) in sides.py made the two import each
other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from flarespec.review.diff import diff_specs
from flarespec.review.git import diff_against, relative_files
from flarespec.review.sides import NEW, OLD, LintFailed, Linted, lint_side


def compared(refs: tuple, base: str | None, lint: Callable):
    """What ``spec diff`` compares, each side linted first by ``lint`` (a spec reference ->
    its lint result): (the DiffResults, Linted). ``base``: every spec file under ``refs``
    against git revision ``base`` (review/git.py); else ``refs`` is OLD and NEW. ValueError
    for a wrong number of refs."""
    linted = Linted(lint)
    if base is not None:
        return diff_against(base, list(refs), linted), linted
    if len(refs) != 2:
        raise ValueError("give OLD and NEW specs, or --base REV [PATH...]")
    failures = []
    sides = []
    for side, ref in ((OLD, refs[0]), (NEW, refs[1])):
        try:
            sides += lint_side([ref], side, f"{side} side", linted)
        except LintFailed as problem:  # both sides' errors, in one report
            failures += problem.failures
    if failures:
        raise LintFailed(failures)
    result = diff_specs(*sides)
    relative_files(result, Path.cwd().resolve())
    return [result], linted
