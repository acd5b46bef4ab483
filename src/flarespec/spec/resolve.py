"""``extends`` resolution and constant substitution: many spec files become one flat spec.

A child spec may override constants, documents, iterations and identities by name, replace a
rule by id (in place), add rules, drop rules by id (``drop_rules``) and replace the metric.
``${name.path}`` then substitutes constants everywhere: a string that is exactly one
``${...}`` becomes the constant's value (any type); inside longer text it is interpolated.
The result is plain data with stable rule ids: what ``spec show``, ``spec diff`` and the
receipt's spec digest see.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from flarespec.spec.errors import SpecInvalid, SpecIssue
from flarespec.spec.load import SpecFile, SpecLibrary
from flarespec.spec.yamlmarks import MarkedDict, MarkedList, plain

_CONSTANT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}")
_BY_NAME = ("constants", "documents", "iterations", "identities")
_HEADER = ("flarespec", "id", "title", "description", "applies_to", "limits")


@dataclass
class ResolvedSpec:
    data: dict                       # flat spec, constants substituted (keeps marks)
    chain: list[SpecFile]            # the file itself first, then its ancestors
    rule_origin: dict = field(default_factory=dict)  # rule id -> spec id that defined it

    @property
    def id(self) -> str:
        return self.data["id"]

    def plain(self) -> dict:
        return plain(self.data)

    def digest(self) -> str:
        canonical = json.dumps(self.plain(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def resolve(spec: SpecFile, library: SpecLibrary) -> ResolvedSpec:
    chain = [spec]
    while "extends" in chain[-1].data:
        parent_id = chain[-1].data["extends"]
        parent = library.get(parent_id)
        if parent is None:
            raise SpecInvalid([SpecIssue(f"extends unknown spec {parent_id!r}"
                                         f"{_looked_beside(library, parent_id)}",
                                         chain[-1].data.key_marks.get("extends"),
                                         "spec.extends-unknown")])
        if any(parent.id == s.id for s in chain):
            raise SpecInvalid([SpecIssue(f"extends cycle through {parent_id!r}",
                                         chain[-1].data.key_marks.get("extends"),
                                         "spec.extends-cycle")])
        chain.append(parent)

    merged: dict = MarkedDict()
    merged.mark, merged.key_marks = spec.data.mark, {}
    origin: dict[str, str] = {}
    issues: list[SpecIssue] = []
    for layer in reversed(chain):
        _merge(merged, layer, origin, issues)
    for key in _HEADER:
        merged.pop(key, None)
        if key in spec.data:
            merged[key] = spec.data[key]
            merged.key_marks[key] = spec.data.key_marks[key]
    merged.pop("extends", None)
    merged.pop("drop_rules", None)
    _check_duplicate_ids(merged.get("rules", []), issues)
    constants = merged.get("constants", {})
    for key in list(merged):
        if key != "constants":
            merged[key] = _substitute(merged[key], constants, issues)
    if issues:
        raise SpecInvalid(issues)
    return ResolvedSpec(merged, chain, origin)


def _looked_beside(library: SpecLibrary, parent_id: str) -> str:
    """Where a parent was looked for beside the file, since no other neighbour is read."""
    path = library.sibling_path(parent_id)
    if path is None:
        return ""
    found = "" if path.exists() else ", which does not exist"
    return f" (looked for {path}{found}, then among the bundled specs)"


def _merge(merged: dict, layer: SpecFile, origin: dict, issues: list) -> None:
    data = layer.data
    for key in _BY_NAME:
        if key in data:
            target = merged.setdefault(key, _marked_dict(data[key]))
            merged.key_marks[key] = data.key_marks[key]
            target.update(data[key])
            target.key_marks.update(getattr(data[key], "key_marks", {}))
    for key in ("metric", "pair"):
        if key in data:
            merged[key] = data[key]
            merged.key_marks[key] = data.key_marks[key]
    rules = merged.setdefault("rules", MarkedList())
    if not hasattr(rules, "item_marks"):
        rules.mark, rules.item_marks = data.mark, []
    for dropped_at, rule_id in enumerate(data.get("drop_rules", [])):
        index = next((i for i, r in enumerate(rules) if r.get("id") == rule_id), None)
        if index is None:
            issues.append(SpecIssue(f"drop_rules names {rule_id!r}, which no parent defines",
                                    data["drop_rules"].item_marks[dropped_at],
                                    "spec.drop-unknown"))
            continue
        del rules[index]
        del rules.item_marks[index]
        origin.pop(rule_id, None)
    for position, rule in enumerate(data.get("rules", [])):
        index = next((i for i, r in enumerate(rules) if r.get("id") == rule.get("id")), None)
        mark = data["rules"].item_marks[position]
        if index is not None and origin.get(rule["id"]) != layer.id:
            rules[index], rules.item_marks[index] = rule, mark  # a child replaces by id
        else:
            rules.append(rule)
            rules.item_marks.append(mark)
        origin[rule["id"]] = layer.id


def _marked_dict(like) -> MarkedDict:
    result = MarkedDict()
    result.mark, result.key_marks = getattr(like, "mark", None), {}
    return result


def _check_duplicate_ids(rules, issues: list) -> None:
    seen: dict[str, int] = {}
    for index, rule in enumerate(rules):
        rule_id = rule.get("id")
        if rule_id in seen:
            issues.append(SpecIssue(f"duplicate rule id {rule_id!r} (first at "
                                    f"{rules.item_marks[seen[rule_id]]})",
                                    rules.item_marks[index], "spec.duplicate-rule-id"))
        else:
            seen[rule_id] = index


def lookup_constant(constants: dict, dotted: str):
    value = constants
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(dotted)
    return value


def _substitute(value, constants: dict, issues: list, mark=None):
    if isinstance(value, dict):
        result = MarkedDict()
        result.mark = getattr(value, "mark", mark)
        result.key_marks = dict(getattr(value, "key_marks", {}))
        for key, item in value.items():
            result[key] = _substitute(item, constants, issues, result.key_marks.get(key, mark))
        return result
    if isinstance(value, list):
        result = MarkedList()
        result.mark = getattr(value, "mark", mark)
        item_marks = getattr(value, "item_marks", [mark] * len(value))
        result.item_marks = list(item_marks)
        result.extend(_substitute(item, constants, issues, m) for item, m in zip(value, item_marks))
        return result
    if not isinstance(value, str) or "${" not in value:
        return value
    whole = _CONSTANT.fullmatch(value)
    try:
        if whole:
            return plain(lookup_constant(constants, whole.group(1)))

        def text_of(found):
            constant = lookup_constant(constants, found.group(1))
            if isinstance(constant, (dict, list)):
                raise TypeError(found.group(1))
            return str(constant)
        return _CONSTANT.sub(text_of, value)
    except KeyError as missing:
        issues.append(SpecIssue(f"unknown constant ${{{missing.args[0]}}}", mark,
                                "spec.unknown-constant"))
    except TypeError as bad:
        issues.append(SpecIssue(f"constant ${{{bad.args[0]}}} is a structure; only a whole "
                                f"string may be replaced by it", mark, "spec.constant-type"))
    return value
