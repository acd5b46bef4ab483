"""``spec diff``: what a spec change does to the set of accepted inputs, field by field.

Two resolved specs are compared section by section; rules are keyed by id (a rule with
``renamed_from`` is matched to the rule it renames). Every difference is one ``Change`` that
names its sub-path and carries the full old and new values. Each change is classed by
meaning, never by guess:

* ``tightening``: fewer inputs are accepted (a bound raised, a set narrowed, a rule added);
* ``loosening``: more inputs are accepted (the reverse);
* ``review``: the effect depends on the data or cannot be decided statically; the change
  says why;
* ``neutral``: the accepted set cannot change (wording, titles, ``requires``).

Each assertion kind's rule is its ``diff`` (registered beside the kind in
``engine/kinds.py``, built from ``engine/directions.py``) and is documented as a table in
docs/spec-review.md. A constant's change is classed through the rules that read it (by
``${...}`` substitution, or at run time through ``constants:`` references) and lists them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

from flarespec.engine.directions import (  # noqa: F401  (CLASSES re-exported for renderers)
    ABSENT,
    CLASSES,
    LOOSENING,
    NEUTRAL,
    REVIEW,
    TIGHTENING,
    Verdict,
    is_plain_number,
    same,
    shown_value,
)
from flarespec.engine.kinds import argument_changes
from flarespec.loaders.limits import MAX_DOCUMENT_BYTES, MAX_MIB_OPTION, MIB

WORDING = ("description", "message", "clause", "title", "since", "changed_in", "label")
# rule keys whose change cannot move a verdict (requires only removes repeated violations)
NO_VERDICT = ("requires", "renamed_from")


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

        found = mark_at(self.marks, _indexed(self.marks, path)) \
            if self.marks is not None else None
        return (found.file, found.line) if found else (None, None)


def _indexed(tree, path) -> list:
    """``path`` with each KeyStep replaced by the index of its entry in ``tree``; cut where
    a step is not found (the mark is then the deepest place that exists)."""
    steps, node = [], tree
    for step in path:
        if isinstance(step, KeyStep):
            if not isinstance(node, list):
                break
            step = next((i for i, entry in enumerate(node) if isinstance(entry, dict) and
                         _key_value(entry.get(step.field)) and
                         _typed(entry[step.field]) == _typed(step.value)), None)
            if step is None:
                break
        steps.append(step)
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
    return steps


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


_NAMED_SUBJECTS = (("documents", "document"), ("iterations", "iteration"),
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
        for section, noun in _NAMED_SUBJECTS:
            for name, value in (data.get(section) or {}).items():
                raw[f"{noun} {name}"] = value
        for section in ("metric", "pair"):
            if section in data:
                raw[section] = data[section]
    raw["applies_to"] = plain(resolved.chain[0].data).get("applies_to")
    return {subject: set(_spelled_constants(value)) for subject, value in raw.items()}


def _strings(value) -> Iterator[str]:
    """Every string inside a value (compiler/yamlmarks.py walks it)."""
    from flarespec.compiler.yamlmarks import marked_strings

    return (text for text, _ in marked_strings(value))


def _spelled_constants(value) -> Iterator[str]:
    """The constants ``${...}`` tokens name (compiler/tokens.py, the grammar resolution reads)."""
    from flarespec.compiler.tokens import spelled_names

    for text in _strings(value):
        yield from spelled_names(text)


def _runtime_constants(value) -> set[str]:
    """The constants ``constants:`` references read (compiler/references.py, which lint's
    placeholder check reads too)."""
    from flarespec.compiler.references import referenced_members

    return {member for text in _strings(value) for target, member in referenced_members(text)
            if target == "constants"}


# --------------------------------------------------------------------------- field-level diff

def sub_path(base: str, step) -> str:
    if isinstance(step, int):
        return f"{base}[{step}]"
    if isinstance(step, KeyStep):
        return f"{base}[{step.field}={_key_text(step.value)}]"
    return f"{base}.{step}" if base else str(step)


# A list of records is compared by key when its entries have one: the first of these fields
# that every entry of both lists has, as a string or an integer, unique within each list.
# Otherwise lists compare by position (docs/spec-review.md#lists).
LIST_KEY_FIELDS = ("id", "kind", "name", "key")


class KeyStep(NamedTuple):
    """One entry of a keyed list: the entry whose ``field`` is ``value``."""
    field: str
    value: Any


class SubPath(str):
    """A sub-path; ``reordered_by`` is set on the path of a keyed list whose entries moved
    (the change's old and new values are then the keys in their old and new order)."""
    reordered_by: str | None = None


_BARE_KEY = re.compile(r"[A-Za-z0-9_.:/@+\-]+")
_NUMERIC = re.compile(r"-?[0-9]+")


def _key_text(value) -> str:
    """A key as a path shows it: bare when it reads back as the same string (``prefix-hit``),
    an integer as digits, anything else as a JSON string (``"a b"``)."""
    if isinstance(value, int):
        return str(value)
    if _BARE_KEY.fullmatch(value) and not _NUMERIC.fullmatch(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _key_value(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def list_key(old: list, new: list, declared: str | None = None) -> str | None:
    """The field two lists are matched by, or None (compare by position): the first of
    ``declared`` (a caller's choice) or LIST_KEY_FIELDS that every entry of both lists has
    as a string or an integer, unique within each list."""
    entries = old + new
    if not entries or not all(isinstance(entry, dict) for entry in entries):
        return None
    for field in (declared,) if declared else LIST_KEY_FIELDS:
        if all(_key_value(entry.get(field)) for entry in entries) and \
                all(len({_typed(e[field]) for e in side}) == len(side) for side in (old, new)):
            return field
    return None


def _typed(value) -> tuple:
    return type(value).__name__, value


def leaf_changes(old, new, path: str = "", keys: dict[str, str] | None = None,
                 keyed: bool = True) -> Iterator[tuple[str, Any, Any]]:
    """Every place where two values differ, as (sub-path, old, new); a side that does not
    exist is ``ABSENT``. Mappings compare by key; lists of records with a key (see
    ``list_key``; ``keys`` maps a list's path to a declared key field) by that key (an entry
    added, removed or changed is named ``[kind=prefix-hit]``; a move is one ``reordered``
    change), other lists by position (extra items are added or removed at their index);
    type-strict (1 and 1.0 and true differ). ``keyed=False``: every list by position."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            yield from leaf_changes(old.get(key, ABSENT), new.get(key, ABSENT),
                                    sub_path(path, key), keys, keyed)
    elif isinstance(old, list) and isinstance(new, list):
        field = list_key(old, new, (keys or {}).get(path)) if keyed else None
        if field is not None:
            yield from _keyed_changes(old, new, path, field, keys)
            return
        for index in range(max(len(old), len(new))):
            yield from leaf_changes(old[index] if index < len(old) else ABSENT,
                                    new[index] if index < len(new) else ABSENT,
                                    sub_path(path, index), keys, keyed)
    elif not same(old, new):
        yield path, old, new


def _keyed_changes(old: list, new: list, path: str, field: str, keys) -> Iterator:
    """Two lists of records matched by ``field``. Between the same matched neighbours, one
    entry only the old list has and one only the new list has are the same entry with its
    key changed (a renamed counter): shown as changes of that entry, named by its old key."""
    old_keys = [_typed(entry[field]) for entry in old]
    new_keys = [_typed(entry[field]) for entry in new]
    old_at = {key: index for index, key in enumerate(old_keys)}
    new_at = {key: index for index, key in enumerate(new_keys)}
    old_gaps, new_gaps = _gaps(old_keys, new_at), _gaps(new_keys, old_at)
    paired = {gap[0]: new_gaps[anchor][0] for anchor, gap in old_gaps.items()
              if len(gap) == 1 and len(new_gaps.get(anchor, ())) == 1}
    for key, entry in zip(old_keys, old):
        step = sub_path(path, KeyStep(field, key[1]))
        if key in new_at or key in paired:
            yield from leaf_changes(entry, new[new_at[paired.get(key, key)]], step, keys)
        else:
            yield step, entry, ABSENT
    renamed_to = set(paired.values())
    for key, entry in zip(new_keys, new):
        if key not in old_at and key not in renamed_to:
            yield sub_path(path, KeyStep(field, key[1])), ABSENT, entry
    before = [paired.get(key, key) for key in old_keys if key in new_at or key in paired]
    after = [key for key in new_keys if key in old_at or key in renamed_to]
    if before != after:
        moved = SubPath(path)
        moved.reordered_by = field
        yield moved, [key[1] for key in old_keys if key in new_at or key in paired], \
            [key[1] for key in after]


def _gaps(keys: list, other: dict) -> dict:
    """The keys ``other`` lacks, grouped by the last key before them that it has (None:
    before the first)."""
    found: dict = {}
    anchor = None
    for key in keys:
        if key in other:
            anchor = key
        else:
            found.setdefault(anchor, []).append(key)
    return found


def _what(path: str, old, new) -> str:
    """What happened at ``path``: added, removed, changed, or ``reordered by FIELD``."""
    moved = getattr(path, "reordered_by", None)
    return f"reordered by {moved}" if moved else _verb(old, new)


def _verb(old, new) -> str:
    return "added" if old is ABSENT else "removed" if new is ABSENT else "changed"


# --------------------------------------------------------------------------- verdicts
# A comparator returns a Verdict, (class, what, reason), for one change; an assertion's
# argument changes are classed by its kind's own `diff` (engine/kinds.py).


def _when_verdict(old, new) -> Verdict:
    """A condition added makes the rule skip bindings (looser); removed makes it apply to
    every binding (tighter); changed: the bindings it applies to changed, undecidable here."""
    if old is ABSENT:
        return LOOSENING, "condition added", "the rule now skips the bindings it excludes"
    if new is ABSENT:
        return TIGHTENING, "condition removed", "the rule now applies to every binding"
    return REVIEW, "condition changed", "which bindings the rule applies to changed"


def _severity_verdict(before, after) -> Verdict:
    if before == after:
        return NEUTRAL, "severity restated", ""
    if after == "error":
        return TIGHTENING, "made an error", "a failure now rejects"
    return LOOSENING, f"made a {after}", "a failure no longer rejects"


def _optional_verdict(before, after) -> Verdict:
    if bool(before) == bool(after):
        return NEUTRAL, "optional restated", ""
    return (LOOSENING, "made optional", "an empty selection now passes") if after else \
        (TIGHTENING, "made required", "an empty selection now fails")


_RULE_KEY_REASON = {
    "given": "the selection changed: other places are checked",
    "for_each": "the rule runs over other bindings",
    "hook": "another hook: its checks are not compared",
    "args": "a hook argument changed: what the hook does with it is not compared",
}


def rule_verdicts(old: dict, new: dict) -> list[tuple[str, Verdict, Any, Any]]:
    """(sub-path, verdict, old, new) for every changed key of one rule."""
    found = []
    for key in list(old) + [k for k in new if k not in old]:
        before, after = old.get(key, ABSENT), new.get(key, ABSENT)
        if key in ("id",) or same(before, after):
            continue
        if key in WORDING:
            found.extend((path, (NEUTRAL, f"{key} reworded", "wording only"), o, n)
                         for path, o, n in leaf_changes(before, after, key))
        elif key in NO_VERDICT:
            found.append((key, (NEUTRAL, f"{key} {_verb(before, after)}",
                                "cannot change a verdict"), before, after))
        elif key == "severity":  # shown with its default: error
            before, after = (v if v is not ABSENT else "error" for v in (before, after))
            found.append((key, _severity_verdict(before, after), before, after))
        elif key == "optional":  # shown with its default: false
            before, after = (v if v is not ABSENT else False for v in (before, after))
            found.append((key, _optional_verdict(before, after), before, after))
        elif key == "when":
            found.append((key, _when_verdict(before, after), before, after))
        elif key == "assert" and isinstance(before, dict) and isinstance(after, dict):
            found.extend((sub_path("assert", path) if path else "assert", verdict, o, n)
                         for path, verdict, o, n in argument_changes(before, after))
        else:
            reason = _RULE_KEY_REASON.get(key, f"{key} changed")
            found.extend((path, (REVIEW, _what(path, o, n), reason), o, n)
                         for path, o, n in leaf_changes(before, after, key))
    return found


# --------------------------------------------------------------------------- spec-level diff

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


def diff_specs(old, new) -> DiffResult:
    """All changes from ``old`` to ``new`` (each a ResolvedSpec, or plain resolved data)."""
    before, after = SpecSide.of(old), SpecSide.of(new)
    changes: list[Change] = []
    changes += _rules(before, after)
    changes += _pair(before, after)
    changes += _named_section(before, after, "documents", "document", _document_verdict,
                              defaults={"options": {}})
    changes += _shapes(before, after)
    changes += _named_section(before, after, "iterations", "iteration", _iteration_verdict)
    changes += _named_section(before, after, "identities", "identity", _identity_verdict)
    changes += _whole(before, after, "metric", "the metric is computed otherwise")
    changes += _whole(before, after, "applies_to", "other inputs select this spec")
    changes += _header(before, after)
    changes += _constants(before, after, changes)
    from flarespec.review.locations import locate

    locate(changes, before, after)  # each change where it was made (a child's line)
    return DiffResult(before.data.get("id"), after.data.get("id"), ordered(changes))


def ordered(changes: list[Change]) -> list[Change]:
    """Changes as every format lists them: by class (tightening first), subject, path."""
    order = {cls: index for index, cls in enumerate(CLASSES)}
    return sorted(changes, key=lambda c: (order[c.cls], c.subject, c.path))


def _change_at(side: SpecSide, fallback: SpecSide, where: tuple, **fields) -> Change:
    """A change located at ``where`` (keys and indexes) in ``side``, else in ``fallback``;
    an ``old`` or ``new`` that is ABSENT makes it an addition or a removal."""
    file, line = side.mark_of(*where)
    if file is None:
        file, line = fallback.mark_of(*where)
    old, new = fields.pop("old", ABSENT), fields.pop("new", ABSENT)
    return Change(file=file, line=line, op=_verb(old, new), old=shown_value(old), new=shown_value(new),
                  **fields)


def _rule_index(side: SpecSide) -> dict[str, tuple[int, dict]]:
    return {rule["id"]: (index, rule) for index, rule in enumerate(side.data.get("rules") or [])}


def _is_warning(rule: dict) -> bool:
    return rule.get("severity", "error") == "warning"


def _rules(before: SpecSide, after: SpecSide) -> list[Change]:
    old_rules, new_rules = _rule_index(before), _rule_index(after)
    renamed = {}  # old id -> new id, following renames over several generations
    for rule_id in new_rules:
        seen, old_id = {rule_id}, after.renames.get(rule_id)
        while old_id is not None and old_id not in old_rules and old_id not in seen:
            seen.add(old_id)
            old_id = after.renames.get(old_id)
        if old_id in old_rules and old_id not in new_rules and rule_id not in old_rules:
            renamed[old_id] = rule_id
    changes = []
    for rule_id, (index, rule) in old_rules.items():
        if rule_id not in new_rules and rule_id not in renamed:
            cls = NEUTRAL if _is_warning(rule) else LOOSENING
            changes.append(_change_at(before, before, ("rules", index), cls=cls,
                                      subject=f"rule {rule_id}", path="", what="removed",
                                      old=rule, reason="a warning never rejects" if
                                      cls == NEUTRAL else "its failures no longer reject"))
    for rule_id, (index, rule) in new_rules.items():
        at = ("rules", index)
        old_id = rule_id if rule_id in old_rules else \
            next((o for o, n in renamed.items() if n == rule_id), None)
        if old_id is None:
            cls = NEUTRAL if _is_warning(rule) else TIGHTENING
            changes.append(_change_at(after, after, at, cls=cls, subject=f"rule {rule_id}",
                                      path="", what="added", new=rule,
                                      reason="a warning never rejects" if cls == NEUTRAL
                                      else "its failures now reject"))
            continue
        old_rule = old_rules[old_id][1]
        if old_id != rule_id:
            changes.append(_change_at(after, after, at, cls=NEUTRAL, subject=f"rule {rule_id}",
                                      path="id", what=f"renamed from {old_id}", old=old_id,
                                      new=rule_id, reason="same rule, new id"))
        changes += _rule_changes(before, after, rule_id, old_rule, rule, at)
    return changes


def _rule_changes(before, after, rule_id, old_rule, new_rule, at) -> list[Change]:
    both_warnings = _is_warning(old_rule) and _is_warning(new_rule)
    old_rule = {k: v for k, v in old_rule.items() if k != "renamed_from"}
    new_rule = {k: v for k, v in new_rule.items() if k != "renamed_from"}
    changes = []
    for path, (cls, what, reason), old, new in rule_verdicts(old_rule, new_rule):
        if both_warnings and cls != NEUTRAL:
            cls, reason = NEUTRAL, f"a warning rule never rejects ({cls} otherwise)"
        changes.append(_change_at(after, before, at + tuple(_steps(path)), cls=cls,
                                  subject=f"rule {rule_id}", path=path, what=what,
                                  old=old, new=new, reason=reason))
    return changes


_STEP = re.compile(r'\[([0-9]+)\]|\[([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|[^\]"]*)\]'
                   r'|([^.\[\]]+)')


def _steps(path: str) -> Iterator:
    """The keys, indexes and KeySteps of a sub-path (``group_matrix[kind=prefix-hit].x``)."""
    for index, field, value, key in _STEP.findall(path):
        if index:
            yield int(index)
        elif field:
            yield KeyStep(field, json.loads(value) if value.startswith('"') else
                          int(value) if _NUMERIC.fullmatch(value) else value)
        else:
            yield key


def _pair(before: SpecSide, after: SpecSide) -> list[Change]:
    old = {p["id"]: (i, p) for i, p in enumerate(before.data.get("pair") or [])}
    new = {p["id"]: (i, p) for i, p in enumerate(after.data.get("pair") or [])}
    changes = []
    for pair_id in list(old) + [k for k in new if k not in old]:
        (i, o), (j, n) = old.get(pair_id, (None, ABSENT)), new.get(pair_id, (None, ABSENT))
        side, index = (after, j) if n is not ABSENT else (before, i)
        subject = f"pair {pair_id}"
        if o is ABSENT or n is ABSENT:
            cls = TIGHTENING if o is ABSENT else LOOSENING
            changes.append(_change_at(side, side, ("pair", index), cls=cls, subject=subject,
                                      path="", what=_verb(o, n), old=o, new=n,
                                      reason="two inputs must now also agree on it" if
                                      o is ABSENT else "two inputs no longer need to agree"))
            continue
        for path, before_value, after_value in leaf_changes(o, n):
            cls = NEUTRAL if path.split(".")[0] in WORDING else REVIEW
            changes.append(_change_at(side, side, ("pair", index), cls=cls, subject=subject,
                                      path=path, what=_what(path, before_value, after_value),
                                      old=before_value, new=after_value,
                                      reason="wording only" if cls == NEUTRAL else
                                      "another pair identity"))
    return changes


def _by_position(old, new, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """leaf_changes with every list by position: shapes are compared member by member
    (review/shapes.py), their lists are value sets, not records."""
    return leaf_changes(old, new, path, keyed=False)


def _shapes(before: SpecSide, after: SpecSide) -> list[Change]:
    """Each document's expanded shape, member by member (review/shapes.py), each change at
    the shape node that makes it (review/locations.py: the child's member, its
    ``drop_members`` entry, the constant a member's name reads)."""
    from flarespec.engine.shapes import SHAPE_RULE
    from flarespec.review.locations import shape_change
    from flarespec.review.shapes import shape_changes

    changes = []
    for name, path, o, n, (cls, what, reason), node in shape_changes(before.data, after.data):
        side = after if n is not ABSENT else before
        document = (side.data.get("documents") or {}).get(name) or {}
        rule = f"{document.get('rule', f'document.{name}')}.{SHAPE_RULE}"
        change = Change(cls, f"shape of document {name}", path, what, shown_value(o),
                        shown_value(n), reason, _verb(o, n), [f"rule {rule}"])
        shape_change(change, before, after, name, node)
        changes.append(change)
    return changes


def _document_verdict(old, new, path: str) -> Verdict:
    if path == "shape":
        return NEUTRAL, "shape name " + _verb(old, new), \
            "the shape itself is compared member by member (shape of document ...)"
    if path == "":
        if old is ABSENT:
            return TIGHTENING, "added", "a new document must exist and load"
        if new is ABSENT:
            return LOOSENING, "removed", "the file is no longer required or checked"
    if path == f"options.{MAX_MIB_OPTION}":
        return _size_limit(old, new)
    if path == "file_name":  # compiler/entry_name.py: which entry files selection tries it for
        return REVIEW, f"entry file_name {_verb(old, new)}", \
            "spec selection tries this spec for other entry file names"
    return REVIEW, _verb(old, new), "where or how the document is read changed"


def _size_limit(old, new) -> Verdict:
    """``max_mib``: a larger document limit accepts more files (loosening), a smaller one
    fewer; the option absent is the default limit."""
    default = MAX_DOCUMENT_BYTES // MIB
    before = default if old is ABSENT else old
    after = default if new is ABSENT else new
    what = f"{MAX_MIB_OPTION} {_verb(old, new)}"
    if not (is_plain_number(before) and is_plain_number(after)):
        return REVIEW, what, "not two numbers"
    if before == after:
        return NEUTRAL, what, f"the same limit ({after} MiB is the default)"
    raised = after > before
    return (LOOSENING if raised else TIGHTENING,
            f"{MAX_MIB_OPTION} {'raised' if raised else 'lowered'}",
            f"documents up to {after} MiB load (before: {before} MiB)")


def _iteration_verdict(old, new, path: str) -> Verdict:
    return REVIEW, _verb(old, new), "the rules over it run over other bindings"


def _identity_verdict(old, new, path: str) -> Verdict:
    return REVIEW, _verb(old, new), "a pair identity: which inputs may be compared changed"


def _named_section(before, after, section, noun, verdict, defaults=None) -> list[Change]:
    """Each named entry compared key by key; ``defaults`` fills keys an entry leaves out
    (so an option added where there were none is that option added, not a whole mapping)."""
    old, new = before.data.get(section) or {}, after.data.get(section) or {}
    changes = []
    for name in list(old) + [k for k in new if k not in old]:
        o, n = old.get(name, ABSENT), new.get(name, ABSENT)
        if same(o, n):
            continue
        side = after if n is not ABSENT else before
        whole = o is ABSENT or n is ABSENT
        if defaults and not whole:
            o, n = {**defaults, **o}, {**defaults, **n}
        for path, before_value, after_value in ([("", o, n)] if whole else leaf_changes(o, n)):
            cls, what, reason = (NEUTRAL, f"{path} reworded", "wording only") \
                if path.split(".")[0] in WORDING else verdict(before_value, after_value, path)
            if getattr(path, "reordered_by", None):
                what = _what(path, before_value, after_value)
            changes.append(_change_at(side, side, (section, name), cls=cls,
                                      subject=f"{noun} {name}", path=path, what=what,
                                      old=before_value, new=after_value,
                                      reason=reason))
    return changes


def _whole(before, after, section, reason) -> list[Change]:
    old, new = before.data.get(section, ABSENT), after.data.get(section, ABSENT)
    side = after if new is not ABSENT else before
    changes = []
    for path, o, n in leaf_changes(old, new, ""):
        cls = NEUTRAL if path.split(".")[0] in WORDING else REVIEW
        changes.append(_change_at(side, side, (section,), cls=cls, subject=section, path=path,
                                  what=_what(path, o, n), old=o, new=n,
                                  reason="wording only" if cls == NEUTRAL else reason))
    return changes


def _header(before, after) -> list[Change]:
    changes = []
    old_draft = before.data.get("draft") is True
    new_draft = after.data.get("draft") is True
    if old_draft != new_draft:  # a draft is never selected: releasing one selects it
        changes.append(_change_at(after, before, ("draft",), cls=REVIEW, subject="draft",
                                  path="", what="released" if old_draft else "made a draft",
                                  old=old_draft, new=new_draft,
                                  reason="packets its applies_to matches are now validated by "
                                         "it" if old_draft else "no packet selects it now"))
    for key in ("title", "description", "limits"):
        old, new = before.data.get(key, ABSENT), after.data.get(key, ABSENT)
        if not same(old, new):
            changes.append(_change_at(after, before, (key,), cls=NEUTRAL, subject=key, path="",
                                      what=_verb(old, new), old=old, new=new,
                                      reason="wording only"))
    return changes


# --------------------------------------------------------------------------- constants

def _readers(side: SpecSide) -> dict[str, tuple[set[str], set[str]]]:
    """For each subject that reads constants: (constants spelled as ``${}``, constants read at
    run time through ``constants:`` references, its iteration's included)."""
    data = side.data
    over = {name: _runtime_constants(it) | _iteration_constants(data, it.get("parent"))
            for name, it in (data.get("iterations") or {}).items()}
    runtime: dict[str, set[str]] = {}
    for rule in data.get("rules") or []:
        runtime[f"rule {rule['id']}"] = _runtime_constants(rule) | \
            over.get(rule.get("for_each"), set())
    for section, noun in _NAMED_SUBJECTS:
        for name, value in (data.get(section) or {}).items():
            runtime[f"{noun} {name}"] = _runtime_constants(value)
    runtime["metric"] = _runtime_constants(data.get("metric")) | \
        over.get((data.get("metric") or {}).get("for_each"), set())
    return {subject: (side.substituted.get(subject, set()), runtime.get(subject, set()))
            for subject in set(runtime) | set(side.substituted)}


def _iteration_constants(data: dict, name) -> set[str]:
    iterations, names = data.get("iterations") or {}, set()
    seen = set()
    while name in iterations and name not in seen:
        seen.add(name)
        names |= _runtime_constants(iterations[name])
        name = iterations[name].get("parent")
    return names


def _constants(before: SpecSide, after: SpecSide, changes: list[Change]) -> list[Change]:
    old, new = before.data.get("constants") or {}, after.data.get("constants") or {}
    readers = _readers(before)
    for subject, (spelled, runtime) in _readers(after).items():
        old_spelled, old_runtime = readers.get(subject, (set(), set()))
        readers[subject] = (old_spelled | spelled, old_runtime | runtime)
    known = bool(before.substituted or after.substituted)
    result = []
    for name in list(old) + [k for k in new if k not in old]:
        o, n = old.get(name, ABSENT), new.get(name, ABSENT)
        if same(o, n):
            continue
        cls, reason, rules = _constant_class(name, readers, changes, before, after, known)
        side = after if n is not ABSENT else before
        for path, before_value, after_value in leaf_changes(o, n, name):
            moved_cls, moved_reason = cls, reason
            if getattr(path, "reordered_by", None) and rules:
                moved_cls, moved_reason = REVIEW, (
                    f"the same entries (matched by {path.reordered_by}) in another order: "
                    "what reads the list in order (an iteration, a position, the order the "
                    "fixture writer and the packets follow) may change; " + reason)
            result.append(_change_at(side, side, ("constants",) + tuple(_steps(path)),
                                     cls=moved_cls, subject=f"constant {name}", path=path,
                                     what=_what(path, before_value, after_value),
                                     old=before_value, new=after_value,
                                     reason=moved_reason, rules=rules))
    return result


def _constant_class(name, readers, changes, before, after, known) -> tuple[str, str, list]:
    spelled = sorted(s for s, (subst, _) in readers.items() if name in subst)
    at_run_time = sorted(s for s, (_, runtime) in readers.items() if name in runtime)
    classes: dict[str, set[str]] = {}
    for subject in spelled:
        for change in changes:
            if change.subject == subject and change.path and change.cls != NEUTRAL:
                classes.setdefault(change.cls, set()).add(subject)
    for subject in at_run_time:
        for cls in _run_time_classes(subject, name, before, after):
            classes.setdefault(cls, set()).add(subject)
    rules = sorted(set(spelled) | set(at_run_time))
    if not known and not at_run_time:
        return REVIEW, f"which rules spell it as ${{{name}}} is unknown for plain data", rules
    if not rules:
        return NEUTRAL, "nothing in the spec reads it", rules
    if not classes:
        return NEUTRAL, "the rules that read it accept the same inputs", rules
    if len(classes) == 1:
        (cls, subjects), = classes.items()
        through = "the rules that read it" if len(subjects) == len(rules) else \
            ", ".join(sorted(subjects))
        return cls, f"{cls} through {through}", rules
    return REVIEW, "; ".join(f"{cls} through {', '.join(sorted(s))}"
                             for cls, s in sorted(classes.items())), rules


def _run_time_classes(subject: str, name: str, before: SpecSide, after: SpecSide) -> set[str]:
    """The classes of a constant change for one rule that reads it at run time: its
    assertion compared with the constant's old and new values put in, when the reference
    is a plain one in the assertion; otherwise review."""
    if not subject.startswith("rule "):
        return {REVIEW}
    rule_id = subject[len("rule "):]
    old_rule = _rule_index(before).get(rule_id, (None, None))[1]
    new_rule = _rule_index(after).get(rule_id, (None, None))[1]
    if old_rule is None or new_rule is None:
        return set()  # added or removed: classed as a rule
    outside_assert = {k: v for k, v in new_rule.items() if k != "assert"}
    if name in _runtime_constants(outside_assert) or \
            name in _iteration_constants(after.data, new_rule.get("for_each")):
        return {REVIEW}
    try:
        old_assert = _put_constants(old_rule.get("assert"), before.data.get("constants") or {})
        new_assert = _put_constants(new_rule.get("assert"), after.data.get("constants") or {})
    except LookupError:
        return {REVIEW}
    if not isinstance(old_assert, dict) or not isinstance(new_assert, dict):
        return {REVIEW}
    found = {cls for _, (cls, _, _), _, _ in argument_changes(old_assert, new_assert)}
    return found - {NEUTRAL}


def _put_constants(value, constants: dict):
    """``value`` with every plain ``{ref: "constants:…"}`` (no placeholders) replaced by what
    it selects; LookupError when a reference cannot be read without a binding."""
    if isinstance(value, list):
        return [_put_constants(item, constants) for item in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("ref")
    if isinstance(ref, str) and ref.startswith("constants:"):
        return _select_constants(ref[len("constants:"):], constants, value.get("all", False))
    return {key: _put_constants(item, constants) for key, item in value.items()}


def _select_constants(selector: str, constants: dict, every: bool):
    """What a ``constants:`` reference without placeholders selects, read by the engine's
    own walkers (the spec's JSONPath or pointer); LookupError when it cannot be read."""
    if "{" in selector:
        raise LookupError(selector)
    from flarespec.engine.paths import PathSyntaxError
    from flarespec.engine.refs import compile_ref

    try:
        ref = compile_ref("constants:" + selector)
    except PathSyntaxError as problem:
        raise LookupError(selector) from problem
    found = ref.jsonpath.values(constants) if ref.jsonpath is not None else \
        ref.pointer.values(constants, None) if ref.pointer is not None else []
    if every:
        return found
    if len(found) != 1:
        raise LookupError(selector)
    return found[0]
