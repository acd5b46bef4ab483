"""Spec problems, each naming file:line:column, a code and a severity."""

from __future__ import annotations

from dataclasses import dataclass

from flarespec.compiler.yamlmarks import Mark

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class SpecIssue:
    message: str
    mark: Mark | None = None
    code: str = "spec.invalid"
    # a warning is reported by lint and never stops a spec from loading
    severity: str = ERROR
    # other places the issue involves (lint: where an issue a child's edit caused surfaced
    # in a parent file; the message names them too, for the text form)
    related: tuple[Mark, ...] = ()

    def __str__(self) -> str:
        label = "" if self.severity == ERROR else f"{self.severity}: "
        return f"{self.mark}: {label}{self.message} [{self.code}]" if self.mark else \
            f"{label}{self.message} [{self.code}]"

    def as_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message,
                "file": self.mark.file if self.mark else None,
                "line": self.mark.line if self.mark else None,
                "column": self.mark.column if self.mark else None,
                **({"related": [{"file": m.file, "line": m.line, "column": m.column}
                                for m in self.related]} if self.related else {})}


class SpecInvalid(Exception):
    """A spec that cannot be used; carries every issue found, not just the first."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


def did_you_mean(name, candidates) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or nothing: a misspelt name is
    the commonest spec error, and the fix is one glance away."""
    import difflib  # only for a wrong name: measure's cached spec never asks

    close = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
