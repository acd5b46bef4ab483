"""Spec problems, each naming file:line:column."""

from __future__ import annotations

from dataclasses import dataclass

from flarespec.spec.yamlmarks import Mark


@dataclass(frozen=True)
class SpecIssue:
    message: str
    mark: Mark | None = None
    code: str = "spec.invalid"

    def __str__(self) -> str:
        return f"{self.mark}: {self.message} [{self.code}]" if self.mark else \
            f"{self.message} [{self.code}]"

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message,
                "file": self.mark.file if self.mark else None,
                "line": self.mark.line if self.mark else None,
                "column": self.mark.column if self.mark else None}


class SpecInvalid(Exception):
    """A spec that cannot be used; carries every issue found, not just the first."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))
