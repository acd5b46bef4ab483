"""Where a ``spec diff`` change was made, and where it lands.

A child spec changes what its parent's rules and shapes say without restating them: a
constant it overrides changes every rule that spells it, a member it adds to a named shape
changes every document that reaches that shape, a drop entry removes a rule, a document or a
member defined upstream. A review annotates the file the pull request touched, so each change
is located at the line of the file that made it (``Change.file``, ``Change.line``):

| the change | made at |
|---|---|
| a rule, document, shape, pair or computed constant whose text spells a constant that changed (and whose own text did not) | the constant's changed leaf (``made_by: constant a.b``) |
| a rule or document dropped | its ``drop_rules`` / ``drop_documents`` entry |
| a shape member dropped | its ``drop_members`` entry |
| a shape member added or changed | the member in the shape that declares it (through named shapes and ``use``) |
| anything else | its subject in the new spec (the old one for a removal) |

When the place the change lands on is elsewhere (the parent's rule, the shape a member is
added to, the inherited rule a child replaces, the constant it overrides) that place is the
change's context (``Change.context``): "affects rule x at parent.yaml:12". Documented in
docs/spec-review.md, "Where a change is shown".
"""

from __future__ import annotations

from typing import Any

from flarespec.engine.directions import ABSENT, same
from flarespec.review.changes import Change, Place, SpecSide, strings
from flarespec.review.tree import indexed, leaf_changes, path_steps

_SECTIONS = {"document": "documents", "iteration": "iterations", "identity": "identities"}
_DROPS = {"rule": ("dropped", "drop_rules"), "document": ("dropped_documents", "drop_documents")}


def locate(changes: list[Change], before: SpecSide, after: SpecSide) -> None:
    """Move each change to the line of the file that made it and give it its context (see
    the module's table); shape changes are placed as they are made (``shape_change``)."""
    if after.marks is None and before.marks is None:  # plain data: no files, no lines
        return
    for change in changes:
        if change.subject.startswith("shape of document ") or change.subject == "spec file":
            continue
        if change.op == "removed" and not change.path and _dropped(change, after):
            continue
        if change.path:
            steps = [(root + list(path_steps(change.path))) if root is not None else None
                     for root in (_root(after, change.subject, after.renames),
                                  _root(before, change.subject, after.renames))]
            if _through_constants(change, before, after, *steps, change.subject):
                continue
        _inherited(change, after)


# --------------------------------------------------------------------------- subjects

def _root(side: SpecSide, subject: str, renames: dict) -> list | None:
    """The path of ``subject`` in ``side``'s resolved data (a rule by its id or the id it
    was renamed from), or None when the side has none."""
    kind, _, name = subject.partition(" ")
    data = side.data
    if kind == "rule":
        index = _rule_at(data.get("rules") or [], name, renames)
        return None if index is None else ["rules", index]
    if kind in _SECTIONS:
        return [_SECTIONS[kind], name] if name in (data.get(_SECTIONS[kind]) or {}) else None
    if kind == "pair":
        ids = [p.get("id") for p in data.get("pair") or []]
        return ["pair", ids.index(name)] if name in ids else None
    if subject in ("metric", "applies_to"):
        return [subject] if subject in data else None
    if kind == "constant":  # its path names it: a constant computed from others (${a + b})
        return ["constants"] if name in (data.get("constants") or {}) else None
    return None


def _rule_at(rules: list, rule_id: str, renames: dict) -> int | None:
    """The index of ``rule_id`` in ``rules``, else of the id it renames (over generations)."""
    ids, seen = [r.get("id") if isinstance(r, dict) else None for r in rules], set()
    while rule_id is not None and rule_id not in seen:
        if rule_id in ids:
            return ids.index(rule_id)
        seen.add(rule_id)
        rule_id = renames.get(rule_id)
    return None


def _dropped(change: Change, after: SpecSide) -> bool:
    """A rule or document a drop entry of the new spec removes: shown at that entry."""
    kind, _, name = change.subject.partition(" ")
    table, key = _DROPS.get(kind, (None, None))
    where = getattr(after, table).get(name) if table else None
    if where is None:
        return False
    change.context = Place("drops", change.subject, change.file, change.line)
    (change.file, change.line), change.made_by = where, key
    return True


def _inherited(change: Change, after: SpecSide) -> None:
    """A change in the new spec's own file to what an ancestor also defines (a replaced
    rule, an overridden constant or document): the ancestor's place is its context."""
    if not after.chain or change.file != str(after.chain[0].path):
        return
    kind, _, name = change.subject.partition(" ")
    for layer in after.chain[1:]:
        found = _layer_root(layer.data, change, after.renames)
        if found is None:
            continue
        root, subject = found
        mark = _mark(layer.data, root + list(path_steps(change.path)))
        if mark is not None:
            relation = "overrides" if kind != "rule" else \
                "replaces" if subject == change.subject else "renames"
            change.context = Place(relation, subject, mark.file, mark.line)
        return


def _layer_root(data, change: Change, renames: dict) -> tuple[list, str] | None:
    """Where one spec file (unresolved) writes the change's subject, and its name there."""
    kind, _, name = change.subject.partition(" ")
    if not isinstance(data, dict):
        return None
    if kind == "rule":
        rules = data.get("rules") or []
        index = _rule_at(rules, name, renames)
        return None if index is None else (["rules", index], f"rule {rules[index].get('id')}")
    if kind == "constant":
        top = str(change.path).split(".", 1)[0].split("[", 1)[0]
        return (["constants"], f"constant {top}") \
            if top in (data.get("constants") or {}) else None
    if kind in _SECTIONS and name in (data.get(_SECTIONS[kind]) or {}):
        return [_SECTIONS[kind], name], change.subject
    return None


def _mark(tree, steps: list):
    from flarespec.compiler.yamlmarks import mark_at

    return mark_at(tree, indexed(tree, steps))


# --------------------------------------------------------------------------- constants

def _through_constants(change: Change, before: SpecSide, after: SpecSide,
                       new_steps: list | None, old_steps: list | None, subject: str) -> bool:
    """A change whose text is the same on both sides but spells a constant that changed:
    made at that constant's changed leaf (the child's override), landing on ``subject``."""
    trails = [t for t in (_trail(after, new_steps), _trail(before, old_steps)) if t]
    if not trails:
        return False
    deepest = max(depth for _, depth, _ in trails)
    trails = [t for t in trails if t[1] == deepest]
    if len(trails) == 2 and not same(_plain(trails[0][0]), _plain(trails[1][0])):
        return False  # the text itself changed there: the change is where it is written
    names = dict.fromkeys(token.name for raw, _, keys in trails
                          for text in [*keys, *strings(raw)] for token in _tokens(text))
    changed = [name for name in names if not same(_constant(before, name),
                                                  _constant(after, name))]
    if not changed:
        return False
    made_by, file, line = _constant_place(changed[0], before, after)
    if file is None:
        return False
    change.context = Place("affects", subject, change.file, change.line)
    change.file, change.line = file, line
    change.made_by = made_by + (f" (and {', '.join(changed[1:])})" if changed[1:] else "")
    return True


def _tokens(text: str):
    from flarespec.compiler.tokens import find_tokens

    return find_tokens(text)


def _plain(value):
    from flarespec.compiler.yamlmarks import plain

    return plain(value)


def _trail(side: SpecSide, steps: list | None) -> tuple[Any, int, list[str]] | None:
    """The unresolved text at ``steps`` of ``side``'s resolved data: (the value as the spec
    file that wrote it has it, how many steps it follows, the keys on the way). Each step
    is matched by its mark (a key written as ``${...}`` is the resolved key of the same mark);
    a value that resolution substituted as a whole stops the walk at its token."""
    if side.marks is None or steps is None:
        return None
    steps = indexed(side.marks, steps)
    mark = _mark(side.marks, steps)
    layer = next((f for f in side.chain if mark is not None and str(f.path) == mark.file), None)
    if layer is None:
        return None
    raw, node, keys, depth, passed = layer.data, side.marks, [], 0, []
    for step in steps:
        mark = _step_mark(node, step)
        key = _raw_step(raw, step, mark)
        if key is None:  # a key written higher up as a member path (``${a.b}``: b inside a)
            holder = next((d for d in reversed(passed) if mark is not None and
                           _raw_step(d, None, mark) is not None), None)
            if holder is None:
                break
            raw, key = holder, _raw_step(holder, None, mark)
        if isinstance(raw, dict):
            passed.append(raw)
        if isinstance(key, str):
            keys.append(key)
        raw, node, depth = raw[key], node[step], depth + 1
    return raw, depth, keys


def _step_mark(node, step):
    if isinstance(node, dict):
        return getattr(node, "key_marks", {}).get(step)
    marks = getattr(node, "item_marks", None)
    if isinstance(node, list) and marks and isinstance(step, int) and 0 <= step < len(marks):
        return marks[step]
    return None


def _raw_step(raw, step, mark):
    """The key or index of ``raw`` that is ``step`` of the resolved data: the one of the
    same mark, else the same name (a top-level section); None when there is none."""
    if isinstance(raw, dict):
        marks = getattr(raw, "key_marks", {})
        if mark is not None:
            found = next((key for key, at in marks.items() if at == mark), None)
            if found is not None:
                return found
        return step if step is not None and step in raw else None
    if isinstance(raw, list) and mark is not None:
        marks = getattr(raw, "item_marks", None) or []
        return next((index for index, at in enumerate(marks) if at == mark), None)
    return None


def _constant(side: SpecSide, dotted: str):
    from flarespec.compiler.tokens import lookup_constant

    try:
        return lookup_constant(side.data.get("constants") or {}, dotted)
    except KeyError:
        return ABSENT


def _constant_place(name: str, before: SpecSide, after: SpecSide) -> tuple[str, Any, Any]:
    """(``constant a.b.c``, file, line) of the first leaf where constant ``name`` differs,
    in the new spec (the old one when the new has no such constant)."""
    old, new = _constant(before, name), _constant(after, name)
    inner = next((path for path, _, _ in leaf_changes(old, new, "")), "")
    steps = ["constants", *(int(p) if p.isdigit() else p for p in name.split(".")),
             *path_steps(inner)]
    side = after if new is not ABSENT else before
    file, line = side.mark_of(*steps)
    shown = name + (inner if not inner or inner.startswith("[") else f".{inner}")
    return f"constant {shown}", file, line


# --------------------------------------------------------------------------- shapes

def shape_change(change: Change, before: SpecSide, after: SpecSide, document: str,
                 node: str) -> None:
    """Place a change of ``document``'s expanded shape at ``node`` (review/shapes.py's node
    path): at the shape node that declares it, followed through named shapes and ``use``
    (a removed member at the ``drop_members`` entry that drops it; a member whose name
    reads a constant that changed at that constant), with the inherited shape it lands on
    as its context."""
    side = before if change.op == "removed" else after
    steps = _shape_steps(side, document, node)
    other = _shape_steps(after if side is before else before, document, node)
    if steps is not None:
        change.file, change.line = side.mark_of(*steps)
    shape = f"shape {steps[1]}" if steps and steps[0] == "shapes" else \
        f"the shape of document {document}"
    if change.op == "removed" and _dropped_member(change, after, steps or [], shape):
        return
    new_steps, old_steps = (other, steps) if side is before else (steps, other)
    if _through_constants(change, before, after, new_steps, old_steps, shape):
        return
    if steps and steps[0] == "shapes" and after.chain and \
            change.file == str(after.chain[0].path):
        for layer in after.chain[1:]:
            if steps[1] in ((layer.data.get("shapes") or {}) if isinstance(layer.data, dict)
                            else {}):
                mark = _mark(layer.data, steps)
                change.context = Place("affects", shape, mark.file, mark.line)
                return


def _shape_steps(side: SpecSide, document: str, node: str) -> list | None:
    """The path in ``side``'s resolved data of the shape node ``node`` of ``document``'s
    expanded shape comes from (``shapes.observation.members.analysis``): a named shape is
    followed where it is named, a ``use`` where the node does not say the key itself; the
    deepest node found when the path goes further than the spec writes it."""
    data = side.marks
    if data is None:
        return None
    shapes = data.get("shapes") or {}
    declared = ((data.get("documents") or {}).get(document) or {}).get("shape")
    steps, node_at = (["shapes", declared], shapes.get(declared)) if isinstance(declared, str) \
        else (["documents", document, "shape"], declared)
    parts = list(path_steps(node))
    index = 0
    while index < len(parts):
        key = parts[index]
        member = parts[index + 1] if key == "members" and index + 1 < len(parts) else None
        if isinstance(key, int):
            if not (isinstance(node_at, list) and key < len(node_at)):
                break
            steps, node_at = steps + [key], node_at[key]
            index += 1
            continue
        found = _holder(node_at, steps, shapes, key, member)
        if found is None:
            break
        node_at, steps = found[0][key], found[1] + [key]
        if member is not None:
            node_at, steps = node_at[member], steps + [member]
            index += 1
        index += 1
    return steps


def _holder(node, steps: list, shapes: dict, key: str, member: str | None):
    """(node, its path) of the shape node that writes ``key`` (and ``member`` of its
    ``members``): ``node`` itself, else the named shape it is or uses; None if none does."""
    for _ in range(len(shapes) + 1):  # a cycle of names is lint's to report
        if isinstance(node, str) and node in shapes:
            steps, node = ["shapes", node], shapes[node]
            continue
        if not isinstance(node, dict):
            return None
        inner = node.get(key)
        if key in node and (member is None or isinstance(inner, dict) and member in inner):
            return node, steps
        used = node.get("use")
        if not (isinstance(used, str) and used in shapes):
            return None
        steps, node = ["shapes", used], shapes[used]
    return None


def _dropped_member(change: Change, after: SpecSide, steps: list, shape: str) -> bool:
    """A member a ``drop_members`` entry of the new spec's files removes: shown there."""
    if len(steps) < 2 or steps[-2] != "members":
        return False
    owner, name = steps[:-2], steps[-1]
    for layer in after.chain:
        node = layer.data
        for step in owner:
            node = node.get(step) if isinstance(node, dict) else None
        listed = node.get("drop_members") if isinstance(node, dict) else None
        if isinstance(listed, list) and name in listed:
            mark = listed.item_marks[listed.index(name)]
            change.context = Place("drops", f"member {name} of {shape}", change.file,
                                   change.line)
            change.file, change.line, change.made_by = mark.file, mark.line, "drop_members"
            return True
    return False
