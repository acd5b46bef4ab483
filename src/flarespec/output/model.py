"""The one result model every command that reports findings produces (docs/output.md).

A :class:`Report` is what a command found, in the terms every format needs: a one-line
title, sections of :class:`Finding` (each a rule id, a level, a message, a place: file,
line/column region and a location inside the file, expected and actual values when known,
a stable fingerprint), plain tables and notes for people, the rules' descriptions for the
formats that list rules (SARIF), and the command's own JSON members. Each format is one
renderer over this type, in one file of this room (text, json, github, junit, markdown,
sarif); nothing here knows which command made the report.

Levels and kinds are SARIF's own words (``level``: error, warning, note, none; ``kind``:
fail, pass, notApplicable, informational, review), so that every format maps them the
same way: a finding *fails* (a JUnit failure, a SARIF error) when its level is error and
its kind is fail; a pass is listed only by the formats that list passes (JUnit, json).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ERROR, WARNING, NOTE, NONE = "error", "warning", "note", "none"
LEVELS = (ERROR, WARNING, NOTE, NONE)
FAIL, PASS, NOT_APPLICABLE, INFORMATIONAL, REVIEW = (
    "fail", "pass", "notApplicable", "informational", "review")
KINDS = (FAIL, PASS, NOT_APPLICABLE, INFORMATIONAL, REVIEW)
REPORT_SCHEMA = "flarespec-report-v1"
FINGERPRINT = "flarespec/v1"  # the key of SARIF's partialFingerprints


class _Absent:
    """Not known (different from a known ``null``)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Finding:
    """One thing a command found (or, with kind ``pass``, one thing it checked)."""
    rule: str
    message: str
    level: str = ERROR
    kind: str = FAIL
    file: str | None = None        # a path to open: absolute, or relative to the current directory
    line: int | None = None        # 1-based
    column: int | None = None      # 1-based
    location: str | None = None    # inside the file: a JSONPath, "rule x", "line 3"
    shown_file: str | None = None  # the file as people know it (default: ``file``)
    expected: Any = ABSENT
    actual: Any = ABSENT
    title: str | None = None       # a short name (JUnit test case, annotation title)
    tag: str | None = None         # a listing's class word ("loosening", "FAIL"): human forms
    details: tuple[str, ...] = ()  # further lines, shown by every format for people
    facts: tuple[tuple[str, str], ...] = ()  # (name, value) shown in full (verbose) forms
    key: tuple | str = ()          # what makes it the same finding in another run
    cause: str | None = None       # the one-line cause it is shown under, when several share it

    def __post_init__(self):
        if self.level not in LEVELS:
            raise ValueError(f"level {self.level!r} is not one of {LEVELS}")
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        for name in ("line", "column"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    @property
    def fails(self) -> bool:
        return self.level == ERROR and self.kind == FAIL

    @property
    def listed(self) -> bool:
        """Reported as a finding (a pass is only counted)."""
        return self.kind != PASS

    @property
    def place(self) -> str | None:
        return self.shown_file or self.file

    def place_under(self, root: Path | None = None) -> str | None:
        """The place, an absolute one relative to ``root`` (``relative_uri``): what the
        formats that never write an absolute path show."""
        place = self.place
        return relative_uri(place, root) if place and os.path.isabs(place) else place

    @property
    def fingerprint(self) -> str:
        """Stable across identical runs and across line moves: the rule, the file as
        people know it, the location and the message, or the producer's own ``key`` (a
        ``str`` key is the fingerprint itself: a producer that has one keeps it)."""
        if isinstance(self.key, str):
            return self.key
        key = self.key or (self.rule, self.place, self.location, self.message)
        text = json.dumps(list(key), sort_keys=True, ensure_ascii=False, default=str)
        # a lone surrogate (valid escaped JSON) hashes as its code point, not an error
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def as_dict(self, root: Path | None = None) -> dict:
        entry = {"rule": self.rule, "level": self.level, "kind": self.kind,
                 "message": self.message,
                 "file": relative_uri(self.file, root) if self.file else None,
                 "line": self.line, "column": self.column, "location": self.location}
        for name in ("expected", "actual"):
            if getattr(self, name) is not ABSENT:
                entry[name] = getattr(self, name)
        if self.title:
            entry["title"] = self.title
        if self.tag:
            entry["tag"] = self.tag
        if self.details:
            entry["details"] = list(self.details)
        if self.facts:
            entry["facts"] = dict(self.facts)
        if self.cause:
            entry["cause"] = self.cause
        entry["fingerprint"] = self.fingerprint
        return entry


@dataclass
class Table:
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]


@dataclass
class Section:
    """Findings under one heading; ``rule`` when they are all of one rule (then text need
    not repeat it); ``limit``: how many the short human forms show (the rest counted)."""
    heading: str | None = None
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    table: Table | None = None
    rule: str | None = None
    limit: int | None = None
    more: str = ""  # said after "… and N more" (e.g. " (see the receipt)")


@dataclass(frozen=True)
class Rule:
    """What a rule id means, for the formats that list rules (SARIF ``tool.driver.rules``)."""
    id: str
    short: str
    help: str


@dataclass
class Report:
    command: str                   # "spec lint", "measure"
    title: str                     # one line: what happened
    ok: bool
    sections: list[Section] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)
    rules: dict[str, Rule] = field(default_factory=dict)
    data: dict = field(default_factory=dict)   # the command's own JSON members
    anchor: str | None = None      # where a finding without a file is placed (SARIF)

    @property
    def findings(self) -> list[Finding]:
        return [finding for section in self.sections for finding in section.findings]

    def rule(self, rule_id: str) -> Rule:
        """The rule's description, or one made from its id and the command."""
        if rule_id in self.rules:
            return self.rules[rule_id]
        return Rule(rule_id, f"{rule_id} (flarespec {self.command})",
                    f"Reported by `flarespec {self.command}` under the code {rule_id}; "
                    f"`flarespec {self.command} --help` and docs/output.md say more.")


def relative_uri(file: str, root: Path | None = None) -> str:
    """``file`` relative to ``root`` (default: the current directory), ``/``-separated; a
    file outside it gets ``..`` segments: never absolute, never empty."""
    base = os.path.abspath(root or os.curdir)
    path = os.path.abspath(file)
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive (Windows): the best relative form is none
        relative = path.lstrip("/\\")
    return Path(relative).as_posix() if relative != "." else Path(path).name
