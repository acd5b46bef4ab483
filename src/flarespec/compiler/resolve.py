"""``extends`` resolution and constant substitution: many spec files become one flat spec.

A child spec may override constants, documents, iterations and identities by name, replace a
rule by id (in place), rename an inherited rule (``renamed_from``, in place), add rules, drop
rules by id (``drop_rules``), drop documents by name (``drop_documents``) and replace the
metric. ``${name.path}`` then substitutes constants everywhere: a string that is exactly one
``${...}`` becomes the constant's value (any type); inside longer text it is interpolated.
``${name.path|pointer}`` and ``${name.path|jsonpath}`` turn a constant holding a dotted key
(``a.b``) into ``/a/b`` and ``$.a.b``, so a path into a document is written once, as a
constant, and every rule reading it follows a change of it. The grammar and the
substitution are flarespec.compiler.tokens' (shared with spec diff and the fixture catalog).
The result is plain data with stable rule ids: what ``spec show``, ``spec diff`` and the
receipt's spec digest see; ``rule_status`` says how the spec itself changed each rule.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from flarespec.engine.shapes import DROPPED
from flarespec.compiler.errors import SpecInvalid, SpecIssue, did_you_mean
from flarespec.compiler.load import SpecFile, SpecLibrary
from flarespec.compiler.yamlmarks import MarkedDict, MarkedList, plain

# the rule a ${...} that cannot be substituted breaks, by TokenError.code
_TOKEN_CODES = {"syntax": "spec.constant-syntax", "type": "spec.constant-type",
                "filter": "spec.constant-filter", "expression": "spec.constant-expression"}
_BY_NAME = ("constants", "documents", "iterations", "identities")
# Merge directives of a spec file: they shape the resolved spec but are not part of it.
_DIRECTIVES = ("extends", "drop_rules", "drop_documents")
_HEADER = ("flarespec", "id", "title", "description", "applies_to", "limits", "draft")


@dataclass
class ResolvedSpec:
    data: dict                       # flat spec, constants substituted (keeps marks)
    chain: list[SpecFile]            # the file itself first, then its ancestors
    rule_origin: dict = field(default_factory=dict)  # rule id -> spec id that defined it
    # rule id -> {"status": inherited|overridden|added|renamed, "spec": defining spec id,
    # "from": old id (renamed only)}: how the spec itself (chain[0]) changed each rule
    rule_status: dict = field(default_factory=dict)
    # dropped document name -> (Mark of the drop_documents entry, id of the spec dropping it)
    dropped_documents: dict = field(default_factory=dict)
    # rules reusing an inherited id without `replaces: true`, or saying it for nothing (lint)
    replacement_issues: list = field(default_factory=list)
    # what made the spec unusable (unknown constants, bad tokens, drops of nothing ...):
    # only a lenient resolve (lint) returns a spec with issues; compile_spec refuses one
    issues: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.data["id"]

    def plain(self) -> dict:
        return plain(self.data)

    def digest(self) -> str:
        canonical = json.dumps(self.plain(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def resolve(spec: SpecFile, library: SpecLibrary, *, lenient: bool = False) -> ResolvedSpec:
    """The flat spec of ``spec`` and its ancestors; every issue at once as a SpecInvalid.
    ``lenient`` (lint): an issue the merge can go past (an unknown constant, a bad token, a
    drop or rename of nothing, a duplicate id) is returned in ``issues`` instead, with the
    text that could not be substituted left as written; a missing or cyclic parent still
    raises (there is nothing to merge)."""
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
    state = _MergeState()
    for layer in reversed(chain):
        _merge(merged, layer, state)
    for key in _HEADER:
        merged.pop(key, None)
        if key in spec.data:
            merged[key] = spec.data[key]
            merged.key_marks[key] = spec.data.key_marks[key]
    for key in _DIRECTIVES:
        merged.pop(key, None)
    issues = state.issues
    _check_duplicate_ids(merged.get("rules", []), issues)
    constants = _evaluate_constants(merged, issues)
    if isinstance(merged.get("shapes"), dict):
        merged["shapes"] = _member_paths(merged["shapes"], constants, issues)
    for key in list(merged):
        if key != "constants":
            merged[key] = _substitute(merged[key], constants, issues)
    if issues and not lenient:
        raise SpecInvalid(issues)
    return ResolvedSpec(merged, chain, state.origin, state.status, state.dropped_documents,
                        state.replacement_issues, issues)


@dataclass
class _MergeState:
    origin: dict = field(default_factory=dict)   # rule id -> spec id that defined it
    status: dict = field(default_factory=dict)   # rule id -> status of the latest layer
    dropped_documents: dict = field(default_factory=dict)
    issues: list = field(default_factory=list)
    replacement_issues: list = field(default_factory=list)


def _looked_beside(library: SpecLibrary, parent_id: str) -> str:
    """Where a parent was looked for beside the file, since no other neighbour is read."""
    path = library.sibling_path(parent_id)
    if path is None:
        return ""
    found = "" if path.exists() else ", which does not exist"
    return f" (looked for {path}{found}, then among the bundled specs)"


def _merge(merged: dict, layer: SpecFile, state: _MergeState) -> None:
    data = layer.data
    _drop_documents(merged, layer, state)
    for key in _BY_NAME:
        if key in data:
            target = merged.setdefault(key, _marked_dict(data[key]))
            merged.key_marks[key] = data.key_marks[key]
            names = [name for name in data[key] if "." not in str(name)]  # a.b: below
            target.update((name, data[key][name]) for name in names)
            target.key_marks.update((name, data[key].key_marks.get(name)) for name in names)
            if key == "constants":
                _override_members(target, data, state)
    for name in data.get("documents", {}):  # a later spec may define a dropped name again
        state.dropped_documents.pop(name, None)
    if "shapes" in data:
        _merge_shapes(merged, data, state)
    for key in ("metric", "pair"):
        if key in data:
            merged[key] = data[key]
            merged.key_marks[key] = data.key_marks[key]
    rules = merged.setdefault("rules", MarkedList())
    if not hasattr(rules, "item_marks"):
        rules.mark, rules.item_marks = data.mark, []
    state.status = {rule_id: {"status": "inherited", "spec": state.origin[rule_id]}
                    for rule_id in state.origin}
    _drop_rules(rules, layer, state)
    own_ids = {rule.get("id") for rule in data.get("rules", [])}
    for position, rule in enumerate(data.get("rules", [])):
        mark = data["rules"].item_marks[position]
        if "renamed_from" in rule:
            _rename(rules, rule, mark, own_ids, layer, state)
            continue
        index = _index_of(rules, rule.get("id"))
        inherited = index is not None and state.origin.get(rule["id"]) != layer.id
        _check_replaces(rule, mark, inherited, rules[index] if inherited else None,
                        rules.item_marks[index] if inherited else None, layer, state)
        rule = _without(rule, "replaces")
        if inherited:
            rules[index], rules.item_marks[index] = rule, mark  # a child replaces by id
            state.status[rule["id"]] = {"status": "overridden", "spec": layer.id}
        else:
            rules.append(rule)
            rules.item_marks.append(mark)
            state.status[rule["id"]] = {"status": "added", "spec": layer.id}
        state.origin[rule["id"]] = layer.id


def _override_members(constants: MarkedDict, data, state: _MergeState) -> None:
    """A dotted constant name (``a.b.c: value``) replaces only that member of the value the
    spec inherits, at any depth (each mapping on the way copied, so a parent's data is
    never changed), with the key's mark, so lint and a review place it at this line. A
    name in a spec with no parent, a path through a list, a path naming no inherited
    member and a name overlapping another key of the file are errors at the key."""
    own = data["constants"]
    for name in [name for name in own if "." in str(name)]:
        steps, at = str(name).split("."), own.key_marks.get(name)
        problem = _override_problem(name, steps, own, data)
        holder = _override_holder(constants, name, steps) if problem is None else problem
        if isinstance(holder, tuple):  # (message, code)
            state.issues.append(SpecIssue(holder[0], at, holder[1]))
            continue
        holder[steps[-1]], holder.key_marks[steps[-1]] = own[name], at


def _override_problem(name, steps: list, own, data) -> tuple | None:
    """(message, code) when the dotted ``name`` cannot override at all, else None."""
    if "extends" not in data:
        return (f"constant name {name!r} is dotted, which overrides a member of an "
                f"inherited constant, but this spec extends nothing: write {steps[0]!r} "
                f"with its whole value", "spec.constant-override")
    for other in own:
        other_steps = str(other).split(".")
        shorter = min(len(steps), len(other_steps))
        if other != name and steps[:shorter] == other_steps[:shorter]:
            first = own.key_marks.get(other)
            return (f"constant name {name!r} and {other!r} (at {first}) set the same value "
                    f"twice, one inside the other: set it once", "spec.key-collision")
    return None


def _override_holder(constants: MarkedDict, name, steps: list):
    """The inherited mapping holding the member ``steps`` names, each mapping from
    ``constants`` down to it replaced by a copy; (message, code) when there is none."""
    holder = constants
    for depth, step in enumerate(steps):
        reached = ".".join(steps[:depth]) or "constants"
        if isinstance(holder, list):
            return (f"constant name {name!r} goes through the list {reached!r}: a dotted "
                    f"name overrides members of mappings, never a position in a list "
                    f"(restate {reached!r} with the change)", "spec.constant-override")
        if not isinstance(holder, dict) or step not in holder:
            known = did_you_mean(step, list(holder)) if isinstance(holder, dict) else \
                " (it is no mapping)"
            missing = f"no inherited constant {step!r}" if depth == 0 else \
                f"no inherited member: {reached!r} has no member {step!r}"
            return (f"constant name {name!r} names {missing}{known}", "spec.unknown-constant")
        if depth == len(steps) - 1:
            return holder
        if isinstance(holder[step], dict):
            holder[step] = _copied(holder[step])
        holder = holder[step]
    return holder


def _merge_shapes(merged: dict, data: dict, state: _MergeState) -> None:
    """Named shapes merge by name and, inside a shape, member by member: a child that adds
    one required member writes that member alone (``shapes: {doc: {members: {new: integer}}}``);
    ``drop_members`` removes inherited members. Any other key of a node replaces the
    parent's."""
    target = merged.setdefault("shapes", _marked_dict(data["shapes"]))
    merged.key_marks["shapes"] = data.key_marks["shapes"]
    for name, node in data["shapes"].items():
        target[name] = _merge_shape(target.get(name), node, state)
        target.key_marks[name] = data["shapes"].key_marks[name]


def _merge_shape(old, new, state: _MergeState):
    if not isinstance(new, dict) or "drop_members" not in new and not isinstance(old, dict):
        return new
    result = _marked_dict(new)
    base = old if isinstance(old, dict) else {}
    for key, value in base.items():
        result[key] = value
        result.key_marks[key] = getattr(base, "key_marks", {}).get(key)
    for key, value in new.items():
        if key == "drop_members":
            continue
        if key == "members" and isinstance(value, dict) and isinstance(base.get(key), dict):
            members = _marked_dict(value)
            for name, child in base[key].items():
                members[name] = child
                members.key_marks[name] = getattr(base[key], "key_marks", {}).get(name)
            for name, child in value.items():
                members[name] = _merge_shape(members.get(name), child, state)
                members.key_marks[name] = value.key_marks.get(name)
            value = members
        elif key in ("items", "values") and key in base:
            value = _merge_shape(base[key], value, state)
        result[key] = value
        result.key_marks[key] = new.key_marks.get(key)
    dropped = new.get("drop_members", [])
    gone = [] if DROPPED in new else list(base.get(DROPPED) or [])  # a user's: compile says
    for position, name in enumerate(dropped if isinstance(dropped, list) else []):
        members = result.get("members")
        if not isinstance(members, dict) or name not in members:
            state.issues.append(SpecIssue(
                f"drop_members names {name!r}, which the inherited shape does not declare",
                dropped.item_marks[position], "spec.document-shape"))
            continue
        members = result["members"] = _copied(members)
        del members[name]
        members.key_marks.pop(name, None)
        gone.append(name)
    if DROPPED not in new:
        _keep_dropped(result, gone)
    return result


def _keep_dropped(node: MarkedDict, names: list) -> None:
    """Record on a merged node the members dropped along the extends chain and not
    declared again by a later file (``dropped``, without a mark: the resolver's, never a
    file's), so a writer stops writing them (compiler/shapes.py keeps it compiled)."""
    members = node.get("members") if isinstance(node.get("members"), dict) else {}
    names = [name for name in dict.fromkeys(names) if name not in members]
    node.pop(DROPPED, None)
    node.key_marks.pop(DROPPED, None)
    if names:
        node[DROPPED] = names
        node.key_marks[DROPPED] = None


def _copied(mapping: dict) -> MarkedDict:
    copy = _marked_dict(mapping)
    copy.update(mapping)
    copy.key_marks.update(getattr(mapping, "key_marks", {}))
    return copy


def _check_replaces(rule, mark, inherited: bool, parent_rule, parent_mark, layer: SpecFile,
                    state: _MergeState) -> None:
    """A rule whose id a parent already has replaces that rule only when it says
    ``replaces: true``: reusing an id by accident would silently drop the parent's rule.
    ``replaces: true`` on a rule no parent has is an error too (it replaces nothing). Both
    are lint errors (``ResolvedSpec.replacement_issues``): the spec still resolves, so a
    draft can be run while it is edited, but ``spec lint`` (the pull-request gate) refuses
    it."""
    says = rule.get("replaces") is True
    at = getattr(rule, "key_marks", {}).get("replaces") or mark
    if inherited and not says:
        state.replacement_issues.append(SpecIssue(
            f"rule {rule['id']!r} has the id of an inherited rule (defined at {parent_mark} by "
            f"{state.origin.get(rule['id'])}); a rule with an inherited id replaces it: write "
            f"`replaces: true` to replace it, or choose a new id to add a rule "
            f"(renamed_from renames one)", getattr(rule, "key_marks", {}).get("id") or mark,
            "spec.rule-id-reused"))
    elif says and not inherited:
        state.replacement_issues.append(SpecIssue(
            f"rule {rule['id']!r} says replaces: true, but no parent has a rule of that id",
            at, "spec.replaces-nothing"))


def _without(mapping, key: str):
    """The marked mapping without ``key`` (a merge directive, not part of the result)."""
    if key not in mapping:
        return mapping
    copy = _marked_dict(mapping)
    for name, value in mapping.items():
        if name != key:
            copy[name] = value
            copy.key_marks[name] = getattr(mapping, "key_marks", {}).get(name)
    return copy


def _index_of(rules, rule_id) -> int | None:
    return next((i for i, r in enumerate(rules) if r.get("id") == rule_id), None)


def _drop_rules(rules, layer: SpecFile, state: _MergeState) -> None:
    data = layer.data
    for dropped_at, rule_id in enumerate(data.get("drop_rules", [])):
        index = _index_of(rules, rule_id)
        if index is None:
            state.issues.append(SpecIssue(
                f"drop_rules names {rule_id!r}, which no parent defines",
                data["drop_rules"].item_marks[dropped_at], "spec.drop-unknown"))
            continue
        del rules[index]
        del rules.item_marks[index]
        state.origin.pop(rule_id, None)
        state.status.pop(rule_id, None)


def _drop_documents(merged: dict, layer: SpecFile, state: _MergeState) -> None:
    """Remove inherited documents; the rules still reading them are found by
    ``dropped_document_references`` (lint) and by the compiler (unknown targets)."""
    data = layer.data
    documents = merged.get("documents", {})
    for dropped_at, name in enumerate(data.get("drop_documents", [])):
        mark = data["drop_documents"].item_marks[dropped_at]
        if name not in documents:
            state.issues.append(SpecIssue(
                f"drop_documents names {name!r}, which no parent defines",
                mark, "spec.drop-unknown"))
            continue
        del documents[name]
        documents.key_marks.pop(name, None)
        state.dropped_documents[name] = (mark, layer.id)


def _rename(rules, rule, mark, own_ids: set, layer: SpecFile, state: _MergeState) -> None:
    """``renamed_from: OLD`` replaces the inherited rule OLD in place under the new id."""
    old = rule["renamed_from"]
    old_mark = rule.key_marks.get("renamed_from", mark)
    index = _index_of(rules, old)
    if old in own_ids:
        state.issues.append(SpecIssue(
            f"rule {rule['id']!r} is renamed from {old!r}, which this spec also defines",
            old_mark, "spec.rename-conflict"))
        return
    if index is None or state.origin.get(old) == layer.id:
        state.issues.append(SpecIssue(
            f"rule {rule['id']!r} is renamed from {old!r}, which no parent defines",
            old_mark, "spec.rename-unknown"))
        return
    kept = MarkedDict((k, v) for k, v in rule.items() if k != "renamed_from")
    kept.mark = rule.mark
    kept.key_marks = {k: m for k, m in rule.key_marks.items() if k != "renamed_from"}
    rules[index], rules.item_marks[index] = kept, mark
    state.origin.pop(old, None)
    state.status.pop(old, None)
    state.origin[rule["id"]] = layer.id
    state.status[rule["id"]] = {"status": "renamed", "spec": layer.id, "from": old}


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


def _substitute(value, constants: dict, issues: list, mark=None):
    if isinstance(value, dict):
        result = MarkedDict()
        result.mark = getattr(value, "mark", mark)
        result.key_marks = dict(getattr(value, "key_marks", {}))
        for key, item in value.items():
            result[key] = _substitute(item, constants, issues, result.key_marks.get(key, mark))
        return _substituted_keys(result, constants, issues, mark)
    if isinstance(value, list):
        result = MarkedList()
        result.mark = getattr(value, "mark", mark)
        item_marks = getattr(value, "item_marks", [mark] * len(value))
        result.item_marks = list(item_marks)
        result.extend(_substitute(item, constants, issues, m) for item, m in zip(value, item_marks))
        return result
    if not isinstance(value, str) or "${" not in value:
        return value
    # only while resolving YAML: a compiled spec from the cache needs no token grammar
    from flarespec.compiler.tokens import TokenError, lookup_constant, substitute

    try:
        return plain(substitute(value, lambda dotted: lookup_constant(constants, dotted)))
    except KeyError as missing:
        issues.append(SpecIssue(f"unknown constant ${{{missing.args[0]}}}", mark,
                                "spec.unknown-constant"))
    except TokenError as bad:
        issues.append(SpecIssue(str(bad), mark, _TOKEN_CODES[bad.code]))
    return value


# ------------------------------------------------------------------ derived constants
def _evaluate_constants(merged: dict, issues: list) -> dict:
    """The merged constants with every ``${...}`` inside them substituted: a derived
    constant (``"${base.size + 16}"``, ``"${base.size}"``, at any depth) is computed
    after the extends merge, so a child that overrides ``base`` gets every value
    computed from it. A value is computed after the values it reads (dependency order); a
    cycle is ``spec.constant-cycle`` at each constant on it, and a value reading one is left
    as written (the cycle is its cause). ``merged["constants"]`` becomes the result."""
    constants = merged.get("constants")
    if not isinstance(constants, dict):
        return {} if constants is None else constants
    working = _copied_tree(constants)
    derived = dict(_derived_leaves(working, (), merged.key_marks.get("constants")))
    if not derived:
        return constants
    merged["constants"] = working
    order, failed = _dependency_order(derived, _dependencies(working, derived), issues)
    for path in order:
        if path in failed:
            continue
        before = len(issues)
        value = _substitute(_at(working, path), working, issues, derived[path])
        if len(issues) > before:
            failed.add(path)
        else:
            _set_at(working, path, value)
    return working


def _copied_tree(value):
    """A copy of the lists and mappings of ``value``, with their marks (leaves shared)."""
    if isinstance(value, dict):
        copy = _marked_dict(value)
        copy.key_marks.update(getattr(value, "key_marks", {}))
        copy.update((key, _copied_tree(item)) for key, item in value.items())
        return copy
    if isinstance(value, list):
        copy = MarkedList(_copied_tree(item) for item in value)
        copy.mark = getattr(value, "mark", None)
        copy.item_marks = list(getattr(value, "item_marks", [copy.mark] * len(value)))
        return copy
    return value


def _derived_leaves(value, path: tuple, mark):
    """(path, mark) of every string holding ``${`` below ``value``; a path is member names,
    a list position as its digits (as a dotted name spells it)."""
    if isinstance(value, dict):
        marks = getattr(value, "key_marks", {})
        for key, item in value.items():
            yield from _derived_leaves(item, path + (str(key),), marks.get(key, mark))
    elif isinstance(value, list):
        marks = getattr(value, "item_marks", [mark] * len(value))
        for index, (item, item_mark) in enumerate(zip(value, marks)):
            yield from _derived_leaves(item, path + (str(index),), item_mark)
    elif isinstance(value, str) and "${" in value:
        yield path, mark


def _dependencies(working: dict, derived: dict) -> dict:
    """path -> the derived paths its value reads: a read at, inside or through another."""
    from flarespec.compiler.tokens import find_tokens

    below: dict = {}  # a path -> the derived paths at or inside it
    for path in derived:
        for length in range(len(path) + 1):
            below.setdefault(path[:length], []).append(path)
    depends = {}
    for path in derived:
        found: dict = {}
        for token in find_tokens(_at(working, path)):
            for name in token.names:
                read = tuple(name.split("."))
                found.update(dict.fromkeys(read[:length] for length in range(1, len(read))
                                           if read[:length] in derived))
                found.update(dict.fromkeys(below.get(read, ())))
        depends[path] = list(found)
    return depends


def _dependency_order(derived: dict, depends: dict, issues: list) -> tuple[list, set]:
    """The derived paths, each after those it reads, and those on a cycle or reading one
    (not computed): an issue at each path on a cycle, naming the cycle from it."""
    from graphlib import CycleError, TopologicalSorter

    failed: set = set()
    while True:
        graph = {path: [d for d in reads if d not in failed]
                 for path, reads in depends.items() if path not in failed}
        try:
            order = list(TopologicalSorter(graph).static_order())
        except CycleError as cycle:
            ring = cycle.args[1][::-1][:-1]  # each path reads the next; the first closes it
            for at, path in enumerate(ring):
                shown = " -> ".join(".".join(p) for p in ring[at:] + ring[:at + 1])
                issues.append(SpecIssue(
                    f"constant {'.'.join(path)} is computed from itself: {shown} (a derived "
                    f"constant may read only values that do not read it)", derived[path],
                    "spec.constant-cycle"))
            failed.update(ring)
            continue
        for path in order:   # dependencies first: a failure reaches every reader
            if any(d in failed for d in depends[path]):
                failed.add(path)
        return [path for path in order if path not in failed], failed


def _at(tree, path: tuple):
    for part in path:
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    return tree


def _set_at(tree, path: tuple, value) -> None:
    holder = _at(tree, path[:-1])
    holder[int(path[-1]) if isinstance(holder, list) else path[-1]] = value


# ------------------------------------------------------------------ constants in keys
def _substituted_keys(mapping: MarkedDict, constants: dict, issues: list, mark=None):
    """``mapping`` with every key holding ``${...}`` substituted as a value is, its mark
    kept: a member, field or file name written once, as a constant. A key whose token fails
    is reported at the key (unknown constant, syntax, filter) and kept as written; a key
    that becomes anything but text (``spec.constant-key-type``) or the same as another key
    of the mapping (``spec.key-collision``) is an error at the key too."""
    if not any(isinstance(key, str) and "${" in key for key in mapping):
        return mapping
    result = _marked_dict(mapping)
    written: dict = {}  # substituted key -> the key as written, for a collision's message
    for key, item in mapping.items():
        at = mapping.key_marks.get(key, mark)
        new = _key_substituted(key, constants, issues, at)
        if new in result:
            first = result.key_marks.get(new)
            issues.append(SpecIssue(
                f"key {key!r} is {new!r} once constants are substituted, the same as key "
                f"{written.get(new, new)!r}{f' at {first}' if first else ''}: one mapping "
                f"holds a name once", at, "spec.key-collision"))
            continue
        result[new], result.key_marks[new], written[new] = item, at, key
    return result


def _key_substituted(key: str, constants: dict, issues: list, at):
    """The key with its ``${...}`` substituted (as a value is, so every constant a value can
    read a key can too), or the key as written when that fails (reported at ``at``)."""
    if not isinstance(key, str) or "${" not in key:
        return key
    before = len(issues)
    new = _substitute(key, constants, issues, at)
    if len(issues) > before:
        return key
    if not isinstance(new, str):
        issues.append(SpecIssue(
            f"key {key!r} is {json.dumps(plain(new))} once constants are substituted, not "
            f"text: a key is a name (make the constant a string, or write the token inside "
            f"text)", at, "spec.constant-key-type"))
        return key
    return new


def _member_paths(shapes: dict, constants: dict, issues: list) -> MarkedDict:
    """The shapes with every ``members`` key written as ``${...}`` whose constant is a dotted
    key (``a.b``) declared at that path: member ``b`` inside the member ``a`` the same
    ``members`` declares (added to that node's ``members``), so a shape names a member once,
    by the constant every rule reading it uses. Other ``${...}`` keys are left to
    ``_substituted_keys``, as everywhere. Copies what it changes: the spec files keep their
    data."""
    result = _copied(shapes)
    for name, node in shapes.items():
        result[name] = _node_member_paths(node, constants, issues)
    return result


def _node_member_paths(node, constants: dict, issues: list):
    if not isinstance(node, dict):
        return node
    result = _copied(node)
    for key in ("items", "values"):
        if key in node:
            result[key] = _node_member_paths(node[key], constants, issues)
    members = node.get("members")
    if not isinstance(members, dict):
        return result
    declared, paths = _marked_dict(members), []
    for key, child in members.items():
        child, at = _node_member_paths(child, constants, issues), members.key_marks.get(key)
        dotted = _dotted_member(key, constants, at)
        if dotted is None:
            declared[key], declared.key_marks[key] = child, at
        else:
            paths.append((key, dotted.split("."), child, at))
    for key, steps, child, at in paths:
        _declare_at(declared, key, steps, child, at, issues)
    result["members"] = declared
    return result


def _dotted_member(key, constants: dict, at) -> str | None:
    """The dotted key (``a.b``, at least one dot) a ``${...}`` member key substitutes to, or
    None (no token, not a dotted key, or a token that fails: ``_substituted_keys`` then
    reports it where it stands)."""
    if not isinstance(key, str) or "${" not in key:
        return None
    from flarespec.compiler.tokens import DOTTED_KEY

    scratch: list = []
    value = _substitute(key, constants, scratch, at)
    if scratch or not isinstance(value, str) or "." not in value or \
            not DOTTED_KEY.fullmatch(value):
        return None
    return value


def _declare_at(members: MarkedDict, key: str, steps: list, child, at, issues: list) -> None:
    """Put ``child`` at the member path ``steps`` below ``members``: each step but the last
    names a member these members declare (a mapping node, or a type or shape name, which
    becomes that node with members). Every node on the way is a fresh copy
    (``_node_member_paths``), so it is changed in place."""
    from flarespec.engine.shapes import TYPE_NAMES

    for depth, step in enumerate(steps[:-1], 1):
        node = members.get(step)
        if isinstance(node, str):
            named, node = node, _marked_dict(members)
            node.mark = members.key_marks.get(step)
            word = "type" if named in TYPE_NAMES else "use"
            node[word], node.key_marks[word] = named, node.mark
            members[step] = node
        if not isinstance(node, dict):
            issues.append(SpecIssue(
                f"member key {key!r} is the path {'.'.join(steps)!r}, but these members "
                f"declare no member {'.'.join(steps[:depth])!r} to hold it: declare it (an "
                f"object) beside the key", at, "spec.document-shape"))
            return
        if "members" not in node:
            node["members"], node.key_marks["members"] = _marked_dict(node), at
        if not isinstance(node["members"], dict):
            return  # the shape compiler reports the members that are no mapping
        members = node["members"]
    leaf = steps[-1]
    if leaf in members:
        first = members.key_marks.get(leaf)
        issues.append(SpecIssue(
            f"member key {key!r} is the path {'.'.join(steps)!r}, whose member {leaf!r} is "
            f"already declared{f' at {first}' if first else ''}: declare it once",
            at, "spec.key-collision"))
        return
    members[leaf], members.key_marks[leaf] = child, at


# ------------------------------------------------------------------ dropped documents
_PROSE = frozenset({"description", "clause", "title", "limits", "since", "changed_in"})
_DROPPED_SECTIONS = ("applies_to", "documents", "iterations", "identities", "rules", "metric")


def dropped_document_references(resolved: ResolvedSpec) -> list[SpecIssue]:
    """Every place of the resolved spec that still reads a document a spec dropped.

    All of them at once, each at its own file:line:column and naming its rule (iteration,
    identity, document, metric): a reference (``doc:...`` or ``{doc:...}`` in a template) or
    a kind argument listing document names (``manifest_digests: [doc, ...]``). The compiler
    reports the same places as unknown targets; this names the drop that caused them.
    """
    if not resolved.dropped_documents:
        return []
    found: list[SpecIssue] = []
    for section in _DROPPED_SECTIONS:
        value = resolved.data.get(section)
        if section == "rules":
            for rule in value or ():
                _find_dropped(rule, f"rule {rule.get('id')!r}", resolved, None, found)
        elif section in ("documents", "iterations", "identities") and value:
            singular = section[:-1] if section != "identities" else "identity"
            for name, entry in value.items():
                _find_dropped(entry, f"{singular} {name!r}", resolved,
                              value.key_marks.get(name), found)
        elif value is not None:
            _find_dropped(value, section, resolved, resolved.data.key_marks.get(section), found)
    return found


def _find_dropped(value, owner: str, resolved: ResolvedSpec, mark, found: list) -> None:
    if isinstance(value, dict):
        marks = getattr(value, "key_marks", {})
        for key, item in value.items():
            if key in _PROSE:
                continue
            item_mark = marks.get(key, mark)
            if isinstance(item, list) and _lists_documents(key, item, resolved):
                _dropped_names(item, owner, key, resolved, item_mark, found)
            else:
                _find_dropped(item, owner, resolved, item_mark, found)
    elif isinstance(value, list):
        marks = getattr(value, "item_marks", [mark] * len(value))
        for item, item_mark in zip(value, marks):
            _find_dropped(item, owner, resolved, item_mark, found)
    elif isinstance(value, str):
        for name, (dropped_at, by) in resolved.dropped_documents.items():
            if re.search(rf"(?:^|\{{){re.escape(name)}:", value):
                found.append(SpecIssue(
                    f"{owner} reads document {name!r}, which {by} drops (at {dropped_at}): "
                    f"{value!r}", mark, "spec.dropped-document",
                    related=(dropped_at,) if dropped_at else ()))


def _lists_documents(key: str, value: list, resolved: ResolvedSpec) -> bool:
    """Whether ``key: value`` is an assertion kind whose argument lists document names: its
    own check accepts the names once the dropped documents exist again."""
    from flarespec.engine.kinds import KINDS

    kind = KINDS.get(key)
    if kind is None or not all(isinstance(item, str) for item in value):
        return False
    remaining = set(resolved.data.get("documents", {}))
    return kind.check(value, remaining | set(resolved.dropped_documents)) is None and \
        kind.check(value, remaining) is not None


def _dropped_names(value: list, owner: str, key: str, resolved: ResolvedSpec, mark,
                   found: list) -> None:
    marks = getattr(value, "item_marks", [mark] * len(value))
    for name, item_mark in zip(value, marks):
        if name in resolved.dropped_documents:
            dropped_at, by = resolved.dropped_documents[name]
            found.append(SpecIssue(
                f"{owner} lists document {name!r} in {key}, which {by} drops (at {dropped_at})",
                item_mark, "spec.dropped-document", related=(dropped_at,) if dropped_at else ()))
