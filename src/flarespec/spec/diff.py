"""``spec diff``: what a spec change does to the contract, rule by rule.

Two resolved specs are compared keyed by rule id (constants are already substituted, so a
changed number shows up in every rule that uses it). Each change is classified:

* ``tightening``: more evidence is rejected (a rule added, a warning made an error, an
  allowed set shrunk, a bound raised, a tolerance reduced, ``optional`` removed);
* ``loosening``: less is rejected (the reverse);
* ``review``: the effect depends on the data (an expected value, a selection or a condition
  changed) and a reviewer must judge it;
* ``neutral``: wording only (description, message, clause).
"""

from __future__ import annotations

from typing import Any

WORDING = ("description", "message", "clause")
LOWER_IS_LOOSER = ("min", "exclusive_min")
HIGHER_IS_LOOSER = ("max", "exclusive_max", "rel_tol", "abs_tol")


def _change(kind: str, subject: str, what: str, old: Any = None, new: Any = None) -> dict:
    return {"class": kind, "subject": subject, "change": what, "old": old, "new": new}


def _compare_sets(subject: str, key: str, old: list, new: list) -> dict:
    old_set = {repr(v) for v in old}
    new_set = {repr(v) for v in new}
    if new_set < old_set:
        return _change("tightening", subject, f"{key} narrowed", old, new)
    if new_set > old_set:
        return _change("loosening", subject, f"{key} widened", old, new)
    return _change("review", subject, f"{key} changed", old, new)


def _compare_bounds(subject: str, where: str, old: dict, new: dict) -> list[dict]:
    changes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if not all(isinstance(v, (int, float)) for v in (before, after)):
            looser = after is None  # a bound removed loosens; a bound added tightens
            changes.append(_change("loosening" if looser else "tightening", subject,
                                   f"{where}.{key} {'removed' if looser else 'added'}",
                                   before, after))
            continue
        looser = after < before if key in LOWER_IS_LOOSER else after > before \
            if key in HIGHER_IS_LOOSER else None
        kind = "review" if looser is None else ("loosening" if looser else "tightening")
        changes.append(_change(kind, subject, f"{where}.{key} changed", before, after))
    return changes


def _compare_assert(subject: str, old: dict, new: dict) -> list[dict]:
    (old_kind, old_arg), = old.items()
    (new_kind, new_arg), = new.items()
    if old_kind != new_kind:
        return [_change("review", subject, f"assertion kind {old_kind} -> {new_kind}",
                        old, new)]
    if old_arg == new_arg:
        return []
    if old_kind == "one_of" and isinstance(old_arg, list) and isinstance(new_arg, list):
        return [_compare_sets(subject, "one_of", old_arg, new_arg)]
    if old_kind in ("range", "count", "length") and isinstance(old_arg, dict) \
            and isinstance(new_arg, dict):
        return _compare_bounds(subject, old_kind, old_arg, new_arg)
    if old_kind == "formula" and isinstance(old_arg, dict) and isinstance(new_arg, dict) \
            and old_arg.get("expr") == new_arg.get("expr"):
        return _compare_bounds(subject, "formula",
                               {k: v for k, v in old_arg.items() if k != "expr"},
                               {k: v for k, v in new_arg.items() if k != "expr"})
    return [_change("review", subject, f"{old_kind} argument changed", old_arg, new_arg)]


def _compare_rule(rule_id: str, old: dict, new: dict) -> list[dict]:
    changes = []
    subject = f"rule {rule_id}"
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key in WORDING:
            changes.append(_change("neutral", subject, f"{key} reworded", before, after))
        elif key == "severity":
            tighter = (after or "error") == "error"
            changes.append(_change("tightening" if tighter else "loosening", subject,
                                   "severity changed", before or "error", after or "error"))
        elif key == "optional":
            changes.append(_change("loosening" if after else "tightening", subject,
                                   "optional changed", bool(before), bool(after)))
        elif key == "assert" and isinstance(before, dict) and isinstance(after, dict):
            changes.extend(_compare_assert(subject, before, after))
        else:
            changes.append(_change("review", subject, f"{key} changed", before, after))
    return changes


def _by_id(items: list[dict]) -> dict[str, dict]:
    return {item["id"]: item for item in items or []}


def diff_specs(old: dict, new: dict) -> dict:
    """All changes from ``old`` to ``new`` (both resolved, plain data)."""
    changes: list[dict] = []
    old_rules, new_rules = _by_id(old.get("rules")), _by_id(new.get("rules"))
    for rule_id in old_rules:
        if rule_id not in new_rules:
            changes.append(_change("loosening", f"rule {rule_id}", "removed",
                                   old_rules[rule_id], None))
    for rule_id, rule in new_rules.items():
        if rule_id not in old_rules:
            severity = rule.get("severity", "error")
            changes.append(_change("tightening" if severity == "error" else "neutral",
                                   f"rule {rule_id}", f"added ({severity})", None, rule))
        else:
            changes.extend(_compare_rule(rule_id, old_rules[rule_id], rule))
    old_pair, new_pair = _by_id(old.get("pair")), _by_id(new.get("pair"))
    for rule_id in old_pair.keys() - new_pair.keys():
        changes.append(_change("loosening", f"pair {rule_id}", "removed", old_pair[rule_id]))
    for rule_id in new_pair.keys() - old_pair.keys():
        changes.append(_change("tightening", f"pair {rule_id}", "added", None,
                               new_pair[rule_id]))
    for section in ("constants", "documents", "iterations", "identities"):
        before, after = old.get(section) or {}, new.get(section) or {}
        for name in sorted(set(before) | set(after)):
            if before.get(name) != after.get(name):
                changes.append(_change("review", f"{section[:-1]} {name}",
                                       "added" if name not in before else
                                       "removed" if name not in after else "changed",
                                       before.get(name), after.get(name)))
    for section in ("metric", "applies_to"):
        if old.get(section) != new.get(section):
            changes.append(_change("review", section, "changed", old.get(section),
                                   new.get(section)))
    order = {"tightening": 0, "loosening": 1, "review": 2, "neutral": 3}
    changes.sort(key=lambda c: (order[c["class"]], c["subject"]))
    summary = {kind: sum(1 for c in changes if c["class"] == kind) for kind in order}
    return {"old": old.get("id"), "new": new.get("id"), "summary": summary, "changes": changes}


def _short(value: Any, limit: int = 90) -> str:
    import json

    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def render_diff(result: dict) -> str:
    lines = [f"spec diff {result['old']} -> {result['new']}: " +
             ", ".join(f"{n} {kind}" for kind, n in result["summary"].items())]
    for change in result["changes"]:
        line = f"  {change['class']:<10}  {change['subject']}: {change['change']}"
        if change["change"] not in ("removed",) and not change["change"].startswith("added"):
            line += f"  {_short(change['old'])} -> {_short(change['new'])}"
        lines.append(line)
    if not result["changes"]:
        lines.append("  no changes")
    return "\n".join(lines)
