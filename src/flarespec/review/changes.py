"""What ``spec diff`` produces and reads: a ``Change`` (classed, named by subject and
sub-path, at the line of the file that made it), the two ``SpecSide``s it compares (resolved
data, marks, and which constants each subject's text spells), and the ``DiffResult``.

Every module of the review room builds or reads these, so they sit below all of them:
review/diff.py classes section by section, review/constants.py propagates a constant's
change to what reads it, review/locations.py places each change; none imports another's
privates.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from flarespec.engine.directions import ABSENT, CLASSES, shown_value
from flarespec.review.tree import indexed, verb

WORDING = ("description", "message", "clause", "title", "since", "changed_in", "label")


@dataclass(frozen=True)
class Place:
    """Where a change lands when that is not where it was made (review/locations.py): the
    ``subject`` a parent file holds, at ``file``:``line``, and how the change relates to it
    (``affects``, ``replaces``, ``renames``, ``drops``, ``overrides``)."""
    relation: str
    subject: str
    file: str | None
    line: int | None

    def __str__(self) -> str:
        at = f"{self.file}:{self.line}" if self.line else str(self.file)
        return f"{self.relation} {self.subject} at {at}"

    def as_dict(self) -> dict:
        return {"relation": self.relation, "subject": self.subject, "file": self.file,
                "line": self.line}


@dataclass
class Change:
    cls: str
    subject: str                    # "rule a.b", "constant prefix", "document x", "metric"
    path: str                       # sub-path inside the subject: "assert.range.min"
    what: str                       # "min raised", "added", "renamed from a.c"
    old: Any = None
    new: Any = None
    reason: str = ""
    op: str = "changed"             # "added" / "removed": only one side exists
    rules: list[str] = field(default_factory=list)   # rules a constant change reaches
    # where the change was made: the line of the file that made it (a child's constant,
    # shape member, rule or drop entry), else where the subject is in the new (else old) spec
    file: str | None = None
    line: int | None = None
    acknowledged: str | None = None
    context: Place | None = None    # the place it lands on, when another (a parent's rule)
    made_by: str = ""               # what made it there: "constant a.b", "drop_rules", …

    @property
    def fingerprint(self) -> str:
        """Stable across runs and rewording: class, subject, sub-path and the values (minus
        the wording of whole added or removed rules)."""
        canonical = json.dumps([self.cls, self.subject, self.path, _unworded(self.old),
                                _unworded(self.new)], sort_keys=True, default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def as_dict(self) -> dict:
        return {"fingerprint": self.fingerprint, "class": self.cls, "subject": self.subject,
                "path": self.path, "op": self.op, "change": self.what, "old": self.old,
                "new": self.new,
                "reason": self.reason, "rules": self.rules, "file": self.file,
                "line": self.line, "made_by": self.made_by or None,
                "context": self.context.as_dict() if self.context else None,
                "acknowledged": self.acknowledged}

    def where_made(self) -> str:
        """``made by constant a.b; affects rule x at parent.yaml:12`` (empty when the change
        is simply at its subject)."""
        parts = [f"made by {self.made_by}"] if self.made_by else []
        return "; ".join(parts + ([str(self.context)] if self.context else []))


def _unworded(value):
    if isinstance(value, dict) and "id" in value:
        return {k: v for k, v in value.items() if k not in WORDING}
    return value


@dataclass
class SpecSide:
    """One side of a diff: the resolved plain data, plus what classification needs from the
    unresolved files (which rules spell which ``${constant}``) and marks (file:line)."""
    data: dict
    # subject ("rule a.b", "document x", "metric", …) -> the constants its text spells
    substituted: dict[str, set[str]] = field(default_factory=dict)
    marks: Any = None               # the resolved data with marks, or None
    renames: dict[str, str] = field(default_factory=dict)  # new rule id -> the id it renamed
    # rule id -> (file, line) of the drop_rules entry that drops it (the child-most layer)
    dropped: dict[str, tuple[str, int]] = field(default_factory=dict)
    chain: list = field(default_factory=list)  # the spec's files (marked), its own first
    # document name -> (file, line) of the drop_documents entry that drops it
    dropped_documents: dict[str, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, spec) -> "SpecSide":
        """From a ResolvedSpec, or from plain data (no substitution info, no marks; renames
        from ``renamed_from`` keys left in the rules)."""
        if isinstance(spec, dict):
            return cls(spec, renames=_renames([spec]))
        from flarespec.compiler.yamlmarks import plain

        return cls(spec.plain(), _substituted_constants(spec), spec.data,
                   _renames([plain(layer.data) for layer in spec.chain]),
                   _dropped(spec.chain), list(spec.chain),
                   {name: (mark.file, mark.line) for name, (mark, _) in
                    (spec.dropped_documents or {}).items() if mark is not None})

    def mark_of(self, *path) -> tuple[str | None, int | None]:
        from flarespec.compiler.yamlmarks import mark_at

        found = mark_at(self.marks, indexed(self.marks, path)) \
            if self.marks is not None else None
        return (found.file, found.line) if found else (None, None)


def _dropped(chain) -> dict[str, tuple[str, int]]:
    """rule id -> where a layer's ``drop_rules`` names it (the child's entry wins)."""
    found: dict[str, tuple[str, int]] = {}
    for layer in reversed(chain):
        listed = layer.data.get("drop_rules") if isinstance(layer.data, dict) else None
        marks = getattr(listed, "item_marks", None)
        if isinstance(listed, list) and marks:
            for rule_id, mark in zip(listed, marks):
                if isinstance(rule_id, str) and mark is not None:
                    found[rule_id] = (mark.file, mark.line)
    return found


def _renames(layers: list[dict]) -> dict[str, str]:
    """new id -> old id for every ``renamed_from`` of every layer of a spec's chain."""
    return {rule["id"]: rule["renamed_from"] for layer in layers
            for rule in layer.get("rules") or [] if rule.get("renamed_from")}


NAMED_SUBJECTS = (("documents", "document"), ("iterations", "iteration"),
                   ("identities", "identity"))


def _substituted_constants(resolved) -> dict[str, set[str]]:
    """For each subject, the top-level constant names its unresolved text spells as ``${}``
    (a child's entry replaces its parent's, as resolution does)."""
    from flarespec.compiler.yamlmarks import plain

    raw: dict[str, object] = {}
    for layer in reversed(resolved.chain):
        data = plain(layer.data)
        for rule in data.get("rules") or []:
            raw[f"rule {rule.get('id')}"] = rule
        for section, noun in NAMED_SUBJECTS:
            for name, value in (data.get(section) or {}).items():
                raw[f"{noun} {name}"] = value
        for section in ("metric", "pair"):
            if section in data:
                raw[section] = data[section]
    raw["applies_to"] = plain(resolved.chain[0].data).get("applies_to")
    return {subject: set(spelled_constants(value)) for subject, value in raw.items()}


def strings(value) -> Iterator[str]:
    """Every string inside a value (compiler/yamlmarks.py walks it)."""
    from flarespec.compiler.yamlmarks import marked_strings

    return (text for text, _ in marked_strings(value))


def spelled_constants(value) -> Iterator[str]:
    """The constants ``${...}`` tokens name (compiler/tokens.py, the grammar resolution reads)."""
    from flarespec.compiler.tokens import spelled_names

    for text in strings(value):
        yield from spelled_names(text)


@dataclass
class DiffResult:
    old: str
    new: str
    changes: list[Change]
    root: Path | None = None   # what a relative Change.file is relative to (see relative_files)

    def summary(self, *, counted: Callable[[Change], bool] = lambda c: True) -> dict[str, int]:
        return {cls: sum(1 for c in self.changes if c.cls == cls and counted(c))
                for cls in CLASSES}

    def as_dict(self) -> dict:
        return {"old": self.old, "new": self.new, "summary": self.summary(),
                "changes": [change.as_dict() for change in self.changes]}


def ordered(changes: list[Change]) -> list[Change]:
    """Changes as every format lists them: by class (tightening first), subject, path."""
    order = {cls: index for index, cls in enumerate(CLASSES)}
    return sorted(changes, key=lambda c: (order[c.cls], c.subject, c.path))


def change_at(side: SpecSide, fallback: SpecSide, where: tuple, **fields) -> Change:
    """A change located at ``where`` (keys and indexes) in ``side``, else in ``fallback``;
    an ``old`` or ``new`` that is ABSENT makes it an addition or a removal."""
    file, line = side.mark_of(*where)
    if file is None:
        file, line = fallback.mark_of(*where)
    old, new = fields.pop("old", ABSENT), fields.pop("new", ABSENT)
    return Change(file=file, line=line, op=verb(old, new), old=shown_value(old),
                  new=shown_value(new), **fields)


def rule_index(side: SpecSide) -> dict[str, tuple[int, dict]]:
    return {rule["id"]: (index, rule) for index, rule in enumerate(side.data.get("rules") or [])}
