"""The two sides of ``spec diff``, linted before they are compared.

A diff of a spec that does not lint would review a contract nobody can use: both sides are
linted first, each file as ``spec lint`` lints it on its own (the command passes
authoring/lint.py's ``lint_one``: review/ sits below authoring/ and does not import it;
everything but the check of ``applies_to`` against the other specs of the library, which is
the library's, not the change's: the pull-request job's ``spec lint`` over every spec file
makes it). Any error of either side stops the command before anything is
compared: ``LintFailed`` names the side of each (``old side (origin/main)``, ``new side
(working tree)``), and the command exits 2. When both sides lint, the report's title says so
(``both sides lint clean``), with the warnings they have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from flarespec.compiler.errors import SpecInvalid, SpecIssue

OLD, NEW = "old", "new"


class LintFailed(SpecInvalid):
    """Lint errors of one or both sides: (side, spec, its errors), each side named."""

    def __init__(self, failures: list[tuple[str, str, list[SpecIssue]]]):
        self.failures = failures
        super().__init__([issue for _, _, issues in failures for issue in issues])

    def __str__(self) -> str:
        count = len(self.issues)
        sides = list(dict.fromkeys(side for side, _, _ in self.failures))
        lines = [f"spec diff: not compared: {count} lint error{'s' * (count != 1)} on the "
                 f"{' and the '.join(sides)} (`flarespec spec lint` reports the same; fix "
                 f"them first)"]
        for side, spec, issues in self.failures:
            lines.append(f"{side}: {spec}: {len(issues)} error{'s' * (len(issues) != 1)}")
            lines.extend(str(issue) for issue in issues)
        return "\n".join(lines)


@dataclass
class Linted:
    """How both sides are linted (``lint``: a spec reference -> its result, with ``errors``,
    ``warnings`` and ``compiled``), and what that found besides errors (there were none):
    warnings per side."""
    lint: Callable
    warnings: dict[str, int] = field(default_factory=lambda: {OLD: 0, NEW: 0})

    def sentence(self) -> str:
        """``both sides lint clean`` (and the warnings, when there are some)."""
        count = sum(self.warnings.values())
        if not count:
            return "both sides lint clean"
        sides = [(side, n) for side, n in self.warnings.items() if n]
        where = f" on the {sides[0][0]} side" if len(sides) == 1 else \
            ": " + " and ".join(f"{n} on the {side} side" for side, n in sides)
        return f"both sides lint (no errors; {count} warning{'s' * (count != 1)}{where}; " \
            f"`flarespec spec lint` lists them)"

    def as_dict(self) -> dict:
        return {side: {"errors": 0, "warnings": n} for side, n in self.warnings.items()}


def lint_side(refs: list, side: str, label: str, linted: Linted, named=lambda issues: issues,
              shown=None, counted: bool = True) -> list:
    """The resolved specs of ``refs`` (paths or bundled ids), each linted on its own by
    ``linted.lint``; their warnings counted under ``side`` (unless not ``counted``). Raises
    LintFailed naming ``label`` (``new side (working tree)``) with every error; ``named``
    renames the issues (a base revision's file as ``REV:path``), ``shown`` a spec."""
    results = [linted.lint(str(ref)) for ref in refs]
    failures = [(label, (shown or _shown)(str(ref)), named(result.errors))
                for ref, result in zip(refs, results) if result.errors]
    if failures:
        raise LintFailed(failures)
    if counted:
        linted.warnings[side] += sum(len(result.warnings) for result in results)
    return [result.compiled.resolved for result in results]


def _shown(ref) -> str:
    path = Path(ref)
    if not path.is_absolute():
        return str(ref)
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(ref)
