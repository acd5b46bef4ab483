"""What a validation run found: violations, warnings and the values it computed."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

SHORTEN_AT = 160


def shorten(value: Any, limit: int = SHORTEN_AT) -> Any:
    """Keep receipts readable: a long expected/actual value is cut, with its length said."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # receipts are strict JSON: NaN/Infinity become text
    if value is None or isinstance(value, (bool, int, float)):
        return value
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=False, allow_nan=False)
    except (TypeError, ValueError):
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"
    if len(text) <= limit:
        return value
    return text[:limit] + f"… ({len(text)} chars)"


@dataclass(frozen=True)
class Violation:
    """One broken rule at one place. `severity` "error" rejects; "warning" only reports."""

    rule: str
    severity: str
    message: str
    file: str | None = None
    location: str | None = None
    expected: Any = None
    actual: Any = None
    binding: str | None = None

    def as_dict(self) -> dict:
        entry = {
            "rule": self.rule,
            "severity": self.severity,
            "file": self.file,
            "location": self.location,
            "message": self.message,
        }
        if self.expected is not None:
            entry["expected"] = shorten(self.expected)
        if self.actual is not None:
            entry["actual"] = shorten(self.actual)
        if self.binding is not None:
            entry["binding"] = self.binding
        return entry


@dataclass
class Report:
    """Everything one spec found in one set of documents."""

    spec_id: str
    violations: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    identities: dict[str, Any] = field(default_factory=dict)
    metric: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, violation: Violation) -> None:
        target = self.violations if violation.severity == "error" else self.warnings
        target.append(violation)

    def rule_ids(self) -> set[str]:
        return {v.rule for v in self.violations}
