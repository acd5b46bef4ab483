"""``spec diff`` of document shapes: each document's expanded shape, member by member.

Shapes are compared as the engine checks them: every document's named shape expanded (named
shapes and ``use`` resolved, a type written as a string or a list read as one set), so a
change made through a shared named shape (``usage``) shows on every document it reaches, and
rewriting ``integer`` as ``{type: integer}`` is no change at all. Each change is classed by
direction:

| change | class |
|---|---|
| a member added (required or optional: its type now constrained) | tightening |
| a member removed, or a required member made optional | loosening |
| a type set narrowed / widened (``integer`` is within ``number``; ``any`` holds all) | tightening / loosening |
| ``closed``, ``items``, ``values``, ``min``, ``max``, ``length``, ``pattern``, ``one_of`` added / removed | tightening / loosening |
| ``min`` raised or ``max`` lowered / the reverse | tightening / loosening |
| any other change of ``length``, ``pattern``, ``one_of`` | review |
| a document given a shape / losing its shape | tightening / loosening |
| ``description``, ``example`` (what writers write) | neutral |
"""

from __future__ import annotations

import re
from typing import Any

from flarespec.engine.shapes import ANY, DROPPED, TYPE_NAMES
from flarespec.compiler.shapes import ShapeCompiler
from flarespec.engine.directions import ABSENT, LOOSENING, NEUTRAL, REVIEW, TIGHTENING
from flarespec.review.tree import by_position, verb

_CONSTRAINTS = ("closed", "items", "values", "min", "max", "length", "pattern", "one_of")


def expanded_shapes(data: dict) -> dict[str, dict]:
    """Document name -> its expanded shape node (type sets as sorted lists); a shape that
    does not compile is left out (lint reports it)."""
    compiler = ShapeCompiler(data.get("shapes") or {}, lambda *args, **kwargs: None)
    found = {}
    for name, document in (data.get("documents") or {}).items():
        if isinstance(document, dict) and isinstance(document.get("shape"), str):
            node = compiler.named_node(document["shape"]) \
                if document["shape"] in compiler.named else None
            if node is not None:
                found[name] = _normal(node)
    return found


def _normal(node: dict) -> dict:
    result = {}
    for key, value in node.items():
        if key == "type":
            names = [value] if isinstance(value, str) else value
            result[key] = " | ".join(sorted(set(names)))
        elif key == "members":
            result[key] = {name: _normal(child) for name, child in value.items()}
        elif key in ("items", "values"):
            result[key] = _normal(value)
        elif key != DROPPED:  # for writers; a drop shows as the member removed
            result[key] = value
    return result


def _type_set(text) -> set[str]:
    names = set(str(text).split(" | ")) if text else {ANY}
    if ANY in names:
        return set(TYPE_NAMES) - {ANY}
    if "number" in names:
        names.add("integer")
    return names


def verdict(path: str, old: Any, new: Any) -> tuple[str, str, str]:
    """(class, what, reason) of one leaf change inside a document's expanded shape."""
    key = re.sub(r"(\[\d+\])+$", "", path.rsplit(".", 1)[-1])
    parent = path.rsplit(".", 2)[-2] if path.count(".") >= 1 else ""
    if path == "" or parent == "members":
        member = f"member {key}" if path else "the shape"
        if old is ABSENT:
            return TIGHTENING, f"{member} added", "a new member's type is checked (required " \
                "unless optional)"
        if new is ABSENT:
            return LOOSENING, f"{member} removed", "its type is no longer checked"
    if key == "description":
        return NEUTRAL, "description reworded", "wording only"
    if key == "example":
        return NEUTRAL, f"example {verb(old, new)}", "what writers write; never checked"
    if key == "type":
        before, after = _type_set(old if old is not ABSENT else ANY), \
            _type_set(new if new is not ABSENT else ANY)
        if before == after:
            return NEUTRAL, "type respelled", "the same set of types"
        if after < before:
            return TIGHTENING, "type narrowed", f"{old} -> {new}"
        if after > before:
            return LOOSENING, "type widened", f"{old} -> {new}"
        return REVIEW, "type changed", f"{old} -> {new}: neither contains the other"
    if key == "optional":
        made = bool(new) if new is not ABSENT else False
        was = bool(old) if old is not ABSENT else False
        if made == was:
            return NEUTRAL, "optional respelled", "the same"
        return (LOOSENING, "made optional", "the member may be absent") if made else \
            (TIGHTENING, "made required", "the member must be present")
    if key in _CONSTRAINTS and (old is ABSENT or new is ABSENT):
        return (TIGHTENING, f"{key} added", "a new constraint") if old is ABSENT else \
            (LOOSENING, f"{key} removed", "a constraint dropped")
    if key == "closed":
        return (TIGHTENING, "closed", "other members now reject") if new else \
            (LOOSENING, "opened", "other members are now allowed")
    if key in ("min", "max") and all(type(v) in (int, float) for v in (old, new)):
        tighter = new > old if key == "min" else new < old
        return (TIGHTENING if tighter else LOOSENING,
                f"{key} {'raised' if new > old else 'lowered'}", f"{old} -> {new}")
    return REVIEW, f"{key} changed", "another value constraint"


def shape_changes(before_data: dict, after_data: dict) -> list[tuple]:
    """(document, path, old, new, verdict, node path) for every change of every document's
    shape (node lists such as ``one_of`` compared by position: a shape has no keyed
    records); the node path (``members.groups.items.members.id``) is what
    review/locations.py follows back to the shape that declares the node."""
    old, new = expanded_shapes(before_data), expanded_shapes(after_data)
    # a document added or removed whole is that change (classed with the documents)
    both = set(before_data.get("documents") or {}) & set(after_data.get("documents") or {})
    found = []
    for name in [n for n in list(old) + [n for n in new if n not in old] if n in both]:
        o, n = old.get(name, ABSENT), new.get(name, ABSENT)
        for path, before, after in by_position(o, n):
            found.append((name, member_path(path), before, after,
                          verdict(path, before, after), path))
    return found


def member_path(path: str) -> str:
    """A node path as the document places it names: ``members.groups.items.members.id.type``
    -> ``$.groups[*].id type``."""
    place, rest = "$", path.split(".") if path else []
    while rest:
        step = rest.pop(0)
        if step == "members" and rest:
            place += "." + rest.pop(0)
        elif step == "items":
            place += "[*]"
        elif step == "values":
            place += ".*"
        else:
            return f"{place} {'.'.join([step, *rest])}"
    return place
