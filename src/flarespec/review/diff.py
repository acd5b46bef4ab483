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
``${...}`` substitution, or at run time through ``constants:`` references) and lists them
(review/constants.py).

The room's other jobs are beside this one: the generic tree diff every section uses
(review/tree.py), the changes and sides it builds (review/changes.py), shapes compared member
by member (review/shapes.py) and each change placed at its line (review/locations.py).
"""

from __future__ import annotations

from typing import Any

from flarespec.engine.directions import (
    ABSENT,
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
from flarespec.engine.shapes import SHAPE_RULE
from flarespec.loaders.limits import MAX_DOCUMENT_BYTES, MAX_MIB_OPTION, MIB
from flarespec.review.changes import WORDING, Change, DiffResult, SpecSide, change_at, ordered, \
    rule_index
from flarespec.review.constants import constant_changes
from flarespec.review.locations import locate, shape_change
from flarespec.review.shapes import shape_changes
from flarespec.review.tree import leaf_changes, path_steps, sub_path, verb, what_happened

# rule keys whose change cannot move a verdict (requires only removes repeated violations)
NO_VERDICT = ("requires", "renamed_from")


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
            found.append((key, (NEUTRAL, f"{key} {verb(before, after)}",
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
            found.extend((path, (REVIEW, what_happened(path, o, n), reason), o, n)
                         for path, o, n in leaf_changes(before, after, key))
    return found


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
    changes += constant_changes(before, after, changes)
    locate(changes, before, after)  # each change where it was made (a child's line)
    return DiffResult(before.data.get("id"), after.data.get("id"), ordered(changes))


def _is_warning(rule: dict) -> bool:
    return rule.get("severity", "error") == "warning"


def _rules(before: SpecSide, after: SpecSide) -> list[Change]:
    old_rules, new_rules = rule_index(before), rule_index(after)
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
            changes.append(change_at(before, before, ("rules", index), cls=cls,
                                     subject=f"rule {rule_id}", path="", what="removed",
                                     old=rule, reason="a warning never rejects" if
                                     cls == NEUTRAL else "its failures no longer reject"))
    for rule_id, (index, rule) in new_rules.items():
        at = ("rules", index)
        old_id = rule_id if rule_id in old_rules else \
            next((o for o, n in renamed.items() if n == rule_id), None)
        if old_id is None:
            cls = NEUTRAL if _is_warning(rule) else TIGHTENING
            changes.append(change_at(after, after, at, cls=cls, subject=f"rule {rule_id}",
                                     path="", what="added", new=rule,
                                     reason="a warning never rejects" if cls == NEUTRAL
                                     else "its failures now reject"))
            continue
        old_rule = old_rules[old_id][1]
        if old_id != rule_id:
            changes.append(change_at(after, after, at, cls=NEUTRAL, subject=f"rule {rule_id}",
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
        changes.append(change_at(after, before, at + tuple(path_steps(path)), cls=cls,
                                 subject=f"rule {rule_id}", path=path, what=what,
                                 old=old, new=new, reason=reason))
    return changes


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
            changes.append(change_at(side, side, ("pair", index), cls=cls, subject=subject,
                                     path="", what=verb(o, n), old=o, new=n,
                                     reason="two inputs must now also agree on it" if
                                     o is ABSENT else "two inputs no longer need to agree"))
            continue
        for path, before_value, after_value in leaf_changes(o, n):
            cls = NEUTRAL if path.split(".")[0] in WORDING else REVIEW
            what = what_happened(path, before_value, after_value)
            changes.append(change_at(side, side, ("pair", index), cls=cls, subject=subject,
                                     path=path, what=what, old=before_value, new=after_value,
                                     reason="wording only" if cls == NEUTRAL else
                                     "another pair identity"))
    return changes


def _shapes(before: SpecSide, after: SpecSide) -> list[Change]:
    """Each document's expanded shape, member by member (review/shapes.py), each change at
    the shape node that makes it (review/locations.py: the child's member, its
    ``drop_members`` entry, the constant a member's name reads)."""
    changes = []
    for name, path, o, n, (cls, what, reason), node in shape_changes(before.data, after.data):
        side = after if n is not ABSENT else before
        document = (side.data.get("documents") or {}).get(name) or {}
        rule = f"{document.get('rule', f'document.{name}')}.{SHAPE_RULE}"
        change = Change(cls, f"shape of document {name}", path, what, shown_value(o),
                        shown_value(n), reason, verb(o, n), [f"rule {rule}"])
        shape_change(change, before, after, name, node)
        changes.append(change)
    return changes


def _document_verdict(old, new, path: str) -> Verdict:
    if path == "shape":
        return NEUTRAL, "shape name " + verb(old, new), \
            "the shape itself is compared member by member (shape of document ...)"
    if path == "":
        if old is ABSENT:
            return TIGHTENING, "added", "a new document must exist and load"
        if new is ABSENT:
            return LOOSENING, "removed", "the file is no longer required or checked"
    if path == f"options.{MAX_MIB_OPTION}":
        return _size_limit(old, new)
    if path == "file_name":  # compiler/entry_name.py: which entry files selection tries it for
        return REVIEW, f"entry file_name {verb(old, new)}", \
            "spec selection tries this spec for other entry file names"
    return REVIEW, verb(old, new), "where or how the document is read changed"


def _size_limit(old, new) -> Verdict:
    """``max_mib``: a larger document limit accepts more files (loosening), a smaller one
    fewer; the option absent is the default limit."""
    default = MAX_DOCUMENT_BYTES // MIB
    before = default if old is ABSENT else old
    after = default if new is ABSENT else new
    what = f"{MAX_MIB_OPTION} {verb(old, new)}"
    if not (is_plain_number(before) and is_plain_number(after)):
        return REVIEW, what, "not two numbers"
    if before == after:
        return NEUTRAL, what, f"the same limit ({after} MiB is the default)"
    raised = after > before
    return (LOOSENING if raised else TIGHTENING,
            f"{MAX_MIB_OPTION} {'raised' if raised else 'lowered'}",
            f"documents up to {after} MiB load (before: {before} MiB)")


def _iteration_verdict(old, new, path: str) -> Verdict:
    return REVIEW, verb(old, new), "the rules over it run over other bindings"


def _identity_verdict(old, new, path: str) -> Verdict:
    return REVIEW, verb(old, new), "a pair identity: which inputs may be compared changed"


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
                what = what_happened(path, before_value, after_value)
            changes.append(change_at(side, side, (section, name), cls=cls,
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
        changes.append(change_at(side, side, (section,), cls=cls, subject=section, path=path,
                                 what=what_happened(path, o, n), old=o, new=n,
                                 reason="wording only" if cls == NEUTRAL else reason))
    return changes


def _header(before, after) -> list[Change]:
    changes = []
    old_draft = before.data.get("draft") is True
    new_draft = after.data.get("draft") is True
    if old_draft != new_draft:  # a draft is never selected: releasing one selects it
        changes.append(change_at(after, before, ("draft",), cls=REVIEW, subject="draft",
                                 path="", what="released" if old_draft else "made a draft",
                                 old=old_draft, new=new_draft,
                                 reason="packets its applies_to matches are now validated by "
                                         "it" if old_draft else "no packet selects it now"))
    for key in ("title", "description", "limits"):
        old, new = before.data.get(key, ABSENT), after.data.get(key, ABSENT)
        if not same(old, new):
            changes.append(change_at(after, before, (key,), cls=NEUTRAL, subject=key, path="",
                                     what=verb(old, new), old=old, new=new,
                                     reason="wording only"))
    return changes
